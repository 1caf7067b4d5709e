/* Plans, results and the summary as JSON: the one place their keys are written and read.
 * The worker writes its oq_config_result with the same function that writes the
 * configurations of summary.json, and the orchestrator reads it back into the same struct
 * (docs/summary-schema.md documents the keys). */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare/compare-impl.h"
#include "dispatch/dispatch-impl.h"
#include "ortqual/fileio.h"
#include "placement/placement-impl.h"
#include "validate/validate-impl.h"
#include "status/args-impl.h"
#include "runtime/sessioncfg-impl.h"

oq_status oq_json_write(const char *path, const json_t *j, oq_err *err)
{
    return oq_json_write_file(path, j, JSON_INDENT(2) | JSON_PRESERVE_ORDER, err);
}

static const char *str_of(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* A copy of o[key] when it is a string, else NULL; *ok cleared when the copy fails. */
static char *dup_of(const json_t *o, const char *key, int *ok)
{
    const char *s = str_of(o, key);
    char *d = s ? strdup(s) : NULL;
    if (s && !d) *ok = 0;
    return d;
}

/* The level set as an option, ORT's number, as oq_graph_opt: o["graph_opt_level"], or
 * o["graph_opt_option"] where an entry set the level ORT ran; absent or unknown: ORT's default. */
static oq_graph_opt graph_opt_back(const json_t *o)
{
    const json_t *v = json_object_get(o, json_object_get(o, "graph_opt_option") ? "graph_opt_option" : "graph_opt_level");
    int g = json_is_integer(v) ? oq_graph_opt_from_level((int)json_integer_value(v)) : -1;
    return g < 0 ? OQ_GRAPH_OPT_DEFAULT : (oq_graph_opt)g;
}

/* Text for people (a reason, a message naming a file): kept when it is not UTF-8, as U+FFFD
 * where it is not (jansson would drop it, and fail a pack whole). */
static void set_str(json_t *o, const char *key, const char *s)
{
    if (s) json_object_set_new(o, key, oq_json_text(s));
}

/* A path ortqual reads back, byte for byte (oq_json_set_path); *ok cleared on OOM. */
static void set_path(json_t *o, const char *key, const char *path, int *ok)
{
    if (!oq_json_set_path(o, key, path)) *ok = 0;
}

static json_t *strv_json(char *const *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(a, oq_json_text(v[i]));
    return a;
}

static int strv_back(const json_t *a, char ***v, size_t *n)
{
    for (size_t i = 0; i < json_array_size(a); i++) {
        const char *s = json_string_value(json_array_get(a, i));
        if (oq_strv_push(v, n, s ? s : "")) return 0;
    }
    return 1;
}

/* [[a, b], ...] from two parallel arrays, and back; a b that is a path and not UTF-8 (an
 * --ep-lib) is [a, b for people, {"b_hex": its bytes}] (oq_json_set_path). */
static json_t *pairs_json(char *const *a, char *const *b, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *pair = json_pack("[o,o]", oq_json_text(a[i]), oq_json_text(b[i])), *exact = json_object();
        if (exact && oq_json_set_path(exact, "b", b[i]) && json_object_get(exact, "b_hex"))
            json_array_append(pair, exact);
        json_decref(exact);
        json_array_append_new(arr, pair);
    }
    return arr;
}

/* Why a "b_hex" value is not a path's bytes (oq_json_set_path writes them as pairs of 0-9a-f). */
static const char *hex_flaw(const char *hex)
{
    if (!hex) return "missing (or not a string)";
    if (strlen(hex) % 2) return "an odd number of digits";
    for (size_t i = 0; hex[i]; i++)
        if (!strchr("0123456789abcdef", hex[i])) return "not lowercase hex digits";
    for (size_t i = 0; hex[i]; i += 2)
        if (hex[i] == '0' && hex[i + 1] == '0') return "a 00 byte, which no path holds";
    return "beside no 'b' string";
}

/* The pairs under runtime.<key>. A damaged plan (a pair that is not two strings, a "b_hex" that
 * is not hex) is a format error naming the entry, not "out of memory". */
static oq_status pairs_back(const json_t *rt, const char *key, char ***a, char ***b, size_t *n, oq_err *err)
{
    const json_t *arr = json_object_get(rt, key);
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *p = json_array_get(arr, i), *exact = json_array_get(p, 2);
        const char *x = json_string_value(json_array_get(p, 0)), *y = json_string_value(json_array_get(p, 1));
        if (!x || !y) return oq_err_set(err, OQ_ERR_FORMAT, "runtime.%s[%zu]: malformed: not a pair of strings", key, i);
        int ok = 1;
        char *bytes = exact ? oq_json_path_dup(exact, "b", &ok) : NULL;
        if (exact && !bytes && ok) {
            const char *hex = json_string_value(json_object_get(exact, "b_hex"));
            return oq_err_set(err, OQ_ERR_FORMAT, "runtime.%s[%zu].b_hex: malformed: %s", key, i, hex_flaw(hex));
        }
        size_t k = *n; /* b grows beside a */
        int pushed = ok && !oq_strv_push(b, &k, bytes ? bytes : y) && !oq_strv_push(a, n, x);
        free(bytes);
        if (!pushed) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    return OQ_OK;
}

static double num_back(const json_t *j) { return json_is_number(j) ? json_number_value(j) : NAN; }

/* Writes `j` (NULL: it could not be built) and releases it. */
static oq_status write_new(const char *path, json_t *j, oq_err *err)
{
    oq_status st = j ? oq_json_write(path, j, err) : oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", path);
    json_decref(j);
    return st;
}

/* The same for the scratch files of .work/ (plans, results): renamed into place, not synced. */
static oq_status write_scratch(const char *path, json_t *j, oq_err *err)
{
    oq_status st = j ? oq_json_write_file_nosync(path, j, JSON_INDENT(2) | JSON_PRESERVE_ORDER, err)
                     : oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", path);
    json_decref(j);
    return st;
}

/* `j` behind a first key "schema": `schema` (NULL: j could not be built; j is released). */
static json_t *with_schema(const char *schema, json_t *j)
{
    json_t *doc = j ? json_pack("{s:s}", "schema", schema) : NULL;
    if (doc && json_object_update(doc, j)) json_decref(doc), doc = NULL;
    json_decref(j);
    return doc;
}

/* A scratch file's schema: `want`, or none (a file written before it had one); the caller names
 * the file. */
static oq_status schema_check(const json_t *j, const char *want, oq_err *err)
{
    const json_t *s = json_object_get(j, "schema");
    if (!s || (json_is_string(s) && !strcmp(json_string_value(s), want))) return OQ_OK;
    return oq_err_set(err, OQ_ERR_FORMAT, "schema %s, not %s", json_is_string(s) ? json_string_value(s) : "(not a string)",
                      want);
}

/* The JSON of a file; NULL with the error (naming the file) and its status in *st when it
 * cannot be read: OQ_ERR_IO for a file that cannot be opened, OQ_ERR_FORMAT for bad JSON. */
static json_t *load(const char *path, oq_status *st, oq_err *err)
{
    *st = oq_check_regular_file(path, NULL, err); /* a folder: not "'[' expected" */
    if (*st) return NULL;
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (!j) *st = oq_err_set(err, OQ_ERR_FORMAT, "%s: %s (line %d)", path, je.text, je.line);
    return j;
}

/* ---- the plan ------------------------------------------------------------------------ */

/* --seq-axis as {"output": axis}, -1 (OQ_SEQ_AXIS_NONE) for none; `batch` 1: the batch axes
 * said with them, {"output": axis} of those that have one (NULL: none has). */
static json_t *seq_axes_json(const oq_seq_axis *a, size_t n, int batch)
{
    json_t *j = json_object();
    for (size_t i = 0; i < n; i++)
        if (!batch || a[i].batch_said)
            json_object_set_new(j, a[i].output, json_integer(batch ? a[i].batch : a[i].axis));
    if (batch && !json_object_size(j)) json_decref(j), j = NULL;
    return j;
}

/* The plan's seq_axes, with the batch axes said beside them (batch_axes: absent before them). */
static int seq_axes_back(const json_t *j, const json_t *batches, oq_seq_axis **v, size_t *n)
{
    const char *name;
    const json_t *axis;
    json_object_foreach((json_t *)j, name, axis) {
        const json_t *b = json_object_get(batches, name);
        if (!json_is_integer(axis) || (b && !json_is_integer(b))) return 0; /* a malformed plan */
        oq_seq_axis a = {name, (int32_t)json_integer_value(axis), (int32_t)json_integer_value(b), b != NULL};
        if (!oq_seq_axes_copy(v, n, &a, 1)) return 0;
    }
    return 1;
}

static json_t *plan_json(const oq_validate_plan *p)
{
    json_t *inputs = json_object();
    for (size_t i = 0; i < p->n_inputs; i++)
        json_object_set_new(inputs, p->input_names[i], json_string(p->input_members[i]));
    json_t *runtime = json_pack("{s:o, s:o}", "ep_libs", pairs_json(p->ep_lib_names, p->ep_lib_paths, p->n_ep_libs),
                                "ep_options",
                                pairs_json(p->ep_option_keys, p->ep_option_values, p->n_ep_options));
    if (p->n_session_configs)
        json_object_set_new(runtime, "session_configs",
                            pairs_json(p->session_config_keys, p->session_config_values, p->n_session_configs));
    json_t *dispatch = json_pack("{s:b, s:b, s:o, s:i}", "enable", p->dispatch.enable, "require", p->dispatch.require,
                                 "expect", strv_json(p->dispatch.expect, p->dispatch.n_expect),
                                 "force_sdpa_kernel", p->dispatch.force_sdpa_kernel);
    json_t *j = json_pack("{s:s, s:b, s:o, s:o, s:i, s:i, s:i, s:I, s:o, s:o, s:{s:b, s:b, s:b}}", "config",
                          p->config.name, "is_reference", p->is_reference, "inputs", inputs, "n_batches", json_integer((json_int_t)p->n_batches),
                          "repeat", p->repeat, "warmup", p->warmup, "padding", p->padding, "padded_length",
                          (json_int_t)p->padded_length, "runtime", runtime, "dispatch", dispatch, "placement",
                          "enable", p->placement.enable, "require", p->placement.require, "strict",
                          p->placement.strict);
    int ok = j != NULL;
    if (!ok) return NULL;
    set_path(j, "result", p->result, &ok);
    set_path(j, "batches_file", p->batches_file, &ok);
    set_str(j, "mask_member", p->mask_member);
    if (p->mask_polarity != OQ_MASK_POLARITY_KEEP) /* (absent: keep, as plans before it) */
        set_str(j, "mask_polarity", oq_mask_polarity_name(p->mask_polarity));
    if (p->mask_polarity != OQ_MASK_POLARITY_KEEP) set_str(j, "mask_polarity_source", p->mask_polarity_source);
    set_path(j, "model", p->model, &ok);
    set_str(j, "model_sha256", p->model_sha256);
    set_path(j, "weights", p->weights, &ok);
    set_str(j, "weights_sha256", p->weights_sha256);
    if (p->heads) json_object_set_new(j, "heads", json_integer(p->heads));
    if (p->kv_heads) json_object_set_new(j, "kv_heads", json_integer(p->kv_heads));
    set_str(j, "tolerances", p->tolerances);
    if (p->n_seq_axes) json_object_set_new(j, "seq_axes", seq_axes_json(p->seq_axes, p->n_seq_axes, 0));
    json_t *batch_axes = p->n_seq_axes ? seq_axes_json(p->seq_axes, p->n_seq_axes, 1) : NULL;
    if (batch_axes) json_object_set_new(j, "batch_axes", batch_axes);
    if (p->progress) json_object_set_new(j, "progress", json_true());
    if (p->words) json_object_set_new(j, "words", json_true());
    if (p->mask_form != OQ_MASK_AUTO) set_str(j, "mask_form", oq_mask_form_name(p->mask_form));
    json_object_set_new(j, "threads", json_integer(p->threads));
    if (p->graph_opt != OQ_GRAPH_OPT_DEFAULT)
        json_object_set_new(j, "graph_opt_level", json_integer(oq_graph_opt_level(p->graph_opt)));
    set_path(j, "cache_dir", p->cache_dir, &ok);
    if (p->cache_shared) json_object_set_new(j, "cache_shared", json_true());
    if (p->cache_trust_self) json_object_set_new(j, "cache_trust_self", json_true());
    if (p->n_ref_outputs) json_object_set_new(j, "ref_outputs", strv_json(p->ref_outputs, p->n_ref_outputs));
    set_path(j, "ref_stream", p->ref_stream, &ok);
    if (p->is_reference && p->ref_stream_fd >= 0) json_object_set_new(j, "ref_stream_fd", json_integer(p->ref_stream_fd));
    set_path(runtime, "ort_lib", p->ort_lib, &ok);
    if (ok) return j;
    json_decref(j);
    return NULL;
}

oq_status oq_plan_write(const oq_validate_plan *p, const char *path, oq_err *err)
{
    return write_scratch(path, with_schema(OQ_WORKER_PLAN_SCHEMA, plan_json(p)), err);
}

int oq_plan_batch_put(FILE *f, const oq_plan_batch *b)
{
    json_t *j = json_pack("{s:I}", "index", (json_int_t)b->index);
    int ok = j != NULL;
    set_path(j, "inputs", b->inputs, &ok);
    set_path(j, "ref", b->ref, &ok);
    set_path(j, "save", b->save, &ok);
    set_path(j, "source", b->source, &ok);
    set_str(j, "sha256", b->sha256);
    if (j && b->batch_size > 0) json_object_set_new(j, "batch_size", json_integer(b->batch_size));
    if (!ok) json_decref(j);
    return oq_jsonl_put(f, ok ? j : NULL, JSON_COMPACT | JSON_PRESERVE_ORDER);
}

/* A line of the batches file as a batch (its paths owned, released by plan_batch_clear; the
 * SHA-256 borrowed from j): 1, 0 when it is not one, -1 when out of memory (never "not a batch"). */
static int plan_batch_back(const json_t *j, oq_plan_batch *b)
{
    int ok = 1;
    b->index = json_integer_value(json_object_get(j, "index"));
    b->inputs = oq_json_path_dup(j, "inputs", &ok);
    b->ref = oq_json_path_dup(j, "ref", &ok);
    b->save = oq_json_path_dup(j, "save", &ok);
    b->source = oq_json_path_dup(j, "source", &ok);
    b->sha256 = (char *)str_of(j, "sha256");
    b->batch_size = json_integer_value(json_object_get(j, "batch_size"));
    if (!ok) return -1;
    return json_is_integer(json_object_get(j, "index")) && b->inputs &&
           (!b->sha256 || (oq_sha256_hex_at(b->sha256) && !b->sha256[64]));
}

static void plan_batch_clear(oq_plan_batch *b)
{
    free(b->inputs);
    free(b->ref);
    free(b->save);
    free(b->source);
}

typedef struct plan_lines {
    const char *path;
    oq_plan_batch_fn fn;
    void *ctx;
} plan_lines;

