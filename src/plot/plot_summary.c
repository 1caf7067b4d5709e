/* The standard figures of bench and validate summaries (see plot.h).
 *
 * Two phases: every table is read into rows and every figure is built in
 * memory first (so bad input fails before any file exists), then the figures
 * are rendered. All figure data lives in one arena freed at the end. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "ortqual/fileio.h"
#include "ortqual/plot.h"

/* ---- Figures to draw ---------------------------------------------------- */

typedef struct figure_list {
    oq_arena mem;
    struct named_figure {
        const char *name; /* file name without extension */
        oq_plot_spec spec;
    } *items;
    size_t n;
} figure_list;

#define NOMEM(err) oq_err_set(err, OQ_ERR_NOMEM, "out of memory")

static oq_status figure_add(figure_list *fl, const char *name, const oq_plot_spec *spec, oq_err *err)
{
    struct named_figure *f = OQ_PUSH(fl->items, fl->n);
    if (!f) return NOMEM(err);
    f->name = name;
    f->spec = *spec;
    return OQ_OK;
}

/* Same test the renderer applies, so a figure with nothing drawable is
 * skipped rather than failed (e.g. every error exactly 0). */
static int spec_drawable(const oq_plot_spec *sp)
{
    for (size_t i = 0; i < sp->nseries; i++)
        for (size_t k = 0; k < sp->series[i].n; k++) {
            double x = sp->series[i].x[k];
            double y = sp->kind == OQ_PLOT_HISTOGRAM ? 1 : sp->series[i].y[k];
            if (isfinite(x) && isfinite(y) && (!sp->logx || x > 0) && (!sp->logy || y > 0)) return 1;
        }
    return 0;
}

/* Distinct values in first-seen order. */
typedef struct strset {
    const char **v;
    size_t n;
} strset;

static int strset_index(const strset *s, const char *x)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], x)) return (int)i;
    return -1;
}

static int strset_add(strset *s, const char *x)
{
    if (strset_index(s, x) >= 0) return 0;
    const char **slot = OQ_PUSH(s->v, s->n);
    if (!slot) return -1;
    *slot = x;
    return 0;
}

