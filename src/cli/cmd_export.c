/* ortqual export sdpa|encoder: write attention models as ONNX files. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

static const char sdpa_head[] =
    "usage: ortqual export sdpa [options] -o MODEL.onnx\n"
    "\n"
    "Attention only: inputs query, key, value (float32) and mask [B,L] (float32 1/0, a\n"
    "valid prefix then padding), output 'output' in the query's layout. Padded keys are\n"
    "excluded, padded query rows of the output are exact zeros.\n";

static const char sdpa_foot[] =
    "\nexamples:\n"
    "  ortqual export sdpa --format attention24 --attention-dtype float16 -o a24.onnx\n"
    "  ortqual export sdpa --heads 8 --kv-heads 2 --layout 3 --static 2,128 -o gqa.onnx\n";

static const char encoder_head[] =
    "usage: ortqual export encoder [options] -o MODEL.onnx\n"
    "\n"
    "A particle-flow-style transformer: inputs features [B,L,F] (float32) and mask [B,L]\n"
    "(float32 1/0, a valid prefix then padding); outputs 'cls' [B,L,classes] and 'reg'\n"
    "[B,L,regression-targets]. Padded features are sanitized, padded keys excluded from\n"
    "every attention, and both outputs are exact zeros on padding. Architecture and\n"
    "weight names: docs/export.md.\n";

static const char encoder_foot[] =
    "\nexamples:\n"
    "  ortqual export encoder --seed 1 --save-weights w.npz -o enc_dec.onnx\n"
    "  ortqual export encoder --weights w.npz --heads 4 --format attention24 -o enc_a24.onnx\n";

/* The options both models take. */
struct common_opts {
    oq_attn_format format;
    oq_mask_form mask;
    oq_dtype dtype;
    int64_t sb, sl;
    const char *output;
    int force;
    const char *mask_arg; /* --mask as given (NULL: not given) */
    int unmasked;         /* --unmasked (sdpa) */
    int no_mask;          /* the model may have no mask input: --mask none (sdpa) */
};

/* `v`, the parse of `arg` into one of a fixed set (< 0: none of them), saying which values
 * --`opt` takes when it is none. */
static int choice(int v, const char *opt, const char *arg, const char *choices)
{
    if (v < 0) fprintf(stderr, "ortqual export: --%s '%s': use %s\n", opt, arg, choices);
    return v;
}

/* Values of --format and --mask, named by the library's tables, for the help ("a | b | c") and
 * the error ("a, b or c") alike: the help listed four masks where the parser took five. */
enum { CHOICES_HELP, CHOICES_ERROR };
static const char *format_name(int v) { return oq_attn_format_name((oq_attn_format)v); }
static const char *mask_name(int v) { return oq_mask_form_name((oq_mask_form)v); }

/* The names of lo..hi but `skip` (-1: none; below hi) into buf. */
static const char *choices(char *buf, size_t n, const char *(*name)(int), int lo, int hi, int skip, int style)
{
    size_t used = 0;
    buf[0] = 0;
    for (int v = lo; v <= hi && used < n; v++) {
        if (v == skip) continue;
        const char *sep = !used ? "" : style == CHOICES_HELP ? " | " : v == hi ? " or " : ", ";
        used += (size_t)snprintf(buf + used, n - used, "%s%s", sep, name(v));
    }
    return buf;
}

static const char *mask_choices(char *buf, size_t n, int no_mask, int style)
{
    return choices(buf, n, mask_name, OQ_MASK_AUTO, OQ_MASK_SEQLEN, no_mask ? -1 : OQ_MASK_NONE, style);
}

static const char *format_choices(char *buf, size_t n, int style)
{
    return choices(buf, n, format_name, OQ_ATTN_DECOMPOSED, OQ_ATTN_ATTENTION24, -1, style);
}

static int set_format(const oq_opt *opt, const char *arg)
{
    struct common_opts *o = opt->ctx;
    char list[128];
    int v = choice(oq_attn_format_parse(arg), opt->name, arg, format_choices(list, sizeof list, CHOICES_ERROR));
    if (v >= 0) o->format = (oq_attn_format)v;
    return v < 0 ? -1 : 0;
}

static int set_mask(const oq_opt *opt, const char *arg)
{
    struct common_opts *o = opt->ctx;
    char list[128];
    int v = oq_mask_form_parse(arg);
    /* the encoder always takes a mask: none is the library's to refuse, with the reason */
    choice(v, opt->name, arg, mask_choices(list, sizeof list, o->no_mask, CHOICES_ERROR));
    if (v >= 0) o->mask = (oq_mask_form)v;
    if (v >= 0) o->mask_arg = arg;
    return v < 0 ? -1 : 0;
}

