/* Argument checks at the entry points of the public API (status.h): a NULL where a function
 * needs an object, a path or an out pointer is the caller's error, answered with
 * OQ_ERR_INVALID_ARG naming the function and the argument, never dereferenced. */
#ifndef ORTQUAL_ARGS_IMPL_H
#define ORTQUAL_ARGS_IMPL_H

#include "ortqual/status.h"

#define OQ_NEED(err, p)                                                                        \
    do {                                                                                       \
        if (!(p)) return oq_err_set((err), OQ_ERR_INVALID_ARG, "%s: %s is NULL", __func__, #p); \
    } while (0)

/* An array of n entries: NULL is fine only when n is 0. */
#define OQ_NEED_N(err, n, p)                                                                   \
    do {                                                                                       \
        if ((n) && !(p)) return oq_err_set((err), OQ_ERR_INVALID_ARG, "%s: %s is NULL", __func__, #p); \
    } while (0)

/* A path: NULL or empty ("" opens nothing, and would be named as no file at all). */
#define OQ_NEED_PATH(err, p)                                                                      \
    do {                                                                                          \
        OQ_NEED(err, p);                                                                          \
        if (!*(p)) return oq_err_set((err), OQ_ERR_INVALID_ARG, "%s: %s is empty", __func__, #p); \
    } while (0)

#endif
