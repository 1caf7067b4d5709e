/* The timed loop: one session, inputs prepared once, Run between two clock readings. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "onnxruntime_c_api.h"
#include "ortqual/bench.h"
#include "ortqual/inspect.h"
#include "status/args-impl.h"

struct oq_bench_runner {
    oq_runtime *rt;
    const OrtApi *api;
    OrtSession *sess;
    oq_io_binding io;
    size_t n_in, n_out;
    const char **in_names, **out_names; /* borrowed from the oq_session */
    oq_tensor **host_in;                /* owned copies of the inputs */
    OrtValue **in_vals;                 /* host: wrapping host_in; device: EP-memory tensors */
    OrtValue **out_vals;                /* scratch for Run's outputs (host binding) */
    OrtAllocator **in_allocs;           /* device: the allocator of each input's tensor */
    OrtIoBinding *binding;              /* device only */
    OrtMemoryInfo *cpu_mem;
};

const char *oq_io_binding_name(oq_io_binding io)
{
    switch (io) {
    case OQ_IO_AUTO: return "auto";
    case OQ_IO_HOST: return "host";
    case OQ_IO_DEVICE: return "device";
    }
    return "unknown";
}

int oq_io_binding_parse(const char *s)
{
    if (!s) return -1;
    if (!strcmp(s, "auto")) return OQ_IO_AUTO;
    if (!strcmp(s, "host")) return OQ_IO_HOST;
    if (!strcmp(s, "device")) return OQ_IO_DEVICE;
    return -1;
}

static oq_status ort(const oq_bench_runner *r, OrtStatus *st, oq_err *err, const char *what)
{
    return oq_ort_status(r->rt, st, err, what);
}

/* Copy the caller's tensors in model input order. */
static oq_status take_inputs(oq_bench_runner *r, oq_session *s, size_t n, oq_tensor *const *inputs,
                             oq_err *err)
{
    for (size_t i = 0; i < r->n_in; i++) {
        const char *name = oq_session_input_name(s, i);
        const oq_tensor *t = NULL;
        for (size_t j = 0; j < n; j++)
            if (inputs[j] && inputs[j]->name && !strcmp(inputs[j]->name, name)) {
                if (t) return oq_err_set(err, OQ_ERR_SHAPE, "input '%s' given twice", name);
                t = inputs[j];
            }
        if (!t) return oq_err_set(err, OQ_ERR_SHAPE, "input '%s' missing", name);
        if (t->dtype != oq_session_input_dtype(s, i))
            return oq_err_set(err, OQ_ERR_SHAPE, "input '%s': dtype %s, the model wants %s", name,
                              oq_dtype_name(t->dtype),
                              oq_dtype_name(oq_session_input_dtype(s, i)));
        oq_status st = oq_tensor_clone(t, &r->host_in[i], err);
        if (st) return st;
        r->in_names[i] = name;
    }
    if (n != r->n_in)
        return oq_err_set(err, OQ_ERR_SHAPE, "%zu inputs given, the model has %zu", n, r->n_in);
    return OQ_OK;
}

static oq_status wrap_host(oq_bench_runner *r, const oq_tensor *t, OrtValue **v, oq_err *err)
{
    static char empty[8]; /* ORT wants a non-NULL buffer even for zero elements */
    return ort(r,
               r->api->CreateTensorWithDataAsOrtValue(r->cpu_mem, t->data ? t->data : empty,
                                                      oq_tensor_nbytes(t), t->shape,
                                                      (size_t)t->ndim,
                                                      (ONNXTensorElementDataType)t->dtype, v),
               err, t->name);
}

/* Does any input live outside CPU memory? (ORT API >= 23; older: no.) */
static int inputs_on_device(const oq_bench_runner *r)
{
    if (oq_runtime_api_version(r->rt) < 23 || !r->n_in) return 0;
    const OrtMemoryInfo **mem = calloc(r->n_in, sizeof *mem);
    int dev = 0;
    OrtStatus *st = mem ? r->api->SessionGetMemoryInfoForInputs(r->sess, mem, r->n_in) : NULL;
    if (st) r->api->ReleaseStatus(st);
    for (size_t i = 0; mem && !st && i < r->n_in; i++) {
        OrtMemoryInfoDeviceType t = OrtMemoryInfoDeviceType_CPU;
        if (mem[i]) r->api->MemoryInfoGetDeviceType(mem[i], &t);
        if (t != OrtMemoryInfoDeviceType_CPU) dev = 1;
    }
    free(mem);
    return dev;
}

