/* Placement: node table, classification, verdict and JSON. */
#include "placement/placement-impl.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "status/args-impl.h"
#include "status/terms-impl.h"

const char *oq_node_place_name(oq_node_place p)
{
    switch (p) {
    case OQ_PLACE_DEVICE: return "device";
    case OQ_PLACE_MEMCPY: return "memcpy";
    case OQ_PLACE_CPU_SHAPE: return "cpu_shape";
    case OQ_PLACE_CPU_COMPUTE: return "cpu_compute";
    }
    return "unknown";
}

oq_status oq_placement_create(oq_placement **out, oq_err *err)
{
    OQ_NEED(err, out);
    *out = calloc(1, sizeof **out);
    return *out ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "placement: out of memory");
}

static void tensors_free(oq_placed_tensor *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(t[i].dtype);
        free(t[i].dims);
    }
    free(t);
}

void oq_placement_free(oq_placement *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->n_nodes; i++) {
        oq_placed_node *n = &p->nodes[i];
        free(n->name);
        free(n->op_type);
        free(n->ep_assigned);
        free(n->ep_profiled);
        tensors_free(n->inputs, n->n_inputs);
        tensors_free(n->outputs, n->n_outputs);
    }
    free(p->nodes);
    for (size_t i = 0; i < p->n_eps; i++) free(p->eps[i].ep);
    free(p->eps);
    free(p);
}

bool oq_placement_set_str_(char **dst, const char *src)
{
    char *c = strdup(src ? src : "");
    if (!c) return false;
    free(*dst);
    *dst = c;
    return true;
}

oq_placed_node *oq_placement_node_(oq_placement *p, const char *name, const char *op_type)
{
    for (size_t k = 0; k < p->n_nodes; k++) {
        size_t i = (p->hint_ + k) % p->n_nodes;
        if (!strcmp(p->nodes[i].name, name)) {
            p->hint_ = i + 1;
            return &p->nodes[i];
        }
    }
    oq_placed_node *n = OQ_PUSH(p->nodes, p->n_nodes);
    if (!n) return NULL;
    if (!oq_placement_set_str_(&n->name, name) || !oq_placement_set_str_(&n->op_type, op_type)) {
        free(n->name);
        free(n->op_type);
        p->n_nodes--;
        return NULL;
    }
    return n;
}

/* ---- classification --------------------------------------------------------- */

/* Ops that make up the shape arithmetic of dynamic graphs (PyTorch's dynamic
 * export emits Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains, and
 * scalar math for scales). Only the op is checked here; the tensor rule decides. */
static const char *const shape_ops[] = {
    "Shape", "Size", "Gather", "GatherElements", "GatherND", "Unsqueeze", "Squeeze", "Concat",
    "Slice", "Split", "Reshape", "Flatten", "Cast", "CastLike", "Range", "ConstantOfShape",
    "Expand", "Tile", "Identity", "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual",
    "Not", "And", "Or", "Xor", "Where", "NonZero", "ReduceSum", "ReduceProd", "ReduceMax",
    "ReduceMin", "ArgMax", "ArgMin", "Add", "Sub", "Mul", "Div", "Mod", "Neg", "Abs", "Sign",
    "Max", "Min", "Floor", "Ceil", "Round", "Sqrt", "Reciprocal", "Pow", "Trilu"};

bool oq_placement_is_shape_op(const char *op_type)
{
    if (!op_type) return false;
    for (size_t i = 0; i < sizeof shape_ops / sizeof *shape_ops; i++)
        if (!strcmp(op_type, shape_ops[i])) return true;
    return false;
}

static bool is_cpu_ep(const char *ep) { return ep && !strcmp(ep, "CPUExecutionProvider"); }

/* A shape-sized tensor: int64/int32/bool of rank <= 1, or a single element. */
static bool shape_sized(const oq_placed_tensor *t)
{
    if (t->ndim < 0) return false; /* rank unknown */
    int64_t numel = 1;
    for (int32_t d = 0; d < t->ndim; d++) numel = t->dims[d] < 0 || numel < 0 ? -1 : numel * t->dims[d];
    if (numel == 1) return true;
    bool inty = !strcmp(t->dtype, "int64") || !strcmp(t->dtype, "int32") || !strcmp(t->dtype, "bool");
    return inty && t->ndim <= 1;
}

