/* fd-level capture: lines written to fd 1/2 by a separate shared object. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ortqual/capture.h"
#include "ortqual/dispatch.h"
#include "testutil.h"

#define ROUTE "\x1b[36mOperator=Attention Node=attn0 DataType=fp16 SdpaKernel=FLASH_ATTENTION\x1b[0m"
#define MAX_LINES 64

static int (*fdw_write)(int, const char *, size_t);
static int (*fdw_write_str)(int, const char *);
static int (*fdw_printf_line)(const char *);
static int (*fdw_write_repeated)(int, char, size_t, size_t);

/* What the sink saw. */
typedef struct seen {
    int n;
    int fd[MAX_LINES];
    char *line[MAX_LINES];
    uint64_t total;
    int bad_len;
} seen;

static seen g_seen;
static oq_capture *g_cap;
static int g_saved[3] = {-1, -1, -1}; /* the test runner's own fd 1 / fd 2 */
static int g_real[3] = {-1, -1, -1};  /* temp files standing in for the "real" fd 1 / fd 2 */

/* Keeps ORT routing lines, passes everything else through. */
static bool sink(void *user, int fd, const char *line, size_t len)
{
    seen *s = user;
    if (strlen(line) != len) s->bad_len++; /* checked on the test thread, not here */
    if (s->n < MAX_LINES) {
        s->fd[s->n] = fd;
        s->line[s->n] = strdup(line);
        s->n++;
    }
    s->total++;
    return strstr(line, "SdpaKernel=") != NULL || strstr(line, "AttentionKernelOptions:") != NULL;
}

static void seen_clear(seen *s)
{
    for (int i = 0; i < s->n && i < MAX_LINES; i++) free(s->line[i]);
    memset(s, 0, sizeof *s);
}

/* Everything that reached the stand-in for the real descriptor. */
static char *real_text(int fd, size_t *n)
{
    off_t end = lseek(g_real[fd], 0, SEEK_END);
    char *buf = malloc((size_t)end + 1);
    assert_non_null(buf);
    assert_int_equal(pread(g_real[fd], buf, (size_t)end, 0), end);
    buf[end] = '\0';
    if (n) *n = (size_t)end;
    return buf;
}

static int make_temp(void)
{
    char path[] = "/tmp/oq_capture_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    return fd;
}

