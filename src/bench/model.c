/* bench --model: a model of the user's, as it is, timed at every point of a sweep over
 * its named dimensions. Everything the user gave is checked before any session. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "axes/axes-impl.h"
#include "bench/bench-impl.h"
#include "compare/compare-impl.h"
#include "convert/convert-impl.h"
#include "core/core-impl.h"
#include "inspect/idcast-impl.h"
#include "inspect/inputuse-impl.h"
#include "inspect/inspect-impl.h"
#include "inspect/modelfile-impl.h"
#include "npz/npz-impl.h"
#include "ortqual/compare.h"
#include "ortqual/inspect.h"
#include "ortqual/npz.h"
#include "status/args-impl.h"
#include "status/terms-impl.h"

typedef struct model_sweep {
    oq_model_file file; /* read once: the inspection and every session are of these bytes */
    oq_model_info *mi;  /* file's */
    oq_npz *inputs, *expected;
    oq_model_precision precision; /* mi's: the variant's precision and the tolerances */
    oq_bench_variant variant;
    size_t n_points;
    oq_bench_point *points;
    /* with expected outputs some of which have the mask's axes: the mask input, its [B, L] and
     * each event's length (the one point's inputs: expected allows no sweep) */
    const char *mask_input; /* points[0]'s */
    int64_t batch, seq, *lengths;
    oq_bench_mask mask;        /* the mask input, chosen once (oq_bench_choose_mask) */
    oq_mask_polarity polarity; /* the mask's: the model's contract's, else the options', else the graph's */
    const char *polarity_source; /* "contract", "option" (mask_polarity given), "graph", "default" (keep) */
    int by_graph;              /* the graph reads the mask in `polarity` (oq_mask_polarity_held) */
    int has_contract;          /* the model's mask contract names its mask input: */
    char contract[256];
    oq_index_routes *tables;   /* per input of mi: the tables it indexes (inputuse-impl.h) */
    unsigned *uses;            /* per input of mi: how the graph uses it (an additive mask may hold -inf) */
    char *notes;               /* the model's notes, "MODEL: LINE\n" each, from the one fold (choose_mask) */
} model_sweep;

typedef struct sweep_ctx_model {
    oq_runtime *rt;
    const oq_bench_opts *o;
    const model_sweep *m;
} sweep_ctx_model;

static void sweep_clear(model_sweep *m)
{
    for (size_t i = 0; m->points && i < m->n_points; i++) oq_bench_point_clear(&m->points[i]);
    free(m->points);
    free(m->lengths);
    oq_index_routes_free(m->tables);
    free(m->uses);
    free(m->notes);
    oq_bench_mask_clear(&m->mask);
    oq_npz_free(m->inputs);
    oq_npz_free(m->expected);
    oq_model_file_clear(&m->file);
    memset(m, 0, sizeof *m);
}

/* The tightest bound of the tables an input indexes as it is (an embedding's rows, a GatherND
 * position's axis), or NULL; the routes through Casts are judged on the values they make. */
static const oq_index_bound *tightest(const oq_index_routes *r)
{
    const oq_index_bound *b = NULL;
    for (int k = 0; k < r->n; k++) {
        const oq_index_table *tb = &r->table[k];
        if (r->casts[k].n) continue;
        if (tb->all.size > 0 && (!b || tb->all.size < b->size)) b = &tb->all;
        for (int j = 0; j < OQ_INDEX_TUPLE_MAX; j++)
            if (tb->tuple[j].size > 0 && (!b || tb->tuple[j].size < b->size)) b = &tb->tuple[j];
    }
    return b;
}

/* The routes input `name` of m indexes tables through, or NULL. */
static const oq_index_routes *routes_of(const model_sweep *m, const char *name)
{
    for (size_t i = 0; m->tables && i < m->mi->n_inputs; i++)
        if (!strcmp(m->mi->inputs[i].name, name)) return &m->tables[i];
    return NULL;
}

/* Generated integers `t` of input `in` (the whole range, or a point's) held to the id check's
 * rule (axes-impl.h): a value outside a table as the Casts on its way make it (int64 -1 through
 * uint8 is 255) makes ORT fail the run at the Gather, after the folder was written. */
static oq_status judge_generated(const oq_bench_opts *o, const oq_index_routes *r, const oq_tensor *t,
                                 const char *name, oq_err *err)
{
    oq_index_hit h;
    oq_index_routes_check(r, t, &h);
    if (h.element < 0) return OQ_OK;
    char held[64], tail[1000];
    oq_idval_str(oq_idval_of(t, h.element), held, sizeof held);
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "opts.int_lo,int_hi %lld,%lld: input '%s' is given %s%s",
                      (long long)o->int_lo, (long long)o->int_hi, name, held, oq_index_hit_str(r, t, &h, tail, sizeof tail));
}

/* Ranges up to this many values are judged whole through the Casts; a wider one on each point's
 * generated values (check_points). */
#define RANGE_JUDGED (1 << 20)

/* Generated integers must lie inside the table the input indexes: ORT fails the run at the
 * Gather otherwise, after the folder was written (validate checks a batch's ids the same way). */
static oq_status check_int_table(const oq_bench_opts *o, const model_sweep *m, const oq_bench_input_info *in,
                                 oq_err *err)
{
    const oq_index_routes *r = routes_of(m, in->name);
    const oq_index_bound *b = r ? tightest(r) : NULL;
    if (b && (o->int_hi > b->size - 1 || o->int_lo < -b->size))
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "opts.int_lo,int_hi %lld,%lld: input '%s' indexes axis %lld of %s '%s', of size %lld "
                          "(ids %lld..%lld)",
                          (long long)o->int_lo, (long long)o->int_hi, in->name, (long long)b->axis, b->op,
                          b->node, (long long)b->size, (long long)-b->size, (long long)b->size - 1);
    int64_t count = o->int_hi - o->int_lo + 1;
    if (!r || !r->n || count > RANGE_JUDGED) return OQ_OK;
    oq_tensor *t = NULL;
    oq_status st = oq_tensor_create(&t, in->dtype, 1, &count, in->name, err);
    for (int64_t i = 0; !st && i < count; i++) oq_tensor_set_f64(t, i, (double)(o->int_lo + i));
    if (!st) st = judge_generated(o, r, t, in->name, err);
    if (t) oq_tensor_free(t);
    return st;
}

