/* Evidence: library grouping, the shadowing detector on a fake tree, GPU/host
 * probes, working-directory checks, and the JSON form. */
#include <dlfcn.h>
#include <jansson.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/core-impl.h"
#include "ortqual/evidence.h"

static char root[64]; /* the fake tree */
static char sys_dir[256], pip_dir[256], blas_dir[256], a_dir[256], b_dir[256];

static void mkfile(const char *dir, const char *name)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *fp = fopen(p, "w");
    assert_non_null(fp);
    fputs("not really a library\n", fp);
    fclose(fp);
}

static void mklink(const char *dir, const char *target, const char *name)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    assert_int_equal(symlink(target, p), 0);
}

static void mkdir_p(const char *path)
{
    char tmp[PATH_MAX];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s", path) >= sizeof tmp) fail_msg("path too long: %s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(tmp, 0755);
            *p = '/';
        }
    mkdir(tmp, 0755);
}

/* sys:  cudnn 9.14.0 (+ ops), cudart 13.0.96, the way Debian packages lay them out
 * pip:  cudnn "9" files whose full version only the dist-info tells (9.19.0.56)
 * blas: cublas 13.1.0.3, no conflict
 * a, b: the plain case, libcudnn.so.9.14.0 and libcudnn.so.9.19.0 in two dirs */
static int tree_setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/oq_shadow_XXXXXX");
    if (!mkdtemp(root)) return -1;
    snprintf(sys_dir, sizeof sys_dir, "%s/usr/lib/x86_64-linux-gnu", root);
    snprintf(pip_dir, sizeof pip_dir, "%s/venv/site-packages/nvidia/cudnn/lib", root);
    snprintf(blas_dir, sizeof blas_dir, "%s/cuda/lib64", root);
    snprintf(a_dir, sizeof a_dir, "%s/a", root);
    snprintf(b_dir, sizeof b_dir, "%s/b", root);
    const char *dirs[] = {sys_dir, pip_dir, blas_dir, a_dir, b_dir};
    for (int i = 0; i < 5; i++) mkdir_p(dirs[i]);
    char dist[PATH_MAX + 64];
    snprintf(dist, sizeof dist, "%s/venv/site-packages/nvidia_cudnn_cu13-9.19.0.56.dist-info", root);
    mkdir_p(dist);

    mkfile(sys_dir, "libcudnn.so.9.14.0");
    mklink(sys_dir, "libcudnn.so.9.14.0", "libcudnn.so.9");
    mkfile(sys_dir, "libcudnn_ops.so.9.14.0");
    mklink(sys_dir, "libcudnn_ops.so.9.14.0", "libcudnn_ops.so.9");
    mkfile(sys_dir, "libcudart.so.13.0.96");
    mklink(sys_dir, "libcudart.so.13.0.96", "libcudart.so.13");
    mkfile(sys_dir, "libz.so.1"); /* not tracked */
    mkfile(pip_dir, "libcudnn.so.9");
    mkfile(pip_dir, "libcudnn_graph.so.9");
    mkfile(blas_dir, "libcublas.so.13.1.0.3");
    mkfile(blas_dir, "libcublasLt.so.13.1.0.3");
    char stubs[PATH_MAX + 16];
    snprintf(stubs, sizeof stubs, "%s/stubs", blas_dir);
    mkdir_p(stubs);
    mkfile(stubs, "libcublas.so"); /* CUDA's link-time stub: never a copy the loader could use */
    mkfile(a_dir, "libcudnn.so.9.14.0");
    mkfile(b_dir, "libcudnn.so.9.19.0");
    char link[PATH_MAX + 16];
    snprintf(link, sizeof link, "%s/syslink", root);
    assert_int_equal(symlink(sys_dir, link), 0);
    return 0;
}

