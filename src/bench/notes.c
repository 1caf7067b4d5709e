/* bench --model's notes (the Gathers whose indices nothing checks before the run), folded once
 * by the sweep and carried to the two that say them: the caller's ready step (oq_bench_model_notes
 * while it runs) and the summary's writer (the rows' notes). oq_bench_rows is public and cannot
 * grow under SOVERSION 3, so the notes ride beside it, as validate's run notes ride beside its
 * summary: here keyed by the rows' address, kept until oq_bench_rows_free. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench-impl.h"

typedef struct kept_notes {
    const oq_bench_rows *rows;
    char *notes;
    struct kept_notes *next;
} kept_notes;

static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static kept_notes *kept;

/* The sweep whose ready step runs on this thread: its options and notes (borrowed). */
static _Thread_local const oq_bench_opts *ready_opts;
static _Thread_local const char *ready_notes;

oq_status oq_bench_ready_with_notes(const oq_bench_opts *o, const char *notes, oq_err *err)
{
    ready_opts = o;
    ready_notes = notes;
    oq_status st = o->ready(o->ready_ctx, err);
    ready_opts = NULL;
    ready_notes = NULL;
    return st;
}

const char *oq_bench_ready_notes(const oq_bench_opts *o)
{
    return o == ready_opts ? ready_notes : NULL;
}

oq_status oq_bench_rows_keep_notes(const oq_bench_rows *rows, const char *notes, oq_err *err)
{
    kept_notes *k = malloc(sizeof *k);
    char *copy = strdup(notes);
    if (!k || !copy) {
        free(k);
        free(copy);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    *k = (kept_notes){rows, copy, NULL};
    pthread_mutex_lock(&kept_lock);
    k->next = kept;
    kept = k;
    pthread_mutex_unlock(&kept_lock);
    return OQ_OK;
}

const char *oq_bench_rows_notes(const oq_bench_rows *rows)
{
    const char *notes = NULL;
    pthread_mutex_lock(&kept_lock);
    for (const kept_notes *k = kept; k && !notes; k = k->next)
        if (k->rows == rows) notes = k->notes;
    pthread_mutex_unlock(&kept_lock);
    return notes;
}

void oq_bench_rows_drop_notes(const oq_bench_rows *rows)
{
    kept_notes *gone = NULL;
    pthread_mutex_lock(&kept_lock);
    for (kept_notes **k = &kept; *k; k = &(*k)->next)
        if ((*k)->rows == rows) {
            gone = *k;
            *k = gone->next;
            break;
        }
    pthread_mutex_unlock(&kept_lock);
    if (gone) free(gone->notes);
    free(gone);
}