static oq_status plan_line(void *ctx, json_t *j, size_t i, oq_err *err)
{
    const plan_lines *pl = ctx;
    oq_plan_batch b;
    int back = plan_batch_back(j, &b);
    oq_status st = back > 0    ? pl->fn(pl->ctx, &b, i, err)
                   : back == 0 ? oq_err_set(err, OQ_ERR_FORMAT, "%s:%zu: not a batch", pl->path, i + 1)
                               : oq_err_set(err, OQ_ERR_NOMEM, "%s:%zu: out of memory", pl->path, i + 1);
    plan_batch_clear(&b);
    return st;
}

oq_status oq_plan_batches_each(const oq_validate_plan *p, oq_plan_batch_fn fn, void *ctx, oq_err *err)
{
    if (!p->batches_file) return oq_err_set(err, OQ_ERR_IO, "(no batches file): the plan names none");
    plan_lines pl = {p->batches_file, fn, ctx};
    return oq_jsonl_each(p->batches_file, plan_line, &pl, err);
}

static oq_status plan_back(const json_t *j, oq_validate_plan *p, oq_err *err)
{
    oq_status st = oq_config_parse(str_of(j, "config") ? str_of(j, "config") : "", &p->config, err);
    if (st) return st;
    int ok = 1;
    p->is_reference = json_is_true(json_object_get(j, "is_reference"));
    p->model = oq_json_path_dup(j, "model", &ok);
    p->model_sha256 = dup_of(j, "model_sha256", &ok);
    p->weights = oq_json_path_dup(j, "weights", &ok);
    p->weights_sha256 = dup_of(j, "weights_sha256", &ok);
    p->heads = (int32_t)json_integer_value(json_object_get(j, "heads"));
    p->kv_heads = (int32_t)json_integer_value(json_object_get(j, "kv_heads"));
    p->padding = (int)json_integer_value(json_object_get(j, "padding"));
    const char *name;
    const json_t *member;
    json_object_foreach((json_t *)json_object_get(j, "inputs"), name, member)
        if (ok && oq_plan_add_input(p, name, json_string_value(member) ? json_string_value(member) : "", NULL)) ok = 0;
    p->mask_member = dup_of(j, "mask_member", &ok);
    const char *pol = json_string_value(json_object_get(j, "mask_polarity"));
    if (pol && oq_mask_polarity_parse(pol, &p->mask_polarity))
        return oq_err_set(err, OQ_ERR_FORMAT, "plan of %s: mask_polarity '%s' is neither keep nor pad", p->config.name, pol);
    p->n_batches = (size_t)json_integer_value(json_object_get(j, "n_batches"));
    p->batches_file = oq_json_path_dup(j, "batches_file", &ok);
    p->repeat = (int)json_integer_value(json_object_get(j, "repeat"));
    p->warmup = (int)json_integer_value(json_object_get(j, "warmup"));
    p->threads = (int)json_integer_value(json_object_get(j, "threads"));
    p->graph_opt = graph_opt_back(j);
    p->tolerances = dup_of(j, "tolerances", &ok);
    ok = ok && seq_axes_back(json_object_get(j, "seq_axes"), json_object_get(j, "batch_axes"), &p->seq_axes,
                                &p->n_seq_axes);
    p->padded_length = json_integer_value(json_object_get(j, "padded_length"));
    int form = str_of(j, "mask_form") ? oq_mask_form_parse(str_of(j, "mask_form")) : OQ_MASK_AUTO;
    p->mask_form = form < 0 ? OQ_MASK_AUTO : (oq_mask_form)form;
    const json_t *rt = json_object_get(j, "runtime"), *d = json_object_get(j, "dispatch");
    const json_t *pl = json_object_get(j, "placement");
    p->ort_lib = oq_json_path_dup(rt, "ort_lib", &ok);
    st = pairs_back(rt, "ep_libs", &p->ep_lib_names, &p->ep_lib_paths, &p->n_ep_libs, err);
    if (!st) st = pairs_back(rt, "ep_options", &p->ep_option_keys, &p->ep_option_values, &p->n_ep_options, err);
    if (!st)
        st = pairs_back(rt, "session_configs", &p->session_config_keys, &p->session_config_values,
                        &p->n_session_configs, err);
    if (st) return st;
    p->dispatch.enable = json_is_true(json_object_get(d, "enable"));
    p->dispatch.require = json_is_true(json_object_get(d, "require"));
    ok = ok && strv_back(json_object_get(d, "expect"), &p->dispatch.expect, &p->dispatch.n_expect);
    p->dispatch.force_sdpa_kernel = (int)json_integer_value(json_object_get(d, "force_sdpa_kernel"));
    p->placement.enable = json_is_true(json_object_get(pl, "enable"));
    p->placement.require = json_is_true(json_object_get(pl, "require"));
    p->placement.strict = json_is_true(json_object_get(pl, "strict"));
    p->result = oq_json_path_dup(j, "result", &ok);
    p->progress = json_is_true(json_object_get(j, "progress"));
    p->words = json_is_true(json_object_get(j, "words"));
    p->cache_dir = oq_json_path_dup(j, "cache_dir", &ok);
    p->cache_shared = json_is_true(json_object_get(j, "cache_shared"));
    p->cache_trust_self = json_is_true(json_object_get(j, "cache_trust_self"));
    ok = ok && strv_back(json_object_get(j, "ref_outputs"), &p->ref_outputs, &p->n_ref_outputs);
    p->ref_stream = oq_json_path_dup(j, "ref_stream", &ok);
    const json_t *fd = json_object_get(j, "ref_stream_fd");
    p->ref_stream_fd = json_is_integer(fd) ? (int)json_integer_value(fd) : -1;
    if (!ok) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (!p->result) return oq_err_set(err, OQ_ERR_FORMAT, "no result: not a validation plan");
    return OQ_OK;
}

oq_status oq_plan_read(const char *path, oq_validate_plan *p, oq_err *err)
{
    memset(p, 0, sizeof *p);
    oq_status lst;
    json_t *j = load(path, &lst, err);
    oq_status st = !j ? lst : schema_check(j, OQ_WORKER_PLAN_SCHEMA, err);
    if (j && !st) st = plan_back(j, p, err);
    if (j && st) oq_err_prefix(err, "%s: ", path);
    if (st) oq_validate_plan_clear(p);
    json_decref(j);
    return st;
}

/* ---- a configuration's result ---------------------------------------------------------- */

/* Also reads the full comparison records of summaries written before outputs were aggregated. */
static void batch_output_back(const json_t *j, oq_batch_output *o)
{
    memset(o, 0, sizeof *o);
    const json_t *pad = json_object_get(j, "padding"), *refnf = json_object_get(j, "reference_nonfinite");
    const char *name = str_of(j, "output") ? str_of(j, "output") : str_of(j, "name");
    snprintf(o->name, sizeof o->name, "%s", name ? name : "");
    o->passed = json_is_true(json_object_get(j, "passed"));
    o->tol.rtol = oq_compare_tolerance_back(json_object_get(j, "tolerance"), "rtol");
    o->tol.atol = oq_compare_tolerance_back(json_object_get(j, "tolerance"), "atol");
    o->exact = json_is_true(json_object_get(j, "exact"));
    o->num_valid = json_integer_value(json_object_get(j, "num_valid"));
    o->max_abs = oq_compare_metric_back(json_object_get(j, "max_abs"));
    o->max_rel = oq_compare_metric_back(json_object_get(j, "max_rel"));
    o->mean_abs = oq_compare_metric_back(json_object_get(j, "mean_abs"));
    o->rms = oq_compare_metric_back(json_object_get(j, "rms"));
    o->rel_l2 = oq_compare_metric_back(json_object_get(j, "rel_l2"));
    o->over_tol = json_integer_value(json_object_get(j, "over_tolerance"));
    o->nan_count = json_integer_value(json_object_get(j, "nan"));
    o->inf_count = json_integer_value(json_object_get(j, "inf"));
    o->ref_nan_count = json_integer_value(json_object_get(refnf, "nan"));
    o->ref_inf_count = json_integer_value(json_object_get(refnf, "inf"));
    o->padding_checked = json_is_true(json_object_get(pad, "checked"));
    o->masked = json_is_true(json_object_get(pad, "masked"));
    o->num_padded = json_integer_value(json_object_get(pad, "padded"));
    o->pad_nonzero = json_integer_value(json_object_get(pad, "nonzero"));
    o->ref_pad_nonzero = json_integer_value(json_object_get(pad, "reference_nonzero"));
    const json_t *w = json_array_get(json_object_get(j, "worst"), 0), *coord = json_object_get(w, "coord");
    o->has_worst = !o->passed && json_is_object(w);
    o->ndim = (int32_t)(json_array_size(coord) < OQ_MAX_DIMS ? json_array_size(coord) : OQ_MAX_DIMS);
    for (int32_t d = 0; o->has_worst && d < o->ndim; d++) o->worst.coord[d] = json_integer_value(json_array_get(coord, (size_t)d));
    o->worst.index = json_integer_value(json_object_get(w, "index"));
    o->worst.got = oq_compare_value_back(json_object_get(w, "got"), o->worst.got_text, sizeof o->worst.got_text);
    o->worst.expected =
        oq_compare_value_back(json_object_get(w, "expected"), o->worst.expected_text, sizeof o->worst.expected_text);
    o->worst.abs_diff = oq_compare_metric_back(json_object_get(w, "abs_diff"));
    const json_t *ev = json_object_get(w, "event_id");
    o->worst_event_known = o->has_worst && json_is_integer(ev);
    o->worst_event = json_integer_value(ev);
    o->dtype = oq_dtype_parse(json_string_value(json_object_get(j, "dtype")));
    o->ref_dtype = oq_dtype_parse(json_string_value(json_object_get(j, "reference_dtype")));
    o->num_elements = json_integer_value(json_object_get(j, "num_elements"));
    const char *rule = str_of(pad, "rule");
    o->padding_rule = rule && !strcmp(rule, "report")         ? OQ_PADDING_REPORT
                      : rule && !strcmp(rule, "as-reference") ? OQ_PADDING_AS_REFERENCE
                                                              : OQ_PADDING_ZERO;
}

/* An exact sum as its parts, smallest first, each a C99 hex float (exact); a non-finite sum
 * as its value, "inf" or "nan". */
static json_t *fsum_json(const oq_fsum *s)
{
    json_t *a = json_array();
    char t[40];
    for (int32_t i = 0; s->special == 0.0 && i < s->n; i++) {
        snprintf(t, sizeof t, "%a", s->part[i]);
        json_array_append_new(a, json_string(t));
    }
    if (s->special != 0.0)
        json_array_append_new(a, json_string(isnan(s->special) ? "nan" : s->special > 0 ? "inf" : "-inf"));
    return a;
}

/* An exact sum back from its parts (or from the one hex float of a summary written before
 * 2026-12-05, then exact only to a double); 0 when there is none. */
static int fsum_back(const json_t *j, oq_fsum *s)
{
    memset(s, 0, sizeof *s);
    if (json_is_string(j)) {
        oq_fsum_add(s, strtod(json_string_value(j), NULL));
        return 1;
    }
    size_t i;
    const json_t *p;
    json_array_foreach(j, i, p) {
        if (!json_is_string(p)) return 0;
        oq_fsum_add(s, strtod(json_string_value(p), NULL));
    }
    return json_is_array(j);
}

/* A configuration's output over its batches: a comparison record (compare-impl.h) with the
 * batch of each worst element and of the first non-zero padding, and how many batches. */
static json_t *output_result_json(const oq_output_result *r)
{
    json_t *j = NULL;
    if (oq_compare_result_to_json(&r->all, &j, NULL)) return NULL;
    json_object_set_new(j, "output", json_string(r->all.name));
    json_object_set_new(j, "batches", json_integer(r->n_batches));
    /* exact: a merge of shards adds these, and gets the unsharded run's mean_abs, rms and rel_l2 */
    if (r->sums_known)
        json_object_set_new(j, "sums", json_pack("{s:o, s:o, s:o}", "abs", fsum_json(&r->sum_abs), "sq",
                                                 fsum_json(&r->sum_sq), "ref_sq", fsum_json(&r->sum_ref_sq)));
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(j, "worst"), i, e) {
        json_object_set_new(e, "batch", json_integer(r->worst_batch[i]));
        if (r->worst_event_known >> i & 1u) json_object_set_new(e, "event_id", json_integer(r->worst_event[i]));
    }
    json_t *failing = json_object_get(j, "worst_failing");
    if (json_is_object(failing)) {
        json_object_set_new(failing, "batch", json_integer(r->worst_failing_batch));
        if (r->worst_failing_event_known)
            json_object_set_new(failing, "event_id", json_integer(r->worst_failing_event));
    }
    json_t *first = json_object_get(json_object_get(j, "padding"), "first_nonzero");
    if (json_is_object(first)) json_object_set_new(first, "batch", json_integer(r->first_pad_nonzero_batch));
    return j;
}

static int output_result_back(const json_t *j, oq_output_result *r)
{
    memset(r, 0, sizeof *r);
    if (oq_compare_result_from_json(j, &r->all, NULL)) return 0;
    const char *name = str_of(j, "output");
    if (name) snprintf(r->all.name, sizeof r->all.name, "%s", name);
    r->n_batches = json_integer_value(json_object_get(j, "batches"));
    const json_t *sums = json_object_get(j, "sums");
    r->sums_known = fsum_back(json_object_get(sums, "abs"), &r->sum_abs) &&
                    fsum_back(json_object_get(sums, "sq"), &r->sum_sq) &&
                    fsum_back(json_object_get(sums, "ref_sq"), &r->sum_ref_sq);
    if (r->sums_known) {
        r->all.sum_abs = oq_fsum_value(&r->sum_abs);
        r->all.sum_sq = oq_fsum_value(&r->sum_sq);
        r->all.sum_ref_sq = oq_fsum_value(&r->sum_ref_sq);
    }
    for (int32_t i = 0; i < r->all.worst_count; i++) {
        const json_t *w = json_array_get(json_object_get(j, "worst"), (size_t)i), *ev = json_object_get(w, "event_id");
        r->worst_batch[i] = json_integer_value(json_object_get(w, "batch"));
        r->worst_event[i] = json_integer_value(ev);
        if (json_is_integer(ev)) r->worst_event_known |= 1u << i;
    }
    const json_t *failing = json_object_get(j, "worst_failing"), *fev = json_object_get(failing, "event_id");
    r->worst_failing_batch = json_integer_value(json_object_get(failing, "batch"));
    r->worst_failing_event_known = json_is_integer(fev);
    r->worst_failing_event = json_integer_value(fev);
    r->first_pad_nonzero_batch =
        json_integer_value(json_object_get(json_object_get(json_object_get(j, "padding"), "first_nonzero"), "batch"));
    return 1;
}

static int batch_back(const json_t *jb, oq_batch_result *b)
{
    b->index = json_integer_value(json_object_get(jb, "index"));
    b->timed = json_object_get(jb, "first_call_s") != NULL;
    b->first_call_s = json_number_value(json_object_get(jb, "first_call_s"));
    b->repeat = (int)json_integer_value(json_object_get(jb, "repeat"));
    b->warmup = (int)json_integer_value(json_object_get(jb, "warmup"));
    b->calls = (int)json_integer_value(json_object_get(jb, "calls"));
    b->median_s = num_back(json_object_get(jb, "median_s"));
    b->reference_cached = json_is_true(json_object_get(jb, "reference_cached"));
    const json_t *outs = json_object_get(jb, "outputs");
    b->compared = outs != NULL;
    b->passed = json_is_true(json_object_get(jb, "passed"));
    for (size_t i = 0; i < json_array_size(outs); i++) {
        oq_batch_output *o = OQ_PUSH(b->outputs, b->n_outputs);
        if (!o) return 0;
        batch_output_back(json_array_get(outs, i), o);
    }
    return 1;
}

