/* Unit tests of the attention routing parser and the kernel expectations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ortqual/config.h" /* both headers in one unit: no name clash */
#include "ortqual/dispatch.h"

#define CYAN "\x1b[36m"
#define RESET "\x1b[0m"
#define ROUTE(node, kernel) \
    CYAN "Operator=Attention Node=" node " DataType=fp16 SdpaKernel=" kernel RESET "\n"

static oq_dispatch_parser *parse(const char *text)
{
    oq_dispatch_parser *p = NULL;
    oq_err err = {0};
    assert_int_equal(oq_dispatch_parse_text(text, strlen(text), &p, &err), OQ_OK);
    return p;
}

/* Pass-through collector: everything that was not routing text, concatenated. */
typedef struct sink {
    char buf[4096];
    size_t n;
    int calls;
} sink;

static void collect(void *user, const char *text, size_t n, uint64_t line)
{
    (void)line;
    sink *s = user;
    assert_true(s->n + n < sizeof s->buf);
    memcpy(s->buf + s->n, text, n);
    s->n += n;
    s->buf[s->n] = '\0';
    s->calls++;
}

static void every_kernel_name_parses(void **state)
{
    (void)state;
    for (int k = 1; k < OQ_SDPA_COUNT_; k++) {
        char line[256];
        snprintf(line, sizeof line, ROUTE("n%d", "%s"), k, oq_sdpa_kernel_name((oq_sdpa_kernel)k));
        oq_dispatch_parser *p = parse(line);
        const oq_dispatch_log *log = oq_dispatch_parser_log(p);
        assert_int_equal(log->n_records, 1);
        assert_int_equal(log->records[0].kernel, k);
        assert_string_equal(log->records[0].kernel_name, oq_sdpa_kernel_name((oq_sdpa_kernel)k));
        oq_dispatch_parser_free(p);
    }
}

static void unknown_kernel_keeps_raw_name(void **state)
{
    (void)state;
    oq_dispatch_parser *p = parse(ROUTE("attn0", "FLASH_DECODE") ROUTE("attn1", "flash"));
    const oq_dispatch_log *log = oq_dispatch_parser_log(p);
    assert_int_equal(log->n_records, 2);
    assert_int_equal(log->records[0].kernel, OQ_SDPA_UNKNOWN);
    assert_string_equal(log->records[0].kernel_name, "FLASH_DECODE");
    /* ORT prints exact names; an alias in the log is not a known kernel */
    assert_int_equal(log->records[1].kernel, OQ_SDPA_UNKNOWN);
    oq_dispatch_parser_free(p);
}

static void fields_and_line_numbers(void **state)
{
    (void)state;
    oq_dispatch_parser *p = parse("hello\n" ROUTE("/enc/layers.0/attn", "FLASH_ATTENTION")
                                  "Operator=MultiHeadAttention Node=my node DataType=bf16 "
                                  "SdpaKernel=EFFICIENT_ATTENTION\n"
                                  "Operator=Attention DataType=fp32 SdpaKernel=MATH\n");
    const oq_dispatch_log *log = oq_dispatch_parser_log(p);
    assert_int_equal(log->n_records, 3);
    const oq_dispatch_record *r = log->records;
    assert_string_equal(r[0].op, "Attention");
    assert_string_equal(r[0].node, "/enc/layers.0/attn");
    assert_string_equal(r[0].dtype, "fp16");
    assert_int_equal(r[0].line, 2);
    assert_string_equal(r[1].op, "MultiHeadAttention");
    assert_string_equal(r[1].node, "my node"); /* node names may hold spaces */
    assert_string_equal(r[1].dtype, "bf16");
    assert_int_equal(r[1].kernel, OQ_SDPA_EFFICIENT_ATTENTION);
    assert_int_equal(r[1].line, 3);
    assert_string_equal(r[2].node, ""); /* ORT omits Node= for unnamed nodes */
    assert_string_equal(r[2].dtype, "fp32");
    assert_int_equal(r[2].kernel, OQ_SDPA_MATH);
    assert_int_equal(r[2].line, 4);
    oq_dispatch_parser_free(p);
}

