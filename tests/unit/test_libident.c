/* The ORT library a run records is the one mapped (runtime/libident.c), not the file at its path
 * when asked: a copy renamed over it after the load, a symlink re-pointed between a parent's load
 * and a forked worker, and saved outputs signed through such a link judged against that build
 * (QA 9b's D1, D8, D9). Each case loads ORT in a child of its own: one library per process, and
 * a process of one thread, as validate's forked workers need. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/core-impl.h"
#include "evidence/evidence-impl.h"
#include "ortqual/fileio.h"
#include "ortqual/runtime.h"
#include "ortqual/validate.h"
#define TESTUTIL_VALIDATE
#include "testutil.h"

/* In a child: a failed check says why and ends it with 1. */
#define CHILD_CHECK(cond, ...)                                                                                    \
    do {                                                                                                         \
        if (!(cond)) {                                                                                           \
            fprintf(stderr, __VA_ARGS__);                                                                        \
            fputc('\n', stderr);                                                                                 \
            _exit(1);                                                                                            \
        }                                                                                                        \
    } while (0)

/* fn(ctx) run in a child, which must end with 0. */
static void in_child(int (*fn)(const char *), const char *ctx)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(fn(ctx));
    int ws = 0;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    if (!WIFEXITED(ws) || WEXITSTATUS(ws)) fail_msg("the child failed (status %d)", ws);
}

/* dir/NAME: a copy of the bundled ORT; `other` set: with bytes appended (another file, still
 * the same ELF: never loaded here, only named). */
static char *ort_copy(const char *dir, const char *name, int other)
{
    char *path = path_in(dir, name), cmd[2 * PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'%s", OQ_ORT_LIB, path, other ? " && printf 'another' >> " : "");
    if (other) snprintf(cmd + strlen(cmd), sizeof cmd - strlen(cmd), "'%s'", path);
    assert_int_equal(system(cmd), 0);
    return path;
}

/* `link` made to point to `target`, in one step (a package upgrade's re-pointed link). */
static int repoint(const char *link, const char *target)
{
    char tmp[PATH_MAX + 16];
    if (snprintf(tmp, sizeof tmp, "%s.new", link) >= (int)sizeof tmp) return -1;
    unlink(tmp);
    return symlink(target, tmp) || rename(tmp, link) ? -1 : 0;
}

/* What the evidence of rt records of its library: the path, the digest ("" for null) and whether
 * a warning names the library as replaced. */
static void ort_evidence(oq_runtime *rt, char *lib, char sha[65], int *warned)
{
    oq_evidence_opts opts = {.skip_shadowing = 1};
    json_t *ev = oq_evidence_collect_json(rt, &opts), *ort = json_object_get(ev, "ort"), *w;
    size_t i;
    snprintf(lib, PATH_MAX, "%s", json_string_value(json_object_get(ort, "lib_path")));
    const char *s = json_string_value(json_object_get(ort, "library_sha256"));
    snprintf(sha, 65, "%s", s ? s : "");
    *warned = 0;
    json_array_foreach(json_object_get(ev, "warnings"), i, w)
        *warned |= strstr(json_string_value(w), "was replaced after it was loaded") != NULL;
    json_decref(ev);
}

static char g_dir[PATH_MAX];

/* Named before the swap: the mapped bytes' digest stays, whatever is at the path since. */
static int named_then_replaced(const char *dir)
{
    char *lib = path_in(dir, "lib1.so"), *other = path_in(dir, "other.so"), want[65], path[PATH_MAX], sha[65];
    int warned;
    oq_runtime *rt;
    CHILD_CHECK(!oq_sha256_file(lib, want, NULL), "hash %s", lib);
    CHILD_CHECK(!oq_runtime_load(lib, &rt, NULL), "load %s", lib);
    ort_evidence(rt, path, sha, &warned);
    CHILD_CHECK(!strcmp(sha, want), "before: %s, want %s", sha, want);
    CHILD_CHECK(!rename(other, lib), "rename");
    ort_evidence(rt, path, sha, &warned);
    CHILD_CHECK(!strcmp(path, lib) && !strcmp(sha, want) && !warned, "after the swap: %s %s (want %s %s)", path, sha,
                lib, want);
    return 0;
}

/* Replaced before anything asked: not named (null) and said, never the new file's digest. */
static int replaced_then_asked(const char *dir)
{
    char *lib = path_in(dir, "lib2.so"), *other = path_in(dir, "other2.so"), path[PATH_MAX], sha[65];
    int warned;
    oq_runtime *rt;
    CHILD_CHECK(!oq_runtime_load(lib, &rt, NULL), "load %s", lib);
    CHILD_CHECK(!rename(other, lib), "rename");
    ort_evidence(rt, path, sha, &warned);
    CHILD_CHECK(!strcmp(path, lib) && !*sha && warned, "replaced: %s sha '%s' warned %d", path, sha, warned);
    return 0;
}

static void library_renamed_over_after_load(void **state)
{
    (void)state;
    char *dir = temp_dir("libswap");
    free(ort_copy(dir, "lib1.so", 0));
    free(ort_copy(dir, "other.so", 1));
    free(ort_copy(dir, "lib2.so", 0));
    free(ort_copy(dir, "other2.so", 1));
    in_child(named_then_replaced, dir);
    in_child(replaced_then_asked, dir);
    remove_dir(dir);
}

/* The parent loads DIR/cur.so (-> a.so) and names it; the link is re-pointed to b.so; a worker
 * forked after that loads DIR/cur.so: the loader hands it the inherited a.so, which it names by
 * a.so's path and digest (it recorded b.so's: "2 builds ran"). */
static int forked_after_repoint(const char *dir)
{
    char *cur = path_in(dir, "cur.so"), *a = path_in(dir, "a.so"), *b = path_in(dir, "b.so"), want[65];
    char path[PATH_MAX], sha[65];
    int warned;
    oq_runtime *rt;
    CHILD_CHECK(!oq_sha256_file(a, want, NULL), "hash");
    CHILD_CHECK(!oq_runtime_load(cur, &rt, NULL), "load %s", cur);
    ort_evidence(rt, path, sha, &warned);
    CHILD_CHECK(!repoint(cur, b), "re-point");
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        oq_runtime *w;
        CHILD_CHECK(!oq_runtime_load(cur, &w, NULL), "worker: load %s", cur);
        ort_evidence(w, path, sha, &warned);
        CHILD_CHECK(!strcmp(path, a) && !strcmp(oq_runtime_lib_path(w), a) && !strcmp(sha, want),
                    "worker names %s (%s), want %s (%s)", path, sha, a, want);
        _exit(0);
    }
    int ws = 0;
    CHILD_CHECK(waitpid(pid, &ws, 0) == pid && WIFEXITED(ws) && !WEXITSTATUS(ws), "the worker failed");
    return 0;
}

