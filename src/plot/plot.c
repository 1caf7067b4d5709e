/* Figure rendering with PLplot's cairo devices. Axes, ticks and labels are
 * drawn here rather than with plbox: PLplot labels log axes only at whole
 * decades, which leaves a 512..4096 axis with a single label. */
#include "ortqual/plot.h"

#include <errno.h>
#include <math.h>
#include <plplot.h>
#include <setjmp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ortqual/fileio.h"

#define MAX_SERIES 64
#define MAX_TICKS 16
#define NCOLORS 10

/* cmap0 layout: fixed colours, then series colours, then their translucent fills. */
enum { COL_BG, COL_FG, COL_GRID, COL_REF, COL_SERIES0, COL_FILL0 = COL_SERIES0 + NCOLORS };

/* Okabe-Ito colours (distinguishable with colour blindness), then four more. */
static const unsigned char palette[NCOLORS][3] = {
    {0, 114, 178}, {213, 94, 0},   {0, 158, 115}, {204, 121, 167}, {230, 159, 0},
    {86, 180, 233}, {117, 112, 179}, {102, 102, 102}, {166, 118, 29}, {0, 0, 0}};
/* Filled circle, square, up triangle, diamond, down triangle, star. */
static const char *const markers[] = {"#[0x25cf]", "#[0x25a0]", "#[0x25b2]",
                                      "#[0x25c6]", "#[0x25bc]", "#[0x2605]"};
#define NMARKERS (sizeof markers / sizeof markers[0])

static pthread_mutex_t plot_lock = PTHREAD_MUTEX_INITIALIZER;
/* Under plot_lock: the last PLplot error message, and the way back from
 * plexit(), which would otherwise end the process after calling its handler. */
static char plplot_msg[256];
static jmp_buf plplot_escape;

const char *oq_plot_format_ext(oq_plot_format f)
{
    return f == OQ_PLOT_SVG ? "svg" : "png";
}

const char *oq_plot_format_device(oq_plot_format f)
{
    return f == OQ_PLOT_SVG ? "svgcairo" : "pngcairo";
}

/* ---- Driver ------------------------------------------------------------- */

static int on_plexit(PLCHAR_VECTOR msg)
{
    snprintf(plplot_msg, sizeof plplot_msg, "%s", msg);
    longjmp(plplot_escape, 1);
}

/* Caller holds plot_lock. 0 also when PLplot finds no drivers at all (it
 * would exit the process; on_plexit brings control back here instead). */
static int device_present(const char *dev)
{
    const char *menu_buf[256], *name_buf[256];
    const char **menu = menu_buf, **names = name_buf;
    int n = 256;
    plsexit(on_plexit);
    if (setjmp(plplot_escape)) {
        plsexit(NULL); /* the jump target is gone once we return */
        return 0;
    }
    plgDevs(&menu, &names, &n);
    plsexit(NULL);
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], dev)) return 1;
    return 0;
}

oq_status oq_plot_check_driver(oq_plot_format f, oq_err *err)
{
    const char *dev = oq_plot_format_device(f);
    pthread_mutex_lock(&plot_lock);
    int ok = device_present(dev);
    pthread_mutex_unlock(&plot_lock);
    if (ok) return OQ_OK;
    return oq_err_set(err, OQ_ERR_NOT_FOUND, "PLplot driver %s not available: install plplot-driver-cairo", dev);
}

static void on_plabort(PLCHAR_VECTOR msg)
{
    snprintf(plplot_msg, sizeof plplot_msg, "%s", msg);
}

/* PLplot reads '#' as the start of an escape sequence; user text gets it doubled. */
static void pl_text(char *dst, size_t n, const char *src)
{
    size_t k = 0;
    for (; src && *src && k + 2 < n; src++) {
        if (*src == '#') dst[k++] = '#';
        dst[k++] = *src;
    }
    dst[k] = 0;
}

