/* ortqual replay: saved batches on a provider, judged against ONNX Runtime on CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ortqual/inspect.h"
#include "ortqual/validate.h"

const char cmd_replay_summary[] = "replay saved inputs on a provider (or another ORT build) against ORT CPU";

static const char head[] =
"usage: ortqual replay --model M.onnx --inputs 'inputs_*.npz' [--ep cuda|cpu|<plugin>] [options]\n"
"\n"
"Runs saved batches (inputs_NNN.npz from 'ortqual validate', or any .npz holding a member per\n"
"model input, read by name) on an execution provider and judges its outputs against a\n"
"reference: ONNX Runtime on CPU (default), or the outputs you saved (--reference expected:\n"
"members of the inputs' .npz named like the model's outputs, or --expected files). It\n"
"compares the valid outputs, rejects NaN/Inf and out-of-tolerance results, times the first\n"
"and the repeated calls, and summarizes ORT's profile (nodes and time per execution\n"
"provider). Both runs use --ort-lib; --reference-ort-lib runs the CPU reference on another\n"
"ORT build (e.g. 1.29 against 1.30), so one set of inputs compares two runtime versions.\n"
"--ep cpu against ORT CPU of the same build runs one session twice, whatever --precision says\n"
"(on cpu it is only the tolerance): refused, exit 2; give --expected, --reference-ort-lib\n"
"OTHER.so, or --ep cuda or a plugin EP. The same build: the same file, a copy (the same\n"
"bytes), or another file with the same ELF build-id (strip keeps it). Where either file has\n"
"no build-id and the bytes differ, the same version and build info (ORT's GetBuildInfoString)\n"
"may be a patched copy or another build of that commit: not established, so it runs, with a\n"
"note (ort_build_unknown).\n"
"PASSED needs the replayed configuration to have run and been compared (docs/verdicts.md).\n";

static const char foot[] =
"\n"
"exit status: 0 passed, 1 a check failed or nothing was compared (the provider was skipped),\n"
"2 usage or input error, 3 runtime error (ONNX Runtime refused the model, the reference\n"
"could not run, an output cannot be written), 130/143/129 interrupted by Ctrl-C/SIGTERM/SIGHUP\n"
"(one ignored when replay started, as under nohup or a script's `&`, stays ignored).\n"
"\n"
"examples:\n"
"  ortqual replay --model out/encoder_attention24_fp16.onnx --inputs 'out/inputs_*.npz' \\\n"
"      --ep cuda --ep-lib cuda=/opt/ort/libonnxruntime_providers_cuda.so --precision fp16\n"
"  ortqual replay --model torch.onnx --inputs 'inputs_*.npz' --expected 'outputs_*.npz' --ep cpu\n"
"  ortqual replay --model out/encoder_attention24_fp32.onnx --inputs 'out/inputs_*.npz' \\\n"
"      --ort-lib ort-1.30/libonnxruntime.so --reference-ort-lib ort-1.29/libonnxruntime.so\n";

struct replay_args {
    oq_validate_opts o;
    struct oq_cli_runtime cr;
    struct oq_cli_shard shard;
    oq_cli_list patterns, expect, tolerances, expected, required;
    oq_cli_list given; /* the options given (oq_cli_command.given) */
    glob_t files, expected_files;
    int globbed, expected_globbed;
    struct oq_cli_run_output out;
    const char *precision, *reference;
    char *tolerance_text;
    struct oq_cli_seq_axes seq_axes;
    char outdir[512];
    oq_config configs[2];
};

/* ORT's CPU provider judged against ORT's CPU provider of the same build runs one session twice
 * (on cpu --precision and --tolerance change only the tolerance, and the session options are
 * both sessions'): it passes and proves nothing, as validate's cpu:model:fp32,CPU:model:fp32 would.
 * Refused, with what makes it a comparison. */
