/* A dispatch failure as fields (ortqual/dispatch.h): what programs compare, not its text. */
#include "ortqual/dispatch.h"
#include "dispatch/dispatch-impl.h"

#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"
#include "status/args-impl.h"

static const char *const KIND_NAMES[OQ_DISPATCH_FAILURE_KIND_COUNT_] = {"text", "kernel", "unobserved",
                                                                        "no_routing"};

const char *oq_dispatch_failure_kind_name(oq_dispatch_failure_kind k)
{
    return (unsigned)k < OQ_DISPATCH_FAILURE_KIND_COUNT_ ? KIND_NAMES[k] : "unknown";
}

oq_dispatch_failure_kind oq_dispatch_failure_kind_from_name(const char *name)
{
    for (int k = 1; name && k < OQ_DISPATCH_FAILURE_KIND_COUNT_; k++)
        if (!strcmp(name, KIND_NAMES[k])) return (oq_dispatch_failure_kind)k;
    return OQ_DISPATCH_FAILURE_TEXT;
}

int oq_dispatch_failure_same(const oq_dispatch_failure *a, const oq_dispatch_failure *b)
{
    if (!a || !b || a->kind != b->kind || a->kind == OQ_DISPATCH_FAILURE_TEXT) return 0;
    /* a failure built by hand may leave a field NULL: it reads as "" */
    const char *fa[] = {a->node, a->kernel, a->op, a->dtype}, *fb[] = {b->node, b->kernel, b->op, b->dtype};
    for (size_t i = 0; i < sizeof fa / sizeof *fa; i++)
        if (strcmp(fa[i] ? fa[i] : "", fb[i] ? fb[i] : "") != 0) return 0;
    return 1;
}

void oq_dispatch_failure_clear(oq_dispatch_failure *f)
{
    if (!f) return;
    free(f->node);
    free(f->op);
    free(f->dtype);
    free(f->kernel);
    free(f->expected);
    memset(f, 0, sizeof *f);
}

static int dup_into(char **dst, const char *src) { return (*dst = strdup(src ? src : "")) != NULL; }

oq_status oq_dispatch_failure_copy(oq_dispatch_failure *dst, const oq_dispatch_failure *src, oq_err *err)
{
    OQ_NEED(err, dst);
    OQ_NEED(err, src);
    memset(dst, 0, sizeof *dst);
    dst->kind = src->kind;
    dst->line = src->line;
    if (dup_into(&dst->node, src->node) && dup_into(&dst->op, src->op) && dup_into(&dst->dtype, src->dtype) &&
        dup_into(&dst->kernel, src->kernel) && dup_into(&dst->expected, src->expected))
        return OQ_OK;
    oq_dispatch_failure_clear(dst);
    return oq_err_set(err, OQ_ERR_NOMEM, "dispatch failure: out of memory");
}

/* A name from the log as a JSON string (NULL: ""): the log need not be UTF-8, and jansson
 * refuses a string that is not (a pack given its NULL fails whole). fileio's oq_json_text is
 * of this layer, out of reach. */
static json_t *log_text(const char *s)
{
    char *u = oq_utf8_lossy(s ? s : "");
    json_t *j = u ? json_string(u) : NULL;
    free(u);
    return j;
}

json_t *oq_dispatch_failure_json(const oq_dispatch_failure *f)
{
    return json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:I}", "kind", oq_dispatch_failure_kind_name(f->kind), "node",
                     log_text(f->node), "op", log_text(f->op), "dtype", log_text(f->dtype), "kernel",
                     log_text(f->kernel), "expected", log_text(f->expected), "line", (json_int_t)f->line);
}
