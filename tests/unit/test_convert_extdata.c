/* convert with the weights in an external-data file (torch.onnx.export's default): the
 * conversion reads the small tensors in, copies the large ones to OUT.onnx.data (each at a
 * page), checks on ORT with the input's folder, and refuses locations and files that do
 * not hold the tensor, naming file and tensor, before any work. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "convert/convert-impl.h"
#include "inspect/modelfile-impl.h"
#include "onnx.pb-c.h"
#include "ortqual/convert.h"
#include "ortqual/fileio.h"
#include "ortqual/inspect.h"
#include "ortqual/npz.h"
#include "ortqual/refusal.h"
#include "ortqual/runtime.h"

#define TESTUTIL_RUNTIME_FIXTURE
#include "testutil.h"

#define LLAMA OQ_SOURCE_DIR "/tests/fixtures/torch/llama_like/"

static Onnx__ModelProto *read_model(const char *path)
{
    unsigned char *buf;
    size_t n;
    assert_int_equal(oq_read_file(path, &buf, &n, NULL), OQ_OK);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, n, buf);
    free(buf);
    assert_non_null(m);
    return m;
}

static void write_model(const Onnx__ModelProto *m, const char *path)
{
    size_t n = onnx__model_proto__get_packed_size(m);
    uint8_t *buf = malloc(n);
    assert_non_null(buf);
    onnx__model_proto__pack(m, buf);
    assert_int_equal(oq_write_file_atomic(path, buf, n, 1, NULL), OQ_OK);
    free(buf);
}

static Onnx__StringStringEntryProto *entry(const char *k, const char *v)
{
    Onnx__StringStringEntryProto *e = malloc(sizeof *e);
    onnx__string_string_entry_proto__init(e);
    e->key = strdup(k);
    e->value = strdup(v);
    return e;
}

/* `src` saved as dir/model.onnx with every initializer's raw data in dir/model.onnx.data, one
 * after another (as onnx.save_model(..., save_as_external_data=True, size_threshold=0) does;
 * torch leaves the smallest inside), each "length" `len_as` (NULL: its byte count). Returns the
 * data file's size. */
static long externalize_len(const char *src, const char *dir, const char *len_as)
{
    char path[512], data[512];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    snprintf(data, sizeof data, "%s/model.onnx.data", dir);
    Onnx__ModelProto *m = read_model(src);
    FILE *f = fopen(data, "wb");
    assert_non_null(f);
    long at = 0;
    for (size_t i = 0; i < m->graph->n_initializer; i++) {
        Onnx__TensorProto *t = m->graph->initializer[i];
        if (!t->has_raw_data) continue;
        assert_int_equal(fwrite(t->raw_data.data, 1, t->raw_data.len, f), t->raw_data.len);
        char off[32], len[32];
        snprintf(off, sizeof off, "%ld", at);
        snprintf(len, sizeof len, "%zu", t->raw_data.len);
        at += (long)t->raw_data.len;
        free(t->raw_data.data);
        t->raw_data.data = NULL;
        t->raw_data.len = 0;
        t->has_raw_data = 0;
        t->has_data_location = 1;
        t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
        t->external_data = malloc(3 * sizeof *t->external_data);
        t->external_data[0] = entry("location", "model.onnx.data");
        t->external_data[1] = entry("offset", off);
        t->external_data[2] = entry("length", len_as ? len_as : len);
        t->n_external_data = 3;
    }
    assert_int_equal(fclose(f), 0);
    write_model(m, path);
    onnx__model_proto__free_unpacked(m, NULL);
    return at;
}

static long externalize(const char *src, const char *dir) { return externalize_len(src, dir, NULL); }

static const char *ext_value(const Onnx__TensorProto *t, const char *key)
{
    for (size_t i = 0; i < t->n_external_data; i++)
        if (!strcmp(t->external_data[i]->key, key)) return t->external_data[i]->value;
    return NULL;
}

static const Onnx__TensorProto *find_init(const Onnx__ModelProto *m, const char *name)
{
    for (size_t i = 0; i < m->graph->n_initializer; i++)
        if (!strcmp(m->graph->initializer[i]->name, name)) return m->graph->initializer[i];
    return NULL;
}

/* Each weight of the converted model, inside it or in OUT.onnx.data, holds the bytes it had
 * in the export; the copied ones start at a page. Returns how many were copied. */
