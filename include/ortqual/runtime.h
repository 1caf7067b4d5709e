/* ONNX Runtime, loaded at run time: sessions, execution providers, evidence.
 *
 * ortqual never links ONNX Runtime. oq_runtime_load() dlopen()s a
 * libonnxruntime.so, negotiates the C API version (the newest the library
 * offers, up to the one of the headers ortqual was built with) and creates
 * one OrtEnv. Several runtimes (say ORT 1.29 and 1.30) can live side by side.
 *
 *     oq_err err = OQ_ERR_INIT;
 *     oq_runtime *rt;
 *     if (oq_runtime_load(NULL, &rt, &err) != OQ_OK) { puts(err.msg); return; }
 *     oq_session_opts so = {0};            // CPU, ORT defaults
 *     oq_session *s;
 *     oq_session_create(rt, "model.onnx", NULL, 0, &so, &s, &err);
 *     size_t n_out; oq_tensor **out;
 *     oq_session_run(s, n_in, inputs, &n_out, &out, &err);
 *     ...
 *     oq_tensors_free(out, n_out);
 *     oq_session_free(s);
 *     oq_runtime_free(rt);                  // after every session of it
 *
 * Execution providers: "cpu" is always there. "cuda" and any other plugin EP
 * are attached through RegisterExecutionProviderLibrary + GetEpDevices +
 * SessionOptionsAppendExecutionProvider_V2; for "cuda" without a plugin
 * library the legacy SessionOptionsAppendExecutionProvider_CUDA_V2 call is
 * used when the core library has CUDA compiled in (official GPU builds).
 *
 * Thread safety: one runtime may be shared by threads; a session must not be
 * run from two threads at once through this API (it keeps no locks).
 */
#ifndef ORTQUAL_RUNTIME_H
#define ORTQUAL_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "ortqual/status.h"
#include "ortqual/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Forward declaration of the C API table from onnxruntime_c_api.h. */
struct OrtApi;

typedef struct oq_runtime oq_runtime;

/* The oldest ORT C API version ortqual works with (ORT 1.16). Plugin EPs need 22. */
#define OQ_ORT_API_MIN 16
#define OQ_ORT_API_PLUGIN_EP 22

/* Load ONNX Runtime.
 * `path`: an explicit library path, or NULL to search, in order (a bare name, without '/',
 * here or in $ORTQUAL_ORT_LIB, is the dynamic loader's to find as dlopen's is: LD_LIBRARY_PATH,
 * its cache, the system's folders; never the current folder, where anyone who can write it could
 * plant one: "./NAME" loads a file there on purpose, and the error of a bare name not found says
 * so when ./NAME exists):
 *   1. $ORTQUAL_ORT_LIB when set (then nothing else is tried: an explicit choice);
 *   2. <libdir>/ortqual/libonnxruntime.so, where <libdir> holds the libortqual.so this
 *      program runs (what make install lays out: a program linked against an installed
 *      libortqual.so finds the runtime installed with it, wherever it was built);
 *   3. ortqual's own programs only (the tool, its tests and benchmarks; never yours, where
 *      a folder near the executable may be anyone's to fill): beside the running executable
 *      (/proc/self/exe's dir D): D/../third_party/onnxruntime/lib/libonnxruntime.so (build
 *      tree), D/../lib/ortqual/libonnxruntime.so and D/../lib64/ortqual/... (make install),
 *      D/../../third_party/onnxruntime/lib/libonnxruntime.so (tests and benchmarks);
 *   4. PREFIX/lib/ortqual/libonnxruntime.so of the prefix the build was configured for
 *      (CMAKE_INSTALL_PREFIX; `make install PREFIX=...` configures it);
 *   5. the ORT_ROOT the library was built against.
 * A program linked with libortqual.a has no libortqual.so to look beside and cannot learn
 * where the archive was installed: it finds the runtime installed with it only when the build
 * was configured with the prefix it was installed into (`cmake --install --prefix` elsewhere
 * does not move 4); otherwise set $ORTQUAL_ORT_LIB or pass `path`. When it finds nothing, its
 * error ends with that advice.
 * ORT 1.29+ starts Microsoft's 1DS telemetry client, a thread, when the OrtEnv is created,
 * which leaves an empty /tmp/mat-debug-<pid>.log per process; set ORT_DISABLE_TELEMETRY=1 in
 * the environment before this call to stop it (the ortqual tool does, unless it is set). In a
 * process of one thread this call sets it to 1 while it creates the OrtEnv, where it is unset,
 * and removes it after: the process stays one thread and can fork validate's workers
 * (ORT_DISABLE_TELEMETRY=0 keeps the client).
 * Errors: OQ_ERR_INVALID_ARG for an empty path (""); OQ_ERR_NOT_FOUND (one line naming every path tried and why each
 * failed) for a missing library or one without OrtGetApiBase; OQ_ERR_UNSUPPORTED
 * when its API is older than OQ_ORT_API_MIN; OQ_ERR_RUNTIME if no OrtEnv. */
