/* The ortqual tool installed with this library, for a caller of oq_validate_run who leaves
 * self_exe NULL: isolated workers are the tool re-executed wherever a fork is not safe (a caller
 * with threads). Looked for where the library itself lies only (the build's own layout and the
 * install's <libdir>/<bindir> relation), never near the caller's executable or on PATH, where a
 * folder may be anyone's; and only a tool of this library's version is taken: an older one
 * would read this version's plan files wrongly. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ortqual/validate.h"
#include "status/args-impl.h"
#include "version/version-impl.h"

extern char **environ;

/* The folder of the libortqual.so that holds this code; 0 when it was linked in statically (the
 * main program's link map has no name). */
static int own_dir(char *dir, size_t n)
{
    Dl_info info;
    struct link_map *map = NULL;
    char buf[PATH_MAX];
    if (!dladdr1((void *)(uintptr_t)oq_validate_find_tool, &info, (void **)&map, RTLD_DL_LINKMAP) || !map ||
        !map->l_name || !*map->l_name || !realpath(map->l_name, buf))
        return 0;
    char *slash = strrchr(buf, '/');
    if (!slash) return 0;
    *slash = '\0';
    return snprintf(dir, n, "%s", buf) < (int)n;
}

/* The first line `tool --version` prints ("ortqual X.Y.Z"), or "" (a tool that does not run, or
 * says nothing in 30 s). posix_spawn: safe in a process with threads, where fork is not. */
static void version_line(const char *tool, char *line, size_t n)
{
    line[0] = '\0';
    int fd[2];
    if (pipe2(fd, O_CLOEXEC)) return;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    char *argv[] = {(char *)tool, "--version", NULL};
    pid_t pid;
    int started = posix_spawn(&pid, tool, &fa, NULL, argv, environ) == 0;
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    size_t got = 0;
    struct pollfd p = {fd[0], POLLIN, 0};
    while (started && got + 1 < n && !memchr(line, '\n', got) && poll(&p, 1, 30000) > 0) {
        ssize_t k = read(fd[0], line + got, n - 1 - got);
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fd[0]);
    line[got] = '\0';
    line[strcspn(line, "\n")] = '\0';
    if (!started) return;
    kill(pid, SIGKILL); /* the first line is all it takes: not the ONNX Runtime it goes on to load */
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
}

/* Whether `tool` is this library's tool; else why not, appended to `looked`. */
static int is_ours(const char *tool, char *looked, size_t n)
{
    struct stat sb;
    const char *why = NULL;
    char line[128], want[128], buf[320];
    if (stat(tool, &sb) != 0) why = "not there";
    else if (!S_ISREG(sb.st_mode) || access(tool, X_OK) != 0) why = "not an executable file";
    else {
        version_line(tool, line, sizeof line);
        snprintf(want, sizeof want, "ortqual %s", oq_build_version());
        if (!strcmp(line, want)) return 1; /* this build's tool, commit included */
        snprintf(buf, sizeof buf, "it calls itself '%s', not '%s'", line, want);
        why = buf;
    }
    size_t used = strlen(looked);
    if (snprintf(looked + used, n - used, "%s%s (%s)", used ? "; " : "", tool, why) >= (int)(n - used))
        looked[used] = '\0'; /* no room: the places before it are said whole */
    return 0;
}

static int is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* dir + sub + "/ortqual" into out (PATH_MAX); 1 when it fits. */
static size_t add(char *out, const char *dir, const char *sub)
{
    return snprintf(out, PATH_MAX, "%s%s/ortqual", dir, sub) < PATH_MAX;
}

oq_status oq_validate_find_tool(char *path, size_t n, oq_err *err)
{
    OQ_NEED(err, path);
    if (n < 2) return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_find_tool: n %zu: too small for a path", n);
    path[0] = '\0';
    char dir[PATH_MAX], looked[2048] = "";
    char cand[2][PATH_MAX];
    size_t k = 0;
    if (!own_dir(dir, sizeof dir)) k += add(cand[k], ORTQUAL_INSTALL_BIN, ""); /* libortqual.a: its configured prefix */
    else {
        k += add(cand[k], dir, "/" ORTQUAL_LIB_TO_BIN); /* an install */
        k += add(cand[k], dir, "");                    /* the build tree: beside the library */
    }
    for (size_t i = 0; i < k; i++) {
        char real[PATH_MAX];
        if (i && is_dir(cand[i])) continue; /* beside an installed library: ONNX Runtime's folder, no tool */
        if (!is_ours(cand[i], looked, sizeof looked)) continue;
        if (snprintf(path, n, "%s", realpath(cand[i], real) ? real : cand[i]) >= (int)n)
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "oq_validate_find_tool: %s is longer than n %zu", cand[i], n);
        return OQ_OK;
    }
    return oq_err_set(err, OQ_ERR_NOT_FOUND, "no ortqual tool of this library's version (%s) found: looked at %s",
                      oq_build_version(), looked);
}
