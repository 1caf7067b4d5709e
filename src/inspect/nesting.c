/* How deep a model's messages nest, read off the wire before protobuf-c unpacks it.
 *
 * protobuf-c unpacks a nested message by recursing, with no limit: a 112 KB model of If nodes
 * nested 3000 deep (then_branch in then_branch ...) overflowed the stack of every command that
 * read it (SIGSEGV, no message, in validate's parent). The walk here keeps its own bounded
 * stack, follows only the fields onnx.proto's descriptors call messages (bytes and strings are
 * skipped whole), and so costs one pass over the tags. */
#include <protobuf-c/protobuf-c.h>

#include "inspect/model-impl.h"

typedef struct level {
    const ProtobufCMessageDescriptor *d;
    size_t end; /* where this message's bytes end */
} level;

/* The varint at *p (before end), *p moved past it; 0 when it runs past end or 10 bytes. */
static int varint(const uint8_t *b, size_t end, size_t *p, uint64_t *v)
{
    *v = 0;
    for (unsigned shift = 0; shift < 64 && *p < end; shift += 7) {
        uint8_t c = b[(*p)++];
        *v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) return 1;
    }
    return 0;
}

/* The message field numbered `number` of `d`, if it is one. */
static const ProtobufCMessageDescriptor *message_field(const ProtobufCMessageDescriptor *d, uint64_t number)
{
    const ProtobufCFieldDescriptor *f = number <= 0x1fffffff ? protobuf_c_message_descriptor_get_field(d, (unsigned)number) : NULL;
    return f && f->type == PROTOBUF_C_TYPE_MESSAGE ? f->descriptor : NULL;
}

/* One field at *p of the message on top of the stack: *p moved past it, or into it (pushed)
 * when it is a message. 0: malformed here (protobuf-c reports it); -1: one level too deep. */
static int step(const uint8_t *b, level *stack, int *depth, size_t *p)
{
    level *top = &stack[*depth];
    uint64_t tag, v;
    if (!varint(b, top->end, p, &tag)) return 0;
    switch (tag & 7) {
    case 0: return varint(b, top->end, p, &v);
    case 1:
    case 5: {
        size_t w = (tag & 7) == 1 ? 8 : 4;
        if (top->end - *p < w) return 0;
        *p += w;
        return 1;
    }
    case 2: {
        if (!varint(b, top->end, p, &v) || v > top->end - *p) return 0;
        const ProtobufCMessageDescriptor *sub = message_field(top->d, tag >> 3);
        if (!sub) {
            *p += (size_t)v;
            return 1;
        }
        if (*depth == OQ_ONNX_NESTING_MAX) return -1;
        stack[++*depth] = (level){sub, *p + (size_t)v};
        return 1;
    }
    default: return 0; /* groups: not in onnx.proto */
    }
}

oq_status oq_model_nesting_check(const uint8_t *buf, size_t n, const char *name, oq_err *err)
{
    level stack[OQ_ONNX_NESTING_MAX + 1];
    int depth = 0, r = 1;
    size_t p = 0;
    stack[0] = (level){&onnx__model_proto__descriptor, n};
    while (r > 0) {
        while (depth > 0 && p >= stack[depth].end) depth--;
        if (p >= stack[depth].end) break;
        r = step(buf, stack, &depth, &p);
    }
    if (r >= 0) return OQ_OK;
    return oq_err_set(err, OQ_ERR_FORMAT, "%s: messages nested deeper than %d levels (subgraphs in subgraphs), "
                      "the most protobuf, and so ONNX Runtime, reads", name, OQ_ONNX_NESTING_MAX);
}
