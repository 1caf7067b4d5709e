/* Conformance runner for ONNX backend node tests: see include/ortqual/conformance.h. */
#include "ortqual/conformance.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/core-impl.h"
#include "inspect/model-impl.h"
#include "onnx.pb-c.h"
#include "ortqual/compare.h"
#include "ortqual/fileio.h"
#include "ortqual/reference.h"
#include "ortqual/tensorproto.h"
#include "status/args-impl.h"
#include "status/terms-impl.h"

#define MAX_IO 16
#define DEFAULT_RTOL 1e-3
#define DEFAULT_ATOL 1e-7 /* ONNX's backend tests' */

void oq_conformance_opts_default(oq_conformance_opts *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->rtol = DEFAULT_RTOL;
    o->atol = DEFAULT_ATOL;
}

static int has_model(const char *dir)
{
    char path[4096];
    struct stat sb;
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void oq_conformance_list_free(char **tests)
{
    if (!tests) return;
    for (size_t i = 0; tests[i]; i++) free(tests[i]);
    free(tests);
}

/* Sorted, NULL-terminated subdirectory paths of `dir` whose name starts with `prefix`
 * (hidden ones left out). */
static oq_status list_subdirs(const char *dir, const char *prefix, char ***out, size_t *n, oq_err *err)
{
    DIR *d = opendir(dir);
    if (!d) return oq_err_set(err, OQ_ERR_IO, "%s: cannot open directory", dir);
    char **v = NULL;
    size_t cnt = 0;
    struct dirent *e;
    oq_status st = OQ_OK;
    while (!st && (e = readdir(d))) {
        if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, strlen(prefix))) continue;
        char *p;
        struct stat sb;
        if (asprintf(&p, "%s/%s", dir, e->d_name) < 0) {
            st = OQ_ERR_NOMEM;
            break;
        }
        if (!stat(p, &sb) && S_ISDIR(sb.st_mode)) st = oq_strv_push(&v, &cnt, p);
        free(p);
    }
    closedir(d);
    if (!st && !OQ_PUSH(v, cnt)) st = OQ_ERR_NOMEM; /* the NULL that ends the list */
    if (st) {
        for (size_t i = 0; i < cnt; i++) free(v[i]);
        free(v);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory listing %s", dir);
    }
    *n = --cnt;
    qsort(v, cnt, sizeof *v, cmp_str);
    *out = v;
    return OQ_OK;
}

/* A directory of tests holds tests only, as ONNX's loader reads one (every subdirectory is a
 * test): one without model.onnx (its model gone, a tree one level too high, one of ONNX's
 * downloaded "real" tests) was left out, and the run passed without it. */
static oq_status only_tests(const char *dir, char **subdirs, size_t n, oq_err *err)
{
    for (size_t i = 0; i < n; i++)
        if (!has_model(subdirs[i]))
            return oq_err_set(err, OQ_ERR_NOT_FOUND,
                              "%s: not a test (no model.onnx); every directory in %s must be one", subdirs[i], dir);
    return OQ_OK;
}

oq_status oq_conformance_list(const char *dir, char ***tests, size_t *n, oq_err *err)
{
    OQ_NEED(err, dir);
    OQ_NEED(err, tests);
    OQ_NEED(err, n);
    if (has_model(dir)) {
        char **v = calloc(2, sizeof *v);
        if (!v || !(v[0] = strdup(dir))) {
            free(v);
            return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        }
        *tests = v;
        *n = 1;
        return OQ_OK;
    }
    struct stat sb;
    if (stat(dir, &sb)) return oq_err_set(err, OQ_ERR_NOT_FOUND, "%s: no such directory", dir);
    if (!S_ISDIR(sb.st_mode)) return oq_err_set(err, OQ_ERR_NOT_FOUND, "%s: not a directory", dir);
    oq_status st = list_subdirs(dir, "", tests, n, err);
    if (st) return st;
    if (*n == 0)
        st = oq_err_set(err, OQ_ERR_NOT_FOUND, "%s: no model.onnx in it nor in any directory directly under it", dir);
    if (!st) st = only_tests(dir, *tests, *n, err);
    if (st) {
        oq_conformance_list_free(*tests);
        *tests = NULL;
    }
    return st;
}

/* ---- results ---------------------------------------------------------------------- */

