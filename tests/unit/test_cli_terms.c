/* The tool's words for the library's (src/cli/cli_terms.c): a library message names the API's
 * fields, and the tool says the options that set them, as it said them before; the texts the
 * library keeps itself take the tool's words through oq_set_terms, the library's own without it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ortqual/bench.h"
#include "ortqual/gate.h"

typedef struct said {
    const char *library, *tool;
} said;

static void check(const said *cases, size_t n)
{
    char buf[2048];
    for (size_t i = 0; i < n; i++) {
        if (strstr(cases[i].library, "--")) fail_msg("the library's words name an option: %s", cases[i].library);
        const char *got = oq_cli_terms(cases[i].library, buf, sizeof buf);
        if (strcmp(got, cases[i].tool)) fail_msg("'%s'\n  said '%s'\n  not '%s'", cases[i].library, got, cases[i].tool);
    }
}

/* validate's and replay's refusals before anything runs */
static void validate_refusals(void **state)
{
    (void)state;
    static const said cases[] = {
        {"required 'cuda:model:fp32': not a configuration of this run (cpu:model:fp32)",
         "--require 'cuda:model:fp32': not a configuration of this run (cpu:model:fp32)"},
        {"require_full_gpu judges configurations under test on a GPU execution provider",
         "--require-full-gpu judges configurations under test on a GPU execution provider"},
        {"require_dispatch judges configurations under test",
         "--require-dispatch (or ORTQUAL_REQUIRE_DISPATCH=1) judges configurations under test"},
        {"expected_files need the 'expected' configuration first", "--expected files need the 'expected' configuration first"},
        {"the 'expected' configuration compares against saved outputs: it needs model_path and the input_files they "
         "belong to",
         "the 'expected' configuration compares against saved outputs: it needs --model and the --inputs they "
         "belong to"},
        {"config 'ref:encoder:fp32' with model_path needs weights_path (the weights m.onnx was exported with)",
         "config 'ref:encoder:fp32' with --model needs --weights W.npz (the weights m.onnx was exported with)"},
        {"config 'cpu:attention24:fp32': model_path runs m.onnx as it is, never ortqual's attention24 export",
         "config 'cpu:attention24:fp32': --model runs m.onnx as it is, never ortqual's attention24 export"},
        {"config 'cpu:model:fp32': representation 'model' is the file given with model_path (without it: ",
         "config 'cpu:model:fp32': representation 'model' is the file given with --model (without it: "},
        {"m.onnx: no_mask, but the model's ortqual.contract names input 'm'",
         "m.onnx: --no-mask, but the model's ortqual.contract names input 'm'"},
        {"m.onnx: mask_name 'x', but the model's", "m.onnx: --mask 'x', but the model's"},
        {"tolerances: out: rtol=x: not a number", "--tolerance: out: rtol=x: not a number"},
        {"ort_lib: /x.so: cannot be loaded", "--ort-lib: /x.so: cannot be loaded"},
        {"reference_ort_lib: /x.so: cannot be loaded", "--reference-ort-lib: /x.so: cannot be loaded"},
        {"weights_path /o/w.npz is in the output folder /o, which the run writes and clears: choose another output "
         "folder",
         "--weights /o/w.npz is in the output folder /o, which the run writes and clears: give another --outdir"},
        {"input_files /o/i.npz is in the output folder /o", "--inputs /o/i.npz is in the output folder /o"},
        {"expected_files /o/e.npz is in the output folder /o", "--expected /o/e.npz is in the output folder /o"},
        {"model_path /o/m.onnx is in the output folder /o", "--model /o/m.onnx is in the output folder /o"},
        {"input_files: files 1 and 2 have the same content", "--inputs: files 1 and 2 have the same content"},
        {"cache directory /tmp: sticky (01777) ... give a folder of your own (or a group's, shared: cache_shared)",
         "cache directory /tmp: sticky (01777) ... give a folder of your own (or a group's with --cache-shared)"},
        {"worker timed out after 300 s (killed) with 2 of 9 batches done (timeout_s, each configuration's limit, "
         "raises it)",
         "worker timed out after 300 s (killed) with 2 of 9 batches done (--timeout SECONDS, each configuration's "
         "limit, default 300, raises it)"},
        {"'b' runs what the reference 'a' runs (items 1 and 2): model_path runs the file as it is",
         "'b' runs what the reference 'a' runs (items 1 and 2): --model runs the file as it is"},
        {"i.npz: saved by 'cpu:model:fp32' (validate with save_outputs) running this model_path on cpu",
         "i.npz: saved by 'cpu:model:fp32' (validate --save-outputs) running this --model on cpu"},
        {"/o/plots: the earlier run's figures cannot be removed: Permission denied (overwriting replaces every file "
         "of the earlier run: make the folder writable, or choose another output folder)",
         "/o/plots: the earlier run's figures cannot be removed: Permission denied (--force replaces every file of "
         "the earlier run: make the folder writable, or give another --outdir)"},
    };
    check(cases, sizeof cases / sizeof *cases);
}

