/* UTF-8 checks for text from outside (a test's log, a command line, a path): JSON and XML
 * documents must be valid UTF-8, and such text need not be. */
#include <stdlib.h>
#include <string.h>

#include "core/core-impl.h"

size_t oq_utf8_len(const unsigned char *p, size_t rem)
{
    static const unsigned char lo[5] = {0x80, 0xA0, 0x80, 0x90, 0x80}, hi[5] = {0xBF, 0xBF, 0x9F, 0xBF, 0x8F};
    unsigned char c = p[0];
    if (c < 0x80) return 1;
    size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    int k = c == 0xE0 ? 1 : c == 0xED ? 2 : c == 0xF0 ? 3 : c == 0xF4 ? 4 : 0; /* second byte's range */
    if (!n || n > rem || p[1] < lo[k] || p[1] > hi[k]) return 0;
    for (size_t i = 2; i < n; i++)
        if ((p[i] & 0xC0) != 0x80) return 0;
    return n;
}

char *oq_utf8_lossy(const char *s)
{
    size_t n = strlen(s), w = 0;
    char *b = malloc(3 * n + 1);
    for (size_t i = 0; b && i < n;) {
        size_t k = oq_utf8_len((const unsigned char *)s + i, n - i);
        if (k) memcpy(b + w, s + i, k), w += k, i += k;
        else memcpy(b + w, OQ_UTF8_REPLACEMENT, 3), w += 3, i++;
    }
    if (b) b[w] = '\0';
    return b;
}