/* Copy between tensors of equal size: CopyTensors (an EP's data transfer)
 * when either side lives outside CPU memory, memcpy when both are CPU memory
 * (ORT has no CPU-to-CPU data transfer). */
static int on_cpu(const OrtApi *api, const OrtValue *v)
{
    const OrtMemoryInfo *mem = NULL;
    OrtStatus *st = api->GetTensorMemoryInfo(v, &mem);
    if (st) {
        api->ReleaseStatus(st);
        return 0;
    }
    OrtMemoryInfoDeviceType t = OrtMemoryInfoDeviceType_CPU;
    api->MemoryInfoGetDeviceType(mem, &t);
    return t == OrtMemoryInfoDeviceType_CPU;
}

static oq_status copy_value(oq_bench_runner *r, OrtValue *src, OrtValue *dst, size_t nbytes,
                            oq_err *err)
{
    if (!on_cpu(r->api, src) || !on_cpu(r->api, dst))
        return ort(r, r->api->CopyTensors(oq_runtime_ort_env(r->rt), (const OrtValue *const *)&src,
                                          &dst, NULL, 1),
                   err, "CopyTensors");
    void *a = NULL, *b = NULL;
    oq_status st = ort(r, r->api->GetTensorMutableData(src, &a), err, "tensor data");
    if (!st) st = ort(r, r->api->GetTensorMutableData(dst, &b), err, "tensor data");
    if (!st && nbytes) memcpy(b, a, nbytes);
    return st;
}

/* The session's allocator for `mem` (owned, released with the runner), else
 * the env's shared allocator for it (plugin EPs register one; owned by the env). */
static oq_status input_allocator(oq_bench_runner *r, size_t i, const OrtMemoryInfo *mem,
                                 OrtAllocator **out, oq_err *err)
{
    OrtStatus *st = r->api->CreateAllocator(r->sess, mem, &r->in_allocs[i]);
    if (!st) {
        *out = r->in_allocs[i];
        return OQ_OK;
    }
    r->api->ReleaseStatus(st);
    r->in_allocs[i] = NULL;
    oq_status s = ort(r, r->api->GetSharedAllocator(oq_runtime_ort_env(r->rt), mem, out), err,
                      "no session or shared allocator for an input's memory");
    if (!s && !*out)
        s = oq_err_set(err, OQ_ERR_UNSUPPORTED, "no allocator for input '%s' memory", r->in_names[i]);
    return s;
}

/* One input in the memory the session wants it in, filled by CopyTensors. */
static oq_status device_input(oq_bench_runner *r, size_t i, const OrtMemoryInfo *mem, oq_err *err)
{
    const oq_tensor *t = r->host_in[i];
    OrtAllocator *alloc = NULL;
    oq_status st = input_allocator(r, i, mem, &alloc, err);
    if (!st)
        st = ort(r,
                 r->api->CreateTensorAsOrtValue(alloc, t->shape, (size_t)t->ndim,
                                                (ONNXTensorElementDataType)t->dtype,
                                                &r->in_vals[i]),
                 err, t->name);
    OrtValue *host = NULL;
    if (!st) st = wrap_host(r, t, &host, err);
    if (!st) st = copy_value(r, host, r->in_vals[i], oq_tensor_nbytes(t), err);
    if (host) r->api->ReleaseValue(host);
    if (!st) st = ort(r, r->api->BindInput(r->binding, r->in_names[i], r->in_vals[i]), err, "BindInput");
    return st;
}

