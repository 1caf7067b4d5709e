/* The reference cache's records (src/validate/refcache.c): one in the layout oq_refcache_put
 * writes is read without a parse, and must say exactly what a parse would; any other is parsed
 * and judged as before. A record holds its batch's key: under another batch's KEY it is
 * refused, and it cannot name another batch's outputs (their file is named by the key). An
 * entry stored again keeps its files; a FIFO or a link in an entry's place is refused without
 * waiting on it, and replaced when the entry is stored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "core/core-impl.h"
#include "fileio/fileio-impl.h"
#include "npz/npz-impl.h"
#include "ortqual/fileio.h"
#include "ortqual/npz.h"
#include "validate/validate-impl.h"

typedef struct fixture {
    char *dir;
    oq_validate_plan plan;
    oq_refcache c;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->dir = temp_dir("refcache");
    oq_err e = {0};
    assert_int_equal(oq_config_parse("ref:encoder:fp64", &f->plan.config, &e), OQ_OK);
    f->plan.is_reference = 1;
    f->plan.cache_dir = f->dir;
    f->plan.heads = 4;
    char *names[] = {"features \"quoted\"\t", "mask"}, *members[] = {"features", "mask"};
    f->plan.n_inputs = 2; /* the key text then holds characters its JSON string escapes */
    f->plan.input_names = names;
    f->plan.input_members = members;
    assert_int_equal(oq_refcache_open(&f->plan, &f->c, &e), OQ_OK);
    f->plan.input_names = f->plan.input_members = NULL;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    oq_refcache_close(&f->c);
    remove_dir(f->dir);
    free(f);
    return 0;
}

/* The .npz bytes of tensors named `names` (NULL-ended), each of shape `shapes[i]` (ndims[i]). */
static unsigned char *outputs_npz(const char *const *names, const int32_t *ndims, const int64_t (*shapes)[3],
                                  oq_dtype dtype, size_t *n)
{
    oq_tensor *t[4] = {0};
    size_t k = 0;
    oq_err e = {0};
    for (; names[k]; k++) assert_int_equal(oq_tensor_create(&t[k], dtype, ndims[k], shapes[k], names[k], &e), OQ_OK);
    unsigned char *buf = NULL;
    assert_int_equal(oq_npz_bytes(k, (const oq_tensor *const *)t, 0, "outputs", &buf, n, &e), OQ_OK);
    for (size_t i = 0; i < k; i++) oq_tensor_free(t[i]);
    return buf;
}

static char *file_text(const char *path, size_t *n)
{
    unsigned char *buf = NULL;
    assert_int_equal(oq_read_file(path, &buf, n, NULL), OQ_OK);
    return (char *)buf;
}

/* Stores the outputs under a key of its own; returns the record's path. Then: the record holds
 * the key text KEY hashes, its text is put's layout (fast: whether it is read without a parse)
 * and reading it back gives the same bytes with no warning. */
static void put_and_get(fixture *f, const char *inputs_sha, const unsigned char *npz, size_t n, int64_t batch,
                        int fast, char *record, size_t rn)
{
    char key[65], sha[65], warning[1400];
    oq_err e = {0};
    oq_refcache_key(&f->c, inputs_sha, key);
    assert_int_equal(oq_refcache_put(&f->c, inputs_sha, npz, n, &e), OQ_OK);
    snprintf(record, rn, "%s/%s.json", f->dir, key);
    size_t tn = 0;
    char *text = file_text(record, &tn);
    /* the record holds the batch's key text, which KEY hashes: its inputs named last */
    json_t *rec = json_loads(text, 0, NULL);
    const char *key_text = json_string_value(json_object_get(rec, "key"));
    char inputs_line[80], key_sha[65];
    snprintf(inputs_line, sizeof inputs_line, "inputs %s\n", inputs_sha);
    assert_non_null(key_text);
    assert_string_equal(key_text + strlen(key_text) - strlen(inputs_line), inputs_line);
    oq_sha256_buf(key_text, strlen(key_text), key_sha);
    assert_string_equal(key_sha, key);
    json_decref(rec);
    oq_sha256_buf(npz, n, sha);
    oq_npz *z = NULL;
    assert_int_equal(oq_npz_parse(npz, n, "outputs", &z, &e), OQ_OK);
    assert_int_equal(oq_refcache_record_is(&f->c, inputs_sha, text, tn, sha, z), fast);
    oq_npz_free(z);
    free(text);
    oq_refcache_hit hit;
    oq_refcache_get(&f->c, inputs_sha, batch, &hit, warning, sizeof warning);
    assert_string_equal(warning, "");
    assert_non_null(hit.npz);
    assert_int_equal(hit.n, n);
    assert_memory_equal(hit.npz, npz, n);
    char path[4400];
    snprintf(path, sizeof path, "%s/%s.npz", f->dir, key);
    assert_string_equal(hit.path, path); /* the file read, by name: the key's */
    free(hit.npz);
}

