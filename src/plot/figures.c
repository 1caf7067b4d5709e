/* Figure sets of summaries (see plot.h): built in memory, then written. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csv/csv-impl.h"
#include "fileio/fileio-impl.h"
#include "ortqual/fileio.h"
#include "ortqual/plot.h"
#include "ortqual/proc.h"
#include "plot/figures-impl.h"
#include "status/args-impl.h"

const oq_plot_format oq_figure_fmts[2] = {OQ_PLOT_PNG, OQ_PLOT_SVG};

/* ---- Small helpers ---------------------------------------------------------- */

int oq_strset_index(const oq_strset *s, const char *x)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], x)) return (int)i;
    return -1;
}

int oq_strset_add(oq_strset *s, const char *x)
{
    if (oq_strset_index(s, x) >= 0) return 0;
    const char **slot = OQ_PUSH(s->v, s->n);
    if (!slot) return -1;
    *slot = x;
    return 0;
}

char *oq_file_safe(oq_arena *a, const char *s)
{
    char *r = oq_arena_strdup(a, s);
    if (!r) return NULL;
    for (char *p = r; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
              *p == '_' || *p == '.'))
            *p = '_';
    return r;
}

/* The renderer's own test: is there one point, bar or band it can draw? */
static int spec_drawable(const oq_plot_spec *sp)
{
    for (size_t i = 0; i < sp->nseries; i++) {
        const oq_plot_series *s = &sp->series[i];
        if (s->has_band && isfinite(s->band_lo) && (!sp->logx || s->band_lo > 0)) return 1;
        for (size_t k = 0; k < s->n; k++) {
            if (sp->kind == OQ_PLOT_HBARS || sp->kind == OQ_PLOT_BINNED) {
                if (isfinite(s->y[k]) && s->y[k] > 0) return 1;
                continue;
            }
            double x = s->x[k], y = sp->kind == OQ_PLOT_HISTOGRAM ? 1 : s->y[k];
            if (isfinite(x) && isfinite(y) && (!sp->logx || x > 0) && (!sp->logy || y > 0)) return 1;
        }
    }
    return 0;
}

static int name_taken(const oq_figures *fl, const char *name)
{
    for (size_t i = 0; i < fl->n; i++)
        if (!strcmp(fl->items[i].name, name)) return 1;
    return 0;
}

oq_status oq_figures_add(oq_figures *fl, oq_figure_kind kind, const char *output, const char *name,
                         const oq_plot_spec *spec, oq_err *err)
{
    if (!name) return OQ_NOMEM(err);
    if (!spec_drawable(spec)) return OQ_OK;
    /* two outputs whose names differ only where a file name cannot ("a b", "a_b"), or an output
     * named "vs_ref_y" beside "y", would draw into one file: the later figure gets _2, _3, ... */
    const char *base = name;
    for (int k = 2; name_taken(fl, name); k++)
        if (!(name = oq_arena_printf(&fl->mem, "%s_%d", base, k))) return OQ_NOMEM(err);
    struct oq_named_figure *f = OQ_PUSH(fl->items, fl->n);
    if (!f) return OQ_NOMEM(err);
    f->name = name;
    f->kind = kind;
    f->output = output;
    f->spec = *spec;
    return OQ_OK;
}

/* ---- Sets ---------------------------------------------------------------- */

size_t oq_figures_count(const oq_figures *f) { return f ? f->n : 0; }
const char *oq_figures_name(const oq_figures *f, size_t i) { return f && i < f->n ? f->items[i].name : NULL; }
const oq_plot_spec *oq_figures_spec(const oq_figures *f, size_t i)
{
    return f && i < f->n ? &f->items[i].spec : NULL;
}

oq_figure_kind oq_figures_kind(const oq_figures *f, size_t i) { return f && i < f->n ? f->items[i].kind : OQ_FIGURE_UNKNOWN; }
const char *oq_figures_output(const oq_figures *f, size_t i) { return f && i < f->n ? f->items[i].output : NULL; }

void oq_figures_free(oq_figures *f)
{
    if (!f) return;
    oq_arena_clear(&f->mem);
    free(f->items);
    free(f);
}

static const char *stat_column(const oq_plot_options *opt) { return opt && opt->stat ? opt->stat : "p50_ms"; }

static oq_status check_stat(const char *stat, oq_err *err)
{
    static const char *const stats[] = {"mean_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms"};
    for (size_t i = 0; i < sizeof stats / sizeof *stats; i++)
        if (!strcmp(stat, stats[i])) return OQ_OK;
    return oq_err_set(err, OQ_ERR_INVALID_ARG,
                      "unknown time statistic '%s' (mean_ms, p50_ms, p90_ms, p95_ms, p99_ms, p999_ms, max_ms)", stat);
}

