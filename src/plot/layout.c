/* Figure layout in pixels, drawn through a canvas (plot-impl.h).
 *
 * Axes, ticks and labels are laid out here rather than by PLplot: PLplot labels
 * log axes only at whole decades (a 512..4096 axis would get one label), and the
 * SVG writer needs the same geometry anyway. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot/plot-impl.h"

#define MAX_SERIES 64
#define MAX_TICKS 16
#define NCOLORS 10

/* Okabe-Ito colours (distinguishable with colour blindness), then four more. */
static const oq_rgb palette[NCOLORS] = {{0, 114, 178},   {213, 94, 0},    {0, 158, 115}, {204, 121, 167},
                                        {230, 159, 0},   {86, 180, 233},  {117, 112, 179},
                                        {102, 102, 102}, {166, 118, 29},  {0, 0, 0}};
static const oq_rgb FG = {0, 0, 0}, GRID = {225, 225, 225}, GREY = {110, 110, 110},
                    RED = {198, 40, 40}, RED_BG = {253, 236, 234}, WHITE = {255, 255, 255};

/* Font sizes (px). */
#define FS_TITLE 20.0
#define FS_SUB 14.0
#define FS_LABEL 15.0
#define FS_TICK 13.0
#define FS_LEGEND 13.0
#define FS_PANEL 13.0

/* ---- Text metrics --------------------------------------------------------- */

/* Advance of one character in em (DejaVu Sans, rounded). */
static double char_em(unsigned c)
{
    if (c >= '0' && c <= '9') return 0.64;
    if (c == ' ') return 0.32;
    if (c == 'i' || c == 'j' || c == 'l' || c == '|' || c == '.' || c == ',' || c == ':' || c == ';' ||
        c == '\'' || c == '!')
        return 0.3;
    if (c == 'f' || c == 't' || c == 'r' || c == '(' || c == ')' || c == '[' || c == ']' || c == '-' ||
        c == '/')
        return 0.4;
    if (c == 'm' || c == 'w') return 0.92;
    if (c == 'M' || c == 'W') return 0.95;
    if (c >= 'A' && c <= 'Z') return 0.7;
    if (c >= 'a' && c <= 'z') return 0.6;
    if (c >= 0x80) return 0.7; /* a symbol: x, <=, ... */
    return 0.6;
}

/* DejaVu Sans Bold runs ~12% wider than Book. */
#define BOLD_WIDTH 1.12

double oq_text_width(const char *s, double size, int flags)
{
    double w = 0, scale = 1;
    int bold = flags & OQ_TEXT_BOLD;
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        if ((flags & OQ_TEXT_MARKUP) && p[0] == '^' && p[1] == '{') {
            scale = 0.7;
            p++;
            continue;
        }
        if ((flags & OQ_TEXT_MARKUP) && *p == '}' && scale < 1) {
            scale = 1;
            continue;
        }
        if ((*p & 0xC0) == 0x80) continue; /* UTF-8 continuation byte */
        w += char_em(*p) * scale * (bold ? BOLD_WIDTH : 1.0);
    }
    return w * size;
}

/* ---- Text that wraps ------------------------------------------------------- */

#define MARGIN 16.0 /* the least room between the figure's edge and its text */
/* Wrapped lines are measured this much wider: PNG text (cairo's hinted DejaVu) runs up to 2%
 * wider than the metrics above, the SVG's as wide. */
#define WRAP_SLACK 1.03

/* Bytes of the first line of `s` that fits `width` px: up to the last space, or after the last
 * '-', '/', ':', ',' or '_' (paths, configuration names), that fits; a word without either is cut
 * between characters. At least one character, under `cap` bytes. */
static size_t line_bytes(const char *s, double size, int flags, double width, size_t cap)
{
    double w = 0, scale = WRAP_SLACK * size * (flags & OQ_TEXT_BOLD ? BOLD_WIDTH : 1.0);
    size_t brk = 0;
    for (size_t i = 0; s[i]; i++) {
        unsigned char ch = (unsigned char)s[i];
        if ((ch & 0xC0) == 0x80) continue; /* UTF-8 continuation byte */
        if (ch == ' ') brk = i;
        w += char_em(ch) * scale;
        if (i && (w > width || i + 4 >= cap)) return brk ? brk : i;
        if (strchr("-/:,_", ch)) brk = i + 1;
    }
    return strlen(s);
}

/* `s` in lines no wider than `width` px, `lh` apart, the first centred on y; drawn when c is
 * not NULL (a canvas draws what it is given, however wide). Returns the number of lines. */
static size_t text_lines(oq_canvas *c, const char *s, double x, double y, double width, double lh, double size,
                         int anchor, int flags, oq_rgb col)
{
    char line[512];
    size_t n = 0;
    s = s ? s : "";
    /* what fits as measured stays one line: the slack is for where a longer text breaks */
    int one = oq_text_width(s, size, flags) <= width && strlen(s) < sizeof line;
    for (; *s; n++) {
        size_t k = one ? strlen(s) : line_bytes(s, size, flags, width, sizeof line);
        memcpy(line, s, k);
        line[k] = 0;
        if (c) c->text(c, x, y + (double)n * lh, line, size, anchor, flags, col);
        for (s += k; *s == ' '; s++) {}
    }
    return n;
}

/* ---- Axes and ticks ------------------------------------------------------- */

typedef struct axis {
    int log;
    double lo, hi; /* world coordinates (log10 of the value on log axes) */
} axis;

static int drawable(double v, int log) { return isfinite(v) && (!log || v > 0); }
static double to_world(double v, int log) { return log ? log10(v) : v; }

/* Pad a data range [lo, hi] (world coordinates) so markers are not cut. */
static void axis_pad(axis *a, double lo, double hi)
{
    if (hi - lo < 1e-12 * (fabs(lo) + fabs(hi)) || hi == lo) {
        double d = a->log ? 0.5 : (lo != 0 ? fabs(lo) * 0.1 : 1.0);
        lo -= d;
        hi += d;
    }
    double pad = 0.06 * (hi - lo);
    a->lo = lo - pad;
    a->hi = hi + pad;
}

typedef struct ticks {
    double v[MAX_TICKS];
    char lab[MAX_TICKS][48];
    size_t n;
} ticks;

/* "0.5", "300", "10^{-6}", "2×10^{-7}"; `exact` prints the value as given (a
 * measured length), `sci` forces the power-of-ten form. */
static void tick_label(double v, int exact, int sci, char *buf, size_t n)
{
    double e = v != 0 ? floor(log10(fabs(v)) + 1e-9) : 0;
    if (exact || v == 0 || (!sci && e > -4 && e < 6)) {
        snprintf(buf, n, exact ? "%.10g" : "%g", v);
        return;
    }
    double m = v / pow(10, e);
    if (fabs(fabs(m) - 1) < 1e-9)
        snprintf(buf, n, "%s10^{%d}", m < 0 ? "-" : "", (int)e);
    else
        snprintf(buf, n, "%.3g\xc3\x97" "10^{%d}", m, (int)e);
}

