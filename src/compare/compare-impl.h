/* Internals of src/compare shared across the library (never installed). */
#ifndef ORTQUAL_COMPARE_IMPL_H
#define ORTQUAL_COMPARE_IMPL_H

#include <jansson.h>

#include "ortqual/compare.h"

/* Whether two dtypes are compared exactly (either not a float: integers and bools, tolerance 0):
 * the dtypes decide, never a recorded flag. */
int oq_compare_is_exact(oq_dtype out, oq_dtype ref);

/* The result as a new JSON object (caller owns it: json_decref). Non-finite
 * numbers, which JSON cannot hold, are written as the strings "nan", "inf", "-inf".
 * The histograms are written trimmed to their non-empty range (docs/summary-schema.md):
 *   "error_histogram":    {"min_exp", "per_decade", "first", "counts": [..], "zero", "below", "above"}
 *   "error_by_magnitude": {"min_exp", "per_decade", "first", "count": [..], "max_abs": [..],
 *                          "over_tolerance": [..], "below": {"count", "max_abs", "over_tolerance"},
 *                          "above": {...}}
 * where "counts"[i] is bin first + i. */
oq_status oq_compare_result_to_json(const oq_compare_result *res, json_t **out, oq_err *err);
/* The result back from that JSON (what a validation worker reported), histograms included;
 * the sums, which the record does not hold, rebuilt from its means (sum_ref_sq from rel_l2: 0
 * when it is 0).
 * OQ_ERR_FORMAT when `j` is not such a record, or its histograms use other bins than
 * OQ_HIST_* (a record written by another build) or do not fit in them. */
oq_status oq_compare_result_from_json(const json_t *j, oq_compare_result *res, oq_err *err);

/* oq_compare_result_str_vs with `where` (NULL: "") after the worst element's coordinates, for a
 * caller that knows more of where it is: " (event 1533303324673002 of ev_000.npz)". */
char *oq_compare_result_str_at(const oq_compare_result *res, const char *side, const char *where, char *buf, size_t n);

/* The one place that decides the metrics every table, CSV and summary.json shows: max_abs (and
 * max_rel) NaN where a valid element is NaN on either side, +Inf where one is infinite
 * (oq_compare_max_abs_shown), else the finite pairs' maximum; mean_abs, rms and rel_l2 NaN when
 * no valid pair (`finite_pairs` of them) is finite. A comparison and a merge of them end with it. */
void oq_compare_metrics_shown(oq_compare_result *r, int64_t finite_pairs);

/* A record's tolerance member `key` ("rtol", "atol") of its "tolerance" object `tol`: a
 * number, or NaN when it is anything else ("x", null, missing), which no check passes (it was
 * read as 0); 0 for a record with no tolerance object (none was written before it). */
double oq_compare_tolerance_back(const json_t *tol, const char *key);
/* A record that says it passed, as far as its own fields can tell besides its numbers
 * (oq_compare_judge_numbers): compared exactly exactly when its dtypes say so, and a tolerance
 * of two numbers >= 0. 1 when it holds; else 0 and why not (n bytes of `why`). */
int oq_compare_record_holds(const oq_compare_result *r, char *why, size_t n);
/* OQ_ERR_FORMAT "PATH: CONFIG passed, but its output 'OUTPUT' WHY: refusing to VERB a summary that
 * contradicts itself" (OUTPUT NULL: "but lists no compared output"): the one wording of merge,
 * plot and report for a configuration whose `passed` its records do not bear out. */
oq_status oq_compare_contradiction(oq_err *err, const char *path, const char *config, const char *output,
                                   const char *why, const char *verb);
/* Every configuration under test of the validate summary `summary` (file `path`) that passed:
 * its outputs listed, each passed, holding (oq_compare_record_holds) and passing by its numbers;
 * else oq_compare_contradiction with verb "draw" (plot, report and JUnit draw no such summary).
 * A summary from before outputs were aggregated (no "outputs"): each batch record the document
 * holds with its outputs, by oq_compare_batch_holds. A merged summary's "shards" (and a shard's
 * "shard") as the merge records them: every shard of its count reported or a problem, once, and
 * no pass beside a shard that did not report. */
oq_status oq_compare_summary_holds(const json_t *summary, const char *path, oq_err *err);
/* One batch record of configuration `config`, which passed: each of its outputs passed, holds and
 * passes by its numbers; else the contradiction, naming the batch ("its output 'cls' in batch 3
 * has ..."). A record without outputs holds. */
