/* ortqual plot: figures from bench and validate summaries. */
#include <getopt.h>
#include <jansson.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ortqual/csv.h"
#include "ortqual/plot.h"

const char cmd_plot_summary[] = "draw PNG/SVG figures from bench or validate summaries";

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: ortqual plot INPUT... [--out DIR] [--baseline VARIANT] [--format png,svg]\n"
            "                    [--stat p50|mean|p90|p99] [--json]\n"
            "\n"
            "Draw the standard figures of summaries. Inputs are bench summary.csv or\n"
            "summary.json files (pooled: a CPU and a GPU sweep in one figure; only rows whose\n"
            "status is \"ok\" are drawn), or one validate/replay summary.json. Bench figures:\n"
            "runtime, memory (and gpu_memory) and speedup against sequence length, per\n"
            "batch/mask/heads group, and error_vs_runtime. Validate figures: error_<output>\n"
            "(|error| over all valid elements, a panel per configuration, with its tolerance\n"
            "and verdict), error_vs_ref_<output> (error against |reference|), runtime_valid_size\n"
            "(latency per batch against valid tokens) and placement (when recorded). The written\n"
            "files are printed. docs/plot.md describes every figure.\n"
            "\n"
            "options:\n"
            "  --out DIR           directory for the figures (default: the first input's directory)\n"
            "  --baseline VARIANT  variant the speed-up is measured against: a series label, a\n"
            "                      variant (ref:sdpa:fp64) or a runtime naming one variant (ref);\n"
            "                      default: the first variant in the input\n"
            "  --format LIST       comma-separated formats: png, svg (default: png,svg)\n"
            "  --stat NAME         bench time statistic: p50, mean, p90 or p99 (default: p50)\n"
            "  --json              print {\"files\": [...]} instead of one path per line\n"
            "  -h, --help          this help\n"
            "\n"
            "exit status: 0 figures written; 2 usage or input error (nothing written);\n"
            "3 a figure could not be rendered or written.\n"
            "\n"
            "examples:\n"
            "  ortqual plot runs/cpu/summary.csv --baseline ref --format png\n"
            "  ortqual plot ortqual-out/demo/summary.json --out /tmp/figs\n");
}

static int parse_formats(const char *s, unsigned *out)
{
    *out = 0;
    char *copy = strdup(s), *save = NULL;
    if (!copy) return -1;
    int bad = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!strcmp(tok, "png")) {
            *out |= OQ_PLOT_PNG;
        } else if (!strcmp(tok, "svg")) {
            *out |= OQ_PLOT_SVG;
        } else {
            fprintf(stderr, "ortqual plot: --format: unknown format '%s' (png, svg)\n", tok);
            bad = 1;
        }
    }
    free(copy);
    if (!bad && !*out) fprintf(stderr, "ortqual plot: --format: no format given (png, svg)\n");
    return bad || !*out ? -1 : 0;
}

/* "p50" -> "p50_ms"; NULL when not a statistic. */
static const char *parse_stat(const char *s)
{
    static const char *const names[] = {"mean", "p50", "p90", "p99"};
    static const char *const cols[] = {"mean_ms", "p50_ms", "p90_ms", "p99_ms"};
    for (size_t i = 0; i < 4; i++)
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
        for (size_t i = 0; i < f->n; i++) printf("%s\n", f->paths[i]);
        return;
    }
    json_t *arr = json_array();
    for (size_t i = 0; i < f->n; i++) json_array_append_new(arr, json_string(f->paths[i]));
    json_t *root = json_pack("{s:o}", "files", arr);
    char *text = json_dumps(root, JSON_INDENT(2));
    if (text) printf("%s\n", text);
    free(text);
    json_decref(root);
}

/* A validate or replay summary.json is drawn on its own (its figures need the whole
 * document); bench inputs (CSV, or summary.json "results") are pooled. */
static int is_validate_summary(const char *path, json_t **doc)
{
    *doc = NULL;
    if (!ends_with(path, ".json")) return 0;
    json_t *j = json_load_file(path, 0, NULL);
    const char *schema = json_string_value(json_object_get(j, "schema"));
    if (schema && !strncmp(schema, "ortqual.validate/", 17)) {
        *doc = j;
        return 1;
    }
    json_decref(j);
    return 0;
}

