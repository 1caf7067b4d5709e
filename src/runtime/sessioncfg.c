/* Session config entries (AddSessionConfigEntry) checked before a session is made: ORT stores any
 * key and any value, and reads only those it knows, so a misspelt key (or "maybe" for a switch)
 * is a silent no-op that leaves the session as it was. The keys are those of
 * onnxruntime_session_options_config_keys.h in the headers ortqual is built with
 * (tests/unit/test_session_config.c reads that header and checks that every key is here). */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxruntime_c_api.h"
#include "ortqual/runtime.h"

#include "runtime/sessioncfg-impl.h"
#include "status/args-impl.h"

/* What a key's value may be, as the header documents it. */
typedef enum value_kind {
    ANY = 0,  /* a path, a name, a list: ORT's to judge */
    SWITCH,   /* "0" or "1" */
    INTEGER,  /* a base-10 integer from lo to hi */
    LEVEL,    /* session.graph_optimization_level's names */
    MODE,     /* session.execution_mode's names */
    FORMAT    /* "ORT" or "ONNX" */
} value_kind;

/* An integer key's range: ORT parses counts, levels and durations as int32 and byte sizes as
 * 64-bit, and a negative value means nothing to all but one (the block size's -1). ORT refuses an
 * int32 out of range only when the session is made (every configuration then fails), or reads
 * a negative count as its default: checked here before the run. */
#define COUNT INTEGER, 0, INT32_MAX
#define BYTES INTEGER, 0, INT64_MAX

/* Keys that provably cannot change an output: logging, profiling, how idle threads spin (not
 * how many there are, nor their affinities, from which ORT may take the count: an operator may
 * split its work by the thread count). A session that differs from another only in these runs
 * the same numbers. Of these only the log id cannot change a timing as well: spinning is what
 * an idle worker does between the runs timed, profiling records every node of every run,
 * verbose logging writes lines while a session is made (timed with include_session). */
#define NEUTRAL OQ_SESSION_SAME_OUTPUTS
#define NAME_ONLY (OQ_SESSION_SAME_OUTPUTS | OQ_SESSION_SAME_TIMING)

