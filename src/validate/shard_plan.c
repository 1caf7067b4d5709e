/* Plans and shards: what names a validation plan, how it is split, and what a shard checks
 * before it runs its part (ortqual/shard.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ortqual/fileio.h"
#include "validate/validate-impl.h"

const char *oq_shard_state_name(oq_shard_state s)
{
    static const char *const names[] = {"missing", "unfinished", "failed"};
    return names[s];
}

int oq_shard_is_run(const oq_validate_opts *o) { return o->shard.count > 0 && !o->shard.prepare; }

const oq_validate_opts *oq_shard_opts(const oq_validate_opts *o, oq_validate_opts *copy, char *dir, size_t n)
{
    if (!oq_shard_is_run(o)) return o;
    *copy = *o;
    snprintf(dir, n, "%s/shards/%d", o->outdir, (int)o->shard.index);
    copy->outdir = dir;
    copy->plots = 0; /* drawn once, by the merge */
    return copy;
}

/* ---- the plan's description and hash ----------------------------------------------- */

static json_t *strings(const char *const *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(a, json_string(v[i]));
    return a;
}

static json_t *pairs(const char *const *a, const char *const *b, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(arr, json_pack("[s,s]", a[i], b[i]));
    return arr;
}

static json_t *nullable(const char *s) { return s ? json_string(s) : json_null(); }

static oq_status model_json(const oq_validate_opts *o, const char *weights_file, json_t **out, oq_err *err)
{
    static const char *const kinds[] = {"encoder", "sdpa", "model"};
    json_t *m = json_pack("{s:s, s:{s:b, s:s, s:b}}", "kind", kinds[o->kind], "export", "static", o->static_shapes,
                          "mask_form", oq_mask_form_name(o->mask_form), "elu_op", o->elu_op);
    char hex[65];
    oq_status st = OQ_OK;
    if (o->kind == OQ_MODEL_ENCODER) {
        const oq_encoder_config *e = &o->encoder;
        char eps[32]; /* as text: a JSON number would not survive plan.json's rounding */
        snprintf(eps, sizeof eps, "%.9g", (double)e->ln_epsilon);
        json_object_set_new(m, "encoder", json_pack("{s:i, s:i, s:i, s:i, s:i, s:s}", "features", e->features, "width",
                                                    e->width, "layers", e->layers, "heads", e->heads, "ffn_width",
                                                    e->ffn_width, "ln_epsilon", eps));
    } else if (o->kind == OQ_MODEL_SDPA) {
        json_object_set_new(m, "sdpa", json_pack("{s:i, s:i, s:i}", "heads", o->sdpa.heads, "kv_heads",
                                                 o->sdpa.kv_heads, "head_dim", o->sdpa.head_dim));
    } else {
        st = oq_sha256_file(o->model_path, hex, err);
        json_object_set_new(m, "file", json_string(o->model_path));
        json_object_set_new(m, "sha256", json_string(st ? "" : hex));
        json_object_set_new(m, "features", nullable(o->features_name));
        json_object_set_new(m, "mask", nullable(o->mask_name));
    }
    if (!st && weights_file && *weights_file) {
        st = oq_sha256_file(weights_file, hex, err);
        json_object_set_new(m, "weights_sha256", json_string(st ? "" : hex));
    }
    *out = m;
    return st;
}

static json_t *batch_hashes(const json_t *batches)
{
    json_t *a = json_array();
    size_t i;
    const json_t *b;
    json_array_foreach(batches, i, b)
        json_array_append_new(a, json_pack("{s:O, s:O}", "index", json_object_get(b, "index"), "sha256",
                                           json_object_get(b, "sha256")));
    return a;
}

/* Everything that decides what runs and how it is judged; not where the output goes, how
 * the work is split or how long a worker may take. */
