/* ortqual replay: saved batches on a provider, judged against ONNX Runtime on CPU. */
#include <getopt.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ortqual/validate.h"

const char cmd_replay_summary[] = "replay saved inputs on a provider (or another ORT build) against ORT CPU";

static void usage(FILE *fp)
{
    fprintf(fp,
"usage: ortqual replay --model M.onnx --inputs 'inputs_*.npz' [--ep cuda|cpu|<plugin>] [options]\n"
"\n"
"Runs saved batches (inputs_NNN.npz from 'ortqual validate', or any .npz with features and mask)\n"
"on an execution provider and on ONNX Runtime CPU, compares the valid outputs, rejects NaN/Inf\n"
"and out-of-tolerance results, times the first and the repeated calls, and summarizes ORT's\n"
"profile (nodes and time per execution provider). With --ort-lib the replay runs on another\n"
"ORT build (e.g. 1.30) while the CPU reference stays on --reference-ort-lib (default: the\n"
"bundled 1.29), so one set of inputs compares two runtime versions.\n"
"\n"
"options:\n"
"  --model M.onnx          the model (inputs features [B,L,F] and mask [B,L])\n"
"  --features NAME, --mask NAME   its input names, also the .npz member names (default: by rank)\n"
"  --inputs PATTERN        .npz files; a quoted glob is expanded here; repeatable\n"
"  --precision fp32|fp16   tolerance preset for the replayed outputs (fp32)\n"
"  --tolerance SPEC        per-output override 'out:rtol=..,atol=..'; repeatable\n"
"  --reference-ort-lib P   ORT library of the CPU reference run (default: the usual search,\n"
"                          $ORTQUAL_ORT_LIB then the bundled copy; not --ort-lib)\n"
"  --repeat N (5) --warmup N (1)   --timeout S (300)\n"
"  --require-full-gpu, --strict-placement, --require-dispatch, --expect-kernel NODE=KERNEL\n"
"  --outdir DIR            (ortqual-out/replay-<timestamp>)  --force  --save-outputs  --json\n");
    oq_cli_shard_help(fp);
    oq_cli_runtime_help(fp, 0);
    fprintf(fp,
"\n"
"exit status: 0 passed, 1 a check failed, 2 usage or input error, 3 runtime error.\n"
"example: ortqual replay --model out/encoder_attention24_fp16.onnx --inputs 'out/inputs_*.npz' \\\n"
"           --ep cuda --ep-lib cuda=/opt/ort/libonnxruntime_providers_cuda.so --precision fp16\n");
}

enum {
    OPT_MODEL = 0x300, OPT_FEATURES, OPT_MASK, OPT_INPUTS, OPT_PREC, OPT_TOL, OPT_REFLIB,
    OPT_REPEAT, OPT_WARMUP, OPT_TIMEOUT, OPT_FULLGPU, OPT_STRICT, OPT_REQDISP, OPT_EXPECT,
    OPT_OUTDIR, OPT_FORCE, OPT_SAVE, OPT_JSON
};

static const struct option longopts[] = {
    OQ_CLI_RUNTIME_LONGOPTS, OQ_CLI_SHARD_LONGOPTS,
    {"model", 1, 0, OPT_MODEL}, {"features", 1, 0, OPT_FEATURES}, {"mask", 1, 0, OPT_MASK},
    {"inputs", 1, 0, OPT_INPUTS}, {"precision", 1, 0, OPT_PREC}, {"tolerance", 1, 0, OPT_TOL},
    {"reference-ort-lib", 1, 0, OPT_REFLIB}, {"repeat", 1, 0, OPT_REPEAT}, {"warmup", 1, 0, OPT_WARMUP},
    {"timeout", 1, 0, OPT_TIMEOUT}, {"require-full-gpu", 0, 0, OPT_FULLGPU},
    {"strict-placement", 0, 0, OPT_STRICT}, {"require-dispatch", 0, 0, OPT_REQDISP},
    {"expect-kernel", 1, 0, OPT_EXPECT}, {"outdir", 1, 0, OPT_OUTDIR}, {"force", 0, 0, OPT_FORCE},
    {"save-outputs", 0, 0, OPT_SAVE}, {"json", 0, 0, OPT_JSON}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};

struct replay_args {
    oq_validate_opts o;
    struct oq_cli_runtime cr;
    struct oq_cli_shard shard;
    glob_t files;
    int globbed, json;
    const char *precision, *expect[256];
    char tolerances[4096], outdir[512];
    oq_config configs[2];
};

static int add_inputs(struct replay_args *a, const char *pattern)
{
    int rc = glob(pattern, (a->globbed ? GLOB_APPEND : 0) | GLOB_NOCHECK, NULL, &a->files);
    a->globbed = 1;
    if (rc) fprintf(stderr, "ortqual replay: --inputs '%s': cannot expand\n", pattern);
    return rc ? -1 : 0;
}