static const struct {
    const char *key;
    value_kind kind;
    long long lo, hi;
    int neutral;
} keys[] = {
    {"session.disable_prepacking", SWITCH},
    {"session.use_env_allocators", SWITCH},
    {"session.load_model_format", FORMAT},
    {"session.save_model_format", FORMAT},
    {"session.set_denormal_as_zero", SWITCH},
    {"session.disable_quant_qdq", SWITCH},
    {"session.disable_qdq_constant_folding", SWITCH},
    {"session.disable_double_qdq_remover", SWITCH},
    {"session.enable_quant_qdq_cleanup", SWITCH},
    {"optimization.enable_gelu_approximation", SWITCH},
    {"optimization.enable_cast_chain_elimination", SWITCH},
    {"session.disable_aot_function_inlining", SWITCH},
    {"optimization.memory_optimizer_config", ANY},
    {"optimization.enable_memory_probe_recompute_config", ANY},
    {"optimization.disable_specified_optimizers", ANY},
    {"optimization.constant_folding_max_output_size_in_bytes", BYTES},
    {"session.graph_optimizations_loop_level", COUNT},
    {"session.use_device_allocator_for_initializers", SWITCH},
    {"session.inter_op.allow_spinning", SWITCH, 0, 0, NEUTRAL},
    {"session.intra_op.allow_spinning", SWITCH, 0, 0, NEUTRAL},
    {"session.intra_op.spin_duration_us", COUNT, NEUTRAL},
    {"session.inter_op.spin_duration_us", COUNT, NEUTRAL},
    {"session.intra_op.spin_backoff_max", COUNT, NEUTRAL},
    {"session.inter_op.spin_backoff_max", COUNT, NEUTRAL},
    {"session.use_ort_model_bytes_directly", SWITCH},
    {"session.use_ort_model_bytes_for_initializers", SWITCH},
    {"session.use_memory_mapped_ort_model", SWITCH},
    {"session.qdqisint8allowed", SWITCH},
    {"session.x64quantprecision", SWITCH},
    {"optimization.minimal_build_optimizations", ANY},
    {"ep.nnapi.partitioning_stop_ops", ANY},
    {"session.dynamic_block_base", COUNT},
    {"session.force_spinning_stop", SWITCH, 0, 0, NEUTRAL},
    {"session.strict_shape_type_inference", SWITCH},
    {"session.allow_released_opsets_only", SWITCH},
    {"session.node_partition_config_file", ANY},
    {"session.intra_op_thread_affinities", ANY},
    {"session.debug_layout_transformation", SWITCH},
    {"session.disable_cpu_ep_fallback", SWITCH},
    {"session.optimized_model_external_initializers_file_name", ANY},
    {"session.optimized_model_external_initializers_min_size_in_bytes", BYTES},
    {"session.model_external_initializers_file_folder_path", ANY},
    {"session.save_external_prepacked_constant_initializers", SWITCH},
    {"session.collect_node_memory_stats_to_file", ANY},
    {"session.resource_cuda_partitioning_settings", ANY},
    {"session.layer_assignment_settings", ANY},
    {"session.name_based_layer_assignment", ANY},
    {"session.max_shape_override", ANY},
    {"ep.context_enable", SWITCH},
    {"ep.context_file_path", ANY},
    {"ep.context_embed_mode", SWITCH},
    {"ep.context_node_name_prefix", ANY},
    {"ep.share_ep_contexts", SWITCH},
    {"ep.stop_share_ep_contexts", SWITCH},
    {"ep.context_model_external_initializers_file_name", ANY},
    {"session.compile_only", SWITCH},
    {"mlas.enable_gemm_fastmath_arm64_bfloat16", SWITCH},
    {"mlas.use_lut_gemm", SWITCH},
    {"mlas.disable_kleidiai", SWITCH},
    {"mlas.kleidiai.conv_igemm_max_work", BYTES},
    {"session.qdq_matmulnbits_accuracy_level", COUNT},
    {"session.qdq_matmulnbits_block_size", INTEGER, -1, INT32_MAX},
    {"session.enable_dq_matmulnbits_fusion", SWITCH},
    {"ep.dynamic.workload_type", ANY},
    {"session.disable_model_compile", SWITCH},
    {"session.fail_on_suboptimal_compiled_model", SWITCH},
    {"ep.dynamic.qnn_htp_performance_mode", ANY},
    {"session.record_ep_graph_assignment_info", SWITCH},
    {"ep.enable_weightless_ep_context_nodes", SWITCH},
    {"ep.enable_weightless", SWITCH},
    {"ep.context_source_model_path", ANY},
    {"session.intra_op_num_threads", COUNT},
    {"session.inter_op_num_threads", COUNT},
    {"session.enable_cpu_mem_arena", SWITCH},
    {"session.enable_mem_pattern", SWITCH},
    {"session.log_id", ANY, 0, 0, NAME_ONLY},
    {"session.log_severity_level", INTEGER, 0, 4, NEUTRAL},
    {"session.log_verbosity_level", COUNT, NEUTRAL},
    {"session.enable_profiling", ANY, 0, 0, NEUTRAL},
    {"session.graph_optimization_level", LEVEL},
    {"session.optimized_model_filepath", ANY},
    {"session.execution_mode", MODE},
    {"session.use_per_session_threads", SWITCH},
    {"session.use_deterministic_compute", SWITCH},
};
#define N_KEYS (sizeof keys / sizeof *keys)

const char *oq_session_config_key(size_t i) { return i < N_KEYS ? keys[i].key : NULL; }

