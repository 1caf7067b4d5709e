/* Conformance runner: ONNX backend node tests for the Attention operator.
 *
 * A test is a directory holding model.onnx and test_data_set_<k> folders with
 * input_N.pb / output_N.pb (serialized onnx.TensorProto), as ONNX publishes its
 * backend tests. N counts only the non-empty inputs (outputs) of the node, in
 * node order: an empty name in the node is an omitted optional input.
 *
 * Two ways to run a test:
 *   - the operator reference (oq_ref_attention): the model must be a single
 *     ONNX `Attention` node; any other graph (the `*_expanded` tests, which hold
 *     the operator's function body of standard ops) is SKIPPED as not applicable;
 *   - a runner callback (e.g. ONNX Runtime on an execution provider), which runs
 *     any model, the expanded ones included.
 * Every output is compared with numpy's allclose rule,
 * |got - expected| <= atol + rtol * |expected|, where NaN matches only NaN. A tolerance other
 * than the default under which zeros would pass in place of the expected values (atol + rtol *
 * |expected| >= |expected| at every element; atol at least every |got| where expected is all
 * zeros) fails the output as a tolerance that cannot fail (oq_compare_judge_vacuous, compare.h).
 *
 *     oq_conformance_opts o;
 *     oq_conformance_opts_default(&o);                 (reference, rtol 1e-3, atol 1e-7)
 *     oq_conformance_result r;
 *     oq_conformance_run_test("dir/test_attention_4d", &o, &r, &err);
 *     printf("%s\n", r.detail);
 */
#ifndef ORTQUAL_CONFORMANCE_H
#define ORTQUAL_CONFORMANCE_H

#include <stddef.h>
#include <stdint.h>

#include "ortqual/runtime.h"
#include "ortqual/status.h"
#include "ortqual/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs `model_path` on n_in named inputs and fills outputs[k] (new tensors the
 * caller frees) for each of the n_out requested output names. */
typedef oq_status (*oq_conformance_runner)(void *ctx, const char *model_path,
                                           const char *const *input_names,
                                           const oq_tensor *const *inputs, size_t n_in,
                                           const char *const *output_names, size_t n_out,
                                           oq_tensor **outputs, oq_err *err);

typedef struct oq_conformance_opts {
    double rtol;                   /* default 1e-3 (ONNX backend tests) */
    double atol;                   /* default 1e-7 */
    oq_conformance_runner runner;  /* NULL: the operator reference */
    void *runner_ctx;
} oq_conformance_opts;

OQ_API void oq_conformance_opts_default(oq_conformance_opts *o);

typedef enum oq_conformance_verdict {
    OQ_CONFORMANCE_PASS = 0,
    OQ_CONFORMANCE_FAIL,  /* an output differs, or the test could not be run (detail says why) */
    OQ_CONFORMANCE_SKIP,  /* not applicable to this runner, or nothing to compare: every output
                             empty or NaN in both (detail says why) */
    OQ_CONFORMANCE_UNSUPPORTED /* the runner has no kernel for it (ORT status 9); detail: ORT's reason */
} oq_conformance_verdict;

typedef struct oq_conformance_result {
    char name[256];                 /* the test directory's base name */
    oq_conformance_verdict verdict;
    char detail[OQ_ERR_MSG_MAX];    /* "" on PASS; the reason otherwise (one line) */
    /* On a FAIL by value: which output and its worst element (else output == -1). */
    int output;                     /* output index N (output_N.pb) */
    char output_name[128];
    int32_t ndim;
    int64_t coord[OQ_MAX_DIMS];
    double got, expected, abs_diff;
} oq_conformance_result;

/* A runner that runs each model through ONNX Runtime: pass
 * oq_conformance_ort_runner as opts.runner and a pointer to this struct as
 * opts.runner_ctx. One session per model, created with `session_opts`
 * (NULL: CPU, ORT defaults); inputs are bound by name and outputs picked by
 * name. ORT's NOT_IMPLEMENTED refusal (no kernel for the op, type or mode on
 * that provider) makes the test UNSUPPORTED with ORT's message; any other
 * error makes it FAIL. */
typedef struct oq_conformance_ort {
    oq_runtime *rt;
    const oq_session_opts *session_opts;
} oq_conformance_ort;

OQ_API oq_status oq_conformance_ort_runner(void *ctx, const char *model_path,
                                           const char *const *input_names,
                                           const oq_tensor *const *inputs, size_t n_in,
                                           const char *const *output_names, size_t n_out,
                                           oq_tensor **outputs, oq_err *err);

/* Expand `dir` into test directories: `dir` itself when it holds model.onnx,
 * else its subdirectories, sorted by name, each of which must hold one (hidden
 * ones, named .*, and files are left out). `*tests` is a NULL-terminated array
 * the caller frees with oq_conformance_list_free.
 * Errors: OQ_ERR_NOT_FOUND when `dir` is neither, or when a subdirectory holds
 * no model.onnx (the message names it), OQ_ERR_IO. */
OQ_API oq_status oq_conformance_list(const char *dir, char ***tests, size_t *n, oq_err *err);
OQ_API void oq_conformance_list_free(char **tests);

/* Run one test directory and fill `res`. A test that fails or is skipped is
 * still OQ_OK; the return status is an error only when nothing could be judged
 * for a reason outside the test (OQ_ERR_INVALID_ARG, OQ_ERR_NOMEM). Files that
 * are missing or malformed make the test FAIL with the reason in res->detail. */
OQ_API oq_status oq_conformance_run_test(const char *test_dir, const oq_conformance_opts *opts,
                                         oq_conformance_result *res, oq_err *err);

/* `res` cleared and named after its test folder (its last component), no output yet: what
 * oq_conformance_run_test starts from, and a caller's SKIP of a test it does not run (NULL
 * `res`: nothing). */
OQ_API void oq_conformance_result_init(oq_conformance_result *res, const char *test_dir);

#ifdef __cplusplus
}
#endif
#endif
