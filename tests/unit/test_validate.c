/* The typed plan and results of validate: the JSON a worker and the orchestrator exchange
 * reads back into what was written (a key written under one name and read under another
 * fails here), the worker's dispatch check reports MATH as a typed count, and the merge of
 * sharded summaries adds up what the shards measured. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ortqual/convert.h"
#include "ortqual/export.h"
#include "ortqual/fileio.h"
#include "ortqual/graph.h"
#include "ortqual/npz.h"
#include "inspect/inputuse-impl.h"
#include "inspect/modelfile-impl.h"
#include "npz/npz-impl.h"
#include "runtime/runtime-impl.h"
#define TESTUTIL_GRAPH
#define TESTUTIL_VALIDATE
#include "testutil.h"
#include "validate/validate-impl.h"

#define PROFILE OQ_SOURCE_DIR "/tests/fixtures/profiles/cuda_dynamic_encoder.json"

static void fill_plan(oq_validate_plan *p, const char *batches_file)
{
    memset(p, 0, sizeof *p);
    assert_int_equal(oq_config_parse("cuda:attention24:fp16:flash", &p->config, NULL), OQ_OK);
    p->model = strdup("/m/model.onnx");
    p->weights = strdup("/m/weights.npz");
    p->heads = 4;
    assert_int_equal(oq_plan_add_input(p, "x_in", "features", NULL), OQ_OK);
    assert_int_equal(oq_plan_add_input(p, "m_in", "mask", NULL), OQ_OK);
    p->mask_member = strdup("mask");
    p->batches_file = strdup(batches_file);
    FILE *f = fopen(batches_file, "w");
    for (int64_t i = 0; i < 2; i++) {
        oq_plan_batch b = {i, i ? "/o/inputs_001.npz" : "/o/inputs_000.npz", i ? "/w/ref_001.npz" : "/w/ref_000.npz",
                           i ? "/o/outputs_001.npz" : NULL};
        assert_true(oq_plan_batch_put(f, &b));
        p->n_batches++;
    }
    fclose(f);
    p->repeat = 3;
    p->warmup = 2;
    p->padding = OQ_PADDING_AS_REFERENCE;
    p->kv_heads = 2;
    p->threads = 6;
    p->tolerances = strdup("cls:rtol=1e-3");
    const oq_seq_axis said[] = {{"y", 2}, {"pooled", OQ_SEQ_AXIS_NONE}, {"first", 0, 1, 1}};
    assert_true(oq_seq_axes_copy(&p->seq_axes, &p->n_seq_axes, said, 3));
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

static oq_status keep_batch(void *ctx, const oq_plan_batch *b, size_t i, oq_err *err)
{
    (void)err;
    json_t *j = json_pack("{s:I, s:s}", "i", (json_int_t)i, "ref", b->ref);
    if (b->save) json_object_set_new(j, "save", json_string(b->save));
    return json_array_append_new(ctx, j) ? OQ_ERR_NOMEM : OQ_OK;
}

static void plan_round_trip(void **state)
{
    (void)state;
    char *dir = temp_dir("plan"), *path = path_in(dir, "plan.json");
    oq_validate_plan a, b;
    char *batches = path_in(dir, "batches.jsonl");
    fill_plan(&a, batches);
    free(batches);
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
    assert_string_equal(b.batches_file, a.batches_file);
    json_t *got = json_array();
    assert_int_equal(oq_plan_batches_each(&b, keep_batch, got, &err), OQ_OK);
    assert_int_equal(json_array_size(got), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(got, 1), "ref")), "/w/ref_001.npz");
    assert_null(json_object_get(json_array_get(got, 0), "save"));
    assert_string_equal(json_string_value(json_object_get(json_array_get(got, 1), "save")), "/o/outputs_001.npz");
    json_decref(got);
    assert_int_equal(b.repeat, 3);
    assert_int_equal(b.warmup, 2);
    assert_int_equal(b.padding, OQ_PADDING_AS_REFERENCE);
    assert_int_equal(b.kv_heads, 2);
    assert_int_equal(b.threads, 6);
    assert_string_equal(b.tolerances, a.tolerances);
    assert_int_equal(b.n_seq_axes, 3);
    assert_string_equal(b.seq_axes[0].output, "y");
    assert_int_equal(b.seq_axes[0].axis, 2);
    assert_false(b.seq_axes[0].batch_said);
    assert_string_equal(b.seq_axes[1].output, "pooled");
    assert_int_equal(b.seq_axes[1].axis, OQ_SEQ_AXIS_NONE);
    assert_string_equal(b.seq_axes[2].output, "first"); /* a sequence-first output's batch axis kept */
    assert_int_equal(b.seq_axes[2].axis, 0);
    assert_true(b.seq_axes[2].batch_said);
    assert_int_equal(b.seq_axes[2].batch, 1);
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
    oq_validate_plan_clear(&b);
    /* no mask: the plan says so, and reads back without one */
    free(a.mask_member);
    a.mask_member = NULL;
    assert_int_equal(oq_plan_write(&a, path, &err), OQ_OK);
    assert_int_equal(oq_plan_read(path, &b, &err), OQ_OK);
    assert_null(b.mask_member);
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

/* A plan whose --ep-lib path is not UTF-8 carries its bytes as "b_hex"; a damaged one (odd
 * length, not hex) is a format error naming the file and the key, not "out of memory". */
static void plan_bad_hex_named(void **state)
{
    (void)state;
    char *dir = temp_dir("planhex"), *path = path_in(dir, "plan.json"), *batches = path_in(dir, "batches.jsonl");
    oq_validate_plan a, b;
    fill_plan(&a, batches);
    free(a.ep_lib_paths[0]);
    a.ep_lib_paths[0] = strdup("/ort/lib\xff.so"); /* not UTF-8: written with its bytes in hex */
    oq_err err = {0};
    assert_int_equal(oq_plan_write(&a, path, &err), OQ_OK);
    assert_int_equal(oq_plan_read(path, &b, &err), OQ_OK);
    assert_string_equal(b.ep_lib_paths[0], a.ep_lib_paths[0]);
    oq_validate_plan_clear(&b);
    static const char *const bad[][2] = {{"abc", "odd number"}, {"zz", "not lowercase hex"}, {"2f00", "00 byte"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *j = json_load_file(path, 0, NULL);
        json_t *exact = json_array_get(json_array_get(json_object_get(json_object_get(j, "runtime"), "ep_libs"), 0), 2);
        assert_non_null(json_object_get(exact, "b_hex"));
        json_object_set_new(exact, "b_hex", json_string(bad[i][0]));
        char *bad_path = path_in(dir, "bad.json");
        assert_int_equal(json_dump_file(j, bad_path, 0), 0);
        json_decref(j);
        err.msg[0] = '\0';
        assert_int_equal(oq_plan_read(bad_path, &b, &err), OQ_ERR_FORMAT);
        assert_non_null(strstr(err.msg, bad_path));
        assert_non_null(strstr(err.msg, "runtime.ep_libs[0].b_hex: malformed"));
        assert_non_null(strstr(err.msg, bad[i][1]));
        remove(bad_path);
        free(bad_path);
    }
    oq_validate_plan_clear(&a);
    remove(path);
    remove(batches);
    rmdir(dir);
    free(batches);
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
    co.tol.rtol = 1.0008144378662108e-4; /* more digits than 10: they must survive every file */
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
    r->threads = 3;
    r->worker.ran = 1;
    snprintf(r->worker.ended, sizeof r->worker.ended, "exit 0");
    r->worker.seconds = 1.25;
    r->worker.signal = 11;
    r->worker.stderr_tail = strdup("line one\nline two\n");
    oq_refusal_facts f = {.message = "Could not find an implementation for Elu(22) node with name 'n0'"};
    assert_int_equal(oq_refusal_explain(&f, &r->refusal, NULL), OQ_OK);
    r->reported = 1;
    oq_batch_result *b = OQ_PUSH(r->batches, r->n_batches);
    b->index = 0;
    b->timed = 1;
    b->first_call_s = 0.5;
    b->repeat = 3;
    b->warmup = 1;
    b->calls = 5;
    b->median_s = 0.125;
    b->compared = 1;
    oq_compare_result *c = malloc(sizeof *c);
    const char *names[2] = {"cls", "reg"};
    for (int k = 0; k < 2; k++) {
        fill_compare(c, names[k], k == 0);
        oq_batch_output_of(c, NULL, OQ_PUSH(b->outputs, b->n_outputs));
        assert_int_equal(oq_output_results_add_batch(&r->outputs, &r->n_outputs, c, b->index, NULL, NULL), OQ_OK);
    }
    free(c);
    b = OQ_PUSH(r->batches, r->n_batches);
    b->index = 1;
    b->timed = 1;
    b->median_s = NAN; /* repeat 0: no median */
    b->calls = 1;
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
    const oq_dispatch_failure fail = {OQ_DISPATCH_FAILURE_KERNEL, "attn0", "Attention", "fp16", "MATH", "FLASH_ATTENTION", 2};
    assert_int_equal(oq_dispatch_failure_add(&r->dispatch, "attn0: expected FLASH_ATTENTION, got MATH (line 2)", &fail),
                     OQ_OK);
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
    assert_int_equal(b.worker.signal, 11);
    assert_string_equal(b.refusal.id, "no-kernel");
    assert_string_equal(b.refusal.raw, a.refusal.raw);
    assert_string_equal(b.reason, "batch 0, output cls");
    assert_int_equal(b.n_batches, 2);
    assert_false(b.batches[0].outputs[0].passed);
    assert_true(b.batches[0].outputs[1].passed);
    assert_true(isnan(b.batches[1].median_s));
    assert_int_equal(b.batches[0].calls, 5);
    assert_int_equal(b.batches[1].calls, 1);
    assert_int_equal(b.threads, 3);
    assert_false(b.batches[1].compared);
    assert_int_equal(b.dispatch.n_math_failures, 1);
    assert_int_equal(b.dispatch.log.records[0].kernel, OQ_SDPA_MATH);
    assert_int_equal(b.dispatch.log.n_options, 1);
    assert_true(b.teeth.proved);
    assert_int_equal(b.teeth.rerun_dispatch.n_math_failures, 1);
    assert_int_equal(b.placement.placement->n_nodes, a.placement.placement->n_nodes);
    assert_int_equal(b.placement.report.passed, a.placement.report.passed);
    assert_int_equal(b.ep_devices[0].hw_type, OQ_HW_GPU);
    /* each output over the batches: worst elements with their batch, histograms summed */
    assert_int_equal(b.n_outputs, 2);
    assert_string_equal(b.outputs[0].all.name, "cls");
    assert_false(b.outputs[0].all.passed);
    assert_int_equal(b.outputs[0].n_batches, 1);
    assert_int_equal(b.outputs[0].worst_batch[0], 0);
    assert_true(b.outputs[0].all.err_hist.zero > 0);
    /* the exact sums and what comes from them, and the tolerance to its last digit */
    assert_true(b.outputs[0].sums_known);
    assert_true(oq_fsum_value(&b.outputs[0].sum_ref_sq) == oq_fsum_value(&a.outputs[0].sum_ref_sq));
    assert_true(b.outputs[0].all.rel_l2 == a.outputs[0].all.rel_l2 && b.outputs[0].all.rms == a.outputs[0].all.rms);
    assert_true(b.outputs[0].all.tol.rtol == 1.0008144378662108e-4);
    assert_true(b.batches[0].outputs[0].tol.rtol == 1.0008144378662108e-4);
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

/* `path`'s first key set to "schema": `schema`, or removed (NULL): a file of an older ortqual. */
static void set_schema(const char *path, const char *schema)
{
    json_t *j = json_load_file(path, 0, NULL);
    assert_non_null(j);
    assert_string_equal(json_object_iter_key(json_object_iter(j)), "schema"); /* the first key */
    if (schema) json_object_set_new(j, "schema", json_string(schema));
    else json_object_del(j, "schema");
    assert_int_equal(json_dump_file(j, path, JSON_PRESERVE_ORDER), 0);
    json_decref(j);
}

/* The worker's plan and result files say their schema first; a file of another schema is
 * refused, naming the file and both schemas; one without (an older ortqual's) still reads. */
static void scratch_files_schema(void **state)
{
    (void)state;
    char *dir = temp_dir("scratch"), *plan = path_in(dir, "plan.json"), *result = path_in(dir, "result.json");
    char *batches = path_in(dir, "batches.jsonl");
    oq_validate_plan pa, pb;
    oq_config_result ra, rb;
    fill_plan(&pa, batches);
    fill_result(&ra);
    oq_err err = {0};
    assert_int_equal(oq_plan_write(&pa, plan, &err), OQ_OK);
    assert_int_equal(oq_config_result_write(&ra, result, &err), OQ_OK);
    json_t *j = json_load_file(plan, JSON_PRESERVE_ORDER, NULL);
    assert_string_equal(json_string_value(json_object_get(j, "schema")), OQ_WORKER_PLAN_SCHEMA);
    json_decref(j);
    j = json_load_file(result, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(j, "schema")), OQ_WORKER_RESULT_SCHEMA);
    json_decref(j);
    set_schema(plan, "ortqual.worker-plan/9");
    set_schema(result, OQ_WORKER_PLAN_SCHEMA); /* a plan where a result belongs */
    assert_int_equal(oq_plan_read(plan, &pb, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, plan));
    assert_non_null(strstr(err.msg, "schema ortqual.worker-plan/9, not " OQ_WORKER_PLAN_SCHEMA));
    assert_int_equal(oq_config_result_read(result, &rb, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, result));
    assert_non_null(strstr(err.msg, "schema " OQ_WORKER_PLAN_SCHEMA ", not " OQ_WORKER_RESULT_SCHEMA));
    set_schema(plan, NULL);
    set_schema(result, NULL);
    assert_int_equal(oq_plan_read(plan, &pb, &err), OQ_OK);
    assert_string_equal(pb.result, pa.result);
    assert_int_equal(oq_config_result_read(result, &rb, &err), OQ_OK);
    assert_int_equal(rb.n_batches, ra.n_batches);
    oq_validate_plan_clear(&pa);
    oq_validate_plan_clear(&pb);
    oq_config_result_clear(&ra);
    oq_config_result_clear(&rb);
    remove(plan);
    remove(result);
    remove(batches);
    rmdir(dir);
    free(plan);
    free(result);
    free(batches);
    free(dir);
}

/* Batch i of outputs_over_batches (4 elements of ref_all and out_all), compared alone. */
static void batch_compare(oq_compare_result *c, int i, const double *ref_all, double *out_all)
{
    int64_t shape[2] = {1, 4};
    oq_tensor *out, *ref;
    assert_int_equal(oq_tensor_wrap(&out, OQ_DTYPE_FLOAT64, 2, shape, out_all + 4 * i, "y", NULL), OQ_OK);
    assert_int_equal(oq_tensor_wrap(&ref, OQ_DTYPE_FLOAT64, 2, shape, (void *)(ref_all + 4 * i), "y", NULL), OQ_OK);
    oq_compare_opts co = oq_compare_opts_default(OQ_DTYPE_FLOAT64);
    assert_int_equal(oq_compare_tensors(out, ref, &co, c, NULL), OQ_OK);
    oq_tensor_free(out);
    oq_tensor_free(ref);
}

/* An output's numbers over its batches are those of one comparison of all of them: rel_l2 is
 * ||d|| / ||ref|| over every element (it was the largest batch's: 0.37 here, where a batch of
 * references 1000 times smaller errs as much as the others, against 4.8e-4 over all), mean_abs
 * and rms too; and the same double whatever the grouping: batch by batch as a worker adds them,
 * or two shards' aggregates merged. */
static void outputs_over_batches(void **state)
{
    (void)state;
    enum { B = 3 };
    const double scale[B] = {1.0, 1e-3, 1.0};
    double ref[4 * B], out[4 * B];
    for (int i = 0; i < 4 * B; i++) {
        ref[i] = scale[i / 4] * (1 + i % 4);
        out[i] = ref[i] + (i % 4 == 1 ? 1e-3 * (1 + i / 4) : 0.0);
    }
    oq_compare_result *c = malloc(sizeof *c), *whole = malloc(sizeof *whole);
    oq_output_result *by_batch = NULL, *first = NULL, *rest = NULL;
    size_t n_by_batch = 0, n_first = 0, n_rest = 0;
    double largest = 0;
    for (int i = 0; i < B; i++) {
        batch_compare(c, i, ref, out);
        largest = fmax(largest, c->rel_l2);
        assert_int_equal(oq_output_results_add_batch(&by_batch, &n_by_batch, c, i, NULL, NULL), OQ_OK);
        if (i == 0) assert_int_equal(oq_output_results_add_batch(&first, &n_first, c, i, NULL, NULL), OQ_OK);
        else assert_int_equal(oq_output_results_add_batch(&rest, &n_rest, c, i, NULL, NULL), OQ_OK);
    }
    int64_t shape[2] = {1, 4 * B};
    oq_tensor *o, *r;
    assert_int_equal(oq_tensor_wrap(&o, OQ_DTYPE_FLOAT64, 2, shape, out, "y", NULL), OQ_OK);
    assert_int_equal(oq_tensor_wrap(&r, OQ_DTYPE_FLOAT64, 2, shape, ref, "y", NULL), OQ_OK);
    oq_compare_opts co = oq_compare_opts_default(OQ_DTYPE_FLOAT64);
    assert_int_equal(oq_compare_tensors(o, r, &co, whole, NULL), OQ_OK);
    const oq_compare_result *all = &by_batch[0].all;
    assert_true(fabs(all->rel_l2 - whole->rel_l2) <= 1e-15 * whole->rel_l2);
    assert_true(fabs(all->rms - whole->rms) <= 1e-15 * whole->rms);
    assert_true(fabs(all->mean_abs - whole->mean_abs) <= 1e-15 * whole->mean_abs);
    assert_true(largest > 100 * all->rel_l2);
    oq_output_result_merge(&first[0], &rest[0]); /* shards 0 and 1-2 merged */
    assert_true(first[0].all.rel_l2 == all->rel_l2 && first[0].all.rms == all->rms &&
                first[0].all.mean_abs == all->mean_abs);
    oq_tensor_free(o);
    oq_tensor_free(r);
    free(by_batch);
    free(first);
    free(rest);
    free(c);
    free(whole);
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
    char *batches = path_in(dir, "batches.jsonl");
    fill_plan(&plan, batches);
    free(batches);
    plan.placement.enable = 0;
    oq_wcheck c;
    oq_err err = {0};
    assert_int_equal(oq_wcheck_begin(&c, &plan, dir, &err), OQ_OK);
    const char line[] = "Operator=Attention Node=attn0 DataType=fp16 SdpaKernel=MATH\n";
    assert_int_equal(write(1, line, sizeof line - 1), (ssize_t)(sizeof line - 1));
    oq_config_result r = {0};
    int verdict = 1;
    char reason[512];
    oq_wcheck_finish(&c, &plan, NULL, NULL, &r, &verdict, reason, sizeof reason);
    assert_true(r.dispatch.recorded && r.dispatch.checked);
    assert_false(r.dispatch.passed);
    assert_int_equal(r.dispatch.log.n_records, 1);
    assert_int_equal(r.dispatch.n_math_failures, 1);
    assert_int_equal(verdict, 0); /* required: a failure, not a skip */
    assert_string_equal(reason, "dispatch: attn0: expected FLASH_ATTENTION, got MATH (line 1)");
    assert_null(c.parser);
    oq_config_result_clear(&r);
    /* the same line for a reference on the GPU (as the orchestrator plans it: no rules, not
     * required): recorded as evidence, its kernel choice not judged */
    plan.is_reference = 1;
    plan.dispatch.require = 0;
    for (size_t i = 0; i < plan.dispatch.n_expect; i++) free(plan.dispatch.expect[i]);
    plan.dispatch.n_expect = 0;
    assert_int_equal(oq_wcheck_begin(&c, &plan, dir, &err), OQ_OK);
    assert_int_equal(write(1, line, sizeof line - 1), (ssize_t)(sizeof line - 1));
    verdict = 0;
    oq_wcheck_finish(&c, &plan, NULL, NULL, &r, &verdict, reason, sizeof reason);
    assert_true(r.dispatch.recorded);
    assert_false(r.dispatch.checked);
    assert_int_equal(verdict, 1);
    oq_config_result_clear(&r);
    oq_validate_plan_clear(&plan);
    rmdir(dir);
    free(dir);
}

/* validate's checks of `model` (in `dir`) under `config`, ORT's routing line saying `line`: the
 * one advice given, malloc'ed. */
static char *advice_on_run(const char *dir, const char *model, const char *config, const char *line)
{
    char *batches = path_in(dir, "batches.jsonl");
    oq_validate_plan plan;
    fill_plan(&plan, batches);
    plan.placement.enable = 0;
    assert_int_equal(oq_config_parse(config, &plan.config, NULL), OQ_OK);
    free(plan.model);
    plan.model = strdup(model);
    oq_wcheck c;
    oq_err err = {0};
    assert_int_equal(oq_wcheck_begin(&c, &plan, dir, &err), OQ_OK);
    assert_int_equal(write(1, line, strlen(line)), (ssize_t)strlen(line));
    oq_config_result r = {0};
    int verdict = 1;
    char reason[512];
    oq_wcheck_finish(&c, &plan, NULL, NULL, &r, &verdict, reason, sizeof reason);
    assert_int_equal(r.dispatch.n_advice, 1);
    char *advice = strdup(r.dispatch.advice[0]);
    oq_config_result_clear(&r);
    oq_validate_plan_clear(&plan);
    free(batches);
    return advice;
}

/* Attention computed in bfloat16 by a model of yours whose Q is a Cast's output (declared
 * nowhere, as `convert --attention-dtype bf16` writes it): the advice on its MATH run names
 * bfloat16 (it took the float32 of a configuration that is not fp16, and said flash has no
 * float32 kernel). */
static void advice_knows_bf16_attention(void **state)
{
    (void)state;
    char *dir = temp_dir("bf16adv"), *model = path_in(dir, "bf16.onnx");
    oq_opset ops[] = {{"", 23}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "bf16", &g, NULL), OQ_OK);
    const oq_dim blc[] = {OQ_DIM_SYM("batch"), OQ_DIM_SYM("seq"), OQ_DIM(16)};
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 3, blc);
    const oq_attr to_bf16[] = {OQ_ATTR_I("to", OQ_DTYPE_BFLOAT16)}, to_f32[] = {OQ_ATTR_I("to", OQ_DTYPE_FLOAT32)};
    const oq_attr heads[] = {OQ_ATTR_I("q_num_heads", 2), OQ_ATTR_I("kv_num_heads", 2)};
    const char *q = oq_graph_op(g, "Cast", 1, (const char *[]){"x"}, 1, to_bf16), *y = oq_graph_fresh_name(g, "y");
    assert_int_equal(oq_graph_add_node(g, "Attention", NULL, "attn", 3, (const char *[]){q, q, q}, 1, &y, 2, heads),
                     OQ_OK);
    oq_graph_add_output(g, oq_graph_op(g, "Cast", 1, &y, 1, to_f32), "out", OQ_DTYPE_FLOAT32, 3, blc);
    assert_int_equal(oq_graph_write(g, model, 1, NULL), OQ_OK);
    oq_graph_free(g);
    char *a = advice_on_run(dir, model, "cuda:model:bf16:flash",
                            "Operator=Attention Node=attn DataType=bf16 SdpaKernel=MATH\n");
    if (!strstr(a, "attn ran MATH, expected FLASH_ATTENTION") || !strstr(a, "bfloat16") || strstr(a, "float32"))
        fail_msg("advice: %s", a);
    free(a);
    free(model);
    oq_remove_tree(dir);
    free(dir);
}

/* A model of yours whose Q is [B, 2, L, head] as the graph computes it (x [B, L, 24] through a
 * Reshape and a Transpose, declared nowhere; head <= 0: x's width is a named dimension, so
 * nothing fixes it) and whose scale is 0.25, Attention's default for a head size of 16: the
 * advice on its MATH run. */
static char *advice_on_math(const char *dir, int64_t head)
{
    char *model = path_in(dir, "heads.onnx");
    oq_opset ops[] = {{"", 23}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "heads", &g, NULL), OQ_OK);
    const oq_dim blc[] = {OQ_DIM_SYM("batch"), OQ_DIM_SYM("seq"), head > 0 ? OQ_DIM(24) : OQ_DIM_SYM("hidden")};
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT16, 3, blc);
    const int64_t split[] = {0, 0, 2, head > 0 ? head : -1}, perm[] = {0, 2, 1, 3};
    const oq_attr tr[] = {OQ_ATTR_IS("perm", 4, perm)}, sc[] = {OQ_ATTR_F("scale", 0.25f)};
    const char *r = oq_graph_op(g, "Reshape", 2, (const char *[]){"x", oq_graph_const_i64(g, "split", 4, split)}, 0,
                                NULL);
    const char *q = oq_graph_op(g, "Transpose", 1, &r, 1, tr), *y = oq_graph_fresh_name(g, "y");
    assert_int_equal(oq_graph_add_node(g, "Attention", NULL, "attn", 3, (const char *[]){q, q, q}, 1, &y, 1, sc),
                     OQ_OK);
    const oq_dim out[] = {OQ_DIM_SYM("batch"), OQ_DIM(2), OQ_DIM_SYM("seq"), OQ_DIM_SYM("head")};
    oq_graph_add_output(g, y, "out", OQ_DTYPE_FLOAT16, 4, out);
    assert_int_equal(oq_graph_write(g, model, 1, NULL), OQ_OK);
    oq_graph_free(g);
    char *a = advice_on_run(dir, model, "cuda:model:fp16:flash",
                            "Operator=Attention Node=attn DataType=fp16 SdpaKernel=MATH\n");
    free(model);
    return a;
}

/* The advice reads 12 from the shapes, the size flash refuses (it read 16 off the scale and
 * found no rule); where the graph does not fix the head axis, "head size unknown". */
static void advice_head_size_from_shapes(void **state)
{
    (void)state;
    char *dir = temp_dir("headadv"), *a = advice_on_math(dir, 12);
    if (!strstr(a, "(here 12)") || strstr(a, "from its scale") || strstr(a, "head size 16")) fail_msg("advice: %s", a);
    free(a);
    a = advice_on_math(dir, 0);
    if (!strstr(a, "head size unknown") || strstr(a, "head size 16")) fail_msg("advice: %s", a);
    free(a);
    oq_remove_tree(dir);
    free(dir);
}

/* ---- any input signature, end to end in this process ---------------------------------- */

/* A model of int64 token ids, a bool mask, a KV-cache-like [batch,2,past,4] tensor and a scalar,
 * with an int64, a bool, a float per-token and a float cache output. */
static void signature_model(const char *path)
{
    oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "sig", &g, NULL), OQ_OK);
    const oq_dim bl[] = {OQ_DIM_SYM("batch"), OQ_DIM_SYM("seq")};
    const oq_dim cache[] = {OQ_DIM_SYM("batch"), OQ_DIM(2), OQ_DIM_SYM("past"), OQ_DIM(4)};
    oq_graph_add_input(g, "ids", OQ_DTYPE_INT64, 2, bl);
    oq_graph_add_input(g, "attention_mask", OQ_DTYPE_BOOL, 2, bl);
    oq_graph_add_input(g, "past", OQ_DTYPE_FLOAT32, 4, cache);
    oq_graph_add_input(g, "scale", OQ_DTYPE_FLOAT32, 0, NULL);
    oq_graph_add_input(g, "q8", OQ_DTYPE_UINT8, 2, bl);
    const char *ids = oq_graph_op(g, "Identity", 1, (const char *[]){"ids"}, 0, NULL);
    const char *q8 = oq_graph_op(g, "Identity", 1, (const char *[]){"q8"}, 0, NULL);
    const char *pad = oq_graph_op(g, "Not", 1, (const char *[]){"attention_mask"}, 0, NULL);
    const oq_attr to_float = OQ_ATTR_I("to", OQ_DTYPE_FLOAT32);
    const char *f = oq_graph_op(g, "Cast", 1, (const char *[]){"ids"}, 1, &to_float);
    const char *y = oq_graph_op(g, "Mul", 2, (const char *[]){f, "scale"}, 0, NULL);
    const char *pc = oq_graph_op(g, "Mul", 2, (const char *[]){"past", "scale"}, 0, NULL);
    oq_graph_add_output(g, ids, "ids_out", OQ_DTYPE_INT64, 2, bl);
    oq_graph_add_output(g, pad, "padding", OQ_DTYPE_BOOL, 2, bl);
    oq_graph_add_output(g, y, "y", OQ_DTYPE_FLOAT32, 2, bl);
    oq_graph_add_output(g, pc, "present", OQ_DTYPE_FLOAT32, 4, cache);
    oq_graph_add_output(g, q8, "q8_out", OQ_DTYPE_UINT8, 2, bl);
    assert_int_equal(oq_graph_write(g, path, 1, NULL), OQ_OK);
    oq_graph_free(g);
}

