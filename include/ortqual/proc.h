/* Run a child process with a time limit, keeping the tail of its stderr.
 *
 * Used to isolate each validation configuration: a crash or abort inside ONNX
 * Runtime or an execution provider ends only the child, and the parent
 * reports the signal and the last lines the child wrote.
 */
#ifndef ORTQUAL_PROC_H
#define ORTQUAL_PROC_H

#include <stddef.h>

#include "ortqual/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct oq_proc_result {
    int exit_code;     /* valid when !signaled && !timed_out */
    int signaled;      /* ended by a signal */
    int signal;        /* its number */
    int timed_out;     /* killed by us when the time limit passed */
    double seconds;    /* wall time */
    char *stderr_tail; /* last bytes of stderr (owned, NUL-terminated, may be empty) */
} oq_proc_result;

/* Runs argv[0] (a path, not searched) with argv. timeout_s <= 0: no limit.
 * When `echo` is non-zero the child's stderr is also copied to ours as it comes.
 * Returns OQ_OK when the child was started and waited for, whatever its outcome. */
oq_status oq_proc_run(char *const argv[], double timeout_s, size_t tail_bytes, int echo,
                      oq_proc_result *res, oq_err *err);

/* As oq_proc_run, and every complete stderr line that starts with `prefix` is handed to
 * on_line (without the prefix and the newline) as it arrives, instead of going to the
 * tail or the echo: a side channel for progress from the child. */
oq_status oq_proc_run_watch(char *const argv[], double timeout_s, size_t tail_bytes, int echo, const char *prefix,
                            void (*on_line)(void *ctx, const char *line), void *ctx, oq_proc_result *res,
                            oq_err *err);
void oq_proc_result_clear(oq_proc_result *res);

/* "exit 3", "signal 11 (Segmentation fault)", "timed out after 30 s" into buf. */
const char *oq_proc_describe(const oq_proc_result *res, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
