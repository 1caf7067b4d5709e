/* Internal state of a gate, shared by the runner and the verdict writer. */
#ifndef ORTQUAL_GATE_IMPL_H
#define ORTQUAL_GATE_IMPL_H

#include <time.h>

#include "ortqual/gate.h"

typedef struct gate_strv {
    char **v; /* NULL-terminated when non-empty */
    size_t n;
} gate_strv;

struct oq_gate {
    oq_gate_options o;
    char *cwd;         /* the caller's directory (real path) */
    char *cmd_path;    /* argv[0] resolved */
    gate_strv env;       /* the child's environment */
    gate_strv changes;   /* "NAME=VALUE" set for the child */
    gate_strv notes;
    gate_strv pins;      /* absolute paths of the pinned libraries */
    oq_dispatch_expect *expect; /* NULL: no dispatch requirement */
    char *dir;
    char *log_path;
    int log_fd;
    time_t started;
    int allow_shard; /* oq_gate_allow_shard: a shard's own verdict may pass, with a note */
};

oq_status gate_strv_push(gate_strv *s, char *owned, oq_err *err);
/* Whether a summary ran no test: "no tests ran", or nothing passed, failed, errored,
 * xfailed or xpassed (skips and deselections are no run). */
int oq_test_summary_ran_none(const oq_test_summary *t);
void gate_strv_clear(gate_strv *s);
/* The tests cmocka's and GoogleTest's "[  FAILED  ] N tests, listed below:" named, in the order
 * of the log (*names NULL when none): "2 failed" alone named neither. */
size_t oq_summary_scanner_failed_names(const oq_summary_scanner *s, char *const **names);

#endif