/* the mask and features, named or detected */
static void mask_choices(void **state)
{
    (void)state;
    static const said cases[] = {
        {"m.onnx: input 'v' is the only rank-2 input: name the [B, L] padding mask (mask_name v) or say there is none "
         "(no_mask)",
         "m.onnx: input 'v' is the only rank-2 input: name the [B, L] padding mask (--mask v) or say there is none "
         "(--no-mask)"},
        {"m.onnx: mask_name 'x': the model has no such input (inputs: a, b)",
         "m.onnx: --mask 'x': the model has no such input (inputs: a, b)"},
        {"m.onnx: mask_input 'x': the model has no such input", "m.onnx: --mask 'x': the model has no such input"},
        {"m.onnx: features_name 'f': the model has no such input", "m.onnx: --features 'f': the model has no such input"},
        {"m.onnx: input 'm' is rank 3; the mask contract is about a [B, L] mask (no_mask: none)",
         "m.onnx: input 'm' is rank 3; the mask contract is about a [B, L] mask (--no-mask: none)"},
        {"i.npz: mask 'm': bad (input 'm' was taken as the [B, L] padding mask because its name contains \"mask\": "
         "mask_name names the mask, no_mask says there is none)",
         "i.npz: mask 'm': bad (input 'm' was taken as the [B, L] padding mask because its name contains \"mask\": "
         "--mask NAME names the mask, --no-mask says there is none)"},
        {"no mask input: every element of every output is valid (mask_name names one)",
         "no mask input: every element of every output is valid (--mask NAME names one)"},
        {"e.npz: no output 'y'; d/outputs_0.npz is beside it: give expected_files 'd/outputs_*.npz'",
         "e.npz: no output 'y'; d/outputs_0.npz is beside it: pass --expected 'd/outputs_*.npz'"},
    };
    check(cases, sizeof cases / sizeof *cases);
}

/* what the run writes into summary.json through oq_set_terms, as the tool wrote it */
static void summary_texts(void **state)
{
    (void)state;
    static const said cases[] = {
        {"require_full_gpu", "--require-full-gpu"},
        {"strict_placement", "--strict-placement"},
        {"expect_kernel", "--expect-kernel"},
        {"prove_teeth", "--prove-teeth"},
        {"require_dispatch", "--require-dispatch"},
        {"prove_teeth: with MATH forced the dispatch check did not fail",
         "--prove-teeth: with MATH forced the dispatch check did not fail"},
        {"repeat_reference: the reference is timed, so every batch runs",
         "--repeat-reference: the reference is timed, so every batch runs"},
        {"add one after it, e.g. configs ", "add one after it, e.g. --configs "},
        {" (if graph_opt OQ_GRAPH_OPT_BASIC runs it, one of ORT's extended graph optimizations is at fault; a session "
         "config entry optimization.disable_specified_optimizers=NAME turns one off alone)",
         " (if --graph-opt-level 1 runs it, one of ORT's extended graph optimizations is at fault; --session-config "
         "optimization.disable_specified_optimizers=NAME turns one off alone)"},
    };
    check(cases, sizeof cases / sizeof *cases);
}

