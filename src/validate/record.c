/* A batch record as one line of JSON, written as text: a worker writes one per batch, and
 * building it as jansson values to dump them again cost ~50 µs of a small batch's ~0.5 ms.
 * The line is the one place a record's keys are written (docs/summary-schema.md): what
 * summary.json holds as it is (metrics and times to 10 significant digits, tolerances exact,
 * in the form oq_json_dumps writes, ", " and ": " between members: a line parsed and dumped
 * again is the same text), and what oq_batch_record_json parses when a record is wanted as a
 * value. */
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare-impl.h"
#include "core/core-impl.h"
#include "validate/validate-impl.h"

static const char *const padding_rules[] = {"report", "zero", "as-reference"};

/* The text so far; ok cleared by the first append that fails (out of memory). */
typedef struct line {
    oq_dynbuf b;
    int ok;
} line;

static void add(line *l, const char *s) { l->ok = oq_dynbuf_add(&l->b, s) == OQ_OK && l->ok; }

__attribute__((format(printf, 2, 3))) static void addf(line *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    l->ok = oq_dynbuf_vaddf(&l->b, fmt, ap) == OQ_OK && l->ok;
    va_end(ap);
}

/* A finite measurement (a metric, a time) to 10 significant digits, the bulk of a large run's
 * summary, in oq_json_dumps's form: "%.10g", ".0" after an integer's digits, "1e-5". */
#define REAL_FORM "%.10g"
static void put_real(line *b, double v)
{
    char t[48];
    snprintf(t, sizeof t, REAL_FORM, v);
    add(b, oq_json_real_form(t));
}

double oq_batch_real_kept(double v)
{
    char t[48];
    if (!isfinite(v)) return v;
    snprintf(t, sizeof t, REAL_FORM, v);
    return strtod(t, NULL);
}

/* A tolerance as it was given, every digit that reads back to it (at 10 digits 0.10008144378662108
 * was 0.1000814438, and no reader could tell why an output at that edge failed). */
static void put_exact(line *b, double v)
{
    char t[48];
    add(b, oq_json_real(v, t, sizeof t));
}

/* A comparison metric: a number, or "nan", "inf", "-inf" (JSON has none). */
static void put_metric(line *b, double v)
{
    if (isfinite(v)) put_real(b, v);
    else add(b, isnan(v) ? "\"nan\"" : v > 0 ? "\"inf\"" : "\"-inf\"");
}

static void put_int(line *b, int64_t v) { addf(b, "%lld", (long long)v); }

static void put_bool(line *b, int v) { add(b, v ? "true" : "false"); }

/* A string as jansson escapes it; one that is not UTF-8 cannot be written (0). */
static int put_string(line *b, const char *s)
{
    const char *p = s;
    while (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\') p++;
    if (!*p) {
        addf(b, "\"%s\"", s);
        return 1;
    }
    json_t *j = json_string(s); /* the rare name that needs escaping: jansson's own */
    char *text = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    json_decref(j);
    if (text) add(b, text);
    free(text);
    return text != NULL;
}

/* A value of an element: an exact comparison's text, every digit, as a string (as
 * oq_compare_result_to_json writes it: a JSON number past 2^53 is rounded by most readers). */
static void put_value(line *b, const char *text, double v)
{
    if (*text) put_string(b, text);
    else put_metric(b, v);
}

/* An error: an exact comparison's |d| in every digit (an integer difference; 10 digits wrote
 * 123456789013 - 0 as 123456789000), a float one's in 10. */
static void put_error(line *b, const oq_batch_output *o, double v)
{
    if (o->exact && isfinite(v)) put_exact(b, v);
    else put_metric(b, v);
}

static void put_worst(line *b, const oq_batch_output *o)
{
    add(b, ", \"worst\": [{\"coord\": [");
    for (int32_t d = 0; d < o->ndim && d < OQ_MAX_DIMS; d++) {
        if (d) add(b, ", ");
        put_int(b, o->worst.coord[d]);
    }
    add(b, "], \"index\": ");
    put_int(b, o->worst.index);
    add(b, ", \"got\": ");
    put_value(b, o->worst.got_text, o->worst.got);
    add(b, ", \"expected\": ");
    put_value(b, o->worst.expected_text, o->worst.expected);
    add(b, ", \"abs_diff\": ");
    put_error(b, o, o->worst.abs_diff);
    if (o->worst_event_known) {
        add(b, ", \"event_id\": ");
        put_int(b, o->worst_event);
    }
    add(b, "}]");
}

/* A batch's output: the keys of a comparison record (compare-impl.h) without its worst
 * elements and histograms, which the configuration's "outputs" aggregate. */
static int put_output(line *b, const oq_batch_output *o, const oq_output_beside *beside)
{
    if (!isfinite(o->tol.rtol) || !isfinite(o->tol.atol)) return 0;
    add(b, "{\"output\": ");
    if (!put_string(b, o->name)) return 0;
    add(b, ", \"name\": ");
    put_string(b, o->name);
    add(b, ", \"passed\": ");
    put_bool(b, o->passed);
    if (o->dtype != OQ_DTYPE_UNDEFINED) /* (a record read back from before they were kept has none) */
        addf(b, ", \"dtype\": \"%s\", \"reference_dtype\": \"%s\"", oq_dtype_name(o->dtype),
             oq_dtype_name(o->ref_dtype));
    add(b, ", \"tolerance\": {\"rtol\": ");
    put_exact(b, o->tol.rtol);
    add(b, ", \"atol\": ");
    put_exact(b, o->tol.atol);
    add(b, "}");
    if (o->dtype != OQ_DTYPE_UNDEFINED) {
        add(b, ", \"num_elements\": ");
        put_int(b, o->num_elements);
    }
    add(b, ", \"num_valid\": ");
    put_int(b, o->num_valid);
    const char *keys[] = {"max_abs", "max_rel", "mean_abs", "rms", "rel_l2"};
    const double vals[] = {o->max_abs, o->max_rel, o->mean_abs, o->rms, o->rel_l2};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        addf(b, ", \"%s\": ", keys[i]);
        if (i == 0) put_error(b, o, vals[i]);
        else put_metric(b, vals[i]);
    }
    addf(b,
                   ", \"over_tolerance\": %lld, \"nan\": %lld, \"inf\": %lld, \"reference_nonfinite\": {\"nan\": %lld, "
                   "\"inf\": %lld}, \"padding\": {\"checked\": %s, \"padded\": %lld, \"nonzero\": %lld, \"masked\": %s, "
                   "\"rule\": \"%s\", \"reference_nonzero\": %lld",
                   (long long)o->over_tol, (long long)o->nan_count, (long long)o->inf_count,
                   (long long)o->ref_nan_count, (long long)o->ref_inf_count, o->padding_checked ? "true" : "false",
                   (long long)o->num_padded, (long long)o->pad_nonzero, o->masked ? "true" : "false",
                   padding_rules[(unsigned)o->padding_rule < 3 ? o->padding_rule : 1], (long long)o->ref_pad_nonzero);
    if (beside && beside->masked_by)
        addf(b, ", \"batch_axis\": %d, \"seq_axis\": %d, \"masked_by\": \"%s\"", (int)beside->batch_axis,
             (int)beside->seq_axis, beside->masked_by);
    add(b, "}");
    if (beside && beside->inf_matched >= 0) addf(b, ", \"inf_matched\": %lld", (long long)beside->inf_matched);
    /* every valid element a matched infinity: its max_abs 0 is no error (compare.h) */
    if (beside && oq_compare_infinities_only(o->num_valid, beside->inf_matched)) add(b, ", \"compared\": false");
    if (o->exact) add(b, ", \"exact\": true");
    if (o->has_worst) put_worst(b, o);
    add(b, "}");
    return 1;
}

