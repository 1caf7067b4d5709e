/* Preparing a gate: the child's environment, the private folder, the log. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core-impl.h"
#include "gate/gate-impl.h"
#include "status/args-impl.h"

extern char **environ;

static const char DEBUG_INFO_VAR[] = "ORT_ENABLE_ATTENTION_KERNEL_DEBUG_INFO";

oq_status gate_strv_push(gate_strv *s, char *owned, oq_err *err)
{
    size_t at = s->n;
    /* two slots: the string and, for execve, a NULL after it that is not counted */
    if (!owned || !OQ_PUSH(s->v, s->n) || !OQ_PUSH(s->v, s->n)) {
        s->n = at;
        free(owned);
        return oq_err_set(err, OQ_ERR_NOMEM, "gate: out of memory");
    }
    s->n--;
    s->v[at] = owned;
    return OQ_OK;
}

void gate_strv_clear(gate_strv *s)
{
    for (size_t i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

static char *cat3(const char *a, const char *b, const char *c)
{
    char *s;
    return asprintf(&s, "%s%s%s", a, b, c) < 0 ? NULL : s;
}

/* Index of NAME in the child's environment, or -1. */
static long env_find(const gate_strv *env, const char *name, size_t len)
{
    for (size_t i = 0; i < env->n; i++)
        if (!strncmp(env->v[i], name, len) && env->v[i][len] == '=') return (long)i;
    return -1;
}

static const char *env_get(const oq_gate *g, const char *name)
{
    long i = env_find(&g->env, name, strlen(name));
    return i < 0 ? NULL : g->env.v[i] + strlen(name) + 1;
}

/* Set NAME=VALUE in the child's environment and record the change. */
static oq_status env_set(oq_gate *g, const char *name, const char *value, oq_err *err)
{
    char *kv = cat3(name, "=", value);
    if (!kv) return oq_err_set(err, OQ_ERR_NOMEM, "gate: out of memory");
    long i = env_find(&g->env, name, strlen(name));
    long c = env_find(&g->changes, name, strlen(name));
    char *copy = strdup(kv);
    if (!copy) {
        free(kv);
        return oq_err_set(err, OQ_ERR_NOMEM, "gate: out of memory");
    }
    if (c >= 0) {
        free(g->changes.v[c]);
        g->changes.v[c] = copy;
    } else if (gate_strv_push(&g->changes, copy, err) != OQ_OK) {
        free(kv);
        return OQ_ERR_NOMEM;
    }
    if (i >= 0) {
        free(g->env.v[i]);
        g->env.v[i] = kv;
        return OQ_OK;
    }
    return gate_strv_push(&g->env, kv, err);
}

static oq_status note(oq_gate *g, oq_err *err, const char *fmt, const char *arg)
{
    char *s;
    if (asprintf(&s, fmt, arg) < 0) return oq_err_set(err, OQ_ERR_NOMEM, "gate: out of memory");
    return gate_strv_push(&g->notes, s, err);
}

static oq_status copy_environ(oq_gate *g, oq_err *err)
{
    oq_status st = OQ_OK;
    for (char **e = environ; *e && st == OQ_OK; e++) st = gate_strv_push(&g->env, strdup(*e), err);
    return st;
}

static oq_status apply_env_options(oq_gate *g, oq_err *err)
{
    for (size_t i = 0; i < g->o.n_env; i++) {
        const char *kv = g->o.env[i], *eq = strchr(kv, '=');
        if (!eq || eq == kv)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "opts.env '%s': expected NAME=VALUE", kv);
        char *name = strndup(kv, (size_t)(eq - kv));
        if (!name) return oq_err_set(err, OQ_ERR_NOMEM, "gate: out of memory");
        oq_status st = env_set(g, name, eq + 1, err);
        free(name);
        if (st != OQ_OK) return st;
    }
    return OQ_OK;
}

/* Append `item` to a ':'-separated list being built in *list. */
static oq_status list_add(char **list, const char *item, oq_err *err)
{
    char *s = *list ? cat3(*list, ":", item) : strdup(item);
    if (!s) return oq_err_set(err, OQ_ERR_NOMEM, "gate: out of memory");
    free(*list);
    *list = s;
    return OQ_OK;
}

/* An LD_PRELOAD the caller had reaches the command and loads before anything
 * the test pins or imports: say so. */
static oq_status note_inherited_preload(oq_gate *g, oq_err *err)
{
    const char *pre = env_get(g, "LD_PRELOAD");
    if (!pre || !*pre) return OQ_OK;
    return note(g, err, "LD_PRELOAD=%s is inherited from the caller and reaches the command "
                        "(loaded before its own libraries)", pre);
}

/* A PATH entry that is the caller's directory would run a program planted there
 * (a fake python3) as the command, or for it: dropped from the child's PATH. */
static oq_status apply_path(oq_gate *g, oq_err *err)
{
    const char *old = env_get(g, "PATH");
    char *copy = old ? strdup(old) : NULL, *list = NULL;
    if (old && !copy) return oq_err_set(err, OQ_ERR_NOMEM, "gate: out of memory");
    oq_status st = OQ_OK;
    int dropped = 0;
    for (char *e = copy, *next; e && st == OQ_OK; e = next) { /* empty entries kept */
        if ((next = strchr(e, ':'))) *next++ = '\0';
        char real[PATH_MAX];
        if (e[0] == '/' && realpath(e, real) && !strcmp(real, g->cwd)) {
            dropped = 1;
            st = note(g, err, "PATH entry %s dropped: it is the caller's directory", e);
        } else {
            st = list_add(&list, e, err);
        }
    }
    if (st == OQ_OK && dropped) st = env_set(g, "PATH", list ? list : "", err);
    free(copy);
    free(list);
    return st;
}

/* One PYTHONPATH entry: dropped when it is the caller's directory (it would
 * let a source tree there shadow the installed package). */
static oq_status python_entry(oq_gate *g, const char *entry, char **list, oq_err *err)
{
    char real[PATH_MAX];
    if (entry[0] == '/' && realpath(entry, real) && !strcmp(real, g->cwd))
        return note(g, err, "PYTHONPATH entry %s dropped: it is the caller's directory", entry);
    oq_status st = OQ_OK;
    if (entry[0] != '/')
        st = note(g, err, "PYTHONPATH entry '%s' is relative: in the child it names the private "
                          "folder, not the caller's directory", entry);
    return st == OQ_OK ? list_add(list, entry, err) : st;
}

static oq_status apply_pythonpath(oq_gate *g, oq_err *err)
{
    char *list = NULL;
    oq_status st = OQ_OK;
    for (size_t i = 0; i < g->o.n_pythonpath && st == OQ_OK; i++) {
        char real[PATH_MAX];
        struct stat sb;
        if (!realpath(g->o.pythonpath[i], real) || stat(real, &sb) != 0 || !S_ISDIR(sb.st_mode))
            st = oq_err_set(err, OQ_ERR_INVALID_ARG, "opts.pythonpath %s: not a folder",
                            g->o.pythonpath[i]);
        else
            st = python_entry(g, real, &list, err);
    }
    const char *old = env_get(g, "PYTHONPATH");
    char *copy = old ? strdup(old) : NULL;
    for (char *save, *e = copy ? strtok_r(copy, ":", &save) : NULL; e && st == OQ_OK;
         e = strtok_r(NULL, ":", &save))
        st = python_entry(g, e, &list, err);
    int changed = g->o.n_pythonpath > 0 || (old && (!list || strcmp(list, old)));
    if (st == OQ_OK && changed) st = env_set(g, "PYTHONPATH", list ? list : "", err);
    free(copy);
    free(list);
    return st;
}

/* Is `item` one of the entries of the ':'-separated `list`? */
static int list_has(const char *list, const char *item)
{
    size_t n = strlen(item);
    for (const char *p = list; p && *p; p = strchr(p, ':') ? strchr(p, ':') + 1 : NULL)
        if (!strncmp(p, item, n) && (p[n] == ':' || !p[n])) return 1;
    return 0;
}

/* One --pin-lib: its absolute path to LD_PRELOAD, its folder (once) to the path. */
static oq_status pin_one(oq_gate *g, const char *lib, char **preload, char **dirs, oq_err *err)
{
    struct stat sb;
    if (stat(lib, &sb) != 0 || !S_ISREG(sb.st_mode))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "opts.pin_libs %s: not a library file", lib);
    char *abs = lib[0] == '/' ? strdup(lib) : cat3(g->cwd, "/", lib);
    char *dir = abs ? strdup(abs) : NULL;
    if (!dir) {
        free(abs);
        return oq_err_set(err, OQ_ERR_NOMEM, "gate: out of memory");
    }
    char *slash = strrchr(dir, '/');
    slash[slash == dir] = '\0'; /* "/libx.so" lives in "/" */
    oq_status st = list_add(preload, abs, err);
    if (st == OQ_OK && !list_has(*dirs, dir)) st = list_add(dirs, dir, err);
    free(dir);
    if (st != OQ_OK) {
        free(abs);
        return st;
    }
    return gate_strv_push(&g->pins, abs, err);
}

