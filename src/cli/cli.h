/* Shared declarations of the command-line tool (not part of the library). */
#ifndef ORTQUAL_CLI_H
#define ORTQUAL_CLI_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "ortqual/runtime.h"
#include "ortqual/shard.h"

/* Exit statuses shared by every subcommand. */
enum {
    OQ_EXIT_OK = 0,      /* everything passed */
    OQ_EXIT_FAIL = 1,    /* a check ran and failed */
    OQ_EXIT_USAGE = 2,   /* bad usage or bad input */
    OQ_EXIT_RUNTIME = 3  /* the runtime or the system failed */
};

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

/* ortqual --version: tool version and the ORT version it loaded. */
int oq_cli_version(int argc, char **argv);

/* ---- runtime options shared by every subcommand that runs ONNX Runtime ----------
 * (src/cli/cli_runtime.c)
 *
 *     struct oq_cli_runtime cr = {0};
 *     static const struct option longopts[] = {OQ_CLI_RUNTIME_LONGOPTS, {"json", 0, 0, 'j'}, {0}};
 *     while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
 *         int r = oq_cli_runtime_opt(&cr, c, optarg);
 *         if (r < 0) return OQ_EXIT_USAGE;       (message already printed)
 *         if (r > 0) continue;
 *         ...
 *     }
 *     oq_runtime *rt;
 *     int rc = oq_cli_runtime_open(&cr, &rt);    (loads ORT, registers --ep-lib, checks --ep-option)
 *     if (rc) return rc;
 *     oq_session_opts so = {.graph_opt_level = -1};
 *     oq_cli_runtime_session_opts(&cr, &so);     (ep, ep_lib, provider options)
 *     ...
 *     oq_runtime_free(rt);
 *     oq_cli_runtime_free(&cr);
 */
enum {
    OQ_CLI_OPT_ORT_LIB = 0x1100,
    OQ_CLI_OPT_EP,
    OQ_CLI_OPT_EP_LIB,
    OQ_CLI_OPT_EP_OPTION
};

#define OQ_CLI_RUNTIME_LONGOPTS                                                          \
    {"ort-lib", required_argument, NULL, OQ_CLI_OPT_ORT_LIB},                            \
        {"ep", required_argument, NULL, OQ_CLI_OPT_EP},                                  \
        {"ep-lib", required_argument, NULL, OQ_CLI_OPT_EP_LIB},                          \
        {"ep-option", required_argument, NULL, OQ_CLI_OPT_EP_OPTION}

struct oq_cli_runtime {
    const char *ort_lib;  /* --ort-lib PATH (NULL: ORTQUAL_ORT_LIB, then the bundled copy) */
    const char *ep;       /* --ep NAME (NULL: cpu) */
    size_t n_ep_libs;     /* --ep-lib NAME=PATH, repeatable */
    char **ep_lib_names, **ep_lib_paths;
    size_t n_options;     /* --ep-option KEY=VALUE, repeatable */
    char **option_keys, **option_values;
};

/* `s` as a whole number in lo..hi (hi INT64_MAX: no upper bound) for option `opt`
 * ("--heads") of subcommand `cmd`; prints a one-line error and returns -1 otherwise. */
int oq_cli_parse_int(const char *cmd, const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out);

/* Handle one getopt result: 1 = consumed, 0 = not a runtime option,
 * -1 = bad value (one-line error printed to stderr; exit OQ_EXIT_USAGE). */
int oq_cli_runtime_opt(struct oq_cli_runtime *cr, int opt, const char *arg);
/* The help lines for the four options, indented like other options. With
 * `per_config` (validate, bench: each configuration names its runtime) --ep is
 * left out and --ep-option says which configurations take the options. */
void oq_cli_runtime_help(FILE *fp, int per_config);
/* Check the --ep-option values for --ep; prints and returns OQ_EXIT_USAGE when bad. */
int oq_cli_runtime_check(const struct oq_cli_runtime *cr);
/* Load ORT and register every --ep-lib. Prints "ortqual: <reason>" and returns
 * OQ_EXIT_RUNTIME (ORT or an EP library cannot be loaded) or OQ_EXIT_USAGE
 * (bad --ep-option); OQ_EXIT_OK with *rt set otherwise. */
int oq_cli_runtime_open(const struct oq_cli_runtime *cr, oq_runtime **rt);
/* Register every --ep-lib into `rt`; the first failure is returned in err. */
oq_status oq_cli_runtime_register(const struct oq_cli_runtime *cr, oq_runtime *rt, oq_err *err);
/* Set so->ep, so->ep_lib and the provider options from `cr` (other fields untouched).
 * The strings stay owned by `cr`. */
void oq_cli_runtime_session_opts(const struct oq_cli_runtime *cr, oq_session_opts *so);
void oq_cli_runtime_free(struct oq_cli_runtime *cr);

/* ---- sharding options shared by validate and replay (src/cli/cli_shard.c) ---- */
enum { OQ_CLI_OPT_SHARD = 0x1200, OQ_CLI_OPT_PREPARE_SHARDS, OQ_CLI_OPT_SHARD_BY };

#define OQ_CLI_SHARD_LONGOPTS                                                            \
    {"shard", required_argument, NULL, OQ_CLI_OPT_SHARD},                                \
        {"prepare-shards", required_argument, NULL, OQ_CLI_OPT_PREPARE_SHARDS},          \
        {"shard-by", required_argument, NULL, OQ_CLI_OPT_SHARD_BY}

struct oq_cli_shard {
    oq_shard_spec spec;
    int run, by_given;
};
/* 1 = consumed, 0 = not a shard option, -1 = bad value (error printed). */
int oq_cli_shard_opt(const char *cmd, struct oq_cli_shard *s, int opt, const char *arg);
/* After parsing: -1 (error printed) for contradictions or a missing --outdir. */
int oq_cli_shard_check(const char *cmd, const struct oq_cli_shard *s, const char *outdir);
void oq_cli_shard_help(FILE *fp);

/* ---- human output shared by validate and replay (src/cli/cli_report.c) ---- */
struct json_t;
/* A progress line on stderr (the oq_validate_opts.progress callback). */
void oq_cli_progress_line(void *ctx, const char *line);
/* One row per configuration, its reason when it did not pass, and the verdict line. */
void oq_cli_print_verdict_table(const struct json_t *summary, const char *outdir);
/* The prepare step's answer: what was prepared and what to run next. */
void oq_cli_print_prepared(const struct json_t *plan, const char *outdir);
/* "ortqual-out/<prefix><YYYYmmdd-HHMMSS>" into buf. */
void oq_cli_default_outdir(char *buf, size_t n, const char *prefix);
/* Fill the runtime and progress parts of `o`, run the validation, print the table (or the
 * summary JSON) and return the exit status. */
struct oq_validate_opts;
int oq_cli_run_validation(const char *cmd, struct oq_validate_opts *o, const struct oq_cli_runtime *cr,
                          const char *self, int json);

#endif
