/* The comparison engine: is an output the same function as its reference?
 *
 * oq_compare_tensors compares an output (any float dtype) with a reference of
 * the same shape (any float dtype, usually float64 from the C reference), on
 * VALID elements only. With per-event lengths, an element whose sequence
 * coordinate is >= its event's length is padding: it takes no part in the
 * error metrics and is checked separately to be exactly zero.
 * Integer and bool outputs (either side not a float) are compared exactly: every
 * valid element must be equal, whatever the tolerance says. Equal as integers, whatever the
 * two widths (int64 2^53 + 1 differs from uint64 2^53, and uint64 2^63 from int64 -2^63; bool
 * is 0 or 1); against a float side, equal when the float is that integer exactly (0.5, NaN, or
 * 2^53 against int64 2^53 + 1 differ). |d| is the integers' difference, computed exactly and
 * rounded once to a double: exact below 2^53, and never 0 for two values that differ.
 *
 *     oq_compare_opts o = oq_compare_opts_default(OQ_DTYPE_FLOAT32);
 *     o.lengths = lengths;                       // from oq_mask_check
 *     oq_compare_result r;
 *     if (oq_compare_tensors(out, ref, &o, &r, &err) != OQ_OK) ...;   // shapes, dtypes
 *     char line[512];
 *     puts(oq_compare_result_str(&r, line, sizeof line));
 *     if (!r.passed) ...;
 *
 * Pass rule (numpy.allclose, per valid element):  |out - ref| <= atol + rtol * |ref|
 * and additionally: no NaN or Inf in the valid output (a NaN never passes,
 * whatever the reference says), no NaN or Inf in the valid reference (a
 * reference error, reported apart), and padding exactly zero when the padding
 * rule judges it (check_padding: OQ_PADDING_ZERO always, OQ_PADDING_AS_REFERENCE
 * only where the reference itself is exactly zero on every padded element,
 * OQ_PADDING_REPORT never; the non-zero padding is counted in every case).
 *
 * Metrics (over valid elements where both values are finite; non-finite
 * elements are counted instead and head the worst list):
 *   max_abs   max |d|, d = out - ref
 *   max_rel   max |d| / max(|ref|, tiny), tiny = the smallest normal number of
 *             the output's dtype (below it the output cannot carry relative precision)
 *   mean_abs  mean |d|;   rms  sqrt(mean d^2)
 *   rel_l2    ||d||_2 / ||ref||_2 (0 when both are 0, +inf when only ||ref|| is)
 *   over_tol  valid elements failing the allclose rule (non-finite ones included)
 *   worst     the K elements with the largest |d| (non-finite first), with coordinates
 *   worst_failing  the failing element furthest over its bound atol + rtol |ref|
 *   err_hist  |d| of every valid finite element in fixed log-spaced bins (oq_log_hist)
 *   by_ref    per bin of |ref|: elements, max |d| and elements over tolerance, so the
 *             error can be read against the magnitude it is relative to
 *
 * The bins are the same for every comparison, so histograms of batches,
 * configurations or shards add up bin by bin (and maxima take the max).
 */
#ifndef ORTQUAL_COMPARE_H
#define ORTQUAL_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "ortqual/status.h"
#include "ortqual/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* allclose tolerances: |out - ref| <= atol + rtol * |ref|. */
typedef struct oq_tolerance {
    double rtol;
    double atol;
} oq_tolerance;

/* Named presets (the reasoning is in src/compare/tolerance.c and docs/contract.md):
 *   "fp64"  rtol 1e-9, atol 1e-12      "fp32"  rtol 1e-4, atol 1e-5
 *   "fp16"  rtol 1e-2, atol 4e-3       "bf16"  rtol 8e-2, atol 3.2e-2
 *   "onnx"  rtol 1e-3, atol 1e-7 (what the ONNX backend node tests use)
 *   "tf32"  rtol 1e-2, atol 5e-3 (every matrix product at TensorFloat-32 input precision)
 * Also accepted: the dtype spellings of oq_dtype_parse ("float32", "half", ...).
 * OQ_ERR_INVALID_ARG names the unknown preset and lists the known ones. */
OQ_API oq_status oq_tolerance_preset(const char *name, oq_tolerance *out, oq_err *err);

/* The preset for a compute precision (float64/32/16, bfloat16); fp32 for anything else. */
OQ_API oq_tolerance oq_tolerance_for_dtype(oq_dtype precision);

