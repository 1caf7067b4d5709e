/* The mask's axes in an output: the axis its lengths run along, as the caller says it
 * (--seq-axis), else as the model's declared names, its denotations or the sizes say it.
 * Two axes that could be it are refused, never guessed between: masking the wrong one sets
 * valid elements apart as padding, where a wrong value is reported and not judged. One rule
 * for validate, replay and convert's check (which also zeroes generated inputs' padding by it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "axes/axes-impl.h"
#include "ortqual/graph.h"
#include "ortqual/tensor.h"

/* The sequence axes an output could have: axis[0..n). */
typedef struct cands {
    int32_t axis[OQ_MAX_DIMS];
    int n;
} cands;

/* A declared dim that is a name (not a size, not "?"). */
static int is_name(const char *d)
{
    return *d && strcmp(d, "?") && strspn(d, "0123456789") != strlen(d);
}

static int denoted(const oq_io_info *io, int32_t d, const char *what)
{
    return io->denotations && io->denotations[d] && !strcmp(io->denotations[d], what);
}

/* The mask's two dims are names, which the output's may share. */
static int mask_named(const oq_io_info *m)
{
    return m && m->rank == 2 && is_name(m->dims[0]) && is_name(m->dims[1]);
}

/* The batch axis the declaration says (named like the mask's first dim, else denoted
 * DATA_BATCH), -1 when it says none. */
static int32_t declared_batch(const oq_io_info *o, const oq_io_info *m)
{
    for (int32_t d = 0; o && mask_named(m) && d < o->rank; d++)
        if (!strcmp(o->dims[d], m->dims[0])) return d;
    for (int32_t d = 0; o && d < o->rank; d++)
        if (denoted(o, d, OQ_DENOTATION_BATCH)) return d;
    return -1;
}

/* "1 and 2", "1, 2 and 3"; with `prefix` before each ("y=1 or y=2"), joined by `last`. */
static void axes_list(const cands *c, const char *prefix, const char *last, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < c->n && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s%d", i == 0 ? "" : i == c->n - 1 ? last : ", ", prefix,
                                 (int)c->axis[i]);
}

/* "MODEL: output 'y' shape [2,4,4,2]: " (`kind` "output" or "input") */
static void where(const oq_axes_rule *r, const char *kind, const char *name, int32_t ndim, const int64_t *shape,
                  char *buf, size_t n)
{
    char dims[256];
    snprintf(buf, n, "%s: %s '%s' shape %s: ", r->model, kind, name, oq_dims_str(shape, ndim, dims, sizeof dims));
}

/* `how` says what the axes share ("are " before "both" when `are`); an output's message ends
 * with the seq_axes entry that says which and `fix`, an input's (no --seq-axis names one) with `how`. */
static oq_status ambiguous(const oq_axes_rule *r, const char *kind, const char *name, int32_t ndim,
                           const int64_t *shape, const cands *c, int are, const char *how, const char *fix, oq_err *err)
{
    char at[600], axes[128], said[1200], pre[300];
    where(r, kind, name, ndim, shape, at, sizeof at);
    axes_list(c, "", " and ", axes, sizeof axes);
    snprintf(pre, sizeof pre, "%s=", name);
    axes_list(c, pre, " or ", said, sizeof said);
    if (!strcmp(kind, "input"))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%saxes %s %s%s %s", at, axes, are ? "are " : "",
                          c->n == 2 ? "both" : "all", how);
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "%saxes %s %s%s %s: say which with seq_axes %s%s", at, axes,
                      are ? "are " : "", c->n == 2 ? "both" : "all", how, said, fix);
}

/* The axes before `seq` of the batch's size B, into *c: the batch axis is one of them. */
static void batch_sized(const oq_axes_rule *r, const int64_t *shape, int32_t seq, cands *c)
{
    c->n = 0;
    for (int32_t d = 0; d < seq; d++)
        if (shape[d] == r->batch) c->axis[c->n++] = d;
}

