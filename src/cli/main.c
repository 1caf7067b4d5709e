/* ortqual: the command-line tool. One cmd_<name>.c per subcommand; the table
 * of subcommands is generated at build time from those files (cmds.inc), so
 * adding a subcommand means adding one file. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct oq_cli_cmd commands[] = {
#include "cmds.inc"
    {NULL, NULL, NULL}
};

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: ortqual [--version] [--help] <command> [<args>]\n"
            "\n"
            "Qualify attention models on ONNX Runtime: numerics against an independent C\n"
            "reference, which attention kernel ran, what stayed on the GPU, and what it costs.\n"
            "\n"
            "commands:\n");
    for (size_t i = 0; commands[i].name; i++)
        fprintf(fp, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(fp, "\n'ortqual <command> --help' explains one command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return OQ_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(name, "--version")) return oq_cli_version(argc - 1, argv + 1);
    for (size_t i = 0; commands[i].name; i++)
        if (!strcmp(name, commands[i].name)) return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "ortqual: '%s' is not a command (see 'ortqual --help')\n", name);
    return OQ_EXIT_USAGE;
}
