/* The standard figures of bench summaries (see plot.h), from tables: summary.csv,
 * or the "results" records of summary.json read as a table. */
#include <math.h>
#include <stdarg.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv/csv-impl.h"
#include "ortqual/fileio.h"
#include "ortqual/plot.h"
#include "plot/figures-impl.h"

/* "file:line" (or "file: record N") of a row, for messages. */
static void where(char *buf, size_t n, const oq_csv *t, size_t row) { oq_csv_where(t, row, buf, n); }

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
    if (!t) return OQ_SUMMARY_UNKNOWN;
    if (oq_csv_find(t, "variant", &c) && oq_csv_find(t, "status", &c) && oq_csv_find(t, "seq_len", &c))
        return OQ_SUMMARY_BENCH;
    if (oq_csv_find(t, "config", &c) && oq_csv_find(t, "output", &c) &&
        oq_csv_find(t, "valid_size", &c) && oq_csv_find(t, "max_abs_err", &c))
        return OQ_SUMMARY_VALIDATE;
    return OQ_SUMMARY_UNKNOWN;
}

/* ---- Bench -------------------------------------------------------------- */

/* One named dimension of a `bench --model` row's point ("seq=128"). */
typedef struct row_dim {
    const char *name;
    long long value;
    int follows_x; /* varies only with the x dimension: no figure of its own */
} row_dim;

typedef struct bench_row {
    const oq_csv *t;
    size_t row;
    const char *variant;         /* series label: the variant, plus settings that vary */
    const char *name;            /* the variant column as written */
    const char *shapes, *io;     /* "" when the column is absent */
    const char *seq_dim;         /* bench --model: what seq_len is ("" otherwise) */
    const char *xdim;            /* bench --model: the dimension on the x axis; NULL for attention rows */
    row_dim *dims;               /* bench --model: every dimension of the point, a batch among them */
    size_t ndims;
    int masked;
    long long batch, seq_len;
    long long x;                 /* seq_len, or the value of xdim */
    long long heads, head_dim, kv_heads, threads; /* -1 when absent or empty (a model's rows) */
    double ms, rss, gpu, err;    /* NaN when empty */
} bench_row;

typedef struct bench_data {
    bench_row *rows;
    size_t n;
    oq_strset variants; /* series labels, first-seen order */
    const char *stat;
} bench_data;

enum { BC_VARIANT, BC_MASKED, BC_BATCH, BC_SEQ, BC_HEADS, BC_HDIM, BC_STAT, BC_RSS, BC_GPU, BC_ERR, BC_N };
/* Columns that may be missing (older files, JSON records without them). */
enum { BO_KV, BO_THREADS, BO_SHAPES, BO_IO, BO_SEQ_DIM, BO_DIMS, BO_N };

static oq_status get_opt_int(const oq_csv *t, size_t row, const size_t *col, long long *v, oq_err *err)
{
    *v = -1;
    return !col || oq_csv_is_empty(t, row, *col) ? OQ_OK : oq_csv_get_int(t, row, *col, v, err);
}

/* A batch or length that is not positive is a malformed summary, never a point to drop
 * silently (a log axis could not show it); a model's row has length 0 when it has none. */
static oq_status check_sizes(const oq_csv *t, size_t r, const bench_row *b, const char *stat, oq_err *err)
{
    int model = b->heads < 0;
    const char *bad = b->batch <= 0 ? "batch" : b->seq_len < (model ? 0 : 1) ? "seq_len" : NULL;
    int timed = isfinite(b->ms) && b->ms > 0;
    char w[4200];
    if (bad || !timed) where(w, sizeof w, t, r);
    if (bad)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: column '%s': %lld is not a positive size", w, bad,
                          b->batch <= 0 ? b->batch : b->seq_len);
    /* a time of an ok row that is NaN, infinite, negative or 0 is no measurement (bench's clock
     * counts nanoseconds, no run takes none): said, not dropped unseen or divided into 1.0x */
    if (!timed)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: column '%s': %g is not a time%s", w, stat, b->ms,
                          isfinite(b->ms) ? " (a measured time is > 0 ms)" : "");
    return OQ_OK;
}

static int is_batch_name(const char *s) { return !strcmp(s, "batch") || !strcmp(s, "batch_size"); }

static row_dim *find_dim(const bench_row *b, const char *name)
{
    for (size_t i = 0; i < b->ndims; i++)
        if (!strcmp(b->dims[i].name, name)) return &b->dims[i];
    return NULL;
}

static row_dim *batch_dim(const bench_row *b)
{
    for (size_t i = 0; i < b->ndims; i++)
        if (is_batch_name(b->dims[i].name)) return &b->dims[i];
    return NULL;
}

/* The dims column ("batch=2;seq=128", a name's '\\', ';', '=' or space escaped by '\\') into
 * b->dims, with room for two more. */
