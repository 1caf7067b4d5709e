/* The mask's axes in a model's values: which axis of an output (or input) the mask's lengths
 * run along, one rule for every comparison that sets padding apart (validate, replay,
 * convert's check and bench --model's expected outputs). Internal to the library (never installed). */
#ifndef ORTQUAL_AXES_IMPL_H
#define ORTQUAL_AXES_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "inspect/inputuse-impl.h"
#include "inspect/inspect-impl.h"
#include "ortqual/compare.h"
#include "ortqual/mask.h"
#include "ortqual/status.h"

/* "[batch,seq,17]": the declared dims of `io`, or "(no declared shape)"; into buf, returned. */
char *oq_io_declared_str(const oq_io_info *io, char *buf, size_t n);

/* What tells the mask's axes in an output: the model's declarations (mi NULL: the sizes
 * alone), its mask input, the caller's --seq-axis, and the batch's size B and padded length L. */
typedef struct oq_axes_rule {
    const char *model;             /* names the model in messages */
    const oq_model_info *mi;
    const char *mask_input;
    size_t n_seq_axes;
    const oq_seq_axis *seq_axes;
    int64_t batch, seq;
} oq_axes_rule;
/* Where the mask's lengths apply in one output; masked 0: nowhere, every element is valid. */
typedef struct oq_mask_axes {
    int masked;
    int32_t batch, seq;
    const char *by; /* what decided them (masked only): "seq_axes", "names", "denotations", "sizes" */
} oq_mask_axes;
/* The mask's axes in output `name` of shape[0..ndim): the caller's --seq-axis for it, else the
 * axes named like the mask's two (an output with named axes, none of them the sequence, has
 * none), else those denoted DATA_BATCH (else axis 0) and DATA_TIME of sizes B and L, else axis 0
 * of size B and axis 1 of size L. Never a guess: two candidate sequence axes, the one axis of
 * size L past axis 1 (as well a width), or a --seq-axis axis out of the shape, the batch axis or
 * not of size L, is OQ_ERR_INVALID_ARG naming the model, the output, its shape, the axes and the
 * fix. */
oq_status oq_output_mask_axes(const oq_axes_rule *r, const char *name, int32_t ndim, const int64_t *shape,
                              oq_mask_axes *axes, oq_err *err);
/* The same rule for input `name` (no --seq-axis names an input): 1 with *axes where it tells
 * one sequence axis, 0 where it tells none or two (the caller then takes the input whole, padding
 * included); `why` (NULL: not wanted) is then cleared, or where two axes could be it says which
 * ("MODEL: input 'q' shape [2,4,4,8]: axes 1 and 2 both have the mask's padded length 4 and the
 * model names neither"). */
int oq_input_mask_axes(const oq_axes_rule *r, const char *name, int32_t ndim, const int64_t *shape,
                       oq_mask_axes *axes, oq_err *why);
/* The caller's --seq-axis seq_axes[0..n) against model `label`'s declaration `mi` with mask
 * input `mask_input` (NULL: the model has none): each names an output, once, of a model with a
 * mask, and an axis of its declared rank other than its batch axis; else OQ_ERR_INVALID_ARG
 * ("--seq-axis y=5: ...") before anything runs. */
oq_status oq_seq_axes_check_model(const char *label, const oq_model_info *mi, const char *mask_input,
                                  const oq_seq_axis *seq_axes, size_t n, oq_err *err);

/* The finite-input rule (finite.c): how the inputs of one batch are read. */
typedef struct oq_finite_rule {
    const oq_axes_rule *axes; /* tells each input's mask axes (B and L: the mask's) */
    const int64_t *lengths;   /* each event's valid length; NULL: no mask, every element is valid */
    const unsigned *uses;     /* per input (inputuse-impl.h), or NULL: an additive mask may hold -inf */
    int all;                  /* the model reads padding too (ortqual's sdpa model): every element */
    /* names an event in messages ("event 7 (index 2 in the file)"); NULL: "event N" */
    const char *(*event_name)(const void *ctx, int64_t event, char *buf, size_t n);
    const void *event_ctx;
} oq_finite_rule;
/* Every valid element of every floating-point input t[0..n) finite (t[i] NULL: not checked, an
 * input made here): a NaN or an infinity there is in the input, not in the model, and would make
 * the reference "pass" with NaN outputs, or a timing time NaN. Valid: the positions inside each
 * event's prefix along the axes oq_input_mask_axes tells (two candidates are not guessed between:
 * the input is then read whole); all elements of any other input. OQ_ERR_FORMAT naming `path`,
 * the input, the event and position (else the element) and why. */
oq_status oq_inputs_check_finite(const oq_finite_rule *f, const oq_tensor *const *t, size_t n, const char *path,
                                 oq_err *err);