static char *file_safe(oq_arena *a, const char *s)
{
    char *r = oq_arena_printf(a, "%s", s);
    if (!r) return NULL;
    for (char *p = r; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_' || *p == '.'))
            *p = '_';
    return r;
}

/* "file:line" of a row, for messages. */
static void where(char *buf, size_t n, const oq_csv *t, size_t row)
{
    snprintf(buf, n, "%s:%zu", oq_csv_name(t), oq_csv_line(t, row));
}

/* Rows to plot: a "status" column, when present, must say "ok". */
static int row_ok(const oq_csv *t, size_t row)
{
    size_t c;
    return !oq_csv_find(t, "status", &c) || !strcmp(oq_csv_get(t, row, c), "ok");
}

/* A metric that may be empty: NaN then. */
static oq_status get_opt(const oq_csv *t, size_t row, size_t col, double *v, oq_err *err)
{
    *v = NAN;
    return oq_csv_is_empty(t, row, col) ? OQ_OK : oq_csv_get_double(t, row, col, v, err);
}

oq_summary_kind oq_summary_detect(const oq_csv *t)
{
    size_t c;
    if (oq_csv_find(t, "variant", &c) && oq_csv_find(t, "status", &c) && oq_csv_find(t, "seq_len", &c))
        return OQ_SUMMARY_BENCH;
    if (oq_csv_find(t, "config", &c) && oq_csv_find(t, "output", &c) &&
        oq_csv_find(t, "valid_size", &c) && oq_csv_find(t, "max_abs_err", &c))
        return OQ_SUMMARY_VALIDATE;
    return OQ_SUMMARY_UNKNOWN;
}

/* ---- Bench -------------------------------------------------------------- */

typedef struct bench_row {
    const oq_csv *t;
    size_t row;
    const char *variant;         /* series label: the variant, plus settings that vary */
    const char *shapes, *io;     /* "" when the column is absent */
    int masked;
    long long batch, seq_len, heads, head_dim;
    long long kv_heads, threads; /* -1 when absent or empty */
    double ms, rss, gpu, err;    /* NaN when empty */
} bench_row;

typedef struct bench_data {
    bench_row *rows;
    size_t n;
    strset variants; /* series labels, first-seen order */
    const char *stat;
} bench_data;

enum { BC_VARIANT, BC_MASKED, BC_BATCH, BC_SEQ, BC_HEADS, BC_HDIM, BC_STAT, BC_RSS, BC_GPU, BC_ERR, BC_N };
/* Columns that may be missing (older files, JSON records without them). */
enum { BO_KV, BO_THREADS, BO_SHAPES, BO_IO, BO_N };

static oq_status get_opt_int(const oq_csv *t, size_t row, const size_t *col, long long *v, oq_err *err)
{
    *v = -1;
    return !col || oq_csv_is_empty(t, row, *col) ? OQ_OK : oq_csv_get_int(t, row, *col, v, err);
}

static oq_status bench_read_row(const oq_csv *t, size_t r, const size_t *col, const size_t *const *opt,
                                bench_row *b, oq_err *err)
{
    oq_status st;
    b->t = t;
    b->row = r;
    b->variant = oq_csv_get(t, r, col[BC_VARIANT]);
    if (!*b->variant) {
        char w[300];
        where(w, sizeof w, t, r);
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: column 'variant': empty", w);
    }
    b->shapes = opt[BO_SHAPES] ? oq_csv_get(t, r, *opt[BO_SHAPES]) : "";
    b->io = opt[BO_IO] ? oq_csv_get(t, r, *opt[BO_IO]) : "";
    if ((st = oq_csv_get_bool(t, r, col[BC_MASKED], &b->masked, err)) ||
        (st = oq_csv_get_int(t, r, col[BC_BATCH], &b->batch, err)) ||
        (st = oq_csv_get_int(t, r, col[BC_SEQ], &b->seq_len, err)) ||
        (st = oq_csv_get_int(t, r, col[BC_HEADS], &b->heads, err)) ||
        (st = oq_csv_get_int(t, r, col[BC_HDIM], &b->head_dim, err)) ||
        (st = get_opt_int(t, r, opt[BO_KV], &b->kv_heads, err)) ||
        (st = get_opt_int(t, r, opt[BO_THREADS], &b->threads, err)) ||
        (st = oq_csv_get_double(t, r, col[BC_STAT], &b->ms, err)) ||
        (st = get_opt(t, r, col[BC_RSS], &b->rss, err)) ||
        (st = get_opt(t, r, col[BC_GPU], &b->gpu, err)) ||
        (st = get_opt(t, r, col[BC_ERR], &b->err, err)))
        return st;
    return OQ_OK;
}

/* A sweep over export shapes or I/O binding has one row per setting for the
 * same variant and shape: the setting then becomes part of the series label. */
static oq_status bench_labels(oq_arena *a, bench_data *bd, oq_err *err)
{
    int vary_shapes = 0, vary_io = 0;
    for (size_t i = 1; i < bd->n; i++) {
        vary_shapes |= strcmp(bd->rows[i].shapes, bd->rows[0].shapes) != 0;
        vary_io |= strcmp(bd->rows[i].io, bd->rows[0].io) != 0;
    }
    for (size_t i = 0; i < bd->n; i++) {
        bench_row *b = &bd->rows[i];
        if (vary_shapes && vary_io)
            b->variant = oq_arena_printf(a, "%s (%s shapes, %s I/O)", b->variant, b->shapes, b->io);
        else if (vary_shapes)
            b->variant = oq_arena_printf(a, "%s (%s shapes)", b->variant, b->shapes);
        else if (vary_io)
            b->variant = oq_arena_printf(a, "%s (%s I/O)", b->variant, b->io);
        if (!b->variant) return NOMEM(err);
        if (strset_add(&bd->variants, b->variant)) return NOMEM(err);
    }
    return OQ_OK;
}

static oq_status bench_load(oq_arena *a, bench_data *bd, oq_csv *const *tables, size_t nt, oq_err *err)
{
    const char *names[BC_N] = {"variant", "masked", "batch", "seq_len", "heads", "head_dim",
                               bd->stat, "peak_rss_mb", "peak_gpu_mb", "max_abs_err"};
    static const char *const opt_names[BO_N] = {"kv_heads", "threads", "shapes", "io_binding"};
    size_t total = 0;
    for (size_t i = 0; i < nt; i++) total += oq_csv_nrows(tables[i]);
    bd->rows = calloc(total ? total : 1, sizeof *bd->rows);
    if (!bd->rows) return NOMEM(err);
    for (size_t i = 0; i < nt; i++) {
        const oq_csv *t = tables[i];
        size_t col[BC_N], ocol[BO_N];
        const size_t *opt[BO_N];
        oq_status st;
        for (size_t c = 0; c < BC_N; c++)
            if ((st = oq_csv_require(t, names[c], &col[c], err))) return st;
        for (size_t c = 0; c < BO_N; c++) opt[c] = oq_csv_find(t, opt_names[c], &ocol[c]) ? &ocol[c] : NULL;
        for (size_t r = 0; r < oq_csv_nrows(t); r++) {
            if (!row_ok(t, r)) continue;
            oq_status rs = bench_read_row(t, r, col, opt, &bd->rows[bd->n], err);
            if (rs) return rs;
            bd->n++;
        }
    }
    return bench_labels(a, bd, err);
}

static int cmp_ll(long long a, long long b) { return (a > b) - (a < b); }

/* Rows of one group share everything that shapes the problem except L. */
static int cmp_group(const bench_row *a, const bench_row *b)
{
    int c;
    if ((c = cmp_ll(a->batch, b->batch)) || (c = cmp_ll(a->masked, b->masked)) ||
        (c = cmp_ll(a->heads, b->heads)) || (c = cmp_ll(a->kv_heads, b->kv_heads)) ||
        (c = cmp_ll(a->head_dim, b->head_dim)) || (c = cmp_ll(a->threads, b->threads)))
        return c;
    return 0;
}

static int same_group(const bench_row *a, const bench_row *b) { return cmp_group(a, b) == 0; }

/* Order: group, then variant (first-seen), then length; qsort context via a global
 * is avoided by storing the variant rank in a parallel sort key. */
typedef struct sort_item {
    bench_row *r;
    int vrank;
} sort_item;

static int cmp_rows(const void *pa, const void *pb)
{
    const sort_item *a = pa, *b = pb;
    int g = cmp_group(a->r, b->r);
    if (g) return g;
    if (a->vrank != b->vrank) return a->vrank - b->vrank;
    return cmp_ll(a->r->seq_len, b->r->seq_len);
}

static oq_status bench_sort(bench_data *bd, oq_err *err)
{
    sort_item *items = malloc((bd->n ? bd->n : 1) * sizeof *items);
    bench_row *sorted = malloc((bd->n ? bd->n : 1) * sizeof *sorted);
    if (!items || !sorted) {
        free(items);
        free(sorted);
        return NOMEM(err);
    }
    for (size_t i = 0; i < bd->n; i++) items[i] = (sort_item){&bd->rows[i], strset_index(&bd->variants, bd->rows[i].variant)};
    qsort(items, bd->n, sizeof *items, cmp_rows);
    for (size_t i = 0; i < bd->n; i++) sorted[i] = *items[i].r;
    free(items);
    free(bd->rows);
    bd->rows = sorted;
    /* After sorting, a duplicate (same group, variant and length) sits next to its twin. */
    for (size_t i = 1; i < bd->n; i++) {
        const bench_row *a = &bd->rows[i - 1], *b = &bd->rows[i];
        if (same_group(a, b) && !strcmp(a->variant, b->variant) && a->seq_len == b->seq_len) {
            char wa[300], wb[300];
            where(wa, sizeof wa, a->t, a->row);
            where(wb, sizeof wb, b->t, b->row);
            return oq_err_set(err, OQ_ERR_FORMAT,
                              "%s and %s: two results for '%s', batch %lld, seq_len %lld, %s",
                              wa, wb, a->variant, a->batch, a->seq_len, a->masked ? "masked" : "unmasked");
        }
    }
    return OQ_OK;
}

/* A group is rows [g0, g1) of the sorted rows sharing masked/batch/heads/head_dim. */
typedef struct group {
    const bench_row *rows;
    size_t n;
    const char *suffix; /* "" or "_b4_masked"... */
    const char *shape;  /* "batch 4, masked, 8 heads, head dim 64" */
} group;

typedef double (*metric_fn)(const bench_row *r);
static double m_time(const bench_row *r) { return r->ms; }
static double m_rss(const bench_row *r) { return r->rss; }
static double m_gpu(const bench_row *r) { return r->gpu; }

/* One series per variant present in the group: x = seq_len, y = metric. */
static oq_status series_by_variant(oq_arena *a, const group *g, const bench_data *bd, metric_fn y,
                                   oq_plot_series **out, size_t *nout, oq_err *err)
{
    oq_plot_series *s = oq_arena_alloc(a, bd->variants.n * sizeof *s);
    if (!s) return NOMEM(err);
    size_t ns = 0;
    for (size_t v = 0; v < bd->variants.n; v++) {
        size_t cnt = 0;
        for (size_t i = 0; i < g->n; i++) cnt += !strcmp(g->rows[i].variant, bd->variants.v[v]);
        if (!cnt) continue;
        double *x = oq_arena_alloc(a, cnt * sizeof *x), *yy = oq_arena_alloc(a, cnt * sizeof *yy);
        if (!x || !yy) return NOMEM(err);
        size_t k = 0;
        for (size_t i = 0; i < g->n; i++)
            if (!strcmp(g->rows[i].variant, bd->variants.v[v])) {
                x[k] = (double)g->rows[i].seq_len;
                yy[k++] = y(&g->rows[i]);
            }
        s[ns++] = (oq_plot_series){bd->variants.v[v], cnt, x, yy, (int)v + 1};
    }
    *out = s;
    *nout = ns;
    return OQ_OK;
}

/* The lengths measured in a group, as x ticks (sorted, distinct). */
static oq_status length_ticks(oq_arena *a, const group *g, oq_plot_spec *sp, oq_err *err)
{
    double *t = oq_arena_alloc(a, g->n * sizeof *t);
    if (!t) return NOMEM(err);
    size_t n = 0;
    for (size_t i = 0; i < g->n; i++) {
        double L = (double)g->rows[i].seq_len;
        size_t k = 0;
        while (k < n && t[k] < L) k++;
        if (k < n && t[k] == L) continue;
        memmove(t + k + 1, t + k, (n - k) * sizeof *t);
        t[k] = L;
        n++;
    }
    if (n <= 10) { /* more would crowd the axis; automatic ticks then */
        sp->xticks = t;
        sp->nxticks = n;
    }
    return OQ_OK;
}

static oq_status add_if_drawable(figure_list *fl, const char *name, const oq_plot_spec *sp, oq_err *err)
{
    if (!name || !sp->title) return NOMEM(err);
    return spec_drawable(sp) ? figure_add(fl, name, sp, err) : OQ_OK;
}

static const char *stat_name(const char *stat)
{
    return !strcmp(stat, "mean_ms") ? "mean" : !strcmp(stat, "p50_ms") ? "median" : !strcmp(stat, "p90_ms") ? "p90" : "p99";
}

static oq_status bench_metric_figure(figure_list *fl, const group *g, const bench_data *bd,
                                     const char *base, const char *what, const char *ylabel,
                                     metric_fn m, oq_err *err)
{
    oq_plot_spec sp = {.kind = OQ_PLOT_LINES, .logx = 1, .logy = 1,
                       .xlabel = "sequence length L (tokens)", .ylabel = ylabel};
    oq_plot_series *s;
    oq_status st = series_by_variant(&fl->mem, g, bd, m, &s, &sp.nseries, err);
    if (st || (st = length_ticks(&fl->mem, g, &sp, err))) return st;
    sp.series = s;
    sp.title = what;
    sp.subtitle = g->shape;
    return add_if_drawable(fl, oq_arena_printf(&fl->mem, "%s%s", base, g->suffix), &sp, err);
}

/* Time of the baseline at length L in group g, NaN when not measured. */
static double baseline_at(const group *g, const char *baseline, long long L)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->rows[i].seq_len == L && !strcmp(g->rows[i].variant, baseline)) return g->rows[i].ms;
    return NAN;
}