static oq_tensor *tensor_of(const char *name, oq_dtype dt, int32_t nd, const int64_t *shape)
{
    oq_tensor *t;
    assert_int_equal(oq_tensor_create(&t, dt, nd, shape, name, NULL), OQ_OK);
    return t;
}

/* io.npz: the inputs (lengths 3 and 1 of 4, the cache `past_b` events long) and what the model
 * computes from them, under the outputs' names. */
static void signature_io(const char *path, int64_t past_b)
{
    const int64_t bl[] = {2, 4}, cache[] = {past_b, 2, 3, 4}, len[] = {3, 1};
    oq_tensor *t[10] = {tensor_of("ids", OQ_DTYPE_INT64, 2, bl), tensor_of("attention_mask", OQ_DTYPE_BOOL, 2, bl),
                        tensor_of("past", OQ_DTYPE_FLOAT32, 4, cache), tensor_of("scale", OQ_DTYPE_FLOAT32, 0, NULL),
                        tensor_of("ids_out", OQ_DTYPE_INT64, 2, bl), tensor_of("padding", OQ_DTYPE_BOOL, 2, bl),
                        tensor_of("y", OQ_DTYPE_FLOAT32, 2, bl), tensor_of("present", OQ_DTYPE_FLOAT32, 4, cache),
                        tensor_of("q8", OQ_DTYPE_UINT8, 2, bl), tensor_of("q8_out", OQ_DTYPE_UINT8, 2, bl)};
    oq_tensor_set_f64(t[3], 0, 0.5);
    for (int64_t i = 0; i < 8; i++) {
        int valid = i % 4 < len[i / 4];
        int64_t id = valid ? (INT64_C(1) << 40) + i : 0; /* ids beyond float32's precision */
        ((int64_t *)t[0]->data)[i] = ((int64_t *)t[4]->data)[i] = id;
        oq_tensor_set_f64(t[1], i, valid);
        oq_tensor_set_f64(t[5], i, !valid);
        oq_tensor_set_f64(t[6], i, (double)(float)id * 0.5);
        oq_tensor_set_f64(t[8], i, valid ? 200 + (double)i : 0); /* quantized values past int8 */
        oq_tensor_set_f64(t[9], i, valid ? 200 + (double)i : 0);
    }
    for (int64_t i = 0; i < oq_tensor_numel(t[2]); i++) {
        oq_tensor_set_f64(t[2], i, 0.25 * (double)i - 3);
        oq_tensor_set_f64(t[7], i, (0.25 * (double)i - 3) * 0.5);
    }
    assert_int_equal(oq_npz_write(path, 10, (const oq_tensor *const *)t, 0, 1, NULL), OQ_OK);
    for (size_t i = 0; i < 10; i++) oq_tensor_free(t[i]);
}

static oq_status run_signature(const char *dir, const char *model, const char *io, const char *out,
                               oq_validate_summary **s, oq_err *err)
{
    char outdir[512];
    snprintf(outdir, sizeof outdir, "%s/%s", dir, out);
    oq_config cfg[2];
    const char *files[] = {io};
    oq_validate_opts o;
    validate_user_expected(&o, cfg, model, files, 1, outdir);
    return oq_validate_run(&o, s, err);
}

static const oq_batch_output *output_of(const oq_validate_summary *s, const char *name)
{
    const oq_batch_result *b = &s->configs[1].batches[0];
    for (size_t i = 0; i < b->n_outputs; i++)
        if (!strcmp(b->outputs[i].name, name)) return &b->outputs[i];
    fail_msg("no output %s", name);
    return NULL;
}

/* int64 ids, a bool mask, a rank-4 cache, a scalar and uint8 values read by name; int and bool outputs
 * compared exactly, the per-token ones on valid elements, the cache (whose axes are not the
 * mask's) on every element; a changed id fails by one; inconsistent named dims are refused. */
static void any_signature(void **state)
{
    (void)state;
    char *dir = temp_dir("signature");
    char *model = path_in(dir, "sig.onnx"), *io = path_in(dir, "io.npz"), *bad = path_in(dir, "bad.npz");
    signature_model(model);
    signature_io(io, 2);
    oq_validate_summary *s = NULL;
    oq_err err = {0};
    assert_int_equal(run_signature(dir, model, io, "ok", &s, &err), OQ_OK);
    if (s->verdict != OQ_RUN_PASSED) fail_msg("%s: %s", oq_run_verdict_name(s->verdict), s->verdict_reason);
    assert_string_equal(s->mask_input, "attention_mask");
    assert_int_equal(s->n_input_names, 5);
    /* the run keeps no batch record, it counts them; summary.json has them */
    assert_int_equal(s->configs[1].n_batches, 0);
    assert_int_equal(s->configs[1].totals.n, 1);
    assert_int_equal(s->configs[1].totals.compared, 1);
    assert_int_equal(s->configs[1].totals.failed, 0);
    oq_validate_summary_free(s);
    char *back_path = path_in(dir, "ok/summary.json");
    assert_int_equal(oq_validate_summary_read(back_path, &s, &err), OQ_OK);
    free(back_path);
    assert_int_equal(s->configs[1].n_batches, 1);
    assert_int_equal(s->configs[1].totals.n, 1);
    assert_true(output_of(s, "q8_out")->exact && output_of(s, "q8_out")->passed);
    assert_true(output_of(s, "ids_out")->exact && output_of(s, "ids_out")->masked);
    assert_int_equal(output_of(s, "ids_out")->num_valid, 4);
    assert_true(output_of(s, "padding")->exact);
    assert_false(output_of(s, "present")->masked);
    assert_int_equal(output_of(s, "present")->num_valid, 2 * 2 * 3 * 4);
    assert_true(output_of(s, "y")->masked && output_of(s, "y")->padding_checked);
    oq_validate_summary_free(s);

    /* one id off by one, beyond 2^40: the exact comparison sees it */
    oq_npz *z;
    assert_int_equal(oq_npz_read(io, &z, NULL), OQ_OK);
    oq_tensor *ids_out;
    assert_int_equal(oq_npz_take(z, "ids_out", &ids_out, NULL), OQ_OK);
    ((int64_t *)ids_out->data)[1] += 1;
    const oq_tensor *rest[10];
    size_t n = 0;
    for (size_t i = 0; i < z->count; i++) rest[n++] = z->tensors[i];
    rest[n++] = ids_out;
    assert_int_equal(oq_npz_write(bad, n, rest, 0, 1, NULL), OQ_OK);
    oq_tensor_free(ids_out);
    oq_npz_free(z);
    assert_int_equal(run_signature(dir, model, bad, "bad", &s, &err), OQ_OK);
    assert_int_equal(s->verdict, OQ_RUN_FAILED);
    assert_int_equal(s->exit_status, 1);
    assert_non_null(strstr(s->configs[1].reason, "batch 0, output ids_out: FAIL"));
    assert_non_null(strstr(s->configs[1].reason, "worst [0,1]"));
    oq_validate_summary_free(s);

    /* the cache says 3 events, the ids 2: refused before any model runs */
    signature_io(bad, 3);
    assert_int_equal(run_signature(dir, model, bad, "dims", &s, &err), OQ_ERR_SHAPE);
    assert_non_null(strstr(err.msg, "dimension 'batch' is 2 in member 'ids' [2,4] but 3 in member 'past' [3,2,3,4]"));
    assert_null(s);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
    free(model);
    free(io);
    free(bad);
}

/* write_symbolic_attention24's model, and its inputs fed with mlen 7 over 5 keys, and a y for
 * `expected`. */
static void symbolic_mask_files(const char *model, const char *io)
{
    write_symbolic_attention24(model);
    const int64_t qs[] = {2, 2, 5, 4}, ms[] = {2, 1, 5, 7};
    oq_tensor *t[5] = {tensor_of("q", OQ_DTYPE_FLOAT32, 4, qs), tensor_of("k", OQ_DTYPE_FLOAT32, 4, qs),
                       tensor_of("v", OQ_DTYPE_FLOAT32, 4, qs), tensor_of("m", OQ_DTYPE_FLOAT32, 4, ms),
                       tensor_of("y", OQ_DTYPE_FLOAT32, 4, qs)};
    assert_int_equal(oq_npz_write(io, 5, (const oq_tensor *const *)t, 0, 1, NULL), OQ_OK);
    for (size_t i = 0; i < 5; i++) oq_tensor_free(t[i]);
}

/* ORT's refusal of a batch is explained by the sizes the batch fed: the mask (mlen 7) is longer
 * than the keys (seq 5), the model's fault. From the declared names alone the orchestrator
 * called it ORT's departure "if the mask is shorter", with padding as the fix. */
static void refusal_by_the_batch_sizes(void **state)
{
    (void)state;
    char *dir = temp_dir("refusal_sizes");
    char *model = path_in(dir, "symbolic.onnx"), *io = path_in(dir, "io.npz");
    symbolic_mask_files(model, io);
    oq_validate_summary *s = NULL;
    oq_err err = {0};
    assert_int_equal(run_signature(dir, model, io, "out", &s, &err), OQ_OK);
    assert_int_equal(s->verdict, OQ_RUN_ERROR);
    const oq_config_result *r = &s->configs[1];
    assert_int_equal(r->status, OQ_VERDICT_ERROR);
    if (!r->refusal.id || strcmp(r->refusal.id, "attn-mask-shape"))
        fail_msg("%s: %s", r->refusal.id ? r->refusal.id : "(no pattern)", r->refusal.why ? r->refusal.why : "");
    assert_string_equal(r->refusal.inputs, "K 'k' float32 [batch=2,2,seq=5,4]; attn_mask 'm' float32 "
                                           "[batch=2,1,seq=5,mlen=7]");
    assert_non_null(strstr(r->refusal.why, "attn_mask axis 3 is 7; T (past 0 + current keys 5) is 5"));
    assert_non_null(strstr(r->refusal.raw, "inconsistent total_sequence_length"));
    assert_non_null(strstr(r->reason, "refused by ONNX Runtime [attn-mask-shape] at node 'attn0' (Attention)"));
    oq_validate_summary_free(s);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
    free(model);
    free(io);
}

/* ---- the mask's axes in an output ------------------------------------------------------- */

typedef struct axes_out {
    const char *name;
    int32_t rank;
    oq_dim dims[4];
} axes_out;

/* A model of input `mask` declared `md` and the outputs `outs` as declared there, inspected. */
static oq_model_info *axes_model(const oq_dim *md, const axes_out *outs, size_t n)
{
    oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "axes", &g, NULL), OQ_OK);
    oq_graph_add_input(g, "mask", OQ_DTYPE_FLOAT32, 2, md);
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, -1, NULL);
    for (size_t i = 0; i < n; i++)
        oq_graph_add_output(g, "x", outs[i].name, OQ_DTYPE_FLOAT32, outs[i].rank, outs[i].dims);
    uint8_t *buf = NULL;
    size_t len = 0;
    assert_int_equal(oq_graph_serialize(g, &buf, &len, NULL), OQ_OK);
    oq_graph_free(g);
    oq_model_info *mi = NULL;
    assert_int_equal(oq_model_inspect_bytes(buf, len, "axes.onnx", &mi, NULL), OQ_OK);
    free(buf);
    return mi;
}

/* The axes of `name` shaped `shape` in a batch of B = 2 events padded to L = 4 (B, L given). */
static oq_status axes_of(const oq_model_info *mi, const oq_seq_axis *said, size_t n_said, const char *name,
                         int32_t ndim, const int64_t *shape, int64_t b, int64_t l, oq_mask_axes *a, oq_err *err)
{
    oq_axes_rule r = {"axes.onnx", mi, "mask", n_said, said, b, l};
    return oq_output_mask_axes(&r, name, ndim, shape, a, err);
}

#define ASSERT_AXES(a, b_, s_) assert_true((a).masked && (a).batch == (b_) && (a).seq == (s_))

/* Sizes alone (static shapes, no names, no denotations): axis 0 of size B and the one later
 * axis of size L (where the sizes can tell: mask_axes_sizes_tell_nothing); two such axes (the heads of [B,H,L,D] with H = L) are refused naming the axes
 * and the fix, never guessed; the caller's --seq-axis says which, checked against the shape. */
static void mask_axes_by_sizes(void **state)
{
    (void)state;
    const axes_out outs[] = {{"y", 4, {OQ_DIM(2), OQ_DIM(4), OQ_DIM(4), OQ_DIM(2)}},
                             {"h", 3, {OQ_DIM(2), OQ_DIM(4), OQ_DIM(8)}}};
    oq_model_info *mi = axes_model((oq_dim[]){OQ_DIM(2), OQ_DIM(4)}, outs, 2);
    oq_mask_axes a;
    oq_err err = {0};
    const int64_t y[] = {2, 4, 4, 2}, h[] = {2, 4, 8}, sq[] = {4, 4, 4}, three[] = {2, 4, 4, 4}, other[] = {3, 4, 8};
    assert_int_equal(axes_of(mi, NULL, 0, "h", 3, h, 2, 4, &a, &err), OQ_ERR_INVALID_ARG); /* y: L is a width */
    assert_non_null(strstr(err.msg, "but so do two axes of output 'y' [2,4,4,2]"));
    assert_int_equal(axes_of(mi, NULL, 0, "h", 3, other, 2, 4, &a, &err), OQ_OK); /* axis 0 is not B */
    assert_false(a.masked);
    assert_int_equal(axes_of(mi, NULL, 0, "y", 4, y, 2, 4, &a, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "axes.onnx: output 'y' shape [2,4,4,2]: axes 1 and 2 both have the mask's padded "
                                 "length 4 and the model names neither: say which with seq_axes y=1 or y=2, or "
                                 "export with named dynamic axes (or the sequence axis denoted DATA_TIME)");
    assert_int_equal(axes_of(NULL, NULL, 0, "y", 4, y, 2, 4, &a, &err), OQ_ERR_INVALID_ARG); /* no model read */
    assert_int_equal(axes_of(mi, NULL, 0, "z", 4, three, 2, 4, &a, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "axes 1, 2 and 3 all have the mask's padded length 4 and the model names none "
                                    "of them: say which with seq_axes z=1, z=2 or z=3"));
    /* B = L: axis 0 may as well be the sequence (sequence first), refused naming both readings */
    assert_int_equal(axes_of(mi, NULL, 0, "h", 3, sq, 4, 4, &a, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "output 'h' shape [4,4,4]: axes 0, 1 and 2 all have size 4"));

    /* the caller says it: that axis, or none; an axis that is not of size L, the batch axis or
     * beyond the shape is refused */
    const oq_seq_axis two = {"y", 2}, none = {"y", OQ_SEQ_AXIS_NONE}, one = {"y", 1};
    assert_int_equal(axes_of(mi, &two, 1, "y", 4, y, 2, 4, &a, &err), OQ_OK);
    ASSERT_AXES(a, 0, 2);
    assert_string_equal(a.by, "seq_axes"); /* the rule that decided, for summary.json's padding */
    assert_int_equal(axes_of(mi, &none, 1, "y", 4, y, 2, 4, &a, &err), OQ_OK);
    assert_false(a.masked);
    assert_int_equal(axes_of(mi, &two, 1, "y", 4, (int64_t[]){2, 4, 3, 2}, 2, 4, &a, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "axes.onnx: output 'y' shape [2,4,3,2]: seq_axes y=2: axis 2 has size 3, not the "
                                 "mask's padded length 4");
    assert_int_equal(axes_of(mi, &two, 1, "y", 2, (int64_t[]){2, 4}, 2, 4, &a, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "seq_axes y=2: it has 2 axes"));
    assert_int_equal(axes_of(mi, &one, 1, "y", 4, (int64_t[]){3, 4, 4, 2}, 2, 4, &a, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "its batch axis 0 has size 3, not the batch's 2 events"));
    oq_model_info_free(mi);
}

/* Sizes that tell nothing are not guessed from: a pooled [B, H] output whose width H is the
 * padded length L (a static BERT's pooler at hidden = seq) had its width masked, a
 * sequence-first [L, B, E] output with B = L its batch axis read as the sequence, and an axis
 * of size L in a model that shows L is also a width (two axes of it in another output) was
 * taken for the sequence: each set valid elements apart as padding, where a wrong value was
 * "reported, not judged" (a false PASSED). Each is refused naming the fix; the caller may say
 * the batch axis too (sequence first). */
static void mask_axes_sizes_tell_nothing(void **state)
{
    (void)state;
    const axes_out outs[] = {{"h", 3, {OQ_DIM(2), OQ_DIM(4), OQ_DIM(8)}}, {"pooled", 2, {OQ_DIM(2), OQ_DIM(4)}}};
    oq_model_info *mi = axes_model((oq_dim[]){OQ_DIM(2), OQ_DIM(4)}, outs, 2);
    oq_mask_axes a;
    oq_err err = {0};
    const int64_t h[] = {2, 4, 8}, pooled[] = {2, 4}, sf[] = {4, 4, 8};
    assert_int_equal(axes_of(mi, NULL, 0, "h", 3, h, 2, 4, &a, &err), OQ_OK); /* [B, L, E]: told */
    ASSERT_AXES(a, 0, 1);
    assert_string_equal(a.by, "sizes");
    assert_int_equal(axes_of(mi, NULL, 0, "pooled", 2, pooled, 2, 4, &a, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "axes.onnx: output 'pooled' shape [2,4]: axis 1 has the mask's padded length 4, "
                                 "but a [B, L] output is as well a pooled [B, H] one whose width H is L, and the model "
                                 "names neither: say seq_axes pooled=1 if it is per position, or pooled=none, or "
                                 "export with named dynamic axes (or the sequence axis denoted DATA_TIME)");
    assert_int_equal(axes_of(mi, NULL, 0, "h", 3, sf, 4, 4, &a, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "axes.onnx: output 'h' shape [4,4,8]: axes 0 and 1 both have size 4, the batch's "
                                 "events and its padded length alike, and the model names neither: say which is the "
                                 "sequence with seq_axes h=1 (the batch on axis 0) or h=0,batch=1 (sequence first), "
                                 "or export with named dynamic axes (or the axes denoted DATA_BATCH and DATA_TIME)");
    const oq_seq_axis first = {"h", 0, 1, 1}, one = {"pooled", 1}, none = {"pooled", OQ_SEQ_AXIS_NONE};
    assert_int_equal(axes_of(mi, &first, 1, "h", 3, sf, 4, 4, &a, &err), OQ_OK);
    ASSERT_AXES(a, 1, 0);
    assert_int_equal(axes_of(mi, &first, 1, "h", 3, (int64_t[]){4, 3, 8}, 3, 4, &a, &err), OQ_OK); /* B != L */
    ASSERT_AXES(a, 1, 0);
    assert_int_equal(axes_of(mi, &one, 1, "pooled", 2, pooled, 2, 4, &a, &err), OQ_OK);
    ASSERT_AXES(a, 0, 1);
    assert_int_equal(axes_of(mi, &none, 1, "pooled", 2, pooled, 2, 4, &a, &err), OQ_OK);
    assert_false(a.masked);
    /* the input side tells none there (read whole), and says why */
    oq_axes_rule r = {"axes.onnx", mi, "mask", 0, NULL, 2, 4};
    assert_int_equal(oq_input_mask_axes(&r, "p", 2, pooled, &a, &err), 0);
    assert_non_null(strstr(err.msg, "input 'p' shape [2,4]: axis 1 has the mask's padded length 4, but a [B, L] "
                                    "input is as well a pooled [B, H] one"));
    oq_model_info_free(mi);

    const axes_out wide[] = {{"h", 3, {OQ_DIM(2), OQ_DIM(4), OQ_DIM(8)}},
                             {"hidden", 3, {OQ_DIM(2), OQ_DIM(4), OQ_DIM(4)}}};
    mi = axes_model((oq_dim[]){OQ_DIM(2), OQ_DIM(4)}, wide, 2);
    assert_int_equal(axes_of(mi, NULL, 0, "h", 3, h, 2, 4, &a, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "axes.onnx: output 'h' shape [2,4,8]: axis 1 has the mask's padded length 4, but so "
                                 "do two axes of output 'hidden' [2,4,4]: L is also one of the model's widths, and the "
                                 "model names neither: say seq_axes h=1 if it is per position, or h=none, or export "
                                 "with named dynamic axes (or the sequence axis denoted DATA_TIME)");
    assert_int_equal(axes_of(mi, NULL, 0, "h", 3, (int64_t[]){2, 5, 8}, 2, 5, &a, &err), OQ_OK); /* L = 5 */
    ASSERT_AXES(a, 0, 1);
    oq_model_info_free(mi);
}

/* The one axis of size L past axis 1 is not read as the sequence by its size: a static export's
 * `cls [B, 4, L]`, 4 rows of L class scores per event, had its class columns at or past each
 * event's length masked, and wrong values there were "reported, not judged" (QA round 6, 1: a
 * false PASSED in validate, replay, bench --model and convert's check). Refused naming the
 * output, the axis and the fix; the caller's seq_axes says it either way, and [B, L, E] is
 * still told. */
static void mask_axes_width_past_axis1(void **state)
{
    (void)state;
    const axes_out outs[] = {{"y", 3, {OQ_DIM(3), OQ_DIM(8), OQ_DIM(5)}}, {"cls", 3, {OQ_DIM(3), OQ_DIM(4), OQ_DIM(8)}}};
    oq_model_info *mi = axes_model((oq_dim[]){OQ_DIM(3), OQ_DIM(8)}, outs, 2);
    oq_mask_axes a;
    oq_err err = {0};
    const int64_t y[] = {3, 8, 5}, cls[] = {3, 4, 8}, bhld[] = {3, 4, 8, 2};
    assert_int_equal(axes_of(mi, NULL, 0, "y", 3, y, 3, 8, &a, &err), OQ_OK);
    ASSERT_AXES(a, 0, 1);
    assert_int_equal(axes_of(mi, NULL, 0, "cls", 3, cls, 3, 8, &a, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "axes.onnx: output 'cls' shape [3,4,8]: axis 2 has the mask's padded length 8, but "
                                 "the sizes read a sequence only on axis 1, right after the batch ([B, L, ...]): an "
                                 "axis past it is as well a width of size L (a [B, C, L] output of C rows of L "
                                 "scores), and the model names neither: say seq_axes cls=2 if it is per position, or "
                                 "cls=none, or export with named dynamic axes (or the sequence axis denoted "
                                 "DATA_TIME)");
    assert_int_equal(axes_of(NULL, NULL, 0, "cls", 3, cls, 3, 8, &a, &err), OQ_ERR_INVALID_ARG); /* no model read */
    assert_int_equal(axes_of(mi, NULL, 0, "q", 4, bhld, 3, 8, &a, &err), OQ_ERR_INVALID_ARG); /* [B, H, L, D] */
    const oq_seq_axis two = {"cls", 2}, none = {"cls", OQ_SEQ_AXIS_NONE};
    assert_int_equal(axes_of(mi, &two, 1, "cls", 3, cls, 3, 8, &a, &err), OQ_OK);
    ASSERT_AXES(a, 0, 2);
    assert_int_equal(axes_of(mi, &none, 1, "cls", 3, cls, 3, 8, &a, &err), OQ_OK);
    assert_false(a.masked);
    oq_axes_rule r = {"axes.onnx", mi, "mask", 0, NULL, 3, 8}; /* an input: read whole, saying why */
    assert_int_equal(oq_input_mask_axes(&r, "q", 4, bhld, &a, &err), 0);
    assert_non_null(strstr(err.msg, "input 'q' shape [3,4,8,2]: axis 2 has the mask's padded length 8, but the sizes "
                                    "read a sequence only on axis 1"));
    oq_model_info_free(mi);
}

/* Declared names first: the sdpa layout [batch,H,seq,D] is told by them whatever the sizes;
 * named axes without the sequence (a cache) are not masked; two axes named like the mask's
 * sequence are refused. Denotations next: DATA_BATCH and DATA_TIME say it for static shapes,
 * a DATA_TIME axis of another length is not the mask's, two of length L are refused. */
static void mask_axes_by_declaration(void **state)
{
    (void)state;
    const oq_dim bd = OQ_DIM_SYM("batch"), ld = OQ_DIM_SYM("seq");
    const axes_out named[] = {{"y", 4, {bd, OQ_DIM(4), ld, OQ_DIM(2)}},
                              {"cache", 4, {bd, OQ_DIM(4), OQ_DIM_SYM("past"), OQ_DIM(2)}},
                              {"scores", 3, {bd, ld, ld}}};
    oq_model_info *mi = axes_model((oq_dim[]){bd, ld}, named, 3);
    oq_mask_axes a;
    oq_err err = {0};
    const int64_t y[] = {2, 4, 4, 2}, sq[] = {2, 4, 4};
    assert_int_equal(axes_of(mi, NULL, 0, "y", 4, y, 2, 4, &a, &err), OQ_OK);
    ASSERT_AXES(a, 0, 2);
    assert_string_equal(a.by, "names");
    assert_int_equal(axes_of(mi, NULL, 0, "cache", 4, y, 2, 4, &a, &err), OQ_OK);
    assert_false(a.masked);
    assert_int_equal(axes_of(mi, NULL, 0, "scores", 3, sq, 2, 4, &a, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "output 'scores' shape [2,4,4]: axes 1 and 2 are both named 'seq' like the "
                                    "mask's sequence axis: say which with seq_axes scores=1 or scores=2"));
    oq_model_info_free(mi);

    const oq_dim b2 = OQ_DIM_DENOTED(2, OQ_DENOTATION_BATCH), l4 = OQ_DIM_DENOTED(4, OQ_DENOTATION_TIME);
    const axes_out denoted[] = {{"y", 4, {b2, OQ_DIM(4), l4, OQ_DIM(2)}},
                                {"t", 3, {b2, OQ_DIM(4), OQ_DIM_DENOTED(3, OQ_DENOTATION_TIME)}},
                                {"two", 3, {b2, l4, l4}}};
    mi = axes_model((oq_dim[]){b2, l4}, denoted, 3);
    assert_string_equal(mi->outputs[0].denotations[0], OQ_DENOTATION_BATCH); /* inspect reads them */
    assert_null(mi->outputs[0].denotations[1]);
    assert_int_equal(axes_of(mi, NULL, 0, "y", 4, y, 2, 4, &a, &err), OQ_OK);
    ASSERT_AXES(a, 0, 2);
    assert_string_equal(a.by, "denotations");
    assert_int_equal(axes_of(mi, NULL, 0, "t", 3, (int64_t[]){2, 4, 3}, 2, 4, &a, &err), OQ_OK);
    assert_false(a.masked); /* axis 1 has size L, but the model says what it is: not time */
    assert_int_equal(axes_of(mi, NULL, 0, "two", 3, sq, 2, 4, &a, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "axes 1 and 2 are both denoted DATA_TIME with the mask's padded length 4"));
    oq_model_info_free(mi);
}

/* seq_axes against the model before anything runs: an output it has, once, of a model with
 * a mask, an axis of its rank other than the batch axis. */
static void seq_axes_checked_against_the_model(void **state)
{
    (void)state;
    const axes_out outs[] = {{"y", 4, {OQ_DIM(2), OQ_DIM(4), OQ_DIM(4), OQ_DIM(2)}},
                             {"any", -1, {OQ_DIM(0)}}};
    oq_model_info *mi = axes_model((oq_dim[]){OQ_DIM(2), OQ_DIM(4)}, outs, 2);
    const struct {
        oq_seq_axis said[2];
        size_t n;
        int mask;
        const char *msg; /* NULL: taken */
    } cases[] = {
        {{{"y", 2}, {"any", 5}}, 2, 0, NULL},
        {{{"y", OQ_SEQ_AXIS_NONE}}, 1, 0, NULL},
        {{{"z", 2}}, 1, 0, "seq_axes z=2: axes.onnx has no output 'z' (its outputs: y, any)"},
        {{{"y", 4}}, 1, 0, "seq_axes y=4: output 'y' has 4 axes (0 to 3)"},
        {{{"y", 0}}, 1, 0, "seq_axes y=0: that is the batch axis of output 'y' (axis 0: the model names or "
                           "denotes no other; a sequence-first output says its batch axis too: seq_axes "
                           "y=0,batch=1)"},
        {{{"y", 0, 1, 1}}, 1, 0, NULL},
        {{{"y", 1, 1, 1}}, 1, 0, "seq_axes y=1,batch=1: the batch and sequence axes are one"},
        {{{"y", 0, 4, 1}}, 1, 0, "seq_axes y=0,batch=4: output 'y' has 4 axes (0 to 3)"},
        {{{"y", -3}}, 1, 0, "seq_axes y=-3: an axis is a number from 0, or none"},
        {{{"y", 2}, {"y", 1}}, 2, 0, "seq_axes: output 'y' is given twice"},
        {{{"y", 2}}, 1, -1, "seq_axes y=2: the model has no mask input (or no_mask): every element of every "
                            "output is valid"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        oq_err err = {0};
        oq_status st = oq_seq_axes_check_model("axes.onnx", mi, cases[i].mask < 0 ? NULL : mi->inputs[cases[i].mask].name,
                                               cases[i].said, cases[i].n, &err);
        if (!cases[i].msg) {
            assert_int_equal(st, OQ_OK);
            continue;
        }
        assert_int_equal(st, OQ_ERR_INVALID_ARG);
        assert_string_equal(err.msg, cases[i].msg);
        assert_null(strstr(err.msg, "--")); /* the API's fields, not the tool's options */
    }
    oq_err err = {0}; /* a library caller's count without its array */
    assert_int_equal(oq_seq_axes_check_model("axes.onnx", mi, mi->inputs[0].name, NULL, 1, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "n_seq_axes 1, but seq_axes is NULL");
    oq_model_info_free(mi);
}

/* An output declared without a shape is told by its worker from the shape it gets: ambiguous
 * there, the configuration is an error naming the axes, never a comparison on the wrong ones
 * (replay against ORT on CPU: no expected outputs give its shape before the run). The reference
 * runs on ORT 1.30 (scripts/deps.sh): on this ORT it would be the run under test again, which
 * the library refuses. */
static void worker_refuses_ambiguous_axes(void **state)
{
    (void)state;
    const char *ort130 = OQ_SOURCE_DIR "/third_party/onnxruntime-1.30/lib/libonnxruntime.so.1";
    if (access(ort130, R_OK)) fail_msg("ORT 1.30 missing at %s (scripts/deps.sh installs it)", ort130);
    char *dir = temp_dir("axes"), *model = path_in(dir, "y.onnx"), *io = path_in(dir, "io.npz");
    oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "axes", &g, NULL), OQ_OK);
    oq_graph_add_input(g, "mask", OQ_DTYPE_FLOAT32, 2, (oq_dim[]){OQ_DIM(2), OQ_DIM(4)});
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 4, (oq_dim[]){OQ_DIM(2), OQ_DIM(4), OQ_DIM(4), OQ_DIM(2)});
    oq_graph_add_output(g, "x", "y", OQ_DTYPE_FLOAT32, -1, NULL);
    assert_int_equal(oq_graph_write(g, model, 1, NULL), OQ_OK);
    oq_graph_free(g);
    const int64_t ms[] = {2, 4}, xs[] = {2, 4, 4, 2};
    oq_tensor *t[2] = {tensor_of("mask", OQ_DTYPE_FLOAT32, 2, ms), tensor_of("x", OQ_DTYPE_FLOAT32, 4, xs)};
    for (int64_t i = 0; i < 8; i++) oq_tensor_set_f64(t[0], i, i % 4 < 3 - i / 4);
    assert_int_equal(oq_npz_write(io, 2, (const oq_tensor *const *)t, 0, 1, NULL), OQ_OK);
    oq_tensor_free(t[0]);
    oq_tensor_free(t[1]);

    oq_config cfg[2];
    oq_config_parse("cpu:model:fp32", &cfg[0], NULL);
    oq_config_parse("cpu:model:fp32", &cfg[1], NULL);
    const char *files[] = {io};
    oq_validate_opts o;
    oq_validate_opts_default(&o);
    o.kind = OQ_MODEL_USER;
    o.model_path = model;
    o.input_files = files;
    o.n_input_files = 1;
    o.configs = cfg;
    o.n_configs = 2;
    o.repeat = 1;
    o.isolate = 1; /* the reference's build in its own process: never two in one */
    o.plots = 0;
    o.ort_lib = OQ_ORT_LIB;
    o.reference_ort_lib = ort130;
    o.self_exe = OQ_BINARY_DIR "/ortqual";
    char *outdir = path_in(dir, "out");
    o.outdir = outdir;
    oq_validate_summary *s = NULL;
    oq_err err = {0};
    assert_int_equal(oq_validate_run(&o, &s, &err), OQ_OK);
    assert_int_equal(s->configs[1].status, OQ_VERDICT_ERROR);
    assert_int_not_equal(s->verdict, OQ_RUN_PASSED);
    assert_non_null(strstr(s->configs[1].reason, "output 'y' shape [2,4,4,2]: axes 1 and 2 both have"));
    oq_validate_summary_free(s);
    /* said: compared on the valid elements of axis 2 */
    const oq_seq_axis said = {"y", 2};
    o.seq_axes = &said;
    o.n_seq_axes = 1;
    o.overwrite = 1;
    assert_int_equal(oq_validate_run(&o, &s, &err), OQ_OK);
    if (s->verdict != OQ_RUN_PASSED) fail_msg("%s: %s", oq_run_verdict_name(s->verdict), s->verdict_reason);
    oq_validate_summary_free(s);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
    free(model);
    free(io);
    free(outdir);
}

/* ---- finite inputs ------------------------------------------------------------------------ */

/* features f32 [batch,seq,3] and h f16 [batch,seq] per position, c f64 [2] whole, a bool mask. */
static void finite_model(const char *path)
{
    oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "finite", &g, NULL), OQ_OK);
    const oq_dim bl[] = {OQ_DIM_SYM("batch"), OQ_DIM_SYM("seq")}, blf[] = {bl[0], bl[1], OQ_DIM(3)}, two[] = {OQ_DIM(2)};
    oq_graph_add_input(g, "features", OQ_DTYPE_FLOAT32, 3, blf);
    oq_graph_add_input(g, "mask", OQ_DTYPE_BOOL, 2, bl);
    oq_graph_add_input(g, "h", OQ_DTYPE_FLOAT16, 2, bl);
    oq_graph_add_input(g, "c", OQ_DTYPE_FLOAT64, 1, two);
    const char *names[] = {"features", "mask", "h", "c"};
    const oq_dtype dts[] = {OQ_DTYPE_FLOAT32, OQ_DTYPE_BOOL, OQ_DTYPE_FLOAT16, OQ_DTYPE_FLOAT64};
    const int32_t ranks[] = {3, 2, 2, 1};
    const oq_dim *dims[] = {blf, bl, bl, two};
    for (int i = 0; i < 4; i++) {
        char out[32];
        snprintf(out, sizeof out, "%s_out", names[i]);
        const char *y = oq_graph_op(g, "Identity", 1, &names[i], 0, NULL);
        oq_graph_add_output(g, y, out, dts[i], ranks[i], dims[i]);
    }
    assert_int_equal(oq_graph_write(g, path, 1, NULL), OQ_OK);
    oq_graph_free(g);
}

/* One batch (lengths 3 and 1 of 4) with `bad` written at element `at` of input `which`; what
 * oq_signature_read_inputs says of it ("" when it accepts it). */
static void read_finite(const oq_signature *sig, const char *path, int which, int64_t at, double bad, char *msg,
                        size_t n)
{
    const int64_t blf[] = {2, 4, 3}, bl[] = {2, 4}, two[] = {2};
    oq_tensor *t[4] = {tensor_of("features", OQ_DTYPE_FLOAT32, 3, blf), tensor_of("mask", OQ_DTYPE_BOOL, 2, bl),
                       tensor_of("h", OQ_DTYPE_FLOAT16, 2, bl), tensor_of("c", OQ_DTYPE_FLOAT64, 1, two)};
    for (int64_t i = 0; i < 8; i++) oq_tensor_set_f64(t[1], i, i % 4 < (i < 4 ? 3 : 1));
    /* NaN in every padded position: never read */
    for (int64_t i = 0; i < 8; i++) oq_tensor_set_f64(t[2], i, oq_tensor_get_f64(t[1], i) ? 0.5 : NAN);
    for (int64_t i = 0; i < 24; i++) oq_tensor_set_f64(t[0], i, oq_tensor_get_f64(t[1], i / 3) ? 0.25 * (double)i : NAN);
    if (which >= 0) oq_tensor_set_f64(t[which], at, bad);
    assert_int_equal(oq_npz_write(path, 4, (const oq_tensor *const *)t, 0, 1, NULL), OQ_OK);
    for (int i = 0; i < 4; i++) oq_tensor_free(t[i]);
    oq_batch_inputs in;
    oq_err err = {0};
    oq_status st = oq_signature_read_inputs(sig, path, &in, &err);
    snprintf(msg, n, "%s", st ? err.msg : "");
    if (!st) oq_batch_inputs_clear(&in);
}

/* ---- a mask of int or float that the model Casts ------------------------------------------- */

/* y = x * valid: the mask Cast to bool (Not where its 1 is padding), Cast to float, Unsqueezed to
 * [batch, seq, 1]: a model that reads a pad or keep mask of any type. */
static void cast_mask_model(const char *path, oq_dtype mt, int pad)
{
    oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "castmask", &g, NULL), OQ_OK);
    const oq_dim bl[] = {OQ_DIM_SYM("batch"), OQ_DIM_SYM("seq")}, blf[] = {bl[0], bl[1], OQ_DIM(3)};
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 3, blf);
    oq_graph_add_input(g, "mask", mt, 2, bl);
    const oq_attr to_bool = OQ_ATTR_I("to", OQ_DTYPE_BOOL), to_float = OQ_ATTR_I("to", OQ_DTYPE_FLOAT32);
    const char *b = oq_graph_op(g, "Cast", 1, (const char *[]){"mask"}, 1, &to_bool);
    if (pad) b = oq_graph_op(g, "Not", 1, (const char *[]){b}, 0, NULL);
    const char *f = oq_graph_op(g, "Cast", 1, (const char *[]){b}, 1, &to_float);
    const char *axes = oq_graph_const_i64(g, "axes", 1, (const int64_t[]){2});
    const char *u = oq_graph_op(g, "Unsqueeze", 2, (const char *[]){f, axes}, 0, NULL);
    const char *y = oq_graph_op(g, "Mul", 2, (const char *[]){"x", u}, 0, NULL);
    oq_graph_add_output(g, y, "y", OQ_DTYPE_FLOAT32, 3, blf);
    assert_int_equal(oq_graph_write(g, path, 1, NULL), OQ_OK);
    oq_graph_free(g);
}

