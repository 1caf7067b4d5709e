/* Attention dispatch: which kernel each attention node of ONNX Runtime ran.
 *
 * A fused attention kernel and ORT's MATH fallback give the same numbers, so
 * only ORT's own routing text proves which one ran. With
 * ORT_ENABLE_ATTENTION_KERNEL_DEBUG_INFO=1 set before the session is created,
 * the CUDA attention kernels print, on native fd 1, in cyan:
 *
 *     AttentionKernelOptions: FLASH_ATTENTION=1 EFFICIENT_ATTENTION=1 ... MATH=1
 *     Operator=Attention Node=attn0 DataType=fp16 SdpaKernel=FLASH_ATTENTION
 *
 * one options line per session (what was enabled; not what ran) and one
 * routing line per attention node per Run (what ran). This header parses that
 * text out of any stream and checks it against expectations:
 *
 *     oq_dispatch_parser *p;
 *     oq_dispatch_parser_create(&p, NULL);
 *     oq_dispatch_parser_feed(p, chunk, n, NULL);     // as often as text arrives
 *     oq_dispatch_parser_finish(p, NULL);             // flush a last unterminated line
 *     const oq_dispatch_log *log = oq_dispatch_parser_log(p);
 *
 *     oq_dispatch_expect *e;
 *     oq_dispatch_expect_create(&e, NULL);
 *     oq_dispatch_expect_add(e, "flash", NULL);       // every node: FLASH_ATTENTION
 *     oq_dispatch_expect_add(e, "attn3=math", NULL);  // except attn3
 *     oq_dispatch_report r;
 *     oq_dispatch_check(e, log, &r, NULL);            // r.passed, r.failures[i], r.failed[i]
 *
 * The parser strips ANSI escape sequences, accepts CRLF, joins lines split
 * across chunks, and finds routing text even when other output shares the
 * line (e.g. pytest's "test_a.py::test_x " progress text before it). Every
 * line that is not routing text (and the non-routing part of a mixed line) is
 * handed to an optional pass-through callback, so a capture can forward it.
 */
#ifndef ORTQUAL_DISPATCH_H
#define ORTQUAL_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

#include "ortqual/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kernels ORT names after "SdpaKernel=" (AttentionKernelDebugInfo::Print in
 * onnxruntime/contrib_ops/cuda/bert/attention_kernel_options.cc). A name this
 * build does not know parses as OQ_SDPA_UNKNOWN and keeps its raw text in
 * oq_dispatch_record.kernel_name. */
typedef enum oq_sdpa_kernel {
    OQ_SDPA_UNKNOWN = 0,
    OQ_SDPA_FLASH_ATTENTION,
    OQ_SDPA_EFFICIENT_ATTENTION,
    OQ_SDPA_TRT_FUSED_ATTENTION,
    OQ_SDPA_CUDNN_FLASH_ATTENTION,
    OQ_SDPA_MATH,
    OQ_SDPA_TRT_FLASH_ATTENTION,
    OQ_SDPA_TRT_CROSS_ATTENTION,
    OQ_SDPA_TRT_CAUSAL_ATTENTION,
    OQ_SDPA_LEAN_ATTENTION,
    OQ_SDPA_DECODER_ATTENTION,
    OQ_SDPA_COUNT_ /* number of values, not a kernel */
} oq_sdpa_kernel;

/* ORT's name ("FLASH_ATTENTION"); "UNKNOWN" for OQ_SDPA_UNKNOWN, "unknown" outside the enum. Never NULL. */
OQ_API const char *oq_sdpa_kernel_name(oq_sdpa_kernel k);

/* The kernel for an ORT name or a short alias, case-insensitive: every ORT
 * name, and the name without "_ATTENTION" (flash, efficient, trt_fused,
 * cudnn_flash, trt_flash, trt_cross, trt_causal, lean, decoder), plus "cudnn"
 * for CUDNN_FLASH_ATTENTION. OQ_SDPA_UNKNOWN when it is none of these, or NULL. */
