/* Internals shared across the library (never installed). */
#ifndef ORTQUAL_CORE_IMPL_H
#define ORTQUAL_CORE_IMPL_H

/* Seconds on CLOCK_MONOTONIC: only differences mean anything. */
double oq_now_s(void);

#endif