/* x, the mask in its type (1 = valid, or 1 = padding), and the y the model gives: lengths 3 and
 * 1 of 4. */
static void cast_mask_io(const char *path, oq_dtype mt, int pad)
{
    const int64_t blf[] = {2, 4, 3}, bl[] = {2, 4};
    oq_tensor *t[3] = {tensor_of("x", OQ_DTYPE_FLOAT32, 3, blf), tensor_of("mask", mt, 2, bl),
                       tensor_of("y", OQ_DTYPE_FLOAT32, 3, blf)};
    for (int64_t i = 0; i < 24; i++) {
        int valid = (i / 3) % 4 < (i < 12 ? 3 : 1);
        oq_tensor_set_f64(t[0], i, 0.25 * (double)i + 1);
        oq_tensor_set_f64(t[2], i, valid ? 0.25 * (double)i + 1 : 0);
        if (i % 3 == 0) oq_tensor_set_f64(t[1], i / 3, pad ? !valid : valid);
    }
    assert_int_equal(oq_npz_write(path, 3, (const oq_tensor *const *)t, 0, 1, NULL), OQ_OK);
    for (int i = 0; i < 3; i++) oq_tensor_free(t[i]);
}

/* io NULL: generated events (the reference alone: the inputs fed are what is looked at). */
static oq_status run_polarity(const char *model, const char *io, const char *outdir, oq_mask_polarity pol,
                              oq_validate_summary **s, oq_err *err)
{
    oq_config cfg[2];
    const char *files[] = {io};
    oq_validate_opts o;
    validate_user_expected(&o, cfg, model, io ? files : NULL, io ? 1 : 0, outdir);
    o.configs = io ? cfg : &cfg[1];
    o.n_configs = io ? 2 : 1;
    o.allow_skip = 1;
    o.events.num_events = 4;
    o.events.batch_size = 2;
    o.events.policy = OQ_LENGTH_UNIFORM;
    o.events.min_len = 1;
    o.events.max_len = 6;
    o.mask_polarity = pol;
    o.mask_polarity_given = 1;
    return oq_validate_run(&o, s, err);
}

/* A mask of float, float16, int32 or int64 (not bool), which the model Casts, is read with
 * either polarity as a bool one is: its valid elements (4 of 8 positions), its padding judged
 * (y is 0 there), passed; the other polarity refuses it by event and position; generated
 * events feed it in its type with that polarity (a valid row read the other way is refused). */
static void mask_of_any_type_either_polarity(void **state)
{
    (void)state;
    const oq_dtype types[] = {OQ_DTYPE_FLOAT32, OQ_DTYPE_FLOAT16, OQ_DTYPE_INT32, OQ_DTYPE_INT64, OQ_DTYPE_BOOL};
    char *dir = temp_dir("castmask");
    char *model = path_in(dir, "m.onnx"), *io = path_in(dir, "io.npz"), out[600];
    for (size_t k = 0; k < sizeof types / sizeof *types; k++)
        for (int pad = 0; pad < 2; pad++) {
            cast_mask_model(model, types[k], pad);
            cast_mask_io(io, types[k], pad);
            oq_mask_polarity pol = pad ? OQ_MASK_POLARITY_PAD : OQ_MASK_POLARITY_KEEP;
            oq_validate_summary *s = NULL;
            oq_err err = {0};
            snprintf(out, sizeof out, "%s/out_%s_%d", dir, oq_dtype_name(types[k]), pad);
            if (run_polarity(model, io, out, pol, &s, &err))
                fail_msg("%s %s: %s", oq_dtype_name(types[k]), oq_mask_polarity_name(pol), err.msg);
            if (s->verdict != OQ_RUN_PASSED)
                fail_msg("%s %s: %s: %s", oq_dtype_name(types[k]), oq_mask_polarity_name(pol),
                         oq_run_verdict_name(s->verdict), s->verdict_reason);
            assert_string_equal(s->mask_input, "mask");
            assert_int_equal(s->configs[1].n_outputs, 1);
            const oq_compare_result *y = &s->configs[1].outputs[0].all; /* (the batches are on file) */
            assert_true(y->padding_checked && y->num_valid == 12 && y->num_padded == 12);
            oq_validate_summary_free(s);
            s = NULL;
            snprintf(out, sizeof out, "%s/other_%s_%d", dir, oq_dtype_name(types[k]), pad);
            assert_int_equal(run_polarity(model, io, out, pad ? OQ_MASK_POLARITY_KEEP : OQ_MASK_POLARITY_PAD, &s, &err),
                             OQ_ERR_MASK);
            assert_non_null(strstr(err.msg, "io.npz: mask 'mask': event 0: "));
            oq_validate_summary_free(s);
            s = NULL;
            /* generated events feed the mask in its type, read with that polarity */
            snprintf(out, sizeof out, "%s/gen_%s_%d", dir, oq_dtype_name(types[k]), pad);
            if (run_polarity(model, NULL, out, pol, &s, &err))
                fail_msg("generated, %s %s: %s", oq_dtype_name(types[k]), oq_mask_polarity_name(pol), err.msg);
            oq_validate_summary_free(s);
            s = NULL;
            char inputs[700];
            snprintf(inputs, sizeof inputs, "%s/inputs_000.npz", out);
            oq_npz *z = NULL;
            assert_int_equal(oq_npz_read(inputs, &z, NULL), OQ_OK);
            const oq_tensor *m = oq_tensors_find((const oq_tensor *const *)z->tensors, z->count, "mask");
            assert_non_null(m);
            assert_int_equal(m->dtype, types[k]);
            int64_t len[2];
            if (oq_mask_check_polarity(m, NULL, pol, len, &err))
                fail_msg("generated, %s %s: %s", oq_dtype_name(types[k]), oq_mask_polarity_name(pol), err.msg);
            assert_true(len[0] >= 1 && len[1] >= 1);
            oq_npz_free(z);
        }
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
    free(model);
    free(io);
}

/* A polarity given with ortqual's own models is refused in words that do not contradict
 * themselves (it said "mask_polarity keep reads the mask ...; ortqual's models read 1 = valid"). */
static void polarity_refused_for_own_models(void **state)
{
    (void)state;
    oq_validate_opts o;
    oq_validate_opts_default(&o);
    o.kind = OQ_MODEL_SDPA;
    o.mask_polarity_given = 1;
    oq_signature sig;
    oq_err err = {0};
    assert_int_equal(oq_signature_make(&o, NULL, NULL, NULL, &sig, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "mask_polarity keep is about a model_path file's mask input; ortqual's models take "
                        "none of yours");
}

/* A polarity given with no_mask names both fields, as the tool names both options (it said
 * "mask_polarity keep, but no input is the mask (mask_name names one)" of a model with a mask),
 * before anything is made. */
static void polarity_with_no_mask(void **state)
{
    (void)state;
    char *dir = temp_dir("polnomask"), out[600];
    snprintf(out, sizeof out, "%s/out", dir);
    oq_config cfg;
    oq_config_parse("cpu:model:fp32", &cfg, NULL);
    oq_validate_opts o;
    oq_validate_opts_default(&o);
    o.kind = OQ_MODEL_USER;
    o.model_path = OQ_SOURCE_DIR "/tests/fixtures/torch/tx_encoder/tx_encoder_op18.onnx";
    o.configs = &cfg;
    o.n_configs = 1;
    o.isolate = 0;
    o.ort_lib = OQ_ORT_LIB;
    o.outdir = out;
    o.mask_polarity_given = 1;
    o.no_mask = 1;
    oq_validate_summary *s = NULL;
    oq_err err = OQ_ERR_INIT;
    assert_int_equal(oq_validate_run(&o, &s, &err), OQ_ERR_INVALID_ARG);
    assert_null(s);
    assert_string_equal(err.msg, "mask_polarity and no_mask contradict: mask_polarity says how to read the mask, "
                        "no_mask says there is none; give one");
    assert_int_equal(access(out, F_OK), -1);
    remove_dir(dir);
}

/* Every valid element is checked, in every float dtype, and no padded one: the first bad one is
 * named by event, position and element (or by element for an input not per position). */
static void finite_inputs(void **state)
{
    (void)state;
    char *dir = temp_dir("finite");
    char *model = path_in(dir, "m.onnx"), *io = path_in(dir, "io.npz");
    finite_model(model);
    oq_validate_opts o;
    oq_validate_opts_default(&o);
    o.kind = OQ_MODEL_USER;
    o.model_path = model;
    oq_signature sig;
    oq_err err = {0};
    oq_model_info *mi;
    assert_int_equal(oq_model_inspect_file(model, &mi, &err), OQ_OK);
    assert_int_equal(oq_signature_make(&o, NULL, &mi, NULL, &sig, &err), OQ_OK);
    char msg[1100], want[1100];
    read_finite(&sig, io, -1, 0, 0, msg, sizeof msg);
    assert_string_equal(msg, "");
    read_finite(&sig, io, 0, (0 * 4 + 2) * 3 + 1, NAN, msg, sizeof msg); /* event 0, last valid position */
    snprintf(want, sizeof want, "%s: input 'features': event 0 position 2 (element 1 of it) is NaN: valid positions "
             "must be finite", io);
    assert_string_equal(msg, want);
    read_finite(&sig, io, 0, (1 * 4 + 0) * 3 + 2, -INFINITY, msg, sizeof msg);
    assert_non_null(strstr(msg, "input 'features': event 1 position 0 (element 2 of it) is -inf"));
    read_finite(&sig, io, 2, 1 * 4 + 0, INFINITY, msg, sizeof msg);
    assert_non_null(strstr(msg, "input 'h': event 1 position 0 (element 0 of it) is NaN or inf"));
    read_finite(&sig, io, 3, 1, INFINITY, msg, sizeof msg);
    assert_non_null(strstr(msg, "input 'c': element 1 is inf: inputs must be finite"));
    oq_signature_clear(&sig);
    remove_dir(dir);
    free(model);
    free(io);
}

/* mask [2, 4] and q [2, 4, 4, 2] (B, H, L, D with H = L), static, as `q` declares its four
 * dims; the output is q. */
static void heads_model(const char *path, const oq_dim *q)
{
    oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "heads", &g, NULL), OQ_OK);
    oq_graph_add_input(g, "mask", OQ_DTYPE_BOOL, 2, (oq_dim[]){q[0], q[2]});
    oq_graph_add_input(g, "q", OQ_DTYPE_FLOAT32, 4, q);
    const char *y = oq_graph_op(g, "Identity", 1, (const char *[]){"q"}, 0, NULL);
    oq_graph_add_output(g, y, "y", OQ_DTYPE_FLOAT32, 4, q);
    assert_int_equal(oq_graph_write(g, path, 1, NULL), OQ_OK);
    oq_graph_free(g);
}

/* What oq_signature_read_inputs says ("" when it accepts) of a batch of lengths 3 and 1 whose q
 * holds NaN at [b, h, l, d] = at[0..4) (and whose padding is 0.5). */
static void read_heads(const char *model, const char *path, const int64_t *at, char *msg, size_t n)
{
    const int64_t bl[] = {2, 4}, bhld[] = {2, 4, 4, 2};
    oq_tensor *t[2] = {tensor_of("mask", OQ_DTYPE_BOOL, 2, bl), tensor_of("q", OQ_DTYPE_FLOAT32, 4, bhld)};
    for (int64_t i = 0; i < 8; i++) oq_tensor_set_f64(t[0], i, i % 4 < (i < 4 ? 3 : 1));
    for (int64_t i = 0; i < 32; i++) oq_tensor_set_f64(t[1], i, 0.5);
    oq_tensor_set_f64(t[1], ((at[0] * 4 + at[1]) * 4 + at[2]) * 2 + at[3], NAN);
    assert_int_equal(oq_npz_write(path, 2, (const oq_tensor *const *)t, 0, 1, NULL), OQ_OK);
    oq_tensor_free(t[0]);
    oq_tensor_free(t[1]);
    oq_validate_opts o;
    oq_validate_opts_default(&o);
    o.kind = OQ_MODEL_USER;
    o.model_path = model;
    oq_signature sig;
    oq_err err = {0};
    oq_model_info *mi;
    assert_int_equal(oq_model_inspect_file(model, &mi, &err), OQ_OK);
    assert_int_equal(oq_signature_make(&o, NULL, &mi, NULL, &sig, &err), OQ_OK);
    oq_batch_inputs in;
    oq_status st = oq_signature_read_inputs(&sig, path, &in, &err);
    snprintf(msg, n, "%s", st ? err.msg : "");
    if (!st) oq_batch_inputs_clear(&in);
    oq_signature_clear(&sig);
}

/* An input [B, H, L, D] with H = L is checked along the axes the outputs' rule tells (src/axes/),
 * never axis 1 because its size is L: denoted (or named) it is checked on its valid positions
 * only, a NaN at a valid position of a later head included (axis 1 taken for the sequence
 * skipped it: a false green) and one in padding accepted (it was a false red); static with
 * nothing said, the two candidate axes are not guessed between: every element is checked, and
 * the message says why padding was. */
static void finite_inputs_heads(void **state)
{
    (void)state;
    char *dir = temp_dir("finite_heads");
    char *model = path_in(dir, "m.onnx"), *io = path_in(dir, "io.npz");
    const int64_t valid_late_head[] = {1, 2, 0, 1}, padding[] = {0, 1, 3, 0};
    char msg[1100], want[1100];
    const oq_dim denoted[] = {OQ_DIM_DENOTED(2, OQ_DENOTATION_BATCH), OQ_DIM(4),
                              OQ_DIM_DENOTED(4, OQ_DENOTATION_TIME), OQ_DIM(2)};
    heads_model(model, denoted);
    read_heads(model, io, valid_late_head, msg, sizeof msg);
    snprintf(want, sizeof want, "%s: input 'q': event 1 position 0 (element 5 of it) is NaN: valid positions must be "
             "finite", io);
    assert_string_equal(msg, want);
    read_heads(model, io, padding, msg, sizeof msg);
    assert_string_equal(msg, "");

    const oq_dim named[] = {OQ_DIM_SYM("batch"), OQ_DIM(4), OQ_DIM_SYM("seq"), OQ_DIM(2)};
    heads_model(model, named);
    read_heads(model, io, valid_late_head, msg, sizeof msg);
    assert_string_equal(msg, want);
    read_heads(model, io, padding, msg, sizeof msg);
    assert_string_equal(msg, "");

    const oq_dim sizes[] = {OQ_DIM(2), OQ_DIM(4), OQ_DIM(4), OQ_DIM(2)};
    heads_model(model, sizes);
    read_heads(model, io, valid_late_head, msg, sizeof msg);
    snprintf(want, sizeof want, "%s: input 'q': element 49 is NaN: inputs must be finite (padding included, as its "
             "positions cannot be told: %s: input 'q' shape [2,4,4,2]: axes 1 and 2 both have the mask's padded "
             "length 4 and the model names neither; name its axes like the mask's, or denote them DATA_BATCH and "
             "DATA_TIME)", io, model);
    assert_string_equal(msg, want);
    read_heads(model, io, padding, msg, sizeof msg);
    assert_non_null(strstr(msg, "input 'q': element 14 is NaN: inputs must be finite (padding included"));
    remove_dir(dir);
    free(model);
    free(io);
}

/* ---- which input is the padding mask ------------------------------------------------------ */

/* Q, K, V [4,2,4,8] into one Attention-23 whose attn_mask is the input `mask` of type `mt` and
 * shape [4,4] (a causal mask: ONNX broadcasts it over batch and heads), or with `ids`, token
 * ids [batch,seq] through a Gather beside it; Y out. */
static void causal_model(const char *path, oq_dtype mt, int ids)
{
    oq_opset ops[] = {{"", 23}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "causal", &g, NULL), OQ_OK);
    const oq_dim st[] = {OQ_DIM(4), OQ_DIM(2), OQ_DIM(4), OQ_DIM(8)}, ll[] = {OQ_DIM(4), OQ_DIM(4)};
    const oq_dim bl[] = {OQ_DIM_SYM("batch"), OQ_DIM_SYM("seq")}, ble[] = {bl[0], bl[1], OQ_DIM(8)};
    const char *qkv[] = {"Q", "K", "V", "attn_mask"};
    for (int i = 0; i < 3; i++) oq_graph_add_input(g, qkv[i], OQ_DTYPE_FLOAT32, 4, st);
    oq_graph_add_input(g, "attn_mask", mt, 2, ll);
    const char *y = oq_graph_op(g, "Attention", 4, qkv, 0, NULL);
    oq_graph_add_output(g, y, "Y", OQ_DTYPE_FLOAT32, 4, st);
    if (ids) {
        const int64_t es[] = {10, 8};
        oq_tensor *emb = tensor_of("emb", OQ_DTYPE_FLOAT32, 2, es);
        oq_graph_add_input(g, "input_ids", OQ_DTYPE_INT64, 2, bl);
        const char *e = oq_graph_add_initializer(g, emb, "emb");
        const char *x = oq_graph_op(g, "Gather", 2, (const char *[]){e, "input_ids"}, 0, NULL);
        oq_graph_add_output(g, x, "X", OQ_DTYPE_FLOAT32, 3, ble);
        oq_tensor_free(emb);
    }
    assert_int_equal(oq_graph_write(g, path, 1, NULL), OQ_OK);
    oq_graph_free(g);
}

/* A static export's causal mask: x [3,4,4] and `causal_mask` bool [4,4], Where(mask, x, 0) into
 * a Softmax (the attention scores), y out. */
static void static_causal_model(const char *path)
{
    oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "causal_static", &g, NULL), OQ_OK);
    const oq_dim x[] = {OQ_DIM(3), OQ_DIM(4), OQ_DIM(4)}, ll[] = {OQ_DIM(4), OQ_DIM(4)};
    oq_graph_add_input(g, "x", OQ_DTYPE_FLOAT32, 3, x);
    oq_graph_add_input(g, "causal_mask", OQ_DTYPE_BOOL, 2, ll);
    oq_tensor *fill = tensor_of("fill", OQ_DTYPE_FLOAT32, 0, NULL);
    const char *c = oq_graph_add_initializer(g, fill, "fill");
    const char *w = oq_graph_op(g, "Where", 3, (const char *[]){"causal_mask", "x", c}, 0, NULL);
    oq_graph_add_output(g, oq_graph_op(g, "Softmax", 1, &w, 0, NULL), "y", OQ_DTYPE_FLOAT32, 3, x);
    oq_tensor_free(fill);
    assert_int_equal(oq_graph_write(g, path, 1, NULL), OQ_OK);
    oq_graph_free(g);
}

/* One input `name` [batch,seq] of type `dt`, through Identity to the output `out` (a lone rank-2
 * input whose use says nothing). */