/* ORT prints a line per node per Run: a long run's lines of one route (node, kernel,
 * op, dtype) are one record that counts them, so the log stays the size of the model
 * (it held every line: ~70,000 records for 5,000 GPU batches). A route differing in
 * any of the four is a record of its own; line is its first line; checks count lines. */
static void repeated_routes_are_counted(void **state)
{
    (void)state;
    oq_dispatch_parser *p = NULL;
    oq_err err = {0};
    assert_int_equal(oq_dispatch_parser_create(&p, &err), OQ_OK);
    const char *lines[] = {ROUTE("attn0", "FLASH_ATTENTION"), ROUTE("attn1", "FLASH_ATTENTION"),
                           ROUTE("attn0", "MATH"),
                           "Operator=Attention Node=attn0 DataType=fp32 SdpaKernel=FLASH_ATTENTION\n",
                           "Operator=MultiHeadAttention Node=attn0 DataType=fp16 SdpaKernel=FLASH_ATTENTION\n"};
    for (int run = 0; run < 1000; run++)
        for (int k = 0; k < (run == 500 ? 5 : 2); k++)
            assert_int_equal(oq_dispatch_parser_feed(p, lines[k], strlen(lines[k]), &err), OQ_OK);
    const oq_dispatch_log *log = oq_dispatch_parser_log(p);
    assert_int_equal(log->n_records, 5);
    assert_int_equal(log->records[0].count, 1000);
    assert_int_equal(log->records[0].line, 1);
    assert_int_equal(log->records[1].count, 1000);
    assert_int_equal(log->records[1].line, 2);
    for (int k = 2; k < 5; k++) assert_int_equal(log->records[k].count, 1);
    assert_int_equal(log->records[2].line, 1003);
    assert_int_equal(log->records[2].kernel, OQ_SDPA_MATH);
    oq_dispatch_log copy;
    assert_int_equal(oq_dispatch_log_copy(&copy, log, &err), OQ_OK);
    assert_int_equal(copy.records[1].count, 1000);
    /* a second log (another shard's) counted in by route: counts add, new routes append */
    oq_dispatch_parser *q = parse(ROUTE("attn1", "FLASH_ATTENTION") ROUTE("attn9", "MATH"));
    oq_dispatch_log other;
    assert_int_equal(oq_dispatch_log_copy(&other, oq_dispatch_parser_log(q), &err), OQ_OK);
    oq_dispatch_parser_free(q);
    assert_int_equal(oq_dispatch_log_merge(&copy, &other, &err), OQ_OK);
    assert_int_equal(copy.n_records, 6);
    assert_int_equal(copy.records[1].count, 1001);
    assert_string_equal(copy.records[5].node, "attn9");
    assert_int_equal(copy.records[5].count, 1);
    assert_null(other.records[0].node); /* moved or freed: clearing other frees nothing twice */
    oq_dispatch_log_clear(&other);
    assert_int_equal(oq_dispatch_log_merge(NULL, &copy, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "dst is NULL"));
    oq_dispatch_log_clear(&copy);
    oq_dispatch_expect *e = NULL;
    assert_int_equal(oq_dispatch_expect_create(&e, &err), OQ_OK);
    assert_int_equal(oq_dispatch_expect_add(e, "flash", &err), OQ_OK);
    oq_dispatch_report r;
    assert_int_equal(oq_dispatch_check(e, log, &r, &err), OQ_OK);
    assert_int_equal(r.n_records, 2003); /* lines checked */
    assert_int_equal(r.n_failures, 1);   /* the MATH route, once */
    assert_string_equal(r.failures[0], "attn0: expected FLASH_ATTENTION, got MATH (line 1003)");
    oq_dispatch_report_clear(&r);
    oq_dispatch_expect_free(e);
    oq_dispatch_parser_free(p);
}

static void bare_token_is_a_record(void **state)
{
    (void)state;
    /* A line with only the token still counts: no SdpaKernel= escapes a check. */
    oq_dispatch_parser *p = parse("dispatched SdpaKernel=CUDNN_FLASH_ATTENTION\n");
    const oq_dispatch_log *log = oq_dispatch_parser_log(p);
    assert_int_equal(log->n_records, 1);
    assert_int_equal(log->records[0].kernel, OQ_SDPA_CUDNN_FLASH_ATTENTION);
    assert_string_equal(log->records[0].op, "");
    oq_dispatch_parser_free(p);
}