/* Each failure's fields, beside its text in "failures" (NULL when out of memory). */
static json_t *failed_json(const oq_dispatch_result *d)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < d->n_failures; i++) {
        oq_dispatch_failure f;
        if (oq_dispatch_failure_get(d, i, &f)) {
            json_decref(a);
            return NULL;
        }
        json_array_append_new(a, oq_dispatch_failure_json(&f));
        oq_dispatch_failure_clear(&f);
    }
    return a;
}

static json_t *dispatch_json(const oq_dispatch_result *d)
{
    json_t *records = json_array(), *options = json_array();
    for (size_t i = 0; i < d->log.n_records; i++) {
        const oq_dispatch_record *r = &d->log.records[i];
        json_array_append_new(records, json_pack("{s:s, s:s, s:s, s:s, s:I, s:I}", "node", r->node, "op", r->op,
                                                 "dtype", r->dtype, "kernel", r->kernel_name, "line",
                                                 (json_int_t)r->line, "count", (json_int_t)r->count));
    }
    for (size_t i = 0; i < d->log.n_options; i++) {
        json_t *o = json_object();
        for (size_t k = 0; k < d->log.options[i].n_opts; k++)
            json_object_set_new(o, d->log.options[i].opts[k].name, json_integer(d->log.options[i].opts[k].value));
        json_array_append_new(options, o);
    }
    json_t *jd = json_pack("{s:o, s:o}", "records", records, "options", options);
    if (d->checked) {
        json_object_set_new(jd, "failures", strv_json(d->failures, d->n_failures));
        json_object_set_new(jd, "failed", failed_json(d));
        json_object_set_new(jd, "passed", json_boolean(d->passed));
        json_object_set_new(jd, "math_failures", json_integer((json_int_t)d->n_math_failures));
    }
    json_object_set_new(jd, "advice", strv_json(d->advice, d->n_advice));
    return jd;
}

static int record_back(const json_t *jr, oq_dispatch_log *log)
{
    oq_dispatch_record *r = OQ_PUSH(log->records, log->n_records);
    if (!r) return 0;
    int ok = 1;
    r->node = dup_of(jr, "node", &ok);
    r->op = dup_of(jr, "op", &ok);
    r->dtype = dup_of(jr, "dtype", &ok);
    r->kernel_name = dup_of(jr, "kernel", &ok);
    r->line = (uint64_t)json_integer_value(json_object_get(jr, "line"));
    const json_t *count = json_object_get(jr, "count");
    r->count = count ? (uint64_t)json_integer_value(count) : 1; /* summaries before counts: a line each */
    ok = ok && r->node && r->op && r->dtype && r->kernel_name;
    r->kernel = ok ? oq_sdpa_kernel_from_name(r->kernel_name) : OQ_SDPA_UNKNOWN;
    return ok;
}

static int options_back(const json_t *jo, oq_dispatch_log *log)
{
    oq_dispatch_options *o = OQ_PUSH(log->options, log->n_options);
    if (!o) return 0;
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)jo, name, v) {
        oq_dispatch_option *opt = OQ_PUSH(o->opts, o->n_opts);
        if (!opt || !(opt->name = strdup(name))) return 0;
        opt->value = (long)json_integer_value(v);
    }
    return 1;
}

/* One entry of "failed"; a field it lacks reads as "". */
static int failed_back(const json_t *jf, oq_dispatch_failure *f)
{
    const oq_dispatch_failure view = {oq_dispatch_failure_kind_from_name(str_of(jf, "kind")), (char *)str_of(jf, "node"),
                                      (char *)str_of(jf, "op"), (char *)str_of(jf, "dtype"),
                                      (char *)str_of(jf, "kernel"), (char *)str_of(jf, "expected"),
                                      (uint64_t)json_integer_value(json_object_get(jf, "line"))};
    return oq_dispatch_failure_copy(f, &view, NULL) == OQ_OK;
}

/* "failures" with their fields: from "failed", one entry a failure, or, in a summary written
 * before it (2026-12), recovered from each text and the routing records read before. */
static int failures_back(const json_t *jd, oq_dispatch_result *d)
{
    const json_t *texts = json_object_get(jd, "failures"), *failed = json_object_get(jd, "failed");
    if (failed && json_array_size(failed) != json_array_size(texts)) return 0;
    int ok = 1;
    for (size_t i = 0; ok && i < json_array_size(texts); i++) {
        const char *text = json_string_value(json_array_get(texts, i));
        oq_dispatch_failure f;
        ok = failed ? failed_back(json_array_get(failed, i), &f)
                    : oq_dispatch_failure_from_text(text ? text : "", &d->log, &f, NULL) == OQ_OK;
        ok = ok && oq_dispatch_failure_add(d, text ? text : "", &f) == OQ_OK;
        oq_dispatch_failure_clear(&f);
    }
    return ok;
}

static int dispatch_back(const json_t *jd, oq_dispatch_result *d)
{
    d->recorded = jd != NULL;
    if (!jd) return 1;
    int ok = 1;
    for (size_t i = 0; ok && i < json_array_size(json_object_get(jd, "records")); i++)
        ok = record_back(json_array_get(json_object_get(jd, "records"), i), &d->log);
    for (size_t i = 0; ok && i < json_array_size(json_object_get(jd, "options")); i++)
        ok = options_back(json_array_get(json_object_get(jd, "options"), i), &d->log);
    d->checked = json_object_get(jd, "passed") != NULL;
    d->passed = json_is_true(json_object_get(jd, "passed"));
    d->n_math_failures = (size_t)json_integer_value(json_object_get(jd, "math_failures"));
    return ok && failures_back(jd, d) && strv_back(json_object_get(jd, "advice"), &d->advice, &d->n_advice);
}

static json_t *placement_json(const oq_placement_result *p)
{
    if (p->error) return json_pack("{s:o}", "error", oq_json_text(p->error));
    json_t *j = oq_placement_to_json(p->placement, &p->report);
    if (j) json_object_set_new(j, "witness_errors", strv_json(p->witness_errors, p->n_witness_errors));
    if (j) json_object_set_new(j, "required", json_boolean(p->required));
    if (j && !p->required) json_object_del(j, "passed"); /* evidence only: no verdict to state */
    return j;
}

static int placement_back(const json_t *jp, oq_placement_result *p)
{
    p->recorded = jp != NULL;
    if (!jp) return 1;
    int ok = 1;
    if ((p->error = dup_of(jp, "error", &ok))) return ok;
    p->required = json_is_true(json_object_get(jp, "required"));
    return ok && oq_placement_from_json(jp, &p->placement, &p->report, NULL) == OQ_OK &&
           strv_back(json_object_get(jp, "witness_errors"), &p->witness_errors, &p->n_witness_errors);
}

static json_t *worker_json(const oq_worker_run *w)
{
    json_t *j = json_pack("{s:s, s:s, s:f, s:o}", "start", w->forked ? "fork" : "exec", "ended", w->ended,
                          "seconds", w->seconds, "stderr_tail", oq_json_text(w->stderr_tail));
    if (j && w->signal) json_object_set_new(j, "signal", json_integer(w->signal));
    if (j && *w->beside) json_object_set_new(j, "beside", json_string(w->beside));
    return j;
}

static int worker_back(const json_t *jw, oq_worker_run *w)
{
    w->ran = jw != NULL;
    if (!jw) return 1;
    int ok = 1;
    snprintf(w->ended, sizeof w->ended, "%s", str_of(jw, "ended") ? str_of(jw, "ended") : "");
    w->seconds = json_number_value(json_object_get(jw, "seconds"));
    w->forked = str_of(jw, "start") && !strcmp(str_of(jw, "start"), "fork");
    w->signal = (int)json_integer_value(json_object_get(jw, "signal"));
    w->stderr_tail = dup_of(jw, "stderr_tail", &ok);
    snprintf(w->beside, sizeof w->beside, "%s", str_of(jw, "beside") ? str_of(jw, "beside") : "");
    return ok;
}

static json_t *ep_devices_json(const oq_ep_device *d, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:I}", "ep", d[i].ep_name, "vendor", d[i].ep_vendor,
                                           "hardware", oq_hw_type_name(d[i].hw_type), "device_id",
                                           (json_int_t)d[i].device_id));
    return a;
}

static int ep_devices_back(const json_t *a, oq_config_result *r)
{
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *jd = json_array_get(a, i);
        oq_ep_device *d = OQ_PUSH(r->ep_devices, r->n_ep_devices);
        int ok = d != NULL;
        if (!ok) return 0;
        d->ep_name = dup_of(jd, "ep", &ok);
        d->ep_vendor = dup_of(jd, "vendor", &ok);
        d->hw_type = OQ_HW_OTHER;
        for (int t = OQ_HW_CPU; t <= OQ_HW_OTHER; t++)
            if (str_of(jd, "hardware") && !strcmp(str_of(jd, "hardware"), oq_hw_type_name((oq_hw_type)t)))
                d->hw_type = (oq_hw_type)t;
        d->device_id = (uint32_t)json_integer_value(json_object_get(jd, "device_id"));
        if (!ok || !d->ep_name || !d->ep_vendor) return 0;
    }
    return 1;
}

static json_t *cost_json(const oq_worker_cost *c)
{
    return json_pack("{s:f, s:f, s:f, s:f, s:I, s:I, s:I, s:I, s:I}", "session_s", c->session_s, "run_s", c->run_s,
                     "compare_s", c->compare_s, "io_s", c->io_s, "rss_after_session_bytes",
                     (json_int_t)c->rss_after_session_bytes, "rss_after_first_run_bytes",
                     (json_int_t)c->rss_after_first_run_bytes, "rss_start_bytes", (json_int_t)c->rss_start_bytes,
                     "vmhwm_bytes", (json_int_t)c->vmhwm_bytes, "max_batch_bytes", (json_int_t)c->max_batch_bytes);
}

static void cost_back(const json_t *jc, oq_worker_cost *c)
{
    c->recorded = jc != NULL;
    c->session_s = json_number_value(json_object_get(jc, "session_s"));
    c->run_s = json_number_value(json_object_get(jc, "run_s"));
    c->compare_s = json_number_value(json_object_get(jc, "compare_s"));
    c->io_s = json_number_value(json_object_get(jc, "io_s"));
    c->rss_after_session_bytes = json_integer_value(json_object_get(jc, "rss_after_session_bytes"));
    c->rss_after_first_run_bytes = json_integer_value(json_object_get(jc, "rss_after_first_run_bytes"));
    c->rss_start_bytes = json_integer_value(json_object_get(jc, "rss_start_bytes"));
    c->vmhwm_bytes = json_integer_value(json_object_get(jc, "vmhwm_bytes"));
    c->max_batch_bytes = json_integer_value(json_object_get(jc, "max_batch_bytes"));
}

static json_t *config_shards_json(const oq_config_shard *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *j = json_pack("{s:i, s:s}", "index", v[i].index, "status", oq_verdict_name(v[i].status));
        if (v[i].worker_ran) json_object_set_new(j, "worker_seconds", json_real(v[i].worker_seconds));
        if (v[i].session_tried) json_object_set_new(j, "session_create_s", json_real(v[i].session_create_s));
        json_array_append_new(a, j);
    }
    return a;
}

static int verdict_back(const char *s, oq_verdict *v);

static int config_shards_back(const json_t *a, oq_config_result *r)
{
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *j = json_array_get(a, i);
        oq_config_shard *c = OQ_PUSH(r->shards, r->n_shards);
        if (!c) return 0;
        c->index = (int32_t)json_integer_value(json_object_get(j, "index"));
        verdict_back(str_of(j, "status"), &c->status);
        c->worker_ran = json_object_get(j, "worker_seconds") != NULL;
        c->worker_seconds = json_number_value(json_object_get(j, "worker_seconds"));
        c->session_tried = json_object_get(j, "session_create_s") != NULL;
        c->session_create_s = json_number_value(json_object_get(j, "session_create_s"));
    }
    return 1;
}

/* Every bad reference cache entry: [{"entry": KEY, "reason"}]. */
static json_t *cache_ignored_json(const oq_config_result *r)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < r->n_cache_ignored; i++)
        json_array_append_new(a, json_pack("{s:s, s:s}", "entry", r->cache_ignored[i].entry, "reason",
                                           r->cache_ignored[i].reason));
    return a;
}

/* cache_ignored read back (absent: none, as in a summary written before it); 0 out of memory or
 * a malformed entry. */
static int cache_ignored_back(const json_t *a, oq_config_result *r)
{
    if (!a) return 1;
    if (!json_is_array(a)) return 0;
    size_t n = json_array_size(a);
    r->cache_ignored = n ? calloc(n, sizeof *r->cache_ignored) : NULL;
    if (n && !r->cache_ignored) return 0;
    for (size_t i = 0; i < n; i++) {
        const char *e = str_of(json_array_get(a, i), "entry"), *why = str_of(json_array_get(a, i), "reason");
        if (!e || !why) return 0;
        oq_cache_ignored *c = &r->cache_ignored[r->n_cache_ignored++];
        c->entry = strdup(e);
        c->reason = strdup(why);
        if (!c->entry || !c->reason) return 0;
    }
    return 1;
}

static json_t *teeth_json(const oq_teeth_result *t)
{
    json_t *j = json_object();
    set_str(j, "error", t->error);
    if (t->worker.ran) json_object_set_new(j, "worker", worker_json(&t->worker));
    json_object_set_new(j, "rerun_status", json_string(oq_verdict_name(t->rerun_status)));
    if (t->rerun_dispatch.recorded) json_object_set_new(j, "rerun_dispatch", dispatch_json(&t->rerun_dispatch));
    json_object_set_new(j, "proved", json_boolean(t->proved));
    json_object_set_new(j, "verdict", json_string(t->proved ? "the check failed with MATH forced, as it must"
                                                            : "the check was never seen failing"));
    return j;
}

static int verdict_back(const char *s, oq_verdict *v)
{
    for (int k = OQ_VERDICT_PASSED; k <= OQ_VERDICT_REFERENCE; k++)
        if (s && !strcmp(s, oq_verdict_name((oq_verdict)k))) {
            *v = (oq_verdict)k;
            return 1;
        }
    *v = OQ_VERDICT_FAILED;
    return 0;
}

static int teeth_back(const json_t *jt, oq_teeth_result *t)
{
    t->ran = jt != NULL;
    if (!jt) return 1;
    int ok = 1;
    t->error = dup_of(jt, "error", &ok);
    verdict_back(str_of(jt, "rerun_status"), &t->rerun_status);
    t->proved = json_is_true(json_object_get(jt, "proved"));
    return ok && worker_back(json_object_get(jt, "worker"), &t->worker) &&
           dispatch_back(json_object_get(jt, "rerun_dispatch"), &t->rerun_dispatch);
}

