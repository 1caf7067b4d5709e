/* Shared declarations of the command-line tool (not part of the library). */
#ifndef ORTQUAL_CLI_H
#define ORTQUAL_CLI_H

#include <glob.h>
#include <stdint.h>
#include <stdio.h>

#include "ortqual/fileio.h"
#include "ortqual/mask.h"
#include "ortqual/runtime.h"
#include "ortqual/shard.h"

/* Exit statuses shared by every subcommand. */
enum {
    OQ_EXIT_OK = 0,      /* everything passed */
    OQ_EXIT_FAIL = 1,    /* a check ran and failed */
    OQ_EXIT_USAGE = 2,   /* bad usage or bad input */
    OQ_EXIT_RUNTIME = 3  /* the runtime or the system failed */
};

/* The exit status of a library error: the runtime, an output that cannot be written or memory
 * is OQ_EXIT_RUNTIME; the rest (arguments, files read, shapes, masks) OQ_EXIT_USAGE. The
 * library's table, which a shard's error.json records too. */
static inline int oq_cli_exit_of(oq_status st) { return oq_status_exit_code(st); }

struct oq_cli_cmd {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
};

/* Each src/cli/cmd_<name>.c defines:
 *     int cmd_<name>(int argc, char **argv);        argv[0] is "<name>"
 *     const char cmd_<name>_summary[] = "one line";
 * and the build generates the table entry. */
#define OQ_CMD(name)                                                                     \
    int cmd_##name(int argc, char **argv);                                               \
    extern const char cmd_##name##_summary[];
#include "cmds_decl.inc"
#undef OQ_CMD

/* A data directory shipped with the tool (e.g. "onnx-backend/attention"):
 * <exe>/../share/ortqual/REL when installed, else the source tree's tests/data/REL.
 * Returns a malloc'd absolute path, or NULL when neither exists. */
char *oq_cli_data_path(const char *rel);

/* A run directory given where a summary is read stands for DIR/summary.json (in buf);
 * anything else is returned as it is. */
const char *oq_cli_summary_of(const char *arg, char *buf, size_t n);
/* A folder with error.json and no summary.json is a run that was refused (or stopped before its
 * result): what it said is the answer, not "summary.json: cannot open" or "not a run directory?".
 * 1 when so, said as `cmd`'s error ("DIR holds error.json and no summary.json: the run was
 * refused ...: MSG"); so is a shard's folder with started.json and no summary.json, in the
 * merge's words (oq_shard_dir_problem: "... shard 0 of 2 unfinished: started on HOST ...");
 * 0, nothing said, otherwise. */
int oq_cli_refused_run(const char *cmd, const char *dir);
/* The summary at `path`, where a merge wrote it, held to its plan before `cmd` (plot, report) draws
 * it (oq_validate_merged_check): its refusal returned (err); where the plan is not there to hold
 * it to, "ortqual CMD: warning: ..." on stderr, the line in `unchecked` (n bytes; "" when checked
 * or not a merge's: the page lists it) and OQ_OK: never drawn green in silence. */
oq_status oq_cli_merged_check(const char *cmd, const char *path, char *unchecked, size_t n, oq_err *err);

/* A JSON string of `s` (NULL: JSON null) for text from outside (a path, a message naming
 * one), kept when it is not UTF-8: each byte that starts no valid sequence becomes U+FFFD
 * (oq_text_utf8). NULL only when out of memory. */
struct json_t;
struct json_t *oq_cli_json_text(const char *s);

/* The "schema" of each --json document only the tool makes (the library's documents name
 * theirs in its headers: OQ_VALIDATE_SCHEMA, OQ_INSPECT_SCHEMA, ...; docs/summary-schema.md
 * lists all): a program reading stdout tells what it got, and which version, from that key. */
#define OQ_CLI_CONFIGS_SCHEMA "ortqual.configs/1"   /* validate --list-configs --json */
#define OQ_CLI_DOCTOR_SCHEMA "ortqual.doctor/1"
#define OQ_CLI_ESTIMATE_SCHEMA "ortqual.estimate/1"
#define OQ_CLI_SLURM_SCHEMA "ortqual.slurm/1"
#define OQ_CLI_PLOT_SCHEMA "ortqual.plot/1"         /* plot --json: the files written */
#define OQ_CLI_ERROR_SCHEMA OQ_ERROR_SCHEMA           /* a refusal, in every subcommand */

/* A refusal: "ortqual CMD: MSG" on stderr and, with --json (`json`), the same on stdout as
 * one JSON object {schema "ortqual-error/1", command, status, error, exit_code}, so that a
 * step parsing --json gets a document, not an empty stdout (docs/usage.md). Returns `rc`. */
int oq_cli_refuse(const char *cmd, int json, oq_status st, const char *msg, int rc);
/* --json given to `cmd` (oq_cli_parse says it before parsing, wherever --json stands on the
 * line): a refusal with exit 2 or 3 still prints one ortqual-error/1 object on stdout, its
 * `error` the first line oq_cli_error said (oq_cli_json_said). A command that printed its own
 * document (or oq_cli_refuse its object) says oq_cli_json_answered, and nothing is added. */
void oq_cli_json_asked(const char *cmd);
void oq_cli_json_answered(void);
void oq_cli_json_said(const char *msg);
/* At the end of the process (main): the object of an unanswered --json refusal ("status" from
 * the exit: 2 "invalid argument", 3 "runtime error"). Returns rc. */
int oq_cli_json_refused(int rc);
/* The same refusal as --junit FILE (`junit`; NULL: nothing), written atomically: one <error>
 * case saying why, in place of an earlier run's file that CI would still publish as this run's.
 * Returns `rc`. */