static json_t *describe(const oq_validate_opts *o, json_t *model, const json_t *batches)
{
    json_t *configs = json_array();
    for (size_t k = 0; k < o->n_configs; k++) json_array_append_new(configs, json_string(o->configs[k].name));
    const char *env = getenv("ORTQUAL_REQUIRE_DISPATCH");
    int require = o->require_dispatch || (env && !strcmp(env, "1"));
    return json_pack("{s:o, s:o, s:o, s:o, s:i, s:i, s:o, s:{s:o, s:b, s:b}, s:{s:b, s:b, s:b}, s:b, "
                     "s:{s:o, s:o, s:o, s:o}}",
                     "model", model, "batches", batch_hashes(batches), "configs", configs, "required",
                     strings(o->required, o->n_required), "repeat", o->repeat, "warmup", o->warmup, "tolerances",
                     nullable(o->tolerances), "dispatch", "expect", strings(o->expect_kernel, o->n_expect_kernel),
                     "require", require, "prove_teeth", o->prove_teeth, "placement", "require_full_gpu",
                     o->require_full_gpu, "strict", o->strict_placement, "profile", o->profile, "save_outputs",
                     o->save_outputs, "runtime", "ort_lib", nullable(o->ort_lib), "reference_ort_lib",
                     nullable(o->reference_ort_lib), "ep_libs", pairs(o->ep_lib_names, o->ep_lib_paths, o->n_ep_libs),
                     "ep_options", pairs(o->ep_option_keys, o->ep_option_values, o->n_ep_options));
}

static void hash_json(const json_t *j, char hex[65])
{
    char *text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    oq_sha256 s;
    oq_sha256_init(&s);
    oq_sha256_update(&s, text, strlen(text));
    oq_sha256_hex(&s, hex);
    free(text);
}

oq_status oq_plan_describe(const oq_validate_opts *o, const json_t *batches, const char *weights_file,
                           json_t **plan, oq_err *err)
{
    json_t *model;
    oq_status st = model_json(o, weights_file, &model, err);
    json_t *d = describe(o, model, batches);
    char hex[65];
    hash_json(d, hex);
    *plan = json_pack("{s:s, s:o}", "hash", hex, "description", d);
    return st;
}

/* ---- step 1: the prepared plan ----------------------------------------------------- */

static void plan_path(const char *root, char *buf, size_t n) { snprintf(buf, n, "%s/shards/plan.json", root); }

oq_status oq_shard_setup(const oq_validate_opts *o, oq_err *err)
{
    if (!o->shard.prepare) return OQ_OK;
    char path[4096];
    plan_path(o->outdir, path, sizeof path);
    if (access(path, F_OK) == 0 && !o->overwrite)
        return oq_err_set(err, OQ_ERR_IO, "%s exists: these shards were prepared already (use --force to prepare "
                                          "them again, which removes their results, or another --outdir)", path);
    if (!o->overwrite) return OQ_OK;
    /* --force: an earlier plan's shard results and merged summary must not outlive it */
    snprintf(path, sizeof path, "%s/shards", o->outdir);
    oq_remove_tree(path);
    snprintf(path, sizeof path, "%s/summary.json", o->outdir);
    unlink(path);
    return OQ_OK;
}

/* Which batches (by batch) or configurations (by configuration, besides the reference) shard
 * i runs: a contiguous range, so shard order is batch order. */
static json_t *assignment(const oq_validate_opts *o, size_t n_batches, int32_t i)
{
    int32_t n = o->shard.count;
    json_t *b = json_array(), *c = json_array();
    int by_config = o->shard.by == OQ_SHARD_BY_CONFIG;
    size_t items = by_config ? o->n_configs - 1 : n_batches;
    size_t lo = items * (size_t)i / (size_t)n, hi = items * (size_t)(i + 1) / (size_t)n;
    for (size_t k = 0; k < n_batches; k++)
        if (by_config || (k >= lo && k < hi)) json_array_append_new(b, json_integer((json_int_t)k));
    json_array_append_new(c, json_integer(0));
    for (size_t k = 1; k < o->n_configs; k++)
        if (!by_config || (k - 1 >= lo && k - 1 < hi)) json_array_append_new(c, json_integer((json_int_t)k));
    return json_pack("{s:i, s:o, s:o}", "index", i, "batches", b, "configs", c);
}

