/* ortqual convert IN.onnx -o OUT.onnx [passes]: rewrite a PyTorch export into the form ORT
 * runs fast (fused Attention-24, nonpad_kv_seqlen, fp16 attention), checked before written. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ortqual/convert.h"
#include "ortqual/npz.h"
#include "ortqual/validate.h"

const char cmd_convert_summary[] = "rewrite a PyTorch export into fused Attention-24 (checked before written)";

static const char head[] =
"usage: ortqual convert IN.onnx -o OUT.onnx [passes] [check options]\n"
"       ortqual convert IN.onnx --plan [passes]\n"
"\n"
"On ORT's CUDA EP flash attention runs only for an ONNX Attention-24 node with fp16 Q/K/V\n"
"and the padding given as nonpad_kv_seqlen. torch.onnx.export never writes that: at opsets\n"
"17-20 it writes decomposed chains (MatMul, Mul, Add/Where, Softmax, MatMul), at opset 23\n"
"an Attention with a bool attn_mask [B,1,1,L] that ORT 1.29-1.31 refuse to run. The passes\n"
"rewrite one into the other; each can be chosen alone. Flash also needs a head size that\n"
"is a multiple of 8 (at most 256): --pad-head-size pads it (on by default with\n"
"--attention-dtype and --flash); a head size left as it is gets a \"cuda note\" line naming\n"
"each Attention node that will miss flash for it, with the fix.\n"
"A model whose weights are in an external-data file (torch.onnx.export's default,\n"
"model.onnx beside model.onnx.data) converts to a pair: OUT.onnx and OUT.onnx.data.\n";

static const char foot[] =
"\n"
"exit status: 0 written (or planned), 1 the check failed or a rewrite was refused (nothing\n"
"written), 2 usage or input error (the model, an option, or an --inputs batch that does not fit\n"
"the model: checked as validate and replay check theirs, before any work), 3 runtime error.\n"
"\n"
"examples:\n"
"  ortqual convert torch_op18.onnx -o fast.onnx --flash      # = --fuse --mask-to-seqlen --attention-dtype fp16 --opset 24\n"
"  ortqual convert torch_op23.onnx -o fast.onnx --flash --inputs io.npz --expected io.npz\n"
"  ortqual convert torch_op18.onnx -o fast.onnx --flash --inputs 'inputs_*.npz' --expected 'outputs_*.npz'\n"
"  ortqual convert torch_op23.onnx -o runs.onnx --expand-mask      # what ORT 1.29 refused now runs\n"
"  ortqual convert torch_op18.onnx --plan --fuse --mask-to-seqlen\n"
"  ortqual convert kiai_op18.onnx -o fast.onnx --flash --freeze all\n"
"      # every weight exported as an input with a default (keep_initializers_as_inputs=True)\n"
"  ortqual convert mlpf_op18.onnx -o fast.onnx --flash\n"
"      # heads of 12: 'pad-head-size rewritten ... head size 12 -> 16' in the report\n"
"  ortqual convert static.onnx -o fast.onnx --flash --seq-axis y=2   # y [2,4,4,2]: heads = length\n";

struct convert_args {
    oq_convert_opts o;
    struct oq_cli_runtime cr;
    const char *in, *out, *dtype;
    int flash, fuse, seqlen, expand, lower, elu, pad_head;
    oq_cli_list inputs, expected, tolerances, given, freeze;
    char *freeze_text;       /* --freeze joined with commas, cut into the names below */
    const char **frozen;
    glob_t files, expected_files; /* --inputs and --expected, expanded */
    int globbed, expected_globbed;
    char *tolerance_text;
    struct oq_cli_seq_axes seq_axes;
    int plan, force, json;
    int said; /* the error is on stderr already (ORT could not be loaded) */
};

/* The flags into the library's passes. --flash is its preset (an --opset given still chooses;
 * an --attention-dtype given replaces its float16 in check_args); with no pass at all, it is
 * what to suggest. */
