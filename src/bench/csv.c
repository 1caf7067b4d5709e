/* summary.csv through the CSV layer (csv.h), columns as oq_bench_csv_columns. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ortqual/bench.h"

#include "ortqual/csv.h"

static const char *dtype_name(oq_precision p)
{
    return p == OQ_PREC_FP64 ? "float64" : p == OQ_PREC_FP16 ? "float16" : "float32";
}

/* "FLASH_ATTENTION+MATH" -> "flash+math"; CPU rows "cpu", the reference "ref". */
static void kernel_text(const oq_bench_row *r, char *buf, size_t n)
{
    if (!oq_config_uses_ort(&r->variant)) {
        snprintf(buf, n, "ref");
        return;
    }
    if (!strcmp(r->variant.runtime, "cpu")) {
        snprintf(buf, n, "cpu");
        return;
    }
    size_t j = 0;
    for (const char *s = r->kernel_observed; *s && j + 1 < n;) {
        if (!strncmp(s, "_ATTENTION", 10)) {
            s += 10;
            continue;
        }
        buf[j++] = (char)tolower((unsigned char)*s++);
    }
    buf[j] = '\0';
}

static void write_num(oq_csv_writer *w, double x)
{
    if (isnan(x))
        oq_csv_write_empty(w);
    else
        oq_csv_write_double(w, x);
}

static void write_mib(oq_csv_writer *w, int64_t bytes)
{
    if (bytes < 0)
        oq_csv_write_empty(w);
    else
        oq_csv_write_double(w, (double)bytes / 1048576.0);
}

static oq_status write_row(oq_csv_writer *w, const oq_bench_row *r, oq_err *err)
{
    char kernel[96];
    kernel_text(r, kernel, sizeof kernel);
    int ok = r->status == OQ_BENCH_OK;
    oq_csv_write_str(w, r->variant.name);
    oq_csv_write_str(w, oq_bench_status_name(r->status));
    oq_csv_write_str(w, r->device);
    oq_csv_write_str(w, dtype_name(r->variant.precision));
    oq_csv_write_str(w, oq_repr_name(r->variant.repr));
    oq_csv_write_str(w, kernel);
    oq_csv_write_int(w, r->masked);
    oq_csv_write_int(w, r->batch);
    oq_csv_write_int(w, r->seq_len);
    oq_csv_write_int(w, r->valid_elements);
    oq_csv_write_int(w, r->heads);
    oq_csv_write_int(w, r->head_dim);
    write_num(w, ok ? r->stats.mean : NAN);
    write_num(w, ok ? r->stats.std : NAN);
    write_num(w, ok ? r->stats.p50 : NAN);
    write_num(w, ok ? r->stats.p90 : NAN);
    write_num(w, ok ? r->stats.p99 : NAN);
    write_mib(w, r->peak_rss);
    write_mib(w, r->gpu_mem);
    write_num(w, r->max_abs_err);
    if (r->nan_count < 0)
        oq_csv_write_empty(w);
    else
        oq_csv_write_int(w, r->nan_count);
    oq_csv_write_str(w, r->error);
    return oq_csv_end_row(w, err);
}

oq_status oq_bench_rows_write_csv(const oq_bench_rows *rows, const char *path, oq_err *err)
{
    oq_csv_writer *w = NULL;
    oq_status st = oq_csv_writer_open(&w, path, oq_bench_csv_columns, OQ_BENCH_NCOLS, 1, err);
    for (size_t i = 0; !st && i < rows->n; i++) st = write_row(w, &rows->rows[i], err);
    if (st) {
        oq_csv_writer_abort(w);
        return st;
    }
    return oq_csv_writer_commit(w, err);
}