static int setup(void **state)
{
    (void)state;
    fflush(NULL);
    for (int fd = 1; fd <= 2; fd++) {
        g_saved[fd] = dup(fd);
        g_real[fd] = make_temp();
        dup2(g_real[fd], fd);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    oq_capture_end(g_cap, NULL, NULL); /* a failed assertion left it running */
    g_cap = NULL;
    fflush(NULL);
    for (int fd = 1; fd <= 2; fd++) {
        dup2(g_saved[fd], fd);
        close(g_saved[fd]);
        close(g_real[fd]);
    }
    seen_clear(&g_seen);
    return 0;
}

static void begin(unsigned flags)
{
    oq_err err = {0};
    assert_int_equal(oq_capture_begin(&g_cap, flags, sink, &g_seen, &err), OQ_OK);
}

static void end(oq_capture_stats *st)
{
    oq_err err = {0};
    oq_status s = oq_capture_end(g_cap, st, &err);
    g_cap = NULL;
    assert_int_equal(s, OQ_OK);
    assert_int_equal(g_seen.bad_len, 0);
}

static void test_module_lines_interleaved(void **state)
{
    (void)state;
    begin(OQ_CAPTURE_STDOUT);
    assert_int_equal(fdw_write_str(1, "AttentionKernelOptions: FLASH_ATTENTION=1 MATH=1\n" ROUTE
                                      "\nhello from ort\n"),
                     0);
    assert_int_equal(fdw_printf_line("printf from the module"), 0);
    assert_int_equal(fdw_write_str(1, ROUTE "\n"), 0);
    oq_capture_stats st;
    end(&st);
    assert_int_equal(g_seen.n, 5);
    assert_string_equal(g_seen.line[1], ROUTE);
    assert_string_equal(g_seen.line[2], "hello from ort");
    assert_string_equal(g_seen.line[3], "printf from the module");
    assert_int_equal(g_seen.fd[4], 1);
    assert_int_equal(st.lines[1], 5);
    assert_int_equal(st.kept[1], 3);
    char *real = real_text(1, NULL);
    assert_string_equal(real, "hello from ort\nprintf from the module\n");
    free(real);
}

/* A FILE*-level redirection (what Python's sys.stdout swap or freopen-style
 * tricks amount to) never sees a write(2) on fd 1; the fd capture does. */
static void test_stdio_redirection_misses_fd_writes(void **state)
{
    (void)state;
    char membuf[256] = {0};
    FILE *mem = fmemopen(membuf, sizeof membuf, "w");
    assert_non_null(mem);
    FILE *orig = stdout;
    stdout = mem;
    assert_int_equal(fdw_write_str(1, ROUTE "\n"), 0); /* no capture yet */
    begin(OQ_CAPTURE_STDOUT);
    assert_int_equal(fdw_write_str(1, ROUTE "\n"), 0);
    end(NULL);
    fflush(mem);
    stdout = orig;
    fclose(mem);
    assert_string_equal(membuf, "");               /* the stdio redirection saw nothing */
    char *real = real_text(1, NULL);
    assert_string_equal(real, ROUTE "\n");          /* the first one went to the real fd */
    free(real);
    assert_int_equal(g_seen.n, 1);                  /* the second one: captured */
    assert_string_equal(g_seen.line[0], ROUTE);
}

static void test_lines_split_across_writes(void **state)
{
    (void)state;
    begin(OQ_CAPTURE_STDOUT);
    assert_int_equal(fdw_write_str(1, "\x1b[36mOperator=Atte"), 0);
    assert_int_equal(fdw_write_str(1, "ntion Node=attn1 DataType=bf16 Sdpa"), 0);
    assert_int_equal(fdw_write_str(1, "Kernel=MATH\x1b[0m\nmid"), 0);
    assert_int_equal(fdw_write_str(1, "dle\r\nno newline at the end"), 0);
    end(NULL);
    assert_int_equal(g_seen.n, 3);
    assert_string_equal(g_seen.line[0],
                        "\x1b[36mOperator=Attention Node=attn1 DataType=bf16 SdpaKernel=MATH\x1b[0m");
    assert_string_equal(g_seen.line[1], "middle\r");
    assert_string_equal(g_seen.line[2], "no newline at the end");
    char *real = real_text(1, NULL);
    assert_string_equal(real, "middle\r\nno newline at the end");
    free(real);
}

static void test_four_megabytes_no_deadlock(void **state)
{
    (void)state;
    const size_t mb4 = 4u << 20;
    begin(OQ_CAPTURE_STDOUT);
    assert_int_equal(fdw_write_repeated(1, 'a', mb4, 0), 0);    /* one 4 MiB line, one write */
    assert_int_equal(fdw_write_str(1, "\n" ROUTE "\n"), 0);
    assert_int_equal(fdw_write_repeated(1, 'b', mb4, 128), 0);  /* 32768 short lines */
    oq_capture_stats st;
    end(&st);
    assert_int_equal(st.bytes[1], 2 * mb4 + strlen(ROUTE) + 2);
    assert_int_equal(st.overlong[1], mb4 + 1);
    assert_int_equal(st.lines[1], 1 + mb4 / 128);
    assert_int_equal(st.kept[1], 1);
    assert_int_equal(g_seen.total, 1 + mb4 / 128);
    assert_string_equal(g_seen.line[0], ROUTE);
    size_t n;
    char *real = real_text(1, &n);
    assert_int_equal(n, 2 * mb4 + 1);
    assert_int_equal(real[0], 'a');
    assert_int_equal(real[mb4 - 1], 'a');
    assert_int_equal(real[mb4], '\n');
    assert_int_equal(real[mb4 + 1], 'b');
    free(real);
}

static void test_fds_restored_after_end(void **state)
{
    (void)state;
    begin(OQ_CAPTURE_STDOUT | OQ_CAPTURE_STDERR);
    end(NULL);
    assert_int_equal(g_seen.n, 0); /* nothing written: no line, no hang */
    assert_int_equal(fdw_write_str(1, ROUTE "\n"), 0);
    assert_int_equal(fdw_write_str(2, "to stderr\n"), 0);
    assert_int_equal(g_seen.n, 0);
    char *out = real_text(1, NULL), *errt = real_text(2, NULL);
    assert_string_equal(out, ROUTE "\n");
    assert_string_equal(errt, "to stderr\n");
    free(out);
    free(errt);
}

static void test_stderr_captured_apart(void **state)
{
    (void)state;
    begin(OQ_CAPTURE_STDOUT | OQ_CAPTURE_STDERR);
    assert_int_equal(fdw_write_str(2, "warning on stderr\n"), 0);
    end(NULL);
    begin(OQ_CAPTURE_STDERR);
    assert_int_equal(fdw_write_str(1, "plain stdout\n"), 0);
    end(NULL);
    assert_int_equal(g_seen.n, 1);
    assert_int_equal(g_seen.fd[0], 2);
    assert_string_equal(g_seen.line[0], "warning on stderr");
    char *out = real_text(1, NULL), *errt = real_text(2, NULL);
    assert_string_equal(out, "plain stdout\n");
    assert_string_equal(errt, "warning on stderr\n");
    free(out);
    free(errt);
}

static void test_quiet_passes_nothing(void **state)
{
    (void)state;
    begin(OQ_CAPTURE_STDOUT | OQ_CAPTURE_QUIET);
    assert_int_equal(fdw_write_str(1, "chatter\n" ROUTE "\n"), 0);
    end(NULL);
    assert_int_equal(g_seen.n, 2);
    char *real = real_text(1, NULL);
    assert_string_equal(real, "");
    free(real);
}

/* Muted: what a module writes to fd 1 (and what stdio buffered) reaches nothing; unmuted, the
 * real descriptor is back; fd 2 is untouched; a bad fd mutes nothing. */
static void test_mute(void **state)
{
    (void)state;
    printf("buffered before ");
    int saved = oq_capture_mute(1);
    assert_true(saved >= 0);
    assert_int_equal(fdw_write_str(1, ROUTE "\n"), 0);
    assert_int_equal(fdw_write_str(2, "stderr stays\n"), 0);
    printf("buffered while muted\n");
    oq_capture_unmute(1, saved);
    assert_int_equal(fdw_write_str(1, "after\n"), 0);
    char *out = real_text(1, NULL), *errt = real_text(2, NULL);
    assert_string_equal(out, "buffered before after\n");
    assert_string_equal(errt, "stderr stays\n");
    free(out);
    free(errt);
    assert_int_equal(oq_capture_mute(0), -1);
    oq_capture_unmute(1, -1); /* a no-op */
    assert_int_equal(fdw_write_str(1, "still\n"), 0);
    out = real_text(1, NULL);
    assert_string_equal(out, "buffered before after\nstill\n");
    free(out);
}

/* A child that inherited the pipe's write end cannot make oq_capture_end hang. */
static void test_child_holding_pipe_does_not_block_end(void **state)
{
    (void)state;
    begin(OQ_CAPTURE_STDOUT);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        sleep(3);
        _exit(0);
    }
    assert_int_equal(fdw_write_str(1, ROUTE "\n"), 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    end(NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    assert_true(secs < 2.0);
    assert_int_equal(g_seen.n, 1);
}

/* fd 2 closed: begin fails naming fd 2, and fd 1 is left as it was. */
static void test_closed_fd_rejected(void **state)
{
    (void)state;
    int keep2 = dup(2);
    close(2);
    oq_err err = {0};
    oq_status s = oq_capture_begin(&g_cap, OQ_CAPTURE_STDOUT | OQ_CAPTURE_STDERR, sink, &g_seen, &err);
    dup2(keep2, 2);
    close(keep2);
    assert_int_equal(s, OQ_ERR_IO);
    assert_null(g_cap);
    assert_string_equal(err.msg, "capture: fd 2 is not open: Bad file descriptor");
    assert_int_equal(fdw_write_str(1, "after failure\n"), 0);
    assert_int_equal(g_seen.n, 0);
    char *real = real_text(1, NULL);
    assert_string_equal(real, "after failure\n");
    free(real);
}

/* Fault injection: the test links with -Wl,--wrap for the calls through which
 * begin acquires a resource, so the k-th of them can fail on demand. Running
 * the real process out of descriptors (RLIMIT_NOFILE) would depend on how the
 * kernel numbers and limits fds; counting calls does not. */
static int g_fail_at; /* 0: never; k: the k-th acquiring call fails */
static int g_calls;

static bool inject(void)
{
    return g_fail_at > 0 && ++g_calls == g_fail_at;
}

int __real_pipe2(int fds[2], int flags);
int __real_dup2(int from, int to);
int __real_fcntl(int fd, int cmd, ...);
int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);

int __wrap_pipe2(int fds[2], int flags)
{
    if (inject()) return errno = EMFILE, -1;
    return __real_pipe2(fds, flags);
}

int __wrap_dup2(int from, int to)
{
    if (inject()) return errno = EBUSY, -1;
    return __real_dup2(from, to);
}

/* Only F_DUPFD_CLOEXEC acquires; F_GETFD/F_GETFL/F_SETFL (also from the reader
 * thread) pass through uncounted. */
int __wrap_fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    long arg = va_arg(ap, long);
    va_end(ap);
    if (cmd == F_DUPFD_CLOEXEC && inject()) return errno = EMFILE, -1;
    return __real_fcntl(fd, cmd, arg);
}

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
    if (inject()) return EAGAIN;
    return __real_pthread_create(t, a, fn, arg);
}