static void verdict(oq_conformance_result *r, oq_conformance_verdict v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void verdict(oq_conformance_result *r, oq_conformance_verdict v, const char *fmt, ...)
{
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    r->verdict = v;
    /* in the caller's words (oq_set_terms), a test's folder and file names as they are */
    char *said = oq_terms_vformat(fmt, ap);
    if (said) snprintf(r->detail, sizeof r->detail, "%s", said);
    else vsnprintf(r->detail, sizeof r->detail, fmt, again); /* out of memory: the library's words */
    free(said);
    va_end(again);
    va_end(ap);
}

/* The digits, 3 or more, at which d reads above its bound when it is above it (at 3 both were
 * 0.000977 for |diff| 0.0009765625 against 0.0009765624). */
static int digits_apart(double d, double bound)
{
    char a[32], b[32];
    int p = 3;
    for (; p < 17 && d > bound; p++) {
        snprintf(a, sizeof a, "%.*g", p, d);
        snprintf(b, sizeof b, "%.*g", p, bound);
        if (strtod(a, NULL) > strtod(b, NULL)) break;
    }
    return p;
}

/* allclose with the worst element: returns 1 when every element passes. *compared counts the
 * elements that held a value to compare (not NaN in both). */
static int compare_output(const oq_tensor *got, const oq_tensor *exp, double rtol, double atol,
                          int index, const char *name, int64_t *compared, oq_conformance_result *r)
{
    char gs[128], es[128];
    if (got->dtype != exp->dtype) {
        verdict(r, OQ_CONFORMANCE_FAIL, "output %d (%s) has dtype %s, expected %s", index, name,
                oq_dtype_name(got->dtype), oq_dtype_name(exp->dtype));
        return 0;
    }
    if (got->ndim != exp->ndim ||
        memcmp(got->shape, exp->shape, (size_t)got->ndim * sizeof got->shape[0])) {
        oq_shape_str(got, gs, sizeof gs);
        oq_shape_str(exp, es, sizeof es);
        verdict(r, OQ_CONFORMANCE_FAIL, "output %d (%s) has shape %s, expected %s", index, name,
                gs, es);
        return 0;
    }
    const int64_t n = oq_tensor_numel(exp);
    int64_t worst = -1;
    double worst_score = 0.0;
    oq_compare_result judged = {.passed = 1, .exact = !oq_dtype_is_float(exp->dtype), .tol = {rtol, atol}};
    for (int64_t i = 0; i < n; i++) {
        double g = oq_tensor_get_f64(got, i), e = oq_tensor_get_f64(exp, i);
        double score;
        *compared += !(isnan(e) && isnan(g));
        judged.num_valid++;
        if (isfinite(e) && fabs(e) > judged.max_abs_ref) judged.max_abs_ref = fabs(e);
        if (isfinite(g - e) && fabs(g - e) > judged.max_abs) judged.max_abs = fabs(g - e);
        if (isnan(e) || isnan(g))
            score = isnan(e) && isnan(g) ? 0.0 : INFINITY;
        else if (g == e)
            score = 0.0; /* equal infinities included */
        else
            score = fabs(g - e) / (atol + rtol * fabs(e));
        if (!(score <= 1.0) && (worst < 0 || score > worst_score)) {
            worst = i;
            worst_score = score;
        }
    }
    if (worst < 0) {
        /* validate's rule (compare.h): an atol at or above every value compared passes zeros too */
        char why[200];
        if (!oq_compare_judge_vacuous(&judged, (oq_tolerance){DEFAULT_RTOL, DEFAULT_ATOL})) return 1;
        verdict(r, OQ_CONFORMANCE_FAIL, "output %d (%s): %s", index, name,
                oq_compare_vacuous_str(&judged, why, sizeof why));
        return 0;
    }
    r->output = index;
    snprintf(r->output_name, sizeof r->output_name, "%s", name);
    r->ndim = exp->ndim;
    int64_t rest = worst;
    for (int32_t ax = exp->ndim - 1; ax >= 0; ax--) {
        r->coord[ax] = exp->shape[ax] ? rest % exp->shape[ax] : 0;
        rest = exp->shape[ax] ? rest / exp->shape[ax] : 0;
    }
    r->got = oq_tensor_get_f64(got, worst);
    r->expected = oq_tensor_get_f64(exp, worst);
    r->abs_diff = fabs(r->got - r->expected);
    oq_dims_str(r->coord, r->ndim, gs, sizeof gs);
    double bound = atol + rtol * fabs(r->expected);
    int p = digits_apart(r->abs_diff, bound);
    verdict(r, OQ_CONFORMANCE_FAIL,
            "output %d (%s) worst element %s got %.9g expected %.9g (|diff| %.*g, tolerance %.*g)",
            index, name, gs, r->got, r->expected, p, r->abs_diff, p, bound);
    return 0;
}

/* ---- the model -------------------------------------------------------------------- */

static const Onnx__NodeProto *single_attention_node(const Onnx__ModelProto *m)
{
    const Onnx__GraphProto *g = m->graph;
    if (!g || g->n_node != 1) return NULL;
    const Onnx__NodeProto *n = g->node[0];
    int std_domain = !n->domain || !n->domain[0] || !strcmp(n->domain, "ai.onnx");
    return std_domain && n->op_type && !strcmp(n->op_type, "Attention") ? n : NULL;
}

/* The ai.onnx opset the model imports, or -1 when it imports none. */
static int64_t onnx_opset(const Onnx__ModelProto *m)
{
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const char *d = m->opset_import[i]->domain;
        if (!d || !d[0] || !strcmp(d, "ai.onnx")) return m->opset_import[i]->version;
    }
    return -1;
}

