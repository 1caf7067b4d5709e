/* Internals shared across the library (never installed): the lowest layer
 * above status.h, with no dependency on any other folder. */
#ifndef ORTQUAL_CORE_IMPL_H
#define ORTQUAL_CORE_IMPL_H

#include <stddef.h>

#include "ortqual/status.h"

/* Seconds on CLOCK_MONOTONIC: only differences mean anything. */
double oq_now_s(void);

#endif
