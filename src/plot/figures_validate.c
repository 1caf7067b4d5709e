/* The figures of a validate or replay summary.json (see plot.h), from the
 * document alone: per-batch timing, and the error histograms every comparison
 * records (compare.h), summed over batches. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/compare-impl.h"
#include "plot/figures-impl.h"

static const char *jstr(const json_t *o, const char *k, const char *dflt)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : dflt;
}

static double jnum(const json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }
static long long jint(const json_t *o, const char *k) { return (long long)json_integer_value(json_object_get(o, k)); }

/* Did a configuration fail qualification (rather than pass, be skipped, or be the reference that
 * ran)? */
static int config_failed(const json_t *c)
{
    const char *s = jstr(c, "status", "failed");
    return strcmp(s, "passed") && strcmp(s, "skipped") && strcmp(s, "reference");
}

/* ---- One output of one configuration, summed over its batches ------------------ */

typedef struct out_sum {
    int have, have_hist, passed, exact;
    oq_log_hist err;
    oq_mag_hist mag;
    long long valid, over, nan, inf, ref_nan, ref_inf, pad_nonzero, inf_matched;
    double max_abs, max_abs_ref, rtol, atol; /* max_abs as shown: NaN, then +Inf, then the largest */
} out_sum;

/* Adds json array `a` (bins first, first+1, ...) into dst[]. */
static oq_status add_bins(int64_t *dst, const json_t *a, long long first, const char *where, oq_err *err)
{
    if (first < 0 || first + (long long)json_array_size(a) > OQ_HIST_BINS)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: histogram bins %lld..%lld outside 0..%d", where, first,
                          first + (long long)json_array_size(a) - 1, OQ_HIST_BINS - 1);
    for (size_t i = 0; i < json_array_size(a); i++) dst[first + (long long)i] += json_integer_value(json_array_get(a, i));
    return OQ_OK;
}

static oq_status check_grid(const json_t *h, const char *where, oq_err *err)
{
    if (jint(h, "min_exp") != OQ_HIST_MIN_EXP || jint(h, "per_decade") != OQ_HIST_PER_DECADE)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: histogram bins (min_exp %lld, per_decade %lld) differ from this "
                          "ortqual's (%d, %d)", where, jint(h, "min_exp"), jint(h, "per_decade"), OQ_HIST_MIN_EXP,
                          OQ_HIST_PER_DECADE);
    return OQ_OK;
}

static void add_slot(out_sum *s, int slot, const json_t *o)
{
    s->mag.count[slot] += jint(o, "count");
    s->mag.over_tol[slot] += jint(o, "over_tolerance");
    s->mag.max_abs[slot] = fmax(s->mag.max_abs[slot], jnum(o, "max_abs"));
}

static oq_status add_histograms(out_sum *s, const json_t *rec, const char *where, oq_err *err)
{
    const json_t *h = json_object_get(rec, "error_histogram"), *m = json_object_get(rec, "error_by_magnitude");
    if (!h || !m) return OQ_OK; /* written by an ortqual without histograms */
    oq_status st = check_grid(h, where, err);
    if (!st) st = check_grid(m, where, err);
    if (!st) st = add_bins(s->err.bins, json_object_get(h, "counts"), jint(h, "first"), where, err);
    if (st) return st;
    s->have_hist = 1;
    s->err.zero += jint(h, "zero");
    s->err.below += jint(h, "below");
    s->err.above += jint(h, "above");
    long long first = jint(m, "first");
    const json_t *cnt = json_object_get(m, "count"), *mx = json_object_get(m, "max_abs"),
                 *over = json_object_get(m, "over_tolerance");
    if ((st = add_bins(s->mag.count + 1, cnt, first, where, err)) || (st = add_bins(s->mag.over_tol + 1, over, first, where, err)))
        return st;
    for (size_t i = 0; i < json_array_size(mx); i++)
        s->mag.max_abs[first + 1 + (long long)i] = fmax(s->mag.max_abs[first + 1 + (long long)i], json_number_value(json_array_get(mx, i)));
    add_slot(s, 0, json_object_get(m, "below"));
    add_slot(s, OQ_HIST_BINS + 1, json_object_get(m, "above"));
    return OQ_OK;
}