static oq_status node_attrs(const Onnx__NodeProto *n, oq_ref_attention_attrs *a, char *why,
                            size_t why_n)
{
    oq_ref_attention_attrs_default(a);
    for (size_t i = 0; i < n->n_attribute; i++) {
        const Onnx__AttributeProto *at = n->attribute[i];
        const char *nm = at->name ? at->name : "";
        if (!strcmp(nm, "is_causal")) a->is_causal = (int)at->i;
        else if (!strcmp(nm, "q_num_heads")) a->q_num_heads = at->i;
        else if (!strcmp(nm, "kv_num_heads")) a->kv_num_heads = at->i;
        else if (!strcmp(nm, "qk_matmul_output_mode")) a->qk_matmul_output_mode = (int)at->i;
        else if (!strcmp(nm, "softmax_precision")) a->softmax_precision = at->i;
        else if (!strcmp(nm, "scale")) a->scale = at->f;
        else if (!strcmp(nm, "softcap")) a->softcap = at->f;
        else {
            snprintf(why, why_n, "unknown Attention attribute '%s'", nm);
            return OQ_ERR_UNSUPPORTED;
        }
    }
    return OQ_OK;
}

static int is_initializer(const Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; i < g->n_initializer; i++)
        if (g->initializer[i]->name && !strcmp(g->initializer[i]->name, name)) return 1;
    return 0;
}

/* ---- one test data set ------------------------------------------------------------ */

typedef struct io_set {
    size_t n;
    const char *names[MAX_IO];
    int slot[MAX_IO];      /* node slot (reference mode) */
    oq_tensor *t[MAX_IO];
} io_set;

static void io_clear(io_set *s)
{
    for (size_t i = 0; i < s->n; i++) oq_tensor_free(s->t[i]);
    memset(s->t, 0, sizeof s->t);
}

/* Reads <set>/<kind>_N.pb for N < s->n; on failure sets the verdict. */
static int read_pbs(const char *set_dir, const char *kind, io_set *s, oq_conformance_result *r)
{
    for (size_t i = 0; i < s->n; i++) {
        char path[4096];
        oq_err e = {0};
        snprintf(path, sizeof path, "%s/%s_%zu.pb", set_dir, kind, i);
        if (oq_tensorproto_read(path, &s->t[i], &e)) {
            verdict(r, OQ_CONFORMANCE_FAIL, "%s", e.msg);
            return 0;
        }
    }
    /* One more file than the model has inputs or outputs: the data set was made for
     * another model (ONNX's runner fails it too); reading only the first would pass it. */
    char path[4096];
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s_%zu.pb", set_dir, kind, s->n);
    if (stat(path, &sb) == 0) {
        verdict(r, OQ_CONFORMANCE_FAIL, "%s: the model has %zu %s%s, the data set more", path, s->n, kind,
                s->n == 1 ? "" : "s");
        return 0;
    }
    return 1;
}