static void ticks_add(ticks *t, double v, int exact)
{
    if (t->n == MAX_TICKS) return;
    t->v[t->n] = v;
    tick_label(v, exact, 0, t->lab[t->n], sizeof t->lab[0]);
    t->n++;
}

/* One notation per axis: when one label needs a power of ten, all get one. */
static void ticks_uniform(ticks *t)
{
    int sci = 0;
    for (size_t i = 0; i < t->n; i++) sci |= strstr(t->lab[i], "^{") != NULL;
    for (size_t i = 0; sci && i < t->n; i++) tick_label(t->v[i], 0, 1, t->lab[i], sizeof t->lab[0]);
}

/* Room a label takes along its axis: its width and a gap side by side (x), a line stacked (y). */
static double tick_room(const ticks *t, size_t i, int is_x)
{
    return is_x ? oq_text_width(t->lab[i], FS_TICK, OQ_TEXT_MARKUP) + 14 : 22;
}

/* Labels fit when they leave room between them, in all (`len` px of axis) and between
 * neighbours, which a log axis or uneven mantissas (1, 1.5, 2, 3) do not space evenly. */
static int ticks_fit(const ticks *t, const axis *a, int is_x, double len)
{
    if (t->n > 8) return 0;
    double need = 0, px_per_world = len / (a->hi - a->lo);
    for (size_t i = 0; i < t->n; i++) {
        need += tick_room(t, i, is_x);
        if (!i) continue;
        double gap = (to_world(t->v[i], a->log) - to_world(t->v[i - 1], a->log)) * px_per_world;
        if (gap < (tick_room(t, i, is_x) + tick_room(t, i - 1, is_x)) / 2) return 0;
    }
    return need <= len;
}

/* Steps of 1, 2 or 5 x 10^k, the smallest whose labels fit (on a log axis, steps of its values). */
static void ticks_linear(const axis *a, int is_x, double len, ticks *t)
{
    double lo = a->log ? pow(10, a->lo) : a->lo, hi = a->log ? pow(10, a->hi) : a->hi;
    double mag = pow(10, floor(log10(hi - lo)) - 2);
    static const double mult[] = {1, 2, 5};
    for (int k = 0; k < 15; k++) {
        double step = mult[k % 3] * mag * pow(10, k / 3);
        t->n = 0;
        for (double v = ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
            double q = round(v / step) * step; /* avoid 0.30000000000000004 */
            ticks_add(t, fabs(q) < step * 1e-9 ? 0 : q, 0);
            if (t->n == MAX_TICKS) break;
        }
        ticks_uniform(t);
        if (t->n < MAX_TICKS && ticks_fit(t, a, is_x, len)) return;
    }
}

/* Log-axis tick candidates, densest first: mantissas per decade, then every k-th decade. 1.5
 * splits the widest step of 1-2-3-5-7: an axis that ends between 1 and 2 (a speed-up up to 1.4)
 * had no label above 1. */
static const double mantissas[][9] = {{1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1.5, 2, 3, 5, 7}, {1, 2, 3, 5, 7}, {1, 2, 5}, {1, 3}};
static const size_t nmantissas[] = {9, 6, 5, 3, 2};
#define NSETS (sizeof nmantissas / sizeof *nmantissas)
#define NCANDIDATES (NSETS + 39) /* every 1st .. 39th decade */
/* The most of a log axis, at either end, left without a label. */
#define TICK_COVER 0.15

/* Candidate c's ticks in [lo, hi] (world); 0 when there are more than MAX_TICKS. */
static int log_candidate(size_t c, double lo, double hi, ticks *t)
{
    t->n = 0;
    long every = c < NSETS ? 1 : (long)(c - NSETS + 1);
    for (double e = floor(lo); e <= ceil(hi); e++) {
        if ((long)e % every) continue;
        for (size_t m = 0; m < (c < NSETS ? nmantissas[c] : 1); m++) {
            double v = (c < NSETS ? mantissas[c][m] : 1) * pow(10, e), w = log10(v);
            if (w < lo - 1e-9 || w > hi + 1e-9) continue;
            if (t->n == MAX_TICKS) return 0;
            ticks_add(t, v, 0);
        }
    }
    ticks_uniform(t);
    return 1;
}

static int log_fits(size_t c, const axis *a, int is_x, double len, ticks *t)
{
    return log_candidate(c, a->lo, a->hi, t) && t->n >= 2 && ticks_fit(t, a, is_x, len);
}

static int log_covers(const ticks *t, const axis *a)
{
    double most = TICK_COVER * (a->hi - a->lo);
    return log10(t->v[0]) - a->lo <= most && a->hi - log10(t->v[t->n - 1]) <= most;
}

/* Candidate c's tick next to the tick at world position w, below it (dir < 0) or above. */
static double log_next(size_t c, double w, int dir)
{
    double period = c < NSETS ? 1 : (double)(c - NSETS + 1);
    ticks t;
    if (!log_candidate(c, dir < 0 ? w - period : w, dir < 0 ? w : w + period, &t) || t.n < 2) return w;
    return log10(t.v[dir < 0 ? t.n - 2 : 1]);
}

/* Steps of the values on a log axis under a decade, the axis widened by a step at an end they
 * leave more than TICK_COVER of without a label (0.0937 .. 0.14 left 19% below its 0.1), as long
 * as that takes (the step may grow with the axis). */
static void ticks_log_linear(axis *a, int is_x, double len, ticks *t)
{
    ticks_linear(a, is_x, len, t);
    for (int k = 0; k < 4 && t->n >= 2 && !log_covers(t, a); k++) {
        axis w = *a;
        double most = TICK_COVER * (a->hi - a->lo), step = t->v[1] - t->v[0];
        double below = t->v[0] - step, above = t->v[t->n - 1] + step;
        /* (a hair past the tick: 10^log10(0.09) is 0.09000000000000001, above it) */
        if (log10(t->v[0]) - a->lo > most && below > 0) w.lo = log10(below) - 1e-9;
        if (a->hi - log10(t->v[t->n - 1]) > most) w.hi = log10(above) + 1e-9;
        ticks wt;
        ticks_linear(&w, is_x, len, &wt);
        if (wt.n < 2) return;
        *a = w;
        *t = wt;
    }
}

/* The densest candidate whose labels fit and reach both ends of the axis, widened to its next
 * tick at an end left without a label where that still fits; else, under a decade, steps of the
 * values. */
