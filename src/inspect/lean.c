/* A model read for inspection without the bytes of its large initializers.
 *
 * Inspection needs a model's graph (nodes, inputs and outputs, the initializers' types, shapes
 * and sizes, the values of small ones such as shape constants), never the bytes of its
 * weights. A plain read and unpack copied them twice: a 300 MB model cost ~1.2 s and 600 MB
 * of fresh memory each time, and validate inspects a user's model several times (in the
 * parent and in every worker). Here the file is read (pread, never mapped) and its protobuf
 * copied with the raw_data of every graph initializer larger than LEAN_RAW emptied; after the unpack those
 * initializers get their byte counts back (raw_data.len, with raw_data.data NULL), which is
 * what inspection reads: tensor_bytes counts them, and their elements read as unknown.
 * Anything the copy does not understand (a group, a truncated field) falls back to the plain
 * read, whose parse reports it as before. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core-impl.h"
#include "inspect/model-impl.h"
#include "ortqual/fileio.h"

/* Initializers whose raw_data is larger than this are weights: inspection never reads them. */
#define LEAN_RAW 65536

/* Field numbers of onnx.proto on the path to an initializer's bytes. */
enum { MODEL_GRAPH = 7, GRAPH_INITIALIZER = 5, TENSOR_RAW_DATA = 9 };
enum { AT_MODEL, AT_GRAPH, AT_TENSOR };

typedef struct emptied {
    size_t initializer; /* its index among the graph's initializers */
    size_t len;         /* its raw_data's bytes */
} emptied;

typedef struct lean {
    size_t keep;        /* raw_data of at most this many bytes is copied */
    size_t n_init;      /* initializers of the graph seen so far */
    emptied *emptied;
    size_t n_emptied;
    int nested_graph;   /* more than one graph field: indices would not match, give up */
} lean;

/* The bytes being copied: a buffer, or a file read with pread (never mapped: a file
 * truncated under a mapping faults with SIGBUS, a short read is only a failed copy). */
typedef struct src {
    const uint8_t *mem; /* the whole input, or NULL: read fd */
    int fd;
    uint64_t size;
    uint8_t *win; /* a window of the file, for tags and lengths */
    uint64_t win_off;
    size_t win_len;
} src;

#define WIN 65536

/* The window holds off (read there when it does not); 0 when the file ended first. */
static int src_window(src *s, uint64_t off)
{
    if (off >= s->win_off && off < s->win_off + s->win_len) return 1;
    ssize_t n = pread(s->fd, s->win, WIN, (off_t)off);
    if (n <= 0) return 0; /* the file shrank */
    s->win_off = off;
    s->win_len = (size_t)n;
    return 1;
}

static int src_byte(src *s, uint64_t off, uint8_t *b)
{
    if (off >= s->size) return 0;
    if (s->mem) {
        *b = s->mem[off];
        return 1;
    }
    if (!src_window(s, off)) return 0;
    *b = s->win[off - s->win_off];
    return 1;
}

/* Bytes off .. off+len of the input appended to out; 0 when the file ended first. Through the
 * window, so that a graph of many small fields costs a read per 64 KiB, not one per field. */
static int src_copy(src *s, uint64_t off, uint64_t len, oq_dynbuf *out)
{
    if (len > s->size - off) return 0;
    if (s->mem) return oq_dynbuf_addn(out, s->mem + off, (size_t)len) == OQ_OK;
    while (len) {
        if (!src_window(s, off)) return 0;
        const uint64_t here = s->win_off + s->win_len - off;
        const size_t n = (size_t)(len < here ? len : here);
        if (oq_dynbuf_addn(out, s->win + (off - s->win_off), n) != OQ_OK) return 0;
        off += n;
        len -= n;
    }
    return 1;
}

static int varint(src *s, uint64_t *p, uint64_t end, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t b;
        if (!src_byte(s, (*p)++, &b)) return 0;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return 1;
    }
    return 0;
}

