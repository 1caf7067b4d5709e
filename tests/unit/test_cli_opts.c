/* The tool's option tables (src/cli/cli_opts.c): one description gives the parser and the
 * usage text, so an option the usage lists is one the parser takes, and no other. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct vals {
    int flag, off;
    const char *name;
    char words[32];
    oq_cli_list list, many;
    int count;
    long big;
    unsigned long seed;
    double secs;
    const char *hidden;
    int calls;
} vals;

static int count_call(const oq_opt *o, const char *arg)
{
    vals *v = o->ctx;
    v->calls++;
    return strcmp(arg, "bad") ? 0 : -1;
}

#define TABLE(v)                                                                                  \
    const oq_opt opts[] = {                                                                       \
        OQ_OPT_GROUP("things:"),                                                                  \
        OQ_OPT_FLAG("flag", &(v)->flag, "a flag"),                                                \
        OQ_OPT_SET("no-off", &(v)->off, 0, "clears off"),                                         \
        {OQ_OPTK_STRING, "name", 'n', "NAME", "a name\non two lines", &(v)->name},                \
        OQ_OPT_WORDS("policy", "P", (v)->words, "a word and numbers"),                           \
        OQ_OPT_LIST("item", "X", &(v)->list, "repeatable"),                                       \
        {OQ_OPTK_LIST, "files", 0, "F...", "many", &(v)->many, 0, 0, 0, NULL, NULL, OQ_OPT_MANY},   \
        OQ_OPT_NUMBER("count", "N", &(v)->count, 1, 10, "1..10"),                                 \
        OQ_OPT_NUMBER("big", "N", &(v)->big, 0, INT64_MAX, "long"),                               \
        OQ_OPT_NUMBER("seed", "S", &(v)->seed, 0, INT64_MAX, "unsigned long"),                    \
        OQ_OPT_NUMBER("secs", "S", &(v)->secs, 1, 100, "a double"),                               \
        OQ_OPT_CALLBACK("call", "V", count_call, (v), "a callback"),                              \
        {OQ_OPTK_STRING, "hidden", 0, "H", NULL, &(v)->hidden, 0, 0, 0, NULL, NULL, OQ_OPT_HIDDEN}, \
        OQ_OPT_END}

static int parse(vals *v, int operands, int argc, char **argv, int *first)
{
    TABLE(v);
    const oq_cli_command c = {"t", "head\n", "foot\n", opts, operands};
    return oq_cli_parse(&c, argc, argv, first);
}

static void every_kind_is_taken(void **state)
{
    (void)state;
    vals v = {.off = 1};
    char *argv[] = {"t", "--flag", "--no-off", "-n", "x", "--policy", "balanced", "10", "64", "--item", "a",
                    "--item=b", "--files", "f1", "f2", "--count", "7", "--big", "9000000000", "--seed", "5",
                    "--secs", "30", "--call", "ok", "--hidden", "h", NULL};
    int first = 0;
    assert_int_equal(parse(&v, OQ_CLI_NO_OPERANDS, 27, argv, &first), 0);
    assert_int_equal(first, 27);
    assert_true(v.flag);
    assert_false(v.off);
    assert_string_equal(v.name, "x");
    assert_string_equal(v.words, "balanced 10 64"); /* as the usage writes it */
    assert_int_equal(v.list.n, 2);
    assert_string_equal(v.list.v[1], "b");
    assert_int_equal(v.many.n, 2); /* f1 and f2: every operand up to the next option */
    assert_string_equal(v.many.v[1], "f2");
    assert_int_equal(v.count, 7);
    assert_int_equal(v.big, 9000000000L);
    assert_int_equal(v.seed, 5);
    assert_true(v.secs == 30.0);
    assert_int_equal(v.calls, 1);
    assert_string_equal(v.hidden, "h");
    oq_cli_list_clear(&v.list);
    oq_cli_list_clear(&v.many);
}

static void words_stop_at_a_word(void **state)
{
    (void)state;
    vals v = {0};
    char *argv[] = {"t", "--policy", "uniform 5 96", "--policy", "fixed", "12", "extra", NULL};
    int first = 0;
    assert_int_equal(parse(&v, OQ_CLI_OPERANDS_LAST, 7, argv, &first), 0);
    assert_string_equal(v.words, "fixed 12"); /* "extra" is not a number: an operand */
    assert_int_equal(first, 6);
    /* without operands every word up to the next option is the option's: "fraction abc" is its
     * to refuse (it was "unexpected argument 'abc'", naming no option) */
    char *no_operands[] = {"t", "--policy", "fixed", "12", "abc", "--count", "3", NULL};
    assert_int_equal(parse(&v, OQ_CLI_NO_OPERANDS, 7, no_operands, NULL), 0);
    assert_string_equal(v.words, "fixed 12 abc");
    char *too_long[] = {"t", "--policy", "a-word-longer-than-the-buffer-is", NULL};
    assert_int_equal(parse(&v, OQ_CLI_NO_OPERANDS, 3, too_long, NULL), -1); /* refused, not cut */
}