static void ticks_log(axis *a, int is_x, double len, ticks *t)
{
    for (size_t c = 0; c < NCANDIDATES; c++) {
        if (!log_fits(c, a, is_x, len, t)) continue;
        if (log_covers(t, a)) return;
        axis w = *a;
        double most = TICK_COVER * (a->hi - a->lo), first = log10(t->v[0]), last = log10(t->v[t->n - 1]);
        if (first - a->lo > most) w.lo = log_next(c, first, -1);
        if (a->hi - last > most) w.hi = log_next(c, last, 1);
        if (log_fits(c, &w, is_x, len, t)) {
            *a = w;
            return;
        }
    }
    if (a->hi - a->lo < 1) ticks_log_linear(a, is_x, len, t);
}

/* Caller's ticks: every k-th of those in range, the smallest k that fits. */
static void ticks_given(const axis *a, const double *v, size_t n, double len, ticks *t)
{
    for (size_t k = 1; k <= n; k++) {
        t->n = 0;
        for (size_t i = 0; i < n; i += k) {
            double w = to_world(v[i], a->log);
            if (drawable(v[i], a->log) && w >= a->lo - 1e-9 && w <= a->hi + 1e-9) ticks_add(t, v[i], 1);
        }
        if (ticks_fit(t, a, 1, len)) return;
    }
}

static double widest_tick(const ticks *t)
{
    double w = 0;
    for (size_t i = 0; i < t->n; i++) w = fmax(w, oq_text_width(t->lab[i], FS_TICK, OQ_TEXT_MARKUP));
    return w;
}

/* ---- Prepared data ---------------------------------------------------------- */

/* One series in world coordinates. BINNED/HISTOGRAM: x holds n + 1 edges, y the counts. */
typedef struct pseries {
    double *x, *y;
    size_t n;
    char label[256];
} pseries;

typedef struct box {
    double x0, y0, x1, y1; /* pixels, y0 the top */
} box;

typedef struct fig {
    const oq_plot_spec *sp;
    oq_canvas *c;
    pseries s[MAX_SERIES];
    axis ax, ay;
    int binned; /* bars from x edges */
    int W, H;
    box plot;   /* whole plot area (all panels) */
    double strip; /* faceted: the label strip above each panel */
} fig;

static void fig_free(fig *f)
{
    for (size_t i = 0; i < f->sp->nseries; i++) {
        free(f->s[i].x);
        free(f->s[i].y);
    }
}

static void range_add(double *lo, double *hi, double w)
{
    *lo = fmin(*lo, w);
    *hi = fmax(*hi, w);
}

static void band_range(const oq_plot_spec *sp, double *lo, double *hi)
{
    for (size_t i = 0; i < sp->nseries; i++) {
        const oq_plot_series *s = &sp->series[i];
        if (!s->has_band) continue;
        if (drawable(s->band_lo, sp->logx)) range_add(lo, hi, to_world(s->band_lo, sp->logx));
        if (drawable(s->band_hi, sp->logx)) range_add(lo, hi, to_world(s->band_hi, sp->logx));
    }
}

static const char *label_of(const oq_plot_series *s) { return s->label ? s->label : ""; }

/* Room for n points (n + 1: bin edges); -1 when out of memory (freed with the figure). */
static int pseries_alloc(pseries *p, size_t n)
{
    p->x = malloc((n + 1) * sizeof *p->x);
    p->y = malloc((n + 1) * sizeof *p->y);
    return p->x && p->y ? 0 : -1;
}

static oq_status prepare_points(fig *f, oq_err *err)
{
    const oq_plot_spec *sp = f->sp;
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    for (size_t i = 0; i < sp->nseries; i++) {
        const oq_plot_series *s = &sp->series[i];
        pseries *p = &f->s[i];
        if (pseries_alloc(p, s->n)) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        for (size_t k = 0; k < s->n; k++) {
            if (!drawable(s->x[k], sp->logx) || !drawable(s->y[k], sp->logy)) continue;
            p->x[p->n] = to_world(s->x[k], sp->logx);
            p->y[p->n] = to_world(s->y[k], sp->logy);
            range_add(&xlo, &xhi, p->x[p->n]);
            range_add(&ylo, &yhi, p->y[p->n]);
            p->n++;
        }
        const char *why = sp->logx || sp->logy ? "all <= 0, not shown" : "no points";
        if (p->n || !s->n)
            snprintf(p->label, sizeof p->label, "%s", label_of(s));
        else
            snprintf(p->label, sizeof p->label, "%s (%s)", label_of(s), why);
    }
    if (xlo > xhi) return oq_err_set(err, OQ_ERR_INVALID_ARG, "figure '%s': no drawable point",
                                     sp->title ? sp->title : "");
    if (sp->has_ref_y && drawable(sp->ref_y, sp->logy)) range_add(&ylo, &yhi, to_world(sp->ref_y, sp->logy));
    band_range(sp, &xlo, &xhi);
    f->ax.log = sp->logx;
    f->ay.log = sp->logy;
    axis_pad(&f->ax, xlo, xhi);
    axis_pad(&f->ay, ylo, yhi);
    return OQ_OK;
}

/* y range of bars: linear from 0; log from below the smallest count. */
static void bars_y_axis(fig *f, double cmin, double cmax)
{
    f->ay.log = f->sp->logy;
    if (cmax <= 0) cmax = 1;
    if (!(cmin <= cmax)) cmin = cmax;
    if (f->ay.log) {
        f->ay.lo = log10(fmin(fmax(cmin, 1e-300), 1)) - 0.3; /* counts: single ones stay visible */
        f->ay.hi = log10(cmax) + 0.25;
    } else {
        f->ay.lo = 0;
        f->ay.hi = cmax * 1.12;
    }
}

/* Histogram: common bins over all series' drawable samples (world x). */
static oq_status prepare_histogram(fig *f, oq_err *err)
{
    const oq_plot_spec *sp = f->sp;
    size_t nb = sp->nbins ? sp->nbins : 20;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < sp->nseries; i++)
        for (size_t k = 0; k < sp->series[i].n; k++) {
            double v = sp->series[i].x[k];
            if (drawable(v, sp->logx)) range_add(&lo, &hi, to_world(v, sp->logx));
        }
    if (lo > hi) return oq_err_set(err, OQ_ERR_INVALID_ARG, "figure '%s': no drawable sample",
                                   sp->title ? sp->title : "");
    axis a = {sp->logx, 0, 0};
    axis_pad(&a, lo, hi);
    double cmax = 0, cmin = INFINITY;
    for (size_t i = 0; i < sp->nseries; i++) {
        const oq_plot_series *s = &sp->series[i];
        pseries *p = &f->s[i];
        p->x = malloc((nb + 1) * sizeof *p->x);
        p->y = calloc(nb, sizeof *p->y);
        if (!p->x || !p->y) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        for (size_t b = 0; b <= nb; b++) p->x[b] = a.lo + (a.hi - a.lo) * (double)b / (double)nb;
        size_t zeros = 0, nonfinite = 0;
        for (size_t k = 0; k < s->n; k++) {
            double v = s->x[k];
            if (!isfinite(v)) {
                nonfinite++;
                continue;
            }
            if (!drawable(v, sp->logx)) {
                zeros++;
                continue;
            }
            size_t b = (size_t)((to_world(v, sp->logx) - a.lo) / (a.hi - a.lo) * (double)nb);
            p->y[b < nb ? b : nb - 1] += 1;
        }
        p->n = nb;
        for (size_t b = 0; b < nb; b++) {
            cmax = fmax(cmax, p->y[b]);
            if (p->y[b] > 0) cmin = fmin(cmin, p->y[b]);
        }
        char extra[96] = "";
        if (zeros) snprintf(extra, sizeof extra, ", %zu at <= 0 not shown", zeros);
        if (nonfinite)
            snprintf(extra + strlen(extra), sizeof extra - strlen(extra), ", %zu non-finite", nonfinite);
        snprintf(p->label, sizeof p->label, "%s (n=%zu%s)", label_of(s), s->n, extra);
    }
    f->ax = a;
    bars_y_axis(f, cmin, cmax);
    f->binned = 1;
    return OQ_OK;
}