/* The range of generated integers must fit every integer input they fill. */
static oq_status check_int_range(const oq_bench_opts *o, const model_sweep *m, const oq_bench_input_info *in,
                                 oq_err *err)
{
    static const struct { oq_dtype t; double lo, hi; } range[] = {
        {OQ_DTYPE_UINT8, 0, 255}, {OQ_DTYPE_INT8, -128, 127}, {OQ_DTYPE_UINT16, 0, 65535},
        {OQ_DTYPE_INT16, -32768, 32767}, {OQ_DTYPE_UINT32, 0, 4294967295.0},
        {OQ_DTYPE_INT32, -2147483648.0, 2147483647.0}, {OQ_DTYPE_UINT64, 0, 9007199254740992.0},
        {OQ_DTYPE_INT64, -9007199254740992.0, 9007199254740992.0}};
    if (strcmp(in->fill, "integers")) return OQ_OK;
    for (size_t i = 0; i < sizeof range / sizeof *range; i++)
        if (range[i].t == in->dtype && ((double)o->int_lo < range[i].lo || (double)o->int_hi > range[i].hi))
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "opts.int_lo,int_hi %lld,%lld: input '%s' is %s (%.0f..%.0f)",
                              (long long)o->int_lo, (long long)o->int_hi, in->name, oq_dtype_name(in->dtype),
                              range[i].lo, range[i].hi);
    return check_int_table(o, m, in, err); /* (the values fit its type) */
}

/* An empty archive is named as such: the checks below would blame its members' names. */
static oq_status check_has_arrays(const oq_npz *z, oq_err *err)
{
    return z->count ? OQ_OK : oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: holds no arrays", z->path);
}

/* ortqual's own batch members (validate's saved batches): never an output, never a typo. */
static int batch_member(const char *name)
{
    return !strcmp(name, "event_indices") || !strcmp(name, "lengths");
}

/* Each expected tensor must name a model output (or input, or one of ortqual's batch members):
 * another name is most likely an output's misspelt; and each output has one, as validate wants. */
static oq_status check_expected(const model_sweep *m, const char *model_path, oq_err *err)
{
    oq_status st = check_has_arrays(m->expected, err);
    if (st) return st;
    for (size_t i = 0; i < m->expected->count; i++) {
        const char *name = m->expected->tensors[i]->name;
        size_t k = 0;
        while (k < m->mi->n_outputs && strcmp(m->mi->outputs[k].name, name)) k++;
        int is_input = oq_model_default_input(m->mi, name) != NULL;
        for (size_t j = 0; j < m->mi->n_inputs; j++) is_input |= !strcmp(m->mi->inputs[j].name, name);
        if (k == m->mi->n_outputs && !is_input && !batch_member(name))
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: tensor '%s' is not an output of %s", m->expected->path,
                              name, model_path);
    }
    for (size_t k = 0; !st && k < m->mi->n_outputs; k++) {
        const oq_io_info *io = &m->mi->outputs[k];
        const oq_tensor *t = oq_npz_get(m->expected, io->name);
        char want[256];
        if (!t) /* left out, it would pass uncompared: validate, replay and convert refuse it too */
            return oq_err_set(err, OQ_ERR_NOT_FOUND, "%s: no tensor for the model's output %s %s %s (every output is "
                              "compared with its saved values)", m->expected->path, io->name,
                              io->elem_type ? oq_dtype_name((oq_dtype)io->elem_type) : "",
                              oq_io_declared_str(io, want, sizeof want));
        st = oq_compare_check_kind(t, io->name, (oq_dtype)io->elem_type, m->expected->path, err);
    }
    return st;
}

/* An input with a default (the initializer of its name) runs with it: bench feeds the inputs
 * ONNX Runtime lists, those without one, so a tensor or a --shape for it would be ignored. */
static oq_status check_defaults(const oq_bench_opts *o, const model_sweep *m, oq_err *err)
{
    oq_status st = m->inputs ? oq_model_refuse_default_inputs(m->mi, (const oq_tensor *const *)m->inputs->tensors,
                                                              m->inputs->count, m->inputs->path, "tensor", err)
                             : OQ_OK;
    for (size_t k = 0; !st && k < o->n_input_shapes; k++) {
        const char *name = o->input_shapes[k].input;
        if (oq_model_default_input(m->mi, name))
            st = oq_err_set(err, OQ_ERR_INVALID_ARG, "opts.input_shapes %s: the model's input '%s' " OQ_DEFAULT_INPUT_WHY
                            ": it generates only inputs without one", name, name);
    }
    return st;
}

/* An --inputs file must give at least one model input: else it is the wrong file. Its tensors
 * made the types the model's inputs want, where a file may hold another (oq_npz_feed_as). */
static oq_status check_inputs(const model_sweep *m, oq_err *err)
{
    oq_status st = check_has_arrays(m->inputs, err);
    for (size_t i = 0; !st && i < m->inputs->count; i++) {
        oq_tensor *t = m->inputs->tensors[i];
        const oq_io_info *io = t->name ? oq_find_io(m->mi->inputs, m->mi->n_inputs, t->name) : NULL;
        char what[4200];
        snprintf(what, sizeof what, "%s: tensor '%s'", m->inputs->path, t->name ? t->name : "");
        if (io) st = oq_npz_feed_as(t, (oq_dtype)io->elem_type, what, err);
    }
    if (st) return st;
    for (size_t i = 0; i < m->mi->n_inputs; i++)
        if (oq_npz_get(m->inputs, m->mi->inputs[i].name)) return OQ_OK;
    char list[512];
    oq_io_names(m->mi->inputs, m->mi->n_inputs, list, sizeof list);
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: no tensor named after an input of the model (its inputs: %s)",
                      m->inputs->path, list);
}

/* --expected against the model's output shapes at the one point (--expected allows no
 * sweep): a mismatch found before any timing, not by a failed row after it. */
static oq_status check_expected_shapes(const model_sweep *m, oq_err *err)
{
    oq_status st = OQ_OK;
    for (size_t k = 0; !st && k < m->mi->n_outputs; k++) {
        const oq_tensor *t = oq_npz_get(m->expected, m->mi->outputs[k].name);
        if (t) st = oq_bench_check_expected_shape(&m->mi->outputs[k], &m->points[0], t, m->expected->path, err);
    }
    return st;
}

/* Each --tolerance parses, and one for an output names a float output of the model: another
 * (a name it lacks, an integer or bool output, compared exactly) would be ignored while the user
 * believes it applied. */
static oq_status check_tolerances(const char *specs, const oq_model_info *mi, oq_err *err)
{
    const char **names = calloc(mi->n_outputs ? mi->n_outputs : 1, sizeof *names);
    int32_t *types = calloc(mi->n_outputs ? mi->n_outputs : 1, sizeof *types);
    oq_status st = names && types ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (size_t k = 0; !st && k < mi->n_outputs; k++) {
        names[k] = mi->outputs[k].name;
        types[k] = mi->outputs[k].elem_type;
    }
    if (!st) st = oq_tolerances_check_specs(specs, names, types, mi->n_outputs, err);
    free(names);
    free(types);
    return st;
}

