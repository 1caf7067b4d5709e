/* Sessions: options, creation from file or memory, running with oq_tensors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime-impl.h"
#include "runtime/sessioncfg-impl.h"
#include "status/args-impl.h"

typedef struct io_info {
    char *name;
    oq_dtype dtype;  /* OQ_DTYPE_UNDEFINED: not a tensor, or a type ortqual cannot feed */
    int rank;        /* -1: unknown */
    int64_t dims[OQ_MAX_DIMS]; /* -1 (or 0 from some exporters): symbolic */
} io_info;

struct oq_session {
    oq_runtime *rt;
    OrtSession *sess;
    OrtMemoryInfo *cpu_mem;
    size_t n_in, n_out;
    io_info *in, *out;
    int profiling;
    const char *ep, *attach;
};

/* ORT's element types carry the same numbers as onnx.TensorProto, as does oq_dtype. */
static oq_dtype dtype_from_ort(ONNXTensorElementDataType t)
{
    switch (t) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: return OQ_DTYPE_FLOAT32;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: return OQ_DTYPE_FLOAT16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16: return OQ_DTYPE_BFLOAT16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: return OQ_DTYPE_FLOAT64;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: return OQ_DTYPE_INT64;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32: return OQ_DTYPE_INT32;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL: return OQ_DTYPE_BOOL;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8: return OQ_DTYPE_UINT8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8: return OQ_DTYPE_INT8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16: return OQ_DTYPE_UINT16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16: return OQ_DTYPE_INT16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32: return OQ_DTYPE_UINT32;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64: return OQ_DTYPE_UINT64;
    default: return OQ_DTYPE_UNDEFINED;
    }
}

/* ---- options ------------------------------------------------------------------ */

/* ORT's levels in the order of oq_graph_opt, the default first. */
static const int ort_levels[] = {-1, ORT_DISABLE_ALL, ORT_ENABLE_BASIC, ORT_ENABLE_EXTENDED, ORT_ENABLE_ALL};

int oq_graph_opt_level(oq_graph_opt g)
{
    return (unsigned)g < sizeof ort_levels / sizeof *ort_levels ? ort_levels[g] : OQ_GRAPH_OPT_LEVEL_UNKNOWN;
}

int oq_graph_opt_from_level(int level)
{
    for (size_t i = 0; i < sizeof ort_levels / sizeof *ort_levels; i++)
        if (ort_levels[i] == level) return (int)i;
    return -1;
}

/* Inter-op threads only act in ORT's parallel execution mode: asking for them turns it on. */
static oq_status inter_op(oq_runtime *rt, const oq_session_opts *o, OrtSessionOptions *so, oq_err *err)
{
    const OrtApi *api = rt->api;
    if (o->inter_op_threads < 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "inter-op threads %d: must be >= 0",
                          o->inter_op_threads);
    if (!o->inter_op_threads) return OQ_OK;
    oq_status st = oq_ort_status(rt, api->SetSessionExecutionMode(so, ORT_PARALLEL), err,
                                 "SetSessionExecutionMode");
    if (!st)
        st = oq_ort_status(rt, api->SetInterOpNumThreads(so, o->inter_op_threads), err,
                           "SetInterOpNumThreads");
    return st;
}

