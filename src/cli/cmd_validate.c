/* ortqual validate: the main job. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "ortqual/advice.h"
#include "ortqual/inspect.h"
#include "ortqual/npz.h"
#include "ortqual/runtime.h"
#include "ortqual/validate.h"

const char cmd_validate_summary[] = "run a model over events and configurations, judge each against a reference";

static const char head[] =
"usage: ortqual validate [options]\n"
"\n"
"Runs a model over events in several configurations and judges each against the first\n"
"(the reference) on the valid (unpadded) elements: error metrics, NaN/Inf, exact zeros on\n"
"padding. Every batch passes the mask contract before any model runs. Each configuration runs\n"
"in its own child process, so a crash inside ONNX Runtime becomes a failed configuration.\n"
"A model of yours (--model) takes any named inputs, read by name from each --inputs .npz;\n"
"the reference 'expected' is the outputs you saved beside them (e.g. PyTorch's): members of\n"
"the inputs' own .npz named like the model's outputs, or the --expected files.\n"
"PASSED needs a configuration under test that ran and was compared (docs/verdicts.md);\n"
"ONNX Runtime's refusals of a valid model are explained with the node, its inputs and the fix.\n"
"An option the run would not use (--num-events with --inputs, --width with --model, --mask\n"
"with ortqual's models) or two that contradict each other are refused (docs/usage.md).\n"
"With no options: the built-in demo (a seeded encoder, 8 events, CPU configurations, and\n"
"CUDA ones when a CUDA execution provider is available).\n";

static const char foot[] =
"\n"
"exit status: 0 all passed, 1 a configuration failed or nothing under test was compared,\n"
"2 usage or input error, 3 runtime error (ONNX Runtime refused the model, the reference\n"
"could not run, an output cannot be written) with no failure, 130/143/129 interrupted by\n"
"Ctrl-C/SIGTERM/SIGHUP (passed on to the running worker; summary.json says where it stopped;\n"
"one ignored when validate started, as under nohup or a script's `&`, stays ignored; a second\n"
"signal ends validate at once: its workers killed, no summary written).\n"
"\n"
"examples:\n"
"  ortqual validate --configs ref:encoder:fp64,cpu:attention24:fp32 --num-events 16\n"
"  ortqual validate --width 128 --max-len 1024 --length-policy fixed --num-events 4 --batch-size 4 \\\n"
"      --configs ref:encoder:fp64,cpu:attention24:fp32 --threads 2 --warmup 0\n"
"  ortqual validate --length-policy balanced 10 64 --max-len 64 --configs ref:encoder:fp64,cpu:decomposed:fp32\n"
"  ortqual validate --num-events 1000 --configs ref:encoder:fp64,cpu:attention23:fp32   (again: the\n"
"      reference's outputs come from the cache; --no-cache recomputes them)\n"
"  ortqual validate --model m.onnx --inputs out/inputs_*.npz --configs cpu:model:fp32,cuda:model:fp32\n"
"  ortqual validate --model torch.onnx --inputs io.npz          # expected,cpu:model:fp32 (+ cuda)\n"
"  ortqual validate --model torch.onnx --inputs 'inputs_*.npz' --expected 'outputs_*.npz' \\\n"
"      --configs cpu:model:fp32,cuda:model:fp32 --require-full-gpu --tolerance logits:rtol=1e-3\n"
"  ortqual validate --model static.onnx --inputs io.npz --seq-axis y=2   # y [2,4,4,2]: heads = length\n"
"  ortqual validate --outdir runs/ci --junit runs/ci/junit.xml --progress never\n"
"  ortqual validate --num-events 12 --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir m1 \\\n"
"      --prepare-shards 4                    # 4 batches of 3: one per shard; then each shard:\n"
"  ortqual validate --num-events 12 --configs ref:encoder:fp64,cpu:attention24:fp32 --outdir m1 --shard 2/4\n";

enum { DEFAULT_MAX_LEN = 96 };

struct args {
    oq_validate_opts o;
    struct oq_cli_runtime cr;
    struct oq_cli_shard shard;
    oq_config *configs;
    oq_cli_list inputs, required, expect, tolerances, expected;
    oq_cli_list given; /* the options given (oq_cli_command.given) */
    glob_t files, expected_files;
    int globbed, expected_globbed;
    char *tolerance_text;
    struct oq_cli_seq_axes seq_axes;
    const char **required_all; /* --require and, with --gpu, every cuda configuration */
    char policy[256];
    const char *configs_text, *worker;
    const char *cache_trust; /* --cache-trust: self or group (NULL: not given) */
    char default_configs[64]; /* --model's, when --configs is not given */
    int list, gpu, no_cache;
    int cuda; /* a CUDA EP with a device here: -1 not asked yet (the probe loads ORT: asked once) */
    struct oq_cli_run_output out;
    char outdir[512], cache_dir[4096], cache_off[4400];
};

/* ---- options that set more than one field, or check a choice ------------------------ */

static int set_model(const oq_opt *opt, const char *arg)
{
    oq_validate_opts *o = opt->ctx;
    o->kind = OQ_MODEL_USER;
    o->model_path = arg;
    return 0;
}

static int set_export(const oq_opt *opt, const char *arg)
{
    oq_validate_opts *o = opt->ctx;
    if (strcmp(arg, "encoder") && strcmp(arg, "sdpa")) {
        oq_cli_error_in("validate", "--export: '%s' is not encoder or sdpa", arg);
        return -1;
    }
    o->kind = strcmp(arg, "sdpa") ? OQ_MODEL_ENCODER : OQ_MODEL_SDPA;
    return 0;
}

/* --heads sets the encoder's heads and the sdpa model's (kv heads too, until --kv-heads). */
static int set_heads(const oq_opt *opt, const char *arg)
{
    oq_validate_opts *o = opt->ctx;
    int64_t v;
    if (oq_cli_parse_int("validate", "--heads", arg, 1, INT32_MAX, &v)) return -1;
    o->encoder.heads = o->sdpa.heads = o->sdpa.kv_heads = (int32_t)v;
    return 0;
}

/* The model's input features are the generated events' features. */
static int set_features(const oq_opt *opt, const char *arg)
{
    oq_validate_opts *o = opt->ctx;
    int64_t v;
    if (oq_cli_parse_int("validate", "--num-features", arg, 1, INT32_MAX, &v)) return -1;
    o->encoder.features = (int32_t)v;
    o->events.num_features = v;
    return 0;
}

static int set_elu(const oq_opt *opt, const char *arg)
{
    oq_validate_opts *o = opt->ctx;
    if (strcmp(arg, "op") && strcmp(arg, "decomposed")) {
        oq_cli_error_in("validate", "--elu: '%s' is not decomposed or op", arg);
        return -1;
    }
    o->elu_op = !strcmp(arg, "op");
    return 0;
}

static int set_mask_form(const oq_opt *opt, const char *arg)
{
    oq_validate_opts *o = opt->ctx;
    int m = oq_mask_form_parse(arg);
    if (m < 0 || m == OQ_MASK_NONE) {
        oq_cli_error_in("validate", "--mask-form: '%s' is not auto, additive, bool or seqlen", arg);
        return -1;
    }
    o->mask_form = (oq_mask_form)m;
    return 0;
}

/* ---- options this run would ignore ------------------------------------------------- */

