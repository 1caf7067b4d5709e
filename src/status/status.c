#include "ortqual/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *oq_status_str(oq_status s)
{
    switch (s) {
    case OQ_OK: return "ok";
    case OQ_ERR_INVALID_ARG: return "invalid argument";
    case OQ_ERR_IO: return "i/o error";
    case OQ_ERR_FORMAT: return "malformed input";
    case OQ_ERR_SHAPE: return "shape mismatch";
    case OQ_ERR_MASK: return "mask contract violated";
    case OQ_ERR_NOMEM: return "out of memory";
    case OQ_ERR_UNSUPPORTED: return "unsupported";
    case OQ_ERR_RUNTIME: return "runtime error";
    case OQ_ERR_NOT_FOUND: return "not found";
    case OQ_ERR_CHECK_FAILED: return "check failed";
    case OQ_ERR_OUTPUT: return "cannot write output";
    }
    return "unknown status";
}

oq_status oq_err_set(oq_err *err, oq_status s, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->status = s;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return s;
}

oq_status oq_err_prefix(oq_err *err, const char *fmt, ...)
{
    if (!err) return OQ_OK;
    char old[OQ_ERR_MSG_MAX];
    memcpy(old, err->msg, sizeof old);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof err->msg) /* then as much of the old text as fits */
        snprintf(err->msg + n, sizeof err->msg - (size_t)n, "%s", old);
    return err->status;
}

void oq_abort_(const char *file, int line, const char *expr)
{
    fprintf(stderr, "ortqual: internal error at %s:%d: assertion '%s' failed\n", file, line, expr);
    abort();
}