static int choose_passes(struct convert_args *a)
{
    if (a->flash && a->lower) {
        oq_cli_error_in("convert", "--flash and --lower contradict: --lower removes the Attention nodes flash needs");
        return -1;
    }
    if (a->flash) oq_convert_opts_flash(&a->o);
    a->o.passes |= (a->fuse ? OQ_CONVERT_FUSE : 0) | (a->seqlen ? OQ_CONVERT_MASK_TO_SEQLEN : 0) |
                   (a->expand ? OQ_CONVERT_EXPAND_MASK : 0) | (a->lower ? OQ_CONVERT_LOWER : 0) |
                   (a->elu ? OQ_CONVERT_DECOMPOSE_ELU : 0) | (a->pad_head ? OQ_CONVERT_PAD_HEAD : 0);
    if (!a->o.passes && !a->dtype && !a->o.opset && !a->o.opset_min && !a->freeze.n) {
        oq_cli_error_in("convert", "no pass chosen: --flash for ORT's CUDA flash attention (fused "
                        "Attention-24, nonpad_kv_seqlen, fp16), or passes one by one (see --help)");
        return -1;
    }
    return 0;
}

/* --freeze all|NAME[,NAME...] (repeatable) into the library's freeze_defaults and freeze names:
 * the options joined with commas, cut in place. */