static int refuse_self_comparison(struct replay_args *a)
{
    oq_self_comparison f;
    char why[sizeof f.lib + 600];
    a->o.ort_lib = a->cr.ort_lib; /* as the run will have it */
    if (!oq_validate_self_comparison(&a->o, &f, NULL)) {
        oq_cli_note_ort_identity(&a->out, "replay", a->o.reference_ort_lib, &f);
        return 0;
    }
    if (f.same == OQ_SAME_ORT_ONE_LIB) snprintf(why, sizeof why, "one ORT library on both sides");
    else
        snprintf(why, sizeof why, "--reference-ort-lib %s is %sthe library the replay loads, %s",
                 oq_cli_shown(a->o.reference_ort_lib),
                 f.same == OQ_SAME_ORT_COPY         ? "a copy of "
                 : f.same == OQ_SAME_ORT_BUILD_ID   ? "the build (the same ELF build-id: a stripped or patched "
                                                      "copy) of "
                                                    : "",
                 oq_cli_shown(f.lib));
    oq_cli_error_in("replay",
            "--ep cpu judged against ORT CPU of the same build compares ORT with itself (%s): it "
            "passes and proves nothing (on cpu --precision and --tolerance change only the tolerance); judge it "
            "against saved outputs (--expected, e.g. PyTorch's), ORT CPU of another build (--reference-ort-lib), or "
            "replay on --ep cuda or a plugin EP", why);
    return -1;
}

/* configs[0] = the reference (ORT CPU, or the saved outputs), configs[1] = the replayed provider. */
static int make_configs(struct replay_args *a)
{
    char text[128];
    oq_err e = {0};
    /* as validate's --model default: a model computing in float16 is judged at its rounding */
    oq_model_precision p = {0}; /* a model that cannot be read: the run says why */
    oq_model_info *mi = NULL;
    int read = !oq_model_inspect_file(a->o.model_path, &mi, NULL);
    if (read) oq_model_precision_of(mi, &p);
    oq_model_info_free(mi);
    const char *own = oq_model_precision_name(&p), *prec = a->precision ? a->precision : own;
    char what[64];
    snprintf(what, sizeof what, "--precision %s", prec);
    if (p.dtype && !a->precision)
        snprintf(a->out.note, sizeof a->out.note, "ortqual replay: --precision %s (the default here, as validate's: %s)\n",
                 own, oq_cli_shown(p.why));
    else if (p.dtype && strcmp(prec, own))
        oq_cli_note(&a->out, "replay", "tolerance_tighter", "%s; --precision %s judges it with %s tolerances: "
                    "--precision %s for the %s ones", oq_cli_shown(p.why), prec, prec, own, oq_elem_type_name(p.dtype));
    else if (read && !p.dtype && (!strcmp(prec, "fp16") || !strcmp(prec, "bf16")))
        oq_cli_note_looser_precision(&a->out, "replay", a->o.model_path, what, prec,
                                     "--precision fp32");
    const char *ref = a->reference ? a->reference : a->expected.n ? "expected" : "cpu";
    if (strcmp(ref, "cpu") && strcmp(ref, "expected")) {
        oq_cli_error_in("replay", "--reference: '%s' is not cpu or expected", ref);
        return -1;
    }
    if (!strcmp(ref, "cpu") && a->expected.n) { /* one reference: the files would be dropped */
        oq_cli_error_in("replay", "--expected and --reference cpu are alternatives: the saved outputs are "
                        "the reference, or ORT on CPU is; give one");
        return -1;
    }
    const char *unused = a->o.reference_ort_lib  ? "--reference-ort-lib"
                         : a->o.repeat_reference ? "--repeat-reference"
                                                 : NULL;
    if (!strcmp(ref, "expected") && unused) { /* it would be ignored: no ORT reference runs */
        oq_cli_error_in("replay", "%s: the reference is the saved outputs (--reference expected), no ORT CPU "
                        "run; leave it out, or judge against ORT CPU", unused);
        return -1;
    }
    if (!strcmp(ref, "cpu") && a->o.n_input_files) /* a batch's own saved outputs are not the reference */
        oq_cli_note_unjudged_outputs(&a->out, "replay", a->o.model_path, a->o.input_files, a->o.n_input_files,
                                     "ORT CPU (--reference cpu)", "--reference expected");
    /* ORT CPU of another build: the same configuration by name, told apart by a label (summary.json,
     * validate.csv and JUnit name each configuration once) */
    const char *ref_config = strcmp(ref, "cpu")           ? "expected"
                             : a->o.reference_ort_lib ? "cpu:model:fp32@reference"
                                                      : "cpu:model:fp32";
    if (oq_config_parse(ref_config, &a->configs[0], &e)) return -1;
    snprintf(text, sizeof text, "%s:model:%s", a->cr.ep ? a->cr.ep : "cpu", prec);
    if (oq_config_parse(text, &a->configs[1], &e)) {
        oq_cli_error_in("replay", "%s", e.msg);
        return -1;
    }
    a->o.configs = a->configs;
    a->o.n_configs = 2;
    return 0;
}