/* Why a node is in its class: the texts of the rule, in one table so that a record read
 * back from JSON points at the same static strings. */
enum why {
    WHY_MEMCPY, WHY_DEVICE, WHY_NOT_SHAPE_OP, WHY_NO_TYPES, WHY_UNKNOWN_TYPE, WHY_BIG_INPUT,
    WHY_BIG_OUTPUT, WHY_SHAPE, WHY_COUNT
};
static const char *const reasons[WHY_COUNT] = {
    "copy between host and device inserted by ORT at an EP boundary",
    "runs on a device EP",
    "op is not shape arithmetic",
    "shape op without tensor types (no profile event, no model): counted as compute",
    "shape op with a tensor of unknown type or rank: counted as compute",
    "shape op on a tensor larger than a shape (input)",
    "shape op on a tensor larger than a shape (output)",
    "shape arithmetic: every tensor is an int64/int32/bool vector or a scalar",
};

static oq_node_place classify(const oq_placed_node *n, const char **reason)
{
    const char *ep = n->ep_profiled ? n->ep_profiled : n->ep_assigned;
    if (!strcmp(n->op_type, "MemcpyToHost") || !strcmp(n->op_type, "MemcpyFromHost")) {
        *reason = reasons[WHY_MEMCPY];
        return OQ_PLACE_MEMCPY;
    }
    if (!is_cpu_ep(ep)) {
        *reason = reasons[WHY_DEVICE];
        return OQ_PLACE_DEVICE;
    }
    if (!oq_placement_is_shape_op(n->op_type)) {
        *reason = reasons[WHY_NOT_SHAPE_OP];
        return OQ_PLACE_CPU_COMPUTE;
    }
    if (!n->inputs && !n->outputs) {
        *reason = reasons[WHY_NO_TYPES];
        return OQ_PLACE_CPU_COMPUTE;
    }
    for (size_t i = 0; i < n->n_inputs + n->n_outputs; i++) {
        const oq_placed_tensor *t = i < n->n_inputs ? &n->inputs[i] : &n->outputs[i - n->n_inputs];
        if (!strcmp(t->dtype, "unknown") || t->ndim < 0) {
            *reason = reasons[WHY_UNKNOWN_TYPE];
            return OQ_PLACE_CPU_COMPUTE;
        }
    }
    /* Shape and Size read only the metadata of their data input. */
    bool meta_only = !strcmp(n->op_type, "Shape") || !strcmp(n->op_type, "Size");
    for (size_t i = meta_only ? 1 : 0; i < n->n_inputs; i++)
        if (!shape_sized(&n->inputs[i])) {
            *reason = reasons[WHY_BIG_INPUT];
            return OQ_PLACE_CPU_COMPUTE;
        }
    for (size_t i = 0; i < n->n_outputs; i++)
        if (!shape_sized(&n->outputs[i])) {
            *reason = reasons[WHY_BIG_OUTPUT];
            return OQ_PLACE_CPU_COMPUTE;
        }
    *reason = reasons[WHY_SHAPE];
    return OQ_PLACE_CPU_SHAPE;
}

/* ---- verdict ------------------------------------------------------------------ */

typedef struct strv {
    char **v;
    size_t n;
    bool nomem;
} strv;