/* --unmasked: no mask input, no padding (resolved with --mask by unmasked_mask). */
static int set_unmasked(const oq_opt *opt, const char *arg)
{
    (void)arg;
    ((struct common_opts *)opt->ctx)->unmasked = 1;
    return 0;
}

/* --unmasked is --mask none: with another --mask the two contradict each other (whichever came
 * last used to win, and the model got a mask input despite --unmasked). */
static int unmasked_mask(struct common_opts *o)
{
    if (!o->unmasked) return 0;
    if (o->mask_arg && o->mask != OQ_MASK_NONE) {
        fprintf(stderr, "ortqual export sdpa: --unmasked (no mask input) contradicts --mask %s: give one of them\n",
                o->mask_arg);
        return -1;
    }
    o->mask = OQ_MASK_NONE;
    return 0;
}

static int set_dtype(const oq_opt *opt, const char *arg)
{
    struct common_opts *o = opt->ctx;
    o->dtype = oq_dtype_parse(arg);
    int ok = o->dtype == OQ_DTYPE_FLOAT32 || o->dtype == OQ_DTYPE_FLOAT16;
    return choice(ok ? 0 : -1, opt->name, arg, "float32 or float16");
}

/* Export's sizes fit an int32 attribute. */
static int parse_int(const char *opt, const char *s, int64_t lo, int64_t *out)
{
    return oq_cli_parse_int("export", opt, s, lo, INT32_MAX, out);
}

static int set_static(const oq_opt *opt, const char *s)
{
    struct common_opts *o = opt->ctx;
    const char *comma = strchr(s, ',');
    char buf[64];
    if (!comma || (size_t)(comma - s) >= sizeof buf) {
        fprintf(stderr, "ortqual export: --static '%s': expected B,L (e.g. 2,128)\n", s);
        return -1;
    }
    memcpy(buf, s, (size_t)(comma - s));
    buf[comma - s] = 0;
    return parse_int("--static (batch)", buf, 1, &o->sb) || parse_int("--static (length)", comma + 1, 1, &o->sl)
               ? -1 : 0;
}

/* A size into the int32 at ptr, at least o->ival; a shape option also sets the flag at ctx. */
static int set_size(const oq_opt *opt, const char *arg)
{
    char name[64];
    int64_t v;
    snprintf(name, sizeof name, "--%s", opt->name);
    if (parse_int(name, arg, opt->ival, &v)) return -1;
    *(int32_t *)opt->ptr = (int32_t)v;
    if (opt->ctx) *(int *)opt->ctx = 1;
    return 0;
}

#define SIZE_OPT(n, a, field, lo, flag, h) {OQ_OPTK_CALLBACK, (n), 0, (a), (h), (field), 0, (lo), 0, set_size, (flag)}

/* The help of --format and --mask, their values from the library's tables. */
struct common_help {
    char format[160], mask[384];
};

static void common_help(struct common_help *h, int no_mask)
{
    char list[128];
    snprintf(h->format, sizeof h->format, "%s (default decomposed)", format_choices(list, sizeof list, CHOICES_HELP));
    snprintf(h->mask, sizeof h->mask, "%s (default auto:\nadditive for decomposed and attention23, seqlen for\n%s",
             mask_choices(list, sizeof list, no_mask, CHOICES_HELP),
             no_mask ? "attention24); none: no mask input (as --unmasked); bool\nbuilds a boolean attn_mask, the form "
                       "that routes to MATH\non CUDA"
                     : "attention24); bool builds a boolean attn_mask, the form\nthat routes to MATH on CUDA");
}

#define COMMON_OPTS(o, h)                                                                             \
    OQ_OPT_CALLBACK("format", "F", set_format, (o), (h)->format),                                      \
    OQ_OPT_CALLBACK("mask", "M", set_mask, (o), (h)->mask),                                            \
    OQ_OPT_CALLBACK("attention-dtype", "T", set_dtype, (o),                                             \
                    "float32 | float16 (default float32): float16 casts around the\n"                  \
                    "attention only, public inputs and outputs stay float32"),                         \
    OQ_OPT_CALLBACK("static", "B,L", set_static, (o), "fixed batch size and length (default: dynamic 'batch', 'seq')"), \
    {OQ_OPTK_STRING, "output", 'o', "PATH", "the model file to write (atomically)", &(o)->output},      \
    OQ_OPT_FLAG("force", &(o)->force, "replace PATH if it exists (refused otherwise)")

