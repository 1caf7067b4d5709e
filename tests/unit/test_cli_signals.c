/* The handler gate, validate, replay and slurm share for SIGINT, SIGTERM and SIGHUP while a
 * child runs (src/cli/cli_signals.c): one ignored at the start stays ignored, what was there is
 * put back, a signal caught reaches the child's process group, and a second one ends the command. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_signals.h"

static void before(int sig)
{
    (void)sig;
}

static void (*handler_of(int sig))(int)
{
    struct sigaction sa;
    assert_int_equal(sigaction(sig, NULL, &sa), 0);
    return sa.sa_handler;
}

/* nohup's SIGHUP stays ignored; the others are caught and then given back what they had (the
 * tool's own handler, which removes its temporary files, or the default) */
static void ignored_kept_and_restored(void **state)
{
    (void)state;
    signal(SIGHUP, SIG_IGN);
    signal(SIGINT, before);
    signal(SIGTERM, SIG_DFL);
    oq_cli_signals s;
    oq_cli_signals_catch(&s);
    assert_true(handler_of(SIGHUP) == SIG_IGN);
    assert_true(handler_of(SIGINT) != before && handler_of(SIGINT) != SIG_DFL);
    assert_true(handler_of(SIGTERM) == handler_of(SIGINT));
    oq_cli_signals_release(&s);
    assert_true(handler_of(SIGHUP) == SIG_IGN);
    assert_true(handler_of(SIGINT) == before);
    assert_true(handler_of(SIGTERM) == SIG_DFL);
    oq_cli_signals z = {0};
    oq_cli_signals_release(&z); /* a zeroed one puts back nothing */
    assert_true(handler_of(SIGINT) == before);
    signal(SIGHUP, SIG_DFL);
    signal(SIGINT, SIG_DFL);
}

/* A child in a group of its own, waiting for a signal: SIGTERM to this process is noted and
 * ends the child, and one caught before the group was known reaches it when it is. */
static pid_t child_group(void)
{
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* as an exec would: the defaults back, then said ready */
        setpgid(0, 0);
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        close(ready[1]);
        for (;;) pause();
    }
    setpgid(pid, pid); /* both sides: whichever runs first */
    close(ready[1]);
    char c;
    assert_int_equal(read(ready[0], &c, 1), 0);
    close(ready[0]);
    return pid;
}

static int ended_by(pid_t pid)
{
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

static void passed_on(void **state)
{
    (void)state;
    oq_cli_signals s;
    oq_cli_signals_catch(&s);
    assert_int_equal(oq_cli_signal_caught(), 0);
    pid_t pid = child_group();
    oq_cli_signals_started(NULL, pid);
    kill(getpid(), SIGTERM);
    assert_int_equal(oq_cli_signal_caught(), SIGTERM);
    assert_int_equal(*oq_cli_signal_flag(), SIGTERM);
    assert_int_equal(ended_by(pid), SIGTERM);
    oq_cli_signals_release(&s);
    assert_int_equal(oq_cli_signal_caught(), SIGTERM); /* still readable */
    oq_cli_signals_catch(&s);
    assert_int_equal(oq_cli_signal_caught(), 0); /* a new catch starts clear */
    kill(getpid(), SIGINT);                       /* no group: noted only */
    assert_int_equal(oq_cli_signal_caught(), SIGINT);
    pid = child_group();
    oq_cli_signals_started(NULL, pid); /* came between the fork and now */
    assert_int_equal(ended_by(pid), SIGINT);
    oq_cli_signals_release(&s);
}

/* A second signal ends the command at once, by that signal (a first one only noted). */
static void second_ends_the_command(void **state)
{
    (void)state;
    pid_t cmd = fork();
    assert_true(cmd >= 0);
    if (cmd == 0) {
        oq_cli_signals s;
        oq_cli_signals_catch(&s);
        kill(getpid(), SIGINT);
        if (oq_cli_signal_caught() != SIGINT) _exit(1);
        kill(getpid(), SIGTERM);
        _exit(2); /* not reached where the rule holds */
    }
    assert_int_equal(ended_by(cmd), SIGTERM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ignored_kept_and_restored),
        cmocka_unit_test(passed_on),
        cmocka_unit_test(second_ends_the_command),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