/* A runtime error explained (refusal.h); the pattern's name is null when none matched. */
static json_t *refusal_json(const oq_refusal *r)
{
    json_t *j = json_pack("{s:o}", "pattern", r->id ? json_string(r->id) : json_null());
    set_str(j, "node", r->node);
    set_str(j, "inputs", r->inputs);
    set_str(j, "why", r->why);
    set_str(j, "fix", r->fix);
    set_str(j, "raw", r->raw);
    return j;
}

static int refusal_back(const json_t *j, oq_refusal *r)
{
    if (!j) return 1;
    int ok = 1;
    r->id = dup_of(j, "pattern", &ok);
    r->node = dup_of(j, "node", &ok);
    r->inputs = dup_of(j, "inputs", &ok);
    r->why = dup_of(j, "why", &ok);
    r->fix = dup_of(j, "fix", &ok);
    r->raw = dup_of(j, "raw", &ok);
    return ok;
}

/* The keys in the order summary.json has always had them (the worker's part in the middle). */
/* The marker a streamed writer replaces with the batches' records (see summary_stream). */
#define BATCHES_MARK "\001oq-batches:"

static json_t *config_json(const oq_config_result *r, long mark, int bare);

json_t *oq_config_result_to_json(const oq_config_result *r)
{
    return config_json(r, -1, 0);
}

/* The graph optimization level ORT ran (graph_opt_level) and what set it (graph_opt_level_from:
 * "session_config" where a session.graph_optimization_level entry overrode the option, whose level
 * graph_opt_option keeps; "option"), as the worker's evidence records it (an older one: the option). */
static void graph_opt_json(const oq_config_result *r, const json_t *ev, json_t *j)
{
    json_t *ran = json_object_get(ev, "graph_opt");
    if (json_is_integer(json_object_get(ran, "level"))) {
        json_object_set(j, "graph_opt_level", json_object_get(ran, "level"));
        json_object_set(j, "graph_opt_level_from", json_object_get(ran, "from"));
        if (json_is_integer(json_object_get(ran, "option")))
            json_object_set(j, "graph_opt_option", json_object_get(ran, "option"));
    } else if (r->graph_opt != OQ_GRAPH_OPT_DEFAULT) {
        json_object_set_new(j, "graph_opt_level", json_integer(oq_graph_opt_level(r->graph_opt)));
        json_object_set_new(j, "graph_opt_level_from", json_string("option"));
    }
}

/* The threads and execution mode ORT ran with, where the worker's evidence records them
 * (session_threads: a session config entry's count over --threads, with its source and the
 * option's count); an older one: "threads" as r->threads holds it. */
static void threads_json(const oq_config_result *r, const json_t *ev, json_t *j)
{
    json_object_set_new(j, "threads", json_integer(r->threads));
    json_object_update(j, json_object_get(ev, "session_threads"));
}

/* mark >= 0: "batches" is the marker string BATCHES_MARK<mark> instead of the records;
 * bare: an empty array (the plots add the records they draw). */
static json_t *config_json(const oq_config_result *r, long mark, int bare)
{
    const oq_config *c = &r->config;
    json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:b}", "name", c->name, "runtime", c->runtime, "representation",
                          oq_repr_name(c->repr), "precision", oq_precision_name(c->precision), "kernel",
                          oq_kernel_name(c->kernel), "reference", r->is_reference);
    if (!j) return NULL;
    int ok = 1;
    set_path(j, "model_file", r->model_file, &ok);
    if (r->worker.ran) json_object_set_new(j, "worker", worker_json(&r->worker));
    if (r->reported) {
        json_object_set_new(j, "config", json_string(c->name));
        json_t *ev = r->evidence_json ? json_loads(r->evidence_json, 0, NULL) : NULL;
        threads_json(r, ev, j);
        graph_opt_json(r, ev, j);
        json_decref(ev);
        char m[48];
        snprintf(m, sizeof m, BATCHES_MARK "%ld", mark);
        json_t *batches = mark >= 0 ? json_string(m) : json_array(), *outputs = json_array();
        for (size_t i = 0; mark < 0 && !bare && i < r->n_batches; i++)
            json_array_append_new(batches, oq_batch_record_json(&r->batches[i]));
        for (size_t i = 0; i < r->n_outputs; i++) json_array_append_new(outputs, output_result_json(&r->outputs[i]));
        json_object_set_new(j, "outputs", outputs);
        json_object_set_new(j, "batches", batches);
    }
    if (r->ort_version) {
        json_t *ort = json_pack("{s:s, s:o, s:i}", "version", r->ort_version, "library", oq_json_text(r->ort_library),
                                "api_version", r->ort_api_version);
        if (ort && *r->ort_library_sha256)
            json_object_set_new(ort, "library_sha256", json_string(r->ort_library_sha256));
        json_object_set_new(j, "onnxruntime", ort);
    }
    if (r->session_tried) {
        json_object_set_new(j, "session_create_s", json_real(r->session_create_s));
        json_object_set_new(j, "ep_devices", ep_devices_json(r->ep_devices, r->n_ep_devices));
    }
    if (r->cost.recorded) json_object_set_new(j, "cost", cost_json(&r->cost));
    if (r->evidence_json) json_object_set_new(j, "evidence", json_loads(r->evidence_json, 0, NULL));
    if (r->saved_by) json_object_set_new(j, "saved_by", json_loads(r->saved_by, 0, NULL));
    if (r->cache_writers) json_object_set_new(j, "cache_writers", json_loads(r->cache_writers, 0, NULL));
    if (r->dispatch.recorded) json_object_set_new(j, "dispatch", dispatch_json(&r->dispatch));
    if (r->placement.recorded) json_object_set_new(j, "placement", placement_json(&r->placement));
    json_object_set_new(j, "status", json_string(oq_verdict_name(r->status)));
    set_str(j, "reason", r->reason);
    set_str(j, "cache_warning", r->cache_warning);
    if (r->n_cache_ignored) json_object_set_new(j, "cache_ignored", cache_ignored_json(r));
    if (r->required) json_object_set_new(j, "required", json_true());
    if (r->teeth.ran) json_object_set_new(j, "teeth", teeth_json(&r->teeth));
    if (r->refusal.raw || r->refusal.id) json_object_set_new(j, "refusal", refusal_json(&r->refusal));
    if (r->n_shards) json_object_set_new(j, "shards", config_shards_json(r->shards, r->n_shards));
    if (ok) return j;
    json_decref(j);
    return NULL;
}

static int batches_back(const json_t *a, oq_config_result *r)
{
    for (size_t i = 0; i < json_array_size(a); i++) {
        oq_batch_result *b = OQ_PUSH(r->batches, r->n_batches);
        if (!b) return 0;
        memset(b, 0, sizeof *b);
        if (!batch_back(json_array_get(a, i), b)) return 0;
    }
    return 1;
}

/* The outputs over all batches; a summary from before they were aggregated has them in full
 * in every batch: aggregated here. */
static int outputs_back(const json_t *cfg, oq_config_result *r)
{
    const json_t *a = json_object_get(cfg, "outputs");
    for (size_t i = 0; i < json_array_size(a); i++) {
        oq_output_result *o = OQ_PUSH(r->outputs, r->n_outputs);
        if (!o || !output_result_back(json_array_get(a, i), o)) return 0;
    }
    if (a) return 1;
    oq_compare_result *c = malloc(sizeof *c);
    int ok = c != NULL;
    size_t i, k;
    json_t *b, *o;
    json_array_foreach(json_object_get(cfg, "batches"), i, b) json_array_foreach(json_object_get(b, "outputs"), k, o) {
        if (ok && json_object_get(o, "error_histogram") && !oq_compare_result_from_json(o, c, NULL)) {
            const char *name = str_of(o, "output");
            if (name) snprintf(c->name, sizeof c->name, "%s", name);
            ok = !oq_output_results_add_batch(&r->outputs, &r->n_outputs, c, json_integer_value(json_object_get(b, "index")), NULL,
                                                  NULL);
        }
    }
    free(c);
    for (size_t j = 0; j < r->n_outputs; j++) r->outputs[j].sums_known = 0; /* rebuilt from means */
    return ok;
}

oq_status oq_config_result_from_json(const json_t *j, oq_config_result *r, oq_err *err)
{
    memset(r, 0, sizeof *r);
    const char *name = str_of(j, "config") ? str_of(j, "config") : str_of(j, "name");
    oq_status st = oq_config_parse(name ? name : "", &r->config, err);
    if (st) return st;
    if (!verdict_back(str_of(j, "status"), &r->status))
        return oq_err_set(err, OQ_ERR_FORMAT, "config %s: no status", r->config.name);
    int ok = 1;
    r->is_reference = json_is_true(json_object_get(j, "reference"));
    /* a summary written before the reference had a status of its own said "passed" for it */
    if (r->is_reference && r->status == OQ_VERDICT_PASSED) r->status = OQ_VERDICT_REFERENCE;
    if (!r->is_reference && r->status == OQ_VERDICT_REFERENCE)
        return oq_err_set(err, OQ_ERR_FORMAT, "config %s: status 'reference', but it is not the reference",
                          r->config.name);
    r->reason = dup_of(j, "reason", &ok);
    r->cache_warning = dup_of(j, "cache_warning", &ok);
    ok = ok && cache_ignored_back(json_object_get(j, "cache_ignored"), r);
    r->required = json_is_true(json_object_get(j, "required"));
    r->model_file = oq_json_path_dup(j, "model_file", &ok);
    ok = ok && worker_back(json_object_get(j, "worker"), &r->worker);
    r->reported = json_object_get(j, "batches") != NULL;
    r->threads = oq_session_threads_recorded(j); /* 0 for ORT's default, as the run held it */
    r->graph_opt = graph_opt_back(j);
    ok = ok && batches_back(json_object_get(j, "batches"), r) && outputs_back(j, r);
    const json_t *ort = json_object_get(j, "onnxruntime");
    r->ort_version = dup_of(ort, "version", &ok);
    r->ort_library = dup_of(ort, "library", &ok);
    snprintf(r->ort_library_sha256, sizeof r->ort_library_sha256, "%s",
             str_of(ort, "library_sha256") ? str_of(ort, "library_sha256") : "");
    r->ort_api_version = (int)json_integer_value(json_object_get(ort, "api_version"));
    r->session_tried = json_object_get(j, "session_create_s") != NULL;
    r->session_create_s = json_number_value(json_object_get(j, "session_create_s"));
    ok = ok && ep_devices_back(json_object_get(j, "ep_devices"), r);
    cost_back(json_object_get(j, "cost"), &r->cost);
    if (json_object_get(j, "evidence") && !(r->evidence_json = json_dumps(json_object_get(j, "evidence"), JSON_COMPACT)))
        ok = 0;
    if (json_object_get(j, "saved_by") &&
        !(r->saved_by = json_dumps(json_object_get(j, "saved_by"), JSON_COMPACT | JSON_PRESERVE_ORDER)))
        ok = 0;
    if (json_object_get(j, "cache_writers") &&
        !(r->cache_writers = json_dumps(json_object_get(j, "cache_writers"), JSON_COMPACT | JSON_PRESERVE_ORDER)))
        ok = 0;
    ok = ok && dispatch_back(json_object_get(j, "dispatch"), &r->dispatch) &&
         placement_back(json_object_get(j, "placement"), &r->placement) &&
         teeth_back(json_object_get(j, "teeth"), &r->teeth) && refusal_back(json_object_get(j, "refusal"), &r->refusal) &&
         config_shards_back(json_object_get(j, "shards"), r) && oq_batch_totals_of(r);
    if (ok) return OQ_OK;
    oq_config_result_clear(r);
    return oq_err_set(err, OQ_ERR_NOMEM, "out of memory reading a configuration's result");
}

oq_status oq_config_result_write(const oq_config_result *r, const char *path, oq_err *err)
{
    return write_scratch(path, with_schema(OQ_WORKER_RESULT_SCHEMA, oq_config_result_to_json(r)), err);
}

oq_status oq_config_result_read(const char *path, oq_config_result *r, oq_err *err)
{
    memset(r, 0, sizeof *r);
    oq_status lst;
    json_t *j = load(path, &lst, err);
    oq_status st = !j ? lst : schema_check(j, OQ_WORKER_RESULT_SCHEMA, err);
    if (j && !st) st = oq_config_result_from_json(j, r, err);
    if (j && st) oq_err_prefix(err, "%s: ", path);
    json_decref(j);
    return st;
}

/* ---- batch records as JSON lines ---------------------------------------------------- */

void oq_batch_records_path(const char *result, char *buf, size_t n) { snprintf(buf, n, "%sl", result); }

/* A record line as summary.json holds it (its reals as oq_json_dumps writes them, ", " and
 * ": " between members; record.c writes the configurations' records so): the summary copies
 * the line as it is, without parsing it again. */
#define RECORD_FLAGS JSON_PRESERVE_ORDER

typedef struct record_lines {
    oq_batch_fn fn;
    void *ctx;
} record_lines;

static oq_status record_line(void *ctx, json_t *j, size_t i, oq_err *err)
{
    (void)i;
    const record_lines *rl = ctx;
    oq_batch_result b = {0};
    oq_status st = batch_back(j, &b) ? rl->fn(rl->ctx, &b, j, err) : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    free(b.outputs);
    return st;
}

oq_status oq_batch_records_each(const char *path, oq_batch_fn fn, void *ctx, oq_err *err)
{
    record_lines rl = {fn, ctx};
    return oq_jsonl_each(path, record_line, &rl, err);
}

/* ---- summary.json ---------------------------------------------------------------------- */

static void copy_of(const json_t *o, const char *key, char *buf, size_t n)
{
    snprintf(buf, n, "%s", str_of(o, key) ? str_of(o, key) : "");
}

static json_t *ints_json(const int64_t *v, int64_t n)
{
    json_t *a = json_array();
    for (int64_t i = 0; i < n; i++) json_array_append_new(a, json_integer(v[i]));
    return a;
}

static int64_t *ints_back(const json_t *a, size_t *n, int *ok)
{
    *n = json_array_size(a);
    int64_t *v = calloc(*n ? *n : 1, sizeof *v);
    if (!v) *ok = 0;
    for (size_t i = 0; v && i < *n; i++) v[i] = json_integer_value(json_array_get(a, i));
    return v;
}

static json_t *batch_info_json(const oq_batch_info *b)
{
    json_t *j = json_pack("{s:I}", "index", (json_int_t)b->index);
    int ok = j != NULL;
    set_path(j, "inputs", b->inputs, &ok);
    if (*b->sha256) json_object_set_new(j, "sha256", json_string(b->sha256));
    json_object_set_new(j, "batch_size", json_integer(b->batch_size));
    json_object_set_new(j, "padded_length", json_integer(b->padded_length));
    json_object_set_new(j, "lengths", ints_json(b->lengths, b->batch_size));
    json_object_set_new(j, "event_indices", ints_json(b->event_indices, b->batch_size));
    json_object_set_new(j, "valid_size", json_integer(b->valid_size));
    set_path(j, "expected", b->expected, &ok);
    if (*b->expected_sha256) json_object_set_new(j, "expected_sha256", json_string(b->expected_sha256));
    set_path(j, "source", b->source, &ok);
    if (*b->source_sha256) json_object_set_new(j, "source_sha256", json_string(b->source_sha256));
    set_path(j, "expected_source", b->expected_source, &ok);
    if (*b->expected_source_sha256)
        json_object_set_new(j, "expected_source_sha256", json_string(b->expected_source_sha256));
    if (ok) return j;
    json_decref(j);
    return NULL;
}

