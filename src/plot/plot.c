/* Rendering entry points: specs are checked here, laid out by layout.c, and
 * drawn by PLplot's cairo driver (PNG, below) or the SVG writer (svg.c). */
#include "ortqual/plot.h"

#include <errno.h>
#include <math.h>
#include <plplot.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ortqual/fileio.h"
#include "plot/plot-impl.h"

#define MAX_SERIES 64

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
    return f == OQ_PLOT_SVG ? "ortqual-svg" : "pngcairo";
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
    if (f == OQ_PLOT_SVG) return OQ_OK;
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

/* ---- PLplot canvas -------------------------------------------------------- */

/* Pixel coordinates map onto a world of W x H with y flipped (PLplot's y goes up). */
typedef struct pl_canvas {
    oq_canvas base;
    double H;
    double mm_per_px;
} pl_canvas;

enum { PL_COL_DRAW = 1, PL_COL_FILL = 2 };

static void pl_color(int idx, oq_rgb c, double alpha)
{
    plscol0a(idx, c.r, c.g, c.b, alpha);
    plcol0(idx);
}

/* Dashes in micrometres on the page, from pixel lengths. */
static void pl_dash(const pl_canvas *p, int dash)
{
    PLINT mark, space;
    if (dash == OQ_DASH_SOLID) {
        plstyl(0, &mark, &space);
        return;
    }
    double um = p->mm_per_px * 1000;
    mark = (PLINT)((dash == OQ_DASH_DASHED ? 7 : 2) * um);
    space = (PLINT)((dash == OQ_DASH_DASHED ? 4 : 3) * um);
    plstyl(1, &mark, &space);
}

/* y in PLplot's world (up), malloc'ed; NULL with the canvas failed when out of memory. */
static double *pl_flip(pl_canvas *p, const double *y, size_t n)
{
    double *yy = malloc((n ? n : 1) * sizeof *yy);
    if (!yy) p->base.failed = 1;
    for (size_t i = 0; yy && i < n; i++) yy[i] = p->H - y[i];
    return yy;
}

static void pl_line(oq_canvas *c, const double *x, const double *y, size_t n, oq_rgb col, double width, int dash)
{
    pl_canvas *p = (pl_canvas *)c;
    double *yy = pl_flip(p, y, n);
    if (!yy) return;
    pl_color(PL_COL_DRAW, col, 1.0);
    plwidth(width);
    pl_dash(p, dash);
    plline((PLINT)n, x, yy);
    pl_dash(p, OQ_DASH_SOLID);
    free(yy);
}

static void pl_fill(oq_canvas *c, const double *x, const double *y, size_t n, oq_rgb col, double alpha)
{
    pl_canvas *p = (pl_canvas *)c;
    double *yy = pl_flip(p, y, n);
    if (!yy) return;
    pl_color(PL_COL_FILL, col, alpha);
    plfill((PLINT)n, x, yy);
    free(yy);
}

/* PLplot reads '#' as an escape: user text gets it doubled; markup "^{..}" becomes #u..#d. */
static void pl_text_escape(char *dst, size_t n, const char *src, int markup)
{
    size_t k = 0;
    int sup = 0;
    for (; src && *src && k + 3 < n; src++) {
        if (markup && src[0] == '^' && src[1] == '{') {
            dst[k++] = '#', dst[k++] = 'u';
            src++;
            sup = 1;
        } else if (markup && sup && *src == '}') {
            dst[k++] = '#', dst[k++] = 'd';
            sup = 0;
        } else {
            if (*src == '#') dst[k++] = '#';
            dst[k++] = *src;
        }
    }
    dst[k] = 0;
}

/* PLplot's character height is about 0.7 of the font size (the SVG's em). */
#define PL_CHAR_SCALE 0.76

static void pl_text(oq_canvas *c, double x, double y, const char *s, double size, int anchor, int flags, oq_rgb col)
{
    pl_canvas *p = (pl_canvas *)c;
    char text[1024];
    pl_text_escape(text, sizeof text, s, flags & OQ_TEXT_MARKUP);
    pl_color(PL_COL_DRAW, col, 1.0);
    plschr(size * PL_CHAR_SCALE * p->mm_per_px, 1.0);
    plsfont(PL_FCI_SANS, PL_FCI_UPRIGHT, flags & OQ_TEXT_BOLD ? PL_FCI_BOLD : PL_FCI_MEDIUM);
    double just = anchor == OQ_ANCHOR_START ? 0 : anchor == OQ_ANCHOR_MIDDLE ? 0.5 : 1;
    if (flags & OQ_TEXT_VERTICAL)
        plptex(x, p->H - y, 0, 1, just, text);
    else
        plptex(x, p->H - y, 1, 0, just, text);
    plsfont(PL_FCI_SANS, PL_FCI_UPRIGHT, PL_FCI_MEDIUM);
}

static void pl_nop_group(oq_canvas *c, const char *cls, const char *label, long n)
{
    (void)c, (void)cls, (void)label, (void)n;
}
static void pl_nop(oq_canvas *c) { (void)c; }