static oq_status check_model_opts(const oq_bench_opts *o, oq_err *err)
{
    if (o->iters < 1) return oq_err_set(err, OQ_ERR_INVALID_ARG, "iters must be >= 1");
    if (o->threads < 0 || o->inter_op_threads < 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "threads must be >= 0");
    if (o->int_lo > o->int_hi)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "opts.int_lo,int_hi %lld,%lld: LO > HI", (long long)o->int_lo,
                          (long long)o->int_hi);
    if (!(o->mask_fraction >= 0 && o->mask_fraction < 1))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "mask fraction %g: must be in [0, 1)", o->mask_fraction);
    if (o->expected_path && (!o->inputs_path || o->n_sweeps))
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "opts.expected_path compares outputs of the inputs they came from: it needs opts.inputs_path and "
                          "no opts.sweeps");
    if (o->tolerances && !o->expected_path)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "opts.tolerances needs opts.expected_path (without it nothing is compared)");
    if ((o->padding >= 0 || o->n_seq_axes) && !o->expected_path)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "opts.%s needs opts.expected_path (without it nothing is compared)",
                          o->padding >= 0 ? "padding" : "seq_axes");
    if (o->padding < -1 || o->padding > OQ_PADDING_AS_REFERENCE)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "opts.padding %d is not an OQ_PADDING_* rule", o->padding);
    return OQ_OK;
}

/* What the mask input is, where none is. */
#define NO_MASK "rank 2 [batch, length]: the input the mask contract or mask_input names, else the one the graph uses as a mask"

/* Options that shape generated inputs only, and the fills (oq_bench_input_info.fill) that use
 * each: given for a run that generates no such input, they would be ignored. */
static const struct generated_opt {
    unsigned bit;
    const char *name, *fills[3], *none;
} generated_opts[] = {
    {OQ_BENCH_GIVEN_SEED, "seed", {"uniform", "integers", "mask"}, "no generated input takes random values"},
    {OQ_BENCH_GIVEN_INT_RANGE, "int-range", {"integers"}, "no generated input is an integer one"},
    {OQ_BENCH_GIVEN_LENGTH_POLICY, "length-policy", {"mask"},
     "no generated input is the mask (" NO_MASK ")"},
    {OQ_BENCH_GIVEN_MASK_FRACTION, "mask-fraction", {"mask"},
     "no generated input is the mask (" NO_MASK ")"},
};

static int fills_any(const oq_bench_point *p, const struct generated_opt *g)
{
    for (size_t i = 0; i < p->n_inputs; i++)
        for (size_t k = 0; k < sizeof g->fills / sizeof *g->fills && g->fills[k]; k++)
            if (!strcmp(p->inputs[i].fill, g->fills[k])) return 1;
    return 0;
}

/* "x uniform, mask ones": the generated inputs of p and their fills; 0 when there are none. */
static size_t generated_text(const oq_bench_point *p, char *buf, size_t n)
{
    size_t count = 0, used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < p->n_inputs && used < n; i++)
        if (strcmp(p->inputs[i].source, "npz"))
            used += (size_t)snprintf(buf + used, n - used, "%s%s %s", count++ ? ", " : "", p->inputs[i].name,
                                     p->inputs[i].fill);
    return count;
}

/* Each option of generated inputs given for a run that generates none it reaches (the first
 * point says for all: every point takes its inputs from the same places). */
static oq_status check_generated_opts(const oq_bench_opts *o, const model_sweep *m, oq_err *err)
{
    const oq_bench_point *p = &m->points[0];
    char list[512];
    size_t n = generated_text(p, list, sizeof list);
    for (size_t i = 0; i < sizeof generated_opts / sizeof *generated_opts; i++) {
        const struct generated_opt *g = &generated_opts[i];
        if (!(o->given & g->bit) || fills_any(p, g)) continue;
        if (!n && p->n_inputs)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "--%s: every input of the model comes from %s: nothing is "
                              "generated, so it would be ignored", g->name, o->inputs_path);
        if (!n)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "--%s: the model has no inputs to generate, so it would be "
                              "ignored", g->name);
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "--%s: %s (generated: %s), so it would be ignored", g->name,
                          g->none, list);
    }
    return OQ_OK;
}

/* A PAD polarity reads a mask-like input [B, L] (generated or given): with none it would be
 * ignored while the caller believes it applied. */
static oq_status check_polarity(const oq_bench_opts *o, const oq_bench_point *p, oq_err *err)
{
    if (o->mask_polarity != OQ_MASK_POLARITY_KEEP && o->mask_polarity != OQ_MASK_POLARITY_PAD)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "mask_polarity %d is neither keep nor pad", (int)o->mask_polarity);
    if (o->mask_polarity == OQ_MASK_POLARITY_KEEP && !(o->given & OQ_BENCH_GIVEN_MASK_POLARITY)) return OQ_OK;
    if (p->mask >= 0) return OQ_OK;
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "mask_polarity %s: no input of the model is the mask (" NO_MASK
                      "), so it would be ignored", oq_mask_polarity_name(o->mask_polarity));
}

/* "<ep>:model:fp32", or fp16 / bf16 when the model computes in float16 / bfloat16 (its attention
 * or an output: oq_model_precision_of, as validate's default): the precision its rows are judged at. */
static oq_status model_variant(const oq_bench_opts *o, model_sweep *m, oq_err *err)
{
    oq_model_precision_of(m->mi, &m->precision);
    char text[128];
    snprintf(text, sizeof text, "%s:model:%s", o->model_ep ? o->model_ep : "cpu", oq_model_precision_name(&m->precision));
    return oq_config_parse(text, &m->variant, err);
}

/* The name the model gives axis `axis` of `io` (not a size, not unnamed), else NULL. */
static const char *axis_name(const oq_io_info *io, int32_t axis)
{
    const char *d = io && io->dims && axis < io->rank ? io->dims[axis] : NULL;
    return d && *d && *d != '?' && (*d < '0' || *d > '9') ? d : NULL;
}

/* The dimension of an input axis the model denotes `denotation` (DATA_BATCH, DATA_TIME). */
static const char *denoted(const oq_model_info *mi, const char *denotation)
{
    for (size_t i = 0; i < mi->n_inputs; i++)
        for (int32_t a = 0; mi->inputs[i].denotations && a < mi->inputs[i].rank; a++)
            if (mi->inputs[i].denotations[a] && !strcmp(mi->inputs[i].denotations[a], denotation) &&
                axis_name(&mi->inputs[i], a))
                return mi->inputs[i].dims[a];
    return NULL;
}

static const oq_bench_dimval *point_dim(const oq_bench_point *p, const char *name)
{
    for (size_t i = 0; name && i < p->n_dims; i++)
        if (!strcmp(p->dims[i].name, name)) return &p->dims[i];
    return NULL;
}

/* The batch's dimension: one named batch or batch_size, else the one denoted DATA_BATCH,
 * else the first input's axis 0 (torch names it s0, legacy exports B). */
static const char *batch_dim(const oq_model_info *mi, const oq_bench_point *p)
{
    if (point_dim(p, "batch")) return "batch";
    if (point_dim(p, "batch_size")) return "batch_size";
    const char *d = denoted(mi, "DATA_BATCH");
    return d ? d : mi->n_inputs ? axis_name(&mi->inputs[0], 0) : NULL;
}

