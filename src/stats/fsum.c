/* Exact sums (ortqual/stats.h): Shewchuk's adaptive-precision addition, as CPython's
 * math.fsum does it, with its final rounding. */
#include <math.h>
#include <string.h>

#include "ortqual/stats.h"

/* Two smallest parts added in double, to make room (never met with real data). */
static void make_room(oq_fsum *s)
{
    s->part[1] += s->part[0];
    memmove(s->part, s->part + 1, (size_t)(s->n - 1) * sizeof s->part[0]);
    s->n--;
}

void oq_fsum_add(oq_fsum *s, double x)
{
    if (!s) return;
    if (!isfinite(x)) {
        s->special += x;
        return;
    }
    int32_t i = 0;
    for (int32_t j = 0; j < s->n; j++) {
        double y = s->part[j];
        if (fabs(x) < fabs(y)) {
            double t = x;
            x = y;
            y = t;
        }
        double hi = x + y, lo = y - (hi - x); /* hi + lo == x + y exactly */
        if (!isfinite(hi)) { /* past the largest double: lo would be inf, inf - inf NaN later */
            s->special += hi;
            s->n = 0;
            return;
        }
        if (lo != 0.0) s->part[i++] = lo;
        x = hi;
    }
    s->n = i;
    if (x == 0.0) return;
    if (!isfinite(x)) { /* finite terms past the largest double */
        s->special += x;
        return;
    }
    if (s->n == OQ_FSUM_PARTS) make_room(s);
    s->part[s->n++] = x;
}

void oq_fsum_merge(oq_fsum *into, const oq_fsum *from)
{
    if (!into || !from) return;
    oq_fsum copy = *from; /* into may be from */
    for (int32_t j = 0; j < copy.n; j++) oq_fsum_add(into, copy.part[j]);
    if (copy.special != 0.0) oq_fsum_add(into, copy.special); /* NaN too */
}

double oq_fsum_value(const oq_fsum *s)
{
    if (!s) return NAN;
    if (s->special != 0.0) return s->special; /* NaN too */
    int32_t n = s->n;
    double hi = 0.0, lo = 0.0;
    if (n > 0) hi = s->part[--n];
    /* from the largest part down, until the sum is no longer exact */
    while (n > 0) {
        double x = hi, y = s->part[--n];
        hi = x + y;
        lo = y - (hi - x);
        if (lo != 0.0) break;
    }
    /* half-even rounding across parts: a remainder of the same sign as the next part down
     * tips a tie (sum([1e-16, 1, 1e16]) is 1e16 + 2) */
    if (n > 0 && ((lo < 0.0 && s->part[n - 1] < 0.0) || (lo > 0.0 && s->part[n - 1] > 0.0))) {
        double y = lo * 2.0, x = hi + y;
        if (y == x - hi) hi = x;
    }
    return hi;
}