/* Every acquiring call of begin fails in turn: each failure must leave fd 1 and
 * fd 2 on the real files, with nothing captured and no descriptor leaked. */
static void test_every_failure_point_restores(void **state)
{
    (void)state;
    int open_before = dir_entries("/proc/self/fd");
    int failures = 0, expected_bytes = 0;
    for (int k = 1; k <= 64; k++) {
        g_calls = 0;
        g_fail_at = k;
        oq_err err = {0};
        oq_status s = oq_capture_begin(&g_cap, OQ_CAPTURE_STDOUT | OQ_CAPTURE_STDERR, sink, &g_seen,
                                       &err);
        g_fail_at = 0;
        if (s == OQ_OK) {
            end(NULL);
            break;
        }
        failures++;
        assert_true(s == OQ_ERR_IO || s == OQ_ERR_RUNTIME);
        assert_null(g_cap);
        assert_non_null(strstr(err.msg, "capture: cannot"));
        assert_int_equal(fdw_write_str(1, "x\n"), 0);
        assert_int_equal(fdw_write_str(2, "y\n"), 0);
        expected_bytes += 2;
        assert_int_equal(dir_entries("/proc/self/fd"), open_before); /* nothing leaked */
    }
    /* per stream: dup of the original, data pipe, stop pipe, reader thread, dup2 */
    assert_int_equal(failures, 10);
    assert_int_equal(g_seen.n, 0);
    size_t n1, n2;
    char *out = real_text(1, &n1), *errt = real_text(2, &n2);
    assert_int_equal(n1, expected_bytes);
    assert_int_equal(n2, expected_bytes);
    free(out);
    free(errt);
}

