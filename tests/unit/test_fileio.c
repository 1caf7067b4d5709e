/* oq_read_file and oq_check_regular_file: what is not a regular file, or is too large,
 * is refused by name before anything is read (issue 15: /dev/zero was read forever). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fileio/fileio-impl.h"
#include "ortqual/fileio.h"
#include "ortqual/npz.h"
#include "testutil.h"

static void expect_refused(const char *path, const char *text)
{
    unsigned char *buf = NULL;
    size_t n = 0;
    oq_err err = {0};
    alarm(10); /* a read that never ends fails here instead of hanging the suite */
    oq_status st = oq_read_file(path, &buf, &n, &err);
    alarm(0);
    if (st != OQ_ERR_IO || !strstr(err.msg, path) || !strstr(err.msg, text))
        fail_msg("%s: got %d '%s', wanted OQ_ERR_IO with '%s'", path, st, err.msg, text);
    assert_null(buf);
    assert_int_equal(oq_check_regular_file(path, NULL, &err), OQ_ERR_IO);
    assert_non_null(strstr(err.msg, text));
}

static void test_not_regular_files(void **state)
{
    (void)state;
    char *dir = temp_dir("fileio");
    expect_refused(dir, ": is a directory, not a regular file");
    expect_refused("/dev/zero", ": is a character device, not a regular file");
    char fifo[512];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    expect_refused(fifo, ": is a FIFO (named pipe), not a regular file"); /* no writer waited for */
    unlink(fifo);
    expect_refused("/nonexistent/x.onnx", ": cannot open: No such file or directory");
    oq_npz *z = NULL; /* .npz files are opened by libzip, after the same check */
    oq_err err = {0};
    assert_int_equal(oq_npz_read("/dev/zero", &z, &err), OQ_ERR_IO);
    assert_string_equal(err.msg, "/dev/zero: is a character device, not a regular file");
    remove_dir(dir);
}

/* An output path that is a FIFO or a directory is refused before anything is written, and the
 * node is left as it was (the rename used to replace a FIFO, or /dev/null, with a file). */
