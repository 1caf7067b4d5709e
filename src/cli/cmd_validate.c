/* ortqual validate: the main job. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "ortqual/runtime.h"
#include "ortqual/validate.h"

const char cmd_validate_summary[] = "run a model over events and configurations, judge each against a reference";

#define MAX_CONFIGS 64

static void usage(FILE *fp)
{
    fprintf(fp,
"usage: ortqual validate [options]\n"
"\n"
"Runs a model over events in several configurations and judges each against the first\n"
"(the reference) on the valid (unpadded) elements: error metrics, NaN/Inf, exact zeros on\n"
"padding. Every batch passes the mask contract before any model runs. Each configuration runs\n"
"in its own child process, so a crash inside ONNX Runtime becomes a failed configuration.\n"
"With no options: the built-in demo (a seeded encoder, 8 events, CPU configurations, and\n"
"CUDA ones when a CUDA execution provider is available).\n"
"\n"
"model (default: --export encoder):\n"
"  --model M.onnx          a model of yours: inputs features [B,L,F] and mask [B,L]\n"
"  --features NAME, --mask NAME   its input names (default: detected by rank)\n"
"  --export encoder|sdpa   build the models with ortqual, one per representation and precision\n"
"  --width W --layers N --heads H --num-features F --ffn-width W2   encoder shape (32, 2, 4, 8, 64)\n"
"  --weights W.npz         encoder weights (default: random from --weights-seed, 1)\n"
"  --head-dim D --kv-heads K   sdpa shape (with --heads)\n"
"  --static                export static shapes (B and L of the first batch)\n"
"  --elu decomposed|op     encoder ELU from standard ops (default) or the Elu operator (CPU-only on CUDA)\n"
"  --mask-form auto|additive|bool|seqlen   how exported attention excludes padded keys (auto:\n"
"                          additive for decomposed/attention23, nonpad_kv_seqlen for attention24;\n"
"                          bool builds a boolean attn_mask, the form that routes to MATH on CUDA)\n"
"\n"
"events:\n"
"  --inputs FILE...        saved batches (inputs_*.npz: features, mask); repeatable, globs expanded by the shell\n"
"  --num-events N          generated events (8)          --batch-size B      (3)\n"
"  --length-policy P       fixed [L] | balanced [MIN MAX] | uniform MIN MAX | fraction F   (uniform 5 96)\n"
"  --max-len L             (96)      --pad-bin-size K   pad L up to a multiple of K (8)   --seed S (7)\n"
"\n"
"configurations:\n"
"  --configs C1,C2,...     <runtime>:<representation>:<precision>[:<kernel>]; the first is the reference\n"
"                          runtime ref|cpu|cuda|<plugin EP>; representation encoder|sdpa (ref only),\n"
"                          decomposed|attention23|attention24, model; precision fp64 (ref), fp32, fp16,\n"
"                          tf32 (cuda: TensorFloat-32 products allowed; fp32 on cuda sets use_tf32=0);\n"
"                          kernel auto|flash|efficient|cudnn|math (cuda sdpa_kernel)\n"
"  --list-configs          print the configurations possible here and why others are not\n"
"  --require CONFIG        a skip of CONFIG (e.g. no CUDA here) is a failure; repeatable\n"
"  --gpu                   CUDA is required: every cuda configuration (the demo's included) must\n"
"                          run; with no CUDA execution provider and device, exit 3 before anything\n"
"                          runs (what ORTQUAL_GPU=1 make run uses)\n"
"  --repeat N (5)  --warmup N (1)   timed calls per batch after the first call\n"
"  --tolerance SPEC        per-output override, e.g. 'cls:rtol=1e-3,atol=1e-4'; repeatable\n"
"\n"
"output:\n"
"  --outdir DIR            (ortqual-out/<timestamp>)   --force   reuse a directory with a summary\n"
"  --save-outputs          write outputs_<config>_NNN.npz       --json   print summary.json\n"
"  --no-plots              skip plots/ (error distributions, runtime against valid size)\n"
"\n"
"dispatch and placement (CUDA and other GPU execution providers):\n"
"  --expect-kernel NODE=KERNEL   per-node kernel rule (flash|efficient|cudnn|math or ORT's name); repeatable\n"
"  --require-dispatch      an unverified kernel expectation fails instead of skipping\n"
"                          (also ORTQUAL_REQUIRE_DISPATCH=1)\n"
"  --prove-teeth           rerun each passing dispatch check with MATH forced; it must then fail\n"
"  --require-full-gpu      fail when any compute node ran on CPU (shape ops on CPU allowed)\n"
"  --strict-placement      with --require-full-gpu: shape ops and Memcpy on CPU fail too\n"
"  --profile               record ORT's profile: nodes and time per execution provider\n"
"\n"
"scale-out (see also 'ortqual slurm' and 'ortqual merge'):\n");
    oq_cli_shard_help(fp);
    fprintf(fp,
"\n"
"isolation:\n"
"  --timeout S             per configuration (300)      --no-isolate   run in this process (debugging)\n"
"\n"
"runtime:\n");
    oq_cli_runtime_help(fp, 1);
    fprintf(fp,
"\n"
"exit status: 0 all passed, 1 a configuration failed, 2 usage or input error, 3 runtime error.\n"
"example: ortqual validate --configs ref:encoder:fp64,cpu:attention24:fp32 --num-events 16\n");
}

enum {
    OPT_MODEL = 0x200, OPT_FEATURES, OPT_MASK, OPT_EXPORT, OPT_WIDTH, OPT_LAYERS, OPT_HEADS,
    OPT_NFEAT, OPT_FFN, OPT_WEIGHTS, OPT_WSEED, OPT_HEAD_DIM, OPT_KV_HEADS, OPT_STATIC, OPT_INPUTS,
    OPT_NEVENTS, OPT_BATCH, OPT_POLICY, OPT_MAXLEN, OPT_PADBIN, OPT_SEED, OPT_CONFIGS, OPT_LIST,
    OPT_REQUIRE, OPT_REPEAT, OPT_WARMUP, OPT_TOL, OPT_OUTDIR, OPT_FORCE, OPT_SAVE, OPT_JSON,
    OPT_TIMEOUT, OPT_NOISO, OPT_WORKER, OPT_EXPECT, OPT_REQDISP, OPT_TEETH, OPT_FULLGPU,
    OPT_STRICT, OPT_PROFILE, OPT_NOPLOTS, OPT_MASKFORM, OPT_ELU, OPT_GPU
};

static const struct option longopts[] = {
    OQ_CLI_RUNTIME_LONGOPTS, OQ_CLI_SHARD_LONGOPTS,
    {"model", 1, 0, OPT_MODEL}, {"features", 1, 0, OPT_FEATURES}, {"mask", 1, 0, OPT_MASK},
    {"export", 1, 0, OPT_EXPORT}, {"width", 1, 0, OPT_WIDTH}, {"layers", 1, 0, OPT_LAYERS},
    {"heads", 1, 0, OPT_HEADS}, {"num-features", 1, 0, OPT_NFEAT}, {"ffn-width", 1, 0, OPT_FFN},
    {"weights", 1, 0, OPT_WEIGHTS}, {"weights-seed", 1, 0, OPT_WSEED}, {"head-dim", 1, 0, OPT_HEAD_DIM},
    {"kv-heads", 1, 0, OPT_KV_HEADS}, {"static", 0, 0, OPT_STATIC}, {"inputs", 1, 0, OPT_INPUTS},
    {"num-events", 1, 0, OPT_NEVENTS}, {"batch-size", 1, 0, OPT_BATCH},
    {"length-policy", 1, 0, OPT_POLICY}, {"max-len", 1, 0, OPT_MAXLEN},
    {"pad-bin-size", 1, 0, OPT_PADBIN}, {"seed", 1, 0, OPT_SEED}, {"configs", 1, 0, OPT_CONFIGS},
    {"list-configs", 0, 0, OPT_LIST}, {"require", 1, 0, OPT_REQUIRE}, {"repeat", 1, 0, OPT_REPEAT},
    {"warmup", 1, 0, OPT_WARMUP}, {"tolerance", 1, 0, OPT_TOL}, {"outdir", 1, 0, OPT_OUTDIR},
    {"force", 0, 0, OPT_FORCE}, {"save-outputs", 0, 0, OPT_SAVE}, {"json", 0, 0, OPT_JSON},
    {"timeout", 1, 0, OPT_TIMEOUT}, {"no-isolate", 0, 0, OPT_NOISO}, {"worker", 1, 0, OPT_WORKER},
    {"expect-kernel", 1, 0, OPT_EXPECT}, {"require-dispatch", 0, 0, OPT_REQDISP},
    {"prove-teeth", 0, 0, OPT_TEETH}, {"require-full-gpu", 0, 0, OPT_FULLGPU},
    {"strict-placement", 0, 0, OPT_STRICT}, {"profile", 0, 0, OPT_PROFILE},
    {"no-plots", 0, 0, OPT_NOPLOTS}, {"mask-form", 1, 0, OPT_MASKFORM}, {"elu", 1, 0, OPT_ELU},
    {"gpu", 0, 0, OPT_GPU},
    {"help", 0, 0, 'h'}, {0, 0, 0, 0}};

struct args {
    oq_validate_opts o;
    struct oq_cli_runtime cr;
    struct oq_cli_shard shard;
    oq_config configs[MAX_CONFIGS];
    const char *inputs[1024], *required[MAX_CONFIGS], *expect[256];
    char tolerances[4096];
    const char *configs_text, *policy;
    int list, json, max_len_set, gpu;
    char outdir[512];
};

/* Parses a whole number in [lo, hi]; prints the error and returns -1 when it is not. */
static int parse_configs(struct args *a)
{
    char *copy = strdup(a->configs_text), *save = NULL;
    a->o.n_configs = 0;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        oq_err e = {0};
        if (a->o.n_configs == MAX_CONFIGS || oq_config_parse(t, &a->configs[a->o.n_configs], &e)) {
            fprintf(stderr, "ortqual validate: --configs: %s\n", *e.msg ? e.msg : "too many configurations");
            free(copy);
            return -1;
        }
        a->o.n_configs++;
    }
    free(copy);
    if (!a->o.n_configs) fprintf(stderr, "ortqual validate: --configs: no configuration given\n");
    return a->o.n_configs ? 0 : -1;
}