static int batch_info_back(const json_t *j, oq_batch_info *b)
{
    int ok = 1;
    size_t n_len, n_idx;
    b->index = json_integer_value(json_object_get(j, "index"));
    b->inputs = oq_json_path_dup(j, "inputs", &ok);
    snprintf(b->sha256, sizeof b->sha256, "%s", str_of(j, "sha256") ? str_of(j, "sha256") : "");
    b->batch_size = json_integer_value(json_object_get(j, "batch_size"));
    b->padded_length = json_integer_value(json_object_get(j, "padded_length"));
    b->lengths = ints_back(json_object_get(j, "lengths"), &n_len, &ok);
    b->event_indices = ints_back(json_object_get(j, "event_indices"), &n_idx, &ok);
    b->valid_size = json_integer_value(json_object_get(j, "valid_size"));
    b->expected = oq_json_path_dup(j, "expected", &ok);
    copy_of(j, "expected_sha256", b->expected_sha256, sizeof b->expected_sha256);
    b->source = oq_json_path_dup(j, "source", &ok);
    copy_of(j, "source_sha256", b->source_sha256, sizeof b->source_sha256);
    b->expected_source = oq_json_path_dup(j, "expected_source", &ok);
    copy_of(j, "expected_source_sha256", b->expected_source_sha256, sizeof b->expected_source_sha256);
    return ok && b->inputs && b->batch_size >= 0 && n_len == (size_t)b->batch_size && n_idx == n_len;
}

static int batch_infos_back(const json_t *a, oq_batch_info **v, size_t *n)
{
    for (size_t i = 0; i < json_array_size(a); i++) {
        oq_batch_info *b = OQ_PUSH(*v, *n);
        if (!b || !batch_info_back(json_array_get(a, i), b)) return 0;
    }
    return 1;
}

/* {"hash", "description"}; the description is canonical JSON text, embedded as an object. */
static json_t *plan_id_json(const char *hash, const char *description)
{
    return json_pack("{s:s, s:o}", "hash", hash, "description",
                     description ? json_loads(description, 0, NULL) : json_object());
}

/* The hash and the canonical text of its description (compact, keys sorted). */
static int plan_id_back(const json_t *j, char hash[65], char **description)
{
    snprintf(hash, 65, "%s", str_of(j, "hash") ? str_of(j, "hash") : "");
    const json_t *d = json_object_get(j, "description");
    *description = d ? json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    return !d || *description;
}

static json_t *slurm_json(const oq_slurm_task *t)
{
    json_t *j = json_object();
    if (*t->job_id) set_str(j, "job_id", t->job_id);
    if (*t->array_job_id) set_str(j, "array_job_id", t->array_job_id);
    if (*t->array_task_id) set_str(j, "array_task_id", t->array_task_id);
    if (*t->node) set_str(j, "node", t->node);
    if (*t->cluster) set_str(j, "cluster", t->cluster);
    return j;
}

static void slurm_back(const json_t *j, oq_slurm_task *t)
{
    copy_of(j, "job_id", t->job_id, sizeof t->job_id);
    copy_of(j, "array_job_id", t->array_job_id, sizeof t->array_job_id);
    copy_of(j, "array_task_id", t->array_task_id, sizeof t->array_task_id);
    copy_of(j, "node", t->node, sizeof t->node);
    copy_of(j, "cluster", t->cluster, sizeof t->cluster);
}

static int by_back(const json_t *j, oq_shard_by *by)
{
    int b = str_of(j, "by") ? oq_shard_by_parse(str_of(j, "by")) : -1;
    *by = b < 0 ? OQ_SHARD_BY_BATCH : (oq_shard_by)b;
    return b >= 0;
}

static json_t *shard_info_json(const oq_shard_info *i)
{
    return json_pack("{s:i, s:i, s:s, s:o, s:o, s:s, s:s, s:I, s:o}", "index", i->index, "count", i->count, "by",
                     oq_shard_by_name(i->by), "batches", ints_json(i->batches, (int64_t)i->n_batches), "configs",
                     strv_json(i->configs, i->n_configs), "host", i->host, "start", i->start, "pid",
                     (json_int_t)i->pid, "slurm", slurm_json(&i->slurm));
}

static int shard_info_back(const json_t *j, oq_shard_info *i)
{
    int ok = 1;
    i->index = (int32_t)json_integer_value(json_object_get(j, "index"));
    i->count = (int32_t)json_integer_value(json_object_get(j, "count"));
    by_back(j, &i->by);
    i->batches = ints_back(json_object_get(j, "batches"), &i->n_batches, &ok);
    ok = ok && strv_back(json_object_get(j, "configs"), &i->configs, &i->n_configs);
    copy_of(j, "host", i->host, sizeof i->host);
    copy_of(j, "start", i->start, sizeof i->start);
    i->pid = json_integer_value(json_object_get(j, "pid"));
    slurm_back(json_object_get(j, "slurm"), &i->slurm);
    return ok;
}

oq_status oq_shard_info_write(const oq_shard_info *i, const char *path, oq_err *err)
{
    json_t *j = json_pack("{s:s}", "schema", OQ_SHARD_STARTED_SCHEMA), *info = shard_info_json(i);
    if (!j || !info || json_object_update(j, info)) json_decref(j), j = NULL;
    json_decref(info);
    return write_new(path, j, err);
}

oq_status oq_shard_info_read(const char *path, oq_shard_info *i, oq_err *err)
{
    memset(i, 0, sizeof *i);
    oq_status lst;
    json_t *j = load(path, &lst, err);
    int ok = j && shard_info_back(j, i);
    json_decref(j);
    if (ok) return OQ_OK;
    oq_shard_info_clear(i);
    return j ? oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", path) : lst;
}

/* A shard that did not report. Its detail names its folder, whose name need not be UTF-8: kept
 * byte for byte beside the text for people ("detail_hex", oq_json_set_path), as a pack with it
 * failed whole and dropped the entry (a missing shard then read as one that reported). */
static json_t *problem_json(const oq_shard_problem *p)
{
    json_t *j = json_pack("{s:i, s:s}", "index", p->index, "state", oq_shard_state_name(p->state));
    if (j && !oq_json_set_path(j, "detail", p->detail)) json_decref(j), j = NULL;
    return j;
}

static json_t *merge_info_json(const oq_merge_info *m)
{
    json_t *reported = json_array(), *problems = json_array();
    int ok = reported && problems;
    for (size_t i = 0; i < m->n_reported; i++) {
        const oq_shard_report *r = &m->reported[i];
        json_t *e = json_pack("{s:i, s:o, s:s, s:s, s:s, s:o}", "index", r->index, "host", oq_json_text(r->host),
                              "start", r->start, "end", r->end, "verdict", oq_run_verdict_name(r->verdict), "slurm",
                              slurm_json(&r->slurm));
        ok = ok && !json_array_append_new(reported, e);
    }
    for (size_t i = 0; i < m->n_problems; i++)
        ok = ok && !json_array_append_new(problems, problem_json(&m->problems[i]));
    if (!ok) { /* never the block without a shard that did not report: none at all (out of memory) */
        json_decref(reported);
        json_decref(problems);
        return NULL;
    }
    return json_pack("{s:i, s:s, s:o, s:o, s:{s:s, s:o}}", "count", m->count, "by", oq_shard_by_name(m->by),
                     "reported", reported, "problems", problems, "merged", "time", m->time, "host",
                     oq_json_text(m->host));
}

/* A verdict word back (an unknown one is not a pass). */
static oq_run_verdict run_verdict_back(const char *word)
{
    for (int v = OQ_RUN_PASSED; v <= OQ_RUN_INTERRUPTED; v++)
        if (word && !strcmp(word, oq_run_verdict_name((oq_run_verdict)v))) return (oq_run_verdict)v;
    return OQ_RUN_FAILED;
}

static oq_status skip_record(void *ctx, long which, json_t *record, oq_err *err)
{
    (void)ctx, (void)which, (void)record, (void)err;
    return OQ_OK;
}

int oq_summary_interrupted(const char *path)
{
    json_t *j = oq_json_scan_file(path, OQ_JSON_SCAN_PLAN_BATCHES | OQ_JSON_SCAN_SHARD_BATCHES, skip_record, NULL, NULL);
    int v = j && run_verdict_back(str_of(j, "verdict")) == OQ_RUN_INTERRUPTED && str_of(j, "verdict");
    json_decref(j);
    return v;
}

void oq_ort_records_free(oq_ort_record *r, size_t n)
{
    for (size_t i = 0; r && i < n; i++) {
        free(r[i].config);
        free(r[i].version);
        free(r[i].library);
    }
    free(r);
}

/* The ONNX Runtime configuration `c` of a summary names, as a record (0: out of memory). */
static int ort_record_back(const json_t *c, oq_ort_record *r)
{
    const json_t *ort = json_object_get(c, "onnxruntime");
    int ok = 1;
    r->config = dup_of(c, "name", &ok);
    r->version = dup_of(ort, "version", &ok);
    r->library = dup_of(ort, "library", &ok);
    snprintf(r->sha256, sizeof r->sha256, "%s", str_of(ort, "library_sha256") ? str_of(ort, "library_sha256") : "");
    return ok;
}

oq_status oq_summary_ort_records(const char *path, oq_ort_record **out, size_t *n, oq_err *err)
{
    *out = NULL;
    *n = 0;
    json_t *j = oq_json_scan_file(path, OQ_JSON_SCAN_PLAN_BATCHES | OQ_JSON_SCAN_SHARD_BATCHES, skip_record, NULL, NULL);
    if (!j || run_verdict_back(str_of(j, "verdict")) == OQ_RUN_INTERRUPTED || !str_of(j, "verdict")) {
        json_decref(j); /* no finished run's record: nothing to hold a shard to */
        return OQ_OK;
    }
    const json_t *configs = json_object_get(j, "configs");
    oq_status st = OQ_OK;
    for (size_t i = 0; !st && i < json_array_size(configs); i++) {
        const json_t *c = json_array_get(configs, i);
        oq_ort_record *r = OQ_PUSH(*out, *n);
        if (!r || !ort_record_back(c, r)) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    json_decref(j);
    if (st) oq_ort_records_free(*out, *n), *out = NULL, *n = 0;
    return st;
}

static int merge_info_back(const json_t *j, oq_merge_info *m)
{
    m->count = (int32_t)json_integer_value(json_object_get(j, "count"));
    by_back(j, &m->by);
    const json_t *reported = json_object_get(j, "reported"), *problems = json_object_get(j, "problems");
    for (size_t i = 0; i < json_array_size(reported); i++) {
        const json_t *jr = json_array_get(reported, i);
        oq_shard_report *r = OQ_PUSH(m->reported, m->n_reported);
        if (!r) return 0;
        r->index = (int32_t)json_integer_value(json_object_get(jr, "index"));
        copy_of(jr, "host", r->host, sizeof r->host);
        copy_of(jr, "start", r->start, sizeof r->start);
        copy_of(jr, "end", r->end, sizeof r->end);
        r->verdict = run_verdict_back(str_of(jr, "verdict"));
        slurm_back(json_object_get(jr, "slurm"), &r->slurm);
    }
    for (size_t i = 0; i < json_array_size(problems); i++) {
        const json_t *jp = json_array_get(problems, i);
        oq_shard_problem *p = OQ_PUSH(m->problems, m->n_problems);
        if (!p) return 0;
        p->index = (int32_t)json_integer_value(json_object_get(jp, "index"));
        p->state = OQ_SHARD_MISSING;
        for (int k = OQ_SHARD_MISSING; k <= OQ_SHARD_INTERRUPTED; k++)
            if (str_of(jp, "state") && !strcmp(str_of(jp, "state"), oq_shard_state_name((oq_shard_state)k)))
                p->state = (oq_shard_state)k;
        int ok = 1;
        char *detail = oq_json_path_dup(jp, "detail", &ok); /* its bytes, where they are not UTF-8 */
        if (!ok) return 0;
        snprintf(p->detail, sizeof p->detail, "%s", detail ? detail : "");
        free(detail);
    }
    const json_t *merged = json_object_get(j, "merged");
    copy_of(merged, "time", m->time, sizeof m->time);
    copy_of(merged, "host", m->host, sizeof m->host);
    return 1;
}

/* {"signal": "SIGINT", "number": 2, "config": NAME or null, "batches_done": 1, "batches": 4} */
static json_t *interruption_json(const oq_interruption *in)
{
    char name[32];
    snprintf(name, sizeof name, "SIG%s", sigabbrev_np(in->signal) ? sigabbrev_np(in->signal) : "?");
    return json_pack("{s:s, s:i, s:o, s:I, s:I}", "signal", name, "number", in->signal, "config",
                     *in->config ? json_string(in->config) : json_null(), "batches_done",
                     (json_int_t)in->batches_done, "batches", (json_int_t)in->n_batches);
}

static void interruption_back(const json_t *j, oq_interruption *in)
{
    in->signal = (int)json_integer_value(json_object_get(j, "number"));
    copy_of(j, "config", in->config, sizeof in->config);
    in->batches_done = (size_t)json_integer_value(json_object_get(j, "batches_done"));
    in->n_batches = (size_t)json_integer_value(json_object_get(j, "batches"));
}

/* What summary_json puts where the batch records go: the file's records come later, from the
 * workers' record files (each array a marker replaced by its records, summary_stream); the plots
 * take a sample of them (every array empty). */
typedef enum summary_batches {
    SUMMARY_BATCH_MARKERS, /* BATCHES_MARK -1: the run's batches; K: configuration K's */
    SUMMARY_NO_BATCHES
} summary_batches;

static json_t *summary_json(const oq_validate_summary *s, summary_batches batches, const oq_run_notes *notes);

json_t *oq_summary_to_json_for_plots(const oq_validate_summary *s)
{
    return summary_json(s, SUMMARY_NO_BATCHES, NULL);
}

/* The reference cache the run used, or none and why. */
static json_t *cache_json(const oq_validate_summary *s)
{
    json_t *j = json_pack("{s:o}", "dir", s->cache_dir ? oq_json_text(s->cache_dir) : json_null());
    if (!s->cache_dir) set_str(j, "off", s->cache_off);
    if (s->cache_shared) json_object_set_new(j, "shared", json_true()); /* a per-user cache's record as it was */
    if (s->cache_shared) set_str(j, "group", s->cache_group);
    if (s->cache_shared) set_str(j, "trust", s->cache_shared == OQ_CACHE_TRUST_SELF ? "self" : "group");
    return j;
}

/* What the configuration's worker recorded of its ONNX Runtime under `key` (build_info: ORT's
 * build string; build_id: the library's ELF build-id), as text (null: none). */
static json_t *worker_ort(const oq_config_result *r, const char *key)
{
    json_t *ev = r->evidence_json ? json_loads(r->evidence_json, 0, NULL) : NULL;
    const char *v = json_string_value(json_object_get(json_object_get(ev, "ort"), key));
    json_t *j = v ? oq_json_text(v) : json_null();
    json_decref(ev);
    return j;
}

/* Every ONNX Runtime build the configurations ran on, each with the configurations it ran: the
 * top-level onnxruntime is the parent's (a merge's: its first shard's), and a campaign split by
 * configuration may have run its shards on other builds. */
static json_t *ort_builds_json(const oq_validate_summary *s)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < s->n_configs; i++) {
        const oq_config_result *r = &s->configs[i];
        if (oq_validate_ort_build_of(s, i) != r) continue;
        json_t *names = json_array();
        for (size_t k = i; k < s->n_configs; k++)
            if (oq_validate_ort_build_of(s, k) == r) json_array_append_new(names, oq_json_text(s->configs[k].config.name));
        json_array_append_new(a, json_pack("{s:s, s:o, s:o, s:o, s:o, s:o}", "version", r->ort_version, "library",
                                           oq_json_text(r->ort_library), "library_sha256",
                                           *r->ort_library_sha256 ? json_string(r->ort_library_sha256) : json_null(),
                                           "build_id", worker_ort(r, "build_id"), "build_info",
                                           worker_ort(r, "build_info"), "configs", names));
    }
    return a;
}