/* ---- Axis scales and ticks ---------------------------------------------- */

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
    double pad = 0.05 * (hi - lo);
    a->lo = lo - pad;
    a->hi = hi + pad;
}

/* Ticks of one axis: values and their PLplot label text. */
typedef struct ticks {
    double v[MAX_TICKS];
    char lab[MAX_TICKS][48];
    size_t n;
} ticks;

/* Width of a digit or letter in character heights (DejaVu Sans in PLplot's
 * cairo driver), used to lay out labels before they are drawn. */
#define CHAR_W 0.82

/* Visible width of a PLplot label in character heights: #u/#d take no room,
 * a unicode escape #[0x...] (a symbol such as the multiplication sign) is
 * wider than a digit, every other character (superscripts too) counts as one. */
static double label_width(const char *s)
{
    double w = 0;
    while (*s) {
        if (s[0] == '#' && (s[1] == 'u' || s[1] == 'd')) {
            s += 2;
        } else if (s[0] == '#' && s[1] == '[') {
            const char *e = strchr(s, ']');
            s = e ? e + 1 : s + 2;
            w += 1.3;
        } else {
            w += 1;
            s++;
        }
    }
    return w * CHAR_W;
}

/* "0.5", "300", "10^-6", "2x10^-7" (as PLplot escapes); `exact` prints the
 * value as given (a measured length), `sci` forces the power-of-ten form. */
static void tick_label(double v, int exact, int sci, char *buf, size_t n)
{
    double e = v != 0 ? floor(log10(fabs(v)) + 1e-9) : 0;
    if (exact || v == 0 || (!sci && e > -4 && e < 6)) {
        snprintf(buf, n, exact ? "%.10g" : "%g", v);
        return;
    }
    double m = v / pow(10, e);
    if (fabs(fabs(m) - 1) < 1e-9)
        snprintf(buf, n, "%s10#u%d#d", m < 0 ? "-" : "", (int)e);
    else
        snprintf(buf, n, "%.3g#[0x00d7]10#u%d#d", m, (int)e);
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
    for (size_t i = 0; i < t->n; i++) sci |= strstr(t->lab[i], "#u") != NULL;
    for (size_t i = 0; sci && i < t->n; i++) tick_label(t->v[i], 0, 1, t->lab[i], sizeof t->lab[0]);
}

/* Labels fit when, side by side (x) or stacked (y), they leave room between them. */
static int ticks_fit(const ticks *t, int is_x, double axis_chars)
{
    if (t->n > 8) return 0;
    double need = 0;
    for (size_t i = 0; i < t->n; i++) need += is_x ? label_width(t->lab[i]) + 1.2 : 3.2;
    return need <= axis_chars;
}

/* Linear: the smallest step of 1, 2 or 5 x 10^k whose labels fit. */
static void ticks_linear(const axis *a, int is_x, double axis_chars, ticks *t)
{
    double mag = pow(10, floor(log10(a->hi - a->lo)) - 2);
    static const double mult[] = {1, 2, 5};
    for (int k = 0; k < 12; k++) {
        double step = mult[k % 3] * mag * pow(10, k / 3);
        t->n = 0;
        for (double v = ceil(a->lo / step) * step; v <= a->hi + step * 1e-9; v += step) {
            double q = round(v / step) * step; /* avoid 0.30000000000000004 */
            ticks_add(t, fabs(q) < step * 1e-9 ? 0 : q, 0);
            if (t->n == MAX_TICKS) break;
        }
        ticks_uniform(t);
        if (t->n < MAX_TICKS && ticks_fit(t, is_x, axis_chars)) return;
    }
}

/* Log: the densest of 1..9, 1-2-3-5-7, 1-2-5, 1-3 per decade, then every k-th
 * decade, whose labels fit. */