/* The records of the output's comparisons: the configuration's one record over all batches
 * ("outputs"), or each batch's own (summaries from before the outputs were aggregated). */
static oq_status sum_output(const json_t *cfg, const char *output, const char *name, out_sum *s, oq_err *err)
{
    memset(s, 0, sizeof *s);
    s->passed = 1;
    size_t i, j;
    json_t *b, *o;
    const json_t *all = json_object_get(cfg, "outputs");
    json_t *one = all ? json_pack("{s:I, s:O}", "index", (json_int_t)-1, "outputs", all) : NULL;
    json_t *per = all ? json_pack("[o]", one) : json_incref(json_object_get(cfg, "batches"));
    if (all && !per) return OQ_NOMEM(err);
    json_array_foreach(per, i, b) {
        json_array_foreach(json_object_get(b, "outputs"), j, o) {
            if (strcmp(jstr(o, "output", jstr(o, "name", "")), output)) continue;
            char where[512];
            snprintf(where, sizeof where, "%s: config %s, batch %lld, output %s", name, jstr(cfg, "name", "?"),
                     jint(b, "index"), output);
            if (all) snprintf(where, sizeof where, "%s: config %s, output %s", name, jstr(cfg, "name", "?"), output);
            oq_status st = add_histograms(s, o, where, err);
            if (st) {
                json_decref(per);
                return st;
            }
            s->have = 1;
            s->passed &= json_is_true(json_object_get(o, "passed"));
            s->exact |= json_is_true(json_object_get(o, "exact"));
            s->valid += jint(o, "num_valid");
            s->over += jint(o, "over_tolerance");
            s->nan += jint(o, "nan");
            s->inf += jint(o, "inf");
            s->inf_matched += jint(o, "inf_matched");
            s->ref_nan += jint(json_object_get(o, "reference_nonfinite"), "nan");
            s->ref_inf += jint(json_object_get(o, "reference_nonfinite"), "inf");
            /* padding only reported (not judged: the reference is not zero there) is no fault */
            if (!json_is_false(json_object_get(json_object_get(o, "padding"), "checked")))
                s->pad_nonzero += jint(json_object_get(o, "padding"), "nonzero");
            double m = oq_compare_record_max(o, "max_abs");
            if (oq_compare_max_abs_worse(m, s->max_abs)) s->max_abs = m;
            s->max_abs_ref = fmax(s->max_abs_ref, jnum(o, "max_abs_ref"));
            const json_t *tol = json_object_get(o, "tolerance");
            s->rtol = jnum(tol, "rtol");
            s->atol = jnum(tol, "atol");
        }
    }
    json_decref(per);
    return OQ_OK;
}

/* ---- Labels ------------------------------------------------------------------ */

