/* Option tables, after git's parse-options: each subcommand describes its options once
 * (name, argument, help, what to do), and both the usage text and the getopt_long table are
 * made from that description. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ortqual/compare.h"

/* Where the help text of every option starts. */
#define HELP_COLUMN 26

/* The command oq_cli_parse parsed last: the shared callbacks' messages name it. */
static const char *parsed_command;

static void say(const char *cmd, const char *fmt, va_list ap)
{
    char *msg = NULL, *line = NULL;
    if (vasprintf(&msg, fmt, ap) >= 0) line = oq_text_printable(msg); /* one line, as messages are */
    else msg = NULL;
    fprintf(stderr, "ortqual%s%s: %s\n", cmd ? " " : "", cmd ? cmd : "", line ? line : "out of memory");
    oq_cli_json_said(line ? line : "out of memory");
    free(msg);
    free(line);
}

void oq_cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(parsed_command, fmt, ap);
    va_end(ap);
}

void oq_cli_error_in(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(cmd, fmt, ap);
    va_end(ap);
}

void oq_cli_list_clear(oq_cli_list *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}

int oq_cli_list_join(const oq_cli_list *l, const char *sep, char **out)
{
    *out = NULL;
    if (!l->n) return 0;
    size_t len = 1;
    for (size_t i = 0; i < l->n; i++) len += strlen(l->v[i]) + strlen(sep);
    if (!(*out = calloc(len, 1))) {
        fprintf(stderr, "ortqual: out of memory\n");
        return -1;
    }
    for (size_t i = 0; i < l->n; i++) {
        if (i) strcat(*out, sep);
        strcat(*out, l->v[i]);
    }
    return 0;
}

/* Each ';' spec of every --tolerance, split out (malloc'ed copies, *n of them); -1 when out of memory. */
static int tolerance_specs(const oq_cli_list *l, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    for (size_t i = 0; i < l->n; i++) {
        char *copy = strdup(l->v[i]), *rest = copy;
        if (!copy) return -1;
        for (char *s; (s = strsep(&rest, ";"));) {
            if (!s[strspn(s, " ")]) continue; /* "fp16;" : no spec, as oq_tolerances_add skips it */
            char **grown = realloc(*out, (*n + 1) * sizeof **out);
            if (grown) *out = grown;
            if (!grown || !(grown[*n] = strdup(s))) {
                free(copy);
                return -1;
            }
            (*n)++;
        }
        free(copy);
    }
    return 0;
}

/* Two specs for one output (or two for the default) with other values: the later one silently
 * loosened or tightened the first, so it is refused as --dim NAME given twice is (docs/usage.md);
 * the same value again is taken once. A spec that does not parse is left to the library's message. */
static int tolerance_twice(const char *cmd, char **specs, size_t n)
{
    char (*names)[256] = calloc(n ? n : 1, sizeof *names);
    oq_tolerance *tols = calloc(n ? n : 1, sizeof *tols);
    int rc = names && tols ? 0 : -1;
    if (rc) oq_cli_error_in(cmd, "out of memory");
    for (size_t j = 0; !rc && j < n; j++) {
        oq_err e = {0};
        tols[j] = (oq_tolerance){-1, -1}; /* a key not given stays -1: "rtol=1" is not "rtol=1,atol=0" */
        if (oq_tolerance_parse(specs[j], names[j], sizeof names[j], &tols[j], &e)) {
            names[j][0] = '\x01'; /* matches no output */
            continue;
        }
        for (size_t i = 0; i < j && !rc; i++) {
            if (strcmp(names[i], names[j]) || (tols[i].rtol == tols[j].rtol && tols[i].atol == tols[j].atol))
                continue;
            if (names[j][0])
                oq_cli_error_in(cmd, "--tolerance: output '%s' given twice ('%s' and '%s')", names[j], specs[i],
                                specs[j]);
            else
                oq_cli_error_in(cmd, "--tolerance: the default given twice ('%s' and '%s')", specs[i], specs[j]);
            rc = -1;
        }
    }
    free(names);
    free(tols);
    return rc;
}

int oq_cli_tolerance_join(const char *cmd, const oq_cli_list *l, char **out)
{
    *out = NULL;
    char **specs;
    size_t n;
    int rc = tolerance_specs(l, &specs, &n);
    if (rc) oq_cli_error_in(cmd, "out of memory");
    if (!rc) rc = tolerance_twice(cmd, specs, n);
    for (size_t i = 0; i < n; i++) free(specs[i]);
    free(specs);
    return rc ? -1 : oq_cli_list_join(l, ";", out);
}