static int finish(oq_graph *g, const struct common_opts *o, const char *what)
{
    oq_err err = {0};
    oq_status s = oq_graph_write(g, o->output, o->force, &err);
    size_t nodes = oq_graph_node_count(g);
    oq_graph_free(g);
    if (s) {
        fprintf(stderr, "ortqual export: %s%s\n", err.msg,
                s == OQ_ERR_IO && !o->force ? " (use --force to replace it)" : "");
        return oq_cli_exit_of(s);
    }
    printf("wrote %s: %s, %s, %zu nodes\n", oq_cli_shown(o->output), what, oq_attn_format_name(o->format), nodes);
    return OQ_EXIT_OK;
}

/* Parses with the model's table; 0 to go on, 1 after --help, -1 after an error. */
static int parse(const char *name, const char *head, const char *foot, const oq_opt *opts, int argc, char **argv,
                 const struct common_opts *o)
{
    const oq_cli_command c = {name, head, foot, opts, 0, "unknown or incomplete option '%s'"};
    int rc = oq_cli_parse(&c, argc, argv, NULL);
    if (rc) return rc;
    if (!o->output) {
        fprintf(stderr, "ortqual export: -o/--output MODEL.onnx is required\n");
        return -1;
    }
    /* its folder checked before the model is built, a usage error (exit 2); an existing file, or
     * a folder that cannot be written, is the write's to say (exit 3) */
    oq_err err = OQ_ERR_INIT;
    if (oq_check_output_path(o->output, 1, &err) != OQ_ERR_INVALID_ARG) return 0;
    oq_cli_error_in("export", "-o: %s", err.msg);
    return -1;
}

static int set_io_dtype(const oq_opt *opt, const char *arg)
{
    oq_dtype t = oq_dtype_parse(arg);
    if (t != OQ_DTYPE_FLOAT32 && t != OQ_DTYPE_FLOAT16) {
        fprintf(stderr, "ortqual export sdpa: --io-dtype '%s': use float32 or float16\n", arg);
        return -1;
    }
    *(oq_dtype *)opt->ctx = t;
    return 0;
}

