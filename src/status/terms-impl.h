/* The words of the texts the library keeps and writes itself (status.h, oq_set_terms). */
#ifndef ORTQUAL_TERMS_IMPL_H
#define ORTQUAL_TERMS_IMPL_H

#include <stdarg.h>
#include <stddef.h>

/* `text` in the words of the function oq_set_terms was given: `text` itself, or its rewording
 * in buf (n bytes). A text too long for buf stays as it is. */
const char *oq_terms(const char *text, char *buf, size_t n);
/* A text the library makes from its own words, fmt, and values from outside (ap: a path, a
 * node's name, a log line): fmt's own words in those words, the values as they are. Malloc'ed;
 * NULL when out of memory. */
char *oq_terms_vformat(const char *fmt, va_list ap);
/* Whether oq_set_terms was given a function: the caller words the library's texts its own way. */
int oq_terms_given(void);

#endif