static int weights_kept(const char *orig_path, const char *out, const char *data)
{
    Onnx__ModelProto *o = read_model(orig_path), *c = read_model(out);
    unsigned char *d;
    size_t dn;
    assert_int_equal(oq_read_file(data, &d, &dn, NULL), OQ_OK);
    int copied = 0;
    for (size_t i = 0; i < o->graph->n_initializer; i++) {
        const Onnx__TensorProto *w = o->graph->initializer[i], *t = find_init(c, w->name);
        if (!t) continue; /* a constant a pass removed */
        if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
            assert_string_equal(ext_value(t, "location"), "fast.onnx.data");
            long off = atol(ext_value(t, "offset")), len = atol(ext_value(t, "length"));
            assert_int_equal(off % 4096, 0);
            assert_int_equal((size_t)len, w->raw_data.len);
            assert_true(len > 4096); /* the small ones are read in */
            assert_true((size_t)(off + len) <= dn);
            assert_memory_equal(d + off, w->raw_data.data, (size_t)len);
            copied++;
        } else {
            assert_int_equal(t->raw_data.len, w->raw_data.len);
            if (w->raw_data.len) assert_memory_equal(t->raw_data.data, w->raw_data.data, w->raw_data.len);
        }
    }
    free(d);
    onnx__model_proto__free_unpacked(o, NULL);
    onnx__model_proto__free_unpacked(c, NULL);
    return copied;
}

/* --flash's passes, no check. */
static oq_convert_opts flash_plan_opts(void)
{
    oq_convert_opts o;
    oq_convert_opts_default(&o);
    oq_convert_opts_flash(&o);
    return o;
}

static oq_convert_opts flash_opts(oq_npz **in, oq_npz **out)
{
    assert_int_equal(oq_npz_read(LLAMA "inputs_000.npz", &in[0], NULL), OQ_OK);
    assert_int_equal(oq_npz_read(LLAMA "outputs_000.npz", &out[0], NULL), OQ_OK);
    oq_convert_opts o = flash_plan_opts();
    o.runtime = rt;
    o.n_batches = 1;
    o.inputs = (const oq_npz *const *)in;
    o.expected = (const oq_npz *const *)out;
    return o;
}

/* in converted with --flash's passes into odir/fast.onnx and fast.onnx.data (out, data: their
 * paths, 512 bytes), checked on ORT against PyTorch's outputs, every weight kept. */
static void convert_into(const char *in, const char *odir, char *out, char *data)
{
    snprintf(out, 512, "%s/fast.onnx", odir);
    snprintf(data, 512, "%s/fast.onnx.data", odir);
    oq_npz *bi[1], *bo[1];
    oq_convert_opts o = flash_opts(bi, bo);
    oq_convert_report *r = NULL;
    oq_err err = {0};
    if (oq_convert_file(in, out, 0, &o, &r, &err)) fail_msg("%s", err.msg);
    assert_true(r->checked && r->passed && r->fused == 1);
    assert_string_equal(r->external_data, data);
    assert_true(weights_kept(LLAMA "llama_like_op18.onnx", out, data) >= 3);
    oq_convert_report_free(r);
    oq_npz_free(bi[0]);
    oq_npz_free(bo[0]);
}

/* Every weight outside the model, the small ones too (ORT itself cannot load that export:
 * shape inference wants its constants inside): converted, checked against PyTorch, and the
 * output is a model and its own data file. */
