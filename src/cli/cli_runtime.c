/* --ort-lib, --ep, --ep-lib, --ep-option: parsed the same way by every subcommand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Split "NAME=VALUE" into two new strings. */
static int split_pair(const char *arg, const char *what, char **k, char **v)
{
    const char *eq = arg ? strchr(arg, '=') : NULL;
    if (!eq || eq == arg) {
        fprintf(stderr, "ortqual: --%s '%s': want NAME=VALUE\n", what, arg ? arg : "");
        return -1;
    }
    *k = strndup(arg, (size_t)(eq - arg));
    *v = strdup(eq + 1);
    if (!*k || !*v) {
        free(*k);
        free(*v);
        fprintf(stderr, "ortqual: out of memory\n");
        return -1;
    }
    return 0;
}

/* Append k and v to the parallel arrays (which grow together, by exactly one). */
static int push_pair(char ***keys, char ***vals, size_t *n, char *k, char *v)
{
    char **nk = realloc(*keys, (*n + 1) * sizeof *nk);
    if (nk) *keys = nk;
    char **nv = nk ? realloc(*vals, (*n + 1) * sizeof *nv) : NULL;
    if (nv) *vals = nv;
    if (!nk || !nv) {
        free(k);
        free(v);
        fprintf(stderr, "ortqual: out of memory\n");
        return -1;
    }
    (*keys)[*n] = k;
    (*vals)[*n] = v;
    (*n)++;
    return 0;
}

int oq_cli_runtime_string(const oq_opt *o, const char *arg)
{
    struct oq_cli_runtime *cr = o->ctx;
    if (!strcmp(o->name, "ort-lib")) cr->ort_lib = arg;
    else cr->ep = arg;
    cr->given = 1;
    return 0;
}

int oq_cli_runtime_ep_lib(const oq_opt *o, const char *arg)
{
    struct oq_cli_runtime *cr = o->ctx;
    char *k = NULL, *v = NULL;
    if (split_pair(arg, "ep-lib", &k, &v)) return -1;
    if (!*v) {
        fprintf(stderr, "ortqual: --ep-lib '%s': empty path\n", arg);
        free(k);
        free(v);
        return -1;
    }
    cr->given = 1;
    return push_pair(&cr->ep_lib_names, &cr->ep_lib_paths, &cr->n_ep_libs, k, v);
}

int oq_cli_runtime_ep_option(const oq_opt *o, const char *arg)
{
    struct oq_cli_runtime *cr = o->ctx;
    char *k = NULL, *v = NULL;
    if (split_pair(arg, "ep-option", &k, &v)) return -1;
    cr->given = 1;
    return push_pair(&cr->option_keys, &cr->option_values, &cr->n_options, k, v);
}

int oq_cli_runtime_check(const struct oq_cli_runtime *cr)
{
    oq_err err = {0};
    if (oq_ep_options_validate(cr->ep, cr->n_options, (const char *const *)cr->option_keys,
                               (const char *const *)cr->option_values, &err) != OQ_OK) {
        fprintf(stderr, "ortqual: %s\n", err.msg);
        return OQ_EXIT_USAGE;
    }
    return OQ_EXIT_OK;
}

oq_status oq_cli_runtime_register(const struct oq_cli_runtime *cr, oq_runtime *rt, oq_err *err)
{
    for (size_t i = 0; i < cr->n_ep_libs; i++) {
        oq_status st = oq_runtime_register_ep(rt, cr->ep_lib_names[i], cr->ep_lib_paths[i], err);
        if (st) return st;
    }
    return OQ_OK;
}

int oq_cli_runtime_open(const struct oq_cli_runtime *cr, oq_runtime **rt)
{
    *rt = NULL;
    int rc = oq_cli_runtime_check(cr);
    if (rc) return rc;
    oq_err err = {0};
    oq_runtime *r = NULL;
    if (oq_runtime_load(cr->ort_lib, &r, &err) != OQ_OK ||
        oq_cli_runtime_register(cr, r, &err) != OQ_OK) {
        fprintf(stderr, "ortqual: %s\n", err.msg);
        oq_runtime_free(r);
        return OQ_EXIT_RUNTIME;
    }
    *rt = r;
    return OQ_EXIT_OK;
}

void oq_cli_runtime_session_opts(const struct oq_cli_runtime *cr, oq_session_opts *so)
{
    so->ep = cr->ep;
    so->ep_lib = NULL; /* a registered --ep-lib of the same name is found by the runtime */
    so->n_ep_options = cr->n_options;
    so->ep_option_keys = (const char *const *)cr->option_keys;
    so->ep_option_values = (const char *const *)cr->option_values;
}

void oq_cli_runtime_clear(struct oq_cli_runtime *cr)
{
    for (size_t i = 0; i < cr->n_ep_libs; i++) {
        free(cr->ep_lib_names[i]);
        free(cr->ep_lib_paths[i]);
    }
    for (size_t i = 0; i < cr->n_options; i++) {
        free(cr->option_keys[i]);
        free(cr->option_values[i]);
    }
    free(cr->ep_lib_names);
    free(cr->ep_lib_paths);
    free(cr->option_keys);
    free(cr->option_values);
    memset(cr, 0, sizeof *cr);
}