/* Counted already: edges to world x, counts kept. */
static oq_status prepare_binned(fig *f, oq_err *err)
{
    const oq_plot_spec *sp = f->sp;
    double xlo = INFINITY, xhi = -INFINITY, cmax = 0, cmin = INFINITY;
    for (size_t i = 0; i < sp->nseries; i++) {
        const oq_plot_series *s = &sp->series[i];
        pseries *p = &f->s[i];
        if (pseries_alloc(p, s->n)) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        snprintf(p->label, sizeof p->label, "%s", label_of(s));
        p->n = s->n;
        for (size_t k = 0; k <= s->n && s->n; k++) {
            if (!drawable(s->x[k], sp->logx))
                return oq_err_set(err, OQ_ERR_INVALID_ARG, "figure '%s': series '%s': bin edge %zu (%g) cannot be drawn",
                                  sp->title ? sp->title : "", label_of(s), k, s->x[k]);
            p->x[k] = to_world(s->x[k], sp->logx);
        }
        for (size_t k = 0; k < s->n; k++) {
            p->y[k] = isfinite(s->y[k]) ? s->y[k] : 0;
            if (p->y[k] <= 0) continue;
            range_add(&xlo, &xhi, p->x[k]);
            range_add(&xlo, &xhi, p->x[k + 1]);
            cmax = fmax(cmax, p->y[k]);
            cmin = fmin(cmin, p->y[k]);
        }
    }
    band_range(sp, &xlo, &xhi);
    if (xlo > xhi) return oq_err_set(err, OQ_ERR_INVALID_ARG, "figure '%s': no bin to draw",
                                     sp->title ? sp->title : "");
    f->ax.log = sp->logx;
    axis_pad(&f->ax, xlo, xhi);
    bars_y_axis(f, cmin, cmax);
    f->binned = 1;
    return OQ_OK;
}

/* ---- Styles --------------------------------------------------------------- */

static size_t style_index(int style, size_t pos) { return style > 0 ? (size_t)(style - 1) : pos; }
static oq_rgb color_of(size_t k) { return palette[k % NCOLORS]; }
/* Solid for the first NCOLORS styles, then dashed so colours can repeat. */
static int dash_of(size_t k) { return (k / NCOLORS) % 2 ? OQ_DASH_DASHED : OQ_DASH_SOLID; }
static int marker_of(const oq_plot_series *s, size_t k)
{
    return s->marker > 0 ? (s->marker - 1) % OQ_NMARKS : (int)(k % OQ_NMARKS);
}

/* ---- Primitives ------------------------------------------------------------- */

static double px_x(const fig *f, const box *b, double w) { return b->x0 + (w - f->ax.lo) / (f->ax.hi - f->ax.lo) * (b->x1 - b->x0); }
static double px_y(const fig *f, const box *b, double w) { return b->y1 - (w - f->ay.lo) / (f->ay.hi - f->ay.lo) * (b->y1 - b->y0); }

static void seg(oq_canvas *c, double x0, double y0, double x1, double y1, oq_rgb col, double w, int dash)
{
    double x[2] = {x0, x1}, y[2] = {y0, y1};
    c->line(c, x, y, 2, col, w, dash);
}

static void rect(oq_canvas *c, double x0, double y0, double x1, double y1, oq_rgb col, double alpha)
{
    double x[4] = {x0, x1, x1, x0}, y[4] = {y0, y0, y1, y1};
    c->fill(c, x, y, 4, col, alpha);
}

static void frame(oq_canvas *c, const box *b, oq_rgb col, double w)
{
    double x[5] = {b->x0, b->x1, b->x1, b->x0, b->x0}, y[5] = {b->y0, b->y0, b->y1, b->y1, b->y0};
    c->line(c, x, y, 5, col, w, OQ_DASH_SOLID);
}

/* A marker of radius r (pixels) centred on (x, y). */
static void marker(oq_canvas *c, double x, double y, int shape, double r, oq_rgb col)
{
    double px[20], py[20];
    size_t n = 0;
    switch (shape) {
    case OQ_MARK_SQUARE: {
        double h = r * 0.85;
        px[0] = x - h, py[0] = y - h, px[1] = x + h, py[1] = y - h;
        px[2] = x + h, py[2] = y + h, px[3] = x - h, py[3] = y + h;
        n = 4;
        break;
    }
    case OQ_MARK_UP:
    case OQ_MARK_DOWN: {
        double s = shape == OQ_MARK_UP ? 1 : -1;
        px[0] = x, py[0] = y - s * r * 1.1;
        px[1] = x + r * 1.0, py[1] = y + s * r * 0.75;
        px[2] = x - r * 1.0, py[2] = y + s * r * 0.75;
        n = 3;
        break;
    }
    case OQ_MARK_DIAMOND:
        px[0] = x, py[0] = y - r * 1.15, px[1] = x + r * 0.9, py[1] = y;
        px[2] = x, py[2] = y + r * 1.15, px[3] = x - r * 0.9, py[3] = y;
        n = 4;
        break;
    case OQ_MARK_STAR:
        for (int k = 0; k < 10; k++) {
            double a = -M_PI / 2 + k * M_PI / 5, rr = k % 2 ? r * 0.5 : r * 1.2;
            px[n] = x + rr * cos(a);
            py[n++] = y + rr * sin(a);
        }
        break;
    default:
        for (int k = 0; k < 16; k++) {
            px[n] = x + r * cos(k * M_PI / 8);
            py[n++] = y + r * sin(k * M_PI / 8);
        }
    }
    c->fill(c, px, py, n, col, 1.0);
}

static void ring(oq_canvas *c, double x, double y, double r, oq_rgb col)
{
    double px[17], py[17];
    for (int k = 0; k <= 16; k++) {
        px[k] = x + r * cos(k * M_PI / 8);
        py[k] = y + r * sin(k * M_PI / 8);
    }
    c->line(c, px, py, 17, col, 2.0, OQ_DASH_SOLID);
}

