/* The time left of a validate or replay run, from its per-batch progress reports. Counting every
 * configuration's batches as equal work (elapsed x batches left / batches done) told a run whose
 * reference came from the cache (5,000 batches "done" in no time) that 2 s were left of 7, and
 * one after a fast reference that a slow configuration was nearly done. */
#include <stddef.h>

#include "cli.h"

/* Seconds per batch over `batches` batches in `s` seconds; -1 when none. */
static double pace(double s, size_t batches)
{
    return batches ? s / (double)batches : -1;
}

double oq_cli_eta_update(oq_cli_eta *e, size_t config, size_t n_configs, size_t done, size_t n_batches, double t)
{
    if (e->started && config < e->config) return -1; /* a reader beside a later one: not the pace */
    if (!e->started || config != e->config) {
        if (e->started && e->config > 0) { /* a configuration under test ended */
            e->tested_s += e->t_last - e->t0;
            e->tested_batches += e->done_last - e->done0;
        }
        e->started = 1;
        e->config = config;
        e->t0 = t;
        e->done0 = done;
    }
    e->t_last = t;
    e->done_last = done;
    double here = pace(t - e->t0, done - e->done0);
    double later = pace(e->tested_s + (t - e->t0), e->tested_batches + (done - e->done0));
    size_t left_here = done < n_batches ? n_batches - done : 0;
    size_t left_later = config + 1 < n_configs ? (n_configs - config - 1) * n_batches : 0;
    /* the reference's pace says nothing of the others' (one call a batch, or none: cached): while
     * it runs only its own time is told (a 100,000-event reference said "ETA 51 s" of a run whose
     * next configuration then ran past the 300 s timeout) */
    e->partial = config == 0 && left_later;
    if (e->partial) left_later = 0;
    if (((left_here || e->partial) && here < 0) || (left_later && later < 0)) return -1;
    return (double)left_here * (left_here ? here : 0) + (double)left_later * (left_later ? later : 0);
}
