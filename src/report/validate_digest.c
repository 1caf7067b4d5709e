/* What report.html shows of a validate summary's batch records, counted one record at a time
 * (report-impl.h): a summary.json is read with oq_json_scan_file, so its records never meet
 * in memory; a document already in memory is fed the same way. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare-impl.h"
#include "fileio/fileio-impl.h"
#include "ortqual/stats.h"
#include "plot/figures-impl.h"
#include "report/report-impl.h"

/* A batch that ran: it has a timing or outputs (a configuration refused or not run keeps
 * only the batch's index). */
int oq_vd_batch_ran(const json_t *bt)
{
    return json_is_number(json_object_get(bt, "first_call_s")) || json_array_size(json_object_get(bt, "outputs"));
}

const char *oq_vd_status(const json_t *cfg)
{
    const char *st = oq_j_str(cfg, "status", "failed");
    return json_is_true(json_object_get(cfg, "reference")) && !strcmp(st, "passed") ? "reference" : st;
}

/* Padding of one output record: judged (must be zero) unless the summary says it was only
 * reported; summaries written before the rule existed judged every padded element. */
int oq_vd_padding_judged(const json_t *o)
{
    return !json_is_false(json_object_get(json_object_get(o, "padding"), "checked"));
}

static int failed_record(const json_t *bt) { return json_is_false(json_object_get(bt, "passed")); }

static double time_ms(const json_t *bt)
{
    const char *key = json_is_number(json_object_get(bt, "median_s")) ? "median_s" : "first_call_s";
    return json_number_value(json_object_get(bt, key)) * 1e3;
}

static int push(json_t *a, json_t *x) { return json_array_append(a, x) == 0; }

/* The worst output and its totals, over one more record. */
static void add_worst(oq_vd_config *c, const json_t *bt)
{
    size_t j;
    json_t *o;
    json_array_foreach(json_object_get(bt, "outputs"), j, o) {
        double m = oq_compare_record_max(o, "max_abs");
        /* an output of matched infinities alone has no error: its 0 is none (compare.h) */
        if (!oq_compare_record_judged_nothing(o) && (!c->worst_output || oq_compare_max_abs_worse(m, c->worst_abs))) {
            c->worst_abs = m;
            c->worst_output = oq_j_str(o, "output", oq_j_str(o, "name", "?"));
            json_decref(c->worst_rec);
            c->worst_rec = json_incref((json_t *)bt); /* keeps the name alive */
        }
        c->over += oq_j_int(o, "over_tolerance");
        c->nan += oq_j_int(o, "nan");
        c->inf += oq_j_int(o, "inf");
        long long pad = oq_j_int(json_object_get(o, "padding"), "nonzero");
        if (oq_vd_padding_judged(o)) c->pad += pad;
        else c->pad_reported += pad;
        c->valid += oq_j_int(o, "num_valid");
    }
}

/* Outputs whose padding was not zero and not judged: the first record of each. */
static int add_notes(oq_vd_config *c, const json_t *bt)
{
    size_t j, k;
    json_t *o, *n;
    json_array_foreach(json_object_get(bt, "outputs"), j, o) {
        const json_t *p = json_object_get(o, "padding");
        const char *name = oq_j_str(o, "output", oq_j_str(o, "name", "?"));
        if (oq_vd_padding_judged(o) || !oq_j_int(p, "nonzero") || json_is_false(json_object_get(p, "masked"))) continue;
        int seen = 0;
        json_array_foreach(c->notes, k, n) seen |= !strcmp(oq_j_str(n, "output", ""), name);
        if (seen || json_array_size(c->notes) >= 64) continue;
        json_t *note = json_pack("{s:s, s:I, s:I, s:I, s:s}", "output", name, "nonzero", (json_int_t)oq_j_int(p, "nonzero"),
                                 "padded", (json_int_t)oq_j_int(p, "padded"), "batch", (json_int_t)oq_j_int(bt, "index"),
                                 "rule", oq_j_str(p, "rule", ""));
        if (!note || json_array_append_new(c->notes, note)) return 0;
    }
    return 1;
}

