/* validate.csv (one row per batch x configuration x output) and the diagnostic plots. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compare/compare-impl.h"
#include "ortqual/csv.h"
#include "plot/figures-impl.h"
#include "report/report-impl.h"
#include "validate/validate-impl.h"

/* The valid size and source of the batch of that index (a shard's summary holds some of the
 * plan's batches, in index order): found by bisection, so the rows cost O(n log n); a run's
 * list is on file, its briefs in sp->brief. */
static oq_batch_brief brief_of(const oq_validate_summary *s, const oq_spilled *sp, int64_t index)
{
    int brief = sp && sp->brief;
    size_t lo = 0, n = brief ? sp->n_brief : s->n_batches, hi = n;
#define INDEX_AT(i) (brief ? sp->brief[i].index : s->batches[i].index)
#define BRIEF_AT(i) (brief ? sp->brief[i] : oq_batch_brief_of(&s->batches[i]))
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (INDEX_AT(mid) < index) lo = mid + 1;
        else hi = mid;
    }
    if (lo < n && INDEX_AT(lo) == index) return BRIEF_AT(lo);
    for (size_t i = 0; i < n; i++) /* not sorted after all */
        if (INDEX_AT(i) == index) return BRIEF_AT(i);
#undef INDEX_AT
#undef BRIEF_AT
    return (oq_batch_brief){index, 0, ""}; /* not in the list: nothing to say */
}

/* One configuration's records as one pass sees them: its rows, its sample for the latency
 * figure (NULL: no plots), its totals (NULL: not counted) and the report's count of them
 * (NULL: the report reads summary.json alone). */
typedef struct rows_ctx {
    oq_csv_writer *w;
    const oq_config_result *c;
    const oq_validate_summary *s;
    const oq_spilled *sp;
    oq_batch_sample *bs;
    oq_totals_acc *totals;
    oq_vd *vd;
    size_t k; /* the configuration's position */
} rows_ctx;

/* A record as the latency figure's sample keeps it: its timings and valid size. */
static json_t *sample_record(const rows_ctx *x, const oq_batch_result *b, json_t *rec)
{
    json_t *j = rec ? json_copy(rec) : oq_batch_record_json(b); /* the one read, its members shared */
    if (j) {
        json_object_del(j, "outputs");
        json_object_set_new(j, "valid_size", json_integer(brief_of(x->s, x->sp, b->index).valid_size));
    }
    return j;
}

/* The rows of one batch record (rec: as read, NULL: from memory and not counted for the
 * report), offered to the sample and counted into the totals and the report. Only the records
 * the sample keeps are built again as JSON (a placeholder stands for the others). */
static oq_status write_rows(const rows_ctx *x, const oq_batch_result *b, json_t *rec, oq_err *err)
{
    oq_status st = x->vd ? oq_vd_add(x->vd, x->k, rec, err) : OQ_OK;
    if (st) return st;
    json_t *sampled = x->bs && oq_batch_sample_wants(x->bs) ? sample_record(x, b, rec) : json_null();
    if (x->bs && !oq_batch_sample_offer(x->bs, sampled))
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (x->totals && !oq_totals_add(x->totals, b)) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    /* `expected`: nothing ran, nothing to time; a batch the reference read from its cache keeps its
     * row (the same plan gives the same rows whatever the cache held), its seconds empty */
    if (!b->timed && !b->n_outputs && !b->reference_cached) return OQ_OK;
    /* the reference has no comparison: one row with the timing, error left empty */
    size_t n = b->n_outputs ? b->n_outputs : 1;
    oq_batch_brief bb = brief_of(x->s, x->sp, b->index);
    for (size_t j = 0; j < n; j++) {
        const oq_batch_output *o = b->n_outputs ? &b->outputs[j] : NULL;
        oq_csv_write_str(x->w, x->c->config.name);
        oq_csv_write_str(x->w, o ? o->name : "all");
        oq_csv_write_int(x->w, b->index);
        oq_csv_write_int(x->w, bb.valid_size);
        if (b->reference_cached) {
            oq_csv_write_empty(x->w);
            oq_csv_write_empty(x->w);
        } else {
            oq_csv_write_double(x->w, b->timed ? b->first_call_s : 0);
            oq_csv_write_double(x->w, b->timed && !isnan(b->median_s) ? b->median_s : 0);
        }
        /* nan or inf when a valid element was; empty where no value was compared (the reference's
         * row, an output of matched infinities: its 0 would read as an error of 0) */
        if (o && !oq_compare_record_judged_nothing(json_array_get(json_object_get(rec, "outputs"), j)))
            oq_csv_write_double(x->w, o->max_abs);
        else oq_csv_write_empty(x->w);
        oq_csv_write_str(x->w, bb.source); /* last: readers by column name keep working */
        oq_csv_end_row(x->w, err);
    }
    return OQ_OK;
}

/* validate.csv: each configuration's records read once, which also samples them (samples:
 * one per configuration, or NULL) and counts them (totals: into each r->totals). */