/* Options given together that contradict each other. */
static const oq_cli_pair contradictions[] = {
    {"model", "export", "are alternatives: --model runs your file as it is, --export builds ortqual's model; "
                        "give one"},
    OQ_CLI_MASK_PAIR,
    OQ_CLI_MASK_POLARITY_PAIR,
    {"cache-dir", "no-cache", "contradict: --no-cache neither reads nor stores the reference's outputs; give one"},
    {"cache-shared", "no-cache", "contradict: --no-cache uses no cache, shared or not; give one"},
};

/* A run as bits, one of each kind: where its events come from, which model runs, and whether
 * --weights gives the encoder's weights (else they are drawn from --weights-seed). */
enum {
    RUN_GENERATED = 1, RUN_FILES = 2,
    RUN_ENCODER = 4, RUN_SDPA = 8, RUN_USER = 16,
    RUN_SEEDED = 32, RUN_WEIGHTS = 64,
    ANY_EVENTS = RUN_GENERATED | RUN_FILES,
    ANY_MODEL = RUN_ENCODER | RUN_SDPA | RUN_USER,
    ANY_WEIGHTS = RUN_SEEDED | RUN_WEIGHTS
};

/* Options a run has no use for (the part of the run each reaches is not there): a rule refuses
 * its options in every run whose bits are all among its `runs`, saying "--OPT why". */
static const struct unused_rule {
    const char *opts[8];
    unsigned runs;
    const char *why;
} unused_rules[] = {
    {{"num-events", "batch-size", "length-policy", "max-len", "pad-bin-size", "seed"},
     RUN_FILES | ANY_MODEL | ANY_WEIGHTS, "shapes generated events; with --inputs the files give the events"},
    {{"num-features"}, RUN_FILES | RUN_USER | ANY_WEIGHTS,
     "sizes generated events' features; with --inputs the files give the events"},
    {{"static"}, RUN_FILES | RUN_USER | ANY_WEIGHTS,
     "exports ortqual's models with static shapes and pads generated events to one shape; with "
     "--model and --inputs there is neither"},
    {{"width", "layers", "ffn-width", "weights-seed", "elu", "mask-form"}, ANY_EVENTS | RUN_USER | ANY_WEIGHTS,
     "belongs to ortqual's exported models; --model runs your file as it is"},
    {{"heads"}, ANY_EVENTS | RUN_USER | RUN_SEEDED,
     "sets the heads of ortqual's models (with --model, those of --weights for ref:encoder:fp64); "
     "--model runs your file as it is"},
    {{"width", "layers", "ffn-width", "weights-seed", "elu", "num-features", "weights"},
     ANY_EVENTS | RUN_SDPA | ANY_WEIGHTS, "belongs to ortqual's encoder, not to the sdpa model (--export sdpa)"},
    {{"head-dim", "kv-heads"}, ANY_EVENTS | RUN_ENCODER | RUN_USER | ANY_WEIGHTS,
     "shapes ortqual's sdpa model, which runs only with --export sdpa"},
    {{"width", "layers", "ffn-width", "weights-seed", "num-features"}, ANY_EVENTS | RUN_ENCODER | RUN_WEIGHTS,
     "sizes ortqual's encoder or seeds its weights; --weights takes the sizes and the weights from the file"},
    {{"mask", "no-mask", "mask-polarity"}, ANY_EVENTS | RUN_ENCODER | RUN_SDPA | ANY_WEIGHTS,
     "is about the inputs of a --model; ortqual's models' mask is their input 'mask', always checked"},
};

static unsigned run_bits(const struct args *a)
{
    unsigned model = a->o.kind == OQ_MODEL_USER ? RUN_USER : a->o.kind == OQ_MODEL_SDPA ? RUN_SDPA : RUN_ENCODER;
    return (a->inputs.n ? RUN_FILES : RUN_GENERATED) | model | (a->o.weights_path ? RUN_WEIGHTS : RUN_SEEDED);
}

static const struct unused_rule *unused_rule_of(unsigned run, const char *opt)
{
    for (size_t k = 0; k < sizeof unused_rules / sizeof *unused_rules; k++) {
        const struct unused_rule *r = &unused_rules[k];
        for (size_t i = 0; (r->runs & run) == run && r->opts[i]; i++)
            if (!strcmp(r->opts[i], opt)) return r;
    }
    return NULL;
}

/* The first option given that this run would ignore, or two that contradict each other: said,
 * -1. A value equal to the default counts: it was asked for all the same. */
static int refuse_ignored(const struct args *a)
{
    if (oq_cli_refuse_pairs(&a->given, contradictions, sizeof contradictions / sizeof *contradictions)) return -1;
    unsigned run = run_bits(a);
    for (size_t i = 0; i < a->given.n; i++) {
        const struct unused_rule *r = unused_rule_of(run, a->given.v[i]);
        if (!r) continue;
        oq_cli_error_in("validate", "--%s %s", a->given.v[i], r->why);
        return -1;
    }
    return 0;
}

/* With --model, --weights are those of ref:encoder:fp64 (what --model was exported with): a run
 * without it reads them for nothing. Known once the configurations are. */
static int refuse_unread_weights(const struct args *a)
{
    if (a->o.kind != OQ_MODEL_USER || !a->o.weights_path) return 0;
    for (size_t i = 0; i < a->o.n_configs; i++)
        if (a->configs[i].repr == OQ_REPR_ENCODER) return 0;
    oq_cli_error_in("validate", "--weights: with --model only ref:encoder:fp64 reads them, and no "
                    "configuration is ref:encoder:fp64");
    return -1;
}

/* --repeat-reference times the reference: 'expected', the saved outputs, runs nothing to time.
 * Known once the configurations are (--model's default may begin with it). */
static int refuse_untimed_reference(const struct args *a)
{
    if (!a->o.repeat_reference || !a->o.n_configs || !oq_config_is_expected(&a->configs[0])) return 0;
    oq_cli_error_in("validate", "--repeat-reference times the reference, and the reference 'expected' (the "
                    "saved outputs) runs nothing to time");
    return -1;
}

/* --cache-dir keeps the C reference's outputs (ref:*) as they are computed: a run whose
 * reference is ORT or the saved outputs, or one that times it (every batch runs), would neither
 * read nor store them. Known once the configurations are. */
static int refuse_uncached_reference(const struct args *a)
{
    if (!oq_cli_given(&a->given, "cache-dir") || !a->o.n_configs) return 0;
    const oq_config *ref = &a->configs[0];
    const char *why = a->o.repeat_reference ? "--repeat-reference times the reference, so every batch runs"
                      : oq_config_is_expected(ref) ? "the reference 'expected' is read from the saved outputs"
                      : oq_config_uses_ort(ref) ? "the reference runs on ONNX Runtime"
                                                : NULL;
    if (!why) return 0;
    oq_cli_error_in("validate", "--cache-dir keeps a C reference's outputs (ref:*), and here %s ('%s'): nothing "
                    "would be read from it or stored in it", why, ref->name);
    return -1;
}

/* ---- after the options ------------------------------------------------------------- */

/* Item n (from 1) of --configs into configs[n - 1]: not empty (a stray comma), not one listed
 * before. */
static int parse_config_item(void *ctx, const char *item, size_t n)
{
    struct args *a = ctx;
    oq_err e = {0};
    a->o.n_configs = n;
    if (oq_config_parse(item, &a->configs[n - 1], &e)) {
        oq_cli_error_in("validate", "--configs: %s", e.msg);
        return -1;
    }
    for (size_t i = 0; i + 1 < n; i++)
        if (!strcmp(a->configs[i].name, a->configs[n - 1].name)) {
            oq_cli_error_in("validate", "--configs: '%s' is listed twice (items %zu and %zu)",
                    a->configs[i].name, i + 1, n);
            return -1;
        }
    return 0;
}

