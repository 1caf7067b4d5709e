/* Plots: line, scatter, histogram and bar figures as PNG and SVG files, and the
 * standard figures of bench and validate summaries.
 *
 * Low level: describe a figure in an oq_plot_spec and render it:
 *
 *     double L[] = {512, 1024, 2048}, ms[] = {0.8, 2.9, 11.5};
 *     oq_plot_series s = {"cpu:attention24:fp32", 3, L, ms};
 *     oq_plot_spec spec = {.kind = OQ_PLOT_LINES, .title = "attention runtime",
 *                          .xlabel = "sequence length L (tokens)",
 *                          .ylabel = "time per batch (ms)", .logx = 1, .logy = 1,
 *                          .series = &s, .nseries = 1};
 *     oq_plot_render(&spec, OQ_PLOT_PNG, "runtime.png", &err);
 *
 * Every figure has a title, axis labels, a grid, and a legend below the plot
 * with one entry per series (colour, marker and, for lines, line style), laid
 * out in as many columns as fit. A title, subtitle, legend entry, panel label or bar note
 * wider than its room wraps onto further lines (at the last space, or after the last '-', '/',
 * ':', ',' or '_', that fits), and a figure of automatic height grows by the lines of its
 * titles, panel labels and bar notes. A log axis has labels near both ends (1, 1.5, 2, 3, 5,
 * 7 per decade where the span asks for them; else its range is widened to the next tick).
 * On log axes points that are not positive
 * cannot be drawn; they are left out and the series' legend entry says so when
 * none remain. Non-finite values are left out too.
 *
 * A faceted figure (npanels > 0) stacks one panel per configuration, say,
 * sharing the x axis: each series names its panel, a panel is labelled with its
 * first series' label and note, and gets a red frame and label when that series failed.
 *
 * The layout is computed once in pixels and drawn by two writers: PLplot's
 * cairo driver for PNG and ortqual's own SVG writer, whose text stays text
 * (searchable, selectable, read by screen readers) and whose series are <g
 * class="series" data-label="..." data-points="N"> groups holding one
 * class="pt" element per point or bar drawn, so tests and tools can read back
 * what a figure shows. The SVG has no scripts and no external references: it
 * can be inlined into an HTML page.
 *
 * Files are written atomically (a temporary file in the same directory, renamed
 * over `path` when complete). Rendering needs no display. PLplot keeps global
 * state, so PNG renders are serialized by a process-wide lock, each on a fresh
 * PLplot stream that is ended before returning: calling it repeatedly, and from
 * several threads, is safe. PLplot ends the process on fatal errors (no drivers
 * found, say); its exit handler is used to return an error status instead, and
 * the preconditions (device present, output writable) are checked before
 * drawing starts.
 */
#ifndef ORTQUAL_PLOT_H
#define ORTQUAL_PLOT_H

#include <stddef.h>

#include "ortqual/csv.h"
#include "ortqual/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum oq_plot_kind {
    OQ_PLOT_LINES,     /* markers joined by lines, in the order given (sort x first) */
    OQ_PLOT_SCATTER,   /* markers only */
    OQ_PLOT_HISTOGRAM, /* counts of each series' x values in nbins bins (y unused) */
    OQ_PLOT_BINNED,    /* counted already: x holds n + 1 bin edges, y the n counts; bars */
    OQ_PLOT_HBARS      /* horizontal bars, one row per category; series stack left to right,
                          y[i] is the series' value in category i (n = ncategories, x unused) */
} oq_plot_kind;

/* File formats, usable as a bit set. */
typedef enum oq_plot_format {
    OQ_PLOT_PNG = 1u,  /* PLplot device "extcairo" on our pixels, written by libpng */
    OQ_PLOT_SVG = 2u   /* ortqual's own SVG writer (no driver needed) */
} oq_plot_format;