static oq_status build_options(oq_runtime *rt, const oq_session_opts *o, OrtSessionOptions *so,
                               oq_session *s, oq_err *err)
{
    const OrtApi *api = rt->api;
    oq_status st;
    if (o->intra_op_threads < 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "intra-op threads %d: must be >= 0",
                          o->intra_op_threads);
    if (o->intra_op_threads > 0 &&
        (st = oq_ort_status(rt, api->SetIntraOpNumThreads(so, o->intra_op_threads), err,
                            "SetIntraOpNumThreads")) != OQ_OK)
        return st;
    if ((st = inter_op(rt, o, so, err)) != OQ_OK) return st;
    if ((unsigned)o->graph_opt > OQ_GRAPH_OPT_ALL)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "graph optimization level %d: not an oq_graph_opt",
                          (int)o->graph_opt);
    if (o->graph_opt != OQ_GRAPH_OPT_DEFAULT) {
        GraphOptimizationLevel lvl = (GraphOptimizationLevel)ort_levels[o->graph_opt];
        if ((st = oq_ort_status(rt, api->SetSessionGraphOptimizationLevel(so, lvl), err,
                                "SetSessionGraphOptimizationLevel")) != OQ_OK)
            return st;
    }
    if (o->profile_prefix) {
        if ((st = oq_ort_status(rt, api->EnableProfiling(so, o->profile_prefix), err,
                                "EnableProfiling")) != OQ_OK)
            return st;
        s->profiling = 1;
    }
    for (size_t i = 0; i < o->n_session_configs; i++)
        if (!o->session_config_keys[i] || !o->session_config_values[i])
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_session_create: opts->session_config_%s[%zu] is NULL",
                              o->session_config_keys[i] ? "values" : "keys", i);
    if ((st = oq_session_config_repeated("oq_session_create", "opts->session_config_keys", o->n_session_configs,
                                         o->session_config_keys, o->session_config_values, err)))
        return st;
    for (size_t i = 0; i < o->n_session_configs; i++) {
        const char *k = o->session_config_keys[i], *v = o->session_config_values[i];
        /* ORT would store it unread; one newer than the headers may know it (the caller warns) */
        if ((st = oq_session_config_check_for(rt->version, k, v, NULL, 0, err)) != OQ_OK) return st;
        char what[256];
        snprintf(what, sizeof what, "session config %s=%s", k, v);
        if ((st = oq_ort_status(rt, api->AddSessionConfigEntry(so, k, v), err, what)) != OQ_OK)
            return st;
    }
    return oq_ep_attach(rt, so, o, &s->ep, &s->attach, err);
}

/* ---- model inputs and outputs -------------------------------------------------- */

/* A value whose type has no shape at all (legal ONNX: any rank) reports 0 dimensions, as a
 * scalar does; API 24 tells them apart, so an undeclared shape stays unknown (rank -1) rather
 * than refusing every tensor but a scalar. */
static void io_from_typeinfo(const OrtApi *api, int api_version, OrtTypeInfo *ti, io_info *io)
{
    io->dtype = OQ_DTYPE_UNDEFINED;
    io->rank = -1;
    const OrtTensorTypeAndShapeInfo *tsi = NULL;
    OrtStatus *st = api->CastTypeInfoToTensorInfo(ti, &tsi);
    if (st) {
        api->ReleaseStatus(st);
        return;
    }
    if (!tsi) return; /* a sequence or map, not a tensor */
    ONNXTensorElementDataType et;
    size_t nd = 0;
    if ((st = api->GetTensorElementType(tsi, &et))) {
        api->ReleaseStatus(st);
        return;
    }
    io->dtype = dtype_from_ort(et);
    if (api_version >= 24 && !api->TensorTypeAndShape_HasShape(tsi)) return;
    if ((st = api->GetDimensionsCount(tsi, &nd))) {
        api->ReleaseStatus(st);
        return;
    }
    if (nd > OQ_MAX_DIMS) return;
    if ((st = api->GetDimensions(tsi, io->dims, nd))) {
        api->ReleaseStatus(st);
        return;
    }
    io->rank = (int)nd;
}

typedef OrtStatus *(ORT_API_CALL *name_fn)(const OrtSession *, size_t, OrtAllocator *, char **);
typedef OrtStatus *(ORT_API_CALL *type_fn)(const OrtSession *, size_t, OrtTypeInfo **);

static oq_status query_io(oq_session *s, name_fn get_name, type_fn get_type, size_t n,
                          io_info **out, oq_err *err)
{
    const OrtApi *api = s->rt->api;
    OrtAllocator *alloc = NULL;
    oq_status st = oq_ort_status(s->rt, api->GetAllocatorWithDefaultOptions(&alloc), err,
                                 "GetAllocatorWithDefaultOptions");
    if (st != OQ_OK) return st;
    *out = calloc(n ? n : 1, sizeof **out);
    if (!*out) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        char *name = NULL;
        if ((st = oq_ort_status(s->rt, get_name(s->sess, i, alloc, &name), err, "model io name")))
            return st;
        (*out)[i].name = strdup(name);
        OrtStatus *fs = api->AllocatorFree(alloc, name);
        if (fs) api->ReleaseStatus(fs);
        if (!(*out)[i].name) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        OrtTypeInfo *ti = NULL;
        if ((st = oq_ort_status(s->rt, get_type(s->sess, i, &ti), err, "model io type")))
            return st;
        io_from_typeinfo(api, s->rt->api_version, ti, &(*out)[i]);
        api->ReleaseTypeInfo(ti);
    }
    return OQ_OK;
}