static int int_opt(struct args *a, int c, const char *arg)
{
    int64_t v;
    char flag[64] = "";
    for (const struct option *o = longopts; o->name; o++)
        if (o->val == c) snprintf(flag, sizeof flag, "--%s", o->name);
    if (oq_cli_parse_int("validate", flag, arg, c == OPT_WSEED || c == OPT_SEED ? 0 : 1, 1LL << 40, &v)) return -1;
    oq_validate_opts *o = &a->o;
    switch (c) {
    case OPT_WIDTH: o->encoder.width = (int32_t)v; break;
    case OPT_LAYERS: o->encoder.layers = (int32_t)v; break;
    case OPT_HEADS: o->encoder.heads = o->sdpa.heads = o->sdpa.kv_heads = (int32_t)v; break;
    case OPT_NFEAT: o->encoder.features = (int32_t)v; o->events.num_features = v; break;
    case OPT_FFN: o->encoder.ffn_width = (int32_t)v; break;
    case OPT_WSEED: o->weights_seed = (uint64_t)v; break;
    case OPT_HEAD_DIM: o->sdpa.head_dim = (int32_t)v; break;
    case OPT_KV_HEADS: o->sdpa.kv_heads = (int32_t)v; break;
    case OPT_NEVENTS: o->events.num_events = v; break;
    case OPT_BATCH: o->events.batch_size = v; break;
    case OPT_MAXLEN: o->events.max_len = v; a->max_len_set = 1; break;
    case OPT_PADBIN: o->events.pad_bin_size = v; break;
    case OPT_SEED: o->events.seed = (uint64_t)v; break;
    case OPT_REPEAT: o->repeat = (int)v; break;
    case OPT_WARMUP: o->warmup = (int)v; break;
    case OPT_TIMEOUT: o->timeout_s = (double)v; break;
    }
    return 0;
}

