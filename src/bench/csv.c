/* summary.csv through the CSV layer (csv.h), columns as oq_bench_csv_columns. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/core-impl.h"
#include "csv/csv-impl.h"
#include "ortqual/bench.h"

#include "ortqual/compare.h"
#include "ortqual/csv.h"
#include "status/args-impl.h"

/* summary.json's kernel_observed, short: "FLASH_ATTENTION+MATH" -> "flash+math"; empty where it is
 * null (the CPU EP and the reference name no kernel: "cpu" here read as one observed). */
static void kernel_text(const oq_bench_row *r, char *buf, size_t n)
{
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

static void write_count(oq_csv_writer *w, int64_t n)
{
    if (n < 0)
        oq_csv_write_empty(w);
    else
        oq_csv_write_int(w, n);
}

/* Statistics of the rows that were timed (NAN otherwise): a bench --model row that
 * failed its comparison with --expected keeps its timings. */
static double stat(const oq_bench_row *r, double x) { return r->n_samples ? x : NAN; }

/* "batch=2;seq=128", names escaped as plot reads them */
static void dims_text(const oq_bench_row *r, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < r->n_dims; i++)
        used = oq_csv_dims_append(buf, n, used, ";", r->dims[i].name, (long long)r->dims[i].value);
}

/* The row against the baseline: "p50=1.02;p90=0.97" (new/old per limited statistic). */
static void ratios_text(const oq_bench_comparison *c, const oq_bench_row_ratio *e, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t k = 0; e && k < c->limits.n && used < n; k++)
        if (!isnan(e->ratio[k]))
            used += (size_t)snprintf(buf + used, n - used, "%s%s=%.4g", used ? ";" : "", c->limits.limit[k].stat,
                                     e->ratio[k]);
}

/* The comparison's entry of row i (NULL: no baseline, or a row not compared, the reference's). */
static const oq_bench_row_ratio *entry_of(const oq_bench_comparison *c, size_t i)
{
    for (size_t k = 0; c && k < c->n; k++)
        if (c->entries[k].row == i) return &c->entries[k];
    return NULL;
}

/* The row's error, then the outputs that compared no value (every valid element an infinity
 * the expected file holds too), in the console's words: "output 'y': not compared (its 4 valid
 * elements are infinities the expected file holds too: inf_matched)", "; " between. The row's
 * max_abs_err leaves those outputs out (empty where no output compared a value), so without this
 * the file gave a number or a blank for them. 0, or nonzero when out of memory. */
static int write_error(oq_csv_writer *w, const oq_bench_row *r)
{
    oq_dynbuf text = {0};
    int bad = oq_dynbuf_add(&text, r->error) != OQ_OK;
    for (size_t k = 0; !bad && k < r->n_outputs; k++)
        if (oq_bench_output_judged_nothing(&r->outputs[k]))
            bad = oq_dynbuf_addf(&text, "%soutput '%s': " OQ_COMPARE_NOT_COMPARED_FMT, text.len ? "; " : "",
                                 r->outputs[k].name, (long long)r->outputs[k].inf_matched, "the expected file") != OQ_OK;
    if (!bad) oq_csv_write_str(w, text.buf ? text.buf : "");
    oq_dynbuf_clear(&text);
    return bad;
}