static int export_sdpa(int argc, char **argv)
{
    oq_sdpa_config c;
    oq_sdpa_config_default(&c);
    struct common_opts o = {OQ_ATTN_DECOMPOSED, OQ_MASK_AUTO, OQ_DTYPE_FLOAT32, 0, 0, NULL, 0, .no_mask = 1};
    struct common_help help;
    common_help(&help, o.no_mask);
    int32_t kv = 0;
    const oq_opt opts[] = {
        OQ_OPT_GROUP("options:"),
        SIZE_OPT("heads", "H", &c.heads, 1, NULL, "query heads (default 4)"),
        SIZE_OPT("kv-heads", "G", &kv, 1, NULL, "key/value heads, must divide H (default H; fewer = GQA)"),
        SIZE_OPT("head-dim", "D", &c.head_dim, 1, NULL, "head size (default 16)"),
        SIZE_OPT("layout", "3|4", &c.layout, 0, NULL, "3: [B,L,H*D]; 4: [B,H,L,D] (default 4)"),
        OQ_OPT_CALLBACK("unmasked", NULL, set_unmasked, &o,
                        "no mask input, no padding (same as --mask none; another --mask\n"
                        "with it is refused)"),
        OQ_OPT_CALLBACK("io-dtype", "T", set_io_dtype, &c.io_dtype,
                        "float32 | float16 (default float32): float16 inputs and output\n"
                        "(with --attention-dtype float16 and --mask none: the attention\n"
                        "alone, no Cast, as PyTorch's fp16 SDPA is timed)"),
        COMMON_OPTS(&o, &help),
        OQ_OPT_END};
    int rc = parse("export sdpa", sdpa_head, sdpa_foot, opts, argc, argv, &o);
    if (rc) return rc > 0 ? OQ_EXIT_OK : OQ_EXIT_USAGE;
    if (unmasked_mask(&o)) return OQ_EXIT_USAGE;
    c.kv_heads = kv ? kv : c.heads;
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

static int set_elu(const oq_opt *opt, const char *arg)
{
    if (strcmp(arg, "op") && strcmp(arg, "decomposed")) {
        fprintf(stderr, "ortqual export encoder: --elu '%s': use decomposed or op\n", arg);
        return -1;
    }
    *(int *)opt->ctx = !strcmp(arg, "op");
    return 0;
}

/* The real path of `path`'s folder, then its last component: two spellings of one file
 * ("w.onnx", "./w.onnx") compare equal whether or not the file exists yet. */
static int canonical(const char *path, char *out, size_t n)
{
    char d[PATH_MAX], b[PATH_MAX], real[PATH_MAX];
    snprintf(d, sizeof d, "%s", path);
    snprintf(b, sizeof b, "%s", path);
    if (!realpath(dirname(d), real)) return -1;
    return snprintf(out, n, "%s/%s", real, basename(b)) < (int)n ? 0 : -1;
}

/* -o and --save-weights naming one file: the weights would be replaced by the model (or,
 * without --force, written and then the model refused). */
static int same_output(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char ca[PATH_MAX + 256], cb[PATH_MAX + 256];
    if (canonical(a, ca, sizeof ca) || canonical(b, cb, sizeof cb)) return !strcmp(a, b);
    return !strcmp(ca, cb);
}

static int export_encoder(int argc, char **argv)
{
    oq_encoder_config c;
    oq_encoder_config_default(&c);
    struct common_opts o = {OQ_ATTN_DECOMPOSED, OQ_MASK_AUTO, OQ_DTYPE_FLOAT32, 0, 0, NULL, 0};
    struct common_help help;
    common_help(&help, o.no_mask);
    const char *weights = NULL, *save = NULL;
    uint64_t seed = 0;
    int shape_opts = 0, elu_op = 0;
    const oq_opt opts[] = {
        OQ_OPT_GROUP("options:"),
        SIZE_OPT("features", "F", &c.features, 1, &shape_opts, "input features per element (default 8)"),
        SIZE_OPT("num-features", "F", &c.features, 1, &shape_opts, "the same, by validate's name for it"),
        SIZE_OPT("width", "W", &c.width, 1, &shape_opts, "model width (default 32)"),
        SIZE_OPT("layers", "N", &c.layers, 0, &shape_opts, "pre-LayerNorm self-attention blocks (default 2)"),
        SIZE_OPT("heads", "H", &c.heads, 1, NULL, "attention heads, must divide W (default 4)"),
        SIZE_OPT("ffn-width", "FF", &c.ffn_width, 1, &shape_opts, "feed-forward hidden width (default 64)"),
        SIZE_OPT("classes", "K", &c.outputs[0].dim, 1, &shape_opts, "width of the 'cls' head (default 6)"),
        SIZE_OPT("regression-targets", "K", &c.outputs[1].dim, 1, &shape_opts, "width of the 'reg' head (default 4)"),
        OQ_OPT_NUMBER("seed", "S", &seed, 0, 1LL << 40,
                      "random weights from this seed, 0..2^40 as validate's\n--weights-seed (default 0)"),
        OQ_OPT_STRING("weights", "W.npz", &weights,
                      "weights from an npz instead (shapes give F, W, N, FF and\n"
                      "the heads; --heads is still needed)"),
        OQ_OPT_STRING("save-weights", "W.npz", &save, "also write the weights used (atomically; --force applies)"),
        OQ_OPT_CALLBACK("elu", "decomposed|op", set_elu, &elu_op,
                        "ELU from standard ops (default), or the ONNX Elu operator,\n"
                        "which ORT 1.29 runs on CPU inside a CUDA session (Elu-22\n"
                        "has no CUDA kernel): the case --require-full-gpu catches"),
        COMMON_OPTS(&o, &help),
        OQ_OPT_END};
    int rc = parse("export encoder", encoder_head, encoder_foot, opts, argc, argv, &o);
    if (rc) return rc > 0 ? OQ_EXIT_OK : OQ_EXIT_USAGE;
    if (weights && shape_opts) {
        fprintf(stderr, "ortqual export encoder: --weights takes the sizes from the file; drop "
                        "--features/--width/--layers/--ffn-width/--classes/--regression-targets\n");
        return OQ_EXIT_USAGE;
    }
    if (save && same_output(save, o.output)) {
        fprintf(stderr, "ortqual export encoder: --save-weights %s and -o %s name the same file\n", oq_cli_shown(save), oq_cli_shown(o.output));
        return OQ_EXIT_USAGE;
    }
    if (save && !o.force && access(o.output, F_OK) == 0) {
        /* Refuse before writing the weights, so a refusal leaves no half result. */
        fprintf(stderr, "ortqual export: %s: exists (not overwritten) (use --force to replace it)\n",
                oq_cli_shown(o.output));
        return OQ_EXIT_USAGE;
    }
    oq_err err = {0};
    oq_encoder_weights *w = NULL;
    oq_status s = weights ? oq_encoder_weights_load(weights, c.heads, &w, &err)
                          : oq_encoder_weights_random(&c, seed, &w, &err);
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
