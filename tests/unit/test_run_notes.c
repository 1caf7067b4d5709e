/* A run's notes (what it said once before it ran) in summary.json, read back for a merge (each
 * once, a summary without them read as none) and shown by report.html: kept beside the public
 * summary, which has no member for them (the ABI). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/validate.h"
#include "report/report-impl.h"
#include "validate/validate-impl.h"
#define TESTUTIL_REPORT_HTML
#include "testutil.h"

#define FIX OQ_SOURCE_DIR "/tests/fixtures/"
#define LOOSE "sq.onnx computes in float32 (no attention or output of it is float16 or bfloat16); <fp16>"
#define RT "rt.onnx: Gather 'g': its indices 'ind' are computed at run time"

static json_t *load(const char *path)
{
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (!j) fail_msg("%s: %s", path, je.text);
    return j;
}

/* path's summary read as a merge reads a shard's, its notes added to *n. */
static oq_status read_notes(const char *dir, const char *path, oq_run_notes *n, oq_err *err)
{
    char prefix[512];
    snprintf(prefix, sizeof prefix, "%s/rec_", dir);
    oq_validate_summary *s = NULL;
    char **records = NULL;
    size_t n_records = 0;
    oq_status st = oq_validate_summary_read_spilled(path, prefix, &s, &records, &n_records, n, err);
    for (size_t k = 0; k < n_records; k++) free(records[k]);
    free(records);
    oq_validate_summary_free(s);
    return st;
}

static void test_notes_written_and_read_once(void **state)
{
    (void)state;
    char *dir = temp_dir("notes");
    char path[512];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    oq_validate_summary *s = calloc(1, sizeof *s);
    oq_run_notes said = {0}, back = {0};
    oq_err err = {0};
    assert_int_equal(oq_run_notes_add(&said, "tolerance_looser", LOOSE, &err), OQ_OK);
    assert_int_equal(oq_run_notes_add(&said, "indices_unchecked", RT, &err), OQ_OK);
    assert_int_equal(oq_run_notes_add(&said, "tolerance_looser", LOOSE, &err), OQ_OK); /* again: once */
    assert_int_equal(said.n, 2);
    oq_spilled sp = {.notes = &said};
    assert_int_equal(oq_summary_write(s, &sp, path, &err), OQ_OK);
    json_t *doc = load(path);
    const json_t *notes = json_object_get(doc, "notes");
    assert_int_equal(json_array_size(notes), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(notes, 0), "kind")), "tolerance_looser");
    assert_string_equal(json_string_value(json_object_get(json_array_get(notes, 0), "text")), LOOSE);
    assert_string_equal(json_string_value(json_object_get(json_array_get(notes, 1), "kind")), "indices_unchecked");
    /* two shards that each said them: a merge keeps each once */
    assert_int_equal(read_notes(dir, path, &back, &err), OQ_OK);
    assert_int_equal(read_notes(dir, path, &back, &err), OQ_OK);
    assert_int_equal(back.n, 2);
    assert_string_equal(back.text[1], RT);
    /* a summary written before notes were kept: read, none */
    json_object_del(doc, "notes");
    assert_int_equal(json_dump_file(doc, path, 0), 0);
    oq_run_notes_clear(&back);
    assert_int_equal(read_notes(dir, path, &back, &err), OQ_OK);
    assert_int_equal(back.n, 0);
    /* a malformed entry: refused, naming the file */
    json_object_set_new(doc, "notes", json_pack("[{s:s}]", "kind", "x"));
    assert_int_equal(json_dump_file(doc, path, 0), 0);
    assert_int_equal(read_notes(dir, path, &back, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "summary.json: notes[0] has no string \"kind\" and \"text\""));
    /* no notes: an empty array, not a missing key */
    assert_int_equal(oq_summary_write(s, NULL, path, &err), OQ_OK);
    json_decref(doc);
    doc = load(path);
    assert_true(json_is_array(json_object_get(doc, "notes")));
    assert_int_equal(json_array_size(json_object_get(doc, "notes")), 0);
    json_decref(doc);
    oq_run_notes_clear(&said);
    oq_run_notes_clear(&back);
    oq_validate_summary_free(s);
    remove_dir(dir);
}

/* A caller's note list that is not one: refused naming it, before anything is written. */
static void test_run_noted_refuses_bad_lists(void **state)
{
    (void)state;
    char *dir = temp_dir("noted");
    oq_validate_opts o;
    oq_validate_opts_default(&o);
    o.outdir = dir;
    oq_validate_summary *s = NULL;
    oq_err err = {0};
    const char *kinds[] = {"k"}, *texts[] = {NULL}, *empty[] = {""};
    assert_int_equal(oq_validate_run_noted(&o, NULL, texts, 1, &s, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "oq_validate_run_noted: note_kinds is NULL with n_notes 1");
    assert_int_equal(oq_validate_run_noted(&o, kinds, texts, 1, &s, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "oq_validate_run_noted: note 0 has a NULL text");
    assert_int_equal(oq_validate_run_noted(&o, empty, kinds, 1, &s, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "oq_validate_run_noted: note 0 has no kind");
    assert_null(s);
    assert_int_equal(dir_entries(dir), 0);
    remove_dir(dir);
}

static void test_report_shows_notes(void **state)
{
    (void)state;
    json_t *doc = load(FIX "validate/pass.json"); /* written before notes were kept */
    char *html = html_of(doc);
    assert_null(strstr(html, "id=\"notes\""));
    free(html);
    json_object_set_new(doc, "notes", json_pack("[{s:s, s:s}]", "kind", "tolerance_looser", "text", LOOSE));
    html = html_of(doc);
    assert_non_null(strstr(html, "<a href=\"#notes\">notes</a>"));
    assert_non_null(strstr(html, "<section id=\"notes\">\n<h2>Notes</h2>\n<ul>\n<li class=\"note\"><code>tolerance_looser"
                                 "</code> sq.onnx computes in float32 (no attention or output of it is float16 or "
                                 "bfloat16); &lt;fp16&gt;</li>"));
    free(html);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_notes_written_and_read_once),
        cmocka_unit_test(test_run_noted_refuses_bad_lists),
        cmocka_unit_test(test_report_shows_notes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