/* The sequence length's dimension: opts.seq_dim, else the last sweep other than the batch,
 * else as the model tells it: the length axis (1) of a mask input [batch, length], the axis
 * denoted DATA_TIME, one named like a length; NULL when none is told (never the batch). */
static const char *seq_dim(const oq_bench_opts *o, const oq_model_info *mi, const oq_bench_point *p,
                           const char *batch)
{
    static const char *const seq_names[] = {"seq", "seq_len", "seqlen", "sequence", "sequence_length"};
    const char *d = o->seq_dim;
    for (size_t i = o->n_sweeps; !d && i-- > 0;)
        if (!batch || strcmp(o->sweeps[i].name, batch)) d = o->sweeps[i].name;
    if (!d && p->mask >= 0) d = axis_name(&mi->inputs[p->mask], 1);
    if (!d) d = denoted(mi, "DATA_TIME");
    for (size_t k = 0; !d && k < sizeof seq_names / sizeof *seq_names; k++)
        if (point_dim(p, seq_names[k])) d = seq_names[k];
    return d && (!batch || strcmp(d, batch)) && point_dim(p, d) ? d : NULL;
}

/* opts.seq_dim names a dimension of the points, other than the batch's. */
static oq_status check_seq_dim(const char *name, const model_sweep *m, oq_err *err)
{
    const oq_bench_point *p = &m->points[0];
    if (point_dim(p, name)) {
        const char *batch = batch_dim(m->mi, p);
        if (!batch || strcmp(name, batch)) return OQ_OK;
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "opts.seq_dim '%s': that is the batch's dimension", name);
    }
    char list[512] = "";
    size_t used = 0;
    for (size_t i = 0; i < p->n_dims && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", p->dims[i].name);
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "opts.seq_dim '%s': the model has no such dimension (its "
                      "dimensions: %s)", name, *list ? list : "none");
}

/* The model read once: the file may change while the sweep runs (a session per sample with
 * --include-session read it again each time), and its rows are of the bytes inspected. */
static oq_status read_model(const char *path, model_sweep *m, oq_err *err)
{
    oq_status st = oq_model_file_read(path, &m->file, err);
    if (!st && !m->file.mi) return oq_err_set(err, m->file.inspected.status, "%s", m->file.inspected.msg);
    /* an external-data file that is a folder or a FIFO: refused before ORT opens it, as validate
     * does (one that is not there is ORT's to explain, in the row) */
    for (size_t i = 0; !st && i < m->file.n_ext; i++) {
        struct stat sb;
        if (!stat(m->file.ext_paths[i], &sb) && !S_ISREG(sb.st_mode))
            return oq_err_set(err, OQ_ERR_IO, "%s: external data: %s: not a regular file", path,
                              m->file.ext_paths[i]);
    }
    m->mi = m->file.mi;
    return st;
}

/* The model's mask and its polarity: a contract in its metadata (ortqual convert's) names the
 * mask input and says its polarity, as validate reads them (one rule: oq_contract_polarity_adopt),
 * and a polarity given otherwise is refused; without a contract, the options'. */
static oq_status contract_polarity(const oq_bench_opts *o, model_sweep *m, oq_err *err)
{
    int given = (o->given & OQ_BENCH_GIVEN_MASK_POLARITY) || o->mask_polarity != OQ_MASK_POLARITY_KEEP;
    oq_mask_polarity recorded;
    m->polarity = o->mask_polarity;
    m->polarity_source = given ? "option" : "default";
    oq_status st = oq_convert_contract_of(m->file.bytes, m->file.n, o->model_path, &m->has_contract, m->contract,
                                          sizeof m->contract, &recorded, err);
    if (!st && m->has_contract) st = oq_contract_polarity_adopt(o->model_path, recorded, given, &m->polarity, err);
    if (!st && m->has_contract) m->polarity_source = "contract";
    return st;
}

/* The mask's axes in expected output `want` (validate's rule, axes-impl.h); masked 0: none. */
static oq_status output_axes(const oq_bench_opts *o, const model_sweep *m, const oq_tensor *want, oq_mask_axes *a,
                             oq_err *err)
{
    oq_axes_rule r = {o->model_path, m->mi, m->mask_input, o->n_seq_axes, o->seq_axes, m->batch, m->seq};
    return oq_output_mask_axes(&r, want->name, want->ndim, want->shape, a, err);
}

/* With expected outputs, every output's mask axes told and the mask's lengths read before any
 * session, as validate does: padding never enters the errors. An output whose axes cannot be
 * told, or a mask that breaks the contract where an output has its axes, is refused. */
static oq_status expected_mask(const oq_bench_opts *o, model_sweep *m, oq_err *err)
{
    const oq_bench_point *p = &m->points[0];
    int k = p->mask;
    m->mask_input = k >= 0 ? p->inputs[k].name : NULL;
    oq_status st = oq_seq_axes_check_model(o->model_path, m->mi, m->mask_input, o->seq_axes, o->n_seq_axes, err);
    if (st || k < 0) return st;
    m->batch = p->inputs[k].shape[0];
    m->seq = p->inputs[k].shape[1];
    int any = 0;
    for (size_t i = 0; !st && i < m->mi->n_outputs; i++) {
        const oq_tensor *want = oq_npz_get(m->expected, m->mi->outputs[i].name);
        oq_mask_axes a = {0};
        if (want) st = output_axes(o, m, want, &a, err);
        any |= a.masked;
    }
    if (st || !any) return st;
    oq_tensor **in = NULL;
    st = oq_bench_make_inputs(o, m->polarity, m->inputs, p, &in, err);
    if (!st && !(m->lengths = calloc(m->batch ? (size_t)m->batch : 1, sizeof *m->lengths)))
        st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    if (!st && (st = oq_mask_check_polarity(in[k], NULL, m->polarity, m->lengths, err)))
        oq_err_prefix(err, "%s: mask '%s': ", strcmp(p->inputs[k].source, "npz") ? "generated" : o->inputs_path,
                      m->mask_input);
    if (in) oq_tensors_free(in, p->n_inputs);
    return st;
}

/* ---- each point's mask and --inputs, before any session ------------------------------ */

/* Point p's mask lengths where the finite rule reads them: the --inputs file's mask held to the
 * contract as validate holds a batch's (one function: a mask validate refuses, left padding or a
 * hole, is refused here too, naming the event and position, not timed), else the generated mask's. */
static oq_status point_lengths(const oq_bench_opts *o, const model_sweep *m, const oq_bench_point *p,
                               int64_t **lengths, oq_err *err)
{
    const oq_bench_input_info *k = &p->inputs[p->mask];
    if (!strcmp(k->source, "npz")) {
        oq_mask_taken t = {m->polarity, 0, m->mask.why, !strcmp(m->mask.source, "name"), "mask_input NAME names the mask",
                           NULL, NULL, m->by_graph};
        return oq_input_mask_check(&t, oq_npz_get(m->inputs, k->name), o->inputs_path, lengths, err);
    }
    *lengths = calloc(k->shape[0] > 0 ? (size_t)k->shape[0] : 1, sizeof **lengths);
    if (!*lengths) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    return oq_bench_event_lengths(o, k->shape[0], k->shape[1], *lengths, err);
}

