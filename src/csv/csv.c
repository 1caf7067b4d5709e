/* CSV tables: RFC 4180 reader, JSON-records reader, atomic writer. */
#include "csv/csv-impl.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/core-impl.h"
#include "ortqual/fileio.h"
#include "status/args-impl.h"

const char *const oq_bench_csv_columns[OQ_BENCH_NCOLS] = {
    "variant",    "status",       "device",         "dtype",    "representation", "kernel",
    "kernel_requested", "shapes", "io_binding",     "masked",   "batch",          "seq_len",
    "valid_elements", "heads",    "kv_heads",       "head_dim", "threads",        "inter_op_threads",
    "warmup",     "iters",        "session_ms",     "first_run_ms", "mean_ms",    "std_ms",
    "min_ms",     "p50_ms",       "p90_ms",         "p95_ms",   "p99_ms",         "p999_ms",
    "max_ms",     "peak_rss_mb",  "vmhwm_mb",       "peak_gpu_mb", "max_abs_err", "nan_count",
    "profile_node_ms", "profile_kernel_ms", "dims", "seq_dim", "error", "baseline", "baseline_ratios"};

const char *const oq_validate_csv_columns[OQ_VALIDATE_NCOLS] = {
    "config", "output", "batch", "valid_size", "seconds_first", "seconds_median", "max_abs_err", "source"};

/* All field texts live NUL-terminated in one growing buffer (`text`); `off` holds
 * their offsets, the header's ncols first, then each row's. Offsets (not
 * pointers) so the buffer can move while it grows. */
struct oq_csv {
    char *name;
    int from_json;  /* "record N" instead of "line N" in messages */
    size_t ncols, nrows;
    oq_dynbuf text;
    size_t *off;
    size_t noff;
    size_t *lines;  /* per data row */
};

/* ---- Table building ----------------------------------------------------- */

static oq_csv *table_new(const char *name, int from_json)
{
    oq_csv *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->name = strdup(name);
    t->from_json = from_json;
    if (!t->name) {
        free(t);
        return NULL;
    }
    return t;
}

void oq_csv_free(oq_csv *t)
{
    if (!t) return;
    free(t->name);
    oq_dynbuf_clear(&t->text);
    free(t->off);
    free(t->lines);
    free(t);
}

/* Start a new field at the end of the buffer. */
static int field_begin(oq_csv *t)
{
    size_t *off = OQ_PUSH(t->off, t->noff);
    if (!off) return -1;
    *off = t->text.len;
    return 0;
}

static int field_putc(oq_csv *t, char c)
{
    return oq_dynbuf_addn(&t->text, &c, 1) ? -1 : 0;
}

static int field_puts(oq_csv *t, const char *s)
{
    if (field_begin(t)) return -1;
    for (; *s; s++)
        if (field_putc(t, *s)) return -1;
    return field_putc(t, 0);
}

static int row_end(oq_csv *t, size_t line)
{
    size_t *slot = OQ_PUSH(t->lines, t->nrows);
    if (!slot) return -1;
    *slot = line;
    return 0;
}

/* Forget the fields of the record in progress (a skipped blank line). */
static void record_drop(oq_csv *t, size_t first_off)
{
    oq_dynbuf_truncate(&t->text, t->off[first_off]);
    t->noff = first_off;
}

static oq_status check_header(const oq_csv *t, oq_err *err)
{
    for (size_t c = 0; c < t->ncols; c++) {
        const char *a = t->text.buf + t->off[c];
        if (!*a) return oq_err_set(err, OQ_ERR_FORMAT, "%s: header column %zu has no name", t->name, c + 1);
        for (size_t d = 0; d < c; d++)
            if (!strcmp(a, t->text.buf + t->off[d]))
                return oq_err_set(err, OQ_ERR_FORMAT, "%s: header names column '%s' twice", t->name, a);
    }
    return OQ_OK;
}

/* ---- CSV parsing -------------------------------------------------------- */

typedef struct cursor {
    const char *s;
    size_t n, i;
    size_t line;  /* current physical line, 1-based */
} cursor;

static int at_record_end(const cursor *c)
{
    return c->i >= c->n || c->s[c->i] == '\n' ||
           (c->s[c->i] == '\r' && c->i + 1 < c->n && c->s[c->i + 1] == '\n');
}

