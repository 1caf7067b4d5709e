/* ortqual doctor: is this machine fit to qualify models, and on what exactly? */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "ortqual/evidence.h"
#include "ortqual/graph.h"
#include "ortqual/proc.h"
#include "ortqual_commit.h" /* ORTQUAL_VERSION_BUILD (gen/, made at every build) */

const char cmd_doctor_summary[] =
    "check ONNX Runtime, execution providers, GPU, libraries and environment";

static const char head[] =
    "usage: ortqual doctor [options]\n"
    "\n"
    "Load ONNX Runtime, list its providers and EP devices, create a real session with a\n"
    "tiny in-memory model (y = a + b) on every available EP and run it once, then report\n"
    "the GPU (NVML, CUDA driver), every loaded library with its path, copies of\n"
    "cudart/cuBLAS/cuDNN that could shadow each other (with LD_PRELOAD/LD_LIBRARY_PATH\n"
    "lines that pin one set), the ORT_* environment, and the working directory's safety.\n";

static const char foot[] =
    "\n"
    "exit status: 0 healthy (no GPU is healthy), 1 a session failed or a requested EP is\n"
    "unavailable, 2 bad usage, 3 ONNX Runtime cannot be loaded.\n"
    "\n"
    "example: ortqual doctor --ep-lib cuda=/opt/ort/lib/libonnxruntime_providers_cuda.so\n";

/* ---- sessions on each EP --------------------------------------------------------- */

typedef struct ep_try {
    const char *ep;        /* as asked: "cpu", "cuda", a plugin name */
    const char *ep_full;   /* "CPUExecutionProvider", ... (static or from the session) */
    const char *attach;    /* "default", "plugin", "legacy" */
    int ok;
    int required;          /* asked for explicitly: failing makes the doctor unhealthy */
    char msg[OQ_ERR_MSG_MAX];
} ep_try;

/* Whether bench --cupti could time GPU kernels here: the CUPTI the loader finds. */
typedef struct cupti_check {
    int found;
    char path[PATH_MAX];
    uint32_t version; /* cuptiGetVersion, 0 if unknown */
    char msg[OQ_ERR_MSG_MAX];
} cupti_check;

typedef struct doctor {
    struct oq_cli_runtime cr;
    int json;
    oq_cli_list roots;     /* --search-root */
    oq_runtime *rt;
    ep_try tries[16];
    size_t n_tries;
    char problems[8][OQ_ERR_MSG_MAX];
    size_t n_problems;
    const char *cupti_lib; /* --cupti-lib */
    cupti_check cupti;
} doctor;

static void problem(doctor *d, const char *msg)
{
    if (d->n_problems < sizeof d->problems / sizeof d->problems[0])
        snprintf(d->problems[d->n_problems++], OQ_ERR_MSG_MAX, "%s", msg);
}

static oq_status check_sum(size_t n_out, oq_tensor **out, const float *a, const float *b, oq_err *err)
{
    if (n_out != 1 || out[0]->dtype != OQ_DTYPE_FLOAT32 || oq_tensor_numel(out[0]) != 6)
        return oq_err_set(err, OQ_ERR_CHECK_FAILED, "output 'y' is not a float32 tensor of 6 values");
    const float *y = out[0]->data;
    for (int i = 0; i < 6; i++)
        if (y[i] != a[i] + b[i])
            return oq_err_set(err, OQ_ERR_CHECK_FAILED, "y[%d] = %g, expected %g", i, (double)y[i],
                              (double)(a[i] + b[i]));
    return OQ_OK;
}