static oq_status bind_device(oq_bench_runner *r, oq_err *err)
{
    if (oq_runtime_api_version(r->rt) < 23)
        return oq_err_set(err, OQ_ERR_UNSUPPORTED,
                          "io OQ_IO_DEVICE needs ORT API 23 (ORT 1.23) or newer, this is %d",
                          oq_runtime_api_version(r->rt));
    const OrtMemoryInfo **in_mem = calloc(r->n_in ? r->n_in : 1, sizeof *in_mem);
    const OrtMemoryInfo **out_mem = calloc(r->n_out ? r->n_out : 1, sizeof *out_mem);
    r->in_allocs = calloc(r->n_in ? r->n_in : 1, sizeof *r->in_allocs);
    oq_status st = OQ_OK;
    if (!in_mem || !out_mem || !r->in_allocs) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (!st) st = ort(r, r->api->CreateIoBinding(r->sess, &r->binding), err, "CreateIoBinding");
    if (!st)
        st = ort(r, r->api->SessionGetMemoryInfoForInputs(r->sess, in_mem, r->n_in), err,
                 "SessionGetMemoryInfoForInputs");
    if (!st)
        st = ort(r, r->api->SessionGetMemoryInfoForOutputs(r->sess, out_mem, r->n_out), err,
                 "SessionGetMemoryInfoForOutputs");
    for (size_t i = 0; !st && i < r->n_in; i++) st = device_input(r, i, in_mem[i], err);
    for (size_t i = 0; !st && i < r->n_out; i++)
        st = ort(r, r->api->BindOutputToDevice(r->binding, r->out_names[i], out_mem[i]), err,
                 "BindOutputToDevice");
    free(in_mem);
    free(out_mem);
    return st;
}

static oq_status bind_host(oq_bench_runner *r, oq_err *err)
{
    for (size_t i = 0; i < r->n_in; i++) {
        oq_status st = wrap_host(r, r->host_in[i], &r->in_vals[i], err);
        if (st) return st;
    }
    return OQ_OK;
}

oq_status oq_bench_runner_create(oq_session *s, size_t n_inputs, oq_tensor *const *inputs,
                                 oq_io_binding io, oq_bench_runner **out, oq_err *err)
{
    OQ_NEED(err, s);
    OQ_NEED_N(err, n_inputs, inputs);
    OQ_NEED(err, out);
    *out = NULL;
    oq_bench_runner *r = calloc(1, sizeof *r);
    if (!r) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    r->rt = oq_session_runtime(s);
    r->api = oq_runtime_api(r->rt);
    r->sess = oq_session_ort(s);
    r->n_in = oq_session_input_count(s);
    r->n_out = oq_session_output_count(s);
    size_t ni = r->n_in ? r->n_in : 1, no = r->n_out ? r->n_out : 1;
    r->in_names = calloc(ni, sizeof *r->in_names);
    r->out_names = calloc(no, sizeof *r->out_names);
    r->host_in = calloc(ni, sizeof *r->host_in);
    r->in_vals = calloc(ni, sizeof *r->in_vals);
    r->out_vals = calloc(no, sizeof *r->out_vals);
    oq_status st = OQ_OK;
    if (!r->in_names || !r->out_names || !r->host_in || !r->in_vals || !r->out_vals)
        st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (size_t i = 0; !st && i < r->n_out; i++) r->out_names[i] = oq_session_output_name(s, i);
    if (!st) st = take_inputs(r, s, n_inputs, inputs, err);
    if (!st)
        st = ort(r, r->api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &r->cpu_mem),
                 err, "CreateCpuMemoryInfo");
    if (!st && io == OQ_IO_AUTO) io = inputs_on_device(r) ? OQ_IO_DEVICE : OQ_IO_HOST;
    r->io = io;
    if (!st) st = io == OQ_IO_DEVICE ? bind_device(r, err) : bind_host(r, err);
    if (st) {
        oq_bench_runner_free(r);
        return st;
    }
    *out = r;
    return OQ_OK;
}

void oq_bench_runner_free(oq_bench_runner *r)
{
    if (!r) return;
    const OrtApi *api = r->api;
    if (r->binding) api->ReleaseIoBinding(r->binding);
    for (size_t i = 0; i < r->n_in; i++) {
        if (r->in_vals && r->in_vals[i]) api->ReleaseValue(r->in_vals[i]);
        if (r->in_allocs && r->in_allocs[i]) api->ReleaseAllocator(r->in_allocs[i]);
        if (r->host_in) oq_tensor_free(r->host_in[i]);
    }
    if (r->cpu_mem) api->ReleaseMemoryInfo(r->cpu_mem);
    free(r->in_names);
    free(r->out_names);
    free(r->host_in);
    free(r->in_vals);
    free(r->out_vals);
    free(r->in_allocs);
    free(r);
}