OQ_API oq_sdpa_kernel oq_sdpa_kernel_from_name(const char *name);

/* The bit of the CUDA provider option `sdpa_kernel` that enables kernel `k`
 * (ORT's AttentionBackend: FLASH_ATTENTION=1, EFFICIENT_ATTENTION=2,
 * TRT_FUSED_ATTENTION=4, CUDNN_FLASH_ATTENTION=8, MATH=16,
 * TRT_FLASH_ATTENTION=32, TRT_CROSS_ATTENTION=64, TRT_CAUSAL_ATTENTION=128,
 * LEAN_ATTENTION=256, DECODER_ATTENTION=512). OR them to build the option's
 * decimal value; 0 means "ORT's default order". Returns 0 for
 * OQ_SDPA_UNKNOWN. */
OQ_API uint32_t oq_dispatch_kernel_mask(oq_sdpa_kernel k);

/* One routing line. Strings are owned by the parser and NUL-terminated. */
typedef struct oq_dispatch_record {
    const char *op;          /* "Attention", "MultiHeadAttention", ...; "" if not printed */
    const char *node;        /* node name; "" when ORT printed none (unnamed node) */
    const char *dtype;       /* "fp16", "bf16" or "fp32"; "" if not printed */
    const char *kernel_name; /* exactly as printed after "SdpaKernel=" */
    oq_sdpa_kernel kernel;        /* kernel_name parsed; OQ_SDPA_UNKNOWN keeps the raw name above */
    uint64_t line;           /* 1-based line number, in the text fed to the parser, of the first */
    uint64_t count;          /* routing lines with these four values (ORT prints one per node per Run) */
} oq_dispatch_record;

typedef struct oq_dispatch_option {
    const char *name; /* "FLASH_ATTENTION", "MATH", ... */
    long value;       /* 1 enabled, 0 disabled */
} oq_dispatch_option;

/* One "AttentionKernelOptions:" line: the kernels a session allowed. ORT decides
 * some preferences later (cuDNN on SM >= 90 runs with CUDNN_FLASH_ATTENTION=0
 * here), so trust the routing lines, not this one, for what ran. */
typedef struct oq_dispatch_options {
    oq_dispatch_option *opts;
    size_t n_opts;
    uint64_t line;
} oq_dispatch_options;

/* Everything parsed so far: one record per distinct (op, node, dtype, kernel
 * name), in the order of their first lines, with the number of lines (so that a
 * long run's log stays the size of its model); the option lines in input order.
 * Owned by the parser. */
typedef struct oq_dispatch_log {
    oq_dispatch_record *records;
    size_t n_records;
    oq_dispatch_options *options;
    size_t n_options;
} oq_dispatch_log;

typedef struct oq_dispatch_parser oq_dispatch_parser;

/* Receives text that is not routing text: `n` raw bytes (colour codes kept),
 * ending with the line's own terminator ("\n" or "\r\n") when it had one. For a
 * line that mixed routing text with other output, it receives the other output
 * with the colour codes stripped, then the line's terminator. Called from
 * inside oq_dispatch_parser_feed/finish. */
typedef void (*oq_dispatch_passthrough_fn)(void *user, const char *text, size_t n,
                                           uint64_t line);

OQ_API oq_status oq_dispatch_parser_create(oq_dispatch_parser **out, oq_err *err);
OQ_API void oq_dispatch_parser_free(oq_dispatch_parser *p);

/* Install (or with fn == NULL remove) the pass-through callback. */
OQ_API void oq_dispatch_parser_set_passthrough(oq_dispatch_parser *p, oq_dispatch_passthrough_fn fn,
                                               void *user);

/* Feed `n` bytes in any chunking: a line split across calls is joined before
 * it is parsed. Fails only with OQ_ERR_NOMEM. */