/* What an entry for sequence axes up to `seq` must add where axis 0 is not the only axis of size
 * B before it (a stacked KV cache [2, B, H, L, D] with B = 2): "" or " (with ,batch=AXIS added:
 * axes 0 and 1 both have the batch's size 2)", into buf. */
static const char *batch_hint(const oq_axes_rule *r, const int64_t *shape, int32_t seq, char *buf, size_t n)
{
    cands b;
    char axes[128];
    batch_sized(r, shape, seq, &b);
    axes_list(&b, "", " and ", axes, sizeof axes);
    buf[0] = 0;
    if (b.n > 1)
        snprintf(buf, n, " (with ,batch=AXIS added: axes %s %s have the batch's size %lld)", axes,
                 b.n == 2 ? "both" : "all", (long long)r->batch);
    return buf;
}

/* The batch axis where nothing declares it: axis 0 only where no other axis before the sequence
 * axis `seq` has size B too; else OQ_ERR_INVALID_ARG naming the candidates (masking the wrong
 * one sets valid elements apart unjudged). */
static oq_status batch_unsaid(const oq_axes_rule *r, const char *kind, const char *name, int32_t ndim,
                              const int64_t *shape, int32_t seq, oq_err *err)
{
    cands b;
    batch_sized(r, shape, seq, &b);
    if (b.n < 2) return OQ_OK;
    char at[600], axes[128], said[1200], pre[300];
    where(r, kind, name, ndim, shape, at, sizeof at);
    axes_list(&b, "", " and ", axes, sizeof axes);
    snprintf(pre, sizeof pre, "%s=%d,batch=", name, (int)seq);
    axes_list(&b, pre, " or ", said, sizeof said);
    if (!strcmp(kind, "input"))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%saxes %s %s have the batch's size %lld and the model names "
                          "none the batch", at, axes, b.n == 2 ? "both" : "all", (long long)r->batch);
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "%ssequence axis %d: axes %s %s have the batch's size %lld and the "
                      "model names none the batch: say which with seq_axes %s (a stacked KV cache [2, B, H, L, D] "
                      "has it on axis 1)", at, (int)seq, axes, b.n == 2 ? "both" : "all", (long long)r->batch, said);
}

static oq_status decide(const cands *c, int32_t batch, oq_mask_axes *a)
{
    if (c->n == 1) *a = (oq_mask_axes){.masked = 1, .batch = batch, .seq = c->axis[0]};
    return OQ_OK;
}

/* --seq-axis NAME=AXIS: checked against the shape, never bent to fit it. */
static oq_status by_caller(const oq_axes_rule *r, const oq_seq_axis *said, const oq_io_info *o, const oq_io_info *m,
                           const char *name, int32_t ndim, const int64_t *shape, oq_mask_axes *a, oq_err *err)
{
    if (said->axis == OQ_SEQ_AXIS_NONE) return OQ_OK;
    int32_t b = said->batch_said ? said->batch : declared_batch(o, m), s = said->axis;
    char at[600];
    where(r, "output", name, ndim, shape, at, sizeof at);
    if (s < 0 || s >= ndim)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%sseq_axes %s=%d: it has %d axes", at, name, (int)s, (int)ndim);
    oq_status st = b < 0 ? batch_unsaid(r, "output", name, ndim, shape, s, err) : OQ_OK;
    if (st) return st;
    b = b < 0 ? 0 : b;
    if (b >= ndim)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%sseq_axes %s=%d,batch=%d: it has %d axes", at, name, (int)s,
                          (int)b, (int)ndim);
    if (s == b)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%sseq_axes %s=%d: axis %d is its batch axis", at, name, (int)s,
                          (int)s);
    if (shape[s] != r->seq)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%sseq_axes %s=%d: axis %d has size %lld, not the mask's padded "
                          "length %lld", at, name, (int)s, (int)s, (long long)shape[s], (long long)r->seq);
    if (shape[b] != r->batch)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%sseq_axes %s=%d: its batch axis %d has size %lld, not the "
                          "batch's %lld events", at, name, (int)s, (int)b, (long long)shape[b], (long long)r->batch);
    *a = (oq_mask_axes){.masked = 1, .batch = b, .seq = s};
    return OQ_OK;
}

