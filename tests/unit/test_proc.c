#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ortqual/config.h"
#include "ortqual/proc.h"

static void run_sh(const char *script, double timeout, oq_proc_result *res)
{
    char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
    oq_err err = {0};
    assert_int_equal(oq_proc_run(argv, timeout, 64, 0, res, &err), OQ_OK);
}

static void test_exit_code_and_tail(void **state)
{
    (void)state;
    oq_proc_result res;
    run_sh("i=0; while [ $i -lt 100 ]; do echo line$i >&2; i=$((i+1)); done; exit 3", 10, &res);
    assert_int_equal(res.exit_code, 3);
    assert_false(res.signaled);
    assert_false(res.timed_out);
    assert_true(strlen(res.stderr_tail) <= 64);
    assert_non_null(strstr(res.stderr_tail, "line99\n")); /* the tail, not the head */
    assert_null(strstr(res.stderr_tail, "line1\n"));
    oq_proc_result_clear(&res);
}

static void test_signal_reported(void **state)
{
    (void)state;
    oq_proc_result res;
    char buf[128];
    run_sh("echo about to crash >&2; kill -SEGV $$", 10, &res);
    assert_true(res.signaled);
    assert_int_equal(res.signal, SIGSEGV);
    assert_non_null(strstr(oq_proc_describe(&res, buf, sizeof buf), "signal 11"));
    assert_non_null(strstr(res.stderr_tail, "about to crash"));
    oq_proc_result_clear(&res);
}

static void test_timeout_kills(void **state)
{
    (void)state;
    oq_proc_result res;
    run_sh("sleep 30", 0.3, &res);
    assert_true(res.timed_out);
    assert_true(res.seconds < 5);
    oq_proc_result_clear(&res);
}

/* ---- a child forked without exec ---- */

static void on_usr1(int sig) { (void)sig; }
static int fds_cloexec[2], fd_kept = -1, touched;

/* In the child: what exec would have given it, checked; 7 when all holds. */
static int forked_checks(void *ctx)
{
    struct sigaction sa;
    sigaction(SIGUSR1, NULL, &sa);
    if (sa.sa_handler != SIG_DFL) return 1;
    if (fcntl(fds_cloexec[0], F_GETFD) != -1 || errno != EBADF) return 2; /* closed, as exec would */
    if (fcntl(fd_kept, F_GETFD) == -1) return 3;                         /* inherited */
    if (getpgid(0) != getpid()) return 4;                                  /* its own group */
    touched = 1; /* the parent's copy stays 0 */
    fprintf(stderr, "forked child %s\n", (const char *)ctx);
    return 7;
}

static int forked_crash(void *ctx)
{
    (void)ctx;
    fprintf(stderr, "about to crash\n");
    fflush(stderr);
    raise(SIGSEGV);
    return 0;
}

static void test_fork_starts_as_exec_would(void **state)
{
    (void)state;
    struct sigaction sa = {.sa_handler = on_usr1};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    assert_int_equal(pipe2(fds_cloexec, O_CLOEXEC), 0);
    fd_kept = dup(fds_cloexec[1]); /* dup clears close-on-exec */
    oq_proc_result res;
    oq_err err = {0};
    assert_int_equal(oq_proc_fork_watch(forked_checks, "ran", 10, 256, 0, NULL, &res, &err), OQ_OK);
    assert_false(res.signaled);
    assert_int_equal(res.exit_code, 7);
    assert_non_null(strstr(res.stderr_tail, "forked child ran\n"));
    assert_int_equal(touched, 0);
    sigaction(SIGUSR1, NULL, &sa);
    assert_ptr_equal(sa.sa_handler, on_usr1); /* ours untouched */
    oq_proc_result_clear(&res);
    close(fds_cloexec[0]), close(fds_cloexec[1]), close(fd_kept);
    signal(SIGUSR1, SIG_DFL);
}

static void test_fork_crash_isolated(void **state)
{
    (void)state;
    oq_proc_result res;
    oq_err err = {0};
    char buf[128];
    assert_int_equal(oq_proc_fork_watch(forked_crash, NULL, 10, 256, 0, NULL, &res, &err), OQ_OK);
    assert_true(res.signaled);
    assert_int_equal(res.signal, SIGSEGV);
    assert_non_null(strstr(oq_proc_describe(&res, buf, sizeof buf), "signal 11"));
    assert_non_null(strstr(res.stderr_tail, "about to crash"));
    oq_proc_result_clear(&res);
}

static void *wait_release(void *arg)
{
    pthread_mutex_t *m = arg;
    pthread_mutex_lock(m);
    pthread_mutex_unlock(m);
    return NULL;
}

static void test_single_threaded(void **state)
{
    (void)state;
    assert_int_equal(oq_proc_single_threaded(), 1);
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_t t;
    pthread_mutex_lock(&m);
    assert_int_equal(pthread_create(&t, NULL, wait_release, &m), 0);
    assert_int_equal(oq_proc_single_threaded(), 0);
    pthread_mutex_unlock(&m);
    pthread_join(t, NULL);
}