/* "PASSED · max |error| 1.49e-06 · 0 of 5020 over tolerance · rtol 0.0001, atol 1e-05" */
static char *verdict_note(oq_arena *a, const json_t *cfg, const out_sum *s)
{
    if (!s->have)
        return oq_arena_printf(a, "not compared: %s%s%s", jstr(cfg, "status", "?"),
                               json_object_get(cfg, "reason") ? ": " : "", jstr(cfg, "reason", ""));
    char said[200], extra[256] = "";
    if (oq_compare_infinities_only(s->valid, s->inf_matched)) /* its max |error| 0 is none */
        return oq_arena_printf(a, "%s", oq_compare_not_compared_str(said, sizeof said, s->valid, "the reference"));
    size_t n = 0;
    if (s->err.zero) n += (size_t)snprintf(extra + n, sizeof extra - n, " \xc2\xb7 %lld exactly 0", (long long)s->err.zero);
    if (s->nan || s->inf) n += (size_t)snprintf(extra + n, sizeof extra - n, " \xc2\xb7 %lld NaN, %lld Inf", s->nan, s->inf);
    if ((s->ref_nan || s->ref_inf) && n < sizeof extra) /* the reference's own: not the output's fault */
        n += (size_t)snprintf(extra + n, sizeof extra - n, " \xc2\xb7 reference: %lld NaN, %lld Inf", s->ref_nan, s->ref_inf);
    if (s->pad_nonzero && n < sizeof extra)
        snprintf(extra + n, sizeof extra - n, " \xc2\xb7 %lld padding values not 0", s->pad_nonzero);
    if (s->exact) /* integers and bools: equal or not */
        return oq_arena_printf(a, "%s \xc2\xb7 max |error| %.3g \xc2\xb7 %lld of %lld differ%s \xc2\xb7 exact",
                               s->passed ? "PASSED" : "FAILED", s->max_abs, s->over, s->valid, extra);
    char e[32], rt[32], at[32]; /* the error read above atol however close; the tolerance as given */
    oq_real_over_str(s->max_abs, s->passed ? INFINITY : s->atol, 3, e, sizeof e);
    return oq_arena_printf(a, "%s \xc2\xb7 max |error| %s \xc2\xb7 %lld of %lld over tolerance%s \xc2\xb7 rtol %s, atol %s",
                           s->passed ? "PASSED" : "FAILED", e, s->over, s->valid, extra,
                           oq_real_str(s->rtol, 6, rt, sizeof rt), oq_real_str(s->atol, 6, at, sizeof at));
}

/* Outputs in first-seen order over every configuration's batches. */
static oq_status collect_outputs(const json_t *configs, oq_strset *outs, oq_err *err)
{
    size_t i, j, k;
    json_t *c, *b, *o;
    json_array_foreach(configs, i, c) {
        json_array_foreach(json_object_get(c, "outputs"), j, o) /* over all batches */
            if (oq_strset_add(outs, jstr(o, "output", jstr(o, "name", "")))) return OQ_NOMEM(err);
        json_array_foreach(json_object_get(c, "batches"), j, b) /* summaries from before */
            json_array_foreach(json_object_get(b, "outputs"), k, o)
                if (oq_strset_add(outs, jstr(o, "output", jstr(o, "name", "")))) return OQ_NOMEM(err);
    }
    return OQ_OK;
}

/* Compared configurations: all but the reference. */
static size_t compared(const json_t *configs, const json_t **out, size_t cap)
{
    size_t i, n = 0;
    json_t *c;
    json_array_foreach(configs, i, c) if (!json_is_true(json_object_get(c, "reference")) && n < cap) out[n++] = c;
    return n;
}

static int style_of(const json_t *configs, const json_t *c)
{
    for (size_t i = 0; i < json_array_size(configs); i++)
        if (json_array_get(configs, i) == c) return (int)i + 1;
    return 0;
}

#define MAX_PANELS 32

/* ---- error_<output> ------------------------------------------------------------ */