/* The axes named like the mask's; *decided 0 when the output names no axis at all (the next
 * rule says), else an output whose named axes include no sequence axis has none. */
static oq_status by_names(const oq_axes_rule *r, const oq_io_info *o, const oq_io_info *m, const char *kind,
                          const char *name, int32_t ndim, const int64_t *shape, oq_mask_axes *a, int *decided,
                          oq_err *err)
{
    int32_t b = -1;
    cands c = {.n = 0};
    int named = 0;
    for (int32_t d = 0; d < ndim; d++) {
        named |= is_name(o->dims[d]);
        if (b < 0 && !strcmp(o->dims[d], m->dims[0])) b = d;
        else if (!strcmp(o->dims[d], m->dims[1])) c.axis[c.n++] = d;
    }
    *decided = named;
    if (!named || b < 0) return OQ_OK;
    char how[300];
    snprintf(how, sizeof how, "named '%s' like the mask's sequence axis", m->dims[1]);
    return c.n > 1 ? ambiguous(r, kind, name, ndim, shape, &c, 1, how, "", err) : decide(&c, b, a);
}

/* The axes denoted DATA_BATCH (else axis 0) and DATA_TIME, of the batch's sizes; *decided 0
 * when the output denotes neither (the sizes say then). */
static oq_status by_denotations(const oq_axes_rule *r, const oq_io_info *o, const char *kind, const char *name,
                                int32_t ndim, const int64_t *shape, oq_mask_axes *a, int *decided, oq_err *err)
{
    int32_t b = declared_batch(o, NULL);
    cands c = {.n = 0};
    int time = 0;
    for (int32_t d = 0; d < ndim; d++) {
        if (!denoted(o, d, OQ_DENOTATION_TIME)) continue;
        time = 1;
        if (d != (b < 0 ? 0 : b) && shape[d] == r->seq) c.axis[c.n++] = d; /* another length's is not the mask's */
    }
    *decided = b >= 0 || time;
    oq_status st = b < 0 && c.n == 1 ? batch_unsaid(r, kind, name, ndim, shape, c.axis[0], err) : OQ_OK;
    if (st) return st;
    b = b < 0 ? 0 : b;
    if (!*decided || shape[b] != r->batch) return OQ_OK;
    char how[300];
    snprintf(how, sizeof how, "denoted %s with the mask's padded length %lld", OQ_DENOTATION_TIME,
             (long long)r->seq);
    return c.n > 1 ? ambiguous(r, kind, name, ndim, shape, &c, 1, how, "", err) : decide(&c, b, a);
}