static oq_status parse_dims(oq_arena *a, const oq_csv *t, size_t r, const char *text, bench_row *b, oq_err *err)
{
    size_t n = 2 + (*text != 0);
    for (const char *p = text; *p; p++) n += *p == ';';
    if (!(b->dims = oq_arena_alloc(a, n * sizeof *b->dims))) return OQ_NOMEM(err);
    for (const char *p = text; *p;) {
        const char *item = p, *eq;
        char name[256];
        const char *end = oq_csv_dims_next(&p, name, sizeof name, &eq);
        char *stop = NULL;
        long long v = eq && *name ? strtoll(eq, &stop, 10) : 0;
        if (v <= 0 || stop != end) {
            char w[4200];
            where(w, sizeof w, t, r);
            return oq_err_set(err, OQ_ERR_FORMAT, "%s: column 'dims': '%.*s' is not NAME=SIZE", w, (int)(end - item), item);
        }
        row_dim *d = &b->dims[b->ndims++];
        if (!(d->name = oq_arena_printf(a, "%s", name))) return OQ_NOMEM(err);
        d->value = v;
    }
    return OQ_OK;
}

/* A model's row keeps its batch among its dimensions ("batch" when the model leaves it unnamed);
 * a file without the dims column gives its batch and seq_len. */
static oq_status model_dims(oq_arena *a, const oq_csv *t, size_t r, const size_t *col, bench_row *b, oq_err *err)
{
    const char *text = col ? oq_csv_get(t, r, *col) : "";
    oq_status st = parse_dims(a, t, r, text, b, err);
    if (st) return st;
    if (!*text && b->seq_len > 0) b->dims[b->ndims++] = (row_dim){*b->seq_dim ? b->seq_dim : "seq_len", b->seq_len};
    if (batch_dim(b)) return OQ_OK;
    memmove(b->dims + 1, b->dims, b->ndims * sizeof *b->dims);
    b->dims[0] = (row_dim){"batch", b->batch};
    b->ndims++;
    return OQ_OK;
}

/* An input by the folder its summary is in ("runA"), else its file name; "" when unnamed. */
static void input_label(const oq_csv *t, char *buf, size_t n)
{
    const char *name = oq_csv_name(t), *end = name ? strrchr(name, '/') : NULL, *start = end;
    while (start && start > name && start[-1] != '/') start--;
    if (!end || start == end) start = name, end = name ? name + strlen(name) : NULL; /* no folder: the file */
    snprintf(buf, n, "%.*s", start ? (int)(end - start) : 0, start ? start : "");
}

/* With several inputs, a `bench --model` row ("cpu:model:fp32" for any model) is named after the
 * folder its summary is in ("runA: cpu:model:fp32"): two models' runs plot side by side instead of
 * clashing as two results of one variant. */
static oq_status model_label(oq_arena *a, const oq_csv *t, bench_row *b, oq_err *err)
{
    char in[256], buf[512];
    input_label(t, in, sizeof in);
    if (!*in) return OQ_OK;
    snprintf(buf, sizeof buf, "%s: %s", in, b->variant);
    char *label = oq_arena_strdup(a, buf);
    if (!label) return OQ_NOMEM(err);
    b->variant = label;
    return OQ_OK;
}

/* Text of a row is copied into the figures' arena: the figures outlive the table. */
static oq_status bench_read_row(oq_arena *a, const oq_csv *t, size_t r, const size_t *col, const size_t *const *opt,
                                bench_row *b, oq_err *err)
{
    oq_status st;
    b->t = t;
    b->row = r;
    b->variant = oq_arena_strdup(a, oq_csv_get(t, r, col[BC_VARIANT]));
    if (!b->variant) return OQ_NOMEM(err);
    if (!*b->variant) {
        char w[4200];
        where(w, sizeof w, t, r);
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: column 'variant': empty", w);
    }
    b->shapes = oq_arena_strdup(a, opt[BO_SHAPES] ? oq_csv_get(t, r, *opt[BO_SHAPES]) : "");
    b->io = oq_arena_strdup(a, opt[BO_IO] ? oq_csv_get(t, r, *opt[BO_IO]) : "");
    b->seq_dim = oq_arena_strdup(a, opt[BO_SEQ_DIM] ? oq_csv_get(t, r, *opt[BO_SEQ_DIM]) : "");
    if (!b->shapes || !b->io || !b->seq_dim) return OQ_NOMEM(err);
    if ((st = oq_csv_get_bool(t, r, col[BC_MASKED], &b->masked, err)) ||
        (st = oq_csv_get_int(t, r, col[BC_BATCH], &b->batch, err)) ||
        (st = oq_csv_get_int(t, r, col[BC_SEQ], &b->seq_len, err)) ||
        (st = get_opt_int(t, r, &col[BC_HEADS], &b->heads, err)) ||
        (st = get_opt_int(t, r, &col[BC_HDIM], &b->head_dim, err)) ||
        (st = get_opt_int(t, r, opt[BO_KV], &b->kv_heads, err)) ||
        (st = get_opt_int(t, r, opt[BO_THREADS], &b->threads, err)) ||
        (st = oq_csv_get_double(t, r, col[BC_STAT], &b->ms, err)) ||
        (st = get_opt(t, r, col[BC_RSS], &b->rss, err)) ||
        (st = get_opt(t, r, col[BC_GPU], &b->gpu, err)) ||
        (st = get_opt(t, r, col[BC_ERR], &b->err, err)) ||
        (st = check_sizes(t, r, b, oq_csv_colname(t, col[BC_STAT]), err)))
        return st;
    b->x = b->seq_len;
    return b->heads < 0 ? model_dims(a, t, r, opt[BO_DIMS], b, err) : OQ_OK;
}

