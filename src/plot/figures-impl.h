/* Internal to src/plot (and read by the validate and report writers): the standard figures of summaries, built in memory
 * (every figure's data in one arena) before anything is drawn, so bad input
 * fails before any file exists. */
#ifndef ORTQUAL_FIGURES_IMPL_H
#define ORTQUAL_FIGURES_IMPL_H

#include <jansson.h>
#include <stddef.h>

#include "core/core-impl.h"
#include "ortqual/plot.h"

struct oq_figures {
    oq_arena mem;
    struct oq_named_figure {
        const char *name; /* file name without extension */
        oq_figure_kind kind;
        const char *output; /* error_ and error_vs_ref_: the model output; else NULL */
        oq_plot_spec spec;
    } *items;
    size_t n;
    int no_ok_rows; /* bench inputs without a row of status "ok": an empty set, not an error */
};

#define OQ_NOMEM(err) oq_err_set(err, OQ_ERR_NOMEM, "out of memory")

/* Add a figure of a kind (about `output`, NULL when not a per-output one; both strings must
 * live in fl->mem or be static; the spec is copied, its arrays must live in fl->mem). A
 * figure with nothing drawable is skipped, not failed (e.g. every error exactly 0). */
oq_status oq_figures_add(oq_figures *fl, oq_figure_kind kind, const char *output, const char *name,
                         const oq_plot_spec *spec, oq_err *err);

/* The formats in the order every figure is written, the ones opt asks for (both by default),
 * and the file of a figure (malloc'ed; NULL on OOM). */
extern const oq_plot_format oq_figure_fmts[2];
unsigned oq_figure_formats(const oq_plot_options *opt);
char *oq_figure_path(const char *outdir, const char *name, oq_plot_format fmt);
/* oq_figures_write in this process, and in a child process (contained.c); opt->outdir set. */
oq_status oq_figures_write_here(const oq_figures *f, const oq_plot_options *opt, oq_plot_files *written, oq_err *err);
oq_status oq_figures_write_isolated(const oq_figures *f, const oq_plot_options *opt, oq_plot_files *written,
                                    oq_err *err);

/* "cuda:attention24:fp16" -> "cuda_attention24_fp16" (file names). */
char *oq_file_safe(oq_arena *a, const char *s);

/* Distinct strings in first-seen order (the strings are borrowed). */
typedef struct oq_strset {
    const char **v;
    size_t n;
} oq_strset;
int oq_strset_index(const oq_strset *s, const char *x);
int oq_strset_add(oq_strset *s, const char *x); /* 0, or -1 when out of memory */

/* figures_bench.c: from bench tables (CSV, or summary.json records read as a table). */
oq_status oq_figures_bench(oq_figures *fl, oq_csv *const *tables, size_t nt, const oq_plot_options *opt,
                           const char *stat, oq_err *err);
/* The batch records the latency figure draws, at most 2 x OQ_FIGURE_BATCHES of them whatever
 * the number of batches: each record is offered in turn; when the sample is full every other
 * kept one is dropped and from then on every 2nd (4th, ...) offered is kept. A document whose
 * configuration says "batches_total" (more than it holds) was sampled so. */
#define OQ_FIGURE_BATCHES 300
typedef struct oq_batch_sample {
    json_t *kept;       /* the records kept, in order (an array) */
    size_t stride, seen;
} oq_batch_sample;
int oq_batch_sample_init(oq_batch_sample *bs);             /* 0: out of memory */
int oq_batch_sample_offer(oq_batch_sample *bs, json_t *rec); /* takes rec; 0: out of memory */
/* 1 when the next record offered is kept: a caller offers a placeholder (json_null()) for the
 * others instead of building them. */
int oq_batch_sample_wants(const oq_batch_sample *bs);
/* figures_validate.c: from a validate or replay summary.json document. */
oq_status oq_figures_validate(oq_figures *fl, const json_t *summary, const char *name, oq_err *err);

/* oq_figures_from_summary of a document already parsed (validate draws its plots from the
 * summary it is about to write; report.html inlines them). */
oq_status oq_figures_from_summary_json(const json_t *summary, const char *name, const oq_plot_options *opt,
                                       oq_figures **out, oq_err *err);

#endif