static int put_varint(oq_dynbuf *out, uint64_t v)
{
    uint8_t b[10];
    size_t n = 0;
    do {
        b[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return oq_dynbuf_addn(out, b, n) == OQ_OK;
}

static int copy_message(src *s, uint64_t p, uint64_t end, int at, oq_dynbuf *out, lean *l);

/* A length-delimited field of the message at level `at`: copied, recursed into, or emptied. */
static int copy_delimited(src *s, uint64_t tag, uint64_t start, uint64_t body, uint64_t len, int at,
                          oq_dynbuf *out, lean *l)
{
    const int field = (int)(tag >> 3);
    const int inner = at == AT_MODEL && field == MODEL_GRAPH       ? AT_GRAPH
                      : at == AT_GRAPH && field == GRAPH_INITIALIZER ? AT_TENSOR
                                                                     : -1;
    if (at == AT_TENSOR && field == TENSOR_RAW_DATA && len > l->keep) {
        emptied *e = OQ_PUSH(l->emptied, l->n_emptied);
        if (!e) return 0;
        *e = (emptied){l->n_init, (size_t)len};
        return put_varint(out, tag) && put_varint(out, 0);
    }
    if (inner < 0) return src_copy(s, start, body - start + len, out);
    if (inner == AT_GRAPH && l->nested_graph++) return 0;
    oq_dynbuf sub = {0};
    int ok = copy_message(s, body, body + len, inner, &sub, l) && put_varint(out, tag) &&
             put_varint(out, sub.len) && oq_dynbuf_addn(out, sub.buf ? sub.buf : "", sub.len) == OQ_OK;
    free(sub.buf);
    if (inner == AT_TENSOR) l->n_init++;
    return ok;
}

/* The fields of one message, p .. end, into out; 0 for what this copy does not handle. */
static int copy_message(src *s, uint64_t p, uint64_t end, int at, oq_dynbuf *out, lean *l)
{
    while (p < end) {
        const uint64_t start = p;
        uint64_t tag, v;
        if (!varint(s, &p, end, &tag)) return 0;
        switch (tag & 7) {
        case 0:
            if (!varint(s, &p, end, &v)) return 0;
            break;
        case 1:
        case 5:
            if (end - p < ((tag & 7) == 1 ? 8u : 4u)) return 0;
            p += (tag & 7) == 1 ? 8 : 4;
            break;
        case 2:
            if (!varint(s, &p, end, &v) || v > end - p) return 0;
            if (!copy_delimited(s, tag, start, p, v, at, out, l)) return 0;
            p += v;
            continue;
        default: return 0; /* groups: not in onnx.proto */
        }
        if (!src_copy(s, start, p - start, out)) return 0;
    }
    return 1;
}

/* The emptied initializers' byte counts back, without their data. */
static void restore_counts(Onnx__ModelProto *m, const lean *l)
{
    for (size_t i = 0; m && m->graph && i < l->n_emptied; i++) {
        const emptied *e = &l->emptied[i];
        if (e->initializer >= m->graph->n_initializer) continue;
        Onnx__TensorProto *t = m->graph->initializer[e->initializer];
        if (!t->has_raw_data || t->raw_data.len) continue;
        t->raw_data.data = NULL;
        t->raw_data.len = e->len;
    }
}

/* The lean copy of s unpacked into *out (NULL when protobuf-c rejects it); 0 when the copy
 * failed (a field it does not handle, or a file that ended early); -1 when it nests too deep
 * (err says so, naming `name`; the copy's nesting is the model's: only bytes were left out). */
static int unpack_src(src *s, size_t keep, const char *name, oq_err *err, Onnx__ModelProto **out)
{
    lean l = {.keep = keep};
    oq_dynbuf copy = {0};
    *out = NULL;
    int ok = copy_message(s, 0, s->size, AT_MODEL, &copy, &l);
    const uint8_t *bytes = (const uint8_t *)(copy.buf ? copy.buf : "");
    if (ok && oq_model_nesting_check(bytes, copy.len, name, err)) ok = -1;
    if (ok > 0) {
        *out = onnx__model_proto__unpack(NULL, copy.len, bytes);
        restore_counts(*out, &l);
    }
    free(copy.buf);
    free(l.emptied);
    return ok;
}

int oq_model_unpack_lean(const uint8_t *buf, size_t n, size_t keep, Onnx__ModelProto **out)
{
    src s = {.mem = buf ? buf : (const uint8_t *)"", .size = buf ? n : 0};
    return unpack_src(&s, keep, "", NULL, out) > 0; /* -1, nested too deep: the plain unpack refuses it */
}

oq_status oq_model_parse_failed(const char *name, oq_err *err)
{
    return oq_err_set(err, OQ_ERR_FORMAT, "%s: not an ONNX model (protobuf parse failed: truncated, corrupt or "
                      "another format)", name);
}

/* A lean unpack's outcome (unpack_src) as a status: the copy failed (0) is not decided here. */
static oq_status lean_status(int done, const Onnx__ModelProto *m, const char *name, oq_err *err)
{
    if (done < 0) return OQ_ERR_FORMAT; /* nested too deep: err says so */
    return m ? OQ_OK : oq_model_parse_failed(name, err);
}

/* The whole unpack, its nesting checked first (protobuf-c recurses without a limit). */
static oq_status unpack_whole(const uint8_t *buf, size_t n, const char *name, Onnx__ModelProto **out, oq_err *err)
{
    oq_status st = oq_model_nesting_check(buf, n, name, err);
    if (!st) *out = onnx__model_proto__unpack(NULL, n, buf);
    return st || *out ? st : oq_model_parse_failed(name, err);
}

oq_status oq_model_unpack_checked(const uint8_t *buf, size_t n, const char *name, oq_unpack_kind kind,
                                  Onnx__ModelProto **out, oq_err *err)
{
    *out = NULL;
    if (!buf) buf = (const uint8_t *)"", n = 0;
    if (kind == OQ_UNPACK_LEAN && n > LEAN_RAW) { /* the copy's nesting is the model's: its check is the one check */
        src s = {.mem = buf, .size = n};
        int done = unpack_src(&s, LEAN_RAW, name, err, out);
        if (done) return lean_status(done, *out, name, err);
    }
    return unpack_whole(buf, n, name, out, err);
}

oq_status oq_model_proto_read(const char *path, Onnx__ModelProto **out, oq_err *err)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat sb;
    if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > LEAN_RAW) {
        src s = {.fd = fd, .size = (uint64_t)sb.st_size, .win = malloc(WIN)};
        int done = s.win ? unpack_src(&s, LEAN_RAW, path, err, out) : 0;
        free(s.win);
        if (done) {
            close(fd);
            return lean_status(done, *out, path, err);
        }
    }
    if (fd >= 0) close(fd);
    unsigned char *buf;
    size_t n;
    oq_status st = oq_read_file(path, &buf, &n, err);
    if (st) return st;
    st = unpack_whole(buf, n, path, out, err);
    free(buf);
    return st;
}
