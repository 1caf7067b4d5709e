/* Helpers shared by the unit tests (a header, so the test glob does not build it alone).
 * Include after <cmocka.h>. For the shared ORT runtime fixture, define
 * TESTUTIL_RUNTIME_FIXTURE before including: it declares `rt` and group_setup/teardown. */
#ifndef ORTQUAL_TESTS_TESTUTIL_H
#define ORTQUAL_TESTS_TESTUTIL_H

#include <dirent.h>
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

/* A run held at its first progress line (its folder's lock taken) until the test says: set the
 * run's progress to hold_first_line and its progress_ctx to a struct run_hold whose pipes are
 * open; read ready[0] to wait for the line, write go[1] to let the run go on. */
struct run_hold {
    int ready[2], go[2];
};

static inline void hold_first_line(void *ctx, const char *line)
{
    (void)line;
    struct run_hold *h = ctx;
    char c = 0;
    if (h->ready[1] < 0) return;
    if (write(h->ready[1], "r", 1) != 1 || read(h->go[0], &c, 1) != 1) abort();
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

#ifdef TESTUTIL_VALIDATE
#include "ortqual/validate.h"

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

/* The same at its smallest, in this process: one batch of 4 events of at most 8 tokens, the
 * workers in-process, one thread. */
static inline void validate_tiny_in_process(oq_validate_opts *o, oq_config cfg[2], const char *outdir)
{
    validate_two_configs(o, cfg, outdir);
    o->isolate = 0;
    o->threads = 1;
    o->events.num_events = 4;
    o->events.batch_size = 4;
    o->events.max_len = 8;
}
#endif

#endif
