/* Runtime refusals explained: ONNX Runtime's message for a model it will not run, turned
 * into which node, which inputs with which declared shapes, why (what the ONNX spec says
 * against what the runtime does), and the fix.
 *
 * A table of known patterns, each recognised by a piece of ORT's message (or, for a crash,
 * by the signal and the model), read with the model file for the node's inputs:
 *
 *   attn-mask-query-broadcast  "inconsistent q_sequence_length (between attn_mask and Q)":
 *                              a key-padding mask [B,1,1,Lk] the spec broadcasts, ORT does not
 *   attn-mask-total-length     "inconsistent total_sequence_length": an Attention-24 mask
 *                              shorter than the keys, which the spec pads and ORT refuses
 *   attn-mask-shape            either of the two above where the shapes show the model at
 *                              fault (a mask longer than past + current keys, a shorter one
 *                              at opset 23, a query axis neither 1 nor Lq): what does not
 *                              fit. Where the shapes show the size ORT wants, no pattern
 *                              (ORT's message alone); where they are symbolic and no fed
 *                              input tells their size, the departure is explained as holding
 *                              if the mask is so. The shapes are the declared ones, each
 *                              symbolic dimension read through the inputs fed (`inputs`)
 *   attention-output-mode      "Only kNone and kQK output modes are supported in unified
 *                              unfused attention. Mode: N" (CUDA)
 *   no-kernel                  "Could not find an implementation for Elu(22) node with name
 *                              'n0'": no kernel for that operator version and type on the EP
 *   opset-too-new              "Opset 40 is under development ..."
 *   ir-too-new                 "Unsupported model IR version: 20, max supported IR version: 13"
 *   unregistered-op            "com.example:Foo(-1) is not a registered function/op"
 *   missing-opset-import       "No opset import for domain 'com.example'"
 *   crash-attention-no-shapes  a GPU process killed by SIGSEGV on a model whose Attention
 *                              inputs have no declared shape (seen on ORT 1.29's CUDA EP)
 *
 *     oq_refusal_facts f = {.message = err.msg, .model = "m.onnx", .ep = "CUDAExecutionProvider",
 *                           .inputs = fed, .n_inputs = n_fed};
 *     oq_refusal r;
 *     if (oq_refusal_explain(&f, &r, &err) == OQ_OK && r.id) {
 *         char line[2048];
 *         puts(oq_refusal_str(&r, line, sizeof line));
 *     }
 *     oq_refusal_clear(&r);
 *
 * The explanation never replaces ORT's message: `raw` keeps it as given.
 */
#ifndef ORTQUAL_REFUSAL_H
#define ORTQUAL_REFUSAL_H

#include <stddef.h>

#include "ortqual/inspect.h"
#include "ortqual/status.h"
#include "ortqual/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What is known about the failure. Every field may be NULL or 0. */
typedef struct oq_refusal_facts {
    const char *message; /* ORT's message as the caller got it (e.g. an oq_err line) */
    const char *model;   /* the ONNX file it was running, read for the node's inputs and shapes */
    const char *ep;      /* ORT's name of the execution provider ("CUDAExecutionProvider");
                            NULL: CPUExecutionProvider */
    int signal;          /* the process running the model died of this signal; 0: it did not */
    /* The graph inputs the refused run was fed (each named as the model's input), where the
     * caller has them: ORT judged their real sizes, so a node input the run fed is taken as
     * fed, and a symbolic dimension ("seq") at the size a fed input that the model declares
     * with it had (ignored where two disagree). NULL: the declared shapes alone. Only the
     * names and shapes are read. */
    const oq_tensor *const *inputs;
    size_t n_inputs;
    /* The model as the caller already holds it, where it does (a validate worker: the bytes its
     * session was made from, and what inspect read of them): read in place of the file `model`
     * names, which then only names it in messages. The file is not read again, and a file
     * changed since cannot explain a run of the bytes before. NULL: the file. */
    const void *model_bytes;
    size_t model_n;
    const oq_model_info *model_info; /* oq_model_inspect_bytes of them (NULL: inspected here) */
} oq_refusal_facts;

/* An explanation; every string is owned by the struct (oq_refusal_clear). */
typedef struct oq_refusal {
    char *id;            /* the pattern's name, NULL when no pattern matched */
    char *node;          /* "'attn0' (Attention)", NULL when the message names none */
    char *inputs;        /* "Q 'q' float32 [batch,2,seq,4]; attn_mask 'm' bool [batch,1,1,seq]" or NULL;
                            with fed inputs, a name's size after it: "[batch=2,2,seq=5,4]" */
    char *why;           /* the spec against the runtime, one or two sentences */
    char *fix;           /* what to change */
    char *raw;           /* the message as given (NULL when there was none) */
} oq_refusal;

/* Match the facts against the table and fill *out (zeroed first). No match is OQ_OK with
 * out->id NULL (out->raw still set). The model is read when a pattern needs it; a model that
 * cannot be read makes the explanation say less, not fail. Errors: OQ_ERR_NOMEM only. */
OQ_API oq_status oq_refusal_explain(const oq_refusal_facts *f, oq_refusal *out, oq_err *err);
OQ_API void oq_refusal_clear(oq_refusal *r);

/* One line, as bench --model writes a refused row's error: "refused by ONNX Runtime [id] at node
 * 'attn0' (Attention); inputs ...: why ... Fix: ... (ONNX Runtime: raw)", or the raw message
 * alone when no pattern matched; line breaks made spaces, a line cut at n ends "...". Into buf;
 * returns buf ("" in it for a NULL r). */
OQ_API char *oq_refusal_str(const oq_refusal *r, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
