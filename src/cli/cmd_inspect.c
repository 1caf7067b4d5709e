/* ortqual inspect MODEL: header, I/O, operators and attention nodes of an ONNX file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "ortqual/convert.h"
#include "ortqual/inspect.h"
#include "ortqual/tensor.h"

const char cmd_inspect_summary[] = "show an ONNX model's I/O, operators and attention nodes";

static const char head[] =
    "usage: ortqual inspect [--json] MODEL.onnx\n"
    "\n"
    "Print the IR version, producer, opset imports, inputs and outputs (symbolic dims\n"
    "by name; an input an initializer of its name backs is marked: that is its default,\n"
    "and a caller need not feed it), initializer count and bytes, operator counts by\n"
    "domain, and every attention node: ONNX Attention (with attributes and connected\n"
    "inputs such as attn_mask or nonpad_kv_seqlen), com.microsoft MultiHeadAttention /\n"
    "GroupQueryAttention, and decomposed MatMul -> ... -> Softmax -> MatMul chains;\n"
    "the mask contract `convert` records (ortqual.mask_contract: the input that must be\n"
    "a valid prefix, and its polarity), which validate, replay and bench enforce.\n"
    "Nodes inside If branches and Loop/Scan bodies are counted and matched too: each\n"
    "attention node there says where it is (\"in If 'x' then_branch\"), and each\n"
    "subgraph is a warning. Custom operator domains are reported as warnings.\n";

static const char foot[] =
    "\n"
    "exit status: 0 inspected, 2 unreadable or not an ONNX model.\n"
    "\n"
    "example:\n"
    "  ortqual export sdpa --format attention24 -o a24.onnx && ortqual inspect a24.onnx\n";

/* Names, producers and doc strings come from the file: each goes through oq_cli_shown, so an
 * escape sequence in one does not reach the terminal nor a newline forge a line. */
#define oq_cli_shown(s) oq_cli_shown(s)

/* The mask contract `convert` records (ortqual.mask_contract), which validate, replay and bench
 * enforce: has, else a malformed entry's reason in `bad` ("" when none). */
typedef struct contract {
    int has;
    char input[256];
    oq_mask_polarity polarity;
    char bad[OQ_ERR_MSG_MAX];
} contract;

static void read_contract(const char *path, contract *c)
{
    oq_err e = {0};
    memset(c, 0, sizeof *c);
    if (oq_convert_read_contract(path, &c->has, c->input, sizeof c->input, &c->polarity, &e))
        snprintf(c->bad, sizeof c->bad, "%s", e.msg), c->has = 0;
}

static const char *prefix_words(oq_mask_polarity p)
{
    return p == OQ_MASK_POLARITY_PAD ? "zeros, then ones: 1 = padding" : "ones, then zeros";
}

/* The library's JSON with "mask_contract" (an object, or null) and a malformed one's reason
 * among the warnings. */
static char *json_with_contract(const char *lib, const contract *c)
{
    json_t *j = json_loads(lib, 0, NULL);
    if (!j) return NULL;
    json_object_set_new(j, "mask_contract",
                        c->has ? json_pack("{s:s, s:s, s:s}", "input", c->input, "contract", "valid_prefix", "polarity",
                                           oq_mask_polarity_name(c->polarity))
                               : json_null());
    if (*c->bad) json_array_append_new(json_object_get(j, "warnings"), json_string(c->bad));
    char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(j);
    return s;
}

/* `note` ends each line ("" for none). */
static void print_io(const char *what, const oq_io_info *io, size_t n, const char *note)
{
    for (size_t i = 0; i < n; i++) {
        if (io[i].not_tensor) { /* "undefined" would read as a broken model */
            printf("  %-7s %-12s %s (not a tensor)%s\n", what, oq_cli_shown(io[i].name), io[i].not_tensor, note);
            continue;
        }
        printf("  %-7s %-12s %-8s ", what, oq_cli_shown(io[i].name), oq_elem_type_name(io[i].elem_type));
        if (io[i].rank < 0) { /* "[?]" would read as one unknown axis */
            printf("(no shape: any rank)%s\n", note);
            continue;
        }
        putchar('[');
        for (int32_t d = 0; io[i].dims && d < io[i].rank; d++) {
            printf("%s%s", d ? ", " : "", oq_cli_shown(io[i].dims[d]));
            if (io[i].denotations && io[i].denotations[d]) printf(" (%s)", oq_cli_shown(io[i].denotations[d]));
        }
        printf("]%s\n", note);
    }
}

/* " (heads 4, head dim 8)", "?" for what the graph does not fix; nothing when neither is fixed;
 * " (heads 4, kv heads 2, head dim 8)" for grouped-query heads, which --lower refuses. */