static int tree_teardown(void **state)
{
    (void)state;
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static const oq_lib_copy *copy_of(const oq_shadow_report *r, const char *product, const char *version,
                                  size_t *index)
{
    for (size_t i = 0; i < r->n_copies; i++)
        if (!strcmp(r->copies[i].product, product) && !strcmp(r->copies[i].version, version)) {
            if (index) *index = i;
            return &r->copies[i];
        }
    return NULL;
}

static void test_shadow_two_cudnn_versions(void **state)
{
    (void)state;
    char link[PATH_MAX + 16];
    snprintf(link, sizeof link, "%s/syslink", root);
    const char *roots[] = {sys_dir, pip_dir, link, blas_dir, "/nonexistent/dir"};
    oq_shadow_report *r = NULL;
    assert_int_equal(oq_shadow_scan(roots, 5, 0, NULL, 0, &r, NULL), OQ_OK);
    assert_int_equal(r->n_roots, 3); /* the symlinked duplicate and the missing dir dropped */
    assert_int_equal(r->n_copies, 4);
    const oq_lib_copy *sys = copy_of(r, "cudnn", "9.14.0", NULL);
    size_t pip_i = SIZE_MAX;
    const oq_lib_copy *pip = copy_of(r, "cudnn", "9.19.0.56", &pip_i);
    assert_non_null(sys);
    assert_non_null(pip);
    assert_string_equal(sys->dir, sys_dir);
    assert_int_equal(sys->n_files, 4); /* libcudnn + libcudnn_ops, each with its symlink */
    assert_non_null(copy_of(r, "cudart", "13.0.96", NULL));
    const oq_lib_copy *blas = copy_of(r, "cublas", "13.1.0.3", NULL);
    assert_non_null(blas);
    assert_int_equal(blas->n_files, 2); /* cublasLt counts as cublas */

    char want[1024];
    snprintf(want, sizeof want, "%s/libcudnn.so.9", sys_dir);
    assert_string_equal(sys->main_file, want);

    assert_int_equal(r->n_conflicts, 1);
    assert_string_equal(r->conflicts[0], "cudnn");
    assert_int_equal(r->chosen[0], pip_i); /* nothing loaded: the newest */
    assert_false(sys->loaded || pip->loaded);

    char *pre = NULL, *ld = NULL;
    assert_int_equal(oq_shadow_pin(r, SIZE_MAX, &pre, &ld, NULL), OQ_OK);
    snprintf(want, sizeof want, "LD_PRELOAD=%s/libcudnn.so.9", pip_dir);
    assert_string_equal(pre, want);
    snprintf(want, sizeof want, "LD_LIBRARY_PATH=%s", pip_dir);
    assert_string_equal(ld, want);
    free(pre);
    free(ld);
    oq_shadow_report_free(r);
}

static void test_shadow_loaded_copy_is_chosen(void **state)
{
    (void)state;
    const char *roots[] = {sys_dir, pip_dir, blas_dir};
    char loaded_path[512];
    snprintf(loaded_path, sizeof loaded_path, "%s/libcudnn.so.9", sys_dir);
    const char *loaded[] = {"/nonexistent/libfoo.so", loaded_path};
    oq_shadow_report *r = NULL;
    assert_int_equal(oq_shadow_scan(roots, 3, 0, loaded, 2, &r, NULL), OQ_OK);
    size_t sys_i = SIZE_MAX, pip_i = SIZE_MAX, blas_i = SIZE_MAX;
    assert_true(copy_of(r, "cudnn", "9.14.0", &sys_i)->loaded);
    assert_false(copy_of(r, "cudnn", "9.19.0.56", &pip_i)->loaded);
    assert_non_null(copy_of(r, "cublas", "13.1.0.3", &blas_i));
    assert_int_equal(r->n_conflicts, 1);
    assert_int_equal(r->chosen[0], sys_i);

    char *pre = NULL, *ld = NULL;
    char want[1024];
    assert_int_equal(oq_shadow_pin(r, SIZE_MAX, &pre, &ld, NULL), OQ_OK);
    snprintf(want, sizeof want, "LD_PRELOAD=%s/libcudnn.so.9", sys_dir);
    assert_string_equal(pre, want);
    free(pre);
    free(ld);
    /* The alternative: pip's cuDNN, plus an override of a product without conflict. */
    assert_int_equal(oq_shadow_pin(r, pip_i, &pre, &ld, NULL), OQ_OK);
    snprintf(want, sizeof want, "LD_LIBRARY_PATH=%s", pip_dir);
    assert_string_equal(ld, want);
    free(pre);
    free(ld);
    assert_int_equal(oq_shadow_pin(r, blas_i, &pre, &ld, NULL), OQ_OK);
    snprintf(want, sizeof want, "LD_PRELOAD=%s/libcudnn.so.9:%s/libcublas.so.13.1.0.3", sys_dir, blas_dir);
    assert_string_equal(pre, want);
    snprintf(want, sizeof want, "LD_LIBRARY_PATH=%s:%s", sys_dir, blas_dir);
    assert_string_equal(ld, want);
    free(pre);
    free(ld);
    oq_shadow_report_free(r);
}

static void test_shadow_plain_names_recursive(void **state)
{
    (void)state;
    /* One root, scanned to depth 1, reaches a/ and b/. */
    char top[PATH_MAX];
    snprintf(top, sizeof top, "%s", root);
    const char *roots[] = {top};
    oq_shadow_report *r = NULL;
    assert_int_equal(oq_shadow_scan(roots, 1, 1, NULL, 0, &r, NULL), OQ_OK);
    assert_int_equal(r->n_copies, 2); /* deeper dirs are out of reach at depth 1 */
    assert_string_equal(r->copies[0].version, "9.14.0");
    assert_string_equal(r->copies[0].dir, a_dir);
    assert_string_equal(r->copies[1].version, "9.19.0");
    assert_string_equal(r->copies[1].dir, b_dir);
    assert_int_equal(r->n_conflicts, 1);
    assert_int_equal(r->chosen[0], 1);
    oq_shadow_report_free(r);
    /* Deep enough, everything shows (cuDNN at three versions, one conflict); the
     * symlinked directory is not followed, so sys/ counts once. */
    assert_int_equal(oq_shadow_scan(roots, 1, 6, NULL, 0, &r, NULL), OQ_OK);
    assert_int_equal(r->n_copies, 6);
    assert_int_equal(r->n_conflicts, 1);
    oq_shadow_report_free(r);
}

static void test_shadow_no_conflict(void **state)
{
    (void)state;
    const char *roots[] = {sys_dir, blas_dir};
    oq_shadow_report *r = NULL;
    assert_int_equal(oq_shadow_scan(roots, 2, 0, NULL, 0, &r, NULL), OQ_OK);
    assert_int_equal(r->n_copies, 3);
    assert_int_equal(r->n_conflicts, 0);
    oq_shadow_report_free(r);
}

static void test_shadow_skips_cuda_stubs(void **state)
{
    (void)state;
    const char *roots[] = {blas_dir};
    oq_shadow_report *r = NULL;
    assert_int_equal(oq_shadow_scan(roots, 1, 2, NULL, 0, &r, NULL), OQ_OK);
    for (size_t i = 0; i < r->n_copies; i++) assert_null(strstr(r->copies[i].dir, "/stubs"));
    assert_int_equal(r->n_conflicts, 0);
    oq_shadow_report_free(r);
}

static void test_version_cmp(void **state)
{
    (void)state;
    assert_true(oq_version_cmp("9.14.0", "9.19.0") < 0);
    assert_true(oq_version_cmp("9.19.0", "9.14.0") > 0);
    assert_true(oq_version_cmp("9.9.0", "9.10.0") < 0); /* numeric, not text */
    assert_int_equal(oq_version_cmp("13.0.96", "13.0.96"), 0);
    assert_true(oq_version_cmp("13", "13.0.1") < 0);
    assert_true(oq_version_cmp("unknown", "1") < 0);
    assert_int_equal(oq_version_cmp("unknown", "unknown"), 0);
}

static void test_default_roots_exist(void **state)
{
    (void)state;
    char dir[] = "/tmp/oq_ldp_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char env[256];
    snprintf(env, sizeof env, "/nonexistent/x:%s", dir);
    setenv("LD_LIBRARY_PATH", env, 1);
    char **roots = NULL;
    size_t n = 0;
    assert_int_equal(oq_shadow_default_roots(&roots, &n, NULL), OQ_OK);
    assert_true(n > 0);
    assert_string_equal(roots[0], dir); /* LD_LIBRARY_PATH first, missing entries dropped */
    int usr_lib = 0;
    for (size_t i = 0; i < n; i++) usr_lib |= !strcmp(roots[i], "/usr/lib/x86_64-linux-gnu");
    assert_true(usr_lib);
    oq_strv_free(roots, n);
    unsetenv("LD_LIBRARY_PATH");
    rmdir(dir);
}

/* ---- loaded libraries, GPU, host, cwd ---------------------------------------------- */

static void test_classify(void **state)
{
    (void)state;
    assert_int_equal(oq_lib_classify("/x/libonnxruntime.so.1.29.0"), OQ_LIB_ORT);
    assert_int_equal(oq_lib_classify("/x/libonnxruntime_providers_cuda.so"), OQ_LIB_ORT);
    assert_int_equal(oq_lib_classify("/x/libcudart.so.13"), OQ_LIB_CUDA_RUNTIME);
    assert_int_equal(oq_lib_classify("/x/libcublasLt.so.13"), OQ_LIB_CUBLAS);
    assert_int_equal(oq_lib_classify("/x/libcudnn_engines_precompiled.so.9"), OQ_LIB_CUDNN);
    assert_int_equal(oq_lib_classify("/usr/lib/libcuda.so.1"), OQ_LIB_DRIVER);
    assert_int_equal(oq_lib_classify("/usr/lib/libnvidia-ml.so.1"), OQ_LIB_DRIVER);
    assert_int_equal(oq_lib_classify("/lib/libc.so.6"), OQ_LIB_OTHER);
    assert_string_equal(oq_lib_group_name(OQ_LIB_CUDA_RUNTIME), "cuda-runtime");
}

static void test_loaded_libs_see_ort(void **state)
{
    (void)state;
    oq_runtime *rt = NULL;
    assert_int_equal(oq_runtime_load(OQ_ORT_LIB, &rt, NULL), OQ_OK);
    oq_loaded_lib *libs = NULL;
    size_t n = 0;
    assert_int_equal(oq_loaded_libs(&libs, &n, NULL), OQ_OK);
    int ort = 0, libc = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(libs[i].path[0], '/');
        ort |= libs[i].group == OQ_LIB_ORT && strstr(libs[i].path, "libonnxruntime");
        libc |= strstr(libs[i].path, "/libc.so") != NULL;
    }
    assert_true(ort && libc);
    oq_loaded_libs_free(libs, n);
    oq_runtime_free(rt);
}