static void test_config_parse(void **state)
{
    (void)state;
    oq_config c;
    oq_err err = {0};
    assert_int_equal(oq_config_parse("cuda:attention24:fp16:flash", &c, &err), OQ_OK);
    assert_string_equal(c.runtime, "cuda");
    assert_int_equal(c.repr, OQ_REPR_ATTENTION24);
    assert_int_equal(c.precision, OQ_PREC_FP16);
    assert_int_equal(oq_kernel_sdpa_mask(c.kernel), 1);
    assert_int_equal(oq_config_parse("ref:encoder:fp64", &c, &err), OQ_OK);
    assert_string_equal(c.name, "ref:encoder:fp64");
    assert_false(oq_config_uses_ort(&c));
    /* the spellings ORT takes for its CPU and CUDA providers name one configuration (the
     * reference ran again as 'CPU:model:fp32' and passed against itself) */
    static const struct { const char *text, *name; } same[] = {
        {"CPU:model:fp32", "cpu:model:fp32"},
        {"CPUExecutionProvider:decomposed:fp16", "cpu:decomposed:fp16"},
        {"Cuda:attention24:tf32", "cuda:attention24:tf32"},
        {"CPU:model:bf16", "cpu:model:bf16"},
        {"CUDAExecutionProvider:attention24:fp16:flash", "cuda:attention24:fp16:flash"},
    };
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        assert_int_equal(oq_config_parse(same[i].text, &c, &err), OQ_OK);
        assert_string_equal(c.name, same[i].name);
    }
    assert_true(oq_config_on_ep(&c)); /* cuda */
    assert_int_equal(oq_config_parse("CPU:attention24:fp32", &c, &err), OQ_OK);
    assert_false(oq_config_on_ep(&c)); /* judged as cpu, not as a plugin EP named CPU */

    static const struct { const char *text, *needle; } bad[] = {
        {"cpu:attention25:fp32", "unknown representation 'attention25'"},
        {"cpu:decomposed:fp8", "unknown precision 'fp8'"},
        {"cuda:attention24:fp16:fast", "unknown kernel 'fast'"},
        {"cpu:attention24", "expected <runtime>"},
        {"ref:decomposed:fp64", "runs only on ONNX Runtime"},
        {"cpu:encoder:fp32", "is the reference's own"},
        {"ref:encoder:fp32", "fp64 only"},
        {"cpu:decomposed:fp64", "fp64 is the reference's"},
        {"cpu:attention24:fp16:flash", "cuda runtime only"},
        {"cpu:attention24:tf32", "tf32 applies to the cuda runtime only"},
        {"cuda:attention24:bf16", "bf16 applies to representation model only"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_not_equal(oq_config_parse(bad[i].text, &c, &err), OQ_OK);
        if (!strstr(err.msg, bad[i].needle)) fail_msg("%s: got '%s'", bad[i].text, err.msg);
    }
}

/* The list of configurations (validate --list-configs) is the parser's: every entry parses to
 * itself, and every runtime, representation and precision the parser accepts is listed (it
 * missed cpu:decomposed:fp16, cpu:attention23:fp16 and ref:sdpa:fp64). */
static void test_config_known(void **state)
{
    (void)state;
    oq_config c, back, known[64];
    size_t n = 0;
    for (; oq_config_known(n, &c); n++) {
        assert_true(n < 64);
        assert_int_equal(oq_config_parse(c.name, &back, NULL), OQ_OK);
        assert_string_equal(back.name, c.name);
        known[n] = c;
    }
    static const char *const runtimes[] = {"ref", "cpu", "cuda", "CPU", "Cuda"};
    for (size_t t = 0; t < sizeof runtimes / sizeof *runtimes; t++)
        for (int r = OQ_REPR_ENCODER; r <= OQ_REPR_EXPECTED; r++)
            for (int p = OQ_PREC_FP64; p <= OQ_PREC_BF16; p++)
                for (int k = OQ_KERNEL_AUTO; k <= OQ_KERNEL_MATH; k++) {
                    char text[96];
                    snprintf(text, sizeof text, "%s:%s:%s:%s", runtimes[t], oq_repr_name((oq_repr)r),
                             oq_precision_name((oq_precision)p), oq_kernel_name((oq_kernel)k));
                    if (oq_config_parse(text, &c, NULL)) continue;
                    size_t i = 0;
                    while (i < n && !(!strcmp(known[i].runtime, c.runtime) && known[i].repr == c.repr &&
                                      known[i].precision == c.precision))
                        i++;
                    if (i == n) fail_msg("%s parses but is not listed", text);
                }
    for (const char *const *w = (const char *const[]){"cpu:decomposed:fp16", "cpu:attention23:fp16", "ref:sdpa:fp64",
                                                       "expected", NULL};
         *w; w++) {
        size_t i = 0;
        while (i < n && strcmp(known[i].name, *w)) i++;
        if (i == n) fail_msg("%s is not listed", *w);
    }
    assert_int_equal(oq_config_known(n, &c), 0);
    assert_int_equal(oq_config_known(0, NULL), 0);
}