static const char *sha_of(char c)
{
    static char s[65];
    memset(s, c, 64);
    s[64] = 0;
    return s;
}

static void test_written_records_read_without_parse(void **state)
{
    fixture *f = *state;
    char record[4400];
    const char *two[] = {"cls", "reg", NULL};
    const int32_t nd2[] = {3, 3};
    const int64_t sh2[][3] = {{3, 88, 6}, {3, 88, 4}};
    size_t n;
    unsigned char *npz = outputs_npz(two, nd2, sh2, OQ_DTYPE_FLOAT64, &n);
    put_and_get(f, sha_of('a'), npz, n, 3, 1, record, sizeof record);
    free(npz);
    /* one dimension, a zero-length axis, float32 */
    const char *one[] = {"y_0", NULL};
    const int32_t nd1[] = {2};
    const int64_t sh1[][3] = {{2, 0}};
    npz = outputs_npz(one, nd1, sh1, OQ_DTYPE_FLOAT32, &n);
    put_and_get(f, sha_of('b'), npz, n, 2, 1, record, sizeof record);
    free(npz);
    /* a scalar (no axis: an empty shape list), batch size unknown */
    const int32_t nd0[] = {0};
    const int64_t sh0[][3] = {{0}};
    npz = outputs_npz(one, nd0, sh0, OQ_DTYPE_FLOAT64, &n);
    put_and_get(f, sha_of('c'), npz, n, 0, 1, record, sizeof record);
    free(npz);
}

/* Entries that agree with their records but are not the reference's (the plan names its outputs,
 * float64): another name, float32 values, a missing or an extra output are ignored with the
 * reason; the reference's own are used. */