/* y = a + b on float32 [2,3]: one node every execution provider has a kernel for. */
static oq_status tiny_model(uint8_t **bytes, size_t *len, oq_err *err)
{
    static const oq_opset opset = {"", 17};
    const oq_dim d[2] = {OQ_DIM(2), OQ_DIM(3)};
    oq_graph *g = NULL;
    oq_status st = oq_graph_create(&opset, 1, "tiny", &g, err);
    if (st) return st;
    oq_graph_add_input(g, "a", OQ_DTYPE_FLOAT32, 2, d);
    oq_graph_add_input(g, "b", OQ_DTYPE_FLOAT32, 2, d);
    oq_graph_add_node(g, "Add", NULL, NULL, 2, (const char *[]){"a", "b"}, 1, (const char *[]){"y"}, 0, NULL);
    oq_graph_add_output(g, "y", "y", OQ_DTYPE_FLOAT32, 2, d);
    st = oq_graph_serialize(g, bytes, len, err); /* reports any earlier error too */
    oq_graph_free(g);
    return st;
}

/* The --ep-lib path given for `ep`, or NULL (then the runtime's default). */
static const char *ep_lib_for(const doctor *d, const char *ep)
{
    for (size_t i = 0; i < d->cr.n_ep_libs; i++)
        if (!strcasecmp(oq_ep_full_name(d->cr.ep_lib_names[i]), oq_ep_full_name(ep)))
            return d->cr.ep_lib_paths[i];
    return NULL;
}

/* Create a session with the tiny model on `t->ep`, run it once, check y = a + b. */
static void try_ep(doctor *d, ep_try *t)
{
    static const float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {0.5f, 0.25f, -3, 8, 16, 0.125f};
    static const int64_t shape[2] = {2, 3};
    const char *cfg_k[] = {"session.disable_cpu_ep_fallback"}, *cfg_v[] = {"1"};
    oq_session_opts so = {0};
    int cpu = !strcmp(t->ep, "cpu");
    if (!cpu) {
        oq_cli_runtime_session_opts(&d->cr, &so);
        /* Every node must run on the EP under test, or the run proves nothing about it. */
        so.n_session_configs = 1;
        so.session_config_keys = cfg_k;
        so.session_config_values = cfg_v;
    }
    so.ep = t->ep;
    so.ep_lib = ep_lib_for(d, t->ep);
    oq_err err = {0};
    uint8_t *bytes = NULL;
    size_t len = 0, n_out = 0;
    oq_session *s = NULL;
    oq_tensor *in[2] = {NULL, NULL}, **out = NULL;
    oq_status st = tiny_model(&bytes, &len, &err);
    if (!st) st = oq_session_create(d->rt, NULL, bytes, len, &so, &s, &err);
    if (!st) {
        t->ep_full = oq_session_ep(s);
        t->attach = oq_session_ep_attach(s);
        st = oq_tensor_wrap(&in[0], OQ_DTYPE_FLOAT32, 2, shape, (void *)a, "a", &err);
    }
    if (!st) st = oq_tensor_wrap(&in[1], OQ_DTYPE_FLOAT32, 2, shape, (void *)b, "b", &err);
    if (!st) st = oq_session_run(s, 2, in, &n_out, &out, &err);
    if (!st) st = check_sum(n_out, out, a, b, &err);
    t->ok = st == OQ_OK;
    snprintf(t->msg, sizeof t->msg, "%s", t->ok ? "ran the tiny model, y = a + b exact" : err.msg);
    oq_tensors_free(out, n_out);
    oq_tensor_free(in[0]);
    oq_tensor_free(in[1]);
    oq_session_free(s);
    free(bytes);
}

static int cuda_present(doctor *d)
{
    if (oq_runtime_registered_ep(d->rt, "cuda")) return 1;
    char *lib = oq_runtime_default_ep_lib(d->rt, "cuda");
    int there = lib && access(lib, F_OK) == 0;
    free(lib);
    char **names = NULL;
    size_t n = 0;
    if (!there && oq_runtime_providers(d->rt, &names, &n, NULL) == OQ_OK)
        for (size_t i = 0; i < n; i++) there |= !strcmp(names[i], "CUDAExecutionProvider");
    oq_strv_free(names, n);
    return there;
}

