/* The typed plan and results of validate: the JSON a worker and the orchestrator exchange
 * reads back into what was written (a key written under one name and read under another
 * fails here), and the worker's dispatch check reports MATH as a typed count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ortqual/fileio.h"
#include "testutil.h"
#include "validate/validate-impl.h"

#define PROFILE OQ_SOURCE_DIR "/tests/fixtures/profiles/cuda_dynamic_encoder.json"

static char *path_in(const char *dir, const char *name)
{
    char *p = NULL;
    assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
    return p;
}

static void fill_plan(oq_validate_plan *p)
{
    memset(p, 0, sizeof *p);
    assert_int_equal(oq_config_parse("cuda:attention24:fp16:flash", &p->config, NULL), OQ_OK);
    p->model = strdup("/m/model.onnx");
    p->weights = strdup("/m/weights.npz");
    p->heads = 4;
    assert_int_equal(oq_plan_add_input(p, "x_in", "features", NULL), OQ_OK);
    assert_int_equal(oq_plan_add_input(p, "m_in", "mask", NULL), OQ_OK);
    p->mask_member = strdup("mask");
    for (int64_t i = 0; i < 2; i++) {
        oq_plan_batch *b = OQ_PUSH(p->batches, p->n_batches);
        b->index = i;
        b->inputs = strdup(i ? "/o/inputs_001.npz" : "/o/inputs_000.npz");
        b->ref = strdup(i ? "/w/ref_001.npz" : "/w/ref_000.npz");
        b->save = i ? strdup("/o/outputs_001.npz") : NULL;
    }
    p->repeat = 3;
    p->warmup = 2;
    p->tolerances = strdup("cls:rtol=1e-3");
    p->padded_length = 96;
    p->mask_form = OQ_MASK_SEQLEN;
    p->ort_lib = strdup("/ort/libonnxruntime.so");
    size_t k = 0;
    oq_strv_push(&p->ep_lib_paths, &k, "/ort/libcuda_ep.so");
    oq_strv_push(&p->ep_lib_names, &p->n_ep_libs, "cuda");
    k = 0;
    oq_strv_push(&p->ep_option_values, &k, "1");
    oq_strv_push(&p->ep_option_keys, &p->n_ep_options, "device_id");
    p->dispatch.enable = 1;
    p->dispatch.require = 1;
    oq_strv_push(&p->dispatch.expect, &p->dispatch.n_expect, "attn0=flash");
    p->dispatch.force_sdpa_kernel = 16;
    p->placement.enable = 1;
    p->placement.strict = 1;
    p->result = strdup("/w/result.json");
}

static void plan_round_trip(void **state)
{
    (void)state;
    char *dir = temp_dir("plan"), *path = path_in(dir, "plan.json");
    oq_validate_plan a, b;
    fill_plan(&a);
    oq_err err = {0};
    assert_int_equal(oq_plan_write(&a, path, &err), OQ_OK);
    assert_int_equal(oq_plan_read(path, &b, &err), OQ_OK);
    assert_string_equal(b.config.name, a.config.name);
    assert_int_equal(b.config.kernel, OQ_KERNEL_FLASH);
    assert_string_equal(b.model, a.model);
    assert_string_equal(b.weights, a.weights);
    assert_int_equal(b.heads, 4);
    assert_int_equal(b.n_inputs, 2);
    assert_string_equal(b.input_names[1], "m_in");
    assert_string_equal(b.input_members[1], "mask");
    assert_string_equal(b.mask_member, "mask");
    assert_int_equal(b.n_batches, 2);
    assert_string_equal(b.batches[1].ref, "/w/ref_001.npz");
    assert_null(b.batches[0].save);
    assert_string_equal(b.batches[1].save, "/o/outputs_001.npz");
    assert_int_equal(b.repeat, 3);
    assert_int_equal(b.warmup, 2);
    assert_string_equal(b.tolerances, a.tolerances);
    assert_int_equal(b.padded_length, 96);
    assert_int_equal(b.mask_form, OQ_MASK_SEQLEN); /* an enum again, not a string to compare */
    assert_string_equal(b.ort_lib, a.ort_lib);
    assert_int_equal(b.n_ep_libs, 1);
    assert_string_equal(b.ep_lib_paths[0], "/ort/libcuda_ep.so");
    assert_string_equal(b.ep_option_keys[0], "device_id");
    assert_string_equal(b.ep_option_values[0], "1");
    assert_true(b.dispatch.enable && b.dispatch.require);
    assert_int_equal(b.dispatch.n_expect, 1);
    assert_string_equal(b.dispatch.expect[0], "attn0=flash");
    assert_int_equal(b.dispatch.force_sdpa_kernel, 16);
    assert_true(b.placement.enable && !b.placement.require && b.placement.strict);
    assert_string_equal(b.result, a.result);
    oq_validate_plan_clear(&a);
    oq_validate_plan_clear(&b);

    /* a file that is not a plan is refused, naming the file */
    assert_int_equal(oq_write_file_atomic(path, "{\"config\": \"cpu:decomposed:fp32\"}", 33, 1, NULL), OQ_OK);
    assert_int_equal(oq_plan_read(path, &b, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, path));
    remove(path);
    rmdir(dir);
    free(path);
    free(dir);
}

