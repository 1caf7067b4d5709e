/* Internal to src/report: a growing text buffer with HTML/XML escaping, the report
 * writers of each summary kind, and the entry points on parsed documents. */
#ifndef ORTQUAL_REPORT_IMPL_H
#define ORTQUAL_REPORT_IMPL_H

#include <jansson.h>
#include <stddef.h>

#include <stdint.h>

#include "core/core-impl.h"
#include "ortqual/report.h"
#include "plot/figures-impl.h"
#include "ortqual/status.h"

/* A text that remembers running out of memory, so a page is written without a check
 * after every line. */
typedef struct oq_sb {
    oq_dynbuf d;
    int failed; /* out of memory: further writes are dropped, oq_sb_take gives NULL */
} oq_sb;

void oq_sb_put(oq_sb *b, const char *s, size_t n);
void oq_sb_puts(oq_sb *b, const char *s);
/* A fixed text of the report that names API fields, in the caller's words (oq_set_terms). */
void oq_sb_puts_terms(oq_sb *b, const char *s);
void oq_sb_printf(oq_sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Text escaped for HTML/XML text and attribute values: & < > " ' become entities,
 * control characters other than tab and newline (not allowed in XML 1.0) are dropped.
 * NULL writes nothing. */
void oq_sb_esc(oq_sb *b, const char *s);
void oq_sb_escf(oq_sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The buffer (caller frees) and its length; NULL when a write failed. `b` is left empty. */
char *oq_sb_take(oq_sb *b, size_t *n);
void oq_sb_free(oq_sb *b);

typedef enum oq_report_kind {
    OQ_REPORT_UNKNOWN = 0,
    OQ_REPORT_VALIDATE,    /* validate and replay: "schema": "ortqual.validate/1" */
    OQ_REPORT_BENCH,       /* "tool": "ortqual bench" with "results" */
    OQ_REPORT_CONFORMANCE, /* "schema": "ortqual.conformance/1" */
    OQ_REPORT_GATE,        /* "tool": "ortqual gate" (JUnit only) */
    OQ_REPORT_REFUSAL      /* a refused command: "schema": "ortqual-error/1" (JUnit only) */
} oq_report_kind;
oq_report_kind oq_report_kind_of(const json_t *doc);

/* The entry points of report.h on a document already parsed. */
oq_status oq_report_html_json(const json_t *summary, const char *name, char **html, size_t *n, oq_err *err);
oq_status oq_junit_xml_json(const json_t *doc, const char *name, char **xml, size_t *n, oq_err *err);
/* report.h's entry points on JSON text, for either renderer: `fn` on the document `json`
 * parses to (OQ_ERR_FORMAT naming `name` when it is not JSON), written atomically to `path`,
 * or read from the file `in` (OQ_ERR_NOT_FOUND when it cannot be read). */
typedef oq_status (*oq_render_fn)(const json_t *doc, const char *name, char **out, size_t *n, oq_err *err);
oq_status oq_render_text(oq_render_fn fn, const char *json, size_t n, const char *name, char **out, size_t *out_n,
                         oq_err *err);
oq_status oq_render_write(oq_render_fn fn, const char *json, size_t n, const char *name, const char *path,
                          oq_err *err);
oq_status oq_render_file(oq_render_fn fn, const char *in, const char *out, oq_err *err);

/* JSON access that tolerates missing keys. */
const char *oq_j_str(const json_t *o, const char *key, const char *dflt);
double oq_j_num(const json_t *o, const char *key);
long long oq_j_int(const json_t *o, const char *key);
/* A shard's summary (its "shard" block, no merged "shards"): "shard 1 of 2 by batch, of plan
 * 0123456789ab: this verdict is the shard's; the campaign's is `ortqual merge
 * DIR`'s" into buf, 1; 0 (buf "") for any other summary. Said on the page and in the JUnit: a
 * shard's green is its part's only. */
int oq_report_shard_note(const json_t *doc, char *buf, size_t n);
/* A compared element's value ("got", "expected", "abs_diff") as every table shows it, read by
 * oq_compare_value_back: "nan", "inf", "-inf" for the strings JSON holds them as (never
 * json_number_value's 0: a NaN looked like a perfect match), an exact comparison's integer in
 * every digit, else the number to 7 digits. */
void oq_html_value(oq_sb *b, const json_t *v);

/* Common parts of every report (html.c). A run's verdict is one of the words of
 * docs/verdicts.md: "passed", "failed", "error" (a runtime error, nothing failed) or
 * "untested" (nothing under test was compared); only "passed" is green. */
/* The verdict's CSS class and data-verdict value: one of the four; any other word is "failed". */
const char *oq_html_verdict_class(const char *verdict);
/* PASSED, FAILED, ERROR or NOT TESTED, as the text output says it. */
const char *oq_html_verdict_word(const char *verdict);
void oq_html_begin(oq_sb *b, const char *title, const char *verdict);
void oq_html_end(oq_sb *b);
/* The verdict banner: <header id="verdict" data-verdict="...">, "tool: WORD – headline"
 * (headline may be NULL), the reason in <p id="verdict-reason"> (when given) and one line of
 * counts in <p id="verdict-counts">. */
void oq_html_verdict(oq_sb *b, const char *tool, const char *verdict, const char *headline, const char *reason,
                     const char *detail);
/* The same in two halves, for a report that adds lines of its own to the banner in between. */
void oq_html_verdict_open(oq_sb *b, const char *tool, const char *verdict, const char *headline, const char *reason,
                          const char *detail);
void oq_html_verdict_close(oq_sb *b);
/* The exact command line, shell-quoted, from an array of arguments. */
void oq_html_command(oq_sb *b, const json_t *argv, const char *prefix, const char *cwd);
/* Environment from an evidence object (evidence.h): runtime, devices, GPUs, libraries
 * and shadowing; `configs` (may be NULL) adds what each configuration's worker loaded, `builds`
 * (may be NULL; a validate summary's evidence.onnxruntime_builds) every ONNX Runtime build they
 * ran on when there were several. */
void oq_html_environment(oq_sb *b, const json_t *evidence, const json_t *configs, const json_t *builds);
/* Each string of `from` (an evidence's "warnings") not yet in `into` appended to it: the parent
 * and every worker may record the same warning, shown once. */
void oq_html_warnings_add(json_t *into, const json_t *from);
/* <section id="notes">: the run's notes ({"kind", "text"}; NULL for none) and the warnings of
 * its evidence (strings), escaped; nothing when both are empty. */
void oq_html_notes(oq_sb *b, const json_t *notes, const json_t *warnings);
/* Every figure of the summary, inlined as SVG; a figure that cannot be drawn is named with why,
 * and a run with nothing to draw (nothing compared or timed) says so in <p id="no-figures">. */
void oq_html_figures(oq_sb *b, const json_t *summary, const char *name);
/* ONNX Runtime's refusal of a model explained (refusal.h; a summary's "refusal" object):
 * <div class="refusal" data-pattern="ID"> with the node, inputs, why and fix, and `raw`
 * (ORT's own message; may be NULL) folded in a <details class="raw">. */
void oq_html_refusal(oq_sb *b, const json_t *refusal, const char *raw);
/* Table cells: text, and a status word (class "status <word>", coloured by the style). */
void oq_html_td(oq_sb *b, const char *s);
void oq_html_td_status(oq_sb *b, const char *s);
/* <tr class="config[ CLS]" data-config="NAME">: a row of the main table, found by name; CLS
 * ("failed", "error"; NULL for none) tints it. */
void oq_html_row_begin(oq_sb *b, const char *name, const char *cls);
/* Numbers for people: "1.49e-06", "0.0423", "12.5". */
void oq_html_num(oq_sb *b, double v);

/* ---- a validate summary's batch records, counted one at a time (validate_digest.c) ---- */

#define OQ_VD_ROWS_ALL 50  /* a configuration's batch rows: every one of up to 50 that ran ... */
#define OQ_VD_ROWS_EACH 25 /* ... else the first 25 failing and the 25 slowest of the others */

typedef struct oq_vd_config {
    size_t n, ran, cached;             /* records; that ran; whose reference came from the cache */
    double first_ms;                   /* the first record's first call */
    double median_ms, p90_ms;          /* over the records' median calls (NAN: none) */
    double *medians;                   /* ms, until the percentiles (8 bytes a record) */
    size_t n_medians;
    const char *worst_output;          /* the output with the largest |error| (NULL: none compared) */
    json_t *worst_rec;                 /* the record it names */
    double worst_abs;
    long long over, nan, inf, pad, pad_reported, valid; /* summed over records and outputs */
    json_t *first, *failing;           /* candidate rows: the first records, the first failing */
    json_t *slow[OQ_VD_ROWS_EACH];     /* the slowest of the others */
    double slow_ms[OQ_VD_ROWS_EACH];
    size_t n_slow;
    json_t *rows;                      /* the rows shown, in index order */
    json_t *notes;                     /* padding not zero and not judged: {output, nonzero,
                                          padded, batch, rule}, the first record of each output */
    oq_batch_sample sample;            /* the latency figure's points */
    json_t *contra;                    /* the first record whose outputs would contradict a pass
                                          (oq_compare_batch_holds), or NULL */
} oq_vd_config;

typedef struct oq_vd {
    size_t n_configs;
    oq_vd_config *configs;
    size_t n_batches;                  /* the top-level batch list: its length and sums */
    long long events, valid;
    json_t *infos;                     /* its first OQ_VD_ROWS_ALL entries */
    int64_t *need;                     /* sorted: the indices the rows and points name */
    size_t n_need;
    json_t *needed_infos;              /* {index, info} of those, sorted */
} oq_vd;
/* Empty, with n_configs configurations (0: as records name them); 0 when out of memory. */
int oq_vd_init(oq_vd *d, size_t n_configs);
/* Configuration `config`'s next record (d keeps what it shows with json_incref). */
oq_status oq_vd_add(oq_vd *d, size_t config, json_t *rec, oq_err *err);
/* From a document in memory (every record in it). */
oq_status oq_vd_of_doc(oq_vd *d, const json_t *doc, oq_err *err);
/* From summary.json read twice by oq_json_scan_file; returns the document without its records,
 * each configuration's "batches" the latency figure's sample ("batches_total": of how many). */
json_t *oq_vd_scan(oq_vd *d, const char *path, oq_err *err);
/* The same with every configuration's records added already (oq_vd_add, in summary.json's
 * order): summary.json read once, its records walked over unparsed. */
json_t *oq_vd_scan_rest(oq_vd *d, const char *path, oq_err *err);
/* DIR/report.html of DIR/summary.json, whose records `d` counted (oq_vd_scan_rest). */
oq_status oq_report_write_counted(const char *dir, oq_vd *d, oq_err *err);
void oq_vd_clear(oq_vd *d);
/* The batch list's entry of that index (NULL: not kept). */
const json_t *oq_vd_info(const oq_vd *d, long long index);
int oq_vd_batch_ran(const json_t *bt);
/* A configuration's status: "reference" for a reference that ran (a summary written before that
 * word said "passed" for it: never shown or counted as a pass), else its own ("failed": none). */
const char *oq_vd_status(const json_t *cfg);
int oq_vd_padding_judged(const json_t *o);

/* Kind writers. */
/* A validate summary the report can stand on: its "configs" an array, and a "passed" verdict with a
 * configuration under test that passed. */
oq_status oq_report_validate_check(const json_t *summary, const char *name, oq_err *err);
oq_status oq_report_validate(oq_sb *b, const json_t *summary, const char *name, oq_err *err);
/* The same with the batch records counted already (d), the document's own left unread. */
oq_status oq_report_validate_vd(oq_sb *b, const json_t *summary, const oq_vd *d, const char *name, oq_err *err);
/* A bench summary the report can stand on (bench_check.c): rows, each key with the JSON type
 * ortqual bench writes; else OQ_ERR_FORMAT "NAME: results[3].stats_ms.p50: want a number ...". */
oq_status oq_report_bench_check(const json_t *summary, const char *name, oq_err *err);
oq_status oq_report_bench(oq_sb *b, const json_t *summary, const char *name, oq_err *err);
oq_status oq_report_conformance(oq_sb *b, const json_t *summary, const char *name, oq_err *err);

#endif
