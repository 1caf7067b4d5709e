/* The orchestrator: prepare everything, run each configuration, gather the summary. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <unistd.h>

#include "ortqual/fileio.h"
#include "ortqual/proc.h"
#include "validate/validate-impl.h"

void oq_validate_opts_default(oq_validate_opts *o)
{
    memset(o, 0, sizeof *o);
    o->kind = OQ_MODEL_ENCODER;
    oq_encoder_config_default(&o->encoder);
    oq_sdpa_config_default(&o->sdpa);
    o->weights_seed = 1;
    o->events = oq_events_opts_default();
    o->repeat = 5;
    o->warmup = 1;
    o->isolate = 1;
    o->timeout_s = 300;
    o->plots = 1;
}

size_t oq_validate_demo_configs(int has_cuda, oq_config *out, size_t cap)
{
    static const char *const cpu[] = {"ref:encoder:fp64", "cpu:decomposed:fp32", "cpu:attention23:fp32",
                                      "cpu:attention24:fp32", "cpu:attention24:fp16"};
    static const char *const cuda[] = {"cuda:decomposed:fp32", "cuda:attention24:fp32", "cuda:attention24:tf32",
                                       "cuda:attention24:fp16:flash", "cuda:attention24:fp16:efficient",
                                       "cuda:attention24:fp16:math"};
    size_t n = 0;
    for (size_t i = 0; i < sizeof cpu / sizeof *cpu && n < cap; i++) oq_config_parse(cpu[i], &out[n++], NULL);
    for (size_t i = 0; has_cuda && i < sizeof cuda / sizeof *cuda && n < cap; i++)
        oq_config_parse(cuda[i], &out[n++], NULL);
    return n;
}

typedef struct run_ctx {
    const oq_validate_opts *o;
    const char *root; /* the output directory asked for (a shard writes into root/shards/I) */
    char workdir[2048];
    json_t *summary, *batches, *configs;
    json_t *plan, *shardplan, *shard; /* the plan's identity; a shard's prepared plan and block */
    oq_encoder_weights *weights;
    char weights_path[4096];
    char features[256], mask[256];
} run_ctx;