static oq_status error_figure(oq_figures *fl, const json_t *configs, const char *output, const char *name, oq_err *err)
{
    const json_t *cs[MAX_PANELS];
    size_t nc = compared(configs, cs, MAX_PANELS), any = 0;
    oq_plot_series *s = oq_arena_alloc(&fl->mem, (nc ? nc : 1) * sizeof *s);
    if (!s) return OQ_NOMEM(err);
    for (size_t p = 0; p < nc; p++) {
        out_sum sum;
        oq_status st = sum_output(cs[p], output, name, &sum, err);
        if (st) return st;
        any |= sum.have_hist && sum.valid > 0; /* an empty batch compares nothing: no panel to draw */
        int first = 0, last = -1;
        for (int k = 0; k < OQ_HIST_BINS; k++)
            if (sum.err.bins[k]) {
                if (last < 0) first = k;
                last = k;
            }
        size_t nb = last >= first ? (size_t)(last - first + 1) : 0;
        double *x = oq_arena_alloc(&fl->mem, (nb + 1) * sizeof *x), *y = oq_arena_alloc(&fl->mem, (nb + 1) * sizeof *y);
        char *note = verdict_note(&fl->mem, cs[p], &sum);
        if (!x || !y || !note) return OQ_NOMEM(err);
        for (size_t k = 0; k <= nb; k++) x[k] = oq_hist_edge(first + (int)k);
        for (size_t k = 0; k < nb; k++) y[k] = (double)sum.err.bins[first + (int)k];
        s[p] = (oq_plot_series){oq_arena_strdup(&fl->mem, jstr(cs[p], "name", "?")), nb, x, y, style_of(configs, cs[p]),
                                .failed = sum.have && !sum.passed, .panel = (int)p + 1, .note = note,
                                .has_band = sum.have, .band_lo = sum.atol,
                                .band_hi = sum.atol + sum.rtol * sum.max_abs_ref};
        if (sum.have && !(sum.atol > 0)) s[p].band_lo = s[p].band_hi;
    }
    if (!any) return OQ_OK; /* no histograms in this summary: nothing to draw */
    static const oq_plot_legend legend[] = {
        {"valid elements per |error| bin (a quarter decade wide)", OQ_LEGEND_BOX, 0, 0, 0},
        {"tolerance: atol (dashed) up to atol + rtol\xc2\xb7max|reference| (dotted)", OQ_LEGEND_BAND, 0, 0, 0}};
    oq_plot_spec sp = {.kind = OQ_PLOT_BINNED, .logx = 1, .logy = 1, .series = s, .nseries = nc,
                       .npanels = nc, .legend = legend, .nlegend = 2,
                       .xlabel = "|output \xe2\x88\x92 reference| of each valid element",
                       .ylabel = "elements"};
    sp.title = oq_arena_printf(&fl->mem, "|error| of output '%s' over all valid elements", output);
    sp.subtitle = "summed over every batch; elements whose error is exactly 0 or not finite are counted in the label";
    const char *out = oq_arena_strdup(&fl->mem, output); /* the set outlives the document */
    if (!out) return OQ_NOMEM(err);
    return oq_figures_add(fl, OQ_FIGURE_ERROR, out, oq_arena_printf(&fl->mem, "error_%s", oq_file_safe(&fl->mem, output)), &sp,
                          err);
}

/* ---- error_vs_ref_<output> -------------------------------------------------------- */

/* Geometric centre of |ref| bin k (0-based over the bins). */
static double bin_centre(int k) { return sqrt(oq_hist_edge(k) * oq_hist_edge(k + 1)); }

static oq_status magnitude_panel(oq_figures *fl, const json_t *cfg, const out_sum *sum, int style, int panel,
                                 oq_plot_series *s, oq_err *err)
{
    size_t n = 0, nover = 0;
    int lo = OQ_HIST_BINS, hi = -1;
    for (int k = 0; k < OQ_HIST_BINS; k++)
        if (sum->mag.count[k + 1]) {
            n++;
            nover += sum->mag.over_tol[k + 1] > 0;
            lo = k < lo ? k : lo;
            hi = k;
        }
    double *x = oq_arena_alloc(&fl->mem, (n + 1) * sizeof *x), *y = oq_arena_alloc(&fl->mem, (n + 1) * sizeof *y);
    double *ox = oq_arena_alloc(&fl->mem, (nover + 1) * sizeof *ox), *oy = oq_arena_alloc(&fl->mem, (nover + 1) * sizeof *oy);
    double *tx = oq_arena_alloc(&fl->mem, 17 * sizeof *tx), *ty = oq_arena_alloc(&fl->mem, 17 * sizeof *ty);
    char *note = verdict_note(&fl->mem, cfg, sum);
    if (!x || !y || !ox || !oy || !tx || !ty || !note) return OQ_NOMEM(err);
    size_t i = 0, j = 0;
    for (int k = 0; k < OQ_HIST_BINS; k++) {
        if (!sum->mag.count[k + 1]) continue;
        x[i] = bin_centre(k);
        y[i++] = sum->mag.max_abs[k + 1];
        if (sum->mag.over_tol[k + 1]) {
            ox[j] = bin_centre(k);
            oy[j++] = sum->mag.max_abs[k + 1];
        }
    }
    size_t nt = 0;
    for (int t = 0; hi >= lo && t <= 16; t++, nt++) {
        double w = log10(oq_hist_edge(lo)) + (log10(oq_hist_edge(hi + 1)) - log10(oq_hist_edge(lo))) * t / 16.0;
        tx[t] = pow(10, w);
        ty[t] = sum->atol + sum->rtol * tx[t];
    }
    const char *label = oq_arena_strdup(&fl->mem, jstr(cfg, "name", "?"));
    /* the panel stands for its first series (label, verdict, red frame when failed): the dashed
     * tolerance, which is never ringed; the bins, a failed series, would all be ringed, not only
     * those over tolerance (s[2]) */
    s[0] = (oq_plot_series){label, nt, tx, ty, 0, .dashed = 1, .panel = panel, .note = note,
                            .failed = sum->have && !sum->passed};
    s[1] = (oq_plot_series){label, n, x, y, style, .panel = panel};
    s[2] = (oq_plot_series){"over tolerance", nover, ox, oy, style, .failed = 1, .panel = panel};
    return OQ_OK;
}