typedef struct oq_plot_series {
    const char *label;  /* legend text (faceted: the panel's label) */
    size_t n;           /* number of points (or samples) */
    const double *x;
    const double *y;    /* NULL for histograms */
    int style;          /* 1-based colour/marker/line choice, so a series looks the same in
                           every figure; 0: by position in the figure */
    /* Optional; zero-initialised fields leave the defaults. */
    int marker;         /* 1-based marker shape overriding the style's (e.g. one per batch size) */
    int dashed;         /* a reference curve (e.g. a tolerance): dashed line, no markers */
    int failed;         /* the thing drawn failed its check: red ring around markers, red
                           legend text; faceted: red panel frame and label */
    int panel;          /* faceted figures: 1-based panel this series is drawn in */
    const char *note;   /* faceted: text after the panel's label; else after the legend text */
    int has_band;       /* 1: shade x in [band_lo, band_hi] with dashed edges, in this series'
                           panel (e.g. where an allclose tolerance lies) */
    double band_lo, band_hi;
} oq_plot_series;

/* An explicit legend entry (when a figure's series are not what its legend should list). */
typedef enum oq_legend_kind {
    OQ_LEGEND_MARKER, /* the style's colour with `marker` (1-based; 0: the style's) */
    OQ_LEGEND_LINE,   /* line and marker */
    OQ_LEGEND_BOX,    /* filled box (histograms, bars) */
    OQ_LEGEND_DASHED, /* dashed line (reference curves) */
    OQ_LEGEND_BAND    /* shaded band with dashed edges */
} oq_legend_kind;

typedef struct oq_plot_legend {
    const char *label;
    oq_legend_kind kind;
    int style;          /* 1-based colour; 0: grey */
    int marker;         /* 1-based marker; 0: the style's */
    int failed;         /* red ring around the marker and red text, as a failed series */
} oq_plot_legend;

typedef struct oq_plot_spec {
    oq_plot_kind kind;
    const char *title;
    const char *subtitle; /* second, smaller title line (e.g. the shape); NULL: none */
    const char *xlabel;  /* with unit, e.g. "sequence length L (tokens)" */
    const char *ylabel;  /* histograms: NULL gives "count" */
    int logx, logy;      /* 1: logarithmic axis */
    const oq_plot_series *series;
    size_t nseries;
    size_t nbins;        /* histogram bins across the data range; 0 gives 20 */
    int has_ref_y;       /* 1: draw a dashed horizontal line at y = ref_y ... */
    double ref_y;        /* ... e.g. speed-up 1 */
    const double *xticks;  /* major ticks on x (e.g. the measured lengths); NULL: automatic */
    size_t nxticks;
    int width, height;   /* pixels; 0 gives 1100 x 700 (faceted: 1100 x (200 + 140 per panel)),
                            taller by the lines of text that wrapped */
    size_t npanels;      /* > 0: faceted, series[i].panel in 1..npanels */
    const oq_plot_legend *legend; /* NULL: one entry per series (faceted: none) */
    size_t nlegend;
    /* OQ_PLOT_HBARS: row labels (top to bottom), an optional note right of each bar, and
     * which rows failed (their label in red); notes and failed may be NULL. */
    const char *const *categories;
    const char *const *category_notes;
    const int *category_failed;
    size_t ncategories;
} oq_plot_spec;

/* File name extension of a single format ("png", "svg"). */
OQ_API const char *oq_plot_format_ext(oq_plot_format f);
/* The device that draws a format ("extcairo" for PNG, "ortqual-svg": our own writer). */
OQ_API const char *oq_plot_format_device(oq_plot_format f);

/* OQ_OK when `f` can be written here (SVG always), else OQ_ERR_NOT_FOUND with
 * "PLplot driver extcairo not available: install plplot-driver-cairo". */
OQ_API oq_status oq_plot_check_driver(oq_plot_format f, oq_err *err);

/* Render `spec` in one format to `path`. Errors: OQ_ERR_INVALID_ARG (no
 * series, more than 64 series, nothing drawable, a bad spec), OQ_ERR_NOT_FOUND
 * (driver), OQ_ERR_OUTPUT (cannot create, write or rename the file: both formats are written as
 * oq_atomic_* writes, fileio.h), OQ_ERR_RUNTIME (PLplot reported an error or wrote nothing). */
