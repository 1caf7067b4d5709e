/* A model read for inspection without the bytes of its large initializers.
 *
 * Inspection needs a model's graph (nodes, inputs and outputs, the initializers' types, shapes
 * and sizes, the values of small ones such as shape constants), never the bytes of its
 * weights. A plain read and unpack copied them twice: a 300 MB model cost ~1.2 s and 600 MB
 * of fresh memory each time, and validate inspects a user's model several times (in the
 * parent and in every worker). Here the file is mapped and its protobuf copied with the
 * raw_data of every graph initializer larger than LEAN_RAW emptied; after the unpack those
 * initializers get their byte counts back (raw_data.len, with raw_data.data NULL), which is
 * what inspection reads: tensor_bytes counts them, and their elements read as unknown.
 * Anything the copy does not understand (a group, a truncated field) falls back to the plain
 * read, whose parse reports it as before. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

static int varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; *p < end && shift < 64; shift += 7) {
        const uint8_t b = *(*p)++;
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

static int copy_message(const uint8_t *p, const uint8_t *end, int at, oq_dynbuf *out, lean *l);

/* A length-delimited field of the message at level `at`: copied, recursed into, or emptied. */
static int copy_delimited(uint64_t tag, const uint8_t *start, const uint8_t *body, size_t len, int at,
                          oq_dynbuf *out, lean *l)
{
    const int field = (int)(tag >> 3);
    const int inner = at == AT_MODEL && field == MODEL_GRAPH       ? AT_GRAPH
                      : at == AT_GRAPH && field == GRAPH_INITIALIZER ? AT_TENSOR
                                                                     : -1;
    if (at == AT_TENSOR && field == TENSOR_RAW_DATA && len > l->keep) {
        emptied *e = OQ_PUSH(l->emptied, l->n_emptied);
        if (!e) return 0;
        *e = (emptied){l->n_init, len};
        return put_varint(out, tag) && put_varint(out, 0);
    }
    if (inner < 0) return oq_dynbuf_addn(out, start, (size_t)(body - start) + len) == OQ_OK;
    if (inner == AT_GRAPH && l->nested_graph++) return 0;
    oq_dynbuf sub = {0};
    int ok = copy_message(body, body + len, inner, &sub, l) && put_varint(out, tag) && put_varint(out, sub.len) &&
             oq_dynbuf_addn(out, sub.buf ? sub.buf : "", sub.len) == OQ_OK;
    free(sub.buf);
    if (inner == AT_TENSOR) l->n_init++;
    return ok;
}

/* The fields of one message, p .. end, into out; 0 for what this copy does not handle. */
static int copy_message(const uint8_t *p, const uint8_t *end, int at, oq_dynbuf *out, lean *l)
{
    while (p < end) {
        const uint8_t *start = p;
        uint64_t tag, v;
        if (!varint(&p, end, &tag)) return 0;
        switch (tag & 7) {
        case 0:
            if (!varint(&p, end, &v)) return 0;
            break;
        case 1:
        case 5:
            if ((size_t)(end - p) < ((tag & 7) == 1 ? 8u : 4u)) return 0;
            p += (tag & 7) == 1 ? 8 : 4;
            break;
        case 2:
            if (!varint(&p, end, &v) || v > (uint64_t)(end - p)) return 0;
            if (!copy_delimited(tag, start, p, (size_t)v, at, out, l)) return 0;
            p += v;
            continue;
        default: return 0; /* groups: not in onnx.proto */
        }
        if (oq_dynbuf_addn(out, start, (size_t)(p - start)) != OQ_OK) return 0;
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

int oq_model_unpack_lean(const uint8_t *buf, size_t n, size_t keep, Onnx__ModelProto **out)
{
    lean l = {.keep = keep};
    oq_dynbuf copy = {0};
    *out = NULL;
    int ok = copy_message(buf, buf + n, AT_MODEL, &copy, &l);
    if (ok) {
        *out = onnx__model_proto__unpack(NULL, copy.len, (const uint8_t *)(copy.buf ? copy.buf : ""));
        restore_counts(*out, &l);
    }
    free(copy.buf);
    free(l.emptied);
    return ok;
}

oq_status oq_model_proto_read(const char *path, Onnx__ModelProto **out, oq_err *err)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat sb;
    if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > LEAN_RAW) {
        void *map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        int done = map != MAP_FAILED && oq_model_unpack_lean(map, (size_t)sb.st_size, LEAN_RAW, out);
        if (map != MAP_FAILED) munmap(map, (size_t)sb.st_size);
        if (done) {
            close(fd);
            return OQ_OK;
        }
    }
    if (fd >= 0) close(fd);
    unsigned char *buf;
    size_t n;
    oq_status st = oq_read_file(path, &buf, &n, err);
    if (st) return st;
    *out = onnx__model_proto__unpack(NULL, n, buf);
    free(buf);
    return OQ_OK;
}