/* The record's text; 0 when it cannot be written (a name that is not UTF-8, a tolerance that
 * is not a number), as jansson could not build it either. */
static int record_text(line *b, const oq_batch_result *r, const oq_output_beside *beside)
{
    add(b, "{\"index\": ");
    put_int(b, r->index);
    if (r->timed) {
        if (isfinite(r->first_call_s)) { /* as json_real, which has no NaN, left it out */
            add(b, ", \"first_call_s\": ");
            put_real(b, r->first_call_s);
        }
        addf(b, ", \"repeat\": %d, \"warmup\": %d, \"calls\": %d", r->repeat, r->warmup, r->calls);
        add(b, ", \"median_s\": "); /* null: no timed call (a median that is not finite neither) */
        if (isfinite(r->median_s)) put_real(b, r->median_s);
        else add(b, "null");
    }
    if (r->reference_cached) add(b, ", \"reference_cached\": true");
    if (r->compared) {
        add(b, ", \"outputs\": [");
        for (size_t i = 0; i < r->n_outputs; i++) {
            if (i) add(b, ", ");
            if (!put_output(b, &r->outputs[i], beside ? &beside[i] : NULL)) return 0;
        }
        add(b, "], \"passed\": ");
        put_bool(b, r->passed);
    }
    add(b, "}");
    return 1;
}

/* The decimal point of printf's reals: a locale with another would write other numbers. */
static int point_is_dot(void) { return !strcmp(localeconv()->decimal_point, "."); }

/* The record's line (with its newline) in l->b; 0: it cannot be written. */
static int record_line(line *l, const oq_batch_result *r, const oq_output_beside *beside)
{
    *l = (line){.ok = 1};
    int ok = point_is_dot() && record_text(l, r, beside);
    add(l, "\n");
    if (ok && l->ok) return 1;
    oq_dynbuf_clear(&l->b);
    return 0;
}

int oq_batch_record_put_beside(FILE *f, const oq_batch_result *r, const oq_output_beside *beside)
{
    line l;
    int ok = record_line(&l, r, beside) && fwrite(l.b.buf, 1, l.b.len, f) == l.b.len;
    oq_dynbuf_clear(&l.b);
    return ok;
}

int oq_batch_record_put(FILE *f, const oq_batch_result *r) { return oq_batch_record_put_beside(f, r, NULL); }

json_t *oq_batch_record_json(const oq_batch_result *r)
{
    line l;
    json_t *j = record_line(&l, r, NULL) ? json_loadb(l.b.buf, l.b.len, 0, NULL) : NULL;
    oq_dynbuf_clear(&l.b);
    return j;
}
