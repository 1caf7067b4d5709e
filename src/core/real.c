/* Reals printed so that what a reader reads back is what was compared (core-impl.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/core-impl.h"

/* "nan", "inf", "-inf" (printf's "-nan" reads like a negative number); 0 for a finite v. */
static int nonfinite(double v, char *buf, size_t n)
{
    if (isfinite(v)) return 0;
    snprintf(buf, n, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
    return 1;
}

char *oq_real_str(double v, int digits, char *buf, size_t n)
{
    if (!n || nonfinite(v, buf, n)) return buf;
    for (int p = digits < 1 ? 1 : digits; p <= 17; p++) {
        snprintf(buf, n, "%.*g", p, v);
        if (strtod(buf, NULL) == v) break;
    }
    return buf;
}

char *oq_real_over_str(double v, double bound, int digits, char *buf, size_t n)
{
    if (!n || nonfinite(v, buf, n)) return buf;
    for (int p = digits < 1 ? 1 : digits; p <= 17; p++) {
        snprintf(buf, n, "%.*g", p, v);
        if (!(v > bound) || strtod(buf, NULL) > bound) break;
    }
    return buf;
}