/* Parse one tolerance spec:  [OUTPUT:]BODY  where BODY is a preset name or a
 * comma list of rtol=X and atol=Y ("rtol=1e-3,atol=1e-4"; either may be absent
 * and then keeps its value in *tol). OUTPUT is everything before the last ':'
 * (so "out_cls:rtol=1e-3" and "block:0:fp16" both work); it is copied to
 * `name` (cap bytes, "" when absent). Values must pass oq_tolerance_check_value.
 * Spaces around the name, the body, keys and values are not part of them
 * ("out_reg : rtol = 1e-3" is "out_reg:rtol=1e-3"); spaces inside a name are.
 * Errors (OQ_ERR_INVALID_ARG) quote the spec (without those spaces) and the offending part. */
OQ_API oq_status oq_tolerance_parse(const char *spec, char *name, size_t cap, oq_tolerance *tol, oq_err *err);

/* A tolerance value a comparison can fail, OQ_OK; else OQ_ERR_INVALID_ARG saying why. `key`
 * is "rtol" or "atol" (another is refused). Finite and >= 0, and a check that can fail: rtol
 * below 1 (with rtol >= 1 an output of zeros passes against any reference) and atol below
 * float32's largest value, 3.4e38 (no float32 output is that far from a value near zero: only
 * NaN and Inf would fail it). oq_tolerance_parse applies it to each value it reads. */
OQ_API oq_status oq_tolerance_check_value(const char *key, double v, oq_err *err);

/* A default tolerance plus per-output overrides, looked up by output name. */
typedef struct oq_tolerances oq_tolerances;

OQ_API oq_status oq_tolerances_create(oq_tolerance base, oq_tolerances **out, oq_err *err);
OQ_API void oq_tolerances_free(oq_tolerances *t);
/* Apply one or more specs separated by ';' ("rtol=1e-3;out_reg:fp16"; spaces around
 * each, as "fp16; out_reg:fp32", are not part of it: oq_tolerance_parse).
 * A spec without OUTPUT changes the default; a spec for an output starts from
 * the default as it is now. A target (an output, or the default) given again, in this call or
 * an earlier one on `t`, with other values is OQ_ERR_INVALID_ARG naming it ("tolerance: output
 * 'out_reg' given twice ('out_reg:fp16' and 'out_reg:rtol=3e-2')"), as the tool refuses
 * --tolerance twice: it would silently loosen or tighten the first; the same values again are
 * taken once. */
OQ_API oq_status oq_tolerances_add(oq_tolerances *t, const char *specs, oq_err *err);
/* The tolerance for `output` (its override, else the default). NULL gives the default; a NULL
 * `t` a zeroed tolerance. */
OQ_API oq_tolerance oq_tolerances_get(const oq_tolerances *t, const char *output);
/* Every per-output override names one of the model's `n` outputs: an override of an output
 * the model lacks would be ignored, so it is refused (OQ_ERR_INVALID_ARG, naming it and
 * listing `outputs`). */
OQ_API oq_status oq_tolerances_check_outputs(const oq_tolerances *t, const char *const *outputs, size_t n,
                                             oq_err *err);

#define OQ_COMPARE_MAX_WORST 64

/* What the padded elements of an output must be (oq_compare_opts.check_padding). */
enum {
    OQ_PADDING_REPORT = 0,      /* counted and reported, never judged */
    OQ_PADDING_ZERO = 1,        /* exactly zero, or the comparison fails */
    OQ_PADDING_AS_REFERENCE = 2 /* exactly zero when the reference is exactly zero on every padded
                                   element (the model zeroes its padding, so the output under test
                                   must too); reported otherwise (a language model's logits) */
};

/* Fixed log-spaced bins: bin k holds values v with
 *     10^(OQ_HIST_MIN_EXP + k / OQ_HIST_PER_DECADE) <= v < 10^(OQ_HIST_MIN_EXP + (k+1) / OQ_HIST_PER_DECADE)
 * (up to floating-point rounding at the edges). 1e-18 .. 1e6 covers float64
 * rounding up to gross errors; what falls outside is counted apart. */
#define OQ_HIST_MIN_EXP (-18)
#define OQ_HIST_MAX_EXP 6
#define OQ_HIST_PER_DECADE 4
#define OQ_HIST_BINS ((OQ_HIST_MAX_EXP - OQ_HIST_MIN_EXP) * OQ_HIST_PER_DECADE)

