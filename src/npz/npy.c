/* .npy reading and writing (format described in numpy/lib/format.py). */
#include "ortqual/npz.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npz/npy-impl.h"
#include "ortqual/fileio.h"
#include "status/args-impl.h"

static const unsigned char NPY_MAGIC[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
#define NPY_PREAMBLE_V1 10 /* magic, major, minor, uint16 header length */
#define NPY_PREAMBLE_V2 12 /* same with a uint32 header length (versions 2.0, 3.0) */

/* The header dict's three keys, as parsed. */
typedef struct npy_header {
    char descr[64];
    int descr_is_list; /* structured dtype */
    int fortran_order;
    int32_t ndim;
    int64_t shape[OQ_MAX_DIMS];
    int seen_descr, seen_fortran, seen_shape;
} npy_header;

/* A cursor over the header text; `why` receives the first problem found. */
typedef struct cursor {
    const char *p, *end;
    char why[160];
} cursor;

static int cur_fail(cursor *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int cur_fail(cursor *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
    return -1;
}

static void skip_ws(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

/* Consume `ch` after optional whitespace. */
static int expect(cursor *c, char ch)
{
    skip_ws(c);
    if (c->p >= c->end) return cur_fail(c, "expected '%c', found the end", ch);
    if (*c->p != ch) return cur_fail(c, "expected '%c', found '%c'", ch, *c->p);
    c->p++;
    return 0;
}

static int peek(cursor *c)
{
    skip_ws(c);
    return c->p < c->end ? (unsigned char)*c->p : -1;
}

/* A Python string literal in single or double quotes (no escapes in dtype text). */
static int parse_string(cursor *c, char *out, size_t cap)
{
    int q = peek(c);
    if (q != '\'' && q != '"') return cur_fail(c, "expected a quoted string");
    const char *s = ++c->p;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\') return cur_fail(c, "escapes in strings are not supported");
        c->p++;
    }
    if (c->p >= c->end) return cur_fail(c, "unterminated string");
    size_t len = (size_t)(c->p - s);
    c->p++;
    if (len >= cap) return cur_fail(c, "string '%.20s...' too long", s);
    memcpy(out, s, len);
    out[len] = 0;
    return 0;
}

static int parse_bool(cursor *c, int *out)
{
    skip_ws(c);
    size_t left = (size_t)(c->end - c->p);
    if (left >= 4 && memcmp(c->p, "True", 4) == 0) { *out = 1; c->p += 4; return 0; }
    if (left >= 5 && memcmp(c->p, "False", 5) == 0) { *out = 0; c->p += 5; return 0; }
    return cur_fail(c, "expected True or False for 'fortran_order'");
}

/* A non-negative decimal integer (Python 2 files may add an 'L'). */
static int parse_dim(cursor *c, int64_t *out)
{
    skip_ws(c);
    if (c->p >= c->end || !isdigit((unsigned char)*c->p))
        return cur_fail(c, "expected a non-negative integer in 'shape'");
    int64_t v = 0;
    while (c->p < c->end && isdigit((unsigned char)*c->p)) {
        int d = *c->p++ - '0';
        if (v > (INT64_MAX - d) / 10) return cur_fail(c, "dimension too large in 'shape'");
        v = v * 10 + d;
    }
    if (c->p < c->end && *c->p == 'L') c->p++;
    *out = v;
    return 0;
}

/* "(d0, d1, ...)" with an optional trailing comma; "()" is a scalar. */
static int parse_shape(cursor *c, npy_header *h)
{
    if (expect(c, '(')) return cur_fail(c, "'shape' must be a tuple");
    h->ndim = 0;
    while (peek(c) != ')') {
        int64_t d = 0;
        if (parse_dim(c, &d)) return -1;
        if (h->ndim == OQ_MAX_DIMS)
            return cur_fail(c, "rank above %d is not supported", OQ_MAX_DIMS);
        h->shape[h->ndim++] = d;
        if (peek(c) == ',') c->p++;
        else if (peek(c) != ')') return cur_fail(c, "expected ',' or ')' in 'shape'");
    }
    c->p++;
    return 0;
}

static int parse_value(cursor *c, const char *key, npy_header *h)
{
    if (strcmp(key, "descr") == 0) {
        h->seen_descr = 1;
        if (peek(c) == '[') { h->descr_is_list = 1; return 0; } /* refused by the caller */
        return parse_string(c, h->descr, sizeof h->descr);
    }
    if (strcmp(key, "fortran_order") == 0) {
        h->seen_fortran = 1;
        return parse_bool(c, &h->fortran_order);
    }
    if (strcmp(key, "shape") == 0) {
        h->seen_shape = 1;
        return parse_shape(c, h);
    }
    return cur_fail(c, "unexpected key '%s'", key);
}

/* Parse "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" + padding. */
static int parse_header_dict(cursor *c, npy_header *h)
{
    memset(h, 0, sizeof *h);
    if (expect(c, '{')) return -1;
    while (peek(c) != '}') {
        char key[32];
        if (parse_string(c, key, sizeof key) || expect(c, ':') || parse_value(c, key, h))
            return -1;
        if (h->descr_is_list) return 0;
        if (peek(c) == ',') c->p++;
        else if (peek(c) != '}') return cur_fail(c, "expected ',' or '}'");
    }
    c->p++;
    skip_ws(c);
    if (c->p != c->end) return cur_fail(c, "unexpected text after the dict");
    if (!h->seen_descr || !h->seen_fortran || !h->seen_shape)
        return cur_fail(c, "missing key '%s'",
                        !h->seen_descr ? "descr" : !h->seen_fortran ? "fortran_order" : "shape");
    return 0;
}

static const struct {
    const char *kind; /* descr without its byte-order mark */
    oq_dtype dtype;
} NPY_KINDS[] = {
    {"f4", OQ_DTYPE_FLOAT32}, {"f2", OQ_DTYPE_FLOAT16}, {"f8", OQ_DTYPE_FLOAT64},
    {"i8", OQ_DTYPE_INT64},   {"i4", OQ_DTYPE_INT32},   {"b1", OQ_DTYPE_BOOL},
    {"u1", OQ_DTYPE_UINT8},   {"i1", OQ_DTYPE_INT8},    {"u2", OQ_DTYPE_UINT16},
    {"i2", OQ_DTYPE_INT16},   {"u4", OQ_DTYPE_UINT32},  {"u8", OQ_DTYPE_UINT64},
    /* numpy has no bfloat16: numpy.save of an ml_dtypes.bfloat16 array writes its dtype.str, a
     * 2-byte void, and ml_dtypes has no other 2-byte type; validate and bench feed it only to a
     * bfloat16 input (oq_npz_feed_as) */
    {"V2", OQ_DTYPE_BFLOAT16},
};

/* Map a descr to a dtype or explain, by name, why it is refused. */
static oq_status descr_to_dtype(const char *descr, const char *who, oq_dtype *out, oq_err *err)
{
    char order = descr[0];
    const char *kind = order && strchr("<>|=", order) ? descr + 1 : descr;
    if (kind[0] == 'O')
        return oq_err_set(err, OQ_ERR_UNSUPPORTED, "%s: object arrays ('%s') are not supported",
                          who, descr);
    for (size_t i = 0; i < sizeof NPY_KINDS / sizeof NPY_KINDS[0]; i++) {
        if (strcmp(kind, NPY_KINDS[i].kind) != 0) continue;
        if (order == '>')
            return oq_err_set(err, OQ_ERR_UNSUPPORTED,
                              "%s: big-endian dtype '%s' is not supported (save it as '<%s')",
                              who, descr, kind);
        *out = NPY_KINDS[i].dtype;
        return OQ_OK;
    }
    return oq_err_set(err, OQ_ERR_UNSUPPORTED,
                      "%s: unsupported dtype '%s' (supported: <f4 <f2 <f8 <i8 <i4 |b1 |u1 |i1 <u2 <i2 <u4 <u8, "
                      "and <V2 as ml_dtypes.bfloat16)", who,
                      descr);
}

static uint32_t read_le(const unsigned char *p, int bytes)
{
    uint32_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* Locate the header text and the data behind it. */
static oq_status split_preamble(const unsigned char *b, size_t n, const char *who,
                                const char **hdr, size_t *hdr_len, size_t *data_off, oq_err *err)
{
    if (n < sizeof NPY_MAGIC || memcmp(b, NPY_MAGIC, sizeof NPY_MAGIC) != 0)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: not a .npy file (bad magic)", who);
    if (n < NPY_PREAMBLE_V1)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: truncated .npy preamble (%zu bytes)", who, n);
    int major = b[6], minor = b[7];
    if (minor != 0 || major < 1 || major > 3)
        return oq_err_set(err, OQ_ERR_UNSUPPORTED,
                          "%s: unsupported .npy format version %d.%d (known: 1.0, 2.0, 3.0)", who,
                          major, minor);
    size_t pre = major == 1 ? NPY_PREAMBLE_V1 : NPY_PREAMBLE_V2;
    if (n < pre)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: truncated .npy preamble (%zu bytes)", who, n);
    size_t len = read_le(b + 8, major == 1 ? 2 : 4);
    if (len > n - pre)
        return oq_err_set(err, OQ_ERR_FORMAT,
                          "%s: truncated .npy header (%zu bytes declared, %zu present)", who, len,
                          n - pre);
    *hdr = (const char *)b + pre;
    *hdr_len = len;
    *data_off = pre + len;
    return OQ_OK;
}

/* Bytes the array needs, refusing overflow: like numpy (and oq_tensor_create), the
 * non-zero dimensions must multiply to a representable size even beside a 0. */
static oq_status payload_size(const npy_header *h, oq_dtype dt, const char *who, size_t *bytes,
                              oq_err *err)
{
    uint64_t total = oq_dtype_size(dt);
    int empty = 0;
    for (int32_t i = 0; i < h->ndim; i++) {
        if (!h->shape[i]) {
            empty = 1;
            continue;
        }
        if (total > (uint64_t)INT64_MAX / (uint64_t)h->shape[i])
            return oq_err_set(err, OQ_ERR_FORMAT, "%s: array size overflows", who);
        total *= (uint64_t)h->shape[i];
    }
    *bytes = empty ? 0 : (size_t)total;
    return OQ_OK;
}

oq_status oq_npy_parse(const void *buf, size_t n, const char *name_for_errors, oq_tensor **out,
                       oq_err *err)
{
    OQ_NEED(err, out);
    OQ_NEED_N(err, n, buf);
    const char *who = name_for_errors ? name_for_errors : "<memory>";
    const unsigned char *b = buf;
    const char *text = NULL;
    size_t text_len = 0, off = 0;
    oq_status st = split_preamble(b, n, who, &text, &text_len, &off, err);
    if (st) return st;

    cursor c = {.p = text, .end = text + text_len};
    npy_header h;
    if (parse_header_dict(&c, &h))
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: malformed .npy header: %s", who, c.why);
    if (h.descr_is_list)
        return oq_err_set(err, OQ_ERR_UNSUPPORTED,
                          "%s: structured dtypes (a list 'descr') are not supported", who);
    oq_dtype dt = OQ_DTYPE_UNDEFINED;
    if ((st = descr_to_dtype(h.descr, who, &dt, err))) return st;
    if (h.fortran_order)
        return oq_err_set(err, OQ_ERR_UNSUPPORTED,
                          "%s: Fortran-order arrays are not supported (save with "
                          "numpy.ascontiguousarray)", who);
    size_t bytes = 0;
    if ((st = payload_size(&h, dt, who, &bytes, err))) return st;
    if (n - off < bytes)
        return oq_err_set(err, OQ_ERR_FORMAT,
                          "%s: truncated data (%zu bytes expected, %zu present)", who, bytes,
                          n - off);
    if (n - off > bytes)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: %zu unexpected bytes after the data", who,
                          n - off - bytes);

    oq_tensor *t;
    if ((st = oq_tensor_create(&t, dt, h.ndim, h.shape, NULL, err)))
        return oq_err_prefix(err, "%s: ", who);
    memcpy(t->data, b + off, bytes);
    oq_tensor_normalize_bools(t); /* numpy treats any non-zero byte as True */
    *out = t;
    return OQ_OK;
}

oq_status oq_npy_read(const char *path, oq_tensor **out, oq_err *err)
{
    OQ_NEED(err, path);
    OQ_NEED(err, out);
    unsigned char *buf;
    size_t n;
    oq_status st = oq_read_file(path, &buf, &n, err);
    if (st) return st;
    st = oq_npy_parse(buf, n, path, out, err);
    free(buf);
    return st;
}

const char *oq_npy_descr(oq_dtype dt)
{
    switch (dt) {
    case OQ_DTYPE_FLOAT32: case OQ_DTYPE_BFLOAT16: return "<f4";
    case OQ_DTYPE_FLOAT16: return "<f2";
    case OQ_DTYPE_FLOAT64: return "<f8";
    case OQ_DTYPE_INT64: return "<i8";
    case OQ_DTYPE_INT32: return "<i4";
    case OQ_DTYPE_BOOL: return "|b1";
    case OQ_DTYPE_UINT8: return "|u1";
    case OQ_DTYPE_INT8: return "|i1";
    case OQ_DTYPE_UINT16: return "<u2";
    case OQ_DTYPE_INT16: return "<i2";
    case OQ_DTYPE_UINT32: return "<u4";
    case OQ_DTYPE_UINT64: return "<u8";
    case OQ_DTYPE_UNDEFINED: break;
    }
    return NULL;
}

/* Version 1.0 header, padded with spaces and a newline to a multiple of 64 as numpy does. */
static void make_header(const oq_tensor *t, const char *descr, oq_npy_parts *p)
{
    char dict[OQ_NPY_HEADER_MAX];
    int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                       descr);
    for (int32_t i = 0; i < t->ndim; i++)
        len += snprintf(dict + len, sizeof dict - (size_t)len, "%s%" PRId64, i ? ", " : "",
                        t->shape[i]);
    len += snprintf(dict + len, sizeof dict - (size_t)len, "%s), }", t->ndim == 1 ? "," : "");
    size_t total = (NPY_PREAMBLE_V1 + (size_t)len + 1 + 63) / 64 * 64;
    OQ_ASSERT(total <= sizeof p->header);
    size_t hlen = total - NPY_PREAMBLE_V1;
    memcpy(p->header, NPY_MAGIC, sizeof NPY_MAGIC);
    p->header[6] = 1;
    p->header[7] = 0;
    p->header[8] = (unsigned char)(hlen & 0xff);
    p->header[9] = (unsigned char)(hlen >> 8);
    memcpy(p->header + NPY_PREAMBLE_V1, dict, (size_t)len);
    memset(p->header + NPY_PREAMBLE_V1 + len, ' ', hlen - (size_t)len - 1);
    p->header[total - 1] = '\n';
    p->header_len = total;
}

oq_status oq_npy_parts_make(const oq_tensor *t, oq_npy_parts *p, oq_err *err)
{
    memset(p, 0, sizeof *p);
    const char *descr = oq_npy_descr(t->dtype);
    if (!descr)
        return oq_err_set(err, OQ_ERR_UNSUPPORTED,
                          "tensor '%s': dtype %d cannot be written to .npy",
                          t->name ? t->name : "", (int)t->dtype);
    if (t->ndim < 0 || t->ndim > OQ_MAX_DIMS)
        return oq_err_set(err, OQ_ERR_SHAPE, "tensor '%s': rank %d outside 0..%d",
                          t->name ? t->name : "", t->ndim, OQ_MAX_DIMS);
    make_header(t, descr, p);
    p->payload = t->data;
    p->payload_len = oq_tensor_nbytes(t);
    if (t->dtype == OQ_DTYPE_BFLOAT16) { /* numpy has no bfloat16: widen, exactly */
        int64_t count = oq_tensor_numel(t);
        float *f = malloc(count ? (size_t)count * sizeof *f : 1);
        if (!f) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        const uint16_t *bits = t->data;
        for (int64_t i = 0; i < count; i++) f[i] = oq_bf16_bits_to_f32(bits[i]);
        p->owned = f;
        p->payload = f;
        p->payload_len = (size_t)count * sizeof *f;
    }
    if (t->dtype != OQ_DTYPE_BOOL) return OQ_OK;
    return oq_tensor_canonical_bytes(t, &p->payload, &p->owned, err); /* numpy bools are 0 and 1 */
}

void oq_npy_parts_release(oq_npy_parts *p)
{
    free(p->owned);
    p->owned = NULL;
}

oq_status oq_npy_serialize(const oq_tensor *t, unsigned char **buf, size_t *n, oq_err *err)
{
    OQ_NEED(err, t);
    OQ_NEED(err, buf);
    OQ_NEED(err, n);
    oq_npy_parts p;
    oq_status st = oq_npy_parts_make(t, &p, err);
    if (st) return st;
    unsigned char *b = malloc(p.header_len + p.payload_len);
    if (!b) {
        oq_npy_parts_release(&p);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    memcpy(b, p.header, p.header_len);
    if (p.payload_len) memcpy(b + p.header_len, p.payload, p.payload_len);
    *buf = b;
    *n = p.header_len + p.payload_len;
    oq_npy_parts_release(&p);
    return OQ_OK;
}

oq_status oq_npy_write(const char *path, const oq_tensor *t, int overwrite, oq_err *err)
{
    OQ_NEED(err, path);
    OQ_NEED(err, t);
    oq_npy_parts p;
    oq_status st = oq_npy_parts_make(t, &p, err);
    if (st) return oq_err_prefix(err, "%s: ", path);
    oq_atomic_file af;
    if ((st = oq_atomic_open(&af, path, overwrite, err))) {
        oq_npy_parts_release(&p);
        return st;
    }
    int bad = fwrite(p.header, 1, p.header_len, af.fp) != p.header_len ||
              (p.payload_len && fwrite(p.payload, 1, p.payload_len, af.fp) != p.payload_len);
    int saved = errno;
    oq_npy_parts_release(&p);
    if (bad) {
        oq_atomic_abort(&af);
        return oq_err_set(err, OQ_ERR_OUTPUT, "%s: write failed: %s", path, strerror(saved));
    }
    return oq_atomic_commit(&af, err);
}