/* The --inputs tensors of point p held to validate's finite-input rule and id check (axes-impl.h):
 * a NaN or an infinity at a valid position, or an id outside its table as the Casts on its way
 * make it, is the file's error (exit 2, naming the element), not a failed row nor a timing of
 * NaNs. */
static oq_status point_file(const oq_bench_opts *o, const model_sweep *m, const oq_bench_point *p, oq_err *err)
{
    const oq_tensor **t = calloc(p->n_inputs ? p->n_inputs : 1, sizeof *t);
    if (!t) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < p->n_inputs; i++)
        if (!strcmp(p->inputs[i].source, "npz")) t[i] = oq_npz_get(m->inputs, p->inputs[i].name);
    int64_t *lengths = NULL;
    oq_status st = p->mask >= 0 ? point_lengths(o, m, p, &lengths, err) : OQ_OK;
    const oq_bench_input_info *k = p->mask >= 0 ? &p->inputs[p->mask] : NULL;
    oq_axes_rule r = {o->model_path, m->mi, k ? k->name : NULL, 0, NULL, k ? k->shape[0] : 0, k ? k->shape[1] : 0};
    oq_finite_rule f = {&r, lengths, m->uses, 0, NULL, NULL};
    if (!st) st = oq_inputs_check_finite(&f, t, p->n_inputs, o->inputs_path, err);
    if (!st) st = oq_inputs_check_ids(&f, m->tables, t, p->n_inputs, o->inputs_path, err);
    free(lengths);
    free(t);
    return st;
}

/* A range too wide to judge whole (check_int_table): point p's generated integers judged as
 * they are fed, where they reach a table through Casts. */
static oq_status point_generated(const oq_bench_opts *o, const model_sweep *m, const oq_bench_point *p, oq_err *err)
{
    int wide = o->int_hi - o->int_lo + 1 > RANGE_JUDGED, any = 0;
    for (size_t i = 0; wide && m->tables && i < p->n_inputs; i++)
        any |= !strcmp(p->inputs[i].fill, "integers") && m->tables[i].n;
    if (!any) return OQ_OK;
    oq_tensor **in = NULL;
    oq_status st = oq_bench_make_inputs(o, m->polarity, m->inputs, p, &in, err);
    for (size_t i = 0; !st && i < p->n_inputs; i++)
        if (!strcmp(p->inputs[i].fill, "integers")) st = judge_generated(o, &m->tables[i], in[i], p->inputs[i].name, err);
    if (in) oq_tensors_free(in, p->n_inputs);
    return st;
}

/* Every point's generated mask keeps a valid element per row (an impossible --mask-fraction is
 * refused here, exit 2, as the attention sweep refuses it: not a failed row), each point's
 * generated ids fit their tables, and with --inputs each point's inputs pass the finite rule and
 * the id check. */
static oq_status check_points(const oq_bench_opts *o, const model_sweep *m, oq_err *err)
{
    oq_status st = OQ_OK;
    for (size_t i = 0; !st && i < m->n_points; i++) {
        const oq_bench_point *p = &m->points[i];
        if (p->mask >= 0 && strcmp(p->inputs[p->mask].source, "npz"))
            st = oq_bench_check_fraction(o, p->inputs[p->mask].shape[1], err);
        if (!st && m->inputs) st = point_file(o, m, p, err);
        if (!st) st = point_generated(o, m, p, err);
    }
    return st;
}

/* ---- the mask input ------------------------------------------------------------------ */

void oq_bench_mask_clear(oq_bench_mask *m)
{
    free(m->ones);
    memset(m, 0, sizeof *m);
    m->index = -1;
    m->source = "none";
}

/* The input `name` (the contract's or opts.mask_input), a [batch, length] one. */
static oq_status named_mask(const oq_model_info *mi, const char *path, const char *who, const char *name, int *index,
                            oq_err *err)
{
    char names[512], said[64];
    who = oq_terms(who, said, sizeof said);
    for (size_t i = 0; i < mi->n_inputs; i++)
        if (!strcmp(mi->inputs[i].name, name)) {
            *index = (int)i;
            if (mi->inputs[i].rank < 0 || mi->inputs[i].rank == 2) return OQ_OK;
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: %s%s': the input is rank %d; the mask is [batch, "
                              "length]", path, who, name, (int)mi->inputs[i].rank);
        }
    oq_io_names(mi->inputs, mi->n_inputs, names, sizeof names);
    return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: %s%s': the model has no such input (inputs: %s)", path, who, name,
                      names);
}

/* Without a contract or opts.mask_input (`named` -1): the rank-2 inputs the graph uses as a
 * padding mask (validate's rule); one is the mask, two are refused (which one is not guessed),
 * and an input named like a mask that is none is said. The other mask-like inputs (another the
 * graph uses as one, or of another rank; without a contract, one named like a mask) are
 * generated all ones, as they were: random values there would mask random positions. */
static oq_status graph_mask(const oq_bench_opts *o, const oq_model_info *mi, const unsigned *uses, int contract,
                            int named, oq_bench_mask *out, oq_err *err)
{
    char found[512] = "";
    size_t n_found = 0;
    for (size_t i = 0; i < mi->n_inputs; i++) {
        const oq_io_info *in = &mi->inputs[i];
        const char *why = NULL;
        oq_mask_role r = oq_input_mask_role(in, uses ? uses[i] : 0, 0, &why);
        int rank2 = in->rank == 2 || in->rank < 0, like = oq_named_like_mask(in->name);
        int used = r == OQ_MASK_ROLE_SCORES || r == OQ_MASK_ROLE_OPERATOR;
        if ((int)i == named) continue;
        if (named < 0 && rank2 && oq_mask_role_taken(r)) {
            snprintf(found + strlen(found), sizeof found - strlen(found), "%s'%s'", n_found ? ", " : "", in->name);
            if (!n_found++) out->index = (int)i, out->why = why, out->source = r == OQ_MASK_ROLE_NAME ? "name" : "graph";
            continue;
        }
        out->ones[i] = used || (like && !contract && r == OQ_MASK_ROLE_NAME);
        if (named < 0 && like && !*out->note)
            snprintf(out->note, sizeof out->note, "input '%s' is named like a mask but is not taken as the mask: %s",
                     in->name, r == OQ_MASK_ROLE_NONE ? why : "it is not [batch, length]");
    }
    if (n_found > 1)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: inputs %s may each be the [batch, length] mask (each is used "
                          "as one by the graph, or named like one): name it (mask_input NAME) or record it in the "
                          "model's mask contract", o->model_path, found);
    return OQ_OK;
}