static void copy_file(const char *from, const char *to)
{
    char cmd[3 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "cp -L '%s' '%s'", from, to);
    assert_int_equal(system(cmd), 0);
}

/* A library dlopen'ed by a relative name ("rel/x.so", the runtime's "./x.so" for a bare name
 * found through LD_LIBRARY_PATH's current folder) is listed by its absolute file, also once the working directory has
 * changed: glibc keeps the relative name, and such a library was left out of the list. */
static void test_loaded_libs_relative_name(void **state)
{
    (void)state;
    char dir[PATH_MAX], file[PATH_MAX + 32], cwd[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/rel", root);
    mkdir_p(dir);
    snprintf(file, sizeof file, "%s/libnone_ep_rel.so", dir);
    copy_file(OQ_BINARY_DIR "/tests/libnone_ep.so", file);
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(root), 0);
    void *h = dlopen("rel/libnone_ep_rel.so", RTLD_LAZY | RTLD_LOCAL);
    assert_int_equal(chdir(cwd), 0); /* from here the relative name names nothing */
    assert_non_null(h);
    char *real = realpath(file, NULL);
    assert_non_null(real);
    oq_loaded_lib *libs = NULL;
    size_t n = 0, found = 0;
    assert_int_equal(oq_loaded_libs(&libs, &n, NULL), OQ_OK);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(libs[i].path[0], '/');
        found += !strcmp(libs[i].path, real);
    }
    assert_int_equal(found, 1);
    oq_loaded_libs_free(libs, n);
    free(real);
    dlclose(h);
}