/* A set of no figure from rows that were measured is an error: their values had nothing to
 * draw. Inputs with no measured row are an empty set (oq_figures_no_ok_rows). */
static oq_status finish(oq_figures *fl, oq_status st, const char *name, oq_figures **out, oq_err *err)
{
    if (!st && !fl->n && !fl->no_ok_rows) st = oq_err_set(err, OQ_ERR_FORMAT, "%s: nothing drawable (every value empty or not positive)", name);
    if (st) {
        oq_figures_free(fl);
        return st;
    }
    *out = fl;
    return OQ_OK;
}

oq_status oq_figures_from_tables(oq_csv *const *tables, size_t nt, const oq_plot_options *opt, oq_figures **out,
                                 oq_err *err)
{
    OQ_NEED_N(err, nt, tables);
    OQ_NEED(err, out);
    *out = NULL;
    if (!nt) return oq_err_set(err, OQ_ERR_INVALID_ARG, "no summary to plot");
    oq_status st = check_stat(stat_column(opt), err);
    for (size_t i = 0; !st && i < nt; i++) {
        oq_summary_kind k = oq_summary_detect(tables[i]);
        if (k == OQ_SUMMARY_VALIDATE)
            st = oq_err_set(err, OQ_ERR_FORMAT,
                            "%s: validate figures are drawn from summary.json, which holds the error "
                            "distributions (ortqual plot DIR/summary.json)", oq_csv_name(tables[i]));
        else if (k != OQ_SUMMARY_BENCH)
            st = oq_err_set(err, OQ_ERR_FORMAT, "%s: not a bench summary (columns variant, status, seq_len)",
                            oq_csv_name(tables[i]));
    }
    if (st) return st;
    oq_figures *fl = calloc(1, sizeof *fl);
    if (!fl) return OQ_NOMEM(err);
    st = oq_figures_bench(fl, tables, nt, opt, stat_column(opt), err);
    return finish(fl, st, oq_csv_name(tables[0]), out, err);
}

oq_status oq_figures_from_summary_json(const json_t *summary, const char *name, const oq_plot_options *opt,
                                       oq_figures **out, oq_err *err)
{
    *out = NULL;
    const char *schema = json_string_value(json_object_get(summary, "schema"));
    if (schema && !strncmp(schema, "ortqual.validate/", 17)) {
        oq_figures *fl = calloc(1, sizeof *fl);
        if (!fl) return OQ_NOMEM(err);
        oq_status st = oq_figures_validate(fl, summary, name, err);
        if (st) {
            oq_figures_free(fl);
            return st;
        }
        /* a run in which nothing was compared or timed (ONNX Runtime refused the model, only the
         * reference ran) has no figure: an empty set, not an error */
        *out = fl;
        return OQ_OK;
    }
    if (!json_is_array(json_object_get(summary, "results")))
        return oq_err_set(err, OQ_ERR_FORMAT,
                          "%s: not a summary with figures (a validate summary.json with \"schema\", or a bench "
                          "one with \"results\")", name);
    oq_csv *t = NULL;
    oq_status st = oq_csv_from_json(summary, name, &t, err);
    if (!st) st = oq_figures_from_tables(&t, 1, opt, out, err);
    oq_csv_free(t);
    return st;
}

oq_status oq_figures_from_summary(const char *json, size_t n, const char *name, const oq_plot_options *opt,
                                  oq_figures **out, oq_err *err)
{
    OQ_NEED_N(err, n, json);
    OQ_NEED(err, name);
    OQ_NEED(err, out);
    *out = NULL;
    json_t *doc = oq_json_parse(json, n, name, err);
    if (!doc) return OQ_ERR_FORMAT;
    oq_status st = oq_figures_from_summary_json(doc, name, opt, out, err);
    json_decref(doc);
    return st;
}

/* ---- Writing --------------------------------------------------------------- */

void oq_plot_files_clear(oq_plot_files *f)
{
    if (!f) return;
    for (size_t i = 0; i < f->n; i++) free(f->paths[i]);
    free(f->paths);
    free(f->kinds);
    f->paths = NULL;
    f->kinds = NULL;
    f->n = 0;
}