static void progress(const oq_validate_opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(const oq_validate_opts *o, const char *fmt, ...)
{
    if (!o->progress) return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    o->progress(o->progress_ctx, line);
}

static oq_status prepare_weights(run_ctx *c, oq_err *err)
{
    const oq_validate_opts *o = c->o;
    oq_status st = o->weights_path
                       ? oq_encoder_weights_load(o->weights_path, o->encoder.heads, &c->weights, err)
                       : oq_encoder_weights_random(&o->encoder, o->weights_seed, &c->weights, err);
    if (st) return st;
    snprintf(c->weights_path, sizeof c->weights_path, "%s/weights.npz", o->outdir);
    return oq_encoder_weights_save(c->weights, c->weights_path, 1, err);
}

static json_t *runtime_json(const oq_validate_opts *o, int is_ref)
{
    /* reference_ort_lib "" means the default search (ORTQUAL_ORT_LIB, then the bundled copy) */
    const char *lib = is_ref && o->reference_ort_lib ? (*o->reference_ort_lib ? o->reference_ort_lib : NULL)
                                                      : o->ort_lib;
    json_t *libs = json_array(), *opts = json_array();
    for (size_t i = 0; i < o->n_ep_libs; i++)
        json_array_append_new(libs, json_pack("[s,s]", o->ep_lib_names[i], o->ep_lib_paths[i]));
    for (size_t i = 0; i < o->n_ep_options; i++)
        json_array_append_new(opts, json_pack("[s,s]", o->ep_option_keys[i], o->ep_option_values[i]));
    json_t *rt = json_pack("{s:o, s:o}", "ep_libs", libs, "ep_options", opts);
    if (lib) json_object_set_new(rt, "ort_lib", json_string(lib));
    return rt;
}

static json_t *plan_batches(run_ctx *c, const char *tag)
{
    json_t *out = json_array();
    char path[4096];
    size_t i;
    json_t *b;
    json_array_foreach(c->batches, i, b) {
        json_t *pb = json_pack("{s:O, s:O}", "index", json_object_get(b, "index"), "inputs",
                               json_object_get(b, "inputs"));
        snprintf(path, sizeof path, "%s/ref_%03zu.npz", c->workdir, i);
        json_object_set_new(pb, "ref", json_string(path));
        if (c->o->save_outputs) {
            snprintf(path, sizeof path, "%s/outputs_%s_%03zu.npz", c->o->outdir, tag, i);
            json_object_set_new(pb, "save", json_string(path));
        }
        json_array_append_new(out, pb);
    }
    return out;
}

static int64_t max_padded_length(const run_ctx *c)
{
    int64_t m = 0;
    size_t i;
    json_t *b;
    json_array_foreach(c->batches, i, b) {
        int64_t l = json_integer_value(json_object_get(b, "padded_length"));
        m = l > m ? l : m;
    }
    return m;
}

/* Routing lines exist on GPU execution providers only; CPU and the reference have none. */
static json_t *dispatch_plan(const oq_validate_opts *o, const oq_config *cfg)
{
    int on = oq_config_on_ep(cfg);
    const char *env = getenv("ORTQUAL_REQUIRE_DISPATCH");
    int require = o->require_dispatch || (env && !strcmp(env, "1"));
    json_t *expect = json_array();
    for (size_t i = 0; i < o->n_expect_kernel; i++) json_array_append_new(expect, json_string(o->expect_kernel[i]));
    json_t *d = json_pack("{s:b, s:b, s:o}", "enable", on, "require", require, "expect", expect);
    if (oq_kernel_ort_name(cfg->kernel)) json_object_set_new(d, "kernel", json_string(oq_kernel_ort_name(cfg->kernel)));
    return d;
}

static json_t *make_plan(run_ctx *c, const oq_config *cfg, int is_ref, const char *model,
                         const char *tag, const char *result_path)
{
    const oq_validate_opts *o = c->o;
    json_t *inputs = json_object();
    if (o->kind == OQ_MODEL_USER) {
        json_object_set_new(inputs, c->features, json_string("features"));
        json_object_set_new(inputs, c->mask, json_string("mask"));
    } else {
        json_object_set_new(inputs, "features", json_string("features"));
        json_object_set_new(inputs, "mask", json_string("mask"));
    }
    json_t *p = json_pack("{s:s, s:b, s:i, s:i, s:o, s:s, s:o, s:o, s:s}", "config", cfg->name,
                          "is_reference", is_ref, "repeat", o->repeat, "warmup", o->warmup,
                          "inputs", inputs, "mask_member", "mask", "batches", plan_batches(c, tag),
                          "runtime", runtime_json(o, is_ref), "result", result_path);
    if (model) json_object_set_new(p, "model", json_string(model));
    if (o->tolerances) json_object_set_new(p, "tolerances", json_string(o->tolerances));
    json_object_set_new(p, "padded_length", json_integer(max_padded_length(c)));
    if (oq_config_uses_ort(cfg) && cfg->repr != OQ_REPR_MODEL) {
        oq_attn_format f = oq_repr_attn_format(cfg->repr);
        json_object_set_new(p, "mask_form", json_string(oq_mask_form_name(oq_mask_form_resolve(f, o->mask_form))));
    }
    json_object_set_new(p, "dispatch", dispatch_plan(o, cfg));
    json_object_set_new(p, "placement", json_pack("{s:b, s:b, s:b}", "enable", o->require_full_gpu || o->profile,
                                                  "require", o->require_full_gpu, "strict", o->strict_placement));
    if (c->weights) {
        json_object_set_new(p, "weights", json_string(c->weights_path));
        json_object_set_new(p, "heads", json_integer(c->weights->cfg.heads));
    }
    return p;
}

/* ": <last non-empty line>" of a stderr tail, or "". */
static const char *last_line(char *tail)
{
    static char buf[512];
    size_t n = strlen(tail);
    while (n && (tail[n - 1] == '\n' || tail[n - 1] == '\r')) tail[--n] = 0;
    char *start = strrchr(tail, '\n');
    start = start ? start + 1 : tail;
    snprintf(buf, sizeof buf, "%s%s", *start ? ": " : "", start);
    return buf;
}

/* Runs one worker (child process or in-process) and returns its result JSON. */
static json_t *run_worker(run_ctx *c, const char *plan_path, const char *result_path, json_t *jcfg)
{
    const oq_validate_opts *o = c->o;
    oq_err e = {0};
    if (!o->isolate) {
        if (oq_validate_worker(plan_path, &e))
            return json_pack("{s:s, s:s}", "status", "failed", "reason", e.msg);
    } else {
        char *argv[] = {(char *)o->self_exe, "validate", "--worker", (char *)plan_path, NULL};
        oq_proc_result pr;
        char how[256];
        if (oq_proc_run(argv, o->timeout_s, 4096, 0, &pr, &e))
            return json_pack("{s:s, s:s}", "status", "failed", "reason", e.msg);
        json_object_set_new(jcfg, "worker", json_pack("{s:s, s:f, s:s}", "ended", oq_proc_describe(&pr, how, sizeof how),
                                                      "seconds", pr.seconds, "stderr_tail", pr.stderr_tail));
        int crashed = pr.signaled || pr.timed_out || pr.exit_code != 0;
        json_t *r = crashed ? json_pack("{s:s, s:s++}", "status", "failed", "reason", "worker ", how,
                                        last_line(pr.stderr_tail))
                            : NULL;
        oq_proc_result_clear(&pr);
        if (r) return r;
    }
    json_error_t je;
    json_t *r = json_load_file(result_path, 0, &je);
    return r ? r : json_pack("{s:s, s:s}", "status", "failed", "reason", "worker wrote no result");
}

/* Reruns a configuration whose dispatch check passed with MATH forced (sdpa_kernel=16): the
 * check must now fail, naming a node that got MATH, or it has not been seen to bite. */
static void prove_teeth(run_ctx *c, const oq_config *cfg, json_t *jcfg, json_t *plan,
                        const char *plan_path, const char *result_path)
{
    json_t *d = json_object_get(plan, "dispatch");
    json_object_set_new(d, "force_sdpa_kernel", json_integer(16));
    json_object_set_new(d, "require", json_true());
    oq_err e = {0};
    json_t *teeth = json_object();
    json_object_set_new(jcfg, "teeth", teeth);
    if (oq_json_write(plan_path, plan, &e)) json_object_set_new(teeth, "error", json_string(e.msg));
    progress(c->o, "    %s: proving the dispatch check has teeth (rerun with sdpa_kernel=16, MATH only)", cfg->name);
    json_t *r = run_worker(c, plan_path, result_path, teeth);
    json_t *failures = json_object_get(json_object_get(r, "dispatch"), "failures");
    int bit = 0;
    size_t i;
    json_t *f;
    json_array_foreach(failures, i, f) bit |= strstr(json_string_value(f), "got MATH") != NULL;
    json_object_set(teeth, "rerun_status", json_object_get(r, "status"));
    json_object_set(teeth, "rerun_dispatch", json_object_get(r, "dispatch"));
    json_object_set_new(teeth, "proved", json_boolean(bit));
    json_object_set_new(teeth, "verdict", json_string(bit ? "the check failed with MATH forced, as it must"
                                                          : "the check was never seen failing"));
    if (!bit) {
        json_object_set_new(jcfg, "status", json_string("failed"));
        json_object_set_new(jcfg, "reason", json_string("--prove-teeth: with MATH forced the dispatch check did not fail"));
    }
    json_decref(r);
}

static int config_required(const oq_validate_opts *o, const char *name)
{
    for (size_t i = 0; i < o->n_required; i++)
        if (!strcmp(o->required[i], name)) return 1;
    return 0;
}

/* The ONNX file an earlier configuration of the same representation and precision
 * exported (the file depends on nothing else), or NULL. */
static const char *exported_model(const run_ctx *c, const oq_config *cfg)
{
    size_t i;
    const json_t *j;
    json_array_foreach(c->configs, i, j) {
        const char *file = oq_json_str(j, "model_file", NULL);
        if (file && !strcmp(oq_json_str(j, "representation", ""), oq_repr_name(cfg->repr)) &&
            !strcmp(oq_json_str(j, "precision", ""), oq_precision_name(cfg->precision)))
            return file;
    }
    return NULL;
}

static oq_status run_config(run_ctx *c, size_t k, int *ref_ok, oq_err *err)
{
    const oq_validate_opts *o = c->o;
    const oq_config *cfg = &o->configs[k];
    if (c->shardplan && !oq_shard_runs_config(c->shardplan, o->shard.index, k)) return OQ_OK;
    char model[4096] = "", plan_path[4096], result_path[4096], tag[OQ_CONFIG_NAME_MAX + 32], name[OQ_CONFIG_NAME_MAX];
    /* the index keeps files apart when a name repeats (replay: cpu against cpu on another ORT) */
    oq_config_file_tag(cfg->name, name, sizeof name);
    snprintf(tag, sizeof tag, "%02u_%s", (unsigned)(k % 100), name);
    snprintf(plan_path, sizeof plan_path, "%s/plan_%s.json", c->workdir, tag);
    snprintf(result_path, sizeof result_path, "%s/result_%s.json", c->workdir, tag);
    json_t *jcfg = json_pack("{s:s, s:s, s:s, s:s, s:s, s:b}", "name", cfg->name, "runtime", cfg->runtime,
                             "representation", oq_repr_name(cfg->repr), "precision",
                             oq_precision_name(cfg->precision), "kernel", oq_kernel_name(cfg->kernel),
                             "reference", k == 0);
    json_array_append_new(c->configs, jcfg);
    if (!*ref_ok) {
        json_object_set_new(jcfg, "status", json_string("not-run"));
        json_object_set_new(jcfg, "reason", json_string("the reference configuration did not pass"));
        return OQ_OK;
    }
    const char *exported = exported_model(c, cfg);
    if (exported) {
        snprintf(model, sizeof model, "%s", exported);
        json_object_set_new(jcfg, "model_file", json_string(model));
    } else if (oq_config_uses_ort(cfg)) {
        int64_t static_bl[2] = {0, 0};
        if (o->static_shapes) {
            json_t *b0 = json_array_get(c->batches, 0);
            static_bl[0] = json_integer_value(json_object_get(b0, "batch_size"));
            static_bl[1] = json_integer_value(json_object_get(b0, "padded_length"));
        }
        oq_status st = oq_validate_model_file(o, c->weights, cfg, static_bl, model, sizeof model, err);
        if (st) return oq_err_prefix(err, "config %s: ", cfg->name);
        json_object_set_new(jcfg, "model_file", json_string(model));
    }
    json_t *plan = make_plan(c, cfg, k == 0, *model ? model : NULL, tag, result_path);
    oq_status st = oq_json_write(plan_path, plan, err);
    if (st) {
        json_decref(plan);
        return st;
    }
    progress(o, "[%zu/%zu] %s ...", k + 1, o->n_configs, cfg->name);
    json_t *r = run_worker(c, plan_path, result_path, jcfg);
    json_object_update_missing(jcfg, r);
    json_object_set(jcfg, "status", json_object_get(r, "status"));
    json_decref(r);
    const char *status = oq_json_str(jcfg, "status", "failed");
    if (!strcmp(status, "skipped") && config_required(o, cfg->name)) {
        json_object_set_new(jcfg, "status", json_string("failed"));
        json_object_set_new(jcfg, "required", json_true());
    }
    if (o->prove_teeth && json_is_true(json_object_get(json_object_get(jcfg, "dispatch"), "passed")))
        prove_teeth(c, cfg, jcfg, plan, plan_path, result_path);
    json_decref(plan);
    status = oq_json_str(jcfg, "status", "failed");
    if (k == 0 && strcmp(status, "passed") != 0) *ref_ok = 0;
    progress(o, "[%zu/%zu] %s: %s%s%s", k + 1, o->n_configs, cfg->name, oq_json_str(jcfg, "status", "?"),
             json_object_get(jcfg, "reason") ? ": " : "", oq_json_str(jcfg, "reason", ""));
    return OQ_OK;
}

static int verdict(const json_t *configs)
{
    size_t i;
    json_t *c;
    int failed = 0;
    json_array_foreach(configs, i, c) {
        const char *s = oq_json_str(c, "status", "failed");
        failed |= strcmp(s, "passed") && strcmp(s, "skipped");
    }
    return failed;
}

/* Provider options go to the configurations on an execution provider other than
 * cpu (ORT's CPU EP takes none), checked against each before anything runs. */
static oq_status check_ep_options(const oq_validate_opts *o, oq_err *err)
{
    size_t takers = 0;
    for (size_t k = 0; o->n_ep_options && k < o->n_configs; k++) {
        if (!oq_config_on_ep(&o->configs[k])) continue;
        takers++;
        oq_status st = oq_ep_options_validate(o->configs[k].runtime, o->n_ep_options, o->ep_option_keys,
                                              o->ep_option_values, err);
        if (st) return st;
    }
    if (o->n_ep_options && !takers)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "provider option '%s': no configuration runs on an execution provider that takes "
                          "options (ref and cpu take none)",
                          o->ep_option_keys[0]);
    return OQ_OK;
}

