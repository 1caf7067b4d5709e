/* Reports for people and for CI systems, rendered from a summary document alone.
 *
 * Every run that writes a summary.json (validate, replay, bench, conformance)
 * gets a report.html beside it: one self-contained file (inline CSS and SVG
 * figures, no scripts, no network: a Content-Security-Policy forbids loading
 * anything) with the verdict, a table of configurations with per-batch and
 * per-output details, the dispatch and placement evidence per attention node,
 * the figures (plot.h), the advice, the environment (ONNX Runtime build,
 * execution providers and devices, loaded CUDA/cuDNN libraries, shadowing
 * warnings) and the exact command line. Everything that comes from files or
 * models (names, paths, messages) is escaped.
 *
 *     oq_err err;
 *     if (oq_report_write_dir("ortqual-out/run1", &err)) fprintf(stderr, "%s\n", err.msg);
 *     if (oq_junit_write_summary("ortqual-out/run1/summary.json", "junit.xml", &err)) ...
 *
 * JUnit XML lets CI systems (GitLab, Jenkins, GitHub) show the results
 * natively: validate and replay give one test suite per configuration and one
 * test case per batch (plus dispatch and placement cases where those checks
 * ran); conformance one case per ONNX backend test; gate one case for the
 * command's verdict and one per skip reason.
 *
 * The readers take the documents as written by this version of ortqual and
 * tolerate missing keys (older summaries render with what they have).
 */
#ifndef ORTQUAL_REPORT_H
#define ORTQUAL_REPORT_H

#include <stddef.h>

#include "ortqual/plot.h"
#include "ortqual/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The schema of conformance summaries (validate's is OQ_VALIDATE_SCHEMA, bench's
 * OQ_BENCH_SCHEMA, gate's OQ_GATE_SCHEMA). Version 2 names the run's times "start" and "end"
 * (ISO 8601 UTC) as every document does; version 1 had "created" (the end), still read. */
#define OQ_CONFORMANCE_SCHEMA "ortqual.conformance/2"

/* The documents are given as JSON text: `json` of `n` bytes; `name` names the document in
 * messages (its path). */

/* report.html of a summary in memory: *html is malloc'd, NUL-terminated (caller frees).
 * Errors: OQ_ERR_FORMAT (not JSON, or not a summary with a report: unknown kind, or
 * gate), OQ_ERR_NOMEM. */
OQ_API oq_status oq_report_html(const char *json, size_t n, const char *name, char **html, size_t *html_n,
                                oq_err *err);

/* The one entry point for a run directory: read DIR/summary.json and write
 * DIR/report.html atomically (a temporary file renamed). Used after every run, by
 * `ortqual report DIR`, and by tools that produce a summary.json themselves (e.g. after
 * merging shards). Errors: OQ_ERR_NOT_FOUND (no DIR/summary.json), OQ_ERR_FORMAT (not
 * JSON, not a summary), OQ_ERR_IO (cannot write report.html), OQ_ERR_NOMEM. */
OQ_API oq_status oq_report_write_dir(const char *dir, oq_err *err);
/* oq_report_write_dir with the caller's n `warnings` (one line each: what it could not check of
 * the summary, `ortqual report` of a merged summary whose plan is not beside it,
 * oq_validate_merged_check) listed on the page among the evidence's warnings (its Notes): a page
 * read later says what its verdict was not held to. warnings may be NULL when n is 0. */
OQ_API oq_status oq_report_write_dir_warned(const char *dir, const char *const *warnings, size_t n_warnings,
                                            oq_err *err);

/* The figures of the summary.json at `path` as report.html draws them, read as
 * oq_report_write_dir reads it: a validate or replay summary's batch records one at a time,
 * each configuration's latency points an evenly spaced sample of at most 600 batches (all of
 * them up to 600), so memory and figures do not grow with the batches (a summary from before the
 * outputs were aggregated per configuration is read whole: its comparisons are in its batch
 * records). *out is NULL (OQ_OK) for
 * a JSON document that is not a validate or replay summary (a bench summary.json: its figures
 * come from oq_figures_from_tables). Errors: OQ_ERR_NOT_FOUND (cannot open), OQ_ERR_FORMAT (not
 * JSON, a bad record), OQ_ERR_NOMEM. What `ortqual plot` draws for a validate summary. */
OQ_API oq_status oq_figures_from_summary_file(const char *path, const oq_plot_options *opt, oq_figures **out,
                                              oq_err *err);

/* JUnit XML of a validate/replay, conformance or gate document, or of a refused command's
 * error document ("schema": "ortqual-error/1": one <error> case saying why), in memory (*xml
 * malloc'd, NUL-terminated) or written atomically to `path`. The XML follows the
 * common JUnit schema (tests/data/junit/jenkins-junit.xsd, Jenkins' dtkit junit-4):
 * <testsuites> with one <testsuite> per configuration (or one per run), <testcase name
 * classname time> holding <failure message type>, <error> or <skipped>. Errors as
 * oq_report_html (bench has no JUnit: its rows are measurements, not checks). */
OQ_API oq_status oq_junit_xml(const char *json, size_t n, const char *name, char **xml, size_t *xml_n,
                              oq_err *err);
OQ_API oq_status oq_junit_write(const char *json, size_t n, const char *name, const char *path, oq_err *err);
/* The same from a summary file (its path names it in messages). OQ_ERR_NOT_FOUND when it
 * cannot be read. */
OQ_API oq_status oq_junit_write_summary(const char *summary_path, const char *path, oq_err *err);

#ifdef __cplusplus
}
#endif
#endif