int oq_cli_junit_refused(const char *cmd, const char *junit, oq_status st, const char *msg, int rc);
/* "the run did not finish: ortqual CMD started <UTC time> (pid N) and has not written its result:
 * it is still running, or it was killed (SIGKILL ...) or crashed", into buf: what a run's result
 * files say from its start until it writes them (gate's verdict, --junit). */
void oq_cli_unfinished_text(const char *cmd, char *buf, size_t n);
/* At a run's start, before its work: --junit FILE (`junit`; NULL: nothing) replaced atomically by
 * one <error> case of type "unfinished" saying oq_cli_unfinished_text, so that a run ended at any
 * moment (SIGKILL, which no handler sees) leaves an earlier run's green file there never: only a
 * run that ends writes its own (or its refusal). A FILE inside the output folder `outdir` (may be
 * NULL) that is not there yet is not made (a folder must be new or empty: the library's check
 * refuses one that holds it; the library removes an earlier run's there). OQ_OK, or the write's
 * error ("--junit: ...", the file removed: an earlier run's is no fallback). */
oq_status oq_cli_junit_unfinished(const char *cmd, const char *junit, const char *outdir, oq_err *err);
/* Whether `path` names a file directly in folder `outdir` (may be NULL: no), by their text. */
int oq_cli_in_outdir(const char *path, const char *outdir);

/* `s` (a test folder's name, a path, a tensor's name: text from outside) for a line of text
 * output: itself when it holds no control character, else a copy with each one as \xNN, as
 * messages show them (oq_text_printable), so that "\033[2J" does not clear the terminal nor
 * "\n" forge a line. A copy lasts until 8 more are made: enough for one printf's arguments,
 * not to be kept. NULL for NULL. */
const char *oq_cli_shown(const char *s);

/* ortqual --version: tool version and the ORT version it loaded. */
int oq_cli_version(int argc, char **argv);

/* ---- option tables (src/cli/cli_opts.c), after git's parse-options ------------------
 *
 * Each subcommand describes every option once; its usage text and getopt_long table are
 * made from that description, so the help cannot list an option the parser does not take
 * or miss one it does:
 *
 *     struct args a = ...;
 *     const oq_opt opts[] = {
 *         OQ_OPT_GROUP("output:"),
 *         OQ_OPT_STRING("outdir", "DIR", &a.outdir, "where the files go (default out)"),
 *         OQ_OPT_FLAG("json", &a.json, "print JSON"),
 *         OQ_OPT_NUMBER("repeat", "N", &a.repeat, 0, 1000, "timed calls (default 5)"),
 *         OQ_OPT_END};
 *     oq_cli_command c = {"cmd", head, foot, opts};
 *     int rc = oq_cli_parse(&c, argc, argv, NULL);   (1: --help printed, -1: error printed)
 *
 * --help and -h are added to every table. An option given twice takes its last value, a
 * repeatable one (LIST, OQ_OPT_COMMA) every value given; the usage text says so (OQ_CLI_REPEATS). */
typedef struct oq_opt oq_opt;
/* A callback's value check: a one-line error on stderr naming the option and -1 when the
 * value is bad, 0 when it was taken. */
typedef int (*oq_opt_fn)(const oq_opt *o, const char *arg);

enum oq_opt_kind {
    OQ_OPTK_END = 0,
    OQ_OPTK_GROUP,    /* a heading in the usage text */
    OQ_OPTK_FLAG,     /* no argument: *(int *)ptr = ival */
    OQ_OPTK_STRING,   /* *(const char **)ptr = the argument (the last one given wins: every
                         single-valued option is so, as in git; docs/usage.md) */
    OQ_OPTK_WORDS,    /* the argument and the numbers after it (a command without operands:
                         every word up to the next option), joined with spaces into the
                         char buffer ptr of hi bytes: "--length-policy balanced 10 64" */
    OQ_OPTK_LIST,     /* repeatable: appended to the oq_cli_list ptr (room for them all) */
    OQ_OPTK_NUMBER,   /* a whole number in ival..hi into the number ptr points to */
    OQ_OPTK_CALLBACK  /* fn(o, arg), with its state in ctx */
};
enum {
    OQ_OPT_HIDDEN = 1, /* taken, but not in the usage text */
    OQ_OPT_MANY = 2,   /* LIST: also every operand after the argument, up to the next option
                          ("--inputs out/inputs_*.npz" as the shell expands it) */
    OQ_OPT_COMMA = 4   /* STRING or CALLBACK taking a comma list: given again, it gets the lists
                          given so far joined with ',' ("--variants a --variants b" is a,b; the
                          last one alone, it silently dropped the first) */
};
enum { OQ_NUM_INT = 1, OQ_NUM_LONG, OQ_NUM_UNSIGNED, OQ_NUM_ULONG, OQ_NUM_DOUBLE };

struct oq_opt {
    int kind;
    const char *name;  /* without "--"; for a group, its heading */
    char short_name;   /* 0: none */
    const char *arg;   /* the argument as the usage text names it; NULL: takes none */
    const char *help;  /* lines separated by '\n' */
    void *ptr;         /* where the value goes */
    int num_type;      /* OQ_OPTK_NUMBER: the type ptr points to */
    int64_t ival, hi;  /* FLAG: the value; NUMBER: the range; WORDS: hi is the buffer size */
    oq_opt_fn fn;      /* CALLBACK */
    void *ctx;         /* CALLBACK: its state */
    unsigned flags;
};