static oq_status bench_speedup_figure(figure_list *fl, const group *g, const bench_data *bd,
                                      const char *baseline, oq_err *err)
{
    oq_plot_spec sp = {.kind = OQ_PLOT_LINES, .logx = 1, .logy = 1, .has_ref_y = 1, .ref_y = 1,
                       .xlabel = "sequence length L (tokens)"};
    oq_plot_series *s;
    size_t ns;
    oq_status st = series_by_variant(&fl->mem, g, bd, m_time, &s, &ns, err);
    if (st || (st = length_ticks(&fl->mem, g, &sp, err))) return st;
    size_t out = 0;
    for (size_t i = 0; i < ns; i++) {
        if (!strcmp(s[i].label, baseline)) continue;
        double *y = (double *)s[i].y;
        for (size_t k = 0; k < s[i].n; k++) y[k] = baseline_at(g, baseline, (long long)s[i].x[k]) / y[k];
        s[out++] = s[i];
    }
    if (!out) return OQ_OK; /* only the baseline itself in this group */
    sp.series = s;
    sp.nseries = out;
    sp.ylabel = oq_arena_printf(&fl->mem, "speed-up over %s (x)", baseline);
    sp.title = oq_arena_printf(&fl->mem, "Speed-up over %s (%s time)", baseline, stat_name(bd->stat));
    sp.subtitle = g->shape;
    if (!sp.ylabel) return NOMEM(err);
    return add_if_drawable(fl, oq_arena_printf(&fl->mem, "speedup%s", g->suffix), &sp, err);
}