static void ticks_log(const axis *a, int is_x, double axis_chars, ticks *t)
{
    static const double sets[][9] = {{1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 3, 5, 7}, {1, 2, 5}, {1, 3}};
    static const size_t sizes[] = {9, 5, 3, 2};
    for (size_t s = 0; s < 4; s++) {
        t->n = 0;
        int full = 0;
        for (double e = floor(a->lo); e <= ceil(a->hi) && !full; e++)
            for (size_t m = 0; m < sizes[s]; m++) {
                double v = sets[s][m] * pow(10, e), w = log10(v);
                if (w < a->lo - 1e-9 || w > a->hi + 1e-9) continue;
                full = t->n == MAX_TICKS;
                ticks_add(t, v, 0);
            }
        ticks_uniform(t);
        if (!full && ticks_fit(t, is_x, axis_chars)) return;
    }
    for (int k = 1; k < 64; k++) {
        t->n = 0;
        for (double e = ceil(a->lo / k) * k; e <= a->hi + 1e-9; e += k) ticks_add(t, pow(10, e), 0);
        ticks_uniform(t);
        if (t->n < MAX_TICKS && ticks_fit(t, is_x, axis_chars)) return;
    }
}

/* Caller's ticks: every k-th of those in range, the smallest k that fits. */
static void ticks_given(const axis *a, const double *v, size_t n, double axis_chars, ticks *t)
{
    for (size_t k = 1; k <= n; k++) {
        t->n = 0;
        for (size_t i = 0; i < n; i += k) {
            double w = to_world(v[i], a->log);
            if (drawable(v[i], a->log) && w >= a->lo - 1e-9 && w <= a->hi + 1e-9) ticks_add(t, v[i], 1);
        }
        if (ticks_fit(t, 1, axis_chars)) return;
    }
}

static double widest_label(const ticks *t)
{
    double w = 0;
    for (size_t i = 0; i < t->n; i++) w = fmax(w, label_width(t->lab[i]));
    return w;
}

static void draw_tick_labels(const axis *a, int is_x, const ticks *t)
{
    plcol0(COL_FG);
    for (size_t i = 0; i < t->n; i++) {
        double frac = (to_world(t->v[i], a->log) - a->lo) / (a->hi - a->lo);
        if (is_x)
            plmtex("b", 1.4, frac, 0.5, t->lab[i]);
        else
            plmtex("lv", 0.8, frac, 1.0, t->lab[i]);
    }
}

static void draw_grid(const axis *ax, const axis *ay, const ticks *tx, const ticks *ty)
{
    plcol0(COL_GRID);
    plwidth(1.0);
    pllsty(1);
    for (size_t i = 0; i < tx->n; i++) {
        double w = to_world(tx->v[i], ax->log);
        pljoin(w, ay->lo, w, ay->hi);
    }
    for (size_t i = 0; i < ty->n; i++) {
        double w = to_world(ty->v[i], ay->log);
        pljoin(ax->lo, w, ax->hi, w);
    }
    /* Tick marks on the frame, pointing inwards. */
    plcol0(COL_FG);
    double lx = 0.012 * (ax->hi - ax->lo), ly = 0.018 * (ay->hi - ay->lo);
    for (size_t i = 0; i < tx->n; i++) {
        double w = to_world(tx->v[i], ax->log);
        pljoin(w, ay->lo, w, ay->lo + ly);
        pljoin(w, ay->hi, w, ay->hi - ly);
    }
    for (size_t i = 0; i < ty->n; i++) {
        double w = to_world(ty->v[i], ay->log);
        pljoin(ax->lo, w, ax->lo + lx, w);
        pljoin(ax->hi, w, ax->hi - lx, w);
    }
}

/* ---- Data preparation --------------------------------------------------- */

/* One series as it will be drawn: world coordinates and legend text. */
typedef struct prepared {
    double *x, *y; /* lines/scatter: drawable points; histogram: bin edges and counts */
    size_t n;
    char label[160];
} prepared;

typedef struct figure {
    const oq_plot_spec *spec;
    prepared s[MAX_SERIES];
    axis ax, ay;
    size_t nbins;
} figure;

static void figure_clear(figure *f)
{
    for (size_t i = 0; i < f->spec->nseries; i++) {
        free(f->s[i].x);
        free(f->s[i].y);
    }
}

