/* Plots: line, scatter and histogram figures as PNG and SVG files (PLplot with
 * its cairo driver), and the standard figures of bench and validate summaries.
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
 * Every figure has a title, axis labels, a grid, and a legend with one entry
 * per series (colour, marker and, for lines, line style). On log axes points
 * that are not positive cannot be drawn; they are left out and the series'
 * legend entry says so when none remain. Non-finite values are left out too.
 *
 * Files are written atomically: PLplot draws into "<path>.tmp.XXXXXX" in the
 * same directory, which is renamed over `path` when complete (replacing an
 * older figure). Cairo draws SVG text as glyph outlines, so each SVG also
 * carries the title, axis labels and series labels as <title> and <desc>
 * text (searchable, read by screen readers). Rendering needs no display. PLplot keeps global state, so
 * renders are serialized by a process-wide lock, each on a fresh PLplot
 * stream that is ended before returning: calling it repeatedly, and from
 * several threads, is safe. PLplot ends the process on fatal errors (no
 * drivers found, say); its exit handler is used to return an error status
 * instead, and the preconditions (device present, output writable) are
 * checked before drawing starts.
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
    OQ_PLOT_HISTOGRAM  /* counts of each series' x values in nbins bins (y unused) */
} oq_plot_kind;

/* File formats, usable as a bit set. */
typedef enum oq_plot_format {
    OQ_PLOT_PNG = 1u,  /* PLplot device "pngcairo" */
    OQ_PLOT_SVG = 2u   /* PLplot device "svgcairo" */
} oq_plot_format;

typedef struct oq_plot_series {
    const char *label;  /* legend text */
    size_t n;           /* number of points (or samples) */
    const double *x;
    const double *y;    /* NULL for histograms */
    int style;          /* 1-based colour/marker/line choice, so a series looks the same in
                           every figure; 0: by position in the figure */
} oq_plot_series;

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
    int width, height;   /* pixels; 0 gives 1100 x 700 */
} oq_plot_spec;

/* File name extension of a single format ("png", "svg"). */
OQ_API const char *oq_plot_format_ext(oq_plot_format f);
/* PLplot device used for a single format ("pngcairo", "svgcairo"). */
OQ_API const char *oq_plot_format_device(oq_plot_format f);

/* OQ_OK when PLplot can write `f` here, else OQ_ERR_NOT_FOUND with
 * "PLplot driver pngcairo not available: install plplot-driver-cairo". */
OQ_API oq_status oq_plot_check_driver(oq_plot_format f, oq_err *err);

/* Render `spec` in one format to `path`. Errors: OQ_ERR_INVALID_ARG (no
 * series, more than 64 series, nothing drawable, a bad spec), OQ_ERR_NOT_FOUND
 * (driver), OQ_ERR_IO (cannot create or rename the file), OQ_ERR_RUNTIME
 * (PLplot reported an error or wrote nothing). */
OQ_API oq_status oq_plot_render(const oq_plot_spec *spec, oq_plot_format f, const char *path, oq_err *err);

/* ---- Summary figures ---------------------------------------------------- */

/* Kind of a summary table, told by its columns: bench when it has variant,
 * status and seq_len; validate when it has config, output, valid_size and
 * max_abs_err (schemas in csv.h). */
typedef enum oq_summary_kind {
    OQ_SUMMARY_UNKNOWN,
    OQ_SUMMARY_BENCH,
    OQ_SUMMARY_VALIDATE
} oq_summary_kind;

OQ_API oq_summary_kind oq_summary_detect(const oq_csv *t);

typedef struct oq_plot_options {
    const char *outdir;    /* created if missing */
    unsigned formats;      /* OQ_PLOT_PNG | OQ_PLOT_SVG; 0 gives both */
    const char *baseline;  /* bench speed-up baseline variant; NULL: the first variant read */
    const char *stat;      /* bench time column: "p50_ms" (NULL), "mean_ms", "p90_ms", "p99_ms" */
} oq_plot_options;

/* Paths of the files written (owned; free with oq_plot_files_clear). */
typedef struct oq_plot_files {
    char **paths;
    size_t n;
} oq_plot_files;
OQ_API void oq_plot_files_clear(oq_plot_files *f);

/* Draw the standard figures of bench and validate summaries. Rows of all
 * tables of one kind are pooled; only rows whose "status" is "ok" (or that
 * have no status column) are plotted.
 *
 * Bench, for each group of rows sharing masked, batch, heads and head_dim
 * (file names get a suffix such as "_b4_masked" when there are several groups):
 *   runtime[_G]      time (opt->stat) against sequence length, log-log, a line per variant
 *   memory[_G]       peak RSS against sequence length, log-log
 *   gpu_memory[_G]   peak GPU memory, when any row has it
 *   speedup[_G]      baseline time / variant time against sequence length
 * and over all rows: error_vs_runtime, max abs error against time (scatter, log-log).
 * Validate:
 *   error_<output>   histogram of per-batch max abs error (log x), a series per config
 *   runtime_valid_size  median time per batch against valid size, a series per config
 *
 * Every table is checked before anything is drawn, so bad input writes no file.
 * Errors: OQ_ERR_FORMAT (unknown kind, missing column, bad value, duplicate
 * row, no row with status ok; the message names file, line and column),
 * OQ_ERR_INVALID_ARG (unknown baseline or stat), and those of oq_plot_render.
 * On error `written` still lists the files written before it. */
OQ_API oq_status oq_plot_summaries(oq_csv *const *tables, size_t ntables, const oq_plot_options *opt,
                                   oq_plot_files *written, oq_err *err);

#ifdef __cplusplus
}
#endif
#endif