static oq_status parse_quoted(oq_csv *t, cursor *c, size_t field, oq_err *err)
{
    size_t start_line = c->line;
    c->i++; /* opening quote */
    for (;;) {
        if (c->i >= c->n)
            return oq_err_set(err, OQ_ERR_FORMAT, "%s:%zu: field %zu: quoted field never closed",
                              t->name, start_line, field);
        char ch = c->s[c->i++];
        if (ch == '"') {
            if (c->i < c->n && c->s[c->i] == '"') {
                c->i++;
            } else {
                break;
            }
        }
        if (ch == '\n') c->line++;
        if (field_putc(t, ch)) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", t->name);
    }
    if (!at_record_end(c) && c->s[c->i] != ',')
        return oq_err_set(err, OQ_ERR_FORMAT, "%s:%zu: field %zu: '%c' after a closing quote",
                          t->name, c->line, field, c->s[c->i]);
    return OQ_OK;
}

static oq_status parse_plain(oq_csv *t, cursor *c, size_t field, oq_err *err)
{
    while (!at_record_end(c) && c->s[c->i] != ',') {
        char ch = c->s[c->i++];
        if (ch == '"')
            return oq_err_set(err, OQ_ERR_FORMAT,
                              "%s:%zu: field %zu: quote inside an unquoted field (quote the whole field)",
                              t->name, c->line, field);
        if (field_putc(t, ch)) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", t->name);
    }
    return OQ_OK;
}

/* Parse one record starting at c->i; *nfields gets its field count. */
static oq_status parse_record(oq_csv *t, cursor *c, size_t *nfields, int *blank, oq_err *err)
{
    size_t n = 0;
    int quoted_any = 0;
    size_t start = c->i;
    for (;;) {
        if (field_begin(t)) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", t->name);
        n++;
        oq_status st;
        if (c->i < c->n && c->s[c->i] == '"') {
            quoted_any = 1;
            st = parse_quoted(t, c, n, err);
        } else {
            st = parse_plain(t, c, n, err);
        }
        if (st) return st;
        if (field_putc(t, 0)) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", t->name);
        if (at_record_end(c)) break;
        c->i++; /* comma */
    }
    *blank = n == 1 && !quoted_any && c->i == start;
    if (c->i < c->n) { /* consume LF or CRLF */
        c->i += c->s[c->i] == '\r' ? 2 : 1;
        c->line++;
    }
    *nfields = n;
    return OQ_OK;
}

static oq_status parse_all(oq_csv *t, cursor *c, oq_err *err)
{
    int have_header = 0;
    while (c->i < c->n) {
        size_t first = t->noff, line = c->line, nf = 0;
        int blank = 0;
        oq_status st = parse_record(t, c, &nf, &blank, err);
        if (st) return st;
        if (blank) {
            record_drop(t, first);
            continue;
        }
        if (!have_header) {
            t->ncols = nf;
            have_header = 1;
            if ((st = check_header(t, err))) return st;
            continue;
        }
        if (nf != t->ncols)
            return oq_err_set(err, OQ_ERR_FORMAT, "%s:%zu: %zu fields, but the header has %zu columns",
                              t->name, line, nf, t->ncols);
        if (row_end(t, line)) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", t->name);
    }
    if (!have_header) return oq_err_set(err, OQ_ERR_FORMAT, "%s: empty, expected a header row", t->name);
    return OQ_OK;
}

oq_status oq_csv_parse(const char *text, size_t n, const char *name, oq_csv **out, oq_err *err)
{
    OQ_NEED_N(err, n, text);
    OQ_NEED(err, name);
    OQ_NEED(err, out);
    *out = NULL;
    oq_csv *t = table_new(name, 0);
    if (!t) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", name);
    cursor c = {text, n, 0, 1};
    if (n >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) c.i = 3;
    oq_status st = parse_all(t, &c, err);
    if (st) {
        oq_csv_free(t);
        return st;
    }
    *out = t;
    return OQ_OK;
}

oq_status oq_csv_read(const char *path, oq_csv **out, oq_err *err)
{
    OQ_NEED(err, path);
    OQ_NEED(err, out);
    unsigned char *buf;
    size_t n;
    *out = NULL;
    oq_status st = oq_read_file(path, &buf, &n, err);
    if (st) return st;
    st = oq_csv_parse((const char *)buf, n, path, out, err);
    free(buf);
    return st;
}

/* ---- JSON records ------------------------------------------------------- */

static int is_scalar(const json_t *v)
{
    return !json_is_object(v) && !json_is_array(v);
}