/* A configuration that runs what the reference runs: compared with itself it passes, and proves
 * nothing (the library's refusal, in the tool's words). */
static int refuse_self_comparison(struct args *a)
{
    oq_err e = OQ_ERR_INIT;
    a->o.configs = a->configs;
    if (!oq_validate_self_comparison(&a->o, NULL, &e)) return 0;
    oq_cli_error_in("validate", "--configs: %s", e.msg);
    return -1;
}

/* --expected files make `expected` the reference when --configs does not name it. */
static int parse_configs(struct args *a)
{
    size_t cap = 2;
    for (const char *p = a->configs_text; *p; p++) cap += *p == ',';
    a->configs = calloc(cap, sizeof *a->configs);
    if (!a->configs) {
        oq_cli_error_in("validate", "out of memory");
        return -1;
    }
    a->o.n_configs = 0;
    if (!*a->configs_text) {
        oq_cli_error_in("validate", "--configs: no configuration given");
        return -1;
    }
    if (oq_cli_each_item("validate", "--configs", a->configs_text, parse_config_item, a)) {
        a->o.n_configs = 0;
        return -1;
    }
    int named = 0;
    for (size_t i = 0; i < a->o.n_configs; i++) named |= oq_config_is_expected(&a->configs[i]);
    if (a->expected.n && !named && a->o.n_configs) {
        memmove(&a->configs[1], &a->configs[0], a->o.n_configs++ * sizeof *a->configs);
        oq_config_parse("expected", &a->configs[0], NULL);
    }
    return a->o.n_configs ? refuse_self_comparison(a) : -1;
}

/* Why the default cache directory cannot be made, or NULL: it is there (the library checks
 * whose it is), or the nearest folder above it that is there takes new folders. A home that
 * is read-only or not there (a CI container's arbitrary uid, HOME=/nonexistent) turns the
 * default cache off, as no home does; only a --cache-dir the user named is an error. */
static const char *cache_unmakeable(struct args *a)
{
    char up[sizeof a->cache_dir];
    snprintf(up, sizeof up, "%s", a->cache_dir);
    struct stat sb;
    while (stat(up, &sb) != 0) {
        char *slash = strrchr(up, '/');
        if ((errno != ENOENT && errno != ENOTDIR) || !slash || slash == up) return NULL; /* the library's message */
        *slash = 0;
    }
    if (!strcmp(up, a->cache_dir)) return NULL;
    int e = !S_ISDIR(sb.st_mode) ? ENOTDIR : access(up, W_OK | X_OK) != 0 ? errno : 0;
    if (!e) return NULL;
    snprintf(a->cache_off, sizeof a->cache_off, "the default directory %.2000s cannot be made, %.2000s: %s; use --cache-dir",
             a->cache_dir, up, strerror(e));
    return a->cache_off;
}

/* The reference cache: --cache-dir, else the XDG cache directory (an absolute
 * $XDG_CACHE_HOME, else ~/.cache); --no-cache, no home or a home where it cannot be
 * made: none, and why (the run says it). */
static void default_cache_dir(struct args *a)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (a->no_cache) a->o.cache_dir = NULL;
    else if (a->o.cache_dir) return;
    else if (xdg && *xdg == '/') snprintf(a->cache_dir, sizeof a->cache_dir, "%s/ortqual/reference", xdg);
    else if (home && *home == '/') snprintf(a->cache_dir, sizeof a->cache_dir, "%s/.cache/ortqual/reference", home);
    if (!a->no_cache && *a->cache_dir && (a->o.cache_off = cache_unmakeable(a))) a->o.cache_dir = NULL;
    else if (!a->no_cache && *a->cache_dir) a->o.cache_dir = a->cache_dir;
    else if (a->no_cache) a->o.cache_off = "--no-cache";
    else if ((!xdg || !*xdg) && (!home || !*home)) a->o.cache_off = "HOME and XDG_CACHE_HOME unset; use --cache-dir";
    else a->o.cache_off = "neither HOME nor XDG_CACHE_HOME is an absolute path; use --cache-dir";
}

/* --max-len is the longest event: the default policy draws up to it (uniform 5..L), and a
 * policy whose own lengths go above it is refused rather than followed past it. */
static int resolve_lengths(struct args *a)
{
    oq_events_opts *ev = &a->o.events;
    int64_t cap = ev->max_len; /* 0: --max-len not given */
    if (!*a->policy)
        snprintf(a->policy, sizeof a->policy, "uniform %lld %lld", (long long)(cap && cap < 5 ? cap : 5),
                 (long long)(cap ? cap : DEFAULT_MAX_LEN));
    ev->max_len = cap ? cap : DEFAULT_MAX_LEN; /* what 'fixed', 'balanced' and 'fraction' take */
    oq_err e = {0};
    if (oq_length_policy_parse(a->policy, ev, &e)) {
        oq_cli_error_in("validate", "--length-policy: %s", e.msg);
        return -1;
    }
    if (cap && ev->max_len > cap) {
        oq_cli_error_in("validate", "--length-policy '%s': length %lld is above --max-len %lld", a->policy,
                (long long)ev->max_len, (long long)cap);
        return -1;
    }
    return 0;
}

static int finish_args(struct args *a)
{
    if (resolve_lengths(a)) return -1;
    if (a->o.cache_shared && !a->o.cache_dir) { /* never the default: a folder of one's home is no group's */
        oq_cli_error_in("validate", "--cache-shared needs --cache-dir DIR, the group's folder (made once: "
                        "install -d -m 2770 -g GROUP DIR)");
        return -1;
    }
    if (a->cache_trust && strcmp(a->cache_trust, "self") && strcmp(a->cache_trust, "group")) {
        oq_cli_error_in("validate", "--cache-trust '%s': self or group", a->cache_trust);
        return -1;
    }
    if (a->cache_trust && !a->o.cache_shared) { /* a per-user cache holds only one's own entries */
        oq_cli_error_in("validate", "--cache-trust is for a shared cache: give --cache-shared");
        return -1;
    }
    if (a->cache_trust && !strcmp(a->cache_trust, "self")) a->o.cache_shared = OQ_CACHE_TRUST_SELF;
    if (a->o.static_shapes && !a->inputs.n) {
        /* one fixed shape for every batch: pad all to max-len, and no smaller last batch */
        a->o.events.pad_to_max_len = 1;
        if (a->o.events.num_events % a->o.events.batch_size) {
            oq_cli_error_in("validate", "--static needs --num-events (%lld) to be a multiple of --batch-size (%lld)",
                    (long long)a->o.events.num_events, (long long)a->o.events.batch_size);
            return -1;
        }
    }
    if (oq_cli_glob_inputs("validate", &a->inputs, &a->files, &a->globbed) ||
        oq_cli_glob_inputs("validate", &a->expected, &a->expected_files, &a->expected_globbed))
        return -1;
    a->o.input_files = a->globbed ? (const char *const *)a->files.gl_pathv : NULL;
    a->o.n_input_files = a->globbed ? a->files.gl_pathc : 0;
    a->o.expected_files = a->expected_globbed ? (const char *const *)a->expected_files.gl_pathv : NULL;
    a->o.n_expected_files = a->expected_globbed ? a->expected_files.gl_pathc : 0;
    a->o.expect_kernel = a->expect.v;
    a->o.n_expect_kernel = a->expect.n;
    a->o.required = a->required.v;
    a->o.n_required = a->required.n;
    if (!a->o.outdir) {
        oq_cli_default_outdir(a->outdir, sizeof a->outdir, "");
        a->o.outdir = a->outdir;
    }
    if (oq_cli_tolerance_join("validate", &a->tolerances, &a->tolerance_text)) return -1;
    default_cache_dir(a);
    a->o.tolerances = a->tolerance_text;
    a->o.seq_axes = a->seq_axes.v;
    a->o.n_seq_axes = a->seq_axes.n;
    return 0;
}

