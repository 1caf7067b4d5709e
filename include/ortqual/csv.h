/* CSV tables: reading (RFC 4180) and atomic writing, plus the documented
 * column schemas of the CSV files ortqual writes.
 *
 * Reading parses a whole file into an immutable table of strings. The first
 * record is the header; columns are found by name and values are read with
 * typed getters, which fail with a message naming the file, the line and the
 * column:
 *
 *     oq_csv *t;  size_t c_len;  long long len;
 *     if (oq_csv_read("summary.csv", &t, &err) ||
 *         oq_csv_require(t, "seq_len", &c_len, &err) ||
 *         oq_csv_get_int(t, 0, c_len, &len, &err)) ...
 *         // "summary.csv:2: column 'seq_len': 'x12' is not an integer"
 *     oq_csv_free(t);
 *
 * Accepted syntax: fields separated by commas; records end with LF or CRLF;
 * a field may be quoted with double quotes, inside which commas, CR, LF and
 * doubled quotes ("") are literal. Blank lines are skipped, a UTF-8 byte
 * order mark is skipped. Every record must have as many fields as the
 * header; header names must be unique and non-empty.
 *
 * Writing goes through an oq_csv_writer bound to a fixed column list. It
 * writes to a temporary file and renames it into place on commit (see
 * fileio.h), quotes fields only where needed, and ends records with LF.
 * Errors while writing are remembered and reported by the commit.
 */
#ifndef ORTQUAL_CSV_H
#define ORTQUAL_CSV_H

#include <stddef.h>

#include "ortqual/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Schemas ------------------------------------------------------------ */

/* bench summary.csv: one row per variant x shape, columns in exactly this
 * order (oq_bench_csv_columns[OQ_BENCH_COL_x] is the name of column x):
 *   variant         variant name as given to --variants (e.g. "cpu:attention24:fp32", "ref")
 *   status          "ok", or why the row has no measurement ("skipped", "unsupported", "oom", "failed")
 *   device          where it ran ("cpu", "cuda:0")
 *   dtype           precision of the attention inputs ("fp32", "fp16", "fp64")
 *   representation  "decomposed", "attention23", "attention24", "sdpa", "encoder", "ref", ...
 *   kernel          attention kernel observed to run ("flash", "efficient+math", ...); empty if unknown
 *   kernel_requested  kernel asked for ("auto", "flash", "efficient", "cudnn", "math")
 *   shapes          exported input shapes, "dynamic" or "static"
 *   io_binding      "device" (inputs/outputs stay in device memory, copies excluded) or "host"
 *   masked          1 when a key padding mask was applied, else 0
 *   batch           batch size
 *   seq_len         padded sequence length L (tokens)
 *   valid_elements  number of valid (unpadded) tokens summed over the batch
 *   heads, kv_heads, head_dim   query heads, key/value heads, head dimension
 *   threads         intra-op threads (0: ORT's default)
 *   inter_op_threads  inter-op threads (0: ORT's default, sequential execution)
 *   warmup, iters   untimed warm-up runs, timed runs
 *   session_ms      session creation time (never part of the statistics below)
 *   first_run_ms    the first run after session creation
 *   mean_ms std_ms min_ms p50_ms p90_ms p95_ms p99_ms p999_ms max_ms
 *                   statistics of the per-iteration wall time, milliseconds per batch
 *                   (p999: the 99.9th percentile)
 *   peak_rss_mb     process peak resident set size sampled during the timed runs, MiB (2^20 bytes)
 *   vmhwm_mb        VmHWM of the process (lifetime peak RSS), MiB
 *   peak_gpu_mb     peak GPU memory of the process (NVML), MiB; empty when not measured
 *   max_abs_err     max |output - float64 reference| over valid elements (bench --model: the
 *                   worst over the outputs compared with --expected, empty (NaN) or inf when a
 *                   NaN or Inf was compared); empty if not compared
 *   nan_count       NaN elements of the output (bench --model: of the outputs and of the
 *                   --expected values they were compared with)
 *   profile_node_ms, profile_kernel_ms
 *                   with --profile-runs: per run, ORT's node events and GPU kernel events
 *                   summed (medians); empty when not profiled or no such events
 *   dims            bench --model: the point, "name=value" joined with ';'; else empty
 *   seq_dim         bench --model: the dimension seq_len is the value of; else empty
 *   error           error message when status is not "ok", else empty; then (bench --model) each
 *                   output that compared no value, "output 'y': not compared (its 4 valid elements
 *                   are infinities the expected file holds too: inf_matched)", "; " between
 *   baseline        against --baseline (oq_bench_compare): "ok", "regressed", "untimed" or "new"
 *                   (oq_bench_match_name); empty without one, and for the reference's rows
 *   baseline_ratios new/old per limited statistic, "p50=1.02;p90=0.97"; empty where not compared
 * Older files without the columns added since (inter_op_threads, p95_ms, p999_ms, max_ms,
 * profile_*, dims, seq_dim) still read: readers find columns by name.
 * Numbers are plain decimal ("12.5", "1e-07", "nan"); an empty field means not
 * applicable or not measured. */