static int other_opt(struct args *a, int c, const char *arg)
{
    oq_validate_opts *o = &a->o;
    switch (c) {
    case OPT_MODEL: o->kind = OQ_MODEL_USER; o->model_path = arg; return 0;
    case OPT_FEATURES: o->features_name = arg; return 0;
    case OPT_MASK: o->mask_name = arg; return 0;
    case OPT_EXPORT:
        if (strcmp(arg, "encoder") && strcmp(arg, "sdpa")) {
            fprintf(stderr, "ortqual validate: --export: '%s' is not encoder or sdpa\n", arg);
            return -1;
        }
        o->kind = strcmp(arg, "sdpa") ? OQ_MODEL_ENCODER : OQ_MODEL_SDPA;
        return 0;
    case OPT_WEIGHTS: o->weights_path = arg; return 0;
    case OPT_STATIC: o->static_shapes = 1; return 0;
    case OPT_INPUTS:
        if (o->n_input_files == 1024) return -1;
        a->inputs[o->n_input_files++] = arg;
        return 0;
    case OPT_POLICY: a->policy = arg; return 0;
    case OPT_CONFIGS: a->configs_text = arg; return 0;
    case OPT_LIST: a->list = 1; return 0;
    case OPT_REQUIRE:
        if (o->n_required < MAX_CONFIGS) a->required[o->n_required++] = arg;
        return 0;
    case OPT_TOL: {
        size_t used = strlen(a->tolerances);
        snprintf(a->tolerances + used, sizeof a->tolerances - used, "%s%s", used ? ";" : "", arg);
        return 0;
    }
    case OPT_OUTDIR: o->outdir = arg; return 0;
    case OPT_FORCE: o->overwrite = 1; return 0;
    case OPT_SAVE: o->save_outputs = 1; return 0;
    case OPT_JSON: a->json = 1; return 0;
    case OPT_NOISO: o->isolate = 0; return 0;
    case OPT_EXPECT:
        if (o->n_expect_kernel < 256) a->expect[o->n_expect_kernel++] = arg;
        return 0;
    case OPT_REQDISP: o->require_dispatch = 1; return 0;
    case OPT_TEETH: o->prove_teeth = 1; return 0;
    case OPT_FULLGPU: o->require_full_gpu = 1; return 0;
    case OPT_STRICT: o->strict_placement = 1; return 0;
    case OPT_PROFILE: o->profile = 1; return 0;
    case OPT_NOPLOTS: o->plots = 0; return 0;
    case OPT_GPU: a->gpu = 1; return 0;
    case OPT_ELU:
        if (strcmp(arg, "op") && strcmp(arg, "decomposed")) {
            fprintf(stderr, "ortqual validate: --elu: '%s' is not decomposed or op\n", arg);
            return -1;
        }
        o->elu_op = !strcmp(arg, "op");
        return 0;
    case OPT_MASKFORM: {
        int m = oq_mask_form_parse(arg);
        if (m < 0 || m == OQ_MASK_NONE) {
            fprintf(stderr, "ortqual validate: --mask-form: '%s' is not auto, additive, bool or seqlen\n", arg);
            return -1;
        }
        o->mask_form = (oq_mask_form)m;
        return 0;
    }
    }
    return int_opt(a, c, arg);
}