/* --pin-lib: LD_PRELOAD and LD_LIBRARY_PATH together. Preloading alone lets a
 * transitive dependency still resolve against another copy; the path alone
 * loses to a library that was loaded first. */
static oq_status apply_pins(oq_gate *g, oq_err *err)
{
    if (g->o.n_pin_libs == 0) return OQ_OK;
    char *preload = NULL, *dirs = NULL;
    oq_status st = OQ_OK;
    for (size_t i = 0; i < g->o.n_pin_libs && st == OQ_OK; i++)
        st = pin_one(g, g->o.pin_libs[i], &preload, &dirs, err);
    const char *old_pre = env_get(g, "LD_PRELOAD"), *old_lib = env_get(g, "LD_LIBRARY_PATH");
    if (st == OQ_OK && old_pre && *old_pre) st = list_add(&preload, old_pre, err);
    if (st == OQ_OK && old_lib && *old_lib) st = list_add(&dirs, old_lib, err);
    if (st == OQ_OK) st = env_set(g, "LD_PRELOAD", preload, err);
    if (st == OQ_OK) st = env_set(g, "LD_LIBRARY_PATH", dirs, err);
    free(preload);
    free(dirs);
    return st;
}

static oq_status apply_dispatch(oq_gate *g, oq_err *err)
{
    if (g->o.n_require_dispatch == 0) return OQ_OK;
    oq_status st = oq_dispatch_expect_create(&g->expect, err);
    for (size_t i = 0; i < g->o.n_require_dispatch && st == OQ_OK; i++)
        st = oq_dispatch_expect_add(g->expect, g->o.require_dispatch[i], err);
    if (st != OQ_OK) return oq_err_prefix(err, "opts.require_dispatch: ");
    /* ORT prints routing lines only with this set before the session exists;
     * an explicit --env wins. */
    for (size_t i = 0; i < g->o.n_env; i++)
        if (!strncmp(g->o.env[i], DEBUG_INFO_VAR, strlen(DEBUG_INFO_VAR)) &&
            g->o.env[i][strlen(DEBUG_INFO_VAR)] == '=')
            return OQ_OK;
    return env_set(g, DEBUG_INFO_VAR, "1", err);
}