oq_status oq_shard_plan_write(const oq_validate_opts *o, const json_t *plan, const json_t *batches,
                              json_t **out, oq_err *err)
{
    size_t nb = json_array_size(batches);
    size_t n = (size_t)o->shard.count;
    if (o->shard.by == OQ_SHARD_BY_BATCH && n > nb)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%zu shards by batch, but the plan has %zu batches", n, nb);
    if (o->shard.by == OQ_SHARD_BY_CONFIG && n > o->n_configs - 1)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "%zu shards by configuration, but the plan has %zu configurations besides the reference", n,
                          o->n_configs - 1);
    json_t *assign = json_array(), *configs = json_array();
    for (int32_t i = 0; i < o->shard.count; i++) json_array_append_new(assign, assignment(o, nb, i));
    for (size_t k = 0; k < o->n_configs; k++) json_array_append_new(configs, json_string(o->configs[k].name));
    char t[32], host[256] = "";
    oq_iso_time(t, sizeof t);
    gethostname(host, sizeof host - 1);
    json_t *p = json_pack("{s:s, s:O, s:i, s:s, s:o, s:o, s:O, s:{s:s, s:s}}", "schema", OQ_SHARD_PLAN_SCHEMA, "plan",
                          plan, "shards", o->shard.count, "shard_by", oq_shard_by_name(o->shard.by), "assignment",
                          assign, "configs", configs, "batches", batches, "prepared", "time", t, "host", host);
    char path[4096];
    snprintf(path, sizeof path, "%s/shards", o->outdir);
    oq_status st = oq_mkdirs(path, err);
    plan_path(o->outdir, path, sizeof path);
    if (!st) st = oq_json_write(path, p, err);
    if (st) json_decref(p);
    else *out = p;
    return st;
}

/* ---- step 2: one shard -------------------------------------------------------------- */

static oq_status load_plan(const char *root, json_t **out, oq_err *err)
{
    char path[4096];
    plan_path(root, path, sizeof path);
    if (access(path, F_OK) != 0)
        return oq_err_set(err, OQ_ERR_NOT_FOUND,
                          "%s not found: prepare the shards first (the same options with --prepare-shards N "
                          "instead of --shard, or 'ortqual slurm')", path);
    json_error_t je;
    json_t *p = json_load_file(path, 0, &je);
    if (!p) return oq_err_set(err, OQ_ERR_FORMAT, "%s: line %d: %s", path, je.line, je.text);
    if (strcmp(oq_json_str(p, "schema", ""), OQ_SHARD_PLAN_SCHEMA) != 0) {
        json_decref(p);
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: not a shard plan (schema %s)", path, OQ_SHARD_PLAN_SCHEMA);
    }
    *out = p;
    return OQ_OK;
}

oq_status oq_shard_plan_load(const char *root, json_t **out, oq_err *err) { return load_plan(root, out, err); }

/* The batch records of this shard, each file checked against the SHA-256 it was prepared with. */
oq_status oq_shard_load(const oq_validate_opts *o, const char *root, json_t **shardplan, json_t *batches,
                        oq_err *err)
{
    json_t *p;
    oq_status st = load_plan(root, &p, err);
    if (st) return st;
    *shardplan = p;
    json_int_t n = json_integer_value(json_object_get(p, "shards"));
    const char *by = oq_json_str(p, "shard_by", "");
    if (n != o->shard.count || strcmp(by, oq_shard_by_name(o->shard.by)) != 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s/shards/plan.json was prepared for %lld shards by %s, not %d by %s",
                          root, (long long)n, by, (int)o->shard.count, oq_shard_by_name(o->shard.by));
    const json_t *all = json_object_get(p, "batches");
    size_t i;
    const json_t *k;
    json_array_foreach(json_object_get(json_array_get(json_object_get(p, "assignment"), (size_t)o->shard.index), "batches"),
                       i, k) {
        const json_t *b = json_array_get(all, (size_t)json_integer_value(k));
        const char *file = oq_json_str(b, "inputs", "");
        char hex[65];
        st = oq_sha256_file(file, hex, err);
        if (st) return oq_err_prefix(err, "shard %d: ", (int)o->shard.index);
        if (strcmp(hex, oq_json_str(b, "sha256", "")) != 0)
            return oq_err_set(err, OQ_ERR_FORMAT, "%s: SHA-256 %.12s... is not the prepared %.12s... (changed since "
                                                  "the shards were prepared)", file, hex, oq_json_str(b, "sha256", ""));
        json_array_append_new(batches, json_deep_copy(b));
    }
    return OQ_OK;
}