static void set_defaults(struct args *a)
{
    oq_validate_opts_default(&a->o);
    /* the demo: 8 events of a realistic spread of lengths, in batches of 3 (the last smaller) */
    a->o.encoder.features = 8;
    a->o.events.num_features = 8;
    a->o.events.num_events = 8;
    a->o.events.batch_size = 3;
    a->o.events.max_len = 96;
    a->o.events.pad_bin_size = 8;
    a->o.events.seed = 7;
    a->policy = "uniform 5 96";
}

static int finish_args(struct args *a)
{
    oq_err e = {0};
    if (oq_length_policy_parse(a->policy, &a->o.events, &e)) {
        fprintf(stderr, "ortqual validate: --length-policy: %s\n", e.msg);
        return -1;
    }
    if (a->o.static_shapes && !a->o.n_input_files) {
        /* one fixed shape for every batch: pad all to max-len, and no smaller last batch */
        a->o.events.pad_to_max_len = 1;
        if (a->o.events.num_events % a->o.events.batch_size) {
            fprintf(stderr, "ortqual validate: --static needs --num-events (%lld) to be a multiple of --batch-size (%lld)\n",
                    (long long)a->o.events.num_events, (long long)a->o.events.batch_size);
            return -1;
        }
    }
    a->o.input_files = a->inputs;
    a->o.required = a->required;
    a->o.expect_kernel = a->expect;
    a->o.tolerances = *a->tolerances ? a->tolerances : NULL;
    if (!a->o.outdir) {
        oq_cli_default_outdir(a->outdir, sizeof a->outdir, "");
        a->o.outdir = a->outdir;
    }
    return 0;
}