oq_status oq_bench_choose_mask(const oq_bench_opts *o, const oq_model_info *mi, const unsigned *uses,
                               const char *contract, oq_bench_mask *out, oq_err *err)
{
    oq_bench_mask_clear(out);
    if (contract && o->mask_input && strcmp(contract, o->mask_input))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: mask_input '%s', but the model's mask contract names '%s'",
                          o->model_path, o->mask_input, contract);
    if (!(out->ones = calloc(mi->n_inputs ? mi->n_inputs : 1, 1))) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = OQ_OK;
    if (contract) {
        out->source = "contract";
        st = named_mask(mi, o->model_path, "the mask contract names '", contract, &out->index, err);
    } else if (o->mask_input) {
        out->source = "option";
        st = named_mask(mi, o->model_path, "mask_input '", o->mask_input, &out->index, err);
    }
    return st ? st : graph_mask(o, mi, uses, contract != NULL, out->index, out, err);
}

/* Each line the fold said of the model ("Gather 'g': ...\n"), as validate says it: prefixed with
 * the model, into *notes ("" for none; malloc'ed). */
static oq_status notes_of(const char *model, const char *lines, char **notes, oq_err *err)
{
    oq_dynbuf b = {0};
    for (const char *l = lines, *end; l && (end = strchr(l, '\n')); l = end + 1)
        if (oq_dynbuf_addf(&b, "%s: %.*s\n", model, (int)(end - l), l)) {
            free(b.buf);
            return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        }
    if (!b.buf && !(b.buf = strdup(""))) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    *notes = b.buf;
    return OQ_OK;
}

/* The mask input from the model's contract, the options or its graph (the bytes inspected),
 * and its polarity from the graph where neither the contract nor the caller says it and the
 * graph's uses of the mask agree (inputuse-impl.h, OQ_USE_SAYS_*); a polarity the caller gives
 * is held to that reading, as validate holds it (oq_mask_polarity_held). */
static oq_status choose_mask(const oq_bench_opts *o, model_sweep *m, oq_err *err)
{
    /* the tables each input indexes too (check_int_table) and the notes, in one fold of the
     * model's constants; a contract's mask is not the graph's */
    char *lines = NULL;
    oq_status st =
        oq_model_input_uses_bytes(m->file.bytes, m->file.n, m->mi, o->model_path, &m->uses, &m->tables, &lines, err);
    if (!st) st = notes_of(o->model_path, lines, &m->notes, err);
    free(lines);
    const unsigned *uses = m->has_contract ? NULL : m->uses;
    if (!st) st = oq_bench_choose_mask(o, m->mi, uses, m->has_contract ? m->contract : NULL, &m->mask, err);
    unsigned says = !st && uses && m->mask.index >= 0 ? oq_uses_polarity(uses[m->mask.index]) : 0;
    if (says && !strcmp(m->polarity_source, "default")) {
        m->polarity = says == OQ_USE_SAYS_PAD ? OQ_MASK_POLARITY_PAD : OQ_MASK_POLARITY_KEEP;
        m->polarity_source = "graph";
        m->by_graph = 1;
    }
    if (says && !strcmp(m->polarity_source, "option"))
        st = oq_mask_polarity_held(NULL, o->model_path, m->mi, m->mi->inputs[m->mask.index].name, uses[m->mask.index],
                                   m->polarity, 1, &m->by_graph, err);
    return st;
}

static oq_status sweep_prepare(const oq_bench_opts *o, model_sweep *m, oq_err *err)
{
    memset(m, 0, sizeof *m);
    oq_status st = check_model_opts(o, err);
    if (!st) st = read_model(o->model_path, m, err);
    if (!st) st = contract_polarity(o, m, err);
    char said[64]; /* who refuses, the library's words, worded as a format is */
    if (!st) st = oq_model_refuse_non_tensors(m->mi, o->model_path, oq_terms("the model bench", said, sizeof said), err);
    if (!st) st = oq_model_refuse_no_outputs(m->mi, o->model_path, err);
    if (!st && o->inputs_path) st = oq_npz_read(o->inputs_path, &m->inputs, err);
    if (!st) st = check_defaults(o, m, err);
    if (!st) st = choose_mask(o, m, err);
    if (!st && m->inputs) st = check_inputs(m, err);
    if (!st && o->expected_path) st = oq_npz_read(o->expected_path, &m->expected, err);
    if (!st && m->expected) st = check_expected(m, o->model_path, err);
    if (!st && m->expected) st = oq_npz_same_events(m->inputs, o->inputs_path, m->expected, o->expected_path, err);
    if (!st && o->tolerances) st = check_tolerances(o->tolerances, m->mi, err);
    if (!st) st = model_variant(o, m, err);
    m->n_points = oq_bench_point_count(o);
    if (!st && !(m->points = calloc(m->n_points ? m->n_points : 1, sizeof *m->points)))
        st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (size_t p = 0; !st && p < m->n_points; p++) {
        st = oq_bench_resolve_point(m->mi->inputs, m->mi->n_inputs, m->inputs, o, &m->mask, p, &m->points[p], err);
        for (size_t i = 0; !st && i < m->points[p].n_inputs; i++)
            st = check_int_range(o, m, &m->points[p].inputs[i], err);
    }
    if (!st) st = check_generated_opts(o, m, err);
    if (!st) st = check_polarity(o, &m->points[0], err);
    if (!st && o->seq_dim) st = check_seq_dim(o->seq_dim, m, err);
    if (!st) st = check_points(o, m, err);
    if (!st && m->expected && m->n_points == 1) st = check_expected_shapes(m, err);
    if (!st && m->expected) st = expected_mask(o, m, err);
    if (st) sweep_clear(m);
    return st;
}

/* ---- a row ------------------------------------------------------------------------------ */

/* "batch": the batch dimension's value, else the first input's axis 0; "seq_len" and seq_dim:
 * the sequence dimension's, 0 and "" when the model tells none (opts.seq_dim names it). */
static void row_axes(const oq_bench_opts *o, const oq_model_info *mi, const oq_bench_point *p, oq_bench_row *row)
{
    const char *batch = batch_dim(mi, p);
    const oq_bench_dimval *b = point_dim(p, batch);
    row->batch = b ? b->value : p->n_inputs && p->inputs[0].ndim ? p->inputs[0].shape[0] : 1;
    const oq_bench_dimval *s = point_dim(p, seq_dim(o, mi, p, batch));
    if (!s) return;
    snprintf(row->seq_dim, sizeof row->seq_dim, "%s", s->name);
    row->seq_len = s->value;
}

static oq_status row_init_model(const oq_bench_opts *o, const model_sweep *m, const oq_bench_point *p,
                                oq_bench_row *row, oq_err *err)
{
    oq_bench_row_init(row, o, &m->variant);
    row->static_shapes = -1;
    row->heads = row->kv_heads = row->head_dim = -1;
    row_axes(o, m->mi, p, row);
    row->dims = calloc(p->n_dims ? p->n_dims : 1, sizeof *row->dims);
    row->inputs = calloc(p->n_inputs ? p->n_inputs : 1, sizeof *row->inputs);
    row->samples_ms = calloc(o->iters, sizeof *row->samples_ms);
    if (!row->dims || !row->inputs || !row->samples_ms)
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory for %lld timing samples (opts.iters)", (long long)o->iters);
    memcpy(row->dims, p->dims, p->n_dims * sizeof *p->dims);
    memcpy(row->inputs, p->inputs, p->n_inputs * sizeof *p->inputs);
    row->n_dims = p->n_dims;
    row->n_inputs = p->n_inputs;
    return OQ_OK;
}

