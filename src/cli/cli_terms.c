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
    {"(mask_name names another, no_mask says there is none)",
     "(--mask NAME names another, --no-mask says there is none)"},
    {"(mask_name ", "(--mask "},
    {"mask_name names the mask, no_mask says there is none",
     "--mask NAME names the mask, --no-mask says there is none"},
    {"mask_name '", "--mask '"},
    {"mask_input '", "--mask '"},
    {"mask_input NAME names the mask", "--mask NAME names the mask"},
    {"(mask_input names one)", "(--mask NAME names one)"},
    {"(mask_input NAME)", "(--mask NAME)"},
    {"mask contract or mask_input names", "mask contract or --mask names"},
    {"(no_mask)", "(--no-mask)"},
    {"mask_polarity ", "--mask-polarity "},
    {"static_shapes ", "--static "},
    {"(no_mask: none)", "(--no-mask: none)"},
    {"no_mask, but the model's", "--no-mask, but the model's"},
    {"features_name '", "--features '"},
    {"model_path ", "--model "},
    {"the model bench", "bench --model"},
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
    {"the ort_lib and reference_ort_lib the shards", "the --ort-lib and --reference-ort-lib the shards"},
    {"required '", "--require '"},
    {"e.g. configs ", "e.g. --configs "},
    {"(require_full_gpu, profile)", "(--require-full-gpu, --profile)"},
    {"require_full_gpu", "--require-full-gpu"},
    {"strict_placement", "--strict-placement"},
    {"expect_kernel", "--expect-kernel"},
    {"prove_teeth", "--prove-teeth"},
    {"require_dispatch judges", "--require-dispatch (or ORTQUAL_REQUIRE_DISPATCH=1) judges"},
    {"require_dispatch", "--require-dispatch"},
    {"repeat_reference: ", "--repeat-reference: "},
    {"ep_libs '", "--ep-lib '"},
    {"(if graph_opt OQ_GRAPH_OPT_BASIC runs it,", "(if --graph-opt-level 1 runs it,"},
    {" a session config entry optimization.", " --session-config optimization."},
    {"oq_validate_run: session config ", "--session-config "}, /* the placement entry's refusal */
    {"session config key '", "--session-config key '"},
    {"session config ", "--session-config "},
    {"(validate with save_outputs)", "(validate --save-outputs)"},
    {"measure with no cache_dir", "measure with --no-cache"},
    {"(or a group's, shared: cache_shared)", "(or a group's with --cache-shared)"},
    {" (timeout_s, each configuration's limit, raises it)",
     " (--timeout SECONDS, each configuration's limit, default 300, raises it)"},
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
    {"give encoder.heads ", "give --heads "},
    /* bench */
    {"opts.int_lo,int_hi", "--int-range"},
    {"opts.input_shapes", "--shape"},
    {"input shape '", "--shape '"},
    {"given in opts.expected_path", "given with --expected"},
    {"opts.expected_path", "--expected"},
    {"opts.inputs_path", "--inputs"},
    {"opts.mask_input", "--mask"},
    {"opts.mask_polarity", "--mask-polarity"},
    {"opts.sweeps", "--sweep"},
    {"opts.seq_dim", "--seq-dim"},
    {"opts.dims", "--dim"},
    {"opts.tolerances", "--tolerance"},
    {"opts.iters", "--iters"},
    {"opts.seq_lens", "--seq-lens"},
    {"opts.batch_sizes", "--batch-sizes"},
    {"opts.length_policy", "--length-policy"},
    {"opts.mask_fraction", "--mask-fraction"},
    {"opts.modes without OQ_BENCH_MASKED", "--modes unmasked"},
    {"io OQ_IO_DEVICE", "--io-binding device"},
    {"opts.cupti", "--cupti"},
    /* advice: the export's and the configuration's */
    {"mask OQ_MASK_SEQLEN", "--mask-form seqlen"},
    {"attention_dtype OQ_DTYPE_FLOAT16", "--attention-dtype float16"},
    /* conformance */
    {"runs with opts.runner", "runs with --ep"},
    /* convert */
    {"OQ_CONVERT_MASK_TO_SEQLEN", "--mask-to-seqlen"},
    {"OQ_CONVERT_EXPAND_MASK", "--expand-mask"},
    {"OQ_CONVERT_LOWER", "--lower"},
    {"opts.opset to 24 or leave it 0", "--opset to 24 or leave it out"},
    {"opts.opset or leave it 0", "--opset or leave it out"},
    {"keep_head_size turns it off", "--no-pad-head-size turns it off"},
    {"choose another out_path, or convert in place (out_path ", "choose another -o, or convert in place (-o "},
    {" with overwrite)", " --force)"},
    {"freeze '", "--freeze '"},
    {"(or freeze_defaults: ", "(or --freeze all: "},
    /* gate, and the allowed skips of validate, bench and conformance */
    {"opts.allow_skip", "--allow-skip"},
    {"allow_skip '", "--allow-skip '"},
    {"opts.env '", "--env '"},
    {"opts.pythonpath", "--pythonpath"},
    {"opts.pin_libs", "--pin-lib"},
    {"opts.require_dispatch", "--require-dispatch"},
    /* placement and validate's report */
    {"OQ_PLACEMENT_STRICT rejects them", "--strict-placement rejects them"},
    {"opts.padding OQ_PADDING_REPORT", "--padding report"},
    {"opts.prove_teeth", "--prove-teeth"},
    {"opts.require_full_gpu", "--require-full-gpu"},
    {"opts.profile", "--profile"},
    /* bench --model --expected's padding (after opts.padding OQ_PADDING_REPORT) */
    {"opts.padding", "--padding"},
    {"opts.seq_axes", "--seq-axis"},
    /* bench --baseline's options that change the measurement (oq_bench_config_differs) */
    {"opts.include_session", "--include-session"},
    {"opts.warmup", "--warmup"},
    {"opts.seed", "--seed"},
    {"opts.graph_opt", "--graph-opt-level"},
    {"opts.session_configs", "--session-config"},
    {"opts.ep_options", "--ep-option"},
    {"opts.mem_sample_us", "--mem-sample-ms (in us)"},
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
        /* (the first byte first: the library words each message it makes, its errors included) */
        for (size_t i = 0; !to && word_start(msg, p) && i < sizeof terms / sizeof terms[0]; i++)
            if (*p == terms[i][0][0] && !strncmp(p, terms[i][0], strlen(terms[i][0])))
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