static oq_status magnitude_figure(oq_figures *fl, const json_t *configs, const char *output, const char *name,
                                  oq_err *err)
{
    const json_t *cs[MAX_PANELS];
    size_t nc = compared(configs, cs, MAX_PANELS), any = 0;
    oq_plot_series *s = oq_arena_alloc(&fl->mem, (3 * nc + 1) * sizeof *s);
    if (!s) return OQ_NOMEM(err);
    for (size_t p = 0; p < nc; p++) {
        out_sum sum;
        oq_status st = sum_output(cs[p], output, name, &sum, err);
        if (!st) st = magnitude_panel(fl, cs[p], &sum, style_of(configs, cs[p]), (int)p + 1, s + 3 * p, err);
        if (st) return st;
        any |= sum.have_hist && sum.valid > 0; /* an empty batch compares nothing: no panel to draw */
    }
    if (!any) return OQ_OK;
    static const oq_plot_legend legend[] = {
        {"largest |error| among the elements of a |reference| bin", OQ_LEGEND_LINE, 0, 1, 0},
        {"allclose tolerance atol + rtol\xc2\xb7|reference|", OQ_LEGEND_DASHED, 0, 0, 0},
        {"bin holding elements over tolerance", OQ_LEGEND_MARKER, 0, 1, 1}};
    oq_plot_spec sp = {.kind = OQ_PLOT_LINES, .logx = 1, .logy = 1, .series = s, .nseries = 3 * nc, .npanels = nc,
                       .legend = legend, .nlegend = 3, .xlabel = "|reference| (valid elements, quarter-decade bins)",
                       .ylabel = "|error|"};
    sp.title = oq_arena_printf(&fl->mem, "Error of output '%s' against the magnitude of the reference", output);
    sp.subtitle = "points above the dashed line are elements failing |error| <= atol + rtol\xc2\xb7|reference|";
    const char *out = oq_arena_strdup(&fl->mem, output); /* the set outlives the document */
    if (!out) return OQ_NOMEM(err);
    return oq_figures_add(fl, OQ_FIGURE_ERROR_VS_REF, out, oq_arena_printf(&fl->mem, "error_vs_ref_%s", oq_file_safe(&fl->mem, output)), &sp,
                          err);
}

/* ---- runtime_valid_size ----------------------------------------------------------- */

typedef struct xy {
    double x, y;
} xy;

static int cmp_xy(const void *a, const void *b)
{
    double d = ((const xy *)a)->x - ((const xy *)b)->x;
    return (d > 0) - (d < 0);
}

int oq_batch_sample_init(oq_batch_sample *bs)
{
    *bs = (oq_batch_sample){json_array(), 1, 0};
    return bs->kept != NULL;
}

