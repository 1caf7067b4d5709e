/* Rendering entry points: specs are checked here, laid out by layout.c, and
 * drawn by PLplot's cairo driver on our pixels and written by libpng (PNG, below),
 * or by the SVG writer (svg.c). */
#include "ortqual/plot.h"

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <plplot.h>
#include <png.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/fileio.h"
#include "plot/plot-impl.h"
#include "status/args-impl.h"

#define MAX_SERIES 64

/* Cairo draws on our pixels; libpng writes them. pngcairo's own writer (libpng's default
 * filters and zlib level) took ~3/4 of a figure's time; level 1 without a filter writes the same
 * pixels ~4x faster into files ~1.4x larger (SUB: 1.3x slower and 1.1x larger than none on these
 * flat-coloured figures; docs/results.md, "Start cost"). The driver is extcairo: it draws on a
 * cairo context of ours, over our buffer, where memcairo copies the image into a buffer of its
 * own and back (3.3 MB of fresh memory and two passes per figure; the same pixels either way). */
#define PNG_DEVICE "extcairo"
#define PNG_ZLIB_LEVEL 1
#define PNG_FILTER PNG_FILTER_NONE
#define BYTES_PER_PIXEL 4 /* cairo's RGB24: a 32-bit 0x00RRGGBB word, bytes B, G, R, unused */

/* The few entry points of libcairo used here (cairo.h), looked up in the copy PLplot's cairo
 * driver has loaded: ortqual does not link cairo. */
enum { CAIRO_FORMAT_RGB24 = 1, CAIRO_STATUS_SUCCESS = 0 };
typedef struct cairo_api {
    void *(*surface_for_data)(unsigned char *data, int format, int width, int height, int stride);
    void *(*create)(void *surface);
    int (*status)(void *cr);
    void (*flush)(void *surface);
    void (*destroy)(void *cr);
    void (*surface_destroy)(void *surface);
} cairo_api;

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
    return f == OQ_PLOT_SVG ? "ortqual-svg" : PNG_DEVICE;
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

#define CAIRO_SYM(dl, name) ((void *)(uintptr_t)dlsym(dl, name))

/* libcairo's entry points, once the driver has loaded it; 0 when one is missing. */
static int cairo_api_load(cairo_api *c)
{
    void *dl = dlopen("libcairo.so.2", RTLD_NOW | RTLD_NOLOAD);
    if (!dl) return 0;
    *(void **)&c->surface_for_data = CAIRO_SYM(dl, "cairo_image_surface_create_for_data");
    *(void **)&c->create = CAIRO_SYM(dl, "cairo_create");
    *(void **)&c->status = CAIRO_SYM(dl, "cairo_status");
    *(void **)&c->flush = CAIRO_SYM(dl, "cairo_surface_flush");
    *(void **)&c->destroy = CAIRO_SYM(dl, "cairo_destroy");
    *(void **)&c->surface_destroy = CAIRO_SYM(dl, "cairo_surface_destroy");
    dlclose(dl); /* the driver keeps it loaded */
    return c->surface_for_data && c->create && c->status && c->flush && c->destroy && c->surface_destroy;
}

/* A cairo context over `px` handed to the stream's extcairo device; its surface in *surface. */
static oq_status cairo_attach(const cairo_api *c, unsigned char *px, int W, int H, void **surface, void **cr,
                              const char *path, oq_err *err)
{
    *surface = c->surface_for_data(px, CAIRO_FORMAT_RGB24, W, H, W * BYTES_PER_PIXEL);
    *cr = c->create(*surface);
    if (c->status(*cr) != CAIRO_STATUS_SUCCESS)
        return oq_err_set(err, OQ_ERR_RUNTIME, "%s: cairo: cannot draw on a %d x %d image", path, W, H);
    pl_cmd(PLESC_DEVINIT, *cr);
    return OQ_OK;
}

static void cairo_detach(const cairo_api *c, void *surface, void *cr)
{
    if (cr) c->destroy(cr);
    if (!surface) return;
    c->flush(surface);
    c->surface_destroy(surface);
}

/* Draw on a fresh stream onto `px` (W x H, RGB24, white when called); the caller holds plot_lock.
 * `path` names the figure in errors. */