/* shards: prepared, run, merged, estimated */
static void shard_texts(void **state)
{
    (void)state;
    static const said cases[] = {
        {"d/shards/plan.json not found: prepare the shards first (validate or replay with shard.prepare instead of "
         "shard.index, or 'ortqual slurm')",
         "d/shards/plan.json not found: prepare the shards first (validate or replay with --prepare-shards N instead "
         "of --shard, or 'ortqual slurm')"},
        {"d/shards/plan.json exists: these shards were prepared already (overwrite to prepare them again, which "
         "removes their results, or choose another output folder)",
         "d/shards/plan.json exists: these shards were prepared already (use --force to prepare them again, which "
         "removes their results, or another --outdir)"},
        {"e.npz: the prepared plan does not name it by SHA-256 (prepared by an older ortqual): prepare the shards "
         "again (shard.prepare with overwrite)",
         "e.npz: the prepared plan does not name it by SHA-256 (prepared by an older ortqual): prepare the shards "
         "again (--prepare-shards N --force)"},
        {"another build, which the merge refuses; run shard 1 where shard 0 ran, or shard 1 again (overwrite) here",
         "another build, which the merge refuses; run shard 1 where shard 0 ran, or shard 1 again (--force) here"},
        {"d/shards/0 holds both summary.json and error.json: two outcomes of the shard, and no telling which is its "
         "latest; run the shard again (overwrite), or remove the one that is not its latest",
         "d/shards/0 holds both summary.json and error.json: two outcomes of the shard, and no telling which is its "
         "latest; run the shard again (--force), or remove the one that is not its latest"},
        {"prove_teeth: no shard reran with MATH forced", "--prove-teeth: no shard reran with MATH forced"},
        {"the reference 'ref:decomposed:fp32': 2 of 2 batches were not timed (their outputs came from the reference "
         "cache: measure with no cache_dir)",
         "the reference 'ref:decomposed:fp32': 2 of 2 batches were not timed (their outputs came from the reference "
         "cache: measure with --no-cache)"},
        {"opts.shards 9: above the 4 batches of 8 events in batches of 2 (the measured batch size)",
         "--shards 9: above the 4 batches of 8 events in batches of 2 (the measured batch size)"},
    };
    check(cases, sizeof cases / sizeof *cases);
}

/* a field's name inside another name or a path is not the field */
static void words_only(void **state)
{
    (void)state;
    static const said cases[] = {
        {"my_model_path x", "my_model_path x"},
        {"/tmp/prove_teeth.json: bad", "/tmp/prove_teeth.json: bad"},
        {"a.required 'x'", "a.required 'x'"},
        {"n_expect_kernel 2", "n_expect_kernel 2"},
    };
    check(cases, sizeof cases / sizeof *cases);
}

static void assert_says(const char *library, const char *tool)
{
    char buf[2048];
    const char *got = oq_cli_terms(library, buf, sizeof buf);
    if (strcmp(got, tool)) fail_msg("'%s'\n  became '%s'\n  wanted '%s'", library, got, tool);
}

/* Messages as the library words them now, and as the tool printed them before (what the e2e
 * tests grep). */