/* argv[0] as a path: searched in the child's PATH unless it holds a '/'. */
static oq_status resolve_command(oq_gate *g, oq_err *err)
{
    const char *cmd = g->o.argv[0];
    if (strchr(cmd, '/')) {
        /* relative to the caller's directory, not the child's; symlinks kept, as
         * multi-call programs look at the name they were started by */
        while (!strncmp(cmd, "./", 2)) cmd += 2;
        g->cmd_path = cmd[0] == '/' ? strdup(cmd) : cat3(g->cwd, "/", cmd);
        if (!g->cmd_path) return oq_err_set(err, OQ_ERR_NOMEM, "gate: out of memory");
        if (access(g->cmd_path, X_OK) != 0)
            return oq_err_set(err, OQ_ERR_NOT_FOUND, "%s: cannot execute: %s", g->o.argv[0],
                              strerror(errno));
        return OQ_OK;
    }
    const char *path = env_get(g, "PATH");
    char *copy = strdup(path ? path : "/usr/local/bin:/usr/bin:/bin");
    if (!copy) return oq_err_set(err, OQ_ERR_NOMEM, "gate: out of memory");
    for (char *save, *d = strtok_r(copy, ":", &save); d && !g->cmd_path; d = strtok_r(NULL, ":", &save)) {
        if (d[0] != '/') continue; /* a relative PATH entry would search the private folder */
        char *cand = cat3(d, "/", cmd);
        struct stat sb;
        if (cand && stat(cand, &sb) == 0 && S_ISREG(sb.st_mode) && access(cand, X_OK) == 0)
            g->cmd_path = cand;
        else
            free(cand);
    }
    free(copy);
    if (!g->cmd_path)
        return oq_err_set(err, OQ_ERR_NOT_FOUND, "%s: command not found in PATH", cmd);
    return OQ_OK;
}

/* The command runs elsewhere, so a relative argument that names something in
 * the caller's directory now names nothing (or something else): say so. */
static oq_status note_relative_args(oq_gate *g, oq_err *err)
{
    oq_status st = OQ_OK;
    for (size_t i = 1; g->o.argv[i] && st == OQ_OK; i++) {
        const char *a = g->o.argv[i];
        struct stat sb;
        if (a[0] != '/' && a[0] != '-' && stat(a, &sb) == 0)
            st = note(g, err, "argument '%s' names a path in the caller's directory, but the "
                              "command runs in the private folder: give it as an absolute path", a);
    }
    return st;
}

oq_status oq_gate_open_log(const char *path, int *fd, oq_err *err)
{
    OQ_NEED(err, path);
    OQ_NEED(err, fd);
    *fd = open(path, O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, 0600);
    if (*fd < 0) return oq_err_set(err, OQ_ERR_IO, "%s: cannot create log: %s", path, strerror(errno));
    return OQ_OK;
}

