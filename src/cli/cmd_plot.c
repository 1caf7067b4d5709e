/* ortqual plot: figures from bench and validate summaries. */
#include <jansson.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ortqual/csv.h"
#include "ortqual/fileio.h"
#include "ortqual/plot.h"
#include "ortqual/report.h"

const char cmd_plot_summary[] = "draw PNG/SVG figures from bench or validate summaries";

static const char head[] =
    "usage: ortqual plot INPUT... [--out DIR] [--baseline VARIANT] [--format png,svg]\n"
    "                    [--stat p50|mean|p90|p95|p99|p99.9|max] [--json]\n"
    "\n"
    "Draw the standard figures of summaries. Inputs are bench summary.csv or\n"
    "summary.json files (pooled: a CPU and a GPU sweep in one figure; only rows whose\n"
    "status is \"ok\" are drawn), or one validate/replay summary.json; a run directory\n"
    "stands for its summary.json. Bench figures: runtime, memory (and gpu_memory) and\n"
    "speedup against sequence length, per batch/mask/heads group, and error_vs_runtime.\n"
    "Validate figures: error_<output> (|error| over all valid elements, a panel per\n"
    "configuration, with its tolerance and verdict), error_vs_ref_<output> (error\n"
    "against |reference|), runtime_valid_size (latency per batch against valid tokens;\n"
    "where the configurations ran on several ONNX Runtime builds, each line names its\n"
    "build: version and short SHA-256) and placement (when recorded). A merged summary\n"
    "is held to its plan beside it (DIR/shards/plan.json) first, as report holds it.\n"
    "The written files are printed. docs/plot.md describes every figure.\n";

static const char foot[] =
    "\n"
    "exit status: 0 figures written, or nothing to draw (no bench row of status\n"
    "\"ok\", no output compared: said on stderr with the rows' statuses; the run's\n"
    "own exit status is its verdict); 2 usage or input error (nothing written);\n"
    "3 a figure could not be rendered or written.\n"
    "\n"
    "examples:\n"
    "  ortqual plot runs/cpu/summary.csv --baseline ref --format png\n"
    "  ortqual plot ortqual-out/demo/summary.json --out /tmp/figs\n";

static int take_format(void *ctx, const char *item, size_t k)
{
    (void)k;
    unsigned *out = ctx;
    if (!strcmp(item, "png")) *out |= OQ_PLOT_PNG;
    else if (!strcmp(item, "svg")) *out |= OQ_PLOT_SVG;
    else {
        oq_cli_error_in("plot", "--format: unknown format '%s' (png, svg)", oq_cli_shown(item));
        return -1;
    }
    return 0;
}

static int parse_formats(const char *s, unsigned *out)
{
    *out = 0;
    return oq_cli_each_item("plot", "--format", s, take_format, out);
}