oq_status oq_compare_batch_holds(const json_t *record, const char *path, const char *config, oq_err *err);

/* A metric of a comparison record read back (max_abs, max_rel, mean_abs, rms, rel_l2, an
 * element's abs_diff): a number, or NaN, +Inf, -Inf from the strings "nan", "inf", "-inf" that
 * stand for them in JSON. Absent or anything else: NaN, never json_number_value's 0, which
 * reads as no error at all. */
double oq_compare_metric_back(const json_t *j);
/* A record's "max_abs" or "max_rel" (`key`) as every table shows it: read back, NaN where a
 * valid element is NaN on either side, +Inf where one is infinite (oq_compare_max_abs_shown,
 * from the record's counts). The one reader of these maxima for report.html, JUnit and the
 * figures. */
double oq_compare_record_max(const json_t *rec, const char *key);

/* A value of a comparison record's element (its "got" or "expected"): a number; "nan", "inf"
 * or "-inf"; or an exact comparison's text, every digit of an integer, copied to `text` (n
 * bytes; "" for the others; NULL: not wanted) and returned as the nearest double. Not a number
 * nor a string: NaN. */
double oq_compare_value_back(const json_t *j, char *text, size_t n);

/* Saved values `ref` of a model's output `name`, declared `output_type` (0: unknown, anything
 * fits), are of its kind: floats for a float output, integers or bools for another. Compared as
 * numbers, a file of the other kind is the wrong file, not an error to measure: OQ_ERR_SHAPE
 * "PATH: expected 'NAME' is int32; the model's output is float32" (validate, convert, bench).
 * A bfloat16 `ref` (a file's '<V2', ml_dtypes.bfloat16) fits a bfloat16 output only. */
oq_status oq_compare_check_kind(const oq_tensor *ref, const char *name, oq_dtype output_type, const char *path,
                                oq_err *err);

/* --tolerance SPECS (oq_tolerances_add's form) as a run will read them: a value it would refuse
 * is refused now, and so is an override of an output not among `outputs` (n names), which would
 * be ignored (a typo judged at the default), or of an integer or bool output (`types`: their
 * element types, 0 unknown; NULL: not known), which is compared exactly. `outputs` NULL: not
 * known yet, the specs are only parsed. NULL or "" specs: OQ_OK. (validate, bench) */
oq_status oq_tolerances_check_specs(const char *specs, const char *const *outputs, const int32_t *types, size_t n,
                                    oq_err *err);

/* rel_l2 from its sums, sqrt(sum d^2 / sum ref^2): 0 when both are 0, +inf when only the
 * reference's is (compare.h), for one comparison or for several taken together. */
double oq_rel_l2_of(double sum_sq, double sum_ref_sq);

/* oq_compare_tensors without its float32-against-float64 fast path: every element through
 * the generic loop, which the fast path must match bit for bit (tests/unit/test_compare.c). */
oq_status oq_compare_tensors_generic(const oq_tensor *out, const oq_tensor *ref, const oq_compare_opts *opts,
                                     oq_compare_result *res, oq_err *err);


/* Whether outputs compared no finite value: of their `valid` elements (summed), every one is an
 * infinity both sides hold (`inf_matched`: equal, but no value judged), or there is none. Such a
 * comparison is not green: validate's configuration is NOT TESTED, bench's row is not compared,
 * convert's check fails (docs/verdicts.md). The one rule of the three. */
int oq_compare_infinities_only(int64_t valid, int64_t inf_matched);
/* oq_compare_judged_nothing of a comparison record as summary.json holds it (its num_valid and
 * inf_matched; a record from before inf_matched judged something). */
int oq_compare_record_judged_nothing(const json_t *rec);
/* Why, in one line: "no finite value was compared: every valid element of WHOSE WHAT (outputs,
 * output 'y') is an infinity REFERENCE holds too (counted in inf_matched: equal, but no value
 * judged)", or with `valid` 0 "no value was compared: no valid element in WHOSE WHAT"; into buf. */
char *oq_compare_infinities_only_str(const char *whose, const char *what, int64_t valid, const char *reference,
                                     char *buf, size_t n);
/* The same for one output (`name`, `valid` elements) beside outputs that compared values, and that
 * a pass would claim it too; malloc'd, NULL when out of memory. validate's and convert's reason. */
char *oq_compare_one_output_infinities_str(const char *whose, const char *name, int64_t valid, const char *reference);

#endif
