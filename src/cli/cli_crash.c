/* A worker that crashes says where: the signal and a backtrace on stderr (the parent keeps
 * the tail in summary.json, and a crash inside an execution provider names its library). */
#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#if defined(__SANITIZE_ADDRESS__) /* the sanitizer's own report is better */
void oq_cli_crash_backtrace(void) {}
void oq_cli_crash_report(const char *who, const char *after) { (void)who, (void)after; }
#else
static char alt_stack[64 * 1024]; /* a stack overflow still gets its backtrace */
static const char *crash_who = "ortqual worker", *crash_after; /* set before the handler is */

static void put(const char *s) { (void)!write(STDERR_FILENO, s, strlen(s)); }

static void on_crash(int sig)
{
    void *frames[64];
    char num[8] = {0};
    int n = sig, i = (int)sizeof num - 1;
    do num[--i] = (char)('0' + n % 10); while ((n /= 10) && i);
    put(crash_who);
    put(": crashed with signal ");
    put(num + i);
    put(" (");
    put(sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
    put("); backtrace (library(+offset) per frame, innermost first):\n");
    backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
    if (crash_after) put(crash_after);
    signal(sig, SIG_DFL); /* the parent sees the signal itself */
    raise(sig);
}

void oq_cli_crash_backtrace(void)
{
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    void *warm[1];
    backtrace(warm, 1); /* loads libgcc now: not from inside the handler */
    stack_t ss = {.ss_sp = alt_stack, .ss_size = sizeof alt_stack};
    sigaltstack(&ss, NULL);
    struct sigaction sa = {.sa_handler = on_crash, .sa_flags = SA_ONSTACK | SA_RESETHAND};
    sigemptyset(&sa.sa_mask);
    for (size_t k = 0; k < sizeof sigs / sizeof *sigs; k++) sigaction(sigs[k], &sa, NULL);
}

void oq_cli_crash_report(const char *who, const char *after)
{
    crash_who = who;
    crash_after = after;
    oq_cli_crash_backtrace();
}
#endif
