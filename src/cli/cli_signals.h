#ifndef ORTQUAL_CLI_SIGNALS_H
#define ORTQUAL_CLI_SIGNALS_H

#include <signal.h>

/* SIGINT (Ctrl-C), SIGTERM (a batch system's time limit) and SIGHUP (the terminal closed) while
 * a child runs in a process group of its own (gate's command, validate's and replay's workers,
 * slurm's prepare step): each is noted and passed on to that group, so the child ends by it and
 * runs its own cleanup while the command goes on to say what happened (exit 128 + N). A signal
 * that was ignored when the command started (nohup, a script's background job) stays ignored,
 * by the command and by the children it starts. A second signal ends the command at once (the
 * child's group killed, temporaries removed, ended by the signal). One catch at a time: the handler's state is the
 * process's. */
typedef struct oq_cli_signals {
    struct sigaction old[3]; /* the actions replaced, put back by oq_cli_signals_release */
    unsigned replaced;       /* bit i: old[i] was read and replaced */
} oq_cli_signals;

/* Catches the three signals; what they did before goes into s. Clears the signal caught. */
void oq_cli_signals_catch(oq_cli_signals *s);
/* Puts back what oq_cli_signals_catch replaced (nothing for a zeroed s) and forgets the group:
 * its number may be reused. The signal caught stays readable. */
void oq_cli_signals_release(oq_cli_signals *s);
/* The child's process group, as the library's start callbacks tell it (oq_gate_options.on_start,
 * oq_validate_opts.on_worker, oq_proc_watch.on_start; ctx unused); pgid 0: none runs. A signal
 * caught between the fork and this call is passed on now. */
void oq_cli_signals_started(void *ctx, int pgid);
/* For a command whose work runs in this process (bench), which a signal ends where it is: from
 * here SIGINT, SIGTERM and SIGHUP (each unless ignored) write "<head>stopped by SIG<NAME><tail>\n"
 * on stderr, remove the temporaries and held outputs (oq_atomic_remove_temporaries) and end the
 * process by the signal (128 + N), as the tool's own handler does without the line. head and tail
 * are copied (cut at 4 KiB). Put back with oq_cli_signals_release. */
void oq_cli_signals_say(oq_cli_signals *s, const char *head, const char *tail);
/* The signal caught since oq_cli_signals_catch (0: none). */
int oq_cli_signal_caught(void);
/* The same as a flag the library polls to stop (oq_validate_opts.interrupt, oq_proc_watch.stop). */
const volatile int *oq_cli_signal_flag(void);

#endif