static void test_entries_not_the_reference(void **state)
{
    fixture *f = *state;
    char *outputs[] = {"cls", "reg"};
    f->c.outputs = outputs;
    f->c.n_outputs = 2;
    const int32_t nd[] = {3, 3, 3};
    const int64_t sh[][3] = {{3, 8, 6}, {3, 8, 4}, {3, 8, 1}};
    struct {
        const char *names[4];
        oq_dtype dtype;
        const char *why; /* NULL: used */
    } cases[] = {
        {{"cls", "reg", NULL}, OQ_DTYPE_FLOAT64, NULL},
        {{"cls", "other", NULL}, OQ_DTYPE_FLOAT64, "output 'other' is none of the reference's (cls, ...)"},
        {{"cls", "reg", NULL}, OQ_DTYPE_FLOAT32, "output 'cls' is float32, not the reference's float64"},
        {{"cls", NULL}, OQ_DTYPE_FLOAT64, "1 outputs, not the reference's 2"},
        {{"cls", "reg", "reg2", NULL}, OQ_DTYPE_FLOAT64, "output 'reg2' is none of the reference's"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n;
        char warning[1400];
        oq_err e = {0};
        oq_refcache_hit hit;
        unsigned char *npz = outputs_npz(cases[i].names, nd, sh, cases[i].dtype, &n);
        assert_int_equal(oq_refcache_put(&f->c, sha_of((char)('k' + i)), npz, n, &e), OQ_OK);
        oq_refcache_get(&f->c, sha_of((char)('k' + i)), 3, &hit, warning, sizeof warning);
        if (!cases[i].why) {
            assert_string_equal(warning, "");
            assert_non_null(hit.npz);
        } else {
            assert_null(hit.npz);
            if (!strstr(warning, cases[i].why)) fail_msg("case %zu: warning '%s' lacks '%s'", i, warning, cases[i].why);
        }
        free(hit.npz);
        free(npz);
    }
    f->c.outputs = NULL;
    f->c.n_outputs = 0;
}

/* A name jansson escapes, or UTF-8: not put's plain layout, so parsed, and still used. */
static void test_escaped_names_parsed(void **state)
{
    fixture *f = *state;
    char record[4400];
    const char *names[] = {"out \"a\"\\b", "r\xc3\xa9g", NULL};
    const int32_t nd[] = {1, 1};
    const int64_t sh[][3] = {{2}, {2}};
    size_t n;
    unsigned char *npz = outputs_npz(names, nd, sh, OQ_DTYPE_FLOAT64, &n);
    put_and_get(f, sha_of('d'), npz, n, 2, 0, record, sizeof record);
    free(npz);
}

/* The record's text rewritten (here: by jansson, compact): parsed, and the entry still used;
 * a tensor renamed in it, its schema or key changed: the entry is refused with the reason. */
static void check_edited(fixture *f, const char *inputs_sha, const char *from, const char *to, int compact,
                         const char *why)
{
    char record[4400], warning[1400];
    const char *two[] = {"cls", "reg", NULL};
    const int32_t nd2[] = {3, 3};
    const int64_t sh2[][3] = {{3, 8, 6}, {3, 8, 4}};
    size_t n, tn;
    unsigned char *npz = outputs_npz(two, nd2, sh2, OQ_DTYPE_FLOAT64, &n);
    put_and_get(f, inputs_sha, npz, n, 3, 1, record, sizeof record);
    char *text = file_text(record, &tn), edited[8192];
    char *at = from ? strstr(text, from) : NULL;
    assert_true(!from || at);
    if (at) snprintf(edited, sizeof edited, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    else snprintf(edited, sizeof edited, "%s", text);
    if (compact) {
        json_t *j = json_loads(edited, 0, NULL);
        assert_non_null(j);
        char *c = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
        snprintf(edited, sizeof edited, "%s", c);
        free(c);
        json_decref(j);
    }
    oq_err e = {0};
    assert_int_equal(oq_replace_file_nosync(record, edited, strlen(edited), &e), OQ_OK);
    oq_refcache_hit hit;
    oq_refcache_get(&f->c, inputs_sha, 3, &hit, warning, sizeof warning);
    if (!why) {
        assert_string_equal(warning, "");
        assert_non_null(hit.npz);
        assert_memory_equal(hit.npz, npz, n);
    } else {
        assert_null(hit.npz);
        if (!strstr(warning, why)) fail_msg("warning '%s' lacks '%s'", warning, why);
    }
    free(hit.npz);
    free(text);
    free(npz);
}

static void test_edited_records(void **state)
{
    fixture *f = *state;
    check_edited(f, sha_of('e'), NULL, NULL, 1, NULL);
    check_edited(f, sha_of('f'), "\"name\": \"cls\"", "\"name\": \"renamed\"", 0, "not the tensors its record lists");
    check_edited(f, sha_of('0'), "\"name\": \"cls\"", "\"name\": \"renamed\"", 1, "not the tensors its record lists");
    check_edited(f, sha_of('1'), "\"dtype\": \"float64\"", "\"dtype\": \"float32\"", 0, "not the tensors its record lists");
    check_edited(f, sha_of('2'), "    8,", "    9,", 0, "not the tensors its record lists");
    check_edited(f, sha_of('3'), "refcache/3\",\n \"sha256\"", "refcache/2\",\n \"sha256\"", 0, "not a cache record");
    check_edited(f, sha_of('4'), "\n ]\n}", "\n ]\n", 0, "not a cache record");
    check_edited(f, sha_of('5'), "weights -", "weights 0", 0, "its record is for another reference");
}

/* The outputs of a batch of 3 whose first value is v: batches alike but for their values. */
static unsigned char *valued_npz(double v, size_t *n)
{
    const int64_t shape[] = {3, 8, 6};
    oq_tensor *t = NULL;
    oq_err e = {0};
    assert_int_equal(oq_tensor_create(&t, OQ_DTYPE_FLOAT64, 3, shape, "cls", &e), OQ_OK);
    memset(t->data, 0, oq_tensor_nbytes(t));
    ((double *)t->data)[0] = v;
    unsigned char *buf = NULL;
    assert_int_equal(oq_npz_bytes(1, (const oq_tensor *const *)&t, 0, "outputs", &buf, n, &e), OQ_OK);
    oq_tensor_free(t);
    return buf;
}

/* Two batches' records swapped (a copy, a sync tool): each names outputs that verify and have
 * the batch's tensors, but are the other batch's; refused, in put's layout or (reindent)
 * another, and nothing is used. */
static void check_swapped(fixture *f, char a, char b, int reindent)
{
    char ra[4400], rb[4400], tmp[4500], key[65], warning[1400];
    size_t na, nb;
    unsigned char *za = valued_npz(1, &na), *zb = valued_npz(2, &nb);
    put_and_get(f, sha_of(a), za, na, 3, 1, ra, sizeof ra);
    put_and_get(f, sha_of(b), zb, nb, 3, 1, rb, sizeof rb);
    snprintf(tmp, sizeof tmp, "%s.swap", ra);
    assert_int_equal(rename(ra, tmp) | rename(rb, ra) | rename(tmp, rb), 0);
    if (reindent) {
        json_t *j = json_load_file(rb, 0, NULL);
        assert_non_null(j);
        assert_int_equal(json_dump_file(j, rb, JSON_INDENT(3) | JSON_PRESERVE_ORDER), 0);
        json_decref(j);
    }
    oq_refcache_key(&f->c, sha_of(b), key);
    oq_refcache_hit hit;
    oq_refcache_get(&f->c, sha_of(b), 3, &hit, warning, sizeof warning);
    assert_null(hit.npz);
    if (!strstr(warning, key) || !strstr(warning, "its record is for other inputs"))
        fail_msg("warning '%s' does not refuse %s's record as another batch's", warning, key);
    free(za);
    free(zb);
}

static void test_swapped_records(void **state)
{
    fixture *f = *state;
    check_swapped(f, 'a', 'b', 0);
    check_swapped(f, 'c', 'd', 1);
}

/* The identity of the file at `path`. */
static oq_file_id id_of(const char *path)
{
    unsigned char *buf = NULL;
    size_t n = 0;
    oq_file_id id;
    assert_int_equal(oq_read_file_id(path, &buf, &n, &id, NULL), OQ_OK);
    free(buf);
    return id;
}

/* An entry stored again (a concurrent run, the same batch): its files are kept as they are, so
 * a worker handed the outputs' file by its identity still finds that file. */
static void test_put_again_keeps_files(void **state)
{
    fixture *f = *state;
    char record[4400], npz_path[4400], key[65];
    size_t n;
    oq_err e = {0};
    unsigned char *npz = valued_npz(1, &n);
    put_and_get(f, sha_of('e'), npz, n, 3, 1, record, sizeof record);
    oq_refcache_key(&f->c, sha_of('e'), key);
    snprintf(npz_path, sizeof npz_path, "%s/%s.npz", f->dir, key);
    oq_file_id rec_id = id_of(record), npz_id = id_of(npz_path);
    assert_int_equal(oq_refcache_put(&f->c, sha_of('e'), npz, n, &e), OQ_OK);
    oq_file_id rec_now = id_of(record), npz_now = id_of(npz_path);
    assert_true(oq_file_id_same(&rec_id, &rec_now));
    assert_true(oq_file_id_same(&npz_id, &npz_now));
    free(npz);
}

/* Batch a's record edited to give batch b's outputs' SHA-256 (schema 2 named the outputs' file
 * by it: the record then took b's outputs, which verified, and a's configuration was judged
 * against them): a's file is a's key's, which does not hash to it. */
static void test_record_cannot_name_other_outputs(void **state)
{
    fixture *f = *state;
    char ra[4400], rb[4400], sha_a[65], sha_b[65], warning[1400];
    size_t na, nb, tn;
    unsigned char *za = valued_npz(1, &na), *zb = valued_npz(2, &nb);
    put_and_get(f, sha_of('a'), za, na, 3, 1, ra, sizeof ra);
    put_and_get(f, sha_of('b'), zb, nb, 3, 1, rb, sizeof rb);
    oq_sha256_buf(za, na, sha_a);
    oq_sha256_buf(zb, nb, sha_b);
    unsigned char *text = NULL;
    oq_err e = {0};
    assert_int_equal(oq_read_file(ra, &text, &tn, &e), OQ_OK);
    char edited[8192];
    const char *at = strstr((const char *)text, sha_a);
    assert_non_null(at);
    snprintf(edited, sizeof edited, "%.*s%s%s", (int)(at - (const char *)text), (const char *)text, sha_b, at + 64);
    assert_int_equal(oq_replace_file_nosync(ra, edited, strlen(edited), &e), OQ_OK);
    oq_refcache_hit hit;
    oq_refcache_get(&f->c, sha_of('a'), 3, &hit, warning, sizeof warning);
    assert_null(hit.npz);
    if (!strstr(warning, "content does not match the SHA-256 its record gives"))
        fail_msg("warning '%s' does not refuse a record naming other outputs", warning);
    free(text);
    free(za);
    free(zb);
}

/* A FIFO or a symbolic link where an entry's file goes (the link here to a good copy of it): a
 * warning, never a wait on the FIFO nor a file read through the link; storing the entry again
 * replaces them. */
static void check_planted(fixture *f, char inputs, const char *ext, int fifo)
{
    char record[4400], path[4400], copy[4500], key[65], warning[1400];
    size_t n;
    oq_err e = {0};
    unsigned char *npz = valued_npz(1, &n);
    put_and_get(f, sha_of(inputs), npz, n, 3, 1, record, sizeof record);
    oq_refcache_key(&f->c, sha_of(inputs), key);
    snprintf(path, sizeof path, "%s/%s.%s", f->dir, key, ext);
    snprintf(copy, sizeof copy, "%s.copy", path);
    assert_int_equal(rename(path, copy), 0);
    assert_int_equal(fifo ? mkfifo(path, 0600) : symlink(copy, path), 0);
    oq_refcache_hit hit;
    oq_refcache_get(&f->c, sha_of(inputs), 3, &hit, warning, sizeof warning);
    assert_null(hit.npz);
    const char *why = fifo ? "is a FIFO (named pipe), not a regular file" : "is a symbolic link, not a regular file";
    if (!strstr(warning, path) || !strstr(warning, why)) fail_msg("warning '%s' lacks '%s: %s'", warning, path, why);
    assert_int_equal(oq_refcache_put(&f->c, sha_of(inputs), npz, n, &e), OQ_OK);
    struct stat sb;
    assert_int_equal(lstat(path, &sb), 0);
    assert_true(S_ISREG(sb.st_mode));
    oq_refcache_get(&f->c, sha_of(inputs), 3, &hit, warning, sizeof warning);
    assert_string_equal(warning, "");
    assert_non_null(hit.npz);
    free(hit.npz);
    unlink(copy);
    free(npz);
}

static void test_planted_files_refused(void **state)
{
    fixture *f = *state;
    check_planted(f, 'a', "json", 1);
    check_planted(f, 'b', "npz", 1);
    check_planted(f, 'c', "json", 0);
    check_planted(f, 'd', "npz", 0);
}

/* Whose an entry is (QA round 8b, D2): yours only when you own both its files; else its record's
 * owner's where that is not you (the record binds the outputs to the key: a member's record over
 * your outputs renamed from another key was taken for yours), else its outputs'. As root, an
 * entry whose record another user owns is that user's, named with whose outputs it holds, and
 * refused where only your own are trusted. */
static void test_entry_writer(void **state)
{
    fixture *f = *state;
    unsigned me = (unsigned)geteuid(), other = me + 1, third = me + 2, uid = 0;
    assert_int_equal(oq_refcache_writer(me, me), me);
    assert_int_equal(oq_refcache_writer(other, me), other);
    assert_int_equal(oq_refcache_writer(me, other), other);
    assert_int_equal(oq_refcache_writer(other, third), other);
    static const char *const names[] = {"cls", NULL};
    static const int32_t ndims[] = {1};
    static const int64_t shapes[][3] = {{2}};
    size_t n = 0;
    unsigned char *npz = outputs_npz(names, ndims, shapes, OQ_DTYPE_FLOAT64, &n);
    char key[65], path[4400], warning[1400];
    oq_err e = {0};
    oq_refcache_key(&f->c, sha_of('w'), key);
    assert_int_equal(oq_refcache_put(&f->c, sha_of('w'), npz, n, &e), OQ_OK);
    assert_true(oq_refcache_entry_writer(&f->c, key, &uid));
    assert_int_equal(uid, me);
    oq_refcache_hit hit;
    oq_refcache_get(&f->c, sha_of('w'), 2, &hit, warning, sizeof warning);
    assert_non_null(hit.npz);
    assert_int_equal(hit.writer, me);
    assert_int_equal(hit.record_uid, me);
    free(hit.npz);
    if (me == 0) {
        snprintf(path, sizeof path, "%s/%s.json", f->dir, key);
        assert_int_equal(chown(path, 65534, (gid_t)-1), 0);
        assert_true(oq_refcache_entry_writer(&f->c, key, &uid));
        assert_int_equal(uid, 65534);
        oq_refcache_get(&f->c, sha_of('w'), 2, &hit, warning, sizeof warning);
        assert_null(hit.npz);
        assert_int_equal(hit.writer, 65534);
        char want[200];
        snprintf(want, sizeof want, "%s.json: owned by uid 65534 (", key);
        if (!strstr(hit.why, want) || !strstr(hit.why, "), over outputs of uid 0 ("))
            fail_msg("reason '%s' lacks '%s...), over outputs of uid 0 ('", hit.why, want);
    }
    free(npz);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_written_records_read_without_parse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_escaped_names_parsed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_entries_not_the_reference, setup, teardown),
        cmocka_unit_test_setup_teardown(test_edited_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_swapped_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_put_again_keeps_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record_cannot_name_other_outputs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_planted_files_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_entry_writer, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