static oq_status prepare_points(figure *f, oq_err *err)
{
    const oq_plot_spec *sp = f->spec;
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    for (size_t i = 0; i < sp->nseries; i++) {
        const oq_plot_series *s = &sp->series[i];
        prepared *p = &f->s[i];
        p->x = malloc((s->n + 1) * sizeof *p->x);
        p->y = malloc((s->n + 1) * sizeof *p->y);
        if (!p->x || !p->y) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        for (size_t k = 0; k < s->n; k++) {
            if (!drawable(s->x[k], sp->logx) || !drawable(s->y[k], sp->logy)) continue;
            p->x[p->n] = to_world(s->x[k], sp->logx);
            p->y[p->n] = to_world(s->y[k], sp->logy);
            xlo = fmin(xlo, p->x[p->n]);
            xhi = fmax(xhi, p->x[p->n]);
            ylo = fmin(ylo, p->y[p->n]);
            yhi = fmax(yhi, p->y[p->n]);
            p->n++;
        }
        const char *why = sp->logx || sp->logy ? "all <= 0, not shown" : "no points";
        if (p->n)
            snprintf(p->label, sizeof p->label, "%s", s->label ? s->label : "");
        else
            snprintf(p->label, sizeof p->label, "%s (%s)", s->label ? s->label : "", why);
    }
    if (xlo > xhi) return oq_err_set(err, OQ_ERR_INVALID_ARG, "figure '%s': no drawable point",
                                     sp->title ? sp->title : "");
    if (sp->has_ref_y && drawable(sp->ref_y, sp->logy)) {
        ylo = fmin(ylo, to_world(sp->ref_y, sp->logy));
        yhi = fmax(yhi, to_world(sp->ref_y, sp->logy));
    }
    f->ax.log = sp->logx;
    f->ay.log = sp->logy;
    axis_pad(&f->ax, xlo, xhi);
    axis_pad(&f->ay, ylo, yhi);
    return OQ_OK;
}

/* Histogram: common bins over all series' drawable samples (world x). */
static oq_status prepare_histogram(figure *f, oq_err *err)
{
    const oq_plot_spec *sp = f->spec;
    size_t nb = f->nbins;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < sp->nseries; i++)
        for (size_t k = 0; k < sp->series[i].n; k++) {
            double v = sp->series[i].x[k];
            if (!drawable(v, sp->logx)) continue;
            lo = fmin(lo, to_world(v, sp->logx));
            hi = fmax(hi, to_world(v, sp->logx));
        }
    if (lo > hi) return oq_err_set(err, OQ_ERR_INVALID_ARG, "figure '%s': no drawable sample",
                                   sp->title ? sp->title : "");
    axis a = {sp->logx, 0, 0};
    axis_pad(&a, lo, hi);
    lo = a.lo;
    hi = a.hi;
    double cmax = 0;
    for (size_t i = 0; i < sp->nseries; i++) {
        const oq_plot_series *s = &sp->series[i];
        prepared *p = &f->s[i];
        p->x = malloc((nb + 1) * sizeof *p->x);
        p->y = calloc(nb, sizeof *p->y);
        if (!p->x || !p->y) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        for (size_t b = 0; b <= nb; b++) p->x[b] = lo + (hi - lo) * (double)b / (double)nb;
        size_t zeros = 0, nonfinite = 0;
        for (size_t k = 0; k < s->n; k++) {
            double v = s->x[k];
            if (!isfinite(v)) { nonfinite++; continue; }
            if (!drawable(v, sp->logx)) { zeros++; continue; }
            size_t b = (size_t)((to_world(v, sp->logx) - lo) / (hi - lo) * (double)nb);
            p->y[b < nb ? b : nb - 1] += 1;
        }
        p->n = nb;
        for (size_t b = 0; b < nb; b++) cmax = fmax(cmax, p->y[b]);
        char extra[96] = "";
        if (zeros) snprintf(extra, sizeof extra, ", %zu at <= 0 not shown", zeros);
        if (nonfinite)
            snprintf(extra + strlen(extra), sizeof extra - strlen(extra), ", %zu non-finite", nonfinite);
        snprintf(p->label, sizeof p->label, "%s (n=%zu%s)", s->label ? s->label : "", s->n, extra);
    }
    f->ax = a;
    f->ay = (axis){0, 0, cmax * 1.12};
    return OQ_OK;
}