/* The rows it may show: the first ROWS_ALL, the first ROWS_EACH failing, the slowest others. */
static int add_row(oq_vd_config *c, json_t *bt)
{
    if (json_array_size(c->first) < OQ_VD_ROWS_ALL && !push(c->first, bt)) return 0;
    if (failed_record(bt)) return json_array_size(c->failing) >= OQ_VD_ROWS_EACH || push(c->failing, bt);
    double t = time_ms(bt);
    if (isnan(t)) return 1;
    size_t k = c->n_slow;
    if (k == OQ_VD_ROWS_EACH) { /* replace the fastest kept when this one is slower */
        k = 0;
        for (size_t i = 1; i < c->n_slow; i++)
            if (c->slow_ms[i] < c->slow_ms[k]) k = i;
        if (c->slow_ms[k] >= t) return 1;
        json_decref(c->slow[k]);
    } else {
        c->n_slow++;
    }
    c->slow[k] = json_incref(bt);
    c->slow_ms[k] = t;
    return 1;
}

/* Its timing point for the latency figure (the record without its outputs), built only when
 * the sample keeps it. */
static int add_point(oq_vd_config *c, const json_t *bt)
{
    json_t *p = oq_batch_sample_wants(&c->sample) ? json_object() : json_null();
    const char *keys[] = {"index", "first_call_s", "repeat", "warmup", "calls", "median_s"};
    for (size_t i = 0; json_is_object(p) && i < sizeof keys / sizeof *keys; i++)
        if (json_object_get(bt, keys[i])) json_object_set(p, keys[i], json_object_get(bt, keys[i]));
    return oq_batch_sample_offer(&c->sample, p);
}

static int config_add(oq_vd_config *c, json_t *bt)
{
    int ran = oq_vd_batch_ran(bt);
    if (!c->n++ && json_is_number(json_object_get(bt, "first_call_s"))) c->first_ms = oq_j_num(bt, "first_call_s") * 1e3;
    c->ran += ran;
    c->cached += json_is_true(json_object_get(bt, "reference_cached"));
    if (json_is_number(json_object_get(bt, "median_s"))) {
        double *m = OQ_PUSH(c->medians, c->n_medians);
        if (!m) return 0;
        *m = oq_j_num(bt, "median_s") * 1e3;
    }
    add_worst(c, bt);
    /* kept for a summary from before outputs were aggregated: its records alone bear out a pass */
    oq_err ignored = {0};
    if (!c->contra && oq_compare_batch_holds(bt, "", "", &ignored)) c->contra = json_incref(bt);
    return add_notes(c, bt) && (!ran || add_row(c, bt)) && add_point(c, bt);
}

static oq_vd_config *config_at(oq_vd *d, size_t k)
{
    while (d->n_configs <= k) {
        oq_vd_config *c = OQ_PUSH(d->configs, d->n_configs);
        if (!c) return NULL;
        *c = (oq_vd_config){.first_ms = NAN, .worst_abs = -1, .first = json_array(), .failing = json_array(),
                            .notes = json_array()};
        if (!c->first || !c->failing || !c->notes || !oq_batch_sample_init(&c->sample)) return NULL;
    }
    return &d->configs[k];
}

static int info_add(oq_vd *d, json_t *bi)
{
    d->n_batches++;
    d->events += oq_j_int(bi, "batch_size");
    d->valid += oq_j_int(bi, "valid_size");
    return json_array_size(d->infos) >= OQ_VD_ROWS_ALL || push(d->infos, bi);
}

static oq_status first_pass(void *ctx, long which, json_t *rec, oq_err *err)
{
    oq_vd *d = ctx;
    if (which == OQ_JSON_PLAN_BATCHES) return OQ_OK; /* the plan's batches: not shown */
    oq_vd_config *c = which >= 0 ? config_at(d, (size_t)which) : NULL;
    int ok = which < 0 ? info_add(d, rec) : c && config_add(c, rec);
    return ok ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "out of memory reading the batch records");
}