static oq_status make_dir(oq_gate *g, oq_err *err)
{
    const char *parent = g->o.tmp_parent;
    if (!parent) parent = getenv("TMPDIR");
    if (!parent || !*parent) parent = "/tmp";
    /* a relative TMPDIR would give CMD a relative PWD (POSIX: always absolute) */
    char *abs_parent = parent[0] == '/' ? NULL : cat3(g->cwd, "/", parent);
    if (parent[0] != '/' && !abs_parent) return oq_err_set(err, OQ_ERR_NOMEM, "gate: out of memory");
    g->dir = cat3(abs_parent ? abs_parent : parent, "/", "ortqual-gate-XXXXXX");
    free(abs_parent);
    if (!g->dir) return oq_err_set(err, OQ_ERR_NOMEM, "gate: out of memory");
    if (!mkdtemp(g->dir)) { /* mode 0700: nobody else can plant files in it */
        oq_status st = oq_err_set(err, OQ_ERR_IO, "%s: cannot create a private folder: %s", parent,
                                  strerror(errno));
        free(g->dir);
        g->dir = NULL;
        return st;
    }
    g->log_path = cat3(g->dir, "/", "gate.log");
    if (!g->log_path) return oq_err_set(err, OQ_ERR_NOMEM, "gate: out of memory");
    oq_status st = oq_gate_open_log(g->log_path, &g->log_fd, err);
    if (st == OQ_OK) st = env_set(g, "PWD", g->dir, err); /* scripts that read $PWD */
    return st;
}

oq_status oq_gate_create(const oq_gate_options *o, oq_gate **out, oq_err *err)
{
    OQ_NEED(err, o);
    OQ_NEED(err, out);
    *out = NULL;
    if (!o->argv || !o->argv[0])
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "no command to run (give it after --)");
    oq_gate *g = calloc(1, sizeof *g);
    if (!g) return oq_err_set(err, OQ_ERR_NOMEM, "gate: out of memory");
    g->o = *o;
    g->log_fd = -1;
    g->started = time(NULL);
    char real[PATH_MAX];
    oq_status st = getcwd(real, sizeof real) ? OQ_OK
                   : oq_err_set(err, OQ_ERR_IO, "cannot read the current directory: %s", strerror(errno));
    if (st == OQ_OK && !(g->cwd = realpath(real, NULL)))
        st = oq_err_set(err, OQ_ERR_IO, "%s: %s", real, strerror(errno));
    if (st == OQ_OK) st = copy_environ(g, err);
    if (st == OQ_OK) st = note_inherited_preload(g, err);
    if (st == OQ_OK) st = apply_env_options(g, err);
    if (st == OQ_OK) st = apply_path(g, err);
    if (st == OQ_OK) st = apply_pythonpath(g, err);
    if (st == OQ_OK) st = apply_pins(g, err);
    if (st == OQ_OK) st = apply_dispatch(g, err);
    if (st == OQ_OK && o->n_allow_skip) { /* a bad regex is a usage error, found before running */
        oq_gate_outcome none = {0};
        oq_gate_judgement j;
        st = oq_gate_judge(&none, o->allow_skip, o->n_allow_skip, NULL, &j, err);
        if (st == OQ_OK) oq_gate_judgement_clear(&j);
    }
    if (st == OQ_OK) st = resolve_command(g, err);
    if (st == OQ_OK) st = note_relative_args(g, err);
    if (st == OQ_OK) st = make_dir(g, err);
    if (st != OQ_OK) {
        oq_gate_free(g);
        return st;
    }
    *out = g;
    return OQ_OK;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path) == 0 ? 0 : -1;
}

void oq_gate_free(oq_gate *g)
{
    if (!g) return;
    if (g->log_fd >= 0) close(g->log_fd);
    if (g->dir && !g->o.keep) nftw(g->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    gate_strv_clear(&g->env);
    gate_strv_clear(&g->changes);
    gate_strv_clear(&g->notes);
    gate_strv_clear(&g->pins);
    oq_dispatch_expect_free(g->expect);
    free(g->cwd);
    free(g->cmd_path);
    free(g->dir);
    free(g->log_path);
    free(g);
}

const char *oq_gate_dir(const oq_gate *g) { return g ? g->dir : NULL; }
const char *oq_gate_log_path(const oq_gate *g) { return g ? g->log_path : NULL; }
const char *oq_gate_command_path(const oq_gate *g) { return g ? g->cmd_path : NULL; }

size_t oq_gate_env_changes(const oq_gate *g, const char *const **changes)
{
    if (changes) *changes = g ? (const char *const *)g->changes.v : NULL;
    return g ? g->changes.n : 0;
}

size_t oq_gate_notes(const oq_gate *g, const char *const **notes)
{
    if (notes) *notes = g ? (const char *const *)g->notes.v : NULL;
    return g ? g->notes.n : 0;
}

void oq_gate_allow_shard(oq_gate *g, int allow)
{
    if (g) g->allow_shard = allow != 0;
}