int oq_batch_sample_wants(const oq_batch_sample *bs)
{
    if (bs->seen % bs->stride) return 0;
    return json_array_size(bs->kept) < 2 * OQ_FIGURE_BATCHES || bs->seen % (2 * bs->stride) == 0;
}

int oq_batch_sample_offer(oq_batch_sample *bs, json_t *rec)
{
    if (!rec) return 0;
    if (bs->seen++ % bs->stride) {
        json_decref(rec);
        return 1;
    }
    if (json_array_size(bs->kept) == 2 * OQ_FIGURE_BATCHES) { /* keep the even positions */
        for (size_t i = 1; i < OQ_FIGURE_BATCHES; i++) json_array_set(bs->kept, i, json_array_get(bs->kept, 2 * i));
        while (json_array_size(bs->kept) > OQ_FIGURE_BATCHES) json_array_remove(bs->kept, OQ_FIGURE_BATCHES);
        bs->stride *= 2;
        if ((bs->seen - 1) % bs->stride) {
            json_decref(rec);
            return 1;
        }
    }
    return json_array_append_new(bs->kept, rec) == 0;
}

/* The batch's valid size: its own (a sampled record carries it), else the batch list's entry
 * (at its index first: an unsharded run's batches are in index order). */
static long long valid_size_of(const json_t *batches, const json_t *b)
{
    if (json_object_get(b, "valid_size")) return jint(b, "valid_size");
    long long index = jint(b, "index");
    const json_t *at = index >= 0 ? json_array_get(batches, (size_t)index) : NULL;
    if (at && jint(at, "index") == index) return jint(at, "valid_size");
    size_t i;
    json_t *x;
    json_array_foreach(batches, i, x) if (jint(x, "index") == index) return jint(x, "valid_size");
    return -1;
}

/* A series' name: the configuration's, and where the summary's configurations ran on several
 * ONNX Runtime builds (a merge of shards run on other libraries, replay's --reference-ort-lib)
 * the build it ran on, "cpu:decomposed:fp32 (ORT 1.30.0, SHA-256 ffb75a925ba0)": their times are
 * two builds', not one run's. A build without a hash is told by its library, as the builds are
 * told apart (evidence.onnxruntime_builds); the C reference ran on none. */
static const char *series_name(oq_arena *a, const json_t *builds, const json_t *cfg)
{
    const char *name = jstr(cfg, "name", "?");
    size_t i, k;
    json_t *b, *c;
    if (json_array_size(builds) > 1)
        json_array_foreach(builds, i, b) json_array_foreach(json_object_get(b, "configs"), k, c) {
            if (!json_is_string(c) || strcmp(json_string_value(c), name)) continue;
            const char *sha = jstr(b, "library_sha256", NULL);
            return sha ? oq_arena_printf(a, "%s (ORT %s, SHA-256 %.12s)", name, jstr(b, "version", "?"), sha)
                       : oq_arena_printf(a, "%s (ORT %s, %s)", name, jstr(b, "version", "?"), jstr(b, "library", "?"));
        }
    return oq_arena_strdup(a, name);
}