static int number(const char *opt, const char *s, int *out)
{
    int64_t v;
    if (oq_cli_parse_int("replay", opt, s, 0, 1000000, &v)) return -1;
    *out = (int)v;
    return 0;
}

static int take_opt(struct replay_args *a, int c, const char *arg)
{
    oq_validate_opts *o = &a->o;
    int v;
    switch (c) {
    case OPT_MODEL: o->model_path = arg; return 0;
    case OPT_FEATURES: o->features_name = arg; return 0;
    case OPT_MASK: o->mask_name = arg; return 0;
    case OPT_INPUTS: return add_inputs(a, arg);
    case OPT_PREC: a->precision = arg; return 0;
    case OPT_TOL: {
        size_t used = strlen(a->tolerances);
        snprintf(a->tolerances + used, sizeof a->tolerances - used, "%s%s", used ? ";" : "", arg);
        return 0;
    }
    case OPT_REFLIB: o->reference_ort_lib = arg; return 0;
    case OPT_REPEAT: return number("--repeat", arg, &o->repeat);
    case OPT_WARMUP: return number("--warmup", arg, &o->warmup);
    case OPT_TIMEOUT: return number("--timeout", arg, &v) ? -1 : (o->timeout_s = v, 0);
    case OPT_FULLGPU: o->require_full_gpu = 1; return 0;
    case OPT_STRICT: o->strict_placement = 1; return 0;
    case OPT_REQDISP: o->require_dispatch = 1; return 0;
    case OPT_EXPECT:
        if (o->n_expect_kernel < 256) a->expect[o->n_expect_kernel++] = arg;
        return 0;
    case OPT_OUTDIR: o->outdir = arg; return 0;
    case OPT_FORCE: o->overwrite = 1; return 0;
    case OPT_SAVE: o->save_outputs = 1; return 0;
    case OPT_JSON: a->json = 1; return 0;
    }
    return -1;
}

/* configs[0] = ORT CPU as the reference, configs[1] = the replayed provider. */
static int make_configs(struct replay_args *a)
{
    char text[128];
    oq_err e = {0};
    const char *prec = a->precision ? a->precision : "fp32";
    if (oq_config_parse("cpu:model:fp32", &a->configs[0], &e)) return -1;
    snprintf(text, sizeof text, "%s:model:%s", a->cr.ep ? a->cr.ep : "cpu", prec);
    if (oq_config_parse(text, &a->configs[1], &e)) {
        fprintf(stderr, "ortqual replay: %s\n", e.msg);
        return -1;
    }
    a->o.configs = a->configs;
    a->o.n_configs = 2;
    return 0;
}

static int check_args(struct replay_args *a)
{
    if (!a->o.model_path || !a->globbed) {
        fprintf(stderr, "ortqual replay: --model and --inputs are required (see --help)\n");
        return -1;
    }
    a->o.kind = OQ_MODEL_USER;
    a->o.input_files = (const char *const *)a->files.gl_pathv;
    a->o.n_input_files = a->files.gl_pathc;
    a->o.expect_kernel = a->expect;
    a->o.tolerances = *a->tolerances ? a->tolerances : NULL;
    a->o.profile = 1;
    if (!a->o.reference_ort_lib) a->o.reference_ort_lib = "";
    a->o.plots = 0;
    if (!a->o.outdir) {
        oq_cli_default_outdir(a->outdir, sizeof a->outdir, "replay-");
        a->o.outdir = a->outdir;
    }
    return make_configs(a);
}

int cmd_replay(int argc, char **argv)
{
    static struct replay_args a;
    memset(&a, 0, sizeof a);
    oq_validate_opts_default(&a.o);
    a.o.argc = argc;
    a.o.argv = argv;
    int c, rc = OQ_EXIT_USAGE;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        int r = oq_cli_runtime_opt(&a.cr, c, optarg);
        if (r == 0) r = oq_cli_shard_opt("replay", &a.shard, c, optarg);
        if (r < 0) goto out;
        if (r > 0) continue;
        if (c == 'h') {
            usage(stdout);
            rc = OQ_EXIT_OK;
            goto out;
        }
        if (c == '?' || take_opt(&a, c, optarg)) goto out;
    }
    if (optind < argc) {
        fprintf(stderr, "ortqual replay: unexpected argument '%s' (see --help)\n", argv[optind]);
        goto out;
    }
    if (oq_cli_shard_check("replay", &a.shard, a.o.outdir) || check_args(&a) || oq_cli_runtime_check(&a.cr))
        goto out;
    a.o.shard = a.shard.spec;
    char *self = realpath("/proc/self/exe", NULL);
    rc = oq_cli_run_validation("replay", &a.o, &a.cr, self, a.json);
    free(self);
out:
    if (a.globbed) globfree(&a.files);
    oq_cli_runtime_free(&a.cr);
    return rc;
}