/* ---- Drawing ------------------------------------------------------------ */

static void setup_colors(void)
{
    plscmap0n(COL_FILL0 + NCOLORS);
    plscol0(COL_BG, 255, 255, 255);
    plscol0(COL_FG, 0, 0, 0);
    plscol0(COL_GRID, 225, 225, 225);
    plscol0(COL_REF, 110, 110, 110);
    for (int i = 0; i < NCOLORS; i++) {
        plscol0(COL_SERIES0 + i, palette[i][0], palette[i][1], palette[i][2]);
        plscol0a(COL_FILL0 + i, palette[i][0], palette[i][1], palette[i][2], 0.22);
    }
}

/* Style number of series i: its own choice, else its position. */
static size_t style_of(const figure *f, size_t i)
{
    int st = f->spec->series[i].style;
    return st > 0 ? (size_t)(st - 1) : i;
}
static int series_color(size_t k) { return COL_SERIES0 + (int)(k % NCOLORS); }
static int fill_color(size_t k) { return COL_FILL0 + (int)(k % NCOLORS); }
/* Solid for the first NCOLORS styles, then dashed ones so colours can repeat. */
static int line_style(size_t k) { return 1 + (int)((k / NCOLORS) % 8); }
static const char *marker(size_t k) { return markers[k % NMARKERS]; }

static void draw_series(const figure *f, size_t i)
{
    const prepared *p = &f->s[i];
    size_t k = style_of(f, i);
    plcol0(series_color(k));
    if (f->spec->kind == OQ_PLOT_HISTOGRAM) {
        size_t nb = p->n;
        double px[4], py[4];
        for (size_t b = 0; b < nb; b++) {
            if (p->y[b] <= 0) continue;
            px[0] = px[1] = p->x[b];
            px[2] = px[3] = p->x[b + 1];
            py[0] = py[3] = 0;
            py[1] = py[2] = p->y[b];
            plcol0(fill_color(k));
            plfill(4, px, py);
            plcol0(series_color(k));
            plwidth(2.0);
            pllsty(line_style(k));
            plline(4, px, py);
        }
        return;
    }
    if (f->spec->kind == OQ_PLOT_LINES && p->n >= 2) {
        plwidth(2.2);
        pllsty(line_style(k));
        plline((PLINT)p->n, p->x, p->y);
    }
    plschr(0, 0.9);
    plstring((PLINT)p->n, p->x, p->y, marker(k));
    plschr(0, 1.0);
}

#define LEGEND_TEXT_SCALE 0.75

