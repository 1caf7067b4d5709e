/* Helpers shared by the unit tests (a header, so the test glob does not build it alone).
 * Include after <cmocka.h>. For the shared ORT runtime fixture, define
 * TESTUTIL_RUNTIME_FIXTURE before including: it declares `rt` and group_setup/teardown;
 * TESTUTIL_GRAPH and TESTUTIL_VALIDATE add model and validation helpers; TESTUTIL_CHECK_MODEL
 * validate's input check and inspect's warnings of a model file; TESTUTIL_CHECK_BATCH validate's
 * check of one batch of a model's inputs. */
#ifndef ORTQUAL_TESTS_TESTUTIL_H
#define ORTQUAL_TESTS_TESTUTIL_H

#include <dirent.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A fresh private directory /tmp/oq_test_<tag>_XXXXXX; the caller frees the name
 * (remove_dir does). */
static inline char *temp_dir(const char *tag)
{
    char tmpl[256];
    snprintf(tmpl, sizeof tmpl, "/tmp/oq_test_%s_XXXXXX", tag);
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    return strdup(d);
}

/* dir/name, malloc'ed. */
static inline char *path_in(const char *dir, const char *name)
{
    char *p = NULL;
    assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
    return p;
}

/* Entries in `dir` other than dot files. */
static inline int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Removes a flat directory made by temp_dir and frees its name. */
static inline void remove_dir(char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char p[512];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
    free(dir);
}

/* Whether fd has something to read (or its writers are gone) within ms milliseconds. */
static inline int fd_readable(int fd, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, ms) == 1;
}

/* A run held at its first progress line (its folder's lock taken) until the test says: open
 * the pipes (run_hold_open), set the run's progress to hold_first_line and its progress_ctx to
 * the struct run_hold; run_hold_wait waits for the line, a byte written to go[1] lets the run go
 * on. Each wait is bounded by RUN_HOLD_MS, so a run that never gets there, or a test that never
 * says, fails the test instead of hanging it. */
#define RUN_HOLD_MS 30000

struct run_hold {
    int ready[2], go[2];
};

static inline void run_hold_open(struct run_hold *h)
{
    assert_int_equal(pipe(h->ready), 0);
    assert_int_equal(pipe(h->go), 0);
}

/* Whether the run reached its first line within RUN_HOLD_MS. */
static inline int run_hold_wait(struct run_hold *h)
{
    char c;
    return fd_readable(h->ready[0], RUN_HOLD_MS) && read(h->ready[0], &c, 1) == 1;
}

/* Closes the ends still open (-1: closed). */
static inline void run_hold_close(struct run_hold *h)
{
    int *fd[] = {&h->ready[0], &h->ready[1], &h->go[0], &h->go[1]};
    for (size_t i = 0; i < sizeof fd / sizeof *fd; i++)
        if (*fd[i] >= 0) close(*fd[i]), *fd[i] = -1;
}

/* The progress callback: the run's process ends (status 3) when the test does not say in time. */
static inline void hold_first_line(void *ctx, const char *line)
{
    (void)line;
    struct run_hold *h = ctx;
    char c = 0;
    if (h->ready[1] < 0) return;
    if (write(h->ready[1], "r", 1) != 1 || !fd_readable(h->go[0], RUN_HOLD_MS) || read(h->go[0], &c, 1) != 1) {
        fprintf(stderr, "hold_first_line: no go within %d ms\n", RUN_HOLD_MS);
        _exit(3);
    }
    close(h->ready[1]);
    h->ready[1] = -1;
}

#ifdef TESTUTIL_RUNTIME_FIXTURE
#include "ortqual/runtime.h"

/* One ORT runtime for the whole group, loaded by group_setup. */
static oq_runtime *rt;