static oq_status bench_error_figure(figure_list *fl, const bench_data *bd, oq_err *err)
{
    oq_plot_spec sp = {.kind = OQ_PLOT_SCATTER, .logx = 1, .logy = 1,
                       .ylabel = "max abs error vs float64 reference"};
    sp.xlabel = oq_arena_printf(&fl->mem, "time per batch (ms, %s)", stat_name(bd->stat));
    oq_plot_series *s = oq_arena_alloc(&fl->mem, bd->variants.n * sizeof *s);
    if (!s || !sp.xlabel) return NOMEM(err);
    for (size_t v = 0; v < bd->variants.n; v++) {
        double *x = oq_arena_alloc(&fl->mem, bd->n * sizeof *x), *y = oq_arena_alloc(&fl->mem, bd->n * sizeof *y);
        if (!x || !y) return NOMEM(err);
        size_t k = 0;
        for (size_t i = 0; i < bd->n; i++)
            if (!strcmp(bd->rows[i].variant, bd->variants.v[v])) {
                x[k] = bd->rows[i].ms;
                y[k++] = bd->rows[i].err;
            }
        s[v] = (oq_plot_series){bd->variants.v[v], k, x, y, (int)v + 1};
    }
    sp.series = s;
    sp.nseries = bd->variants.n;
    sp.title = "Error against runtime, all shapes";
    return add_if_drawable(fl, "error_vs_runtime", &sp, err);
}