typedef struct oq_log_hist {
    int64_t zero;  /* exactly 0 */
    int64_t below; /* 0 < v < 10^OQ_HIST_MIN_EXP */
    int64_t above; /* v >= 10^OQ_HIST_MAX_EXP */
    int64_t bins[OQ_HIST_BINS];
} oq_log_hist;

/* The bin of v > 0: -1 below the first bin, OQ_HIST_BINS at or above the last edge. */
OQ_API int oq_hist_bin(double v);
/* Lower edge of bin k (k = OQ_HIST_BINS gives the upper edge of the last bin). */
OQ_API double oq_hist_edge(int k);

/* Error against reference magnitude: per |ref| bin (index 0 holds |ref| below
 * 10^OQ_HIST_MIN_EXP, zero included; 1..OQ_HIST_BINS the bins; OQ_HIST_BINS + 1
 * at or above 10^OQ_HIST_MAX_EXP), over valid finite elements. */
#define OQ_MAG_SLOTS (OQ_HIST_BINS + 2)
typedef struct oq_mag_hist {
    int64_t count[OQ_MAG_SLOTS];
    double max_abs[OQ_MAG_SLOTS];  /* largest |d| among them (0 when empty) */
    int64_t over_tol[OQ_MAG_SLOTS]; /* of them, failing the allclose rule */
} oq_mag_hist;

typedef struct oq_compare_opts {
    oq_tolerance tol;
    const int64_t *lengths; /* NULL: every element is valid; else one per batch entry */
    int32_t batch_axis;     /* default 0: the axis `lengths` has one entry per index of */
    int32_t seq_axis;       /* default 1: the axis an event's length runs along. Both must be
                               distinct axes of the output (0..rank-1), lengths or not, except
                               on an output of rank < 2 without lengths */
    int check_padding;      /* OQ_PADDING_ZERO (default), OQ_PADDING_AS_REFERENCE or OQ_PADDING_REPORT */
    int32_t worst_k;        /* how many worst elements to keep, 0..OQ_COMPARE_MAX_WORST; default 5 */
    int inf_match;          /* 1 (oq_compare_opts_default): a valid element where output and
                               reference are the same infinity is equal (counted in inf_matched
                               only): a masked attention score is -inf by definition. 0: every
                               Inf fails. NaN never matches */
} oq_compare_opts;

/* The sequence axis of one output, said by the caller (the --seq-axis OUTPUT=AXIS of validate,
 * replay and convert, OUTPUT=AXIS,batch=AXIS with the batch axis) where the model's declaration
 * does not say it. Without one, an output's mask axes are the ones its declared names share
 * with the mask input's, else those denoted DATA_BATCH and DATA_TIME (ONNX's dimension
 * denotations), else axis 0 of the batch's size B and axis 1 of its padded length L
 * where nothing else could be read from the sizes: two axes of size L, B = L, a [B, L] output (as
 * well a pooled [B, H] with H = L), a model with two axes of size L in one input or output
 * (L is also one of its widths) or the one axis of size L past axis 1 (a width as well) are refused (OQ_ERR_INVALID_ARG naming the output and the fix)
 * rather than guessed. */
#define OQ_SEQ_AXIS_NONE (-1)
typedef struct oq_seq_axis {
    const char *output;       /* the model output's name */
    int32_t axis;             /* the axis the mask's lengths run along (not the batch axis), of
                                 size L; OQ_SEQ_AXIS_NONE: not per element, every element valid */
    int32_t batch;            /* with batch_said: the batch axis (of size B; a sequence-first
                                 [L, B, E] output's 1); else the one the declared names or
                                 DATA_BATCH say, else 0 */
    int batch_said;
} oq_seq_axis;

/* Defaults: the precision's tolerance preset, no lengths, axes 0 and 1,
 * padding checked, 5 worst elements, equal infinities matched (inf_match). */
OQ_API oq_compare_opts oq_compare_opts_default(oq_dtype precision);

/* The largest |error| as the tables, validate.csv and JUnit show it: NaN when a valid element
 * is NaN on either side, +Inf when one is infinite, else max_abs, which is taken over the finite
 * pairs only (0 for an output of Infs, that failed on every element). */
OQ_API double oq_compare_max_abs_shown(int64_t nan, int64_t inf, int64_t ref_nan, int64_t ref_inf, double max_abs);
/* Whether shown max |error| `a` is worse than `b`: NaN, then +Inf, then the larger. */
OQ_API int oq_compare_max_abs_worse(double a, double b);