/* The SHA-256 of `path` as coreutils' sha256sum computes it: not the library's own code. */
static void sha256sum_of(const char *path, char hex[65])
{
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof cmd, "sha256sum -- '%s'", path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    assert_int_equal(fscanf(p, "%64s", hex), 1);
    assert_int_equal(pclose(p), 0);
    assert_int_equal(strspn(hex, "0123456789abcdef"), 64);
}

static int same_inode(const char *a, const char *b)
{
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* setenv(name, value), or unsetenv for a NULL value. */
static void set_or_unset(const char *name, const char *value)
{
    if (value) setenv(name, value, 1);
    else unsetenv(name);
}

/* The library the runtime loaded is an "ort" library whatever its file is called (it defines
 * OrtGetApiBase), its SHA-256 is recorded, both ONNX Runtime cores are listed and a second one
 * mapped beside it (here the bundled one, loaded first) is a warning naming both, the one
 * LD_PRELOAD names marked; the loader's variables are recorded as the process had them. */
static void test_ort_core_of_any_name(void **state)
{
    (void)state;
    char renamed[PATH_MAX], sha[65];
    snprintf(renamed, sizeof renamed, "%s/renamed_core.bin", root);
    copy_file(OQ_ORT_LIB, renamed);
    sha256sum_of(renamed, sha);
    oq_runtime *first = NULL, *rt = NULL;
    assert_int_equal(oq_runtime_load(OQ_ORT_LIB, &first, NULL), OQ_OK);
    assert_int_equal(oq_runtime_load(renamed, &rt, NULL), OQ_OK);
    oq_evidence_opts o = {.skip_shadowing = 1};
    oq_evidence *ev = NULL;
    oq_err err = {0};
    char *old_pre = getenv("LD_PRELOAD") ? strdup(getenv("LD_PRELOAD")) : NULL;
    char *old_ld = getenv("LD_LIBRARY_PATH") ? strdup(getenv("LD_LIBRARY_PATH")) : NULL;
    setenv("LD_PRELOAD", OQ_ORT_LIB, 1); /* read, not acted on: the process is loaded already */
    setenv("LD_LIBRARY_PATH", "/oq/ld/a:/oq/ld/b", 1);
    oq_status st = oq_evidence_collect(rt, &o, &ev, &err);
    set_or_unset("LD_PRELOAD", old_pre);
    set_or_unset("LD_LIBRARY_PATH", old_ld);
    free(old_pre);
    free(old_ld);
    assert_int_equal(st, OQ_OK);
    int grouped = 0;
    for (size_t i = 0; i < ev->n_libs; i++)
        if (!strcmp(ev->libs[i].path, renamed)) grouped = ev->libs[i].group == OQ_LIB_ORT;
    assert_true(grouped);
    assert_non_null(ev->ort_lib_sha256);
    assert_string_equal(ev->ort_lib_sha256, sha);
    assert_int_equal(ev->n_ort_cores, 2);
    const char *bundled = NULL; /* as mapped: the path given to dlopen, links not resolved */
    size_t n_renamed = 0;
    for (size_t i = 0; i < ev->n_ort_cores; i++)
        if (!strcmp(ev->ort_cores[i], renamed)) n_renamed++;
        else bundled = ev->ort_cores[i];
    assert_int_equal(n_renamed, 1);
    assert_non_null(bundled);
    assert_true(same_inode(bundled, OQ_ORT_LIB));
    assert_int_equal(ev->n_warnings, 1);
    const char *w = ev->warnings[0];
    char loaded[PATH_MAX + 32], pre[PATH_MAX + 32];
    snprintf(loaded, sizeof loaded, "%s (the one loaded)", renamed);
    snprintf(pre, sizeof pre, "%s (LD_PRELOAD)", bundled);
    assert_non_null(strstr(w, "2 ONNX Runtime libraries mapped in this process: "));
    assert_non_null(strstr(w, loaded));
    assert_non_null(strstr(w, pre));
    assert_int_equal(ev->n_loader_env, 2);
    assert_string_equal(ev->loader_env[0].key, "LD_PRELOAD");
    assert_string_equal(ev->loader_env[0].value, OQ_ORT_LIB);
    assert_string_equal(ev->loader_env[1].key, "LD_LIBRARY_PATH");
    assert_string_equal(ev->loader_env[1].value, "/oq/ld/a:/oq/ld/b");
    oq_evidence_free(ev);
    oq_runtime_free(rt);
    oq_runtime_free(first);
}

/* Without a runtime the ORT members are NULL/0, and the loader's variables are still both
 * there, an unset one with a NULL value. */
static void test_no_runtime_members(void **state)
{
    (void)state;
    char *old_pre = getenv("LD_PRELOAD") ? strdup(getenv("LD_PRELOAD")) : NULL;
    unsetenv("LD_PRELOAD");
    oq_evidence_opts o = {.skip_shadowing = 1};
    oq_evidence *ev = NULL;
    oq_status st = oq_evidence_collect(NULL, &o, &ev, NULL);
    set_or_unset("LD_PRELOAD", old_pre);
    free(old_pre);
    assert_int_equal(st, OQ_OK);
    assert_null(ev->ort_version);
    assert_null(ev->ort_lib_sha256);
    assert_int_equal(ev->n_loader_env, 2);
    assert_string_equal(ev->loader_env[0].key, "LD_PRELOAD");
    assert_null(ev->loader_env[0].value);
    oq_evidence_free(ev);
}

static void test_gpu_probe_never_fails(void **state)
{
    (void)state;
    oq_gpu_facts *g = NULL;
    assert_int_equal(oq_gpu_facts_probe(&g, NULL), OQ_OK);
    assert_non_null(g->nvml_status);
    assert_non_null(g->cuda_status);
    assert_non_null(g->driver_version);
    for (size_t i = 0; i < g->n_gpus; i++) assert_non_null(g->gpus[i].name);
    oq_gpu_facts_free(g);
}

static void test_host_probe(void **state)
{
    (void)state;
    oq_host h;
    assert_int_equal(oq_host_probe(&h, NULL), OQ_OK);
    assert_true(strlen(h.hostname) > 0);
    assert_non_null(strstr(h.kernel, "Linux"));
    assert_true(h.n_cpus > 0);
    oq_host_clear(&h);
}

static void test_cwd_check(void **state)
{
    (void)state;
    char dir[] = "/tmp/oq_cwd_XXXXXX";
    assert_non_null(mkdtemp(dir));
    oq_cwd_report r;
    assert_int_equal(chmod(dir, 0700), 0);
    assert_int_equal(oq_cwd_check(dir, &r, NULL), OQ_OK);
    assert_false(r.world_writable);
    assert_int_equal(r.n_hazards, 0);
    oq_cwd_report_clear(&r);

    assert_int_equal(chmod(dir, 0777), 0);
    mkfile(dir, "sitecustomize.py");
    mkfile(dir, "usercustomize.py");
    assert_int_equal(oq_cwd_check(dir, &r, NULL), OQ_OK);
    assert_true(r.world_writable);
    assert_false(r.sticky);
    assert_int_equal(r.n_hazards, 2);
    assert_string_equal(r.hazards[0], "sitecustomize.py");
    assert_string_equal(r.hazards[1], "usercustomize.py");
    oq_cwd_report_clear(&r);

    assert_int_equal(chmod(dir, 01777), 0);
    assert_int_equal(oq_cwd_check(dir, &r, NULL), OQ_OK);
    assert_true(r.world_writable && r.sticky);
    oq_cwd_report_clear(&r);

    oq_err err = {0};
    assert_int_equal(oq_cwd_check("/nonexistent/dir", &r, &err), OQ_ERR_IO);
    assert_non_null(strstr(err.msg, "/nonexistent/dir"));

    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/sitecustomize.py", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/usercustomize.py", dir);
    unlink(p);
    rmdir(dir);
}