/* Legend to the right of the plot, its top level with the plot's top. */
static void draw_legend(const figure *f, double x_off, double y_off)
{
    size_t n = f->spec->nseries;
    PLINT opt[MAX_SERIES], tcol[MAX_SERIES], lcol[MAX_SERIES], lsty[MAX_SERIES], scol[MAX_SERIES];
    PLINT snum[MAX_SERIES], bcol[MAX_SERIES], bpat[MAX_SERIES];
    PLFLT lwid[MAX_SERIES], sscale[MAX_SERIES], bscale[MAX_SERIES], bwid[MAX_SERIES];
    const char *text[MAX_SERIES], *sym[MAX_SERIES];
    char esc[MAX_SERIES][2 * sizeof f->s[0].label];
    int hist = f->spec->kind == OQ_PLOT_HISTOGRAM;
    for (size_t i = 0; i < n; i++) {
        opt[i] = hist ? PL_LEGEND_COLOR_BOX
                      : (PL_LEGEND_SYMBOL | (f->spec->kind == OQ_PLOT_LINES ? PL_LEGEND_LINE : 0));
        size_t k = style_of(f, i);
        tcol[i] = COL_FG;
        lcol[i] = scol[i] = series_color(k);
        bcol[i] = fill_color(k);
        lsty[i] = line_style(k);
        lwid[i] = 2.2;
        sscale[i] = 0.9;
        snum[i] = 1;
        bpat[i] = 0;
        bscale[i] = 0.8;
        bwid[i] = 1;
        sym[i] = marker(k);
        pl_text(esc[i], sizeof esc[i], f->s[i].label);
        text[i] = esc[i];
    }
    PLFLT w, h;
    pllegend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
             PL_POSITION_SUBPAGE | PL_POSITION_RIGHT | PL_POSITION_TOP | PL_POSITION_INSIDE, x_off,
             y_off, 0.045, COL_BG, COL_FG, 1, 0, 0, (PLINT)n, opt, 0.7, LEGEND_TEXT_SCALE, 2.0, 0.0,
             tcol, (const char *const *)text, bcol, bpat, bscale, bwid, lcol, lsty, lwid, scol,
             sscale, snum, (const char *const *)sym);
}

/* Longest legend label, in character heights at the legend's text scale;
 * mostly lower-case letters, which are narrower than digits. */
static double legend_text_width(const figure *f)
{
    double w = 0;
    for (size_t i = 0; i < f->spec->nseries; i++) w = fmax(w, label_width(f->s[i].label));
    return w * LEGEND_TEXT_SCALE * (0.68 / CHAR_W);
}

/* Title centred over the plot, or over the page when it is wider than the plot. */
static void draw_title(const char *raw, double disp, double scale, double vx0, double vx1,
                       double char_frac)
{
    char text[512];
    pl_text(text, sizeof text, raw);
    double pos = 0.5, width = label_width(text) * scale * char_frac;
    if (width > vx1 - vx0) {
        double centre = fmin(fmax(0.5, width / 2 + 0.01), 1 - width / 2 - 0.01);
        pos = (centre - vx0) / (vx1 - vx0);
    }
    plschr(0, scale);
    plmtex("t", disp, pos, 0.5, text);
    plschr(0, 1.0);
}

static void draw_figure(const figure *f)
{
    const oq_plot_spec *sp = f->spec;
    PLFLT pxmin, pxmax, pymin, pymax, def, ht;
    pladv(0);
    plgspa(&pxmin, &pxmax, &pymin, &pymax);
    plgchr(&def, &ht);
    double cw = ht / (pxmax - pxmin), ch = ht / (pymax - pymin); /* a character height as page fractions */
    int has_sub = sp->subtitle && *sp->subtitle;
    double vy0 = 4.9 * ch, vy1 = 1 - (has_sub ? 4.9 : 3.4) * ch;
    double vx1 = 1 - (legend_text_width(f) + 8.6) * cw;
    if (vx1 < 0.5) vx1 = 0.5;

    ticks tx = {0}, ty = {0};
    double ychars = (vy1 - vy0) / ch;
    if (f->ay.log)
        ticks_log(&f->ay, 0, ychars, &ty);
    else
        ticks_linear(&f->ay, 0, ychars, &ty);
    double wy = widest_label(&ty);
    double vx0 = (wy + 4.2) * cw, xchars = (vx1 - vx0) / cw;
    if (sp->xticks && sp->nxticks)
        ticks_given(&f->ax, sp->xticks, sp->nxticks, xchars, &tx);
    else if (f->ax.log)
        ticks_log(&f->ax, 1, xchars, &tx);
    else
        ticks_linear(&f->ax, 1, xchars, &tx);

    plvpor(vx0, vx1, vy0, vy1);
    plwind(f->ax.lo, f->ax.hi, f->ay.lo, f->ay.hi);
    draw_grid(&f->ax, &f->ay, &tx, &ty);
    if (sp->has_ref_y && drawable(sp->ref_y, sp->logy)) {
        double w = to_world(sp->ref_y, sp->logy);
        plcol0(COL_REF);
        plwidth(1.5);
        pllsty(2);
        pljoin(f->ax.lo, w, f->ax.hi, w);
        pllsty(1);
    }
    for (size_t i = 0; i < sp->nseries; i++) draw_series(f, i);
    plcol0(COL_FG);
    plwidth(1.2);
    pllsty(1);
    plbox("bc", 0, 0, "bc", 0, 0);
    draw_tick_labels(&f->ax, 1, &tx);
    draw_tick_labels(&f->ay, 0, &ty);
    char lab[512];
    pl_text(lab, sizeof lab, sp->xlabel);
    plmtex("b", 3.3, 0.5, 0.5, lab);
    pl_text(lab, sizeof lab, sp->ylabel ? sp->ylabel : (sp->kind == OQ_PLOT_HISTOGRAM ? "count" : ""));
    plmtex("l", wy + 1.9, 0.5, 0.5, lab);
    draw_title(sp->title ? sp->title : "", has_sub ? 2.9 : 1.3, 1.25, vx0, vx1, cw);
    if (has_sub) draw_title(sp->subtitle, 1.0, 0.9, vx0, vx1, cw);
    draw_legend(f, 1.2 * cw, 1 - vy1);
}

