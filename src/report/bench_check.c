/* A bench summary.json checked before its page is drawn: every key the page, the figures and a
 * reader of the file rely on has the JSON type `ortqual bench` writes, so a hand-edited or
 * foreign file is refused in one line naming the key, never drawn with zeros and dashes where
 * its values did not parse (a latency that is a string showed as "–", a batch that is an
 * object as 0, a row without a status as "?": a page that looked complete). Keys an older
 * bench did not write may be absent; a key that is there must have its type. */
#include <stdio.h>
#include <string.h>

#include "report/report-impl.h"

typedef enum want { W_STR, W_INT, W_NUM, W_BOOL, W_OBJ, W_ARR } want;

typedef struct field {
    const char *key;
    want type;
    int null_ok;  /* bench writes null there when it was not measured or does not apply */
    int required; /* the page cannot stand without it */
} field;

static const char *want_name(want w)
{
    static const char *const names[] = {"a string", "a whole number", "a number", "true or false", "an object",
                                        "an array"};
    return names[w];
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "a whole number";
    case JSON_REAL: return "a number with a fraction";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

static int has_type(const json_t *v, want w)
{
    switch (w) {
    case W_STR: return json_is_string(v);
    case W_INT: return json_is_integer(v);
    case W_NUM: return json_is_number(v);
    case W_BOOL: return json_is_boolean(v);
    case W_OBJ: return json_is_object(v);
    default: return json_is_array(v);
    }
}

static oq_status bad(oq_err *err, const char *name, const char *at, const char *key, const char *what)
{
    return oq_err_set(err, OQ_ERR_FORMAT, "%s: %s%s%s: %s", name, at, *at ? "." : "", key, what);
}

/* Every field of `f` in object `o` (at `at`, e.g. "results[3].stats_ms"). */
static oq_status check_fields(const json_t *o, const field *f, size_t n, const char *name, const char *at, oq_err *err)
{
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_object_get(o, f[i].key);
        char what[96];
        if (!v && f[i].required) return bad(err, name, at, f[i].key, "missing");
        if (!v || has_type(v, f[i].type) || (json_is_null(v) && f[i].null_ok)) continue;
        snprintf(what, sizeof what, "want %s%s, got %s", want_name(f[i].type), f[i].null_ok ? " or null" : "",
                 type_name(v));
        return bad(err, name, at, f[i].key, what);
    }
    return OQ_OK;
}

/* An object or null at o[key] (absent is fine), checked against its own fields. */
static oq_status check_part(const json_t *o, const char *key, const field *f, size_t n, const char *name,
                            const char *at, oq_err *err)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_object(v)) return OQ_OK; /* its type was checked with the row's fields */
    char sub[128];
    snprintf(sub, sizeof sub, "%s.%s", at, key);
    return check_fields(v, f, n, name, sub, err);
}

static const field row_fields[] = {
    {"variant", W_STR, 0, 1},         {"status", W_STR, 0, 1},          {"error", W_STR, 1, 0},
    {"device", W_STR, 1, 0},          {"dtype", W_STR, 1, 0},           {"representation", W_STR, 1, 0},
    {"kernel", W_STR, 1, 0},          {"kernel_observed", W_STR, 1, 0}, {"masked", W_BOOL, 0, 0},
    {"shapes", W_STR, 1, 0},          {"io_binding", W_STR, 1, 0},      {"batch", W_INT, 0, 1},
    {"seq_len", W_INT, 0, 1},         {"valid_tokens", W_INT, 1, 0},    {"valid_pairs", W_INT, 1, 0},
    {"heads", W_INT, 1, 0},           {"kv_heads", W_INT, 1, 0},        {"head_dim", W_INT, 1, 0},
    {"threads", W_INT, 0, 0},         {"inter_op_threads", W_INT, 0, 0}, {"warmup", W_INT, 0, 0},
    {"iters", W_INT, 0, 0},           {"session_ms", W_NUM, 1, 0},      {"first_run_ms", W_NUM, 1, 0},
    {"stats_ms", W_OBJ, 0, 1},        {"samples_ms", W_ARR, 0, 0},      {"memory", W_OBJ, 1, 0},
    {"accuracy", W_OBJ, 1, 0},        {"profile", W_OBJ, 1, 0},         {"seq_dim", W_STR, 1, 0},
    {"dims", W_OBJ, 0, 0},            {"inputs", W_ARR, 0, 0},          {"outputs", W_ARR, 1, 0}};

static const field stats_fields[] = {{"mean", W_NUM, 1, 0}, {"std", W_NUM, 1, 0},   {"min", W_NUM, 1, 0},
                                     {"max", W_NUM, 1, 0},  {"p50", W_NUM, 1, 0},   {"p90", W_NUM, 1, 0},
                                     {"p95", W_NUM, 1, 0},  {"p99", W_NUM, 1, 0},   {"p99.9", W_NUM, 1, 0}};

