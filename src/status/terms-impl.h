/* The words of the texts the library keeps and writes itself (status.h, oq_set_terms). */
#ifndef ORTQUAL_TERMS_IMPL_H
#define ORTQUAL_TERMS_IMPL_H

#include <stddef.h>

/* `text` in the words of the function oq_set_terms was given: `text` itself, or its rewording
 * in buf (n bytes). A text too long for buf stays as it is. */
const char *oq_terms(const char *text, char *buf, size_t n);
/* The same, malloc'd (NULL: out of memory). */
char *oq_terms_dup(const char *text);

#endif