/* Read every input; exit status on failure, 0 when all were read. */
static int read_inputs(char **paths, size_t n, oq_csv **tables)
{
    for (size_t i = 0; i < n; i++) {
        oq_err err = {0};
        oq_status st = ends_with(paths[i], ".json") ? oq_csv_read_json(paths[i], &tables[i], &err)
                                                    : oq_csv_read(paths[i], &tables[i], &err);
        if (st) {
            fprintf(stderr, "ortqual plot: %s\n", err.msg);
            return OQ_EXIT_USAGE;
        }
    }
    return 0;
}

static int draw(oq_figures *figs, oq_status st, const oq_err *build_err, const oq_plot_options *opt, int json)
{
    oq_err err = *build_err;
    oq_plot_files files = {0};
    if (!st) st = oq_figures_write(figs, opt, &files, &err);
    print_files(&files, json);
    oq_plot_files_free(&files);
    oq_figures_free(figs);
    if (!st) return OQ_EXIT_OK;
    fprintf(stderr, "ortqual plot: %s\n", err.msg);
    return st == OQ_ERR_FORMAT || st == OQ_ERR_INVALID_ARG ? OQ_EXIT_USAGE : OQ_EXIT_RUNTIME;
}

static int run_validate(json_t *doc, char **inputs, size_t n, oq_plot_options *opt, int json)
{
    if (n > 1) {
        fprintf(stderr, "ortqual plot: %s is a validate summary: give it alone (its figures are per run)\n",
                inputs[0]);
        json_decref(doc);
        return OQ_EXIT_USAGE;
    }
    oq_err err = {0};
    oq_figures *figs = NULL;
    oq_status st = oq_figures_from_summary(doc, inputs[0], opt, &figs, &err);
    int rc = draw(figs, st, &err, opt, json);
    json_decref(doc);
    return rc;
}

static int run(char **inputs, size_t n, oq_plot_options *opt, int json)
{
    char *dir_copy = NULL;
    if (!opt->outdir) {
        dir_copy = strdup(inputs[0]);
        opt->outdir = dir_copy ? dirname(dir_copy) : ".";
    }
    json_t *doc = NULL;
    int rc = OQ_EXIT_OK;
    for (size_t i = 0; i < n && !doc; i++)
        if (is_validate_summary(inputs[i], &doc)) {
            char *tmp = inputs[0];
            inputs[0] = inputs[i], inputs[i] = tmp;
        }
    oq_csv **tables = doc ? NULL : calloc(n, sizeof *tables);
    if (doc) {
        rc = run_validate(doc, inputs, n, opt, json);
    } else if (!tables) {
        fprintf(stderr, "ortqual plot: out of memory\n");
        rc = OQ_EXIT_RUNTIME;
    } else if (!(rc = read_inputs(inputs, n, tables))) {
        oq_err err = {0};
        oq_figures *figs = NULL;
        oq_status st = oq_figures_from_tables(tables, n, opt, &figs, &err);
        rc = draw(figs, st, &err, opt, json);
    }
    for (size_t i = 0; tables && i < n; i++) oq_csv_free(tables[i]);
    free(tables);
    free(dir_copy);
    return rc;
}

int cmd_plot(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"out", required_argument, NULL, 'o'},    {"baseline", required_argument, NULL, 'b'},
        {"format", required_argument, NULL, 'f'}, {"stat", required_argument, NULL, 's'},
        {"json", no_argument, NULL, 'j'},         {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    oq_plot_options opt = {0};
    int json = 0, c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': opt.outdir = optarg; break;
        case 'b': opt.baseline = optarg; break;
        case 'f':
            if (parse_formats(optarg, &opt.formats)) return OQ_EXIT_USAGE;
            break;
        case 's':
            if (!(opt.stat = parse_stat(optarg))) {
                fprintf(stderr, "ortqual plot: --stat: unknown statistic '%s' (p50, mean, p90, p99)\n", optarg);
                return OQ_EXIT_USAGE;
            }
            break;
        case 'j': json = 1; break;
        case 'h': usage(stdout); return OQ_EXIT_OK;
        case ':':
            fprintf(stderr, "ortqual plot: option '%s' needs a value\n", argv[optind - 1]);
            return OQ_EXIT_USAGE;
        default:
            fprintf(stderr, "ortqual plot: unknown option '%s' (see 'ortqual plot --help')\n", argv[optind - 1]);
            return OQ_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "ortqual plot: no input given (see 'ortqual plot --help')\n");
        return OQ_EXIT_USAGE;
    }
    return run(argv + optind, (size_t)(argc - optind), &opt, json);
}