/* Event `event` in f's words ("event 7 (index 2 in the file)"), into buf; returns buf. */
const char *oq_finite_event_str(const oq_finite_rule *f, int64_t event, char *buf, size_t n);
/* Where element e of t is under f: "event E position P" where f's axes tell them (f->lengths set),
 * else "element [i,j,..]" in C order; into buf, returned. */
const char *oq_finite_element_str(const oq_finite_rule *f, const oq_tensor *t, int64_t e, char *buf, size_t n);
/* The id check (ids.c), under the same rule of one batch's inputs: every element of each input
 * t[i] (NULL: not checked) as the Casts on its way make it (tables[i], inputuse-impl.h; NULL: no
 * tables), inside each table it indexes, padding included (the Gather reads it too). One outside
 * makes ORT fail the whole run at the Gather, naming its node and not the file. OQ_ERR_FORMAT
 * "PATH: input 'x' holds V at WHERE<oq_index_hit_str>: are these inputs this model's?", WHERE
 * the event and position where f's axes tell them, else the element. */
oq_status oq_inputs_check_ids(const oq_finite_rule *f, const oq_index_routes *tables, const oq_tensor *const *t,
                              size_t n, const char *path, oq_err *err);
/* What element h->element of t (h: oq_index_routes_check's hit on r) is to the model: ", which
 * becomes 255 through Cast 'c' to uint8; the model's Gather 'g' reads a table of 3 rows (ids
 * -3..2)", or ", which Cast 'c' to int64 leaves undefined (NaN: ONNX gives it no value) on its
 * way to the model's Gather 'g'"; into buf, returned. */
char *oq_index_hit_str(const oq_index_routes *r, const oq_tensor *t, const oq_index_hit *h, char *buf, size_t n);
/* Element e of t as the event and position the axes `a` say, and its index among the other
 * axes' elements of that (event, position), in C order. */
void oq_element_event(const oq_tensor *t, oq_mask_axes a, int64_t e, int64_t *event, int64_t *pos, int64_t *within);

/* How a batch's mask input was taken, for the contract check's words (maskin.c). */
typedef struct oq_mask_taken {
    oq_mask_polarity polarity; /* which value marks a valid element */
    int keep_only;             /* read as 1 = valid whatever polarity (ortqual's own models, whose advice is 1 - mask) */
    const char *why;           /* why detection took it; NULL: the caller or a contract named it */
    int name_only;             /* detection took it by its name alone, nothing in the graph backing it */
    const char *decide;        /* how the caller names the mask or says there is none, the library's words */
    /* names an event in messages ("event 7 (index 2 in the file)"); NULL: "event N" */
    const char *(*event_name)(const void *ctx, int64_t event, char *buf, size_t n);
    const void *event_ctx;
    int by_graph; /* the model's graph reads the mask in `polarity`: a row padded first is advised
                     to be padded at its end, never the other polarity (it would judge the
                     positions the model ignores) */
} oq_mask_taken;
/* Mask `m` of batch file `path` held to the mask contract in k's polarity: rank 2 [B, L], B > 0,
 * every row a valid prefix (mask.h); *lengths (B entries, the caller frees) each event's length.
 * OQ_ERR_SHAPE or OQ_ERR_MASK "PATH: mask 'NAME': event E: ..." (*lengths NULL); a mask detection
 * took by its name alone, or one whose values are not 0 or 1, may be no padding mask at all: the
 * message then says why it was taken and k->decide. */
oq_status oq_input_mask_check(const oq_mask_taken *k, const oq_tensor *m, const char *path, int64_t **lengths,
                              oq_err *err);
/* A mask polarity (`chosen`; `given`: the caller's, else the default) held to the reading of
 * the model's graph (`uses`: the mask input's OQ_USE_* bits, inspect/inputuse-impl.h): where the
 * graph reads mask input `input` the other way, the valid elements would be the positions the
 * model ignores, so it is refused (OQ_ERR_INVALID_ARG), one line naming the model (`label`), the
 * input and the node that tells ("Where 'w' masks the attention scores where 'mask' is 0"), read
 * from `m` (NULL: the file `label`). Else OQ_OK, and *agrees 1 where the graph tells the
 * polarity (may be NULL). */
oq_status oq_mask_polarity_held(const Onnx__ModelProto *m, const char *label, const oq_model_info *mi, const char *input,
                                unsigned uses, oq_mask_polarity chosen, int given, int *agrees, oq_err *err);
/* OQ_ERR_SHAPE "PATH: the batch has 0 events (member 'NAME' is [0,...])" for member t. */
oq_status oq_batch_no_events(const oq_tensor *t, const char *path, oq_err *err);

#endif
