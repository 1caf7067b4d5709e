/* Figures drawn in a child process (oq_plot_options.isolate). PLplot's cairo driver lays text
 * out with pango, and GLib ends the process when it cannot start pango's thread (g_error:
 * SIGTRAP, nothing to catch): under a small `ulimit -v` that killed a validation after every
 * configuration had passed, before its summary. Drawn in a child, that end is an error naming
 * the signal, and the parent removes what the child left: a figure set is whole or absent. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio/fileio-impl.h"
#include "ortqual/fileio.h"
#include "ortqual/proc.h"
#include "plot/figures-impl.h"

#define DRAW_TIMEOUT_S 300.0
/* The child's exit status for its own error: this base plus the oq_status, so that an exit of
 * a library it calls (1, 127) is not taken for one. */
#define STATUS_BASE 64

/* A figure file as it was before the child ran: a file there then that is the same file now is
 * not the child's. */
typedef struct figure_file {
    char *path;
    oq_figure_kind kind;
    int was;
    struct stat before;
} figure_file;

typedef struct draw_job {
    const oq_figures *f;
    const oq_plot_options *opt;
    pid_t parent;
} draw_job;

static int draw_child(void *ctx)
{
    const draw_job *j = ctx;
    /* the parent's end (Ctrl-C on `ortqual plot`) comes as SIGTERM, whose handler removes the
     * figure being written; SIGKILL would leave its temporary */
    oq_atomic_catch_signals();
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != j->parent) return 127;
    /* that signal between two figures would leave this set's first figures beside an earlier
     * set's others: the set's files go with the temporary (oq_figures_write_here holds them) */
    oq_plot_files files = {0};
    oq_err e = {0};
    oq_status st = oq_figures_write_here(j->f, j->opt, &files, &e);
    oq_plot_files_clear(&files);
    if (!st) return 0;
    fprintf(stderr, "%s\n", e.msg);
    return STATUS_BASE + (int)st;
}

/* The last line of the child's stderr (its error, or GLib's) into buf. */
static void last_line(const char *tail, char *buf, size_t n)
{
    size_t len = tail ? strlen(tail) : 0;
    while (len && tail[len - 1] == '\n') len--;
    size_t from = len;
    while (from && tail[from - 1] != '\n') from--;
    snprintf(buf, n, "%.*s", (int)(len - from), tail ? tail + from : "");
}

static oq_status outcome(const oq_proc_result *r, oq_err *err)
{
    int exited = !r->signaled && !r->timed_out;
    if (exited && r->exit_code == 0) return OQ_OK;
    char line[512], how[96];
    last_line(r->stderr_tail, line, sizeof line);
    if (exited && r->exit_code > STATUS_BASE && r->exit_code <= STATUS_BASE + OQ_ERR_OUTPUT)
        return oq_err_set(err, (oq_status)(r->exit_code - STATUS_BASE), "%s", line);
    if (r->timed_out) snprintf(how, sizeof how, "was stopped after %.0f s", r->seconds);
    else if (r->signaled)
        snprintf(how, sizeof how, "was killed by SIG%s (signal %d)",
                 sigabbrev_np(r->signal) ? sigabbrev_np(r->signal) : "?", r->signal);
    else snprintf(how, sizeof how, "ended with exit %d", r->exit_code);
    return oq_err_set(err, OQ_ERR_RUNTIME, "the process drawing the figures %s%s%s", how, *line ? ": " : "", line);
}

static int changed(const figure_file *ff)
{
    struct stat now;
    if (lstat(ff->path, &now) != 0) return 0;
    return !ff->was || now.st_ino != ff->before.st_ino || now.st_dev != ff->before.st_dev ||
           now.st_ctim.tv_sec != ff->before.st_ctim.tv_sec || now.st_ctim.tv_nsec != ff->before.st_ctim.tv_nsec;
}

/* A temporary of one of the figures (their paths in dir/NAME form) made by process `pid`. */
static int temp_of(const char *entry, const figure_file *ff, size_t n, pid_t pid)
{
    for (size_t i = 0; i < n; i++)
        if (oq_temp_name_is(entry, strrchr(ff[i].path, '/') + 1, pid)) return 1;
    return 0;
}

/* What the child (`child`: its pid, 0 when it did not start) wrote goes: its figures, its
 * temporaries, and outdir when it made it. Another process's temporaries there stay: it may
 * be writing the same figures in the same folder. */
static void remove_left(const char *outdir, int dir_was, const figure_file *ff, size_t n, pid_t child)
{
    for (size_t i = 0; i < n; i++)
        if (changed(&ff[i])) unlink(ff[i].path);
    DIR *d = child ? opendir(outdir) : NULL;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!temp_of(e->d_name, ff, n, child)) continue;
        char *path = NULL;
        if (asprintf(&path, "%s/%s", outdir, e->d_name) >= 0) unlink(path);
        free(path);
    }
    if (d) closedir(d);
    if (!dir_was) rmdir(outdir); /* when left empty */
}

static void figure_files_free(figure_file *ff, size_t n)
{
    for (size_t i = 0; ff && i < n; i++) free(ff[i].path);
    free(ff);
}

/* Every file the set writes, in the order it writes them, as it is now; NULL on OOM. */
static figure_file *figure_files(const oq_figures *f, const oq_plot_options *opt, size_t *n)
{
    unsigned formats = oq_figure_formats(opt);
    figure_file *ff = calloc(2 * f->n + 1, sizeof *ff);
    *n = 0;
    for (size_t i = 0; ff && i < f->n; i++)
        for (size_t k = 0; ff && k < 2; k++) {
            if (!(formats & oq_figure_fmts[k])) continue;
            figure_file *x = &ff[(*n)++];
            x->kind = f->items[i].kind;
            x->path = oq_figure_path(opt->outdir, f->items[i].name, oq_figure_fmts[k]);
            if (x->path) x->was = lstat(x->path, &x->before) == 0;
            else figure_files_free(ff, *n), ff = NULL;
        }
    return ff;
}

static oq_status list_written(const figure_file *ff, size_t n, oq_plot_files *written, oq_err *err)
{
    for (size_t i = 0; i < n; i++) {
        size_t nk = written->n;
        oq_figure_kind *kind = OQ_PUSH(written->kinds, nk);
        if (!kind || oq_strv_push(&written->paths, &written->n, ff[i].path)) return OQ_NOMEM(err);
        *kind = ff[i].kind;
    }
    return OQ_OK;
}

/* oq_proc_watch.on_start: the child's pid (its group's), kept when it starts. */
static void note_child(void *ctx, int pgid)
{
    if (pgid) *(pid_t *)ctx = pgid;
}

oq_status oq_figures_write_isolated(const oq_figures *f, const oq_plot_options *opt, oq_plot_files *written,
                                    oq_err *err)
{
    size_t n = 0;
    figure_file *ff = figure_files(f, opt, &n);
    if (!ff) return OQ_NOMEM(err);
    struct stat d;
    int dir_was = stat(opt->outdir, &d) == 0;
    draw_job job = {f, opt, getpid()};
    oq_proc_result res = {0};
    pid_t child = 0;
    oq_proc_watch w = {.on_start = note_child, .ctx = &child};
    oq_status st = oq_proc_fork_watch(draw_child, &job, DRAW_TIMEOUT_S, 4096, 0, &w, &res, err);
    if (!st) st = outcome(&res, err);
    if (!st) st = list_written(ff, n, written, err);
    if (st) {
        oq_plot_files_clear(written);
        remove_left(opt->outdir, dir_was, ff, n, child);
    }
    oq_proc_result_clear(&res);
    figure_files_free(ff, n);
    return st;
}