/* Edit distance (insert, delete, replace), for the known key closest to a misspelt one. */
static size_t distance(const char *a, const char *b)
{
    size_t n = strlen(b), row[128];
    if (n >= sizeof row / sizeof *row) return (size_t)-1;
    for (size_t j = 0; j <= n; j++) row[j] = j;
    for (size_t i = 1; a[i - 1]; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= n; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[n];
}

static const char *closest(const char *key)
{
    size_t best = (size_t)-1, at = 0;
    for (size_t i = 0; i < N_KEYS; i++) {
        size_t d = distance(key, keys[i].key);
        if (d < best) best = d, at = i;
    }
    return keys[at].key;
}

static int one_of(const char *v, const char *const *names)
{
    for (; *names; names++)
        if (!strcmp(v, *names)) return 1;
    return 0;
}

int oq_session_config_level(const char *name)
{
    static const struct {
        const char *name;
        int level;
    } levels[] = {{"disable_all", 0}, {"enable_basic", 1}, {"enable_extended", 2}, {"enable_layout", 3}, {"enable_all", 99}};
    for (size_t i = 0; name && i < sizeof levels / sizeof *levels; i++)
        if (!strcmp(name, levels[i].name)) return levels[i].level;
    return -1;
}

json_t *oq_session_graph_opt_ran(oq_graph_opt option, size_t n, const char *const *keys_, const char *const *values)
{
    int entry = -1;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(keys_[i], OQ_SESSION_CONFIG_LEVEL_KEY)) entry = oq_session_config_level(values[i]);
    if (entry >= 0)
        return json_pack("{s:i, s:s, s:i}", "level", entry, "from", "session_config", "option", oq_graph_opt_level(option));
    if (option == OQ_GRAPH_OPT_DEFAULT) return NULL;
    return json_pack("{s:i, s:s}", "level", oq_graph_opt_level(option), "from", "option");
}

int oq_session_config_neutral(const char *key)
{
    return oq_session_config_neutral_for(key, OQ_SESSION_SAME_OUTPUTS);
}

int oq_session_config_neutral_for(const char *key, int same)
{
    for (size_t i = 0; key && i < N_KEYS; i++)
        if (!strcmp(key, keys[i].key)) return (keys[i].neutral & same) == same;
    return 0;
}

int oq_session_as_run(int level, json_t *config, int same)
{
    const char *key;
    json_t *value, *next;
    json_object_foreach_safe(config, next, key, value) {
        int named = strcmp(key, OQ_SESSION_CONFIG_LEVEL_KEY) ? -1 : oq_session_config_level(json_string_value(value));
        if (named >= 0) level = named;
        if (named >= 0 || oq_session_config_neutral_for(key, same)) json_object_del(config, key);
    }
    return level == -1 ? 99 : level;
}

oq_status oq_session_config_repeated(const char *who, const char *field, size_t n, const char *const *keys_,
                                     const char *const *values, oq_err *err)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            if (!strcmp(keys_[i], keys_[j]))
                return oq_err_set(err, OQ_ERR_INVALID_ARG,
                                  "%s: %s[%zu] and [%zu] are both '%s' (values '%s' and '%s'): ORT would keep the last "
                                  "without a word; give each key once",
                                  who, field, j, i, keys_[i], values[j], values[i]);
    return OQ_OK;
}

int oq_session_config_newer(const char *ort_version)
{
    int major = 0, minor = 0;
    if (!ort_version || sscanf(ort_version, "%d.%d", &major, &minor) != 2) return 0;
    return major > 1 || (major == 1 && minor > ORT_API_VERSION);
}

/* Whether `v` is a base-10 integer from lo to hi (strtoll alone would skip spaces, take "" and
 * clamp an overflow). */
static int is_integer(const char *v, long long lo, long long hi)
{
    char *end;
    const char *digits = *v == '-' ? v + 1 : v;
    if (!isdigit((unsigned char)*digits)) return 0;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    return !*end && errno != ERANGE && n >= lo && n <= hi;
}

#define INTRA_KEY "session.intra_op_num_threads"
#define INTER_KEY "session.inter_op_num_threads"
#define MODE_KEY "session.execution_mode"
#define AFFINITY_KEY "session.intra_op_thread_affinities"