char *oq_io_declared_str(const oq_io_info *io, char *buf, size_t n)
{
    if (io->rank < 0) {
        snprintf(buf, n, "(no declared shape)");
        return buf;
    }
    size_t used = (size_t)snprintf(buf, n, "[");
    for (int32_t d = 0; d < io->rank && used < n; d++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s", d ? "," : "", io->dims[d]);
    if (used < n) snprintf(buf + used, n - used, "]");
    return buf;
}

/* The first declared input or output other than `self` with two or more fixed axes past its
 * first of size L: L is then also one of the model's widths (a static BERT's hidden size at
 * that sequence length), which an axis of size L may as well be. NULL: none. */
static const oq_io_info *width_like_length(const oq_axes_rule *r, const char *self)
{
    const oq_model_info *mi = r->mi;
    for (size_t k = 0; mi && k < mi->n_inputs + mi->n_outputs; k++) {
        const oq_io_info *io = k < mi->n_inputs ? &mi->inputs[k] : &mi->outputs[k - mi->n_inputs];
        int n = 0;
        for (int32_t d = 1; d < io->rank; d++) {
            char *end;
            long long v = strtoll(io->dims[d], &end, 10);
            n += end != io->dims[d] && !*end && v == r->seq;
        }
        if (n >= 2 && strcmp(io->name, self)) return io;
    }
    return NULL;
}

/* B = L: axis 0 may as well be the sequence and a later one the batch (a sequence-first
 * [L, B, E] output of nn.Transformer's default layout). */
static oq_status batch_like_length(const oq_axes_rule *r, const char *kind, const char *name, int32_t ndim,
                                   const int64_t *shape, const cands *c, oq_err *err)
{
    cands all = {.axis = {0}, .n = 1};
    for (int i = 0; i < c->n; i++) all.axis[all.n++] = c->axis[i];
    char at[600], axes[128], said[1200], pre[300], how[300];
    where(r, kind, name, ndim, shape, at, sizeof at);
    axes_list(&all, "", " and ", axes, sizeof axes);
    snprintf(how, sizeof how, "%s size %lld, the batch's events and its padded length alike, and the model names "
             "%s", all.n == 2 ? "both have" : "all have", (long long)r->seq, all.n == 2 ? "neither" : "none of them");
    if (!strcmp(kind, "input")) return oq_err_set(err, OQ_ERR_INVALID_ARG, "%saxes %s %s", at, axes, how);
    snprintf(pre, sizeof pre, "%s=", name);
    axes_list(c, pre, " or ", said, sizeof said);
    char hint[200];
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "%saxes %s %s: say which is the sequence with seq_axes %s (the batch "
                      "on axis 0)%s or %s=0,batch=%d (sequence first), or export with named dynamic axes (or the axes "
                      "denoted DATA_BATCH and DATA_TIME)", at, axes, how, said,
                      batch_hint(r, shape, c->axis[c->n - 1], hint, sizeof hint), name, (int)c->axis[0]);
}

/* One axis of size L, but the sizes cannot tell it is the sequence: a [B, L] output is as well
 * a pooled [B, H] whose width H is L, any axis may be a width the model shows is L (`w`), and
 * one past axis 1 (a [B, C, L] output of C rows of L class scores) is as well a width. */
static oq_status not_only_length(const oq_axes_rule *r, const char *kind, const char *name, int32_t ndim,
                                 const int64_t *shape, int32_t axis, const oq_io_info *w, oq_err *err)
{
    char at[600], how[700], dims[256];
    where(r, kind, name, ndim, shape, at, sizeof at);
    if (w)
        snprintf(how, sizeof how, "axis %d has the mask's padded length %lld, but so do two axes of %s '%s' %s: "
                 "L is also one of the model's widths, and the model names neither", (int)axis, (long long)r->seq,
                 oq_find_io(r->mi->inputs, r->mi->n_inputs, w->name) == w ? "input" : "output", w->name,
                 oq_io_declared_str(w, dims, sizeof dims));
    else if (ndim == 2)
        snprintf(how, sizeof how, "axis %d has the mask's padded length %lld, but a [B, L] %s is as well a pooled "
                 "[B, H] one whose width H is L, and the model names neither", (int)axis, (long long)r->seq, kind);
    else
        snprintf(how, sizeof how, "axis %d has the mask's padded length %lld, but the sizes read a sequence only "
                 "on axis 1, right after the batch ([B, L, ...]): an axis past it is as well a width of size L "
                 "(a [B, C, L] %s of C rows of L scores), and the model names neither", (int)axis,
                 (long long)r->seq, kind);
    if (!strcmp(kind, "input")) return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s%s", at, how);
    char hint[200];
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s%s: say seq_axes %s=%d%s if it is per position, or %s=none, or "
                      "export with named dynamic axes (or the sequence axis denoted DATA_TIME)", at, how, name,
                      (int)axis, batch_hint(r, shape, axis, hint, sizeof hint), name);
}