/* Repeatable options' arguments (borrowed from argv); release with oq_cli_list_clear. */
typedef struct oq_cli_list {
    const char **v;
    size_t n;
} oq_cli_list;
void oq_cli_list_clear(oq_cli_list *l);
/* Every entry of `l` joined with `sep` into *out (malloc'ed; NULL when `l` is empty). Prints
 * and returns -1 when out of memory. */
int oq_cli_list_join(const oq_cli_list *l, const char *sep, char **out);
/* --tolerance's entries joined with ';' into *out, as oq_cli_list_join; an output (or the
 * default) given twice with another value is refused first, saying both (-1, said). */
int oq_cli_tolerance_join(const char *cmd, const oq_cli_list *l, char **out);

#define OQ_NUM_TYPE(p)                                                                       \
    _Generic((p), int *: OQ_NUM_INT, long *: OQ_NUM_LONG, unsigned *: OQ_NUM_UNSIGNED,         \
             unsigned long *: OQ_NUM_ULONG, double *: OQ_NUM_DOUBLE)
#define OQ_OPT_END {OQ_OPTK_END}
#define OQ_OPT_GROUP(heading) {OQ_OPTK_GROUP, (heading)}
#define OQ_OPT_FLAG(n, p, h) {OQ_OPTK_FLAG, (n), 0, NULL, (h), (p), 0, 1}
/* --quiet, the same in every subcommand that has it: -q too (a CI template passes -q to each) */
#define OQ_OPT_QUIET(p, h) {OQ_OPTK_FLAG, "quiet", 'q', NULL, (h), (p), 0, 1}
#define OQ_OPT_SET(n, p, v, h) {OQ_OPTK_FLAG, (n), 0, NULL, (h), (p), 0, (v)}
#define OQ_OPT_STRING(n, a, p, h) {OQ_OPTK_STRING, (n), 0, (a), (h), (p)}
#define OQ_OPT_WORDS(n, a, buf, h) {OQ_OPTK_WORDS, (n), 0, (a), (h), (buf), 0, 0, sizeof(buf)}
#define OQ_OPT_LIST(n, a, l, h) {OQ_OPTK_LIST, (n), 0, (a), (h), (l)}
#define OQ_OPT_NUMBER(n, a, p, lo, hi_, h) {OQ_OPTK_NUMBER, (n), 0, (a), (h), (p), OQ_NUM_TYPE(p), (lo), (hi_)}
#define OQ_OPT_CALLBACK(n, a, f, c, h) {OQ_OPTK_CALLBACK, (n), 0, (a), (h), NULL, 0, 0, 0, (f), (c)}
#define OQ_OPT_COMMA_STRING(n, a, p, h) {OQ_OPTK_STRING, (n), 0, (a), (h), (p), 0, 0, 0, NULL, NULL, OQ_OPT_COMMA}
#define OQ_OPT_COMMA_CALLBACK(n, a, f, c, h) {OQ_OPTK_CALLBACK, (n), 0, (a), (h), NULL, 0, 0, 0, (f), (c), OQ_OPT_COMMA}

enum { OQ_CLI_NO_OPERANDS = 0, OQ_CLI_OPERANDS, OQ_CLI_OPERANDS_LAST };

typedef struct oq_cli_command {
    const char *name;       /* "validate", "export sdpa" */
    const char *head;       /* the usage line and what the command does, before the options */
    const char *foot;       /* exit statuses and examples, after them */
    const oq_opt *opts;
    int operands;           /* OQ_CLI_NO_OPERANDS, OQ_CLI_OPERANDS (mixed with the options) or
                               OQ_CLI_OPERANDS_LAST (options end at the first operand) */
    const char *bad_option; /* how it says an option is unknown or lacks its value ("%s" is
                               the option); NULL: "unknown option '%s'" */
    oq_cli_list *given;     /* NULL, or where the names of the options given go, each once, in
                               the order first given: what a default's value cannot tell */
} oq_cli_command;

/* Parse argv[1..]. Returns 0 when every option was taken (*operands, may be NULL: the index
 * of the first operand), 1 after --help printed the usage (exit 0), -1 after an error was
 * printed (exit OQ_EXIT_USAGE). A command without operands refuses any. */
int oq_cli_parse(const oq_cli_command *c, int argc, char **argv, int *operands);
/* Whether option `name` (without "--") is among those oq_cli_parse put into c->given. */
int oq_cli_given(const oq_cli_list *given, const char *name);
/* Two options that contradict each other: given together, whichever won, the other was dropped
 * without a word. */
typedef struct oq_cli_pair {
    const char *a, *b, *why; /* why: after "--a and --b ", e.g. "are alternatives: ..." */
} oq_cli_pair;
/* The first of the n pairs whose options were both given: "ortqual CMD: --a and --b why" and -1. */
int oq_cli_refuse_pairs(const oq_cli_list *given, const oq_cli_pair *pairs, size_t n);
/* --mask NAME and --no-mask (validate, replay): the input the mask contract applies to, or none. */
#define OQ_CLI_MASK_OPT(p)                                                                        \
    OQ_OPT_STRING("mask", "NAME", (p),                                                            \
                  "the input the mask contract applies to (default: the one rank-2\n"             \
                  "input named like a mask that is no Attention attn_mask as it is\n"             \
                  "nor token ids; a lone rank-2 input is refused, not guessed)")
#define OQ_CLI_NO_MASK_OPT(p) OQ_OPT_FLAG("no-mask", (p), "no mask input: no contract, every element valid")
/* --mask and --no-mask given together (validate, replay). */
#define OQ_CLI_MASK_PAIR                                                                          \
    {"mask", "no-mask", "contradict: --mask names the input the mask contract checks, --no-mask "  \
                        "says there is none; give one"}