static void messages(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        /* bench */
        {"opts.int_lo,int_hi 0,300: input 'ids' is int8 (-128..127)", "--int-range 0,300: input 'ids' is int8 (-128..127)"},
        {"opts.int_lo,int_hi 5,1: LO > HI", "--int-range 5,1: LO > HI"},
        {"opts.expected_path compares outputs of the inputs they came from: it needs opts.inputs_path and no "
         "opts.sweeps",
         "--expected compares outputs of the inputs they came from: it needs --inputs and no --sweep"},
        {"opts.tolerances needs opts.expected_path (without it nothing is compared)",
         "--tolerance needs --expected (without it nothing is compared)"},
        {"out of memory for 20 timing samples (opts.iters)", "out of memory for 20 timing samples (--iters)"},
        {"io OQ_IO_DEVICE needs ORT API 23 (ORT 1.23) or newer, this is 22",
         "--io-binding device needs ORT API 23 (ORT 1.23) or newer, this is 22"},
        {"input 'x' [batch,seq], axis 1 ('seq'): no value: give opts.dims seq=V, opts.sweeps seq=V1,V2,... or "
         "opts.input_shapes x=...",
         "input 'x' [batch,seq], axis 1 ('seq'): no value: give --dim seq=V, --sweep seq=V1,V2,... or --shape x=..."},
        {"dimension 'seq' is 4 from opts.input_shapes features but 5 from opts.sweeps",
         "dimension 'seq' is 4 from --shape features but 5 from --sweep"},
        {"opts.dims heads: no model dimension and no opts.input_shapes entry is named 'heads'",
         "--dim heads: no model dimension and no --shape entry is named 'heads'"},
        {"opts.seq_lens 8 (opts.batch_sizes 2): the query [2,8,8,64] float32: its size overflows 2^63 bytes",
         "--seq-lens 8 (--batch-sizes 2): the query [2,8,8,64] float32: its size overflows 2^63 bytes"},
        {"opts.length_policy shapes the padding of masked batches; opts.modes without OQ_BENCH_MASKED makes none, "
         "so it would be ignored",
         "--length-policy shapes the padding of masked batches; --modes unmasked makes none, so it would be ignored"},
        {"opts.mask_fraction shapes the padding", "--mask-fraction shapes the padding"},
        /* advice */
        {"give padding as nonpad_kv_seqlen instead of an attn_mask (the attention24 export's default, mask "
         "OQ_MASK_SEQLEN)",
         "give padding as nonpad_kv_seqlen instead of an attn_mask (the attention24 export's default, --mask-form "
         "seqlen)"},
        {"compute attention in float16 (precision fp16, attention_dtype OQ_DTYPE_FLOAT16)",
         "compute attention in float16 (precision fp16, --attention-dtype float16)"},
        /* conformance */
        {"function body of standard ops: not applicable to the operator reference; runs with opts.runner",
         "function body of standard ops: not applicable to the operator reference; runs with --ep"},
        /* convert */
        {"m.onnx: opset 23 is below the 24 that nonpad_kv_seqlen needs (OQ_CONVERT_MASK_TO_SEQLEN writes it: raise "
         "opts.opset to 24 or leave it 0; at opset 23, OQ_CONVERT_EXPAND_MASK instead)",
         "m.onnx: opset 23 is below the 24 that nonpad_kv_seqlen needs (--mask-to-seqlen writes it: raise --opset "
         "to 24 or leave it out; at opset 23, --expand-mask instead)"},
        {"m.onnx: opset 18 is below the 23 that Attention needs (raise opts.opset or leave it 0)",
         "m.onnx: opset 18 is below the 23 that Attention needs (raise --opset or leave it out)"},
        {"attn_mask 'm' broadcasts over the queries: valid ONNX, refused by ONNX Runtime 1.29-1.31 (inconsistent "
         "q_sequence_length); add OQ_CONVERT_EXPAND_MASK or OQ_CONVERT_MASK_TO_SEQLEN",
         "attn_mask 'm' broadcasts over the queries: valid ONNX, refused by ONNX Runtime 1.29-1.31 (inconsistent "
         "q_sequence_length); add --expand-mask or --mask-to-seqlen"},
        {"(on by default with a float16/bfloat16 attention dtype; keep_head_size turns it off)",
         "(on by default with a float16/bfloat16 attention dtype; --no-pad-head-size turns it off)"},
        {"o.onnx.data is the input's external data file; writing over it would change the weights i.onnx reads: "
         "choose another out_path, or convert in place (out_path i.onnx with overwrite)",
         "o.onnx.data is the input's external data file; writing over it would change the weights i.onnx reads: "
         "choose another -o, or convert in place (-o i.onnx --force)"},
        /* gate */
        {"skipped (no opts.allow_skip given): [1] t.py:1: needs CUDA", "skipped (no --allow-skip given): [1] t.py:1: needs CUDA"},
        {"skip not allowed by opts.allow_skip: [1] t.py:1: needs CUDA", "skip not allowed by --allow-skip: [1] t.py:1: needs CUDA"},
        {"opts.pythonpath /x: not a folder", "--pythonpath /x: not a folder"},
        {"opts.pin_libs /x.so: not a library file", "--pin-lib /x.so: not a library file"},
        /* placement, reports */
        {"allowed: 6 shape op(s) on CPU and 2 Memcpy node(s) (OQ_PLACEMENT_STRICT rejects them)",
         "allowed: 6 shape op(s) on CPU and 2 Memcpy node(s) (--strict-placement rejects them)"},
        {"error against the outputs given in opts.expected_path.</p>", "error against the outputs given with --expected.</p>"},
        {"or CUPTI (<code>opts.cupti</code>).", "or CUPTI (<code>--cupti</code>)."},
        {"(the reference is not zero there either, or opts.padding OQ_PADDING_REPORT).</p>",
         "(the reference is not zero there either, or --padding report).</p>"},
        {"<p>opts.prove_teeth: passed", "<p>--prove-teeth: passed"},
        {"not asked for (opts.require_full_gpu): evidence only", "not asked for (--require-full-gpu): evidence only"},
        {"placement is recorded with opts.require_full_gpu or opts.profile.</p>",
         "placement is recorded with --require-full-gpu or --profile.</p>"},
        {"no test ran (accepted by opts.allow_skip)", "no test ran (accepted by --allow-skip)"},
        {"no test ran (opts.allow_skip accepts that)", "no test ran (--allow-skip accepts that)"},
        /* inside a name or a path: not a field of the API */
        {"input 'my_opts.dims' x.opts.iters /a/opts.cupti", "input 'my_opts.dims' x.opts.iters /a/opts.cupti"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) assert_says(cases[i][0], cases[i][1]);
}