static void test_evidence_json(void **state)
{
    (void)state;
    oq_runtime *rt = NULL;
    assert_int_equal(oq_runtime_load(OQ_ORT_LIB, &rt, NULL), OQ_OK);
    const char *roots[] = {a_dir, b_dir};
    oq_evidence_opts o = {.n_search_roots = 2, .search_roots = roots};
    oq_evidence *ev = NULL;
    oq_err err = {0};
    assert_int_equal(oq_evidence_collect(rt, &o, &ev, &err), OQ_OK);
    char *text = oq_evidence_to_json(ev);
    assert_non_null(text);
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "ort"), "version")), "1.29.0");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "ort"), "api_version")), 29);
    json_t *conf = json_object_get(json_object_get(j, "shadowing"), "conflicts");
    assert_int_equal(json_array_size(conf), 1);
    json_t *c0 = json_array_get(conf, 0);
    assert_string_equal(json_string_value(json_object_get(c0, "product")), "cudnn");
    assert_string_equal(json_string_value(json_object_get(json_object_get(c0, "chosen"), "version")), "9.19.0");
    assert_int_equal(json_array_size(json_object_get(c0, "alternatives")), 1);
    json_t *ort_libs = json_object_get(json_object_get(j, "libraries"), "ort");
    assert_true(json_array_size(ort_libs) >= 1);
    json_t *env = json_object_get(j, "ort_env");
    assert_true(json_is_null(json_object_get(env, "ORT_DISABLE_FLASH_ATTENTION")) ||
                json_is_string(json_object_get(env, "ORT_DISABLE_FLASH_ATTENTION")));
    assert_non_null(json_object_get(json_object_get(j, "gpu"), "gpus"));
    json_decref(j);
    free(text);
    oq_evidence_free(ev);

    /* Without a runtime: no ORT section, the rest still there. */
    assert_int_equal(oq_evidence_collect(NULL, &o, &ev, &err), OQ_OK);
    text = oq_evidence_to_json(ev);
    j = json_loads(text, 0, &je);
    assert_true(json_is_null(json_object_get(j, "ort")));
    assert_non_null(json_object_get(j, "host"));
    json_decref(j);
    free(text);
    oq_evidence_free(ev);
    oq_runtime_free(rt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shadow_two_cudnn_versions),
        cmocka_unit_test(test_shadow_loaded_copy_is_chosen),
        cmocka_unit_test(test_shadow_plain_names_recursive),
        cmocka_unit_test(test_shadow_no_conflict),
        cmocka_unit_test(test_shadow_skips_cuda_stubs),
        cmocka_unit_test(test_version_cmp),
        cmocka_unit_test(test_default_roots_exist),
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_loaded_libs_see_ort),
        cmocka_unit_test(test_loaded_libs_relative_name),
        cmocka_unit_test(test_ort_core_of_any_name),
        cmocka_unit_test(test_no_runtime_members),
        cmocka_unit_test(test_gpu_probe_never_fails),
        cmocka_unit_test(test_host_probe),
        cmocka_unit_test(test_cwd_check),
        cmocka_unit_test(test_evidence_json),
    };
    return cmocka_run_group_tests(tests, tree_setup, tree_teardown);
}
