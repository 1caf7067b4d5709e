/* Notes validate and replay say before a --model run (after the inputs are accepted): what the
 * run will not judge, or judges otherwise than the model computes, is said, never left silent. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ortqual/compare.h"
#include "ortqual/inspect.h"
#include "ortqual/npz.h"
#include "ortqual/validate.h"

/* "logits, hidden" of the model's outputs `z` holds; 0 when it holds none. */
static size_t held_outputs(const oq_model_info *mi, const oq_npz *z, char *buf, size_t n)
{
    size_t held = 0, used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < mi->n_outputs; i++) {
        if (!mi->outputs[i].name || !oq_npz_get(z, mi->outputs[i].name)) continue;
        if (used < n) used += (size_t)snprintf(buf + used, n - used, "%s%s", held ? ", " : "", mi->outputs[i].name);
        held++;
    }
    return held;
}

void oq_cli_note(struct oq_cli_run_output *out, const char *cmd, const char *kind, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    size_t used = strlen(out->note);
    if (used < sizeof out->note) snprintf(out->note + used, sizeof out->note - used, "ortqual %s: note: %s\n", cmd, text);
    const char **kinds = realloc(out->note_kinds, (out->n_notes + 1) * sizeof *kinds);
    if (kinds) out->note_kinds = kinds;
    char **texts = kinds ? realloc(out->note_texts, (out->n_notes + 1) * sizeof *texts) : NULL;
    if (texts) out->note_texts = texts;
    if (!texts || !(texts[out->n_notes] = strdup(text))) return; /* out of memory: said, not kept */
    kinds[out->n_notes++] = kind;
}

void oq_cli_notes_clear(struct oq_cli_run_output *out)
{
    for (size_t i = 0; i < out->n_notes; i++) free(out->note_texts[i]);
    free(out->note_texts);
    free(out->note_kinds);
    out->note_texts = NULL;
    out->note_kinds = NULL;
    out->n_notes = 0;
}

/* The first of the n files that holds outputs of the model (their names in `names`); n when none
 * does, or a file cannot be read (the run says why). Read one at a time, up to that one: the
 * files after it are not read again for a note. */
static size_t first_holding(const oq_model_info *mi, const char *const *inputs, size_t n, char *names, size_t len)
{
    for (size_t k = 0; k < n; k++) {
        oq_npz *z = NULL;
        int stop = oq_npz_read(inputs[k], &z, NULL) != OQ_OK, held = !stop && held_outputs(mi, z, names, len);
        oq_npz_free(z);
        if (stop) return n;
        if (held) return k;
    }
    return n;
}

void oq_cli_note_unjudged_outputs(struct oq_cli_run_output *out, const char *cmd, const char *model,
                                  const char *const *inputs, size_t n_inputs, const char *reference,
                                  const char *instead)
{
    oq_model_info *mi = NULL;
    char names[256], read[160] = "";
    /* a model that cannot be read: the run says why */
    size_t k = oq_model_inspect_file(model, &mi, NULL) ? n_inputs : first_holding(mi, inputs, n_inputs, names, sizeof names);
    if (k < n_inputs && n_inputs > 1) /* which files the note read: those after it may hold outputs too */
        snprintf(read, sizeof read, " (--inputs file %zu of %zu%s%s)", k + 1, n_inputs, k ? ": those before it hold none" : "",
                 k + 1 == n_inputs ? "" : k ? ", those after it were not read for this note"
                                             : ": those after it were not read for this note");
    if (k < n_inputs)
        oq_cli_note(out, cmd, "outputs_not_reference", "%s holds saved outputs of the model (%s)%s; the reference is "
                    "%s, so they are not compared: %s to judge against them", oq_cli_shown(inputs[k]),
                    oq_cli_shown(names), read, reference, instead);
    oq_model_info_free(mi);
}

void oq_cli_note_looser_precision(struct oq_cli_run_output *out, const char *cmd, const char *model, const char *what,
                                  const char *prec, const char *instead)
{
    oq_tolerance t = {0}, own = oq_tolerance_for_dtype(OQ_DTYPE_FLOAT32);
    if (oq_tolerance_preset(prec, &t, NULL) || (t.rtol <= own.rtol && t.atol <= own.atol)) return;
    oq_cli_note(out, cmd, "tolerance_looser", "%s computes in float32 (no attention or output of it is "
                "float16 or bfloat16); %s judges it with %s tolerances (rtol %g, atol %g; float32's: rtol %g, atol %g), "
                "and nothing runs in that precision (it is only the tolerance): %s for the float32 ones",
                oq_cli_shown(model), what, prec, t.rtol, t.atol, own.rtol, own.atol, instead);
}

void oq_cli_note_ort_identity(struct oq_cli_run_output *out, const char *cmd, const char *ref_lib,
                              const struct oq_self_comparison *f)
{
    if (f->same != OQ_SAME_ORT_BUILD_INFO) return;
    oq_cli_note(out, cmd, "ort_build_unknown", "--reference-ort-lib %s reports the ORT version and build info of %s, "
                "which it is not a copy of, and one of the two has no ELF build-id: whether it is the same build "
                "(then the comparison proves nothing) or another build of that commit cannot be established; it runs "
                "as another build", oq_cli_shown(ref_lib), oq_cli_shown(f->lib));
}