static void lone_model(const char *path, const char *name, oq_dtype dt)
{
    oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "lone", &g, NULL), OQ_OK);
    const oq_dim bl[] = {OQ_DIM_SYM("batch"), OQ_DIM_SYM("seq")};
    oq_graph_add_input(g, name, dt, 2, bl);
    oq_graph_add_output(g, oq_graph_op(g, "Identity", 1, &name, 0, NULL), "out", dt, 2, bl);
    assert_int_equal(oq_graph_write(g, path, 1, NULL), OQ_OK);
    oq_graph_free(g);
}

static oq_status signature_of(const char *model, oq_signature *sig, oq_err *err)
{
    oq_validate_opts o;
    oq_validate_opts_default(&o);
    o.kind = OQ_MODEL_USER;
    o.model_path = model;
    oq_model_info *mi;
    assert_int_equal(oq_model_inspect_file(model, &mi, err), OQ_OK);
    return oq_signature_make(&o, NULL, &mi, NULL, sig, err);
}

/* An Attention's [Lq, T] attn_mask (named like a mask) and token ids (the only other rank-2
 * input) are not the [B, L] padding mask: both were taken for it, and the outputs' axes 0 and 2
 * masked by the causal rows (a false green); a lone rank-2 input of no telling use is refused,
 * not guessed. */
static void mask_detection(void **state)
{
    (void)state;
    char *dir = temp_dir("maskdet");
    char *model = path_in(dir, "m.onnx");
    oq_signature sig;
    oq_err err = {0};
    causal_model(model, OQ_DTYPE_BOOL, 0);
    assert_int_equal(signature_of(model, &sig, &err), OQ_OK);
    assert_int_equal(sig.mask, -1);
    assert_non_null(strstr(sig.not_mask, "input 'attn_mask' is not taken as the padding mask: it is an Attention "
                                         "node's attn_mask as it is"));
    oq_signature_clear(&sig);
    causal_model(model, OQ_DTYPE_BOOL, 1);
    assert_int_equal(signature_of(model, &sig, &err), OQ_OK);
    assert_int_equal(sig.mask, -1);
    oq_signature_clear(&sig);
    /* a static [L, L] causal mask into the scores (no Attention node): its 4 rows were counted
     * as the events of a batch of 3 (QA round 6, 4) */
    static_causal_model(model);
    assert_int_equal(signature_of(model, &sig, &err), OQ_OK);
    assert_int_equal(sig.mask, -1);
    assert_non_null(strstr(sig.not_mask, "input 'causal_mask' is not taken as the padding mask: its two axes have one "
                                         "fixed size, as a query x key [L, L] mask or bias has"));
    oq_signature_clear(&sig);
    lone_model(model, "valid", OQ_DTYPE_BOOL);
    assert_int_equal(signature_of(model, &sig, &err), OQ_ERR_INVALID_ARG);
    char want[1100];
    snprintf(want, sizeof want, "%s: input 'valid' is the only rank-2 input, and nothing in the model says whether "
             "it is a padding mask: name the [B, L] padding mask (mask_name valid) or say there is none (no_mask)",
             model);
    assert_string_equal(err.msg, want);
    causal_model(model, OQ_DTYPE_BOOL, 0); /* two named like a mask: which one is not guessed */
    oq_model_info *two;
    assert_int_equal(oq_model_inspect_file(model, &two, &err), OQ_OK);
    free(two->inputs[0].name);
    two->inputs[0].name = strdup("q_mask");
    for (int32_t d = 2; d < two->inputs[0].rank; d++) free(two->inputs[0].dims[d]); /* freed by rank */
    two->inputs[0].rank = 2;
    free(two->inputs[3].dims[0]); /* attn_mask [2, 4]: a square one is no [B, L] mask (static_causal_model) */
    two->inputs[3].dims[0] = strdup("2");
    oq_validate_opts o;
    oq_validate_opts_default(&o);
    o.kind = OQ_MODEL_USER;
    o.model_path = model;
    unsigned *none = calloc(4, sizeof *none);
    none[0] = OQ_USE_KEY_PADDING; /* (read as one by its operator) */
    assert_int_equal(oq_signature_make_used(&o, NULL, &two, &none, NULL, NULL, &sig, &err), OQ_ERR_INVALID_ARG);
    free(none);
    oq_model_info_free(two);
    assert_non_null(strstr(err.msg, ": inputs 'q_mask' and 'attn_mask' may each be the padding mask: name the [B, L] "
                                    "padding mask (mask_name NAME) or say there is none (no_mask)"));
    lone_model(model, "pad_mask", OQ_DTYPE_BOOL); /* named like one: taken, and said so */
    assert_int_equal(signature_of(model, &sig, &err), OQ_OK);
    assert_int_equal(sig.mask, 0);
    assert_string_equal(sig.mask_why, "its name contains \"mask\"");
    oq_signature_clear(&sig);
    remove_dir(dir);
    free(model);
}

/* pixel_patches [batch,n,8] and bool_masked_pos [batch,n] of ViT's masked image modelling (the
 * mask token in place of the masked patches, then a projection); with `scores`, a self-attention
 * over them whose scores get BERT's additive mask from attention_mask [batch,n] int64:
 * (1 - mask) * -1e4. */
static void mim_model(const char *path, int scores)
{
    oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "mim", &g, NULL), OQ_OK);
    const oq_dim bl[] = {OQ_DIM_SYM("batch"), OQ_DIM_SYM("n")}, ble[] = {bl[0], bl[1], OQ_DIM(8)};
    oq_graph_add_input(g, "pixel_patches", OQ_DTYPE_FLOAT32, 3, ble);
    oq_graph_add_input(g, "bool_masked_pos", OQ_DTYPE_BOOL, 2, bl);
    const int64_t last[] = {-1}, second[] = {1}, ws[] = {8, 8}, ts[] = {8}, perm[] = {0, 2, 1};
    oq_tensor *w = tensor_of("w", OQ_DTYPE_FLOAT32, 2, ws), *tok = tensor_of("mask_token", OQ_DTYPE_FLOAT32, 1, ts);
    const char *wn = oq_graph_add_initializer(g, w, "w"), *tn = oq_graph_add_initializer(g, tok, "mask_token");
    const char *m3 = oq_graph_op(g, "Unsqueeze", 2, (const char *[]){"bool_masked_pos", oq_graph_const_i64(g, "ax", 1, last)},
                                 0, NULL);
    const char *x = oq_graph_op(g, "Where", 3, (const char *[]){m3, tn, "pixel_patches"}, 0, NULL);
    const char *y = oq_graph_op(g, "MatMul", 2, (const char *[]){x, wn}, 0, NULL);
    if (scores) {
        oq_graph_add_input(g, "attention_mask", OQ_DTYPE_INT64, 2, bl);
        const oq_attr to_float = OQ_ATTR_I("to", OQ_DTYPE_FLOAT32), tr = OQ_ATTR_IS("perm", 3, perm);
        const char *f = oq_graph_op(g, "Cast", 1, (const char *[]){"attention_mask"}, 1, &to_float);
        const char *inv = oq_graph_op(g, "Sub", 2, (const char *[]){oq_graph_const_f32(g, "one", 1), f}, 0, NULL);
        const char *bias = oq_graph_op(g, "Mul", 2, (const char *[]){inv, oq_graph_const_f32(g, "min", -1e4f)}, 0, NULL);
        const char *b3 = oq_graph_op(g, "Unsqueeze", 2, (const char *[]){bias, oq_graph_const_i64(g, "ax1", 1, second)},
                                     0, NULL);
        const char *kt = oq_graph_op(g, "Transpose", 1, &y, 1, &tr);
        const char *sc = oq_graph_op(g, "MatMul", 2, (const char *[]){y, kt}, 0, NULL);
        const char *p = oq_graph_op(g, "Softmax", 1, (const char *[]){oq_graph_op(g, "Add", 2, (const char *[]){sc, b3},
                                                                                  0, NULL)}, 0, NULL);
        y = oq_graph_op(g, "MatMul", 2, (const char *[]){p, y}, 0, NULL);
    }
    oq_graph_add_output(g, y, "last_hidden_state", OQ_DTYPE_FLOAT32, 3, ble);
    assert_int_equal(oq_graph_write(g, path, 1, NULL), OQ_OK);
    oq_graph_free(g);
    oq_tensor_free(w);
    oq_tensor_free(tok);
}

/* features [batch,n,8] zeroed where the bool `mask` [batch,n] is 0, projected, and attended by
 * an Attention-24 whose nonpad_kv_seqlen is the mask summed (ortqual's attention24 encoder). */
static void seqlen_model(const char *path)
{
    oq_opset ops[] = {{"", 24}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "seqlen", &g, NULL), OQ_OK);
    const oq_dim bl[] = {OQ_DIM_SYM("batch"), OQ_DIM_SYM("n")}, ble[] = {bl[0], bl[1], OQ_DIM(8)};
    oq_graph_add_input(g, "features", OQ_DTYPE_FLOAT32, 3, ble);
    oq_graph_add_input(g, "mask", OQ_DTYPE_BOOL, 2, bl);
    const int64_t last[] = {-1}, one[] = {1}, ws[] = {8, 8};
    oq_tensor *w = tensor_of("w", OQ_DTYPE_FLOAT32, 2, ws);
    const oq_attr f32 = OQ_ATTR_I("to", OQ_DTYPE_FLOAT32), i32 = OQ_ATTR_I("to", OQ_DTYPE_INT32);
    const oq_attr heads[] = {OQ_ATTR_I("q_num_heads", 2), OQ_ATTR_I("kv_num_heads", 2)};
    const char *m = oq_graph_op(g, "Cast", 1, (const char *[]){"mask"}, 1, &f32);
    const char *m3 = oq_graph_op(g, "Unsqueeze", 2, (const char *[]){m, oq_graph_const_i64(g, "ax", 1, last)}, 0, NULL);
    const char *x = oq_graph_op(g, "Mul", 2, (const char *[]){"features", m3}, 0, NULL);
    const char *y = oq_graph_op(g, "MatMul", 2, (const char *[]){x, oq_graph_add_initializer(g, w, "w")}, 0, NULL);
    const char *mi = oq_graph_op(g, "Cast", 1, (const char *[]){"mask"}, 1, &i32);
    const char *lens = oq_graph_op(g, "ReduceSum", 2, (const char *[]){mi, oq_graph_const_i64(g, "ax1", 1, one)}, 0,
                                   NULL);
    const char *o = oq_graph_op(g, "Attention", 7, (const char *[]){y, y, y, "", "", "", lens}, 2, heads);
    oq_graph_add_output(g, o, "y", OQ_DTYPE_FLOAT32, 3, ble);
    assert_int_equal(oq_graph_write(g, path, 1, NULL), OQ_OK);
    oq_graph_free(g);
    oq_tensor_free(w);
}

/* An input named like a mask that the graph uses on the data and never on attention scores is
 * not the padding mask: ViT's bool_masked_pos was taken by its name, and the patches after its
 * prefix of masked ones (all valid) set apart as padding, their wrong values "reported, not
 * judged" (a false PASSED). Beside a mask the scores get, that one is taken, and why is said;
 * a mask that zeroes the data and is summed into an Attention-24's key lengths is one. */
static void mask_named_but_on_data(void **state)
{
    (void)state;
    char *dir = temp_dir("mim");
    char *model = path_in(dir, "m.onnx");
    oq_signature sig;
    oq_err err = {0};
    mim_model(model, 0);
    assert_int_equal(signature_of(model, &sig, &err), OQ_OK);
    assert_int_equal(sig.mask, -1);
    assert_non_null(strstr(sig.not_mask, "input 'bool_masked_pos' is not taken as the padding mask: the model uses it "
                                         "on its data (it flows into a MatMul"));
    oq_signature_clear(&sig);
    mim_model(model, 1);
    assert_int_equal(signature_of(model, &sig, &err), OQ_OK);
    assert_int_equal(sig.mask, 2);
    assert_string_equal(sig.mask_why, "its name contains \"mask\" and it flows into the attention scores");
    oq_signature_clear(&sig);
    seqlen_model(model); /* a padding mask that zeroes the data too: its sum is the keys' lengths */
    assert_int_equal(signature_of(model, &sig, &err), OQ_OK);
    assert_int_equal(sig.mask, 1);
    oq_signature_clear(&sig);
    remove_dir(dir);
    free(model);
}

/* q [batch,2,seq,4] (heads on axis 1) before the features [batch,seq,3] when `features`, and
 * lengths [batch]: no mask. */
static void unmasked_model(const char *path, int features)
{
    oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "nomask", &g, NULL), OQ_OK);
    const oq_dim b = OQ_DIM_SYM("batch"), l = OQ_DIM_SYM("seq");
    const oq_dim q[] = {b, OQ_DIM(2), l, OQ_DIM(4)}, f[] = {b, l, OQ_DIM(3)};
    oq_graph_add_input(g, "q", OQ_DTYPE_FLOAT32, 4, q);
    if (features) oq_graph_add_input(g, "features", OQ_DTYPE_FLOAT32, 3, f);
    oq_graph_add_input(g, "lens", OQ_DTYPE_INT64, 1, &b);
    oq_graph_add_output(g, oq_graph_op(g, "Identity", 1, (const char *[]){"q"}, 0, NULL), "y", OQ_DTYPE_FLOAT32, 4, q);
    assert_int_equal(oq_graph_write(g, path, 1, NULL), OQ_OK);
    oq_graph_free(g);
}

/* Without a mask, a batch's padded length (summary.json's padded_length, lengths, valid_size
 * and the lengths written beside the inputs) is the sequence an input tells (the features'
 * axis 1), else not known (0): it was axis 1 of the first input, the heads of q [B,H,L,D]. */
static void unmasked_padded_length(void **state)
{
    (void)state;
    char *dir = temp_dir("nomask");
    char *model = path_in(dir, "m.onnx"), *io = path_in(dir, "io.npz");
    for (int features = 0; features < 2; features++) {
        unmasked_model(model, features);
        const int64_t qs[] = {3, 2, 5, 4}, fs[] = {3, 5, 3}, ls[] = {3};
        oq_tensor *t[3] = {tensor_of("q", OQ_DTYPE_FLOAT32, 4, qs), tensor_of("lens", OQ_DTYPE_INT64, 1, ls),
                           tensor_of("features", OQ_DTYPE_FLOAT32, 3, fs)};
        assert_int_equal(oq_npz_write(io, 2 + (size_t)features, (const oq_tensor *const *)t, 0, 1, NULL), OQ_OK);
        for (int i = 0; i < 3; i++) oq_tensor_free(t[i]);
        oq_signature sig;
        oq_err err = {0};
        assert_int_equal(signature_of(model, &sig, &err), OQ_OK);
        assert_int_equal(sig.mask, -1);
        oq_batch_inputs in;
        assert_int_equal(oq_signature_read_inputs(&sig, io, &in, &err), OQ_OK);
        assert_int_equal(in.batch, 3);
        assert_int_equal(in.seq, features ? 5 : 0);
        assert_null(in.lengths);
        oq_batch_inputs_clear(&in);
        oq_signature_clear(&sig);
    }
    remove_dir(dir);
    free(model);
    free(io);
}

/* io.npz for unmasked_model(.., 0): q (every value `v`), lens, event_indices (first, first+1,
 * first+2) and the output y (every value -v). */
static void user_batch(const char *path, float v, int64_t first)
{
    const int64_t qs[] = {3, 2, 5, 4}, bs[] = {3};
    oq_tensor *t[4] = {tensor_of("q", OQ_DTYPE_FLOAT32, 4, qs), tensor_of("lens", OQ_DTYPE_INT64, 1, bs),
                       tensor_of("event_indices", OQ_DTYPE_INT64, 1, bs), tensor_of("y", OQ_DTYPE_FLOAT32, 4, qs)};
    for (int64_t i = 0; i < 3 * 2 * 5 * 4; i++) {
        ((float *)t[0]->data)[i] = v;
        ((float *)t[3]->data)[i] = -v;
    }
    for (int64_t i = 0; i < 3; i++) ((int64_t *)t[2]->data)[i] = first + i;
    assert_int_equal(oq_npz_write(path, 4, (const oq_tensor *const *)t, 0, 1, NULL), OQ_OK);
    for (int i = 0; i < 4; i++) oq_tensor_free(t[i]);
}

/* A user's batch is read once (oq_user_file_read: prepare.c's loaded_batch takes its SHA-256,
 * event ids, inputs and expected outputs from that read): the file replaced after the read, the
 * hash, ids, inputs and outputs all still describe the bytes read, never the file's new ones (each
 * was read from the file anew: the recorded hash could be of other bytes than those judged). */
static void user_batch_read_once(void **state)
{
    (void)state;
    char *dir = temp_dir("readonce");
    char *model = path_in(dir, "m.onnx"), *io = path_in(dir, "io.npz"), *out = path_in(dir, "exp.npz");
    unmasked_model(model, 0);
    user_batch(io, 1.5f, 7);
    char first[65], second[65];
    assert_int_equal(oq_sha256_file(io, first, NULL), OQ_OK);
    oq_user_file f;
    oq_err err = {0};
    assert_int_equal(oq_user_file_read(io, &f, &err), OQ_OK);
    user_batch(io, 2.5f, 100); /* the file changes after its one read */
    assert_int_equal(oq_sha256_file(io, second, NULL), OQ_OK);
    assert_string_not_equal(first, second);
    assert_string_equal(f.sha256, first);
    oq_signature sig;
    assert_int_equal(signature_of(model, &sig, &err), OQ_OK);
    oq_event_ids ids;
    assert_int_equal(oq_event_ids_read(f.z, io, 0, &ids, &err), OQ_OK);
    assert_int_equal(oq_event_id(&ids, 0), 7);
    oq_batch_inputs in;
    assert_int_equal(oq_signature_take_batch(&sig, f.z, io, &ids, &in, &err), OQ_OK);
    assert_true(((const float *)in.t[0]->data)[0] == 1.5f);
    assert_int_equal(oq_signature_expected(&sig, &in, f.z, io, out, &err), OQ_OK);
    oq_npz *e;
    assert_int_equal(oq_npz_read(out, &e, &err), OQ_OK);
    assert_true(((const float *)oq_npz_get(e, "y")->data)[0] == -1.5f);
    oq_npz_free(e);
    oq_batch_inputs_clear(&in);
    oq_event_ids_clear(&ids);
    oq_user_file_clear(&f);
    oq_signature_clear(&sig);
    /* one read of a regular file only: a FIFO is refused, not waited on */
    char *fifo = path_in(dir, "fifo.npz");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(oq_user_file_read(fifo, &f, &err), OQ_ERR_IO);
    assert_non_null(strstr(err.msg, "fifo.npz"));
    assert_null(f.z);
    remove_dir(dir);
    free(model);
    free(io);
    free(out);
    free(fifo);
}

/* An --expected file's event_indices name the run's events of its batch also where the inputs
 * file has none (its events numbered 0, 1, 2): outputs saved for events 5, 6, 7 were taken in
 * silence (QA round 6, defect 10). */
static void saved_event_ids_match_numbered(void **state)
{
    (void)state;
    char *dir = temp_dir("savedids"), *saved = path_in(dir, "outputs_000.npz");
    oq_event_ids numbered = {.first = 0}, own = {0};
    int64_t mine[] = {100, 101, 102};
    own.v = mine;
    own.n = 3;
    oq_err err = {0};
    const struct {
        int64_t first;
        const oq_event_ids *ids;
        oq_status st;
        const char *msg;
    } cases[] = {
        {5, &numbered, OQ_ERR_INVALID_ARG, "outputs_000.npz: event_indices[0] is 5 where in.npz has event 0 (numbered "
                                           "on from the files before it: it has no member 'event_indices'): the saved "
                                           "outputs are of other events than their inputs"},
        {0, &numbered, OQ_OK, ""},
        {100, &own, OQ_OK, ""},
        {101, &own, OQ_ERR_INVALID_ARG, "outputs_000.npz: event_indices[0] is 101 where in.npz has event 100: the saved"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        user_batch(saved, 1.5f, cases[i].first);
        oq_npz *z;
        assert_int_equal(oq_npz_read(saved, &z, NULL), OQ_OK);
        err = (oq_err){0};
        assert_int_equal(oq_event_ids_match(z, saved, cases[i].ids, "in.npz", 3, &err), cases[i].st);
        if (!strstr(err.msg, cases[i].msg)) fail_msg("case %zu: %s", i, err.msg);
        /* one id per event of the batch */
        assert_int_equal(oq_event_ids_match(z, saved, cases[i].ids, "in.npz", 2, &err), OQ_ERR_INVALID_ARG);
        assert_non_null(strstr(err.msg, "3 event_indices, where in.npz has 2 events"));
        oq_npz_free(z);
    }
    oq_npz *none;
    assert_int_equal(oq_npz_read(OQ_SOURCE_DIR "/tests/fixtures/torch/decoder_lm/outputs_000.npz", &none, NULL), OQ_OK);
    assert_int_equal(oq_event_ids_match(none, "o.npz", &numbered, "in.npz", 3, &err), OQ_OK);
    oq_npz_free(none);
    remove_dir(dir);
    free(saved);
}

/* Outputs an inputs file holds (an io.npz) beside the --expected file paired with it are the same
 * values, or the run is refused naming the element: the inputs file's were dropped in silence, and
 * one off by 1.0 passed (QA round 6, defect 3). */
static void saved_outputs_held_twice_agree(void **state)
{
    (void)state;
    char *dir = temp_dir("heldtwice");
    char *model = path_in(dir, "m.onnx"), *io = path_in(dir, "io.npz"), *same = path_in(dir, "same.npz"),
         *other = path_in(dir, "other.npz");
    unmasked_model(model, 0);
    user_batch(io, 1.5f, 0);
    user_batch(same, 1.5f, 0);
    user_batch(other, 1.5f, 0);
    oq_npz *z;
    assert_int_equal(oq_npz_read(other, &z, NULL), OQ_OK); /* other's y[0,0,0,3] moved by 1 */
    oq_tensor *y;
    assert_int_equal(oq_npz_take(z, "y", &y, NULL), OQ_OK);
    ((float *)y->data)[3] += 1.0f;
    const oq_tensor *keep[] = {y};
    assert_int_equal(oq_npz_write(other, 1, keep, 0, 1, NULL), OQ_OK);
    oq_tensor_free(y);
    oq_npz_free(z);
    oq_signature sig;
    oq_err err = {0};
    assert_int_equal(signature_of(model, &sig, &err), OQ_OK);
    oq_npz *held, *a, *b;
    assert_int_equal(oq_npz_read(io, &held, NULL), OQ_OK);
    assert_int_equal(oq_npz_read(same, &a, NULL), OQ_OK);
    assert_int_equal(oq_npz_read(other, &b, NULL), OQ_OK);
    assert_int_equal(oq_signature_same_saved(&sig, held, io, a, same, &err), OQ_OK);
    assert_int_equal(oq_signature_same_saved(&sig, held, io, b, other, &err), OQ_ERR_INVALID_ARG);
    if (!strstr(err.msg, "io.npz: member 'y' (an output) holds -1.5 at element [0,0,0,3], but ") ||
        !strstr(err.msg, "other.npz (the expected file, the reference) holds -0.5 there: two saved references of one output "
                         "disagree"))
        fail_msg("%s", err.msg);
    /* an inputs file without the outputs: nothing to agree with */
    oq_tensor *gone;
    assert_int_equal(oq_npz_take(held, "y", &gone, NULL), OQ_OK);
    oq_tensor_free(gone);
    assert_int_equal(oq_signature_same_saved(&sig, held, io, b, other, &err), OQ_OK);
    oq_npz_free(held);
    oq_npz_free(a);
    oq_npz_free(b);
    oq_signature_clear(&sig);
    remove_dir(dir);
    free(model);
    free(io);
    free(same);
    free(other);
}

/* A configuration under test whose every valid element is an infinity the reference holds too
 * compared no value: the run is NOT TESTED, saying so (it was PASSED with max|err| 0); one finite
 * element compared makes it a pass (QA round 6, defect 5). */
static void matched_infinities_compare_nothing(void **state)
{
    (void)state;
    oq_output_result out = {0};
    oq_config_result c[2] = {0};
    oq_config_parse("expected", &c[0].config, NULL);
    oq_config_parse("cpu:model:fp32", &c[1].config, NULL);
    c[0].is_reference = 1;
    c[0].status = OQ_VERDICT_REFERENCE;
    c[1].status = OQ_VERDICT_PASSED;
    c[1].outputs = &out;
    c[1].n_outputs = 1;
    out.all.num_valid = out.all.inf_matched = 4;
    oq_validate_summary s = {0};
    s.configs = c;
    s.n_configs = 2;
    oq_validate_judge(&s, 0);
    assert_int_equal(s.verdict, OQ_RUN_UNTESTED);
    assert_int_equal(s.exit_status, 1);
    assert_int_equal(s.n_tested, 0);
    if (!s.verdict_reason || !strstr(s.verdict_reason, "no finite value was compared: every valid element of "
                                                       "cpu:model:fp32's outputs is an infinity the reference holds"))
        fail_msg("%s", s.verdict_reason ? s.verdict_reason : "(none)");
    free(s.verdict_reason);
    s = (oq_validate_summary){.configs = c, .n_configs = 2};
    out.all.num_valid = 5; /* one finite element besides */
    oq_validate_judge(&s, 0);
    assert_int_equal(s.verdict, OQ_RUN_PASSED);
    assert_int_equal(s.n_tested, 1);
    free(s.verdict_reason);
}

/* One output all matched infinities beside a finite one: the configuration compared values, but
 * none of that output's (it was PASSED, its max|err| 0); NOT TESTED naming it, as the output
 * alone is; both compared, a pass. */
static void matched_infinities_in_one_output(void **state)
{
    (void)state;
    oq_output_result out[2] = {0};
    oq_config_result c[2] = {0};
    oq_config_parse("expected", &c[0].config, NULL);
    oq_config_parse("cpu:model:fp32", &c[1].config, NULL);
    c[0].is_reference = 1;
    c[0].status = OQ_VERDICT_REFERENCE;
    c[1].status = OQ_VERDICT_PASSED;
    c[1].outputs = out;
    c[1].n_outputs = 2;
    snprintf(out[0].all.name, sizeof out[0].all.name, "y");
    snprintf(out[1].all.name, sizeof out[1].all.name, "z");
    out[0].all.num_valid = out[0].all.inf_matched = 4;
    out[1].all.num_valid = 4;
    assert_true(oq_compare_judged_nothing(&out[0].all));
    assert_false(oq_compare_judged_nothing(&out[1].all));
    assert_false(oq_compare_judged_nothing(NULL));
    oq_validate_summary s = {.configs = c, .n_configs = 2};
    oq_validate_judge(&s, 1);
    assert_int_equal(s.verdict, OQ_RUN_UNTESTED);
    assert_int_equal(s.exit_status, 0); /* allow_skip */
    assert_int_equal(s.n_tested, 0);
    if (!s.verdict_reason || !strstr(s.verdict_reason, "every valid element of cpu:model:fp32's output 'y' is an "
                                                       "infinity the reference holds too"))
        fail_msg("%s", s.verdict_reason ? s.verdict_reason : "(none)");
    free(s.verdict_reason);
    s = (oq_validate_summary){.configs = c, .n_configs = 2};
    out[0].all.num_valid = 5; /* one finite element of y */
    oq_validate_judge(&s, 0);
    assert_int_equal(s.verdict, OQ_RUN_PASSED);
    free(s.verdict_reason);
}

/* A model that passes its input q through as its output q: an io.npz's one member q is both the
 * input fed and the output saved, read from the same one read of the file (the inputs' members
 * are taken out of it first: q was gone when the saved outputs were looked for). */
static void user_batch_passthrough_output(void **state)
{
    (void)state;
    char *dir = temp_dir("passq");
    char *model = path_in(dir, "m.onnx"), *io = path_in(dir, "io.npz");
    oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "passq", &g, NULL), OQ_OK);
    const oq_dim b = OQ_DIM_SYM("batch"), q[] = {b, OQ_DIM(2), OQ_DIM_SYM("seq"), OQ_DIM(4)};
    oq_graph_add_input(g, "q", OQ_DTYPE_FLOAT32, 4, q);
    oq_graph_add_input(g, "lens", OQ_DTYPE_INT64, 1, &b);
    assert_int_equal(oq_graph_add_output(g, "q", "q", OQ_DTYPE_FLOAT32, 4, q), OQ_OK);
    assert_int_equal(oq_graph_write(g, model, 1, NULL), OQ_OK);
    oq_graph_free(g);
    const int64_t qs[] = {3, 2, 5, 4}, bs[] = {3};
    oq_tensor *t[2] = {tensor_of("q", OQ_DTYPE_FLOAT32, 4, qs), tensor_of("lens", OQ_DTYPE_INT64, 1, bs)};
    assert_int_equal(oq_npz_write(io, 2, (const oq_tensor *const *)t, 0, 1, NULL), OQ_OK);
    for (int i = 0; i < 2; i++) oq_tensor_free(t[i]);
    oq_signature sig;
    oq_err err = {0};
    assert_int_equal(signature_of(model, &sig, &err), OQ_OK);
    oq_user_file f;
    assert_int_equal(oq_user_file_read(io, &f, &err), OQ_OK);
    oq_batch_inputs in;
    assert_int_equal(oq_signature_take_batch(&sig, f.z, io, NULL, &in, &err), OQ_OK);
    oq_status st = oq_signature_expected(&sig, &in, f.z, io, NULL, &err);
    assert_string_equal(err.msg, "");
    assert_int_equal(st, OQ_OK);
    oq_batch_inputs_clear(&in);
    oq_user_file_clear(&f);
    oq_signature_clear(&sig);
    remove_dir(dir);
    free(model);
    free(io);
}