/* c->head, the options, c->foot. */
void oq_cli_usage(FILE *fp, const oq_cli_command *c);
/* A one-line error on stderr, "ortqual CMD: ..." with the command oq_cli_parse parsed last
 * ("ortqual: ..." before any): for callbacks and checks shared by several commands. */
void oq_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same naming `cmd` ("ortqual CMD: ..."): a command's own refusals. Both keep the first line
 * said for a --json refusal's object (oq_cli_json_said). */
void oq_cli_error_in(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A library message in the tool's terms: the API fields it names (seq_axes, no_mask,
 * events.num_features) as the options that set them (--seq-axis, --no-mask, --num-features);
 * into buf, or msg itself when nothing needs saying otherwise or buf is too small. */
const char *oq_cli_terms(const char *msg, char *buf, size_t n);
/* The option lines of a table (what oq_cli_usage prints between head and foot). */
void oq_cli_opts_help(FILE *fp, const oq_opt *opts);

/* --repeat and --warmup: one range wherever a run times calls (validate, replay) or one is
 * planned (estimate: its --repeat 0 described a plan validate refuses). */
#define OQ_CLI_REPEAT_OPT_H(p, h) OQ_OPT_NUMBER("repeat", "N", (p), 1, INT32_MAX, h)
#define OQ_CLI_WARMUP_OPT_H(p, h) OQ_OPT_NUMBER("warmup", "N", (p), 0, INT32_MAX, h)
#define OQ_CLI_REPEAT_OPT(p) OQ_CLI_REPEAT_OPT_H(p, "timed calls per batch after the first call (5)")
#define OQ_CLI_WARMUP_OPT(p) OQ_CLI_WARMUP_OPT_H(p, "untimed calls before them (1)")
/* --mask-polarity keep|pad (validate, replay, bench): which value of the mask marks a valid
 * element, into the oq_mask_polarity at o->ctx. */
int oq_cli_mask_polarity_option(const oq_opt *o, const char *arg);
#define OQ_CLI_MASK_POLARITY_OPT(p)                                                                \
    OQ_OPT_CALLBACK("mask-polarity", "keep|pad", oq_cli_mask_polarity_option, (p),                \
                    "which mask value marks a valid element: keep, 1 (true) = valid\n"            \
                    "(attention_mask), or pad, 1 (true) = padding (PyTorch's\n"                   \
                    "key_padding_mask, src_key_padding_mask); default: the model's\n"             \
                    "contract, else as the graph reads it, else keep; one the graph\n"            \
                    "reads the other way is refused (it would judge the padding)")
#define OQ_CLI_MASK_POLARITY_PAIR                                                                 \
    {"mask-polarity", "no-mask", "contradict: --mask-polarity says how to read the mask, --no-mask " \
                                 "says there is none; give one"}
/* --graph-opt-level N (bench, validate, replay): ORT's number -1, 0, 1, 2 or 99 into the
 * oq_graph_opt at o->ctx. */
int oq_cli_graph_opt_option(const oq_opt *o, const char *arg);
#define OQ_CLI_GRAPH_OPT_OPT(p, what)                                                              \
    OQ_OPT_CALLBACK("graph-opt-level", "N", oq_cli_graph_opt_option, (p),                         \
                    "ORT's graph optimizations" what ":\n-1 ORT's default (all), 0 off, 1 basic,\n" \
                    "2 extended, 99 all (default -1)")
/* --timeout of a worker (validate, replay): one range, so 0 is not "no limit" in one of them. */
#define OQ_CLI_TIMEOUT_OPT(p, what) OQ_OPT_NUMBER("timeout", "S", (p), 1, 1LL << 40, what ", in seconds (300)")

/* `s` as a whole number in lo..hi (hi INT64_MAX: no upper bound) for option `opt`
 * ("--heads") of subcommand `cmd`; prints a one-line error and returns -1 otherwise. */
int oq_cli_parse_int(const char *cmd, const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out);

/* ---- runtime options shared by every subcommand that runs ONNX Runtime ----------
 * (src/cli/cli_runtime.c)
 *
 *     struct oq_cli_runtime cr = {0};
 *     const oq_opt opts[] = {..., OQ_CLI_RUNTIME_OPTS(&cr), OQ_OPT_END};
 *     ... oq_cli_parse ...
 *     oq_runtime *rt;
 *     int rc = oq_cli_runtime_open(&cr, &rt);    (loads ORT, registers --ep-lib, checks --ep-option)
 *     if (rc) return rc;
 *     oq_session_opts so = {0};
 *     oq_cli_runtime_session_opts(&cr, &so);     (ep, ep_lib, provider options)
 *     ...
 *     oq_runtime_free(rt);
 *     oq_cli_runtime_clear(&cr);
 */
struct oq_cli_runtime {
    const char *ort_lib;  /* --ort-lib PATH (NULL: ORTQUAL_ORT_LIB, then the bundled copy) */
    const char *ep;       /* --ep NAME (NULL: cpu) */
    size_t n_ep_libs;     /* --ep-lib NAME=PATH, repeatable */
    char **ep_lib_names, **ep_lib_paths;
    size_t n_options;     /* --ep-option KEY=VALUE, repeatable */
    char **option_keys, **option_values;
    size_t n_session_configs; /* --session-config KEY=VALUE, repeatable (validate, replay) */
    char **session_config_keys, **session_config_values;
    int given;            /* any of the four options was given */
};

/* The callbacks behind the four options (ctx: the struct oq_cli_runtime, or for --ort-lib
 * and --ep the field). */