enum oq_bench_col {
    OQ_BENCH_COL_VARIANT,
    OQ_BENCH_COL_STATUS,
    OQ_BENCH_COL_DEVICE,
    OQ_BENCH_COL_DTYPE,
    OQ_BENCH_COL_REPRESENTATION,
    OQ_BENCH_COL_KERNEL,
    OQ_BENCH_COL_KERNEL_REQUESTED,
    OQ_BENCH_COL_SHAPES,
    OQ_BENCH_COL_IO_BINDING,
    OQ_BENCH_COL_MASKED,
    OQ_BENCH_COL_BATCH,
    OQ_BENCH_COL_SEQ_LEN,
    OQ_BENCH_COL_VALID_ELEMENTS,
    OQ_BENCH_COL_HEADS,
    OQ_BENCH_COL_KV_HEADS,
    OQ_BENCH_COL_HEAD_DIM,
    OQ_BENCH_COL_THREADS,
    OQ_BENCH_COL_INTER_OP_THREADS,
    OQ_BENCH_COL_WARMUP,
    OQ_BENCH_COL_ITERS,
    OQ_BENCH_COL_SESSION_MS,
    OQ_BENCH_COL_FIRST_RUN_MS,
    OQ_BENCH_COL_MEAN_MS,
    OQ_BENCH_COL_STD_MS,
    OQ_BENCH_COL_MIN_MS,
    OQ_BENCH_COL_P50_MS,
    OQ_BENCH_COL_P90_MS,
    OQ_BENCH_COL_P95_MS,
    OQ_BENCH_COL_P99_MS,
    OQ_BENCH_COL_P999_MS,
    OQ_BENCH_COL_MAX_MS,
    OQ_BENCH_COL_PEAK_RSS_MB,
    OQ_BENCH_COL_VMHWM_MB,
    OQ_BENCH_COL_PEAK_GPU_MB,
    OQ_BENCH_COL_MAX_ABS_ERR,
    OQ_BENCH_COL_NAN_COUNT,
    OQ_BENCH_COL_PROFILE_NODE_MS,
    OQ_BENCH_COL_PROFILE_KERNEL_MS,
    OQ_BENCH_COL_DIMS,
    OQ_BENCH_COL_SEQ_DIM,
    OQ_BENCH_COL_ERROR,
    OQ_BENCH_COL_BASELINE,
    OQ_BENCH_COL_BASELINE_RATIOS,
    OQ_BENCH_NCOLS
};
extern OQ_API const char *const oq_bench_csv_columns[OQ_BENCH_NCOLS];

/* validate validate.csv: one row per batch x configuration x output:
 *   config          configuration as given to --configs ("cpu:decomposed:fp32")
 *   output          model output name
 *   batch           batch index (0, 1, ...)
 *   valid_size      number of valid (unpadded) tokens in the batch
 *   seconds_first   wall time of the first call on this batch, seconds
 *   seconds_median  median wall time of the repeated calls, seconds
 *   max_abs_err     max |output - reference| over valid elements; empty if not compared
 *   source          where the batch came from: "generated" (events ortqual made), "inputs"
 *                   (a file of oq_validate_opts.input_files, judged against a reference that
 *                   ran) or "saved-outputs" (such a file, judged against the outputs saved
 *                   with it: the `expected` reference); added last (2026-12-06)
 * An optional extra column "status" ("ok" or why not) filters rows as in bench. */
enum oq_validate_col {
    OQ_VALIDATE_COL_CONFIG,
    OQ_VALIDATE_COL_OUTPUT,
    OQ_VALIDATE_COL_BATCH,
    OQ_VALIDATE_COL_VALID_SIZE,
    OQ_VALIDATE_COL_SECONDS_FIRST,
    OQ_VALIDATE_COL_SECONDS_MEDIAN,
    OQ_VALIDATE_COL_MAX_ABS_ERR,
    OQ_VALIDATE_COL_SOURCE,
    OQ_VALIDATE_NCOLS
};
extern OQ_API const char *const oq_validate_csv_columns[OQ_VALIDATE_NCOLS];

/* ---- Reading ------------------------------------------------------------ */

typedef struct oq_csv oq_csv;

/* Parse the file at `path`. On success *out is a table the caller frees with
 * oq_csv_free. Errors: OQ_ERR_IO (cannot read), OQ_ERR_FORMAT (syntax, field
 * count, header; the message names file and line), OQ_ERR_NOMEM. */
