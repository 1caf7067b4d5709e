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
    "by name; an input an initializer of its name backs is marked: that is its default,\n"
    "and a caller need not feed it), initializer count and bytes, operator counts by\n"
    "domain, and every attention node: ONNX Attention (with attributes and connected\n"
    "inputs such as attn_mask or nonpad_kv_seqlen), com.microsoft MultiHeadAttention /\n"
    "GroupQueryAttention, and decomposed MatMul -> ... -> Softmax -> MatMul chains.\n"
    "Custom operator domains are reported as warnings.\n";

static const char foot[] =
    "\n"
    "exit status: 0 inspected, 2 unreadable or not an ONNX model.\n"
    "\n"
    "example:\n"
    "  ortqual export sdpa --format attention24 -o a24.onnx && ortqual inspect a24.onnx\n";

/* `note` ends each line ("" for none). */
static void print_io(FILE *f, const char *what, const oq_io_info *io, size_t n, const char *note)
{
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "  %-7s %-12s %-8s ", what, io[i].name, oq_elem_type_name(io[i].elem_type));
        if (io[i].rank < 0) { /* "[?]" would read as one unknown axis */
            fprintf(f, "(no shape: any rank)%s\n", note);
            continue;
        }
        fputc('[', f);
        for (int32_t d = 0; io[i].dims && d < io[i].rank; d++) {
            fprintf(f, "%s%s", d ? ", " : "", io[i].dims[d]);
            if (io[i].denotations && io[i].denotations[d]) fprintf(f, " (%s)", io[i].denotations[d]);
        }
        fprintf(f, "]%s\n", note);
    }
}

static void print_text(FILE *f, const char *path, const oq_model_info *mi)
{
    fprintf(f, "model        %s\n", path);
    fprintf(f, "ir_version   %lld\n", (long long)mi->ir_version);
    fprintf(f, "producer     %s %s\n", mi->producer_name, mi->producer_version);
    fprintf(f, "opsets      ");
    for (size_t i = 0; i < mi->n_opsets; i++)
        fprintf(f, " %s=%lld", *mi->opsets[i].domain ? mi->opsets[i].domain : "ai.onnx",
               (long long)mi->opsets[i].version);
    fprintf(f, "\ninitializers %zu (%llu bytes", mi->n_initializers, (unsigned long long)mi->initializer_bytes);
    if (mi->n_external) /* torch.onnx.export's default: the weights beside the model */
        fprintf(f, " inside; %zu in external data, %llu bytes", mi->n_external,
                (unsigned long long)mi->external_bytes);
    fprintf(f, ")\nnodes        %zu\n", mi->n_nodes);
    fprintf(f, "io:\n");
    print_io(f, "input", mi->inputs, mi->n_inputs, "");
    print_io(f, "input", mi->default_inputs, mi->n_default_inputs, "  default: the initializer of its name");
    print_io(f, "output", mi->outputs, mi->n_outputs, "");
    fprintf(f, "operators:\n");
    for (size_t i = 0; i < mi->n_ops; i++)
        fprintf(f, "  %-14s %-24s %lld\n", *mi->ops[i].domain ? mi->ops[i].domain : "ai.onnx",
               mi->ops[i].op_type, (long long)mi->ops[i].count);
    fprintf(f, "attention nodes: %zu\n", mi->n_attention);
    for (size_t i = 0; i < mi->n_attention; i++) {
        const oq_attention_info *a = &mi->attention[i];
        fprintf(f, "  %s%s%s '%s'", *a->domain ? a->domain : "", *a->domain ? "::" : "", a->kind, a->name);
        for (size_t k = 0; k < a->n_attrs; k++) fprintf(f, " %s", a->attrs[k]);
        fprintf(f, "\n      %s\n", a->detail);
    }
    for (size_t i = 0; i < mi->n_warnings; i++) fprintf(f, "warning: %s\n", mi->warnings[i]);
}

/* The text with a model's control characters shown as \xNN: names, producers and doc strings
 * come from the file, and an escape sequence in them must not reach the terminal. */
static void put_printable(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        int c1 = c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 && (unsigned char)s[i + 1] <= 0x9F;
        if (c1) printf("\\x%02x", (unsigned char)s[++i]); /* U+0080..U+009F: C1 controls (CSI) */
        else if ((c < 0x20 && c != '\n') || c == 0x7F) printf("\\x%02x", c);
        else putchar(c);
    }
}

static int print_safely(const char *path, const oq_model_info *mi)
{
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    if (!f) return -1;
    print_text(f, path, mi);
    if (fclose(f) != 0) return free(text), -1;
    put_printable(text, n);
    free(text);
    return 0;
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
    } else if (print_safely(path, mi)) {
        oq_model_info_free(mi);
        fprintf(stderr, "ortqual inspect: out of memory\n");
        return OQ_EXIT_RUNTIME;
    }
    oq_model_info_free(mi);
    return OQ_EXIT_OK;
}