static oq_status plplot_draw(const oq_plot_spec *spec, int W, int H, unsigned char *px, const char *path,
                             oq_err *err)
{
    PLINT prev, strm;
    cairo_api cairo;
    void *volatile surface = NULL, *volatile cr = NULL;
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
        if (surface) cairo_detach(&cairo, surface, cr);
        return oq_err_set(err, OQ_ERR_RUNTIME, "%s: PLplot: %s", path, plplot_msg);
    }
    plsdev(PNG_DEVICE);
    plspage(0, 0, W, H, 0, 0);
    plscmap0n(4);
    plscol0(0, 255, 255, 255);
    plinit();
    void *s = NULL, *c = NULL;
    oq_status st = cairo_api_load(&cairo) ? cairo_attach(&cairo, px, W, H, &s, &c, path, err)
                                          : oq_err_set(err, OQ_ERR_RUNTIME, "%s: PLplot's cairo driver loaded no "
                                                       "usable libcairo.so.2", path);
    surface = s, cr = c;
    if (st) {
        plend1();
        plsstrm(prev);
        plsexit(NULL);
        if (s) cairo_detach(&cairo, s, c);
        return st;
    }
    pladv(0);
    plvpor(0, 1, 0, 1);
    plwind(0, W, 0, H);
    PLFLT xmin, xmax, ymin, ymax;
    plgspa(&xmin, &xmax, &ymin, &ymax);
    pl_canvas pc = {{pl_line, pl_fill, pl_text, pl_nop_group, pl_nop, pl_nop, pl_nop, 0}, H, (xmax - xmin) / W};
    st = oq_plot_draw(spec, W, H, &pc.base, err);
    plend1();
    plsstrm(prev);
    plsexit(NULL);
    cairo_detach(&cairo, s, c);
    if (!st && plplot_msg[0]) st = oq_err_set(err, OQ_ERR_RUNTIME, "%s: PLplot: %s", path, plplot_msg);
    return st;
}

/* libpng reports through longjmp; its message is kept for ours. */
static void png_on_error(png_structp png, png_const_charp msg)
{
    snprintf(png_get_error_ptr(png), sizeof plplot_msg, "%s", msg);
    png_longjmp(png, 1);
}

static void png_on_warning(png_structp png, png_const_charp msg) { (void)png, (void)msg; }

/* The RGB24 image as an RGB PNG into `f`. */
static oq_status png_write(FILE *f, const unsigned char *px, int W, int H, const char *path, oq_err *err)
{
    char msg[sizeof plplot_msg] = "out of memory";
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, msg, png_on_error, png_on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return oq_err_set(err, OQ_ERR_OUTPUT, "%s: cannot write the PNG: %s", path, msg);
    }
    png_init_io(png, f);
    png_set_compression_level(png, PNG_ZLIB_LEVEL);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER);
    png_set_IHDR(png, info, (png_uint_32)W, (png_uint_32)H, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    png_set_bgr(png);                        /* bytes B, G, R ... */
    png_set_filler(png, 0, PNG_FILLER_AFTER); /* ... and the unused one dropped */
    for (int y = 0; y < H; y++) png_write_row(png, px + (size_t)y * (size_t)W * BYTES_PER_PIXEL);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return OQ_OK;
}

/* Draws the spec into a PNG file (temp file renamed into place); the caller holds plot_lock. */
static oq_status plplot_png(const oq_plot_spec *spec, int width, int height, const char *path, oq_err *err)
{
    if (!device_present(PNG_DEVICE))
        return oq_err_set(err, OQ_ERR_NOT_FOUND, "PLplot driver " PNG_DEVICE " not available: install plplot-driver-cairo");
    size_t bytes = (size_t)width * (size_t)height * BYTES_PER_PIXEL;
    unsigned char *px = malloc(bytes);
    if (!px) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_atomic_file af;
    oq_status st = oq_atomic_open(&af, path, 1, err); /* also proves the folder writable before drawing */
    memset(px, 255, bytes); /* the white background */
    if (!st) st = plplot_draw(spec, width, height, px, path, err);
    if (!st) st = png_write(af.fp, px, width, height, path, err);
    if (!st) st = oq_atomic_commit(&af, err);
    else oq_atomic_abort(&af);
    free(px);
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
    OQ_NEED(err, spec);
    OQ_NEED(err, svg);
    OQ_NEED(err, n);
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
    OQ_NEED(err, spec);
    OQ_NEED(err, path);
    if (fmt != OQ_PLOT_PNG && fmt != OQ_PLOT_SVG)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: unknown plot format %d", path, (int)fmt);
    oq_status st = check_spec(spec, path, err);
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