/* What a configuration needs of the command line, NULL for nothing: the reference's sdpa model
 * is built by --export sdpa, a model of yours comes with --model. */
static const char *config_needs(const oq_config *c)
{
    if (oq_config_is_expected(c)) return "--model FILE and the outputs saved with its --inputs (or --expected)";
    if (c->repr == OQ_REPR_MODEL) return "--model FILE";
    if (c->repr == OQ_REPR_SDPA) return "--export sdpa";
    return NULL;
}

/* "Here" for --list-configs: the ORT named (or found), loaded once, and what it was asked. */
struct here {
    oq_runtime *rt;           /* NULL: not loaded, why in load */
    oq_err load;
    int cuda;
    char fits[OQ_REPR_EXPECTED + 1][OQ_ERR_MSG_MAX]; /* per representation, once asked */
    int asked[OQ_REPR_EXPECTED + 1];
};

/* Why configuration `c` cannot run here, NULL when it can: ORT must load and read the files the
 * configuration exports (asked once per representation), and a cuda one needs the CUDA EP with a
 * device. The reference and saved outputs need no ORT. */
static const char *why_not(struct here *h, const oq_config *c)
{
    static const char no_cuda[] = "no CUDA execution provider with a device (see 'ortqual doctor')";
    if (!strcmp(c->runtime, "ref") || c->repr == OQ_REPR_EXPECTED) return NULL;
    if (!h->rt) return h->load.msg;
    if (!strcmp(c->runtime, "cuda") && !h->cuda) return no_cuda;
    if (!h->asked[c->repr]) {
        oq_err e = {0};
        h->asked[c->repr] = 1;
        if (oq_validate_config_fits(h->rt, c, &e) != OQ_OK) snprintf(h->fits[c->repr], OQ_ERR_MSG_MAX, "%s", e.msg);
    }
    return h->fits[c->repr][0] ? h->fits[c->repr] : NULL;
}

static json_t *list_json(struct here *h, const oq_config *defaults, size_t nd)
{
    json_t *arr = json_array(), *kernels = json_array(), *def = json_array(), *def_not = json_array();
    oq_config c;
    for (size_t i = 0; oq_config_known(i, &c); i++) {
        const char *no = why_not(h, &c);
        json_t *needs = json_array();
        if (!strcmp(c.runtime, "cuda"))
            json_array_append_new(needs, json_string("a CUDA execution provider with a device"));
        if (config_needs(&c)) json_array_append_new(needs, json_string(config_needs(&c)));
        json_array_append_new(arr, json_pack("{s:s,s:b,s:s?,s:o}", "name", c.name, "possible", !no, "why_not", no,
                                             "needs", needs));
    }
    for (int k = OQ_KERNEL_AUTO; k <= OQ_KERNEL_MATH; k++) json_array_append_new(kernels, json_string(oq_kernel_name(k)));
    for (size_t i = 0; i < nd; i++) {
        json_array_append_new(def, json_string(defaults[i].name));
        if (why_not(h, &defaults[i])) json_array_append_new(def_not, json_string(defaults[i].name));
    }
    json_t *ort = h->rt ? json_pack("{s:s,s:i,s:s}", "version", oq_runtime_version(h->rt), "api_version",
                                    oq_runtime_api_version(h->rt), "library", oq_runtime_lib_path(h->rt))
                        : json_null();
    return json_pack("{s:s,s:o,s:s?,s:o,s:o,s:o,s:o}", "schema", OQ_CLI_CONFIGS_SCHEMA, "ort", ort, "ort_error", h->rt ? NULL : h->load.msg, "configs",
                     arr, "kernels", kernels, "default", def, "default_not_here", def_not);
}

static void list_text(struct here *h, const oq_config *defaults, size_t nd)
{
    if (h->rt) printf("ONNX Runtime %s (C API %d) %s\n", oq_runtime_version(h->rt), oq_runtime_api_version(h->rt),
                      oq_runtime_lib_path(h->rt));
    else printf("ONNX Runtime: not loaded (%s)\n", h->load.msg);
    printf("configurations (runtime:representation:precision[:kernel]):\n");
    oq_config c;
    for (size_t i = 0; oq_config_known(i, &c); i++) {
        const char *no = why_not(h, &c), *needs = config_needs(&c);
        printf("  %-34s %s%s%s%s\n", c.name, no ? "not here: " : "possible here", no ? no : "",
               needs ? (no ? "; needs " : " with ") : "", needs ? needs : "");
    }
    printf("kernels (cuda only, a fourth field, e.g. cuda:attention24:fp16:flash):");
    for (int k = OQ_KERNEL_AUTO; k <= OQ_KERNEL_MATH; k++) printf(" %s", oq_kernel_name(k));
    printf("\ndefault run here:");
    for (size_t i = 0; i < nd; i++) printf("%s %s", i ? "," : "", defaults[i].name);
    printf(" (with --export sdpa the reference is ref:sdpa:fp64)\n");
    int n_not = 0;
    for (size_t i = 0; i < nd; i++)
        if (why_not(h, &defaults[i]))
            printf("%s %s", n_not++ ? "," : "of which cannot run here (see above):", defaults[i].name);
    if (n_not) printf("\n");
}

/* Every configuration the parser takes (oq_config_known), whether it runs on the ORT named here
 * and what it needs, the kernels of cuda ones and the default run's. */
static int list_configs(const struct args *a)
{
    static struct here h; /* its per-representation messages are large */
    oq_config defaults[16];
    oq_err e = {0};
    if (oq_runtime_load(a->cr.ort_lib, &h.rt, &h.load)) h.rt = NULL;
    h.cuda = h.rt && oq_cli_runtime_register(&a->cr, h.rt, &e) == OQ_OK && oq_cli_cuda_on(&a->cr, h.rt);
    size_t nd = oq_validate_demo_configs(h.cuda, defaults, 16);
    int rc = OQ_EXIT_OK;
    if (a->out.json) { /* --json asks for JSON on stdout: the list, not its text (it printed text) */
        json_t *root = list_json(&h, defaults, nd);
        char *text = root ? json_dumps(root, JSON_INDENT(2)) : NULL;
        if (text) printf("%s\n", text);
        else rc = OQ_EXIT_RUNTIME;
        free(text);
        json_decref(root);
    } else {
        list_text(&h, defaults, nd);
    }
    oq_runtime_free(h.rt);
    return rc;
}

static int cuda_here(struct args *a)
{
    if (a->cuda < 0) a->cuda = oq_cli_cuda_available(&a->cr);
    return a->cuda;
}

/* --gpu: a CUDA EP with a device must be here, and every cuda configuration must run.
 * Returns an exit status (OQ_EXIT_OK to go on). */