static void test_converts(void **state)
{
    (void)state;
    char *dir = temp_dir("extdata"), in[512], out[512], data[512];
    long bytes = externalize(LLAMA "llama_like_op18.onnx", dir);
    snprintf(in, sizeof in, "%s/model.onnx", dir);
    oq_model_info *mi; /* inspect counts the weights outside as such */
    assert_int_equal(oq_model_inspect_file(in, &mi, NULL), OQ_OK);
    assert_int_equal(mi->n_external, mi->n_initializers);
    assert_int_equal(mi->external_bytes, bytes);
    assert_int_equal(mi->initializer_bytes, 0);
    assert_int_equal(mi->n_external_files, 1);
    oq_model_info_free(mi);
    char **files; /* the same without the rest of an inspection (a shard plan's identity) */
    size_t nf;
    assert_int_equal(oq_model_external_files(in, &files, &nf, NULL), OQ_OK);
    assert_int_equal(nf, 1);
    assert_string_equal(files[0], "model.onnx.data");
    oq_strv_free(files, nf);
    char *odir = temp_dir("extdata_out"); /* another folder: the data file goes with the model */
    convert_into(in, odir, out, data);
    /* the data file is an output like the model: kept unless overwriting */
    unlink(out);
    oq_npz *bi[1], *bo[1];
    oq_convert_opts o = flash_opts(bi, bo);
    oq_convert_report *r = NULL;
    oq_err err = {0};
    assert_int_equal(oq_convert_file(in, out, 0, &o, &r, &err), OQ_ERR_IO);
    assert_non_null(strstr(err.msg, "fast.onnx.data: exists (not overwritten)"));
    assert_null(r);
    assert_int_equal(access(out, F_OK), -1);
    oq_npz_free(bi[0]);
    oq_npz_free(bo[0]);
    remove_dir(odir);
    remove_dir(dir);
}

/* `path` planned with --flash's passes: the status; *r the report (NULL for a model that
 * cannot be read). */
static oq_status plan_flash(const char *path, oq_convert_report **r, oq_err *err)
{
    oq_convert_opts o = flash_plan_opts();
    *r = NULL;
    return oq_convert_plan(path, &o, r, err);
}

/* The model with one initializer's external data entries replaced, planned: the error. */
static oq_status plan_with(const char *dir, const char *loc, const char *off, const char *len, int truncate_to,
                           oq_err *err)
{
    char path[512], data[512];
    externalize(LLAMA "llama_like_op18.onnx", dir);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    snprintf(data, sizeof data, "%s/model.onnx.data", dir);
    Onnx__ModelProto *m = read_model(path);
    Onnx__TensorProto *t = m->graph->initializer[0];
    const char *v[3] = {loc, off, len};
    for (int k = 0; k < 3; k++)
        if (v[k]) {
            free(t->external_data[k]->value);
            t->external_data[k]->value = strdup(v[k]);
        }
    write_model(m, path);
    onnx__model_proto__free_unpacked(m, NULL);
    if (truncate_to >= 0) assert_int_equal(truncate(data, truncate_to), 0);
    oq_convert_report *r;
    oq_status st = plan_flash(path, &r, err);
    assert_null(r);
    return st;
}