/* After a NUL (a test's raw bytes) a route is whole, as after a line break. */
static void nul_before_a_route(void **state)
{
    (void)state;
    static const char text[] = "abc\0Operator=Attention Node=attn1 DataType=fp16 SdpaKernel=MATH\n";
    oq_dispatch_parser *p = NULL;
    assert_int_equal(oq_dispatch_parse_text(text, sizeof text - 1, &p, NULL), OQ_OK);
    const oq_dispatch_log *log = oq_dispatch_parser_log(p);
    assert_int_equal(log->n_records, 1);
    assert_string_equal(log->records[0].op, "Attention");
    assert_string_equal(log->records[0].node, "attn1");
    oq_dispatch_parser_free(p);
}

static void interleaved_output_passes_through(void **state)
{
    (void)state;
    const char *text = "collected 2 items\n"
                       "test_a.py::test_x " ROUTE("attn0", "FLASH_ATTENTION")
                       "PASSED\r\n" CYAN "green" RESET "\n"
                       "tail without newline";
    sink s = {0};
    oq_dispatch_parser *p;
    oq_err err = {0};
    assert_int_equal(oq_dispatch_parser_create(&p, &err), OQ_OK);
    oq_dispatch_parser_set_passthrough(p, collect, &s);
    assert_int_equal(oq_dispatch_parser_feed(p, text, strlen(text), &err), OQ_OK);
    assert_int_equal(oq_dispatch_parser_finish(p, &err), OQ_OK);
    const oq_dispatch_log *log = oq_dispatch_parser_log(p);
    assert_int_equal(log->n_records, 1);
    assert_string_equal(log->records[0].node, "attn0");
    assert_int_equal(log->records[0].line, 2);
    /* raw lines untouched (colour kept), the mixed line's prefix stripped */
    assert_string_equal(s.buf, "collected 2 items\ntest_a.py::test_x \nPASSED\r\n" CYAN "green" RESET
                               "\ntail without newline");
    assert_int_equal(s.calls, 5);
    oq_dispatch_parser_free(p);
}

static void split_across_chunks_and_crlf(void **state)
{
    (void)state;
    const char *text = "x\r\n" ROUTE("attn0", "FLASH_ATTENTION") "\x1b[36mOperator=Attention "
                       "Node=attn1 DataType=fp16 SdpaKernel=MATH\x1b[0m\r\n";
    size_t n = strlen(text);
    /* every chunk size, including one byte at a time, gives the same records */
    for (size_t chunk = 1; chunk <= n; chunk++) {
        oq_dispatch_parser *p;
        assert_int_equal(oq_dispatch_parser_create(&p, NULL), OQ_OK);
        for (size_t i = 0; i < n; i += chunk)
            assert_int_equal(oq_dispatch_parser_feed(p, text + i, i + chunk > n ? n - i : chunk, NULL),
                             OQ_OK);
        assert_int_equal(oq_dispatch_parser_finish(p, NULL), OQ_OK);
        const oq_dispatch_log *log = oq_dispatch_parser_log(p);
        assert_int_equal(log->n_records, 2);
        assert_string_equal(log->records[0].node, "attn0");
        assert_string_equal(log->records[1].node, "attn1");
        assert_string_equal(log->records[1].kernel_name, "MATH"); /* no '\r', no colour */
        assert_int_equal(log->records[1].line, 3);
        oq_dispatch_parser_free(p);
    }
}

