/* ortqual: the command-line tool. One cmd_<name>.c per subcommand; the table
 * of subcommands is generated at build time from those files (cmds.inc), so
 * adding a subcommand means adding one file. */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cli.h"
#include "ortqual/fileio.h"

static const struct oq_cli_cmd commands[] = {
#include "cmds.inc"
    {NULL, NULL, NULL}
};

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: ortqual [--version] [--help] <command> [<args>]\n"
            "       ortqual help <command>\n"
            "\n"
            "Qualify attention models on ONNX Runtime: numerics against an independent C\n"
            "reference, which attention kernel ran, what stayed on the GPU, and what it costs.\n"
            "\n"
            "commands:\n");
    for (size_t i = 0; commands[i].name; i++)
        fprintf(fp, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(fp, "\n'ortqual help <command>' (or 'ortqual <command> --help') explains one command.\n");
}

/* A closed fd 0, 1 or 2 would be the next file opened: the table meant for stdout would go into
 * an output file. Each is held by /dev/null opened read-only, where a write fails (EBADF) as it
 * did on the closed descriptor, and close_stdout says so. */
static void hold_std_fds(void)
{
    for (int fd = 0; fd <= STDERR_FILENO; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
        int held = open("/dev/null", O_RDONLY); /* the lowest free descriptor: fd itself */
        if (held >= 0 && held != fd) dup2(held, fd), close(held);
    }
}

/* argv[0] names the subcommand (or --version). */
static int run_command(int argc, char **argv)
{
    if (!strcmp(argv[0], "--version")) return oq_cli_version(argc, argv);
    for (size_t i = 0; commands[i].name; i++)
        if (!strcmp(argv[0], commands[i].name)) return commands[i].fn(argc, argv);
    /* options come after the command: one before it is no command's */
    if (argv[0][0] == '-')
        fprintf(stderr, "ortqual: unknown option '%s' (options follow the command: 'ortqual CMD --help')\n", oq_cli_shown(argv[0]));
    else
        fprintf(stderr, "ortqual: '%s' is not a command (see 'ortqual --help')\n", oq_cli_shown(argv[0]));
    return OQ_EXIT_USAGE;
}

/* `ortqual help CMD [MODEL]` is `ortqual CMD [MODEL] --help`. */
static int help(int argc, char **argv)
{
    if (argc > 2) {
        fprintf(stderr, "ortqual help: too many arguments (usage: ortqual help <command> [<model>])\n");
        return OQ_EXIT_USAGE;
    }
    /* help is no subcommand: `ortqual help help` is the top-level usage */
    if (argc == 1 && !strcmp(argv[0], "help")) {
        usage(stdout);
        return 0;
    }
    char *args[] = {argv[0], argc == 2 ? argv[1] : "--help", "--help", NULL};
    return run_command(argc + 1, args);
}

#if defined(__SANITIZE_ADDRESS__)
#define OQ_FAST_EXIT 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OQ_FAST_EXIT 0
#endif
#endif
#ifndef OQ_FAST_EXIT
#define OQ_FAST_EXIT 1
#endif

/* Why an earlier write to stdout failed when the last flush cannot tell: glibc drops a buffer
 * whose write failed (fflush(NULL) before a fork), and its errno with it. A write of nothing
 * asks the descriptor again (closed: EBADF; /dev/full: ENOSPC); a file system left without a
 * free block is ENOSPC too. */
static int stdout_errno(void)
{
    errno = 0;
    if (write(STDOUT_FILENO, "", 0) < 0) return errno;
    struct statvfs v;
    return fstatvfs(STDOUT_FILENO, &v) == 0 && v.f_bavail == 0 ? ENOSPC : EIO;
}

/* Standard output checked once everything was printed, as git and curl do: a table or JSON that
 * never arrived (a full disk, a closed descriptor) must not exit 0. The first failure's status
 * stands. A reader that went away (EPIPE, where SIGPIPE is ignored; at its default the process
 * ends by it, silently, as any filter under `| head -1`) stopped reading on purpose, as git
 * takes it. fd 1 closed with nothing written is no failure either (EBADF from fclose alone). */
static int close_stdout(int rc)
{
    errno = 0;
    int flushed = fflush(stdout) == 0, saved = errno;
    int bad = !flushed || ferror(stdout);
    if (bad && flushed) saved = stdout_errno();
    if (!bad && fclose(stdout) != 0 && errno != EBADF) bad = 1, saved = errno;
    if (!bad || saved == EPIPE) return rc;
    fprintf(stderr, "ortqual: stdout: write failed: %s\n", strerror(saved ? saved : EIO));
    return rc ? rc : OQ_EXIT_RUNTIME;
}

/* A command that returned has written its files and freed what it held: ONNX Runtime's static
 * destructors at exit (~0.03 s in a process that loaded it, bench/validate_cost) are waste, so
 * the process ends at once, its output flushed. Sanitizer builds exit as usual: LeakSanitizer
 * checks at exit. */
static int finish(int rc)
{
    rc = close_stdout(oq_cli_json_refused(rc));
    if (!OQ_FAST_EXIT) return rc;
    fflush(NULL);
    _exit(rc);
}

int main(int argc, char **argv)
{
    hold_std_fds();
    /* what the library keeps and writes itself (rows, reasons, report.html) says our options */
    oq_set_terms(oq_cli_terms);
    /* Ctrl-C or SIGTERM while a file is written (export, convert, plot ...) leaves no
     * "<file>.tmp.<pid>.XXXXXX"; validate and gate put their own handlers over these */
    oq_atomic_catch_signals();
    /* ORT 1.29+ starts Microsoft's 1DS telemetry client when its environment is created:
     * it leaves an empty /tmp/mat-debug-<pid>.log per process (hundreds in a long validation,
     * one per worker) and tries to upload. Off unless the user set the variable; workers
     * inherit it. Recorded in every summary's ORT environment. */
    setenv("ORT_DISABLE_TELEMETRY", "1", 0);
    /* A validation allocates and frees the same few hundred KB per batch (deflate, archive
     * buffers, tensors): glibc's default gives the heap's top back to the kernel on each free
     * and takes it again (8 brk calls per batch, the largest system cost of writing the
     * inputs). Kept up to 16 MiB: peak memory is unchanged, the churn goes. */
    mallopt(M_TRIM_THRESHOLD, 16 << 20);
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
    oq_cli_apply_cuda_dir();
    if (argc < 2) {
        usage(stderr);
        return OQ_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || (!strcmp(name, "help") && argc == 2)) {
        usage(stdout);
        return finish(0);
    }
    if (!strcmp(name, "help")) return finish(help(argc - 2, argv + 2));
    return finish(run_command(argc - 1, argv + 1));
}