OQ_API oq_status oq_plot_render(const oq_plot_spec *spec, oq_plot_format f, const char *path, oq_err *err);

/* Render `spec` as an SVG document in memory: *svg is malloc'd and NUL-terminated (the
 * caller frees it), *n its length. Errors as oq_plot_render. */
OQ_API oq_status oq_plot_svg(const oq_plot_spec *spec, char **svg, size_t *n, oq_err *err);

/* ---- Summary figures ---------------------------------------------------- */

/* Kind of a summary table, told by its columns: bench when it has variant,
 * status and seq_len; validate when it has config, output, valid_size and
 * max_abs_err (schemas in csv.h). */
typedef enum oq_summary_kind {
    OQ_SUMMARY_UNKNOWN,
    OQ_SUMMARY_BENCH,
    OQ_SUMMARY_VALIDATE
} oq_summary_kind;

/* The kind of a summary table by its columns; OQ_SUMMARY_UNKNOWN for a NULL table. */
OQ_API oq_summary_kind oq_summary_detect(const oq_csv *t);

typedef struct oq_plot_options {
    const char *outdir;    /* created if missing (writing only) */
    unsigned formats;      /* OQ_PLOT_PNG | OQ_PLOT_SVG; 0 gives both */
    const char *baseline;  /* bench speed-up baseline: a series label, a variant
                              ("ref:sdpa:fp64") or a runtime naming one variant ("ref");
                              NULL: the first variant read */
    const char *stat;      /* bench time column: "p50_ms" (NULL), "mean_ms", "p90_ms", "p95_ms",
                              "p99_ms", "p999_ms" (p99.9), "max_ms" */
    /* oq_figures_write draws in a child process (forked, where this process runs one thread:
     * elsewhere here, as with 0): PLplot's cairo driver lays text out with pango, whose GLib
     * ends the process when it cannot start a thread (a small `ulimit -v`; g_error cannot be
     * caught). Such an end, or a time limit of 300 s, is OQ_ERR_RUNTIME naming the signal and
     * the child's last line of stderr; a failed write is the child's own error. On any failure
     * the figures and temporaries it left are removed (written empty), and outdir too when it
     * made it: a figure set is whole or absent. */
    int isolate;
} oq_plot_options;

/* What a standard figure shows. Its file name says it too, but cannot be parsed back: an
 * output named "vs_ref_x" has the figure error_vs_ref_x, which reads as error_vs_ref_ of "x". */
typedef enum oq_figure_kind {
    OQ_FIGURE_UNKNOWN,            /* a NULL set, or past its end */
    OQ_FIGURE_ERROR,              /* validate: error_<output> */
    OQ_FIGURE_ERROR_VS_REF,       /* validate: error_vs_ref_<output> */
    OQ_FIGURE_RUNTIME_VALID_SIZE, /* validate: runtime_valid_size */
    OQ_FIGURE_PLACEMENT,          /* validate: placement */
    OQ_FIGURE_RUNTIME,            /* bench: runtime[_G] */
    OQ_FIGURE_MEMORY,             /* bench: memory[_G] */
    OQ_FIGURE_GPU_MEMORY,         /* bench: gpu_memory[_G] */
    OQ_FIGURE_SPEEDUP,            /* bench: speedup[_G] */
    OQ_FIGURE_ERROR_VS_RUNTIME    /* bench: error_vs_runtime */
} oq_figure_kind;

/* Paths of the files written (owned; release with oq_plot_files_clear), and what each shows:
 * kinds[i] is the kind of the figure paths[i] draws. */
typedef struct oq_plot_files {
    char **paths;
    size_t n;
    oq_figure_kind *kinds;
} oq_plot_files;
OQ_API void oq_plot_files_clear(oq_plot_files *f);