/* A record for write_rows; one from memory built as summary.json will hold it (once, for the
 * report's count and the sample) when the report counts it. */
static oq_status write_batch(void *ctx, const oq_batch_result *b, json_t *rec, oq_err *err)
{
    const rows_ctx *x = ctx;
    json_t *built = !rec && x->vd ? oq_batch_record_json(b) : NULL;
    if (!rec && x->vd && !built) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = write_rows(x, b, rec ? rec : built, err);
    json_decref(built);
    return st;
}

static oq_status write_csv(const char *path, oq_validate_summary *s, const oq_spilled *sp, oq_batch_sample *samples,
                           int totals, oq_vd *vd, oq_err *err)
{
    oq_csv_writer *w;
    oq_status st = oq_csv_writer_open(&w, path, oq_validate_csv_columns, OQ_VALIDATE_NCOLS, 1, err);
    if (st) return st;
    for (size_t i = 0; !st && i < s->n_configs; i++) {
        oq_totals_acc acc;
        oq_totals_begin(&acc);
        rows_ctx x = {w, &s->configs[i], s, sp, samples ? &samples[i] : NULL, totals ? &acc : NULL, vd, i};
        if (sp && sp->records && sp->records[i]) st = oq_batch_records_each(sp->records[i], write_batch, &x, err);
        for (size_t k = 0; !st && k < s->configs[i].n_batches; k++) st = write_batch(&x, &s->configs[i].batches[k], NULL, err);
        if (totals && sp && sp->records && sp->records[i]) oq_totals_end(&acc, &s->configs[i].totals);
        else free(acc.medians);
    }
    if (st) {
        oq_csv_writer_abort(w);
        return st;
    }
    return oq_csv_writer_commit(w, err);
}

/* Plots are diagnostics: a failure is recorded in the summary, not a failed validation.
 * They are drawn from the summary document itself (its error histograms), as `ortqual plot
 * summary.json` draws them, with each configuration's sample of its batch records (their
 * number never matters to memory). */
/* A plots/ planted as a symbolic link (or a file) is never drawn through; a folder there, or
 * none, is the figure writer's (it makes the folder and removes it on a failure or signal). */
static oq_status plots_folder_ok(const char *dir, oq_err *e)
{
    struct stat sb;
    if (lstat(dir, &sb) != 0 || S_ISDIR(sb.st_mode)) return OQ_OK;
    return oq_err_set(e, OQ_ERR_INVALID_ARG, "%s: %s: ortqual does not write through links in an output folder "
                      "(remove it)", dir, S_ISLNK(sb.st_mode) ? "is a symbolic link" : "is not a folder");
}

static void plots(const char *outdir, oq_validate_summary *s, oq_batch_sample *samples, int isolate)
{
    oq_err e = {0};
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/plots", outdir);
    oq_plot_options po = {.outdir = dir, .isolate = isolate};
    oq_plot_files files = {0};
    oq_figures *figs = NULL;
    json_t *doc = oq_summary_to_json_for_plots(s);
    oq_status st = doc ? OQ_OK : oq_err_set(&e, OQ_ERR_NOMEM, "out of memory");
    if (!st) st = plots_folder_ok(dir, &e);
    for (size_t i = 0; !st && i < s->n_configs; i++) {
        json_t *cfg = json_array_get(json_object_get(doc, "configs"), i);
        if (!json_object_get(cfg, "batches")) continue; /* no worker result */
        json_object_set(cfg, "batches", samples[i].kept);
        json_object_set_new(cfg, "batches_total", json_integer((json_int_t)samples[i].seen));
    }
    if (!st) st = oq_figures_from_summary_json(doc, "summary.json", &po, &figs, &e);
    if (!st) st = oq_figures_write(figs, &po, &files, &e);
    s->plotted = 1;
    for (size_t i = 0; i < files.n; i++) {
        oq_strv_push(&s->plots, &s->n_plots, files.paths[i]);
        s->plot_kinds |= 1u << files.kinds[i];
    }
    if (st) s->plot_error = strdup(e.msg);
    oq_plot_files_clear(&files);
    oq_figures_free(figs);
    json_decref(doc);
}

oq_status oq_validate_write_tables(const char *outdir, oq_validate_summary *s, const oq_spilled *sp, int with_plots,
                                   int totals, oq_vd *vd, oq_err *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/validate.csv", outdir);
    size_t n = with_plots ? s->n_configs : 0;
    oq_batch_sample *samples = n ? calloc(n, sizeof *samples) : NULL;
    oq_status st = n && !samples ? oq_err_set(err, OQ_ERR_NOMEM, "out of memory") : OQ_OK;
    for (size_t i = 0; !st && i < n; i++)
        if (!oq_batch_sample_init(&samples[i])) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (!st) st = write_csv(path, s, sp, samples, totals, vd, err);
    if (!st && with_plots) plots(outdir, s, samples, with_plots == OQ_PLOTS_ISOLATED);
    for (size_t i = 0; samples && i < n; i++) json_decref(samples[i].kept);
    free(samples);
    return st;
}