static int split_freeze(struct convert_args *a)
{
    if (oq_cli_list_join(&a->freeze, ",", &a->freeze_text)) return -1;
    char *t = a->freeze_text;
    if (!t) return 0;
    size_t len = strlen(t);
    if (!len || *t == ',' || t[len - 1] == ',' || strstr(t, ",,")) {
        oq_cli_error_in("convert", "--freeze '%s': an empty name (all, or NAME[,NAME...])", t);
        return -1;
    }
    if (!(a->frozen = calloc(len / 2 + 2, sizeof *a->frozen))) {
        oq_cli_error_in("convert", "out of memory");
        return -1;
    }
    char *save = NULL;
    for (char *name = strtok_r(t, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        if (!strcmp(name, "all")) a->o.freeze_defaults = 1;
        else a->frozen[a->o.n_freeze++] = name;
    }
    a->o.freeze = a->frozen;
    return 0;
}

/* --tolerance as the check reads it, refused before the model is read (the check comes last). */
static int check_tolerances(const char *text)
{
    oq_err e = {0};
    if (!oq_validate_check_tolerances(text, NULL, &e)) return 0;
    oq_cli_error_in("convert", "%s", e.msg);
    return -1;
}

/* --plan writes nothing and runs no check: an output or check option beside it would be dropped. */
static const oq_cli_pair plan_pairs[] = {
    {"plan", "output", "contradict: --plan writes nothing (leave out --plan to convert, check and write)"},
    {"plan", "force", "contradict: --plan writes nothing, so there is nothing to overwrite"},
    {"plan", "inputs", "contradict: --plan runs no check, so no batch would be read"},
    {"plan", "expected", "contradict: --plan runs no check, so no output would be compared"},
    {"plan", "tolerance", "contradict: --plan runs no check, so no tolerance would apply"},
    {"plan", "seed", "contradict: --plan runs no check, so no input would be generated"},
    {"plan", "seq-axis", "contradict: --plan runs no check, so no output would be compared"},
    {"plan", "ort-lib", "contradict: --plan runs no check, so ONNX Runtime is not loaded"},
};
/* ... but --mask-to-seqlen reads --mask-polarity to tell a mask's key padding, so a plan shows
 * its rewrite only with it. */
static const oq_cli_pair plan_polarity_pair = {
    "plan", "mask-polarity", "contradict: --plan runs no check and no --mask-to-seqlen, so no mask would be read"};

/* The flags and strings of the table into the library's options. */
static int check_args(struct convert_args *a)
{
    if (choose_passes(a) || split_freeze(a)) return -1;
    if (a->dtype) {
        a->o.attention_dtype = oq_dtype_parse(a->dtype);
        if (a->o.attention_dtype != OQ_DTYPE_FLOAT16 && a->o.attention_dtype != OQ_DTYPE_BFLOAT16) {
            oq_cli_error_in("convert", "--attention-dtype '%s': fp16 or bf16", a->dtype);
            return -1;
        }
    }
    if (!a->plan && !a->out) {
        oq_cli_error_in("convert", "-o OUT.onnx is required (or --plan)");
        return -1;
    }
    if (oq_cli_glob_inputs("convert", &a->inputs, &a->files, &a->globbed) ||
        oq_cli_glob_inputs("convert", &a->expected, &a->expected_files, &a->expected_globbed))
        return -1;
    if (oq_cli_tolerance_join("convert", &a->tolerances, &a->tolerance_text) || check_tolerances(a->tolerance_text)) return -1;
    a->o.tolerances = a->tolerance_text;
    a->o.seq_axes = a->seq_axes.v;
    a->o.n_seq_axes = a->seq_axes.n;
    if (oq_cli_refuse_pairs(&a->given, plan_pairs, sizeof plan_pairs / sizeof *plan_pairs)) return -1;
    if (!(a->o.passes & OQ_CONVERT_MASK_TO_SEQLEN) && oq_cli_refuse_pairs(&a->given, &plan_polarity_pair, 1)) return -1;
    a->o.mask_polarity_given = oq_cli_given(&a->given, "mask-polarity");
    size_t n_in = a->globbed ? a->files.gl_pathc : 0, n_ex = a->expected_globbed ? a->expected_files.gl_pathc : 0;
    if (n_ex && n_ex != n_in) {
        oq_cli_error_in("convert", "%zu --expected files for %zu --inputs: give one per batch", n_ex, n_in);
        return -1;
    }
    return 0;
}

/* --inputs and --expected take every operand after them, as validate's do, so `--inputs a.npz
 * IN.onnx` takes the model too: an .onnx there (no batch is one) is the model, taken back out. */
static const char *model_in_lists(struct convert_args *a)
{
    oq_cli_list *lists[2] = {&a->inputs, &a->expected};
    for (int k = 0; k < 2; k++)
        for (size_t i = lists[k]->n; i-- > 0;) {
            const char *v = lists[k]->v[i];
            size_t len = strlen(v);
            if (len <= 5 || strcmp(v + len - 5, ".onnx")) continue;
            memmove(&lists[k]->v[i], &lists[k]->v[i + 1], (lists[k]->n - i - 1) * sizeof *lists[k]->v);
            lists[k]->n--;
            return v;
        }
    return NULL;
}

static int parse(struct convert_args *a, int argc, char **argv)
{
    oq_convert_opts *o = &a->o;
    const oq_opt opts[] = {
        OQ_OPT_GROUP("passes:"),
        OQ_OPT_FLAG("flash", &a->flash,
                    "the form ORT's CUDA flash attention runs: --fuse --mask-to-seqlen\n"
                    "--attention-dtype fp16 --opset 24 (a model at opset 25 or 26 keeps\n"
                    "it; head sizes padded to a multiple of 8); --attention-dtype bf16 or\n"
                    "--opset still choose"),
        OQ_OPT_FLAG("fuse", &a->fuse,
                    "each decomposed softmax(scale*Q@K^T + mask)@V chain -> one Attention\n"
                    "(a bias beside the mask, or two additive terms, summed into one float\n"
                    "attn_mask: no flash form; several Where masks, e.g. causal and key\n"
                    "padding, become one bool attn_mask, their AND; chains that are not\n"
                    "attention, e.g. a softmax over the query axis, are left alone;\n"
                    "'ortqual inspect' shows which chains qualify)"),
        OQ_OPT_LIST("freeze", "all|NAME[,NAME...]", &a->freeze,
                    "graph inputs that are weights (keep_initializers_as_inputs=True\n"
                    "exports each weight as an input whose initializer is its default)\n"
                    "made constants first, so that --fuse folds them (it folds no value\n"
                    "a caller could feed): 'all' every input with a default, or those\n"
                    "named (one without a default is refused). Repeatable; the plan's\n"
                    "'freeze' line lists them"),
        OQ_OPT_FLAG("mask-to-seqlen", &a->seqlen,
                    "an attn_mask that is the key padding of a [B,L] input ->\n"
                    "nonpad_kv_seqlen = ReduceSum(mask) (Attention-24); a causal mask (a\n"
                    "Trilu, or a constant lower triangle of the sequence's length, sliced\n"
                    "from 0 or not) -> is_causal=1; causal AND key padding -> is_causal=1\n"
                    "alone. Exact for valid-prefix masks: the model records that contract\n"
                    "in its metadata (ortqual.mask_contract) and validate and replay\n"
                    "enforce it"),
        OQ_OPT_FLAG("expand-mask", &a->expand, "a broadcast attn_mask [..,1,L] -> [..,Lq,L], which ORT requires"),
        OQ_OPT_STRING("attention-dtype", "fp16|bf16", &a->dtype,
                      "Q, K, V cast before each Attention, the output back; the\n"
                      "rest of the model keeps its dtype"),
        OQ_OPT_FLAG("pad-head-size", &a->pad_head,
                    "an Attention whose head size is not a multiple of 8 gets Q, K, V\n"
                    "zero-padded on the head axis to the next multiple (scale kept at\n"
                    "1/sqrt(original), output cut back by a Split; exact): ORT's CUDA flash and\n"
                    "memory-efficient attention need it (e.g. 4 heads of 12 run MATH).\n"
                    "On by default with --attention-dtype (unless --lower)"),
        OQ_OPT_FLAG("no-pad-head-size", &o->keep_head_size, "no head padding unless --pad-head-size"),
        OQ_OPT_FLAG("lower", &a->lower, "each Attention -> its standard-op function body (older runtimes)"),
        OQ_OPT_FLAG("decompose-elu", &a->elu,
                    "Elu -> Where(x>0, x, exp(min(x,0))-1); on by default when the output\n"
                    "opset is >= 22 (Elu-22 has no CUDA kernel in ORT 1.29)"),
        OQ_OPT_FLAG("keep-elu", &o->keep_elu, "no Elu decomposition unless --decompose-elu"),
        OQ_OPT_NUMBER("opset", "N", &o->opset, 13, INT64_MAX,
                      "the output ai.onnx opset, 13 to 26 (the newest ONNX Runtime 1.29\n"
                      "runs); default: the lowest the passes need, 23 for Attention, 24 for\n"
                      "nonpad_kv_seqlen (--flash: at least 24), never below the model's;\n"
                      "refused, naming the node, when an operator of the model changed\n"
                      "meaning between the opsets"),
        OQ_OPT_FLAG("plan", &a->plan, "print what would change, node by node; run and write nothing\n"
                                      "(so no -o, --force or check option beside it)"),
        OQ_OPT_FLAG("allow-refused", &o->allow_refused, "write even when a requested rewrite was refused somewhere"),
        OQ_OPT_GROUP("check (every conversion is checked before it is written: the original and the converted\n"
                     "model run on ORT CPU and every output is compared on the valid elements; when ORT refuses\n"
                     "the original for its broadcast mask, its --lower'ed form is the reference (its\n"
                     "mask expanded for --lower); any other refusal is exit 3, but a failure on\n"
                     "generated inputs is exit 2: give --inputs):"),
        {OQ_OPTK_LIST, "inputs", 0, "FILE...",
         "batches (.npz, a member per model input, by name): every file after\n"
         "it up to the next option, a quoted glob expanded here; repeatable.\n"
         "Each is checked against the model's inputs as validate checks its\n"
         "own before anything runs (exit 2). Default: two generated batches\n"
         "with valid-prefix masks, each named dim sized alone (a model that\n"
         "relates them, as a KV cache's total = past + new, needs --inputs)",
         &a->inputs, 0, 0, 0, NULL, NULL, OQ_OPT_MANY},
        {OQ_OPTK_LIST, "expected", 0, "FILE...",
         "PyTorch's outputs, one .npz per --inputs file in the same order\n"
         "(taken like --inputs)",
         &a->expected, 0, 0, 0, NULL, NULL, OQ_OPT_MANY},
        OQ_OPT_STRING("mask", "NAME", &o->mask_input,
                      "the [B, L] mask input, bool, int32/int64 or float (default: the\n"
                      "one the masks derive from; a model's recorded contract wins)"),
        OQ_CLI_MASK_POLARITY_OPT(&o->mask_polarity),
        OQ_OPT_LIST("tolerance", "SPEC", &a->tolerances,
                    "'rtol=..,atol=..', a preset (fp32, fp16, bf16) or 'OUT:SPEC';\n"
                    "repeatable (default: the preset of the attention dtype)"),
        OQ_CLI_SEQ_AXIS_OPT(&a->seq_axes),
        OQ_OPT_NUMBER("seed", "N", &o->seed, 0, INT64_MAX, "generated inputs (1)"),
        OQ_OPT_CALLBACK("ort-lib", "PATH", oq_cli_runtime_string, &a->cr, OQ_CLI_ORT_LIB_HELP),
        OQ_OPT_GROUP("output:"),
        {OQ_OPTK_STRING, "output", 'o', "OUT.onnx", "the converted model (written atomically)", &a->out},
        OQ_OPT_FLAG("force", &a->force, "overwrite an existing OUT.onnx"),
        OQ_OPT_FLAG("json", &a->json, "the report as JSON on stdout"),
        OQ_OPT_END};
    const oq_cli_command c = {"convert", head, foot, opts, OQ_CLI_OPERANDS, NULL, &a->given};
    int first = argc;
    int rc = oq_cli_parse(&c, argc, argv, &first);
    if (rc) return rc;
    a->in = first == argc - 1 ? argv[first] : first == argc ? model_in_lists(a) : NULL;
    if (!a->in) {
        oq_cli_error_in("convert", "expected one IN.onnx (see --help)");
        return -1;
    }
    return check_args(a);
}

static int exit_for(oq_status st)
{
    switch (st) {
    case OQ_OK: return OQ_EXIT_OK;
    case OQ_ERR_CHECK_FAILED:
    case OQ_ERR_UNSUPPORTED: return OQ_EXIT_FAIL;
    default: return oq_cli_exit_of(st);
    }
}

/* A comparison of matched infinities alone, or of no element, says so: its max_abs 0 is no error of 0. */
static void print_not_compared(const oq_compare_result *x, const char *holder)
{
    char said[200];
    if (oq_compare_judged_nothing(x))
        printf("    output '%s': %s\n", oq_cli_shown(x->name),
               oq_compare_not_compared_str(said, sizeof said, (long long)x->num_valid, holder));
}

static void print_report(const struct convert_args *a, const oq_convert_report *r)
{
    printf("convert %s%s%s", oq_cli_shown(a->in), a->out && !a->plan ? " -> " : "", a->out && !a->plan ? oq_cli_shown(a->out) : "");
    if (r->opset_out) printf(" (opset %lld -> %lld)", (long long)r->opset_in, (long long)r->opset_out);
    printf("\n");
    for (size_t i = 0; i < r->n_steps; i++) {
        const oq_convert_step *s = &r->steps[i];
        printf("  %-16s %-10s %s%s%s\n", s->pass, s->action, oq_cli_shown(s->node), *s->node ? ": " : "", oq_cli_shown(s->detail));
    }
    if (r->reference)
        printf("check: reference = %s; %s inputs\n", oq_cli_shown(r->reference), r->generated_inputs ? "generated" : "given");
    for (size_t i = 0; i < r->n_checks; i++) {
        char line[1024];
        const oq_convert_check *c = &r->checks[i];
        printf("  batch %zu vs reference  %s\n", c->batch, oq_cli_shown(oq_compare_result_str(&c->vs_reference, line, sizeof line)));
        print_not_compared(&c->vs_reference, "the original model's");
        if (c->has_expected) {
            const oq_compare_result *x = &c->ref_vs_expected;
            printf("  batch %zu vs expected   %s\n", c->batch,
                   oq_cli_shown(oq_compare_result_str_vs(&c->vs_expected, "EXPECTED", line, sizeof line)));
            print_not_compared(&c->vs_expected, "the expected file");
            printf("  batch %zu (reference vs expected, for scale: max_abs=%.3g)\n", c->batch, x->max_abs);
        }
    }
}

/* The expanded files of an --inputs or --expected list. */
static const char *const *paths_of(const glob_t *g, int globbed, size_t *n)
{
    *n = globbed ? g->gl_pathc : 0;
    return globbed ? (const char *const *)g->gl_pathv : NULL;
}

/* Every file of paths[0..n) read into z[0..n). */
static oq_status read_all(const char *const *paths, size_t n, oq_npz **z, oq_err *err)
{
    for (size_t i = 0; i < n; i++) {
        oq_status st = oq_npz_read(paths[i], &z[i], err);
        if (st) return st;
    }
    return OQ_OK;
}

static void free_all(oq_npz **z, size_t n)
{
    for (size_t i = 0; z && i < n; i++) oq_npz_free(z[i]);
    free(z);
}

/* --json: the report of a conversion done or refused (exit 0 or 1) with the exit status and, when
 * it is not 0, the failure's line. */
static void print_json(const oq_convert_report *r, const oq_err *err, int rc)
{
    char *s = oq_convert_report_json(r);
    json_t *j = s ? json_loads(s, 0, NULL) : NULL;
    free(s);
    if (!j) {
        oq_cli_error_in("convert", "out of memory");
        return;
    }
    json_object_set_new(j, "exit_status", json_integer(rc));
    json_object_set_new(j, "error", oq_cli_json_text(rc ? err->msg : NULL));
    char *out = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (out) printf("%s\n", out), oq_cli_json_answered();
    free(out);
    json_decref(j);
}

static void print_result(const struct convert_args *a, const oq_convert_report *r, oq_status st, const oq_err *err,
                         int rc)
{
    /* an error (exit 2 or 3) is --json's ortqual-error/1 object, as in every subcommand */
    if (a->json && r && rc <= OQ_EXIT_FAIL) print_json(r, err, rc);
    else if (!a->json && r) print_report(a, r);
    if (st && !a->said) {
        /* the library cannot name the option that overwrites; bench and export say it too */
        char msg[sizeof err->msg + 48];
        snprintf(msg, sizeof msg, "%s%s", err->msg,
                 !a->force && strstr(err->msg, ": exists (not overwritten)") ? " (use --force or another -o)" : "");
        oq_cli_refuse("convert", a->json && rc > OQ_EXIT_FAIL, st, msg, rc);
    }
    else if (!a->json && a->plan) printf("plan only: nothing written\n");
    else if (!a->json && r && r->external_data) printf("written: %s (weights in %s)\n", oq_cli_shown(a->out), oq_cli_shown(r->external_data));
    else if (!a->json) printf("written: %s\n", oq_cli_shown(a->out));
}

/* Read the batches, load ORT, convert, check and write. Returns the exit status; *st and
 * err say what failed. */
static int run_convert(struct convert_args *a, oq_convert_report **r, oq_status *st, oq_err *err)
{
    size_t n_in, n_ex;
    const char *const *in_paths = paths_of(&a->files, a->globbed, &n_in);
    const char *const *ex_paths = paths_of(&a->expected_files, a->expected_globbed, &n_ex);
    oq_npz **in = calloc(n_in + 1, sizeof *in), **ex = calloc(n_ex + 1, sizeof *ex);
    oq_runtime *rt = NULL;
    int rc;
    if (!in || !ex) {
        *st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        rc = OQ_EXIT_RUNTIME;
    } else if ((*st = read_all(in_paths, n_in, in, err)) || (*st = read_all(ex_paths, n_ex, ex, err))) {
        rc = oq_cli_exit_of(*st); /* a file given is input: bad is exit 2, as in validate */
    } else if ((rc = oq_cli_runtime_open(&a->cr, &rt))) {
        *st = oq_err_set(err, OQ_ERR_RUNTIME, "ONNX Runtime could not be loaded (the reason is on stderr)");
        a->said = 1;
    } else {
        a->o.runtime = rt;
        a->o.n_batches = n_in;
        a->o.inputs = (const oq_npz *const *)in;
        a->o.expected = n_ex ? (const oq_npz *const *)ex : NULL;
        *st = oq_convert_file(a->in, a->out, a->force, &a->o, r, err);
        rc = exit_for(*st);
    }
    oq_runtime_free(rt);
    free_all(in, n_in);
    free_all(ex, n_ex);
    return rc;
}

/* The model, --mask, every --inputs batch, its --expected outputs and the --tolerance names
 * checked as validate checks its own (exit 2, naming the file and member) before anything is
 * printed, read or run; then plan, or convert. A usage or input error the passes find (an --opset
 * below what they wrote) prints no plan either: the report is printed only after the work. */
static int convert(struct convert_args *a)
{
    oq_err err = {0};
    oq_convert_report *r = NULL;
    size_t n_in, n_ex;
    const char *const *in_paths = paths_of(&a->files, a->globbed, &n_in);
    const char *const *ex_paths = paths_of(&a->expected_files, a->expected_globbed, &n_ex);
    int rc;
    oq_status st = oq_validate_check_convert_inputs(a->in, &a->o, in_paths, n_ex ? ex_paths : NULL, n_in, &err);
    if (st) rc = oq_cli_exit_of(st);
    else if (a->plan) rc = exit_for(st = oq_convert_plan(a->in, &a->o, &r, &err));
    else rc = run_convert(a, &r, &st, &err);
    if (rc == OQ_EXIT_USAGE) { /* found late (an --opset the rewrites need more than): still the only output */
        oq_convert_report_free(r);
        r = NULL;
    }
    print_result(a, r, st, &err, rc);
    oq_convert_report_free(r);
    return rc;
}

int cmd_convert(int argc, char **argv)
{
    static struct convert_args a;
    memset(&a, 0, sizeof a);
    oq_convert_opts_default(&a.o);
    int rc = parse(&a, argc, argv);
    rc = rc > 0 ? OQ_EXIT_OK : rc < 0 ? OQ_EXIT_USAGE : convert(&a);
    if (a.globbed) globfree(&a.files);
    if (a.expected_globbed) globfree(&a.expected_files);
    oq_cli_list_clear(&a.inputs);
    oq_cli_list_clear(&a.expected);
    oq_cli_list_clear(&a.tolerances);
    oq_cli_list_clear(&a.freeze);
    free(a.freeze_text);
    free(a.frozen);
    oq_cli_list_clear(&a.given);
    free(a.tolerance_text);
    oq_cli_seq_axes_clear(&a.seq_axes);
    oq_cli_runtime_clear(&a.cr);
    return rc;
}
