/* The library's messages name the API's fields (a C caller has no options); the tool's users
 * set those fields with options, so the tool says the options instead. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* library phrase -> the tool's; a longer phrase before one it starts with */
static const char *const terms[][2] = {
    {"give input_files (or mask_name)", "give --inputs (or --mask)"},
    {"give input_files", "give --inputs"},
    {"give inputs batches", "give --inputs"},
    {"(give it in inputs_path)", "(give it in --inputs)"},
    {"(overwrite it, or choose another output folder)", "(use --force or another --outdir)"},
    {"overwrite to write into it, or choose another output folder", "use --force to write into it, or another --outdir"},
    {"forcing clears what it left", "--force clears what it left"},
    {"choose another output folder", "give another --outdir"},
    {" input_files (", " --inputs files ("},
    {"expected_files: ", "--expected: "},
    {"events.num_features ", "--num-features "},
    {"features_name", "--features NAME"},
    {"(or no_mask)", "(or --no-mask)"},
    {"seq_axes ", "--seq-axis "},
    {"seq_axes:", "--seq-axis:"},
};

/* A phrase starts a word: not inside a name or a path ("my_seq_axes ", "a.seq_axes "). */
static int word_start(const char *msg, const char *at)
{
    if (at == msg || *at == ' ' || *at == '(') return 1;
    unsigned char c = (unsigned char)at[-1];
    return !isalnum(c) && c != '_' && c != '.' && c != '/' && c != '-';
}

const char *oq_cli_terms(const char *msg, char *buf, size_t n)
{
    size_t used = 0;
    if (!n) return msg;
    for (const char *p = msg; *p;) {
        const char *to = NULL;
        size_t len = 0;
        for (size_t i = 0; !to && i < sizeof terms / sizeof terms[0]; i++)
            if (!strncmp(p, terms[i][0], strlen(terms[i][0])) && word_start(msg, p))
                to = terms[i][1], len = strlen(terms[i][0]);
        if (!to) to = p, len = 1;
        size_t k = to == p ? 1 : strlen(to);
        if (used + k >= n) return msg; /* no room: the library's words, whole */
        memcpy(buf + used, to, k);
        used += k;
        p += len;
    }
    buf[used] = '\0';
    return buf;
}