static int require_cuda(struct args *a)
{
    if (!cuda_here(a)) {
        oq_cli_error_in("validate", "--gpu: no CUDA execution provider with a device here "
                        "(see 'ortqual doctor'; the EP library comes from --ep-lib cuda=PATH, or beside "
                        "the core library)");
        return OQ_EXIT_RUNTIME;
    }
    a->required_all = calloc(a->required.n + a->o.n_configs + 1, sizeof *a->required_all);
    if (!a->required_all) {
        oq_cli_error_in("validate", "out of memory");
        return OQ_EXIT_RUNTIME;
    }
    size_t n = 0, n_cuda = 0;
    for (size_t i = 0; i < a->required.n; i++) a->required_all[n++] = a->required.v[i];
    for (size_t i = 0; i < a->o.n_configs; i++) {
        if (strcmp(a->o.configs[i].runtime, "cuda")) continue;
        n_cuda++;
        a->required_all[n++] = a->o.configs[i].name;
    }
    if (!n_cuda) {
        oq_cli_error_in("validate", "--gpu: no cuda configuration among --configs");
        return OQ_EXIT_USAGE;
    }
    a->o.required = a->required_all;
    a->o.n_required = n;
    return OQ_EXIT_OK;
}

/* The precision a model of yours computes in (e.g. after `convert --flash`): float16 or
 * bfloat16 chooses the :fp16 or :bf16 configurations by default, and is said before a :fp32 one.
 * 0 when there is none to tell (not a model of yours, or one that cannot be read: the run says
 * why). */
static int model_precision(const struct args *a, oq_model_precision *p)
{
    oq_model_info *mi = NULL;
    memset(p, 0, sizeof *p);
    int read = a->o.kind == OQ_MODEL_USER && !oq_model_inspect_file(a->o.model_path, &mi, NULL);
    if (read) oq_model_precision_of(mi, p);
    oq_model_info_free(mi);
    return read;
}

/* The first member of `z` that is no output or input of the model, nor a member ortqual reads
 * itself (a "features"/"mask" alias, event ids, lengths): most likely an output saved under
 * another name; NULL when there is none. */
static int has_io(const oq_io_info *io, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (io[i].name && !strcmp(io[i].name, name)) return 1;
    return 0;
}

static const char *stray_member(const oq_model_info *mi, const oq_npz *z)
{
    static const char *const own[] = {"event_indices", "lengths", "features", "mask"};
    for (size_t i = 0; i < z->count; i++) {
        const char *name = z->tensors[i]->name;
        int known = !name || has_io(mi->outputs, mi->n_outputs, name) || has_io(mi->inputs, mi->n_inputs, name) ||
                    oq_model_default_input(mi, name);
        for (size_t k = 0; !known && k < sizeof own / sizeof own[0]; k++) known = !strcmp(name, own[k]);
        if (!known) return name;
    }
    return NULL;
}

/* Whether the first --inputs file holds every output of the model (e.g. PyTorch's, saved with
 * the inputs), so that 'expected' can be the reference; -1 (said) when the model or that file
 * cannot be read, which no choice of configurations would mend, and when it holds some of the
 * outputs but not all: then saved outputs were meant, and dropping them for CPU against CUDA
 * would change the reference silently. */
static int inputs_hold_outputs(const struct args *a)
{
    oq_model_info *mi = NULL;
    oq_npz *z = NULL;
    oq_err e = {0};
    if (oq_model_inspect_file(a->o.model_path, &mi, &e) ||
        (a->o.n_input_files && oq_npz_read(a->o.input_files[0], &z, &e))) {
        oq_cli_error_in("validate", "%s", e.msg);
        oq_model_info_free(mi);
        return -1;
    }
    size_t held = 0, missing = SIZE_MAX, have = SIZE_MAX;
    for (size_t i = 0; z && i < mi->n_outputs; i++) {
        if (oq_npz_get(z, mi->outputs[i].name)) {
            held++;
            if (have == SIZE_MAX) have = i;
        } else if (missing == SIZE_MAX) missing = i;
    }
    int all = z && mi->n_outputs && held == mi->n_outputs;
    const char *stray = z && !held ? stray_member(mi, z) : NULL;
    if (stray) { /* saved outputs were meant (the default asked for none): say which name is off */
        char outs[512];
        oq_io_names(mi->outputs, mi->n_outputs, outs, sizeof outs);
        oq_cli_error_in("validate", "%s: member '%s' is neither an output nor an input of the model (its outputs: %s): "
                        "an output saved under another name is never compared; rename it, or choose --configs",
                        oq_cli_shown(a->o.input_files[0]), oq_cli_shown(stray), oq_cli_shown(outs));
    } else if (held && !all)
        oq_cli_error_in("validate", "%s holds the model's output '%s' but not '%s' (%zu of %zu outputs): "
                        "save every output with the inputs, or pass them as --expected, or choose --configs",
                oq_cli_shown(a->o.input_files[0]), oq_cli_shown(mi->outputs[have].name),
                oq_cli_shown(mi->outputs[missing].name), held, mi->n_outputs);
    oq_npz_free(z);
    oq_model_info_free(mi);
    return stray || (held && !all) ? -1 : all;
}

/* DIR/inputs_X.npz with DIR/outputs_X.npz beside it (the fixtures' and PyTorch scripts' layout):
 * the option that reads those outputs, for the message that asks for --configs. */
static void outputs_beside_hint(const struct args *a, char *hint, size_t n)
{
    hint[0] = 0;
    if (!a->o.n_input_files) return;
    const char *path = a->o.input_files[0], *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    char sib[4096], pattern[4096];
    if (strncmp(base, "inputs_", 7) ||
        snprintf(sib, sizeof sib, "%.*soutputs_%s", (int)(base - path), path, base + 7) >= (int)sizeof sib ||
        access(sib, F_OK))
        return;
    snprintf(pattern, sizeof pattern, "%.*soutputs_*.npz", (int)(base - path), path);
    snprintf(hint, n, "; %s is beside %s: pass --expected '%s' to judge against it", oq_cli_shown(sib),
             oq_cli_shown(path), oq_cli_shown(pattern));
}

/* --model without --configs: the saved outputs (when there are any) against ORT CPU, and CUDA
 * where it runs; no saved outputs: CPU against CUDA; neither: nothing to compare, so ask. */
static int model_default_configs(struct args *a, const oq_model_precision *p)
{
    if (a->o.shard.count) { /* the shards may run on other hosts than the one that prepares them */
        oq_cli_error_in("validate", "a sharded --model run needs --configs: the default depends on "
                        "the host (e.g. --configs expected,cpu:model:fp32,cuda:model:fp32)");
        return OQ_EXIT_USAGE;
    }
    int expected = a->o.n_expected_files ? 1 : inputs_hold_outputs(a);
    if (expected < 0) return OQ_EXIT_USAGE;
    int cuda = cuda_here(a);
    if (!expected && !cuda) {
        char hint[4200];
        outputs_beside_hint(a, hint, sizeof hint);
        oq_cli_error_in("validate", "--model needs --configs here: no saved outputs to judge against "
                        "(members named like the model's outputs in --inputs, or --expected) and no CUDA "
                        "execution provider; save the model's outputs beside its inputs (e.g. PyTorch's) and "
                        "judge against them: --configs expected,cpu:model:fp32%s", hint);
        return OQ_EXIT_USAGE;
    }
    const char *prec = oq_model_precision_name(p); /* judged at its own rounding */
    snprintf(a->default_configs, sizeof a->default_configs, "%scpu:model:%s%s%s", expected ? "expected," : "",
             prec, cuda ? ",cuda:model:" : "", cuda ? prec : "");
    snprintf(a->out.note, sizeof a->out.note, "ortqual validate: --configs %s (--model's default here%s%s)\n",
             a->default_configs, p->dtype ? ": " : "", oq_cli_shown(p->why));
    a->configs_text = a->default_configs;
    return parse_configs(a) ? OQ_EXIT_USAGE : OQ_EXIT_OK;
}