/* Axis 0 of size B, then axis 1 of size L, where nothing else could be read from the sizes:
 * two axes of size L, B = L, a [B, L] shape, a model with L among its widths or the one axis
 * of size L past axis 1 are refused, as masking a width or the batch would set valid elements
 * apart unjudged. */
static oq_status by_sizes(const oq_axes_rule *r, const char *kind, const char *name, int32_t ndim,
                          const int64_t *shape, oq_mask_axes *a, oq_err *err)
{
    cands c = {.n = 0};
    if (shape[0] != r->batch) return OQ_OK;
    for (int32_t d = 1; d < ndim; d++)
        if (shape[d] == r->seq) c.axis[c.n++] = d;
    if (!c.n) return OQ_OK;
    if (r->batch == r->seq) return batch_like_length(r, kind, name, ndim, shape, &c, err);
    char how[300];
    snprintf(how, sizeof how, "have the mask's padded length %lld and the model names %s", (long long)r->seq,
             c.n == 2 ? "neither" : "none of them");
    char fix[300], hint[200];
    snprintf(fix, sizeof fix, "%s, or export with named dynamic axes (or the sequence axis denoted DATA_TIME)",
             batch_hint(r, shape, c.axis[c.n - 1], hint, sizeof hint));
    if (c.n > 1) return ambiguous(r, kind, name, ndim, shape, &c, 0, how, fix, err);
    const oq_io_info *w = ndim == 2 ? NULL : width_like_length(r, name);
    if (ndim == 2 || w || c.axis[0] != 1) return not_only_length(r, kind, name, ndim, shape, c.axis[0], w, err);
    return decide(&c, 0, a);
}

/* The declared rules, then the sizes, for a value declared `o` (NULL: nothing declared). */
static oq_status told(const oq_axes_rule *r, const oq_io_info *o, const char *kind, const char *name, int32_t ndim,
                      const int64_t *shape, oq_mask_axes *a, oq_err *err)
{
    const oq_model_info *mi = r->mi;
    const oq_io_info *m = mi ? oq_find_io(mi->inputs, mi->n_inputs, r->mask_input) : NULL;
    if (ndim < 2 || ndim > OQ_MAX_DIMS) return OQ_OK;
    int decided = 0;
    const char *by = "names";
    oq_status st = o && mask_named(m) ? by_names(r, o, m, kind, name, ndim, shape, a, &decided, err) : OQ_OK;
    if (!st && !decided && o) {
        by = "denotations";
        st = by_denotations(r, o, kind, name, ndim, shape, a, &decided, err);
    }
    if (!st && !decided) {
        by = "sizes";
        st = by_sizes(r, kind, name, ndim, shape, a, err);
    }
    if (!st && a->masked) a->by = by;
    return st;
}

/* A declaration the value does not have (another rank) says nothing. */
static const oq_io_info *declared(const oq_io_info *io, size_t n, const char *name, int32_t ndim)
{
    const oq_io_info *o = oq_find_io(io, n, name);
    return o && o->rank == ndim ? o : NULL;
}

oq_status oq_output_mask_axes(const oq_axes_rule *r, const char *name, int32_t ndim, const int64_t *shape,
                              oq_mask_axes *a, oq_err *err)
{
    *a = (oq_mask_axes){0};
    const oq_model_info *mi = r->mi;
    const oq_io_info *o = mi ? declared(mi->outputs, mi->n_outputs, name, ndim) : NULL;
    for (size_t i = 0; i < r->n_seq_axes; i++)
        if (!strcmp(r->seq_axes[i].output, name)) {
            const oq_io_info *m = mi ? oq_find_io(mi->inputs, mi->n_inputs, r->mask_input) : NULL;
            oq_status st = by_caller(r, &r->seq_axes[i], o, m, name, ndim, shape, a, err);
            if (!st && a->masked) a->by = "seq_axes";
            return st;
        }
    return told(r, o, "output", name, ndim, shape, a, err);
}