static int cmp_index(const void *a, const void *b)
{
    long long x = oq_j_int(*(json_t *const *)a, "index"), y = oq_j_int(*(json_t *const *)b, "index");
    return (x > y) - (x < y);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Its rows in index order: every one when few ran, else the failing and the slowest. */
static int config_rows(oq_vd_config *c)
{
    c->rows = c->ran <= OQ_VD_ROWS_ALL ? json_incref(c->first) : json_copy(c->failing);
    for (size_t i = 0; c->rows && c->ran > OQ_VD_ROWS_ALL && i < c->n_slow; i++)
        if (!push(c->rows, c->slow[i])) return 0;
    if (!c->rows) return 0;
    size_t n = json_array_size(c->rows);
    json_t **v = malloc((n + 1) * sizeof *v);
    if (!v) return 0;
    for (size_t i = 0; i < n; i++) v[i] = json_incref(json_array_get(c->rows, i));
    qsort(v, n, sizeof *v, cmp_index);
    json_array_clear(c->rows);
    int ok = 1;
    for (size_t i = 0; i < n; i++) ok = json_array_append_new(c->rows, v[i]) == 0 && ok;
    free(v);
    oq_stats st;
    if (c->n_medians && oq_stats_compute(c->medians, c->n_medians, &st, NULL) == OQ_OK)
        c->median_ms = st.p50, c->p90_ms = st.p90;
    return ok;
}

/* The batch indices whose information the second pass keeps: rows and figure points. */
static int needed(oq_vd *d)
{
    size_t i, k;
    json_t *x;
    for (k = 0; k < d->n_configs; k++) {
        oq_vd_config *c = &d->configs[k];
        c->median_ms = c->p90_ms = NAN;
        if (!config_rows(c)) return 0;
        json_t *lists[] = {c->rows, c->sample.kept};
        for (size_t l = 0; l < 2; l++) json_array_foreach(lists[l], i, x) {
                int64_t *p = OQ_PUSH(d->need, d->n_need);
                if (!p) return 0;
                *p = 2 * oq_j_int(x, "index") + (l == 0); /* odd: a row's, whose whole entry is kept */
            }
    }
    if (d->n_need) qsort(d->need, d->n_need, sizeof *d->need, cmp_i64);
    return 1;
}

static int is_needed(const oq_vd *d, int64_t key)
{
    return d->n_need && bsearch(&key, d->need, d->n_need, sizeof *d->need, cmp_i64) != NULL;
}

/* A row's batch keeps its whole entry, a figure point's only its valid size. */
static oq_status second_pass(void *ctx, long which, json_t *rec, oq_err *err)
{
    oq_vd *d = ctx;
    int64_t index = which == -1 ? oq_j_int(rec, "index") : -1;
    int row = index >= 0 && is_needed(d, 2 * index + 1);
    if (!row && (index < 0 || !is_needed(d, 2 * index))) return OQ_OK;
    json_t *v = json_pack("{s:I, s:o}", "index", (json_int_t)index, "info",
                          row ? json_incref(rec) : json_pack("{s:I}", "valid_size", (json_int_t)oq_j_int(rec, "valid_size")));
    return v && !json_array_append_new(d->needed_infos, v) ? OQ_OK
                                                           : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
}

static int cmp_info(const void *a, const void *b) { return cmp_index(a, b); }

const json_t *oq_vd_info(const oq_vd *d, long long index)
{
    size_t i;
    json_t *x;
    json_array_foreach(d->infos, i, x) if (oq_j_int(x, "index") == index) return x;
    size_t lo = 0, hi = json_array_size(d->needed_infos); /* sorted by index */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        long long at = oq_j_int(json_array_get(d->needed_infos, mid), "index");
        if (at == index) return json_object_get(json_array_get(d->needed_infos, mid), "info");
        if (at < index) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* The kept information sorted, and each figure point given its batch's valid size. */
static int finish(oq_vd *d)
{
    size_t n = json_array_size(d->needed_infos), i, k;
    json_t **v = malloc((n + 1) * sizeof *v), *x;
    if (!v) return 0;
    for (i = 0; i < n; i++) v[i] = json_incref(json_array_get(d->needed_infos, i));
    qsort(v, n, sizeof *v, cmp_info);
    json_array_clear(d->needed_infos);
    int ok = 1;
    for (i = 0; i < n; i++) ok = json_array_append_new(d->needed_infos, v[i]) == 0 && ok;
    free(v);
    for (k = 0; k < d->n_configs; k++) json_array_foreach(d->configs[k].sample.kept, i, x) {
            const json_t *info = oq_vd_info(d, oq_j_int(x, "index"));
            if (info) json_object_set(x, "valid_size", json_object_get(info, "valid_size"));
        }
    return ok;
}

static oq_status each_record(const json_t *doc, oq_json_record_fn fn, oq_vd *d, oq_err *err)
{
    size_t i, k;
    json_t *c, *r;
    oq_status st = OQ_OK;
    json_array_foreach(json_object_get(doc, "batches"), i, r) if (!st) st = fn(d, -1, r, err);
    json_array_foreach(json_object_get(doc, "configs"), k, c) {
        if (!st && !config_at(d, k)) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        json_array_foreach(json_object_get(c, "batches"), i, r) if (!st) st = fn(d, (long)k, r, err);
    }
    return st;
}

int oq_vd_init(oq_vd *d, size_t n_configs)
{
    memset(d, 0, sizeof *d);
    d->infos = json_array();
    d->needed_infos = json_array();
    return d->infos && d->needed_infos && (!n_configs || config_at(d, n_configs - 1));
}

static oq_status nomem(oq_err *err) { return oq_err_set(err, OQ_ERR_NOMEM, "out of memory reading the batch records"); }

oq_status oq_vd_add(oq_vd *d, size_t config, json_t *rec, oq_err *err)
{
    oq_vd_config *c = config_at(d, config);
    return c && config_add(c, rec) ? OQ_OK : nomem(err);
}

oq_status oq_vd_of_doc(oq_vd *d, const json_t *doc, oq_err *err)
{
    if (!oq_vd_init(d, 0)) return nomem(err);
    oq_status st = each_record(doc, first_pass, d, err);
    if (!st && !needed(d)) st = nomem(err);
    if (!st) st = each_record(doc, second_pass, d, err);
    if (!st && !finish(d)) st = nomem(err);
    return st;
}

/* The figures draw each configuration's sample, with how many records it stands for. */
static void samples_into(json_t *doc, const oq_vd *d)
{
    size_t k;
    json_t *c;
    json_array_foreach(json_object_get(doc, "configs"), k, c) if (k < d->n_configs && json_object_get(c, "batches")) {
            json_object_set(c, "batches", d->configs[k].sample.kept);
            json_object_set_new(c, "batches_total", json_integer((json_int_t)d->configs[k].sample.seen));
        }
}

json_t *oq_vd_scan(oq_vd *d, const char *path, oq_err *err)
{
    int ok = oq_vd_init(d, 0);
    json_t *doc = ok ? oq_json_scan_file(path, OQ_JSON_SCAN_PLAN_BATCHES, first_pass, d, err) : NULL;
    size_t nc = json_array_size(json_object_get(doc, "configs")); /* one with no record too */
    ok = doc && (!nc || config_at(d, nc - 1)) && needed(d);
    if (!d->infos || !d->needed_infos || (doc && !ok)) nomem(err);
    /* the second pass keeps entries of the run's batch list only: the configurations' records,
     * parsed in the first, are walked over */
    json_t *again = ok ? oq_json_scan_file(path, OQ_JSON_SCAN_PLAN_BATCHES | OQ_JSON_SCAN_RUN_BATCHES_ONLY, second_pass,
                                           d, err)
                       : NULL;
    ok = again && finish(d);
    if (again && !ok) nomem(err);
    json_decref(again);
    if (ok) samples_into(doc, d);
    if (ok) return doc;
    json_decref(doc);
    return NULL;
}

/* The batch list's entries in one pass: counted (the first pass's part) and kept where needed
 * (the second's). */
static oq_status infos_pass(void *ctx, long which, json_t *rec, oq_err *err)
{
    if (which == -1 && !info_add(ctx, rec)) return nomem(err);
    return second_pass(ctx, which, rec, err);
}

json_t *oq_vd_scan_rest(oq_vd *d, const char *path, oq_err *err)
{
    if (!needed(d)) return nomem(err), NULL;
    /* one pass: the configurations' records, counted already, are walked over */
    json_t *doc = oq_json_scan_file(path, OQ_JSON_SCAN_PLAN_BATCHES | OQ_JSON_SCAN_RUN_BATCHES_ONLY, infos_pass, d, err);
    oq_status st = !doc ? err->status
                   : json_array_size(json_object_get(doc, "configs")) != d->n_configs
                       ? oq_err_set(err, OQ_ERR_FORMAT, "%s: not the configurations whose records were counted", path)
                   : !finish(d) ? nomem(err)
                                : OQ_OK;
    if (!st) samples_into(doc, d);
    if (!st) return doc;
    json_decref(doc);
    return NULL;
}

void oq_vd_clear(oq_vd *d)
{
    for (size_t k = 0; k < d->n_configs; k++) {
        oq_vd_config *c = &d->configs[k];
        free(c->medians);
        json_decref(c->worst_rec);
        json_decref(c->first);
        json_decref(c->failing);
        json_decref(c->notes);
        json_decref(c->rows);
        json_decref(c->sample.kept);
        json_decref(c->contra);
        for (size_t i = 0; i < c->n_slow; i++) json_decref(c->slow[i]);
    }
    free(d->configs);
    free(d->need);
    json_decref(d->infos);
    json_decref(d->needed_infos);
    memset(d, 0, sizeof *d);
}