static void options_line(void **state)
{
    (void)state;
    sink s = {0};
    const char *text =
        CYAN "AttentionKernelOptions: FLASH_ATTENTION=1 EFFICIENT_ATTENTION=1 TRT_FUSED_ATTENTION=1 "
             "CUDNN_FLASH_ATTENTION=0 TRT_FLASH_ATTENTION=1 TRT_CROSS_ATTENTION=1 DECODER_ATTENTION=1 "
             "MATH=0\n"
             "Warning: Unfused kernel cannot be disabled right now. MATH=0 is ignored." RESET "\n";
    oq_dispatch_parser *p;
    assert_int_equal(oq_dispatch_parser_create(&p, NULL), OQ_OK);
    oq_dispatch_parser_set_passthrough(p, collect, &s);
    assert_int_equal(oq_dispatch_parser_feed(p, text, strlen(text), NULL), OQ_OK);
    const oq_dispatch_log *log = oq_dispatch_parser_log(p);
    assert_int_equal(log->n_options, 1);
    assert_int_equal(log->n_records, 0);
    const oq_dispatch_options *o = &log->options[0];
    assert_int_equal(o->line, 1);
    assert_int_equal(o->n_opts, 8);
    assert_string_equal(o->opts[0].name, "FLASH_ATTENTION");
    assert_int_equal(o->opts[0].value, 1);
    assert_string_equal(o->opts[3].name, "CUDNN_FLASH_ATTENTION");
    assert_int_equal(o->opts[3].value, 0);
    assert_string_equal(o->opts[7].name, "MATH");
    assert_int_equal(o->opts[7].value, 0);
    /* ORT's warning is not routing text: it is passed through */
    assert_non_null(strstr(s.buf, "MATH=0 is ignored."));
    oq_dispatch_parser_free(p);
}

