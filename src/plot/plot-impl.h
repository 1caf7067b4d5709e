/* Internal to src/plot: figures are laid out once, in pixels, and drawn
 * through a canvas: PLplot's cairo driver for PNG, ortqual's own writer for
 * SVG (text stays text, series carry their data as attributes). Both see the
 * same primitives, so the two files of a figure show the same thing. */
#ifndef ORTQUAL_PLOT_IMPL_H
#define ORTQUAL_PLOT_IMPL_H

#include <stddef.h>

#include "core/core-impl.h"
#include "ortqual/plot.h"

typedef struct oq_rgb {
    unsigned char r, g, b;
} oq_rgb;

enum { OQ_DASH_SOLID, OQ_DASH_DASHED, OQ_DASH_DOTTED };
enum { OQ_ANCHOR_START, OQ_ANCHOR_MIDDLE, OQ_ANCHOR_END };
enum { OQ_MARK_CIRCLE, OQ_MARK_SQUARE, OQ_MARK_UP, OQ_MARK_DIAMOND, OQ_MARK_DOWN, OQ_MARK_STAR, OQ_NMARKS };

/* Text flags. OQ_TEXT_MARKUP: "^{..}" is a superscript (tick labels only; user text is never
 * read as markup). */
enum { OQ_TEXT_BOLD = 1, OQ_TEXT_VERTICAL = 2, OQ_TEXT_MARKUP = 4 };

/* Pixel coordinates, origin top left, y down. Text is placed by its vertical middle. */
typedef struct oq_canvas oq_canvas;
struct oq_canvas {
    void (*line)(oq_canvas *c, const double *x, const double *y, size_t n, oq_rgb col, double width,
                 int dash);
    void (*fill)(oq_canvas *c, const double *x, const double *y, size_t n, oq_rgb col, double alpha);
    void (*text)(oq_canvas *c, double x, double y, const char *s, double size, int anchor, int flags,
                 oq_rgb col);
    /* Start and end of what belongs to one series (SVG: a <g> with its label and the number
     * of points drawn); `cls` names the role ("series", "legend", "panel"). */
    void (*group_begin)(oq_canvas *c, const char *cls, const char *label, long npoints);
    void (*group_end)(oq_canvas *c);
    /* One data point (SVG: class "pt"); drawn with fill/line otherwise. */
    void (*point_begin)(oq_canvas *c);
    void (*point_end)(oq_canvas *c);
    int failed; /* set by the first failure to draw (out of memory) */
};

/* Width of `s` in pixels at font size `size` (DejaVu Sans metrics, approximately). */
double oq_text_width(const char *s, double size, int flags);

/* Lay out and draw a checked spec (see oq_plot_render) of width x height pixels. */
oq_status oq_plot_draw(const oq_plot_spec *spec, int width, int height, oq_canvas *c, oq_err *err);

/* The figure's size: its own, else 1100 x 700 (faceted: taller per panel). */
void oq_plot_size(const oq_plot_spec *spec, int *width, int *height);

/* Text and attribute values of XML (SVG, HTML, JUnit): the five specials escaped, control
 * characters (not allowed in XML 1.0) dropped, each byte that is not UTF-8 and U+FFFE/U+FFFF
 * written as U+FFFD. NULL adds nothing. OQ_ERR_NOMEM. */
oq_status oq_xml_add(oq_dynbuf *b, const char *s);

/* SVG canvas writing into memory. */
typedef struct oq_svg oq_svg;
oq_svg *oq_svg_create(int width, int height, const oq_plot_spec *spec);
oq_canvas *oq_svg_canvas(oq_svg *s);
/* Finish the document; *out is malloc'd (caller frees), NULL on out of memory. */
char *oq_svg_finish(oq_svg *s, size_t *n);
void oq_svg_free(oq_svg *s);

#endif