/* A dimension varies when two rows that have it give it different values. */
static int dim_varies(const bench_row *rows, size_t n, const char *name)
{
    const row_dim *first = NULL;
    for (size_t i = 0; i < n; i++) {
        const row_dim *d = find_dim(&rows[i], name);
        if (d && first && d->value != first->value) return 1;
        if (d && !first) first = d;
    }
    return 0;
}

/* The x axis of one summary's model rows is the dimension its sweep varied (a fixed --dim seq
 * beside --sweep batch is no x axis): bench's seq_dim when it varies, else the last other one
 * that does, else the batch; the others then make a figure per value. A summary that varied
 * none (one point) keeps bench's seq_dim, else its batch. */
static const char *model_xdim(const bench_row *rows, size_t n, const bench_row *r0)
{
    const char *seq = *r0->seq_dim && find_dim(r0, r0->seq_dim) ? r0->seq_dim : NULL;
    const char *batch = batch_dim(r0)->name, *other = NULL;
    if (seq && dim_varies(rows, n, seq)) return seq;
    for (size_t i = 0; i < r0->ndims; i++)
        if (!is_batch_name(r0->dims[i].name) && dim_varies(rows, n, r0->dims[i].name)) other = r0->dims[i].name;
    if (other) return other;
    return dim_varies(rows, n, batch) || !seq ? batch : seq;
}

/* A dimension that varies, but never between rows of one x, is x under another name
 * (--shape features=2,n,8 --sweep n=8,16 sets the model's seq to n too). */
static int follows(const bench_row *rows, size_t n, const char *xdim, const char *name)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++) {
            const row_dim *xi = find_dim(&rows[i], xdim), *xj = find_dim(&rows[j], xdim);
            const row_dim *di = find_dim(&rows[i], name), *dj = find_dim(&rows[j], name);
            if (xi && xj && di && dj && xi->value == xj->value && di->value != dj->value) return 0;
        }
    return dim_varies(rows, n, name);
}

/* Rows [0, n) are one summary's: their model rows get x from the dimension it swept. */
static void model_axes(bench_row *rows, size_t n)
{
    size_t i0 = 0;
    while (i0 < n && !rows[i0].dims) i0++;
    if (i0 == n) return;
    const bench_row *r0 = &rows[i0];
    const char *xdim = model_xdim(rows, n, r0);
    for (size_t k = 0; k < r0->ndims; k++) {
        const char *name = r0->dims[k].name;
        if (!strcmp(name, xdim) || !follows(rows, n, xdim, name)) continue;
        for (size_t i = i0; i < n; i++) {
            row_dim *d = find_dim(&rows[i], name);
            if (d) d->follows_x = 1;
        }
    }
    for (size_t i = i0; i < n; i++) {
        bench_row *b = &rows[i];
        if (!b->dims) continue;
        const row_dim *d = find_dim(b, xdim);
        if (!d) d = batch_dim(b); /* a row of another point's dimensions (files pasted together) */
        b->xdim = d->name;
        b->x = d->value;
    }
}

/* A sweep over export shapes or I/O binding has one row per setting for the
 * same variant and shape: the setting then becomes part of the series label.
 * Rows without the setting (the C reference exports nothing) keep their name. */