static void bad_values_and_options_are_errors(void **state)
{
    (void)state;
    char *cases[][4] = {
        {"t", "--count", "11", NULL},  /* out of range */
        {"t", "--count", "x", NULL},   /* not a number */
        {"t", "--bogus", NULL, NULL},  /* unknown */
        {"t", "--count", NULL, NULL},  /* no value */
        {"t", "--call", "bad", NULL},  /* the callback refuses */
        {"t", "operand", NULL, NULL},  /* no operands taken */
        {"t", "--flag=1", NULL, NULL}, /* a flag takes no value */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        vals v = {0};
        int argc = 0;
        while (cases[i][argc]) argc++;
        if (parse(&v, OQ_CLI_NO_OPERANDS, argc, cases[i], NULL) != -1) fail_msg("case %zu was taken", i);
        oq_cli_list_clear(&v.list);
    }
}

/* A file list given no file: the option after it is not taken for its file (the error then
 * blamed that option), and the list at the end says the same. */
static void file_list_needs_a_file(void **state)
{
    (void)state;
    char *next_option[] = {"t", "--files", "--name", "o", NULL};
    char *at_end[] = {"t", "--flag", "--files", NULL};
    char **cases[] = {next_option, at_end};
    int argcs[] = {4, 3};
    for (size_t i = 0; i < 2; i++) {
        vals v = {0};
        char *text = NULL;
        size_t n = 0;
        FILE *saved = stderr;
        stderr = open_memstream(&text, &n);
        int rc = parse(&v, OQ_CLI_NO_OPERANDS, argcs[i], cases[i], NULL);
        fclose(stderr);
        stderr = saved;
        assert_int_equal(rc, -1);
        assert_int_equal(v.many.n, 0);
        if (!strstr(text, "ortqual t: --files needs at least one file\n")) fail_msg("case %zu said: %s", i, text);
        free(text);
        oq_cli_list_clear(&v.many);
    }
    vals v = {0};
    char *dash[] = {"t", "--files", "-", NULL}; /* "-" is a file name (standard input), not an option */
    assert_int_equal(parse(&v, OQ_CLI_NO_OPERANDS, 3, dash, NULL), 0);
    assert_int_equal(v.many.n, 1);
    oq_cli_list_clear(&v.many);
}

/* The shared callbacks' errors name the command that parsed them ("ortqual replay: --padding
 * ..."), not "ortqual:". */
static void shared_errors_name_the_command(void **state)
{
    (void)state;
    vals v = {0};
    char *argv[] = {"t", "--flag", NULL};
    assert_int_equal(parse(&v, OQ_CLI_NO_OPERANDS, 2, argv, NULL), 0);
    char *text = NULL;
    size_t n = 0;
    FILE *saved = stderr;
    stderr = open_memstream(&text, &n);
    oq_cli_error("--padding: '%s' is not auto, zero or report", "x");
    fclose(stderr);
    stderr = saved;
    assert_string_equal(text, "ortqual t: --padding: 'x' is not auto, zero or report\n");
    free(text);
}

static void operands_mix_or_end_the_options(void **state)
{
    (void)state;
    vals v = {0};
    char *mixed[] = {"t", "in1", "--flag", "in2", NULL};
    int first = 0;
    assert_int_equal(parse(&v, OQ_CLI_OPERANDS, 4, mixed, &first), 0);
    assert_true(v.flag);
    assert_int_equal(first, 2); /* getopt moved the operands to the end */
    vals w = {0};
    char *last[] = {"t", "--flag", "--", "cmd", "--flag", NULL};
    assert_int_equal(parse(&w, OQ_CLI_OPERANDS_LAST, 5, last, &first), 0);
    assert_string_equal(last[first], "cmd"); /* the command's own options are its own */
}

static void usage_lists_what_the_parser_takes(void **state)
{
    (void)state;
    vals v = {0};
    TABLE(&v);
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    oq_cli_opts_help(f, opts);
    fclose(f);
    for (const oq_opt *o = opts; o->kind != OQ_OPTK_END; o++) {
        if (o->kind == OQ_OPTK_GROUP) continue;
        char want[64];
        snprintf(want, sizeof want, "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        if (!strstr(text, want) != !!(o->flags & OQ_OPT_HIDDEN)) fail_msg("usage and table differ on --%s", o->name);
    }
    assert_non_null(strstr(text, "  -n, --name NAME         a name\n                          on two lines\n"));
    assert_non_null(strstr(text, "\nthings:\n"));
    free(text);
}

static void help_is_exit_zero(void **state)
{
    (void)state;
    vals v = {0};
    char *argv[] = {"t", "--help", NULL};
    FILE *saved = stdout;
    stdout = fopen("/dev/null", "w");
    int rc = parse(&v, OQ_CLI_NO_OPERANDS, 2, argv, NULL);
    fclose(stdout);
    stdout = saved;
    assert_int_equal(rc, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_kind_is_taken),
        cmocka_unit_test(words_stop_at_a_word),
        cmocka_unit_test(bad_values_and_options_are_errors),
        cmocka_unit_test(file_list_needs_a_file),
        cmocka_unit_test(shared_errors_name_the_command),
        cmocka_unit_test(operands_mix_or_end_the_options),
        cmocka_unit_test(usage_lists_what_the_parser_takes),
        cmocka_unit_test(help_is_exit_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