/* 0, or nonzero when out of memory. */
static int write_col(oq_csv_writer *w, const oq_bench_row *r, const oq_bench_comparison *c,
                     const oq_bench_row_ratio *e, int col)
{
    char kernel[96], dims[1024];
    switch ((enum oq_bench_col)col) {
    case OQ_BENCH_COL_VARIANT: oq_csv_write_str(w, r->variant.name); break;
    case OQ_BENCH_COL_STATUS: oq_csv_write_str(w, oq_bench_status_name(r->status)); break;
    case OQ_BENCH_COL_DEVICE: oq_csv_write_str(w, r->device); break;
    case OQ_BENCH_COL_DTYPE: oq_csv_write_str(w, oq_precision_name(r->variant.precision)); break;
    case OQ_BENCH_COL_REPRESENTATION: oq_csv_write_str(w, oq_repr_name(r->variant.repr)); break;
    case OQ_BENCH_COL_KERNEL:
        kernel_text(r, kernel, sizeof kernel);
        oq_csv_write_str(w, kernel);
        break;
    case OQ_BENCH_COL_KERNEL_REQUESTED: oq_csv_write_str(w, oq_kernel_name(r->variant.kernel)); break;
    case OQ_BENCH_COL_SHAPES:
        oq_csv_write_str(w, r->static_shapes < 0 ? NULL : r->static_shapes ? "static" : "dynamic");
        break;
    case OQ_BENCH_COL_IO_BINDING: oq_csv_write_str(w, oq_io_binding_name(r->io)); break;
    case OQ_BENCH_COL_MASKED: oq_csv_write_int(w, r->masked); break;
    case OQ_BENCH_COL_BATCH: oq_csv_write_int(w, r->batch); break;
    case OQ_BENCH_COL_SEQ_LEN: oq_csv_write_int(w, r->seq_len); break;
    case OQ_BENCH_COL_VALID_ELEMENTS: write_count(w, r->valid_tokens); break;
    case OQ_BENCH_COL_HEADS: write_count(w, r->heads); break;
    case OQ_BENCH_COL_KV_HEADS: write_count(w, r->kv_heads); break;
    case OQ_BENCH_COL_HEAD_DIM: write_count(w, r->head_dim); break;
    case OQ_BENCH_COL_THREADS: oq_csv_write_int(w, r->threads); break;
    case OQ_BENCH_COL_INTER_OP_THREADS: oq_csv_write_int(w, r->inter_op_threads); break;
    case OQ_BENCH_COL_WARMUP: oq_csv_write_int(w, (long long)r->warmup); break;
    case OQ_BENCH_COL_ITERS: oq_csv_write_int(w, (long long)r->iters); break;
    case OQ_BENCH_COL_SESSION_MS: write_num(w, r->session_ms); break;
    case OQ_BENCH_COL_FIRST_RUN_MS: write_num(w, r->first_run_ms); break;
    case OQ_BENCH_COL_MEAN_MS: write_num(w, stat(r, r->stats.mean)); break;
    case OQ_BENCH_COL_STD_MS: write_num(w, stat(r, r->stats.std)); break;
    case OQ_BENCH_COL_MIN_MS: write_num(w, stat(r, r->stats.min)); break;
    case OQ_BENCH_COL_P50_MS: write_num(w, stat(r, r->stats.p50)); break;
    case OQ_BENCH_COL_P90_MS: write_num(w, stat(r, r->stats.p90)); break;
    case OQ_BENCH_COL_P95_MS: write_num(w, stat(r, r->stats.p95)); break;
    case OQ_BENCH_COL_P99_MS: write_num(w, stat(r, r->stats.p99)); break;
    case OQ_BENCH_COL_P999_MS: write_num(w, stat(r, r->stats.p999)); break;
    case OQ_BENCH_COL_MAX_MS: write_num(w, stat(r, r->stats.max)); break;
    case OQ_BENCH_COL_PEAK_RSS_MB: write_mib(w, r->peak_rss); break;
    case OQ_BENCH_COL_VMHWM_MB: write_mib(w, r->vmhwm); break;
    case OQ_BENCH_COL_PEAK_GPU_MB: write_mib(w, r->gpu_mem); break;
    case OQ_BENCH_COL_MAX_ABS_ERR: write_num(w, r->max_abs_err); break;
    case OQ_BENCH_COL_NAN_COUNT: write_count(w, r->nan_count); break;
    case OQ_BENCH_COL_PROFILE_NODE_MS: write_num(w, r->profile.runs ? r->profile.node_ms : NAN); break;
    case OQ_BENCH_COL_PROFILE_KERNEL_MS: write_num(w, r->profile.runs ? r->profile.kernel_ms : NAN); break;
    case OQ_BENCH_COL_DIMS:
        dims_text(r, dims, sizeof dims);
        oq_csv_write_str(w, dims);
        break;
    case OQ_BENCH_COL_SEQ_DIM: oq_csv_write_str(w, r->seq_dim); break;
    case OQ_BENCH_COL_ERROR: return write_error(w, r);
    case OQ_BENCH_COL_BASELINE: oq_csv_write_str(w, e ? oq_bench_match_name(e->match) : NULL); break;
    case OQ_BENCH_COL_BASELINE_RATIOS:
        ratios_text(c, e, dims, sizeof dims);
        oq_csv_write_str(w, dims);
        break;
    default: oq_csv_write_empty(w); break;
    }
    return 0;
}

static oq_status write_row(oq_csv_writer *w, const oq_bench_rows *rows, size_t i, oq_err *err)
{
    const oq_bench_row_ratio *e = entry_of(rows->baseline, i);
    for (int c = 0; c < OQ_BENCH_NCOLS; c++)
        if (write_col(w, &rows->rows[i], rows->baseline, e, c))
            return oq_err_set(err, OQ_ERR_NOMEM, "out of memory (row %zu of the CSV)", i);
    return oq_csv_end_row(w, err);
}

oq_status oq_bench_rows_write_csv(const oq_bench_rows *rows, const char *path, oq_err *err)
{
    OQ_NEED(err, rows);
    OQ_NEED(err, path);
    oq_csv_writer *w = NULL;
    oq_status st = oq_csv_writer_open(&w, path, oq_bench_csv_columns, OQ_BENCH_NCOLS, 1, err);
    for (size_t i = 0; !st && i < rows->n; i++) st = write_row(w, rows, i, err);
    if (st) {
        oq_csv_writer_abort(w);
        return st;
    }
    return oq_csv_writer_commit(w, err);
}