static oq_status bench_labels(oq_arena *a, bench_data *bd, oq_err *err)
{
    int vary_shapes = 0, vary_io = 0;
    const char *seen_shapes = "", *seen_io = "";
    for (size_t i = 0; i < bd->n; i++) {
        const bench_row *r = &bd->rows[i];
        vary_shapes |= *r->shapes && *seen_shapes && strcmp(r->shapes, seen_shapes) != 0;
        vary_io |= *r->io && *seen_io && strcmp(r->io, seen_io) != 0;
        if (*r->shapes) seen_shapes = r->shapes;
        if (*r->io) seen_io = r->io;
    }
    for (size_t i = 0; i < bd->n; i++) {
        bench_row *b = &bd->rows[i];
        b->name = b->variant;
        char shapes[96] = "", io[96] = "";
        if (vary_shapes && *b->shapes) snprintf(shapes, sizeof shapes, "%s shapes", b->shapes);
        if (vary_io && *b->io) snprintf(io, sizeof io, "%s I/O", b->io);
        if (*shapes || *io)
            b->variant = oq_arena_printf(a, "%s (%s%s%s)", b->variant, shapes, *shapes && *io ? ", " : "", io);
        if (!b->variant) return OQ_NOMEM(err);
        if (oq_strset_add(&bd->variants, b->variant)) return OQ_NOMEM(err);
    }
    return OQ_OK;
}

static oq_status bench_load(oq_arena *a, bench_data *bd, oq_csv *const *tables, size_t nt, oq_err *err)
{
    const char *names[BC_N] = {"variant", "masked", "batch", "seq_len", "heads", "head_dim",
                               bd->stat, "peak_rss_mb", "peak_gpu_mb", "max_abs_err"};
    static const char *const opt_names[BO_N] = {"kv_heads", "threads", "shapes", "io_binding", "seq_dim", "dims"};
    size_t total = 0;
    for (size_t i = 0; i < nt; i++) total += oq_csv_nrows(tables[i]);
    bd->rows = calloc(total ? total : 1, sizeof *bd->rows);
    if (!bd->rows) return OQ_NOMEM(err);
    for (size_t i = 0; i < nt; i++) {
        const oq_csv *t = tables[i];
        size_t col[BC_N], ocol[BO_N];
        const size_t *opt[BO_N];
        oq_status st;
        for (size_t c = 0; c < BC_N; c++)
            if ((st = oq_csv_require(t, names[c], &col[c], err))) return st;
        for (size_t c = 0; c < BO_N; c++) opt[c] = oq_csv_find(t, opt_names[c], &ocol[c]) ? &ocol[c] : NULL;
        size_t n0 = bd->n;
        for (size_t r = 0; r < oq_csv_nrows(t); r++) {
            if (!row_ok(t, r)) continue;
            oq_status rs = bench_read_row(a, t, r, col, opt, &bd->rows[bd->n], err);
            if (!rs && nt > 1 && strstr(bd->rows[bd->n].variant, ":model:"))
                rs = model_label(a, t, &bd->rows[bd->n], err);
            if (rs) return rs;
            bd->n++;
        }
        model_axes(&bd->rows[n0], bd->n - n0);
    }
    return bench_labels(a, bd, err);
}

static int cmp_ll(long long a, long long b) { return (a > b) - (a < b); }

/* Model rows: the x dimension, then every other dimension in order (a figure per value). */
static int cmp_dims(const bench_row *a, const bench_row *b)
{
    int c = strcmp(a->xdim, b->xdim);
    for (size_t i = 0, j = 0; !c; i++, j++) {
        while (i < a->ndims && (a->dims[i].name == a->xdim || a->dims[i].follows_x)) i++;
        while (j < b->ndims && (b->dims[j].name == b->xdim || b->dims[j].follows_x)) j++;
        if (i == a->ndims || j == b->ndims) return cmp_ll(i < a->ndims, j < b->ndims);
        if (!(c = strcmp(a->dims[i].name, b->dims[j].name))) c = cmp_ll(a->dims[i].value, b->dims[j].value);
    }
    return c;
}

/* Rows of one group share everything that shapes the problem except x (L, or the dimension a
 * model's sweep varied). */