/* A real comparison of a [1, 4, 2] output with 3 valid rows; `bad`: an error at element 1
 * and a NaN on the padding. */
static void fill_compare(oq_compare_result *c, const char *name, int bad)
{
    int64_t shape[3] = {1, 4, 2};
    oq_tensor *out, *ref;
    assert_int_equal(oq_tensor_create(&out, OQ_DTYPE_FLOAT32, 3, shape, name, NULL), OQ_OK);
    assert_int_equal(oq_tensor_create(&ref, OQ_DTYPE_FLOAT64, 3, shape, name, NULL), OQ_OK);
    for (int i = 0; i < 6; i++) ((float *)out->data)[i] = (float)i, ((double *)ref->data)[i] = i;
    if (bad) {
        ((float *)out->data)[1] += 0.5f;
        ((float *)out->data)[7] = NAN; /* padding that is not zero */
    }
    int64_t len = 3;
    oq_compare_opts co = oq_compare_opts_default(OQ_DTYPE_FLOAT32);
    co.lengths = &len;
    assert_int_equal(oq_compare_tensors(out, ref, &co, c, NULL), OQ_OK);
    oq_tensor_free(out);
    oq_tensor_free(ref);
}

static void fill_result(oq_config_result *r)
{
    memset(r, 0, sizeof *r);
    assert_int_equal(oq_config_parse("cuda:attention24:fp16:flash", &r->config, NULL), OQ_OK);
    r->status = OQ_VERDICT_FAILED;
    oq_result_reason(r, "batch %d, output %s", 0, "cls");
    r->required = 1;
    r->model_file = strdup("/o/sdpa_attention24_fp16.onnx");
    r->worker.ran = 1;
    snprintf(r->worker.ended, sizeof r->worker.ended, "exit 0");
    r->worker.seconds = 1.25;
    r->worker.stderr_tail = strdup("line one\nline two\n");
    r->reported = 1;
    oq_batch_result *b = OQ_PUSH(r->batches, r->n_batches);
    b->index = 0;
    b->timed = 1;
    b->first_call_s = 0.5;
    b->repeat = 3;
    b->warmup = 1;
    b->median_s = 0.125;
    b->compared = 1;
    fill_compare(OQ_PUSH(b->outputs, b->n_outputs), "cls", 1);
    fill_compare(OQ_PUSH(b->outputs, b->n_outputs), "reg", 0);
    b = OQ_PUSH(r->batches, r->n_batches);
    b->index = 1;
    b->timed = 1;
    b->median_s = NAN; /* repeat 0: no median */
    r->ort_version = strdup("1.29.0");
    r->ort_library = strdup("/ort/libonnxruntime.so.1.29.0");
    r->ort_api_version = 29;
    r->session_tried = 1;
    r->session_create_s = 0.75;
    oq_ep_device *d = OQ_PUSH(r->ep_devices, r->n_ep_devices);
    d->ep_name = strdup("CUDAExecutionProvider");
    d->ep_vendor = strdup("Microsoft");
    d->hw_type = OQ_HW_GPU;
    d->device_id = 0x2335;
    r->cost = (oq_worker_cost){1, 0.5, 1.5, 0.25, 0.125, 100, 200, 50, 300, 4096};
    r->evidence_json = strdup("{\"ort\": {\"version\": \"1.29.0\"}, \"cpus\": 2}");
    oq_dispatch_parser *p;
    const char *text = "AttentionKernelOptions: FLASH_ATTENTION=1 MATH=0\n"
                       "Operator=Attention Node=attn0 DataType=fp16 SdpaKernel=MATH\n";
    assert_int_equal(oq_dispatch_parse_text(text, strlen(text), &p, NULL), OQ_OK);
    assert_int_equal(oq_dispatch_log_copy(&r->dispatch.log, oq_dispatch_parser_log(p), NULL), OQ_OK);
    oq_dispatch_parser_free(p);
    r->dispatch.recorded = r->dispatch.checked = 1;
    r->dispatch.n_math_failures = 1;
    oq_strv_push(&r->dispatch.failures, &r->dispatch.n_failures, "attn0: expected FLASH_ATTENTION, got MATH (line 2)");
    oq_strv_push(&r->dispatch.advice, &r->dispatch.n_advice, "attn0 ran MATH: bool masks route to MATH");
    r->placement.recorded = 1;
    assert_int_equal(oq_placement_create(&r->placement.placement, NULL), OQ_OK);
    assert_int_equal(oq_placement_add_profile(r->placement.placement, PROFILE, NULL), OQ_OK);
    assert_int_equal(oq_placement_check(r->placement.placement, 0, &r->placement.report, NULL), OQ_OK);
    oq_strv_push(&r->placement.witness_errors, &r->placement.n_witness_errors, "no assignment info");
    r->teeth.ran = 1;
    r->teeth.worker.ran = 1;
    snprintf(r->teeth.worker.ended, sizeof r->teeth.worker.ended, "exit 0");
    r->teeth.rerun_status = OQ_VERDICT_FAILED;
    assert_int_equal(oq_dispatch_result_copy(&r->teeth.rerun_dispatch, &r->dispatch), OQ_OK);
    r->teeth.proved = 1;
}