static void add_try(doctor *d, const char *ep, int required)
{
    for (size_t i = 0; i < d->n_tries; i++)
        if (!strcasecmp(oq_ep_full_name(d->tries[i].ep), oq_ep_full_name(ep))) {
            d->tries[i].required |= required;
            return;
        }
    if (d->n_tries == sizeof d->tries / sizeof d->tries[0]) return;
    ep_try *t = &d->tries[d->n_tries++];
    memset(t, 0, sizeof *t);
    t->ep = ep;
    t->ep_full = oq_ep_full_name(ep);
    t->attach = "";
    t->required = required;
}

static void run_sessions(doctor *d)
{
    add_try(d, "cpu", 1);
    if (d->cr.ep) add_try(d, d->cr.ep, 1);
    else if (cuda_present(d)) add_try(d, "cuda", 0);
    for (size_t i = 0; i < d->cr.n_ep_libs; i++) add_try(d, d->cr.ep_lib_names[i], 1);
    for (size_t i = 0; i < d->n_tries; i++) {
        try_ep(d, &d->tries[i]);
        if (!d->tries[i].ok && d->tries[i].required) {
            char msg[OQ_ERR_MSG_MAX];
            snprintf(msg, sizeof msg, "EP %s: %.900s", d->tries[i].ep, d->tries[i].msg);
            problem(d, msg);
        }
    }
}

/* ---- text report ------------------------------------------------------------------- */

/* A CUPTI the user named (--cupti-lib) must load; the loader's own is only reported. One that
 * loads times nothing without the CUDA driver and a GPU (`g`): it said it could. */
static void check_cupti(doctor *d, const oq_gpu_facts *g)
{
    oq_err err = {0};
    cupti_check *c = &d->cupti;
    c->found = oq_cupti_probe(d->cupti_lib, c->path, sizeof c->path, &c->version, &err) == OQ_OK;
    int driver = g && g->cuda_status && !strcmp(g->cuda_status, "ok");
    if (c->found)
        snprintf(c->msg, sizeof c->msg, "%s",
                 !driver      ? "found, but no CUDA driver here: nothing to time"
                 : !g->n_gpus ? "found, but no GPU here: nothing to time"
                              : "bench --profile-runs N --cupti can time GPU kernels");
    else
        snprintf(c->msg, sizeof c->msg, "%s", err.msg);
    if (!c->found && d->cupti_lib) problem(d, err.msg);
}

static void print_ort(const oq_evidence *ev)
{
    if (!ev->ort_version) {
        printf("ONNX Runtime\n  not loaded\n");
        return;
    }
    printf("ONNX Runtime\n  version     %s (C API %d)\n  library     %s\n  sha256      %s\n  build       %s\n  providers  ",
           ev->ort_version, ev->ort_api_version, oq_cli_shown(ev->ort_lib_path),
           ev->ort_lib_sha256 ? ev->ort_lib_sha256 : "(unreadable)",
           ev->ort_build_info);
    for (size_t i = 0; i < ev->n_providers; i++) printf(" %s", ev->providers[i]);
    printf("\n\nEP devices\n");
    for (size_t i = 0; i < ev->n_ep_devices; i++) {
        const oq_ep_device *e = &ev->ep_devices[i];
        printf("  %-24s %-4s vendor %s (0x%04x) device 0x%04x, EP by %s\n", e->ep_name,
               oq_hw_type_name(e->hw_type), e->hw_vendor, e->vendor_id, e->device_id, e->ep_vendor);
        for (size_t k = 0; k < e->n_hw_meta; k++)
            printf("      %s = %s\n", e->hw_meta[k].key, e->hw_meta[k].value);
        for (size_t k = 0; k < e->n_ep_meta; k++)
            printf("      ep.%s = %s\n", e->ep_meta[k].key, e->ep_meta[k].value);
    }
    if (ev->ep_devices_unavailable) printf("  not available: %s\n", ev->ep_devices_unavailable);
    else if (!ev->n_ep_devices) printf("  (none)\n");
}

