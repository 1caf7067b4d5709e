/* validate.csv (one row per batch x configuration x output) and the diagnostic plots. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/csv.h"
#include "ortqual/plot.h"
#include "validate/validate-impl.h"

static int64_t valid_size(const json_t *batches, json_int_t index)
{
    return json_integer_value(json_object_get(json_array_get(batches, (size_t)index), "valid_size"));
}

static void write_rows(oq_csv_writer *w, const json_t *cfg, const json_t *batches, oq_err *err)
{
    size_t i, j;
    json_t *b, *o;
    json_array_foreach(json_object_get(cfg, "batches"), i, b) {
        json_int_t index = json_integer_value(json_object_get(b, "index"));
        json_t *outs = json_object_get(b, "outputs");
        /* the reference has no comparison: one row with the timing, error left empty */
        size_t n = json_array_size(outs) ? json_array_size(outs) : 1;
        for (j = 0; j < n; j++) {
            o = json_array_get(outs, j);
            oq_csv_write_str(w, json_string_value(json_object_get(cfg, "name")));
            oq_csv_write_str(w, o ? json_string_value(json_object_get(o, "output")) : "all");
            oq_csv_write_int(w, index);
            oq_csv_write_int(w, valid_size(batches, index));
            oq_csv_write_double(w, json_number_value(json_object_get(b, "first_call_s")));
            oq_csv_write_double(w, json_number_value(json_object_get(b, "median_s")));
            if (o) oq_csv_write_double(w, json_number_value(json_object_get(o, "max_abs")));
            else oq_csv_write_empty(w);
            oq_csv_end_row(w, err);
        }
    }
}

oq_status oq_validate_write_csv(const char *path, const json_t *summary, oq_err *err)
{
    oq_csv_writer *w;
    oq_status st = oq_csv_writer_open(&w, path, oq_validate_csv_columns, OQ_VALIDATE_NCOLS, 1, err);
    if (st) return st;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(summary, "configs"), i, c)
        if (json_array_size(json_object_get(c, "batches"))) write_rows(w, c, json_object_get(summary, "batches"), err);
    return oq_csv_writer_commit(w, err);
}

/* Plots are diagnostics: a failure is recorded in the summary, not a failed validation.
 * They are drawn from the summary itself (its error histograms), as `ortqual plot` does. */
void oq_validate_plots(const char *outdir, json_t *summary)
{
    oq_err e = {0};
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/plots", outdir);
    oq_plot_options po = {.outdir = dir};
    oq_plot_files files = {0};
    oq_figures *figs = NULL;
    oq_status st = oq_figures_from_summary(summary, "summary.json", &po, &figs, &e);
    if (!st) st = oq_figures_write(figs, &po, &files, &e);
    json_t *paths = json_array();
    for (size_t i = 0; i < files.n; i++) json_array_append_new(paths, json_string(files.paths[i]));
    json_object_set_new(summary, "plots", paths);
    if (st) json_object_set_new(summary, "plot_error", json_string(e.msg));
    oq_plot_files_free(&files);
    oq_figures_free(figs);
}