static oq_status query_model(oq_session *s, oq_err *err)
{
    const OrtApi *api = s->rt->api;
    oq_status st;
    if ((st = oq_ort_status(s->rt, api->SessionGetInputCount(s->sess, &s->n_in), err,
                            "SessionGetInputCount")) ||
        (st = oq_ort_status(s->rt, api->SessionGetOutputCount(s->sess, &s->n_out), err,
                            "SessionGetOutputCount")))
        return st;
    if ((st = query_io(s, api->SessionGetInputName, api->SessionGetInputTypeInfo, s->n_in, &s->in,
                       err)))
        return st;
    return query_io(s, api->SessionGetOutputName, api->SessionGetOutputTypeInfo, s->n_out, &s->out,
                    err);
}

/* ---- create / free -------------------------------------------------------------- */

/* A key/value list of n entries (status.h): NULL with n > 0 is refused, never read. */
static oq_status check_pairs(const char *fn, const char *keys_field, const void *keys, const char *values_field,
                             const void *values, const char *count_field, size_t n, oq_err *err)
{
    if (!n || (keys && values)) return OQ_OK;
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: opts->%s is NULL (%s %zu)", fn, keys ? values_field : keys_field,
                      count_field, n);
}

/* The options' fields named as the header spells them, before any reaches ORT. */
static oq_status check_opts(const char *fn, const oq_session_opts *o, oq_err *err)
{
    if (o->ep && !*o->ep) return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: opts->ep is empty (NULL: cpu)", fn);
    if (o->ep_lib && !*o->ep_lib)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: opts->ep_lib is empty (NULL: the registered or default one)", fn);
    oq_status st = check_pairs(fn, "ep_option_keys", o->ep_option_keys, "ep_option_values", o->ep_option_values,
                               "n_ep_options", o->n_ep_options, err);
    if (!st)
        st = check_pairs(fn, "session_config_keys", o->session_config_keys, "session_config_values",
                         o->session_config_values, "n_session_configs", o->n_session_configs, err);
    return st;
}

/* A session made of the bytes read from `path` finds their external-data files where a session
 * of `path` would: in its folder. */
static oq_status model_folder(oq_runtime *rt, OrtSessionOptions *so, const char *path, oq_err *err)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1, slash ? path : ".");
    return oq_ort_status(rt, rt->api->AddSessionConfigEntry(so, "session.model_external_initializers_file_folder_path", dir),
                         err, "the model's folder for its external data");
}

static oq_status create_session(oq_session *s, const char *model_path, const void *bytes,
                                size_t len, OrtSessionOptions *so, oq_err *err)
{
    const OrtApi *api = s->rt->api;
    OrtStatus *st = bytes
        ? api->CreateSessionFromArray(s->rt->env, bytes, len, so, &s->sess)
        : api->CreateSession(s->rt->env, model_path, so, &s->sess);
    char what[512];
    snprintf(what, sizeof what, "%s", model_path ? model_path : "in-memory model");
    return oq_ort_status(s->rt, st, err, what);
}