static void json_scalar_text(const json_t *v, char *buf, size_t n, const char **text)
{
    *text = buf;
    if (json_is_string(v)) {
        *text = json_string_value(v);
    } else if (json_is_integer(v)) {
        snprintf(buf, n, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        oq_real_str(json_real_value(v), 15, buf, n);
    } else if (json_is_true(v)) {
        snprintf(buf, n, "1");
    } else if (json_is_false(v)) {
        snprintf(buf, n, "0");
    } else {
        buf[0] = 0;
    }
}

/* Header: every scalar-valued key of every record, in first-seen order. */
static oq_status json_header(oq_csv *t, const json_t *results, oq_err *err)
{
    size_t i;
    json_t *rec;
    json_array_foreach(results, i, rec) {
        if (!json_is_object(rec))
            return oq_err_set(err, OQ_ERR_FORMAT, "%s: results[%zu] is not an object", t->name, i);
        const char *key;
        json_t *v;
        json_object_foreach(rec, key, v) {
            size_t col;
            if (!is_scalar(v) || oq_csv_find(t, key, &col)) continue;
            if (field_puts(t, key)) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", t->name);
            t->ncols++;
        }
    }
    return OQ_OK;
}

static oq_status json_rows(oq_csv *t, const json_t *results, oq_err *err)
{
    size_t i;
    json_t *rec;
    json_array_foreach(results, i, rec) {
        for (size_t c = 0; c < t->ncols; c++) {
            json_t *v = json_object_get(rec, t->text.buf + t->off[c]);
            char num[64] = "";
            const char *text = num;
            if (v && is_scalar(v)) json_scalar_text(v, num, sizeof num, &text);
            if (field_puts(t, text)) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", t->name);
        }
        if (row_end(t, i + 1)) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", t->name);
    }
    return OQ_OK;
}

/* ---- bench rows as `ortqual bench` writes them (nested) -> summary.csv columns ---- */

static void set_num(json_t *o, const char *k, const json_t *v) { json_object_set_new(o, k, json_is_number(v) ? json_copy((json_t *)v) : json_null()); }

static void set_mib(json_t *o, const char *k, const json_t *bytes)
{
    json_object_set_new(o, k, json_is_number(bytes) ? json_real(json_number_value(bytes) / 1048576.0) : json_null());
}

/* The kernel column: "ref" for the C reference, "cpu" on CPU, else the kernel seen
 * ("FLASH_ATTENTION" -> "flash"), as summary.csv writes it. */
static json_t *kernel_column(const json_t *rec)
{
    const char *variant = json_string_value(json_object_get(rec, "variant"));
    const char *device = json_string_value(json_object_get(rec, "device"));
    const char *seen = json_string_value(json_object_get(rec, "kernel_observed"));
    if (variant && !strncmp(variant, "ref", 3) && (!variant[3] || variant[3] == ':')) return json_string("ref");
    if (device && !strcmp(device, "cpu")) return json_string("cpu");
    char buf[96];
    size_t j = 0;
    for (const char *p = seen ? seen : ""; *p && j + 1 < sizeof buf;) {
        if (!strncmp(p, "_ATTENTION", 10)) {
            p += 10;
            continue;
        }
        buf[j++] = (char)tolower((unsigned char)*p++);
    }
    buf[j] = 0;
    return json_string(buf);
}

size_t oq_csv_dims_append(char *buf, size_t n, size_t used, const char *sep, const char *name, long long value)
{
    if (used && used < n) used += (size_t)snprintf(buf + used, n - used, "%s", sep);
    for (const char *c = name; *c && used + 2 < n; c++) {
        if (strchr("\\;= ", *c)) buf[used++] = '\\';
        buf[used++] = *c;
    }
    if (used < n) used += (size_t)snprintf(buf + used, n - used, "=%lld", value);
    else if (n) buf[n - 1] = '\0';
    return used;
}

oq_status oq_csv_dims_add(oq_dynbuf *b, const char *sep, const char *name, long long value)
{
    oq_status st = b->len ? oq_dynbuf_add(b, sep) : OQ_OK;
    for (const char *c = name; !st && *c; c++) {
        if (strchr("\\;= ", *c)) st = oq_dynbuf_addc(b, '\\');
        if (!st) st = oq_dynbuf_addc(b, *c);
    }
    return st ? st : oq_dynbuf_addf(b, "=%lld", value);
}

const char *oq_csv_dims_next(const char **p, char *name, size_t n, const char **value)
{
    const char *s = *p;
    size_t j = 0;
    *value = NULL;
    for (; *s && *s != ';'; s++) {
        if (*s == '=' && !*value) {
            *value = s + 1;
            continue;
        }
        if (*s == '\\' && s[1]) s++;
        if (!*value && j + 1 < n) name[j++] = *s;
    }
    if (n) name[j < n ? j : n - 1] = '\0';
    *p = *s ? s + 1 : s;
    return s;
}

/* The dims column: {"batch": 2, "seq": 128} -> "batch=2;seq=128", as summary.csv writes it. */
static json_t *dims_column(const json_t *dims)
{
    char buf[1024] = "";
    size_t used = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)dims, k, v) used = oq_csv_dims_append(buf, sizeof buf, used, ";", k,
                                                                        (long long)json_integer_value(v));
    return json_string(buf);
}