/* The node as the model's opset defines it: Attention-23 and -24 differ in what they accept. */
static oq_status run_reference(const Onnx__ModelProto *m, const Onnx__NodeProto *node,
                               const io_set *in, io_set *out, oq_err *err)
{
    oq_ref_attention_attrs a;
    char why[256] = "";
    if (node_attrs(node, &a, why, sizeof why))
        return oq_err_set(err, OQ_ERR_UNSUPPORTED, "%s", why);
    if ((a.opset = onnx_opset(m)) < 0)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "invalid model: it imports no ai.onnx opset, so its Attention node is no "
                          "operator");
    const oq_tensor *slot[7] = {0};
    for (size_t i = 0; i < in->n; i++) {
        if (in->slot[i] >= 7)
            return oq_err_set(err, OQ_ERR_SHAPE, "Attention has at most 7 inputs, node has %d",
                              in->slot[i] + 1);
        slot[in->slot[i]] = in->t[i];
    }
    oq_ref_attention_inputs ri = {slot[0], slot[1], slot[2], slot[3], slot[4], slot[5], slot[6]};
    oq_ref_attention_outputs ro = {0};
    for (size_t i = 0; i < out->n; i++) {
        if (out->slot[i] == 1 || out->slot[i] == 2) ro.want_present = 1;
        if (out->slot[i] == 3) ro.want_qk_matmul_output = 1;
        if (out->slot[i] > 3)
            return oq_err_set(err, OQ_ERR_SHAPE, "Attention has at most 4 outputs, node has %d",
                              out->slot[i] + 1);
    }
    oq_status st = oq_ref_attention(&a, &ri, 0, &ro, err);
    if (st) return st;
    oq_tensor *by_slot[4] = {ro.y, ro.present_key, ro.present_value, ro.qk_matmul_output};
    for (size_t i = 0; i < out->n; i++) {
        out->t[i] = by_slot[out->slot[i]];
        by_slot[out->slot[i]] = NULL;
    }
    for (int k = 0; k < 4; k++) oq_tensor_free(by_slot[k]);
    return OQ_OK;
}

/* Inputs and outputs to feed and check: the node's non-empty slots for the
 * reference, the graph's (non-initializer) inputs and outputs for a runner. */
static int plan_io(const Onnx__ModelProto *m, const Onnx__NodeProto *node, io_set *in,
                   io_set *out, oq_conformance_result *r)
{
    memset(in, 0, sizeof *in);
    memset(out, 0, sizeof *out);
    if (node) {
        for (size_t i = 0; i < node->n_input; i++)
            if (node->input[i][0] && in->n < MAX_IO) {
                in->slot[in->n] = (int)i;
                in->names[in->n++] = node->input[i];
            }
        for (size_t i = 0; i < node->n_output; i++)
            if (node->output[i][0] && out->n < MAX_IO) {
                out->slot[out->n] = (int)i;
                out->names[out->n++] = node->output[i];
            }
    } else {
        const Onnx__GraphProto *g = m->graph;
        for (size_t i = 0; i < g->n_input + g->n_output; i++) {
            const Onnx__ValueInfoProto *vi = i < g->n_input ? g->input[i] : g->output[i - g->n_input];
            if (vi->name && vi->name[0]) continue;
            verdict(r, OQ_CONFORMANCE_FAIL, "graph %s %zu has no name",
                    i < g->n_input ? "input" : "output", i < g->n_input ? i : i - g->n_input);
            return 0;
        }
        for (size_t i = 0; i < g->n_input && in->n < MAX_IO; i++)
            if (!is_initializer(g, g->input[i]->name)) in->names[in->n++] = g->input[i]->name;
        for (size_t i = 0; i < g->n_output && out->n < MAX_IO; i++)
            out->names[out->n++] = g->output[i]->name;
    }
    if (in->n == MAX_IO || out->n == MAX_IO) {
        verdict(r, OQ_CONFORMANCE_FAIL, "more than %d inputs or outputs", MAX_IO - 1);
        return 0;
    }
    return 1;
}

static int run_set(const char *model_path, const Onnx__ModelProto *m, const Onnx__NodeProto *node,
                   const char *set_dir, const oq_conformance_opts *o, int64_t *compared,
                   oq_conformance_result *r)
{
    io_set in, exp, got;
    if (!plan_io(m, node, &in, &exp, r)) return 0;
    got = exp;
    memset(got.t, 0, sizeof got.t);
    int ok = read_pbs(set_dir, "input", &in, r) && read_pbs(set_dir, "output", &exp, r);
    if (ok) {
        oq_err e = {0};
        oq_status st = o->runner ? o->runner(o->runner_ctx, model_path, in.names,
                                             (const oq_tensor *const *)in.t, in.n, exp.names,
                                             exp.n, got.t, &e)
                                 : run_reference(m, node, &in, &got, &e);
        if (st) {
            verdict(r, st == OQ_ERR_UNSUPPORTED ? OQ_CONFORMANCE_UNSUPPORTED : OQ_CONFORMANCE_FAIL,
                    "%s", e.msg);
            ok = 0;
        }
        for (size_t i = 0; ok && i < exp.n; i++) {
            if (!got.t[i]) {
                verdict(r, OQ_CONFORMANCE_FAIL, "output %zu (%s) was not produced", i,
                        exp.names[i]);
                ok = 0;
            } else {
                ok = compare_output(got.t[i], exp.t[i], o->rtol, o->atol, (int)i, exp.names[i],
                                    compared, r);
            }
        }
    }
    io_clear(&in);
    io_clear(&exp);
    io_clear(&got);
    return ok;
}