oq_io_binding oq_bench_runner_io(const oq_bench_runner *r) { return r ? r->io : OQ_IO_AUTO; }

static void release_outputs(oq_bench_runner *r)
{
    for (size_t i = 0; i < r->n_out; i++)
        if (r->out_vals[i]) {
            r->api->ReleaseValue(r->out_vals[i]);
            r->out_vals[i] = NULL;
        }
}

/* One Run; host binding leaves the outputs in r->out_vals. With device binding the
 * outputs are synchronized before it returns: ORT synchronizes the EP at the end of a
 * Run already (unless a run option disables it), this makes the timed call say so. */
static OrtStatus *run_raw(oq_bench_runner *r)
{
    if (r->io == OQ_IO_DEVICE) {
        OrtStatus *st = r->api->RunWithBinding(r->sess, NULL, r->binding);
        return st ? st : r->api->SynchronizeBoundOutputs(r->binding);
    }
    return r->api->Run(r->sess, NULL, r->in_names, (const OrtValue *const *)r->in_vals, r->n_in,
                       r->out_names, r->n_out, r->out_vals);
}

oq_status oq_bench_runner_run(oq_bench_runner *r, oq_err *err)
{
    OQ_NEED(err, r);
    oq_status st = ort(r, run_raw(r), err, "Run");
    release_outputs(r);
    return st;
}

static double ms_between(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) * 1e-6;
}

oq_status oq_bench_runner_time(oq_bench_runner *r, size_t iters, double *samples_ms, oq_err *err)
{
    OQ_NEED(err, r);
    OQ_NEED_N(err, iters, samples_ms);
    for (size_t i = 0; i < iters; i++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        OrtStatus *st = run_raw(r);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        release_outputs(r);
        if (st) {
            oq_status s = ort(r, st, err, "Run");
            oq_err_prefix(err, "timed run %zu: ", i);
            return s;
        }
        samples_ms[i] = ms_between(&t0, &t1);
    }
    return OQ_OK;
}

/* A host copy of one output value, wherever it lives. */
static oq_status fetch_value(oq_bench_runner *r, OrtValue *v, const char *name, oq_tensor **out,
                             oq_err *err)
{
    OrtTensorTypeAndShapeInfo *info = NULL;
    oq_status st = ort(r, r->api->GetTensorTypeAndShape(v, &info), err, name);
    if (st) return st;
    ONNXTensorElementDataType et = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    size_t nd = 0;
    int64_t shape[OQ_MAX_DIMS];
    st = ort(r, r->api->GetTensorElementType(info, &et), err, name);
    if (!st) st = ort(r, r->api->GetDimensionsCount(info, &nd), err, name);
    /* the model ran: an output read no further fails the row, it is not "no kernel" (unsupported) */
    if (!st && nd > OQ_MAX_DIMS)
        st = oq_err_set(err, OQ_ERR_SHAPE, "output '%s': rank %zu above %d: the model bench cannot read it", name,
                        nd, OQ_MAX_DIMS);
    if (!st) st = ort(r, r->api->GetDimensions(info, shape, nd), err, name);
    r->api->ReleaseTensorTypeAndShapeInfo(info);
    /* ORT's element type numbers are onnx.TensorProto's, and so are oq_dtype's. */
    if (!st && !oq_dtype_size((oq_dtype)et))
        st = oq_err_set(err, OQ_ERR_SHAPE, "output '%s' is %s: the model bench cannot read it", name,
                        oq_elem_type_name((int32_t)et));
    if (!st) st = oq_tensor_create(out, (oq_dtype)et, (int32_t)nd, shape, name, err);
    if (st || !oq_tensor_nbytes(*out)) return st;
    OrtValue *host = NULL;
    st = wrap_host(r, *out, &host, err);
    if (!st) st = copy_value(r, v, host, oq_tensor_nbytes(*out), err);
    if (host) r->api->ReleaseValue(host);
    if (st) {
        oq_tensor_free(*out);
        *out = NULL;
    }
    return st;
}

static oq_status fetch_host_outputs(oq_bench_runner *r, oq_tensor **res, oq_err *err)
{
    oq_status st = OQ_OK;
    for (size_t i = 0; !st && i < r->n_out; i++) st = fetch_value(r, r->out_vals[i], r->out_names[i], &res[i], err);
    return st;
}