/* ---- Rendering ---------------------------------------------------------- */

static oq_status check_spec(const oq_plot_spec *sp, const char *path, oq_err *err)
{
    if (!sp->nseries || !sp->series)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: a figure needs at least one series", path);
    if (sp->nseries > MAX_SERIES)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: %zu series, at most %d fit one figure", path,
                          sp->nseries, MAX_SERIES);
    for (size_t i = 0; i < sp->nseries; i++)
        if (sp->series[i].n && (!sp->series[i].x || (sp->kind != OQ_PLOT_HISTOGRAM && !sp->series[i].y)))
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: series %zu has no data arrays", path, i);
    /* PLplot treats "%n" in a file name as a family member number. */
    if (strstr(path, "%n"))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: a plot path may not contain \"%%n\"", path);
    return OQ_OK;
}

/* Draw on a fresh stream into `tmp`; the caller holds plot_lock. */
static oq_status plplot_draw(const figure *f, const char *dev, const char *tmp, oq_err *err)
{
    PLINT prev, strm;
    plgstrm(&prev);
    plmkstrm(&strm);
    if (strm < 0) return oq_err_set(err, OQ_ERR_RUNTIME, "PLplot: no free stream");
    plplot_msg[0] = 0;
    plsabort(on_plabort);
    plsexit(on_plexit);
    /* After an escape from plexit the stream is in an unknown state: it is
     * left alone (not ended) and the render fails. */
    if (setjmp(plplot_escape)) {
        plsexit(NULL);
        return oq_err_set(err, OQ_ERR_RUNTIME, "%s: PLplot: %s", tmp, plplot_msg);
    }
    plsdev(dev);
    plsfnam(tmp);
    int w = f->spec->width > 0 ? f->spec->width : 1100, h = f->spec->height > 0 ? f->spec->height : 700;
    plspage(0, 0, w, h, 0, 0);
    setup_colors();
    plinit();
    draw_figure(f);
    plend1();
    plsstrm(prev);
    plsexit(NULL);
    if (plplot_msg[0]) return oq_err_set(err, OQ_ERR_RUNTIME, "%s: PLplot: %s", tmp, plplot_msg);
    return OQ_OK;
}

static void xml_put(FILE *fp, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", fp); break;
        case '<': fputs("&lt;", fp); break;
        case '>': fputs("&gt;", fp); break;
        default: fputc(*s, fp);
        }
    }
}

/* Cairo draws text in SVG as glyph outlines, so the words are not in the
 * file. A <title> and <desc> right after the <svg> tag put them back, for
 * search, screen readers and tests. */