/* A guessed mask whose values break the contract: the message says it was guessed and how to
 * decide (it read as a broken mask, about token ids or an Attention mask). */
static void guessed_mask_says_so(void **state)
{
    (void)state;
    char *dir = temp_dir("guessed");
    char *model = path_in(dir, "m.onnx"), *io = path_in(dir, "io.npz");
    lone_model(model, "pad_mask", OQ_DTYPE_INT64);
    oq_signature sig;
    oq_err err = {0};
    assert_int_equal(signature_of(model, &sig, &err), OQ_OK);
    const int64_t bl[] = {1, 3};
    oq_tensor *t = tensor_of("pad_mask", OQ_DTYPE_INT64, 2, bl);
    for (int64_t i = 0; i < 3; i++) oq_tensor_set_f64(t, i, 6);
    assert_int_equal(oq_npz_write(io, 1, (const oq_tensor *const *)&t, 0, 1, NULL), OQ_OK);
    oq_tensor_free(t);
    oq_batch_inputs in;
    assert_int_not_equal(oq_signature_read_inputs(&sig, io, &in, &err), OQ_OK);
    char want[1100];
    snprintf(want, sizeof want, "%s: mask 'pad_mask': event 0, position 0: mask value 6 is not 0 or 1 (input "
             "'pad_mask' was taken as the [B, L] padding mask because its name contains \"mask\": mask_name names "
             "the mask, no_mask says there is none)", io);
    assert_string_equal(err.msg, want);
    /* taken by its name alone, a broken row says so too: the input may be no padding mask */
    t = tensor_of("pad_mask", OQ_DTYPE_INT64, 2, bl);
    oq_tensor_set_f64(t, 2, 1);
    assert_int_equal(oq_npz_write(io, 1, (const oq_tensor *const *)&t, 0, 1, NULL), OQ_OK);
    oq_tensor_free(t);
    assert_int_equal(oq_signature_read_inputs(&sig, io, &in, &err), OQ_ERR_MASK);
    snprintf(want, sizeof want, "%s: mask 'pad_mask': event 0: left padding: position 0 is 0 but position 2 is 1",
             io);
    if (strncmp(err.msg, want, strlen(want)) ||
        !strstr(err.msg, "(input 'pad_mask' was taken as the [B, L] padding mask because its name contains \"mask\""))
        fail_msg("%s", err.msg);
    oq_signature_clear(&sig);
    remove_dir(dir);
    free(model);
    free(io);
}

/* The causal model's batch: Q, K random, V zero (Y is zero), attn_mask causal of type `mt`
 * (float: 0 / -inf), Y zero but `bad` at event 0, positions 1..3 (where the causal rows, read
 * as a padding mask, left nothing valid); `at` >= 0: `v` written at element `at` of the mask. */
static void causal_io(const char *path, oq_dtype mt, double bad, int64_t at, double v)
{
    const int64_t st[] = {4, 2, 4, 8}, ll[] = {4, 4};
    oq_tensor *t[5] = {tensor_of("Q", OQ_DTYPE_FLOAT32, 4, st), tensor_of("K", OQ_DTYPE_FLOAT32, 4, st),
                       tensor_of("V", OQ_DTYPE_FLOAT32, 4, st), tensor_of("attn_mask", mt, 2, ll),
                       tensor_of("Y", OQ_DTYPE_FLOAT32, 4, st)};
    for (int64_t i = 0; i < 256; i++) {
        oq_tensor_set_f64(t[0], i, 0.01 * (double)(i % 17));
        oq_tensor_set_f64(t[1], i, -0.02 * (double)(i % 13));
        oq_tensor_set_f64(t[4], i, i < 64 && i / 8 % 4 ? bad : 0); /* [0, h, 1..3, :] */
    }
    for (int64_t i = 0; i < 16; i++)
        oq_tensor_set_f64(t[3], i, mt == OQ_DTYPE_BOOL ? i % 4 <= i / 4 : i % 4 <= i / 4 ? 0 : -INFINITY);
    if (at >= 0) oq_tensor_set_f64(t[3], at, v);
    assert_int_equal(oq_npz_write(path, 5, (const oq_tensor *const *)t, 0, 1, NULL), OQ_OK);
    for (int i = 0; i < 5; i++) oq_tensor_free(t[i]);
}

/* The QA's repro: Y wrong by 7 at event 0, positions 1..3 fails (it passed, the causal rows
 * taken as the padding mask); and the same model with a float 0/-inf mask runs (-inf was
 * refused as "inputs must be finite"), a correct Y passing, NaN and +inf still refused. */
static void causal_mask_is_no_padding(void **state)
{
    (void)state;
    char *dir = temp_dir("causal");
    char *model = path_in(dir, "m.onnx"), *io = path_in(dir, "io.npz");
    oq_validate_summary *s = NULL;
    oq_err err = {0};
    causal_model(model, OQ_DTYPE_BOOL, 0);
    causal_io(io, OQ_DTYPE_BOOL, 7.0, -1, 0);
    assert_int_equal(run_signature(dir, model, io, "bad", &s, &err), OQ_OK);
    assert_int_equal(s->verdict, OQ_RUN_FAILED);
    assert_null(s->mask_input);
    oq_validate_summary_free(s);
    causal_model(model, OQ_DTYPE_FLOAT32, 0);
    causal_io(io, OQ_DTYPE_FLOAT32, 0, -1, 0);
    if (run_signature(dir, model, io, "float", &s, &err)) fail_msg("%s", err.msg);
    if (s->verdict != OQ_RUN_PASSED) fail_msg("%s: %s", oq_run_verdict_name(s->verdict), s->verdict_reason);
    oq_validate_summary_free(s);
    oq_signature sig;
    assert_int_equal(signature_of(model, &sig, &err), OQ_OK);
    const double refused[] = {NAN, INFINITY};
    for (int k = 0; k < 2; k++) {
        causal_io(io, OQ_DTYPE_FLOAT32, 0, 6, refused[k]);
        oq_batch_inputs in;
        assert_int_equal(oq_signature_read_inputs(&sig, io, &in, &err), OQ_ERR_FORMAT);
        assert_non_null(strstr(err.msg, k ? "input 'attn_mask': element 6 is inf" : "input 'attn_mask': element 6 is NaN"));
    }
    oq_signature_clear(&sig);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
    free(model);
    free(io);
}

/* ---- generated events for a model of yours ------------------------------------------------ */

/* features [batch, seq, F] (F fixed, or named where `f` is 0) and a mask; the output is the
 * features. */
static void features_model(const char *path, int64_t f)
{
    oq_opset ops[] = {{"", 18}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "width", &g, NULL), OQ_OK);
    const oq_dim bl[] = {OQ_DIM_SYM("batch"), OQ_DIM_SYM("seq")};
    const oq_dim blf[] = {bl[0], bl[1], f ? OQ_DIM(f) : OQ_DIM_SYM("f")};
    oq_graph_add_input(g, "features", OQ_DTYPE_FLOAT32, 3, blf);
    oq_graph_add_input(g, "mask", OQ_DTYPE_BOOL, 2, bl);
    const char *y = oq_graph_op(g, "Identity", 1, (const char *[]){"features"}, 0, NULL);
    oq_graph_add_output(g, y, "y", OQ_DTYPE_FLOAT32, 3, blf);
    assert_int_equal(oq_graph_write(g, path, 1, NULL), OQ_OK);
    oq_graph_free(g);
}

/* oq_validate_run of `model` on generated events with events.num_features `asked` (0: none
 * asked) into dir/out; the width of the features written into *width (0 when refused). */
static oq_status run_generated(const char *dir, const char *model, int64_t asked, int64_t *width, oq_err *err)
{
    oq_config cfg;
    oq_config_parse("cpu:model:fp32", &cfg, NULL);
    oq_validate_opts o;
    oq_validate_opts_default(&o);
    o.kind = OQ_MODEL_USER;
    o.model_path = model;
    o.events.num_events = 2;
    o.events.num_features = asked;
    o.configs = &cfg;
    o.n_configs = 1;
    o.repeat = 1;
    o.isolate = 0;
    o.plots = 0;
    o.ort_lib = OQ_ORT_LIB;
    char out[512], inputs[600];
    snprintf(out, sizeof out, "%s/out", dir);
    o.outdir = out;
    oq_validate_summary *s = NULL;
    oq_status st = oq_validate_run(&o, &s, err);
    oq_validate_summary_free(s);
    snprintf(inputs, sizeof inputs, "%s/inputs_000.npz", out);
    oq_npz *z = NULL;
    const oq_tensor *x = !st && oq_npz_read(inputs, &z, NULL) == OQ_OK ? oq_npz_get(z, "features") : NULL;
    *width = x ? x->shape[2] : 0;
    oq_npz_free(z);
    oq_remove_tree(out);
    return st;
}

/* The events take the width the model fixes; a width asked of the library (not only of the
 * tool) counts only where the model leaves it open, and is refused where it fixes another or
 * has no input the features feed, in the tool's words. */
static void generated_features_width(void **state)
{
    (void)state;
    char *dir = temp_dir("width");
    char *fixed = path_in(dir, "fixed.onnx"), *open = path_in(dir, "open.onnx"), *none = path_in(dir, "none.onnx");
    features_model(fixed, 3);
    features_model(open, 0);
    signature_model(none); /* ids, a mask, a cache: no rank-3 float input */
    oq_err err = {0};
    int64_t width;
    char want[OQ_ERR_MSG_MAX];
    assert_int_equal(run_generated(dir, fixed, 5, &width, &err), OQ_ERR_INVALID_ARG);
    snprintf(want, sizeof want, "events.num_features 5: %s's input 'features' fixes 3 features, and generated events "
             "take that width", fixed);
    assert_string_equal(err.msg, want);
    assert_int_equal(run_generated(dir, none, 5, &width, &err), OQ_ERR_INVALID_ARG);
    snprintf(want, sizeof want, "events.num_features sizes generated events' features, and %s has no input they feed "
             "(a rank-3 float one, or features_name)", none);
    assert_string_equal(err.msg, want);
    assert_int_equal(run_generated(dir, fixed, 3, &width, &err), OQ_OK);
    assert_int_equal(width, 3);
    assert_int_equal(run_generated(dir, fixed, 0, &width, &err), OQ_OK);
    assert_int_equal(width, 3);
    assert_int_equal(run_generated(dir, open, 5, &width, &err), OQ_OK);
    assert_int_equal(width, 5);
    assert_int_equal(run_generated(dir, open, 0, &width, &err), OQ_OK);
    assert_int_equal(width, 8);
    free(fixed);
    free(open);
    free(none);
    remove_dir(dir);
}

/* ---- a user's event ids -------------------------------------------------------------- */

/* The run's ids: 5000 packed (run << 32 | event) ids over two files pass, the set growing past
 * its first size; one id again is refused, naming both files and indices. */
static void event_ids_seen_once(void **state)
{
    (void)state;
    const char *paths[] = {"a.npz", "b.npz"};
    int64_t ids[2500];
    oq_event_seen *seen;
    oq_err err = {0};
    assert_int_equal(oq_event_seen_create(&seen, &err), OQ_OK);
    for (size_t f = 0; f < 2; f++) {
        for (int64_t i = 0; i < 2500; i++) ids[i] = ((int64_t)(356123 + f) << 32) | (i * 7);
        assert_int_equal(oq_event_seen_add(seen, ids, 2500, 0, paths, f, &err), OQ_OK);
    }
    ids[0] = 7, ids[1] = ((int64_t)356124 << 32) | 14;
    assert_int_equal(oq_event_seen_add(seen, ids, 2, 0, paths, 1, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "b.npz: event 1529540933320718 (index 1 in the file) is also at index 2 of b.npz"));
    oq_event_seen_free(seen);
}

/* ---- summaries of sharded runs ---------------------------------------------------------- */

static void fill_batch_info(oq_batch_info *b, int64_t index)
{
    b->index = index;
    assert_true(asprintf(&b->inputs, "/o/inputs_%03lld.npz", (long long)index) > 0);
    snprintf(b->sha256, sizeof b->sha256, "%064lld", (long long)index + 7);
    b->batch_size = 2;
    b->padded_length = 8;
    b->lengths = calloc(2, sizeof *b->lengths);
    b->event_indices = calloc(2, sizeof *b->event_indices);
    b->lengths[0] = 5, b->lengths[1] = 8;
    b->event_indices[0] = 2 * index, b->event_indices[1] = 2 * index + 1;
    b->valid_size = 13;
    if (index != 1) return;
    /* a user's batch: ids past 2^53 (a double would round them), and the file it was read from */
    b->event_indices[0] = (INT64_C(1) << 53) + 1, b->event_indices[1] = INT64_MAX;
    b->source = strdup("/data/ev_10.npz");
    snprintf(b->source_sha256, sizeof b->source_sha256, "%064d", 3);
    b->expected_source = strdup("/data/out_10.npz");
    snprintf(b->expected_source_sha256, sizeof b->expected_source_sha256, "%064d", 4);
}

static void fill_reference(oq_config_result *r, int64_t batch)
{
    memset(r, 0, sizeof *r);
    assert_int_equal(oq_config_parse("ref:encoder:fp64", &r->config, NULL), OQ_OK);
    r->is_reference = 1;
    r->status = OQ_VERDICT_REFERENCE;
    r->reported = 1;
    oq_batch_result *b = OQ_PUSH(r->batches, r->n_batches);
    b->index = batch;
    b->timed = 1;
    b->first_call_s = 0.25;
    b->median_s = 0.125;
}

/* A hash and the canonical description it names. */
static void plan_identity(char hash[65], char **description)
{
    *description = strdup("{\"batches\":[],\"configs\":[],\"run\":{}}");
    oq_sha256 h;
    oq_sha256_init(&h);
    oq_sha256_update(&h, *description, strlen(*description));
    oq_sha256_hex(&h, hash);
}

/* Every part of a summary, the sharded ones included, reads back into what was written:
 * written again, the file is the same byte for byte. */
static void summary_round_trip(void **state)
{
    (void)state;
    char *dir = temp_dir("summary"), *p1 = path_in(dir, "a.json"), *p2 = path_in(dir, "b.json");
    oq_validate_summary *s = calloc(1, sizeof *s), *back;
    snprintf(s->start, sizeof s->start, "2026-12-02T18:03:56Z");
    snprintf(s->end, sizeof s->end, "2026-12-02T18:04:00Z");
    s->evidence_json = strdup("{\"cpus\": 2}");
    plan_identity(s->plan_hash, &s->plan_description);
    s->batches = calloc(2, sizeof *s->batches);
    fill_batch_info(&s->batches[s->n_batches++], 0);
    fill_batch_info(&s->batches[s->n_batches++], 1);
    s->configs = calloc(2, sizeof *s->configs);
    fill_reference(&s->configs[s->n_configs++], 0);
    oq_config_result *r = &s->configs[s->n_configs++];
    fill_result(r);
    r->shards = calloc(2, sizeof *r->shards);
    r->shards[r->n_shards++] = (oq_config_shard){0, OQ_VERDICT_PASSED, 1, 0.5, 1, 0.25};
    r->shards[r->n_shards++] = (oq_config_shard){1, OQ_VERDICT_FAILED, 0, 0, 0, 0};
    s->exit_status = 1;
    s->plotted = 1;
    oq_strv_push(&s->plots, &s->n_plots, "/o/plots/err.png");
    s->shard = (oq_shard_info){.index = 1, .count = 3, .by = OQ_SHARD_BY_CONFIG, .host = "node7", .start = "t0", .pid = 42};
    int64_t *bi = OQ_PUSH(s->shard.batches, s->shard.n_batches);
    *bi = 1;
    oq_strv_push(&s->shard.configs, &s->shard.n_configs, "ref:encoder:fp64");
    snprintf(s->shard.slurm.array_job_id, sizeof s->shard.slurm.array_job_id, "12");
    snprintf(s->shard.slurm.array_task_id, sizeof s->shard.slurm.array_task_id, "1");
    s->merged = (oq_merge_info){.count = 3, .by = OQ_SHARD_BY_BATCH, .time = "t1", .host = "login"};
    *OQ_PUSH(s->merged.reported, s->merged.n_reported) =
        (oq_shard_report){.index = 0, .host = "node1", .start = "t0", .end = "t1", .verdict = OQ_RUN_FAILED};
    *OQ_PUSH(s->merged.problems, s->merged.n_problems) =
        (oq_shard_problem){.index = 2, .state = OQ_SHARD_UNFINISHED, .detail = "started on node3"};
    oq_err err = {0};
    assert_int_equal(oq_summary_write(s, NULL, p1, &err), OQ_OK);
    assert_int_equal(oq_validate_summary_read(p1, &back, &err), OQ_OK);
    assert_int_equal(oq_summary_write(back, NULL, p2, &err), OQ_OK);
    unsigned char *a, *b;
    size_t na, nb;
    assert_int_equal(oq_read_file(p1, &a, &na, NULL), OQ_OK);
    assert_int_equal(oq_read_file(p2, &b, &nb, NULL), OQ_OK);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na);
    assert_string_equal(back->batches[1].sha256, s->batches[1].sha256);
    assert_int_equal(back->batches[1].event_indices[0], (INT64_C(1) << 53) + 1);
    assert_int_equal(back->batches[1].event_indices[1], INT64_MAX);
    assert_string_equal(back->batches[1].source, "/data/ev_10.npz");
    assert_string_equal(back->batches[1].source_sha256, s->batches[1].source_sha256);
    assert_string_equal(back->batches[1].expected_source, "/data/out_10.npz");
    assert_string_equal(back->batches[1].expected_source_sha256, s->batches[1].expected_source_sha256);
    assert_null(back->batches[0].source);
    assert_string_equal(back->plan_hash, s->plan_hash);
    assert_string_equal(back->plan_description, s->plan_description);
    assert_int_equal(back->configs[1].dispatch.n_math_failures, 1);
    assert_int_equal(back->configs[1].shards[1].status, OQ_VERDICT_FAILED);
    assert_int_equal(back->shard.by, OQ_SHARD_BY_CONFIG);
    assert_string_equal(back->shard.slurm.array_job_id, "12");
    assert_int_equal(back->merged.problems[0].state, OQ_SHARD_UNFINISHED);

    /* a plan is not a summary: refused, naming the file */
    assert_int_equal(oq_write_file_atomic(p2, "{\"schema\": \"ortqual.shards/1\"}", 30, 1, NULL), OQ_OK);
    oq_validate_summary *none;
    assert_int_equal(oq_validate_summary_read(p2, &none, &err), OQ_ERR_FORMAT);
    assert_null(none);
    /* the file's schema, then the wanted one (it named the wanted one alone, as if the file's) */
    assert_non_null(strstr(err.msg, "not a validation summary (schema 'ortqual.shards/1', want " OQ_VALIDATE_SCHEMA ")"));
    free(a);
    free(b);
    oq_validate_summary_free(s);
    oq_validate_summary_free(back);
    remove(p1);
    remove(p2);
    rmdir(dir);
    free(p1);
    free(p2);
    free(dir);
}

/* The reference that ran is "reference", never "passed" (a program counting passes counted it);
 * a summary written before the word, its reference "passed", reads as the reference; a
 * configuration under test that says "reference" is refused. */
static void reference_has_its_own_status(void **state)
{
    (void)state;
    assert_string_equal(oq_verdict_name(OQ_VERDICT_REFERENCE), "reference");
    oq_config_result r, back;
    fill_reference(&r, 0);
    json_t *j = oq_config_result_to_json(&r);
    assert_string_equal(json_string_value(json_object_get(j, "status")), "reference");
    json_object_set_new(j, "status", json_string("passed"));
    oq_err err = {0};
    assert_int_equal(oq_config_result_from_json(j, &back, &err), OQ_OK);
    assert_int_equal(back.status, OQ_VERDICT_REFERENCE);
    oq_config_result_clear(&back);
    json_object_set_new(j, "status", json_string("reference"));
    json_object_set_new(j, "reference", json_false());
    assert_int_equal(oq_config_result_from_json(j, &back, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "status 'reference', but it is not the reference"));
    oq_config_result_clear(&back);
    json_decref(j);
    oq_config_result_clear(&r);
}

/* What a run keeps per batch stays a few numbers (issue 17: memory must not grow by a
 * comparison's ~10 KB of worst elements and histograms per batch): the typed record of a batch's
 * output is small, and so is its JSON in a result and summary.json; the aggregate over batches
 * holds what was dropped. A batch record that carried the histograms again fails here. */
static void batch_records_stay_small(void **state)
{
    (void)state;
    assert_true(sizeof(oq_batch_output) <= 512);
    assert_true(sizeof(oq_batch_output) * 10 < sizeof(oq_compare_result));
    oq_config_result r;
    fill_result(&r);
    json_t *j = oq_config_result_to_json(&r);
    const json_t *b0 = json_array_get(json_object_get(j, "batches"), 0);
    char *text = json_dumps(b0, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    assert_non_null(text);
    assert_true(strlen(text) < 2 * 1200); /* two outputs, one of them failed (its largest error kept) */
    assert_null(strstr(text, "error_histogram"));
    assert_null(strstr(text, "error_by_magnitude"));
    const json_t *all = json_array_get(json_object_get(j, "outputs"), 0);
    assert_non_null(json_object_get(all, "error_histogram"));
    assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(all, "worst"), 0), "batch")), 0);
    free(text);
    json_decref(j);
    oq_config_result_clear(&r);
}

/* Shard i of 2 by batch ran batch i: the reference and the cuda configuration of fill_result
 * (MATH where FLASH was expected, placement from a real profile). */
/* d's failures as the worker's check gives them for `routing` under the rules `specs`. */
static void check_into(oq_dispatch_result *d, const char *routing, const char *const *specs)
{
    oq_dispatch_parser *p;
    oq_dispatch_expect *e;
    oq_dispatch_report rep;
    oq_dispatch_result_clear(d);
    assert_int_equal(oq_dispatch_parse_text(routing, strlen(routing), &p, NULL), OQ_OK);
    assert_int_equal(oq_dispatch_expect_create(&e, NULL), OQ_OK);
    for (; *specs; specs++) assert_int_equal(oq_dispatch_expect_add(e, *specs, NULL), OQ_OK);
    assert_int_equal(oq_dispatch_check(e, oq_dispatch_parser_log(p), &rep, NULL), OQ_OK);
    assert_int_equal(oq_dispatch_log_copy(&d->log, oq_dispatch_parser_log(p), NULL), OQ_OK);
    d->recorded = d->checked = 1;
    d->passed = rep.passed;
    d->n_math_failures = rep.n_math_failures;
    assert_int_equal(oq_dispatch_failures_add(d, rep.failures, rep.failed, rep.n_failures), OQ_OK);
    oq_dispatch_report_clear(&rep);
    oq_dispatch_expect_free(e);
    oq_dispatch_parser_free(p);
}

static void write_shard_routed(const char *root, int32_t i, const oq_shard_plan *plan, const char *routing,
                               const char *const *specs);

static void write_shard(const char *root, int32_t i, const oq_shard_plan *plan)
{
    write_shard_routed(root, i, plan, NULL, NULL);
}

/* As write_shard, with the cuda configuration's dispatch checked from `routing` (NULL: fill_result's). */
static void write_shard_routed(const char *root, int32_t i, const oq_shard_plan *plan, const char *routing,
                               const char *const *specs)
{
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/shards/%d", root, (int)i);
    assert_int_equal(oq_mkdirs(dir, NULL), OQ_OK);
    oq_validate_summary *s = calloc(1, sizeof *s);
    snprintf(s->start, sizeof s->start, "2026-12-02T18:0%d:00Z", (int)i);
    snprintf(s->end, sizeof s->end, "2026-12-02T18:0%d:30Z", (int)i);
    memcpy(s->plan_hash, plan->hash, sizeof s->plan_hash);
    s->shard = (oq_shard_info){.index = i, .count = 2, .by = OQ_SHARD_BY_BATCH};
    s->batches = calloc(1, sizeof *s->batches);
    fill_batch_info(&s->batches[s->n_batches++], i);
    s->configs = calloc(2, sizeof *s->configs);
    fill_reference(&s->configs[s->n_configs++], i);
    oq_config_result *r = &s->configs[s->n_configs++];
    fill_result(r);
    free(r->batches[i ? 0 : 1].outputs); /* keep batch i only */
    if (i) r->batches[0] = r->batches[1];
    r->n_batches = 1;
    if (i) { /* the same route's failure, at the line of this shard's own log */
        free(r->dispatch.failures[0]);
        r->dispatch.failures[0] = strdup("attn0: expected FLASH_ATTENTION, got MATH (line 9)");
        r->dispatch.failed[0].line = r->dispatch.log.records[0].line = 9;
    }
    if (routing) check_into(&r->dispatch, routing, specs);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    assert_int_equal(oq_summary_write(s, NULL, path, NULL), OQ_OK);
    oq_validate_summary_free(s);
}

/* A description naming the plan's configurations (the merge reads what each judges by: its
 * tolerances and padding rule, `zero`), and its hash. */
static void plan_identity_of(const oq_shard_plan *plan, char hash[65], char **description)
{
    oq_dynbuf b = {0};
    assert_int_equal(oq_dynbuf_add(&b, "{\"batches\":[],\"configs\":["), OQ_OK);
    for (size_t k = 0; k < plan->n_configs; k++)
        assert_int_equal(oq_dynbuf_addf(&b, "%s{\"config\":\"%s\",\"padding\":1}", k ? "," : "", plan->configs[k]),
                         OQ_OK);
    assert_int_equal(oq_dynbuf_add(&b, "],\"run\":{}}"), OQ_OK);
    assert_non_null(*description = oq_dynbuf_take(&b, NULL));
    oq_sha256 h;
    oq_sha256_init(&h);
    oq_sha256_update(&h, *description, strlen(*description));
    oq_sha256_hex(&h, hash);
}

/* plan.json and the two files beside it that hold its description and its batches 0 and 1. */
static void write_plan(const char *dir, oq_shard_plan *plan)
{
    char path[600], *desc;
    plan_identity_of(plan, plan->hash, &desc);
    snprintf(path, sizeof path, "%s/shards", dir);
    assert_int_equal(oq_mkdirs(path, NULL), OQ_OK);
    assert_true(asprintf(&plan->description_path, "%s/shards/plan_description.json", dir) > 0);
    assert_true(asprintf(&plan->batches_path, "%s/shards/plan_batches.jsonl", dir) > 0);
    assert_int_equal(oq_write_file_atomic(plan->description_path, desc, strlen(desc), 1, NULL), OQ_OK);
    FILE *f = fopen(plan->batches_path, "w");
    assert_non_null(f);
    for (int64_t i = 0; i < 2; i++) {
        oq_batch_info b = {0};
        fill_batch_info(&b, i);
        assert_true(oq_batch_info_put(f, &b));
        oq_batch_info_clear(&b);
    }
    assert_int_equal(fclose(f), 0);
    plan->n_batches = 2;
    assert_int_equal(oq_sha256_file(plan->batches_path, plan->batches_sha256, NULL), OQ_OK);
    snprintf(path, sizeof path, "%s/shards/plan.json", dir);
    json_t *outputs = json_array(); /* no model: no output list to hold shards to */
    for (size_t k = 0; k < plan->n_configs; k++) json_array_append_new(outputs, json_null());
    assert_int_equal(oq_shard_plan_write(plan, outputs, NULL, path, NULL), OQ_OK);
    json_decref(outputs);
    free(desc);
}