/* Suffix and title text of a group; only what varies goes into the suffix. */
static oq_status describe_group(oq_arena *a, group *g, const bench_data *bd, oq_err *err)
{
    int vb = 0, vm = 0, vh = 0, vkv = 0, vd = 0, vt = 0;
    const bench_row *r0 = &bd->rows[0], *r = &g->rows[0];
    for (size_t i = 1; i < bd->n; i++) {
        const bench_row *o = &bd->rows[i];
        vb |= o->batch != r0->batch;
        vm |= o->masked != r0->masked;
        vh |= o->heads != r0->heads;
        vkv |= o->kv_heads != r0->kv_heads;
        vd |= o->head_dim != r0->head_dim;
        vt |= o->threads != r0->threads;
    }
    char sfx[6][32] = {"", "", "", "", "", ""}, kv[32] = "", th[32] = "";
    if (vb) snprintf(sfx[0], sizeof sfx[0], "_b%lld", r->batch);
    if (vm) snprintf(sfx[1], sizeof sfx[1], "_%s", r->masked ? "masked" : "unmasked");
    if (vh) snprintf(sfx[2], sizeof sfx[2], "_h%lld", r->heads);
    if (vkv) snprintf(sfx[3], sizeof sfx[3], "_kv%lld", r->kv_heads);
    if (vd) snprintf(sfx[4], sizeof sfx[4], "_d%lld", r->head_dim);
    if (vt) snprintf(sfx[5], sizeof sfx[5], "_t%lld", r->threads);
    if (r->kv_heads >= 0 && r->kv_heads != r->heads) snprintf(kv, sizeof kv, ", %lld kv heads", r->kv_heads);
    if (r->threads > 0) snprintf(th, sizeof th, ", %lld thread%s", r->threads, r->threads > 1 ? "s" : "");
    g->suffix = oq_arena_printf(a, "%s%s%s%s%s%s", sfx[0], sfx[1], sfx[2], sfx[3], sfx[4], sfx[5]);
    g->shape = oq_arena_printf(a, "batch %lld, %s, %lld heads%s, head dim %lld%s", r->batch,
                            r->masked ? "masked" : "unmasked", r->heads, kv, r->head_dim, th);
    return g->suffix && g->shape ? OQ_OK : NOMEM(err);
}