static void test_output_not_regular(void **state)
{
    (void)state;
    char *dir = temp_dir("outkind"), fifo[512];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    oq_err err = {0};
    assert_int_equal(oq_write_file_atomic(fifo, "x", 1, 1, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "/fifo: is a FIFO (named pipe); results are written to regular files only"));
    oq_atomic_file af;
    assert_int_equal(oq_atomic_open(&af, fifo, 1, &err), OQ_ERR_INVALID_ARG);
    struct stat sb;
    assert_int_equal(lstat(fifo, &sb), 0);
    assert_true(S_ISFIFO(sb.st_mode));
    assert_int_equal(oq_write_file_atomic(dir, "x", 1, 1, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, ": is a directory; results are written to regular files only"));
    assert_int_equal(dir_entries(dir), 1); /* the FIFO alone: no temporary file left */
    /* the same found before any work */
    assert_int_equal(oq_check_output_path(fifo, 1, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "/fifo: is a FIFO (named pipe); results are written to regular files only"));
    assert_int_equal(oq_check_output_path("", 1, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "an output path is empty");
    assert_int_equal(oq_check_output_path(fifo, 0, &err), OQ_ERR_INVALID_ARG);
    char path[600];
    snprintf(path, sizeof path, "%s/no/x.json", dir);
    assert_int_equal(oq_check_output_path(path, 1, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "/no/x.json: folder '"));
    assert_non_null(strstr(err.msg, "/no': No such file or directory"));
    snprintf(path, sizeof path, "%s/fifo/x.json", dir);
    assert_int_equal(oq_check_output_path(path, 1, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "/fifo' is not a folder"));
    snprintf(path, sizeof path, "%s/new.json", dir);
    assert_int_equal(oq_check_output_path(path, 0, &err), OQ_OK);
    assert_int_equal(oq_check_output_path("relative.json", 0, &err), access("relative.json", F_OK) ? OQ_OK : OQ_ERR_IO);
    unlink(fifo);
    remove_dir(dir);
}

static void test_size_limit(void **state)
{
    (void)state;
    char *dir = temp_dir("fileio");
    char big[512];
    snprintf(big, sizeof big, "%s/big.onnx", dir);
    FILE *f = fopen(big, "w");
    assert_non_null(f);
    /* sparse: one byte above the limit costs no disk */
    assert_int_equal(ftruncate(fileno(f), (off_t)OQ_READ_MAX + 1), 0);
    fclose(f);
    expect_refused(big, ": 17179869185 bytes, above the limit of 17179869184 (16 GiB)");
    remove_dir(dir);
}

static void test_regular_file(void **state)
{
    (void)state;
    char *dir = temp_dir("fileio");
    char path[512];
    snprintf(path, sizeof path, "%s/f.txt", dir);
    oq_err err = {0};
    assert_int_equal(oq_write_file_atomic(path, "abc", 3, 0, &err), OQ_OK);
    unsigned char *buf = NULL;
    size_t n = 0;
    assert_int_equal(oq_read_file(path, &buf, &n, &err), OQ_OK);
    assert_int_equal(n, 3);
    assert_string_equal((char *)buf, "abc"); /* NUL-terminated */
    free(buf);
    uint64_t size = 0;
    assert_int_equal(oq_check_regular_file(path, &size, &err), OQ_OK);
    assert_int_equal(size, 3);
    remove_dir(dir);
}

static void put(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

/* oq_replace_file_nosync: an earlier file replaced whole; a directory in the way is refused. */
static void test_replace_file(void **state)
{
    (void)state;
    char *dir = temp_dir("replace"), path[512];
    snprintf(path, sizeof path, "%s/inputs_000.npz", dir);
    put(path, "the earlier run's batch, longer than the new one");
    assert_int_equal(oq_replace_file_nosync(path, "new", 3, NULL), OQ_OK);
    unsigned char *buf = NULL;
    size_t n = 0;
    assert_int_equal(oq_read_file(path, &buf, &n, NULL), OQ_OK);
    assert_int_equal(n, 3);
    assert_memory_equal(buf, "new", 3);
    free(buf);
    oq_err err = {0};
    assert_int_equal(oq_replace_file_nosync(dir, "x", 1, &err), OQ_ERR_OUTPUT);
    assert_non_null(strstr(err.msg, "cannot replace"));
    remove_dir(dir);
}

static nlink_t links_of(const char *path)
{
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    return st.st_nlink;
}

static void assert_holds(const char *path, const char *text)
{
    unsigned char *buf = NULL;
    size_t n = 0;
    assert_int_equal(oq_read_file(path, &buf, &n, NULL), OQ_OK);
    assert_true(n == strlen(text) && !memcmp(buf, text, n));
    free(buf);
}

/* The same bytes again: the file is left (a second name linked to it still names it); other
 * bytes of the same length, or a link where the file was, are replaced by a new regular file
 * (the earlier file and the link's target untouched). */
static void test_replace_same_bytes(void **state)
{
    (void)state;
    char *dir = temp_dir("same"), path[512], keep[512];
    snprintf(path, sizeof path, "%s/inputs_000.npz", dir);
    snprintf(keep, sizeof keep, "%s/keep", dir);
    assert_int_equal(oq_replace_file_nosync(path, "batch-A", 7, NULL), OQ_OK);
    assert_int_equal(link(path, keep), 0);
    assert_int_equal(oq_replace_file_nosync(path, "batch-A", 7, NULL), OQ_OK);
    assert_int_equal(links_of(path), 2);
    assert_int_equal(oq_replace_file_nosync(path, "batch-B", 7, NULL), OQ_OK);
    assert_int_equal(links_of(path), 1);
    assert_holds(path, "batch-B");
    assert_holds(keep, "batch-A");
    assert_int_equal(unlink(path), 0);
    assert_int_equal(symlink(keep, path), 0);
    assert_int_equal(oq_replace_file_nosync(path, "batch-A", 7, NULL), OQ_OK);
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(links_of(keep), 1);
    assert_holds(keep, "batch-A");
    remove_dir(dir);
}

/* oq_install_file_nosync: put in place; the same bytes again keep the file as it was (the
 * identity a reader took still holds); other bytes replace it whole (the earlier file untouched
 * under another name); no temporary file is left. */
static void test_install_file(void **state)
{
    (void)state;
    char *dir = temp_dir("install"), path[512], keep[512];
    snprintf(path, sizeof path, "%s/entry.npz", dir);
    snprintf(keep, sizeof keep, "%s/keep", dir);
    assert_int_equal(oq_install_file_nosync(path, "outputs-A", 9, 0, NULL), OQ_OK);
    assert_int_equal(link(path, keep), 0);
    unsigned char *buf = NULL;
    size_t n = 0;
    oq_file_id read, now;
    assert_int_equal(oq_read_file_id(path, &buf, &n, &read, NULL), OQ_OK);
    free(buf);
    assert_int_equal(oq_install_file_nosync(path, "outputs-A", 9, 0, NULL), OQ_OK);
    assert_int_equal(oq_read_file_id(path, &buf, &n, &now, NULL), OQ_OK);
    free(buf);
    assert_true(oq_file_id_same(&read, &now));
    assert_int_equal(oq_install_file_nosync(path, "outputs-B", 9, 0, NULL), OQ_OK);
    assert_int_equal(links_of(path), 1);
    assert_holds(path, "outputs-B");
    assert_holds(keep, "outputs-A");
    assert_int_equal(dir_entries(dir), 2);
    remove_dir(dir);
}

/* Writers of the same bytes at once (runs sharing a cache): the first file put in place is the
 * one every writer finds after its own write; none replaced another's. */
static void test_install_concurrent(void **state)
{
    (void)state;
    enum { WRITERS = 8, SIZE = 1 << 16 };
    char *dir = temp_dir("install_race"), path[512];
    snprintf(path, sizeof path, "%s/entry.npz", dir);
    static char bytes[SIZE];
    memset(bytes, 'x', sizeof bytes);
    int start[2], found[2];
    assert_int_equal(pipe(start) | pipe(found), 0);
    for (int i = 0; i < WRITERS; i++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid) continue;
        char go;
        close(start[1]);
        ssize_t r = read(start[0], &go, 1); /* 0 when the parent closes it: all start together */
        struct stat st;
        int ok = r == 0 && oq_install_file_nosync(path, bytes, sizeof bytes, 0, NULL) == OQ_OK && stat(path, &st) == 0;
        ino_t ino = ok ? st.st_ino : 0;
        _exit(write(found[1], &ino, sizeof ino) == sizeof ino ? 0 : 1);
    }
    close(start[0]);
    close(start[1]);
    close(found[1]);
    struct stat final;
    for (int i = 0; i < WRITERS; i++) {
        int status;
        assert_true(wait(&status) > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    assert_int_equal(stat(path, &final), 0);
    for (int i = 0; i < WRITERS; i++) {
        ino_t ino;
        assert_int_equal(read(found[0], &ino, sizeof ino), sizeof ino);
        assert_true(ino == final.st_ino);
    }
    close(found[0]);
    assert_int_equal(dir_entries(dir), 1);
    remove_dir(dir);
}

/* oq_text_utf8: paths are bytes; what a JSON or XML document gets of one is valid UTF-8, each
 * byte that starts no valid sequence one U+FFFD, the rest kept as they are. */
static void test_text_utf8(void **state)
{
    (void)state;
    static const struct { const char *in, *out; } cases[] = {
        {"/tmp/plain", "/tmp/plain"},
        {"/tmp/b\xff/lib.so", "/tmp/b\xEF\xBF\xBD/lib.so"},
        {"caf\xc3\xa9 \xe2\x82", "caf\xc3\xa9 \xEF\xBF\xBD\xEF\xBF\xBD"}, /* a sequence cut short */
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *t = oq_text_utf8(cases[i].in);
        assert_non_null(t);
        assert_string_equal(t, cases[i].out);
        free(t);
    }
    assert_null(oq_text_utf8(NULL));
}

/* The temporaries a signal handler removes: those of this process still open (two at once),
 * never one put in place or aborted, never a forked parent's. */
static void test_remove_temporaries(void **state)
{
    (void)state;
    char *dir = temp_dir("temps"), a[512], b[512], c[512];
    snprintf(a, sizeof a, "%s/a.npz", dir);
    snprintf(b, sizeof b, "%s/b.npz", dir);
    snprintf(c, sizeof c, "%s/c.npz", dir);
    oq_atomic_file fa, fb, fc;
    assert_int_equal(oq_atomic_open(&fa, a, 1, NULL), OQ_OK);
    assert_int_equal(oq_atomic_open(&fb, b, 1, NULL), OQ_OK);
    assert_int_equal(oq_atomic_open(&fc, c, 1, NULL), OQ_OK);
    fputs("whole", fc.fp);
    assert_int_equal(oq_atomic_commit(&fc, NULL), OQ_OK);
    char keep_b[512];
    snprintf(keep_b, sizeof keep_b, "%s", fb.tmp);
    oq_atomic_abort(&fb);
    assert_int_equal(dir_entries(dir), 2); /* a's temporary, c */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (!pid) {
        oq_atomic_remove_temporaries(); /* a child's: the parent's a stays */
        _exit(0);
    }
    int status;
    assert_true(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
    assert_int_equal(access(fa.tmp, F_OK), 0);
    oq_atomic_remove_temporaries();
    assert_int_equal(access(fa.tmp, F_OK), -1);
    assert_int_equal(access(keep_b, F_OK), -1);
    assert_holds(c, "whole");
    assert_int_equal(dir_entries(dir), 1);
    oq_atomic_abort(&fa);
    remove_dir(dir);
}

/* The outputs of a set not yet complete go with the temporaries: the files held, a scratch folder
 * held with the files others named in it, then the folder held when they leave it empty; never a
 * forked parent's, never once kept. */
static void test_remove_held_outputs(void **state)
{
    (void)state;
    char *dir = temp_dir("held"), sub[256], a[512], b[512], c[512], scratch[512], in[600];
    snprintf(sub, sizeof sub, "%s/profiles", dir);
    snprintf(a, sizeof a, "%s/summary.json", dir);
    snprintf(b, sizeof b, "%s/profile_000.json", sub);
    snprintf(c, sizeof c, "%s/kept.csv", dir);
    snprintf(scratch, sizeof scratch, "%s/.profile_001.XXXXXX", sub);
    assert_int_equal(mkdir(sub, 0755), 0);
    assert_non_null(mkdtemp(scratch));
    for (int i = 0; i < 300; i++) { /* more names than one read of the folder takes */
        snprintf(in, sizeof in, "%s/profile_001_%03d_ORT's own name.json", scratch, i);
        assert_int_equal(oq_write_file_atomic(in, "p", 1, 1, NULL), OQ_OK);
    }
    assert_int_equal(oq_write_file_atomic(c, "c", 1, 1, NULL), OQ_OK);
    oq_atomic_hold_output(c, 0);
    oq_atomic_keep_outputs(); /* c's set complete */
    oq_atomic_hold_output(sub, 1); /* before its file: the folder goes after it all the same */
    oq_scratch_hold(scratch);
    assert_int_equal(oq_write_file_atomic(a, "a", 1, 1, NULL), OQ_OK);
    assert_int_equal(oq_write_file_atomic(b, "b", 1, 1, NULL), OQ_OK);
    oq_atomic_hold_output(a, 0);
    oq_atomic_hold_output(b, 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (!pid) {
        oq_atomic_remove_temporaries(); /* a child's: the parent's stay */
        _exit(0);
    }
    int status;
    assert_true(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
    assert_int_equal(access(a, F_OK), 0);
    assert_int_equal(access(in, F_OK), 0);
    oq_atomic_remove_temporaries();
    assert_int_equal(access(a, F_OK), -1);
    assert_int_equal(access(b, F_OK), -1);
    assert_int_equal(access(scratch, F_OK), -1);
    assert_int_equal(access(sub, F_OK), -1);
    assert_holds(c, "c");
    oq_atomic_keep_outputs();
    remove_dir(dir);
}

/* The temporary's name, spelled in one place: the template a write makes, and the names that
 * cleaners take for one (mkstemp's characters filled in): of the file named or of any, of the
 * process named or of any. */
static void test_temp_names(void **state)
{
    (void)state;
    char *dir = temp_dir("tname"), path[512], mine[64];
    snprintf(path, sizeof path, "%s/fig.png", dir);
    oq_atomic_file af;
    assert_int_equal(oq_atomic_open(&af, path, 1, NULL), OQ_OK);
    const char *name = strrchr(af.tmp, '/') + 1;
    snprintf(mine, sizeof mine, "fig.png.tmp.%ld.", (long)getpid());
    assert_int_equal(strncmp(name, mine, strlen(mine)), 0);
    assert_true(oq_temp_name_is(name, "fig.png", getpid()));
    assert_true(oq_temp_name_is(name, "fig.png", 0));
    assert_true(oq_temp_name_is(name, NULL, 0));
    assert_false(oq_temp_name_is(name, "fig.png", getpid() + 1)); /* another process's */
    assert_false(oq_temp_name_is(name, "fig.pn", 0));
    assert_false(oq_temp_name_is(name, "ig.png", 0));
    assert_false(oq_temp_name_is("fig.png", NULL, 0));
    assert_false(oq_temp_name_is("fig.png.tmp.AbC123", NULL, 0));   /* no pid */
    assert_false(oq_temp_name_is("fig.png.tmp.12.ab-cde", NULL, 0)); /* not mkstemp's */
    assert_true(oq_temp_name_is(".tmp.12.abcdef", "", 12));
    char *t = oq_temp_template(path);
    assert_int_equal(strlen(t), strlen(af.tmp));
    assert_int_equal(strncmp(t, af.tmp, strlen(af.tmp) - 6), 0);
    free(t);
    oq_atomic_abort(&af);
    remove_dir(dir);
}

/* The address space of this process now, in bytes (VmSize), 0 when unknown. */
static size_t address_space(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    size_t kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %zu kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb * 1024;
}

/* In a child: a "<key>_hex" path whose bytes cannot be allocated (an address-space limit just
 * above what is in use) is out of memory (*ok cleared), not a missing path. */
static int hex_path_out_of_memory(void)
{
    size_t n = (size_t)64 << 20;
    char *hex = malloc(n + 1);
    if (!hex) return 3;
    memset(hex, 'a', n);
    hex[n] = '\0';
    json_t *obj = json_pack("{s:s, s:s}", "p", "x", "p_hex", hex);
    free(hex);
    struct rlimit lim = {address_space() + ((size_t)8 << 20), RLIM_INFINITY};
    if (!obj || lim.rlim_cur <= (8u << 20) || setrlimit(RLIMIT_AS, &lim)) return 3;
    int ok = 1;
    char *p = oq_json_path_dup(obj, "p", &ok);
    return p ? 2 : ok; /* 0: out of memory said */
}

static void test_json_path_out_of_memory(void **state)
{
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    skip(); /* ASan's allocator ends the process where malloc would return NULL */
#endif
    int ok = 1;
    json_t *bad = json_pack("{s:s, s:s}", "p", "x", "p_hex", "abc"); /* odd: not hex, as if no path */
    assert_null(oq_json_path_dup(bad, "p", &ok));
    assert_int_equal(ok, 1);
    json_decref(bad);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (!pid) _exit(hex_path_out_of_memory());
    int status;
    assert_true(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
    if (WEXITSTATUS(status)) fail_msg("child: %d (1: out of memory reported as no path)", WEXITSTATUS(status));
}

/* Every real a JSON writer writes reads back as its double, in the fewest digits from
 * jansson's 10-digit form: 1e-5 stays "1e-5" (17 digits wrote 1.0000000000000001e-5), a
 * tolerance of 0.10008144378662108 keeps its digits (10 wrote 0.1000814438); integers and
 * strings that look like numbers stay as they are. */
static void test_json_reals_read_back(void **state)
{
    (void)state;
    json_t *j = json_pack("{s:f, s:f, s:f, s:f, s:f, s:I, s:s, s:[f]}", "a", 1e-5, "b", 0.1, "rtol",
                          0.10008144378662108, "big", 12345678910.0, "neg", -2.5e-300, "n", (json_int_t)42, "s",
                          "1.00000000000000001e-5 \"0.30000000000000004\"", "v", 0.1 + 0.2);
    char *text = oq_json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(3));
    assert_string_equal(text, "{\"a\":1e-5,\"b\":0.1,\"rtol\":0.10008144378662108,\"big\":1.234567891e10,"
                              "\"neg\":-2.5e-300,\"n\":42,\"s\":\"1.00000000000000001e-5 \\\"0.30000000000000004\\\"\","
                              "\"v\":[0.30000000000000004]}");
    json_t *back = json_loads(text, 0, NULL);
    assert_true(json_equal(j, back));
    free(text);
    json_decref(back);
    json_decref(j);
}

/* One holder at a time, the second told the first's pid; the folders the lock made go with it;
 * a lock file left by a killed run holds nobody; a link in its place is refused. */
/* An output folder in the way is refused in the library's terms: its caller has no --force or
 * --outdir, it passes force (or overwrite) and a folder. */
static void test_outdir_in_library_terms(void **state)
{
    (void)state;
    char *dir = temp_dir("outdir"), path[600];
    oq_err err = {0};
    snprintf(path, sizeof path, "%s/notes.txt", dir);
    put(path, "x\n");
    assert_int_equal(oq_check_outdir(dir, 0, NULL, &err), OQ_ERR_IO);
    if (!strstr(err.msg, "not empty (it holds 'notes.txt')") || !strstr(err.msg, "overwrite") || strstr(err.msg, "--"))
        fail_msg("got '%s'", err.msg);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    put(path, "{}\n");
    assert_int_equal(oq_check_outdir(dir, 0, NULL, &err), OQ_ERR_IO);
    if (!strstr(err.msg, "summary.json exists (overwrite it, or choose another output folder)") || strstr(err.msg, "--"))
        fail_msg("got '%s'", err.msg);
    assert_int_equal(oq_check_outdir(dir, 1, NULL, &err), OQ_OK);
    remove_dir(dir);
}

/* oq_outdir_forget: only the names given, each that is there, in order, said as they went; a
 * user's other files stay (a run's start, before its work: nothing of an earlier run stands). */
static void test_outdir_forget(void **state)
{
    (void)state;
    char *dir = temp_dir("forget"), path[600], said[32] = "";
    static const char *const set[] = {"summary.json", "summary.csv", "report.html"};
    snprintf(path, sizeof path, "%s/summary.json", dir);
    put(path, "{}\n");
    snprintf(path, sizeof path, "%s/report.html", dir);
    put(path, "<html>\n");
    snprintf(path, sizeof path, "%s/notes.txt", dir);
    put(path, "mine\n");
    assert_int_equal(oq_outdir_forget(dir, set, 3, said, sizeof said), 2);
    assert_string_equal(said, "summary.json, report.html");
    assert_int_equal(access(path, F_OK), 0);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    assert_int_not_equal(access(path, F_OK), 0);
    put(path, "{}\n");
    char small[8] = "";
    assert_int_equal(oq_outdir_forget(dir, set, 3, small, sizeof small), 1); /* said cut short, never past */
    assert_string_equal(small, "summary");
    assert_int_equal(oq_outdir_forget(dir, set, 3, NULL, 0), 0);
    assert_int_equal(oq_outdir_forget(NULL, set, 3, NULL, 0), 0);
    assert_int_equal(oq_outdir_forget(dir, NULL, 3, NULL, 0), 0);
    remove_dir(dir);
}

static void test_outdir_lock(void **state)
{
    (void)state;
    char *dir = temp_dir("lock"), out[512], sub[512], path[600], want[64];
    snprintf(sub, sizeof sub, "%s/runs", dir);
    snprintf(out, sizeof out, "%s/runs/a", dir);
    oq_outdir_lock *a = NULL, *b = NULL;
    oq_err err = {0};
    assert_int_equal(oq_outdir_lock_create(out, NULL, &a, &err), OQ_OK);
    assert_non_null(a);
    assert_int_equal(oq_outdir_lock_create(out, NULL, &b, &err), OQ_ERR_IO); /* flock: per open file */
    assert_null(b);
    snprintf(want, sizeof want, "in use by another ortqual run (pid %ld, holding ", (long)getpid());
    if (!strstr(err.msg, out) || !strstr(err.msg, want)) fail_msg("got '%s'", err.msg);
    assert_null(strstr(err.msg, "--")); /* a library caller has no --outdir */
    assert_int_equal(access(out, F_OK), 0); /* the refused one made nothing: it removes nothing */
    oq_outdir_lock_free(a);
    assert_int_not_equal(access(sub, F_OK), 0); /* made by the lock, left empty: gone */

    assert_int_equal(mkdir(sub, 0755), 0);
    snprintf(path, sizeof path, "%s/%s", sub, OQ_OUTDIR_LOCK);
    put(path, "99999\n"); /* a killed holder's */
    assert_int_equal(oq_outdir_lock_create(sub, NULL, &a, &err), OQ_OK);
    snprintf(want, sizeof want, "%ld\n", (long)getpid());
    assert_holds(path, want);
    oq_outdir_lock_free(a);
    assert_int_not_equal(access(path, F_OK), 0);
    assert_int_equal(access(sub, F_OK), 0); /* not made by it: stays */

    assert_int_equal(symlink("/tmp/victim", path), 0);
    assert_int_equal(oq_outdir_lock_create(sub, NULL, &a, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "is a symbolic link"));
    unlink(path);
    rmdir(sub);
    remove_dir(dir);
}

/* The shards of a split hold the folder's lock together; a run that takes it whole is refused
 * while any does, and a shard while such a run does; the last shard to end removes the file. */
static void test_outdir_lock_shared(void **state)
{
    (void)state;
    char *dir = temp_dir("shared"), path[600];
    snprintf(path, sizeof path, "%s/%s", dir, OQ_OUTDIR_LOCK);
    oq_outdir_lock *s1 = NULL, *s2 = NULL, *x = NULL;
    oq_err err = {0};
    assert_int_equal(oq_outdir_lock_create_shared(dir, &s1, &err), OQ_OK);
    assert_int_equal(oq_outdir_lock_create_shared(dir, &s2, &err), OQ_OK);
    assert_non_null(s1);
    assert_non_null(s2);
    assert_int_equal(oq_outdir_lock_create(dir, NULL, &x, &err), OQ_ERR_IO);
    if (!strstr(err.msg, "in use by the shards of a split run (holding ")) fail_msg("got '%s'", err.msg);
    oq_outdir_lock_free(s1);
    assert_int_equal(access(path, F_OK), 0); /* s2 holds it still */
    assert_int_equal(oq_outdir_lock_create(dir, NULL, &x, &err), OQ_ERR_IO);
    oq_outdir_lock_free(s2);
    assert_int_not_equal(access(path, F_OK), 0);
    assert_int_equal(oq_outdir_lock_create(dir, NULL, &x, &err), OQ_OK);
    assert_int_equal(oq_outdir_lock_create_shared(dir, &s1, &err), OQ_ERR_IO);
    char want[64];
    snprintf(want, sizeof want, "in use by another ortqual run (pid %ld, ", (long)getpid());
    if (!strstr(err.msg, want)) fail_msg("got '%s'", err.msg);
    oq_outdir_lock_free(x);
    assert_int_not_equal(access(path, F_OK), 0);
    remove_dir(dir);
}

/* Without --force, what a killed run left (no summary.json) is said to be that: an interrupted
 * run that --force clears; another file, a link named .work, or the batches of a prepared split
 * are "not empty". */
static void test_outdir_interrupted(void **state)
{
    (void)state;
    const char *left[] = {"inputs_003.npz", "outputs_cpu_attention24_fp32_000.npz", "validate.csv.tmp.4242.a1B2c3",
                          ".work"};
    for (size_t i = 0; i < sizeof left / sizeof *left; i++) {
        char *dir = temp_dir("killed"), path[600], want[200];
        oq_err err = {0};
        snprintf(path, sizeof path, "%s/notes.txt", dir);
        put(path, "mine");
        snprintf(path, sizeof path, "%s/%s", dir, left[i]);
        if (i == 3) assert_int_equal(mkdir(path, 0755), 0);
        else put(path, "");
        assert_int_equal(oq_check_outdir(dir, 0, NULL, &err), OQ_ERR_IO);
        snprintf(want, sizeof want, ": an earlier run here was interrupted (it left '%s' and no summary.json): "
                 "forcing clears", left[i]);
        if (!strstr(err.msg, want)) fail_msg("%s: got '%s'", left[i], err.msg);
        assert_int_equal(oq_check_outdir(dir, 1, NULL, &err), OQ_OK);
        if (i == 3) {
            assert_int_equal(rmdir(path), 0);
            assert_int_equal(symlink("/tmp", path), 0);
            assert_int_equal(oq_check_outdir(dir, 0, NULL, &err), OQ_ERR_IO);
            if (!strstr(err.msg, ": not empty (it holds '")) fail_msg("a link: got '%s'", err.msg);
            unlink(path);
        } else { /* a prepared split's batches wait for its shards: not a leftover */
            snprintf(path, sizeof path, "%s/shards", dir);
            assert_int_equal(mkdir(path, 0755), 0);
            snprintf(path, sizeof path, "%s/shards/plan.json", dir);
            put(path, "{}");
            assert_int_equal(oq_check_outdir(dir, 0, NULL, &err), OQ_ERR_IO);
            if (!strstr(err.msg, ": not empty (it holds '")) fail_msg("a split: got '%s'", err.msg);
            unlink(path);
            snprintf(path, sizeof path, "%s/shards", dir);
            rmdir(path);
        }
        remove_dir(dir);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_reals_read_back),
        cmocka_unit_test(test_not_regular_files),
        cmocka_unit_test(test_output_not_regular),
        cmocka_unit_test(test_size_limit),
        cmocka_unit_test(test_regular_file),
        cmocka_unit_test(test_replace_file),
        cmocka_unit_test(test_replace_same_bytes),
        cmocka_unit_test(test_install_file),
        cmocka_unit_test(test_install_concurrent),
        cmocka_unit_test(test_text_utf8),
        cmocka_unit_test(test_remove_temporaries),
        cmocka_unit_test(test_remove_held_outputs),
        cmocka_unit_test(test_outdir_lock),
        cmocka_unit_test(test_outdir_lock_shared),
        cmocka_unit_test(test_outdir_interrupted),
        cmocka_unit_test(test_outdir_in_library_terms),
        cmocka_unit_test(test_outdir_forget),
        cmocka_unit_test(test_json_path_out_of_memory),
        cmocka_unit_test(test_temp_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