/* fn in a child, given a folder of two builds, a.so and b.so (its bytes differ), and cur.so ->
 * a.so; the folder removed after. */
static void with_linked_builds(const char *tag, int (*fn)(const char *))
{
    char *dir = temp_dir(tag), *cur = path_in(dir, "cur.so");
    free(ort_copy(dir, "a.so", 0));
    free(ort_copy(dir, "b.so", 1));
    assert_int_equal(repoint(cur, "a.so"), 0);
    in_child(fn, dir);
    free(cur);
    oq_remove_tree(dir);
    free(dir);
}

static void symlink_repointed_before_fork(void **state)
{
    (void)state;
    with_linked_builds("librepoint", forked_after_repoint);
}

/* In each forked worker: the link re-pointed to b.so, as an upgrade between the parent's load
 * and the worker's would. */
static void repoint_to_b(void)
{
    char cur[PATH_MAX + 8];
    snprintf(cur, sizeof cur, "%s/cur.so", g_dir);
    if (repoint(cur, "b.so")) _exit(9);
}

/* The first outputs_*.npz under dir, into out. */
static void first_saved(const char *dir, char *out, size_t n)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    *out = '\0';
    while (d && !*out && (e = readdir(d)))
        if (!strncmp(e->d_name, "outputs_", 8) && strstr(e->d_name, ".npz")) snprintf(out, n, "%s/%s", dir, e->d_name);
    if (d) closedir(d);
    assert_true(*out);
}

/* hand_attention's batch against `expected`, on ORT `lib`, workers forked (hook: each one's). */
static oq_status run_hand(const char *lib, const char *expected, const char *outdir, int save, void (*hook)(void),
                          oq_validate_summary **s, oq_err *err)
{
#define HA OQ_SOURCE_DIR "/tests/fixtures/torch/hand_attention/"
    static const char *inputs[] = {HA "inputs_000.npz"};
    const char *exp[] = {expected};
    oq_config cfg[2];
    oq_validate_opts o;
    validate_user_expected(&o, cfg, HA "hand_attention_op18.onnx", inputs, 1, outdir);
#undef HA
    o.expected_files = exp;
    o.n_expected_files = 1;
    o.isolate = 1;
    o.self_exe = OQ_BINARY_DIR "/ortqual";
    o.ort_lib = lib;
    o.save_outputs = save;
    o.on_worker_fork = hook;
    return oq_validate_run(&o, s, err);
}

/* Outputs saved through cur.so, re-pointed to b.so before the worker loaded it, ran on a.so:
 * they are signed with a.so's path and digest, and judging a.so against them is refused as ORT
 * compared with itself (it PASSED with max_abs 0). */
static int saved_through_repointed_link(const char *dir)
{
    char *cur = path_in(dir, "cur.so"), *a = path_in(dir, "a.so"), *out1 = path_in(dir, "save"),
         *out2 = path_in(dir, "judge"), saved[PATH_MAX + 32], want[65];
    oq_validate_summary *s = NULL;
    oq_err err = {0};
    CHILD_CHECK(!oq_sha256_file(a, want, NULL), "hash");
    snprintf(g_dir, sizeof g_dir, "%s", dir);
    CHILD_CHECK(!run_hand(cur, OQ_SOURCE_DIR "/tests/fixtures/torch/hand_attention/outputs_000.npz", out1, 1,
                          repoint_to_b, &s, &err),
                "saving run: %s", err.msg);
    CHILD_CHECK(s->configs[1].worker.forked, "the worker was not forked");
    CHILD_CHECK(!strcmp(s->configs[1].ort_library, a) && !strcmp(s->configs[1].ort_library_sha256, want),
                "recorded %s (%s), ran %s (%s)", s->configs[1].ort_library, s->configs[1].ort_library_sha256, a, want);
    oq_validate_summary_free(s);
    first_saved(out1, saved, sizeof saved);
    s = NULL;
    oq_status st = run_hand(a, saved, out2, 0, NULL, &s, &err);
    CHILD_CHECK(st == OQ_ERR_INVALID_ARG && strstr(err.msg, "compared with itself"), "judging a.so: %d %s", (int)st,
                err.msg);
    oq_validate_summary_free(s);
    return 0;
}

static void saved_outputs_through_repointed_link(void **state)
{
    (void)state;
    with_linked_builds("libsaved", saved_through_repointed_link);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(library_renamed_over_after_load),
        cmocka_unit_test(symlink_repointed_before_fork),
        cmocka_unit_test(saved_outputs_through_repointed_link),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