OQ_API oq_status oq_runtime_load(const char *path, oq_runtime **out, oq_err *err);
/* Release the OrtEnv and unload the library. Free every session first. NULL is fine. */
OQ_API void oq_runtime_free(oq_runtime *rt);

/* Strings below are owned by the runtime and live as long as it. A NULL rt gives NULL (the
 * build info "") and API version 0. */
OQ_API const char *oq_runtime_version(const oq_runtime *rt);    /* "1.29.0" */
OQ_API const char *oq_runtime_lib_path(const oq_runtime *rt);   /* the mapped .so's real path, as the
                                                                   kernel names the mapping (a link
                                                                   re-pointed since: still the file that
                                                                   was loaded) */
OQ_API int oq_runtime_api_version(const oq_runtime *rt);        /* negotiated API version, e.g. 29 */
OQ_API const char *oq_runtime_build_info(const oq_runtime *rt); /* "" when the library cannot say */
/* The ORT objects behind a runtime, for library code that calls ORT directly
 * (the bench runner's IoBinding): the API table and the one OrtEnv. Owned by the
 * runtime; valid while it lives. NULL for a NULL rt. */
OQ_API const struct OrtApi *oq_runtime_api(const oq_runtime *rt);
struct OrtEnv;
OQ_API struct OrtEnv *oq_runtime_ort_env(const oq_runtime *rt);
/* Turn an OrtStatus of `rt`'s API into an oq_err ("<what>: <ORT message>", on one
 * line) and release it: OQ_ERR_UNSUPPORTED for ORT's NOT_IMPLEMENTED (no kernel on
 * that provider), OQ_ERR_RUNTIME otherwise. OQ_OK when `st` is NULL; OQ_ERR_INVALID_ARG
 * for a NULL rt with a status (which then cannot be released). */
struct OrtStatus;
OQ_API oq_status oq_ort_status(const oq_runtime *rt, struct OrtStatus *st, oq_err *err, const char *what);

/* Messages ORT logged (warning and above), oldest first, the last 64 kept.
 * ORT shares one environment (and logger) per loaded library, so the log is
 * process-wide: lines from every runtime appear. Returns the count;
 * `oq_runtime_log_line` gives one ("[W] message") or NULL past the end; the
 * pointer is valid until 64 more lines have been logged. */
OQ_API size_t oq_runtime_log_count(const oq_runtime *rt);
OQ_API const char *oq_runtime_log_line(const oq_runtime *rt, size_t i);

/* ---- execution providers ------------------------------------------------ */

/* A plain key/value pair; both strings owned by the array holding it. */
typedef struct oq_kv {
    char *key;
    char *value; /* NULL means "unset" where the API says so */
} oq_kv;
OQ_API void oq_kvs_free(oq_kv *kvs, size_t n);

/* Providers compiled into the core library ("CPUExecutionProvider", ...), as
 * a malloc'ed array of malloc'ed strings; free with oq_strv_free. */
OQ_API oq_status oq_runtime_providers(oq_runtime *rt, char ***names, size_t *n, oq_err *err);
OQ_API void oq_strv_free(char **v, size_t n);

/* Register a plugin EP library under `name` (e.g. "cuda"). Registering the
 * same name again is a no-op when the path is the same and OQ_ERR_INVALID_ARG
 * otherwise. A bare `path` (no '/') is the dynamic loader's to find, as oq_runtime_load's: the
 * file found is handed to ORT by its absolute path (ORT reads a relative one from its own folder). Errors: OQ_ERR_NOT_FOUND (no file), OQ_ERR_UNSUPPORTED (API < 22),
 * OQ_ERR_RUNTIME (ORT refused it, its message included). */