/* The standard figures of a summary, built in memory: each has a file name stem
 * and a spec (owned by the set). Figures with nothing drawable are left out.
 *
 * Validate and replay (summary.json, "schema": "ortqual.validate/1"):
 *   error_<output>      |error| over all valid elements, one panel per compared
 *                       configuration: log-binned counts, the tolerance band from atol
 *                       to atol + rtol*max|ref|, the verdict and counts in the label
 *   error_vs_ref_<output>  largest |error| per |reference| bin against the allclose
 *                       tolerance atol + rtol*|ref|, one panel per configuration; bins
 *                       holding elements over tolerance ringed in red
 *   runtime_valid_size  median time per batch against valid tokens, every configuration
 *   placement           graph nodes per execution provider and the attention kernels
 *                       seen, per configuration (only when a run recorded them)
 * A run in which nothing was compared or timed (ONNX Runtime refused the model, only the
 * reference ran) gives an empty set (oq_figures_count 0), not an error.
 * Bench (summary.csv, or summary.json's "results" records), for each group of rows
 * sharing masked, batch, heads, kv_heads, head_dim and threads (file names get a
 * suffix such as "_b4_masked" when there are several groups):
 *   runtime[_G]      time (opt->stat) against sequence length, log-log, a line per variant
 *   memory[_G]       peak RSS against sequence length, log-log
 *   gpu_memory[_G]   peak GPU memory, when any row has it
 *   speedup[_G]      baseline time / variant time against sequence length
 * and over all rows: error_vs_runtime, max abs error against time (colour: variant,
 * marker: batch size and masking where they vary). Only bench rows whose "status" is
 * "ok" are drawn.
 *
 * Bench inputs without a row of status "ok" (every variant skipped, unsupported or out of
 * memory) give an empty set, as a validate run with nothing compared does: not an error.
 *
 * Errors: OQ_ERR_FORMAT (not a summary, missing column or key, bad value, duplicate
 * row, measured rows with nothing drawable; the message names the file, line or key), OQ_ERR_INVALID_ARG
 * (unknown or ambiguous baseline, unknown stat), OQ_ERR_NOMEM. */
typedef struct oq_figures oq_figures;
/* From a summary.json document: `n` bytes of JSON text; `name` (its path) in messages. */
OQ_API oq_status oq_figures_from_summary(const char *json, size_t n, const char *name, const oq_plot_options *opt,
                                         oq_figures **out, oq_err *err);
/* Bench tables (validate.csv is refused: its figures need summary.json's histograms). */
OQ_API oq_status oq_figures_from_tables(oq_csv *const *tables, size_t ntables, const oq_plot_options *opt,
                                        oq_figures **out, oq_err *err);
/* The figures, i < count; NULL (OQ_FIGURE_UNKNOWN) past the end, and 0 and NULL for a NULL f.
 * A figure's kind and the model output it is about (error_ and error_vs_ref_ figures: the
 * output as the summary names it, not made file-safe; NULL for the others) are recorded
 * when it is made: read them here, never from the name. */
OQ_API size_t oq_figures_count(const oq_figures *f);
OQ_API const char *oq_figures_name(const oq_figures *f, size_t i);
OQ_API const oq_plot_spec *oq_figures_spec(const oq_figures *f, size_t i);
OQ_API oq_figure_kind oq_figures_kind(const oq_figures *f, size_t i);
OQ_API const char *oq_figures_output(const oq_figures *f, size_t i);
/* Render every figure into opt->outdir in opt->formats, as <name>.<ext>. On error
 * `written` still lists the files written before it (isolated: none, they were removed). */
OQ_API oq_status oq_figures_write(const oq_figures *f, const oq_plot_options *opt, oq_plot_files *written,
                                  oq_err *err);
OQ_API void oq_figures_free(oq_figures *f);

/* oq_figures_from_tables and oq_figures_write in one call (what `ortqual plot` runs on
 * CSV inputs). */
OQ_API oq_status oq_plot_summaries(oq_csv *const *tables, size_t ntables, const oq_plot_options *opt,
                                   oq_plot_files *written, oq_err *err);

#ifdef __cplusplus
}
#endif
#endif