static int group_setup(void **state)
{
    (void)state;
    oq_err err = {0};
    if (oq_runtime_load(OQ_ORT_LIB, &rt, &err) != OQ_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    oq_runtime_free(rt);
    return 0;
}
#endif

#ifdef TESTUTIL_GRAPH
#include "ortqual/graph.h"

/* An Attention-24 model whose sizes are all names, q, k, v [batch,2,seq,4] and a float mask m
 * [batch,1,seq,mlen], written to path: ORT refuses it when fed a mask longer than the keys. */
static inline void write_symbolic_attention24(const char *path)
{
    oq_opset ops[] = {{"", 24}};
    oq_graph *g;
    assert_int_equal(oq_graph_create(ops, 1, "g", &g, NULL), OQ_OK);
    const oq_dim qd[] = {OQ_DIM_SYM("batch"), OQ_DIM(2), OQ_DIM_SYM("seq"), OQ_DIM(4)},
                 md[] = {OQ_DIM_SYM("batch"), OQ_DIM(1), OQ_DIM_SYM("seq"), OQ_DIM_SYM("mlen")};
    const char *in[] = {"q", "k", "v", "m"}, *out[] = {"y"};
    for (int i = 0; i < 3; i++) oq_graph_add_input(g, in[i], OQ_DTYPE_FLOAT32, 4, qd);
    oq_graph_add_input(g, "m", OQ_DTYPE_FLOAT32, 4, md);
    oq_graph_add_node(g, "Attention", NULL, "attn0", 4, in, 1, out, 0, NULL);
    oq_graph_add_output(g, "y", "y", OQ_DTYPE_FLOAT32, 4, qd);
    assert_int_equal(oq_graph_write(g, path, 1, NULL), OQ_OK);
    oq_graph_free(g);
}
/* A [rows, cols] float32 initializer of zeros named `name` in g: the data a Gather indexes. */
static inline const char *zeros_initializer(oq_graph *g, const char *name, int64_t rows, int64_t cols)
{
    const int64_t shape[] = {rows, cols};
    oq_tensor *t;
    assert_int_equal(oq_tensor_create(&t, OQ_DTYPE_FLOAT32, 2, shape, name, NULL), OQ_OK);
    const char *v = oq_graph_add_initializer(g, t, NULL);
    oq_tensor_free(t);
    return v;
}

/* An int64 initializer `name` of `shape` holding vals, added to g; its name in g. */
static inline const char *ints(oq_graph *g, const char *name, int32_t rank, const int64_t *shape, const int64_t *vals)
{
    oq_tensor *t;
    assert_int_equal(oq_tensor_create(&t, OQ_DTYPE_INT64, rank, shape, name, NULL), OQ_OK);
    memcpy(t->data, vals, (size_t)oq_tensor_numel(t) * sizeof *vals);
    const char *v = oq_graph_add_initializer(g, t, NULL);
    oq_tensor_free(t);
    return v;
}
#endif

#ifdef TESTUTIL_VALIDATE
#include "ortqual/validate.h"
#include "validate/validate-impl.h" /* oq_remove_tree */

/* A validation of the demo encoder: the reference and cpu:attention24:fp32 (cfg holds them),
 * one call a batch, no plots, into outdir. */
static inline void validate_two_configs(oq_validate_opts *o, oq_config cfg[2], const char *outdir)
{
    oq_config_parse("ref:encoder:fp64", &cfg[0], NULL);
    oq_config_parse("cpu:attention24:fp32", &cfg[1], NULL);
    oq_validate_opts_default(o);
    o->configs = cfg;
    o->n_configs = 2;
    o->repeat = 1;
    o->warmup = 0;
    o->plots = 0;
    o->ort_lib = OQ_ORT_LIB;
    o->outdir = outdir;
}

/* A user's model against the outputs its batch files hold: "expected" and cpu:model:fp32 (cfg),
 * the batches of `files` (NULL, 0: none given), in this process, into outdir. */
static inline void validate_user_expected(oq_validate_opts *o, oq_config cfg[2], const char *model,
                                          const char **files, size_t n_files, const char *outdir)
{
    validate_two_configs(o, cfg, outdir);
    oq_config_parse("expected", &cfg[0], NULL);
    oq_config_parse("cpu:model:fp32", &cfg[1], NULL);
    o->kind = OQ_MODEL_USER;
    o->model_path = model;
    o->input_files = files;
    o->n_input_files = n_files;
    o->isolate = 0;
}

/* validate_two_configs at its smallest: one batch of 4 events of at most 8 tokens, one thread,
 * the workers isolated (forked, or re-executed where this process cannot fork them). */
static inline void validate_tiny(oq_validate_opts *o, oq_config cfg[2], const char *outdir)
{
    validate_two_configs(o, cfg, outdir);
    o->threads = 1;
    o->events.num_events = 4;
    o->events.batch_size = 4;
    o->events.max_len = 8;
}

/* A tiny run's parts: a fresh folder (temp_dir(tag)), the run's outdir in it ("out", not made),
 * its options and configurations (validate_tiny). The options point into the struct: never
 * copied. tiny_run_remove removes the folder. */
struct tiny_run {
    char *dir, outdir[512];
    oq_config cfg[2];
    oq_validate_opts o;
};

static inline void tiny_run_init(struct tiny_run *r, const char *tag)
{
    r->dir = temp_dir(tag);
    snprintf(r->outdir, sizeof r->outdir, "%s/out", r->dir);
    validate_tiny(&r->o, r->cfg, r->outdir);
}

static inline void tiny_run_remove(struct tiny_run *r)
{
    oq_remove_tree(r->dir);
    free(r->dir);
}

/* validate_tiny with the workers in this process. */
static inline void validate_tiny_in_process(oq_validate_opts *o, oq_config cfg[2], const char *outdir)
{
    validate_tiny(o, cfg, outdir);
    o->isolate = 0;
}

/* A tiny run into outdir held at its first progress line (its folder's lock taken) by h, as
 * hold_first_line says: whether it passed, its status in *st. */
static inline int validate_tiny_held(const char *outdir, struct run_hold *h, oq_status *st)
{
    oq_config cfg[2];
    oq_validate_opts o;
    validate_tiny_in_process(&o, cfg, outdir);
    o.progress = hold_first_line;
    o.progress_ctx = h;
    oq_validate_summary *s = NULL;
    *st = oq_validate_run(&o, &s, NULL);
    int passed = !*st && s->verdict == OQ_RUN_PASSED;
    oq_validate_summary_free(s);
    return passed;
}

/* A second tiny run into outdir, over what is there: refused as a folder in use, not as a full
 * one, while validate_tiny_held's run holds it. */
static inline oq_status validate_tiny_again(const char *outdir, oq_validate_summary **s, oq_err *err)
{
    oq_config cfg[2];
    oq_validate_opts o;
    validate_tiny_in_process(&o, cfg, outdir);
    o.overwrite = 1;
    return oq_validate_run(&o, s, err);
}
#endif

#ifdef TESTUTIL_CHECK_MODEL
#include "ortqual/inspect.h"
#include "ortqual/validate.h"

/* validate's input check of `model`: its status, the message in msg; inspect's warnings,
 * each followed by '|', in notes. */
static inline oq_status check_model_file(const char *model, char *msg, size_t cap, char *notes, size_t ncap)
{
    oq_err err = {0};
    oq_status st = oq_validate_check_inputs(model, NULL, NULL, NULL, 0, NULL, &err);
    snprintf(msg, cap, "%s", st ? err.msg : "");
    oq_model_info *mi;
    assert_int_equal(oq_model_inspect_file(model, &mi, NULL), OQ_OK);
    size_t k = (size_t)snprintf(notes, ncap, "%s", "");
    for (size_t i = 0; i < mi->n_warnings && k < ncap; i++)
        k += (size_t)snprintf(notes + k, ncap - k, "%s|", mi->warnings[i]);
    oq_model_info_free(mi);
    return st;
}

static inline void expect(const char *got, const char *want)
{
    if (!strstr(got, want)) fail_msg("'%s' lacks '%s'", got, want);
}
#endif

#ifdef TESTUTIL_CHECK_BATCH
#include "ortqual/validate.h"

/* validate's input check of `model` and the one batch `npz`: its status, the message in msg
 * ("" where it passed). */
static inline oq_status check_batch_file(const char *model, const char *npz, char *msg, size_t cap)
{
    const char *paths[] = {npz};
    oq_err err = {0};
    oq_status st = oq_validate_check_inputs(model, NULL, paths, NULL, 1, NULL, &err);
    snprintf(msg, cap, "%s", st ? err.msg : "");
    return st;
}

/* The check's status `st` and message: an input error naming the batch's input, saying `want`. */
static inline void expect_batch_refused(oq_status st, const char *msg, const char *want)
{
    assert_int_equal(st, OQ_ERR_FORMAT);
    if (!strstr(msg, want)) fail_msg("message '%s' lacks '%s'", msg, want);
    assert_non_null(strstr(msg, "b.npz: input"));
}
#endif

#ifdef TESTUTIL_REPORT_HTML
#include "report/report-impl.h"

/* report.html of summary `doc` (malloc'ed), failing the test where it cannot be drawn. */
static inline char *html_of(const json_t *doc)
{
    char *html;
    size_t n;
    oq_err err = {0};
    if (oq_report_html_json(doc, "fixture", &html, &n, &err)) fail_msg("%s", err.msg);
    return html;
}
#endif

#endif
