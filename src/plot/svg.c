/* ortqual's SVG writer: the canvas of plot-impl.h as an SVG document in memory.
 * Text is <text> (not glyph outlines), everything from the caller is escaped,
 * and there are no scripts or external references, so the document can be
 * inlined into an HTML page. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "plot/plot-impl.h"

struct oq_svg {
    oq_canvas base; /* first: the canvas pointer is the writer's */
    oq_dynbuf doc;
};

static void put(oq_svg *s, const char *text, size_t n)
{
    if (!s->base.failed && oq_dynbuf_addn(&s->doc, text, n)) s->base.failed = 1;
}

static void puts_(oq_svg *s, const char *text) { put(s, text, strlen(text)); }

static void printf_(oq_svg *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void printf_(oq_svg *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!s->base.failed && oq_dynbuf_vaddf(&s->doc, fmt, ap)) s->base.failed = 1;
    va_end(ap);
}

/* One ASCII character as XML text: C0 controls but tab and newline are dropped (no XML 1.0
 * document may hold them, not even as references). */
static oq_status xml_ascii(oq_dynbuf *b, const char *p)
{
    switch (*p) {
    case '&': return oq_dynbuf_add(b, "&amp;");
    case '<': return oq_dynbuf_add(b, "&lt;");
    case '>': return oq_dynbuf_add(b, "&gt;");
    case '"': return oq_dynbuf_add(b, "&quot;");
    case '\'': return oq_dynbuf_add(b, "&#39;");
    default: return *p >= 0x20 || *p == '\t' || *p == '\n' ? oq_dynbuf_addn(b, p, 1) : OQ_OK;
    }
}

/* U+FFFE and U+FFFF: valid UTF-8, yet no XML character. */
static int xml_nonchar(const unsigned char *p, size_t k)
{
    return k == 3 && p[0] == 0xEF && p[1] == 0xBF && p[2] >= 0xBE;
}

/* Text from outside need not be UTF-8: a byte that starts no valid sequence becomes U+FFFD, as
 * does a non-character, so the document stays well-formed and nothing is dropped unseen. */
oq_status oq_xml_add(oq_dynbuf *b, const char *t)
{
    size_t n = t ? strlen(t) : 0;
    oq_status st = OQ_OK;
    for (size_t i = 0, k; !st && i < n; i += k) {
        const unsigned char *p = (const unsigned char *)t + i;
        k = oq_utf8_len(p, n - i);
        if (k == 1) {
            st = xml_ascii(b, t + i);
        } else if (k && !xml_nonchar(p, k)) {
            st = oq_dynbuf_addn(b, t + i, k);
        } else {
            st = oq_dynbuf_add(b, OQ_UTF8_REPLACEMENT);
            k = k ? k : 1; /* one U+FFFD per stray byte */
        }
    }
    return st;
}

static void esc(oq_svg *s, const char *t)
{
    if (!s->base.failed && oq_xml_add(&s->doc, t)) s->base.failed = 1;
}

static void color(oq_svg *s, const char *attr, oq_rgb c) { printf_(s, " %s=\"#%02x%02x%02x\"", attr, c.r, c.g, c.b); }

static void points(oq_svg *s, const double *x, const double *y, size_t n)
{
    puts_(s, " points=\"");
    for (size_t i = 0; i < n; i++) printf_(s, "%s%.1f,%.1f", i ? " " : "", x[i], y[i]);
    puts_(s, "\"");
}

static const char *dash_array(int dash)
{
    return dash == OQ_DASH_DASHED ? " stroke-dasharray=\"7 4\"" : dash == OQ_DASH_DOTTED ? " stroke-dasharray=\"2 3\"" : "";
}

static void svg_line(oq_canvas *c, const double *x, const double *y, size_t n, oq_rgb col, double width, int dash)
{
    oq_svg *s = (oq_svg *)c;
    puts_(s, "<polyline");
    points(s, x, y, n);
    puts_(s, " fill=\"none\"");
    color(s, "stroke", col);
    printf_(s, " stroke-width=\"%.2g\"%s/>\n", width, dash_array(dash));
}

static void svg_fill(oq_canvas *c, const double *x, const double *y, size_t n, oq_rgb col, double alpha)
{
    oq_svg *s = (oq_svg *)c;
    puts_(s, "<polygon");
    points(s, x, y, n);
    color(s, "fill", col);
    if (alpha < 1) printf_(s, " fill-opacity=\"%.2f\"", alpha);
    puts_(s, "/>\n");
}