static char *dump(const oq_config_result *r)
{
    json_t *j = oq_config_result_to_json(r);
    assert_non_null(j);
    char *s = json_dumps(j, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    json_decref(j);
    return s;
}

static void result_round_trip(void **state)
{
    (void)state;
    char *dir = temp_dir("result"), *path = path_in(dir, "result.json");
    oq_config_result a, b;
    fill_result(&a);
    oq_err err = {0};
    assert_int_equal(oq_config_result_write(&a, path, &err), OQ_OK);
    assert_int_equal(oq_config_result_read(path, &b, &err), OQ_OK);
    char *ja = dump(&a), *jb = dump(&b);
    assert_string_equal(ja, jb); /* nothing lost or renamed on the way */
    assert_int_equal(b.status, OQ_VERDICT_FAILED);
    assert_true(b.required);
    assert_string_equal(b.reason, "batch 0, output cls");
    assert_int_equal(b.n_batches, 2);
    assert_false(b.batches[0].outputs[0].passed);
    assert_true(b.batches[0].outputs[1].passed);
    assert_true(isnan(b.batches[1].median_s));
    assert_false(b.batches[1].compared);
    assert_int_equal(b.dispatch.n_math_failures, 1);
    assert_int_equal(b.dispatch.log.records[0].kernel, OQ_SDPA_MATH);
    assert_int_equal(b.dispatch.log.n_options, 1);
    assert_true(b.teeth.proved);
    assert_int_equal(b.teeth.rerun_dispatch.n_math_failures, 1);
    assert_int_equal(b.placement.placement->n_nodes, a.placement.placement->n_nodes);
    assert_int_equal(b.placement.report.passed, a.placement.report.passed);
    assert_int_equal(b.ep_devices[0].hw_type, OQ_HW_GPU);
    assert_int_equal(b.cost.max_batch_bytes, 4096);
    free(ja);
    free(jb);
    oq_config_result_clear(&a);
    oq_config_result_clear(&b);
    remove(path);
    rmdir(dir);
    free(path);
    free(dir);
}

/* The worker's dispatch proof without a GPU: a routing line written to the captured fd 1,
 * judged against the plan; MATH where FLASH was expected is a failure the orchestrator can
 * count without reading the failure's text. Under ASan this also checks that finishing the
 * check releases the parser. */
static void worker_dispatch_check(void **state)
{
    (void)state;
    char *dir = temp_dir("wcheck");
    oq_validate_plan plan;
    fill_plan(&plan);
    plan.placement.enable = 0;
    oq_wcheck c;
    oq_err err = {0};
    assert_int_equal(oq_wcheck_begin(&c, &plan, dir, &err), OQ_OK);
    const char line[] = "Operator=Attention Node=attn0 DataType=fp16 SdpaKernel=MATH\n";
    assert_int_equal(write(1, line, sizeof line - 1), (ssize_t)(sizeof line - 1));
    oq_config_result r = {0};
    int verdict = 1;
    char reason[512];
    oq_wcheck_finish(&c, &plan, NULL, &r, &verdict, reason, sizeof reason);
    assert_true(r.dispatch.recorded && r.dispatch.checked);
    assert_false(r.dispatch.passed);
    assert_int_equal(r.dispatch.log.n_records, 1);
    assert_int_equal(r.dispatch.n_math_failures, 1);
    assert_int_equal(verdict, 0); /* required: a failure, not a skip */
    assert_string_equal(reason, "dispatch: attn0: expected FLASH_ATTENTION, got MATH (line 1)");
    assert_null(c.parser);
    oq_config_result_clear(&r);
    oq_validate_plan_clear(&plan);
    rmdir(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plan_round_trip),
        cmocka_unit_test(result_round_trip),
        cmocka_unit_test(worker_dispatch_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
