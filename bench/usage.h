/* The benchmark programs are run by hand: their arguments are their only interface. --help (or
 * -h) prints the usage on stdout and exits 0 without measuring; an argument a program does not
 * take prints it on stderr and exits 2 (a "--help" taken for the tool's path ran the whole
 * benchmark and failed). */
#ifndef ORTQUAL_BENCH_USAGE_H
#define ORTQUAL_BENCH_USAGE_H

#include <stdio.h>
#include <string.h>

static inline int bench_is_help(const char *arg)
{
    return !strcmp(arg, "--help") || !strcmp(arg, "-h");
}

/* The usage, for --help (`help`: exit 0) or a usage error (exit 2). */
static inline int bench_usage(const char *usage, int help)
{
    fputs(usage, help ? stdout : stderr);
    return help ? 0 : 2;
}

#endif