static oq_status setup(run_ctx *c, oq_err *err)
{
    const oq_validate_opts *o = c->o;
    oq_status st = check_ep_options(o, err);
    if (!st) st = oq_shard_setup(o, err);
    if (st) return st;
    char path[4096];
    snprintf(path, sizeof path, "%s/summary.json", o->outdir);
    if (!o->overwrite && access(path, F_OK) == 0)
        return oq_err_set(err, OQ_ERR_IO, "%s exists (use --force or another --outdir)", path);
    st = oq_mkdirs(o->outdir, err);
    snprintf(c->workdir, sizeof c->workdir, "%s/.work", o->outdir);
    if (!st) st = oq_mkdirs(c->workdir, err);
    if (st || o->kind != OQ_MODEL_USER) return st;
    snprintf(c->features, sizeof c->features, "%s", o->features_name ? o->features_name : "");
    snprintf(c->mask, sizeof c->mask, "%s", o->mask_name ? o->mask_name : "");
    return oq_validate_user_inputs(o->model_path, c->features, c->mask, sizeof c->features, err);
}

/* A run that stops before any model ran leaves an error record and nothing else (a shard's
 * batches are the prepared ones, shared with the other shards: they stay). */
static void undo_prepare(run_ctx *c, const oq_err *e)
{
    size_t i;
    json_t *b;
    if (!oq_shard_is_run(c->o)) json_array_foreach(c->batches, i, b) unlink(oq_json_str(b, "inputs", ""));
    if (*c->weights_path) unlink(c->weights_path);
    char path[4096];
    snprintf(path, sizeof path, "%s/error.json", c->o->outdir);
    json_t *rec = json_pack("{s:s, s:s, s:s}", "schema", OQ_VALIDATE_SCHEMA, "status", oq_status_str(e->status),
                            "error", e->msg);
    oq_json_write(path, rec, NULL);
    json_decref(rec);
}