/* A plan of two shards by batch, of the reference and a cuda configuration, written (write_plan). */
static void write_two_config_plan(const char *dir, oq_shard_plan *plan)
{
    *plan = (oq_shard_plan){.count = 2, .by = OQ_SHARD_BY_BATCH, .prepared = "t", .host = "h"};
    oq_strv_push(&plan->configs, &plan->n_configs, "ref:encoder:fp64");
    oq_strv_push(&plan->configs, &plan->n_configs, "cuda:attention24:fp16:flash");
    write_plan(dir, plan);
}

/* The merge of typed results: per-batch figures moved by index, dispatch records of one route
 * counted together, a route's failure in several shards listed and counted as MATH once (as
 * one run gives it: it was listed and counted per shard), advice
 * once, costs added, placement the first shard's (its profile is the first batch's), memory the
 * largest; the verdict one run would give. */
static void merge_sums_what_shards_measured(void **state)
{
    (void)state;
    char *dir = temp_dir("merge"), shards[512];
    oq_shard_plan plan;
    write_two_config_plan(dir, &plan);
    write_shard(dir, 0, &plan);
    write_shard(dir, 1, &plan);
    oq_config_result one;
    fill_result(&one);

    oq_validate_summary *m;
    oq_err err = {0};
    assert_int_equal(oq_validate_merge(dir, 0, 0, &m, &err), OQ_OK);
    assert_int_equal(m->n_configs, 2);
    assert_int_equal(m->n_batches, 0); /* the plan's list, copied from its file */
    assert_int_equal(m->merged.n_reported, 2);
    assert_int_equal(m->merged.n_problems, 0);
    assert_string_equal(m->start, "2026-12-02T18:00:00Z");
    assert_string_equal(m->end, "2026-12-02T18:01:30Z");
    const oq_config_result *ref = &m->configs[0], *r = &m->configs[1];
    assert_int_equal(ref->status, OQ_VERDICT_REFERENCE); /* ran, judged nothing: never a pass */
    /* the records go from the shards' summaries to the merged one through files, counted */
    assert_int_equal(ref->n_batches, 0);
    assert_int_equal(ref->totals.n, 2);
    assert_int_equal(r->totals.n, 2);
    assert_int_equal(r->totals.compared, 1); /* batch 1 compares nothing in fill_result */
    oq_validate_summary *back;
    snprintf(shards, sizeof shards, "%s/summary.json", dir);
    assert_int_equal(oq_validate_summary_read(shards, &back, &err), OQ_OK);
    assert_int_equal(back->n_batches, 2);
    assert_string_equal(back->batches[1].sha256, "0000000000000000000000000000000000000000000000000000000000000008");
    assert_string_equal(back->plan_description, "{\"batches\":[],\"configs\":[{\"config\":\"ref:encoder:fp64\","
                                                "\"padding\":1},{\"config\":\"cuda:attention24:fp16:flash\","
                                                "\"padding\":1}],\"run\":{}}");
    assert_int_equal(back->configs[0].n_batches, 2);
    assert_int_equal(back->configs[1].n_batches, 2);
    assert_int_equal(back->configs[1].batches[0].index, 0);
    assert_int_equal(back->configs[1].batches[1].index, 1);
    assert_int_equal(back->configs[1].batches[0].n_outputs, 2);
    oq_validate_summary_free(back);
    snprintf(shards, sizeof shards, "%s/shards/.merge", dir);
    assert_int_equal(access(shards, F_OK), -1); /* its scratch files removed */
    assert_int_equal(r->status, OQ_VERDICT_FAILED);
    assert_string_equal(r->reason, "batch 0, output cls");
    assert_int_equal(r->dispatch.n_math_failures, 1);
    /* both shards' lines of the one route: one record that counts them */
    assert_int_equal(r->dispatch.log.n_records, 1);
    assert_int_equal(r->dispatch.log.records[0].count, 2);
    assert_int_equal(r->dispatch.n_failures, 1);
    assert_int_equal(r->dispatch.n_advice, 1);
    assert_false(r->dispatch.passed);
    assert_true(r->worker.seconds == 2 * one.worker.seconds);
    assert_true(r->cost.session_s == 2 * one.cost.session_s);
    assert_int_equal(r->cost.vmhwm_bytes, one.cost.vmhwm_bytes);
    const oq_placement *p = r->placement.placement, *p1 = one.placement.placement;
    assert_int_equal(p->n_eps, p1->n_eps);
    /* the profile is the first batch's, as an unsharded run's: the first shard's (not summed) */
    for (size_t k = 0; k < p->n_eps; k++) assert_int_equal(p->eps[k].runs, p1->eps[k].runs);
    assert_int_equal(p->nodes[0].runs, p1->nodes[0].runs);
    assert_int_equal(r->n_shards, 2);
    assert_int_equal(r->shards[1].index, 1);
    assert_int_equal(m->exit_status, 1);
    oq_validate_summary_free(m);

    /* what was written says the same: the MATH count survives into summary.json */
    char path[600];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    assert_int_equal(oq_validate_summary_read(path, &m, &err), OQ_OK);
    assert_int_equal(m->configs[1].dispatch.n_math_failures, 1);
    assert_int_equal(m->merged.count, 2);
    oq_validate_summary_free(m);

    /* a shard of another plan is refused and nothing is written; the earlier merge's outputs go,
     * said in the message (its summary gave the verdict of shards just refused) */
    plan.hash[0] = plan.hash[0] == '0' ? '1' : '0';
    write_shard(dir, 1, &plan);
    assert_int_equal(oq_validate_merge(dir, 0, 0, &m, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "refusing to merge shards of different plans; the earlier merge's summary.json, "
                                    "validate.csv removed"));
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(oq_validate_merge(dir, 0, 0, &m, &err), OQ_ERR_FORMAT);
    assert_null(strstr(err.msg, "removed")); /* nothing left to remove */
    /* a batch list changed since it was prepared, and a plan of the old schema, which held
     * every batch in plan.json: refused in one line */
    FILE *f = fopen(plan.batches_path, "a");
    assert_non_null(f);
    fputs("{}\n", f);
    fclose(f);
    assert_int_equal(oq_validate_merge(dir, 0, 0, &m, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "plan_batches.jsonl is not the prepared batch list"));
    snprintf(shards, sizeof shards, "%s/shards/plan.json", dir);
    assert_int_equal(oq_write_file_atomic(shards, "{\"schema\": \"ortqual.shards/1\"}", 30, 1, NULL), OQ_OK);
    assert_int_equal(oq_validate_merge(dir, 0, 0, &m, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "prepared by an older ortqual (schema ortqual.shards/1"));
    assert_null(strchr(err.msg, '\n'));
    oq_config_result_clear(&one);
    oq_shard_plan_clear(&plan);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
}

/* Shard 1 missing and shard 0 failed on its own: the configuration's reason and the verdict's
 * name both (they said only "incomplete: shard 1 (missing) did not report", and a rerun of
 * shard 1 alone failed again on shard 0). */
static void merge_names_each_shards_problem(void **state)
{
    (void)state;
    char *dir = temp_dir("merge_own"), path[600];
    oq_shard_plan plan;
    write_two_config_plan(dir, &plan);
    write_shard(dir, 0, &plan); /* its cuda configuration failed: "batch 0, output cls" */
    oq_validate_summary *m;
    oq_err err = {0};
    assert_int_equal(oq_validate_merge(dir, 0, 0, &m, &err), OQ_OK);
    assert_string_equal(m->configs[1].reason, "shard 0: batch 0, output cls; incomplete: shard 1 (missing) did not report");
    assert_string_equal(m->configs[0].reason, "incomplete: shard 1 (missing) did not report");
    oq_validate_summary_free(m);
    /* the reference timed out on shard 0 (an error, the other not run): the missing shard makes
     * the verdict FAILED, and its reason keeps what shard 0 said */
    snprintf(path, sizeof path, "%s/shards/0/summary.json", dir);
    assert_int_equal(oq_validate_summary_read(path, &m, &err), OQ_OK);
    m->configs[0].status = OQ_VERDICT_ERROR;
    oq_result_reason(&m->configs[0], "the reference cannot run: worker timed out after 1 s (killed)");
    oq_config c = m->configs[1].config;
    oq_config_result_clear(&m->configs[1]);
    m->configs[1].config = c;
    m->configs[1].status = OQ_VERDICT_NOT_RUN;
    oq_result_reason(&m->configs[1], "the reference did not run");
    assert_int_equal(oq_summary_write(m, NULL, path, &err), OQ_OK);
    oq_validate_summary_free(m);
    assert_int_equal(oq_validate_merge(dir, 0, 0, &m, &err), OQ_OK);
    assert_int_equal(m->verdict, OQ_RUN_FAILED);
    char want[1200];
    snprintf(want, sizeof want, "shard 1 of 2 missing: never started: no %s/shards/1; ref:encoder:fp64 could not run: "
             "shard 0: the reference cannot run: worker timed out after 1 s (killed); incomplete: shard 1 (missing) did "
             "not report", dir);
    assert_string_equal(m->verdict_reason, want);
    oq_validate_summary_free(m);
    oq_shard_plan_clear(&plan);
    oq_remove_tree(dir);
    free(dir);
}

/* A shard folder without a summary read as the merge reads it (`ortqual report` of a killed
 * shard said "not a run directory?"): started.json, error.json, neither. */
static void shard_dir_problem_reads_records(void **state)
{
    (void)state;
    char *dir = temp_dir("shard_dir"), path[600];
    oq_shard_problem p;
    int32_t count = -1;
    oq_err err = {0};
    assert_int_equal(oq_shard_dir_problem(dir, &p, &count, &err), OQ_ERR_NOT_FOUND);
    assert_non_null(strstr(err.msg, "holds neither error.json nor started.json"));
    oq_shard_info i = {.index = 3, .count = 4, .host = "gpu017", .start = "2026-12-07T05:00:00Z", .pid = 42};
    snprintf(path, sizeof path, "%s/started.json", dir);
    assert_int_equal(oq_shard_info_write(&i, path, NULL), OQ_OK);
    assert_int_equal(oq_shard_dir_problem(dir, &p, &count, &err), OQ_OK);
    assert_int_equal(p.index, 3);
    assert_int_equal(count, 4);
    assert_int_equal(p.state, OQ_SHARD_UNFINISHED);
    assert_string_equal(p.detail, "started on gpu017 at 2026-12-07T05:00:00Z (pid 42) and wrote no summary: killed, "
                                  "timed out or crashed");
    oq_err e = {0};
    oq_err_set(&e, OQ_ERR_FORMAT, "the shard's options make another plan");
    snprintf(path, sizeof path, "%s/error.json", dir);
    assert_int_equal(oq_error_record_write(path, &e, NULL), OQ_OK);
    assert_int_equal(oq_shard_dir_problem(dir, &p, NULL, &err), OQ_OK);
    assert_int_equal(p.state, OQ_SHARD_FAILED);
    assert_string_equal(p.detail, "stopped before running: the shard's options make another plan");
    oq_remove_tree(dir);
    free(dir);
}

/* plan.json's outputs that are not one list of names (or null) per configuration are
 * refused in one line naming the file: the merge holds every shard to them. */
static void merge_refuses_malformed_plan_outputs(void **state)
{
    (void)state;
    static const char *const bad[] = {"[null]", "[null, [1]]", "[null, \"cls\"]", "{}"};
    char *dir = temp_dir("merge_outputs"), path[600];
    oq_shard_plan plan;
    write_two_config_plan(dir, &plan);
    write_shard(dir, 0, &plan);
    write_shard(dir, 1, &plan);
    snprintf(path, sizeof path, "%s/shards/plan.json", dir);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *j = json_load_file(path, 0, NULL);
        assert_non_null(j);
        json_object_set_new(j, "outputs", json_loads(bad[i], JSON_DECODE_ANY, NULL));
        assert_int_equal(json_dump_file(j, path, 0), 0);
        json_decref(j);
        oq_validate_summary *m = NULL;
        oq_err err = {0};
        assert_int_equal(oq_validate_merge(dir, 0, 0, &m, &err), OQ_ERR_FORMAT);
        assert_non_null(strstr(err.msg, "plan.json: outputs is not one list of output names (or null) per "
                                        "configuration of the plan's 2"));
        assert_null(strchr(err.msg, '\n'));
        assert_null(m);
    }
    oq_shard_plan_clear(&plan);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
}

/* The merge counts a failure several shards give once by its route, never by its text: two
 * routes whose texts differ only in " (line N)" (attn0 in fp16 and in bf16) stay two, and so do
 * two unobserved nodes whose names differ only after a " (line " in them; the same route in
 * both shards is one. (It compared the texts with their last " (line " cut off.) */
static void merge_tells_routes_by_fields(void **state)
{
    (void)state;
    char *dir = temp_dir("merge_routes"), path[600];
    oq_shard_plan plan;
    write_two_config_plan(dir, &plan);
    const char *specs0[] = {"flash", "a (line 3)=flash", NULL}, *specs1[] = {"flash", "a (line 4)=flash", NULL};
    write_shard_routed(dir, 0, &plan,
                       "Operator=Attention Node=attn0 DataType=fp16 SdpaKernel=MATH\n"
                       "Operator=Attention Node=attn1 DataType=fp16 SdpaKernel=MATH\n", specs0);
    write_shard_routed(dir, 1, &plan,
                       "text\nOperator=Attention Node=attn1 DataType=fp16 SdpaKernel=MATH\n"
                       "Operator=Attention Node=attn0 DataType=bf16 SdpaKernel=MATH\n", specs1);
    oq_validate_summary *m;
    oq_err err = {0};
    assert_int_equal(oq_validate_merge(dir, 0, 0, &m, &err), OQ_OK);
    const oq_dispatch_result *d = &m->configs[1].dispatch;
    assert_int_equal(d->n_failures, 5); /* attn0 fp16, attn1, a (line 3), attn0 bf16, a (line 4) */
    assert_int_equal(d->n_math_failures, 3);
    assert_string_equal(d->failures[0], "attn0: expected FLASH_ATTENTION, got MATH (line 1)");
    assert_string_equal(d->failures[3], "attn0: expected FLASH_ATTENTION, got MATH (line 3)");
    assert_string_equal(d->failed[3].dtype, "bf16");
    assert_string_equal(d->failed[1].node, "attn1");
    assert_int_equal(d->failed[1].line, 2); /* the first shard's line of the route */
    assert_string_equal(d->failed[4].node, "a (line 4)");
    oq_validate_summary_free(m);
    /* summary.json holds the fields beside the texts */
    snprintf(path, sizeof path, "%s/summary.json", dir);
    assert_int_equal(oq_validate_summary_read(path, &m, &err), OQ_OK);
    d = &m->configs[1].dispatch;
    assert_int_equal(d->n_failures, 5);
    assert_int_equal(d->failed[3].kind, OQ_DISPATCH_FAILURE_KERNEL);
    assert_string_equal(d->failed[3].dtype, "bf16");
    assert_int_equal(d->failed[4].kind, OQ_DISPATCH_FAILURE_UNOBSERVED);
    oq_validate_summary_free(m);
    oq_shard_plan_clear(&plan);
    oq_remove_tree(dir);
    free(dir);
}

/* A summary written before failures had fields ("failures" texts only) is read with each
 * failure's fields recovered from its text and the routing records, so the merge of such
 * shards still counts a route once; "failed" of another length than "failures" is refused. */
static void failures_without_fields_read_back(void **state)
{
    (void)state;
    char *dir = temp_dir("old_failures"), *path = path_in(dir, "result.json");
    oq_config_result a, b;
    fill_result(&a);
    const char *specs[] = {"flash", "a (line 3)=flash", NULL};
    check_into(&a.dispatch, "Operator=Attention Node=x (line 1) DataType=fp16 SdpaKernel=MATH\n", specs);
    assert_int_equal(oq_config_result_write(&a, path, NULL), OQ_OK);
    json_t *j = json_load_file(path, 0, NULL);
    json_t *jd = json_object_get(j, "dispatch");
    assert_non_null(json_object_get(jd, "failed"));
    json_object_del(jd, "failed");
    assert_int_equal(json_dump_file(j, path, 0), 0);
    assert_int_equal(oq_config_result_read(path, &b, NULL), OQ_OK);
    assert_int_equal(b.dispatch.n_failures, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(b.dispatch.failed[i].kind, a.dispatch.failed[i].kind);
        assert_string_equal(b.dispatch.failed[i].node, a.dispatch.failed[i].node);
        assert_string_equal(b.dispatch.failed[i].dtype, a.dispatch.failed[i].dtype);
        assert_int_equal(b.dispatch.failed[i].line, a.dispatch.failed[i].line);
    }
    assert_string_equal(b.dispatch.failed[0].node, "x (line 1)");
    assert_string_equal(b.dispatch.failed[0].expected, "FLASH_ATTENTION");
    oq_config_result_clear(&b);
    json_object_set_new(jd, "failed", json_array());
    assert_int_equal(json_dump_file(j, path, 0), 0);
    assert_int_not_equal(oq_config_result_read(path, &b, NULL), OQ_OK);
    json_decref(j);
    oq_config_result_clear(&a);
    oq_remove_tree(dir);
    free(path);
    free(dir);
}

/* ---- the reference's outputs on their way to the other workers ------------------------- */