static json_t *summary_json(const oq_validate_summary *s, summary_batches how, const oq_run_notes *notes)
{
    const int marks = how == SUMMARY_BATCH_MARKERS;
    json_t *batches = marks ? json_string(BATCHES_MARK "-1") : json_array(), *configs = json_array();
    for (size_t i = 0; i < s->n_configs; i++)
        json_array_append_new(configs, config_json(&s->configs[i], marks ? (long)i : -1, !marks));
    json_t *j = json_pack("{s:s, s:s, s:s, s:o, s:{s:o, s:o}}", "schema", OQ_VALIDATE_SCHEMA, "start", s->start,
                          "end", s->end, "evidence",
                          s->evidence_json ? json_loads(s->evidence_json, 0, NULL) : json_object(), "model_inputs",
                          "names", strv_json(s->input_names, s->n_input_names), "mask",
                          s->mask_input ? json_string(s->mask_input) : json_null());
    if (!j) {
        json_decref(batches);
        json_decref(configs);
        return NULL;
    }
    json_object_set_new(json_object_get(j, "evidence"), "onnxruntime_builds", ort_builds_json(s));
    if (*s->plan_hash)
        json_object_set_new(j, "plan", marks ? json_pack("{s:s, s:s}", "hash", s->plan_hash, "description", "\001oq-plan")
                                                  : plan_id_json(s->plan_hash, s->plan_description));
    json_object_set_new(j, "reference_cache", cache_json(s));
    json_object_set_new(j, "batches", batches);
    json_object_set_new(j, "configs", configs);
    if (s->shard.count) json_object_set_new(j, "shard", shard_info_json(&s->shard));
    if (s->merged.count && json_object_set_new(j, "shards", merge_info_json(&s->merged))) {
        json_decref(j); /* a merge without its shards' record would read as whole */
        return NULL;
    }
    if (s->merged.n_saved_outputs) /* they stay in the shards' folders: here is where */
        json_object_set_new(j, "saved_outputs", strv_json(s->merged.saved_outputs, s->merged.n_saved_outputs));
    if (s->plotted) {
        json_object_set_new(j, "plots", strv_json(s->plots, s->n_plots));
        set_str(j, "plot_error", s->plot_error);
    }
    if (s->n_requirements) json_object_set_new(j, "requirements", strv_json(s->requirements, s->n_requirements));
    json_object_set_new(j, "notes", oq_run_notes_json(notes));
    json_object_set_new(j, "verdict", json_string(oq_run_verdict_name(s->verdict)));
    set_str(j, "verdict_reason", s->verdict_reason);
    json_object_set_new(j, "exit_status", json_integer(s->exit_status));
    json_object_set_new(j, "tested", json_integer((json_int_t)s->n_tested));
    if (s->interrupted.signal) json_object_set_new(j, "interrupted", interruption_json(&s->interrupted));
    return j;
}

#define SUMMARY_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER)

/* One record at indentation `pad` (after a ",\n" unless it is the first), on one line as the
 * record lines are. */
static int put_record(FILE *f, json_t *j, int pad, size_t i)
{
    char *text = oq_json_dumps(j, RECORD_FLAGS);
    json_decref(j);
    if (!text) return 0;
    int ok = fprintf(f, "%s%*s%s", i ? ",\n" : "[\n", pad + 2, "", text) >= 0;
    free(text);
    return ok;
}

static int end_records(FILE *f, size_t n, int pad)
{
    if (!n) return fputs("[]", f) >= 0;
    return fprintf(f, "\n%*s]", pad, "") > 0;
}

/* A file of record lines (oq_jsonl_put's with RECORD_FLAGS, each one line of JSON) copied a line at a time as the
 * array's elements, one to a line, never parsed: the run parsed each once already (its
 * validate.csv pass). A line cut short (no newline at its end) makes the summary fail. */
static int put_record_lines(FILE *f, const char *path, int pad)
{
    FILE *in = fopen(path, "r");
    if (!in) return 0;
    char *line = NULL;
    size_t cap = 0, n = 0;
    int ok = 1;
    for (ssize_t len; ok && (len = getline(&line, &cap, in)) > 0; n++) {
        ok = len > 1 && line[len - 1] == '\n';
        size_t body = (size_t)len - 1;
        if (ok) ok = fprintf(f, "%s%*s", n ? ",\n" : "[\n", pad + 2, "") >= 0 && fwrite(line, 1, body, f) == body;
    }
    ok = ok && !ferror(in);
    free(line);
    fclose(in);
    return ok && end_records(f, n, pad);
}

/* One array of batch records at indentation `pad`, each record built, written and freed in
 * turn: the document never holds every batch at once. */
static int put_batches(FILE *f, const oq_validate_summary *s, const oq_spilled *sp, long which, int pad)
{
    if (which >= 0 && sp && sp->records && sp->records[which]) return put_record_lines(f, sp->records[which], pad);
    if (which < 0 && sp && sp->batch_list) return put_record_lines(f, sp->batch_list, pad);
    size_t n = which < 0 ? s->n_batches : s->configs[which].n_batches;
    for (size_t i = 0; i < n; i++)
        if (!put_record(f, which < 0 ? batch_info_json(&s->batches[i]) : oq_batch_record_json(&s->configs[which].batches[i]),
                        pad, i))
            return 0;
    return end_records(f, n, pad);
}

/* The document without its batches, then each marker replaced by its records. */
/* From p on (text: the whole dump), each batches marker replaced by its records. */
static int put_marked(FILE *f, const char *text, const char *p, const oq_validate_summary *s, const oq_spilled *sp)
{
    /* as json_dumps writes it: only a "batches" key holds a string there (a marker in a user's
     * string, the command line in the evidence say, is an array element, never such a value) */
    static const char mark[] = "\"batches\": \"\\u0001oq-batches:";
    const char *m;
    int ok = 1;
    while (ok && (m = strstr(p, mark))) {
        const char *line = m;
        while (line > text && line[-1] != '\n') line--;
        int pad = (int)strspn(line, " ");
        char *end;
        long which = strtol(m + sizeof mark - 1, &end, 10);
        fwrite(p, 1, (size_t)(m - p), f);
        fputs("\"batches\": ", f);
        ok = *end == '"' && which >= -1 && (which < 0 || (size_t)which < s->n_configs) && put_batches(f, s, sp, which, pad);
        p = end + 1;
    }
    fputs(p, f);
    return ok;
}

/* A file's bytes copied. */
static int put_file(FILE *f, const char *path)
{
    FILE *in = fopen(path, "r");
    if (!in) return 0;
    char buf[65536];
    size_t n;
    int ok = 1;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, n, f) == n;
    ok = ok && !ferror(in);
    fclose(in);
    return ok;
}

/* The document without its batches, then each marker replaced by its records; the plan's
 * description (every batch by SHA-256) copied as the compact text it is, never parsed. */
static int summary_stream(FILE *f, const oq_validate_summary *s, const oq_spilled *sp)
{
    json_t *j = summary_json(s, SUMMARY_BATCH_MARKERS, sp ? sp->notes : NULL);
    char *text = oq_json_dumps(j, SUMMARY_FLAGS);
    json_decref(j);
    if (!text) return 0;
    static const char plan_mark[] = "\"description\": \"\\u0001oq-plan\"";
    char *pm = strstr(text, plan_mark);
    const char *rest = text;
    int ok = 1;
    if (pm) {
        *pm = '\0';
        ok = put_marked(f, text, text, s, sp);
        fputs("\"description\": ", f);
        if (sp && sp->description) ok = ok && put_file(f, sp->description);
        else fputs(s->plan_description ? s->plan_description : "{}", f);
        rest = pm + sizeof plan_mark - 1;
    }
    ok = ok && put_marked(f, text, rest, s, sp);
    fputc('\n', f);
    free(text);
    return ok;
}

oq_status oq_summary_write(const oq_validate_summary *s, const oq_spilled *sp, const char *path, oq_err *err)
{
    oq_atomic_file af;
    oq_status st = oq_atomic_open(&af, path, 1, err);
    if (st) return st;
    errno = 0;
    if (!summary_stream(af.fp, s, sp)) {
        /* a full disk shows as the stream's error (the batch records are copied unbuffered
         * past the buffer): an output that cannot be written, not an unreadable input */
        const int e = errno, wrote = ferror(af.fp);
        oq_atomic_abort(&af);
        if (wrote) return oq_err_write(err, path, e);
        return oq_err_set(err, OQ_ERR_IO, "%s: out of memory, or a batch record unreadable", path);
    }
    return oq_atomic_commit(&af, err);
}

oq_status oq_spill_batches(oq_validate_summary *s, const char *dir, oq_spilled *sp, oq_err *err)
{
    char list[4200], desc[4200];
    snprintf(list, sizeof list, "%s/batch_list.jsonl", dir);
    snprintf(desc, sizeof desc, "%s/plan_description.json", dir);
    /* (a run's description is on file already: oq_plan_identify wrote it) */
    if (!(sp->brief = calloc(s->n_batches + 1, sizeof *sp->brief))) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    /* each file's failure named with its own errno: a full disk shows at its fputs or fclose */
    FILE *f = NULL;
    oq_status st = oq_fopen_scratch(list, &f, err);
    if (st) return st;
    int ok = 1;
    for (size_t i = 0; ok && i < s->n_batches; i++) {
        sp->brief[i] = oq_batch_brief_of(&s->batches[i]);
        ok = oq_jsonl_put(f, batch_info_json(&s->batches[i]), RECORD_FLAGS);
    }
    ok = fclose(f) == 0 && ok;
    if (!ok) return oq_err_write(err, list, errno);
    FILE *d = NULL;
    if (s->plan_description && (st = oq_fopen_scratch(desc, &d, err))) return st;
    ok = !d || fputs(s->plan_description, d) >= 0;
    if (d) ok = fclose(d) == 0 && ok;
    if (!ok) return oq_err_write(err, desc, errno);
    if (!(sp->batch_list = strdup(list)) || (s->plan_description && !(sp->description = strdup(desc))))
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    sp->n_brief = s->n_batches;
    for (size_t i = 0; i < s->n_batches; i++) oq_batch_info_clear(&s->batches[i]);
    free(s->batches);
    free(s->plan_description);
    s->batches = NULL;
    s->n_batches = 0;
    s->plan_description = NULL;
    return OQ_OK;
}

void oq_spilled_clear(oq_spilled *sp, size_t n_configs)
{
    free(sp->batch_list);
    free(sp->brief);
    free(sp->description);
    for (size_t k = 0; sp->records && k < n_configs; k++) free(sp->records[k]);
    free(sp->records);
    memset(sp, 0, sizeof *sp);
}

static oq_status configs_back(const json_t *a, oq_validate_summary *s, oq_err *err)
{
    if (!(s->configs = calloc(json_array_size(a) + 1, sizeof *s->configs)))
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < json_array_size(a); i++) {
        oq_status st = oq_config_result_from_json(json_array_get(a, i), &s->configs[i], err);
        if (st) return st;
        s->n_configs++;
    }
    return OQ_OK;
}

static oq_status summary_back(const json_t *j, oq_validate_summary *s, oq_err *err)
{
    /* the file's schema, then the one wanted: "(schema X)" alone read as the file's */
    const char *schema = str_of(j, "schema");
    if (!schema)
        return oq_err_set(err, OQ_ERR_FORMAT, "not a validation summary (no schema, want %s)", OQ_VALIDATE_SCHEMA);
    if (strcmp(schema, OQ_VALIDATE_SCHEMA) != 0)
        return oq_err_set(err, OQ_ERR_FORMAT, "not a validation summary (schema '%.200s', want %s)", schema,
                          OQ_VALIDATE_SCHEMA);
    copy_of(j, "start", s->start, sizeof s->start);
    copy_of(j, "end", s->end, sizeof s->end);
    int ok = 1;
    const json_t *ev = json_object_get(j, "evidence");
    if (ev && !(s->evidence_json = json_dumps(ev, JSON_COMPACT))) ok = 0;
    if (json_object_get(j, "plan")) ok = ok && plan_id_back(json_object_get(j, "plan"), s->plan_hash, &s->plan_description);
    ok = ok && batch_infos_back(json_object_get(j, "batches"), &s->batches, &s->n_batches);
    if (!ok) return oq_err_set(err, OQ_ERR_FORMAT, "its batches or plan cannot be read");
    oq_status st = configs_back(json_object_get(j, "configs"), s, err);
    if (st) return st;
    s->exit_status = (int)json_integer_value(json_object_get(j, "exit_status"));
    s->verdict = run_verdict_back(str_of(j, "verdict"));
    s->n_tested = (size_t)json_integer_value(json_object_get(j, "tested"));
    if (json_object_get(j, "interrupted")) interruption_back(json_object_get(j, "interrupted"), &s->interrupted);
    const json_t *mi = json_object_get(j, "model_inputs");
    ok = strv_back(json_object_get(mi, "names"), &s->input_names, &s->n_input_names);
    s->mask_input = dup_of(mi, "mask", &ok);
    const json_t *cache = json_object_get(j, "reference_cache");
    s->cache_dir = dup_of(cache, "dir", &ok);
    s->cache_off = dup_of(cache, "off", &ok);
    s->cache_shared = json_is_true(json_object_get(cache, "shared"));
    const char *trust = json_string_value(json_object_get(cache, "trust"));
    if (s->cache_shared && trust && !strcmp(trust, "self")) s->cache_shared = OQ_CACHE_TRUST_SELF;
    s->cache_group = dup_of(cache, "group", &ok);
    s->verdict_reason = dup_of(j, "verdict_reason", &ok);
    ok = ok && strv_back(json_object_get(j, "requirements"), &s->requirements, &s->n_requirements);
    s->plotted = json_object_get(j, "plots") != NULL;
    ok = ok && strv_back(json_object_get(j, "plots"), &s->plots, &s->n_plots);
    s->plot_error = dup_of(j, "plot_error", &ok);
    if (json_object_get(j, "shard")) ok = ok && shard_info_back(json_object_get(j, "shard"), &s->shard);
    if (json_object_get(j, "shards")) ok = ok && merge_info_back(json_object_get(j, "shards"), &s->merged);
    ok = ok && strv_back(json_object_get(j, "saved_outputs"), &s->merged.saved_outputs, &s->merged.n_saved_outputs);
    return ok ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
}