oq_status oq_session_create(oq_runtime *rt, const char *model_path, const void *model_bytes,
                            size_t model_len, const oq_session_opts *opts, oq_session **out,
                            oq_err *err)
{
    OQ_NEED(err, out);
    *out = NULL;
    OQ_NEED(err, rt);
    if (!model_path && !model_bytes)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: give a model path or model bytes", __func__);
    if (model_bytes && !model_len)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: in-memory model is empty", __func__);
    static const oq_session_opts defaults = {0};
    if (!opts) opts = &defaults;
    oq_status st = check_opts(__func__, opts, err);
    if (st) return st;

    oq_session *s = calloc(1, sizeof *s);
    if (!s) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    s->rt = rt;
    OrtSessionOptions *so = NULL;
    st = oq_ort_status(rt, rt->api->CreateSessionOptions(&so), err, "CreateSessionOptions");
    if (!st && model_path && model_bytes) st = model_folder(rt, so, model_path, err); /* the caller's may follow */
    if (!st) st = build_options(rt, opts, so, s, err);
    if (!st) st = create_session(s, model_path, model_bytes, model_len, so, err);
    if (so) rt->api->ReleaseSessionOptions(so);
    if (!st)
        st = oq_ort_status(rt, rt->api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault,
                                                            &s->cpu_mem),
                           err, "CreateCpuMemoryInfo");
    if (!st) st = query_model(s, err);
    if (st) {
        oq_session_free(s);
        return st;
    }
    *out = s;
    return OQ_OK;
}

oq_status oq_session_ep_check(oq_runtime *rt, const oq_session_opts *opts, oq_err *err)
{
    OQ_NEED(err, rt);
    static const oq_session_opts defaults = {0};
    if (!opts) opts = &defaults;
    OrtSessionOptions *so = NULL;
    const char *ep_full, *attach;
    oq_status st = check_opts(__func__, opts, err);
    if (!st) st = oq_ort_status(rt, rt->api->CreateSessionOptions(&so), err, "CreateSessionOptions");
    if (!st) st = oq_ep_attach(rt, so, opts, &ep_full, &attach, err);
    if (so) rt->api->ReleaseSessionOptions(so);
    return st;
}

static void io_free(io_info *io, size_t n)
{
    if (!io) return;
    for (size_t i = 0; i < n; i++) free(io[i].name);
    free(io);
}

void oq_session_free(oq_session *s)
{
    if (!s) return;
    const OrtApi *api = s->rt->api;
    if (s->sess) api->ReleaseSession(s->sess);
    if (s->cpu_mem) api->ReleaseMemoryInfo(s->cpu_mem);
    io_free(s->in, s->n_in);
    io_free(s->out, s->n_out);
    free(s);
}

size_t oq_session_input_count(const oq_session *s) { return s ? s->n_in : 0; }
size_t oq_session_output_count(const oq_session *s) { return s ? s->n_out : 0; }
const char *oq_session_input_name(const oq_session *s, size_t i)
{
    return s && i < s->n_in ? s->in[i].name : NULL;
}
const char *oq_session_output_name(const oq_session *s, size_t i)
{
    return s && i < s->n_out ? s->out[i].name : NULL;
}
oq_dtype oq_session_input_dtype(const oq_session *s, size_t i)
{
    return s && i < s->n_in ? s->in[i].dtype : OQ_DTYPE_UNDEFINED;
}
int oq_session_input_rank(const oq_session *s, size_t i) { return s && i < s->n_in ? s->in[i].rank : -1; }
oq_dtype oq_session_output_dtype(const oq_session *s, size_t i)
{
    return s && i < s->n_out ? s->out[i].dtype : OQ_DTYPE_UNDEFINED;
}
const char *oq_session_ep(const oq_session *s) { return s ? s->ep : NULL; }
const char *oq_session_ep_attach(const oq_session *s) { return s ? s->attach : NULL; }
struct OrtSession *oq_session_ort(const oq_session *s) { return s ? s->sess : NULL; }
oq_runtime *oq_session_runtime(const oq_session *s) { return s ? s->rt : NULL; }

/* ---- run ------------------------------------------------------------------------ */

/* inputs[order[i]] feeds model input i. */
static oq_status match_inputs(const oq_session *s, size_t n, oq_tensor *const *inputs,
                              size_t *order, oq_err *err)
{
    for (size_t i = 0; i < s->n_in; i++) order[i] = SIZE_MAX;
    for (size_t j = 0; j < n; j++) {
        if (!inputs[j]) return oq_err_set(err, OQ_ERR_INVALID_ARG, "input tensor %zu is NULL", j);
        const char *name = inputs[j]->name;
        if (!name) return oq_err_set(err, OQ_ERR_SHAPE, "input tensor %zu has no name", j);
        size_t i = 0;
        while (i < s->n_in && strcmp(s->in[i].name, name)) i++;
        if (i == s->n_in)
            return oq_err_set(err, OQ_ERR_SHAPE, "input '%s': the model has no input of that name",
                              name);
        if (order[i] != SIZE_MAX)
            return oq_err_set(err, OQ_ERR_SHAPE, "input '%s' given twice", name);
        order[i] = j;
    }
    for (size_t i = 0; i < s->n_in; i++)
        if (order[i] == SIZE_MAX)
            return oq_err_set(err, OQ_ERR_SHAPE, "input '%s' missing (the model needs %zu inputs)",
                              s->in[i].name, s->n_in);
    return OQ_OK;
}