static void test_refused(void **state)
{
    (void)state;
    char *dir = temp_dir("extdata_bad");
    oq_err err = {0};
    const char *w = "n1"; /* the export's first initializer, float32 [32] */
    char want[512];
    assert_int_equal(plan_with(dir, "../model.onnx.data", NULL, NULL, -1, &err), OQ_ERR_FORMAT);
    snprintf(want, sizeof want, "%s/model.onnx: initializer '%s': external data location '../model.onnx.data' is "
             "not a path inside the model's folder", dir, w);
    assert_string_equal(err.msg, want);
    assert_int_equal(plan_with(dir, "/etc/passwd", NULL, NULL, -1, &err), OQ_ERR_FORMAT);
    assert_int_equal(plan_with(dir, "gone.data", NULL, NULL, -1, &err), OQ_ERR_IO);
    snprintf(want, sizeof want, "%s/model.onnx: initializer '%s': external data %s/gone.data: No such file or "
             "directory", dir, w, dir);
    assert_string_equal(err.msg, want);
    char fifo[512]; /* opened without blocking, then refused */
    snprintf(fifo, sizeof fifo, "%s/pipe.data", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(plan_with(dir, "pipe.data", NULL, NULL, -1, &err), OQ_ERR_IO);
    assert_non_null(strstr(err.msg, "pipe.data: not a regular file"));
    assert_int_equal(plan_with(dir, NULL, "12x", NULL, -1, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "external data offset '12x' is not a byte count"));
    assert_int_equal(plan_with(dir, NULL, NULL, "8", -1, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "external data length 8, its type and shape need 128"));
    assert_int_equal(plan_with(dir, NULL, NULL, NULL, 100, &err), OQ_ERR_FORMAT);
    snprintf(want, sizeof want, "%s/model.onnx: initializer '%s': external data %s/model.onnx.data holds 100 "
             "bytes, the tensor needs bytes 0..128", dir, w, dir);
    assert_string_equal(err.msg, want);
    remove_dir(dir);
}

/* The model with its first initializer (n1, float32 [32], 128 bytes at offset 0) edited by
 * `edit`, planned: the status, err holding the message. */
static oq_status plan_edited(const char *dir, void (*edit)(Onnx__TensorProto *), oq_err *err)
{
    char path[512];
    externalize(LLAMA "llama_like_op18.onnx", dir);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    Onnx__ModelProto *m = read_model(path);
    edit(m->graph->initializer[0]);
    write_model(m, path);
    onnx__model_proto__free_unpacked(m, NULL);
    oq_convert_report *r;
    oq_status st = plan_flash(path, &r, err);
    oq_convert_report_free(r);
    return st;
}

static void key_unknown(Onnx__TensorProto *t)
{
    free(t->external_data[2]->key);
    t->external_data[2]->key = strdup("size");
}
static void dim_negative(Onnx__TensorProto *t) { t->dims[0] = -32; }
static void type_string(Onnx__TensorProto *t) { t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__STRING; }
static void type_int4(Onnx__TensorProto *t) /* 256 int4 elements: 128 bytes, two to a byte */
{
    t->data_type = 22;
    t->dims[0] = 256;
}

/* What ORT refuses is refused before any work with the tensor named, not run into ORT's
 * message after it: a byte count with a sign or spaces, a key ORT does not know, a negative
 * dimension, a type without a fixed size, a symbolic link out of the folder; an offset near
 * INT64_MAX is a file too short (its end is not computed in int64_t). */
static void test_refused_as_ort(void **state)
{
    (void)state;
    char *dir = temp_dir("extdata_ort_rules"), want[512];
    oq_err err = {0};
    assert_int_equal(plan_with(dir, NULL, "+0", NULL, -1, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "initializer 'n1': external data offset '+0' is not a byte count"));
    assert_int_equal(plan_with(dir, NULL, NULL, " 128", -1, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "external data length ' 128' is not a byte count"));
    assert_int_equal(plan_with(dir, NULL, "9223372036854775807", NULL, -1, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "the tensor needs bytes 9223372036854775807..9223372036854775935"));
    assert_int_equal(plan_edited(dir, key_unknown, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "initializer 'n1': external data key 'size' is none of location, offset, length, "
                           "checksum"));
    assert_int_equal(plan_edited(dir, dim_negative, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "initializer 'n1': dimension 0 is -32"));
    assert_int_equal(plan_edited(dir, type_string, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "initializer 'n1': data type 8 has no fixed element size"));
    assert_int_equal(plan_edited(dir, type_int4, &err), OQ_OK); /* 4-bit types: (n + 1) / 2 bytes */
    /* "." is the folder itself, no link anywhere: said so (it was called a symbolic link out) */
    assert_int_equal(plan_with(dir, ".", NULL, NULL, -1, &err), OQ_ERR_FORMAT);
    snprintf(want, sizeof want, "%s/model.onnx: initializer 'n1': external data location '.' is the model's folder, "
             "not a file inside it", dir);
    assert_string_equal(err.msg, want);
    char *outside = temp_dir("extdata_outside"), src[512], link[512];
    snprintf(src, sizeof src, "%s/model.onnx.data", dir);
    snprintf(link, sizeof link, "%s/model.onnx.data", outside);
    assert_int_equal(rename(src, link), 0);
    assert_int_equal(symlink(link, src), 0); /* dir/model.onnx.data -> outside/model.onnx.data */
    assert_int_equal(plan_with(dir, NULL, NULL, NULL, -1, &err), OQ_ERR_FORMAT);
    snprintf(want, sizeof want, "%s/model.onnx: initializer 'n1': external data location 'model.onnx.data' leads "
             "out of the model's folder through a symbolic link (ORT refuses it)", dir);
    assert_string_equal(err.msg, want);
    remove_dir(outside);
    remove_dir(dir);
}

/* A run reads the model as validate and bench do (oq_model_file_read): a location out of the
 * model's folder, by "..", by an absolute path or through a symbolic link, is refused with
 * convert's message before it is opened, never hashed into the model's published identity. */
static void test_model_file_refuses_outside(void **state)
{
    (void)state;
    char *dir = temp_dir("extdata_run"), *outside = temp_dir("extdata_run_out"), path[512], src[512], link[512];
    char want[1024];
    oq_err err = {0};
    oq_model_file mf;
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    assert_int_equal(plan_with(dir, "../model.onnx.data", NULL, NULL, -1, &err), OQ_ERR_FORMAT);
    assert_int_equal(oq_model_file_read(path, &mf, &err), OQ_ERR_FORMAT);
    snprintf(want, sizeof want, "%s: external data location '../model.onnx.data' is not a path inside the model's "
             "folder", path);
    assert_string_equal(err.msg, want);
    assert_int_equal(plan_with(dir, "/etc/passwd", NULL, NULL, -1, &err), OQ_ERR_FORMAT);
    assert_int_equal(oq_model_file_read(path, &mf, &err), OQ_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "external data location '/etc/passwd' is not a path inside"));
    externalize(LLAMA "llama_like_op18.onnx", dir);
    snprintf(src, sizeof src, "%s/model.onnx.data", dir);
    snprintf(link, sizeof link, "%s/model.onnx.data", outside);
    assert_int_equal(rename(src, link), 0);
    assert_int_equal(symlink(link, src), 0); /* dir/model.onnx.data -> outside/model.onnx.data */
    assert_int_equal(oq_model_file_read(path, &mf, &err), OQ_ERR_FORMAT);
    snprintf(want, sizeof want, "%s: external data location 'model.onnx.data' leads out of the model's folder "
             "through a symbolic link (ORT refuses it)", path);
    assert_string_equal(err.msg, want);
    assert_int_equal(unlink(src), 0); /* absent: read, its identity left unknown (ORT names it) */
    assert_int_equal(oq_model_file_read(path, &mf, &err), OQ_OK);
    assert_string_equal(mf.sha256, "");
    oq_model_file_clear(&mf);
    assert_int_equal(rename(link, src), 0); /* back inside: hashed */
    assert_int_equal(oq_model_file_read(path, &mf, &err), OQ_OK);
    assert_int_equal(strlen(mf.sha256), 64);
    oq_model_file_clear(&mf);
    remove_dir(outside);
    remove_dir(dir);
}