/* The capture feeding the dispatch parser: records for routing text, the rest
 * on the real descriptors, a last unterminated line included. */
static void test_dispatch_mode(void **state)
{
    (void)state;
    oq_dispatch_parser *parser;
    oq_err err = {0};
    assert_int_equal(oq_dispatch_parser_create(&parser, &err), OQ_OK);
    assert_int_equal(oq_capture_begin_dispatch(&g_cap, OQ_CAPTURE_STDOUT | OQ_CAPTURE_STDERR, parser, &err),
                     OQ_OK);
    assert_int_equal(fdw_write_str(1, "\x1b[36mAttentionKernelOptions: FLASH_ATTENTION=1 MATH=1\x1b[0m\n"), 0);
    assert_int_equal(fdw_write_str(1, "plain output\n" ROUTE "\n"), 0);
    assert_int_equal(fdw_write_str(2, "an ORT warning\n"), 0);
    assert_int_equal(fdw_write_str(1, "test_a.py::test_x \x1b[36mOperator=Attention Node=attn1 "
                                      "DataType=fp16 SdpaKernel=MATH\x1b[0m\n"),
                     0);
    assert_int_equal(fdw_write_str(1, "Operator=Attention Node=attn2 DataType=bf16 SdpaKernel=EFFICIENT_ATTENTION"),
                     0);
    end(NULL);
    const oq_dispatch_log *log = oq_dispatch_parser_log(parser);
    assert_int_equal(log->n_options, 1);
    assert_int_equal(log->n_records, 3);
    assert_string_equal(log->records[0].node, "attn0");
    assert_int_equal(log->records[0].kernel, OQ_SDPA_FLASH_ATTENTION);
    assert_string_equal(log->records[1].node, "attn1");
    assert_int_equal(log->records[1].kernel, OQ_SDPA_MATH);
    assert_string_equal(log->records[2].node, "attn2"); /* the unterminated last line */
    assert_int_equal(log->records[2].kernel, OQ_SDPA_EFFICIENT_ATTENTION);
    char *out = real_text(1, NULL), *errt = real_text(2, NULL);
    assert_non_null(strstr(out, "plain output\n"));
    assert_non_null(strstr(out, "test_a.py::test_x"));
    assert_null(strstr(out, "SdpaKernel"));
    assert_null(strstr(out, "AttentionKernelOptions"));
    assert_string_equal(errt, "an ORT warning\n");
    free(out);
    free(errt);
    oq_dispatch_parser_free(parser);
    assert_int_equal(oq_capture_begin_dispatch(&g_cap, OQ_CAPTURE_STDOUT, NULL, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "oq_capture_begin_dispatch: parser is NULL");
}

static void test_bad_arguments(void **state)
{
    (void)state;
    oq_err err = {0};
    assert_int_equal(oq_capture_begin(NULL, OQ_CAPTURE_STDOUT, sink, NULL, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "oq_capture_begin: out is NULL");
    assert_int_equal(oq_capture_begin(&g_cap, OQ_CAPTURE_STDOUT, NULL, NULL, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "oq_capture_begin: sink is NULL");
    assert_int_equal(oq_capture_begin(&g_cap, OQ_CAPTURE_QUIET, sink, NULL, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "flags 0x4"));
    assert_int_equal(oq_capture_begin(&g_cap, 0x11, sink, NULL, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "flags 0x11"));
    assert_null(g_cap);
    assert_int_equal(oq_capture_end(NULL, NULL, &err), OQ_OK);
}

static void test_dispatch_env(void **state)
{
    (void)state;
    oq_dispatch_env saved;
    oq_err err = {0};
    unsetenv(OQ_DISPATCH_ENV_VAR);
    assert_int_equal(oq_dispatch_env_enable(&saved, &err), OQ_OK);
    assert_string_equal(getenv(OQ_DISPATCH_ENV_VAR), "1");
    oq_dispatch_env_restore(&saved);
    assert_null(getenv(OQ_DISPATCH_ENV_VAR));

    setenv(OQ_DISPATCH_ENV_VAR, "0", 1);
    assert_int_equal(oq_dispatch_env_enable(&saved, &err), OQ_OK);
    assert_string_equal(getenv(OQ_DISPATCH_ENV_VAR), "1");
    oq_dispatch_env_restore(&saved);
    assert_string_equal(getenv(OQ_DISPATCH_ENV_VAR), "0");
    unsetenv(OQ_DISPATCH_ENV_VAR);

    assert_int_equal(oq_dispatch_env_enable(NULL, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "oq_dispatch_env_enable: saved is NULL");
}

int main(void)
{
    void *h = dlopen(OQ_FD1_WRITER, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "cannot load %s: %s\n", OQ_FD1_WRITER, dlerror());
        return 1;
    }
    *(void **)&fdw_write = dlsym(h, "fdw_write");
    *(void **)&fdw_write_str = dlsym(h, "fdw_write_str");
    *(void **)&fdw_printf_line = dlsym(h, "fdw_printf_line");
    *(void **)&fdw_write_repeated = dlsym(h, "fdw_write_repeated");
    if (!fdw_write || !fdw_write_str || !fdw_printf_line || !fdw_write_repeated) {
        fprintf(stderr, "fd1_writer: missing symbol\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_module_lines_interleaved, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stdio_redirection_misses_fd_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lines_split_across_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_four_megabytes_no_deadlock, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fds_restored_after_end, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stderr_captured_apart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quiet_passes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mute, setup, teardown),
        cmocka_unit_test_setup_teardown(test_child_holding_pipe_does_not_block_end, setup, teardown),
        cmocka_unit_test_setup_teardown(test_closed_fd_rejected, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_failure_point_restores, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
        cmocka_unit_test(test_dispatch_env),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    dlclose(h);
    return rc;
}