static oq_status runtime_figure(oq_figures *fl, const json_t *summary, oq_err *err)
{
    const json_t *builds = json_object_get(json_object_get(summary, "evidence"), "onnxruntime_builds");
    const json_t *configs = json_object_get(summary, "configs"), *batches = json_object_get(summary, "batches");
    size_t nc = json_array_size(configs);
    oq_plot_series *s = oq_arena_alloc(&fl->mem, (nc ? nc : 1) * sizeof *s);
    if (!s) return OQ_NOMEM(err);
    double lo = INFINITY, hi = 0;
    long long repeat = 0, warmup = 0, total = 0;
    for (size_t c = 0; c < nc; c++) {
        const json_t *cfg = json_array_get(configs, c), *cb = json_object_get(cfg, "batches");
        size_t nb = json_array_size(cb), k = 0;
        if (jint(cfg, "batches_total") > (long long)nb) total = jint(cfg, "batches_total");
        xy *pts = oq_arena_alloc(&fl->mem, (nb + 1) * sizeof *pts);
        double *x = oq_arena_alloc(&fl->mem, (nb + 1) * sizeof *x), *y = oq_arena_alloc(&fl->mem, (nb + 1) * sizeof *y);
        if (!pts || !x || !y) return OQ_NOMEM(err);
        for (size_t i = 0; i < nb; i++) {
            const json_t *b = json_array_get(cb, i);
            long long vs = valid_size_of(batches, b);
            /* a batch without repeated calls (the reference runs once by default) shows its one call */
            const char *key = json_is_number(json_object_get(b, "median_s")) ? "median_s" : "first_call_s";
            if (vs < 0 || !json_is_number(json_object_get(b, key))) continue;
            pts[k++] = (xy){(double)vs, jnum(b, key) * 1e3};
            repeat = jint(b, "repeat");
            warmup = jint(b, "warmup");
        }
        qsort(pts, k, sizeof *pts, cmp_xy);
        for (size_t i = 0; i < k; i++) {
            x[i] = pts[i].x;
            y[i] = pts[i].y;
            if (y[i] > 0) lo = fmin(lo, y[i]), hi = fmax(hi, y[i]);
        }
        int failed = config_failed(cfg);
        s[c] = (oq_plot_series){series_name(&fl->mem, builds, cfg), k, x, y, (int)c + 1, .failed = failed,
                                .note = failed ? "(FAILED)" : NULL};
        if (!s[c].label) return OQ_NOMEM(err);
    }
    oq_plot_spec sp = {.kind = OQ_PLOT_LINES, .series = s, .nseries = nc, .logy = hi > 30 * lo,
                       .title = "Latency per batch against valid tokens",
                       .xlabel = "valid tokens in the batch (padding excluded)", .ylabel = "time per batch (ms, median)"};
    sp.subtitle = oq_arena_printf(&fl->mem, "one point per batch%s: the median of %lld timed calls after %lld warm-up; "
                                  "the first call is timed apart (a configuration without repeated calls, as the reference by "
                                  "default, shows its one call)",
                                  total ? oq_arena_printf(&fl->mem, " (an evenly spaced sample of %lld)", total) : "",
                                  repeat, warmup);
    return oq_figures_add(fl, OQ_FIGURE_RUNTIME_VALID_SIZE, NULL, "runtime_valid_size", &sp, err);
}

/* ---- placement ------------------------------------------------------------------------- */

/* Node classes of placement.counts, in bar order. */
static const struct {
    const char *key, *label;
    int style;
} classes[] = {{"device", "on the device EP", 1}, {"cpu_shape", "shape ops on CPU", 6}, {"memcpy", "Memcpy", 8},
               {"cpu_compute", "compute on CPU", 2}, {"ep_mismatch", "profile disagrees with assignment", 4},
               {"not_run", "assigned, never run", 5}};
#define NCLASSES (sizeof classes / sizeof classes[0])

/* "kernels: FLASH_ATTENTION on 2 nodes" from dispatch.records (a line per node per Run:
 * counted once per node), or why there are none. */
static char *kernel_note(oq_arena *a, const json_t *cfg)
{
    const json_t *d = json_object_get(cfg, "dispatch"), *recs = json_object_get(d, "records");
    const json_t *p = json_object_get(cfg, "placement");
    oq_strset pairs = {0}, ks = {0};
    int nodes[32] = {0};
    size_t i;
    json_t *r;
    char key[512];
    json_array_foreach(recs, i, r) {
        snprintf(key, sizeof key, "%s\x1f%s", jstr(r, "node", "?"), jstr(r, "kernel", "?"));
        if (oq_strset_index(&pairs, key) >= 0) continue;
        char *k = oq_arena_strdup(a, key);
        if (!k || oq_strset_add(&pairs, k) || oq_strset_add(&ks, jstr(r, "kernel", "?"))) break;
        int idx = oq_strset_index(&ks, jstr(r, "kernel", "?"));
        if (idx >= 0 && idx < 32) nodes[idx]++;
    }
    char text[512] = "";
    size_t n = 0;
    for (size_t k = 0; k < ks.n && k < 32 && n < sizeof text; k++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%s%s on %d node%s", k ? ", " : "", ks.v[k], nodes[k],
                              nodes[k] == 1 ? "" : "s");
    size_t nk = ks.n;
    free(ks.v);
    free(pairs.v);
    const char *disp = !d ? "" : json_is_false(json_object_get(d, "passed")) ? " (dispatch check FAILED)" : "";
    return oq_arena_printf(a, "%s%s%s%s", nk ? "kernels: " : d ? "no kernel reported" : "kernels not recorded",
                           text, disp, p ? "" : "; placement not recorded");
}

