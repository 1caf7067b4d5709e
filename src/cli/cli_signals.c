/* The signals a command passes on to the child it runs (cli_signals.h). */
#include "cli_signals.h"

#include <errno.h>
#include <string.h>

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

void oq_cli_signals_catch(oq_cli_signals *s)
{
    struct sigaction sa = {0};
    sa.sa_handler = pass_on;
    sigemptyset(&sa.sa_mask);
    memset(s, 0, sizeof *s);
    caught = 0;
    child_pgid = 0;
    for (unsigned i = 0; i < N_PASSED_ON; i++)
        /* one ignored at the start (nohup, `cmd &` in a script) is left ignored: the user asked
         * that it end nothing, and the children inherit that */
        if (sigaction(passed_on[i], NULL, &s->old[i]) == 0 && s->old[i].sa_handler != SIG_IGN &&
            sigaction(passed_on[i], &sa, NULL) == 0)
            s->replaced |= 1u << i;
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