/* A CUDA EP is usable when its library registers and offers a device. */
static int cuda_available(const struct oq_cli_runtime *cr)
{
    oq_runtime *rt;
    oq_err e = {0};
    if (oq_runtime_load(cr->ort_lib, &rt, &e)) return 0;
    int found = 0;
    if (oq_cli_runtime_register(cr, rt, &e) == OQ_OK && !oq_runtime_registered_ep(rt, "cuda")) {
        char *lib = oq_runtime_default_ep_lib(rt, "cuda");
        if (lib && access(lib, R_OK) == 0) oq_runtime_register_ep(rt, "cuda", lib, &e);
        free(lib);
    }
    oq_ep_device *d = NULL;
    size_t n = 0;
    if (oq_runtime_ep_devices(rt, &d, &n, &e) == OQ_OK)
        for (size_t i = 0; i < n; i++) found |= !strcmp(d[i].ep_name, "CUDAExecutionProvider");
    oq_ep_devices_free(d, n);
    oq_runtime_free(rt);
    return found;
}

static int list_configs(const struct args *a)
{
    oq_config all[16];
    int cuda = cuda_available(&a->cr);
    size_t n = oq_validate_demo_configs(1, all, 16);
    printf("configurations (runtime:representation:precision[:kernel]):\n");
    for (size_t i = 0; i < n; i++) {
        int is_cuda = !strcmp(all[i].runtime, "cuda");
        printf("  %-34s %s\n", all[i].name,
               is_cuda && !cuda ? "not here: no CUDA execution provider with a device (see 'ortqual doctor')"
                                : "possible here");
    }
    printf("representations decomposed|attention23|attention24 take fp32 or fp16; ref takes encoder|sdpa:fp64;\n"
           "--model files run as <runtime>:model:fp32. Kernels apply to cuda only.\n");
    return OQ_EXIT_OK;
}

/* --gpu: a CUDA EP with a device must be here, and every cuda configuration must run.
 * Returns an exit status (OQ_EXIT_OK to go on). */