static oq_status bench_figures(figure_list *fl, const bench_data *bd, const char *baseline, oq_err *err)
{
    char *tlabel = oq_arena_printf(&fl->mem, "time per batch (ms, %s)", stat_name(bd->stat));
    char *ttitle = oq_arena_printf(&fl->mem, "Attention runtime (%s)", stat_name(bd->stat));
    if (!tlabel || !ttitle) return NOMEM(err);
    for (size_t i0 = 0; i0 < bd->n;) {
        size_t i1 = i0 + 1;
        while (i1 < bd->n && same_group(&bd->rows[i0], &bd->rows[i1])) i1++;
        group g = {&bd->rows[i0], i1 - i0, NULL, NULL};
        oq_status st = describe_group(&fl->mem, &g, bd, err);
        if (st || (st = bench_metric_figure(fl, &g, bd, "runtime", ttitle, tlabel, m_time, err)) ||
            (st = bench_metric_figure(fl, &g, bd, "memory", "Peak resident memory (process)",
                                      "peak RSS (MiB)", m_rss, err)) ||
            (st = bench_metric_figure(fl, &g, bd, "gpu_memory", "Peak GPU memory (process)",
                                      "peak GPU memory (MiB)", m_gpu, err)) ||
            (st = bench_speedup_figure(fl, &g, bd, baseline, err)))
            return st;
        i0 = i1;
    }
    return bench_error_figure(fl, bd, err);
}