int oq_cli_runtime_string(const oq_opt *o, const char *arg);
int oq_cli_runtime_ep_lib(const oq_opt *o, const char *arg);
int oq_cli_runtime_ep_option(const oq_opt *o, const char *arg);
int oq_cli_runtime_session_config(const oq_opt *o, const char *arg);
/* The warning of each session config entry the ORT `version` takes unchecked (a key the headers
 * ortqual is built with do not know, passed to a newer ORT), one "ortqual CMD: WARNING: ..." line
 * each on stderr: said before the first session is made, not after hours of runs. */
void oq_cli_session_config_warn(const char *cmd, const char *version, size_t n, const char *const *keys,
                                const char *const *values);
/* Whether `warning` is one of those (said already: not again among a summary's warnings). */
int oq_cli_session_config_warned(const char *warning, const char *version, size_t n, const char *const *keys,
                                 const char *const *values);
/* --session-config KEY=VALUE into the struct oq_cli_runtime *cr. */
#define OQ_CLI_SESSION_CONFIG_OPT(cr)                                                                \
    OQ_OPT_CALLBACK("session-config", "KEY=VAL", oq_cli_runtime_session_config, (cr),                 \
                    "ORT session config entry of every ORT session (repeatable), e.g.\n"            \
                    "optimization.disable_specified_optimizers=GatherToSliceFusion")

#define OQ_CLI_ORT_LIB_HELP                                                                  \
    "libonnxruntime.so to load: a path (./NAME for one here), or a bare name\n"             \
    "for the dynamic loader to search (default:\n$ORTQUAL_ORT_LIB, else the copy bundled beside ortqual)"
#define OQ_CLI_EP_LIB_HELP                                                                   \
    "plugin EP library for NAME (repeatable; default for cuda:\n"                            \
    "libonnxruntime_providers_cuda.so beside the core library)"
#define OQ_CLI_EP_OPTION_HELP "provider option (repeatable), e.g. sdpa_kernel=16, device_id=1;\nCUDA keys and values are checked"
/* --ort-lib, --ep, --ep-lib, --ep-option into the struct oq_cli_runtime *cr. */
#define OQ_CLI_RUNTIME_OPTS(cr)                                                                      \
    OQ_OPT_CALLBACK("ort-lib", "PATH", oq_cli_runtime_string, (cr), OQ_CLI_ORT_LIB_HELP),             \
    OQ_OPT_CALLBACK("ep", "NAME", oq_cli_runtime_string, (cr),                                        \
                    "execution provider: cpu (default), cuda, or a plugin EP named\n"               \
                    "with --ep-lib NAME=PATH (any other name is refused)"),                          \
    OQ_OPT_CALLBACK("ep-lib", "NAME=PATH", oq_cli_runtime_ep_lib, (cr), OQ_CLI_EP_LIB_HELP),          \
    OQ_OPT_CALLBACK("ep-option", "KEY=VAL", oq_cli_runtime_ep_option, (cr), OQ_CLI_EP_OPTION_HELP)
/* The same where each configuration names its runtime (validate, bench): --ep is taken only
 * to be refused with the reason, and the provider options say which configurations get them. */
#define OQ_CLI_RUNTIME_OPTS_PER_CONFIG(cr)                                                           \
    OQ_OPT_CALLBACK("ort-lib", "PATH", oq_cli_runtime_string, (cr), OQ_CLI_ORT_LIB_HELP),             \
    {OQ_OPTK_CALLBACK, "ep", 0, "NAME", NULL, NULL, 0, 0, 0, oq_cli_runtime_string, (cr), OQ_OPT_HIDDEN}, \
    OQ_OPT_CALLBACK("ep-lib", "NAME=PATH", oq_cli_runtime_ep_lib, (cr), OQ_CLI_EP_LIB_HELP),          \
    OQ_OPT_CALLBACK("ep-option", "KEY=VAL", oq_cli_runtime_ep_option, (cr),                           \
                    OQ_CLI_EP_OPTION_HELP "\n(each configuration names its runtime: the options go to\n" \
                    "those on cuda or a plugin EP; cpu and ref take none)")

/* ORTQUAL_ORT_CUDA_DIR applied to ORTQUAL_ORT_LIB (main, before any command); a DIR without
 * libonnxruntime.so is no error until ORT is loaded from it: oq_cli_cuda_dir_problem says why
 * (NULL when there is nothing to say). */
void oq_cli_apply_cuda_dir(void);
const char *oq_cli_cuda_dir_problem(void);
/* err of a failed oq_runtime_load(ort_lib) reworded as that problem, when it is the cause. */
void oq_cli_load_failed(const char *ort_lib, oq_err *err);
/* A library named with `opt` ("--ort-lib") must be a regular file before any work starts (a
 * bare name is the dynamic loader's to search); prints and returns -1 when not. */
int oq_cli_check_lib(const char *opt, const char *path);
/* The same for every --ep-lib path: in validate and replay a missing one skipped its
 * configurations after the batches were made (doctor reports it as a failed check instead). */
int oq_cli_check_ep_libs(const struct oq_cli_runtime *cr);
/* Check --ep (cpu, cuda, or a name given an --ep-lib) and the --ep-option values for it; prints
 * and returns OQ_EXIT_USAGE when bad. */
int oq_cli_runtime_check(const struct oq_cli_runtime *cr);
/* Load ORT and register every --ep-lib. Prints "ortqual CMD: <reason>" and returns
 * OQ_EXIT_RUNTIME (ORT or an EP library cannot be loaded) or OQ_EXIT_USAGE
 * (bad --ep-option); OQ_EXIT_OK with *rt set otherwise. */
