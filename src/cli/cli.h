/* Shared declarations of the command-line tool (not part of the library). */
#ifndef ORTQUAL_CLI_H
#define ORTQUAL_CLI_H

#include <stdio.h>

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

/* ortqual --version: tool version and the ORT version it loaded. */
int oq_cli_version(int argc, char **argv);

#endif