static void print_sessions(const doctor *d)
{
    printf("\nSessions (tiny model, one run per EP)\n");
    for (size_t i = 0; i < d->n_tries; i++) {
        const ep_try *t = &d->tries[i];
        printf("  %-6s %-22s %-8s %s: %s\n", t->ep, t->ep_full, *t->attach ? t->attach : "-",
               t->ok ? "ok" : (t->required ? "FAILED" : "unavailable"), t->msg);
    }
}

static void print_gpu(const oq_gpu_facts *g, const cupti_check *c)
{
    printf("\nGPU\n  NVML         %s\n  CUDA driver  %s", g->nvml_status, g->cuda_status);
    if (g->cuda_driver_version)
        printf(" (CUDA %d.%d)", g->cuda_driver_version / 1000, (g->cuda_driver_version % 1000) / 10);
    printf("\n  driver       %s\n", *g->driver_version ? g->driver_version : "unknown");
    for (size_t i = 0; i < g->n_gpus; i++) {
        const oq_gpu *x = &g->gpus[i];
        printf("  gpu %d        %s, %.1f GiB, compute capability %d.%d, %d SMs, PCI %s\n", x->index,
               x->name, (double)x->memory_total / (1024.0 * 1024 * 1024), x->cc_major, x->cc_minor,
               x->sm_count, *x->pci_bus_id ? x->pci_bus_id : "?");
    }
    if (!g->n_gpus) printf("  gpus         none\n");
    if (c->found && c->version)
        printf("  CUPTI        %s (API version %u): %s\n", oq_cli_shown(c->path), (unsigned)c->version, oq_cli_shown(c->msg));
    else if (c->found)
        printf("  CUPTI        %s: %s\n", oq_cli_shown(c->path), oq_cli_shown(c->msg));
    else
        printf("  CUPTI        unavailable: %s\n", c->msg);
}

static void print_libs(const oq_evidence *ev)
{
    printf("\nLoaded libraries\n");
    for (int g = 0; g < OQ_LIB_NGROUPS; g++) {
        size_t n = 0;
        for (size_t i = 0; i < ev->n_libs; i++) n += (int)ev->libs[i].group == g;
        printf("  %s (%zu)\n", oq_lib_group_name((oq_lib_group)g), n);
        for (size_t i = 0; i < ev->n_libs; i++)
            if ((int)ev->libs[i].group == g) printf("    %s\n", oq_cli_shown(ev->libs[i].path));
    }
    for (size_t i = 0; i < ev->n_warnings; i++) printf("  WARNING: %s\n", oq_cli_shown(ev->warnings[i]));
}

static void print_pin(const oq_shadow_report *r, size_t override)
{
    char *pre = NULL, *ld = NULL;
    if (oq_shadow_pin(r, override, &pre, &ld, NULL) == OQ_OK) printf("      %s %s\n", pre, ld);
    free(pre);
    free(ld);
}

static void print_shadow(const oq_shadow_report *r)
{
    printf("\nCUDA library copies (%zu directories searched)\n", r->n_roots);
    for (size_t i = 0; i < r->n_copies; i++) {
        const oq_lib_copy *c = &r->copies[i];
        printf("  %-7s %-12s %s%s\n", c->product, c->version, oq_cli_shown(c->dir), c->loaded ? "  [loaded]" : "");
    }
    if (!r->n_copies) printf("  (none found)\n");
    for (size_t k = 0; k < r->n_conflicts; k++) {
        const oq_lib_copy *ch = &r->copies[r->chosen[k]];
        printf("  WARNING: %s present at several versions; %s %s is %s\n", r->conflicts[k],
               ch->version, oq_cli_shown(ch->dir), ch->loaded ? "the one loaded" : "the newest (none loaded)");
    }
    if (!r->n_conflicts) return;
    printf("  pin the chosen set:\n");
    print_pin(r, SIZE_MAX);
    for (size_t k = 0; k < r->n_conflicts; k++)
        for (size_t i = 0; i < r->n_copies; i++)
            if (i != r->chosen[k] && !strcmp(r->copies[i].product, r->conflicts[k])) {
                printf("  or use %s %s instead:\n", r->copies[i].product, r->copies[i].version);
                print_pin(r, i);
            }
}