/* Room for an element's value as text in an exact comparison: "-9223372036854775808",
 * "18446744073709551615" and a float side's fewest round-trip digits all fit. */
#define OQ_EXACT_TEXT 32

/* One element: flat index, coordinates, values and differences. */
typedef struct oq_compare_elem {
    int64_t index;
    int64_t coord[OQ_MAX_DIMS];
    double got;
    double expected;
    double abs_diff; /* NaN when either side is NaN */
    /* An exact comparison's values as text, every digit ("123456789013"; a float side in the
     * fewest digits that read back, "0.5"): got and expected are doubles, which round int64 and
     * uint64 past 2^53. "" in a float comparison. */
    char got_text[OQ_EXACT_TEXT];
    char expected_text[OQ_EXACT_TEXT];
} oq_compare_elem;

typedef struct oq_compare_result {
    char name[128];       /* the output's name (else the reference's), may be "" */
    int32_t ndim;
    int64_t shape[OQ_MAX_DIMS];
    oq_dtype out_dtype, ref_dtype;
    oq_tolerance tol;
    int64_t num_elements; /* all elements */
    int64_t num_valid;    /* elements compared */
    int64_t num_padded;   /* elements on padding */
    double max_abs, max_rel, mean_abs, rms, rel_l2; /* as shown everywhere: max_abs and max_rel over
                                           the finite pairs, NaN where a valid element is NaN on either
                                           side, +Inf where one is infinite; the others over the
                                           finite pairs, NaN when none is */
    double sum_abs, sum_sq, sum_ref_sq; /* |d|, d^2 and ref^2 summed over the same pairs: the
                                           mean_abs, rms and rel_l2 of several comparisons taken
                                           together come from these */
    int64_t over_tol;
    int64_t nan_count, inf_count;         /* in the valid output */
    int64_t ref_nan_count, ref_inf_count; /* in the valid reference: a reference error */
    int64_t inf_matched;  /* with opts.inf_match: valid elements equal to the reference's infinity */
    int exact;            /* integers or bools: compared for equality (tol is 0) */
    int masked;           /* lengths applied: padded elements were set apart */
    int padding_rule;     /* check_padding as given */
    int padding_checked;  /* the padding was judged (the rule, and for AS_REFERENCE the reference) */
    int64_t pad_nonzero;   /* padded output elements that are not exactly 0 (NaN included) */
    int64_t ref_pad_nonzero; /* padded reference elements that are not exactly 0 */
    int64_t pad_nonfinite; /* of those, NaN or Inf */
    oq_compare_elem first_pad_nonzero; /* meaningful when pad_nonzero > 0 */
    int32_t worst_count;
    oq_compare_elem worst[OQ_COMPARE_MAX_WORST]; /* largest |d| first */
    /* The failing element furthest over its own bound (|d| - (atol + rtol |ref|) the largest;
     * non-finite first; the earlier on ties), meaningful when over_tol > 0: the largest |d| may
     * sit on a large |ref| within its bound while a smaller one fails. */
    oq_compare_elem worst_failing;
    double max_abs_ref;    /* largest finite |ref| over valid elements */
    oq_log_hist err_hist;  /* |d| over valid elements where both values are finite */
    oq_mag_hist by_ref;    /* the same elements by |ref| */
    int vacuous;          /* passed cleared by oq_compare_judge_vacuous: the tolerance cannot fail here */
    int passed;
} oq_compare_result;

/* Compare `out` with `ref`. Fills *res completely (no allocation; nothing to free).
 * Errors: OQ_ERR_SHAPE when shapes differ (both named) or a dtype is unknown;
 * OQ_ERR_INVALID_ARG for bad axes (naming the axis and the rank), worst_k or
 * tolerances; OQ_ERR_MASK when a length is outside 0..L (naming the event). A failed
 * comparison is NOT an error: it returns OQ_OK with res->passed == 0. */
OQ_API oq_status oq_compare_tensors(const oq_tensor *out, const oq_tensor *ref, const oq_compare_opts *opts,
                                    oq_compare_result *res, oq_err *err);

/* The pass rule on a comparison's numbers alone: no nan, inf, over_tolerance or non-finite
 * reference value, no non-zero padding where the padding is judged, and max_abs at most
 * atol + rtol * max_abs_ref (no element within its own bound is above it). oq_compare_tensors
 * sets res->passed by it; a merge of sharded runs judges a summary's numbers again by it.
 * Returns 1 when they pass; else 0 and, where why is not NULL, the first that fails ("nan 2",
 * "over_tolerance 3", "max_abs 5 above atol + rtol * max_abs_ref = 1.0002e-05") in it (0 and
 * "" for a NULL res). */