OQ_API oq_status oq_csv_read(const char *path, oq_csv **out, oq_err *err);
/* Parse `n` bytes of CSV text; `name` is used in messages in place of a path. */
OQ_API oq_status oq_csv_parse(const char *text, size_t n, const char *name, oq_csv **out, oq_err *err);
/* Build a table from a JSON file holding {"results": [ {col: value, ...}, ... ]}:
 * the columns are the union of the records' keys in first-seen order; strings
 * are taken as they are, numbers printed exactly, true/false as 1/0, null and
 * missing keys as empty, nested arrays and objects are ignored. "Lines" in
 * messages are then 1-based record numbers. Records with a "stats_ms" object are
 * bench rows as `ortqual bench` writes them (statistics, memory and accuracy
 * nested): they are read as the summary.csv columns instead (p50_ms from
 * stats_ms.p50, peak_rss_mb from memory.peak_rss_bytes, ...), so a bench
 * summary.json plots like its summary.csv. Errors: OQ_ERR_IO, OQ_ERR_FORMAT
 * (not JSON, no "results" array, a record that is not an object), OQ_ERR_NOMEM. */
OQ_API oq_status oq_csv_read_json(const char *path, oq_csv **out, oq_err *err);
OQ_API void oq_csv_free(oq_csv *t);

/* The name given when reading (path or `name`). Owned by the table. For a NULL table the
 * name and colname are NULL and the counts and line 0. */
OQ_API const char *oq_csv_name(const oq_csv *t);
OQ_API size_t oq_csv_nrows(const oq_csv *t);  /* data rows, header excluded */
OQ_API size_t oq_csv_ncols(const oq_csv *t);
OQ_API const char *oq_csv_colname(const oq_csv *t, size_t col);
/* Line of the file (1-based) where data row `row` starts, for messages. */
OQ_API size_t oq_csv_line(const oq_csv *t, size_t row);

/* Index of the column named `name`: 1 and *col set when present (col may be NULL), 0 when
 * not or for a NULL table or name. */
OQ_API int oq_csv_find(const oq_csv *t, const char *name, size_t *col);
/* Like oq_csv_find but a missing column is an OQ_ERR_FORMAT error naming the
 * column and the file. */
OQ_API oq_status oq_csv_require(const oq_csv *t, const char *name, size_t *col, oq_err *err);

/* Raw field text (never NULL; "" when empty, and for a NULL table). Owned by the table. Row
 * and column must be in range (checked with OQ_ASSERT). */
OQ_API const char *oq_csv_get(const oq_csv *t, size_t row, size_t col);
/* 1 when the field is empty or only blanks (and for a NULL table). */
OQ_API int oq_csv_is_empty(const oq_csv *t, size_t row, size_t col);
/* Typed getters. Leading and trailing blanks are ignored. An empty field or
 * text that is not entirely a number is OQ_ERR_FORMAT, with a message
 * "<file>:<line>: column '<name>': '<text>' is not a number". Doubles accept
 * what strtod accepts (including "nan" and "inf"); integers are base 10 and
 * must fit a long long; booleans are 1/0, true/false or yes/no (any case). */
OQ_API oq_status oq_csv_get_double(const oq_csv *t, size_t row, size_t col, double *out, oq_err *err);
OQ_API oq_status oq_csv_get_int(const oq_csv *t, size_t row, size_t col, long long *out, oq_err *err);
OQ_API oq_status oq_csv_get_bool(const oq_csv *t, size_t row, size_t col, int *out, oq_err *err);

/* ---- Writing ------------------------------------------------------------ */

typedef struct oq_csv_writer oq_csv_writer;

/* Start writing `path` (through a temporary file) with the header `columns`
 * (ncols names, copied). `overwrite` as in oq_atomic_open. */
OQ_API oq_status oq_csv_writer_open(oq_csv_writer **out, const char *path, const char *const *columns,
                                    size_t ncols, int overwrite, oq_err *err);
/* Append one field to the current record. Errors (a write failure, more
 * fields than columns) are remembered and returned by end_row and commit. */
OQ_API void oq_csv_write_str(oq_csv_writer *w, const char *s);  /* NULL writes an empty field */
OQ_API void oq_csv_write_double(oq_csv_writer *w, double v);    /* shortest text that reads back exactly */
OQ_API void oq_csv_write_int(oq_csv_writer *w, long long v);
OQ_API void oq_csv_write_empty(oq_csv_writer *w);
/* End the record; it must have exactly ncols fields (else OQ_ERR_INVALID_ARG). */
OQ_API oq_status oq_csv_end_row(oq_csv_writer *w, oq_err *err);
/* Move the file into place and free the writer (also on failure). A pending
 * error or a partial record fails the commit and leaves no file. */
OQ_API oq_status oq_csv_writer_commit(oq_csv_writer *w, oq_err *err);
/* Discard the temporary file and free the writer. NULL is allowed. */
OQ_API void oq_csv_writer_abort(oq_csv_writer *w);

#ifdef __cplusplus
}
#endif
#endif