int oq_cli_runtime_open(const struct oq_cli_runtime *cr, oq_runtime **rt);
/* oq_cli_runtime_open without the option checks: ORT loaded, every --ep-lib registered. */
int oq_cli_runtime_load(const struct oq_cli_runtime *cr, oq_runtime **rt);
/* Register every --ep-lib into `rt`; the first failure is returned in err. */
oq_status oq_cli_runtime_register(const struct oq_cli_runtime *cr, oq_runtime *rt, oq_err *err);
/* Set so->ep, so->ep_lib and the provider options from `cr` (other fields untouched).
 * The strings stay owned by `cr`. */
void oq_cli_runtime_session_opts(const struct oq_cli_runtime *cr, oq_session_opts *so);
/* Whether a CUDA execution provider runs here: the --ep-lib named one, or the library beside
 * the core one where the device files show an NVIDIA GPU, registers and offers a device. */
int oq_cli_cuda_available(const struct oq_cli_runtime *cr);
/* The same asked of a runtime already loaded (its --ep-libs registered): the CUDA EP library is
 * registered into it if needed, so a caller that goes on to use CUDA does not load ORT twice. */
int oq_cli_cuda_on(const struct oq_cli_runtime *cr, oq_runtime *rt);
void oq_cli_runtime_clear(struct oq_cli_runtime *cr);

/* ---- sharding options shared by validate and replay (src/cli/cli_shard.c) ----------
 *
 *     struct oq_cli_shard sh = {.cmd = "validate"};
 *     const oq_opt opts[] = {..., OQ_CLI_SHARD_OPTS(&sh), OQ_OPT_END};
 *     ... oq_cli_parse ...
 *     if (oq_cli_shard_check(&sh, outdir_given)) return OQ_EXIT_USAGE;
 *     o.shard = sh.spec;
 */
struct oq_cli_shard {
    const char *cmd;   /* for messages: "validate", "replay" */
    oq_shard_spec spec;
    int run, by_given; /* --shard, --shard-by were given */
};
int oq_cli_shard_run(const oq_opt *o, const char *arg);
int oq_cli_shard_prepare(const oq_opt *o, const char *arg);
int oq_cli_shard_by(const oq_opt *o, const char *arg);
#define OQ_CLI_SHARD_OPTS(sh)                                                                         \
    OQ_OPT_CALLBACK("prepare-shards", "N", oq_cli_shard_prepare, (sh),                                 \
                    "prepare a split into N shards and run nothing: batches checked\n"               \
                    "and written to DIR, models exported, DIR/shards/plan.json records\n"             \
                    "the plan (or let 'ortqual slurm' do it all)"),                                   \
    OQ_OPT_CALLBACK("shard", "I/N", oq_cli_shard_run, (sh),                                           \
                    "run shard I (0..N-1) of the prepared plan into DIR/shards/I/, with\n"           \
                    "the options and files it was prepared with (another --inputs or\n"             \
                    "--expected file, or none where it had --inputs: exit 2);\n"                    \
                    "'ortqual merge DIR' gives the verdict\n"                                       \
                    "(the shard's report.html and --junit say they are shard I's only)"),          \
    OQ_OPT_CALLBACK("shard-by", "batch|config", oq_cli_shard_by, (sh),                               \
                    "split by batches (default: each batch's reference computed once)\n"            \
                    "or by configurations (each shard runs the reference and some others)")
/* After parsing: prints and returns -1 for contradictions or a missing --outdir. */
int oq_cli_shard_check(const struct oq_cli_shard *s, const char *outdir);
/* The prepare step's answer (from DIR/shards/plan.json): what was prepared, what to run next. */
int oq_cli_print_prepared(const char *outdir);

/* ---- comma lists of option values (src/cli/cli_list.c) ---- */
/* One item of a list (n from 1): 0 when taken, -1 after printing why not. */
typedef int (*oq_cli_item_fn)(void *ctx, const char *item, size_t n);
/* Each item of the comma list `s` given to option `opt` (its name as the user wrote it) of
 * `cmd`, in order, to fn; an empty item (a stray comma) or one holding whitespace (a space
 * after a comma) is refused naming its place. Returns
 * -1 after an error was printed. */
int oq_cli_each_item(const char *cmd, const char *opt, const char *s, oq_cli_item_fn fn, void *ctx);

/* ---- human output shared by validate and replay (src/cli/cli_report.c) ---- */
/* An output file (--junit, --verdict: OPT; PATH may be NULL) checked before the work, which
 * would otherwise find a path that cannot take it only after all of it; a folder not made yet is
 * fine when the run makes it (`outdir`, may be NULL). Prints "ortqual CMD: OPT: ..." and returns
 * the exit status; 0 when ready. */
int oq_cli_output_ready(const char *cmd, const char *opt, const char *path, const char *outdir);
/* Whether paths a and b name one file: the same file (st_dev, st_ino) where both exist, else the
 * same name in the same folder (one the run will make). */
int oq_cli_same_file(const char *a, const char *b);
/* An output file (OPT: PATH, may be NULL) that would be one the run reads or writes in `outdir`
 * (may be NULL): its name matches one of `made` (fnmatch patterns) and it is in that folder. Prints
 * "ortqual CMD: OPT PATH is OUTDIR's NAME: give another OPT" and returns
 * OQ_EXIT_USAGE; 0 when it is not. */
int oq_cli_clashes_outdir(const char *cmd, const char *opt, const char *path, const char *outdir,
                          const char *const *made, size_t n_made);
/* The same for --junit and a validation's output folder (validate, replay, merge): its
 * summary.json, validate.csv, report.html, batches, models, ... */