static json_t *bench_flat(const json_t *rec)
{
    static const char *const same[] = {"variant", "status", "device", "dtype", "representation", "shapes",
                                       "io_binding", "batch", "seq_len", "heads", "kv_heads", "head_dim",
                                       "threads", "inter_op_threads", "warmup", "iters", "session_ms",
                                       "first_run_ms", "seq_dim", "error"};
    static const char *const stats[][2] = {{"mean_ms", "mean"}, {"std_ms", "std"},   {"min_ms", "min"},
                                           {"p50_ms", "p50"},   {"p90_ms", "p90"},   {"p95_ms", "p95"},
                                           {"p99_ms", "p99"},   {"p999_ms", "p99.9"}, {"max_ms", "max"}};
    json_t *o = json_object();
    for (size_t i = 0; o && i < sizeof same / sizeof *same; i++) {
        json_t *v = json_object_get(rec, same[i]);
        json_object_set_new(o, same[i], v ? json_copy(v) : json_null());
    }
    const json_t *st = json_object_get(rec, "stats_ms"), *mem = json_object_get(rec, "memory"),
                 *acc = json_object_get(rec, "accuracy");
    json_object_set_new(o, "kernel", kernel_column(rec));
    json_object_set(o, "kernel_requested", json_object_get(rec, "kernel"));
    json_object_set_new(o, "masked", json_boolean(json_is_true(json_object_get(rec, "masked"))));
    set_num(o, "valid_elements", json_object_get(rec, "valid_tokens"));
    for (size_t i = 0; i < sizeof stats / sizeof *stats; i++) set_num(o, stats[i][0], json_object_get(st, stats[i][1]));
    set_mib(o, "peak_rss_mb", json_object_get(mem, "peak_rss_bytes"));
    set_mib(o, "vmhwm_mb", json_object_get(mem, "vmhwm_bytes"));
    set_mib(o, "peak_gpu_mb", json_object_get(mem, "gpu_bytes"));
    set_num(o, "max_abs_err", json_object_get(acc, "max_abs_err"));
    set_num(o, "nan_count", json_object_get(acc, "nan_count"));
    const json_t *prof = json_object_get(rec, "profile");
    set_num(o, "profile_node_ms", json_object_get(prof, "node_ms"));
    set_num(o, "profile_kernel_ms", json_object_get(prof, "kernel_ms"));
    json_object_set_new(o, "dims", dims_column(json_object_get(rec, "dims")));
    return o;
}

/* Records with a "stats_ms" object are bench rows as written by `ortqual bench`. */
static json_t *flatten_results(const json_t *results)
{
    if (!json_is_object(json_object_get(json_array_get(results, 0), "stats_ms"))) return json_incref((json_t *)results);
    json_t *flat = json_array();
    size_t i;
    json_t *rec;
    json_array_foreach(results, i, rec) json_array_append_new(flat, json_is_object(rec) ? bench_flat(rec) : json_copy(rec));
    return flat;
}

oq_status oq_csv_from_json(const json_t *root, const char *name, oq_csv **out, oq_err *err)
{
    *out = NULL;
    json_t *results = json_is_object(root) ? flatten_results(json_object_get(root, "results")) : NULL;
    oq_status st = OQ_OK;
    oq_csv *t = NULL;
    if (!json_is_array(results)) {
        st = oq_err_set(err, OQ_ERR_FORMAT, "%s: no \"results\" array of records", name);
    } else if (!(t = table_new(name, 1))) {
        st = oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", name);
    } else if (!(st = json_header(t, results, err))) {
        st = json_rows(t, results, err);
    }
    json_decref(results);
    if (st) {
        oq_csv_free(t);
        return st;
    }
    *out = t;
    return OQ_OK;
}