/* The demo's configurations, those of --configs, or --model's default (`p`: the model's
 * precision, from model_precision). */
static int choose_configs(struct args *a, const oq_model_precision *p)
{
    if (a->configs_text) return OQ_EXIT_OK; /* parsed before the model was read */
    if (a->o.kind == OQ_MODEL_USER) return model_default_configs(a, p);
    enum { DEMO_MAX = 16 };
    if (!(a->configs = calloc(DEMO_MAX, sizeof *a->configs))) return OQ_EXIT_RUNTIME;
    a->o.n_configs = oq_validate_demo_configs(cuda_here(a), a->configs, DEMO_MAX);
    if (a->o.kind == OQ_MODEL_SDPA) oq_config_parse("ref:sdpa:fp64", &a->configs[0], NULL);
    return OQ_EXIT_OK;
}

/* Such a model misses float32 tolerances by its own rounding: say so before a :fp32
 * configuration fails on it (once the inputs are accepted, with the other notes); and a float32
 * model judged at :fp16 or :bf16 passes at tolerances 100x looser than its own, though nothing
 * ran in that precision: said too (it was judged so in silence). */
static void note_precision(struct args *a, const oq_model_precision *p)
{
    for (size_t c = 0; c < a->o.n_configs; c++) {
        const oq_config *k = &a->configs[c];
        char instead[160];
        if (k->repr != OQ_REPR_MODEL) continue;
        if (p->dtype && (k->precision == OQ_PREC_FP32 || k->precision == OQ_PREC_TF32))
            oq_cli_note(&a->out, "validate", "tolerance_tighter", "%s: %s; %s is judged with %s tolerances: use "
                        "%s:model:%s for the %s ones", oq_cli_shown(a->o.model_path), oq_cli_shown(p->why), k->name,
                        oq_precision_name(k->precision), k->runtime, oq_model_precision_name(p),
                        oq_elem_type_name(p->dtype));
        if (p->dtype || (k->precision != OQ_PREC_FP16 && k->precision != OQ_PREC_BF16)) continue;
        snprintf(instead, sizeof instead, "use %s:model:fp32", k->runtime);
        oq_cli_note_looser_precision(&a->out, "validate", a->o.model_path, k->name,
                                     oq_precision_name(k->precision), instead);
    }
}

/* Saved outputs in the --inputs files that no 'expected' reference judges: said once. */
static void note_unjudged_outputs(struct args *a)
{
    if (a->o.kind != OQ_MODEL_USER || !a->o.n_input_files || !a->o.n_configs || oq_config_is_expected(&a->configs[0]))
        return;
    oq_cli_note_unjudged_outputs(&a->out, "validate", a->o.model_path, a->o.input_files, a->o.n_input_files,
                                 a->configs[0].name, "put expected first in --configs");
}

static int run_validate(struct args *a, char *self)
{
    /* a mistyped --configs is said before a model of yours (maybe gigabytes) is read */
    if ((a->configs_text && parse_configs(a)) || refuse_unread_weights(a))
        return OQ_EXIT_USAGE;
    oq_model_precision prec;
    int read = model_precision(a, &prec); /* one reading: defaults, precision notes */
    int rc = choose_configs(a, &prec);
    if (rc) return rc;
    if (refuse_untimed_reference(a) || refuse_uncached_reference(a)) return OQ_EXIT_USAGE;
    if (read) note_precision(a, &prec);
    note_unjudged_outputs(a);
    a->o.configs = a->configs;
    rc = a->gpu ? require_cuda(a) : OQ_EXIT_OK;
    if (rc) return rc;
    return oq_cli_run_validation("validate", &a->o, &a->cr, self, &a->out);
}

static void set_defaults(struct args *a)
{
    memset(a, 0, sizeof *a);
    oq_validate_opts_default(&a->o);
    a->shard.cmd = "validate";
    a->cuda = -1;
    /* the demo: 8 events of a realistic spread of lengths, in batches of 3 (the last smaller) */
    a->o.encoder.features = 8;
    a->o.events.num_events = 8;
    a->o.events.batch_size = 3;
    a->o.events.max_len = 0; /* --max-len, else DEFAULT_MAX_LEN (resolve_lengths) */
    a->o.events.pad_bin_size = 8;
    a->o.events.seed = 7;
    *a->policy = 0; /* --length-policy, else uniform 5 up to --max-len */
}

static void args_clear(struct args *a)
{
    oq_cli_list *lists[] = {&a->inputs, &a->required, &a->expect, &a->tolerances, &a->expected, &a->given};
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++) oq_cli_list_clear(lists[i]);
    oq_cli_runtime_clear(&a->cr);
    if (a->globbed) globfree(&a->files);
    if (a->expected_globbed) globfree(&a->expected_files);
    free(a->tolerance_text);
    oq_cli_seq_axes_clear(&a->seq_axes);
    free(a->required_all);
    free(a->configs);
    oq_cli_notes_clear(&a->out);
}

/* validate's options, a group at a time (the help lists them in this order): the model */
#define MODEL_OPTS(o)                                                                                           \
    OQ_OPT_GROUP("model (default: --export encoder):"),                                                         \
    OQ_OPT_CALLBACK("model", "M.onnx", set_model, o,                                                            \
                    "a model of yours: any named inputs of any type (ids, masks, caches,\n"                     \
                    "scalars), each read from the .npz member of its name"),                                    \
    OQ_CLI_MASK_OPT(&o->mask_name),                                                                             \
    OQ_CLI_NO_MASK_OPT(&o->no_mask),                                                                            \
    OQ_CLI_MASK_POLARITY_OPT(&o->mask_polarity),                                                                \
    OQ_OPT_STRING("features", "NAME", &o->features_name,                                                        \
                  "the input generated events' features (or a member 'features') feed\n"                        \
                  "(default: the rank-3 float one)"),                                                           \
    OQ_OPT_CALLBACK("export", "encoder|sdpa", set_export, o,                                                    \
                    "build the models with ortqual, one per representation and precision"),                     \
    OQ_OPT_NUMBER("width", "W", &o->encoder.width, 1, INT32_MAX, "encoder width (32)"),                         \
    OQ_OPT_NUMBER("layers", "N", &o->encoder.layers, 1, INT32_MAX, "encoder blocks (2)"),                       \
    OQ_OPT_CALLBACK("heads", "H", set_heads, o, "attention heads of the encoder or the sdpa model (4)"),        \
    OQ_OPT_CALLBACK("num-features", "F", set_features, o, "features per element (8)"),                          \
    OQ_OPT_NUMBER("ffn-width", "W2", &o->encoder.ffn_width, 1, INT32_MAX, "encoder feed-forward width (64)"),   \
    OQ_OPT_STRING("weights", "W.npz", &o->weights_path, "encoder weights (default: random from --weights-seed)"), \
    OQ_OPT_NUMBER("weights-seed", "S", &o->weights_seed, 0, 1LL << 40, "seed of the random weights (1)"),       \
    OQ_OPT_NUMBER("head-dim", "D", &o->sdpa.head_dim, 1, INT32_MAX, "sdpa head size"),                          \
    OQ_OPT_NUMBER("kv-heads", "K", &o->sdpa.kv_heads, 1, INT32_MAX, "sdpa key/value heads (default: --heads)"), \
    OQ_OPT_FLAG("static", &o->static_shapes, "export static shapes (B and L of the first batch)"),              \
    OQ_OPT_CALLBACK("elu", "decomposed|op", set_elu, o,                                                         \
                    "encoder ELU from standard ops (default) or the Elu operator (CPU-only on CUDA)"),          \
    OQ_OPT_CALLBACK("mask-form", "auto|additive|bool|seqlen", set_mask_form, o,                                 \
                    "how exported attention excludes padded keys (auto:\n"                                      \
                    "additive for decomposed/attention23, nonpad_kv_seqlen for attention24;\n"                  \
                    "bool builds a boolean attn_mask, the form that routes to MATH on CUDA)")