oq_status oq_validate_summary_read(const char *path, oq_validate_summary **summary, oq_err *err)
{
    OQ_NEED(err, path);
    OQ_NEED(err, summary);
    *summary = NULL;
    oq_validate_summary *s = calloc(1, sizeof *s);
    if (!s) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status lst;
    json_t *j = load(path, &lst, err);
    oq_status st = j ? summary_back(j, s, err) : lst;
    if (j && st) oq_err_prefix(err, "%s: ", path);
    json_decref(j);
    if (st) oq_validate_summary_free(s);
    else *summary = s;
    return st;
}

typedef struct spill {
    const char *prefix;
    size_t n;
    FILE **files;    /* per configuration, opened at its first record */
    char **paths;
} spill;

static oq_status spill_record(void *ctx, long which, json_t *rec, oq_err *err)
{
    spill *sp = ctx;
    if (which < 0) return OQ_OK; /* the batch list, the description's: the merge takes the plan's */
    while (sp->n <= (size_t)which) {
        FILE **f = OQ_PUSH(sp->files, sp->n);
        char **p = f ? realloc(sp->paths, sp->n * sizeof *sp->paths) : NULL;
        if (!p) {
            sp->n -= f != NULL;
            return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        }
        sp->paths = p;
        p[sp->n - 1] = NULL;
    }
    if (!sp->files[which]) {
        char path[4200];
        snprintf(path, sizeof path, "%s%ld.jsonl", sp->prefix, which);
        if (!(sp->paths[which] = strdup(path))) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        oq_status st = oq_fopen_scratch(path, &sp->files[which], err);
        if (st) return st;
    }
    if (!oq_jsonl_put(sp->files[which], json_incref(rec), RECORD_FLAGS)) return oq_err_write(err, sp->paths[which], errno);
    return OQ_OK;
}

oq_status oq_validate_summary_read_spilled(const char *path, const char *prefix, oq_validate_summary **summary,
                                           char ***records, size_t *n_records, oq_run_notes *notes, oq_err *err)
{
    *summary = NULL;
    spill sp = {.prefix = prefix};
    oq_validate_summary *s = calloc(1, sizeof *s);
    /* the description's batch list and the shard's batch indices are the plan's: skipped */
    json_t *j = s ? oq_json_scan_file(path, OQ_JSON_SCAN_PLAN_BATCHES | OQ_JSON_SCAN_SHARD_BATCHES, spill_record, &sp,
                                      err)
                  : NULL;
    oq_status st = !s ? oq_err_set(err, OQ_ERR_NOMEM, "out of memory") : j ? summary_back(j, s, err) : err->status;
    if (j && st) oq_err_prefix(err, "%s: ", path);
    if (!st) st = oq_run_notes_back(json_object_get(j, "notes"), notes, path, err);
    json_decref(j);
    for (size_t i = 0; i < sp.n; i++)
        if (sp.files[i] && fclose(sp.files[i]) && !st) st = oq_err_write(err, sp.paths[i], errno);
    free(sp.files);
    *records = sp.paths;
    *n_records = sp.n;
    if (st) oq_validate_summary_free(s);
    else *summary = s;
    return st;
}

oq_status oq_error_record_write(const char *path, const oq_err *e, oq_err *err)
{
    /* the --json refusal's document (ortqual-error/1), so that one reader serves both; files of
     * older runs ("ortqual.validate/1", no command or exit_code) are still read */
    return write_new(path, json_pack("{s:s, s:s, s:s, s:o, s:i}", "schema", OQ_ERROR_SCHEMA, "command", "validate",
                                     "status", oq_status_str(e->status), "error", oq_json_text(e->msg),
                                     "exit_code", oq_status_exit_code(e->status)), err);
}

oq_status oq_error_record_read(const char *path, char *msg, size_t n, oq_err *err)
{
    oq_status lst;
    json_t *j = load(path, &lst, err);
    if (!j) return lst;
    snprintf(msg, n, "%s", str_of(j, "error") ? str_of(j, "error") : "?");
    json_decref(j);
    return OQ_OK;
}

/* ---- the plan's identity and the prepared split (shards/plan.json) ------------------------ */

/* A path set by set_path gone, its bytes too. */
static void del_path(json_t *j, const char *key)
{
    char hk[64];
    json_object_del(j, key);
    snprintf(hk, sizeof hk, "%s_hex", key);
    json_object_del(j, hk);
}

/* The EP libraries as [name, {"sha256", "size"}]: by content, as the model is, so that the same
 * library at another path (another node's copy) is the same plan and a library changed in place
 * is not. */
static json_t *ep_contents_json(const oq_validate_plan *p)
{
    json_t *v = json_array();
    for (size_t i = 0; i < p->n_ep_libs; i++)
        json_array_append_new(v, json_pack("[o, {s:s, s:I}]", oq_json_text(p->ep_lib_names[i]), "sha256",
                                           p->ep_lib_content[i].sha256, "size", (json_int_t)p->ep_lib_content[i].size));
    return v;
}

/* The plan's identity: the worker plan without where its files are (model, weights and EP
 * libraries by content, the batches and the result file left out: the description lists the
 * batches once), and without the ORT library's path: the same build by another path (a link, the
 * search) is the same plan, and another build is refused by content at a shard's start
 * (oq_shard_runtimes_start) and by the merge. */
static json_t *identity_json(const oq_validate_plan *p)
{
    json_t *j = plan_json(p);
    if (!j) return NULL;
    del_path(json_object_get(j, "runtime"), "ort_lib");
    if (p->ep_lib_content) json_object_set_new(json_object_get(j, "runtime"), "ep_libs", ep_contents_json(p));
    del_path(j, "batches_file"); /* the batches are named by content below */
    json_object_del(j, "n_batches");
    json_object_del(j, "padded_length"); /* the batches' */
    del_path(j, "result");
    json_object_del(j, "progress"); /* how the worker talks, not what it runs */
    json_object_del(j, "words");
    del_path(j, "cache_dir"); /* where outputs are cached changes none of them */
    json_object_del(j, "cache_shared");
    json_object_del(j, "ref_outputs"); /* the cache's check: the reference's own (its weights') */
    del_path(j, "ref_stream"); /* nor the run's scratch file that carries them */
    json_object_del(j, "ref_stream_fd");
    del_path(j, "model");
    del_path(j, "weights");
    json_object_del(j, "model_sha256"); /* it is "model" here */
    json_object_del(j, "weights_sha256"); /* and this "weights" */
    if (p->model) json_object_set_new(j, "model", json_string(p->model_sha256 ? p->model_sha256 : ""));
    if (p->weights) json_object_set_new(j, "weights", json_string(p->weights_sha256 ? p->weights_sha256 : ""));
    return j;
}

/* The description's text as json_dumps(COMPACT | SORT_KEYS) writes it, the batch list written
 * and hashed entry by entry ("batches" sorts first), never held: a plan of 10^5 batches is
 * ~10 MB of text. */
static void desc_put(oq_plan_desc *d, const char *text, size_t n)
{
    oq_sha256_update(&d->h, text, n);
    d->ok = d->ok && fwrite(text, 1, n, d->f) == n;
}

oq_status oq_plan_desc_begin(oq_plan_desc *d, const char *path, oq_err *err)
{
    memset(d, 0, sizeof *d);
    oq_sha256_init(&d->h);
    oq_status st = oq_fopen_scratch(path, &d->f, err);
    if (st) return st;
    d->ok = 1;
    desc_put(d, "{\"batches\":[", 12);
    return d->ok ? OQ_OK : oq_err_write(err, path, errno);
}

void oq_plan_desc_batch(oq_plan_desc *d, const oq_batch_info *b)
{
    char entry[256], expected[96] = ""; /* keys sorted: "expected" first */
    if (*b->expected_sha256) snprintf(expected, sizeof expected, "\"expected\":\"%s\",", b->expected_sha256);
    int n = snprintf(entry, sizeof entry, "%s{%s\"index\":%lld,\"sha256\":\"%s\"}", d->n++ ? "," : "", expected,
                     (long long)b->index, b->sha256);
    if (d->f) desc_put(d, entry, n > 0 && (size_t)n < sizeof entry ? (size_t)n : 0);
}

oq_status oq_plan_desc_end(oq_plan_desc *d, const oq_validate_opts *o, const oq_validate_plan *plans,
                           const char *path, char hash[65], oq_err *err)
{
    json_t *configs = json_array(), *required = json_array();
    for (size_t k = 0; k < o->n_configs; k++)
        json_array_append_new(configs, identity_json(&plans[k]));
    for (size_t i = 0; i < o->n_required; i++) json_array_append_new(required, json_string(o->required[i]));
    json_t *rest = json_pack("{s:o, s:{s:o, s:b, s:b}}", "configs", configs, "run", "required", required,
                             "prove_teeth", o->prove_teeth, "save_outputs", o->save_outputs);
    char *tail = rest ? json_dumps(rest, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(rest);
    if (tail && d->f) {
        desc_put(d, "],", 2);
        desc_put(d, tail + 1, strlen(tail + 1)); /* tail's "{" dropped: its keys follow */
    }
    const int made = tail != NULL;
    int ok = d->f && d->ok;
    free(tail);
    if (d->f) ok = fclose(d->f) == 0 && ok;
    d->f = NULL;
    oq_sha256_hex(&d->h, hash);
    if (!made) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    return ok ? OQ_OK : oq_err_write(err, path, errno);
}

/* Appends `key` to the list "a, b" in buf unless it is there. */
static void note_key(char *buf, size_t n, const char *key)
{
    size_t len = strlen(key);
    for (const char *p = buf; (p = strstr(p, key)) != NULL; p++)
        if ((p == buf || (p >= buf + 2 && !strncmp(p - 2, ", ", 2))) &&
            (p[len] == '\0' || p[len] == ','))
            return;
    size_t used = strlen(buf);
    snprintf(buf + used, n - used, "%s%s", used ? ", " : "", key);
}

/* One differing key: an object's by its own differing keys ("runtime.ep_libs"), a text with both
 * values, each to SHOWN characters (a SHA-256 as other messages show it), so that the line says
 * what to change. */
#define SHOWN 12
static void note_difference(const char *prefix, const char *key, const json_t *a, const json_t *b,
                            char *buf, size_t n);

/* The keys whose values differ between two objects. */
static void differing_keys(const char *prefix, const json_t *a, const json_t *b, char *buf, size_t n)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)a, key, v)
        if (!json_equal(v, json_object_get(b, key))) note_difference(prefix, key, v, json_object_get(b, key), buf, n);
    json_object_foreach((json_t *)b, key, v) if (!json_object_get(a, key)) note_difference(prefix, key, NULL, v, buf, n);
}

/* The EP libraries (runtime.ep_libs) of the same names, each one whose content differs by its
 * name and SHA-256s ("runtime.ep_libs[cuda] 'c9fe...' vs '01ab...'"); 0 where the names differ. */
static int ep_libs_difference(const char *name, const json_t *a, const json_t *b, char *buf,
                              size_t n)
{
    if (strcmp(name, "runtime.ep_libs") || json_array_size(a) != json_array_size(b)) return 0;
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *name_a = json_array_get(json_array_get(a, i), 0);
        if (!json_is_string(name_a) || !json_equal(name_a, json_array_get(json_array_get(b, i), 0))) return 0;
    }
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *x = json_array_get(a, i), *y = json_array_get(b, i);
        char lib[300];
        if (json_equal(x, y)) continue;
        snprintf(lib, sizeof lib, "%s[%s]", name, json_string_value(json_array_get(x, 0)));
        note_difference("", lib, json_object_get(json_array_get(x, 1), "sha256"),
                        json_object_get(json_array_get(y, 1), "sha256"), buf, n);
    }
    return 1;
}

static void note_difference(const char *prefix, const char *key, const json_t *a, const json_t *b,
                            char *buf, size_t n)
{
    char name[256];
    snprintf(name, sizeof name, "%s%s%s", prefix, *prefix ? "." : "", key);
    if (ep_libs_difference(name, a, b, buf, n)) return;
    if (json_is_object(a) && json_is_object(b) && !*prefix) {
        differing_keys(name, a, b, buf, n);
        return;
    }
    if (json_is_string(a) && json_is_string(b)) {
        const char *va = json_string_value(a), *vb = json_string_value(b);
        char both[400];
        snprintf(both, sizeof both, "%s '%.*s%s' vs '%.*s%s'", name, SHOWN, va, strlen(va) > SHOWN ? "..." : "", SHOWN,
                 vb, strlen(vb) > SHOWN ? "..." : "");
        note_key(buf, n, both);
        return;
    }
    note_key(buf, n, name);
}

/* The items of a list "a, b, c" (cut in place), at most `cap`; how many. */
static size_t list_items(char *list, char **items, size_t cap)
{
    size_t n = 0;
    for (char *p = list; *p && n < cap;) {
        char *next = strstr(p, ", ");
        items[n++] = p;
        if (!next) break;
        *next = 0;
        p = next + 2;
    }
    return n;
}

/* An item's key: its text before " '" (a value shown), all of it otherwise. */
static size_t key_len(const char *item)
{
    const char *q = strstr(item, " '");
    return q ? (size_t)(q - item) : strlen(item);
}

/* The configurations' differences, each once; one whose key another configuration shows with
 * other values ("model 'a' vs 'b'" and "model 'c' vs 'd'") by configuration, so that the two can
 * be told apart. */
#define DIFF_ITEMS 64
static void configs_difference(const json_t *ca, const json_t *cb, char *buf, size_t n)
{
    size_t nc = json_array_size(ca);
    char(*own)[1024] = calloc(nc ? nc : 1, sizeof *own);
    char *(*items)[DIFF_ITEMS] = calloc(nc ? nc : 1, sizeof *items);
    size_t *count = calloc(nc ? nc : 1, sizeof *count);
    for (size_t k = 0; own && items && count && k < nc; k++) {
        differing_keys("", json_array_get(ca, k), json_array_get(cb, k), own[k], sizeof own[k]);
        count[k] = list_items(own[k], items[k], DIFF_ITEMS);
    }
    for (size_t k = 0; own && items && count && k < nc; k++) {
        const char *name = json_string_value(json_object_get(json_array_get(ca, k), "config"));
        for (size_t i = 0; i < count[k]; i++) {
            const char *item = items[k][i];
            size_t len = key_len(item);
            int ambiguous = 0;
            for (size_t j = 0; j < nc && !ambiguous; j++)
                for (size_t t = 0; j != k && t < count[j] && !ambiguous; t++)
                    ambiguous = key_len(items[j][t]) == len && !strncmp(items[j][t], item, len) &&
                                strcmp(items[j][t], item);
            char labelled[1400];
            snprintf(labelled, sizeof labelled, "configs[%zu] %s %s", k, name ? name : "?", item);
            note_key(buf, n, ambiguous ? labelled : item);
        }
    }
    free(own), free(items), free(count);
}

