/* The signals a command passes on to the child it runs, or says as they end it (cli_signals.h). */
#include "cli_signals.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "ortqual/fileio.h"

/* what the handler reads and writes: the process's, as signal dispositions are */
static volatile sig_atomic_t caught, child_pgid;

static const int passed_on[] = {SIGINT, SIGTERM, SIGHUP};
#define N_PASSED_ON (sizeof passed_on / sizeof *passed_on)
_Static_assert(N_PASSED_ON == sizeof ((oq_cli_signals *)0)->old / sizeof(struct sigaction), "one old action a signal");

/* A second signal ends the command at once: the child's group killed, the temporaries removed,
 * this process ended by the signal. A step that waits on something outside, or a child that
 * ignores the first, would otherwise keep it (a loop may go on to its next wait). */
static void pass_on(int sig)
{
    int saved = errno; /* kill may set it under the code interrupted */
    if (child_pgid > 0) kill(-child_pgid, caught ? SIGKILL : sig);
    if (caught) {
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        oq_atomic_remove_temporaries();
        sigaction(sig, &dfl, NULL);
        raise(sig); /* delivered, by its default action, when this handler returns */
    }
    caught = sig;
    errno = saved;
}

/* The three signals' actions replaced by `sa` (its mask emptied here), the old ones kept in s. */
static void replace_actions(oq_cli_signals *s, struct sigaction *sa)
{
    sigemptyset(&sa->sa_mask);
    memset(s, 0, sizeof *s);
    for (unsigned i = 0; i < N_PASSED_ON; i++)
        /* one ignored at the start (nohup, `cmd &` in a script) is left ignored: the user asked
         * that it end nothing, and the children inherit that */
        if (sigaction(passed_on[i], NULL, &s->old[i]) == 0 && s->old[i].sa_handler != SIG_IGN &&
            sigaction(passed_on[i], sa, NULL) == 0)
            s->replaced |= 1u << i;
}

void oq_cli_signals_catch(oq_cli_signals *s)
{
    struct sigaction sa = {.sa_handler = pass_on};
    caught = 0;
    child_pgid = 0;
    replace_actions(s, &sa);
}

/* oq_cli_signals_say's line, written whole by a handler that may not allocate or format */
static char said[4096];
static size_t said_at, said_n; /* where the signal's name goes, and the line's length */

static void say_and_end(int sig)
{
    const char *name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP";
    char line[sizeof said + 16];
    size_t k = strlen(name);
    memcpy(line, said, said_at);
    memcpy(line + said_at, name, k);
    memcpy(line + said_at + k, said + said_at, said_n - said_at);
    for (size_t n = said_n + k, at = 0; at < n;) {
        ssize_t w = write(2, line + at, n - at);
        if (w <= 0) break;
        at += (size_t)w;
    }
    oq_atomic_remove_temporaries();
    raise(sig); /* SA_RESETHAND put the default back, SA_NODEFER lets it through */
}

void oq_cli_signals_say(oq_cli_signals *s, const char *head, const char *tail)
{
    int at = snprintf(said, sizeof said, "%sstopped by ", head);
    said_at = at < 0 ? 0 : (size_t)at < sizeof said ? (size_t)at : sizeof said - 1;
    snprintf(said + said_at, sizeof said - said_at, "%s\n", tail);
    said_n = strlen(said);
    struct sigaction sa = {.sa_handler = say_and_end, .sa_flags = SA_RESETHAND | SA_NODEFER};
    replace_actions(s, &sa);
}

void oq_cli_signals_release(oq_cli_signals *s)
{
    for (unsigned i = 0; i < N_PASSED_ON; i++)
        if (s->replaced & 1u << i) sigaction(passed_on[i], &s->old[i], NULL);
    s->replaced = 0;
    child_pgid = 0;
}

void oq_cli_signals_started(void *ctx, int pgid)
{
    (void)ctx;
    child_pgid = pgid;
    if (pgid > 0 && caught) kill(-pgid, caught); /* came between the fork and now */
}

int oq_cli_signal_caught(void)
{
    return caught;
}

const volatile int *oq_cli_signal_flag(void)
{
    return &caught;
}
