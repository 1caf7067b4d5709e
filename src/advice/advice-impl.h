/* Internal: advice in the caller's words after the fact. */
#ifndef ORTQUAL_ADVICE_IMPL_H
#define ORTQUAL_ADVICE_IMPL_H

/* *advice (an oq_advice's text, malloc'd) with its remedies that name API fields in the words of
 * oq_set_terms: a validation worker's advice, which it writes in the library's words
 * (oq_validate_worker). For such texts only (a worded one may hold them again); the node's
 * name stays as it is. */
void oq_advice_word_(char **advice);

#endif
