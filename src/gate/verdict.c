/* The verdict file: everything a reviewer needs to trust (or not) a green run. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "dispatch/dispatch-impl.h"
#include "fileio/fileio-impl.h"
#include "gate/gate-impl.h"
#include "ortqual/fileio.h"
#include "status/args-impl.h"
#include "version/version-impl.h"

static const char *verdict_name(oq_gate_verdict v)
{
    return v == OQ_GATE_PASS ? "pass" : v == OQ_GATE_FAIL ? "fail" : "error";
}

/* Text from outside (the log, the command line, paths) goes in through oq_json_text: json_string
 * refuses what is not UTF-8, and an element or pack given its NULL silently goes missing. */
static json_t *str_array(char *const *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(a, oq_json_text(v[i]));
    return a;
}

static json_t *counts_json(const oq_test_summary *s)
{
    return json_pack("{sIsIsIsIsIsIsIsI}", "passed", (json_int_t)s->passed, "failed",
                     (json_int_t)s->failed, "skipped", (json_int_t)s->skipped, "errors",
                     (json_int_t)s->errors, "xfailed", (json_int_t)s->xfailed, "xpassed",
                     (json_int_t)s->xpassed, "deselected", (json_int_t)s->deselected, "warnings",
                     (json_int_t)s->warnings);
}

static json_t *summary_json(const oq_test_summary *s)
{
    if (s->runner == OQ_RUNNER_NONE) return json_null();
    json_t *skips = json_array();
    for (size_t i = 0; i < s->n_skips; i++)
        json_array_append_new(skips, json_pack("{sosI}", "reason", oq_json_text(s->skips[i].text), "count",
                                               (json_int_t)s->skips[i].count));
    return json_pack("{sIsosbso}", "line", (json_int_t)s->line, "text", oq_json_text(s->text), "no_tests_ran",
                     s->no_tests_ran, "skip_reasons", skips);
}

static json_t *dispatch_json(const oq_gate *g, const oq_gate_result *r)
{
    if (!g->expect) return json_null();
    json_t *kernels = json_object();
    for (int k = 0; k < OQ_SDPA_COUNT_; k++)
        if (r->kernel_counts[k])
            json_object_set_new(kernels, oq_sdpa_kernel_name((oq_sdpa_kernel)k),
                                json_integer((json_int_t)r->kernel_counts[k]));
    json_t *failed = json_array();
    for (size_t i = 0; r->j.dispatch.failed && i < r->j.dispatch.n_failures; i++)
        json_array_append_new(failed, oq_dispatch_failure_json(&r->j.dispatch.failed[i]));
    return json_pack("{sosIsosbsoso}", "required",
                     str_array((char *const *)g->o.require_dispatch, g->o.n_require_dispatch),
                     "records", (json_int_t)r->dispatch_records, "kernels", kernels, "passed",
                     r->j.dispatch.passed,
                     "failures", str_array(r->j.dispatch.failures, r->j.dispatch.n_failures), "failed", failed);
}

static json_t *env_json(const oq_gate *g)
{
    json_t *o = json_object();
    for (size_t i = 0; i < g->changes.n; i++) {
        const char *kv = g->changes.v[i], *eq = strchr(kv, '=');
        char *name = strndup(kv, (size_t)(eq - kv)), *key = name ? oq_utf8_lossy(name) : NULL;
        if (key) json_object_set_new(o, key, oq_json_text(eq + 1));
        free(key);
        free(name);
    }
    return o;
}

static json_t *verdict_json(const oq_gate *g, const oq_gate_result *r)
{
    size_t argc = 0;
    while (g->o.argv[argc]) argc++;
    char start[32], end[32];
    time_t ended = g->started + (time_t)(r->duration_s + 0.5);
    strftime(start, sizeof start, "%Y-%m-%dT%H:%M:%SZ", gmtime(&g->started));
    strftime(end, sizeof end, "%Y-%m-%dT%H:%M:%SZ", gmtime(&ended));
    const oq_test_summary *s = &r->summary;
    json_t *root = json_pack(
        "{ss ss ss ss so so so so so ss so so so so}", "schema", OQ_GATE_SCHEMA, "tool", "ortqual gate", "ortqual_version",
        oq_build_version(), "verdict", verdict_name(r->j.verdict), "reasons",
        str_array(r->j.reasons, r->j.n_reasons), "command", str_array(g->o.argv, argc),
        "command_path", oq_json_text(g->cmd_path), "exit_code",
        r->exit_code >= 0 ? json_integer(r->exit_code) : json_null(), "signal",
        r->signal ? json_integer(r->signal) : json_null(), "runner",
        oq_runner_name(s->runner), "counts", counts_json(s), "summary", summary_json(s),
        "allow_skip", str_array((char *const *)g->o.allow_skip, g->o.n_allow_skip), "dispatch",
        dispatch_json(g, r));
    json_object_set_new(root, "pinned_libraries", str_array(g->pins.v, g->pins.n));
    json_object_set_new(root, "environment", env_json(g));
    json_object_set_new(root, "notes", str_array(g->notes.v, g->notes.n));
    json_object_set_new(root, "directory", oq_json_text(g->dir));
    json_object_set_new(root, "kept", json_boolean(g->o.keep));
    json_object_set_new(root, "log", oq_json_text(g->log_path));
    json_object_set_new(root, "log_bytes", json_integer((json_int_t)r->log_bytes));
    json_object_set_new(root, "start", json_string(start));
    json_object_set_new(root, "end", json_string(end));
    json_object_set_new(root, "duration_s", json_real(r->duration_s));
    json_object_set_new(root, "timeout_s", g->o.timeout_s > 0 ? json_real(g->o.timeout_s) : json_null());
    json_object_set_new(root, "timed_out", json_boolean(r->timed_out));
    return root;
}

oq_status oq_gate_write_verdict(const oq_gate *g, const oq_gate_result *r, const char *path,
                                oq_err *err)
{
    OQ_NEED(err, g);
    OQ_NEED(err, r);
    OQ_NEED(err, path);
    json_t *root = verdict_json(g, r);
    if (!root) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", path);
    oq_status st = oq_json_write_file(path, root, JSON_INDENT(2) | JSON_PRESERVE_ORDER, err);
    json_decref(root);
    return st;
}

static json_t *error_verdict_json(char *const *argv, const char *message)
{
    size_t argc = 0;
    while (argv && argv[argc]) argc++;
    json_t *reasons = json_array();
    json_array_append_new(reasons, oq_json_text(message));
    return json_pack("{ss ss ss ss so so}", "schema", OQ_GATE_SCHEMA, "tool", "ortqual gate", "ortqual_version", oq_build_version(), "verdict",
                     "error", "reasons", reasons, "command", str_array(argv, argc));
}

oq_status oq_gate_write_error_verdict(char *const *argv, const char *message, const char *path,
                                      oq_err *err)
{
    OQ_NEED(err, message);
    OQ_NEED(err, path);
    json_t *root = error_verdict_json(argv, message);
    if (!root) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", path);
    oq_status st = oq_json_write_file(path, root, JSON_INDENT(2) | JSON_PRESERVE_ORDER, err);
    json_decref(root);
    return st;
}

/* The document as indented JSON text (consumes root); NULL when out of memory. */
static char *text_of(json_t *root)
{
    char *s = root ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(root);
    return s;
}

char *oq_gate_verdict_text(const oq_gate *g, const oq_gate_result *r)
{
    return g && r ? text_of(verdict_json(g, r)) : NULL;
}

char *oq_gate_error_verdict_text(char *const *argv, const char *message)
{
    return text_of(error_verdict_json(argv, message));
}