OQ_API oq_status oq_dispatch_parser_feed(oq_dispatch_parser *p, const void *buf, size_t n, oq_err *err);

/* Parse a last line that has no terminator. Feeding may continue afterwards. */
OQ_API oq_status oq_dispatch_parser_finish(oq_dispatch_parser *p, oq_err *err);

/* src's records counted into dst by route (node, kernel, op, dtype), as the parser counts
 * lines: a route dst has adds src's count, a new one is appended (with its line number, which
 * is src's). The records' strings move to dst; src keeps emptied records (clear it as usual);
 * its option lines are not taken. OQ_ERR_NOMEM leaves the records not yet taken in src. */
OQ_API oq_status oq_dispatch_log_merge(oq_dispatch_log *dst, oq_dispatch_log *src, oq_err *err);

/* A copy of `src` the caller owns (release it with oq_dispatch_log_clear). OQ_ERR_NOMEM. */
OQ_API oq_status oq_dispatch_log_copy(oq_dispatch_log *dst, const oq_dispatch_log *src, oq_err *err);
/* Release the records and options of a log the caller owns (a copy); a parser's own log
 * goes with oq_dispatch_parser_free. */
OQ_API void oq_dispatch_log_clear(oq_dispatch_log *log);

/* What was parsed so far; valid until the next feed/finish/free. NULL for a NULL parser. */
OQ_API const oq_dispatch_log *oq_dispatch_parser_log(const oq_dispatch_parser *p);

/* Convenience: parse a whole text into a new parser (fed and finished);
 * read it with oq_dispatch_parser_log and release it with
 * oq_dispatch_parser_free. */
OQ_API oq_status oq_dispatch_parse_text(const char *text, size_t n, oq_dispatch_parser **out,
                                        oq_err *err);

/* Expectations: a global allowed-kernel set and per-node rules.
 *   "KERNEL"       adds KERNEL to the set every node may use;
 *   "NODE=KERNEL"  adds KERNEL to NODE's own set, which replaces the global one
 *                  for that node, and makes NODE required (split at the last '=').
 * KERNEL is an ORT name or alias (oq_sdpa_kernel_from_name); an upper-case name this
 * build does not know ([A-Z][A-Z0-9_]*) is kept as written, so a newer ORT
 * kernel can be required before ortqual knows it. */
typedef struct oq_dispatch_expect oq_dispatch_expect;

OQ_API oq_status oq_dispatch_expect_create(oq_dispatch_expect **out, oq_err *err);
OQ_API void oq_dispatch_expect_free(oq_dispatch_expect *e);
/* OQ_ERR_INVALID_ARG for an empty spec, an empty node, or a kernel that is
 * neither a known name/alias nor an upper-case name. */
OQ_API oq_status oq_dispatch_expect_add(oq_dispatch_expect *e, const char *spec, oq_err *err);

/* What one failure is, as fields: its text is for readers, these are for programs (the shard
 * merge counts a failure several shards give once by them, never by its wording). */
typedef enum oq_dispatch_failure_kind {
    OQ_DISPATCH_FAILURE_TEXT = 0,  /* only its text is known: read from a summary written before
                                      failures had fields, in a wording not recognised */
    OQ_DISPATCH_FAILURE_KERNEL,    /* a route ran a kernel its node's rules do not allow */
    OQ_DISPATCH_FAILURE_UNOBSERVED, /* a node with its own rule printed no routing line */
    OQ_DISPATCH_FAILURE_NO_ROUTING, /* the log holds no routing line at all */
    OQ_DISPATCH_FAILURE_KIND_COUNT_ /* number of values, not a kind */
} oq_dispatch_failure_kind;