static oq_status check_input(const io_info *io, const oq_tensor *t, oq_err *err)
{
    if (io->dtype == OQ_DTYPE_UNDEFINED)
        return oq_err_set(err, OQ_ERR_UNSUPPORTED,
                          "input '%s': the model declares a type ortqual cannot feed", io->name);
    if (t->dtype != io->dtype)
        return oq_err_set(err, OQ_ERR_SHAPE, "input '%s': dtype %s, the model wants %s", io->name,
                          oq_dtype_name(t->dtype), oq_dtype_name(io->dtype));
    if (io->rank < 0) return OQ_OK;
    char buf[128];
    if (t->ndim != io->rank)
        return oq_err_set(err, OQ_ERR_SHAPE, "input '%s': rank %d %s, the model wants rank %d",
                          io->name, t->ndim, oq_shape_str(t, buf, sizeof buf), io->rank);
    for (int d = 0; d < io->rank; d++)
        if (io->dims[d] > 0 && io->dims[d] != t->shape[d])
            return oq_err_set(err, OQ_ERR_SHAPE,
                              "input '%s': shape %s, the model fixes axis %d to %lld", io->name,
                              oq_shape_str(t, buf, sizeof buf), d, (long long)io->dims[d]);
    return OQ_OK;
}

static oq_status make_value(oq_session *s, const oq_tensor *t, OrtValue **v, oq_err *err)
{
    static char empty[8]; /* ORT wants a non-NULL buffer even for zero elements */
    void *data = t->data ? t->data : empty;
    char what[256];
    snprintf(what, sizeof what, "input '%s'", t->name);
    return oq_ort_status(s->rt,
                         s->rt->api->CreateTensorWithDataAsOrtValue(
                             s->cpu_mem, data, oq_tensor_nbytes(t), t->shape, (size_t)t->ndim,
                             (ONNXTensorElementDataType)t->dtype, v),
                         err, what);
}

static oq_status tensor_from_value(oq_session *s, OrtValue *v, const char *name, oq_tensor **out,
                                   oq_err *err)
{
    const OrtApi *api = s->rt->api;
    OrtTensorTypeAndShapeInfo *info = NULL;
    char what[256];
    snprintf(what, sizeof what, "output '%s'", name);
    oq_status st = oq_ort_status(s->rt, api->GetTensorTypeAndShape(v, &info), err, what);
    if (st) return st;
    ONNXTensorElementDataType et = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    size_t nd = 0;
    int64_t shape[OQ_MAX_DIMS];
    st = oq_ort_status(s->rt, api->GetTensorElementType(info, &et), err, what);
    if (!st) st = oq_ort_status(s->rt, api->GetDimensionsCount(info, &nd), err, what);
    if (!st && nd > OQ_MAX_DIMS)
        st = oq_err_set(err, OQ_ERR_UNSUPPORTED, "output '%s': rank %zu above %d", name, nd,
                        OQ_MAX_DIMS);
    if (!st) st = oq_ort_status(s->rt, api->GetDimensions(info, shape, nd), err, what);
    api->ReleaseTensorTypeAndShapeInfo(info);
    if (st) return st;
    oq_dtype dt = dtype_from_ort(et);
    if (dt == OQ_DTYPE_UNDEFINED)
        return oq_err_set(err, OQ_ERR_UNSUPPORTED, "output '%s': element type %d not supported",
                          name, (int)et);
    if ((st = oq_tensor_create(out, dt, (int32_t)nd, shape, name, err))) {
        oq_err_prefix(err, "%s: ", what);
        return st;
    }
    size_t nbytes = oq_tensor_nbytes(*out);
    if (!nbytes) return OQ_OK;
    void *src = NULL;
    if ((st = oq_ort_status(s->rt, api->GetTensorMutableData(v, &src), err, what))) {
        oq_tensor_free(*out);
        *out = NULL;
        return st;
    }
    memcpy((*out)->data, src, nbytes);
    return OQ_OK;
}