/* The batches: prepared here, or (a shard) taken from the prepared plan. */
static oq_status load_batches(run_ctx *c, oq_err *err)
{
    if (oq_shard_is_run(c->o)) return oq_shard_load(c->o, c->root, &c->shardplan, c->batches, err);
    oq_status st = oq_validate_prepare_batches(c->o, c->batches, err);
    if (!st) progress(c->o, "%zu batches checked against the mask contract and written to %s",
                      json_array_size(c->batches), c->o->outdir);
    return st;
}

/* The plan's identity; a shard checks it against the prepared plan and records its start. */
static oq_status identify(run_ctx *c, oq_err *err)
{
    /* a shard's plan is the whole plan: every batch, not only its own */
    const json_t *all = c->shardplan ? json_object_get(c->shardplan, "batches") : c->batches;
    oq_status st = oq_plan_describe(c->o, all, c->weights_path, &c->plan, err);
    if (st || !c->shardplan) return st;
    st = oq_shard_check_plan(c->shardplan, c->plan, c->root, err);
    if (st) return st;
    c->shard = oq_shard_block(c->o, c->shardplan);
    progress(c->o, "shard %d of %d (by %s): %zu of %zu batches", (int)c->o->shard.index, (int)c->o->shard.count,
             oq_shard_by_name(c->o->shard.by), json_array_size(c->batches),
             json_array_size(json_object_get(c->shardplan, "batches")));
    return oq_shard_started(c->o, c->shard, err);
}