oq_status oq_csv_read_json(const char *path, oq_csv **out, oq_err *err)
{
    OQ_NEED(err, path);
    OQ_NEED(err, out);
    *out = NULL;
    oq_status st = oq_check_regular_file(path, NULL, err); /* jansson would read a FIFO forever */
    if (st) return st;
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s:%d: not valid JSON: %s", path, jerr.line, jerr.text);
    st = oq_csv_from_json(root, path, out, err);
    json_decref(root);
    return st;
}

/* ---- Access ------------------------------------------------------------- */

const char *oq_csv_name(const oq_csv *t) { return t ? t->name : NULL; }
size_t oq_csv_nrows(const oq_csv *t) { return t ? t->nrows : 0; }
size_t oq_csv_ncols(const oq_csv *t) { return t ? t->ncols : 0; }

const char *oq_csv_colname(const oq_csv *t, size_t col)
{
    if (!t) return NULL;
    OQ_ASSERT(col < t->ncols);
    return t->text.buf + t->off[col];
}

size_t oq_csv_line(const oq_csv *t, size_t row)
{
    if (!t) return 0;
    OQ_ASSERT(row < t->nrows);
    return t->lines[row];
}

void oq_csv_where(const oq_csv *t, size_t row, char *buf, size_t n)
{
    snprintf(buf, n, t->from_json ? "%s: record %zu" : "%s:%zu", t->name, oq_csv_line(t, row));
}

int oq_csv_find(const oq_csv *t, const char *name, size_t *col)
{
    for (size_t c = 0; t && name && c < t->ncols; c++)
        if (!strcmp(t->text.buf + t->off[c], name)) {
            if (col) *col = c;
            return 1;
        }
    return 0;
}

oq_status oq_csv_require(const oq_csv *t, const char *name, size_t *col, oq_err *err)
{
    OQ_NEED(err, t);
    OQ_NEED(err, name);
    OQ_NEED(err, col);
    if (oq_csv_find(t, name, col)) return OQ_OK;
    return oq_err_set(err, OQ_ERR_FORMAT, "%s: no column '%s' in the header", t->name, name);
}

const char *oq_csv_get(const oq_csv *t, size_t row, size_t col)
{
    if (!t) return "";
    OQ_ASSERT(row < t->nrows && col < t->ncols);
    return t->text.buf + t->off[(row + 1) * t->ncols + col];
}

static const char *skip_blanks(const char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    return s;
}

int oq_csv_is_empty(const oq_csv *t, size_t row, size_t col)
{
    return *skip_blanks(oq_csv_get(t, row, col)) == 0;
}

static oq_status value_error(const oq_csv *t, size_t row, size_t col, const char *what, oq_err *err)
{
    const char *s = oq_csv_get(t, row, col);
    char where[4200];
    oq_csv_where(t, row, where, sizeof where);
    if (!*skip_blanks(s))
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: column '%s': empty, expected %s", where,
                          oq_csv_colname(t, col), what);
    return oq_err_set(err, OQ_ERR_FORMAT, "%s: column '%s': '%.200s' is not %s", where,
                      oq_csv_colname(t, col), s, what);
}

/* 1 when only blanks follow `end` and something was consumed. */
static int parsed_fully(const char *s, const char *end)
{
    return end != s && *skip_blanks(end) == 0;
}

oq_status oq_csv_get_double(const oq_csv *t, size_t row, size_t col, double *out, oq_err *err)
{
    OQ_NEED(err, t);
    OQ_NEED(err, out);
    const char *s = skip_blanks(oq_csv_get(t, row, col));
    char *end;
    double v = strtod(s, &end);
    if (!parsed_fully(s, end)) return value_error(t, row, col, "a number", err);
    *out = v;
    return OQ_OK;
}

oq_status oq_csv_get_int(const oq_csv *t, size_t row, size_t col, long long *out, oq_err *err)
{
    OQ_NEED(err, t);
    OQ_NEED(err, out);
    const char *s = skip_blanks(oq_csv_get(t, row, col));
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!parsed_fully(s, end) || errno == ERANGE) return value_error(t, row, col, "an integer", err);
    *out = v;
    return OQ_OK;
}