static oq_status collect_outputs(oq_session *s, OrtValue **vals, oq_tensor ***outputs, oq_err *err)
{
    oq_tensor **res = calloc(s->n_out ? s->n_out : 1, sizeof *res);
    if (!res) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < s->n_out; i++) {
        oq_status st = tensor_from_value(s, vals[i], s->out[i].name, &res[i], err);
        if (st) {
            oq_tensors_free(res, s->n_out);
            return st;
        }
    }
    *outputs = res;
    return OQ_OK;
}

static oq_status run_values(oq_session *s, OrtValue **in_vals, OrtValue **out_vals, oq_err *err)
{
    const char **in_names = calloc(s->n_in ? s->n_in : 1, sizeof *in_names);
    const char **out_names = calloc(s->n_out ? s->n_out : 1, sizeof *out_names);
    oq_status st = OQ_OK;
    if (!in_names || !out_names) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (size_t i = 0; !st && i < s->n_in; i++) in_names[i] = s->in[i].name;
    for (size_t i = 0; !st && i < s->n_out; i++) out_names[i] = s->out[i].name;
    if (!st)
        st = oq_ort_status(s->rt,
                           s->rt->api->Run(s->sess, NULL, in_names, (const OrtValue *const *)in_vals,
                                           s->n_in, out_names, s->n_out, out_vals),
                           err, "Run");
    free(in_names);
    free(out_names);
    return st;
}

oq_status oq_session_run(oq_session *s, size_t n_inputs, oq_tensor *const *inputs,
                         size_t *n_outputs, oq_tensor ***outputs, oq_err *err)
{
    OQ_NEED(err, s);
    OQ_NEED_N(err, n_inputs, inputs);
    OQ_NEED(err, n_outputs);
    OQ_NEED(err, outputs);
    *n_outputs = 0;
    *outputs = NULL;
    size_t *order = calloc(s->n_in ? s->n_in : 1, sizeof *order);
    OrtValue **in_vals = calloc(s->n_in ? s->n_in : 1, sizeof *in_vals);
    OrtValue **out_vals = calloc(s->n_out ? s->n_out : 1, sizeof *out_vals);
    oq_status st = OQ_OK;
    if (!order || !in_vals || !out_vals) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (!st) st = match_inputs(s, n_inputs, inputs, order, err);
    for (size_t i = 0; !st && i < s->n_in; i++) st = check_input(&s->in[i], inputs[order[i]], err);
    for (size_t i = 0; !st && i < s->n_in; i++) st = make_value(s, inputs[order[i]], &in_vals[i], err);
    if (!st) st = run_values(s, in_vals, out_vals, err);
    if (!st) st = collect_outputs(s, out_vals, outputs, err);
    if (!st) *n_outputs = s->n_out;
    for (size_t i = 0; in_vals && i < s->n_in; i++)
        if (in_vals[i]) s->rt->api->ReleaseValue(in_vals[i]);
    for (size_t i = 0; out_vals && i < s->n_out; i++)
        if (out_vals[i]) s->rt->api->ReleaseValue(out_vals[i]);
    free(order);
    free(in_vals);
    free(out_vals);
    return st;
}

char *oq_session_end_profiling(oq_session *s)
{
    if (!s || !s->profiling) return NULL;
    s->profiling = 0;
    const OrtApi *api = s->rt->api;
    OrtAllocator *alloc = NULL;
    char *path = NULL;
    OrtStatus *st = api->GetAllocatorWithDefaultOptions(&alloc);
    if (!st) st = api->SessionEndProfiling(s->sess, alloc, &path);
    if (st) {
        api->ReleaseStatus(st);
        return NULL;
    }
    char *copy = path ? strdup(path) : NULL;
    if (path && (st = api->AllocatorFree(alloc, path))) api->ReleaseStatus(st);
    return copy;
}