static void strv_addf(strv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void strv_addf(strv *s, const char *fmt, ...)
{
    if (s->nomem) return;
    va_list ap;
    va_start(ap, fmt);
    s->nomem = oq_strv_vpushf(&s->v, &s->n, fmt, ap) != OQ_OK;
    va_end(ap);
}

static void strv_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

static const char *node_ep(const oq_placed_node *n)
{
    return n->ep_profiled ? n->ep_profiled : n->ep_assigned ? n->ep_assigned : "(unknown EP)";
}

/* The note on the shape ops and Memcpy nodes a placement that is not strict allows, in the
 * library's words; 0 when there is none. */
static int allowed_note(const oq_placement_report *r, char *buf, size_t n)
{
    if (r->strict || !(r->n_cpu_shape || r->n_memcpy)) return 0;
    snprintf(buf, n, "allowed: %zu shape op(s) on CPU and %zu Memcpy node(s) (OQ_PLACEMENT_STRICT rejects them)",
             r->n_cpu_shape, r->n_memcpy);
    return 1;
}

oq_status oq_placement_check(oq_placement *p, unsigned flags, oq_placement_report *r, oq_err *err)
{
    OQ_NEED(err, p);
    OQ_NEED(err, r);
    memset(r, 0, sizeof *r);
    r->strict = flags & OQ_PLACEMENT_STRICT;
    strv fail = {0}, note = {0};
    for (size_t i = 0; i < p->n_nodes; i++) {
        oq_placed_node *n = &p->nodes[i];
        n->place = classify(n, &n->reason);
        if (n->ep_assigned && n->ep_profiled && strcmp(n->ep_assigned, n->ep_profiled)) {
            r->n_mismatch++;
            strv_addf(&note, "%s (%s): assigned to %s but ran on %s", n->name, n->op_type,
                      n->ep_assigned, n->ep_profiled);
        }
        if (p->have_profile && n->runs == 0) { /* fused or removed after partitioning */
            r->n_not_run++;
            strv_addf(&note, "%s (%s): assigned to %s, never ran (fused or removed after partitioning)",
                      n->name, n->op_type, node_ep(n));
            continue;
        }
        switch (n->place) {
        case OQ_PLACE_DEVICE: r->n_device++; break;
        case OQ_PLACE_MEMCPY:
            r->n_memcpy++;
            if (r->strict)
                strv_addf(&fail, "%s (%s): host/device copy on %s (strict placement)", n->name,
                          n->op_type, node_ep(n));
            break;
        case OQ_PLACE_CPU_SHAPE:
            r->n_cpu_shape++;
            if (r->strict)
                strv_addf(&fail, "%s (%s): shape op on %s (strict placement)", n->name, n->op_type,
                          node_ep(n));
            break;
        case OQ_PLACE_CPU_COMPUTE:
            r->n_cpu_compute++;
            strv_addf(&fail, "%s (%s): compute on %s (%s)", n->name, n->op_type, node_ep(n), n->reason);
            break;
        }
    }
    char text[160], said[256]; /* in the caller's words (oq_set_terms) */
    if (allowed_note(r, text, sizeof text)) strv_addf(&note, "%s", oq_terms(text, said, sizeof said));
    /* A profile without node events (profiling broken, no Run) must not let
     * assignment-only nodes, skipped as "never ran", pass by default. */
    if (r->n_device + r->n_memcpy + r->n_cpu_shape + r->n_cpu_compute == 0)
        strv_addf(&fail, "no placement evidence: no node was %s",
                  p->have_profile ? "profiled (did the session run with profiling on?)"
                                  : "assigned or profiled");
    r->failures = fail.v;
    r->n_failures = fail.n;
    r->notes = note.v;
    r->n_notes = note.n;
    if (fail.nomem || note.nomem) {
        oq_placement_report_clear(r);
        return oq_err_set(err, OQ_ERR_NOMEM, "placement check: out of memory");
    }
    r->passed = r->n_failures == 0;
    return OQ_OK;
}

void oq_placement_report_clear(oq_placement_report *r)
{
    if (!r) return;
    strv_free(r->failures, r->n_failures);
    strv_free(r->notes, r->n_notes);
    memset(r, 0, sizeof *r);
}

/* ---- JSON --------------------------------------------------------------------- */

static json_t *jstr_or_null(const char *s) { return s ? json_string(s) : json_null(); }

static json_t *tensors_json(const oq_placed_tensor *t, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        json_t *shape = json_array();
        for (int32_t d = 0; shape && d < t[i].ndim; d++) json_array_append_new(shape, json_integer(t[i].dims[d]));
        json_array_append_new(a, json_pack("{s:s, s:o*}", "dtype", t[i].dtype, "shape", shape));
    }
    return a;
}