/* ---- Legend ------------------------------------------------------------------- */

typedef struct lentry {
    const char *label;
    oq_legend_kind kind;
    oq_rgb col;
    int marker, dash, failed;
    size_t lines; /* of text, wrapped to the column */
    char text[320];
} lentry;

typedef struct legend {
    lentry e[MAX_SERIES];
    size_t n, cols, rows;
    double colw, textw; /* a column, and the text in it */
} legend;

static void legend_entries(const fig *f, legend *lg)
{
    const oq_plot_spec *sp = f->sp;
    lg->n = 0;
    if (sp->legend) {
        for (size_t i = 0; i < sp->nlegend && lg->n < MAX_SERIES; i++) {
            const oq_plot_legend *l = &sp->legend[i];
            lentry *e = &lg->e[lg->n++];
            size_t k = style_index(l->style, 0);
            e->kind = l->kind;
            e->col = l->style > 0 ? color_of(k) : GREY;
            e->marker = l->marker > 0 ? (l->marker - 1) % OQ_NMARKS : (int)(k % OQ_NMARKS);
            e->dash = l->style > 0 ? dash_of(k) : OQ_DASH_SOLID;
            e->failed = l->failed;
            snprintf(e->text, sizeof e->text, "%s", l->label ? l->label : "");
        }
        return;
    }
    if (sp->npanels) return; /* panels carry their own labels */
    for (size_t i = 0; i < sp->nseries && lg->n < MAX_SERIES; i++) {
        const oq_plot_series *s = &sp->series[i];
        lentry *e = &lg->e[lg->n++];
        size_t k = style_index(s->style, i);
        e->col = s->dashed && s->style <= 0 ? GREY : color_of(k);
        e->marker = marker_of(s, k);
        e->dash = s->dashed ? OQ_DASH_DASHED : dash_of(k);
        e->failed = s->failed;
        e->kind = f->binned || sp->kind == OQ_PLOT_HBARS ? OQ_LEGEND_BOX
                  : s->dashed                         ? OQ_LEGEND_DASHED
                  : sp->kind == OQ_PLOT_LINES         ? OQ_LEGEND_LINE
                                                      : OQ_LEGEND_MARKER;
        const char *text = sp->kind == OQ_PLOT_HBARS ? label_of(s) : f->s[i].label;
        snprintf(e->text, sizeof e->text, "%s%s%s", text, s->note && *s->note ? " " : "", s->note ? s->note : "");
    }
}

#define LEGEND_ROW 20.0
#define LEGEND_LINE 16.0 /* each further line of a wrapped entry */
#define LEGEND_SWATCH 30.0

static int legend_flags(const lentry *e) { return e->failed ? OQ_TEXT_BOLD : 0; }

/* Columns as many as fit the width, rows as needed; an entry wider than the width wraps. */
static void legend_layout(legend *lg, double width)
{
    lg->cols = lg->rows = 0;
    if (!lg->n) return;
    double w = 0;
    for (size_t i = 0; i < lg->n; i++)
        w = fmax(w, LEGEND_SWATCH + 6 + oq_text_width(lg->e[i].text, FS_LEGEND, legend_flags(&lg->e[i])) + 18);
    lg->colw = fmin(w, width);
    lg->textw = lg->colw - LEGEND_SWATCH - 6; /* the gap to the next column is the slack */
    lg->cols = (size_t)fmax(1, floor(width / lg->colw));
    if (lg->cols > lg->n) lg->cols = lg->n;
    lg->rows = (lg->n + lg->cols - 1) / lg->cols;
    for (size_t i = 0; i < lg->n; i++)
        lg->e[i].lines = text_lines(NULL, lg->e[i].text, 0, 0, lg->textw, 0, FS_LEGEND, 0, legend_flags(&lg->e[i]), FG);
}

/* Row r is as tall as its entry with the most lines. */
static double legend_row(const legend *lg, size_t r)
{
    size_t most = 1;
    for (size_t i = r * lg->cols; i < lg->n && i < (r + 1) * lg->cols; i++)
        if (lg->e[i].lines > most) most = lg->e[i].lines;
    return LEGEND_ROW + (double)(most - 1) * LEGEND_LINE;
}

static double legend_height(const legend *lg)
{
    double h = 0;
    for (size_t r = 0; r < lg->rows; r++) h += legend_row(lg, r);
    return lg->rows ? h + 8 : 0;
}

static void legend_swatch(oq_canvas *c, const lentry *e, double x, double y)
{
    double xm = x + LEGEND_SWATCH / 2;
    switch (e->kind) {
    case OQ_LEGEND_BOX:
        rect(c, x + 4, y - 6, x + LEGEND_SWATCH - 4, y + 6, e->col, 0.45);
        break;
    case OQ_LEGEND_BAND:
        rect(c, x + 4, y - 7, x + LEGEND_SWATCH - 4, y + 7, e->col, 0.18);
        seg(c, x + 4, y - 7, x + 4, y + 7, e->col, 1.5, OQ_DASH_DASHED);
        seg(c, x + LEGEND_SWATCH - 4, y - 7, x + LEGEND_SWATCH - 4, y + 7, e->col, 1.5, OQ_DASH_DASHED);
        break;
    case OQ_LEGEND_DASHED:
        seg(c, x, y, x + LEGEND_SWATCH, y, e->col, 1.8, OQ_DASH_DASHED);
        break;
    case OQ_LEGEND_LINE:
        seg(c, x, y, x + LEGEND_SWATCH, y, e->col, 2.2, e->dash);
        marker(c, xm, y, e->marker, 4.5, e->col);
        break;
    default:
        marker(c, xm, y, e->marker, 4.5, e->col);
    }
    if (e->failed) ring(c, xm, y, 7.5, RED);
}

static void draw_legend(const fig *f, const legend *lg, double x0, double y0)
{
    oq_canvas *c = f->c;
    for (size_t i = 0; i < lg->n; i++) {
        const lentry *e = &lg->e[i];
        if (i && i % lg->cols == 0) y0 += legend_row(lg, i / lg->cols - 1);
        double x = x0 + (double)(i % lg->cols) * lg->colw, y = y0 + LEGEND_ROW / 2;
        c->group_begin(c, "legend", e->text, -1);
        legend_swatch(c, e, x, y);
        text_lines(c, e->text, x + LEGEND_SWATCH + 6, y, lg->textw, LEGEND_LINE, FS_LEGEND, OQ_ANCHOR_START,
                   legend_flags(e), e->failed ? RED : FG);
        c->group_end(c);
    }
}

/* ---- Panels ------------------------------------------------------------------- */

#define PANEL_STRIP 22.0 /* a label strip of one line */
#define PANEL_LINE 16.0  /* each further line of a label */
#define PANEL_GAP 8.0

static size_t npanels(const oq_plot_spec *sp) { return sp->npanels ? sp->npanels : 1; }

