/* A run's notes (validate-impl.h): what it said once before running, kept for summary.json,
 * merge and report.html beside the public summary, which has no member for them (the ABI). */
#include <stdlib.h>
#include <string.h>

#include "fileio/fileio-impl.h"
#include "validate/validate-impl.h"

static int held(const oq_run_notes *n, const char *kind, const char *text)
{
    for (size_t i = 0; i < n->n; i++)
        if (!strcmp(n->kind[i], kind) && !strcmp(n->text[i], text)) return 1;
    return 0;
}

oq_status oq_run_notes_add(oq_run_notes *n, const char *kind, const char *text, oq_err *err)
{
    if (held(n, kind, text)) return OQ_OK; /* a merge's shards each say the run's notes */
    size_t had = n->n, had_text = n->n;
    oq_status st = oq_strv_push(&n->kind, &n->n, kind);
    if (!st && (st = oq_strv_push(&n->text, &had_text, text))) {
        free(n->kind[had]); /* the pair stays whole */
        n->n = had;
    }
    return st ? oq_err_set(err, st, "out of memory") : OQ_OK;
}

void oq_run_notes_clear(oq_run_notes *n)
{
    for (size_t i = 0; i < n->n; i++) {
        free(n->kind[i]);
        free(n->text[i]);
    }
    free(n->kind);
    free(n->text);
    memset(n, 0, sizeof *n);
}

json_t *oq_run_notes_json(const oq_run_notes *n)
{
    json_t *a = json_array();
    for (size_t i = 0; n && i < n->n; i++)
        json_array_append_new(a, json_pack("{s:s, s:o}", "kind", n->kind[i], "text", oq_json_text(n->text[i])));
    return a;
}

oq_status oq_run_notes_back(const json_t *a, oq_run_notes *n, const char *path, oq_err *err)
{
    size_t i;
    const json_t *e;
    if (a && !json_is_array(a)) return oq_err_set(err, OQ_ERR_FORMAT, "%s: \"notes\" is not an array", path);
    json_array_foreach(a, i, e) {
        const char *kind = json_string_value(json_object_get(e, "kind"));
        const char *text = json_string_value(json_object_get(e, "text"));
        if (!kind || !text)
            return oq_err_set(err, OQ_ERR_FORMAT, "%s: notes[%zu] has no string \"kind\" and \"text\"", path, i);
        oq_status st = oq_run_notes_add(n, kind, text, err);
        if (st) return st;
    }
    return OQ_OK; /* a summary written before notes were kept has none */
}