static oq_status run_all(run_ctx *c, const char *t0, int *exit_status, oq_err *err)
{
    const oq_validate_opts *o = c->o;
    int ref_ok = 1;
    oq_status st = OQ_OK;
    for (size_t k = 0; !st && k < o->n_configs; k++) st = run_config(c, k, &ref_ok, err);
    if (st) return st;
    char t1[32], path[4096];
    oq_iso_time(t1, sizeof t1);
    c->summary = json_pack("{s:s, s:s, s:s, s:o, s:O, s:O, s:O}", "schema", OQ_VALIDATE_SCHEMA, "start", t0, "end",
                           t1, "evidence", oq_validate_evidence(o), "plan", c->plan, "batches", c->batches,
                           "configs", c->configs);
    if (c->shard) json_object_set(c->summary, "shard", c->shard);
    *exit_status = verdict(c->configs);
    json_object_set_new(c->summary, "verdict", json_string(*exit_status ? "failed" : "passed"));
    json_object_set_new(c->summary, "exit_status", json_integer(*exit_status));
    snprintf(path, sizeof path, "%s/validate.csv", o->outdir);
    st = oq_validate_write_csv(path, c->summary, err);
    if (!st && o->plots) oq_validate_plots(o->outdir, path, c->summary);
    snprintf(path, sizeof path, "%s/summary.json", o->outdir);
    if (!st) st = oq_json_write(path, c->summary, err);
    return st;
}