static void print_env_cwd(const oq_evidence *ev)
{
    printf("\nORT environment\n");
    for (size_t i = 0; i < ev->n_ort_env; i++)
        printf("  %-44s %s\n", ev->ort_env[i].key, ev->ort_env[i].value ? oq_cli_shown(ev->ort_env[i].value) : "unset");
    const oq_kv *ld = ev->loader_env;
    printf("\nLoader environment\n");
    for (size_t i = 0; i < ev->n_loader_env; i++) printf("  %-44s %s\n", ld[i].key, ld[i].value ? oq_cli_shown(ld[i].value) : "unset");
    if (ev->n_ort_log) printf("\nONNX Runtime log (warnings)\n");
    for (size_t i = 0; i < ev->n_ort_log; i++) printf("  %s\n", oq_cli_shown(ev->ort_log[i]));
    printf("\nWorking directory %s\n", ev->cwd.path ? oq_cli_shown(ev->cwd.path) : "(unreadable)");
    if (ev->cwd.world_writable)
        printf("  WARNING: world-writable%s: others can plant files a run would load\n",
               ev->cwd.sticky ? " (sticky)" : "");
    for (size_t i = 0; i < ev->cwd.n_hazards; i++)
        printf("  WARNING: contains %s, which a Python child process would execute\n", oq_cli_shown(ev->cwd.hazards[i]));
    if (ev->cwd.path && !ev->cwd.world_writable && !ev->cwd.n_hazards) printf("  ok\n");
}

/* ---- ORT's telemetry client -------------------------------------------------------- */

/* The empty mat-debug-<pid>.log files that ORT 1.29+ leaves for every process that
 * created an environment with its 1DS telemetry client on. The client writes them to
 * $TMPDIR when that is set (as on many CI runners), else to /tmp. */
typedef struct telemetry_state {
    const char *setting; /* ORT_DISABLE_TELEMETRY, NULL when unset */
    const char *dir;     /* where the client writes its logs */
    size_t stale_empty;  /* empty mat-debug logs in dir */
    size_t stale_other;  /* non-empty ones (left alone) */
} telemetry_state;

static telemetry_state telemetry_scan(void)
{
    const char *tmp = getenv("TMPDIR");
    telemetry_state t = {getenv("ORT_DISABLE_TELEMETRY"), tmp && *tmp ? tmp : "/tmp", 0, 0};
    DIR *d = opendir(t.dir);
    if (!d) return t;
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, "mat-debug-", 10)) continue;
        struct stat sb;
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", t.dir, e->d_name);
        if (lstat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
            if (sb.st_size == 0) t.stale_empty++;
            else t.stale_other++;
        }
    }
    closedir(d);
    return t;
}

static int telemetry_off(const telemetry_state *t)
{
    return t->setting && !strcmp(t->setting, "1");
}

static void print_telemetry(void)
{
    telemetry_state t = telemetry_scan();
    printf("\nONNX Runtime telemetry\n");
    if (telemetry_off(&t))
        printf("  off (ORT_DISABLE_TELEMETRY=1; ortqual sets it unless you do): no 1DS client, no\n"
               "  %s/mat-debug-<pid>.log per process\n", t.dir);
    else
        printf("  ON (ORT_DISABLE_TELEMETRY=%s): every process that loads ORT 1.29+ starts Microsoft's\n"
               "  1DS client and leaves an empty %s/mat-debug-<pid>.log\n",
               t.setting ? t.setting : "unset", t.dir);
    if (t.stale_empty)
        printf("  %zu empty %s/mat-debug-*.log left by earlier ONNX Runtime processes "
               "(find %s -maxdepth 1 -name 'mat-debug-*.log' -empty -delete)\n", t.stale_empty, t.dir,
               t.dir);
    if (t.stale_other) printf("  %zu non-empty %s/mat-debug-*.log (left alone)\n", t.stale_other, t.dir);
}