int oq_input_mask_axes(const oq_axes_rule *r, const char *name, int32_t ndim, const int64_t *shape,
                       oq_mask_axes *a, oq_err *why)
{
    *a = (oq_mask_axes){0};
    if (why) why->status = OQ_OK, why->msg[0] = 0;
    const oq_io_info *o = r->mi ? declared(r->mi->inputs, r->mi->n_inputs, name, ndim) : NULL;
    return !told(r, o, "input", name, ndim, shape, a, why) && a->masked;
}

/* One --seq-axis against the model's declaration of its output `o` (NULL: none such). */
static oq_status caller_axis_ok(const char *label, const oq_model_info *mi, const oq_io_info *mask,
                                const oq_seq_axis *a, const oq_io_info *o, oq_err *err)
{
    char names[512], axis[32];
    snprintf(axis, sizeof axis, a->axis == OQ_SEQ_AXIS_NONE ? "none" : "%d", (int)a->axis);
    oq_io_names(mi->outputs, mi->n_outputs, names, sizeof names);
    if (!o)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "seq_axes %s=%s: %s has no output '%s' (its outputs: %s)", a->output,
                          axis, label, a->output, names);
    if (!mask)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "seq_axes %s=%s: the model has no mask input (or no_mask): "
                          "every element of every output is valid", a->output, axis);
    if (a->axis == OQ_SEQ_AXIS_NONE) return OQ_OK;
    if (a->axis < 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "seq_axes %s=%s: an axis is a number from 0, or none", a->output,
                          axis);
    if (o->rank >= 0 && a->axis >= o->rank)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "seq_axes %s=%s: output '%s' has %d axes (0 to %d)", a->output,
                          axis, a->output, (int)o->rank, (int)o->rank - 1);
    if (a->batch_said && a->batch < 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "seq_axes %s=%s,batch=%d: an axis is a number from 0", a->output,
                          axis, (int)a->batch);
    if (a->batch_said && o->rank >= 0 && a->batch >= o->rank)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "seq_axes %s=%s,batch=%d: output '%s' has %d axes (0 to %d)",
                          a->output, axis, (int)a->batch, a->output, (int)o->rank, (int)o->rank - 1);
    if (a->batch_said && a->batch == a->axis)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "seq_axes %s=%s,batch=%d: the batch and sequence axes are one",
                          a->output, axis, (int)a->batch);
    int32_t b = declared_batch(o, mask);
    if (!a->batch_said && b >= 0 && a->axis == b)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "seq_axes %s=%s: that is the batch axis of output '%s'", a->output,
                          axis, a->output);
    if (!a->batch_said && b < 0 && a->axis == 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "seq_axes %s=%s: that is the batch axis of output '%s' (axis 0: the model names or denotes "
                          "no other; a sequence-first output says its batch axis too: seq_axes %s=0,batch=1)",
                          a->output, axis, a->output, a->output);
    return OQ_OK;
}

oq_status oq_seq_axes_check_model(const char *label, const oq_model_info *mi, const char *mask_input,
                                  const oq_seq_axis *seq_axes, size_t n, oq_err *err)
{
    if (n && !seq_axes) return oq_err_set(err, OQ_ERR_INVALID_ARG, "n_seq_axes %zu, but seq_axes is NULL", n);
    const oq_io_info *mask = mask_input ? oq_find_io(mi->inputs, mi->n_inputs, mask_input) : NULL;
    for (size_t i = 0; i < n; i++) {
        const oq_seq_axis *a = &seq_axes[i];
        if (!a->output) return oq_err_set(err, OQ_ERR_INVALID_ARG, "seq_axes[%zu] names no output", i);
        for (size_t k = 0; k < i; k++)
            if (!strcmp(seq_axes[k].output, a->output))
                return oq_err_set(err, OQ_ERR_INVALID_ARG, "seq_axes: output '%s' is given twice", a->output);
        oq_status st = caller_axis_ok(label, mi, mask, a, oq_find_io(mi->outputs, mi->n_outputs, a->output), err);
        if (st) return st;
    }
    return OQ_OK;
}