static void print_heads(const oq_attention_info *a, int64_t kv)
{
    char h[24] = "?", d[24] = "?", k[40] = "";
    if (a->heads <= 0 && a->head_dim <= 0) return;
    if (a->heads > 0) snprintf(h, sizeof h, "%lld", (long long)a->heads);
    if (a->head_dim > 0) snprintf(d, sizeof d, "%lld", (long long)a->head_dim);
    if (kv > 0 && kv != a->heads) snprintf(k, sizeof k, ", kv heads %lld", (long long)kv);
    printf(" (heads %s%s, head dim %s)", h, k, d);
}

static void print_text(const char *path, const oq_model_info *mi, const contract *c)
{
    printf("model        %s\n", oq_cli_shown(path));
    printf("ir_version   %lld\n", (long long)mi->ir_version);
    printf("producer     %s %s\n", oq_cli_shown(mi->producer_name), oq_cli_shown(mi->producer_version));
    printf("opsets      ");
    for (size_t i = 0; i < mi->n_opsets; i++)
        printf(" %s=%lld", *mi->opsets[i].domain ? oq_cli_shown(mi->opsets[i].domain) : "ai.onnx",
               (long long)mi->opsets[i].version);
    printf("\ninitializers %zu (%llu bytes", mi->n_initializers, (unsigned long long)mi->initializer_bytes);
    if (mi->n_external) /* torch.onnx.export's default: the weights beside the model */
        printf(" inside; %zu in external data, %llu bytes", mi->n_external, (unsigned long long)mi->external_bytes);
    printf(")\nnodes        %zu\n", mi->n_nodes);
    if (c->has)
        printf("mask contract input '%s' is a valid prefix (%s) in every batch (ortqual.mask_contract)\n",
               oq_cli_shown(c->input), prefix_words(c->polarity));
    printf("io:\n");
    print_io("input", mi->inputs, mi->n_inputs, "");
    print_io("input", mi->default_inputs, mi->n_default_inputs, "  default: the initializer of its name");
    print_io("output", mi->outputs, mi->n_outputs, "");
    printf("operators:\n");
    for (size_t i = 0; i < mi->n_ops; i++)
        printf("  %-14s %-24s %lld\n", *mi->ops[i].domain ? oq_cli_shown(mi->ops[i].domain) : "ai.onnx",
               oq_cli_shown(mi->ops[i].op_type), (long long)mi->ops[i].count);
    printf("attention nodes: %zu\n", mi->n_attention);
    for (size_t i = 0; i < mi->n_attention; i++) {
        const oq_attention_info *a = &mi->attention[i];
        printf("  %s%s%s '%s'", *a->domain ? oq_cli_shown(a->domain) : "", *a->domain ? "::" : "", oq_cli_shown(a->kind),
               oq_cli_shown(a->name));
        for (size_t k = 0; k < a->n_attrs; k++) printf(" %s", oq_cli_shown(a->attrs[k]));
        print_heads(a, oq_attention_kv_heads(mi, i));
        printf("\n      %s\n", oq_cli_shown(a->detail));
    }
    for (size_t i = 0; i < mi->n_warnings; i++) printf("warning: %s\n", oq_cli_shown(mi->warnings[i]));
    if (*c->bad) printf("warning: %s\n", oq_cli_shown(c->bad));
}

int cmd_inspect(int argc, char **argv)
{
    int json = 0, first = argc;
    const oq_opt opts[] = {OQ_OPT_GROUP("options:"),
                           OQ_OPT_FLAG("json", &json, "machine-readable output (one JSON object)"), OQ_OPT_END};
    const oq_cli_command c = {"inspect", head, foot, opts, OQ_CLI_OPERANDS};
    int rc = oq_cli_parse(&c, argc, argv, &first);
    if (rc) return rc > 0 ? OQ_EXIT_OK : OQ_EXIT_USAGE;
    if (first != argc - 1) {
        oq_cli_error_in("inspect", "expected one MODEL.onnx (see --help)");
        return OQ_EXIT_USAGE;
    }
    const char *path = argv[first];
    oq_model_info *mi;
    oq_err err = {0};
    if (oq_model_inspect_file(path, &mi, &err))
        return oq_cli_refuse("inspect", json, err.status, err.msg,
                             err.status == OQ_ERR_NOMEM ? OQ_EXIT_RUNTIME : OQ_EXIT_USAGE);
    contract ct;
    read_contract(path, &ct);
    if (json) {
        char *lib = oq_model_info_json(mi), *s = lib ? json_with_contract(lib, &ct) : NULL;
        free(lib);
        if (!s) {
            oq_model_info_free(mi);
            oq_cli_error_in("inspect", "out of memory");
            return OQ_EXIT_RUNTIME;
        }
        printf("%s\n", s);
        free(s);
    } else {
        print_text(path, mi, &ct);
    }
    oq_model_info_free(mi);
    return OQ_EXIT_OK;
}