/* Draw on a fresh stream into `tmp`; the caller holds plot_lock. */
static oq_status plplot_draw(const oq_plot_spec *spec, int W, int H, const char *tmp, oq_err *err)
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
    plsdev("pngcairo");
    plsfnam(tmp);
    plspage(0, 0, W, H, 0, 0);
    plscmap0n(4);
    plscol0(0, 255, 255, 255);
    plinit();
    pladv(0);
    plvpor(0, 1, 0, 1);
    plwind(0, W, 0, H);
    PLFLT xmin, xmax, ymin, ymax;
    plgspa(&xmin, &xmax, &ymin, &ymax);
    pl_canvas pc = {{pl_line, pl_fill, pl_text, pl_nop_group, pl_nop, pl_nop, pl_nop, 0}, H, (xmax - xmin) / W};
    oq_status st = oq_plot_draw(spec, W, H, &pc.base, err);
    plend1();
    plsstrm(prev);
    plsexit(NULL);
    if (!st && plplot_msg[0]) st = oq_err_set(err, OQ_ERR_RUNTIME, "%s: PLplot: %s", tmp, plplot_msg);
    return st;
}

/* Draws the spec into a PNG file; the caller holds plot_lock. */
static oq_status plplot_png(const oq_plot_spec *spec, int width, int height, const char *path, oq_err *err)
{
    if (!device_present("pngcairo"))
        return oq_err_set(err, OQ_ERR_NOT_FOUND, "PLplot driver pngcairo not available: install plplot-driver-cairo");
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
    oq_status st = plplot_draw(spec, width, height, tmp, err);
    struct stat sb;
    if (!st && (stat(tmp, &sb) != 0 || sb.st_size == 0))
        st = oq_err_set(err, OQ_ERR_RUNTIME, "%s: PLplot wrote nothing", path);
    if (!st && rename(tmp, path) != 0)
        st = oq_err_set(err, OQ_ERR_IO, "%s: cannot rename into place: %s", path, strerror(errno));
    if (st) unlink(tmp);
    free(tmp);
    return st;
}

/* ---- Entry points ------------------------------------------------------------ */

static oq_status check_spec(const oq_plot_spec *sp, const char *what, oq_err *err)
{
    if (!sp->nseries || !sp->series)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: a figure needs at least one series", what);
    if (sp->nseries > MAX_SERIES)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: %zu series, at most %d fit one figure", what,
                          sp->nseries, MAX_SERIES);
    if (sp->kind == OQ_PLOT_HBARS && (!sp->ncategories || !sp->categories))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: a bar figure needs categories", what);
    for (size_t i = 0; i < sp->nseries; i++) {
        const oq_plot_series *s = &sp->series[i];
        int need_x = sp->kind != OQ_PLOT_HBARS, need_y = sp->kind != OQ_PLOT_HISTOGRAM;
        if (sp->kind == OQ_PLOT_HBARS && s->n != sp->ncategories)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: series %zu has %zu values for %zu categories", what, i,
                              s->n, sp->ncategories);
        if (s->n && ((need_x && !s->x) || (need_y && !s->y)))
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: series %zu has no data arrays", what, i);
        if (sp->npanels && (s->panel < 1 || (size_t)s->panel > sp->npanels))
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: series %zu: panel %d outside 1..%zu", what, i, s->panel,
                              sp->npanels);
    }
    return OQ_OK;
}

oq_status oq_plot_svg(const oq_plot_spec *spec, char **svg, size_t *n, oq_err *err)
{
    *svg = NULL;
    *n = 0;
    oq_status st = check_spec(spec, spec->title ? spec->title : "figure", err);
    if (st) return st;
    int W, H;
    oq_plot_size(spec, &W, &H);
    oq_svg *s = oq_svg_create(W, H, spec);
    if (!s) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    st = oq_plot_draw(spec, W, H, oq_svg_canvas(s), err);
    if (!st && !(*svg = oq_svg_finish(s, n))) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_svg_free(s);
    return st;
}

oq_status oq_plot_render(const oq_plot_spec *spec, oq_plot_format fmt, const char *path, oq_err *err)
{
    if (fmt != OQ_PLOT_PNG && fmt != OQ_PLOT_SVG)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: unknown plot format %d", path, (int)fmt);
    oq_status st = check_spec(spec, path, err);
    /* PLplot treats "%n" in a file name as a family member number. */
    if (!st && strstr(path, "%n"))
        st = oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: a plot path may not contain \"%%n\"", path);
    if (st) return st;
    if (fmt == OQ_PLOT_SVG) {
        char *svg;
        size_t n;
        st = oq_plot_svg(spec, &svg, &n, err);
        if (!st) st = oq_write_file_atomic(path, svg, n, 1, err);
        else oq_err_prefix(err, "%s: ", path);
        free(svg);
        return st;
    }
    int W, H;
    oq_plot_size(spec, &W, &H);
    pthread_mutex_lock(&plot_lock);
    st = plplot_png(spec, W, H, path, err);
    pthread_mutex_unlock(&plot_lock);
    if (st == OQ_ERR_INVALID_ARG) oq_err_prefix(err, "%s: ", path);
    return st;
}