OQ_API oq_status oq_runtime_register_ep(oq_runtime *rt, const char *name, const char *path, oq_err *err);
/* The path registered under `name`, or NULL (also for a NULL rt or name). */
OQ_API const char *oq_runtime_registered_ep(const oq_runtime *rt, const char *name);

/* Default plugin library for an EP short name, beside the core library
 * ("cuda" -> DIR/libonnxruntime_providers_cuda.so, "foo" -> DIR/libonnxruntime_providers_foo.so).
 * Malloc'ed; NULL on allocation failure or for a NULL rt or name. */
OQ_API char *oq_runtime_default_ep_lib(const oq_runtime *rt, const char *name);

/* Whether the CUDA execution provider may find a device on this host, from files under `root`
 * ("/" here; a test passes a tree of its own): a device node a CUDA driver opens (dev/nvidia0..,
 * Tegra's dev/nvgpu or dev/nvhost-*, WSL's dev/dxg) or an NVIDIA PCI device
 * (vendor 0x10de in sys/bus/pci/devices/DEVICE/vendor). 0 means certainly none: registering the CUDA EP
 * library (a few hundred MB to load) would only confirm it. */
OQ_API int oq_cuda_device_possible(const char *root);

/* Full ORT EP name for a short one: "cpu" -> "CPUExecutionProvider",
 * "cuda" -> "CUDAExecutionProvider"; anything else is returned unchanged. */
OQ_API const char *oq_ep_full_name(const char *ep);

typedef enum oq_hw_type { OQ_HW_CPU, OQ_HW_GPU, OQ_HW_NPU, OQ_HW_OTHER } oq_hw_type;
OQ_API const char *oq_hw_type_name(oq_hw_type t); /* "cpu", "gpu", "npu", "other" */

/* One entry of GetEpDevices: an EP and the hardware it would run on. */
typedef struct oq_ep_device {
    char *ep_name;     /* "CPUExecutionProvider", "CUDAExecutionProvider", ... */
    char *ep_vendor;
    oq_hw_type hw_type;
    char *hw_vendor;
    uint32_t vendor_id, device_id;
    size_t n_hw_meta;  /* hardware metadata (e.g. "Description", "pci_bus_id") */
    oq_kv *hw_meta;
    size_t n_ep_meta;  /* EP metadata (e.g. "version", "library_path") */
    oq_kv *ep_meta;
} oq_ep_device;
/* Every EP device known to the runtime's env (CPU, plus whatever registered
 * plugin libraries report). OQ_ERR_UNSUPPORTED when the API is older than 22. */
OQ_API oq_status oq_runtime_ep_devices(oq_runtime *rt, oq_ep_device **devs, size_t *n, oq_err *err);
OQ_API void oq_ep_devices_free(oq_ep_device *devs, size_t n);

/* Check provider options for an EP before any session is made. For "cuda"
 * every key must be a known CUDA EP option and every value well formed
 * (sdpa_kernel: decimal bitmask 0..255; device_id: integer >= 0; flags: 0/1;
 * ...). "cpu" takes no options. Other EPs: passed through unchecked.
 * Errors: OQ_ERR_INVALID_ARG naming the key (and the accepted keys or values). */
OQ_API oq_status oq_ep_options_validate(const char *ep, size_t n, const char *const *keys,
                                        const char *const *values, oq_err *err);

/* The ORT_* environment: first each variable known to change attention
 * routing (value NULL when unset), then every other ORT_* variable set, by
 * name. Malloc'ed; free with oq_kvs_free. */
OQ_API oq_status oq_ort_env_capture(oq_kv **out, size_t *n, oq_err *err);

/* ---- sessions ------------------------------------------------------------ */

/* The graph optimizations ORT applies when it creates a session. The zero value is
 * ORT's own default (every optimization), so a zeroed oq_session_opts changes nothing. */