oq_status oq_csv_get_bool(const oq_csv *t, size_t row, size_t col, int *out, oq_err *err)
{
    OQ_NEED(err, t);
    OQ_NEED(err, out);
    static const char *const yes[] = {"1", "true", "yes"}, *const no[] = {"0", "false", "no"};
    const char *s = skip_blanks(oq_csv_get(t, row, col));
    size_t len = strlen(s);
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t')) len--;
    for (size_t i = 0; i < 3; i++) {
        if (strlen(yes[i]) == len && !strncasecmp(s, yes[i], len)) {
            *out = 1;
            return OQ_OK;
        }
        if (strlen(no[i]) == len && !strncasecmp(s, no[i], len)) {
            *out = 0;
            return OQ_OK;
        }
    }
    return value_error(t, row, col, "a boolean (1/0, true/false, yes/no)", err);
}

/* ---- Writing ------------------------------------------------------------ */

struct oq_csv_writer {
    oq_atomic_file af;
    size_t ncols, field;  /* fields written in the current record */
    oq_err pending;       /* first error, reported by end_row/commit */
};

static void writer_fail(oq_csv_writer *w, oq_status s, const char *what)
{
    if (w->pending.status) return;
    oq_err_set(&w->pending, s, "%s: %s", w->af.path, what);
}

static void write_field(oq_csv_writer *w, const char *s)
{
    if (!w || w->pending.status) return;
    if (w->field == w->ncols) {
        writer_fail(w, OQ_ERR_INVALID_ARG, "more fields than columns in a record");
        return;
    }
    FILE *fp = w->af.fp;
    if (w->field++) fputc(',', fp);
    size_t len = strlen(s);
    int quote = strpbrk(s, ",\"\r\n") != NULL ||
                (len && (isspace((unsigned char)s[0]) || isspace((unsigned char)s[len - 1])));
    if (!quote) {
        fputs(s, fp);
    } else {
        fputc('"', fp);
        for (; *s; s++) {
            if (*s == '"') fputc('"', fp);
            fputc(*s, fp);
        }
        fputc('"', fp);
    }
    if (ferror(fp)) writer_fail(w, OQ_ERR_IO, strerror(errno));
}

oq_status oq_csv_writer_open(oq_csv_writer **out, const char *path, const char *const *columns,
                             size_t ncols, int overwrite, oq_err *err)
{
    OQ_NEED(err, out);
    OQ_NEED(err, path);
    OQ_NEED_N(err, ncols, columns);
    *out = NULL;
    if (!ncols) return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: a CSV needs at least one column", path);
    oq_csv_writer *w = calloc(1, sizeof *w);
    if (!w) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", path);
    oq_status st = oq_atomic_open(&w->af, path, overwrite, err);
    if (st) {
        free(w);
        return st;
    }
    w->ncols = ncols;
    for (size_t c = 0; c < ncols; c++) oq_csv_write_str(w, columns[c]);
    if ((st = oq_csv_end_row(w, err))) {
        oq_csv_writer_abort(w);
        return st;
    }
    *out = w;
    return OQ_OK;
}

void oq_csv_write_str(oq_csv_writer *w, const char *s) { write_field(w, s ? s : ""); }
void oq_csv_write_empty(oq_csv_writer *w) { write_field(w, ""); }

void oq_csv_write_double(oq_csv_writer *w, double v)
{
    char buf[64];
    write_field(w, oq_real_str(v, 15, buf, sizeof buf));
}

void oq_csv_write_int(oq_csv_writer *w, long long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", v);
    write_field(w, buf);
}

oq_status oq_csv_end_row(oq_csv_writer *w, oq_err *err)
{
    OQ_NEED(err, w);
    if (!w->pending.status && w->field != w->ncols) {
        char what[96];
        snprintf(what, sizeof what, "record has %zu fields, expected %zu", w->field, w->ncols);
        writer_fail(w, OQ_ERR_INVALID_ARG, what);
    }
    if (w->pending.status) return oq_err_set(err, w->pending.status, "%s", w->pending.msg);
    fputc('\n', w->af.fp);
    w->field = 0;
    return OQ_OK;
}

oq_status oq_csv_writer_commit(oq_csv_writer *w, oq_err *err)
{
    OQ_NEED(err, w);
    if (!w->pending.status && w->field)
        writer_fail(w, OQ_ERR_INVALID_ARG, "last record not ended (oq_csv_end_row)");
    if (w->pending.status) {
        oq_status st = oq_err_set(err, w->pending.status, "%s", w->pending.msg);
        oq_csv_writer_abort(w);
        return st;
    }
    oq_status st = oq_atomic_commit(&w->af, err);
    free(w);
    return st;
}

void oq_csv_writer_abort(oq_csv_writer *w)
{
    if (!w) return;
    oq_atomic_abort(&w->af);
    free(w);
}
