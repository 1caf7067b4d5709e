/* The one monotonic clock the library times things with. */
#include <time.h>

#include "core/core-impl.h"

double oq_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