/* The tool's words for the library's messages, set for one test and reset after it by cmocka
 * (teardown runs even when an assertion fails: later tests see the library's own words). */
static int tool_terms(void **state)
{
    (void)state;
    oq_set_terms(oq_cli_terms);
    return 0;
}

static int library_terms(void **state)
{
    (void)state;
    oq_set_terms(NULL);
    return 0;
}

/* The library's own messages, worded as the library makes them (oq_set_terms): the tool's. */
static void library_messages(void **state)
{
    (void)state;
    oq_err err = {0};
    oq_bench_shape s;
    oq_bench_dim d;
    assert_int_equal(oq_bench_shape_parse("x=1,,2", &s, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "--shape 'x=1,,2': item 2 is empty");
    assert_int_equal(oq_bench_shape_parse("x", &s, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "--shape 'x': want NAME=d0,d1,...");
    assert_int_equal(oq_bench_dim_parse_one("seq=4,8", &d, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "dimension 'seq=4,8': one value (a sweep is --sweep)");
    char *argv[] = {"true", NULL};
    const char *bad_env[] = {"NOEQUALS"};
    oq_gate *g = NULL;
    oq_gate_options o = {.argv = argv, .env = bad_env, .n_env = 1};
    assert_int_equal(oq_gate_create(&o, &g, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "--env 'NOEQUALS': expected NAME=VALUE");
    const char *bad_re[] = {"a("};
    o = (oq_gate_options){.argv = argv, .allow_skip = bad_re, .n_allow_skip = 1};
    assert_int_equal(oq_gate_create(&o, &g, &err), OQ_ERR_INVALID_ARG);
    if (strncmp(err.msg, "--allow-skip 'a(': ", 19)) fail_msg("got '%s'", err.msg);
    const char *spec[] = {"flashy"};
    o = (oq_gate_options){.argv = argv, .require_dispatch = spec, .n_require_dispatch = 1};
    assert_int_equal(oq_gate_create(&o, &g, &err), OQ_ERR_INVALID_ARG);
    if (strncmp(err.msg, "--require-dispatch: 'flashy'", 28)) fail_msg("got '%s'", err.msg);
    oq_set_terms(NULL);
    assert_int_equal(oq_bench_shape_parse("x", &s, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "input shape 'x': want NAME=d0,d1,..."); /* no words given: the library's */
}

/* A value in a message (a user's text, a path) that holds an API phrase stays as it is; the
 * message's own words around it are the tool's. Prefixed or not. */
static void values_kept(void **state)
{
    (void)state;
    oq_err err = {0};
    char *argv[] = {"true", NULL};
    const char *bad_env[] = {"x opts.iters (no_mask) mask_polarity y"};
    oq_gate *g = NULL;
    oq_gate_options o = {.argv = argv, .env = bad_env, .n_env = 1};
    assert_int_equal(oq_gate_create(&o, &g, &err), OQ_ERR_INVALID_ARG);
    oq_err_prefix(&err, "%s: opts.iters: ", "/d/opts.iters mask_polarity x");
    assert_string_equal(err.msg, "/d/opts.iters mask_polarity x: --iters: --env 'x opts.iters (no_mask) mask_polarity y': "
                                 "expected NAME=VALUE");
}

/* The first reason of a gate's judgement of `log`. */
static void log_reason(const char *log, char *buf, size_t n)
{
    oq_summary_scanner *s = NULL;
    oq_err err = {0};
    assert_int_equal(oq_summary_scan_text(log, strlen(log), &s, &err), OQ_OK);
    oq_gate_outcome o = {.summary = oq_summary_scanner_last(s)};
    oq_gate_judgement j;
    assert_int_equal(oq_gate_judge(&o, NULL, 0, NULL, &j, &err), OQ_OK);
    assert_true(j.n_reasons > 0);
    snprintf(buf, n, "%s", j.reasons[0]);
    oq_gate_judgement_clear(&j);
    oq_summary_scanner_free(s);
}

/* The first reason of a gate's judgement of a log with a skip no pattern allows. */
static void skip_reason(char *buf, size_t n)
{
    log_reason("SKIPPED [1] t.py:1: needs CUDA\n==== 2 passed, 1 skipped in 0.1s ====\n", buf, n);
}

/* A text the library keeps (a gate's reason, written into its verdict file by the library):
 * the caller's words once it gave them, the library's before and after. */
static void kept_texts(void **state)
{
    (void)state;
    char reason[512];
    skip_reason(reason, sizeof reason);
    assert_string_equal(reason, "skipped (no opts.allow_skip given): [1] t.py:1: needs CUDA");
    oq_set_terms(oq_cli_terms);
    skip_reason(reason, sizeof reason);
    oq_set_terms(NULL);
    assert_string_equal(reason, "skipped (no --allow-skip given): [1] t.py:1: needs CUDA");
    skip_reason(reason, sizeof reason);
    assert_string_equal(reason, "skipped (no opts.allow_skip given): [1] t.py:1: needs CUDA");
}

/* A caller's words that hold '%': text, never a conversion the values would be read for. */
static const char *percent_terms(const char *text, char *buf, size_t n)
{
    const char *at = strstr(text, "opts.allow_skip");
    if (!at) return text;
    snprintf(buf, n, "%.*s%%s %%n 100%%%s", (int)(at - text), text, at + strlen("opts.allow_skip"));
    return buf;
}

/* Only the library's own words are reworded: a log's line that names an API field is quoted as
 * it is, and a caller's words that hold '%' are text. */
static void own_words_only(void **state)
{
    (void)state;
    const char *log = "SKIPPED [1] t.py:1: set (opts.allow_skip) or opts.iters %s\n"
                      "==== 2 passed, 1 skipped in 0.1s ====\n";
    char reason[512];
    oq_set_terms(oq_cli_terms);
    log_reason(log, reason, sizeof reason);
    oq_set_terms(percent_terms);
    char odd[512];
    log_reason(log, odd, sizeof odd);
    oq_set_terms(NULL);
    assert_string_equal(reason, "skipped (no --allow-skip given): [1] t.py:1: set (opts.allow_skip) or opts.iters %s");
    assert_string_equal(odd, "skipped (no %s %n 100% given): [1] t.py:1: set (opts.allow_skip) or opts.iters %s");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(validate_refusals),
        cmocka_unit_test(mask_choices),
        cmocka_unit_test(summary_texts),
        cmocka_unit_test(shard_texts),
        cmocka_unit_test(words_only),
        cmocka_unit_test(messages),
        cmocka_unit_test_setup_teardown(library_messages, tool_terms, library_terms),
        cmocka_unit_test_setup_teardown(values_kept, tool_terms, library_terms),
        cmocka_unit_test(kept_texts),
        cmocka_unit_test(own_words_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