static int require_cuda(struct args *a)
{
    if (!cuda_available(&a->cr)) {
        fprintf(stderr, "ortqual validate: --gpu: no CUDA execution provider with a device here "
                        "(see 'ortqual doctor'; the EP library comes from --ep-lib cuda=PATH, or beside "
                        "the core library)\n");
        return OQ_EXIT_RUNTIME;
    }
    size_t n_cuda = 0;
    for (size_t i = 0; i < a->o.n_configs; i++) {
        if (strcmp(a->configs[i].runtime, "cuda")) continue;
        n_cuda++;
        if (a->o.n_required < MAX_CONFIGS) a->required[a->o.n_required++] = a->configs[i].name;
    }
    if (!n_cuda) {
        fprintf(stderr, "ortqual validate: --gpu: no cuda configuration among --configs\n");
        return OQ_EXIT_USAGE;
    }
    return OQ_EXIT_OK;
}

static int run_validate(struct args *a, char *self)
{
    if (!a->configs_text) {
        int cuda = cuda_available(&a->cr);
        a->o.n_configs = a->o.kind == OQ_MODEL_USER ? 0 : oq_validate_demo_configs(cuda, a->configs, MAX_CONFIGS);
        if (a->o.kind == OQ_MODEL_SDPA) oq_config_parse("ref:sdpa:fp64", &a->configs[0], NULL);
        if (a->o.kind == OQ_MODEL_USER) {
            fprintf(stderr, "ortqual validate: --model needs --configs (e.g. cpu:model:fp32,cuda:model:fp32)\n");
            return OQ_EXIT_USAGE;
        }
    } else if (parse_configs(a)) {
        return OQ_EXIT_USAGE;
    }
    a->o.configs = a->configs;
    int rc = a->gpu ? require_cuda(a) : OQ_EXIT_OK;
    if (rc) return rc;
    return oq_cli_run_validation("validate", &a->o, &a->cr, self, a->json);
}

int cmd_validate(int argc, char **argv)
{
    static struct args a;
    memset(&a, 0, sizeof a);
    set_defaults(&a);
    a.o.argc = argc;
    a.o.argv = argv;
    const char *worker = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        int r = oq_cli_runtime_opt(&a.cr, c, optarg);
        if (r < 0) return OQ_EXIT_USAGE;
        if (r > 0) continue;
        r = oq_cli_shard_opt("validate", &a.shard, c, optarg);
        if (r < 0) return OQ_EXIT_USAGE;
        if (r > 0) continue;
        if (c == 'h') return usage(stdout), OQ_EXIT_OK;
        if (c == '?') return OQ_EXIT_USAGE; /* getopt named the option */
        if (c == OPT_WORKER) { worker = optarg; continue; }
        if (other_opt(&a, c, optarg)) return OQ_EXIT_USAGE;
    }
    if (optind < argc) {
        fprintf(stderr, "ortqual validate: unexpected argument '%s' (see --help)\n", argv[optind]);
        return OQ_EXIT_USAGE;
    }
    if (worker) {
        oq_err e = {0};
        if (oq_validate_worker(worker, &e) == OQ_OK) return OQ_EXIT_OK;
        fprintf(stderr, "ortqual validate --worker: %s\n", e.msg);
        return OQ_EXIT_RUNTIME;
    }
    if (a.cr.ep) {
        fprintf(stderr, "ortqual validate: --ep: each configuration names its runtime (e.g. --configs "
                        "ref:encoder:fp64,cuda:attention24:fp16)\n");
        return OQ_EXIT_USAGE;
    }
    if (oq_cli_shard_check("validate", &a.shard, a.o.outdir)) return OQ_EXIT_USAGE;
    a.o.shard = a.shard.spec;
    if (finish_args(&a)) return OQ_EXIT_USAGE; /* provider options are checked per configuration */
    char *self = realpath("/proc/self/exe", NULL);
    int rc = a.list ? list_configs(&a) : run_validate(&a, self);
    free(self);
    oq_cli_runtime_free(&a.cr);
    return rc;
}