int oq_cli_junit_in_run(const char *cmd, const char *junit, const char *outdir);
/* --padding auto|zero|report into the int at ctx (oq_validate_opts.padding). */
int oq_cli_padding(const oq_opt *o, const char *arg);
#define OQ_CLI_PADDING_OPT(opts)                                                                     \
    OQ_OPT_CALLBACK("padding", "auto|zero|report", oq_cli_padding, &(opts)->padding,                \
                    "padded elements of masked outputs: zero (must be exactly 0), report\n"         \
                    "(counted, not judged), auto (zero for ortqual's exports; for --model,\n"       \
                    "zero where the reference is exactly 0 on every padded element)")
/* --seq-axis OUTPUT=AXIS|none or OUTPUT=AXIS,batch=AXIS (validate, replay, convert), repeatable, into the struct oq_cli_seq_axes
 * at ctx (oq_validate_opts.seq_axes): read here, checked against the model by the library. */
struct oq_cli_seq_axes {
    size_t n;
    struct oq_seq_axis *v; /* the output names malloc'ed */
};
int oq_cli_seq_axis(const oq_opt *o, const char *arg);
void oq_cli_seq_axes_clear(struct oq_cli_seq_axes *s);
#define OQ_CLI_SEQ_AXIS_OPT(s)                                                                      \
    OQ_OPT_CALLBACK("seq-axis", "OUTPUT=AXIS", oq_cli_seq_axis, (s),                                \
                    "the axis of OUTPUT that the mask's lengths run along (repeatable),\n"         \
                    "where the model's dim names or denotations do not say it and the\n"         \
                    "sizes cannot; none: OUTPUT is not per position, every element\n"           \
                    "valid; AXIS,batch=AXIS: the batch axis too (sequence first: 0,batch=1;\n"  \
                    "needed where two axes before AXIS have the batch's size, as a stacked\n"   \
                    "KV cache [2,B,H,L,D] with B = 2: 3,batch=1) (docs/real-models.md)")
struct oq_validate_summary;
struct oq_validate_progress;
/* Colour only for a terminal, and never when NO_COLOR is set (and not empty). */
int oq_cli_color(FILE *fp);
/* Progress: OQ_CLI_PROGRESS_AUTO shows per-batch progress once a run takes longer than a
 * few seconds (one updating line on a terminal, a plain line every few seconds otherwise). */
enum { OQ_CLI_PROGRESS_AUTO, OQ_CLI_PROGRESS_ALWAYS, OQ_CLI_PROGRESS_NEVER };
/* --progress auto|always|never into the int ctx points to (an option table's callback). */
int oq_cli_progress_option(const oq_opt *o, const char *arg);
#define OQ_CLI_PROGRESS_HELP                                                                 \
    "per-batch progress with elapsed time and ETA on stderr: auto\n"                         \
    "(default: after a few seconds; one updating line on a terminal,\n"                      \
    "plain lines every few seconds otherwise), always or never"
/* A progress line on stderr (the oq_validate_opts.progress callback; ctx: the progress state). */
void oq_cli_progress_line(void *ctx, const char *line);
/* The per-batch callback (oq_validate_opts.on_batch). */
void oq_cli_progress_batch(void *ctx, const struct oq_validate_progress *p);
/* The preparation's callback (oq_validate_opts.on_prepare): "preparing inputs  batch N/M
 * elapsed ..  ETA ..", paced as the batches' line. */
void oq_cli_progress_prepare(void *ctx, size_t done, size_t n);
/* The time left of a run whose configurations each run every batch, from its progress reports
 * (cli_eta.c): the configuration running at its own pace since its first report, the ones after
 * it at the pace of the configurations under test measured so far (the reference, always first,
 * is not one of them: read from the cache it reports every batch at once). While the reference
 * runs no such pace is measured: the time is the reference's alone, and `partial` says so.
 * Zero-initialised. */
typedef struct oq_cli_eta {
    int started;
    size_t config;                /* the configuration the marks are of */
    double t0, t_last;            /* its first and last report */
    size_t done0, done_last;      /* batches done at those */
    double tested_s;              /* configurations under test that ended: seconds and batches */
    size_t tested_batches;        /* between their first and last reports */
    int partial;                  /* the last update's time is the running reference's only */
} oq_cli_eta;
/* A report at time t (seconds, any origin): seconds left, or -1 while no pace is measured
 * (a configuration's first report). A report of an earlier configuration is not counted. */
double oq_cli_eta_update(oq_cli_eta *e, size_t config, size_t n_configs, size_t done, size_t n_batches, double t);
/* One row per configuration (per-batch median and p90 latency), its reason when it did not
 * pass, and the verdict line. */
void oq_cli_print_verdict_table(const struct oq_validate_summary *summary, const char *outdir);
/* Every --inputs pattern of `cmd` expanded into *g, in order (a quoted glob is expanded here;
 * one that matches nothing stays as it is, so reading it names the file). -1 after an error
 * was printed; free *g with globfree when `*globbed` was set. */
int oq_cli_glob_inputs(const char *cmd, const oq_cli_list *patterns, glob_t *g, int *globbed);
/* Takes `dir` for this command (oq_outdir_lock_create, lock file `name`, NULL: the folder's),
 * once the descriptors a run needs are there (a soft limit below them raised): 0 (*lock NULL
 * where the folder cannot be locked: its own checks follow), else the message printed ("ortqual
 * CMD: DIR: in use by another ortqual run (pid N, ...)", exit 2; too few descriptors, exit 3) and
 * the exit status; a refusal is also written to `junit` (may be NULL) as oq_cli_junit_refused
 * writes it. Release with oq_outdir_lock_free. */
int oq_cli_outdir_lock(const char *cmd, const char *dir, const char *name, const char *junit, oq_outdir_lock **lock);
/* The same for DIR/OQ_OUTDIR_LOCK of a folder given as the command's operand (merge, report):
 * refused, it says to wait for the holder, not to choose another output folder. */
