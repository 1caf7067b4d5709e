/* A reference compared with itself: a configuration under test that runs the reference's own
 * session on the reference's own ORT passes and proves nothing. validate (--configs) and replay
 * (--ep cpu against ORT CPU) refuse it through oq_validate_self_comparison, and so does
 * oq_validate_run for a library caller. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ortqual/proc.h"
#include "ortqual/runtime.h"
#include "ortqual/validate.h"

#include "fileio/fileio-impl.h"

/* Do a and b run the same session? --model runs its file as it is: on one runtime with one kernel,
 * fp32 and fp16 change the tolerance only (on cuda both set use_tf32=0; tf32 is another run). */
static int same_model_run(const oq_config *a, const oq_config *b)
{
    return a->repr == OQ_REPR_MODEL && b->repr == OQ_REPR_MODEL && !strcmp(a->runtime, b->runtime) &&
           a->kernel == b->kernel && (a->precision == OQ_PREC_TF32) == (b->precision == OQ_PREC_TF32);
}

/* The child of ort_file: load ORT `lib` (NULL: the search) and say, last, which file it was. */
static int say_ort_file(void *lib)
{
    oq_runtime *rt = NULL;
    if (oq_runtime_load(lib, &rt, NULL)) return 1;
    fprintf(stderr, "\n%s\n", oq_runtime_lib_path(rt));
    oq_runtime_free(rt);
    return 0;
}

/* The real file ORT `lib` loads (NULL or "": the search: $ORTQUAL_ORT_LIB, then the bundled copy;
 * a bare name is the dynamic loader's to find), learned by loading it in a child: this process
 * loads no ORT before its workers, and never two builds. 0 with `out` "" when it does not load
 * (the run says why). */
static int ort_file(const char *lib, char *out, size_t n)
{
    oq_proc_result res = {0};
    out[0] = '\0';
    void *ctx = (void *)(lib && *lib ? lib : NULL);
    if (!oq_proc_fork_watch(say_ort_file, ctx, 60, 4096, 0, NULL, &res, NULL) && !res.signaled && !res.timed_out &&
        !res.exit_code && res.stderr_tail) {
        char *end = res.stderr_tail + strlen(res.stderr_tail);
        while (end > res.stderr_tail && end[-1] == '\n') *--end = '\0';
        char *line = strrchr(res.stderr_tail, '\n');
        snprintf(out, n, "%s", line ? line + 1 : res.stderr_tail);
    }
    oq_proc_result_clear(&res);
    return *out != '\0';
}

/* How the reference's ORT is the others' (into f->same and f->lib). */
static void same_ort(const oq_validate_opts *o, oq_self_comparison *f)
{
    char ref[sizeof f->lib];
    f->same = OQ_SAME_ORT_NONE;
    f->lib[0] = '\0';
    if (!o->reference_ort_lib) {
        f->same = OQ_SAME_ORT_ONE_LIB;
        return;
    }
    if (!ort_file(o->ort_lib, f->lib, sizeof f->lib) || !ort_file(o->reference_ort_lib, ref, sizeof ref)) return;
    if (!strcmp(f->lib, ref)) f->same = OQ_SAME_ORT_FILE;
    else if (oq_file_same_bytes(f->lib, ref)) f->same = OQ_SAME_ORT_COPY;
}

oq_status oq_validate_self_comparison(const oq_validate_opts *o, oq_self_comparison *found, oq_err *err)
{
    oq_self_comparison f = {0};
    if (found) *found = f;
    if (!o) return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: o is NULL", __func__);
    if (!o->configs || !o->n_configs) return OQ_OK;
    const oq_config *ref = &o->configs[0];
    for (f.config = 1; f.config < o->n_configs && !same_model_run(ref, &o->configs[f.config]); f.config++) {}
    if (f.config == o->n_configs) return OQ_OK;
    same_ort(o, &f);
    if (f.same == OQ_SAME_ORT_NONE) return OQ_OK;
    if (found) *found = f;
    const oq_config *c = &o->configs[f.config];
    char how[sizeof f.lib + 96] = "";
    if (f.same != OQ_SAME_ORT_ONE_LIB)
        snprintf(how, sizeof how, " on one ORT (the reference's library is %s %s)",
                 f.same == OQ_SAME_ORT_FILE ? "the others'," : "a copy of the others',", f.lib);
    return oq_err_set(err, OQ_ERR_INVALID_ARG,
                      "'%s' runs what the reference '%s' runs (items 1 and %zu)%s: model_path runs the file as it is, "
                      "and %s or %s changes only the tolerance; compared with itself it passes and proves nothing "
                      "(judge it against saved outputs: expected,%s)",
                      c->name, ref->name, f.config + 1, how, oq_precision_name(ref->precision),
                      oq_precision_name(c->precision), c->name);
}
