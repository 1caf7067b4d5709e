/* ortqual inspect MODEL: header, I/O, operators and attention nodes of an ONNX file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ortqual/inspect.h"
#include "ortqual/tensor.h"

const char cmd_inspect_summary[] = "show an ONNX model's I/O, operators and attention nodes";

static const char head[] =
    "usage: ortqual inspect [--json] MODEL.onnx\n"
    "\n"
    "Print the IR version, producer, opset imports, inputs and outputs (symbolic dims\n"
    "by name), initializer count and bytes, operator counts by domain, and every\n"
    "attention node: ONNX Attention (with attributes and connected inputs such as\n"
    "attn_mask or nonpad_kv_seqlen), com.microsoft MultiHeadAttention /\n"
    "GroupQueryAttention, and decomposed MatMul -> ... -> Softmax -> MatMul chains.\n"
    "Custom operator domains are reported as warnings.\n";

static const char foot[] =
    "\n"
    "exit status: 0 inspected, 2 unreadable or not an ONNX model.\n"
    "\n"
    "example:\n"
    "  ortqual export sdpa --format attention24 -o a24.onnx && ortqual inspect a24.onnx\n";

static void print_io(const char *what, const oq_io_info *io, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        printf("  %-7s %-12s %-8s [", what, io[i].name, oq_dtype_name((oq_dtype)io[i].elem_type));
        for (int32_t d = 0; io[i].dims && d < io[i].rank; d++)
            printf("%s%s", d ? ", " : "", io[i].dims[d]);
        printf("%s\n", io[i].rank < 0 ? "?]" : "]");
    }
}

static void print_text(const char *path, const oq_model_info *mi)
{
    printf("model        %s\n", path);
    printf("ir_version   %lld\n", (long long)mi->ir_version);
    printf("producer     %s %s\n", mi->producer_name, mi->producer_version);
    printf("opsets      ");
    for (size_t i = 0; i < mi->n_opsets; i++)
        printf(" %s=%lld", *mi->opsets[i].domain ? mi->opsets[i].domain : "ai.onnx",
               (long long)mi->opsets[i].version);
    printf("\ninitializers %zu (%llu bytes)\nnodes        %zu\n", mi->n_initializers,
           (unsigned long long)mi->initializer_bytes, mi->n_nodes);
    printf("io:\n");
    print_io("input", mi->inputs, mi->n_inputs);
    print_io("output", mi->outputs, mi->n_outputs);
    printf("operators:\n");
    for (size_t i = 0; i < mi->n_ops; i++)
        printf("  %-14s %-24s %lld\n", *mi->ops[i].domain ? mi->ops[i].domain : "ai.onnx",
               mi->ops[i].op_type, (long long)mi->ops[i].count);
    printf("attention nodes: %zu\n", mi->n_attention);
    for (size_t i = 0; i < mi->n_attention; i++) {
        const oq_attention_info *a = &mi->attention[i];
        printf("  %s%s%s '%s'", *a->domain ? a->domain : "", *a->domain ? "::" : "", a->kind, a->name);
        for (size_t k = 0; k < a->n_attrs; k++) printf(" %s", a->attrs[k]);
        printf("\n      %s\n", a->detail);
    }
    for (size_t i = 0; i < mi->n_warnings; i++) printf("warning: %s\n", mi->warnings[i]);
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
        fprintf(stderr, "ortqual inspect: expected one MODEL.onnx (see --help)\n");
        return OQ_EXIT_USAGE;
    }
    const char *path = argv[first];
    oq_model_info *mi;
    oq_err err = {0};
    if (oq_model_inspect_file(path, &mi, &err)) {
        fprintf(stderr, "ortqual inspect: %s\n", err.msg);
        return err.status == OQ_ERR_NOMEM ? OQ_EXIT_RUNTIME : OQ_EXIT_USAGE;
    }
    if (json) {
        char *s = oq_model_info_json(mi);
        if (!s) {
            oq_model_info_free(mi);
            fprintf(stderr, "ortqual inspect: out of memory\n");
            return OQ_EXIT_RUNTIME;
        }
        printf("%s\n", s);
        free(s);
    } else {
        print_text(path, mi);
    }
    oq_model_info_free(mi);
    return OQ_EXIT_OK;
}