static int check_args(struct replay_args *a)
{
    if (!a->o.model_path || !a->patterns.n) {
        oq_cli_error_in("replay", "--model and --inputs are required (see --help)");
        return -1;
    }
    if (oq_cli_glob_inputs("replay", &a->patterns, &a->files, &a->globbed) ||
        oq_cli_glob_inputs("replay", &a->expected, &a->expected_files, &a->expected_globbed) ||
        oq_cli_tolerance_join("replay", &a->tolerances, &a->tolerance_text))
        return -1;
    a->o.kind = OQ_MODEL_USER;
    a->o.input_files = (const char *const *)a->files.gl_pathv;
    a->o.n_input_files = a->files.gl_pathc;
    a->o.expected_files = a->expected_globbed ? (const char *const *)a->expected_files.gl_pathv : NULL;
    a->o.n_expected_files = a->expected_globbed ? a->expected_files.gl_pathc : 0;
    a->o.required = a->required.v;
    a->o.n_required = a->required.n;
    a->o.expect_kernel = a->expect.v;
    a->o.n_expect_kernel = a->expect.n;
    a->o.tolerances = a->tolerance_text;
    a->o.seq_axes = a->seq_axes.v;
    a->o.n_seq_axes = a->seq_axes.n;
    a->o.profile = 1;
    a->o.plots = 0;
    if (!a->o.outdir) {
        oq_cli_default_outdir(a->outdir, sizeof a->outdir, "replay-");
        a->o.outdir = a->outdir;
    }
    return make_configs(a);
}

