/* Names from outside (test folders, paths, tensors) in the tool's text output, shown as the
 * library's messages show them: a control character as \xNN. */
#include <stdlib.h>

#include "cli.h"

/* The copies made, each kept until SHOWN_KEPT more are made: enough for one printf's names. */
enum { SHOWN_KEPT = 8 };
static char *shown[SHOWN_KEPT];
static unsigned next_shown;

const char *oq_cli_shown(const char *s)
{
    if (!s || !oq_text_has_control(s)) return s;
    char *copy = oq_text_printable(s);
    if (!copy) return "(a name not shown: out of memory)";
    free(shown[next_shown]);
    shown[next_shown] = copy;
    next_shown = (next_shown + 1) % SHOWN_KEPT;
    return copy;
}