static oq_status bench_build(figure_list *fl, oq_csv *const *tables, size_t nt,
                             const oq_plot_options *opt, const char *stat, oq_err *err)
{
    bench_data bd = {.stat = stat};
    oq_status st = bench_load(&fl->mem, &bd, tables, nt, err);
    if (!st && !bd.n)
        st = oq_err_set(err, OQ_ERR_FORMAT, "%s%s: no bench rows with status \"ok\" to plot",
                        oq_csv_name(tables[0]), nt > 1 ? " (and the other bench inputs)" : "");
    if (!st) st = bench_sort(&bd, err);
    /* Variants are known only once every row was read. */
    const char *baseline = opt->baseline ? opt->baseline : (!st && bd.variants.n ? bd.variants.v[0] : "");
    if (!st && strset_index(&bd.variants, baseline) < 0) {
        char list[512] = "";
        for (size_t i = 0; i < bd.variants.n; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", bd.variants.v[i]);
        st = oq_err_set(err, OQ_ERR_INVALID_ARG, "baseline '%s' is not a variant with status ok (variants: %s)",
                        baseline, list);
    }
    if (!st) st = bench_figures(fl, &bd, baseline, err);
    free(bd.rows);
    free(bd.variants.v);
    return st;
}

/* ---- Validate ----------------------------------------------------------- */

typedef struct val_row {
    const oq_csv *t;
    size_t row;
    const char *config, *output;
    long long batch, valid_size;
    double first, median, err;
    int has_err; /* 0: empty, the configuration was not compared */
} val_row;

typedef struct val_data {
    val_row *rows;
    size_t n;
    strset configs, outputs;
} val_data;

static oq_status val_read_row(const oq_csv *t, size_t r, const size_t *col, val_row *v, oq_err *err)
{
    oq_status st;
    v->t = t;
    v->row = r;
    v->config = oq_csv_get(t, r, col[OQ_VALIDATE_COL_CONFIG]);
    v->output = oq_csv_get(t, r, col[OQ_VALIDATE_COL_OUTPUT]);
    if (!*v->config || !*v->output) {
        char w[300];
        where(w, sizeof w, t, r);
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: column '%s': empty", w, *v->config ? "output" : "config");
    }
    if ((st = oq_csv_get_int(t, r, col[OQ_VALIDATE_COL_BATCH], &v->batch, err)) ||
        (st = oq_csv_get_int(t, r, col[OQ_VALIDATE_COL_VALID_SIZE], &v->valid_size, err)) ||
        (st = oq_csv_get_double(t, r, col[OQ_VALIDATE_COL_SECONDS_FIRST], &v->first, err)) ||
        (st = oq_csv_get_double(t, r, col[OQ_VALIDATE_COL_SECONDS_MEDIAN], &v->median, err)) ||
        (st = get_opt(t, r, col[OQ_VALIDATE_COL_MAX_ABS_ERR], &v->err, err)))
        return st;
    v->has_err = !oq_csv_is_empty(t, r, col[OQ_VALIDATE_COL_MAX_ABS_ERR]);
    return OQ_OK;
}

static oq_status val_check_duplicate(const val_data *vd, const val_row *v, oq_err *err)
{
    for (size_t i = 0; i < vd->n; i++) {
        const val_row *o = &vd->rows[i];
        if (o->batch == v->batch && !strcmp(o->config, v->config) && !strcmp(o->output, v->output)) {
            char wa[300], wb[300];
            where(wa, sizeof wa, o->t, o->row);
            where(wb, sizeof wb, v->t, v->row);
            return oq_err_set(err, OQ_ERR_FORMAT, "%s and %s: two results for config '%s', output '%s', batch %lld",
                              wa, wb, v->config, v->output, v->batch);
        }
    }
    return OQ_OK;
}

static oq_status val_load(val_data *vd, oq_csv *const *tables, size_t nt, oq_err *err)
{
    size_t total = 0;
    for (size_t i = 0; i < nt; i++) total += oq_csv_nrows(tables[i]);
    vd->rows = calloc(total ? total : 1, sizeof *vd->rows);
    if (!vd->rows) return NOMEM(err);
    for (size_t i = 0; i < nt; i++) {
        const oq_csv *t = tables[i];
        size_t col[OQ_VALIDATE_NCOLS];
        oq_status st;
        for (size_t c = 0; c < OQ_VALIDATE_NCOLS; c++)
            if ((st = oq_csv_require(t, oq_validate_csv_columns[c], &col[c], err))) return st;
        for (size_t r = 0; r < oq_csv_nrows(t); r++) {
            if (!row_ok(t, r)) continue;
            val_row *v = &vd->rows[vd->n];
            if ((st = val_read_row(t, r, col, v, err)) || (st = val_check_duplicate(vd, v, err))) return st;
            if (strset_add(&vd->configs, v->config) || strset_add(&vd->outputs, v->output)) return NOMEM(err);
            vd->n++;
        }
    }
    return OQ_OK;
}

/* Histogram of per-batch max abs error of one output, a series per config. */
static oq_status val_error_figure(figure_list *fl, const val_data *vd, const char *output, oq_err *err)
{
    oq_plot_spec sp = {.kind = OQ_PLOT_HISTOGRAM, .logx = 1, .nbins = 24,
                       .xlabel = "max abs error per batch vs reference",
                       .ylabel = "batches"};
    oq_plot_series *s = oq_arena_alloc(&fl->mem, vd->configs.n * sizeof *s);
    if (!s) return NOMEM(err);
    size_t ns = 0;
    for (size_t c = 0; c < vd->configs.n; c++) {
        double *x = oq_arena_alloc(&fl->mem, vd->n * sizeof *x);
        if (!x) return NOMEM(err);
        size_t k = 0;
        for (size_t i = 0; i < vd->n; i++) {
            const val_row *v = &vd->rows[i];
            /* An empty error means "not compared" (the reference itself): not a sample. */
            if (v->has_err && !strcmp(v->output, output) && !strcmp(v->config, vd->configs.v[c]))
                x[k++] = v->err;
        }
        if (k) s[ns++] = (oq_plot_series){vd->configs.v[c], k, x, NULL, (int)c + 1};
    }
    sp.series = s;
    sp.nseries = ns;
    sp.title = oq_arena_printf(&fl->mem, "Error distribution of output '%s'", output);
    return add_if_drawable(fl, oq_arena_printf(&fl->mem, "error_%s", file_safe(&fl->mem, output)), &sp, err);
}

/* Median time per batch against valid size, one point per batch and config. */
static oq_status val_runtime_figure(figure_list *fl, const val_data *vd, oq_err *err)
{
    oq_plot_spec sp = {.kind = OQ_PLOT_SCATTER, .xlabel = "valid size (tokens in the batch)",
                       .ylabel = "time per batch (ms, median)",
                       .title = "Runtime against valid size"};
    oq_plot_series *s = oq_arena_alloc(&fl->mem, vd->configs.n * sizeof *s);
    if (!s) return NOMEM(err);
    const char *out0 = vd->outputs.v[0]; /* timing repeats on every output row of a batch */
    for (size_t c = 0; c < vd->configs.n; c++) {
        double *x = oq_arena_alloc(&fl->mem, vd->n * sizeof *x), *y = oq_arena_alloc(&fl->mem, vd->n * sizeof *y);
        if (!x || !y) return NOMEM(err);
        size_t k = 0;
        for (size_t i = 0; i < vd->n; i++) {
            const val_row *v = &vd->rows[i];
            if (strcmp(v->config, vd->configs.v[c]) || strcmp(v->output, out0)) continue;
            x[k] = (double)v->valid_size;
            y[k++] = v->median * 1e3;
        }
        s[c] = (oq_plot_series){vd->configs.v[c], k, x, y, (int)c + 1};
    }
    sp.series = s;
    sp.nseries = vd->configs.n;
    return add_if_drawable(fl, "runtime_valid_size", &sp, err);
}

static oq_status validate_build(figure_list *fl, oq_csv *const *tables, size_t nt, oq_err *err)
{
    val_data vd = {0};
    oq_status st = val_load(&vd, tables, nt, err);
    if (!st && !vd.n)
        st = oq_err_set(err, OQ_ERR_FORMAT, "%s%s: no validate rows to plot", oq_csv_name(tables[0]),
                        nt > 1 ? " (and the other validate inputs)" : "");
    for (size_t o = 0; !st && o < vd.outputs.n; o++) st = val_error_figure(fl, &vd, vd.outputs.v[o], err);
    if (!st) st = val_runtime_figure(fl, &vd, err);
    free(vd.rows);
    free(vd.configs.v);
    free(vd.outputs.v);
    return st;
}

/* ---- Entry point -------------------------------------------------------- */

void oq_plot_files_clear(oq_plot_files *f)
{
    for (size_t i = 0; i < f->n; i++) free(f->paths[i]);
    free(f->paths);
    f->paths = NULL;
    f->n = 0;
}

static oq_status files_add(oq_plot_files *f, const char *path, oq_err *err)
{
    return oq_strv_push(&f->paths, &f->n, path) ? NOMEM(err) : OQ_OK;
}

static oq_status render_all(const figure_list *fl, const oq_plot_options *opt, unsigned formats,
                            oq_plot_files *written, oq_err *err)
{
    static const oq_plot_format fmts[] = {OQ_PLOT_PNG, OQ_PLOT_SVG};
    oq_status st = OQ_OK;
    for (size_t k = 0; !st && k < 2; k++)
        if (formats & fmts[k]) st = oq_plot_check_driver(fmts[k], err);
    if (!st) st = oq_mkdirs(opt->outdir, err);
    for (size_t i = 0; !st && i < fl->n; i++)
        for (size_t k = 0; !st && k < 2; k++) {
            if (!(formats & fmts[k])) continue;
            char *path = oq_arena_printf((oq_arena *)&fl->mem, "%s/%s.%s", opt->outdir, fl->items[i].name,
                                      oq_plot_format_ext(fmts[k]));
            if (!path) return NOMEM(err);
            st = oq_plot_render(&fl->items[i].spec, fmts[k], path, err);
            if (!st) st = files_add(written, path, err);
        }
    return st;
}

static oq_status check_options(const oq_plot_options *opt, const char *stat, oq_err *err)
{
    static const char *const stats[] = {"mean_ms", "p50_ms", "p90_ms", "p99_ms"};
    if (!opt || !opt->outdir) return oq_err_set(err, OQ_ERR_INVALID_ARG, "no output directory given");
    for (size_t i = 0; i < 4; i++)
        if (!strcmp(stat, stats[i])) return OQ_OK;
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "unknown time statistic '%s' (mean_ms, p50_ms, p90_ms, p99_ms)", stat);
}