int oq_shard_runs_config(const json_t *shardplan, int32_t index, size_t k)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(json_array_get(json_object_get(shardplan, "assignment"), (size_t)index), "configs"),
                       i, c) if ((size_t)json_integer_value(c) == k) return 1;
    return 0;
}

/* The names of the description's parts that differ, for the error message. */
static void differing_keys(const json_t *a, const json_t *b, char *buf, size_t n)
{
    const char *key;
    const json_t *v;
    buf[0] = 0;
    json_object_foreach((json_t *)a, key, v) {
        if (json_equal(v, json_object_get(b, key))) continue;
        size_t used = strlen(buf);
        snprintf(buf + used, n - used, "%s%s", used ? ", " : "", key);
    }
}

oq_status oq_shard_check_plan(const json_t *shardplan, const json_t *plan, const char *root, oq_err *err)
{
    const json_t *prepared = json_object_get(shardplan, "plan");
    if (!strcmp(oq_json_str(prepared, "hash", ""), oq_json_str(plan, "hash", "-"))) return OQ_OK;
    char diff[512];
    differing_keys(json_object_get(prepared, "description"), json_object_get(plan, "description"), diff, sizeof diff);
    return oq_err_set(err, OQ_ERR_INVALID_ARG,
                      "this shard's options describe another plan than %s/shards/plan.json (they differ in: %s); "
                      "run every shard with the options the shards were prepared with",
                      root, *diff ? diff : "?");
}

static json_t *slurm_env(void)
{
    static const char *const vars[][2] = {{"SLURM_JOB_ID", "job_id"},
                                          {"SLURM_ARRAY_JOB_ID", "array_job_id"},
                                          {"SLURM_ARRAY_TASK_ID", "array_task_id"},
                                          {"SLURMD_NODENAME", "node"},
                                          {"SLURM_CLUSTER_NAME", "cluster"}};
    json_t *j = json_object();
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        if (getenv(vars[i][0])) json_object_set_new(j, vars[i][1], json_string(getenv(vars[i][0])));
    return j;
}

/* Who runs this shard, where and since when: also what a merge reports when it never ends. */
json_t *oq_shard_block(const oq_validate_opts *o, const json_t *shardplan)
{
    char host[256] = "", t[32];
    gethostname(host, sizeof host - 1);
    oq_iso_time(t, sizeof t);
    json_t *names = json_array();
    size_t i;
    const json_t *k;
    const json_t *mine = json_array_get(json_object_get(shardplan, "assignment"), (size_t)o->shard.index);
    json_array_foreach(json_object_get(mine, "configs"), i, k)
        json_array_append_new(names, json_string(o->configs[json_integer_value(k)].name));
    return json_pack("{s:i, s:i, s:s, s:O, s:o, s:s, s:s, s:i, s:o}", "index", o->shard.index, "count",
                     o->shard.count, "by", oq_shard_by_name(o->shard.by), "batches", json_object_get(mine, "batches"),
                     "configs", names, "host", host, "start", t, "pid", (int)getpid(), "slurm", slurm_env());
}

oq_status oq_shard_started(const oq_validate_opts *o, const json_t *block, oq_err *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/started.json", o->outdir);
    return oq_json_write(path, block, err);
}