int oq_cli_dir_lock(const char *cmd, const char *dir, const char *junit, oq_outdir_lock **lock);
/* The same, the folder's lock taken shared (oq_outdir_lock_create_shared): a shard's. */
int oq_cli_outdir_lock_shared(const char *cmd, const char *dir, const char *junit, oq_outdir_lock **lock);
/* One command at a time writing the output file `path` (gate's --verdict, --junit): the lock of
 * oq_cli_outdir_lock on "DIR/.ortqual.<name>.lock" beside it, refused as "ortqual CMD: OPT PATH:
 * in use by another ortqual run (pid N, holding ...): wait for it to end", exit 2. Each write is
 * atomic, but two runs given one file ended with the last one's verdict, a failure replaced
 * unsaid. 0 (*lock NULL where the folder cannot be locked) or the exit status. */
#define OQ_OUTDIR_LOCK_FILE_FMT ".ortqual.%s.lock"
int oq_cli_file_lock(const char *cmd, const char *opt, const char *path, oq_outdir_lock **lock);
/* The descriptors a run needs (its pipes, batches, figures, lock): a soft limit below them is
 * raised towards the hard one; 0, else "ortqual CMD: too few file descriptors (EMFILE): ..."
 * printed and OQ_EXIT_RUNTIME. Before anything is opened or made. */
int oq_cli_check_descriptors(const char *cmd);
/* "ortqual-out/<prefix><YYYYmmdd-HHMMSS>" into buf, made (empty) here; "-2", "-3", ... added
 * when a run of the same second has it. */
void oq_cli_default_outdir(char *buf, size_t n, const char *prefix);
/* Removes `dir` (one oq_cli_default_outdir chose; "" for none) if it is empty, and ortqual-out/
 * too when this process made it and it is left empty. */
void oq_cli_default_outdir_drop(const char *dir);
/* Notes said before a --model run of validate or replay (cli_notes.c), appended to `note`:
 * an --inputs file holds saved outputs of the model while `reference` (a configuration or
 * option, as the user would read it) is the reference, so they are not compared (`instead` says
 * how to judge against them). The files are read in order up to the first that holds any (its
 * name in the note, and with several files how many were read): one that holds none, a second
 * that does, was left unsaid. Nothing when none holds any, or the model or a file cannot be read
 * (the run says why). */
struct oq_cli_run_output;
void oq_cli_note_unjudged_outputs(struct oq_cli_run_output *out, const char *cmd, const char *model,
                                  const char *const *inputs, size_t n_inputs, const char *reference,
                                  const char *instead);
/* `what` (a configuration or option) judges a model that computes in float32 at the looser
 * tolerances of `prec` ("fp16", "bf16", "tf32"), though nothing of it runs in that precision:
 * said, with both tolerances and `instead`. Nothing for a precision as tight as float32's. */
void oq_cli_note_looser_precision(struct oq_cli_run_output *out, const char *cmd, const char *model, const char *what,
                                  const char *prec, const char *instead);
/* The reference's ORT `ref_lib` (--reference-ort-lib) reports the version and build info of the
 * library the run loads and is not its bytes, one of the two without an ELF build-id (f->same
 * OQ_SAME_ORT_BUILD_INFO, oq_validate_self_comparison): a patched copy or another build of that
 * commit, which cannot be told apart; said and kept (ort_build_unknown). Nothing otherwise. */
struct oq_self_comparison;
void oq_cli_note_ort_identity(struct oq_cli_run_output *out, const char *cmd, const char *ref_lib,
                              const struct oq_self_comparison *f);
/* A note of `kind` (summary.json's "notes", docs/summary-schema.md): "ortqual CMD: note: TEXT"
 * said with out->note's lines, and kept for the run's summary.json (oq_validate_run_noted). */
void oq_cli_note(struct oq_cli_run_output *out, const char *cmd, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void oq_cli_notes_clear(struct oq_cli_run_output *out);
/* What a validation writes and prints besides summary.json and report.html. */
struct oq_cli_run_output {
    int json;          /* print summary.json instead of the table */
    const char *junit; /* --junit FILE, or NULL */
    int progress;      /* OQ_CLI_PROGRESS_* */
    /* lines said once the inputs are accepted (before the run's first line), so that an input
     * error is the one line said */
    char note[4096];
    /* the notes among them (oq_cli_note), kinds and texts, for summary.json */
    size_t n_notes;
    const char **note_kinds;
    char **note_texts;
};
/* Fill the runtime and progress parts of `o`, run the validation, write report.html (and the
 * JUnit XML), print the table (or the summary JSON) and return the exit status. */
struct oq_validate_opts;
/* In a worker: a crash prints its signal and a backtrace to stderr before the process dies of
 * it (skipped under AddressSanitizer, whose report says more). */
void oq_cli_crash_backtrace(void);
/* The same for a command that runs ONNX Runtime in its own process (bench): "WHO: crashed
 * with signal ..." and then `after` (a line, NULL: none). Both strings must outlive it. */
void oq_cli_crash_report(const char *who, const char *after);
/* DIR/report.html from DIR/summary.json (a failure is said, not fatal) and the JUnit XML
 * asked for (NULL: none; a failure is OQ_EXIT_RUNTIME: CI reads it). */
int oq_cli_write_reports(const char *cmd, const char *outdir, int report_written, const char *junit);
int oq_cli_run_validation(const char *cmd, struct oq_validate_opts *o, const struct oq_cli_runtime *cr,
                          const char *self, const struct oq_cli_run_output *out);

#endif