/* The value of an integer entry (a count), or -1 where none is given or it is not a count. */
static int count_of(const char *v)
{
    return v && is_integer(v, 0, INT32_MAX) ? (int)strtol(v, NULL, 10) : -1;
}

/* 1 for an entry's parallel mode, 0 for its sequential one, -1 for none or another value. */
static int mode_of(const char *v)
{
    if (!v) return -1;
    if (!strcmp(v, "parallel") || !strcmp(v, "ort_parallel")) return 1;
    return !strcmp(v, "sequential") || !strcmp(v, "ort_sequential") ? 0 : -1;
}

void oq_session_threads_ran(int intra, int inter, size_t n, const char *const *keys_, const char *const *values,
                            oq_session_threads *out)
{
    const char *e_intra = NULL, *e_inter = NULL, *e_mode = NULL, *e_affinity = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(keys_[i], INTRA_KEY)) e_intra = values[i];
        if (!strcmp(keys_[i], INTER_KEY)) e_inter = values[i];
        if (!strcmp(keys_[i], MODE_KEY)) e_mode = values[i];
        if (!strcmp(keys_[i], AFFINITY_KEY)) e_affinity = values[i];
    }
    int ci = count_of(e_intra), ce = count_of(e_inter), m = mode_of(e_mode);
    memset(out, 0, sizeof *out);
    out->intra_option = intra;
    out->inter_option = inter;
    out->intra_entry = ci >= 0;
    out->inter_entry = ce >= 0;
    out->mode_entry = m >= 0;
    out->intra = ci >= 0 ? ci : intra;
    out->intra_default = out->intra == 0;
    out->affinities = e_affinity;
    out->parallel = m >= 0 ? m : inter > 0;
    out->inter = !out->parallel ? 0 : ce >= 0 ? ce : inter;
}

void oq_session_threads_as_run(int intra, int inter, json_t *config, oq_session_threads *out)
{
    static const char *const keys_[] = {INTRA_KEY, INTER_KEY, MODE_KEY};
    const char *values[3];
    for (size_t i = 0; i < 3; i++) values[i] = json_string_value(json_object_get(config, keys_[i]));
    const char *given[3], *value[3];
    size_t n = 0;
    for (size_t i = 0; i < 3; i++)
        if (values[i]) given[n] = keys_[i], value[n++] = values[i];
    oq_session_threads_ran(intra, inter, n, given, value, out);
    for (size_t i = 0; i < 3; i++) json_object_del(config, keys_[i]);
}

/* "KEY": value, "KEY_from": "session_config", "KEY_option": option where an entry set it. */
static void field(json_t *j, const char *key, json_t *value, int entry, json_t *option)
{
    char k[64];
    json_object_set_new(j, key, value);
    if (entry) {
        snprintf(k, sizeof k, "%s_from", key);
        json_object_set_new(j, k, json_string("session_config"));
        snprintf(k, sizeof k, "%s_option", key);
        json_object_set_new(j, k, option);
    } else {
        json_decref(option);
    }
}

json_t *oq_session_threads_json(const oq_session_threads *t, int all)
{
    json_t *j = json_object();
    if (!j) return NULL;
    /* the inter-op count as run: an entry set it in parallel mode, or a mode entry turned the
     * option's count off */
    int inter_entry = (t->parallel && t->inter_entry) || (t->mode_entry && !t->parallel && t->inter_option > 0);
    int parallel_option = t->inter_option > 0;
    /* ORT's default recorded as the count it starts, not as 0 (oq_session_threads_recorded reads 0 back) */
    field(j, "threads", json_integer(t->intra_default ? oq_ort_default_threads() : t->intra), t->intra_entry,
          json_integer(t->intra_option));
    if (t->intra_default) json_object_set_new(j, "threads_from", json_string("ort-default"));
    if (t->affinities) json_object_set_new(j, "thread_affinities", json_string(t->affinities));
    /* parallel mode starts an inter-op pool: its 0 is ORT's default, the intra-op pool's count
     * (the same CreateThreadPoolHelper), recorded as that count as the intra-op one is */
    int inter_default = t->parallel && t->inter == 0;
    if (all || inter_entry || t->parallel)
        field(j, "inter_op_threads", json_integer(inter_default ? oq_ort_default_threads() : t->inter), inter_entry,
              json_integer(t->inter_option));
    if (inter_default) json_object_set_new(j, "inter_op_threads_from", json_string("ort-default"));
    if (all || t->mode_entry)
        field(j, "execution_mode", json_string(t->parallel ? "parallel" : "sequential"), t->mode_entry,
              json_string(parallel_option ? "parallel" : "sequential"));
    return j;
}