/* "p50" -> "p50_ms", "p99.9" -> "p999_ms" (the CSV's columns); NULL when not a statistic. */
static const char *parse_stat(const char *s)
{
    static const char *const names[] = {"mean", "p50", "p90", "p95", "p99", "p99.9", "max"};
    static const char *const cols[] = {"mean_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(s, names[i]) || !strcmp(s, cols[i])) return cols[i];
    return NULL;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

static void print_files(const oq_plot_files *f, int json)
{
    if (!json) {
        for (size_t i = 0; i < f->n; i++) printf("%s\n", oq_cli_shown(f->paths[i]));
        return;
    }
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < f->n; i++) json_array_append_new(arr, oq_cli_json_text(f->paths[i]));
    json_t *root = json_pack("{s:s, s:o}", "schema", OQ_CLI_PLOT_SCHEMA, "files", arr);
    char *text = json_dumps(root, JSON_INDENT(2));
    if (text) printf("%s\n", text), oq_cli_json_answered();
    free(text);
    json_decref(root);
}

/* A validate or replay summary.json is drawn on its own: its figures into *figs when `path` is
 * one (NULL otherwise, and for a file that is not there: the table reader says so, exit 2, as
 * before). Read as report.html reads it, its batch records one at a time and the latency points
 * sampled: a 200,000-batch summary took 3 GB and drew a 74 MB SVG (QA 8b D5). */
static oq_status validate_figures(const char *path, const oq_plot_options *opt, oq_figures **figs, oq_err *err)
{
    *figs = NULL;
    oq_status st = ends_with(path, ".json") ? oq_figures_from_summary_file(path, opt, figs, err) : OQ_OK;
    char unchecked[1600];
    if (!st && *figs && (st = oq_cli_merged_check("plot", path, unchecked, sizeof unchecked, err)) != OQ_OK) {
        /* a merge's, held to its plan */
        oq_figures_free(*figs);
        *figs = NULL;
    }
    return st == OQ_ERR_NOT_FOUND ? OQ_OK : st;
}

/* Read every input; exit status on failure, 0 when all were read. */
static int read_inputs(char **paths, size_t n, oq_csv **tables)
{
    for (size_t i = 0; i < n; i++) {
        oq_err err = {0};
        oq_status st = ends_with(paths[i], ".json") ? oq_csv_read_json(paths[i], &tables[i], &err)
                                                    : oq_csv_read(paths[i], &tables[i], &err);
        if (st) {
            oq_cli_error_in("plot", "%s", err.msg);
            return OQ_EXIT_USAGE;
        }
    }
    return 0;
}

/* A failed plot leaves no part of a figure set: the files this call wrote go (a
 * full disk would otherwise leave some figures newer than the others). */
static void remove_files(oq_plot_files *f)
{
    for (size_t i = 0; i < f->n; i++) unlink(f->paths[i]);
    oq_plot_files_clear(f);
}

static int draw(oq_figures *figs, oq_status st, const oq_err *build_err, const oq_plot_options *opt, int json)
{
    oq_err err = *build_err;
    oq_plot_files files = {0};
    if (!st) st = oq_figures_write(figs, opt, &files, &err);
    if (st) remove_files(&files);
    else print_files(&files, json); /* a refusal's answer is the error object */
    oq_plot_files_clear(&files);
    oq_figures_free(figs);
    if (!st) return OQ_EXIT_OK;
    oq_cli_error_in("plot", "%s", err.msg);
    return st == OQ_ERR_FORMAT || st == OQ_ERR_INVALID_ARG ? OQ_EXIT_USAGE : OQ_EXIT_RUNTIME;
}

static int run_validate(oq_figures *figs, char **inputs, size_t n, const oq_plot_options *opt, int json)
{
    if (n > 1) {
        oq_cli_error_in("plot", "%s is a validate summary: give it alone (its figures are per run)",
                oq_cli_shown(inputs[0]));
        oq_figures_free(figs);
        return OQ_EXIT_USAGE;
    }
    oq_err err = {0};
    if (!oq_figures_count(figs)) /* not an error: the run had nothing to show */
        oq_cli_error_in("plot", "%s: nothing to draw: no output was compared and no batch was timed in this run",
                oq_cli_shown(inputs[0]));
    return draw(figs, OQ_OK, &err, opt, json);
}

/* The rows' statuses, counted in the order first seen ("1 failed", "2 skipped, 1 oom"), into buf:
 * why no row is drawn, in the rows' own words (it said "every variant skipped, unsupported or out of
 * memory" of rows that had failed). */
static void status_counts(oq_csv *const *tables, size_t n, char *buf, size_t size)
{
    enum { MAX_KINDS = 8 };
    const char *kind[MAX_KINDS];
    size_t count[MAX_KINDS] = {0}, kinds = 0, rows = 0, other = 0;
    for (size_t t = 0; t < n; t++) {
        size_t col;
        if (!oq_csv_find(tables[t], "status", &col)) continue;
        for (size_t r = 0; r < oq_csv_nrows(tables[t]); r++, rows++) {
            const char *st = oq_csv_get(tables[t], r, col);
            size_t k = 0;
            while (k < kinds && strcmp(kind[k], st)) k++;
            if (k == kinds && kinds < MAX_KINDS) kind[kinds++] = st;
            if (k < kinds) count[k]++;
            else other++;
        }
    }
    int w = snprintf(buf, size, rows ? "" : "no rows");
    for (size_t k = 0; k < kinds && w >= 0 && (size_t)w < size; k++)
        w += snprintf(buf + w, size - (size_t)w, "%s%zu %s", k ? ", " : "", count[k],
                      *kind[k] ? oq_cli_shown(kind[k]) : "without a status");
    if (other && w >= 0 && (size_t)w < size) snprintf(buf + w, size - (size_t)w, ", %zu other", other);
}

static int run_tables(char **inputs, size_t n, const oq_plot_options *opt, int json)
{
    oq_csv **tables = calloc(n, sizeof *tables);
    if (!tables) {
        oq_cli_error_in("plot", "out of memory");
        return OQ_EXIT_RUNTIME;
    }
    int rc = read_inputs(inputs, n, tables);
    if (!rc) {
        oq_err err = {0};
        oq_figures *figs = NULL;
        oq_status st = oq_figures_from_tables(tables, n, opt, &figs, &err);
        if (!st && !oq_figures_count(figs)) { /* not an error, as for a validate run: nothing was measured */
            char counts[256];
            status_counts(tables, n, counts, sizeof counts);
            fprintf(stderr, "ortqual plot: %s%s: nothing to draw: no bench row has status \"ok\" (%s)\n",
                    oq_cli_shown(inputs[0]), n > 1 ? " (and the other inputs)" : "", counts);
        }
        rc = draw(figs, st, &err, opt, json);
    }
    for (size_t i = 0; i < n; i++) oq_csv_free(tables[i]);
    free(tables);
    return rc;
}

static int run(char **inputs, size_t n, oq_plot_options *opt, int json)
{
    char *dir_copy = NULL;
    oq_figures *figs = NULL;
    oq_err err = {0};
    oq_status st = OQ_OK;
    for (size_t i = 0; i < n && !figs && !st; i++)
        if ((st = validate_figures(inputs[i], opt, &figs, &err)) || figs) {
            char *tmp = inputs[0];
            inputs[0] = inputs[i], inputs[i] = tmp;
        }
    if (!opt->outdir) {
        dir_copy = strdup(inputs[0]);
        opt->outdir = dir_copy ? dirname(dir_copy) : ".";
    }
    /* not beside a run that writes (or a --force run that clears) the same folder */
    oq_outdir_lock *lock = NULL;
    int rc = oq_cli_outdir_lock("plot", opt->outdir, NULL, NULL, &lock);
    if (!rc) rc = st ? draw(NULL, st, &err, opt, json)
                  : figs ? run_validate(figs, inputs, n, opt, json) : run_tables(inputs, n, opt, json);
    else oq_figures_free(figs);
    oq_outdir_lock_free(lock);
    free(dir_copy);
    return rc;
}

static int set_formats(const oq_opt *o, const char *arg)
{
    return parse_formats(arg, &((oq_plot_options *)o->ctx)->formats);
}

static int set_stat(const oq_opt *o, const char *arg)
{
    oq_plot_options *opt = o->ctx;
    if ((opt->stat = parse_stat(arg))) return 0;
    oq_cli_error_in("plot", "--stat: unknown statistic '%s' (p50, mean, p90, p95, p99, p99.9, max)", arg);
    return -1;
}

int cmd_plot(int argc, char **argv)
{
    oq_plot_options opt = {.isolate = 1}; /* a GLib abort in the drawing is this command's error */
    int json = 0, first = argc;
    const oq_opt opts[] = {
        OQ_OPT_GROUP("options:"),
        OQ_OPT_STRING("out", "DIR", &opt.outdir, "directory for the figures (default: the first input's directory)"),
        OQ_OPT_STRING("baseline", "VARIANT", &opt.baseline,
                      "variant the speed-up is measured against: a series label, a\n"
                      "variant (ref:sdpa:fp64) or a runtime naming one variant (ref);\n"
                      "default: the first variant in the input"),
        OQ_OPT_COMMA_CALLBACK("format", "LIST", set_formats, &opt, "comma-separated formats: png, svg (default: png,svg)"),
        OQ_OPT_CALLBACK("stat", "NAME", set_stat, &opt, "bench time statistic: p50 (default), mean, p90, p95,\np99, p99.9 or max (bench --help says how each is made)"),
        OQ_OPT_FLAG("json", &json, "print {\"schema\", \"files\": [...]} instead of one path per line"),
        OQ_OPT_END};
    const oq_cli_command c = {"plot", head, foot, opts, OQ_CLI_OPERANDS};
    int rc = oq_cli_parse(&c, argc, argv, &first);
    if (rc) return rc > 0 ? OQ_EXIT_OK : OQ_EXIT_USAGE;
    if (first >= argc) {
        oq_cli_error_in("plot", "no input given (see 'ortqual plot --help')");
        return OQ_EXIT_USAGE;
    }
    oq_err err = {0};
    if (opt.outdir && oq_check_outdir_kind(opt.outdir, &err)) { /* a file there: the user's mistake */
        oq_cli_error_in("plot", "--out: %s", err.msg);
        return OQ_EXIT_USAGE;
    }
    size_t n = (size_t)(argc - first);
    char (*bufs)[4096] = calloc(n, sizeof *bufs);
    char **inputs = calloc(n, sizeof *inputs);
    if (!bufs || !inputs) {
        free(bufs);
        free(inputs);
        oq_cli_error_in("plot", "out of memory");
        return OQ_EXIT_RUNTIME;
    }
    rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        inputs[i] = (char *)oq_cli_summary_of(argv[first + i], bufs[i], sizeof bufs[i]);
        if (inputs[i] != argv[first + i] && oq_cli_refused_run("plot", argv[first + i])) rc = OQ_EXIT_USAGE;
    }
    if (!rc) rc = run(inputs, n, &opt, json);
    free(inputs);
    free(bufs);
    return rc;
}