/* the events: saved batches, or how they are generated */
#define EVENT_OPTS(a, o)                                                                                        \
    OQ_OPT_GROUP("events (--inputs, else generated as the options after --expected say):"),                     \
    {OQ_OPTK_LIST, "inputs", 0, "FILE...", "saved batches (.npz, a member per model input): every file after it\n" \
                                           "up to the next option, a quoted glob expanded here; repeatable", &a->inputs, 0, 0, 0, NULL, NULL, \
     OQ_OPT_MANY},                                                                                              \
    {OQ_OPTK_LIST, "expected", 0, "FILE...", "the expected outputs, one .npz per --inputs file in the same order\n" \
                                             "(outputs_NNN.npz beside inputs_NNN.npz); makes 'expected' the reference;\n" \
                                             "outputs an --inputs file holds too must be the same values", &a->expected, 0, 0, 0, NULL, NULL, \
     OQ_OPT_MANY},                                                                                              \
    OQ_OPT_NUMBER("num-events", "N", &o->events.num_events, 1, 1LL << 40, "generated events (8)"),              \
    OQ_OPT_NUMBER("batch-size", "B", &o->events.batch_size, 1, 1LL << 40, "events per batch (3)"),              \
    OQ_OPT_WORDS("length-policy", "P", a->policy,                                                               \
                 "fixed [L] | balanced [MIN MAX] | uniform MIN MAX | fraction F\n"                              \
                 "(uniform 5 L, L = --max-len), e.g. --length-policy balanced 10 64;\n"                         \
                 "fixed and balanced without lengths, and fraction, use --max-len"),                            \
    OQ_OPT_NUMBER("max-len", "L", &o->events.max_len, 1, 1LL << 40,                                             \
                  "longest event (96); a --length-policy length above the L given is\n"                         \
                  "refused (without --max-len, the policy's own lengths go)"),                                  \
    OQ_OPT_NUMBER("pad-bin-size", "K", &o->events.pad_bin_size, 1, 1LL << 40, "pad L up to a multiple of K (8)"), \
    OQ_OPT_NUMBER("seed", "S", &o->events.seed, 0, 1LL << 40, "events seed (7)")

/* what runs, and what makes it pass */
#define CONFIG_OPTS(a, o)                                                                                       \
    OQ_OPT_GROUP("configurations:"),                                                                            \
    OQ_OPT_COMMA_STRING("configs", "C1,C2,...", &a->configs_text,                                               \
                  "<runtime>:<representation>:<precision>[:<kernel>], each once; the first\n"                   \
                  "is the reference (or 'expected': the outputs saved with the inputs,\n"                       \
                  "nothing runs)\n"                                                                             \
                  "runtime ref|cpu|cuda|<plugin EP>; representation encoder|sdpa (ref only),\n"                 \
                  "decomposed|attention23|attention24, model; precision fp64 (ref), fp32, fp16,\n"              \
                  "tf32 (cuda: TensorFloat-32 products allowed; fp32 on cuda sets use_tf32=0),\n"               \
                  "bf16 (model only);\n"                                                                        \
                  "kernel auto|flash|efficient|cudnn|math (cuda sdpa_kernel). Default: the demo's;\n"           \
                  "with --model, expected,cpu:model:fp32 when outputs are saved with the inputs\n"              \
                  "(or --expected), and cuda:model:fp32 where CUDA runs (:fp16 or :bf16 when\n"                 \
                  "its attention or an output computes in float16 or bfloat16: said)"),                         \
    OQ_OPT_FLAG("list-configs", &a->list, "print every configuration, whether it runs here and what it needs"), \
    OQ_OPT_LIST("require", "CONFIG", &a->required, "a skip of CONFIG (e.g. no CUDA here) is a failure; repeatable"), \
    OQ_OPT_FLAG("gpu", &a->gpu,                                                                                 \
                "CUDA is required: every cuda configuration (the demo's included) must\n"                       \
                "run; with no CUDA execution provider and device, exit 3 before anything\n"                     \
                "runs (what ORTQUAL_GPU=1 make run uses)"),                                                     \
    OQ_CLI_REPEAT_OPT(&o->repeat),                                                                              \
    OQ_CLI_WARMUP_OPT(&o->warmup),                                                                              \
    OQ_OPT_FLAG("repeat-reference", &o->repeat_reference,                                                       \
                "time the reference (the first configuration) like the others; by\n"                            \
                "default it runs once per batch: its outputs are what the others need"),                        \
    OQ_OPT_NUMBER("threads", "N", &o->threads, 0, 4096,                                                         \
                  "threads of the float64 reference, and ORT's intra-op threads of\n"                           \
                  "every configuration (0: the reference on every core, ORT's default);\n"                      \
                  "generated events are made on up to 4 of them. ORT takes a\n"                               \
                  "session.intra_op_num_threads entry over it (recorded so)"),                                  \
    OQ_CLI_GRAPH_OPT_OPT(&o->graph_opt, " of every ORT configuration"),                                         \
    OQ_OPT_LIST("tolerance", "SPEC", &a->tolerances,                                                            \
                "per-output override, e.g. 'cls:rtol=1e-3,atol=1e-4' (an output the\n"                          \
                "model does not have is refused); without 'OUTPUT:' the default; repeatable"),                  \
    OQ_CLI_PADDING_OPT(o),                                                                                      \
    OQ_CLI_SEQ_AXIS_OPT(&a->seq_axes),                                                                          \
    OQ_OPT_FLAG("allow-skip", &o->allow_skip, "a run in which nothing under test was compared exits 0")