static json_t *telemetry_json(void)
{
    telemetry_state t = telemetry_scan();
    return json_pack("{s:o, s:b, s:o, s:I, s:I}", "ORT_DISABLE_TELEMETRY", oq_cli_json_text(t.setting), "off",
                     telemetry_off(&t), "log_dir", oq_cli_json_text(t.dir), "stale_empty_mat_debug_logs",
                     (json_int_t)t.stale_empty, "nonempty_mat_debug_logs", (json_int_t)t.stale_other);
}

static void print_text(const doctor *d, const oq_evidence *ev)
{
    printf("ortqual %s doctor\n\n", ORTQUAL_VERSION_BUILD);
    print_ort(ev);
    print_sessions(d);
    print_gpu(ev->gpu, &d->cupti);
    printf("\nHost\n  name   %s\n  kernel %s\n  cpu    %s (%d online)\n", ev->host.hostname,
           ev->host.kernel, ev->host.cpu_model, ev->host.n_cpus);
    print_libs(ev);
    print_shadow(ev->shadow);
    print_env_cwd(ev);
    print_telemetry();
    size_t n_warn = ev->n_warnings;
    if (d->n_problems) printf("\nNOT HEALTHY:\n");
    else if (n_warn) printf("\nhealthy, with %zu warning%s (Loaded libraries)\n", n_warn, n_warn == 1 ? "" : "s");
    else printf("\nhealthy\n");
    for (size_t i = 0; i < d->n_problems; i++) printf("  %s\n", oq_cli_shown(d->problems[i]));
}

/* ---- JSON report -------------------------------------------------------------------- */

/* Names, paths and messages naming them (--ep, --ep-lib, --cupti-lib, what was found) need not
 * be UTF-8: oq_cli_json_text keeps them where jansson's "s" would fail the whole document. */
static json_t *sessions_json(const doctor *d)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < d->n_tries; i++) {
        const ep_try *t = &d->tries[i];
        json_array_append_new(a, json_pack("{s:o, s:o, s:s, s:b, s:b, s:o}", "ep", oq_cli_json_text(t->ep),
                                           "ep_name", oq_cli_json_text(t->ep_full), "attach", t->attach, "ok", t->ok,
                                           "required", t->required, "message", oq_cli_json_text(t->msg)));
    }
    return a;
}

static int print_json(const doctor *d, const oq_evidence *ev)
{
    json_t *problems = json_array();
    for (size_t i = 0; problems && i < d->n_problems; i++)
        json_array_append_new(problems, oq_cli_json_text(d->problems[i]));
    const cupti_check *c = &d->cupti;
    json_t *cupti = json_pack("{s:b, s:o, s:o, s:o}", "found", c->found, "library",
                              oq_cli_json_text(c->found ? c->path : NULL), "version",
                              c->version ? json_integer(c->version) : json_null(), "message",
                              oq_cli_json_text(c->msg));
    json_t *root = json_pack("{s:s, s:{s:s, s:s}, s:b, s:o, s:o, s:o}", "schema", OQ_CLI_DOCTOR_SCHEMA, "tool", "name", "ortqual",
                             "version", ORTQUAL_VERSION_BUILD, "healthy", d->n_problems == 0, "problems",
                             problems, "sessions", sessions_json(d), "telemetry", telemetry_json());
    char *text = oq_evidence_to_json(ev);
    json_t *evj = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    if (evj) { /* the doctor's document: its own schema, and its tool key says the version */
        json_object_del(evj, "schema");
        json_object_del(evj, "ortqual");
    }
    if (!root || !cupti || !evj || json_object_update(root, evj) != 0) {
        json_decref(root);
        json_decref(cupti);
        json_decref(evj);
        oq_cli_error_in("doctor", "out of memory");
        return OQ_EXIT_RUNTIME;
    }
    json_decref(evj);
    json_object_set_new(root, "cupti", cupti);
    json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    printf("\n");
    oq_cli_json_answered();
    json_decref(root);
    return OQ_EXIT_OK;
}

/* ---- main -------------------------------------------------------------------------- */

