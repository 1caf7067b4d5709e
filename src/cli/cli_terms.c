/* The library's messages name the API's fields (a C caller has no options); the tool's users
 * set those fields with options, so the tool says the options instead. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* library phrase -> the tool's; a longer phrase before one it starts with */
static const char *const terms[][2] = {
    /* validate, replay, merge and estimate (src/validate/) */
    {"(mask_name names one)", "(--mask NAME names one)"},
    {"(mask_name ", "(--mask "},
    {"mask_name names the mask, no_mask says there is none",
     "--mask NAME names the mask, --no-mask says there is none"},
    {"mask_name '", "--mask '"},
    {"mask_input '", "--mask '"},
    {"(no_mask)", "(--no-mask)"},
    {"(no_mask: none)", "(--no-mask: none)"},
    {"no_mask, but the model's", "--no-mask, but the model's"},
    {"features_name '", "--features '"},
    {"model_path ", "--model "},
    {"weights_path (the weights", "--weights W.npz (the weights"},
    {"weights_path ", "--weights "},
    {"input_files: ", "--inputs: "},
    {"input_files ", "--inputs "},
    {"expected_files need", "--expected files need"},
    {"expected_files ", "--expected "},
    {"give expected_files '", "pass --expected '"},
    {"tolerances: ", "--tolerance: "},
    {"ort_lib: ", "--ort-lib: "},
    {"reference_ort_lib: ", "--reference-ort-lib: "},
    {"required '", "--require '"},
    {"e.g. configs ", "e.g. --configs "},
    {"require_full_gpu", "--require-full-gpu"},
    {"strict_placement", "--strict-placement"},
    {"expect_kernel", "--expect-kernel"},
    {"prove_teeth", "--prove-teeth"},
    {"require_dispatch judges", "--require-dispatch (or ORTQUAL_REQUIRE_DISPATCH=1) judges"},
    {"require_dispatch", "--require-dispatch"},
    {"repeat_reference: ", "--repeat-reference: "},
    {"(if graph_opt OQ_GRAPH_OPT_BASIC runs it,", "(if --graph-opt-level 1 runs it,"},
    {" a session config entry optimization.", " --session-config optimization."},
    {"(validate with save_outputs)", "(validate --save-outputs)"},
    {"measure with no cache_dir", "measure with --no-cache"},
    {"opts.shards ", "--shards "},
    {"(validate or replay with shard.prepare instead of shard.index,",
     "(validate or replay with --prepare-shards N instead of --shard,"},
    {"(shard.prepare with overwrite)", "(--prepare-shards N --force)"},
    {"(overwrite to prepare them again, which removes their results, or choose another output folder)",
     "(use --force to prepare them again, which removes their results, or another --outdir)"},
    {"(overwriting replaces every file", "(--force replaces every file"},
    {"again (overwrite)", "again (--force)"},
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
