/* A sweep's verdict: the one rule that both summary.json and the tool's exit status follow
 * (docs/verdicts.md), so that a page or a later CI stage reads it instead of working it out
 * again from the rows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare-impl.h"
#include "ortqual/bench.h"

/* What a row under test is compared with: the float64 reference, or model_path's expected
 * outputs; neither (no_reference, a model without them): it is under test when it ran. */
static int rows_compared(const oq_bench_opts *o)
{
    return o->model_path ? o->expected_path != NULL : o->reference;
}

/* The first row of a status, for the reason line ("cpu:model:fp32: refused by ..."). */
static const oq_bench_row *first_of(const oq_bench_rows *rows, oq_bench_status st, size_t *count)
{
    const oq_bench_row *first = NULL;
    *count = 0;
    for (size_t i = 0; i < rows->n; i++) {
        if (rows->rows[i].status != st) continue;
        if (!first) first = &rows->rows[i];
        (*count)++;
    }
    return first;
}

/* An output of row r that compared no value (oq_bench_output_judged_nothing), or NULL. */
static const oq_bench_output_check *judged_nothing(const oq_bench_row *r)
{
    for (size_t k = 0; k < r->n_outputs; k++)
        if (oq_bench_output_judged_nothing(&r->outputs[k])) return &r->outputs[k];
    return NULL;
}

/* The infinities row r's outputs matched (of an output that judged nothing: its valid elements). */
static int64_t matched_of(const oq_bench_row *r)
{
    int64_t matched = 0;
    for (size_t k = 0; k < r->n_outputs; k++) matched += r->outputs[k].inf_matched;
    return matched;
}

/* A row that ran and compared no finite value in its outputs, or in one of them: every valid
 * element an infinity the expected outputs hold too, or none valid (model.c leaves those errors
 * NaN; compare-impl.h's rule), or NULL. */
static const oq_bench_row *infinities_only(const oq_bench_rows *rows)
{
    for (size_t i = 0; i < rows->n; i++) {
        const oq_bench_row *r = &rows->rows[i];
        if (r->status == OQ_BENCH_OK && ((matched_of(r) && isnan(r->max_abs_err)) || judged_nothing(r))) return r;
    }
    return NULL;
}

/* Why row r (infinities_only's) compared nothing, into out->reason. */
static void say_infinities(const oq_bench_row *r, oq_bench_verdict *out)
{
    char whose[96], *one = NULL;
    snprintf(whose, sizeof whose, "%.80s's", r->variant.name);
    if (isnan(r->max_abs_err))
        oq_compare_infinities_only_str(whose, "outputs", matched_of(r), "the expected file", out->reason, sizeof out->reason);
    else if ((one = oq_compare_one_output_infinities_str(whose, judged_nothing(r)->name, judged_nothing(r)->inf_matched,
                                                         "the expected file")))
        snprintf(out->reason, sizeof out->reason, "%s", one);
    else
        snprintf(out->reason, sizeof out->reason, "out of memory");
    free(one);
}

static void set(oq_bench_verdict *v, const char *verdict, int exit_status)
{
    v->verdict = verdict;
    v->exit_status = exit_status;
}

/* Limited statistics of compared rows (ok, regressed) that were not compared: said, since the
 * row's match rests on its other statistics. */
static size_t not_compared(const oq_bench_comparison *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++)
        for (size_t k = 0; k < c->limits.n; k++)
            n += c->entries[i].match != OQ_BENCH_MATCH_UNTIMED && oq_bench_ratio_why(&c->entries[i], k) != NULL;
    return n;
}

/* The first regressed row against the baseline, said with its worst ratio over its limit. */
static void say_regressed(const oq_bench_comparison *c, char *buf, size_t n)
{
    for (size_t i = 0; i < c->n; i++) {
        const oq_bench_row_ratio *e = &c->entries[i];
        if (e->match != OQ_BENCH_MATCH_REGRESSED) continue;
        for (size_t k = 0; k < c->limits.n; k++)
            if (e->ratio[k] > 1 + c->limits.limit[k].pct / 100) {
                snprintf(buf, n, "%.250s: %s %.4g ms -> %.4g ms, x%.3f > x%.3f", e->key, c->limits.limit[k].stat,
                         e->old_ms[k], e->new_ms[k], e->ratio[k], 1 + c->limits.limit[k].pct / 100);
                return;
            }
    }
}