static oq_status fetch_bound_outputs(oq_bench_runner *r, oq_tensor **res, oq_err *err)
{
    OrtAllocator *alloc = NULL;
    OrtValue **vals = NULL;
    size_t n = 0;
    oq_status st = ort(r, r->api->GetAllocatorWithDefaultOptions(&alloc), err, "allocator");
    if (!st)
        st = ort(r, r->api->GetBoundOutputValues(r->binding, alloc, &vals, &n), err,
                 "GetBoundOutputValues");
    if (!st && n != r->n_out)
        st = oq_err_set(err, OQ_ERR_RUNTIME, "%zu bound outputs, the model has %zu", n, r->n_out);
    for (size_t i = 0; !st && i < n; i++) st = fetch_value(r, vals[i], r->out_names[i], &res[i], err);
    for (size_t i = 0; vals && i < n; i++) r->api->ReleaseValue(vals[i]);
    if (vals) {
        OrtStatus *fs = r->api->AllocatorFree(alloc, vals);
        if (fs) r->api->ReleaseStatus(fs);
    }
    return st;
}

oq_status oq_bench_runner_run_outputs(oq_bench_runner *r, size_t *n, oq_tensor ***outputs,
                                      oq_err *err)
{
    OQ_NEED(err, r);
    OQ_NEED(err, n);
    OQ_NEED(err, outputs);
    *n = 0;
    *outputs = NULL;
    oq_tensor **res = calloc(r->n_out ? r->n_out : 1, sizeof *res);
    if (!res) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = ort(r, run_raw(r), err, "Run");
    if (!st)
        st = r->io == OQ_IO_DEVICE ? fetch_bound_outputs(r, res, err)
                                   : fetch_host_outputs(r, res, err);
    release_outputs(r);
    if (st) {
        oq_tensors_free(res, r->n_out);
        return st;
    }
    *n = r->n_out;
    *outputs = res;
    return OQ_OK;
}

static oq_status kvs_from_pairs(const OrtApi *api, const OrtKeyValuePairs *kvp, oq_kv **kvs,
                                size_t *n, oq_err *err)
{
    const char *const *keys = NULL, *const *values = NULL;
    size_t cnt = 0;
    api->GetKeyValuePairs(kvp, &keys, &values, &cnt);
    if (!cnt) return OQ_OK;
    oq_kv *res = calloc(cnt, sizeof *res);
    if (!res) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < cnt; i++) {
        res[i].key = strdup(keys[i] ? keys[i] : "");
        res[i].value = strdup(values[i] ? values[i] : "");
        if (!res[i].key || !res[i].value) {
            oq_kvs_free(res, cnt);
            return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        }
    }
    *kvs = res;
    *n = cnt;
    return OQ_OK;
}

oq_status oq_bench_runner_alloc_stats(oq_bench_runner *r, oq_kv **kvs, size_t *n, oq_err *err)
{
    OQ_NEED(err, r);
    OQ_NEED(err, kvs);
    OQ_NEED(err, n);
    *kvs = NULL;
    *n = 0;
    if (oq_runtime_api_version(r->rt) < 23)
        return oq_err_set(err, OQ_ERR_UNSUPPORTED, "AllocatorGetStats needs ORT API 23");
    if (!r->n_out) return OQ_OK;
    const OrtMemoryInfo **mem = calloc(r->n_out, sizeof *mem);
    if (!mem) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    OrtAllocator *alloc = NULL;
    OrtKeyValuePairs *kvp = NULL;
    oq_status st = ort(r, r->api->SessionGetMemoryInfoForOutputs(r->sess, mem, r->n_out), err,
                       "SessionGetMemoryInfoForOutputs");
    if (!st) st = ort(r, r->api->CreateAllocator(r->sess, mem[0], &alloc), err, "CreateAllocator");
    if (!st) st = ort(r, r->api->AllocatorGetStats(alloc, &kvp), err, "AllocatorGetStats");
    if (!st) st = kvs_from_pairs(r->api, kvp, kvs, n, err);
    if (kvp) r->api->ReleaseKeyValuePairs(kvp);
    if (alloc) r->api->ReleaseAllocator(alloc);
    free(mem);
    return st;
}