/* ---- the first run against the expected outputs ------------------------------------------ */

typedef struct expect_ctx {
    const oq_bench_opts *o;
    const model_sweep *m; /* the expected outputs, and the mask's lengths */
    oq_dtype reduced; /* the model's precision: float16 or bfloat16, else UNDEFINED */
} expect_ctx;

static oq_status compare_one(const expect_ctx *c, const oq_tensor *out, const oq_tensor *want,
                             oq_bench_output_check *chk, int64_t *valid, oq_err *err)
{
    /* the model's precision sets the tolerance, else the output's: a file saved as float64
     * holds no more of it */
    oq_tolerances *tols = NULL;
    oq_tolerance preset = oq_tolerance_for_dtype(c->reduced ? c->reduced : out->dtype);
    oq_status st = oq_tolerances_create(preset, &tols, err);
    if (!st && c->o->tolerances) st = oq_tolerances_add(tols, c->o->tolerances, err);
    oq_compare_opts co = oq_compare_opts_default(out->dtype);
    if (!st) co.tol = oq_tolerances_get(tols, out->name);
    oq_tolerances_free(tols);
    co.check_padding = c->o->padding >= 0 ? c->o->padding : OQ_PADDING_AS_REFERENCE; /* validate's for a model */
    oq_mask_axes a = {0};
    if (!st && c->m->lengths) st = output_axes(c->o, c->m, want, &a, err);
    if (a.masked) {
        co.lengths = c->m->lengths;
        co.batch_axis = a.batch;
        co.seq_axis = a.seq;
    }
    oq_compare_result res;
    if (!st) st = oq_compare_tensors(out, want, &co, &res, err);
    if (st) return st;
    if (oq_compare_judge_vacuous(&res, preset)) oq_compare_vacuous_str(&res, chk->vacuous, sizeof chk->vacuous);
    snprintf(chk->name, sizeof chk->name, "%s", out->name);
    chk->max_abs_err = res.max_abs; /* NaN or Inf where a valid element was, as everywhere */
    chk->max_rel_err = res.max_rel;
    if (oq_compare_judged_nothing(&res)) chk->max_abs_err = chk->max_rel_err = NAN; /* its 0 is no error */
    chk->rtol = co.tol.rtol;
    chk->atol = co.tol.atol;
    chk->over_tol = res.over_tol;
    chk->nan_count = res.nan_count;
    chk->inf_count = res.inf_count;
    chk->expected_nan_count = res.ref_nan_count;
    chk->expected_inf_count = res.ref_inf_count;
    chk->inf_matched = res.inf_matched;
    chk->masked = res.masked;
    chk->padded = res.num_padded;
    chk->pad_nonzero = res.pad_nonzero;
    chk->padding_checked = res.padding_checked;
    chk->padding_rule = co.check_padding;
    chk->passed = res.passed;
    *valid += res.num_valid;
    return OQ_OK;
}

int oq_bench_output_judged_nothing(const oq_bench_output_check *c)
{
    /* compare_one's mark: NaN errors where no NaN was on either side (matched infinities, or no
     * valid element at all) */
    return c && isnan(c->max_abs_err) && !c->nan_count && !c->expected_nan_count;
}

/* Record each output's errors; the row's max_abs_err is the worst (NaN, then Inf, then the
 * largest) of the outputs that compared a value, its NaN and Inf counts those of both sides. A
 * row whose valid elements are all infinities the expected outputs hold too compared no value
 * (validate's rule, compare-impl.h): its errors stay NaN, not measured, and the verdict does not
 * count it as compared, nor a row with one such output beside others. */
static oq_status check_expected_outputs(void *ctx, size_t n_out, oq_tensor **outs, oq_bench_row *row, oq_err *err)
{
    const expect_ctx *c = ctx;
    if (!c->m->expected) return OQ_OK;
    row->outputs = calloc(n_out ? n_out : 1, sizeof *row->outputs);
    if (!row->outputs) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    row->max_abs_err = row->max_rel_err = 0;
    row->nan_count = row->inf_count = row->pad_nonzero = 0;
    int64_t valid = 0, matched = 0;
    for (size_t i = 0; i < n_out; i++) {
        const oq_tensor *want = oq_npz_get(c->m->expected, outs[i]->name);
        if (!want) continue;
        oq_bench_output_check *chk = &row->outputs[row->n_outputs];
        oq_status st = compare_one(c, outs[i], want, chk, &valid, err);
        if (st) return st;
        row->n_outputs++;
        matched += chk->inf_matched;
        if (!oq_bench_output_judged_nothing(chk)) { /* its NaN is not measured: said as not compared */
            if (oq_compare_max_abs_worse(chk->max_abs_err, row->max_abs_err)) row->max_abs_err = chk->max_abs_err;
            if (oq_compare_max_abs_worse(chk->max_rel_err, row->max_rel_err)) row->max_rel_err = chk->max_rel_err;
        }
        row->nan_count += chk->nan_count + chk->expected_nan_count;
        row->inf_count += chk->inf_count + chk->expected_inf_count;
        row->pad_nonzero += chk->pad_nonzero;
    }
    if (oq_compare_infinities_only(valid, matched)) row->max_abs_err = row->max_rel_err = NAN;
    return OQ_OK;
}

/* "3 NaN, 1 Inf in WHERE" after what buf holds (joined with " and "); nothing for no such value. */
static void nonfinite_text(char *buf, size_t n, int64_t nan, int64_t inf, const char *where)
{
    size_t used = strlen(buf);
    if ((!nan && !inf) || used >= n) return;
    char nan_text[32] = "", inf_text[32] = "";
    if (nan) snprintf(nan_text, sizeof nan_text, "%lld NaN", (long long)nan);
    if (inf) snprintf(inf_text, sizeof inf_text, "%lld Inf", (long long)inf);
    snprintf(buf + used, n - used, "%s%s%s%s in %s", used ? " and " : "", nan_text, nan && inf ? ", " : "", inf_text,
             where);
}

/* Over tolerance fails the row (its timings stay); the message names the non-finite values,
 * which have no error to give. */