static int cmp_group(const bench_row *a, const bench_row *b)
{
    int c;
    if ((c = cmp_ll(!a->xdim, !b->xdim)) || (c = a->xdim ? cmp_dims(a, b) : cmp_ll(a->batch, b->batch)) ||
        (c = cmp_ll(a->masked, b->masked)) ||
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
    return cmp_ll(a->r->x, b->r->x);
}

static oq_status bench_sort(bench_data *bd, oq_err *err)
{
    sort_item *items = malloc((bd->n ? bd->n : 1) * sizeof *items);
    bench_row *sorted = malloc((bd->n ? bd->n : 1) * sizeof *sorted);
    if (!items || !sorted) {
        free(items);
        free(sorted);
        return OQ_NOMEM(err);
    }
    for (size_t i = 0; i < bd->n; i++) items[i] = (sort_item){&bd->rows[i], oq_strset_index(&bd->variants, bd->rows[i].variant)};
    qsort(items, bd->n, sizeof *items, cmp_rows);
    for (size_t i = 0; i < bd->n; i++) sorted[i] = *items[i].r;
    free(items);
    free(bd->rows);
    bd->rows = sorted;
    /* After sorting, a duplicate (same group, variant and length) sits next to its twin. */
    for (size_t i = 1; i < bd->n; i++) {
        const bench_row *a = &bd->rows[i - 1], *b = &bd->rows[i];
        if (same_group(a, b) && !strcmp(a->variant, b->variant) && a->x == b->x) {
            char wa[4200], wb[4200];
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
    const char *xlabel; /* "sequence length L (tokens)", or a model's swept dimension */
} group;

typedef double (*metric_fn)(const bench_row *r);
static double m_time(const bench_row *r) { return r->ms; }
static double m_rss(const bench_row *r) { return r->rss; }
static double m_gpu(const bench_row *r) { return r->gpu; }

/* One series per variant present in the group: x = the row's x, y = metric. */
static oq_status series_by_variant(oq_arena *a, const group *g, const bench_data *bd, metric_fn y,
                                   oq_plot_series **out, size_t *nout, oq_err *err)
{
    oq_plot_series *s = oq_arena_alloc(a, bd->variants.n * sizeof *s);
    if (!s) return OQ_NOMEM(err);
    size_t ns = 0;
    for (size_t v = 0; v < bd->variants.n; v++) {
        size_t cnt = 0;
        for (size_t i = 0; i < g->n; i++) cnt += !strcmp(g->rows[i].variant, bd->variants.v[v]);
        if (!cnt) continue;
        double *x = oq_arena_alloc(a, cnt * sizeof *x), *yy = oq_arena_alloc(a, cnt * sizeof *yy);
        if (!x || !yy) return OQ_NOMEM(err);
        size_t k = 0;
        for (size_t i = 0; i < g->n; i++)
            if (!strcmp(g->rows[i].variant, bd->variants.v[v])) {
                x[k] = (double)g->rows[i].x;
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
    if (!t) return OQ_NOMEM(err);
    size_t n = 0;
    for (size_t i = 0; i < g->n; i++) {
        double L = (double)g->rows[i].x;
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

static oq_status add_if_drawable(oq_figures *fl, oq_figure_kind kind, const char *name, const oq_plot_spec *sp,
                                 oq_err *err)
{
    if (!name || !sp->title) return OQ_NOMEM(err);
    return oq_figures_add(fl, kind, NULL, name, sp, err);
}

/* The statistic as titles name it: "p999_ms" is "p99.9". */
static const char *stat_name(const char *stat)
{
    static const char *const cols[][2] = {{"mean_ms", "mean"}, {"p50_ms", "median"}, {"p90_ms", "p90"}, {"p95_ms", "p95"},
                                          {"p99_ms", "p99"},   {"p999_ms", "p99.9"}, {"max_ms", "max"}};
    for (size_t i = 0; i < sizeof cols / sizeof *cols; i++)
        if (!strcmp(stat, cols[i][0])) return cols[i][1];
    return stat; /* checked before (check_stat): not reached */
}

static oq_status bench_metric_figure(oq_figures *fl, const group *g, const bench_data *bd,
                                     oq_figure_kind kind, const char *base, const char *what,
                                     const char *ylabel, metric_fn m, oq_err *err)
{
    oq_plot_spec sp = {.kind = OQ_PLOT_LINES, .logx = 1, .logy = 1, .xlabel = g->xlabel, .ylabel = ylabel};
    oq_plot_series *s = NULL; /* set on success; -O3 cannot see that */
    oq_status st = series_by_variant(&fl->mem, g, bd, m, &s, &sp.nseries, err);
    if (st || (st = length_ticks(&fl->mem, g, &sp, err))) return st;
    sp.series = s;
    sp.title = what;
    sp.subtitle = g->shape;
    return add_if_drawable(fl, kind, oq_arena_printf(&fl->mem, "%s%s", base, g->suffix), &sp, err);
}

/* Time of the baseline at x in group g, NaN when not measured. */
static double baseline_at(const group *g, const char *baseline, long long x)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->rows[i].x == x && !strcmp(g->rows[i].variant, baseline)) return g->rows[i].ms;
    return NAN;
}

static oq_status bench_speedup_figure(oq_figures *fl, const group *g, const bench_data *bd,
                                      const char *baseline, oq_err *err)
{
    oq_plot_spec sp = {.kind = OQ_PLOT_LINES, .logx = 1, .logy = 1, .has_ref_y = 1, .ref_y = 1,
                       .xlabel = g->xlabel};
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
    if (!sp.ylabel) return OQ_NOMEM(err);
    return add_if_drawable(fl, OQ_FIGURE_SPEEDUP, oq_arena_printf(&fl->mem, "speedup%s", g->suffix), &sp, err);
}

/* Batch size and masking change the cost of a row as much as the variant: in the
 * error/runtime scatter the colour is the variant and the marker the batch and mask
 * (only what varies is told apart). Keys: index of (batch, masked) in first-seen order. */
typedef struct load_keys {
    long long batch[16];
    int masked[16];
    size_t n;
    int vary_batch, vary_masked;
} load_keys;

static size_t load_key(load_keys *k, const bench_row *r)
{
    for (size_t i = 0; i < k->n; i++)
        if (k->batch[i] == r->batch && k->masked[i] == r->masked) return i;
    if (k->n == 16) return 15; /* more would not be told apart by markers anyway */
    k->batch[k->n] = r->batch;
    k->masked[k->n] = r->masked;
    return k->n++;
}

/* "batch 4, masked", only the parts that vary. */
static const char *key_label(oq_arena *a, const load_keys *k, size_t i)
{
    char b[32] = "", m[16] = "";
    if (k->vary_batch) snprintf(b, sizeof b, "batch %lld", k->batch[i]);
    if (k->vary_masked) snprintf(m, sizeof m, "%s", k->masked[i] ? "masked" : "unmasked");
    return oq_arena_printf(a, "%s%s%s", b, *b && *m ? ", " : "", m);
}

static oq_status error_legend(oq_figures *fl, const bench_data *bd, const load_keys *k, oq_plot_spec *sp,
                              oq_err *err)
{
    size_t n = bd->variants.n + (k->n > 1 ? k->n : 0);
    oq_plot_legend *lg = oq_arena_alloc(&fl->mem, n * sizeof *lg);
    if (!lg) return OQ_NOMEM(err);
    size_t m = 0;
    for (size_t v = 0; v < bd->variants.n; v++) {
        int compared = 0;
        for (size_t i = 0; i < bd->n; i++)
            compared |= !strcmp(bd->rows[i].variant, bd->variants.v[v]) && isfinite(bd->rows[i].err);
        if (compared) lg[m++] = (oq_plot_legend){bd->variants.v[v], OQ_LEGEND_BOX, (int)v + 1, 0};
    }
    for (size_t i = 0; k->n > 1 && i < k->n; i++) {
        const char *label = key_label(&fl->mem, k, i);
        if (!label) return OQ_NOMEM(err);
        lg[m++] = (oq_plot_legend){label, OQ_LEGEND_MARKER, 0, (int)i + 1};
    }
    sp->legend = lg;
    sp->nlegend = m;
    return OQ_OK;
}

static oq_status bench_error_figure(oq_figures *fl, const bench_data *bd, oq_err *err)
{
    oq_plot_spec sp = {.kind = OQ_PLOT_SCATTER, .logx = 1, .logy = 1,
                       .ylabel = "max abs error vs float64 reference"};
    sp.xlabel = oq_arena_printf(&fl->mem, "time per batch (ms, %s)", stat_name(bd->stat));
    load_keys k = {0};
    for (size_t i = 0; i < bd->n; i++) {
        load_key(&k, &bd->rows[i]);
        k.vary_batch |= bd->rows[i].batch != bd->rows[0].batch;
        k.vary_masked |= bd->rows[i].masked != bd->rows[0].masked;
    }
    size_t ns = bd->variants.n * k.n;
    oq_plot_series *s = oq_arena_alloc(&fl->mem, ns * sizeof *s);
    if (!s || !sp.xlabel) return OQ_NOMEM(err);
    size_t out = 0;
    for (size_t v = 0; v < bd->variants.n; v++)
        for (size_t g = 0; g < k.n; g++) {
            double *x = oq_arena_alloc(&fl->mem, bd->n * sizeof *x), *y = oq_arena_alloc(&fl->mem, bd->n * sizeof *y);
            if (!x || !y) return OQ_NOMEM(err);
            size_t cnt = 0, compared = 0;
            for (size_t i = 0; i < bd->n; i++)
                if (!strcmp(bd->rows[i].variant, bd->variants.v[v]) && load_key(&k, &bd->rows[i]) == g) {
                    x[cnt] = bd->rows[i].ms;
                    compared += isfinite(bd->rows[i].err);
                    y[cnt++] = bd->rows[i].err;
                }
            if (!compared) continue; /* the reference itself, or --no-reference */
            const char *label = k.n > 1 ? oq_arena_printf(&fl->mem, "%s, %s", bd->variants.v[v],
                                                          key_label(&fl->mem, &k, g))
                                        : bd->variants.v[v];
            if (!label) return OQ_NOMEM(err);
            s[out++] = (oq_plot_series){label, cnt, x, y, (int)v + 1, .marker = (int)g + 1};
        }
    sp.series = s;
    sp.nseries = out;
    sp.title = "Error against runtime, all shapes";
    oq_status st = error_legend(fl, bd, &k, &sp, err);
    return st ? st : add_if_drawable(fl, OQ_FIGURE_ERROR_VS_RUNTIME, "error_vs_runtime", &sp, err);
}

/* A model group's dimensions other than x: "_b4_n8" (those that vary over all rows) and
 * "batch 4, n 8, " (all of them), so a figure per value says which it is. */
static oq_status model_dims_text(oq_arena *a, const bench_data *bd, const bench_row *r, const char **sfx,
                                 const char **text, oq_err *err)
{
    char s[256] = "", t[512] = "";
    for (size_t i = 0; i < r->ndims; i++) {
        const row_dim *d = &r->dims[i];
        if (d->name == r->xdim || d->follows_x) continue;
        int batch = is_batch_name(d->name);
        const char *safe = batch ? "b" : oq_file_safe(a, d->name);
        if (!safe) return OQ_NOMEM(err);
        if (dim_varies(bd->rows, bd->n, d->name))
            snprintf(s + strlen(s), sizeof s - strlen(s), "_%s%lld", safe, d->value);
        snprintf(t + strlen(t), sizeof t - strlen(t), "%s %lld, ", batch ? "batch" : d->name, d->value);
    }
    *sfx = oq_arena_strdup(a, s);
    *text = oq_arena_strdup(a, t);
    return *sfx && *text ? OQ_OK : OQ_NOMEM(err);
}

static const char *xlabel(oq_arena *a, const bench_row *r)
{
    if (!r->xdim) return "sequence length L (tokens)";
    if (is_batch_name(r->xdim)) return oq_arena_printf(a, "batch size (dimension '%s')", r->xdim);
    return oq_arena_printf(a, "dimension '%s'", r->xdim);
}

/* With several inputs, a group drawn from one of them names it in its subtitle: two inputs'
 * groups whose file names come out alike (two --model sweeps over other dimensions: runtime and
 * runtime_2) had the same titles, told apart by the x axis alone. */
static oq_status from_input(oq_arena *a, group *g, const bench_data *bd, oq_err *err)
{
    const oq_csv *t = g->rows[0].t;
    int several = 0;
    for (size_t i = 0; i < bd->n; i++) several |= bd->rows[i].t != t;
    for (size_t i = 1; i < g->n; i++)
        if (g->rows[i].t != t) return OQ_OK;
    char in[256];
    input_label(t, in, sizeof in);
    if (!several || !*in) return OQ_OK;
    g->shape = oq_arena_printf(a, "%s; from %s", g->shape, in);
    return g->shape ? OQ_OK : OQ_NOMEM(err);
}

/* Suffix and title text of a group; only what varies goes into the suffix. */
static oq_status describe_group(oq_arena *a, group *g, const bench_data *bd, oq_err *err)
{
    int vb = 0, vm = 0, vh = 0, vkv = 0, vd = 0, vt = 0;
    const bench_row *r0 = &bd->rows[0], *r = &g->rows[0], *a0 = NULL;
    for (size_t i = 0; i < bd->n; i++) {
        const bench_row *o = &bd->rows[i];
        vm |= o->masked != r0->masked;
        vt |= o->threads != r0->threads;
        /* the attention shape, among attention rows and for them alone: a model's rows have none
         * (-1), and beside an attention sweep its files were named "runtime_masked_h-1_kv-1_d-1"
         * (a model's batch is one of its dimensions, named as such) */
        if (o->xdim || r->xdim) continue;
        if (!a0) a0 = o;
        vb |= o->batch != a0->batch;
        vh |= o->heads != a0->heads;
        vkv |= o->kv_heads != a0->kv_heads;
        vd |= o->head_dim != a0->head_dim;
    }
    char sfx[6][32] = {"", "", "", "", "", ""}, kv[32] = "", th[32] = "";
    const char *dsfx = "", *dims = "";
    oq_status st = r->xdim ? model_dims_text(a, bd, r, &dsfx, &dims, err) : OQ_OK;
    if (st) return st;
    if (vb) snprintf(sfx[0], sizeof sfx[0], "_b%lld", r->batch);
    if (vm) snprintf(sfx[1], sizeof sfx[1], "_%s", r->masked ? "masked" : "unmasked");
    if (vh) snprintf(sfx[2], sizeof sfx[2], "_h%lld", r->heads);
    if (vkv) snprintf(sfx[3], sizeof sfx[3], "_kv%lld", r->kv_heads);
    if (vd) snprintf(sfx[4], sizeof sfx[4], "_d%lld", r->head_dim);
    if (vt) snprintf(sfx[5], sizeof sfx[5], "_t%lld", r->threads);
    if (r->kv_heads >= 0 && r->kv_heads != r->heads) snprintf(kv, sizeof kv, ", %lld kv heads", r->kv_heads);
    if (r->threads > 0) snprintf(th, sizeof th, ", %lld thread%s", r->threads, r->threads > 1 ? "s" : "");
    g->suffix = oq_arena_printf(a, "%s%s%s%s%s%s%s", sfx[0], dsfx, sfx[1], sfx[2], sfx[3], sfx[4], sfx[5]);
    if (r->xdim) /* a model's rows: no attention shape */
        g->shape = oq_arena_printf(a, "%s%s%s", dims, r->masked ? "masked" : "unmasked", th);
    else
        g->shape = oq_arena_printf(a, "batch %lld, %s, %lld heads%s, head dim %lld%s", r->batch,
                                   r->masked ? "masked" : "unmasked", r->heads, kv, r->head_dim, th);
    g->xlabel = xlabel(a, r);
    return g->suffix && g->shape && g->xlabel ? from_input(a, g, bd, err) : OQ_NOMEM(err);
}

static oq_status bench_figures(oq_figures *fl, const bench_data *bd, const char *baseline, oq_err *err)
{
    char *tlabel = oq_arena_printf(&fl->mem, "time per batch (ms, %s)", stat_name(bd->stat));
    char *ttitle = oq_arena_printf(&fl->mem, "Attention runtime (%s)", stat_name(bd->stat));
    char *mtitle = oq_arena_printf(&fl->mem, "Model runtime (%s)", stat_name(bd->stat));
    if (!tlabel || !ttitle || !mtitle) return OQ_NOMEM(err);
    for (size_t i0 = 0; i0 < bd->n;) {
        size_t i1 = i0 + 1;
        while (i1 < bd->n && same_group(&bd->rows[i0], &bd->rows[i1])) i1++;
        group g = {&bd->rows[i0], i1 - i0, NULL, NULL, NULL};
        oq_status st = describe_group(&fl->mem, &g, bd, err);
        if (st || (st = bench_metric_figure(fl, &g, bd, OQ_FIGURE_RUNTIME, "runtime", g.rows[0].xdim ? mtitle : ttitle, tlabel,
                                            m_time, err)) ||
            (st = bench_metric_figure(fl, &g, bd, OQ_FIGURE_MEMORY, "memory", "Peak resident memory (process)",
                                      "peak RSS (MiB)", m_rss, err)) ||
            (st = bench_metric_figure(fl, &g, bd, OQ_FIGURE_GPU_MEMORY, "gpu_memory", "Peak GPU memory (process)",
                                      "peak GPU memory (MiB)", m_gpu, err)) ||
            (st = bench_speedup_figure(fl, &g, bd, baseline, err)))
            return st;
        i0 = i1;
    }
    return bench_error_figure(fl, bd, err);
}

/* The series a --baseline names: a label as drawn, else the variant column
 * ("ref:sdpa:fp64"), else its runtime ("ref") when that names one variant. */
static oq_status resolve_baseline(const bench_data *bd, const char *want, const char **out, oq_err *err)
{
    if (oq_strset_index(&bd->variants, want) >= 0) {
        *out = want;
        return OQ_OK;
    }
    const char *found = NULL;
    size_t wl = strlen(want);
    int many = 0;
    for (int pass = 0; pass < 2 && !found; pass++)
        for (size_t i = 0; i < bd->n; i++) {
            const char *name = bd->rows[i].name;
            int hit = pass == 0 ? !strcmp(name, want) : !strncmp(name, want, wl) && name[wl] == ':';
            if (!hit) continue;
            many |= found && strcmp(found, bd->rows[i].variant);
            found = bd->rows[i].variant;
        }
    char list[512] = "";
    for (size_t i = 0; i < bd->variants.n; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s'%s'", i ? ", " : "", bd->variants.v[i]);
    if (!found)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "baseline '%s' is not a variant with status ok (variants: %s)",
                          want, list);
    if (many)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "baseline '%s' names several series; give one of: %s", want, list);
    *out = found;
    return OQ_OK;
}

oq_status oq_figures_bench(oq_figures *fl, oq_csv *const *tables, size_t nt, const oq_plot_options *opt,
                           const char *stat, oq_err *err)
{
    bench_data bd = {.stat = stat};
    oq_status st = bench_load(&fl->mem, &bd, tables, nt, err);
    /* every variant skipped, unsupported or out of memory: nothing was measured, as a validate
     * run with nothing compared, so no figure and no error */
    fl->no_ok_rows = !st && !bd.n;
    if (!st && bd.n) st = bench_sort(&bd, err);
    /* Variants are known only once every row was read. */
    const char *baseline = NULL;
    if (!st && bd.n) st = resolve_baseline(&bd, opt && opt->baseline ? opt->baseline : bd.variants.v[0], &baseline, err);
    if (!st && bd.n) st = bench_figures(fl, &bd, baseline, err);
    free(bd.rows);
    free(bd.variants.v);
    return st;
}