void oq_bench_verdict_of(const oq_bench_opts *o, const oq_bench_rows *rows, oq_bench_verdict *out)
{
    if (!out) return; /* nowhere to say it: as free(NULL) */
    memset(out, 0, sizeof *out);
    set(out, "error", 3);
    if (!o || !rows) {
        snprintf(out->reason, sizeof out->reason, "oq_bench_verdict_of: no options or rows");
        return;
    }
    out->compared = rows_compared(o);
    for (size_t i = 0; i < rows->n; i++) {
        const oq_bench_row *r = &rows->rows[i];
        out->tested += oq_config_uses_ort(&r->variant) && r->status == OQ_BENCH_OK &&
                       (!out->compared || (!isnan(r->max_abs_err) && !judged_nothing(r)));
    }
    size_t failed, errors;
    const oq_bench_row *f = first_of(rows, OQ_BENCH_FAILED, &failed), *e = first_of(rows, OQ_BENCH_ERROR, &errors);
    const oq_bench_comparison *base = rows->baseline;
    if (!f && base && base->regressed) { /* slower than the baseline allows: a check that failed */
        char first[400] = "";
        say_regressed(base, first, sizeof first);
        set(out, "failed", 1);
        snprintf(out->reason, sizeof out->reason, "%zu row%s regressed against the baseline %.150s (the first, %.300s)",
                 base->regressed, base->regressed == 1 ? "" : "s", base->file, first);
    } else if (f || e) {
        if (f) set(out, "failed", 1);
        snprintf(out->reason, sizeof out->reason, "%zu row%s %s (the first, %s: %.300s)", f ? failed : errors,
                 (f ? failed : errors) == 1 ? "" : "s", f ? "failed" : "could not run", (f ? f : e)->variant.name,
                 (f ? f : e)->error);
    } else if (!out->tested && out->compared && infinities_only(rows)) {
        set(out, "untested", o->allow_skip && !base ? 0 : 1);
        say_infinities(infinities_only(rows), out);
    } else if (!out->tested) {
        set(out, "untested", o->allow_skip && !base ? 0 : 1);
        snprintf(out->reason, sizeof out->reason, "no variant under test ran%s (every ONNX Runtime row skipped, "
                 "unsupported or oom, or only the reference)%s", out->compared ? " and was compared" : "",
                 base ? "; nothing was compared with the baseline" : "");
    } else if (base && !base->compared) {
        /* the limit was never applied: not a pass, and not a skip that --allow-skip accepts */
        set(out, "untested", 1);
        snprintf(out->reason, sizeof out->reason, "no row was compared with the baseline %.200s (%zu new here, %zu "
                 "missing here, %zu untimed on one side)", base->file, base->added, base->missing, base->untimed);
    } else {
        set(out, "passed", 0);
        snprintf(out->reason, sizeof out->reason, "%zu ONNX Runtime row%s ran%s", out->tested,
                 out->tested == 1 ? "" : "s",
                 out->compared ? (out->tested == 1 ? " and was compared" : " and were compared")
                 : o->model_path ? " (timed; no expected outputs, so no output was compared)"
                                 : " (timed; no reference, so no output was compared)");
        if (base) {
            size_t used = strlen(out->reason), left_out = not_compared(base);
            snprintf(out->reason + used, sizeof out->reason - used, "; %zu compared with the baseline, none "
                     "regressed", base->compared);
            used = strlen(out->reason);
            if (left_out)
                snprintf(out->reason + used, sizeof out->reason - used, " (%zu limited statistic%s of compared rows "
                         "not compared: 0 or absent on one side)", left_out, left_out == 1 ? "" : "s");
        }
    }
}
