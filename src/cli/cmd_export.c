/* ortqual export sdpa|encoder: write attention models as ONNX files. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ortqual/export.h"

const char cmd_export_summary[] = "write an attention-only or encoder model as ONNX (3 representations)";

static void usage_top(FILE *fp)
{
    fprintf(fp,
            "usage: ortqual export sdpa    [options] -o MODEL.onnx\n"
            "       ortqual export encoder [options] -o MODEL.onnx\n"
            "\n"
            "Build ONNX models in C, each in one of three attention representations:\n"
            "  decomposed   opset 20, standard ops (MatMul, Transpose, Mul, Add/Where, Softmax)\n"
            "  attention23  opset 23, one ONNX Attention node, key mask as attn_mask [B,1,L,L]\n"
            "  attention24  opset 24, one Attention node, valid lengths as nonpad_kv_seqlen\n"
            "'ortqual export sdpa --help' and 'ortqual export encoder --help' list the options.\n");
}

static void usage_common(FILE *fp)
{
    fprintf(fp,
            "  --format F            decomposed | attention23 | attention24 (default decomposed)\n"
            "  --mask M              auto | additive | bool | seqlen (default auto: additive for\n"
            "                        decomposed and attention23, seqlen for attention24); bool builds\n"
            "                        a boolean attn_mask, the form that routes to MATH on CUDA\n"
            "  --attention-dtype T   float32 | float16 (default float32): float16 casts around the\n"
            "                        attention only, public inputs and outputs stay float32\n"
            "  --static B,L          fixed batch size and length (default: dynamic 'batch', 'seq')\n"
            "  -o, --output PATH     the model file to write (atomically)\n"
            "  --force               replace PATH if it exists (refused otherwise)\n"
            "  -h, --help            this help\n");
}

static void usage_sdpa(FILE *fp)
{
    fprintf(fp,
            "usage: ortqual export sdpa [options] -o MODEL.onnx\n"
            "\n"
            "Attention only: inputs query, key, value (float32) and mask [B,L] (float32 1/0, a\n"
            "valid prefix then padding), output 'output' in the query's layout. Padded keys are\n"
            "excluded, padded query rows of the output are exact zeros.\n"
            "\n"
            "options:\n"
            "  --heads H             query heads (default 4)\n"
            "  --kv-heads G          key/value heads, must divide H (default H; fewer = GQA)\n"
            "  --head-dim D          head size (default 16)\n"
            "  --layout 3|4          3: [B,L,H*D]; 4: [B,H,L,D] (default 4)\n"
            "  --unmasked            no mask input, no padding (same as --mask none)\n");
    usage_common(fp);
    fprintf(fp,
            "\nexamples:\n"
            "  ortqual export sdpa --format attention24 --attention-dtype float16 -o a24.onnx\n"
            "  ortqual export sdpa --heads 8 --kv-heads 2 --layout 3 --static 2,128 -o gqa.onnx\n");
}

static void usage_encoder(FILE *fp)
{
    fprintf(fp,
            "usage: ortqual export encoder [options] -o MODEL.onnx\n"
            "\n"
            "A particle-flow-style transformer: inputs features [B,L,F] (float32) and mask [B,L]\n"
            "(float32 1/0, a valid prefix then padding); outputs 'cls' [B,L,classes] and 'reg'\n"
            "[B,L,regression-targets]. Padded features are sanitized, padded keys excluded from\n"
            "every attention, and both outputs are exact zeros on padding. Architecture and\n"
            "weight names: docs/export.md.\n"
            "\n"
            "options:\n"
            "  --features F              input features per element (default 8)\n"
            "  --width W                 model width (default 32)\n"
            "  --layers N                pre-LayerNorm self-attention blocks (default 2)\n"
            "  --heads H                 attention heads, must divide W (default 4)\n"
            "  --ffn-width FF            feed-forward hidden width (default 64)\n"
            "  --classes K               width of the 'cls' head (default 6)\n"
            "  --regression-targets K    width of the 'reg' head (default 4)\n"
            "  --seed S                  random weights from this seed (default 0)\n"
            "  --weights W.npz           weights from an npz instead (shapes give F, W, N, FF and\n"
            "                            the heads; --heads is still needed)\n"
            "  --save-weights W.npz      also write the weights used (atomically; --force applies)\n"
            "  --elu decomposed|op       ELU from standard ops (default), or the ONNX Elu operator,\n"
            "                            which ORT 1.29 runs on CPU inside a CUDA session (Elu-22\n"
            "                            has no CUDA kernel): the case --require-full-gpu catches\n");
    usage_common(fp);
    fprintf(fp,
            "\nexamples:\n"
            "  ortqual export encoder --seed 1 --save-weights w.npz -o enc_dec.onnx\n"
            "  ortqual export encoder --weights w.npz --heads 4 --format attention24 -o enc_a24.onnx\n");
}

/* Strict positive integer. */
/* Export's sizes fit an int32 attribute. */
static int parse_int(const char *opt, const char *s, int64_t lo, int64_t *out)
{
    return oq_cli_parse_int("export", opt, s, lo, 1ll << 31, out);
}