static int run(struct replay_args *a, int argc, char **argv)
{
    oq_validate_opts *o = &a->o;
    const oq_opt opts[] = {
        OQ_OPT_GROUP("options:"),
        OQ_OPT_STRING("model", "M.onnx", &o->model_path, "the model: any named inputs, each read from its .npz member"),
        OQ_CLI_MASK_OPT(&o->mask_name),
        OQ_CLI_NO_MASK_OPT(&o->no_mask),
        OQ_CLI_MASK_POLARITY_OPT(&o->mask_polarity),
        OQ_OPT_STRING("features", "NAME", &o->features_name, "the input a member 'features' feeds (default: the rank-3 one)"),
        {OQ_OPTK_LIST, "inputs", 0, "PATTERN...", ".npz files: a quoted glob is expanded here, and every\n"
                                                  "file after it up to the next option is taken; repeatable",
         &a->patterns, 0, 0, 0, NULL, NULL, OQ_OPT_MANY},
        OQ_OPT_STRING("reference", "cpu|expected", &a->reference,
                      "what the replay is judged against: ORT on CPU (default), or the\n"
                      "outputs saved with the inputs (members named like the model's outputs)"),
        {OQ_OPTK_LIST, "expected", 0, "PATTERN...", "the saved outputs, one .npz per --inputs file in the same\n"
                                                    "order (implies --reference expected; --reference cpu with\n"
                                                    "them is refused); outputs an --inputs file holds too must\n"
                                                    "be the same values",
         &a->expected, 0, 0, 0, NULL, NULL, OQ_OPT_MANY},
        OQ_OPT_STRING("precision", "fp32|fp16|bf16|tf32", &a->precision,
                      "tolerance preset for the replayed outputs (default: fp16 or bf16\n"
                      "when the model computes in it, else fp32; tf32: --ep cuda)"),
        OQ_OPT_LIST("tolerance", "SPEC", &a->tolerances,
                    "per-output override 'out:rtol=..,atol=..' (an output the model does\n"
                    "not have is refused); repeatable"),
        OQ_OPT_STRING("reference-ort-lib", "P", &o->reference_ort_lib,
                      "ORT library of the CPU reference run (default: --ort-lib, else the\n"
                      "usual search: $ORTQUAL_ORT_LIB, then the bundled copy)"),
        OQ_CLI_PADDING_OPT(o),
        OQ_CLI_SEQ_AXIS_OPT(&a->seq_axes),
        OQ_CLI_GRAPH_OPT_OPT(&o->graph_opt, " of both sessions"),
        OQ_OPT_LIST("require", "CONFIG", &a->required,
                    "a skip of CONFIG (e.g. cuda:model:fp32 with no CUDA here) is a failure"),
        OQ_OPT_FLAG("allow-skip", &o->allow_skip, "a replay that compared nothing (provider skipped) exits 0"),
        OQ_CLI_REPEAT_OPT(&o->repeat),
        OQ_CLI_WARMUP_OPT(&o->warmup),
        OQ_OPT_FLAG("repeat-reference", &o->repeat_reference,
                    "time the CPU reference run like the replayed one (default: once per batch)"),
        OQ_CLI_TIMEOUT_OPT(&o->timeout_s, "per run"),
        OQ_OPT_FLAG("require-full-gpu", &o->require_full_gpu,
                    "fail when any compute node of the replayed GPU provider ran on CPU\n"
                    "(the CPU reference's placement is evidence, never judged)"),
        OQ_OPT_FLAG("strict-placement", &o->strict_placement, "with --require-full-gpu: shape ops and Memcpy too"),
        OQ_OPT_FLAG("require-dispatch", &o->require_dispatch, "an unverified kernel expectation fails"),
        OQ_OPT_LIST("expect-kernel", "NODE=KERNEL", &a->expect, "per-node kernel rule; repeatable"),
        OQ_OPT_STRING("outdir", "DIR", &o->outdir,
                      "(ortqual-out/replay-<timestamp>): summary.json, validate.csv and\nreport.html"),
        OQ_OPT_FLAG("force", &o->overwrite, "write into a directory that is not empty (an earlier run's, or other files)"),
        OQ_OPT_FLAG("save-outputs", &o->save_outputs, "write outputs_NN_<config>_NNN.npz per configuration and batch"),
        OQ_OPT_FLAG("json", &a->out.json, "print summary.json"),
        OQ_OPT_STRING("junit", "FILE", &a->out.junit,
                      "also write JUnit XML (a test case per configuration x batch; from\n"
                      "the run's start until its end, one error case: the run did not finish)"),
        OQ_OPT_CALLBACK("progress", "WHEN", oq_cli_progress_option, &a->out.progress, OQ_CLI_PROGRESS_HELP),
        OQ_OPT_GROUP("scale-out (see also 'ortqual slurm' and 'ortqual merge'):"),
        OQ_CLI_SHARD_OPTS(&a->shard),
        OQ_OPT_GROUP("runtime:"),
        OQ_CLI_RUNTIME_OPTS(&a->cr),
        OQ_CLI_SESSION_CONFIG_OPT(&a->cr),
        OQ_OPT_END};
    const oq_cli_command c = {"replay", head, foot, opts, 0, NULL, &a->given};
    const oq_cli_pair contradictions[] = {OQ_CLI_MASK_PAIR, OQ_CLI_MASK_POLARITY_PAIR};
    int rc = oq_cli_parse(&c, argc, argv, NULL);
    if (rc) return rc > 0 ? OQ_EXIT_OK : OQ_EXIT_USAGE;
    if (oq_cli_refuse_pairs(&a->given, contradictions, 2) || oq_cli_check_lib("--ort-lib", a->cr.ort_lib) ||
        oq_cli_check_ep_libs(&a->cr) || oq_cli_check_lib("--reference-ort-lib", a->o.reference_ort_lib) ||
        oq_cli_shard_check(&a->shard, a->o.outdir) || check_args(a) || oq_cli_runtime_check(&a->cr) ||
        refuse_self_comparison(a))
        return OQ_EXIT_USAGE;
    a->o.shard = a->shard.spec;
    a->o.mask_polarity_given = oq_cli_given(&a->given, "mask-polarity");
    char *self = realpath("/proc/self/exe", NULL);
    rc = oq_cli_run_validation("replay", &a->o, &a->cr, self, &a->out);
    free(self);
    return rc;
}

int cmd_replay(int argc, char **argv)
{
    static struct replay_args a;
    memset(&a, 0, sizeof a);
    oq_validate_opts_default(&a.o);
    a.shard.cmd = "replay";
    a.o.argc = argc;
    a.o.argv = argv;
    int rc = run(&a, argc, argv);
    oq_cli_default_outdir_drop(a.outdir); /* made when chosen: gone if left empty */
    if (a.globbed) globfree(&a.files);
    if (a.expected_globbed) globfree(&a.expected_files);
    oq_cli_list_clear(&a.patterns);
    oq_cli_list_clear(&a.expected);
    oq_cli_list_clear(&a.required);
    oq_cli_list_clear(&a.expect);
    oq_cli_list_clear(&a.tolerances);
    oq_cli_seq_axes_clear(&a.seq_axes);
    oq_cli_list_clear(&a.given);
    free(a.tolerance_text);
    oq_cli_runtime_clear(&a.cr);
    oq_cli_notes_clear(&a.out);
    return rc;
}