static void test_config_ep_options(void **state)
{
    (void)state;
    oq_config c;
    char buf[16];
    const char *k[4], *v[4];
    assert_int_equal(oq_config_parse("cuda:attention24:fp16:flash", &c, NULL), OQ_OK);
    size_t n = oq_config_ep_options(&c, -1, k, v, 0, buf, sizeof buf);
    assert_int_equal(n, 2);
    assert_string_equal(k[0], "sdpa_kernel");
    assert_string_equal(v[0], "1");
    assert_string_equal(k[1], "use_tf32");
    assert_string_equal(v[1], "0");
    /* the caller's own keys win ... */
    k[0] = "sdpa_kernel", v[0] = "2", k[1] = "use_tf32", v[1] = "1";
    assert_int_equal(oq_config_ep_options(&c, -1, k, v, 2, buf, sizeof buf), 2);
    assert_string_equal(v[0], "2");
    assert_string_equal(v[1], "1");
    /* ... except a forced kernel (the --prove-teeth rerun) */
    assert_int_equal(oq_config_ep_options(&c, 16, k, v, 2, buf, sizeof buf), 2);
    assert_string_equal(v[0], "16");
    assert_int_equal(oq_config_parse("cuda:attention24:tf32", &c, NULL), OQ_OK);
    assert_int_equal(oq_config_ep_options(&c, -1, k, v, 0, buf, sizeof buf), 1);
    assert_string_equal(k[0], "use_tf32");
    assert_string_equal(v[0], "1");
    assert_int_equal(oq_config_parse("cpu:attention24:fp32", &c, NULL), OQ_OK);
    assert_int_equal(oq_config_ep_options(&c, -1, k, v, 0, buf, sizeof buf), 0);
}

struct watched {
    char lines[8][64];
    int n;
};

static void on_line(void *ctx, const char *line)
{
    struct watched *w = ctx;
    if (w->n < 8) snprintf(w->lines[w->n++], sizeof w->lines[0], "%s", line);
}

/* Watched lines reach the callback in order and stay out of the tail; the rest stays. */
static void test_watch_lines(void **state)
{
    (void)state;
    char *argv[] = {"/bin/sh", "-c",
                    "echo '@p 1 3' >&2; echo plain >&2; printf '@p 2 3\\n@p 3' >&2; sleep 0.1; "
                    "printf ' 3\\nnot@p\\n' >&2; printf '@p no newline' >&2", NULL};
    oq_proc_result res;
    struct watched w = {.n = 0};
    oq_proc_watch pw = {.prefix = "@p ", .on_line = on_line, .ctx = &w};
    oq_err err = {0};
    assert_int_equal(oq_proc_run_watch(argv, 10, 256, 0, &pw, &res, &err), OQ_OK);
    assert_int_equal(w.n, 3);
    assert_string_equal(w.lines[0], "1 3");
    assert_string_equal(w.lines[1], "2 3");
    assert_string_equal(w.lines[2], "3 3"); /* split across two writes */
    assert_string_equal(res.stderr_tail, "plain\nnot@p\n@p no newline");
    oq_proc_result_clear(&res);
}

/* Pages touched, then unmapped: VmHWM keeps them until the reset, which brings it down
 * to the resident set; pages touched after the reset raise it again. */
static void touch(size_t bytes, int unmap)
{
    unsigned char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    for (size_t i = 0; i < bytes; i += 4096) p[i] = 1;
    if (unmap) munmap(p, bytes);
}

static void test_peak_reset(void **state)
{
    (void)state;
    const uint64_t mib = 1u << 20;
    uint64_t rss = 0, before = 0, reset = 0, after = 0;
    touch(64 * mib, 1);
    assert_int_equal(oq_proc_memory(&rss, &before, NULL), OQ_OK);
    oq_err err = {0};
    assert_int_equal(oq_proc_peak_reset(&err), OQ_OK);
    assert_int_equal(oq_proc_memory(&rss, &reset, NULL), OQ_OK);
    assert_true(reset + 48 * mib < before);
    touch(16 * mib, 0);
    assert_int_equal(oq_proc_memory(&rss, &after, NULL), OQ_OK);
    assert_true(after >= reset + 15 * mib);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_threaded), /* first: no thread of another test left */
        cmocka_unit_test(test_fork_starts_as_exec_would),
        cmocka_unit_test(test_fork_crash_isolated),
        cmocka_unit_test(test_watch_lines),
        cmocka_unit_test(test_peak_reset),
        cmocka_unit_test(test_exit_code_and_tail),
        cmocka_unit_test(test_signal_reported),
        cmocka_unit_test(test_timeout_kills),
        cmocka_unit_test(test_config_parse),
        cmocka_unit_test(test_config_known),
        cmocka_unit_test(test_config_ep_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
