/* ortqual convert IN.onnx -o OUT.onnx [passes]: rewrite a PyTorch export into the form ORT
 * runs fast (fused Attention-24, nonpad_kv_seqlen, fp16 attention), checked before written. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ortqual/convert.h"
#include "ortqual/npz.h"

const char cmd_convert_summary[] = "rewrite a PyTorch export into fused Attention-24 (checked before written)";

static void usage(FILE *fp)
{
    fprintf(fp,
"usage: ortqual convert IN.onnx -o OUT.onnx [passes] [check options]\n"
"       ortqual convert IN.onnx --plan [passes]\n"
"\n"
"On ORT's CUDA EP flash attention runs only for an ONNX Attention-24 node with fp16 Q/K/V\n"
"and the padding given as nonpad_kv_seqlen. torch.onnx.export never writes that: at opsets\n"
"17-20 it writes decomposed chains (MatMul, Mul, Add/Where, Softmax, MatMul), at opset 23\n"
"an Attention with a bool attn_mask [B,1,1,L] that ORT 1.29/1.30 refuse to run. The passes\n"
"rewrite one into the other; each can be chosen alone:\n"
"\n"
"passes:\n"
"  --fuse                 each decomposed softmax(scale*Q@K^T + mask)@V chain -> one Attention\n"
"                         (chains that are not attention, e.g. a softmax over the query axis,\n"
"                         are left alone; 'ortqual inspect' shows which chains qualify)\n"
"  --mask-to-seqlen       an attn_mask that is the key padding of a [B,L] input ->\n"
"                         nonpad_kv_seqlen = ReduceSum(mask) (Attention-24); a causal mask ->\n"
"                         is_causal=1; causal AND key padding -> is_causal=1 alone. Exact for\n"
"                         valid-prefix masks: the model records that contract in its metadata\n"
"                         (ortqual.mask_contract) and validation enforces it\n"
"  --expand-mask          a broadcast attn_mask [..,1,L] -> [..,Lq,L], which ORT requires\n"
"  --attention-dtype fp16|bf16   Q, K, V cast before each Attention, the output back; the\n"
"                         rest of the model keeps its dtype\n"
"  --lower                each Attention -> its standard-op function body (older runtimes)\n"
"  --decompose-elu        Elu -> Where(x>0, x, exp(min(x,0))-1); on by default when the output\n"
"                         opset is >= 22 (Elu-22 has no CUDA kernel in ORT 1.29); --keep-elu: off\n"
"  --opset N              the output ai.onnx opset (default: the lowest the passes need, 23 for\n"
"                         Attention, 24 for nonpad_kv_seqlen); refused, naming the operator,\n"
"                         when an operator of the model changed meaning between the opsets\n"
"  --plan                 print what would change, node by node; run and write nothing\n"
"  --allow-refused        write even when a requested rewrite was refused somewhere\n"
"\n"
"check (every conversion is checked before it is written: the original and the converted\n"
"model run on ORT CPU and every output is compared on the valid elements; when ORT refuses\n"
"the original, its --lower'ed form is the reference):\n"
"  --inputs FILE.npz      a batch, members named like the model's inputs; repeatable\n"
"                         (default: two generated batches with valid-prefix masks)\n"
"  --expected FILE.npz    PyTorch's outputs for the --inputs of the same rank; repeatable\n"
"  --mask NAME            the [B,L] mask input (default: the one the masks derive from)\n"
"  --tolerance SPEC       'rtol=..,atol=..', a preset (fp32, fp16, bf16) or 'OUT:SPEC';\n"
"                         repeatable (default: the preset of the attention dtype)\n"
"  --seed N               generated inputs (1)\n"
"  --ort-lib PATH         the ONNX Runtime library of the check\n"
"  -o, --output OUT.onnx  --force (overwrite)  --json (the report as JSON on stdout)\n"
"\n"
"exit status: 0 written (or planned), 1 the check failed or a rewrite was refused (nothing\n"
"written), 2 usage or input error, 3 runtime error.\n"
"\n"
"examples:\n"
"  ortqual convert torch_op18.onnx -o fast.onnx --fuse --mask-to-seqlen --attention-dtype fp16 --opset 24\n"
"  ortqual convert torch_op23.onnx -o fast.onnx --mask-to-seqlen --attention-dtype fp16 --opset 24 \\\n"
"      --inputs io.npz --expected io.npz\n"
"  ortqual convert torch_op23.onnx -o runs.onnx --expand-mask      # what ORT 1.29 refused now runs\n"
"  ortqual convert torch_op18.onnx --plan --fuse --mask-to-seqlen\n");
}

enum {
    OPT_FUSE = 0x400, OPT_SEQLEN, OPT_EXPAND, OPT_DTYPE, OPT_LOWER, OPT_ELU, OPT_KEEP_ELU, OPT_OPSET, OPT_PLAN,
    OPT_ALLOW, OPT_INPUTS, OPT_EXPECTED, OPT_MASK, OPT_TOL, OPT_SEED, OPT_ORTLIB, OPT_FORCE, OPT_JSON
};

static const struct option longopts[] = {
    {"fuse", 0, 0, OPT_FUSE}, {"mask-to-seqlen", 0, 0, OPT_SEQLEN}, {"expand-mask", 0, 0, OPT_EXPAND},
    {"attention-dtype", 1, 0, OPT_DTYPE}, {"lower", 0, 0, OPT_LOWER}, {"decompose-elu", 0, 0, OPT_ELU},
    {"keep-elu", 0, 0, OPT_KEEP_ELU}, {"opset", 1, 0, OPT_OPSET}, {"plan", 0, 0, OPT_PLAN},
    {"allow-refused", 0, 0, OPT_ALLOW}, {"inputs", 1, 0, OPT_INPUTS}, {"expected", 1, 0, OPT_EXPECTED},
    {"mask", 1, 0, OPT_MASK}, {"tolerance", 1, 0, OPT_TOL}, {"seed", 1, 0, OPT_SEED},
    {"ort-lib", 1, 0, OPT_ORTLIB}, {"output", 1, 0, 'o'}, {"force", 0, 0, OPT_FORCE}, {"json", 0, 0, OPT_JSON},
    {"help", 0, 0, 'h'}, {0, 0, 0, 0}};

#define MAX_FILES 64

struct convert_args {
    oq_convert_opts o;
    const char *in, *out, *ort_lib;
    const char *inputs[MAX_FILES], *expected[MAX_FILES];
    size_t n_inputs, n_expected;
    char tol[4096];
    int plan, force, json;
};

static int add_file(const char *opt, const char **v, size_t *n, const char *path)
{
    if (*n == MAX_FILES) {
        fprintf(stderr, "ortqual convert: at most %d %s files\n", MAX_FILES, opt);
        return -1;
    }
    v[(*n)++] = path;
    return 0;
}

static int parse_option(struct convert_args *a, int c, const char *arg)
{
    int64_t v;
    size_t w;
    switch (c) {
    case OPT_FUSE: a->o.passes |= OQ_CONVERT_FUSE; return 0;
    case OPT_SEQLEN: a->o.passes |= OQ_CONVERT_MASK_TO_SEQLEN; return 0;
    case OPT_EXPAND: a->o.passes |= OQ_CONVERT_EXPAND_MASK; return 0;
    case OPT_LOWER: a->o.passes |= OQ_CONVERT_LOWER; return 0;
    case OPT_ELU: a->o.passes |= OQ_CONVERT_DECOMPOSE_ELU; return 0;
    case OPT_KEEP_ELU: a->o.keep_elu = 1; return 0;
    case OPT_DTYPE:
        a->o.attention_dtype = oq_dtype_parse(arg);
        if (a->o.attention_dtype == OQ_DTYPE_FLOAT16 || a->o.attention_dtype == OQ_DTYPE_BFLOAT16) return 0;
        fprintf(stderr, "ortqual convert: --attention-dtype '%s': fp16 or bf16\n", arg);
        return -1;
    case OPT_OPSET:
        if (oq_cli_parse_int("convert", "--opset", arg, 13, 24, &v)) return -1;
        a->o.opset = v;
        return 0;
    case OPT_SEED:
        if (oq_cli_parse_int("convert", "--seed", arg, 0, INT64_MAX, &v)) return -1;
        a->o.seed = (uint64_t)v;
        return 0;
    case OPT_PLAN: a->plan = 1; return 0;
    case OPT_ALLOW: a->o.allow_refused = 1; return 0;
    case OPT_INPUTS: return add_file("--inputs", a->inputs, &a->n_inputs, arg);
    case OPT_EXPECTED: return add_file("--expected", a->expected, &a->n_expected, arg);
    case OPT_MASK: a->o.mask_input = arg; return 0;
    case OPT_TOL:
        w = strlen(a->tol);
        if (w + strlen(arg) + 2 > sizeof a->tol) {
            fprintf(stderr, "ortqual convert: --tolerance: too many specs\n");
            return -1;
        }
        snprintf(a->tol + w, sizeof a->tol - w, "%s%s", w ? ";" : "", arg);
        a->o.tolerances = a->tol;
        return 0;
    case OPT_ORTLIB: a->ort_lib = arg; return 0;
    case 'o': a->out = arg; return 0;
    case OPT_FORCE: a->force = 1; return 0;
    case OPT_JSON: a->json = 1; return 0;
    default: return -1;
    }
}

static int parse(struct convert_args *a, int argc, char **argv)
{
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return 1;
        }
        if (c == '?' || c == ':') {
            fprintf(stderr, "ortqual convert: bad option '%s' (see --help)\n", argv[optind - 1]);
            return -1;
        }
        if (parse_option(a, c, optarg)) return -1;
    }
    if (optind != argc - 1) {
        fprintf(stderr, "ortqual convert: expected one IN.onnx (see --help)\n");
        return -1;
    }
    a->in = argv[optind];
    if (!a->plan && !a->out) {
        fprintf(stderr, "ortqual convert: -o OUT.onnx is required (or --plan)\n");
        return -1;
    }
    if (a->n_expected && a->n_expected != a->n_inputs) {
        fprintf(stderr, "ortqual convert: %zu --expected files for %zu --inputs: give one per batch\n",
                a->n_expected, a->n_inputs);
        return -1;
    }
    return 0;
}

static int exit_for(oq_status st)
{
    switch (st) {
    case OQ_OK: return OQ_EXIT_OK;
    case OQ_ERR_CHECK_FAILED:
    case OQ_ERR_UNSUPPORTED: return OQ_EXIT_FAIL;
    case OQ_ERR_RUNTIME:
    case OQ_ERR_NOMEM: return OQ_EXIT_RUNTIME;
    default: return OQ_EXIT_USAGE;
    }
}

static void print_report(const struct convert_args *a, const oq_convert_report *r)
{
    printf("convert %s%s%s", a->in, a->out && !a->plan ? " -> " : "", a->out && !a->plan ? a->out : "");
    if (r->opset_out) printf(" (opset %lld -> %lld)", (long long)r->opset_in, (long long)r->opset_out);
    printf("\n");
    for (size_t i = 0; i < r->n_steps; i++) {
        const oq_convert_step *s = &r->steps[i];
        printf("  %-16s %-10s %s%s%s\n", s->pass, s->action, s->node, *s->node ? ": " : "", s->detail);
    }
    if (r->reference)
        printf("check: reference = %s; %s inputs\n", r->reference, r->generated_inputs ? "generated" : "given");
    for (size_t i = 0; i < r->n_checks; i++) {
        char line[1024];
        const oq_convert_check *c = &r->checks[i];
        printf("  batch %zu vs reference  %s\n", c->batch, oq_compare_result_str(&c->vs_reference, line, sizeof line));
        if (c->has_expected) {
            printf("  batch %zu vs expected   %s\n", c->batch, oq_compare_result_str(&c->vs_expected, line, sizeof line));
            printf("  batch %zu (reference vs expected, for scale: max_abs=%.3g)\n", c->batch, c->ref_vs_expected.max_abs);
        }
    }
}

static oq_status read_all(const char *const *paths, size_t n, oq_npz **z, oq_err *err)
{
    for (size_t i = 0; i < n; i++) {
        oq_status st = oq_npz_read(paths[i], &z[i], err);
        if (st) return st;
    }
    return OQ_OK;
}

int cmd_convert(int argc, char **argv)
{
    struct convert_args a;
    memset(&a, 0, sizeof a);
    oq_convert_opts_default(&a.o);
    int rc = parse(&a, argc, argv);
    if (rc) return rc > 0 ? OQ_EXIT_OK : OQ_EXIT_USAGE;
    oq_err err = {0};
    oq_convert_report *r = NULL;
    oq_status st;
    oq_npz *in[MAX_FILES] = {0}, *ex[MAX_FILES] = {0};
    oq_runtime *rt = NULL;
    if (a.plan) {
        st = oq_convert_plan(a.in, &a.o, &r, &err);
    } else {
        st = read_all(a.inputs, a.n_inputs, in, &err);
        if (!st) st = read_all(a.expected, a.n_expected, ex, &err);
        if (!st) {
            struct oq_cli_runtime cr = {.ort_lib = a.ort_lib};
            rc = oq_cli_runtime_open(&cr, &rt);
            if (rc) goto done;
        }
        a.o.runtime = rt;
        a.o.n_batches = a.n_inputs;
        a.o.inputs = (const oq_npz *const *)in;
        a.o.expected = a.n_expected ? (const oq_npz *const *)ex : NULL;
        if (!st) st = oq_convert_file(a.in, a.out, a.force, &a.o, &r, &err);
    }
    if (r && a.json) {
        char *s = oq_convert_report_json(r);
        if (s) printf("%s\n", s);
        free(s);
    } else if (r) {
        print_report(&a, r);
    }
    if (st) fprintf(stderr, "ortqual convert: %s\n", err.msg);
    else if (!a.json && a.plan) printf("plan only: nothing written\n");
    else if (!a.json) printf("written: %s\n", a.out);
    rc = exit_for(st);
done:
    oq_convert_report_free(r);
    oq_runtime_free(rt);
    for (size_t i = 0; i < MAX_FILES; i++) {
        oq_npz_free(in[i]);
        oq_npz_free(ex[i]);
    }
    return rc;
}