static int takes_arg(const oq_opt *o)
{
    return o->arg != NULL;
}

/* "  -o, --output PATH" */
static int left_part(const oq_opt *o, char *buf, size_t n)
{
    char sh[8] = "";
    if (o->short_name) snprintf(sh, sizeof sh, "-%c, ", o->short_name);
    return snprintf(buf, n, "  %s--%s%s%s", sh, o->name, takes_arg(o) ? " " : "", takes_arg(o) ? o->arg : "");
}

void oq_cli_opts_help(FILE *fp, const oq_opt *opts)
{
    for (const oq_opt *o = opts; o->kind != OQ_OPTK_END; o++) {
        if (o->flags & OQ_OPT_HIDDEN) continue;
        if (o->kind == OQ_OPTK_GROUP) {
            fprintf(fp, "\n%s\n", o->name);
            continue;
        }
        char left[256];
        int w = left_part(o, left, sizeof left);
        fputs(left, fp);
        const char *h = o->help ? o->help : "";
        if (w >= HELP_COLUMN - 1) {
            fputc('\n', fp);
            w = 0;
        }
        for (int first = 1; first || *h; first = 0) {
            const char *nl = strchr(h, '\n');
            size_t len = nl ? (size_t)(nl - h) : strlen(h);
            fprintf(fp, "%*s%.*s\n", (first ? HELP_COLUMN - w : HELP_COLUMN), "", (int)len, h);
            h += len + (nl != NULL);
        }
    }
}

/* The first shown option of the command's table for which `want` holds, or NULL. */
static const oq_opt *first_opt(const oq_opt *o, int (*want)(const oq_opt *))
{
    for (; o->kind != OQ_OPTK_END; o++)
        if (o->kind != OQ_OPTK_GROUP && !(o->flags & OQ_OPT_HIDDEN) && want(o)) return o;
    return NULL;
}

static int single_valued(const oq_opt *o)
{
    return (o->kind == OQ_OPTK_NUMBER || o->kind == OQ_OPTK_STRING) && !(o->flags & OQ_OPT_COMMA);
}

static int many_valued(const oq_opt *o)
{
    return o->kind == OQ_OPTK_LIST || (o->flags & OQ_OPT_COMMA);
}

/* How a repeated option is taken, shown with the command's own options (a fixed example named
 * options that most commands do not have). */
static void repeat_rule(FILE *fp, const oq_opt *opts)
{
    const oq_opt *one = first_opt(opts, single_valued), *many = first_opt(opts, many_valued);
    if (one) {
        const char *a = one->kind == OQ_OPTK_NUMBER ? "3" : "A", *b = one->kind == OQ_OPTK_NUMBER ? "7" : "B";
        fprintf(fp, "\nAn option given twice takes its last value (--%s %s --%s %s: %s).\n", one->name, a,
                one->name, b, b);
    }
    if (many && (many->flags & OQ_OPT_COMMA))
        fprintf(fp, "%sA comma list given twice keeps both (--%s a --%s b: a,b).\n", one ? "" : "\n", many->name,
                many->name);
    else if (many)
        fprintf(fp, "%sA repeatable option keeps every value given (--%s).\n", one ? "" : "\n", many->name);
}

void oq_cli_usage(FILE *fp, const oq_cli_command *c)
{
    fputs(c->head, fp);
    oq_cli_opts_help(fp, c->opts);
    repeat_rule(fp, c->opts);
    fputs(c->foot, fp);
}

/* ---- values ------------------------------------------------------------------------ */

int oq_cli_mask_polarity_option(const oq_opt *o, const char *arg)
{
    if (oq_mask_polarity_parse(arg, o->ctx)) {
        oq_cli_error("--mask-polarity '%s': want keep (1 = valid) or pad (1 = padding)", arg);
        return -1;
    }
    return 0;
}

int oq_cli_graph_opt_option(const oq_opt *o, const char *arg)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    int g = end != arg && !*end && !errno && !isspace((unsigned char)*arg) && v >= -1 && v <= 99 ? oq_graph_opt_from_level((int)v) : -1;
    if (g < 0) {
        oq_cli_error("--graph-opt-level '%s': want -1, 0, 1, 2 or 99", arg);
        return -1;
    }
    *(oq_graph_opt *)o->ctx = (oq_graph_opt)g;
    return 0;
}