/* 0 to go on, 1 after --help, or an exit status. */
static int parse(doctor *d, int argc, char **argv)
{
    const oq_opt opts[] = {
        OQ_OPT_GROUP("options (doctor tries cpu, then --ep or else cuda when its library or devices\n"
                     "exist, then every --ep-lib):"),
        OQ_CLI_RUNTIME_OPTS(&d->cr),
        OQ_OPT_LIST("search-root", "DIR", &d->roots,
                    "look for CUDA library copies under DIR (4 levels deep)\n"
                    "instead of the loader's directories (repeatable)"),
        OQ_OPT_STRING("cupti-lib", "PATH", &d->cupti_lib,
                      "check this libcupti.so (bench --cupti-lib) instead of the one\n"
                      "the loader finds; one that does not load is a problem"),
        OQ_OPT_FLAG("json", &d->json, "machine-readable report on stdout"),
        OQ_OPT_END};
    const oq_cli_command c = {"doctor", head, foot, opts};
    int rc = oq_cli_parse(&c, argc, argv, NULL);
    if (rc) return rc > 0 ? 1 : OQ_EXIT_USAGE;
    /* A root that is no folder would be searched for nothing, and the report would say healthy. */
    for (size_t i = 0; i < d->roots.n; i++) {
        struct stat sb;
        int found = stat(d->roots.v[i], &sb) == 0;
        if (!found || !S_ISDIR(sb.st_mode)) {
            oq_cli_error_in("doctor", "--search-root %s: %s", oq_cli_shown(d->roots.v[i]),
                    found ? "not a folder" : strerror(errno));
            return OQ_EXIT_USAGE;
        }
    }
    /* Provider options given without --ep are for the EP doctor tries besides cpu: cuda. */
    struct oq_cli_runtime check = d->cr;
    if (!check.ep && check.n_options) check.ep = "cuda";
    return oq_cli_runtime_check(&check);
}

static int run(doctor *d)
{
    oq_err err = {0};
    int rc = OQ_EXIT_OK;
    if (oq_runtime_load(d->cr.ort_lib, &d->rt, &err) != OQ_OK) {
        /* a folder set up for ORT that lacks it is a set-up problem to report with the rest (the
         * GPU, the libraries); any other load failure is the one line */
        int setup = !d->cr.ort_lib && oq_cli_cuda_dir_problem();
        oq_cli_load_failed(d->cr.ort_lib, &err);
        oq_cli_error_in("doctor", "%s", err.msg);
        if (!d->json && !setup) return OQ_EXIT_RUNTIME;
        problem(d, err.msg); /* --json still prints its document, with "ort": null */
        rc = OQ_EXIT_RUNTIME;
    } else {
        run_sessions(d); /* each --ep-lib is registered by the session attempt that uses it */
    }
    oq_evidence_opts eo = {.n_search_roots = d->roots.n, .search_roots = d->roots.v};
    oq_evidence *ev = NULL;
    if (oq_evidence_collect(d->rt, &eo, &ev, &err) != OQ_OK) {
        oq_cli_error_in("doctor", "collecting evidence: %s", err.msg);
        return OQ_EXIT_RUNTIME;
    }
    check_cupti(d, ev->gpu); /* after the evidence, whose loaded libraries are those a run would use */
    if (d->json && print_json(d, ev) && !rc) rc = OQ_EXIT_RUNTIME;
    if (!d->json) print_text(d, ev);
    oq_evidence_free(ev);
    if (rc == OQ_EXIT_OK && d->n_problems) rc = OQ_EXIT_FAIL;
    return rc;
}

int cmd_doctor(int argc, char **argv)
{
    doctor d;
    memset(&d, 0, sizeof d);
    int rc = parse(&d, argc, argv);
    if (rc == 0) rc = run(&d);
    else if (rc == 1) rc = OQ_EXIT_OK; /* --help */
    fflush(stdout);
    oq_runtime_free(d.rt);
    oq_cli_runtime_clear(&d.cr);
    oq_cli_list_clear(&d.roots);
    return rc;
}