static int parse_static(const char *s, int64_t *b, int64_t *l)
{
    const char *comma = strchr(s, ',');
    char buf[64];
    if (!comma || (size_t)(comma - s) >= sizeof buf) {
        fprintf(stderr, "ortqual export: --static '%s': expected B,L (e.g. 2,128)\n", s);
        return -1;
    }
    memcpy(buf, s, (size_t)(comma - s));
    buf[comma - s] = 0;
    if (parse_int("--static (batch)", buf, 1, b) || parse_int("--static (length)", comma + 1, 1, l))
        return -1;
    return 0;
}

/* Options shared by both models; returns 1 if handled, -1 on error, 0 if not ours. */
struct common_opts {
    oq_attn_format format;
    oq_mask_form mask;
    oq_dtype dtype;
    int64_t sb, sl;
    const char *output;
    int force;
};

enum {
    OPT_FORMAT = 256, OPT_MASK, OPT_DTYPE, OPT_STATIC, OPT_FORCE, OPT_HEADS, OPT_KV_HEADS,
    OPT_HEAD_DIM, OPT_LAYOUT, OPT_ELU, OPT_UNMASKED, OPT_FEATURES, OPT_WIDTH, OPT_LAYERS, OPT_FFN,
    OPT_CLASSES, OPT_REG, OPT_SEED, OPT_WEIGHTS, OPT_SAVE
};

/* Passes through `v`, the parse of optarg into one of a fixed set (< 0: none of them),
 * saying which values `opt` takes when it is none. */
static int choice(int v, const char *opt, const char *choices)
{
    if (v < 0) fprintf(stderr, "ortqual export: %s '%s': use %s\n", opt, optarg, choices);
    return v;
}

static int common_opt(int c, struct common_opts *o)
{
    int v;
    switch (c) {
    case OPT_FORMAT:
        v = choice(oq_attn_format_parse(optarg), "--format", "decomposed, attention23 or attention24");
        if (v < 0) return -1;
        o->format = (oq_attn_format)v;
        return 1;
    case OPT_MASK:
        v = choice(oq_mask_form_parse(optarg), "--mask", "auto, none, additive, bool or seqlen");
        if (v < 0) return -1;
        o->mask = (oq_mask_form)v;
        return 1;
    case OPT_DTYPE:
        o->dtype = oq_dtype_parse(optarg);
        v = o->dtype == OQ_DTYPE_FLOAT32 || o->dtype == OQ_DTYPE_FLOAT16 ? 0 : -1;
        return choice(v, "--attention-dtype", "float32 or float16") < 0 ? -1 : 1;
    case OPT_STATIC:
        return parse_static(optarg, &o->sb, &o->sl) ? -1 : 1;
    case 'o':
        o->output = optarg;
        return 1;
    case OPT_FORCE:
        o->force = 1;
        return 1;
    }
    return 0;
}

#define COMMON_LONGOPTS                                                                     \
    {"format", required_argument, 0, OPT_FORMAT}, {"mask", required_argument, 0, OPT_MASK}, \
        {"attention-dtype", required_argument, 0, OPT_DTYPE},                               \
        {"static", required_argument, 0, OPT_STATIC},                                       \
        {"output", required_argument, 0, 'o'}, {"force", no_argument, 0, OPT_FORCE},        \
        {"help", no_argument, 0, 'h'}

static int bad_option(char **argv)
{
    fprintf(stderr, "ortqual export: unknown or incomplete option '%s' (see --help)\n",
            argv[optind - 1]);
    return OQ_EXIT_USAGE;
}

