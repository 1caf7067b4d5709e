/* JSON strings of outside text: paths are bytes on Linux, and jansson refuses text that is
 * not UTF-8 (a json_pack with it fails whole, an array or object silently drops it). */
#include <jansson.h>
#include <stdlib.h>

#include "cli.h"
#include "ortqual/fileio.h"

json_t *oq_cli_json_text(const char *s)
{
    if (!s) return json_null();
    json_t *j = json_string(s);
    if (j) return j;
    char *u = oq_text_utf8(s);
    j = u ? json_string(u) : NULL;
    free(u);
    return j;
}