int oq_cli_parse_int(const char *cmd, const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    /* blanks before it are refused as those after it are (strtoll skips them): one rule */
    int blank = isspace((unsigned char)*s);
    /* a number past long long would otherwise read as "want a whole number >= LO" */
    if (errno == ERANGE && end != s && !*end && !blank) {
        if (v > 0)
            oq_cli_error_in(cmd, "%s '%s': too large (at most %lld)", opt, s, (long long)hi);
        else
            oq_cli_error_in(cmd, "%s '%s': too small (at least %lld)", opt, s, (long long)lo);
        return -1;
    }
    if (blank || errno || end == s || *end || v < lo || v > hi) {
        if (hi == INT64_MAX)
            oq_cli_error_in(cmd, "%s '%s': want a whole number >= %lld", opt, s, (long long)lo);
        else
            oq_cli_error_in(cmd, "%s '%s': want a whole number in %lld..%lld", opt, s, (long long)lo, (long long)hi);
        return -1;
    }
    *out = v;
    return 0;
}

static void store_number(const oq_opt *o, int64_t v)
{
    switch (o->num_type) {
    case OQ_NUM_INT: *(int *)o->ptr = (int)v; break;
    case OQ_NUM_LONG: *(long *)o->ptr = (long)v; break;
    case OQ_NUM_UNSIGNED: *(unsigned *)o->ptr = (unsigned)v; break;
    case OQ_NUM_ULONG: *(unsigned long *)o->ptr = (unsigned long)v; break;
    default: *(double *)o->ptr = (double)v; break;
    }
}

static int is_number(const char *s)
{
    double v;
    const char *end = oq_text_real(s, &v);
    return end && !*end && isfinite(v);
}

static int is_option(const char *arg)
{
    return arg[0] == '-' && arg[1] != '\0';
}

/* `arg`, then every following number, joined with spaces into the option's buffer
 * (--length-policy balanced 10 64); in a command without operands every word up to the next
 * option: there a word that is no number ("fraction abc") is the option's to refuse, naming it,
 * not a stray argument. */
static int take_words(const char *cmd, const oq_opt *o, const char *arg, int argc, char **argv, int operands)
{
    char *buf = o->ptr;
    size_t cap = (size_t)o->hi, used = (size_t)snprintf(buf, cap, "%s", arg);
    while (used < cap && optind < argc && (is_number(argv[optind]) || (!operands && !is_option(argv[optind]))))
        used += (size_t)snprintf(buf + used, cap - used, " %s", argv[optind++]);
    if (used < cap) return 0;
    oq_cli_error_in(cmd, "--%s: '%s...' is too long", o->name, arg);
    return -1;
}

/* A file list (OQ_OPT_MANY) given no file: "--inputs --outdir o" would otherwise take the next
 * option for its file, and the error would blame that option. */
static int no_files(const char *cmd, const oq_opt *o)
{
    oq_cli_error_in(cmd, "--%s needs at least one file", o->name);
    return -1;
}

/* The joined texts of comma lists (OQ_OPT_COMMA) are kept to the end of the process: a STRING
 * option's pointer, or what a callback took from its text, may outlive the parse. */
static int keep_joined(char *s)
{
    static char **kept;
    static size_t n_kept, cap;
    if (n_kept == cap) {
        size_t ncap = cap ? 2 * cap : 8;
        char **k = realloc(kept, ncap * sizeof *k);
        if (!k) return -1;
        kept = k;
        cap = ncap;
    }
    kept[n_kept++] = s;
    return 0;
}

/* `arg`, or the comma list given before (*so_far, that option's in this parse; NULL: none) joined
 * with it: a list option given twice adds up (the rule of docs/usage.md), where the last one
 * alone silently dropped the first. NULL: out of memory. */
static const char *comma_join(const char *cmd, const char **so_far, const char *arg)
{
    const char *prev = *so_far;
    if (!prev || !arg || !*arg) return *so_far = arg;
    size_t n = strlen(prev) + strlen(arg) + 2;
    char *joined = malloc(n);
    if (!joined || keep_joined(joined)) {
        free(joined);
        oq_cli_error_in(cmd, "out of memory");
        return NULL;
    }
    snprintf(joined, n, "%s,%s", prev, arg);
    return *so_far = joined;
}