/* where the run writes and what it prints */
#define OUTPUT_OPTS(a, o)                                                                                       \
    OQ_OPT_GROUP("output:"),                                                                                    \
    OQ_OPT_STRING("outdir", "DIR", &o->outdir,                                                                  \
                  "(ortqual-out/<timestamp>): summary.json, validate.csv, report.html\n"                        \
                  "(open it in a browser), inputs_NNN.npz, the ONNX files and plots/"),                         \
    OQ_OPT_FLAG("force", &o->overwrite, "write into a directory that is not empty (an earlier run's, or other files)"), \
    OQ_OPT_FLAG("save-outputs", &o->save_outputs, "write outputs_NN_<config>_NNN.npz per configuration and batch"), \
    OQ_OPT_FLAG("json", &a->out.json, "print summary.json (with --list-configs: the list)"),                    \
    OQ_OPT_STRING("cache-dir", "DIR", &o->cache_dir,                                                            \
                  "where the C reference's outputs are kept by content and reused\n"                            \
                  "(default $XDG_CACHE_HOME/ortqual/reference, ~/.cache/ortqual/reference);\n"                 \
                  "made private (0700); refused when others can open it and it holds\n"                        \
                  "other files, or when it is world-writable or sticky (/tmp)"),                                \
    OQ_OPT_FLAG("no-cache", &a->no_cache, "compute the reference's outputs, neither read nor store them"),      \
    OQ_OPT_FLAG("cache-shared", &o->cache_shared,                                                               \
                "--cache-dir is a group's shared cache, made once by its admin:\n"                              \
                "install -d -m 2770 -g GROUP DIR. Taken when its group is one of\n"                           \
                "yours, group-writable, not world-writable; entries are stored\n"                             \
                "group-readable, and every member's is verified by content before\n"                          \
                "use (a bad one is recomputed and listed in summary.json)"),                                    \
    OQ_OPT_STRING("cache-trust", "WHOSE", &a->cache_trust,                                                      \
                  "with --cache-shared, whose entries are used: group (default): every\n"                       \
                  "member's, counted by writer (an entry is yours only when you own\n"                          \
                  "both its files), one batch of each other writer recomputed and\n"                            \
                  "compared bit for bit (a differing writer's entries are all\n"                                \
                  "recomputed); self: only your own, the others' recomputed"),                                  \
    OQ_OPT_FLAG("no-overlap", &o->no_overlap,                                                                   \
                "run the reference before the first configuration under test, never\n"                        \
                "beside it. Without it, the reference's worker runs beside that one\n"                         \
                "when the cache has an entry for every batch (it reads and verifies\n"                         \
                "them, and recomputes one found bad) and that configuration leaves a\n"                        \
                "core free (a GPU's EP, or --threads below the cores); never in a\n"                           \
                "shard or without isolation"),                                                                  \
    OQ_OPT_SET("no-plots", &o->plots, 0, "skip plots/ (error distributions, error against |reference|, latency)"), \
    OQ_OPT_STRING("junit", "FILE", &a->out.junit,                                                               \
                  "also write JUnit XML for CI test reports: a test suite per\n"                                \
                  "configuration, a test case per batch (and per dispatch/placement check);\n"                  \
                  "from the run's start until its end, one error case: the run did not\n"                       \
                  "finish (a run killed leaves that, never an earlier run's file)"),                             \
    OQ_OPT_CALLBACK("progress", "WHEN", oq_cli_progress_option, &a->out.progress, OQ_CLI_PROGRESS_HELP)

/* the kernel and placement checks */
#define CHECK_OPTS(a, o)                                                                                        \
    OQ_OPT_GROUP("dispatch and placement (judge configurations under test on CUDA or another GPU\n"             \
             "execution provider; the reference and cpu ones record them as evidence):"),                       \
    OQ_OPT_LIST("expect-kernel", "NODE=KERNEL",  &a->expect,                                                    \
                "per-node kernel rule (flash|efficient|cudnn|math or ORT's name); repeatable"),                 \
    OQ_OPT_FLAG("require-dispatch", &o->require_dispatch,                                                       \
                "an unverified kernel expectation fails instead of skipping\n(also ORTQUAL_REQUIRE_DISPATCH=1)"), \
    OQ_OPT_FLAG("prove-teeth", &o->prove_teeth, "rerun each passing dispatch check with MATH forced; it must then fail"), \
    OQ_OPT_FLAG("require-full-gpu", &o->require_full_gpu,                                                       \
                "fail when any compute node ran on CPU (shape ops on CPU allowed)"),                            \
    OQ_OPT_FLAG("strict-placement", &o->strict_placement, "with --require-full-gpu: shape ops and Memcpy on CPU fail too"), \
    OQ_OPT_FLAG("profile", &o->profile, "record ORT's profile: nodes and time per execution provider")

/* The command line into a: 0 to go on, 1 after --help, -1 after an error (said). */
static int parse(struct args *a, int argc, char **argv)
{
    oq_validate_opts *o = &a->o;
    const oq_opt opts[] = {
        MODEL_OPTS(o),
        EVENT_OPTS(a, o),
        CONFIG_OPTS(a, o),
        OUTPUT_OPTS(a, o),
        CHECK_OPTS(a, o),
        OQ_OPT_GROUP("scale-out (see also 'ortqual slurm' and 'ortqual merge'):"),
        OQ_CLI_SHARD_OPTS(&a->shard),
        OQ_OPT_GROUP("isolation:"),
        OQ_CLI_TIMEOUT_OPT(&o->timeout_s, "per configuration"),
        OQ_OPT_SET("no-isolate", &o->isolate, 0, "run in this process (debugging)"),
        {OQ_OPTK_STRING, "worker", 0, "PLAN", NULL, &a->worker, 0, 0, 0, NULL, NULL, OQ_OPT_HIDDEN},
        OQ_OPT_GROUP("runtime:"),
        OQ_CLI_RUNTIME_OPTS_PER_CONFIG(&a->cr),
        OQ_CLI_SESSION_CONFIG_OPT(&a->cr),
        OQ_OPT_END};
    const oq_cli_command c = {"validate", head, foot, opts, 0, NULL, &a->given};
    return oq_cli_parse(&c, argc, argv, NULL);
}

/* A worker re-executed by the orchestrator (--worker PLAN): one configuration's plan. */
static int run_worker(const char *plan)
{
    oq_err e = {0};
    oq_cli_crash_backtrace();
    if (oq_validate_worker(plan, &e) == OQ_OK) return OQ_EXIT_OK;
    fprintf(stderr, "ortqual validate --worker: %s\n", e.msg);
    return OQ_EXIT_RUNTIME;
}

/* The options checked and turned into the run's (a->o); -1 after a usage error (said). */
static int check_args(struct args *a)
{
    if (a->cr.ep) {
        oq_cli_error_in("validate", "--ep: each configuration names its runtime (e.g. --configs "
                        "ref:encoder:fp64,cuda:attention24:fp16)");
        return -1;
    }
    if (refuse_ignored(a) || oq_cli_check_lib("--ort-lib", a->cr.ort_lib) || oq_cli_check_ep_libs(&a->cr) ||
        oq_cli_shard_check(&a->shard, a->o.outdir))
        return -1;
    a->o.shard = a->shard.spec;
    a->o.mask_polarity_given = oq_cli_given(&a->given, "mask-polarity");
    return finish_args(a) ? -1 : 0; /* provider options are checked per configuration */
}

static int run(struct args *a, int argc, char **argv)
{
    int rc = parse(a, argc, argv);
    if (rc) return rc > 0 ? OQ_EXIT_OK : OQ_EXIT_USAGE;
    if (a->worker) return run_worker(a->worker);
    if (check_args(a)) return OQ_EXIT_USAGE;
    char *self = realpath("/proc/self/exe", NULL);
    rc = a->list ? list_configs(a) : run_validate(a, self);
    free(self);
    return rc;
}

int cmd_validate(int argc, char **argv)
{
    static struct args a;
    set_defaults(&a);
    a.o.argc = argc;
    a.o.argv = argv;
    int rc = run(&a, argc, argv);
    oq_cli_default_outdir_drop(a.outdir); /* made when chosen: gone if left empty */
    args_clear(&a);
    return rc;
}
