/* Shadowing: every copy of libcudart, libcublas and libcudnn the loader could
 * reach, with versions, which one is loaded, and how to pin a chosen set. */
#include <dirent.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core-impl.h"
#include "ortqual/evidence.h"
#include "status/args-impl.h"

/* ---- versions ------------------------------------------------------------------- */

int oq_version_cmp(const char *a, const char *b)
{
    if (!a) a = "unknown";
    if (!b) b = "unknown";
    int ua = !strcmp(a, "unknown"), ub = !strcmp(b, "unknown");
    if (ua || ub) return ua == ub ? 0 : (ua ? -1 : 1); /* unknown sorts first */
    while (*a && *b) {
        char *ea, *eb;
        unsigned long long x = strtoull(a, &ea, 10), y = strtoull(b, &eb, 10);
        if (ea == a || eb == b) return strcmp(a, b); /* a component that is not a number */
        if (x != y) return x < y ? -1 : 1;
        a = ea + (*ea == '.');
        b = eb + (*eb == '.');
    }
    return (*a != '\0') - (*b != '\0'); /* "13" < "13.0.1" */
}

/* "libcudnn_ops.so.9.14.0" -> "9.14.0"; "" when the name has no ".so." suffix. */
static const char *name_version(const char *base)
{
    const char *so = strstr(base, ".so.");
    return so ? so + 4 : "";
}

static size_t dots(const char *v)
{
    size_t n = 0;
    for (; *v; v++) n += *v == '.';
    return n;
}

/* Product of a library file name, or NULL when it is not one we track. */
static const char *product_of(const char *base)
{
    if (!strncmp(base, "libcudart.so", 12)) return "cudart";
    if (!strncmp(base, "libcublas.so", 12) || !strncmp(base, "libcublasLt.so", 14)) return "cublas";
    if (!strncmp(base, "libcudnn", 8) && strstr(base, ".so")) return "cudnn";
    return NULL;
}

/* pip wheels ship "libcudnn.so.9" only; the full version is in the
 * nvidia_<pkg>_cuXX-<version>.dist-info beside the nvidia/ package. */
static int pip_version(const char *dir, const char *major, char *out, size_t n)
{
    const char *lib = strstr(dir, "/nvidia/");
    if (!lib) return 0;
    const char *pkg = lib + 8, *end = strchr(pkg, '/');
    if (!end || strcmp(end, "/lib")) return 0;
    char pattern[PATH_MAX];
    int k = snprintf(pattern, sizeof pattern, "%.*s/nvidia_%.*s*-%s*.dist-info", (int)(lib - dir), dir,
                     (int)(end - pkg), pkg, major);
    if (k < 0 || (size_t)k >= sizeof pattern) return 0;
    glob_t g;
    int found = 0;
    if (glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc > 0) {
        /* ".../nvidia_cudnn_cu13-9.19.0.56.dist-info": the version sits between
         * the last '-' before ".dist-info" (which has a '-' of its own) and it. */
        const char *name = g.gl_pathv[0], *dist = strstr(name, ".dist-info");
        const char *dash = dist;
        while (dash && dash > name && dash[-1] != '-') dash--;
        if (dash && dash > name && dist > dash) {
            snprintf(out, n, "%.*s", (int)(dist - dash), dash);
            found = 1;
        }
    }
    globfree(&g);
    return found;
}

/* The most precise version we can tell for `path` in (real) directory `dir`. */
static void file_version(const char *path, const char *dir, char *out, size_t n)
{
    const char *base = strrchr(path, '/') + 1;
    const char *v = name_version(base);
    char real[PATH_MAX];
    if (realpath(path, real)) {
        const char *rv = name_version(strrchr(real, '/') + 1);
        if (dots(rv) > dots(v) || !*v) v = rv;
    }
    snprintf(out, n, "%s", *v ? v : "unknown");
    if (*v && dots(v) < 2) pip_version(dir, v, out, n);
}

/* ---- the report being built ------------------------------------------------------- */

static int push_str(char ***v, size_t *n, const char *s) { return oq_strv_push(v, n, s) == OQ_OK; }

static int has_str(char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i], s)) return 1;
    return 0;
}

static oq_lib_copy *find_copy(oq_shadow_report *r, const char *product, const char *dir,
                              const char *version)
{
    for (size_t i = 0; i < r->n_copies; i++) {
        oq_lib_copy *c = &r->copies[i];
        if (!strcmp(c->product, product) && !strcmp(c->dir, dir) && !strcmp(c->version, version))
            return c;
    }
    oq_lib_copy *c = OQ_PUSH(r->copies, r->n_copies);
    if (!c) return NULL;
    c->product = strdup(product);
    c->dir = strdup(dir);
    c->version = strdup(version);
    return c->product && c->dir && c->version ? c : NULL;
}