typedef enum oq_graph_opt {
    OQ_GRAPH_OPT_DEFAULT = 0, /* left to ORT: all */
    OQ_GRAPH_OPT_DISABLE,     /* ORT_DISABLE_ALL */
    OQ_GRAPH_OPT_BASIC,       /* ORT_ENABLE_BASIC */
    OQ_GRAPH_OPT_EXTENDED,    /* ORT_ENABLE_EXTENDED */
    OQ_GRAPH_OPT_ALL          /* ORT_ENABLE_ALL, set explicitly */
} oq_graph_opt;
/* ORT's number of a choice: -1 (left to ORT), 0, 1, 2 or 99; OQ_GRAPH_OPT_LEVEL_UNKNOWN for a value
 * outside oq_graph_opt (no ORT level is negative but -1). */
#define OQ_GRAPH_OPT_LEVEL_UNKNOWN (-2)
OQ_API int oq_graph_opt_level(oq_graph_opt g);
/* The choice for ORT's number (-1, 0, 1, 2, 99); -1 for any other number. */
OQ_API int oq_graph_opt_from_level(int level);

/* A session config entry (oq_session_opts.session_config_keys/values) checked against the keys
 * of onnxruntime_session_options_config_keys.h in the ONNX Runtime headers ortqual is built with:
 * ORT stores any entry and reads only the keys it knows, so a misspelt key, or a value outside its
 * key's domain ("maybe" for a "0"/"1" switch; an integer outside its key's range: int32 for a
 * count, 64-bit for a byte size, never negative but a block size's -1), changes nothing and says
 * nothing, or fails only when the session is made. Either is
 * OQ_ERR_INVALID_ARG naming the key (and the known key closest to an unknown one, or the values
 * the key takes). A key newer ORT builds added is refused as unknown too (see
 * oq_session_config_check_for, which knows the ORT that will read it). */
OQ_API oq_status oq_session_config_check(const char *key, const char *value, oq_err *err);
/* oq_session_config_check as the ONNX Runtime of version `ort_version` (a loaded one's
 * oq_runtime_version) takes an entry: where that version is newer than the headers' (1.29: see
 * oq_session_config_newer), a key they do not know may be one it reads, and is passed (OQ_OK)
 * with `warning` (n bytes) saying so, naming both versions; "" otherwise. With ORT 1.29 or older,
 * or `ort_version` NULL, an unknown key is refused as oq_session_config_check refuses it (with
 * the closest known key). The value of a known key is checked either way. */
OQ_API oq_status oq_session_config_check_for(const char *ort_version, const char *key, const char *value,
                                             char *warning, size_t n, oq_err *err);
/* 1 when ONNX Runtime `ort_version` ("1.30.0") is newer than the headers ortqual is built with,
 * whose session config keys oq_session_config_check knows; 0 otherwise (NULL, unparsable). */
OQ_API int oq_session_config_newer(const char *ort_version);
/* The i-th key oq_session_config_check knows; NULL past the last. */
OQ_API const char *oq_session_config_key(size_t i);

/* Zeroed: CPU, ORT's defaults, no profiling. */
typedef struct oq_session_opts {
    const char *ep;              /* "cpu" (default when NULL), "cuda", or any plugin EP name */
    const char *ep_lib;          /* plugin EP library; NULL: the one registered under `ep`, else
                                    libonnxruntime_providers_<ep>.so beside the core library */
    size_t n_ep_options;         /* provider options, validated by oq_ep_options_validate */
    const char *const *ep_option_keys, *const *ep_option_values;
    int intra_op_threads;        /* 0 = ORT default */
    int inter_op_threads;        /* 0 = ORT default (sequential execution); N >= 1: ORT's
                                    parallel execution mode with N inter-op threads (ORT
                                    uses inter-op threads in that mode only) */
    oq_graph_opt graph_opt;      /* OQ_GRAPH_OPT_DEFAULT (0): ORT's choice */
    const char *profile_prefix;  /* non-NULL: enable ORT profiling with this file prefix */
    size_t n_session_configs;    /* extra AddSessionConfigEntry key/values */
    const char *const *session_config_keys, *const *session_config_values;
} oq_session_opts;

typedef struct oq_session oq_session;