static json_t *strv_json(char **v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) json_array_append_new(a, json_string(v[i]));
    return a;
}

json_t *oq_placement_to_json(const oq_placement *p, const oq_placement_report *r)
{
    if (!p) return NULL;
    json_t *nodes = json_array(), *eps = json_array();
    for (size_t i = 0; nodes && i < p->n_nodes; i++) {
        const oq_placed_node *n = &p->nodes[i];
        json_array_append_new(
            nodes, json_pack("{s:s, s:s, s:o, s:o, s:s, s:s, s:I, s:f, s:o*, s:o*}", "name", n->name,
                             "op", n->op_type, "ep_assigned", jstr_or_null(n->ep_assigned),
                             "ep_profiled", jstr_or_null(n->ep_profiled), "class",
                             oq_node_place_name(n->place), "reason", n->reason ? n->reason : "",
                             "runs", (json_int_t)n->runs, "us", n->us, "inputs",
                             tensors_json(n->inputs, n->n_inputs), "outputs",
                             tensors_json(n->outputs, n->n_outputs)));
        json_object_set_new(json_array_get(nodes, i), "types",
                            n->types_from_model ? json_string("model")
                            : n->n_inputs || n->n_outputs ? json_string("profile")
                                                          : json_null());
    }
    for (size_t i = 0; eps && i < p->n_eps; i++)
        json_array_append_new(eps, json_pack("{s:s, s:I, s:I, s:f}", "ep", p->eps[i].ep, "nodes",
                                             (json_int_t)p->eps[i].nodes, "runs",
                                             (json_int_t)p->eps[i].runs, "us", p->eps[i].us));
    json_t *j = json_pack("{s:{s:b, s:b}, s:o*, s:o*}", "sources", "assignment", p->have_assignment,
                          "profile", p->have_profile, "eps", eps, "nodes", nodes);
    if (j && r) {
        json_object_set_new(j, "passed", json_boolean(r->passed));
        json_object_set_new(j, "strict", json_boolean(r->strict));
        json_object_set_new(j, "counts",
                            json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "device", (json_int_t)r->n_device,
                                      "memcpy", (json_int_t)r->n_memcpy, "cpu_shape",
                                      (json_int_t)r->n_cpu_shape, "cpu_compute",
                                      (json_int_t)r->n_cpu_compute, "not_run", (json_int_t)r->n_not_run,
                                      "ep_mismatch", (json_int_t)r->n_mismatch));
        json_object_set_new(j, "failures", strv_json(r->failures, r->n_failures));
        json_object_set_new(j, "notes", strv_json(r->notes, r->n_notes));
    }
    return j;
}

/* ---- back from JSON ------------------------------------------------------------ */

static char *dup_or_null(const json_t *j) { return json_is_string(j) ? strdup(json_string_value(j)) : NULL; }

/* The string of `j` ("" when it is none). */
static const char *str_of(const json_t *j)
{
    const char *s = json_string_value(j);
    return s ? s : "";
}

static bool tensors_back(const json_t *a, oq_placed_tensor **out, size_t *n)
{
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *t = json_array_get(a, i), *shape = json_object_get(t, "shape");
        oq_placed_tensor *pt = OQ_PUSH(*out, *n);
        if (!pt || !oq_placement_set_str_(&pt->dtype, str_of(json_object_get(t, "dtype")))) return false;
        pt->ndim = (int32_t)json_array_size(shape);
        pt->dims = calloc(pt->ndim ? (size_t)pt->ndim : 1, sizeof *pt->dims);
        if (!pt->dims) return false;
        for (int32_t d = 0; d < pt->ndim; d++) pt->dims[d] = json_integer_value(json_array_get(shape, (size_t)d));
    }
    return true;
}