static void judge_outputs(oq_bench_row *row, const char *expected_path)
{
    for (size_t i = 0; row->status == OQ_BENCH_OK && i < row->n_outputs; i++) {
        const oq_bench_output_check *c = &row->outputs[i];
        if (c->passed) continue;
        row->status = OQ_BENCH_FAILED;
        char what[640] = ""; /* the rest of the line keeps its room in row->error */
        nonfinite_text(what, sizeof what, c->nan_count, c->inf_count, "the output");
        nonfinite_text(what, sizeof what, c->expected_nan_count, c->expected_inf_count, expected_path);
        /* the tolerance as given, and the error above atol however close (both printed 0.000977) */
        char rt[32], at[32], err[32];
        oq_real_str(c->rtol, 6, rt, sizeof rt);
        oq_real_str(c->atol, 6, at, sizeof at);
        if (*c->vacuous)
            snprintf(row->error, sizeof row->error, "output '%s': %s", c->name, c->vacuous);
        else if (!*what && !c->over_tol && c->pad_nonzero)
            snprintf(row->error, sizeof row->error,
                     "output '%s': %lld of its %lld padded elements are not 0 (%s); its valid elements are within "
                     "tolerance", c->name, (long long)c->pad_nonzero, (long long)c->padded,
                     c->padding_rule == OQ_PADDING_ZERO ? "padded elements must be 0"
                                                         : "the expected outputs are 0 on every padded element");
        else if (*what)
            snprintf(row->error, sizeof row->error,
                     "output '%s': non-finite values: %s; %lld elements over tolerance (rtol %s, atol %s)", c->name,
                     what, (long long)c->over_tol, rt, at);
        else
            snprintf(row->error, sizeof row->error,
                     "output '%s': max abs err %s against %s, %lld elements over tolerance (rtol %s, atol %s)",
                     c->name, oq_real_over_str(c->max_abs_err, c->atol, 3, err, sizeof err), expected_path,
                     (long long)c->over_tol, rt, at);
    }
}

static void run_point(sweep_ctx_model *c, size_t p, oq_bench_row *row)
{
    const model_sweep *m = c->m;
    oq_err e = {0};
    oq_tensor **in = NULL;
    oq_status st = oq_bench_make_inputs(c->o, m->polarity, m->inputs, &m->points[p], &in, &e);
    if (st) {
        oq_bench_row_fail(row, st, &e);
        return;
    }
    int masked = 0;
    row->valid_tokens = oq_bench_valid_elements(&m->points[p], in, m->polarity, &masked);
    row->masked = masked;
    expect_ctx ec = {c->o, m, m->precision.dtype};
    oq_bench_model bm = {.path = c->o->model_path, .bytes = m->file.bytes, .len = m->file.n,
                         .n_in = m->points[p].n_inputs, .in = in,
                         .check = check_expected_outputs, .check_ctx = &ec};
    oq_bench_run_ort_row(c->rt, c->o, &bm, p, row);
    judge_outputs(row, c->o->expected_path);
    oq_tensors_free(in, m->points[p].n_inputs);
}

oq_status oq_bench_model_inputs(const oq_bench_opts *o, size_t point, size_t *n, oq_tensor ***inputs, oq_err *err)
{
    OQ_NEED(err, o);
    OQ_NEED(err, n);
    OQ_NEED(err, inputs);
    *n = 0;
    *inputs = NULL;
    if (!o->model_path) return oq_err_set(err, OQ_ERR_INVALID_ARG, "no model_path");
    model_sweep m;
    oq_status st = sweep_prepare(o, &m, err);
    if (st) return st;
    if (point >= m.n_points)
        st = oq_err_set(err, OQ_ERR_INVALID_ARG, "point %zu: the sweep has %zu", point, m.n_points);
    if (!st) st = oq_bench_make_inputs(o, m.polarity, m.inputs, &m.points[point], inputs, err);
    if (!st) *n = m.points[point].n_inputs;
    sweep_clear(&m);
    return st;
}

oq_status oq_bench_model_notes(const oq_bench_opts *o, char **notes, oq_err *err)
{
    OQ_NEED(err, notes);
    *notes = NULL;
    OQ_NEED(err, o);
    if (!o->model_path) return oq_err_set(err, OQ_ERR_INVALID_ARG, "no model_path");
    const char *folded = oq_bench_ready_notes(o); /* the sweep's, in its ready step: not folded again */
    if (folded) return (*notes = strdup(folded)) ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    model_sweep m;
    memset(&m, 0, sizeof m);
    oq_status st = read_model(o->model_path, &m, err);
    char *lines = NULL;
    if (!st) st = oq_model_input_uses_bytes(m.file.bytes, m.file.n, m.mi, o->model_path, &m.uses, NULL, &lines, err);
    if (!st) st = notes_of(o->model_path, lines, notes, err);
    free(lines);
    sweep_clear(&m);
    return st;
}

/* The mask input the rows were generated with, as summary.json and the tool say it. */
static void mask_said(const model_sweep *m, oq_bench_rows *rows)
{
    const oq_bench_mask *k = &m->mask;
    snprintf(rows->mask_input, sizeof rows->mask_input, "%s", k->index >= 0 ? m->mi->inputs[k->index].name : "");
    snprintf(rows->mask_source, sizeof rows->mask_source, "%s", k->index >= 0 ? k->source : "none");
    snprintf(rows->mask_why, sizeof rows->mask_why, "%s", k->why ? k->why : "");
    snprintf(rows->mask_note, sizeof rows->mask_note, "%s", k->note);
    rows->mask_polarity = m->polarity;
    snprintf(rows->mask_polarity_source, sizeof rows->mask_polarity_source, "%s", m->polarity_source);
}

oq_status oq_bench_model_sweep(oq_runtime *rt, const oq_bench_opts *o, oq_bench_progress_fn progress, void *user,
                               oq_bench_rows **out, oq_err *err)
{
    *out = NULL;
    model_sweep m;
    oq_status st = sweep_prepare(o, &m, err);
    if (!st && o->ready && (st = oq_bench_ready_with_notes(o, m.notes, err))) sweep_clear(&m);
    if (st) return st;
    oq_bench_rows *rows = calloc(1, sizeof *rows);
    if (rows) rows->rows = calloc(m.n_points, sizeof *rows->rows);
    if (!rows || !rows->rows) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    sweep_ctx_model c = {rt, o, &m};
    for (size_t p = 0; !st && p < m.n_points; p++) {
        oq_bench_row *row = &rows->rows[rows->n++];
        st = row_init_model(o, &m, &m.points[p], row, err);
        if (!st && progress) progress(user, p, m.n_points, row, 0);
        if (!st) run_point(&c, p, row);
        if (!st && progress) progress(user, p, m.n_points, row, 1);
    }
    if (!st) st = oq_model_file_unchanged(&m.file, NULL, err); /* ORT read its external data each session */
    if (rows) snprintf(rows->model_sha256, sizeof rows->model_sha256, "%s", m.file.sha256);
    if (rows) snprintf(rows->precision_why, sizeof rows->precision_why, "%s", m.precision.why);
    if (rows) mask_said(&m, rows);
    if (!st) st = oq_bench_rows_keep_notes(rows, m.notes, err);
    sweep_clear(&m);
    if (st) {
        oq_bench_rows_free(rows);
        return st;
    }
    *out = rows;
    return OQ_OK;
}