static int add_file(oq_shadow_report *r, const char *dir, const char *path)
{
    const char *product = product_of(strrchr(path, '/') + 1);
    if (!product) return 1;
    char version[128];
    file_version(path, dir, version, sizeof version);
    oq_lib_copy *c = find_copy(r, product, dir, version);
    return c && (has_str(c->files, c->n_files, path) || push_str(&c->files, &c->n_files, path));
}

static int scan_dir(oq_shadow_report *r, const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d) return 1;
    int ok = 1;
    struct dirent *e;
    while (ok && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[PATH_MAX];
        int k = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (k < 0 || (size_t)k >= sizeof path) continue;
        struct stat lst, st;
        if (lstat(path, &lst) != 0) continue;
        /* symlinked directories are not followed; CUDA's stubs/ are link-time stand-ins that
         * the loader must never pick, so they are no copy */
        if (S_ISDIR(lst.st_mode) && strcmp(e->d_name, "stubs") != 0) {
            if (depth > 0) ok = scan_dir(r, path, depth - 1);
        } else if (S_ISDIR(lst.st_mode)) {
            continue;
        } else if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            ok = add_file(r, dir, path);
        }
    }
    closedir(d);
    return ok;
}

/* ---- ordering, loaded, conflicts ---------------------------------------------------- */

static int copy_order(const void *pa, const void *pb)
{
    const oq_lib_copy *a = pa, *b = pb;
    int c = strcmp(a->product, b->product);
    if (!c) c = oq_version_cmp(a->version, b->version);
    if (!c) c = strcmp(a->dir, b->dir);
    return c;
}