/* Box of panel p (0-based) within the plot area; faceted panels leave a label strip above. */
static box panel_box(const fig *f, size_t p)
{
    const oq_plot_spec *sp = f->sp;
    if (!sp->npanels) return f->plot;
    double n = (double)sp->npanels, h = (f->plot.y1 - f->plot.y0 - n * f->strip - (n - 1) * PANEL_GAP) / n;
    double y0 = f->plot.y0 + (double)p * (h + f->strip + PANEL_GAP) + f->strip;
    return (box){f->plot.x0, y0, f->plot.x1, y0 + h};
}

static size_t panel_of(const oq_plot_spec *sp, size_t i)
{
    int p = sp->series[i].panel;
    return sp->npanels && p >= 1 && (size_t)p <= sp->npanels ? (size_t)(p - 1) : 0;
}

/* A panel stands for its first series (the one it is labelled with); NULL: none. */
static const oq_plot_series *panel_series(const oq_plot_spec *sp, size_t p)
{
    for (size_t i = 0; i < sp->nseries; i++)
        if (panel_of(sp, i) == p) return &sp->series[i];
    return NULL;
}

static int panel_failed(const fig *f, size_t p)
{
    const oq_plot_series *s = panel_series(f->sp, p);
    return s && s->failed;
}

/* Panel p's label, its series' label and note, in lines of `width` px, the last just above the
 * panel `b`; drawn when c is not NULL. Returns the number of lines. */
static size_t panel_label(const oq_plot_spec *sp, size_t p, const box *b, double width, oq_canvas *c)
{
    const oq_plot_series *s = panel_series(sp, p);
    if (!s) return 0;
    char text[512];
    snprintf(text, sizeof text, "%s%s%s", label_of(s), s->note && *s->note ? "   " : "", s->note ? s->note : "");
    size_t n = text_lines(NULL, text, 0, 0, width, 0, FS_PANEL, 0, OQ_TEXT_BOLD, FG);
    if (c && n)
        text_lines(c, text, b->x0, b->y0 - PANEL_STRIP / 2 - (double)(n - 1) * PANEL_LINE, width, PANEL_LINE, FS_PANEL,
                   OQ_ANCHOR_START, OQ_TEXT_BOLD, s->failed ? RED : FG);
    return n;
}

/* The strip above every panel, as tall as the label with the most lines at `width` px. */
static double panel_strip(const oq_plot_spec *sp, double width)
{
    size_t most = 1;
    for (size_t p = 0; p < sp->npanels; p++) {
        size_t n = panel_label(sp, p, NULL, width, NULL);
        if (n > most) most = n;
    }
    return PANEL_STRIP + (double)(most - 1) * PANEL_LINE;
}

static void draw_grid(const fig *f, const box *b, const ticks *tx, const ticks *ty)
{
    oq_canvas *c = f->c;
    for (size_t i = 0; i < tx->n; i++) {
        double x = px_x(f, b, to_world(tx->v[i], f->ax.log));
        seg(c, x, b->y0, x, b->y1, GRID, 1.0, OQ_DASH_SOLID);
    }
    for (size_t i = 0; ty && i < ty->n; i++) {
        double y = px_y(f, b, to_world(ty->v[i], f->ay.log));
        seg(c, b->x0, y, b->x1, y, GRID, 1.0, OQ_DASH_SOLID);
    }
}

static void draw_tick_marks(const fig *f, const box *b, const ticks *tx, const ticks *ty)
{
    oq_canvas *c = f->c;
    for (size_t i = 0; i < tx->n; i++) {
        double x = px_x(f, b, to_world(tx->v[i], f->ax.log));
        seg(c, x, b->y1, x, b->y1 - 6, FG, 1.2, OQ_DASH_SOLID);
        seg(c, x, b->y0, x, b->y0 + 6, FG, 1.2, OQ_DASH_SOLID);
    }
    for (size_t i = 0; ty && i < ty->n; i++) {
        double y = px_y(f, b, to_world(ty->v[i], f->ay.log));
        seg(c, b->x0, y, b->x0 + 6, y, FG, 1.2, OQ_DASH_SOLID);
        seg(c, b->x1, y, b->x1 - 6, y, FG, 1.2, OQ_DASH_SOLID);
        c->text(c, b->x0 - 7, y, ty->lab[i], FS_TICK, OQ_ANCHOR_END, OQ_TEXT_MARKUP, FG);
    }
}

static void draw_band(const fig *f, const box *b, const oq_plot_series *s, oq_rgb col)
{
    const oq_plot_spec *sp = f->sp;
    if (!s->has_band || !drawable(s->band_lo, sp->logx) || !drawable(s->band_hi, sp->logx)) return;
    double x0 = px_x(f, b, to_world(s->band_lo, sp->logx)), x1 = px_x(f, b, to_world(s->band_hi, sp->logx));
    oq_canvas *c = f->c;
    c->group_begin(c, "band", label_of(s), -1);
    if (x1 > x0) rect(c, x0, b->y0, x1, b->y1, col, 0.12);
    seg(c, x0, b->y0, x0, b->y1, col, 1.5, OQ_DASH_DASHED);
    if (x1 > x0) seg(c, x1, b->y0, x1, b->y1, col, 1.5, OQ_DASH_DOTTED);
    c->group_end(c);
}

/* Bars of one binned series; returns the number drawn. */
static long draw_bars(const fig *f, const box *b, const pseries *p, oq_rgb col)
{
    oq_canvas *c = f->c;
    long drawn = 0;
    double base = f->ay.log ? f->ay.lo : 0;
    for (size_t k = 0; k < p->n; k++) {
        if (p->y[k] <= 0) continue;
        double top = to_world(p->y[k], f->ay.log);
        double x0 = px_x(f, b, p->x[k]), x1 = px_x(f, b, p->x[k + 1]), y0 = px_y(f, b, top), y1 = px_y(f, b, base);
        double ox[4] = {x0, x0, x1, x1}, oy[4] = {y1, y0, y0, y1};
        c->point_begin(c);
        rect(c, x0, y0, x1, y1, col, 0.35);
        c->line(c, ox, oy, 4, col, 1.2, OQ_DASH_SOLID);
        c->point_end(c);
        drawn++;
    }
    return drawn;
}

static long count_bars(const pseries *p)
{
    long n = 0;
    for (size_t k = 0; k < p->n; k++) n += p->y[k] > 0;
    return n;
}