oq_status oq_validate_run(const oq_validate_opts *o_in, json_t **summary, int *exit_status, oq_err *err)
{
    oq_validate_opts shard_opts;
    char shard_dir[4096];
    const oq_validate_opts *o = oq_shard_opts(o_in, &shard_opts, shard_dir, sizeof shard_dir);
    run_ctx c = {.o = o, .root = o_in->outdir, .batches = json_array(), .configs = json_array()};
    char t0[32];
    oq_iso_time(t0, sizeof t0);
    oq_status st = setup(&c, err);
    if (!st) st = load_batches(&c, err);
    if (!st && (o->kind == OQ_MODEL_ENCODER || o->weights_path)) st = prepare_weights(&c, err);
    if (!st) st = identify(&c, err);
    if (!st && o->shard.prepare) st = oq_shard_plan_write(o, c.plan, c.batches, &c.summary, err);
    if (st && *c.workdir) undo_prepare(&c, err);
    *exit_status = 0;
    if (!st && !o->shard.prepare) st = run_all(&c, t0, exit_status, err);
    if (*c.workdir) oq_remove_tree(c.workdir);
    json_decref(c.batches);
    json_decref(c.configs);
    json_decref(c.plan);
    json_decref(c.shardplan);
    json_decref(c.shard);
    oq_encoder_weights_free(c.weights);
    if (st) json_decref(c.summary);
    else *summary = c.summary;
    return st;
}