OQ_API int oq_compare_judge_numbers(const oq_compare_result *res, char *why, size_t n);

/* Whether `res` judged no value: every valid element is an infinity both sides hold
 * (inf_matched: equal, but nothing measured), or it has no valid element at all (an output with
 * a 0-sized axis; until the thirty-fourth session such an output passed with 0 of 0 judged). Its
 * max_abs of 0 is then no error of 0: the tables show the output as not compared, and
 * validate's verdict is NOT TESTED while a configuration under test has such an output
 * (docs/verdicts.md). 0 for a NULL res. */
OQ_API int oq_compare_judged_nothing(const oq_compare_result *res);
/* How the tools say such an output, one wording for each: printf's format of its valid
 * elements (long long) and who holds the infinities ("the reference", "the expected file"). */
#define OQ_COMPARE_NOT_COMPARED_FMT "not compared (its %lld valid elements are infinities %s holds too: inf_matched)"
/* ... and of one with no valid element */
#define OQ_COMPARE_NOT_COMPARED_EMPTY "not compared (it has no valid element: a 0-sized axis)"
/* The one of the two that fits `valid` elements of matched infinities (0: none), into buf (n
 * bytes); returns buf (NULL for a NULL buf). `holder` NULL: "the reference". */
OQ_API const char *oq_compare_not_compared_str(char *buf, size_t n, long long valid, const char *holder);

/* A tolerance that cannot fail judges nothing: a pass of `res` whose tolerance (res->tol) is
 * not the preset's (`preset`: before the user's, either field) and under which zeros would
 * pass in place of the reference, atol + rtol * |ref| >= |ref| at every compared element (for
 * rtol < 1: atol >= (1 - rtol) * max_abs_ref; where the reference is all zeros, atol at least
 * the output's largest |value|), is failed (passed 0, vacuous 1). The one rule of validate,
 * replay, bench, convert, conformance (its result built from the values it compared) and the
 * shard merge. Returns res->vacuous (0 for a NULL res). */
OQ_API int oq_compare_judge_vacuous(oq_compare_result *res, oq_tolerance preset);
/* oq_compare_judge_vacuous with a preset of res's own rtol and `preset_atol`: an rtol changed
 * alone is not seen. For callers built before it. */
OQ_API int oq_compare_judge_atol(oq_compare_result *res, double preset_atol);
/* Why a vacuous result failed: "its atol 100 is at least its largest |value| 2.66: zeros would
 * pass in its place (a tolerance that cannot fail: lower its atol)", or where rtol takes part
 * "its atol 0.9 and rtol 0.5 pass zeros for every |value| up to 1.8, and its largest |value|
 * is 1.71056: zeros would pass in its place (...: lower its atol or rtol)" (up to: atol / (1 -
 * rtol)). Returns buf ("" in it for a NULL res). */
OQ_API char *oq_compare_vacuous_str(const oq_compare_result *res, char *buf, size_t n);

/* One line for people, e.g.
 * "out_cls: PASS valid=1200 max_abs=3.1e-06 max_rel=2.2e-05 rms=8.0e-07 rel_l2=1.1e-06
 *  over_tol=0 nan=0 inf=0 pad_nonzero=0 (rtol=0.0001 atol=1e-05)"
 * and on failure the reasons and the worst failing element with its coordinates (worst_failing;
 * worst[0] where no element failed the tolerance, e.g. only the padding did). The tolerance is
 * printed as given, in the fewest digits that read back to it; a failed output's max_abs,
 * max_rel and worst |d| with 3 digits, or as many more as show each above its bound (atol,
 * rtol, the element's atol + rtol |expected|); an exact comparison's values (got_text,
 * expected_text), max_abs and |d| in every digit. Returns buf ("" in it for a NULL res). */
OQ_API char *oq_compare_result_str(const oq_compare_result *res, char *buf, size_t n);
/* The same line with the reference's NaN and Inf counted under `side` (NULL: "REFERENCE"), for
 * a reference that is something else to the reader: "EXPECTED" for saved outputs. max_abs is
 * printed as oq_compare_max_abs_shown gives it (nan or inf where non-finite values failed it). */
OQ_API char *oq_compare_result_str_vs(const oq_compare_result *res, const char *side, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