static int take(const char *cmd, const oq_opt *o, const char *arg, int argc, char **argv, int operands)
{
    int64_t v;
    /* no option's value is ever "": it is a slip (an unset variable), said before it becomes a
     * file named "" or a number 0 */
    if (arg && !*arg) {
        oq_cli_error_in(cmd, "--%s: an empty value (want %s)", o->name, o->arg);
        return -1;
    }
    switch (o->kind) {
    case OQ_OPTK_FLAG: *(int *)o->ptr = (int)o->ival; return 0;
    case OQ_OPTK_STRING: *(const char **)o->ptr = arg; return 0;
    case OQ_OPTK_WORDS: return take_words(cmd, o, arg, argc, argv, operands);
    case OQ_OPTK_LIST: {
        oq_cli_list *l = o->ptr;
        if ((o->flags & OQ_OPT_MANY) && is_option(arg)) return no_files(cmd, o);
        /* every occurrence takes an argument of its own: argc entries are always enough */
        if (!l->v && !(l->v = calloc((size_t)argc, sizeof *l->v))) {
            oq_cli_error_in(cmd, "out of memory");
            return -1;
        }
        l->v[l->n++] = arg;
        while ((o->flags & OQ_OPT_MANY) && optind < argc && argv[optind][0] != '-') l->v[l->n++] = argv[optind++];
        return 0;
    }
    case OQ_OPTK_NUMBER: {
        char name[128];
        snprintf(name, sizeof name, "--%s", o->name);
        if (oq_cli_parse_int(cmd, name, arg, o->ival, o->hi, &v)) return -1;
        store_number(o, v);
        return 0;
    }
    case OQ_OPTK_CALLBACK: return o->fn(o, arg);
    default: return 0;
    }
}

/* ---- parsing ----------------------------------------------------------------------- */

int oq_cli_given(const oq_cli_list *given, const char *name)
{
    for (size_t i = 0; i < given->n; i++)
        if (!strcmp(given->v[i], name)) return 1;
    return 0;
}

int oq_cli_refuse_pairs(const oq_cli_list *given, const oq_cli_pair *pairs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (oq_cli_given(given, pairs[i].a) && oq_cli_given(given, pairs[i].b)) {
            oq_cli_error("--%s and --%s %s", pairs[i].a, pairs[i].b, pairs[i].why);
            return -1;
        }
    return 0;
}

/* o's name into c->given, once: room for every option of the table (n). */
static int note_given(const oq_cli_command *c, const oq_opt *o, size_t n)
{
    oq_cli_list *l = c->given;
    if (!l || oq_cli_given(l, o->name)) return 0;
    if (!l->v && !(l->v = calloc(n, sizeof *l->v))) {
        oq_cli_error("out of memory");
        return -1;
    }
    l->v[l->n++] = o->name;
    return 0;
}

static size_t count(const oq_opt *opts)
{
    size_t n = 0;
    while (opts[n].kind != OQ_OPTK_END) n++;
    return n;
}

/* The getopt_long tables: long option i has val 256 + i; --help and -h are added. */
static struct option *long_table(const oq_opt *opts, size_t n, char *shorts, size_t shorts_n, int permute)
{
    struct option *lo = calloc(n + 2, sizeof *lo);
    if (!lo) return NULL;
    size_t k = 0, s = 0;
    shorts[s++] = permute ? ':' : '+';
    if (!permute) shorts[s++] = ':';
    for (size_t i = 0; i < n; i++) {
        if (opts[i].kind == OQ_OPTK_GROUP) continue;
        lo[k++] = (struct option){opts[i].name, takes_arg(&opts[i]) ? required_argument : no_argument, NULL,
                                  256 + (int)i};
        if (opts[i].short_name && s + 3 < shorts_n) {
            shorts[s++] = opts[i].short_name;
            if (takes_arg(&opts[i])) shorts[s++] = ':';
        }
    }
    lo[k] = (struct option){"help", no_argument, NULL, 'h'};
    shorts[s++] = 'h';
    shorts[s] = '\0';
    return lo;
}

/* An option getopt did not take: unknown, or without its value. Each command says it in its
 * own words (c->bad_option, with the option for %s). */