static void kernel_names_aliases_and_masks(void **state)
{
    (void)state;
    assert_int_equal(oq_sdpa_kernel_from_name("flash"), OQ_SDPA_FLASH_ATTENTION);
    assert_int_equal(oq_sdpa_kernel_from_name("Efficient"), OQ_SDPA_EFFICIENT_ATTENTION);
    assert_int_equal(oq_sdpa_kernel_from_name("cudnn"), OQ_SDPA_CUDNN_FLASH_ATTENTION);
    assert_int_equal(oq_sdpa_kernel_from_name("MATH"), OQ_SDPA_MATH);
    assert_int_equal(oq_sdpa_kernel_from_name("trt_causal"), OQ_SDPA_TRT_CAUSAL_ATTENTION);
    assert_int_equal(oq_sdpa_kernel_from_name("nope"), OQ_SDPA_UNKNOWN);
    assert_string_equal(oq_sdpa_kernel_name(OQ_SDPA_UNKNOWN), "UNKNOWN");
    assert_string_equal(oq_sdpa_kernel_name((oq_sdpa_kernel)99), "unknown"); /* outside the enum: status.h's rule */
    const uint32_t masks[] = {0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
    for (int k = 0; k < OQ_SDPA_COUNT_; k++) assert_int_equal(oq_dispatch_kernel_mask((oq_sdpa_kernel)k), masks[k]);
    assert_int_equal(oq_dispatch_kernel_mask(oq_sdpa_kernel_from_name("math")), 16); /* "force MATH" */
}

/* Check `text` against the specs; returns the report (caller frees). */
static oq_dispatch_report check(const char *text, const char **specs)
{
    oq_dispatch_parser *p = parse(text);
    oq_dispatch_expect *e;
    oq_err err = {0};
    assert_int_equal(oq_dispatch_expect_create(&e, &err), OQ_OK);
    for (; *specs; specs++) assert_int_equal(oq_dispatch_expect_add(e, *specs, &err), OQ_OK);
    oq_dispatch_report r;
    assert_int_equal(oq_dispatch_check(e, oq_dispatch_parser_log(p), &r, &err), OQ_OK);
    oq_dispatch_expect_free(e);
    oq_dispatch_parser_free(p);
    return r;
}

static void one_math_among_flash_fails(void **state)
{
    (void)state;
    const char *specs[] = {"flash", NULL};
    oq_dispatch_report r = check(ROUTE("attn0", "FLASH_ATTENTION") ROUTE("attn1", "FLASH_ATTENTION")
                                     "noise\n" ROUTE("attn2", "MATH") ROUTE("attn3", "FLASH_ATTENTION"),
                                 specs);
    assert_false(r.passed);
    assert_int_equal(r.n_records, 4);
    assert_int_equal(r.n_failures, 1);
    assert_string_equal(r.failures[0], "attn2: expected FLASH_ATTENTION, got MATH (line 4)");
    oq_dispatch_report_clear(&r);

    r = check(ROUTE("attn0", "FLASH_ATTENTION") ROUTE("attn1", "FLASH_ATTENTION"), specs);
    assert_true(r.passed);
    assert_int_equal(r.n_failures, 0);
    oq_dispatch_report_clear(&r);
}

/* What --prove-teeth looks for: failures of nodes that ran MATH, counted apart from the
 * others (a node not observed, a different fast kernel). */
static void math_failures_counted(void **state)
{
    (void)state;
    const char *specs[] = {"attn0=flash", "attn1=flash", "attn2=flash", "attn3=flash", NULL};
    oq_dispatch_report r = check(ROUTE("attn0", "MATH") ROUTE("attn1", "EFFICIENT_ATTENTION")
                                     ROUTE("attn2", "MATH"),
                                 specs);
    assert_false(r.passed);
    assert_int_equal(r.n_failures, 4); /* attn0, attn1, attn2 and attn3 (not observed) */
    assert_int_equal(r.n_math_failures, 2);
    oq_dispatch_report_clear(&r);

    r = check(ROUTE("attn0", "EFFICIENT_ATTENTION"), (const char *[]){"flash", NULL});
    assert_false(r.passed);
    assert_int_equal(r.n_math_failures, 0); /* it failed, but not because MATH ran */
    oq_dispatch_report_clear(&r);
}

static void no_record_is_never_a_pass(void **state)
{
    (void)state;
    const char *specs[] = {"FLASH_ATTENTION", NULL};
    oq_dispatch_report r = check("1 passed in 0.1s\n", specs);
    assert_false(r.passed);
    assert_int_equal(r.n_failures, 1);
    assert_non_null(strstr(r.failures[0], "dispatch not observed"));
    oq_dispatch_report_clear(&r);

    const char *none[] = {NULL};
    r = check("", none); /* even without rules */
    assert_false(r.passed);
    oq_dispatch_report_clear(&r);
}

static void per_node_rules(void **state)
{
    (void)state;
    /* attn1 has its own rule (MATH allowed there), attn2 is required but absent */
    const char *specs[] = {"flash", "efficient", "attn1=math", "attn2=cudnn", NULL};
    oq_dispatch_report r = check(ROUTE("attn0", "EFFICIENT_ATTENTION") ROUTE("attn1", "MATH")
                                     ROUTE("attn1", "FLASH_ATTENTION")
                                     "Operator=Attention DataType=fp16 SdpaKernel=MATH\n",
                                 specs);
    assert_false(r.passed);
    assert_int_equal(r.n_failures, 3);
    assert_string_equal(r.failures[0], "attn1: expected MATH, got FLASH_ATTENTION (line 3)");
    assert_string_equal(r.failures[1],
                        "(unnamed Attention node): expected FLASH_ATTENTION or EFFICIENT_ATTENTION, "
                        "got MATH (line 4)");
    assert_string_equal(r.failures[2], "attn2: not observed (no SdpaKernel= line names this node)");
    oq_dispatch_report_clear(&r);
}

static void raw_upper_kernel_and_bad_specs(void **state)
{
    (void)state;
    const char *specs[] = {"FLASH_DECODE", NULL};
    oq_dispatch_report r = check(ROUTE("a", "FLASH_DECODE"), specs);
    assert_true(r.passed);
    oq_dispatch_report_clear(&r);

    oq_dispatch_expect *e;
    oq_err err = {0};
    assert_int_equal(oq_dispatch_expect_create(&e, &err), OQ_OK);
    assert_int_equal(oq_dispatch_expect_add(e, "flashy", &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "'flashy' is not a kernel (known: FLASH_ATTENTION"));
    assert_int_equal(oq_dispatch_expect_add(e, "=flash", &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "'=flash': empty node name before '='");
    assert_int_equal(oq_dispatch_expect_add(e, "", &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "empty kernel expectation");
    assert_int_equal(oq_dispatch_expect_add(e, "attn0=", &err), OQ_ERR_INVALID_ARG);
    oq_dispatch_expect_free(e);
}

static void assert_failure(const oq_dispatch_failure *f, oq_dispatch_failure_kind kind, const char *node,
                           const char *op, const char *dtype, const char *kernel, const char *expected, uint64_t line)
{
    assert_int_equal(f->kind, kind);
    assert_string_equal(f->node, node);
    assert_string_equal(f->op, op);
    assert_string_equal(f->dtype, dtype);
    assert_string_equal(f->kernel, kernel);
    assert_string_equal(f->expected, expected);
    assert_int_equal(f->line, line);
}

/* Each failure carries its route and first line as fields, beside its text: a node whose name
 * holds " (line 3)" and a route told from another only by its dtype (texts alike but for the
 * line) keep theirs. */
static void failures_carry_their_routes(void **state)
{
    (void)state;
    const char *specs[] = {"flash", "x (line 3)=flash", "gone (line 4)=cudnn", NULL};
    const char *text = "Operator=Attention Node=attn0 DataType=fp16 SdpaKernel=MATH\n"
                       "Operator=Attention Node=attn0 DataType=bf16 SdpaKernel=MATH\n"
                       "Operator=MultiHeadAttention Node=x (line 3) DataType=fp16 SdpaKernel=EFFICIENT_ATTENTION\n"
                       "Operator=Attention DataType=fp32 SdpaKernel=MATH\n";
    oq_dispatch_report r = check(text, specs);
    assert_int_equal(r.n_failures, 5);
    assert_non_null(r.failed);
    assert_string_equal(r.failures[0], "attn0: expected FLASH_ATTENTION, got MATH (line 1)");
    assert_string_equal(r.failures[1], "attn0: expected FLASH_ATTENTION, got MATH (line 2)");
    assert_failure(&r.failed[0], OQ_DISPATCH_FAILURE_KERNEL, "attn0", "Attention", "fp16", "MATH", "FLASH_ATTENTION", 1);
    assert_failure(&r.failed[1], OQ_DISPATCH_FAILURE_KERNEL, "attn0", "Attention", "bf16", "MATH", "FLASH_ATTENTION", 2);
    assert_failure(&r.failed[2], OQ_DISPATCH_FAILURE_KERNEL, "x (line 3)", "MultiHeadAttention", "fp16",
                   "EFFICIENT_ATTENTION", "FLASH_ATTENTION", 3);
    assert_failure(&r.failed[3], OQ_DISPATCH_FAILURE_KERNEL, "", "Attention", "fp32", "MATH", "FLASH_ATTENTION", 4);
    assert_failure(&r.failed[4], OQ_DISPATCH_FAILURE_UNOBSERVED, "gone (line 4)", "", "", "", "CUDNN_FLASH_ATTENTION", 0);
    assert_false(oq_dispatch_failure_same(&r.failed[0], &r.failed[1])); /* two routes */
    assert_true(oq_dispatch_failure_same(&r.failed[2], &r.failed[2]));
    oq_dispatch_failure other;
    assert_int_equal(oq_dispatch_failure_copy(&other, &r.failed[0], NULL), OQ_OK);
    other.line = 9; /* the same route in another shard's log */
    assert_true(oq_dispatch_failure_same(&r.failed[0], &other));
    oq_dispatch_failure_clear(&other);
    oq_dispatch_report_clear(&r);

    const char *none[] = {NULL};
    r = check("", none);
    assert_int_equal(r.n_failures, 1);
    assert_failure(&r.failed[0], OQ_DISPATCH_FAILURE_NO_ROUTING, "", "", "", "", "", 0);
    oq_dispatch_report_clear(&r);
}

/* A summary written before failures had fields: each text read back into the fields the check
 * gave it, its route taken from the log's record of its line (the node is never cut out of the
 * words); a text of another wording is TEXT, never the same failure as another. */
static void failures_read_back_from_text(void **state)
{
    (void)state;
    const char *specs[] = {"flash", "gone (line 4)=cudnn", NULL};
    const char *text = "Operator=Attention Node=attn0 DataType=fp16 SdpaKernel=MATH\n"
                       "Operator=Attention Node=attn0 DataType=bf16 SdpaKernel=MATH\n"
                       "Operator=Attention Node=x (line 3): expected y, got MATH (line 1) DataType=fp16 SdpaKernel=MATH\n"
                       "Operator=Attention DataType=fp32 SdpaKernel=LEAN_ATTENTION\n";
    oq_dispatch_parser *p = parse(text);
    oq_dispatch_expect *e;
    assert_int_equal(oq_dispatch_expect_create(&e, NULL), OQ_OK);
    for (const char **sp = specs; *sp; sp++) assert_int_equal(oq_dispatch_expect_add(e, *sp, NULL), OQ_OK);
    oq_dispatch_report r;
    assert_int_equal(oq_dispatch_check(e, oq_dispatch_parser_log(p), &r, NULL), OQ_OK);
    assert_int_equal(r.n_failures, 5);
    for (size_t i = 0; i < r.n_failures; i++) {
        oq_dispatch_failure f;
        assert_int_equal(oq_dispatch_failure_from_text(r.failures[i], oq_dispatch_parser_log(p), &f, NULL), OQ_OK);
        int unobserved = r.failed[i].kind == OQ_DISPATCH_FAILURE_UNOBSERVED; /* its text does not say what */
        assert_failure(&f, r.failed[i].kind, r.failed[i].node, r.failed[i].op, r.failed[i].dtype, r.failed[i].kernel,
                       unobserved ? "" : r.failed[i].expected, r.failed[i].line);
        oq_dispatch_failure_clear(&f);
    }
    oq_dispatch_failure f;
    /* without the log, or with a line no record has, a KERNEL text is not recognised */
    assert_int_equal(oq_dispatch_failure_from_text(r.failures[0], NULL, &f, NULL), OQ_OK);
    assert_int_equal(f.kind, OQ_DISPATCH_FAILURE_TEXT);
    assert_false(oq_dispatch_failure_same(&f, &f));
    oq_dispatch_failure_clear(&f);
    assert_int_equal(oq_dispatch_failure_from_text("attn0: expected FLASH_ATTENTION, got MATH (line 7)",
                                                   oq_dispatch_parser_log(p), &f, NULL), OQ_OK);
    assert_int_equal(f.kind, OQ_DISPATCH_FAILURE_TEXT);
    oq_dispatch_failure_clear(&f);
    /* the wording of line 2 does not name line 1's route */
    assert_int_equal(oq_dispatch_failure_from_text("attn0: expected FLASH_ATTENTION, got FLASH_ATTENTION (line 1)",
                                                   oq_dispatch_parser_log(p), &f, NULL), OQ_OK);
    assert_int_equal(f.kind, OQ_DISPATCH_FAILURE_TEXT);
    oq_dispatch_failure_clear(&f);
    assert_string_equal(oq_dispatch_failure_kind_name(OQ_DISPATCH_FAILURE_UNOBSERVED), "unobserved");
    assert_int_equal(oq_dispatch_failure_kind_from_name("no_routing"), OQ_DISPATCH_FAILURE_NO_ROUTING);
    assert_int_equal(oq_dispatch_failure_kind_from_name("nonsense"), OQ_DISPATCH_FAILURE_TEXT);
    oq_dispatch_report_clear(&r);
    oq_dispatch_expect_free(e);
    oq_dispatch_parser_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_kernel_name_parses),
        cmocka_unit_test(unknown_kernel_keeps_raw_name),
        cmocka_unit_test(fields_and_line_numbers),
        cmocka_unit_test(repeated_routes_are_counted),
        cmocka_unit_test(bare_token_is_a_record),
        cmocka_unit_test(nul_before_a_route),
        cmocka_unit_test(interleaved_output_passes_through),
        cmocka_unit_test(split_across_chunks_and_crlf),
        cmocka_unit_test(options_line),
        cmocka_unit_test(kernel_names_aliases_and_masks),
        cmocka_unit_test(one_math_among_flash_fails),
        cmocka_unit_test(math_failures_counted),
        cmocka_unit_test(no_record_is_never_a_pass),
        cmocka_unit_test(per_node_rules),
        cmocka_unit_test(raw_upper_kernel_and_bad_specs),
        cmocka_unit_test(failures_carry_their_routes),
        cmocka_unit_test(failures_read_back_from_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
