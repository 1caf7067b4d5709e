/* The tool's words for the library's (src/cli/cli_terms.c): a library message names the API's
 * fields, and the tool says the options that set them, as it said them before. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

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

/* what the run writes into summary.json through opts.terms, as the tool wrote it */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(validate_refusals),
        cmocka_unit_test(mask_choices),
        cmocka_unit_test(summary_texts),
        cmocka_unit_test(shard_texts),
        cmocka_unit_test(words_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
