/* A batch's mask input held to the mask contract, with the words validate says it in: one check
 * for validate's batches and bench --model's --inputs, so that a file one refuses the other does
 * not time (a left-padded mask computes garbage on a model that reads a prefix). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "axes/axes-impl.h"
#include "inspect/model-impl.h"
#include "mask/mask-impl.h"
#include "ortqual/mask.h"

oq_status oq_batch_no_events(const oq_tensor *t, const char *path, oq_err *err)
{
    char got[128];
    return oq_err_set(err, OQ_ERR_SHAPE, "%s: the batch has 0 events (member '%s' is %s)", path, t->name,
                      oq_shape_str(t, got, sizeof got));
}

/* A mask detection took whose values are not 0 or 1 (oq_mask_check's message), or any broken
 * row of one taken by its name alone, may be no padding mask at all: the message says it was
 * taken, why, and how to decide. (A hole, left padding or an empty row of a mask the graph uses
 * as one is the mask's own fault, said as for a mask the caller names.) */
static int guessed(const oq_mask_taken *k, const oq_err *err)
{
    return k->why && err && (k->name_only || strstr(err->msg, "is not 0 or 1"));
}

/* oq_mask_check names an event by its row ("event 1: ..."): the caller's name for it instead. */
static void event_named(const oq_mask_taken *k, oq_err *err)
{
    long long row;
    int at = 0;
    if (!k->event_name || !err || sscanf(err->msg, "event %lld%n", &row, &at) != 1 || row < 0) return;
    char ev[96], rest[OQ_ERR_MSG_MAX];
    snprintf(rest, sizeof rest, "%s", err->msg + at);
    snprintf(err->msg, sizeof err->msg, "%s%s", k->event_name(k->event_ctx, row, ev, sizeof ev), rest);
}

oq_status oq_input_mask_check(const oq_mask_taken *k, const oq_tensor *m, const char *path, int64_t **lengths,
                              oq_err *err)
{
    *lengths = NULL;
    if (m->ndim != 2)
        return oq_err_set(err, OQ_ERR_SHAPE, "%s: mask '%s' must be [B, L], got rank %d", path, m->name, (int)m->ndim);
    if (!m->shape[0]) return oq_batch_no_events(m, path, err);
    if (!(*lengths = calloc((size_t)m->shape[0], sizeof **lengths))) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_mask_reader by = k->keep_only ? OQ_MASK_READ_ORTQUAL /* its advice: 1 - mask */
                        : k->by_graph ? OQ_MASK_READ_GRAPH : OQ_MASK_READ_CHOSEN;
    oq_status st = oq_mask_check_read(m, NULL, k->keep_only ? OQ_MASK_POLARITY_KEEP : k->polarity, by, *lengths, err);
    if (st) free(*lengths), *lengths = NULL;
    if (st == OQ_ERR_MASK && guessed(k, err)) {
        char was[OQ_ERR_MSG_MAX];
        snprintf(was, sizeof was, "%s", err->msg);
        return oq_err_set(err, st, "%s: mask '%s': %s (input '%s' was taken as the [B, L] padding mask because %s: "
                          "%s)", path, m->name, was, m->name, k->why, k->decide);
    }
    if (st == OQ_ERR_MASK) event_named(k, err);
    return st ? oq_err_prefix(err, "%s: mask '%s': ", path, m->name) : OQ_OK;
}

oq_status oq_mask_polarity_held(const Onnx__ModelProto *m, const char *label, const oq_model_info *mi, const char *input,
                                unsigned uses, oq_mask_polarity chosen, int given, int *agrees, oq_err *err)
{
    unsigned says = oq_uses_polarity(uses), want = chosen == OQ_MASK_POLARITY_PAD ? OQ_USE_SAYS_PAD : OQ_USE_SAYS_KEEP;
    if (agrees) *agrees = says == want;
    if (!says || says == want) return OQ_OK;
    Onnx__ModelProto *read = NULL;
    char how[400];
    unsigned again;
    oq_status st = m ? OQ_OK : oq_model_proto_read(label, &read, err);
    if (!st) st = oq_mask_reading_str(m ? m : read, label, mi, input, &again, how, sizeof how, err);
    if (read) onnx__model_proto__free_unpacked(read, NULL);
    if (st) return st;
    const char *graph = says == OQ_USE_SAYS_PAD ? "padding" : "valid", *other = says == OQ_USE_SAYS_PAD ? "pad" : "keep";
    return oq_err_set(err, OQ_ERR_INVALID_ARG,
                      "%s: mask_polarity %s%s reads input '%s' with 1 = %s, but the graph reads it with 1 = %s (%s): "
                      "the elements judged valid would be those the model ignores; mask_polarity %s reads it as the "
                      "graph does", label, oq_mask_polarity_name(chosen), given ? "" : " (the default)", input,
                      chosen == OQ_MASK_POLARITY_PAD ? "padding" : "valid", graph, how, other);
}