static int finish(oq_graph *g, const struct common_opts *o, const char *what)
{
    oq_err err = {0};
    oq_status s = oq_graph_write(g, o->output, o->force, &err);
    size_t nodes = oq_graph_node_count(g);
    oq_graph_free(g);
    if (s) {
        fprintf(stderr, "ortqual export: %s%s\n", err.msg,
                s == OQ_ERR_IO && !o->force ? " (use --force to replace it)" : "");
        return s == OQ_ERR_IO ? OQ_EXIT_USAGE : OQ_EXIT_RUNTIME;
    }
    printf("wrote %s: %s, %s, %zu nodes\n", o->output, what, oq_attn_format_name(o->format), nodes);
    return OQ_EXIT_OK;
}

/* After the options: no operands, and an output path. */
static int check_rest(int argc, char **argv, const char *model, const struct common_opts *o)
{
    if (optind < argc) {
        fprintf(stderr, "ortqual export %s: unexpected argument '%s'\n", model, argv[optind]);
        return -1;
    }
    if (o->output) return 0;
    fprintf(stderr, "ortqual export: -o/--output MODEL.onnx is required\n");
    return -1;
}

static int export_sdpa(int argc, char **argv)
{
    static const struct option longopts[] = {
        COMMON_LONGOPTS,
        {"heads", required_argument, 0, OPT_HEADS},
        {"kv-heads", required_argument, 0, OPT_KV_HEADS},
        {"head-dim", required_argument, 0, OPT_HEAD_DIM},
        {"layout", required_argument, 0, OPT_LAYOUT},
        {"unmasked", no_argument, 0, OPT_UNMASKED},
        {0, 0, 0, 0}};
    oq_sdpa_config c;
    oq_sdpa_config_default(&c);
    struct common_opts o = {OQ_ATTN_DECOMPOSED, OQ_MASK_AUTO, OQ_DTYPE_FLOAT32, 0, 0, NULL, 0};
    int64_t v, kv = 0;
    int ch;
    opterr = 0;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        int r = common_opt(ch, &o);
        if (r < 0) return OQ_EXIT_USAGE;
        if (r) continue;
        switch (ch) {
        case 'h': usage_sdpa(stdout); return OQ_EXIT_OK;
        case OPT_HEADS: if (parse_int("--heads", optarg, 1, &v)) return OQ_EXIT_USAGE; c.heads = (int32_t)v; break;
        case OPT_KV_HEADS: if (parse_int("--kv-heads", optarg, 1, &kv)) return OQ_EXIT_USAGE; break;
        case OPT_HEAD_DIM: if (parse_int("--head-dim", optarg, 1, &v)) return OQ_EXIT_USAGE; c.head_dim = (int32_t)v; break;
        case OPT_LAYOUT: if (parse_int("--layout", optarg, 0, &v)) return OQ_EXIT_USAGE; c.layout = (int32_t)v; break;
        case OPT_UNMASKED: o.mask = OQ_MASK_NONE; break;
        default: return bad_option(argv);
        }
    }
    if (check_rest(argc, argv, "sdpa", &o)) return OQ_EXIT_USAGE;
    c.kv_heads = kv ? (int32_t)kv : c.heads;
    c.format = o.format;
    c.mask = o.mask;
    c.attention_dtype = o.dtype;
    c.static_batch = o.sb;
    c.static_seq = o.sl;
    oq_graph *g;
    oq_err err = {0};
    if (oq_export_sdpa(&c, &g, &err)) {
        fprintf(stderr, "ortqual export sdpa: %s\n", err.msg);
        return err.status == OQ_ERR_INVALID_ARG ? OQ_EXIT_USAGE : OQ_EXIT_RUNTIME;
    }
    return finish(g, &o, "sdpa");
}