static void draw_one_series(const fig *f, size_t i)
{
    const oq_plot_spec *sp = f->sp;
    const oq_plot_series *s = &sp->series[i];
    const pseries *p = &f->s[i];
    oq_canvas *c = f->c;
    box b = panel_box(f, panel_of(f->sp, i));
    size_t k = style_index(s->style, i);
    oq_rgb col = s->dashed && s->style <= 0 ? GREY : color_of(k);
    c->group_begin(c, "series", p->label, f->binned ? count_bars(p) : (long)p->n);
    if (f->binned) {
        draw_bars(f, &b, p, col);
    } else {
        double *x = malloc((p->n + 1) * sizeof *x), *y = malloc((p->n + 1) * sizeof *y);
        if (!x || !y) {
            c->failed = 1;
        } else {
            for (size_t j = 0; j < p->n; j++) {
                x[j] = px_x(f, &b, p->x[j]);
                y[j] = px_y(f, &b, p->y[j]);
            }
            if ((sp->kind == OQ_PLOT_LINES || s->dashed) && p->n >= 2)
                c->line(c, x, y, p->n, col, s->dashed ? 1.8 : 2.2, s->dashed ? OQ_DASH_DASHED : dash_of(k));
            for (size_t j = 0; j < p->n; j++) {
                c->point_begin(c);
                if (!s->dashed) marker(c, x[j], y[j], marker_of(s, k), 5.0, col);
                if (s->failed && !s->dashed) ring(c, x[j], y[j], 8.0, RED);
                c->point_end(c);
            }
        }
        free(x);
        free(y);
    }
    c->group_end(c);
}

/* ---- Whole figures --------------------------------------------------------------- */

#define TITLE_LINE 25.0
#define SUB_LINE 18.0
#define HBAR_LINE 15.0
/* A plot's left edge with its usual y tick labels, to size a figure before its layout. */
#define PLOT_X0_USUAL 90.0

/* The title's lines from y = 22 and the subtitle's below them, no wider than the figure less
 * its margins; drawn when c is not NULL. Returns the height they take (64 for a line of each,
 * 44 for a title alone). */
static double titles(const oq_plot_spec *sp, double W, oq_canvas *c)
{
    double width = W - 2 * MARGIN, y = 22;
    size_t nt = text_lines(c, sp->title, W / 2, y, width, TITLE_LINE, FS_TITLE, OQ_ANCHOR_MIDDLE, 0, FG);
    if (nt > 1) y += (double)(nt - 1) * TITLE_LINE;
    size_t ns = text_lines(c, sp->subtitle, W / 2, y + 24, width, SUB_LINE, FS_SUB, OQ_ANCHOR_MIDDLE, 0, GREY);
    return ns ? y + 24 + (double)(ns - 1) * SUB_LINE + 18 : y + 22;
}

static void y_ticks_for(fig *f, double len, ticks *t)
{
    if (f->ay.log)
        ticks_log(&f->ay, 0, len, t);
    else
        ticks_linear(&f->ay, 0, len, t);
}

/* The y ticks set the plot's left edge, the edge the lines of the panels' labels, those lines
 * the strips above the panels, and the strips the panels' height the ticks fit: laid out again
 * until the strip stays. */
static void layout_y(fig *f, ticks *ty)
{
    axis data = f->ay;
    f->strip = PANEL_STRIP;
    for (int round = 0; round < 3; round++) {
        f->ay = data;
        box b0 = panel_box(f, 0);
        y_ticks_for(f, b0.y1 - b0.y0, ty);
        f->plot.x0 = 14 + 22 + widest_tick(ty) + 10;
        double strip = f->sp->npanels ? panel_strip(f->sp, f->plot.x1 - f->plot.x0) : PANEL_STRIP;
        if (strip == f->strip) return;
        f->strip = strip;
    }
}

static void draw_xy(fig *f)
{
    const oq_plot_spec *sp = f->sp;
    oq_canvas *c = f->c;
    legend lg;
    legend_entries(f, &lg);
    legend_layout(&lg, f->W - 40.0);
    double top = titles(sp, f->W, NULL), bottom = f->H - (22 + 24 + legend_height(&lg) + 10);
    f->plot = (box){0, top + (sp->npanels ? 0 : 6), f->W - 24.0, bottom};
    ticks ty = {0}, tx = {0};
    layout_y(f, &ty);
    double xlen = f->plot.x1 - f->plot.x0;
    if (sp->xticks && sp->nxticks)
        ticks_given(&f->ax, sp->xticks, sp->nxticks, xlen, &tx);
    else if (f->ax.log)
        ticks_log(&f->ax, 1, xlen, &tx);
    else
        ticks_linear(&f->ax, 1, xlen, &tx);

    for (size_t p = 0; p < npanels(sp); p++) {
        box b = panel_box(f, p);
        int failed = sp->npanels && panel_failed(f, p);
        if (failed) rect(c, b.x0, b.y0, b.x1, b.y1, RED_BG, 1.0);
        draw_grid(f, &b, &tx, &ty);
        for (size_t i = 0; i < sp->nseries; i++)
            if (panel_of(sp, i) == p) draw_band(f, &b, &sp->series[i], sp->series[i].failed ? RED : GREY);
        if (sp->has_ref_y && drawable(sp->ref_y, sp->logy)) {
            double y = px_y(f, &b, to_world(sp->ref_y, sp->logy));
            seg(c, b.x0, y, b.x1, y, GREY, 1.5, OQ_DASH_DASHED);
        }
        for (size_t i = 0; i < sp->nseries; i++)
            if (panel_of(sp, i) == p) draw_one_series(f, i);
        frame(c, &b, failed ? RED : FG, failed ? 2.0 : 1.2);
        draw_tick_marks(f, &b, &tx, &ty);
        if (sp->npanels) panel_label(sp, p, &b, b.x1 - b.x0, c);
    }
    for (size_t i = 0; i < tx.n; i++)
        c->text(c, px_x(f, &f->plot, to_world(tx.v[i], f->ax.log)), f->plot.y1 + 13, tx.lab[i], FS_TICK,
                OQ_ANCHOR_MIDDLE, OQ_TEXT_MARKUP, FG);
    c->text(c, (f->plot.x0 + f->plot.x1) / 2, f->plot.y1 + 36, sp->xlabel ? sp->xlabel : "", FS_LABEL,
            OQ_ANCHOR_MIDDLE, 0, FG);
    const char *yl = sp->ylabel ? sp->ylabel : sp->kind == OQ_PLOT_HISTOGRAM ? "count" : "";
    c->text(c, 22, (f->plot.y0 + f->plot.y1) / 2, yl, FS_LABEL, OQ_ANCHOR_MIDDLE, OQ_TEXT_VERTICAL, FG);
    titles(sp, f->W, c);
    draw_legend(f, &lg, 20, f->plot.y1 + 52);
}

/* Room for the texts beside the bars: the widest, at most 0.4 of the figure with its margins. */
static double hbar_room(const char *const *text, size_t n, int flags, double W)
{
    double w = 0;
    for (size_t r = 0; text && r < n; r++)
        if (text[r]) w = fmax(w, oq_text_width(text[r], FS_TICK, flags));
    return fmin(w, W * 0.4 - 8 - MARGIN);
}