/* A model in memory has no folder to find its weights in. */
static void test_bytes_refused(void **state)
{
    (void)state;
    char *dir = temp_dir("extdata_mem"), path[512];
    externalize(LLAMA "llama_like_op18.onnx", dir);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    unsigned char *buf;
    size_t n;
    assert_int_equal(oq_read_file(path, &buf, &n, NULL), OQ_OK);
    oq_convert_opts o = flash_plan_opts();
    oq_convert_report *r = NULL;
    oq_err err = {0};
    assert_int_equal(oq_convert_plan_bytes(buf, n, "ext.onnx", &o, &r, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "ext.onnx: initializer 'n1' has external data, which needs the model's path");
    assert_null(r);
    free(buf);
    remove_dir(dir);
}

/* ORT's own refusals of such models, explained: every tensor outside (shape inference cannot
 * read its constants), then tests/fixtures/external's model copied without its data file. */
static void test_ort_refusals_explained(void **state)
{
    (void)state;
    char *dir = temp_dir("extdata_ort"), path[512], data[512];
    externalize(LLAMA "llama_like_op18.onnx", dir);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    snprintf(data, sizeof data, "%s/model.onnx.data", dir);
    const char *ids[] = {"external-data-constants", "external-data-missing"};
    const char *why[] = {"which shape inference reads, is stored in the external-data file",
                         "keeps its data in an external-data file"};
    for (int k = 0; k < 2; k++) {
        if (k) {
            unsigned char *buf;
            size_t n;
            assert_int_equal(oq_read_file(OQ_SOURCE_DIR "/tests/fixtures/external/llama_like_op18.onnx", &buf, &n,
                                          NULL), OQ_OK);
            assert_int_equal(oq_write_file_atomic(path, buf, n, 1, NULL), OQ_OK);
            free(buf);
            snprintf(data, sizeof data, "%s/llama_like_op18.onnx.data", dir); /* the name it records */
        }
        oq_session *s = NULL;
        oq_err e = {0};
        assert_int_not_equal(oq_session_create(rt, path, NULL, 0, NULL, &s, &e), OQ_OK);
        oq_refusal_facts f = {.message = e.msg, .model = path};
        oq_refusal r;
        assert_int_equal(oq_refusal_explain(&f, &r, NULL), OQ_OK);
        if (!r.id || strcmp(r.id, ids[k])) fail_msg("%s: explained as %s", e.msg, r.id ? r.id : "nothing");
        assert_non_null(strstr(r.why, why[k]));
        if (k) assert_non_null(strstr(r.why, "initializer 'tok.weight' keeps")), assert_non_null(strstr(r.why, data));
        else assert_non_null(strstr(r.node, "(ReduceMean)"));
        oq_refusal_clear(&r);
    }
    remove_dir(dir);
}

/* inspect adds each tensor's length as ORT reads it: one that is not a byte count adds nothing
 * (it wrapped to 2^64 - 5). */
static void test_inspect_lengths(void **state)
{
    (void)state;
    char *dir = temp_dir("extdata_len"), path[512];
    long bytes = externalize(LLAMA "llama_like_op18.onnx", dir);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    Onnx__ModelProto *m = read_model(path);
    Onnx__TensorProto *t = m->graph->initializer[0]; /* n1: 128 bytes */
    free(t->external_data[2]->value);
    t->external_data[2]->value = strdup("-5");
    write_model(m, path);
    onnx__model_proto__free_unpacked(m, NULL);
    oq_model_info *mi;
    assert_int_equal(oq_model_inspect_file(path, &mi, NULL), OQ_OK);
    assert_int_equal(mi->external_bytes, bytes - 128);
    oq_model_info_free(mi);
    /* absent, or 0 ("not given" to ORT): the bytes its type and shape need */
    m = read_model(path);
    t = m->graph->initializer[0];
    free(t->external_data[2]->value);
    t->external_data[2]->value = strdup("0");
    free(m->graph->initializer[1]->external_data[2]->key);
    m->graph->initializer[1]->external_data[2]->key = strdup("checksum");
    write_model(m, path);
    onnx__model_proto__free_unpacked(m, NULL);
    assert_int_equal(oq_model_inspect_file(path, &mi, NULL), OQ_OK);
    assert_int_equal(mi->external_bytes, bytes);
    oq_model_info_free(mi);
    remove_dir(dir);
}

/* A "length" of 0 is ORT's "not given" (its GetExternalDataInfo takes 0 or the exact count and
 * reads the bytes the type and shape need): every tensor so written converts, the check runs it
 * on ORT, and the output gives each tensor its length; a data file too short is still refused. */
static void test_length_zero(void **state)
{
    (void)state;
    char *dir = temp_dir("extdata_len0"), *odir = temp_dir("extdata_len0_out"), in[512], out[512], data[512];
    char want[1200];
    externalize_len(LLAMA "llama_like_op18.onnx", dir, "0");
    snprintf(in, sizeof in, "%s/model.onnx", dir);
    convert_into(in, odir, out, data); /* the output's lengths as the export's */
    oq_convert_report *r = NULL;
    oq_err err = {0};
    snprintf(data, sizeof data, "%s/model.onnx.data", dir);
    assert_int_equal(truncate(data, 100), 0);
    assert_int_equal(plan_flash(in, &r, &err), OQ_ERR_FORMAT);
    snprintf(want, sizeof want, "%s: initializer 'n1': external data %s holds 100 bytes, the tensor needs bytes "
             "0..128", in, data);
    assert_string_equal(err.msg, want);
    remove_dir(odir);
    remove_dir(dir);
}

/* The data file `path` changed the k-th way: rewritten in place (same size, a later mtime: a
 * rewrite within the clock's tick may keep it), replaced by a rename, grown. */
static void change_data(const char *path, int k)
{
    char tmp[600];
    unsigned char *buf;
    size_t n;
    assert_int_equal(oq_read_file(path, &buf, &n, NULL), OQ_OK);
    buf[n - 1] ^= 0xff;
    if (k == 0) {
        struct stat sb;
        int fd = open(path, O_WRONLY);
        assert_true(fd >= 0 && fstat(fd, &sb) == 0);
        assert_int_equal(pwrite(fd, buf + n - 1, 1, (off_t)n - 1), 1);
        sb.st_mtim.tv_sec++;
        const struct timespec ts[2] = {{0, UTIME_OMIT}, sb.st_mtim};
        assert_int_equal(futimens(fd, ts), 0);
        close(fd);
    } else if (k == 1) {
        snprintf(tmp, sizeof tmp, "%s.new", path);
        assert_int_equal(oq_write_file_atomic(tmp, buf, n, 1, NULL), OQ_OK);
        assert_int_equal(rename(tmp, path), 0);
    } else {
        FILE *f = fopen(path, "ab");
        assert_non_null(f);
        assert_int_equal(fputc(0, f), 0);
        assert_int_equal(fclose(f), 0);
    }
    free(buf);
}

/* The data file changed after convert checked it and before its bytes were copied (another
 * process rewriting it): the copy is refused, naming the file, and nothing is left. Driven
 * through convert's own steps (cv_model_load checks each file and records it, cv_ext_write
 * copies; cv_ext_same compares the input's two loads), the change made between them, each of
 * the three ways. */
static void test_changed_before_copy(void **state)
{
    (void)state;
    for (int k = 0; k < 3; k++) {
        char *dir = temp_dir("extdata_changed"), *odir = temp_dir("extdata_changed_out"), in[512], data[512];
        char out[512], want[1200];
        externalize(LLAMA "llama_like_op18.onnx", dir);
        snprintf(in, sizeof in, "%s/model.onnx", dir);
        snprintf(data, sizeof data, "%s/model.onnx.data", dir);
        snprintf(out, sizeof out, "%s/fast.onnx.data", odir);
        unsigned char *buf;
        size_t n;
        assert_int_equal(oq_read_file(in, &buf, &n, NULL), OQ_OK);
        cv_model *m = NULL;
        oq_err err = {0};
        assert_int_equal(cv_model_load(buf, n, in, dir, &m, &err), OQ_OK);
        change_data(data, k);
        oq_atomic_file af = {0};
        assert_int_equal(oq_atomic_open(&af, out, 0, &err), OQ_OK);
        oq_status st = cv_ext_write(m, &af, &err);
        oq_atomic_abort(&af);
        if (st != OQ_ERR_IO) fail_msg("change %d: copied (status %d)", k, (int)st);
        snprintf(want, sizeof want, "%s: external data %s changed while convert ran; nothing written", in, data);
        assert_string_equal(err.msg, want);
        assert_int_equal(dir_entries(odir), 0);
        cv_model *again = NULL; /* convert loads the input twice: a change between the loads too */
        assert_int_equal(cv_model_load(buf, n, in, dir, &again, &err), OQ_OK);
        assert_int_equal(cv_ext_same(m, again, &err), OQ_ERR_IO);
        assert_string_equal(err.msg, want);
        assert_int_equal(cv_ext_same(again, again, &err), OQ_OK);
        cv_model_free(again);
        cv_model_free(m);
        free(buf);
        remove_dir(odir);
        remove_dir(dir);
    }
}

/* The check of a location and the open of its file are one: a symbolic link out of the
 * folder put at the name between them (another process swapping it) is never read. The swap
 * is made inside realpath, which the check resolves the name with (linked with
 * --wrap=realpath): once the name has resolved inside (g_swap_after) or just before it
 * resolves (g_swap_before), g_swap_from is renamed over g_swap_to. */
char *__real_realpath(const char *path, char *resolved);
static int g_swap_after, g_swap_before;
static char g_swap_from[512], g_swap_to[512];

static void swap_now(const char *path, int *armed)
{
    if (*armed && !strcmp(path, g_swap_to)) {
        *armed = 0;
        assert_int_equal(rename(g_swap_from, g_swap_to), 0);
    }
}

char *__wrap_realpath(const char *path, char *resolved);
char *__wrap_realpath(const char *path, char *resolved)
{
    swap_now(path, &g_swap_before);
    char *r = __real_realpath(path, resolved);
    swap_now(path, &g_swap_after);
    return r;
}

/* outside/secret.data: the data file's bytes with its first 128 (n1's) flipped. */
static void secret_copy(const char *data, const char *secret)
{
    unsigned char *buf;
    size_t n;
    assert_int_equal(oq_read_file(data, &buf, &n, NULL), OQ_OK);
    for (size_t i = 0; i < 128 && i < n; i++) buf[i] ^= 0xff;
    assert_int_equal(oq_write_file_atomic(secret, buf, n, 1, NULL), OQ_OK);
    free(buf);
}

/* validate's and bench's read (oq_model_file_read): the data file checked, then a link out put
 * in its place before it is opened: refused, the file out of the folder never hashed (it was:
 * the check held for the path, the hash opened the path again). */
static void test_model_file_swapped_after_check(void **state)
{
    (void)state;
    char *dir = temp_dir("extdata_race"), *outside = temp_dir("extdata_race_out"), path[512], secret[512], want[1024];
    externalize(LLAMA "llama_like_op18.onnx", dir);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    snprintf(g_swap_to, sizeof g_swap_to, "%s/model.onnx.data", dir);
    snprintf(g_swap_from, sizeof g_swap_from, "%s/link", dir);
    snprintf(secret, sizeof secret, "%s/secret.data", outside);
    secret_copy(g_swap_to, secret);
    assert_int_equal(symlink(secret, g_swap_from), 0);
    oq_model_file mf;
    oq_err err = {0};
    g_swap_after = 1;
    oq_status st = oq_model_file_read(path, &mf, &err);
    assert_int_equal(g_swap_after, 0); /* the swap was made */
    if (st == OQ_OK) fail_msg("the file out of the folder was hashed: sha256 %s", mf.sha256);
    assert_int_equal(st, OQ_ERR_FORMAT);
    snprintf(want, sizeof want, "%s: external data location 'model.onnx.data' leads out of the model's folder "
             "through a symbolic link (ORT refuses it)", path);
    assert_string_equal(err.msg, want);
    remove_dir(outside);
    remove_dir(dir);
}

/* convert's read: the data file a link out when it is opened, a file inside by the time the
 * location is checked: the bytes read into the model are the ones inside (convert opened the
 * path, then checked it: it read the file out of the folder, the check passing). */
static void test_convert_swapped_before_check(void **state)
{
    (void)state;
    char *dir = temp_dir("extdata_race_cv"), *outside = temp_dir("extdata_race_cv_out"), in[512], secret[512];
    externalize(LLAMA "llama_like_op18.onnx", dir);
    snprintf(in, sizeof in, "%s/model.onnx", dir);
    snprintf(g_swap_to, sizeof g_swap_to, "%s/model.onnx.data", dir);
    snprintf(g_swap_from, sizeof g_swap_from, "%s/inside", dir);
    snprintf(secret, sizeof secret, "%s/secret.data", outside);
    secret_copy(g_swap_to, secret);
    assert_int_equal(rename(g_swap_to, g_swap_from), 0);
    assert_int_equal(symlink(secret, g_swap_to), 0); /* a link out at the name, the real file beside */
    Onnx__ModelProto *orig = read_model(LLAMA "llama_like_op18.onnx");
    const Onnx__TensorProto *n1 = find_init(orig, "n1");
    unsigned char *buf;
    size_t n;
    assert_int_equal(oq_read_file(in, &buf, &n, NULL), OQ_OK);
    cv_model *m = NULL;
    oq_err err = {0};
    g_swap_before = 1;
    oq_status st = cv_model_load(buf, n, in, dir, &m, &err);
    assert_int_equal(g_swap_before, 0);
    assert_int_equal(st, OQ_OK);
    const Onnx__TensorProto *t = NULL;
    for (size_t i = 0; i < m->inits.n; i++)
        if (!strcmp(((const Onnx__TensorProto *)m->inits.v[i])->name, "n1")) t = m->inits.v[i];
    assert_non_null(t);
    assert_int_equal(t->raw_data.len, n1->raw_data.len);
    if (memcmp(t->raw_data.data, n1->raw_data.data, n1->raw_data.len))
        fail_msg("n1 was read from the file out of the folder");
    cv_model_free(m);
    free(buf);
    onnx__model_proto__free_unpacked(orig, NULL);
    remove_dir(outside);
    remove_dir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_converts),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_refused_as_ort),
        cmocka_unit_test(test_model_file_refuses_outside),
        cmocka_unit_test(test_bytes_refused),
        cmocka_unit_test(test_ort_refusals_explained),
        cmocka_unit_test(test_inspect_lengths),
        cmocka_unit_test(test_length_zero),
        cmocka_unit_test(test_changed_before_copy),
        cmocka_unit_test(test_model_file_swapped_after_check),
        cmocka_unit_test(test_convert_swapped_before_check),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