/* (read whole: only when two plans differ, to say how) */
void oq_plan_difference(const char *a_path, const char *b_path, char *buf, size_t n)
{
    json_t *ja = json_load_file(a_path, 0, NULL), *jb = json_load_file(b_path, 0, NULL);
    const json_t *ca = json_object_get(ja, "configs"), *cb = json_object_get(jb, "configs");
    buf[0] = 0;
    if (!json_equal(json_object_get(ja, "batches"), json_object_get(jb, "batches"))) note_key(buf, n, "batches");
    if (json_array_size(ca) != json_array_size(cb)) note_key(buf, n, "configs");
    else configs_difference(ca, cb, buf, n);
    differing_keys("", json_object_get(ja, "run"), json_object_get(jb, "run"), buf, n);
    json_decref(ja);
    json_decref(jb);
}

/* Each shard's part, for people (the split is recomputed): its batches as a range, so the
 * file does not grow with them. */
static json_t *assignment_json(const oq_shard_plan *p)
{
    json_t *a = json_array();
    for (int32_t i = 0; i < p->count; i++) {
        oq_shard_part part = oq_shard_part_of(p->count, p->by, p->n_batches, p->n_configs, i);
        json_t *c = json_array();
        for (size_t k = 0; k < p->n_configs; k++)
            if (oq_shard_part_config(&part, k) >= 0) json_array_append_new(c, json_integer((json_int_t)k));
        json_array_append_new(a, json_pack("{s:i, s:I, s:I, s:o}", "index", i, "first_batch", (json_int_t)part.batch_lo,
                                           "batches", (json_int_t)(part.batch_hi - part.batch_lo), "configs", c));
    }
    return a;
}

/* A file beside plan.json, by its name there. */
static const char *base_name(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : path ? path : "";
}

oq_status oq_shard_plan_write(const oq_shard_plan *p, const json_t *outputs, const json_t *ort, const char *path,
                               oq_err *err)
{
    json_t *batches = json_pack("{s:s, s:I, s:s, s:I, s:{s:I, s:I}}", "file", base_name(p->batches_path), "count",
                                (json_int_t)p->n_batches, "sha256", p->batches_sha256, "padded_length",
                                (json_int_t)p->padded_length, "first", "batch_size", (json_int_t)p->first_batch_size,
                                "padded_length", (json_int_t)p->first_padded_length);
    json_t *j = json_pack("{s:s, s:{s:s, s:s}, s:i, s:s, s:o, s:o, s:O, s:o, s:{s:s, s:s}, s:{s:b}}", "schema",
                          OQ_SHARD_PLAN_SCHEMA, "plan", "hash", p->hash, "description", base_name(p->description_path),
                          "shards", p->count, "shard_by", oq_shard_by_name(p->by), "assignment", assignment_json(p),
                          "configs", strv_json(p->configs, p->n_configs), "outputs", outputs, "batches", batches,
                          "prepared", "time", p->prepared, "host", p->host, "run", "prove_teeth", p->prove_teeth);
    if (j && ort && json_object_set(j, "onnxruntime", (json_t *)ort)) {
        json_decref(j);
        j = NULL;
    }
    return write_new(path, j, err);
}

/* What plan.json says must hold together: a known split, the description and batch list it
 * names (their SHA-256, each file read a block at a time), and the assignment that split
 * gives (it is written for people; the split is recomputed). */
static oq_status shard_plan_check(const json_t *j, const oq_shard_plan *p, oq_err *err)
{
    char hex[65];
    if (p->count < 1 || p->count > 100000 || !p->n_configs)
        return oq_err_set(err, OQ_ERR_FORMAT, "not a shard plan: no shards or configurations");
    if (oq_sha256_file(p->description_path, hex, err) || strcmp(hex, p->hash) != 0)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s is not the description of plan %.16s (missing or changed since the "
                                              "shards were prepared)", p->description_path, p->hash);
    if (oq_sha256_file(p->batches_path, hex, err) || strcmp(hex, p->batches_sha256) != 0)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s is not the prepared batch list (missing or changed since the shards "
                                              "were prepared)", p->batches_path);
    json_t *want = assignment_json(p);
    int same = json_equal(want, json_object_get(j, "assignment"));
    json_decref(want);
    if (!same)
        return oq_err_set(err, OQ_ERR_FORMAT, "its assignment is not the split of %zu batches and %zu configurations "
                                              "into %d shards by %s", p->n_batches, p->n_configs, (int)p->count,
                          oq_shard_by_name(p->by));
    return OQ_OK;
}

/* dir/NAME for a file plan.json names; NULL when the name is not a plain file name there. */
static char *beside(const char *dir, const char *name)
{
    char *path = NULL;
    if (!name || !*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) return NULL;
    return asprintf(&path, "%s/%s", dir, name) < 0 ? NULL : path;
}

static oq_status shard_plan_back(const json_t *j, const char *dir, oq_shard_plan *p, oq_err *err)
{
    const char *schema = str_of(j, "schema") ? str_of(j, "schema") : "";
    if (!strcmp(schema, "ortqual.shards/1"))
        return oq_err_set(err, OQ_ERR_FORMAT, "prepared by an older ortqual (schema ortqual.shards/1, every batch in "
                                              "one file): prepare the shards again (--prepare-shards N --force)");
    if (strcmp(schema, OQ_SHARD_PLAN_SCHEMA) != 0)
        return oq_err_set(err, OQ_ERR_FORMAT, "not a shard plan (schema %s)", OQ_SHARD_PLAN_SCHEMA);
    p->count = (int32_t)json_integer_value(json_object_get(j, "shards"));
    int by = str_of(j, "shard_by") ? oq_shard_by_parse(str_of(j, "shard_by")) : -1;
    p->by = by < 0 ? OQ_SHARD_BY_BATCH : (oq_shard_by)by;
    const json_t *prepared = json_object_get(j, "prepared"), *plan = json_object_get(j, "plan"),
                 *batches = json_object_get(j, "batches"), *first = json_object_get(batches, "first");
    copy_of(prepared, "time", p->prepared, sizeof p->prepared);
    copy_of(prepared, "host", p->host, sizeof p->host);
    copy_of(plan, "hash", p->hash, sizeof p->hash);
    copy_of(batches, "sha256", p->batches_sha256, sizeof p->batches_sha256);
    json_int_t n = json_integer_value(json_object_get(batches, "count"));
    p->n_batches = n > 0 ? (size_t)n : 0;
    p->padded_length = json_integer_value(json_object_get(batches, "padded_length"));
    p->first_batch_size = json_integer_value(json_object_get(first, "batch_size"));
    p->first_padded_length = json_integer_value(json_object_get(first, "padded_length"));
    p->prove_teeth = json_is_true(json_object_get(json_object_get(j, "run"), "prove_teeth"));
    if (!(p->description_path = beside(dir, str_of(plan, "description"))) ||
        !(p->batches_path = beside(dir, str_of(batches, "file"))) ||
        !strv_back(json_object_get(j, "configs"), &p->configs, &p->n_configs))
        return oq_err_set(err, OQ_ERR_FORMAT, "its plan, configurations or batches cannot be read");
    if (by < 0) return oq_err_set(err, OQ_ERR_FORMAT, "shard_by is neither batch nor config");
    return shard_plan_check(j, p, err);
}

/* One null or array of names per configuration. */
static int outputs_well_formed(const json_t *a, size_t n_configs)
{
    if (json_array_size(a) != n_configs) return 0;
    for (size_t k = 0; k < n_configs; k++) {
        const json_t *names = json_array_get(a, k);
        for (size_t i = 0; json_is_array(names) && i < json_array_size(names); i++)
            if (!json_is_string(json_array_get(names, i))) return 0;
        if (!json_is_null(names) && !json_is_array(names)) return 0;
    }
    return 1;
}

oq_status oq_shard_plan_outputs(const char *outdir, size_t n_configs, json_t **outputs, oq_err *err)
{
    char path[4096];
    oq_status st;
    *outputs = NULL;
    snprintf(path, sizeof path, "%s/shards/plan.json", outdir);
    json_t *j = load(path, &st, err);
    if (!j) return st;
    json_t *a = json_object_get(j, "outputs");
    if (a && !outputs_well_formed(a, n_configs))
        st = oq_err_set(err, OQ_ERR_FORMAT, "%s: outputs is not one list of output names (or null) per configuration "
                        "of the plan's %zu", path, n_configs);
    else *outputs = json_incref(a);
    json_decref(j);
    return st;
}

/* A SHA-256 in hex, or none (""): 1; anything else: 0. */
static int sha256_back(const json_t *v, char out[65])
{
    const char *t = json_string_value(v);
    *out = '\0';
    if (!v) return 1;
    if (!t || strlen(t) != 64 || strspn(t, "0123456789abcdef") != 64) return 0;
    memcpy(out, t, 65);
    return 1;
}

oq_status oq_shard_plan_ort(const char *outdir, char sha256[2][65], oq_err *err)
{
    char path[4096];
    oq_status st;
    *sha256[0] = *sha256[1] = '\0';
    snprintf(path, sizeof path, "%s/shards/plan.json", outdir);
    json_t *j = load(path, &st, err);
    if (!j) return st;
    const json_t *o = json_object_get(j, "onnxruntime");
    if (o && (!json_is_object(o) || !sha256_back(json_object_get(o, "reference"), sha256[0]) ||
              !sha256_back(json_object_get(o, "under_test"), sha256[1])))
        st = oq_err_set(err, OQ_ERR_FORMAT, "%s: onnxruntime is not the SHA-256 of the reference's and the tested "
                        "ONNX Runtime library", path);
    json_decref(j);
    return st;
}

int oq_batch_info_put(FILE *f, const oq_batch_info *b) { return oq_jsonl_put(f, batch_info_json(b), RECORD_FLAGS); }

oq_status oq_batch_sink_put(oq_batch_sink *k, const oq_batch_info *b, oq_err *err)
{
    if (k->keep_brief && !(k->n & (k->n + 1))) { /* grown at 2^m - 1: amortised, no count up front */
        oq_batch_brief *v = realloc(k->brief, 2 * (k->n + 1) * sizeof *v);
        if (!v) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        k->brief = v;
    }
    if (!oq_batch_info_put(k->list, b))
        return ferror(k->list) ? oq_err_write(err, k->list_path, errno) : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (k->keep_brief) k->brief[k->n] = oq_batch_brief_of(b);
    if (k->desc) oq_plan_desc_batch(k->desc, b);
    if (!k->n) {
        k->first_bl[0] = b->batch_size;
        k->first_bl[1] = b->padded_length;
    }
    if (b->padded_length > k->padded_length) k->padded_length = b->padded_length;
    k->n++;
    if (k->on_put) k->on_put(k->put_ctx, k->n, k->planned);
    /* at 10^6 batches preparation takes minutes: a Ctrl-C waited for all of them */
    if (k->interrupt && *k->interrupt)
        return oq_err_set(err, OQ_ERR_RUNTIME, "interrupted by SIG%s while preparing inputs (%zu of %zu batches written)",
                          sigabbrev_np(*k->interrupt) ? sigabbrev_np(*k->interrupt) : "?", k->n, k->planned);
    return OQ_OK;
}

/* One line of a plan's batch list: it must be batch i; to fn when in [lo, hi). */
static oq_status plan_batch_line(const oq_shard_plan *p, const char *line, size_t len, size_t i, size_t lo, size_t hi,
                                 oq_batch_info_fn fn, void *ctx, oq_err *err)
{
    if (i >= p->n_batches)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: more than the %zu batches of the plan", p->batches_path, p->n_batches);
    if (i < lo || i >= hi) return OQ_OK;
    json_t *j = json_loadb(line, len, 0, NULL);
    oq_batch_info b = {0};
    oq_status st = j && batch_info_back(j, &b) && b.index == (int64_t)i
                       ? fn(ctx, &b, err)
                       : oq_err_set(err, OQ_ERR_FORMAT, "%s:%zu: not batch %zu of the plan", p->batches_path, i + 1, i);
    oq_batch_info_clear(&b);
    json_decref(j);
    return st;
}

oq_status oq_shard_plan_batches_each(const oq_shard_plan *p, size_t lo, size_t hi, oq_batch_info_fn fn, void *ctx,
                                     oq_err *err)
{
    FILE *in = fopen(p->batches_path, "r");
    if (!in) return oq_err_set(err, OQ_ERR_IO, "%s: %s", p->batches_path, strerror(errno));
    oq_sha256 h;
    oq_sha256_init(&h);
    char *line = NULL, hex[65];
    size_t cap = 0, i = 0;
    oq_status st = OQ_OK;
    for (ssize_t len; !st && (len = getline(&line, &cap, in)) > 0; i++) {
        oq_sha256_update(&h, line, (size_t)len);
        st = plan_batch_line(p, line, (size_t)len, i, lo, hi, fn, ctx, err);
    }
    if (!st && ferror(in)) st = oq_err_set(err, OQ_ERR_IO, "%s: read error", p->batches_path);
    free(line);
    fclose(in);
    oq_sha256_hex(&h, hex);
    if (!st && (i != p->n_batches || strcmp(hex, p->batches_sha256) != 0))
        st = oq_err_set(err, OQ_ERR_FORMAT, "%s: changed since the shards were prepared (%zu of %zu batches, or "
                                            "another SHA-256)", p->batches_path, i, p->n_batches);
    return st;
}

typedef struct batch_lines {
    const char *path;
    oq_batch_info_fn fn;
    void *ctx;
} batch_lines;

static oq_status batch_list_line(void *ctx, json_t *j, size_t i, oq_err *err)
{
    const batch_lines *bl = ctx;
    oq_batch_info b = {0};
    oq_status st = batch_info_back(j, &b) ? bl->fn(bl->ctx, &b, err)
                                          : oq_err_set(err, OQ_ERR_FORMAT, "%s:%zu: not a batch", bl->path, i + 1);
    oq_batch_info_clear(&b);
    return st;
}

oq_status oq_batch_list_each(const char *path, oq_batch_info_fn fn, void *ctx, oq_err *err)
{
    batch_lines bl = {path, fn, ctx};
    return oq_jsonl_each(path, batch_list_line, &bl, err);
}

oq_status oq_shard_plan_read(const char *outdir, oq_shard_plan *plan, oq_err *err)
{
    OQ_NEED(err, outdir);
    OQ_NEED(err, plan);
    memset(plan, 0, sizeof *plan);
    char path[4096];
    snprintf(path, sizeof path, "%s/shards/plan.json", outdir);
    if (access(path, F_OK) != 0)
        return oq_err_set(err, OQ_ERR_NOT_FOUND,
                          "%s not found: prepare the shards first (validate or replay with shard.prepare "
                          "instead of shard.index, or 'ortqual slurm')", path);
    oq_status lst;
    json_t *j = load(path, &lst, err);
    snprintf(path, sizeof path, "%s/shards", outdir);
    oq_status st = j ? shard_plan_back(j, path, plan, err) : lst;
    snprintf(path, sizeof path, "%s/shards/plan.json", outdir);
    if (j && st) oq_err_prefix(err, "%s: ", path);
    json_decref(j);
    if (st) oq_shard_plan_clear(plan);
    return st;
}
