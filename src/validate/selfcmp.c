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
#include "runtime/runtime-impl.h"
#include "validate/validate-impl.h"

/* Do a and b run the same session? --model runs its file as it is: on one runtime with one kernel,
 * fp32 and fp16 change the tolerance only (on cuda both set use_tf32=0; tf32 is another run). */
static int same_model_run(const oq_config *a, const oq_config *b)
{
    return a->repr == OQ_REPR_MODEL && b->repr == OQ_REPR_MODEL && !strcmp(a->runtime, b->runtime) &&
           a->kernel == b->kernel && (a->precision == OQ_PREC_TF32) == (b->precision == OQ_PREC_TF32);
}

/* What a library says of the build it is (ort_file): ONNX Runtime's version and build info
 * ("git-commit-id=..., build type=Release") and the ELF build-id, all three of which a stripped
 * or patched copy keeps; its path and bytes it does not. */
typedef struct ort_identity {
    char file[4096];  /* the real file loaded */
    char build[1024]; /* "VERSION\tBUILD-ID\tBUILD INFO" */
} ort_identity;

/* The child of ort_file: load ORT `lib` (NULL: the search) and say, last, which build it is and
 * which file (the build info on one line: a newline in it would split the record). */
static int say_ort_file(void *lib)
{
    oq_runtime *rt = NULL;
    if (oq_runtime_load(lib, &rt, NULL)) return 1;
    char id[256], info[768];
    oq_runtime_build_id(rt, id, sizeof id);
    snprintf(info, sizeof info, "%s", oq_runtime_build_info(rt));
    for (char *c = info; *c; c++)
        if (*c == '\n' || *c == '\r') *c = ' ';
    fprintf(stderr, "\n%s\t%s\t%s\n%s\n", oq_runtime_version(rt), id, info, oq_runtime_lib_path(rt));
    oq_runtime_free(rt);
    return 0;
}

/* The last line of `text` cut off it (trailing newlines dropped first), or NULL. */
static char *cut_last_line(char *text)
{
    char *end = text + strlen(text);
    while (end > text && end[-1] == '\n') *--end = '\0';
    char *line = strrchr(text, '\n');
    if (!line) return NULL;
    *line = '\0';
    return line + 1;
}

/* The real file ORT `lib` loads (NULL or "": the search: $ORTQUAL_ORT_LIB, then the bundled copy;
 * a bare name is the dynamic loader's to find) and the build it reports, learned by loading it in
 * a child: this process loads no ORT before its workers, and never two builds. 0 with `out`'s
 * file "" when it does not load (the run says why). */
static int ort_file(const char *lib, ort_identity *out)
{
    oq_proc_result res = {0};
    memset(out, 0, sizeof *out);
    void *ctx = (void *)(lib && *lib ? lib : NULL);
    if (!oq_proc_fork_watch(say_ort_file, ctx, 60, 4096, 0, NULL, &res, NULL) && !res.signaled && !res.timed_out &&
        !res.exit_code && res.stderr_tail) {
        char *file = cut_last_line(res.stderr_tail), *build = file ? cut_last_line(res.stderr_tail) : NULL;
        if (build) {
            snprintf(out->file, sizeof out->file, "%s", file);
            snprintf(out->build, sizeof out->build, "%s", build);
        }
    }
    oq_proc_result_clear(&res);
    return *out->file != '\0';
}

oq_same_ort oq_ort_build_id_same(const char *a, size_t na, const char *b, size_t nb)
{
    return na && nb && na == nb && !memcmp(a, b, na) ? OQ_SAME_ORT_BUILD_ID : OQ_SAME_ORT_NONE;
}

/* Whether two files that are not the same bytes are one build: OQ_SAME_ORT_BUILD_ID where both
 * carry an ELF build-id and it is the same (two builds of one commit differ in it: never the same
 * build otherwise). Where either has none, nothing left tells a patched copy from another build of
 * the same commit and build type (both report one version and build info): OQ_SAME_ORT_BUILD_INFO
 * says so, which is not refused (identity not established); else OQ_SAME_ORT_NONE. */
static oq_same_ort same_build(const char *a, const char *b)
{
    const char *ida = strchr(a, '\t'), *idb = strchr(b, '\t');
    if (!ida || !idb) return OQ_SAME_ORT_NONE;
    size_t la = strcspn(ida + 1, "\t"), lb = strcspn(idb + 1, "\t");
    if (la && lb) return oq_ort_build_id_same(ida + 1, la, idb + 1, lb);
    const char *info = ida + 1 + la;
    int same = *info && info[1] && ida - a == idb - b && !memcmp(a, b, (size_t)(ida - a)) && !strcmp(info, idb + 1 + lb);
    return same ? OQ_SAME_ORT_BUILD_INFO : OQ_SAME_ORT_NONE;
}

/* How the reference's ORT is the others' (into f->same and f->lib). */
static void same_ort(const oq_validate_opts *o, oq_self_comparison *f)
{
    ort_identity lib, ref;
    f->same = OQ_SAME_ORT_NONE;
    f->lib[0] = '\0';
    if (!o->reference_ort_lib) {
        f->same = OQ_SAME_ORT_ONE_LIB;
        return;
    }
    if (!ort_file(o->ort_lib, &lib) || !ort_file(o->reference_ort_lib, &ref)) return;
    snprintf(f->lib, sizeof f->lib, "%s", lib.file);
    if (!strcmp(lib.file, ref.file)) f->same = OQ_SAME_ORT_FILE;
    else if (oq_file_same_bytes(lib.file, ref.file)) f->same = OQ_SAME_ORT_COPY;
    else f->same = same_build(lib.build, ref.build);
    if (f->same == OQ_SAME_ORT_NONE) f->lib[0] = '\0';
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
    if (f.same == OQ_SAME_ORT_BUILD_INFO) return OQ_OK; /* maybe another build: the caller may say so */
    const oq_config *c = &o->configs[f.config];
    char how[sizeof f.lib + 160] = "";
    if (f.same != OQ_SAME_ORT_ONE_LIB)
        snprintf(how, sizeof how, " on one ORT (the reference's library is %s %s)",
                 f.same == OQ_SAME_ORT_FILE       ? "the others',"
                 : f.same == OQ_SAME_ORT_COPY     ? "a copy of the others',"
                                                  : "another file with the ELF build-id of the others',",
                 f.lib);
    return oq_err_set(err, OQ_ERR_INVALID_ARG,
                      "'%s' runs what the reference '%s' runs (items 1 and %zu)%s: model_path runs the file as it is, "
                      "and %s or %s changes only the tolerance; compared with itself it passes and proves nothing "
                      "(judge it against saved outputs: expected,%s)",
                      c->name, ref->name, f.config + 1, how, oq_precision_name(ref->precision),
                      oq_precision_name(c->precision), c->name);
}