static int export_encoder(int argc, char **argv)
{
    static const struct option longopts[] = {
        COMMON_LONGOPTS,
        {"features", required_argument, 0, OPT_FEATURES},
        {"width", required_argument, 0, OPT_WIDTH},
        {"layers", required_argument, 0, OPT_LAYERS},
        {"heads", required_argument, 0, OPT_HEADS},
        {"ffn-width", required_argument, 0, OPT_FFN},
        {"classes", required_argument, 0, OPT_CLASSES},
        {"regression-targets", required_argument, 0, OPT_REG},
        {"seed", required_argument, 0, OPT_SEED},
        {"weights", required_argument, 0, OPT_WEIGHTS},
        {"save-weights", required_argument, 0, OPT_SAVE},
        {"elu", required_argument, 0, OPT_ELU},
        {0, 0, 0, 0}};
    oq_encoder_config c;
    oq_encoder_config_default(&c);
    struct common_opts o = {OQ_ATTN_DECOMPOSED, OQ_MASK_AUTO, OQ_DTYPE_FLOAT32, 0, 0, NULL, 0};
    const char *weights = NULL, *save = NULL;
    int64_t v, seed = 0;
    int shape_opts = 0, ch, elu_op = 0;
    opterr = 0;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        int r = common_opt(ch, &o);
        if (r < 0) return OQ_EXIT_USAGE;
        if (r) continue;
        int32_t *field = NULL;
        const char *name = NULL;
        int64_t lo = 1;
        switch (ch) {
        case 'h': usage_encoder(stdout); return OQ_EXIT_OK;
        case OPT_FEATURES: field = &c.features; name = "--features"; break;
        case OPT_WIDTH: field = &c.width; name = "--width"; break;
        case OPT_LAYERS: field = &c.layers; name = "--layers"; lo = 0; break;
        case OPT_HEADS: field = &c.heads; name = "--heads"; break;
        case OPT_FFN: field = &c.ffn_width; name = "--ffn-width"; break;
        case OPT_CLASSES: field = &c.outputs[0].dim; name = "--classes"; break;
        case OPT_REG: field = &c.outputs[1].dim; name = "--regression-targets"; break;
        case OPT_SEED: if (parse_int("--seed", optarg, 0, &seed)) return OQ_EXIT_USAGE; continue;
        case OPT_WEIGHTS: weights = optarg; continue;
        case OPT_SAVE: save = optarg; continue;
        case OPT_ELU:
            if (strcmp(optarg, "op") && strcmp(optarg, "decomposed")) {
                fprintf(stderr, "ortqual export encoder: --elu '%s': use decomposed or op\n", optarg);
                return OQ_EXIT_USAGE;
            }
            elu_op = !strcmp(optarg, "op");
            continue;
        default: return bad_option(argv);
        }
        if (parse_int(name, optarg, lo, &v)) return OQ_EXIT_USAGE;
        *field = (int32_t)v;
        if (ch != OPT_HEADS) shape_opts = 1;
    }
    if (check_rest(argc, argv, "encoder", &o)) return OQ_EXIT_USAGE;
    if (weights && shape_opts) {
        fprintf(stderr, "ortqual export encoder: --weights takes the sizes from the file; drop "
                        "--features/--width/--layers/--ffn-width/--classes/--regression-targets\n");
        return OQ_EXIT_USAGE;
    }
    if (save && !o.force && access(o.output, F_OK) == 0) {
        /* Refuse before writing the weights, so a refusal leaves no half result. */
        fprintf(stderr, "ortqual export: %s: exists (not overwritten) (use --force to replace it)\n",
                o.output);
        return OQ_EXIT_USAGE;
    }
    oq_err err = {0};
    oq_encoder_weights *w = NULL;
    oq_status s = weights ? oq_encoder_weights_load(weights, c.heads, &w, &err)
                          : oq_encoder_weights_random(&c, (uint64_t)seed, &w, &err);
    if (s) {
        fprintf(stderr, "ortqual export encoder: %s\n", err.msg);
        return s == OQ_ERR_NOMEM ? OQ_EXIT_RUNTIME : OQ_EXIT_USAGE;
    }
    oq_encoder_export x = {o.format, o.mask, o.dtype, o.sb, o.sl, elu_op};
    oq_graph *g = NULL;
    if ((s = oq_export_encoder(w, &x, &g, &err)) == OQ_OK && save)
        s = oq_encoder_weights_save(w, save, o.force, &err);
    oq_encoder_weights_free(w);
    if (s) {
        oq_graph_free(g);
        fprintf(stderr, "ortqual export encoder: %s\n", err.msg);
        return s == OQ_ERR_INVALID_ARG || s == OQ_ERR_IO ? OQ_EXIT_USAGE : OQ_EXIT_RUNTIME;
    }
    return finish(g, &o, "encoder");
}

int cmd_export(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage_top(argc < 2 ? stderr : stdout);
        return argc < 2 ? OQ_EXIT_USAGE : OQ_EXIT_OK;
    }
    if (!strcmp(argv[1], "sdpa")) return export_sdpa(argc - 1, argv + 1);
    if (!strcmp(argv[1], "encoder")) return export_encoder(argc - 1, argv + 1);
    fprintf(stderr, "ortqual export: '%s' is not a model (use sdpa or encoder)\n", argv[1]);
    return OQ_EXIT_USAGE;
}