static void judge(const char *test_dir, const Onnx__ModelProto *m, const char *model_path,
                  const oq_conformance_opts *o, oq_conformance_result *r)
{
    if (!m->graph) {
        verdict(r, OQ_CONFORMANCE_FAIL, "model.onnx has no graph");
        return;
    }
    const Onnx__NodeProto *node = single_attention_node(m);
    if (!o->runner && !node) {
        size_t len = strlen(r->name);
        if (len > 9 && !strcmp(r->name + len - 9, "_expanded"))
            verdict(r, OQ_CONFORMANCE_SKIP,
                    "function body of standard ops: not applicable to the operator reference; "
                    "runs with opts.runner");
        else
            verdict(r, OQ_CONFORMANCE_SKIP,
                    "the graph is not a single Attention node: not applicable to the operator "
                    "reference; runs with opts.runner");
        return;
    }
    char **sets = NULL;
    size_t nsets = 0;
    oq_err e = {0};
    if (list_subdirs(test_dir, "test_data_set_", &sets, &nsets, &e)) {
        verdict(r, OQ_CONFORMANCE_FAIL, "%s", e.msg);
        return;
    }
    if (nsets == 0) verdict(r, OQ_CONFORMANCE_FAIL, "%s: no test_data_set_* directory", test_dir);
    int64_t compared = 0;
    for (size_t s = 0; s < nsets; s++) {
        if (!run_set(model_path, m, node, sets[s], o, &compared, r)) {
            if (nsets > 1) {
                const char *base = strrchr(sets[s], '/');
                char tail[OQ_ERR_MSG_MAX];
                memcpy(tail, r->detail, sizeof tail);
                snprintf(r->detail, sizeof r->detail, "%.60s: %.900s", base ? base + 1 : sets[s],
                         tail);
            }
            break;
        }
    }
    /* Outputs of no element, or NaN in both everywhere, agree whatever ran: a PASS would say
     * the runner was checked when nothing was (docs/verdicts.md). */
    if (nsets && r->verdict == OQ_CONFORMANCE_PASS && !compared)
        verdict(r, OQ_CONFORMANCE_SKIP, "nothing to compare: every output is empty, or NaN both in the "
                                        "expected values and in the result");
    oq_conformance_list_free(sets);
}

void oq_conformance_result_init(oq_conformance_result *res, const char *test_dir)
{
    if (!res) return;
    memset(res, 0, sizeof *res);
    res->output = -1;
    if (!test_dir) return;
    size_t len = strlen(test_dir);
    while (len > 1 && test_dir[len - 1] == '/') len--;
    const char *base = test_dir + len;
    while (base > test_dir && base[-1] != '/') base--;
    snprintf(res->name, sizeof res->name, "%.*s", (int)(test_dir + len - base), base);
}

oq_status oq_conformance_run_test(const char *test_dir, const oq_conformance_opts *opts,
                                  oq_conformance_result *res, oq_err *err)
{
    OQ_NEED(err, test_dir);
    OQ_NEED(err, opts);
    OQ_NEED(err, res);
    oq_conformance_result_init(res, test_dir);

    size_t len = strlen(test_dir);
    while (len > 1 && test_dir[len - 1] == '/') len--;
    char model_path[4096];
    snprintf(model_path, sizeof model_path, "%.*s/model.onnx", (int)len, test_dir);
    unsigned char *buf = NULL;
    size_t n = 0;
    oq_err e = {0};
    if (oq_read_file(model_path, &buf, &n, &e)) {
        verdict(res, OQ_CONFORMANCE_FAIL, "%s", e.msg);
        return OQ_OK;
    }
    Onnx__ModelProto *m;
    oq_status bad = oq_model_unpack_checked(buf, n, model_path, OQ_UNPACK_WHOLE, &m, &e);
    free(buf);
    if (bad) {
        verdict(res, OQ_CONFORMANCE_FAIL, "%s", e.msg);
        return OQ_OK;
    }
    judge(test_dir, m, model_path, opts, res);
    onnx__model_proto__free_unpacked(m, NULL);
    if (res->verdict == OQ_CONFORMANCE_PASS) res->detail[0] = '\0';
    return OQ_OK;
}