char *oq_figure_path(const char *outdir, const char *name, oq_plot_format fmt)
{
    /* "dir/" and "dir" name the same files: the printed paths get one slash */
    int dirlen = (int)strlen(outdir);
    while (dirlen > 0 && outdir[dirlen - 1] == '/') dirlen--;
    char *path = NULL;
    return asprintf(&path, "%.*s/%s.%s", dirlen, outdir, name, oq_plot_format_ext(fmt)) < 0 ? NULL : path;
}

unsigned oq_figure_formats(const oq_plot_options *opt)
{
    return opt->formats ? opt->formats : OQ_PLOT_PNG | OQ_PLOT_SVG;
}

/* The set's files (and outdir when the set makes it) held (hold 1) where a signal that ends the
 * process removes them, or let go once the set is whole (hold 0): drawn in this process (no
 * isolation: validate --no-isolate, a process with threads), a Ctrl-C between two figures left
 * the first ones without the others, and without the summary that names them. */
static oq_status hold_set(const oq_figures *f, const oq_plot_options *opt, int hold, int dir_made, oq_err *err)
{
    unsigned formats = oq_figure_formats(opt);
    if (dir_made && hold) oq_atomic_hold_output(opt->outdir, 1);
    if (dir_made && !hold) oq_output_release(opt->outdir);
    for (size_t i = 0; i < f->n; i++)
        for (size_t k = 0; k < 2; k++) {
            if (!(formats & oq_figure_fmts[k])) continue;
            char *path = oq_figure_path(opt->outdir, f->items[i].name, oq_figure_fmts[k]);
            if (!path) return OQ_NOMEM(err);
            if (hold) oq_atomic_hold_output(path, 0);
            else oq_output_release(path);
            free(path);
        }
    return OQ_OK;
}

oq_status oq_figures_write_here(const oq_figures *f, const oq_plot_options *opt, oq_plot_files *written, oq_err *err)
{
    unsigned formats = oq_figure_formats(opt);
    oq_status st = OQ_OK;
    for (size_t k = 0; !st && k < 2; k++)
        if (formats & oq_figure_fmts[k]) st = oq_plot_check_driver(oq_figure_fmts[k], err);
    struct stat d;
    const int dir_made = stat(opt->outdir, &d) != 0;
    if (!st) st = hold_set(f, opt, 1, dir_made, err);
    if (!st) st = oq_mkdirs(opt->outdir, err);
    for (size_t i = 0; !st && i < f->n; i++)
        for (size_t k = 0; !st && k < 2; k++) {
            if (!(formats & oq_figure_fmts[k])) continue;
            char *path = oq_figure_path(opt->outdir, f->items[i].name, oq_figure_fmts[k]);
            if (!path) return OQ_NOMEM(err);
            st = oq_plot_render(&f->items[i].spec, oq_figure_fmts[k], path, err);
            /* kinds grows first (as long as paths: the same count), so a path listed has its kind */
            size_t nk = written->n;
            oq_figure_kind *kind = st ? NULL : OQ_PUSH(written->kinds, nk);
            if (kind) *kind = f->items[i].kind;
            if (!st && (!kind || oq_strv_push(&written->paths, &written->n, path))) st = OQ_NOMEM(err);
            free(path);
        }
    hold_set(f, opt, 0, dir_made, NULL); /* whole, or failed as before: no signal removes it later */
    return st;
}

oq_status oq_figures_write(const oq_figures *f, const oq_plot_options *opt, oq_plot_files *written, oq_err *err)
{
    OQ_NEED(err, f);
    OQ_NEED(err, written);
    *written = (oq_plot_files){0};
    if (!opt || !opt->outdir) return oq_err_set(err, OQ_ERR_INVALID_ARG, "no output directory given");
    /* a fork copies no lock another thread holds only where there is no other thread */
    if (opt->isolate && oq_proc_single_threaded()) return oq_figures_write_isolated(f, opt, written, err);
    return oq_figures_write_here(f, opt, written, err);
}

oq_status oq_plot_summaries(oq_csv *const *tables, size_t nt, const oq_plot_options *opt, oq_plot_files *written,
                            oq_err *err)
{
    OQ_NEED_N(err, nt, tables);
    OQ_NEED(err, written);
    *written = (oq_plot_files){0};
    if (!opt || !opt->outdir) return oq_err_set(err, OQ_ERR_INVALID_ARG, "no output directory given");
    oq_figures *fl = NULL;
    oq_status st = oq_figures_from_tables(tables, nt, opt, &fl, err);
    if (!st) st = oq_figures_write(fl, opt, written, err);
    oq_figures_free(fl);
    return st;
}