/* Create a session from a file (`model_path`) or from memory (`model_bytes`,
 * `model_len`). Both: the bytes are the model, read from that file by the caller (so that the
 * session runs exactly the bytes it hashed, whatever the file holds by then); the path names it
 * in messages, and ORT looks for its external-data files in the path's folder, as for the file
 * itself. `opts` may be NULL (CPU, ORT defaults).
 * The runtime must outlive the session.
 * Errors: OQ_ERR_INVALID_ARG (no model, bad option; a field named as spelled here,
 * "oq_session_create: opts->session_config_keys is NULL (n_session_configs 1)",
 * "opts->ep is empty"), OQ_ERR_NOT_FOUND
 * (EP not available, with the reason: no library at PATH, no device),
 * OQ_ERR_RUNTIME (ORT's message, prefixed with the model path). */
OQ_API oq_status oq_session_create(oq_runtime *rt, const char *model_path, const void *model_bytes,
                                   size_t model_len, const oq_session_opts *opts, oq_session **out,
                                   oq_err *err);
/* Whether sessions with `opts` can have their execution provider, asked once before a suite of
 * models on it: the EP is attached to session options as oq_session_create attaches it, and let
 * go. OQ_OK: it attaches; OQ_ERR_NOT_FOUND: not available here, with the reason
 * oq_session_create would give every model (no library at PATH, no device); other errors as
 * there (a bad option, ORT refusing the library). */
OQ_API oq_status oq_session_ep_check(oq_runtime *rt, const oq_session_opts *opts, oq_err *err);
OQ_API void oq_session_free(oq_session *s);

/* Model inputs and outputs, in model order; names owned by the session (a NULL s has none). */
OQ_API size_t oq_session_input_count(const oq_session *s);
OQ_API const char *oq_session_input_name(const oq_session *s, size_t i);
OQ_API size_t oq_session_output_count(const oq_session *s);
OQ_API const char *oq_session_output_name(const oq_session *s, size_t i);
/* Declared element type and rank of input/output i (rank -1 when the model
 * does not say, dtype OQ_DTYPE_UNDEFINED for non-tensor or unsupported types). */
OQ_API oq_dtype oq_session_input_dtype(const oq_session *s, size_t i);
OQ_API int oq_session_input_rank(const oq_session *s, size_t i);
OQ_API oq_dtype oq_session_output_dtype(const oq_session *s, size_t i);
/* The EP the session was asked to use ("CPUExecutionProvider", "CUDAExecutionProvider", ...)
 * and how it was attached ("default", "plugin", "legacy"); NULL for a NULL s. */
OQ_API const char *oq_session_ep(const oq_session *s);
OQ_API const char *oq_session_ep_attach(const oq_session *s);

/* The ORT objects behind a session, for library code that calls ORT directly
 * (placement's Session_GetEpGraphAssignmentInfo). Owned by the session and its
 * runtime; valid while the session lives. NULL for a NULL s. */
struct OrtSession;
OQ_API struct OrtSession *oq_session_ort(const oq_session *s);
OQ_API oq_runtime *oq_session_runtime(const oq_session *s);

/* Run once. Inputs are matched to model inputs by oq_tensor name; every
 * model input must be given exactly once. Supported dtypes: float32, float16,
 * bfloat16, float64, int64, int32, int16, int8, uint64, uint32, uint16, uint8, bool.
 * Input data is borrowed for the call.
 * Outputs: every model output, in model order, as new owned tensors named after
 * the output; *outputs is malloc'ed (free with oq_tensors_free).
 * Errors: OQ_ERR_INVALID_ARG for a NULL entry in `inputs` ("input tensor J is
 * NULL"), OQ_ERR_SHAPE naming the tensor (unknown/missing/duplicate name,
 * wrong dtype, wrong rank, a fixed dimension that differs), OQ_ERR_UNSUPPORTED
 * (an output of a dtype above not in the list), OQ_ERR_RUNTIME (ORT's message). */
OQ_API oq_status oq_session_run(oq_session *s, size_t n_inputs, oq_tensor *const *inputs,
                                size_t *n_outputs, oq_tensor ***outputs, oq_err *err);

/* Ends profiling and returns the profile file path (malloc'ed), or NULL when
 * profiling was off (or ORT failed to write it, or s is NULL). */
OQ_API char *oq_session_end_profiling(oq_session *s);

#ifdef __cplusplus
}
#endif
#endif