static void bad_option(const oq_cli_command *c, const char *arg, int missing_value)
{
    char opt[256];
    if (optopt > 0 && optopt < 256) snprintf(opt, sizeof opt, "-%c", optopt);
    else snprintf(opt, sizeof opt, "%s", arg);
    char what[512];
    if (c->bad_option) snprintf(what, sizeof what, c->bad_option, opt);
    else snprintf(what, sizeof what, missing_value ? "option '%s' needs a value" : "unknown option '%s'", opt);
    oq_cli_error("%s (see 'ortqual %s --help')", what, c->name);
}

static const oq_opt *by_short(const oq_opt *opts, int c)
{
    for (const oq_opt *o = opts; o->kind != OQ_OPTK_END; o++)
        if (o->short_name && o->short_name == c) return o;
    return NULL;
}

/* The option `word` ("--name" or "--name=value", a prefix getopt_long takes included) names:
 * the exact name, else the one option it begins; NULL for none or several. */
static const oq_opt *by_long(const oq_opt *opts, const char *word)
{
    size_t len = strcspn(word + 2, "="), n_found = 0;
    const oq_opt *found = NULL;
    for (const oq_opt *o = opts; o->kind != OQ_OPTK_END; o++) {
        if (o->kind == OQ_OPTK_GROUP || strncmp(o->name, word + 2, len)) continue;
        if (!o->name[len]) return o;
        found = o, n_found++;
    }
    return n_found == 1 ? found : NULL;
}

/* Whether the options of argv[1..] hold --json (up to "--", or the first operand where options
 * end there), wherever it stands: an error in an option before it is answered as JSON too. A
 * word taken as an option's value ("--outdir --json") is not one. */
static int asks_json(const oq_cli_command *c, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *w = argv[i];
        if (!strcmp(w, "--")) return 0;
        if (!is_option(w)) {
            if (c->operands == OQ_CLI_OPERANDS_LAST) return 0;
            continue;
        }
        const oq_opt *o = w[1] == '-' ? by_long(c->opts, w) : by_short(c->opts, w[1]);
        if (o && o->kind == OQ_OPTK_FLAG && !strcmp(o->name, "json")) return 1;
        int value_apart = w[1] == '-' ? !strchr(w, '=') : !w[2];
        if (o && takes_arg(o) && value_apart) i++;
    }
    return 0;
}

int oq_cli_parse(const oq_cli_command *c, int argc, char **argv, int *operands)
{
    parsed_command = c->name;
    if (asks_json(c, argc, argv)) oq_cli_json_asked(c->name);
    size_t n = count(c->opts);
    char shorts[128];
    struct option *lo = long_table(c->opts, n, shorts, sizeof shorts, c->operands == OQ_CLI_OPERANDS);
    if (!lo) {
        oq_cli_error("out of memory");
        return -1;
    }
    const char **lists = calloc(n + 1, sizeof *lists); /* each comma list's text so far, by option */
    if (!lists) {
        free(lo);
        oq_cli_error("out of memory");
        return -1;
    }
    int ch, rc = 0;
    opterr = 0;
    optind = 0; /* 0, not 1: GNU getopt then also forgets the ordering of an earlier parse */
    while (!rc && (ch = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        const oq_opt *o = ch >= 256 ? &c->opts[ch - 256] : by_short(c->opts, ch);
        if (ch == 'h') {
            oq_cli_usage(stdout, c);
            rc = 1;
        } else if (ch == ':' && optopt >= 256 && (c->opts[optopt - 256].flags & OQ_OPT_MANY)) {
            rc = no_files(c->name, &c->opts[optopt - 256]); /* the last option, with nothing after it */
        } else if (ch == ':' || ch == '?' || !o) {
            bad_option(c, argv[optind - 1], ch == ':');
            rc = -1;
        } else {
            const char *arg = o->flags & OQ_OPT_COMMA ? comma_join(c->name, &lists[o - c->opts], optarg) : optarg;
            if (!arg && optarg) rc = -1;
            else if (take(c->name, o, arg, argc, argv, c->operands != OQ_CLI_NO_OPERANDS) || note_given(c, o, n)) rc = -1;
        }
    }
    free(lists);
    free(lo);
    if (!rc && !c->operands && optind < argc) {
        oq_cli_error("unexpected argument '%s' (see 'ortqual %s --help')", argv[optind], c->name);
        rc = -1;
    }
    if (operands) *operands = optind;
    return rc;
}