oq_status oq_plot_summaries(oq_csv *const *tables, size_t nt, const oq_plot_options *opt,
                            oq_plot_files *written, oq_err *err)
{
    written->paths = NULL;
    written->n = 0;
    const char *stat = opt && opt->stat ? opt->stat : "p50_ms";
    oq_status st = check_options(opt, stat, err);
    if (st) return st;
    if (!nt) return oq_err_set(err, OQ_ERR_INVALID_ARG, "no summary to plot");
    oq_csv **bench = calloc(nt, sizeof *bench), **val = calloc(nt, sizeof *val);
    size_t nb = 0, nv = 0;
    if (!bench || !val) st = NOMEM(err);
    for (size_t i = 0; !st && i < nt; i++) {
        switch (oq_summary_detect(tables[i])) {
        case OQ_SUMMARY_BENCH: bench[nb++] = tables[i]; break;
        case OQ_SUMMARY_VALIDATE: val[nv++] = tables[i]; break;
        default:
            st = oq_err_set(err, OQ_ERR_FORMAT,
                            "%s: not a bench summary (columns variant, status, seq_len) nor a validate "
                            "summary (config, output, valid_size, max_abs_err)", oq_csv_name(tables[i]));
        }
    }
    figure_list fl = {0};
    if (!st && nb) st = bench_build(&fl, bench, nb, opt, stat, err);
    if (!st && nv) st = validate_build(&fl, val, nv, err);
    if (!st && !fl.n) st = oq_err_set(err, OQ_ERR_FORMAT, "%s: nothing drawable (every value empty or not positive)", oq_csv_name(tables[0]));
    if (!st) st = render_all(&fl, opt, opt->formats ? opt->formats : OQ_PLOT_PNG | OQ_PLOT_SVG, written, err);
    oq_arena_clear(&fl.mem);
    free(fl.items);
    free(bench);
    free(val);
    return st;
}