static const char SHA_A[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
static const char SHA_B[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

/* A frame's outputs: y = [0, 7] as .npz bytes. */
static unsigned char *frame_npz(size_t *n)
{
    int64_t shape[1] = {2};
    oq_tensor *t;
    unsigned char *npz;
    assert_int_equal(oq_tensor_create(&t, OQ_DTYPE_FLOAT32, 1, shape, "y", NULL), OQ_OK);
    ((float *)t->data)[1] = 7.0f;
    assert_int_equal(oq_npz_bytes(1, (const oq_tensor *const *)&t, 0, "y", &npz, n, NULL), OQ_OK);
    oq_tensor_free(t);
    return npz;
}

/* The next frame is batch i's y = [0, 7]. */
static void next_is_frame_npz(oq_refstream *s, int64_t i)
{
    oq_npz *z;
    oq_err err = {0};
    assert_int_equal(oq_refstream_next(s, i, SHA_A, &z, &err), OQ_OK);
    assert_float_equal(oq_tensor_get_f64(oq_npz_get(z, "y"), 1), 7.0, 0);
    oq_npz_free(z);
}

/* The stream's frames back in the plan's order; a batch read against another batch's frame,
 * against outputs of other inputs, or past the last frame: each an error naming it. */
static void refstream_checks_each_frame(void **state)
{
    (void)state;
    char *dir = temp_dir("refs");
    char *path = path_in(dir, "refs.bin");
    size_t n;
    unsigned char *npz = frame_npz(&n);
    oq_refstream s;
    oq_err err = {0};
    assert_int_equal(oq_refstream_open(&s, path, 1, -1, &err), OQ_OK);
    assert_int_equal(oq_refstream_put(&s, 0, SHA_A, npz, n, &err), OQ_OK);
    assert_int_equal(oq_refstream_put(&s, 1, SHA_A, npz, n, &err), OQ_OK);
    assert_int_equal(oq_refstream_close(&s, &err), OQ_OK);
    oq_npz *z;
    assert_int_equal(oq_refstream_open(&s, path, 0, -1, &err), OQ_OK);
    next_is_frame_npz(&s, 0);
    assert_int_equal(oq_refstream_next(&s, 1, SHA_B, &z, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "batch 1: the reference's outputs are of other inputs"));
    assert_null(z);
    oq_refstream_close(&s, NULL);
    assert_int_equal(oq_refstream_open(&s, path, 0, -1, &err), OQ_OK);
    assert_int_equal(oq_refstream_next(&s, 1, SHA_A, &z, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "the reference outputs of batch 0 where batch 1's were due"));
    oq_refstream_close(&s, NULL);
    assert_int_equal(oq_refstream_open(&s, path, 0, -1, &err), OQ_OK);
    for (int64_t i = 0; i < 2; i++) next_is_frame_npz(&s, i);
    assert_int_equal(oq_refstream_next(&s, 2, SHA_A, &z, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "no reference outputs for batch 2"));
    oq_refstream_close(&s, NULL);
    free(npz);
    free(path);
    remove_dir(dir);
}

/* Frames naming a file the writer read: read back while it is that file; another file renamed
 * into its place, or the same file written again, is refused with the batch and path named. */
static void refstream_named_file_must_be_the_one_read(void **state)
{
    (void)state;
    char *dir = temp_dir("refsf");
    char *path = path_in(dir, "refs.bin"), *entry = path_in(dir, "entry.npz"), *other = path_in(dir, "other.npz");
    size_t n, rn;
    unsigned char *npz = frame_npz(&n), *read = NULL;
    oq_err err = {0};
    assert_int_equal(oq_write_file_nosync(entry, npz, n, &err), OQ_OK);
    oq_file_id id;
    assert_int_equal(oq_read_file_id(entry, &read, &rn, &id, &err), OQ_OK);
    free(read);
    oq_refstream s;
    assert_int_equal(oq_refstream_open(&s, path, 1, -1, &err), OQ_OK);
    for (int64_t i = 0; i < 3; i++) assert_int_equal(oq_refstream_put_file(&s, i, SHA_A, entry, &id, &err), OQ_OK);
    assert_int_equal(oq_refstream_close(&s, &err), OQ_OK);
    oq_npz *z;
    assert_int_equal(oq_refstream_open(&s, path, 0, -1, &err), OQ_OK);
    next_is_frame_npz(&s, 0);
    /* the same bytes, but another file renamed over it */
    assert_int_equal(oq_write_file_nosync(other, npz, n, &err), OQ_OK);
    assert_int_equal(rename(other, entry), 0);
    assert_int_equal(oq_refstream_next(&s, 1, SHA_A, &z, &err), OQ_ERR_FORMAT);
    assert_null(z);
    if (!strstr(err.msg, "batch 1: ") || !strstr(err.msg, "entry.npz changed after the reference read"))
        fail_msg("%s", err.msg);
    oq_refstream_close(&s, NULL);
    /* named by the new file's identity: that file written again in place (a byte more) */
    assert_int_equal(oq_read_file_id(entry, &read, &rn, &id, &err), OQ_OK);
    free(read);
    assert_int_equal(oq_refstream_open(&s, path, 1, -1, &err), OQ_OK);
    assert_int_equal(oq_refstream_put_file(&s, 0, SHA_A, entry, &id, &err), OQ_OK);
    assert_int_equal(oq_refstream_close(&s, &err), OQ_OK);
    FILE *f = fopen(entry, "ab");
    assert_non_null(f);
    fputc(0, f);
    fclose(f);
    assert_int_equal(oq_refstream_open(&s, path, 0, -1, &err), OQ_OK);
    assert_int_equal(oq_refstream_next(&s, 0, SHA_A, &z, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "changed after the reference read"));
    oq_refstream_close(&s, NULL);
    /* gone: the error names the batch and the file */
    assert_int_equal(unlink(entry), 0);
    assert_int_equal(oq_refstream_open(&s, path, 0, -1, &err), OQ_OK);
    assert_int_equal(oq_refstream_next(&s, 0, SHA_A, &z, &err), OQ_ERR_IO);
    if (!strstr(err.msg, "batch 0: the reference's outputs: ") || !strstr(err.msg, "entry.npz: cannot open"))
        fail_msg("%s", err.msg);
    oq_refstream_close(&s, NULL);
    free(npz);
    free(path);
    free(entry);
    free(other);
    remove_dir(dir);
}

/* A writer in another process, on the creator's locked descriptor: frame 0, a pause, frame 1
 * unless `die_early` (then it ends without it, as a crashed worker would). */
static pid_t stream_writer(const char *path, const unsigned char *npz, size_t n, int die_early)
{
    int fd;
    assert_int_equal(oq_refstream_create(path, &fd, NULL), OQ_OK);
    pid_t pid = fork();
    if (pid == 0) {
        oq_refstream w;
        if (oq_refstream_open(&w, path, 1, fd, NULL) || oq_refstream_put(&w, 0, SHA_A, npz, n, NULL)) _exit(2);
        struct timespec pause = {0, 300 * 1000 * 1000};
        nanosleep(&pause, NULL);
        if (die_early) _exit(9);
        _exit(oq_refstream_put(&w, 1, SHA_A, npz, n, NULL) || oq_refstream_close(&w, NULL) ? 2 : 0);
    }
    close(fd); /* the child's copy keeps the lock */
    return pid;
}

/* A reader at the end of what a running writer wrote waits for the next frame; once the writer
 * ended without it, the reader says so instead of waiting on. Without the wait, frame 1 (300 ms
 * late) is "no reference outputs"; without the lock's end, the second reader never returns. */
static void refstream_reader_waits_for_writer(void **state)
{
    (void)state;
    char *dir = temp_dir("refw");
    char *path = path_in(dir, "refs.bin");
    size_t n;
    unsigned char *npz = frame_npz(&n);
    for (int die_early = 0; die_early < 2; die_early++) {
        pid_t pid = stream_writer(path, npz, n, die_early);
        oq_refstream s;
        oq_err err = {0};
        oq_npz *z;
        assert_int_equal(oq_refstream_open(&s, path, 0, -1, &err), OQ_OK);
        for (int64_t i = 0; i < 2; i++) {
            oq_status st = oq_refstream_next(&s, i, SHA_A, &z, &err);
            assert_int_equal(st, die_early && i == 1 ? OQ_ERR_FORMAT : OQ_OK);
            oq_npz_free(z);
        }
        if (die_early) assert_non_null(strstr(err.msg, "no reference outputs for batch 1"));
        oq_refstream_close(&s, NULL);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_int_equal(WEXITSTATUS(status), die_early ? 9 : 0);
    }
    free(npz);
    free(path);
    remove_dir(dir);
}

/* Batch 0's inputs file rewritten (its features doubled) once the reference has run: what
 * the configuration under test then reads is not what the reference computed from. */
typedef struct swap_inputs {
    const char *outdir;
    int swap, swapped;
} swap_inputs;

static void swap_after_reference(void *ctx, const oq_validate_progress *p)
{
    swap_inputs *x = ctx;
    if (!x->swap || x->swapped || p->config != 0 || p->batches_done != p->n_batches) return;
    char path[600];
    snprintf(path, sizeof path, "%s/inputs_000.npz", x->outdir);
    oq_npz *z;
    assert_int_equal(oq_npz_read(path, &z, NULL), OQ_OK);
    oq_tensor *f = (oq_tensor *)oq_npz_get(z, "features");
    for (int64_t i = 0; i < oq_tensor_numel(f); i++) oq_tensor_set_f64(f, i, 2 * oq_tensor_get_f64(f, i));
    assert_int_equal(oq_npz_write(path, z->count, (const oq_tensor *const *)z->tensors, 0, 1, NULL), OQ_OK);
    oq_npz_free(z);
    x->swapped = 1;
}

static oq_verdict run_swapped(const char *dir, int swap, char *reason, size_t n)
{
    oq_config cfg[2];
    char outdir[512];
    snprintf(outdir, sizeof outdir, "%s/out%d", dir, swap);
    swap_inputs x = {outdir, swap, 0};
    oq_validate_opts o;
    validate_two_configs(&o, cfg, outdir);
    o.isolate = 0;
    o.on_batch = swap_after_reference;
    o.progress_ctx = &x;
    oq_validate_summary *s;
    oq_err err = {0};
    assert_int_equal(oq_validate_run(&o, &s, &err), OQ_OK);
    assert_int_equal(x.swapped, swap);
    snprintf(reason, n, "%s", s->configs[1].reason ? s->configs[1].reason : "");
    oq_verdict v = s->configs[1].status;
    oq_validate_summary_free(s);
    oq_remove_tree(outdir);
    return v;
}

/* A configuration is compared with the reference's outputs of the very inputs it ran on:
 * passed as run, an error naming the inputs when they changed in between (without the check
 * it would be judged on outputs of other inputs). */
/* The model a configuration runs, replaced once the reference has run: the plan names the
 * attention24 export by its SHA-256, and the decomposed export's bytes (the same function: it
 * would pass) are put in its place. Its worker reads the file once and runs it only if it is
 * the plan's; before, it ran whatever was at the path under the plan's name. */
typedef struct swap_model {
    const char *outdir;
    int swapped;
} swap_model;

static void swap_model_after_reference(void *ctx, const oq_validate_progress *p)
{
    swap_model *x = ctx;
    if (x->swapped || p->config != 0 || p->batches_done != p->n_batches) return;
    char from[600], to[600], tmp[700];
    snprintf(from, sizeof from, "%s/encoder_decomposed_fp32.onnx", x->outdir);
    snprintf(to, sizeof to, "%s/encoder_attention24_fp32.onnx", x->outdir);
    snprintf(tmp, sizeof tmp, "%s.new", to);
    unsigned char *buf = NULL;
    size_t n = 0;
    assert_int_equal(oq_read_file(from, &buf, &n, NULL), OQ_OK);
    assert_int_equal(oq_write_file_atomic(tmp, buf, n, 1, NULL), OQ_OK);
    assert_int_equal(rename(tmp, to), 0); /* cp good.onnx m.onnx.new && mv m.onnx.new m.onnx */
    free(buf);
    x->swapped = 1;
}

static void worker_runs_the_planned_model(void **state)
{
    (void)state;
    char *dir = temp_dir("modelswap"), outdir[600];
    snprintf(outdir, sizeof outdir, "%s/out", dir);
    oq_config cfg[3];
    oq_validate_opts o;
    validate_two_configs(&o, cfg, outdir);
    oq_config_parse("cpu:decomposed:fp32", &cfg[2], NULL);
    o.n_configs = 3;
    o.isolate = 0;
    swap_model x = {outdir, 0};
    o.on_batch = swap_model_after_reference;
    o.progress_ctx = &x;
    oq_validate_summary *s;
    oq_err err = {0};
    assert_int_equal(oq_validate_run(&o, &s, &err), OQ_OK);
    assert_true(x.swapped);
    const char *reason = s->configs[1].reason ? s->configs[1].reason : "";
    if (s->configs[1].status != OQ_VERDICT_ERROR || !strstr(reason, "encoder_attention24_fp32.onnx: changed during the run (sha256 "))
        fail_msg("the replaced model ran as the plan's: %s, %s", oq_verdict_name(s->configs[1].status), reason);
    assert_int_equal(s->configs[2].status, OQ_VERDICT_PASSED);
    assert_int_equal(s->exit_status, 3);
    oq_validate_summary_free(s);
    oq_remove_tree(dir);
    free(dir);
}

/* The encoder's weights, replaced once the reference (an export run on ORT) has run: the plan
 * names weights.npz by the SHA-256 of the bytes the orchestrator wrote, and the C reference under
 * test reads the file once and runs it only if it is those bytes. Before, it ran whatever was at
 * the path (here: failed on other weights; the cached reference keyed its outputs by the file's
 * hash taken before it read the file again). */
static void swap_weights_after_reference(void *ctx, const oq_validate_progress *p)
{
    swap_model *x = ctx;
    if (x->swapped || p->config != 0 || p->batches_done != p->n_batches) return;
    char to[600], tmp[700];
    snprintf(to, sizeof to, "%s/weights.npz", x->outdir);
    snprintf(tmp, sizeof tmp, "%s.new", to);
    oq_npz *z;
    assert_int_equal(oq_npz_read(to, &z, NULL), OQ_OK);
    ((float *)z->tensors[0]->data)[0] += 1.0f;
    assert_int_equal(oq_npz_write(tmp, z->count, (const oq_tensor *const *)z->tensors, 0, 1, NULL), OQ_OK);
    assert_int_equal(rename(tmp, to), 0);
    oq_npz_free(z);
    x->swapped = 1;
}

static void reference_runs_the_planned_weights(void **state)
{
    (void)state;
    char *dir = temp_dir("weightswap"), outdir[600];
    snprintf(outdir, sizeof outdir, "%s/out", dir);
    oq_config cfg[2];
    oq_validate_opts o;
    validate_two_configs(&o, cfg, outdir);
    oq_config_parse("cpu:decomposed:fp32", &cfg[0], NULL);
    oq_config_parse("ref:encoder:fp64", &cfg[1], NULL);
    o.isolate = 0;
    swap_model x = {outdir, 0};
    o.on_batch = swap_weights_after_reference;
    o.progress_ctx = &x;
    oq_validate_summary *s;
    oq_err err = {0};
    assert_int_equal(oq_validate_run(&o, &s, &err), OQ_OK);
    assert_true(x.swapped);
    const char *reason = s->configs[1].reason ? s->configs[1].reason : "";
    if (s->configs[1].status != OQ_VERDICT_ERROR || !strstr(reason, "weights.npz: changed during the run (sha256 "))
        fail_msg("the replaced weights ran as the plan's: %s, %s", oq_verdict_name(s->configs[1].status), reason);
    oq_validate_summary_free(s);
    oq_remove_tree(dir);
    free(dir);
}

/* A model whose weights are in an external-data file, that file rewritten (one byte) while the
 * configuration runs its batches: ORT read it when the session was made, and may map it; the
 * worker tells, instead of reporting what it ran under the plan's SHA-256. */
typedef struct touch_data {
    const char *data;
    int touched;
} touch_data;

static void touch_data_during_run(void *ctx, const oq_validate_progress *p)
{
    touch_data *x = ctx;
    if (x->touched || p->config != 1 || p->batches_done != 1) return;
    unsigned char *buf = NULL;
    size_t n = 0;
    assert_int_equal(oq_read_file(x->data, &buf, &n, NULL), OQ_OK);
    buf[20000] ^= 1;
    assert_int_equal(oq_write_file_atomic(x->data, buf, n, 1, NULL), OQ_OK);
    free(buf);
    x->touched = 1;
}

static oq_verdict run_external(const char *dir, int touch, char *reason, size_t rn)
{
    char model[600], data[700], outdir[600];
    snprintf(model, sizeof model, "%s/llama_like_op18.onnx", dir);
    snprintf(data, sizeof data, "%s.data", model);
    snprintf(outdir, sizeof outdir, "%s/out%d", dir, touch);
    const char *ext = OQ_SOURCE_DIR "/tests/fixtures/external/llama_like_op18.onnx";
    unsigned char *buf = NULL;
    size_t n = 0;
    assert_int_equal(oq_read_file(ext, &buf, &n, NULL), OQ_OK);
    assert_int_equal(oq_write_file_atomic(model, buf, n, 1, NULL), OQ_OK);
    free(buf);
    assert_int_equal(oq_read_file(OQ_SOURCE_DIR "/tests/fixtures/external/llama_like_op18.onnx.data", &buf, &n, NULL),
                     OQ_OK);
    assert_int_equal(oq_write_file_atomic(data, buf, n, 1, NULL), OQ_OK);
    free(buf);
#define LL OQ_SOURCE_DIR "/tests/fixtures/torch/llama_like/"
    const char *inputs[] = {LL "inputs_000.npz", LL "inputs_001.npz"};
    const char *expected[] = {LL "outputs_000.npz", LL "outputs_001.npz"};
#undef LL
    oq_config cfg[2];
    oq_validate_opts o;
    validate_user_expected(&o, cfg, model, inputs, 2, outdir);
    o.expected_files = expected;
    o.n_expected_files = 2;
    touch_data x = {data, 0};
    o.on_batch = touch ? touch_data_during_run : NULL;
    o.progress_ctx = &x;
    oq_validate_summary *s;
    oq_err err = {0};
    if (oq_validate_run(&o, &s, &err)) fail_msg("%s", err.msg);
    assert_int_equal(x.touched, touch);
    snprintf(reason, rn, "%s", s->configs[1].reason ? s->configs[1].reason : "");
    oq_verdict v = s->configs[1].status;
    oq_validate_summary_free(s);
    oq_remove_tree(outdir);
    return v;
}

static void worker_sees_external_data_change(void **state)
{
    (void)state;
    char *dir = temp_dir("extswap"), reason[OQ_ERR_MSG_MAX + 64];
    assert_int_equal(run_external(dir, 0, reason, sizeof reason), OQ_VERDICT_PASSED);
    assert_int_equal(run_external(dir, 1, reason, sizeof reason), OQ_VERDICT_ERROR);
    if (!strstr(reason, "llama_like_op18.onnx: changed during the run (sha256 ") ||
        !strstr(reason, "its external data") || !strstr(reason, "llama_like_op18.onnx.data changed"))
        fail_msg("reason: %s", reason);
    oq_remove_tree(dir);
    free(dir);
}

/* A configuration that runs what the reference runs (the --model file as it is on one runtime
 * and kernel: fp16 changes only the tolerance) on the same ORT passes and proves nothing: the
 * library refuses it, for a library caller as for validate and replay (the tool refused it,
 * oq_validate_run ran it and said PASSED); a copy of the library is the same ORT, stripped too
 * (its ELF build-id, else its version and build info: it passed as another build), and the saved
 * outputs as the reference make it two comparisons. */
/* A caller's words for the API's: brackets, so that a text that went through them shows. */
static const char *bracketed(const char *text, char *buf, size_t n)
{
    snprintf(buf, n, "[%s]", text);
    return buf;
}

static oq_validate_summary *run_worded(const char *outdir, size_t n_configs, oq_terms_fn terms)
{
    static oq_config cfg[2];
    oq_validate_opts o;
    validate_two_configs(&o, cfg, outdir);
    oq_config_parse("noep:attention24:fp32", &cfg[1], NULL); /* no such provider: skipped */
    o.n_configs = n_configs;
    o.events.num_events = 2;
    o.isolate = 0;
    o.overwrite = 1;
    o.repeat_reference = 1;
    o.require_full_gpu = o.prove_teeth = n_configs > 1;
    oq_set_terms(terms); /* process-wide: set back below */
    oq_validate_summary *s = NULL;
    oq_err err = OQ_ERR_INIT;
    oq_status st = oq_validate_run(&o, &s, &err);
    oq_set_terms(NULL);
    if (st) fail_msg("%s", err.msg);
    return s;
}

/* What a run writes for people names the API's fields (a C caller has no --prove-teeth), unless
 * oq_set_terms words them: the tool's summary.json says its options through it. */
static void summary_texts_in_the_callers_terms(void **state)
{
    (void)state;
    char *dir = temp_dir("worded"), out[600];
    snprintf(out, sizeof out, "%s/out", dir);
    oq_validate_summary *s = run_worded(out, 2, NULL);
    assert_int_equal(s->n_requirements, 2);
    assert_string_equal(s->requirements[0], "require_full_gpu");
    assert_string_equal(s->requirements[1], "prove_teeth");
    assert_string_equal(s->cache_off, "repeat_reference: the reference is timed, so every batch runs");
    oq_validate_summary_free(s);
    s = run_worded(out, 2, bracketed);
    assert_string_equal(s->requirements[0], "[require_full_gpu]");
    assert_string_equal(s->requirements[1], "[prove_teeth]");
    assert_string_equal(s->cache_off, "[repeat_reference: the reference is timed, so every batch runs]");
    oq_validate_summary_free(s);
    s = run_worded(out, 1, NULL);
    if (!strstr(s->verdict_reason, "(the first is the reference; add one after it, e.g. configs ref:encoder:fp64,"))
        fail_msg("%s", s->verdict_reason);
    oq_validate_summary_free(s);
    s = run_worded(out, 1, bracketed);
    if (!strstr(s->verdict_reason, "; [add one after it, e.g. configs ]ref:encoder:fp64,")) fail_msg("%s", s->verdict_reason);
    oq_validate_summary_free(s);
    remove_dir(dir);
}

static void self_comparison_refused(void **state)
{
    (void)state;
    char *dir = temp_dir("selfcmp");
    char out[600], copy[600], cmd[4096];
    snprintf(out, sizeof out, "%s/out", dir);
    oq_config cfg[3];
    oq_validate_opts o;
    validate_two_configs(&o, cfg, out);
    oq_config_parse("cpu:model:fp32", &cfg[0], NULL);
    oq_config_parse("cpu:model:fp16", &cfg[1], NULL);
    o.kind = OQ_MODEL_USER;
    o.model_path = OQ_SOURCE_DIR "/tests/fixtures/torch/hand_attention/hand_attention_op18.onnx";
    o.isolate = 0;
    oq_validate_summary *s = NULL;
    oq_err err = OQ_ERR_INIT;
    assert_int_equal(oq_validate_run(&o, &s, &err), OQ_ERR_INVALID_ARG);
    assert_null(s);
    if (!strstr(err.msg, "'cpu:model:fp16' runs what the reference 'cpu:model:fp32' runs (items 1 and 2): "))
        fail_msg("%s", err.msg);
    assert_int_equal(access(out, F_OK), -1); /* nothing made */
    oq_self_comparison f;
    assert_int_equal(oq_validate_self_comparison(&o, &f, NULL), OQ_ERR_INVALID_ARG);
    assert_int_equal(f.config, 1);
    assert_int_equal(f.same, OQ_SAME_ORT_ONE_LIB);
    /* the reference on a copy of the library: the same build */
    snprintf(copy, sizeof copy, "%s/copy.so", dir);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", OQ_ORT_LIB, copy);
    assert_int_equal(system(cmd), 0);
    o.reference_ort_lib = copy;
    assert_int_equal(oq_validate_self_comparison(&o, &f, &err), OQ_ERR_INVALID_ARG);
    assert_int_equal(f.same, OQ_SAME_ORT_COPY);
    char *real = realpath(OQ_ORT_LIB, NULL);
    assert_string_equal(f.lib, real);
    assert_non_null(strstr(err.msg, "a copy of the others'"));
    /* stripped, the copy is no longer the same bytes, but strip keeps the ELF build-id */
    snprintf(cmd, sizeof cmd, "strip --strip-unneeded '%s'", copy);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(oq_validate_self_comparison(&o, &f, &err), OQ_ERR_INVALID_ARG);
    assert_int_equal(f.same, OQ_SAME_ORT_BUILD_ID);
    assert_non_null(strstr(err.msg, "another file with the ELF build-id of the others'"));
    /* without the note, only the bytes could say it is the build: it reports the version and
     * build info another build of that commit reports too, so it is not established and runs */
    snprintf(cmd, sizeof cmd, "objcopy --remove-section .note.gnu.build-id '%s'", copy);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(oq_validate_self_comparison(&o, &f, &err), OQ_OK);
    assert_int_equal(f.same, OQ_SAME_ORT_BUILD_INFO);
    assert_string_equal(f.lib, real);
    /* both without a build-id: a section added to one is another file; a byte copy is the build */
    char noid[700], other[700];
    snprintf(noid, sizeof noid, "%s/noid.so", dir);
    snprintf(other, sizeof other, "%s/other.so", dir);
    snprintf(cmd, sizeof cmd, "objcopy --remove-section .note.gnu.build-id '%s' '%s' && echo x > '%s/x' && "
             "objcopy --add-section .oqextra='%s/x' '%s' '%s'", OQ_ORT_LIB, noid, dir, dir, noid, other);
    assert_int_equal(system(cmd), 0);
    o.ort_lib = noid;
    o.reference_ort_lib = other;
    assert_int_equal(oq_validate_self_comparison(&o, &f, &err), OQ_OK);
    assert_int_equal(f.same, OQ_SAME_ORT_BUILD_INFO);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", noid, other);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(oq_validate_self_comparison(&o, &f, &err), OQ_ERR_INVALID_ARG);
    assert_int_equal(f.same, OQ_SAME_ORT_COPY);
    o.ort_lib = NULL;
    free(real);
    /* two comparisons with the saved outputs: none with itself */
    oq_config_parse("expected", &cfg[0], NULL);
    oq_config_parse("cpu:model:fp32", &cfg[2], NULL);
    o.n_configs = 3;
    o.reference_ort_lib = NULL;
    assert_int_equal(oq_validate_self_comparison(&o, &f, &err), OQ_OK);
    assert_int_equal(f.same, OQ_SAME_ORT_NONE);
    remove_dir(dir);
}

/* Options of `model` judged against one saved outputs file (files[0]) on ORT CPU. */
static void saved_vs_cpu(oq_validate_opts *o, oq_config cfg[2], const char *model, const char **files)
{
    oq_config_parse("expected", &cfg[0], NULL);
    oq_config_parse("cpu:model:fp32", &cfg[1], NULL);
    oq_validate_opts_default(o);
    o->configs = cfg;
    o->n_configs = 2;
    o->kind = OQ_MODEL_USER;
    o->model_path = model;
    o->expected_files = files;
    o->n_expected_files = 1;
}

/* Outputs saved by ORT with a comment naming the ORT library by path and, where `session` is
 * not NULL, the session options (a JSON object) they were saved with. */
static void saved_outputs_with(const char *saved, const char *lib, const char *model_sha, const char *session)
{
    int64_t shape[] = {2};
    oq_tensor *t;
    assert_int_equal(oq_tensor_create(&t, OQ_DTYPE_FLOAT32, 1, shape, "y", NULL), OQ_OK);
    unsigned char *buf = NULL;
    size_t len = 0;
    char comment[2048];
    snprintf(comment, sizeof comment,
             "ortqual-outputs {\"config\": \"cpu:model:fp32\", \"provider\": \"cpu\", \"model_sha256\": \"%s\", "
             "\"ort_version\": \"1.29.0\", \"ort_library\": \"%s\"%s%s}",
             model_sha, lib, session ? ", \"session\": " : "", session ? session : "");
    assert_int_equal(oq_npz_bytes(1, (const oq_tensor *const *)&t, 0, saved, &buf, &len, NULL), OQ_OK);
    assert_int_equal(oq_npz_set_comment(&buf, &len, comment, NULL), OQ_OK);
    assert_int_equal(oq_write_file_atomic(saved, buf, len, 1, NULL), OQ_OK);
    free(buf);
    oq_tensor_free(t);
}

/* Outputs saved by ORT as a file saved before 2026-12-05 records them: a comment naming the ORT
 * library by path, no SHA-256 (the model's file is hand_attention's). */
static void saved_outputs_naming(const char *saved, const char *lib, const char *model_sha)
{
    saved_outputs_with(saved, lib, model_sha, NULL);
}

/* Saved outputs judged by a session apart from theirs only in entries that cannot change a
 * number (a log id, spinning) or in how the same graph optimization level or thread count is
 * given (the option, or a session.graph_optimization_level or session.intra_op_num_threads
 * entry, which ORT takes over the option) are ORT compared with itself, refused (each ran and
 * PASSED with max|err| 0, no note); an entry that can change a number (denormals as zero,
 * another level, another thread count or execution mode) is a comparison. */
static void saved_by_this_session_spelt_otherwise(void **state)
{
    (void)state;
    char *dir = temp_dir("savedspelt"), *saved = path_in(dir, "outputs_000.npz");
    const char *model = OQ_SOURCE_DIR "/tests/fixtures/torch/hand_attention/hand_attention_op18.onnx";
    char *ort = realpath(OQ_ORT_LIB, NULL);
    oq_model_file mf;
    assert_int_equal(oq_model_file_read(model, &mf, NULL), OQ_OK);
    char model_sha[65];
    snprintf(model_sha, sizeof model_sha, "%s", mf.sha256);
    oq_model_file_clear(&mf);
    oq_config cfg[2];
    oq_validate_opts o;
    const char *files[] = {saved};
    saved_vs_cpu(&o, cfg, model, files);
    static const struct {
        const char *saved, *key, *value;
        oq_graph_opt graph_opt;
        int self, saved_threads, threads; /* --threads of the saving run and of this one */
    } cases[] = {
        {"{}", "session.log_id", "x", OQ_GRAPH_OPT_DEFAULT, 1},
        {"{}", "session.intra_op.allow_spinning", "1", OQ_GRAPH_OPT_DEFAULT, 1},
        {"{}", "session.log_severity_level", "0", OQ_GRAPH_OPT_DEFAULT, 1},
        {"{}", "session.graph_optimization_level", "enable_all", OQ_GRAPH_OPT_DEFAULT, 1},
        {"{}", "session.graph_optimization_level", "enable_all", OQ_GRAPH_OPT_DISABLE, 1},
        {"{\"session.log_id\": \"saved\"}", NULL, NULL, OQ_GRAPH_OPT_ALL, 1},
        {"{\"session.graph_optimization_level\": \"enable_basic\"}", NULL, NULL, OQ_GRAPH_OPT_BASIC, 1},
        {"{}", "session.graph_optimization_level", "disable_all", OQ_GRAPH_OPT_DEFAULT, 0},
        {"{}", "session.graph_optimization_level", "enable_layout", OQ_GRAPH_OPT_DEFAULT, 0},
        {"{}", "session.set_denormal_as_zero", "1", OQ_GRAPH_OPT_DEFAULT, 0},
        {"{}", "session.intra_op_num_threads", "1", OQ_GRAPH_OPT_DEFAULT, 0},
        {"{\"session.graph_optimization_level\": \"enable_basic\"}", NULL, NULL, OQ_GRAPH_OPT_DEFAULT, 0},
        /* ORT ran 2 intra-op threads on both sides: the entry's over --threads 1, or --threads 2 */
        {"{\"session.intra_op_num_threads\": \"2\"}", NULL, NULL, OQ_GRAPH_OPT_DEFAULT, 1, 1, 2},
        {"{}", "session.intra_op_num_threads", "2", OQ_GRAPH_OPT_DEFAULT, 1, 2, 1},
        {"{}", "session.intra_op_num_threads", "2", OQ_GRAPH_OPT_DEFAULT, 0, 1, 1},
        {"{}", "session.execution_mode", "parallel", OQ_GRAPH_OPT_DEFAULT, 0, 1, 1},
        {"{}", "session.execution_mode", "sequential", OQ_GRAPH_OPT_DEFAULT, 1, 1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char session[256];
        snprintf(session, sizeof session, "{\"threads\": %d, \"graph_opt\": 0, \"config\": %s, \"ep_options\": {}}",
                 cases[i].saved_threads, cases[i].saved);
        saved_outputs_with(saved, ort, model_sha, session);
        const char *key[] = {cases[i].key}, *value[] = {cases[i].value};
        o.n_session_configs = cases[i].key ? 1 : 0;
        o.session_config_keys = key;
        o.session_config_values = value;
        o.graph_opt = cases[i].graph_opt;
        o.threads = cases[i].threads;
        oq_err err = OQ_ERR_INIT;
        oq_status st = oq_validate_saved_self(&o, ort, NULL, &err);
        if (cases[i].self && (st != OQ_ERR_INVALID_ARG || !strstr(err.msg, "and the same session options as ORT runs them")))
            fail_msg("case %zu (%s=%s): not refused as ORT compared with itself: %s", i, cases[i].key, cases[i].value,
                     err.msg);
        if (!cases[i].self && st != OQ_OK) fail_msg("case %zu (%s=%s): refused: %s", i, cases[i].key, cases[i].value, err.msg);
    }
    free(ort);
    free(saved);
    remove_dir(dir);
}

/* Saved outputs whose comment names the ORT that made them by path alone: a byte-identical copy
 * of the ORT under test at another path is that ORT, compared with itself, and refused naming
 * both paths (it ran, and passed); the path as text still is. What is named but is no regular
 * file of the same bytes is another build: a FIFO (never opened: it blocked the run until
 * killed; the alarm ends a hang), a device, a file of the same size with one byte changed. */
static void saved_by_a_copy_of_this_ort(void **state)
{
    (void)state;
    char *dir = temp_dir("savedcopy"), *saved = path_in(dir, "outputs_000.npz"), *copy = path_in(dir, "libcopy.so"),
         *other = path_in(dir, "libother.so"), *fifo = path_in(dir, "fifo"), cmd[2048], want[4096];
    const char *model = OQ_SOURCE_DIR "/tests/fixtures/torch/hand_attention/hand_attention_op18.onnx";
    char *ort = realpath(OQ_ORT_LIB, NULL);
    oq_model_file mf;
    assert_int_equal(oq_model_file_read(model, &mf, NULL), OQ_OK);
    char model_sha[65];
    snprintf(model_sha, sizeof model_sha, "%s", mf.sha256);
    oq_model_file_clear(&mf);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && cp '%s' '%s' && printf 'x' | dd of='%s' bs=1 seek=1000 conv=notrunc "
             "status=none",
             ort, copy, ort, other, other);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    oq_config cfg[2];
    oq_validate_opts o;
    const char *files[] = {saved};
    saved_vs_cpu(&o, cfg, model, files);
    oq_err err = OQ_ERR_INIT;
    alarm(60);
    saved_outputs_naming(saved, copy, model_sha);
    assert_int_equal(oq_validate_saved_self(&o, ort, NULL, &err), OQ_ERR_INVALID_ARG);
    snprintf(want, sizeof want, "%s: saved by 'cpu:model:fp32' (validate with save_outputs) running this model_path on "
             "cpu with ORT 1.29.0 (%s, the same bytes as %s) and the same session options", saved, copy, ort);
    if (!strstr(err.msg, want)) fail_msg("%s", err.msg);
    saved_outputs_naming(saved, ort, model_sha);
    assert_int_equal(oq_validate_saved_self(&o, ort, NULL, &err), OQ_ERR_INVALID_ARG);
    snprintf(want, sizeof want, "on cpu with ORT 1.29.0 (%s) and the same session options", ort);
    if (!strstr(err.msg, want)) fail_msg("%s", err.msg);
    const char *another[] = {fifo, "/dev/zero", other, "/nonexistent/libonnxruntime.so"};
    for (size_t i = 0; i < sizeof another / sizeof *another; i++) {
        saved_outputs_naming(saved, another[i], model_sha);
        if (oq_validate_saved_self(&o, ort, NULL, &err)) fail_msg("%s: %s", another[i], err.msg);
    }
    alarm(0);
    free(ort);
    free(saved);
    free(copy);
    free(other);
    free(fifo);
    remove_dir(dir);
}

/* Saved outputs that record the ELF build-id of the ORT this run maps were saved by that build,
 * whatever SHA-256 and path they record (outputs signed through a link re-pointed since, a
 * patched copy): refused as ORT compared with itself, as replay refuses another file of the same
 * build-id; another build-id is another build. */
static void saved_by_this_build_id(void **state)
{
    (void)state;
    char *dir = temp_dir("savedid"), *saved = path_in(dir, "outputs_000.npz");
    const char *model = OQ_SOURCE_DIR "/tests/fixtures/torch/hand_attention/hand_attention_op18.onnx";
    char *ort = realpath(OQ_ORT_LIB, NULL), id[129], extra[512];
    oq_runtime *rt;
    assert_int_equal(oq_runtime_load(OQ_ORT_LIB, &rt, NULL), OQ_OK);
    assert_true(oq_runtime_build_id(rt, id, sizeof id));
    oq_runtime_free(rt);
    oq_model_file mf;
    assert_int_equal(oq_model_file_read(model, &mf, NULL), OQ_OK);
    oq_config cfg[2];
    oq_validate_opts o;
    const char *files[] = {saved};
    saved_vs_cpu(&o, cfg, model, files);
    oq_err err = OQ_ERR_INIT;
    /* the session argument closes the object: the signature's other keys follow it */
    snprintf(extra, sizeof extra, "{\"threads\": 0, \"graph_opt\": 0, \"config\": {}, \"ep_options\": {}}, "
             "\"ort_library_sha256\": \"%064d\", \"ort_build_id\": \"%s\"", 0, id);
    saved_outputs_with(saved, "/elsewhere/libonnxruntime.so.1.30.0", mf.sha256, extra);
    if (oq_validate_saved_self(&o, ort, id, &err) != OQ_ERR_INVALID_ARG ||
        !strstr(err.msg, "(/elsewhere/libonnxruntime.so.1.30.0, the ELF build-id of "))
        fail_msg("not refused as ORT of build-id %s: %s", id, err.msg);
    assert_int_equal(oq_validate_saved_self(&o, ort, "0123abcd", &err), OQ_OK);
    oq_model_file_clear(&mf);
    free(ort);
    free(saved);
    remove_dir(dir);
}

/* ---- the C encoder's heads against the model's, whatever its attention form ------------- */

/* ortqual's encoder of 2 heads (width 16, one block, seed 1; its weights dir/w.npz) at `path`:
 * decomposed, the heads
 * split off the hidden axis by a Reshape; or (`fused`) that export converted to one Attention-24
 * node of 4-D Q, K, V, the heads in Q's shape and no q_num_heads. */
static void two_heads_model(const char *dir, const char *path, int fused)
{
    oq_encoder_config c;
    oq_encoder_config_default(&c);
    c.width = 16;
    c.layers = 1;
    c.heads = 2;
    oq_encoder_weights *w;
    assert_int_equal(oq_encoder_weights_random(&c, 1, &w, NULL), OQ_OK);
    oq_graph *g;
    char *dec = path_in(dir, "exported.onnx"), *weights = path_in(dir, "w.npz");
    assert_int_equal(oq_encoder_weights_save(w, weights, 1, NULL), OQ_OK);
    free(weights);
    assert_int_equal(oq_export_encoder(w, NULL, &g, NULL), OQ_OK);
    assert_int_equal(oq_graph_write(g, fused ? dec : path, 1, NULL), OQ_OK);
    oq_graph_free(g);
    oq_encoder_weights_free(w);
    if (fused) {
        oq_convert_opts o;
        oq_convert_opts_default(&o);
        o.passes = OQ_CONVERT_FUSE | OQ_CONVERT_MASK_TO_SEQLEN;
        oq_err err = {0};
        assert_int_equal(oq_runtime_load(OQ_ORT_LIB, &o.runtime, &err), OQ_OK);
        oq_convert_report *r = NULL;
        if (oq_convert_file(dec, path, 1, &o, &r, &err)) fail_msg("%s", err.msg);
        assert_int_equal(r->fused, 1);
        oq_convert_report_free(r);
        oq_runtime_free(o.runtime);
        unlink(dec);
    }
    free(dec);
}

/* validate of `model` against ref:encoder:fp64 computing `heads` heads with dir/w.npz on 2
 * generated events, in dir/out; *passed: the verdict, when it ran. */
static oq_status run_heads(const char *dir, const char *model, int32_t heads, int *passed, oq_err *err)
{
    oq_config cfg[2];
    char *out = path_in(dir, "out"), *weights = path_in(dir, "w.npz");
    oq_validate_opts o;
    validate_two_configs(&o, cfg, out);
    oq_config_parse("cpu:model:fp32", &cfg[1], NULL);
    o.kind = OQ_MODEL_USER;
    o.model_path = model;
    o.weights_path = weights;
    o.encoder.heads = heads;
    o.events.num_events = 2;
    o.isolate = 0;
    oq_validate_summary *s = NULL;
    oq_status st = oq_validate_run(&o, &s, err);
    *passed = s && s->verdict == OQ_RUN_PASSED;
    if (s && !*passed) print_message("%s: %s\n", oq_run_verdict_name(s->verdict), s->verdict_reason);
    char *summary = path_in(out, "summary.json");
    if (st) assert_int_equal(access(summary, F_OK), -1); /* refused before anything ran */
    free(summary);
    oq_validate_summary_free(s);
    oq_remove_tree(out);
    free(out);
    free(weights);
    return st;
}

/* A model whose attention splits into other heads than the C encoder computes fails every batch
 * as if its numbers were wrong: refused before anything runs in every form, not only an
 * Attention's q_num_heads (a decomposed chain's Reshape, a 4-D Q's shape ran and failed); the
 * right heads run and pass. */
static void reference_heads_in_every_form(void **state)
{
    (void)state;
    char *dir = temp_dir("heads"), *dec = path_in(dir, "decomposed.onnx"), *fused = path_in(dir, "fused.onnx");
    char want[2048];
    two_heads_model(dir, dec, 0);
    two_heads_model(dir, fused, 1);
    oq_model_info *mi;
    assert_int_equal(oq_model_inspect_file(fused, &mi, NULL), OQ_OK); /* the form meant: no attribute says 2 */
    assert_int_equal(mi->n_attention, 1);
    assert_string_equal(mi->attention[0].kind, "Attention");
    for (size_t i = 0; i < mi->attention[0].n_attrs; i++) assert_null(strstr(mi->attention[0].attrs[i], "num_heads"));
    oq_model_info_free(mi);
    oq_err err = OQ_ERR_INIT;
    int passed;
    const struct {
        const char *model, *what;
    } forms[] = {{dec, "decomposed attention (Softmax 'Softmax')"}, {fused, "Attention 'attention'"}};
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(run_heads(dir, forms[i].model, 4, &passed, &err), OQ_ERR_INVALID_ARG);
        snprintf(want, sizeof want, "%s: the reference ref:encoder:fp64 computes 4 heads, the model's %s has 2; give "
                 "encoder.heads 2", forms[i].model, forms[i].what);
        assert_string_equal(err.msg, want);
        if (run_heads(dir, forms[i].model, 2, &passed, &err)) fail_msg("%s", err.msg);
        assert_true(passed);
    }
    free(dec);
    free(fused);
    oq_remove_tree(dir);
    free(dir);
}

/* Isolated workers run the tool (wherever forking is not safe): a self_exe that cannot
 * run is refused before anything is made, not a failure of every configuration later. */
static void self_exe_checked_first(void **state)
{
    (void)state;
    char dir[] = "/tmp/oq_selfexe_XXXXXX", out[600];
    assert_non_null(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/out", dir);
    oq_config cfg[2];
    oq_config_parse("ref:encoder:fp64", &cfg[0], NULL);
    oq_config_parse("cpu:attention24:fp32", &cfg[1], NULL);
    oq_validate_opts o;
    oq_validate_opts_default(&o);
    o.configs = cfg;
    o.n_configs = 2;
    o.outdir = out;
    o.self_exe = "/nonexistent/ortqual";
    oq_validate_summary *s = NULL;
    oq_err err = OQ_ERR_INIT;
    assert_int_equal(oq_validate_run(&o, &s, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "self_exe /nonexistent/ortqual: cannot run it: No such file or directory"));
    assert_null(s);
    assert_int_equal(access(out, F_OK), -1); /* nothing made */
    rmdir(dir);
}

static void worker_sees_the_reference_inputs(void **state)
{
    (void)state;
    char *dir = temp_dir("swap");
    char reason[OQ_ERR_MSG_MAX + 64];
    assert_int_equal(run_swapped(dir, 0, reason, sizeof reason), OQ_VERDICT_PASSED);
    assert_int_equal(run_swapped(dir, 1, reason, sizeof reason), OQ_VERDICT_ERROR);
    assert_non_null(strstr(reason, "batch 0: the reference's outputs are of other inputs"));
    rmdir(dir);
    free(dir);
}

/* The default --shards (G, one wave) is capped at the batches E events make: 10 events in the
 * demo's batches of 3 are 4 batches, so 10 workers run 4 shards, and what follows (events per
 * shard, waves, worker time) is of those 4 (it modelled 10 shards of 3 events). */
static void estimate_default_shards_capped_at_batches(void **state)
{
    (void)state;
    oq_validate_summary *s;
    oq_err err = {0};
    assert_int_equal(oq_validate_summary_read(OQ_SOURCE_DIR "/docs/evidence/h200/validate-demo-summary.json", &s, &err),
                     OQ_OK);
    oq_estimate_opts o = {.events = 10, .workers = 10, .repeat = -1, .warmup = -1};
    oq_estimate e;
    assert_int_equal(oq_validate_estimate(s, &o, &e, &err), OQ_OK);
    assert_int_equal(e.batches, 4);
    assert_int_equal(e.shards, 4);
    assert_int_equal(e.waves, 1);
    assert_int_equal(e.events_per_shard, 3);
    assert_true(fabs(e.worker_hours - 4 * e.shard_s / 3600) <= 1e-12);
    oq_estimate_clear(&e);
    /* more batches than workers: one wave of G shards, as before; an explicit N stays N */
    o.events = 100;
    assert_int_equal(oq_validate_estimate(s, &o, &e, &err), OQ_OK);
    assert_int_equal(e.batches, 34);
    assert_int_equal(e.shards, 10);
    assert_int_equal(e.events_per_shard, 12);
    oq_estimate_clear(&e);
    o.shards = 20;
    assert_int_equal(oq_validate_estimate(s, &o, &e, &err), OQ_OK);
    assert_int_equal(e.shards, 20);
    assert_int_equal(e.waves, 2);
    oq_estimate_clear(&e);
    /* QA round 7 #7: repeat 0 is a plan validate refuses (it estimated one) */
    o.repeat = 0;
    assert_int_equal(oq_validate_estimate(s, &o, &e, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "repeat >= 1"));
    o.repeat = 1;
    o.warmup = -2;
    assert_int_equal(oq_validate_estimate(s, &o, &e, &err), OQ_ERR_INVALID_ARG);
    oq_validate_summary_free(s);
}

#define DEMO_SUMMARY OQ_SOURCE_DIR "/docs/evidence/h200/validate-demo-summary.json"

/* The fixed (one-time) part is what the worker spent beyond the calls it made, as measured: the
 * calls the larger plan makes (--repeat, --warmup) change the per-event part only. It changed
 * with them, and went to 0 (clamped) where the subtraction was negative: the demo's reference
 * read 0.009 s, then 0 with --repeat 50 --warmup 1. */
static void estimate_fixed_from_measured_calls(void **state)
{
    (void)state;
    oq_validate_summary *s;
    oq_err err = {0};
    assert_int_equal(oq_validate_summary_read(DEMO_SUMMARY, &s, &err), OQ_OK);
    oq_estimate_opts o = {.events = 1000000, .workers = 50, .configs = 20, .repeat = -1, .warmup = -1, .only = "cuda:"};
    oq_estimate a, b;
    assert_int_equal(oq_validate_estimate(s, &o, &a, &err), OQ_OK);
    o.repeat = 50;
    o.warmup = 1;
    assert_int_equal(oq_validate_estimate(s, &o, &b, &err), OQ_OK);
    assert_int_equal(a.n_configs, b.n_configs);
    for (size_t i = 0; i < a.n_configs; i++) {
        assert_true(a.configs[i].fixed_s > 0);
        assert_true(fabs(a.configs[i].fixed_s - b.configs[i].fixed_s) <= 1e-12);
    }
    assert_true(b.configs[1].per_event_s > a.configs[1].per_event_s); /* more calls per batch */
    oq_estimate_clear(&a);
    oq_estimate_clear(&b);
    oq_validate_summary_free(s);
}

/* A run in this process whose batches each take SLOW_BATCH_S more of the worker's time (the
 * caller's progress hook, as an isolated worker's progress line is its own): when each
 * configuration's worker starts and ends, from the progress lines around it. */
#define SLOW_BATCH_S 0.06
typedef struct slow_run {
    double start[2], end[2];
} slow_run;

static void slow_batch(void *ctx, const oq_validate_progress *p)
{
    (void)ctx;
    (void)p;
    const struct timespec pause = {0, (long)(SLOW_BATCH_S * 1e9)};
    nanosleep(&pause, NULL);
}

static void worker_times(void *ctx, const char *line)
{
    slow_run *r = ctx;
    size_t k;
    if (sscanf(line, "[%zu/", &k) != 1 || k < 1 || k > 2) return;
    size_t n = strlen(line);
    if (n > 4 && !strcmp(line + n - 4, " ...")) r->start[k - 1] = oq_now_s();
    else r->end[k - 1] = oq_now_s();
}

/* The fixed parts estimate takes from a run of `batches` batches of 2 events, each batch
 * SLOW_BATCH_S slower in the worker; worker.seconds as the progress lines time it. */
static void slow_estimate(const char *dir, int batches, double fixed[2])
{
    struct tiny_run t;
    tiny_run_init(&t, dir);
    t.o.isolate = 0;
    t.o.events.num_events = 2 * batches;
    t.o.events.batch_size = 2;
    slow_run r = {{0}, {0}};
    t.o.on_batch = slow_batch;
    t.o.progress = worker_times;
    t.o.progress_ctx = &r;
    oq_validate_summary *s;
    oq_err err = {0};
    assert_int_equal(oq_validate_run(&t.o, &s, &err), OQ_OK);
    oq_validate_summary_free(s);
    char path[600];
    snprintf(path, sizeof path, "%s/summary.json", t.outdir); /* as `ortqual estimate` reads it */
    assert_int_equal(oq_validate_summary_read(path, &s, &err), OQ_OK);
    for (int k = 0; k < 2; k++) {
        assert_true(s->configs[k].cost.recorded && r.end[k] > r.start[k]);
        s->configs[k].worker.seconds = r.end[k] - r.start[k]; /* an isolated worker's, as its parent times it */
    }
    oq_estimate_opts o = {.events = 1000, .workers = 1, .repeat = -1, .warmup = -1};
    oq_estimate e;
    if (oq_validate_estimate(s, &o, &e, &err)) fail_msg("estimate of %d batches: %s", batches, err.msg);
    for (int k = 0; k < 2; k++) fixed[k] = e.configs[k].fixed_s;
    oq_estimate_clear(&e);
    oq_validate_summary_free(s);
    tiny_run_remove(&t);
}

/* Every moment of a batch in the worker is in a per-batch field (io_s: what its calls and
 * comparisons leave), so estimate's fixed part does not grow with the probe's batches: 4
 * batches, each SLOW_BATCH_S slower, against 1. The worker's plan lines, records and progress
 * reports were in no field: the fixed part grew by them (QA 8b D7's rest, about 2 ms a batch
 * under load; here 3 x SLOW_BATCH_S). */
static void estimate_fixed_part_not_per_batch(void **state)
{
    (void)state;
    double one[2], four[2];
    slow_estimate("slow1", 1, one);
    slow_estimate("slow4", 4, four);
    for (int k = 0; k < 2; k++)
        print_message("configuration %d: fixed part %.3f s from 1 batch, %.3f s from 4\n", k, one[k], four[k]);
    for (int k = 0; k < 2; k++)
        if (four[k] - one[k] > SLOW_BATCH_S)
            fail_msg("configuration %d: fixed part %.3f s from 1 batch, %.3f s from 4", k, one[k], four[k]);
}

/* A reference partly read from the reference cache, or a merge a shard is missing from, timed
 * part of the plan's batches: their time was divided over every event (34x too fast). Refused. */
static void estimate_refuses_partial_timings(void **state)
{
    (void)state;
    oq_validate_summary *s;
    oq_err err = {0};
    assert_int_equal(oq_validate_summary_read(DEMO_SUMMARY, &s, &err), OQ_OK);
    oq_estimate_opts o = {.events = 1000, .workers = 2, .repeat = -1, .warmup = -1};
    oq_estimate e;
    oq_batch_result *b = &s->configs[0].batches[1];
    b->reference_cached = 1;
    b->timed = 0;
    assert_int_equal(oq_validate_estimate(s, &o, &e, &err), OQ_ERR_FORMAT);
    if (!strstr(err.msg, "1 of ") || !strstr(err.msg, "batches were not timed (their outputs came from the reference cache"))
        fail_msg("%s", err.msg);
    b->reference_cached = 0;
    b->timed = 1;
    oq_shard_problem p = {.index = 2, .state = OQ_SHARD_MISSING};
    s->merged.count = 3;
    s->merged.n_problems = 1;
    s->merged.problems = &p;
    err = (oq_err){0};
    assert_int_equal(oq_validate_estimate(s, &o, &e, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "an incomplete merge: shard 2 of 3 missing"));
    s->merged = (oq_merge_info){0};
    oq_validate_summary_free(s);
}

/* The reference `expected` (saved outputs, e.g. PyTorch's) is read, not run: it costs nothing.
 * Every such run was refused ("has no timed batches"), with nothing to do about it. */
static void estimate_expected_reference_costs_nothing(void **state)
{
    (void)state;
    oq_validate_summary *s;
    oq_err err = {0};
    assert_int_equal(oq_validate_summary_read(DEMO_SUMMARY, &s, &err), OQ_OK);
    assert_int_equal(oq_config_parse("expected", &s->configs[0].config, NULL), OQ_OK);
    for (size_t i = 0; i < s->configs[0].n_batches; i++) s->configs[0].batches[i].timed = 0;
    oq_estimate_opts o = {.events = 1000, .workers = 2, .repeat = -1, .warmup = -1};
    oq_estimate e;
    assert_int_equal(oq_validate_estimate(s, &o, &e, &err), OQ_OK);
    assert_true(e.configs[0].read_only);
    assert_true(e.configs[0].fixed_s == 0 && e.configs[0].per_event_s == 0);
    assert_true(e.n_configs >= 2 && e.configs[1].per_event_s > 0);
    oq_estimate_clear(&e);
    oq_validate_summary_free(s);
}

/* A configuration the probe skipped timed nothing: it is in no mean, and the estimate names it
 * (it was left out in silence, the user's matrix modelled one configuration short). */
static void estimate_names_what_it_left_out(void **state)
{
    (void)state;
    oq_validate_summary *s;
    oq_err err = {0};
    assert_int_equal(oq_validate_summary_read(DEMO_SUMMARY, &s, &err), OQ_OK);
    assert_true(s->n_configs >= 3);
    oq_config_result *c = &s->configs[2];
    for (size_t i = 0; i < c->n_batches; i++) c->batches[i].timed = 0;
    c->status = OQ_VERDICT_SKIPPED;
    oq_estimate_opts o = {.events = 1000, .workers = 2, .repeat = -1, .warmup = -1};
    oq_estimate e;
    assert_int_equal(oq_validate_estimate(s, &o, &e, &err), OQ_OK);
    assert_int_equal(e.n_configs, s->n_configs - 1);
    assert_int_equal(e.n_left_out, 1);
    assert_string_equal(e.left_out[0].name, c->config.name);
    assert_int_equal(e.left_out[0].status, OQ_VERDICT_SKIPPED);
    oq_estimate_clear(&e);
    assert_int_equal(e.n_left_out, 0);
    oq_validate_summary_free(s);
}

/* A synthetic merged summary: 8 batches of 4 events, the reference and two configurations, each
 * batch's first call 10 ms (`extra` s more on the batches listed), 3 timed calls of 2 ms after a
 * warm-up; each of the 2 shards that ran a configuration spent 1 s once and `io` s of I/O. */
enum { EST_BATCHES = 8, EST_CONFIGS = 3 };
typedef struct est_summary {
    oq_validate_summary s;
    oq_batch_info batches[EST_BATCHES];
    oq_config_result configs[EST_CONFIGS];
    oq_batch_result records[EST_CONFIGS][EST_BATCHES];
    oq_config_shard shards[EST_CONFIGS][2];
} est_summary;

static void est_build(est_summary *e, oq_shard_by by, const int *slow, size_t n_slow, double extra, double io)
{
    memset(e, 0, sizeof *e);
    e->s = (oq_validate_summary){.n_batches = EST_BATCHES, .batches = e->batches, .n_configs = EST_CONFIGS,
                                 .configs = e->configs, .merged = {.count = 2, .by = by}};
    for (int i = 0; i < EST_BATCHES; i++) e->batches[i] = (oq_batch_info){.index = i, .batch_size = 4};
    const char *names[EST_CONFIGS] = {"ref:encoder:fp64", "cpu:decomposed:fp32", "cpu:attention24:fp32"};
    for (int k = 0; k < EST_CONFIGS; k++) {
        oq_config_result *c = &e->configs[k];
        assert_int_equal(oq_config_parse(names[k], &c->config, NULL), OQ_OK);
        /* by configuration, shard k-1 alone ran configuration k; every shard the reference */
        int tasks = by == OQ_SHARD_BY_CONFIG && k ? 1 : 2;
        double calls = 0;
        for (int i = 0; i < EST_BATCHES; i++) {
            oq_batch_result *b = &e->records[k][i];
            *b = (oq_batch_result){.index = i, .timed = 1, .first_call_s = 0.010, .repeat = 3, .warmup = 1,
                                   .median_s = 0.002};
            for (size_t j = 0; j < n_slow; j++) b->first_call_s += slow[j] == i ? extra : 0;
            calls += b->first_call_s + 4 * b->median_s;
        }
        c->n_batches = EST_BATCHES;
        c->batches = e->records[k];
        c->n_shards = (size_t)tasks;
        c->shards = e->shards[k];
        for (int j = 0; j < tasks; j++) e->shards[k][j] = (oq_config_shard){.index = k && tasks == 1 ? k - 1 : j,
                                                                            .worker_ran = 1};
        int runs = by == OQ_SHARD_BY_CONFIG && !k ? tasks : 1; /* the records are one shard's */
        c->cost = (oq_worker_cost){.recorded = 1, .io_s = tasks * io};
        c->worker = (oq_worker_run){.ran = 1, .seconds = tasks * (1.0 + io) + runs * calls};
    }
}

/* Each shard's first batch's cold call (CUDA context, kernel selection) is one-time: only the
 * configuration's first batch's was, the other shards' spread over the events, so the same
 * 0.5 s first call gave another estimate in shard 1 than in shard 0 (QA: 50 s or 300 s of wall). */
static void estimate_each_shards_cold_call_is_one_time(void **state)
{
    (void)state;
    oq_estimate_opts o = {.events = 1000000, .workers = 50, .repeat = -1, .warmup = -1};
    oq_err err = {0};
    est_summary *e = calloc(1, sizeof *e);
    oq_estimate a, b, both;
    const int first0 = 0, first1 = 4, firsts[2] = {0, 4}; /* 8 batches over 2 shards: 0..3, 4..7 */
    est_build(e, OQ_SHARD_BY_BATCH, &first0, 1, 0.5, 0);
    assert_int_equal(oq_validate_estimate(&e->s, &o, &a, &err), OQ_OK);
    est_build(e, OQ_SHARD_BY_BATCH, &first1, 1, 0.5, 0);
    assert_int_equal(oq_validate_estimate(&e->s, &o, &b, &err), OQ_OK);
    est_build(e, OQ_SHARD_BY_BATCH, firsts, 2, 0.5, 0);
    assert_int_equal(oq_validate_estimate(&e->s, &o, &both, &err), OQ_OK);
    double per_event = (0.010 + 4 * 0.002) / 4;
    for (size_t k = 0; k < EST_CONFIGS; k++) {
        /* one cold call over two tasks: 0.25 s each; one in each shard: 0.5 s each */
        assert_float_equal(a.configs[k].fixed_s, 1.25, 1e-9);
        assert_float_equal(b.configs[k].fixed_s, 1.25, 1e-9);
        assert_float_equal(both.configs[k].fixed_s, 1.5, 1e-9);
        assert_float_equal(a.configs[k].per_event_s, per_event, 1e-12);
        assert_float_equal(b.configs[k].per_event_s, per_event, 1e-12);
        assert_float_equal(both.configs[k].per_event_s, per_event, 1e-12);
    }
    assert_float_equal(a.wall_s, b.wall_s, 1e-9);
    oq_estimate_clear(&a);
    oq_estimate_clear(&b);
    oq_estimate_clear(&both);
    /* a batch past a shard's first is no cold call: it is the plan's, per event */
    const int later = 5;
    est_build(e, OQ_SHARD_BY_BATCH, &later, 1, 0.5, 0);
    assert_int_equal(oq_validate_estimate(&e->s, &o, &a, &err), OQ_OK);
    assert_float_equal(a.configs[1].fixed_s, 1.0, 1e-9);
    assert_float_equal(a.configs[1].per_event_s, per_event + 0.5 / 32, 1e-12);
    oq_estimate_clear(&a);
    /* split by configuration, every shard ran the reference's batches (the records are the first
     * shard's): its cold call and its calls count once per shard, and its I/O, a sum over the
     * shards, once (it was taken k times, the fixed part 0.1 s short) */
    est_build(e, OQ_SHARD_BY_CONFIG, &first0, 1, 0.5, 0.1);
    assert_int_equal(oq_validate_estimate(&e->s, &o, &a, &err), OQ_OK);
    assert_float_equal(a.configs[0].fixed_s, 1.5, 1e-9);
    assert_float_equal(a.configs[0].per_event_s, per_event + 0.1 / 32, 1e-12);
    assert_float_equal(a.configs[1].fixed_s, 1.5, 1e-9);
    oq_estimate_clear(&a);
    free(e);
}

/* QA hostile4 #5: " cpu:model:fp32" was a plugin EP named " cpu" (skipped; the run passed). */
static void config_whitespace_refused(void **state)
{
    (void)state;
    oq_config c;
    oq_err e = OQ_ERR_INIT;
    const char *bad[] = {" cpu:model:fp32", "cpu:model:fp32 ", "cpu :model:fp32", "cpu:model:fp32@a\tb"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(oq_config_parse(bad[i], &c, &e), OQ_ERR_INVALID_ARG);
        assert_non_null(strstr(e.msg, "whitespace in a configuration's name"));
    }
    assert_int_equal(oq_config_parse("cpu:model:fp32@a", &c, &e), OQ_OK);
}

/* Which ONNX Runtime build each configuration ran on (QA round 8b, D1): told by the first
 * configuration of the same library content, or the same path where one has no hash; none for
 * a configuration that loaded no ORT, an index out of range or no summary. */
static void ort_builds_told_apart(void **state)
{
    (void)state;
    oq_config_result c[5];
    memset(c, 0, sizeof c);
    char *v29 = "1.29.0", *v30 = "1.30.0", *lib = "/ort/libonnxruntime.so", *lib30 = "/ort30/libonnxruntime.so.1";
    c[1].ort_version = c[3].ort_version = c[4].ort_version = v29, c[2].ort_version = v30;
    c[1].ort_library = c[3].ort_library = c[4].ort_library = lib, c[2].ort_library = lib30;
    memset(c[1].ort_library_sha256, 'a', 64), memset(c[2].ort_library_sha256, 'b', 64);
    memset(c[3].ort_library_sha256, 'a', 64); /* c[4]: unhashed, the same path as c[1] */
    oq_validate_summary s = {.configs = c, .n_configs = 5};
    assert_null(oq_validate_ort_build_of(&s, 0));
    assert_ptr_equal(oq_validate_ort_build_of(&s, 1), &c[1]);
    assert_ptr_equal(oq_validate_ort_build_of(&s, 2), &c[2]);
    assert_ptr_equal(oq_validate_ort_build_of(&s, 3), &c[1]);
    assert_ptr_equal(oq_validate_ort_build_of(&s, 4), &c[1]);
    memset(c[3].ort_library_sha256, 'c', 64); /* the same path and version, other bytes: another build */
    assert_ptr_equal(oq_validate_ort_build_of(&s, 3), &c[3]);
    assert_null(oq_validate_ort_build_of(&s, 5));
    assert_null(oq_validate_ort_build_of(NULL, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ort_builds_told_apart),
        cmocka_unit_test(config_whitespace_refused),
        cmocka_unit_test(plan_round_trip),
        cmocka_unit_test(plan_bad_hex_named),
        cmocka_unit_test(result_round_trip),
        cmocka_unit_test(scratch_files_schema),
        cmocka_unit_test(outputs_over_batches),
        cmocka_unit_test(batch_records_stay_small),
        cmocka_unit_test(reference_has_its_own_status),
        cmocka_unit_test(worker_dispatch_check),
        cmocka_unit_test(advice_knows_bf16_attention), cmocka_unit_test(advice_head_size_from_shapes),
        cmocka_unit_test(any_signature),
        cmocka_unit_test(refusal_by_the_batch_sizes),
        cmocka_unit_test(mask_axes_by_sizes),
        cmocka_unit_test(mask_axes_sizes_tell_nothing),
        cmocka_unit_test(mask_axes_width_past_axis1),
        cmocka_unit_test(mask_axes_by_declaration),
        cmocka_unit_test(seq_axes_checked_against_the_model),
        cmocka_unit_test(worker_refuses_ambiguous_axes),
        cmocka_unit_test(finite_inputs),
        cmocka_unit_test(finite_inputs_heads),
        cmocka_unit_test(mask_detection),
        cmocka_unit_test(guessed_mask_says_so),
        cmocka_unit_test(mask_named_but_on_data),
        cmocka_unit_test(unmasked_padded_length),
        cmocka_unit_test(user_batch_read_once),
        cmocka_unit_test(saved_event_ids_match_numbered),
        cmocka_unit_test(saved_outputs_held_twice_agree),
        cmocka_unit_test(matched_infinities_compare_nothing),
        cmocka_unit_test(matched_infinities_in_one_output),
        cmocka_unit_test(user_batch_passthrough_output),
        cmocka_unit_test(causal_mask_is_no_padding),
        cmocka_unit_test(generated_features_width),
        cmocka_unit_test(event_ids_seen_once),
        cmocka_unit_test(summary_round_trip),
        cmocka_unit_test(merge_sums_what_shards_measured),
        cmocka_unit_test(merge_names_each_shards_problem),
        cmocka_unit_test(shard_dir_problem_reads_records),
        cmocka_unit_test(merge_refuses_malformed_plan_outputs),
        cmocka_unit_test(merge_tells_routes_by_fields),
        cmocka_unit_test(failures_without_fields_read_back),
        cmocka_unit_test(refstream_checks_each_frame),
        cmocka_unit_test(refstream_named_file_must_be_the_one_read),
        cmocka_unit_test(refstream_reader_waits_for_writer),
        cmocka_unit_test(worker_sees_the_reference_inputs),
        cmocka_unit_test(worker_runs_the_planned_model),
        cmocka_unit_test(reference_runs_the_planned_weights),
        cmocka_unit_test(worker_sees_external_data_change),
        cmocka_unit_test(self_exe_checked_first),
        cmocka_unit_test(self_comparison_refused),
        cmocka_unit_test(saved_by_a_copy_of_this_ort),
        cmocka_unit_test(saved_by_this_build_id),
        cmocka_unit_test(saved_by_this_session_spelt_otherwise),
        cmocka_unit_test(reference_heads_in_every_form),
        cmocka_unit_test(summary_texts_in_the_callers_terms),
        cmocka_unit_test(estimate_default_shards_capped_at_batches),
        cmocka_unit_test(estimate_fixed_from_measured_calls),
        cmocka_unit_test(estimate_fixed_part_not_per_batch),
        cmocka_unit_test(estimate_refuses_partial_timings),
        cmocka_unit_test(estimate_expected_reference_costs_nothing),
        cmocka_unit_test(estimate_names_what_it_left_out),
        cmocka_unit_test(estimate_each_shards_cold_call_is_one_time),
        cmocka_unit_test(polarity_refused_for_own_models),
        cmocka_unit_test(polarity_with_no_mask),
        cmocka_unit_test(mask_of_any_type_either_polarity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