static int str_order(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Resolves each loaded library and each file of a copy once (realpath walks the
 * whole path), then compares the resolved names. */
static void mark_loaded(oq_shadow_report *r, const char *const *loaded, size_t n_loaded)
{
    char **lr = calloc(n_loaded ? n_loaded : 1, sizeof *lr);
    if (!lr) return;
    for (size_t l = 0; l < n_loaded; l++) lr[l] = loaded[l] ? realpath(loaded[l], NULL) : NULL;
    for (size_t i = 0; i < r->n_copies; i++)
        for (size_t f = 0; f < r->copies[i].n_files && !r->copies[i].loaded; f++) {
            char *fr = realpath(r->copies[i].files[f], NULL);
            for (size_t l = 0; fr && l < n_loaded; l++)
                if (lr[l] && !strcmp(fr, lr[l])) r->copies[i].loaded = 1;
            free(fr);
        }
    for (size_t l = 0; l < n_loaded; l++) free(lr[l]);
    free(lr);
}

/* "libcudnn.so.9" for stem "libcudnn.so": the soname form, one number after ".so". */
static int is_soname(const char *base, const char *stem)
{
    const char *rest = base + strlen(stem);
    return rest[0] == '.' && rest[1] && strspn(rest + 1, "0123456789") == strlen(rest + 1);
}

/* The file to preload: lib<x>.so.<major> (the soname) when there, else the shortest name. */
static const char *pick_main(const oq_lib_copy *c)
{
    const char *stem = !strcmp(c->product, "cudart") ? "libcudart.so"
                     : !strcmp(c->product, "cublas") ? "libcublas.so" : "libcudnn.so";
    const char *best = NULL;
    size_t best_len = SIZE_MAX;
    for (size_t i = 0; i < c->n_files; i++) {
        const char *b = strrchr(c->files[i], '/') + 1;
        if (strncmp(b, stem, strlen(stem))) continue;
        if (is_soname(b, stem)) return c->files[i];
        if (strlen(b) < best_len) {
            best = c->files[i];
            best_len = strlen(b);
        }
    }
    return best ? best : (c->n_files ? c->files[0] : NULL);
}

static int find_conflicts(oq_shadow_report *r)
{
    for (size_t i = 0; i < r->n_copies; i++) {
        const char *p = r->copies[i].product;
        if (has_str(r->conflicts, r->n_conflicts, p)) continue;
        size_t chosen = SIZE_MAX, newest = i;
        int versions = 0;
        for (size_t j = i; j < r->n_copies && !strcmp(r->copies[j].product, p); j++) {
            if (j == i || strcmp(r->copies[j].version, r->copies[j - 1].version)) {
                versions++;
                newest = j; /* sorted by version: the first dir of the newest version */
            }
            if (r->copies[j].loaded && chosen == SIZE_MAX) chosen = j;
        }
        if (versions < 2) continue;
        size_t n = r->n_conflicts; /* chosen[] grows beside conflicts[] */
        size_t *slot = OQ_PUSH(r->chosen, n);
        if (!slot) return 0;
        *slot = chosen != SIZE_MAX ? chosen : newest;
        if (!push_str(&r->conflicts, &r->n_conflicts, p)) return 0;
    }
    return 1;
}

static int finish(oq_shadow_report *r, const char *const *loaded, size_t n_loaded)
{
    for (size_t i = 0; i < r->n_copies; i++) {
        oq_lib_copy *c = &r->copies[i];
        qsort(c->files, c->n_files, sizeof *c->files, str_order);
        const char *m = pick_main(c);
        if (m && !(c->main_file = strdup(m))) return 0;
    }
    qsort(r->copies, r->n_copies, sizeof *r->copies, copy_order);
    mark_loaded(r, loaded, n_loaded);
    return find_conflicts(r);
}

oq_status oq_shadow_scan(const char *const *roots, size_t n_roots, int max_depth,
                         const char *const *loaded, size_t n_loaded, oq_shadow_report **out,
                         oq_err *err)
{
    OQ_NEED_N(err, n_roots, roots);
    OQ_NEED_N(err, n_loaded, loaded);
    OQ_NEED(err, out);
    *out = NULL;
    oq_shadow_report *r = calloc(1, sizeof *r);
    if (!r) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    int ok = 1;
    for (size_t i = 0; ok && i < n_roots; i++) {
        char real[PATH_MAX];
        if (!roots[i] || !realpath(roots[i], real) || has_str(r->roots, r->n_roots, real)) continue;
        ok = push_str(&r->roots, &r->n_roots, real) && scan_dir(r, real, max_depth);
    }
    if (!ok || !finish(r, loaded, n_loaded)) {
        oq_shadow_report_free(r);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    *out = r;
    return OQ_OK;
}

void oq_shadow_report_free(oq_shadow_report *r)
{
    if (!r) return;
    oq_strv_free(r->roots, r->n_roots);
    for (size_t i = 0; i < r->n_copies; i++) {
        oq_lib_copy *c = &r->copies[i];
        free(c->product);
        free(c->dir);
        free(c->version);
        free(c->main_file);
        oq_strv_free(c->files, c->n_files);
    }
    free(r->copies);
    oq_strv_free(r->conflicts, r->n_conflicts);
    free(r->chosen);
    free(r);
}

/* ---- pin lines --------------------------------------------------------------------- */

static int append(char **s, const char *sep, const char *item)
{
    char *n = NULL;
    int first = strchr(*s, '=')[1] == '\0';
    if (asprintf(&n, "%s%s%s", *s, first ? "" : sep, item) < 0) return 0;
    free(*s);
    *s = n;
    return 1;
}

oq_status oq_shadow_pin(const oq_shadow_report *r, size_t override, char **preload, char **ldpath,
                        oq_err *err)
{
    OQ_NEED(err, r);
    OQ_NEED(err, preload);
    OQ_NEED(err, ldpath);
    *preload = strdup("LD_PRELOAD=");
    *ldpath = strdup("LD_LIBRARY_PATH=");
    int ok = *preload && *ldpath;
    const oq_lib_copy *ov = override < r->n_copies ? &r->copies[override] : NULL;
    char **dirs = NULL;
    size_t n_dirs = 0;
    for (size_t i = 0; ok && i <= r->n_conflicts; i++) {
        const oq_lib_copy *c;
        if (i < r->n_conflicts) {
            c = &r->copies[r->chosen[i]];
            if (ov && !strcmp(ov->product, c->product)) c = ov;
        } else { /* an override for a product without a conflict still gets pinned */
            c = ov && !has_str(r->conflicts, r->n_conflicts, ov->product) ? ov : NULL;
        }
        if (!c) continue;
        if (c->main_file) ok = append(preload, ":", c->main_file);
        if (ok && !has_str(dirs, n_dirs, c->dir))
            ok = push_str(&dirs, &n_dirs, c->dir) && append(ldpath, ":", c->dir);
    }
    oq_strv_free(dirs, n_dirs);
    if (!ok) {
        free(*preload);
        free(*ldpath);
        *preload = *ldpath = NULL;
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    return OQ_OK;
}

/* ---- where the loader looks ----------------------------------------------------------- */

static int add_glob(char ***v, size_t *n, const char *pattern)
{
    glob_t g;
    int ok = 1;
    if (glob(pattern, GLOB_ONLYDIR, NULL, &g) == 0)
        for (size_t i = 0; ok && i < g.gl_pathc; i++)
            if (!has_str(*v, *n, g.gl_pathv[i])) ok = push_str(v, n, g.gl_pathv[i]);
    globfree(&g);
    return ok;
}

static int add_path_list(char ***v, size_t *n, const char *list)
{
    char *copy = list ? strdup(list) : NULL, *save = NULL;
    int ok = 1;
    for (char *tok = copy ? strtok_r(copy, ":", &save) : NULL; ok && tok; tok = strtok_r(NULL, ":", &save))
        ok = add_glob(v, n, tok);
    free(copy);
    return ok;
}

/* Directories named in an ld.so.conf file, following its include lines. */
static int add_ld_conf(char ***v, size_t *n, const char *file, int depth)
{
    FILE *fp = fopen(file, "r");
    if (!fp) return 1;
    char line[PATH_MAX];
    int ok = 1;
    while (ok && fgets(line, sizeof line, fp)) {
        line[strcspn(line, "#\n")] = '\0';
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) continue;
        if (!strncmp(p, "include", 7) && (p[7] == ' ' || p[7] == '\t')) {
            p += 8;
            while (*p == ' ' || *p == '\t') p++;
            glob_t g;
            if (depth < 4 && glob(p, 0, NULL, &g) == 0) {
                for (size_t i = 0; ok && i < g.gl_pathc; i++) ok = add_ld_conf(v, n, g.gl_pathv[i], depth + 1);
                globfree(&g);
            }
        } else {
            ok = add_glob(v, n, p);
        }
    }
    fclose(fp);
    return ok;
}

oq_status oq_shadow_default_roots(char ***roots, size_t *n, oq_err *err)
{
    OQ_NEED(err, roots);
    OQ_NEED(err, n);
    char **v = NULL;
    size_t k = 0;
    static const char *const fixed[] = {
        "/lib", "/usr/lib", "/lib64", "/usr/lib64", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
        "/usr/local/cuda/lib64", "/usr/local/cuda/targets/*/lib", "/usr/local/cuda-*/lib64",
        "/usr/local/cuda-*/targets/*/lib", "/usr/local/cuda/lib", "/usr/local/cuda-*/lib",
        "/usr/lib/python3*/dist-packages/nvidia/*/lib",
        "/usr/local/lib/python3*/dist-packages/nvidia/*/lib",
        "/usr/local/lib/python3*/site-packages/nvidia/*/lib",
        "/opt/*/lib/python3*/site-packages/nvidia/*/lib", "/opt/conda/lib",
        /* virtual environments inside a project under /opt (seen: /opt/torch/.venv) */
        "/opt/*/.venv/lib/python3*/site-packages/nvidia/*/lib", "/opt/*/venv/lib/python3*/site-packages/nvidia/*/lib",
        /* older PyTorch wheels carried their own cuDNN in torch/lib */
        "/usr/lib/python3*/dist-packages/torch/lib", "/usr/local/lib/python3*/dist-packages/torch/lib",
        "/usr/local/lib/python3*/site-packages/torch/lib",
    };
    int ok = add_path_list(&v, &k, getenv("LD_LIBRARY_PATH")) && add_ld_conf(&v, &k, "/etc/ld.so.conf", 0);
    for (size_t i = 0; ok && i < sizeof fixed / sizeof fixed[0]; i++) ok = add_glob(&v, &k, fixed[i]);
    const char *home = getenv("HOME"), *venv = getenv("VIRTUAL_ENV"), *conda = getenv("CONDA_PREFIX");
    char pat[PATH_MAX];
    if (ok && home && snprintf(pat, sizeof pat, "%s/.local/lib/python3*/site-packages/nvidia/*/lib", home) < (int)sizeof pat)
        ok = add_glob(&v, &k, pat);
    /* virtual environments one level under the home directory (~/venv, ~/.venv) */
    if (ok && home && snprintf(pat, sizeof pat, "%s/*/lib/python3*/site-packages/nvidia/*/lib", home) < (int)sizeof pat)
        ok = add_glob(&v, &k, pat);
    if (ok && home && snprintf(pat, sizeof pat, "%s/.*/lib/python3*/site-packages/nvidia/*/lib", home) < (int)sizeof pat)
        ok = add_glob(&v, &k, pat);
    if (ok && venv && snprintf(pat, sizeof pat, "%s/lib/python3*/site-packages/nvidia/*/lib", venv) < (int)sizeof pat)
        ok = add_glob(&v, &k, pat);
    if (ok && conda && snprintf(pat, sizeof pat, "%s/lib", conda) < (int)sizeof pat) ok = add_glob(&v, &k, pat);
    if (!ok) {
        oq_strv_free(v, k);
        *roots = NULL;
        *n = 0;
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    *roots = v;
    *n = k;
    return OQ_OK;
}