static oq_status svg_annotate(const figure *f, const char *tmp, oq_err *err)
{
    unsigned char *buf;
    size_t n;
    oq_status st = oq_read_file(tmp, &buf, &n, err);
    if (st) return st;
    char *svg = strstr((char *)buf, "<svg"), *end = svg ? strchr(svg, '>') : NULL;
    FILE *fp = end ? fopen(tmp, "wb") : NULL;
    if (!fp) {
        free(buf);
        return oq_err_set(err, OQ_ERR_RUNTIME, "%s: %s", tmp, end ? strerror(errno) : "no <svg> element");
    }
    const oq_plot_spec *sp = f->spec;
    size_t head = (size_t)(end - (char *)buf) + 1;
    fwrite(buf, 1, head, fp);
    fputs("\n<title>", fp);
    xml_put(fp, sp->title);
    fputs("</title>\n<desc>", fp);
    if (sp->subtitle) {
        xml_put(fp, sp->subtitle);
        fputs(". ", fp);
    }
    fputs("x: ", fp);
    xml_put(fp, sp->xlabel);
    fputs("; y: ", fp);
    xml_put(fp, sp->ylabel ? sp->ylabel : "count");
    fputs("; series: ", fp);
    for (size_t i = 0; i < sp->nseries; i++) {
        fputs(i ? " | " : "", fp);
        xml_put(fp, f->s[i].label);
    }
    fputs("</desc>", fp);
    fwrite(buf + head, 1, n - head, fp);
    free(buf);
    if (ferror(fp) | fclose(fp)) return oq_err_set(err, OQ_ERR_IO, "%s: write failed", tmp);
    return OQ_OK;
}

static oq_status render_locked(const figure *f, oq_plot_format fmt, const char *path, oq_err *err)
{
    const char *dev = oq_plot_format_device(fmt);
    if (!device_present(dev))
        return oq_err_set(err, OQ_ERR_NOT_FOUND, "PLplot driver %s not available: install plplot-driver-cairo", dev);
    size_t n = strlen(path) + sizeof ".tmp.XXXXXX";
    char *tmp = malloc(n);
    if (!tmp) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    snprintf(tmp, n, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp); /* also proves the directory is writable before PLplot tries */
    if (fd < 0) {
        oq_err_set(err, OQ_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
        free(tmp);
        return OQ_ERR_IO;
    }
    fchmod(fd, 0644);
    close(fd);
    oq_status st = plplot_draw(f, dev, tmp, err);
    struct stat sb;
    if (!st && (stat(tmp, &sb) != 0 || sb.st_size == 0))
        st = oq_err_set(err, OQ_ERR_RUNTIME, "%s: PLplot wrote nothing", path);
    if (!st && fmt == OQ_PLOT_SVG) st = svg_annotate(f, tmp, err);
    if (!st && rename(tmp, path) != 0)
        st = oq_err_set(err, OQ_ERR_IO, "%s: cannot rename into place: %s", path, strerror(errno));
    if (st) unlink(tmp);
    free(tmp);
    return st;
}

oq_status oq_plot_render(const oq_plot_spec *spec, oq_plot_format fmt, const char *path, oq_err *err)
{
    if (fmt != OQ_PLOT_PNG && fmt != OQ_PLOT_SVG)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: unknown plot format %d", path, (int)fmt);
    oq_status st = check_spec(spec, path, err);
    if (st) return st;
    figure f;
    memset(&f, 0, sizeof f);
    f.spec = spec;
    f.nbins = spec->nbins ? spec->nbins : 20;
    st = spec->kind == OQ_PLOT_HISTOGRAM ? prepare_histogram(&f, err) : prepare_points(&f, err);
    if (st) {
        oq_err_prefix(err, "%s: ", path);
    } else {
        pthread_mutex_lock(&plot_lock);
        st = render_locked(&f, fmt, path, err);
        pthread_mutex_unlock(&plot_lock);
    }
    figure_clear(&f);
    return st;
}