static bool node_back(oq_placement *p, const json_t *j)
{
    oq_placed_node *n = oq_placement_node_(p, str_of(json_object_get(j, "name")), str_of(json_object_get(j, "op")));
    if (!n) return false;
    const json_t *ea = json_object_get(j, "ep_assigned"), *ep = json_object_get(j, "ep_profiled");
    n->ep_assigned = dup_or_null(ea);
    n->ep_profiled = dup_or_null(ep);
    const char *cls = str_of(json_object_get(j, "class")), *why = str_of(json_object_get(j, "reason"));
    for (int k = OQ_PLACE_DEVICE; k <= OQ_PLACE_CPU_COMPUTE; k++)
        if (!strcmp(cls, oq_node_place_name((oq_node_place)k))) n->place = (oq_node_place)k;
    for (int k = 0; k < WHY_COUNT; k++)
        if (!strcmp(why, reasons[k])) n->reason = reasons[k];
    n->runs = (uint64_t)json_integer_value(json_object_get(j, "runs"));
    n->us = json_number_value(json_object_get(j, "us"));
    n->types_from_model = !strcmp(str_of(json_object_get(j, "types")), "model");
    return (!json_is_string(ea) || n->ep_assigned) && (!json_is_string(ep) || n->ep_profiled) &&
           tensors_back(json_object_get(j, "inputs"), &n->inputs, &n->n_inputs) &&
           tensors_back(json_object_get(j, "outputs"), &n->outputs, &n->n_outputs);
}

static bool strv_back(const json_t *a, char ***v, size_t *n)
{
    for (size_t i = 0; i < json_array_size(a); i++)
        if (oq_strv_push(v, n, str_of(json_array_get(a, i)))) return false;
    return true;
}

static bool eps_back(const json_t *a, oq_placement *p)
{
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *e = json_array_get(a, i);
        oq_ep_total *t = OQ_PUSH(p->eps, p->n_eps);
        if (!t || !(t->ep = strdup(str_of(json_object_get(e, "ep"))))) return false;
        t->nodes = (uint64_t)json_integer_value(json_object_get(e, "nodes"));
        t->runs = (uint64_t)json_integer_value(json_object_get(e, "runs"));
        t->us = json_number_value(json_object_get(e, "us"));
    }
    return true;
}

static void report_back(const json_t *j, oq_placement_report *r)
{
    const json_t *counts = json_object_get(j, "counts");
    r->passed = json_is_true(json_object_get(j, "passed"));
    r->strict = json_is_true(json_object_get(j, "strict"));
    r->n_device = (size_t)json_integer_value(json_object_get(counts, "device"));
    r->n_memcpy = (size_t)json_integer_value(json_object_get(counts, "memcpy"));
    r->n_cpu_shape = (size_t)json_integer_value(json_object_get(counts, "cpu_shape"));
    r->n_cpu_compute = (size_t)json_integer_value(json_object_get(counts, "cpu_compute"));
    r->n_not_run = (size_t)json_integer_value(json_object_get(counts, "not_run"));
    r->n_mismatch = (size_t)json_integer_value(json_object_get(counts, "ep_mismatch"));
}

oq_status oq_placement_from_json(const json_t *j, oq_placement **out, oq_placement_report *r, oq_err *err)
{
    *out = NULL;
    memset(r, 0, sizeof *r);
    const json_t *nodes = json_object_get(j, "nodes"), *sources = json_object_get(j, "sources");
    if (!json_is_array(nodes) || !json_is_array(json_object_get(j, "eps")))
        return oq_err_set(err, OQ_ERR_FORMAT, "placement: not a placement record");
    oq_placement *p;
    oq_status st = oq_placement_create(&p, err);
    if (st) return st;
    p->have_assignment = json_is_true(json_object_get(sources, "assignment"));
    p->have_profile = json_is_true(json_object_get(sources, "profile"));
    bool ok = true;
    for (size_t i = 0; ok && i < json_array_size(nodes); i++) ok = node_back(p, json_array_get(nodes, i));
    ok = ok && eps_back(json_object_get(j, "eps"), p);
    report_back(j, r);
    ok = ok && strv_back(json_object_get(j, "failures"), &r->failures, &r->n_failures) &&
         strv_back(json_object_get(j, "notes"), &r->notes, &r->n_notes);
    if (!ok) {
        oq_placement_free(p);
        oq_placement_report_clear(r);
        return oq_err_set(err, OQ_ERR_NOMEM, "placement: out of memory");
    }
    *out = p;
    return OQ_OK;
}