static const field memory_fields[] = {{"rss_before_bytes", W_NUM, 1, 0}, {"peak_rss_bytes", W_NUM, 1, 0},
                                      {"peak_rss_exact", W_BOOL, 0, 0},  {"vmhwm_bytes", W_NUM, 1, 0},
                                      {"vmhwm_row", W_BOOL, 0, 0},       {"gpu_bytes", W_NUM, 1, 0},
                                      {"gpu_note", W_STR, 1, 0},         {"allocator_stats", W_OBJ, 1, 0}};

static const field accuracy_fields[] = {{"max_abs_err", W_NUM, 1, 0}, {"max_rel_err", W_NUM, 1, 0},
                                        {"nan_count", W_INT, 1, 0},   {"inf_count", W_INT, 1, 0},
                                        {"pad_nonzero", W_INT, 1, 0}, {"rtol", W_NUM, 0, 0},
                                        {"atol", W_NUM, 0, 0},        {"over_tol", W_INT, 0, 0}};

static const field profile_fields[] = {{"runs", W_INT, 0, 0},      {"run_ms", W_NUM, 1, 0},
                                       {"node_ms", W_NUM, 1, 0},   {"kernel_ms", W_NUM, 1, 0},
                                       {"kernel_events", W_INT, 0, 0}, {"kernel_source", W_STR, 1, 0},
                                       {"kernel_names", W_ARR, 0, 0}, {"file", W_STR, 0, 0}};

#define N_OF(a) (sizeof a / sizeof *a)

/* A status the page knows: any other word would be counted as neither ok nor failed. */
static int known_status(const char *s)
{
    static const char *const words[] = {"ok", "skipped", "unsupported", "oom", "failed", "error"};
    for (size_t i = 0; i < N_OF(words); i++)
        if (!strcmp(s, words[i])) return 1;
    return 0;
}

/* A model point's dimensions are whole numbers ("batch=4 seq=512"). */
static oq_status check_dims(const json_t *r, const char *name, const char *at, oq_err *err)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)json_object_get(r, "dims"), k, v) {
        char sub[128];
        snprintf(sub, sizeof sub, "%s.dims", at);
        if (!json_is_integer(v)) {
            char what[96];
            snprintf(what, sizeof what, "want a whole number, got %s", type_name(v));
            return bad(err, name, sub, k, what);
        }
    }
    return OQ_OK;
}

static oq_status check_row(const json_t *r, size_t i, const char *name, oq_err *err)
{
    char at[64];
    snprintf(at, sizeof at, "results[%zu]", i);
    if (!json_is_object(r)) return oq_err_set(err, OQ_ERR_FORMAT, "%s: %s: want an object, got %s", name, at, type_name(r));
    oq_status st = check_fields(r, row_fields, N_OF(row_fields), name, at, err);
    if (!st) st = check_part(r, "stats_ms", stats_fields, N_OF(stats_fields), name, at, err);
    if (!st) st = check_part(r, "memory", memory_fields, N_OF(memory_fields), name, at, err);
    if (!st) st = check_part(r, "accuracy", accuracy_fields, N_OF(accuracy_fields), name, at, err);
    if (!st) st = check_part(r, "profile", profile_fields, N_OF(profile_fields), name, at, err);
    if (!st) st = check_dims(r, name, at, err);
    if (st) return st;
    const char *status = json_string_value(json_object_get(r, "status"));
    if (!known_status(status)) {
        char what[192];
        snprintf(what, sizeof what, "want ok, skipped, unsupported, oom, failed or error, got '%.80s'", status);
        return bad(err, name, at, "status", what);
    }
    /* an ok row was timed: without its median the page showed a dash where its time belongs */
    if (!strcmp(status, "ok") && !json_is_number(json_object_get(json_object_get(r, "stats_ms"), "p50")))
        return bad(err, name, at, "stats_ms.p50", "want a number (the row is ok: it was timed)");
    return OQ_OK;
}

static const field doc_fields[] = {{"schema", W_STR, 0, 0}, {"mode", W_STR, 0, 0},  {"end", W_STR, 0, 0},
                                   {"created", W_STR, 0, 0}, /* "end" before OQ_BENCH_SCHEMA */
                                   {"config", W_OBJ, 0, 1}, {"system", W_OBJ, 0, 0},
                                   {"command_line", W_ARR, 0, 0}};

oq_status oq_report_bench_check(const json_t *s, const char *name, oq_err *err)
{
    const json_t *results = json_object_get(s, "results");
    if (!json_is_array(results)) return oq_err_set(err, OQ_ERR_FORMAT, "%s: no \"results\" array", name);
    oq_status st = check_fields(s, doc_fields, N_OF(doc_fields), name, "", err);
    const char *mode = json_string_value(json_object_get(s, "mode"));
    if (!st && mode && strcmp(mode, "attention") && strcmp(mode, "model"))
        st = bad(err, name, "", "mode", "want attention or model");
    /* bench writes a row for every variant x shape it planned, run or not: none is not a sweep
     * (a truncated or hand-made file), and its page would be an empty table under NOT TESTED */
    if (!st && !json_array_size(results))
        st = oq_err_set(err, OQ_ERR_FORMAT, "%s: \"results\" has no rows: not a sweep ortqual bench wrote", name);
    size_t i;
    json_t *r;
    json_array_foreach(results, i, r) if (!st) st = check_row(r, i, name, err);
    return st;
}