static oq_status placement_figure(oq_figures *fl, const json_t *configs, oq_err *err)
{
    const json_t *cs[MAX_PANELS];
    size_t n = 0, known = 0, i;
    json_t *c;
    json_array_foreach(configs, i, c) {
        if (json_is_true(json_object_get(c, "reference")) || n == MAX_PANELS) continue;
        known += json_object_get(c, "placement") || json_array_size(json_object_get(json_object_get(c, "dispatch"), "records"));
        cs[n++] = c;
    }
    if (!known) return OQ_OK;
    const char **cats = oq_arena_alloc(&fl->mem, n * sizeof *cats), **notes = oq_arena_alloc(&fl->mem, n * sizeof *notes);
    int *failed = oq_arena_alloc(&fl->mem, n * sizeof *failed);
    oq_plot_series *s = oq_arena_alloc(&fl->mem, NCLASSES * sizeof *s);
    if (!cats || !notes || !failed || !s) return OQ_NOMEM(err);
    for (size_t r = 0; r < n; r++) {
        cats[r] = oq_arena_strdup(&fl->mem, jstr(cs[r], "name", "?"));
        failed[r] = config_failed(cs[r]);
        if (!(notes[r] = kernel_note(&fl->mem, cs[r]))) return OQ_NOMEM(err);
    }
    for (size_t k = 0; k < NCLASSES; k++) {
        double *y = oq_arena_alloc(&fl->mem, n * sizeof *y);
        if (!y) return OQ_NOMEM(err);
        for (size_t r = 0; r < n; r++)
            y[r] = (double)jint(json_object_get(json_object_get(cs[r], "placement"), "counts"), classes[k].key);
        s[k] = (oq_plot_series){classes[k].label, n, NULL, y, classes[k].style};
    }
    oq_plot_spec sp = {.kind = OQ_PLOT_HBARS, .series = s, .nseries = NCLASSES, .categories = cats,
                       .category_notes = notes, .category_failed = failed, .ncategories = n,
                       .title = "Placement and attention kernels per configuration",
                       .subtitle = "graph nodes by where they ran (ORT's assignment and profile); kernels from "
                                   "ORT's routing lines, one per attention node",
                       .xlabel = "graph nodes"};
    return oq_figures_add(fl, OQ_FIGURE_PLACEMENT, NULL, "placement", &sp, err);
}

oq_status oq_figures_validate(oq_figures *fl, const json_t *summary, const char *name, oq_err *err)
{
    const json_t *configs = json_object_get(summary, "configs");
    if (!json_is_array(configs)) return oq_err_set(err, OQ_ERR_FORMAT, "%s: no \"configs\" array", name);
    oq_strset outs = {0};
    /* a panel says PASSED and the tolerance: the summary must bear both out (as report checks) */
    oq_status st = oq_compare_summary_holds(summary, name, err);
    if (!st) st = collect_outputs(configs, &outs, err);
    for (size_t o = 0; !st && o < outs.n; o++) {
        st = error_figure(fl, configs, outs.v[o], name, err);
        if (!st) st = magnitude_figure(fl, configs, outs.v[o], name, err);
    }
    if (!st) st = runtime_figure(fl, summary, err);
    if (!st) st = placement_figure(fl, configs, err);
    free(outs.v);
    return st;
}