/* `s` in lines of `width` px centred on ymid; drawn when c is not NULL. Returns the lines. */
static size_t hbar_text(oq_canvas *c, const char *s, double x, double ymid, double width, int anchor, int flags,
                        oq_rgb col)
{
    size_t n = text_lines(NULL, s, 0, 0, width, 0, FS_TICK, 0, flags, col);
    if (c && n) text_lines(c, s, x, ymid - (double)(n - 1) * HBAR_LINE / 2, width, HBAR_LINE, FS_TICK, anchor, flags, col);
    return n;
}

/* The lines of the row that takes the most: its label's or its note's. */
static size_t hbar_lines(const oq_plot_spec *sp, double W)
{
    double lroom = hbar_room(sp->categories, sp->ncategories, OQ_TEXT_BOLD, W);
    double nroom = hbar_room(sp->category_notes, sp->ncategories, 0, W);
    size_t most = 1;
    for (size_t r = 0; r < sp->ncategories; r++) {
        size_t nl = hbar_text(NULL, sp->categories[r], 0, 0, lroom, 0, OQ_TEXT_BOLD, FG);
        size_t nn = sp->category_notes ? hbar_text(NULL, sp->category_notes[r], 0, 0, nroom, 0, 0, FG) : 0;
        if (nl > most) most = nl;
        if (nn > most) most = nn;
    }
    return most;
}

/* Horizontal stacked bars, one row per category. */
static void draw_hbars(fig *f)
{
    const oq_plot_spec *sp = f->sp;
    oq_canvas *c = f->c;
    size_t nc = sp->ncategories;
    legend lg;
    legend_entries(f, &lg);
    legend_layout(&lg, f->W - 40.0);
    double total = 0;
    for (size_t r = 0; r < nc; r++) {
        double sum = 0;
        for (size_t i = 0; i < sp->nseries; i++)
            if (isfinite(sp->series[i].y[r]) && sp->series[i].y[r] > 0) sum += sp->series[i].y[r];
        total = fmax(total, sum);
    }
    double lroom = hbar_room(sp->categories, nc, OQ_TEXT_BOLD, f->W), nroom = hbar_room(sp->category_notes, nc, 0, f->W);
    f->ax = (axis){0, 0, total > 0 ? total * 1.05 : 1};
    f->plot = (box){lroom + 8 + MARGIN, titles(sp, f->W, NULL) + 6, f->W - (nroom > 0 ? nroom + 8 + MARGIN : 24),
                    f->H - (22 + 24 + legend_height(&lg) + 10)};
    ticks tx = {0};
    ticks_linear(&f->ax, 1, f->plot.x1 - f->plot.x0, &tx);
    draw_grid(f, &f->plot, &tx, NULL);
    double rowh = (f->plot.y1 - f->plot.y0) / (double)(nc ? nc : 1);
    for (size_t i = 0; i < sp->nseries; i++) {
        const oq_plot_series *s = &sp->series[i];
        long drawn = 0;
        for (size_t r = 0; r < nc; r++) drawn += isfinite(s->y[r]) && s->y[r] > 0;
        c->group_begin(c, "series", label_of(s), drawn);
        for (size_t r = 0; r < nc; r++) {
            if (!(isfinite(s->y[r]) && s->y[r] > 0)) continue;
            double start = 0;
            for (size_t j = 0; j < i; j++)
                if (isfinite(sp->series[j].y[r]) && sp->series[j].y[r] > 0) start += sp->series[j].y[r];
            double y0 = f->plot.y0 + rowh * ((double)r + 0.2), y1 = f->plot.y0 + rowh * ((double)r + 0.8);
            c->point_begin(c);
            rect(c, px_x(f, &f->plot, start), y0, px_x(f, &f->plot, start + s->y[r]), y1,
                 color_of(style_index(s->style, i)), 0.85);
            c->point_end(c);
        }
        c->group_end(c);
    }
    for (size_t r = 0; r < nc; r++) {
        double y = f->plot.y0 + rowh * ((double)r + 0.5);
        oq_rgb col = sp->category_failed && sp->category_failed[r] ? RED : FG;
        hbar_text(c, sp->categories[r], f->plot.x0 - 8, y, lroom, OQ_ANCHOR_END, OQ_TEXT_BOLD, col);
        if (sp->category_notes && sp->category_notes[r])
            hbar_text(c, sp->category_notes[r], f->plot.x1 + 8, y, nroom, OQ_ANCHOR_START, 0, col);
    }
    frame(c, &f->plot, FG, 1.2);
    for (size_t i = 0; i < tx.n; i++)
        c->text(c, px_x(f, &f->plot, tx.v[i]), f->plot.y1 + 13, tx.lab[i], FS_TICK, OQ_ANCHOR_MIDDLE, OQ_TEXT_MARKUP, FG);
    c->text(c, (f->plot.x0 + f->plot.x1) / 2, f->plot.y1 + 36, sp->xlabel ? sp->xlabel : "", FS_LABEL,
            OQ_ANCHOR_MIDDLE, 0, FG);
    titles(sp, f->W, c);
    draw_legend(f, &lg, 20, f->plot.y1 + 52);
}

void oq_plot_size(const oq_plot_spec *spec, int *width, int *height)
{
    *width = spec->width > 0 ? spec->width : 1100;
    if (spec->height > 0) {
        *height = spec->height;
        return;
    }
    /* taller by the lines that wrapped: titles, panel labels, bar labels */
    double W = *width, h = titles(spec, W, NULL) - (spec->subtitle && *spec->subtitle ? 64 : 44);
    if (spec->npanels)
        h += 200 + (double)spec->npanels * (140 + panel_strip(spec, W - 24 - PLOT_X0_USUAL) - PANEL_STRIP);
    else if (spec->kind == OQ_PLOT_HBARS)
        h += 180 + (double)spec->ncategories * fmax(44, (double)hbar_lines(spec, W) * HBAR_LINE + 14);
    else
        h += 700;
    *height = (int)ceil(h);
}

oq_status oq_plot_draw(const oq_plot_spec *spec, int width, int height, oq_canvas *c, oq_err *err)
{
    fig f;
    memset(&f, 0, sizeof f);
    f.sp = spec;
    f.c = c;
    f.W = width;
    f.H = height;
    oq_status st = OQ_OK;
    if (spec->kind == OQ_PLOT_HISTOGRAM)
        st = prepare_histogram(&f, err);
    else if (spec->kind == OQ_PLOT_BINNED)
        st = prepare_binned(&f, err);
    else if (spec->kind != OQ_PLOT_HBARS)
        st = prepare_points(&f, err);
    if (!st) {
        rect(c, 0, 0, width, height, WHITE, 1.0);
        if (spec->kind == OQ_PLOT_HBARS)
            draw_hbars(&f);
        else
            draw_xy(&f);
        if (c->failed) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory drawing '%s'", spec->title ? spec->title : "");
    }
    fig_free(&f);
    return st;
}