/* "text", "kernel", "unobserved", "no_routing"; "unknown" for any other value. Never NULL. */
OQ_API const char *oq_dispatch_failure_kind_name(oq_dispatch_failure_kind k);
/* The kind of a name above; OQ_DISPATCH_FAILURE_TEXT for any other name, or NULL. */
OQ_API oq_dispatch_failure_kind oq_dispatch_failure_kind_from_name(const char *name);

/* One failure's route (the record's four values, as the log keys routes) and its first line.
 * Strings are owned, NUL-terminated and never NULL ("" when the kind has none). */
typedef struct oq_dispatch_failure {
    oq_dispatch_failure_kind kind;
    char *node;      /* KERNEL: the record's node ("" unnamed); UNOBSERVED: the rule's node */
    char *op;        /* KERNEL: the record's op */
    char *dtype;     /* KERNEL: the record's dtype */
    char *kernel;    /* KERNEL: the kernel it ran, as printed after "SdpaKernel=" */
    char *expected;  /* KERNEL, UNOBSERVED: "FLASH_ATTENTION or EFFICIENT_ATTENTION" */
    uint64_t line;   /* KERNEL: the record's first line (the text's "(line N)"); else 0 */
} oq_dispatch_failure;

/* Are a and b the same failure: the same kind and the same route (node, kernel, op, dtype;
 * UNOBSERVED: node), line and expectation aside? 0 for NULL and for OQ_DISPATCH_FAILURE_TEXT,
 * which has no fields to tell (compare the texts). */
OQ_API int oq_dispatch_failure_same(const oq_dispatch_failure *a, const oq_dispatch_failure *b);
/* dst (its old content ignored) becomes a copy of src; OQ_ERR_NOMEM leaves dst cleared. */
OQ_API oq_status oq_dispatch_failure_copy(oq_dispatch_failure *dst, const oq_dispatch_failure *src,
                                          oq_err *err);
OQ_API void oq_dispatch_failure_clear(oq_dispatch_failure *f);
/* The fields of a failure known only by its text, as oq_dispatch_check words it (a summary
 * written before failures had fields): "NODE: expected K, got X (line N)" is a KERNEL failure
 * when `log` has a record whose first line is N and whose node (or unnamed label) and kernel
 * are the text's, and takes that record's route; the "not observed" and "no SdpaKernel= line"
 * wordings are UNOBSERVED (its expected "": the text does not say) and NO_ROUTING; any other
 * text is OQ_DISPATCH_FAILURE_TEXT.
 * `log` may be NULL (no KERNEL failure is then recognised). OQ_ERR_NOMEM. */
OQ_API oq_status oq_dispatch_failure_from_text(const char *text, const oq_dispatch_log *log,
                                               oq_dispatch_failure *out, oq_err *err);

typedef struct oq_dispatch_report {
    int passed;         /* 1 only if at least one record was checked and nothing failed */
    size_t n_records;   /* routing lines checked (all of them: the records' counts) */
    size_t n_failures;
    char **failures;    /* owned; e.g. "attn0: expected FLASH_ATTENTION, got MATH (line 7)" */
    oq_dispatch_failure *failed; /* owned; failed[i] is failures[i] as fields */
    size_t n_math_failures; /* of those, records whose kernel was MATH: the fallback a fast
                               path would hide (what a --prove-teeth rerun must produce) */
} oq_dispatch_report;

/* Check EVERY record of `log`: a record whose node has its own rule must name
 * one of that node's kernels, any other record one of the global kernels (if
 * there are global kernels). A node with a rule but no routing line fails as
 * "not observed", and so does a log without any routing line: an unobserved
 * dispatch is never a pass. Returns OQ_OK when the check ran (look at
 * out->passed), OQ_ERR_NOMEM otherwise. */
OQ_API oq_status oq_dispatch_check(const oq_dispatch_expect *e, const oq_dispatch_log *log,
                                   oq_dispatch_report *out, oq_err *err);
OQ_API void oq_dispatch_report_clear(oq_dispatch_report *r);

#ifdef __cplusplus
}
#endif
#endif
