/* Placement from ORT's profile: the "<node>_kernel_time" events. */
#include "placement/placement-impl.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "ortqual/fileio.h"
#include "status/args-impl.h"

#define KERNEL_SUFFIX "_kernel_time"

static oq_ep_total *ep_total(oq_placement *p, const char *ep)
{
    for (size_t i = 0; i < p->n_eps; i++)
        if (!strcmp(p->eps[i].ep, ep)) return &p->eps[i];
    oq_ep_total *t = OQ_PUSH(p->eps, p->n_eps);
    if (t && !(t->ep = strdup(ep))) {
        p->n_eps--;
        return NULL;
    }
    return t;
}

/* [{"float":[3,4]}, {"int64":[2]}] -> tensors. false only when out of memory
 * or malformed (then *bad is set). */
static bool parse_tensors(json_t *arr, oq_placed_tensor **out, size_t *n, bool *bad)
{
    *out = NULL;
    *n = 0;
    if (!arr) return true;
    if (!json_is_array(arr)) return !(*bad = true);
    size_t cnt = json_array_size(arr);
    if (cnt == 0) return true;
    oq_placed_tensor *t = calloc(cnt, sizeof *t);
    if (!t) return false;
    *out = t;
    for (size_t i = 0; i < cnt; i++) {
        json_t *obj = json_array_get(arr, i), *dims = NULL;
        const char *dtype = NULL;
        if (!json_is_object(obj) || json_object_size(obj) != 1) return !(*bad = true);
        json_object_foreach(obj, dtype, dims) break;
        if (!json_is_array(dims)) return !(*bad = true);
        (*n)++;
        if (!(t[i].dtype = strdup(dtype))) return false;
        t[i].ndim = (int32_t)json_array_size(dims);
        if (t[i].ndim && !(t[i].dims = malloc((size_t)t[i].ndim * sizeof *t[i].dims))) return false;
        for (int32_t d = 0; d < t[i].ndim; d++) {
            json_t *v = json_array_get(dims, (size_t)d);
            if (!json_is_integer(v)) return !(*bad = true);
            t[i].dims[d] = json_integer_value(v);
        }
    }
    return true;
}

static oq_status add_event(oq_placement *p, json_t *ev, size_t idx, const char *what, oq_err *err)
{
    const char *cat = json_string_value(json_object_get(ev, "cat"));
    const char *name = json_string_value(json_object_get(ev, "name"));
    if (!cat || strcmp(cat, "Node") || !name) return OQ_OK;
    size_t len = strlen(name), sl = strlen(KERNEL_SUFFIX);
    if (len <= sl || strcmp(name + len - sl, KERNEL_SUFFIX)) return OQ_OK; /* fence events etc. */
    json_t *args = json_object_get(ev, "args");
    const char *op = json_string_value(json_object_get(args, "op_name"));
    const char *ep = json_string_value(json_object_get(args, "provider"));
    if (!op || !ep)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: event %zu (%s) has no args.%s", what, idx, name,
                          !op ? "op_name" : "provider");
    char *node = strndup(name, len - sl);
    if (!node) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", what);
    oq_placed_node *n = oq_placement_node_(p, node, op);
    free(node);
    oq_ep_total *t = n ? ep_total(p, ep) : NULL;
    if (!t) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", what);
    if (!n->ep_profiled) {
        if (!oq_placement_set_str_(&n->ep_profiled, ep)) return oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", what);
        t->nodes++;
        bool bad = false;
        if (!parse_tensors(json_object_get(args, "input_type_shape"), &n->inputs, &n->n_inputs, &bad) ||
            !parse_tensors(json_object_get(args, "output_type_shape"), &n->outputs, &n->n_outputs, &bad))
            return bad ? oq_err_set(err, OQ_ERR_FORMAT, "%s: event %zu (%s): malformed %s", what, idx,
                                    name, "input_type_shape/output_type_shape")
                       : oq_err_set(err, OQ_ERR_NOMEM, "%s: out of memory", what);
    } else if (strcmp(n->ep_profiled, ep)) {
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: event %zu: node %s ran on %s and on %s", what, idx,
                          n->name, n->ep_profiled, ep);
    }
    double dur = json_number_value(json_object_get(ev, "dur"));
    n->runs++;
    n->us += dur;
    t->runs++;
    t->us += dur;
    return OQ_OK;
}

oq_status oq_placement_add_profile_text(oq_placement *p, const char *text, size_t len,
                                        const char *what, oq_err *err)
{
    OQ_NEED(err, p);
    OQ_NEED_N(err, len, text);
    if (!what) what = "profile";
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    if (!root)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: not JSON (line %d: %s)", what, je.line, je.text);
    json_t *events = json_is_object(root) ? json_object_get(root, "traceEvents") : root;
    oq_status st = OQ_OK;
    if (!json_is_array(events)) {
        st = oq_err_set(err, OQ_ERR_FORMAT, "%s: not an ORT profile (expected an array of events)", what);
    } else {
        for (size_t i = 0; st == OQ_OK && i < json_array_size(events); i++)
            st = add_event(p, json_array_get(events, i), i, what, err);
    }
    if (st == OQ_OK) p->have_profile = true;
    json_decref(root);
    return st;
}

oq_status oq_placement_add_profile(oq_placement *p, const char *path, oq_err *err)
{
    OQ_NEED(err, p);
    OQ_NEED(err, path);
    unsigned char *buf;
    size_t n;
    oq_status st = oq_read_file(path, &buf, &n, err);
    if (st != OQ_OK) return st;
    st = oq_placement_add_profile_text(p, (const char *)buf, n, path, err);
    free(buf);
    return st;
}