int oq_session_threads_recorded(const json_t *record)
{
    const char *from = json_string_value(json_object_get(record, "threads_from"));
    return from && !strcmp(from, "ort-default") ? 0 : (int)json_integer_value(json_object_get(record, "threads"));
}

/* Whether `v` is in the domain of keys[i]; `want` (of n bytes) says the domain. */
static int value_ok(size_t i, const char *v, char *want, size_t n)
{
    static const char *const sw[] = {"0", "1", NULL}, *const fmt[] = {"ORT", "ONNX", NULL};
    static const char *const mode[] = {"sequential", "parallel", "ort_sequential", "ort_parallel", NULL};
    switch (keys[i].kind) {
    case SWITCH: snprintf(want, n, "\"0\" or \"1\""); return one_of(v, sw);
    case INTEGER:
        snprintf(want, n, "a base-10 integer from %lld to %lld", keys[i].lo, keys[i].hi);
        return is_integer(v, keys[i].lo, keys[i].hi);
    case LEVEL:
        snprintf(want, n, "disable_all, enable_basic, enable_extended, enable_layout or enable_all");
        return oq_session_config_level(v) >= 0;
    case MODE: snprintf(want, n, "sequential, parallel, ort_sequential or ort_parallel"); return one_of(v, mode);
    case FORMAT: snprintf(want, n, "ORT or ONNX"); return one_of(v, fmt);
    case ANY: break;
    }
    return 1;
}

oq_status oq_session_config_check(const char *key, const char *value, oq_err *err)
{
    OQ_NEED(err, key);
    OQ_NEED(err, value);
    return oq_session_config_check_for(NULL, key, value, NULL, 0, err);
}

oq_status oq_session_config_check_for(const char *ort_version, const char *key, const char *value, char *warning,
                                      size_t n, oq_err *err)
{
    OQ_NEED(err, key);
    OQ_NEED(err, value);
    if (warning && n) *warning = '\0';
    for (size_t i = 0; i < N_KEYS; i++) {
        if (strcmp(key, keys[i].key)) continue;
        char want[96];
        if (value_ok(i, value, want, sizeof want)) return OQ_OK;
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "session config %s=%s: the value of %s is %s", key, value, key,
                          want);
    }
    if (oq_session_config_newer(ort_version)) { /* it may know keys the headers do not: its own to judge */
        if (warning && n)
            snprintf(warning, n,
                     "session config key '%s' is not a key of ONNX Runtime 1.%d's session options "
                     "(onnxruntime_session_options_config_keys.h, which ortqual is built with); passed unchecked to "
                     "ONNX Runtime %s, which may read it or store it unread",
                     key, ORT_API_VERSION, ort_version);
        return OQ_OK;
    }
    return oq_err_set(err, OQ_ERR_INVALID_ARG,
                      "session config key '%s': not a key of ONNX Runtime's session options (C API %d's "
                      "onnxruntime_session_options_config_keys.h), which stores it unread; did you mean '%s'?",
                      key, ORT_API_VERSION, closest(key));
}

void oq_session_config_warn(const char *ort_version, size_t n, const char *const *keys_, const char *const *values,
                            json_t *warnings)
{
    for (size_t i = 0; i < n; i++) {
        char w[512];
        if (!oq_session_config_check_for(ort_version, keys_[i], values[i], w, sizeof w, NULL) && *w)
            json_array_append_new(warnings, json_string(w));
    }
}