/* "^{..}" in markup text becomes a raised, smaller <tspan>. */
static void text_body(oq_svg *s, const char *t, int markup)
{
    if (!markup) {
        esc(s, t);
        return;
    }
    char part[256];
    while (*t) {
        const char *sup = strstr(t, "^{"), *end = sup ? strchr(sup, '}') : NULL;
        if (!sup || !end) {
            esc(s, t);
            return;
        }
        snprintf(part, sizeof part, "%.*s", (int)(sup - t), t);
        esc(s, part);
        snprintf(part, sizeof part, "%.*s", (int)(end - sup - 2), sup + 2);
        puts_(s, "<tspan baseline-shift=\"super\" font-size=\"75%\">");
        esc(s, part);
        puts_(s, "</tspan>");
        t = end + 1;
    }
}

static void svg_text(oq_canvas *c, double x, double y, const char *t, double size, int anchor, int flags, oq_rgb col)
{
    oq_svg *s = (oq_svg *)c;
    static const char *const anchors[] = {"start", "middle", "end"};
    printf_(s, "<text x=\"%.1f\" y=\"%.1f\" dy=\"0.35em\" font-size=\"%.0f\" text-anchor=\"%s\"", x, y, size,
            anchors[anchor]);
    if (flags & OQ_TEXT_BOLD) puts_(s, " font-weight=\"bold\"");
    if (flags & OQ_TEXT_VERTICAL) printf_(s, " transform=\"rotate(-90 %.1f %.1f)\"", x, y);
    if (col.r || col.g || col.b) color(s, "fill", col);
    puts_(s, ">");
    text_body(s, t, flags & OQ_TEXT_MARKUP);
    puts_(s, "</text>\n");
}

static void svg_group_begin(oq_canvas *c, const char *cls, const char *label, long npoints)
{
    oq_svg *s = (oq_svg *)c;
    printf_(s, "<g class=\"%s\" data-label=\"", cls);
    esc(s, label);
    puts_(s, "\"");
    if (npoints >= 0) printf_(s, " data-points=\"%ld\"", npoints);
    puts_(s, ">\n");
}

static void svg_group_end(oq_canvas *c) { puts_((oq_svg *)c, "</g>\n"); }
static void svg_point_begin(oq_canvas *c) { puts_((oq_svg *)c, "<g class=\"pt\">"); }
static void svg_point_end(oq_canvas *c) { puts_((oq_svg *)c, "</g>\n"); }

/* <title> and <desc> name what the figure shows, for search and screen readers. */
static void describe(oq_svg *s, const oq_plot_spec *sp)
{
    puts_(s, "<title>");
    esc(s, sp->title);
    puts_(s, "</title>\n<desc>");
    if (sp->subtitle) {
        esc(s, sp->subtitle);
        puts_(s, ". ");
    }
    puts_(s, "x: ");
    esc(s, sp->xlabel);
    puts_(s, "; y: ");
    esc(s, sp->ylabel ? sp->ylabel : sp->kind == OQ_PLOT_HBARS ? "" : "count");
    puts_(s, "; series: ");
    for (size_t i = 0; i < sp->nseries; i++) {
        puts_(s, i ? " | " : "");
        esc(s, sp->series[i].label);
    }
    puts_(s, "</desc>\n");
}

oq_svg *oq_svg_create(int width, int height, const oq_plot_spec *spec)
{
    oq_svg *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->base = (oq_canvas){svg_line, svg_fill, svg_text, svg_group_begin, svg_group_end, svg_point_begin,
                          svg_point_end, 0};
    printf_(s,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"oq-figure\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Verdana, Arial, sans-serif\" role=\"img\">\n",
            width, height, width, height);
    describe(s, spec);
    return s;
}

oq_canvas *oq_svg_canvas(oq_svg *s) { return &s->base; }

char *oq_svg_finish(oq_svg *s, size_t *n)
{
    puts_(s, "</svg>\n");
    return s->base.failed ? NULL : oq_dynbuf_take(&s->doc, n);
}

void oq_svg_free(oq_svg *s)
{
    if (!s) return;
    oq_dynbuf_clear(&s->doc);
    free(s);
}
