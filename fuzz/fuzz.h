/* Shared by the fuzz harnesses: the libFuzzer entry point, and a private copy
 * of the input with a terminating NUL for the parsers that take text. */
#ifndef ORTQUAL_FUZZ_H
#define ORTQUAL_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A heap copy, so ASan sees a read past the end of the input. */
static inline char *fuzz_copy(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s) abort();
    if (size) memcpy(s, data, size);
    s[size] = 0;
    return s;
}

#endif
