/* validate.csv (one row per batch x configuration x output) and the diagnostic plots. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/csv.h"
#include "plot/figures-impl.h"
#include "validate/validate-impl.h"

/* The valid size of the batch of that index (a shard's summary holds some of the plan's
 * batches, in index order): found by bisection, so the rows cost O(n log n). */
static int64_t valid_size(const oq_validate_summary *s, int64_t index)
{
    size_t lo = 0, hi = s->n_batches;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->batches[mid].index < index) lo = mid + 1;
        else hi = mid;
    }
    if (lo < s->n_batches && s->batches[lo].index == index) return s->batches[lo].valid_size;
    for (size_t i = 0; i < s->n_batches; i++) /* not sorted after all */
        if (s->batches[i].index == index) return s->batches[i].valid_size;
    return 0;
}

static void write_rows(oq_csv_writer *w, const oq_config_result *c, const oq_validate_summary *s, oq_err *err)
{
    for (size_t i = 0; i < c->n_batches; i++) {
        const oq_batch_result *b = &c->batches[i];
        if (!b->timed && !b->n_outputs) continue; /* `expected`: nothing ran, nothing to time */
        /* the reference has no comparison: one row with the timing, error left empty */
        size_t n = b->n_outputs ? b->n_outputs : 1;
        for (size_t j = 0; j < n; j++) {
            const oq_batch_output *o = b->n_outputs ? &b->outputs[j] : NULL;
            oq_csv_write_str(w, c->config.name);
            oq_csv_write_str(w, o ? o->name : "all");
            oq_csv_write_int(w, b->index);
            oq_csv_write_int(w, valid_size(s, b->index));
            oq_csv_write_double(w, b->timed ? b->first_call_s : 0);
            oq_csv_write_double(w, b->timed && !isnan(b->median_s) ? b->median_s : 0);
            if (o) oq_csv_write_double(w, o->max_abs);
            else oq_csv_write_empty(w);
            oq_csv_end_row(w, err);
        }
    }
}

oq_status oq_validate_write_csv(const char *path, const oq_validate_summary *s, oq_err *err)
{
    oq_csv_writer *w;
    oq_status st = oq_csv_writer_open(&w, path, oq_validate_csv_columns, OQ_VALIDATE_NCOLS, 1, err);
    if (st) return st;
    for (size_t i = 0; i < s->n_configs; i++) write_rows(w, &s->configs[i], s, err);
    return oq_csv_writer_commit(w, err);
}

/* Plots are diagnostics: a failure is recorded in the summary, not a failed validation.
 * They are drawn from the summary document itself (its error histograms), as `ortqual plot
 * summary.json` draws them. */
void oq_validate_plots(const char *outdir, oq_validate_summary *s)
{
    oq_err e = {0};
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/plots", outdir);
    oq_plot_options po = {.outdir = dir};
    oq_plot_files files = {0};
    oq_figures *figs = NULL;
    json_t *doc = oq_summary_to_json_for_plots(s);
    oq_status st = doc ? oq_figures_from_summary_json(doc, "summary.json", &po, &figs, &e)
                       : oq_err_set(&e, OQ_ERR_NOMEM, "out of memory");
    if (!st) st = oq_figures_write(figs, &po, &files, &e);
    s->plotted = 1;
    for (size_t i = 0; i < files.n; i++) oq_strv_push(&s->plots, &s->n_plots, files.paths[i]);
    if (st) s->plot_error = strdup(e.msg);
    oq_plot_files_clear(&files);
    oq_figures_free(figs);
    json_decref(doc);
}
