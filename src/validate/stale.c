/* --force into an earlier run's folder: the files of that run this one does not write again go,
 * so that the folder holds one run (a glob 'DIR/inputs_*.npz' must not pick up the earlier run's
 * last batches, nor DIR/plots its figures). Only names the tool writes, only where the earlier
 * run's summary.json says the folder is a run's, and never a file this run reads: a user's
 * other files stay. A merge that stops takes an earlier merge's outputs the same way. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ortqual/fileio.h"
#include "validate/validate-impl.h"

int oq_batch_digits(size_t n_batches)
{
    int d = 3;
    for (size_t last = n_batches ? n_batches - 1 : 0; last >= 1000; last /= 10) d++;
    return d;
}

/* The batch index of a per-batch file the tool writes (inputs_NNN.npz, expected_NNN.npz,
 * outputs_<tag>_NNN.npz: 3 digits or more), else -1; its digits in *digits. */
static long batch_file_index(const char *name, int *digits)
{
    size_t n = strlen(name), d = 0;
    if (n < 8 || strcmp(name + n - 4, ".npz")) return -1;
    while (d < n - 4 && d < 18 && name[n - 5 - d] >= '0' && name[n - 5 - d] <= '9') d++;
    const char *num = name + n - 4 - d, *head = num - 1;
    if (d < 3 || head < name || *head != '_') return -1;
    size_t h = (size_t)(head - name);
    int is_inputs = h == 6 && !strncmp(name, "inputs_", 7);
    int is_expected = h == 8 && !strncmp(name, "expected_", 9);
    int is_outputs = h > 8 && !strncmp(name, "outputs_", 8);
    if (!(is_inputs || is_expected || is_outputs)) return -1;
    *digits = (int)d;
    return strtol(num, NULL, 10);
}

/* Every saved output goes (this run writes its own again, under its configurations' names);
 * inputs and expected outputs go unless this run writes them over: from batch n_batches on, and
 * every one numbered with other digits (a run of 5,000 batches left inputs_1000.npz to
 * inputs_4999.npz behind a rerun of 10: only 3-digit names were recognised). */
static int stale_batch_file(const char *name, size_t n_batches)
{
    int digits = 0;
    long index = batch_file_index(name, &digits);
    return index >= 0 && (!strncmp(name, "outputs_", 8) || (size_t)index >= n_batches ||
                          digits != oq_batch_digits(n_batches));
}

static int ends_with(const char *name, const char *tail)
{
    size_t n = strlen(name), t = strlen(tail);
    return n > t && !strcmp(name + n - t, tail);
}

/* The models the tool exports (encoder_*.onnx, sdpa_*.onnx): this run exports its own again. */
static int exported_model(const char *name, const oq_validate_opts *o)
{
    return o->kind != OQ_MODEL_USER && ends_with(name, ".onnx") &&
           (!strncmp(name, "encoder_", 8) || !strncmp(name, "sdpa_", 5));
}

static int same_file(const struct stat *a, const char *path)
{
    struct stat b;
    return path && stat(path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

/* A file this run reads (its model, weights, inputs or expected outputs, which may be an earlier
 * run's files in this very folder) is never removed. */
static int read_by_run(const char *path, const oq_validate_opts *o)
{
    struct stat sb;
    if (!o || stat(path, &sb) != 0) return 0;
    int read = same_file(&sb, o->model_path) || same_file(&sb, o->weights_path);
    for (size_t i = 0; !read && i < o->n_input_files; i++) read = same_file(&sb, o->input_files[i]);
    for (size_t i = 0; !read && i < o->n_expected_files; i++) read = same_file(&sb, o->expected_files[i]);
    return read;
}

/* Returns how many files went. A plots/ planted as a symbolic link is not followed (O_NOFOLLOW),
 * and files go by name below the folder opened (unlinkat): a run never removes files elsewhere. */
static int kept(const char *path, char *const *keep, size_t n_keep)
{
    struct stat sb;
    if (!n_keep || stat(path, &sb) != 0) return 0;
    for (size_t i = 0; i < n_keep; i++)
        if (same_file(&sb, keep[i])) return 1;
    return 0;
}

static int remove_matching(const char *dir, const oq_validate_opts *o, size_t n_batches, int figures, char *const *keep,
                           size_t n_keep)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (fd >= 0 && !d) close(fd);
    char path[4352];
    int removed = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        const char *name = e->d_name;
        int stale = figures ? ends_with(name, ".png") || ends_with(name, ".svg")
                            : stale_batch_file(name, n_batches) || exported_model(name, o);
        if (!stale) continue;
        snprintf(path, sizeof path, "%s/%s", dir, name);
        removed += !read_by_run(path, o) && !kept(path, keep, n_keep) && unlinkat(dirfd(d), name, 0) == 0;
    }
    if (d) closedir(d);
    return removed;
}

/* A run's result files, its verdict first (oq_outdir_forget removes them in this order). */
static const char *const run_result[] = {"summary.json", "report.html", "validate.csv"};
#define N_RESULT (sizeof run_result / sizeof *run_result)

/* validate.csv and the figures of plots/ (the folder too where that empties it and `rmdir_plots`),
 * what a summary's tables stand beside; what went is said in `said`. */
static void drop_tables_said(const char *outdir, int rmdir_plots, char *said, size_t n)
{
    char path[4096];
    oq_outdir_forget(outdir, run_result + N_RESULT - 1, 1, said, n);
    snprintf(path, sizeof path, "%s/plots", outdir);
    int figures = remove_matching(path, NULL, 0, 1, NULL, 0);
    if (((rmdir_plots && rmdir(path) == 0) || figures) && said) {
        size_t len = strlen(said);
        snprintf(said + len, n - len, "%s%s", len ? ", " : "", "plots/");
    }
}

void oq_validate_drop_tables(const char *outdir)
{
    drop_tables_said(outdir, 0, NULL, 0);
}

void oq_validate_merge_drop(const char *outdir, oq_err *err)
{
    char path[4096], said[96] = "", tail[160];
    if (!outdir) return;
    snprintf(path, sizeof path, "%s/shards/plan.json", outdir);
    if (access(path, F_OK) != 0) return; /* not prepared: no merge writes there, its files are another run's */
    oq_outdir_forget(outdir, run_result, N_RESULT - 1, said, sizeof said); /* the verdict first */
    drop_tables_said(outdir, 1, said, sizeof said);
    if (!*said || !err) return;
    snprintf(tail, sizeof tail, "; the earlier merge's %s removed", said);
    oq_validate_err_tail(err, tail);
}

void oq_validate_err_tail(oq_err *err, const char *tail)
{
    if (!err) return;
    size_t n = strlen(tail), at = strnlen(err->msg, sizeof err->msg);
    if (n > sizeof err->msg - 1) n = sizeof err->msg - 1;
    size_t most = sizeof err->msg - 1 - n, from = at < most ? at : most; /* whole, however long the reason */
    memcpy(err->msg + from, tail, n);
    err->msg[from + n] = '\0';
}

/* A JUnit XML file of validate or replay (--junit DIR/NAME.xml: its name is the user's, its
 * first lines are the tool's), a regular file. */
static int run_junit(const char *dir, const char *name)
{
    char path[4352], head[160] = "";
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!ends_with(name, ".xml") || lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) return 0;
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(head, 1, sizeof head - 1, f) : 0;
    if (f) fclose(f);
    head[n] = 0;
    return strstr(head, "\n<testsuites name=\"ortqual validate\"") || strstr(head, "\n<testsuites name=\"ortqual replay\"");
}

/* The earlier run's JUnit XML in its folder: a --force run without --junit (or with another
 * name) would leave it, green or red, for a CI to read beside this run's summary. */
static void drop_run_junit(const char *outdir)
{
    DIR *d = opendir(outdir);
    char path[4352];
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!run_junit(outdir, e->d_name)) continue;
        snprintf(path, sizeof path, "%s/%s", outdir, e->d_name);
        unlink(path);
    }
    if (d) closedir(d);
}

int oq_validate_forget_result(const char *outdir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/summary.json", outdir);
    static const char *const refusal[] = {"error.json"};
    oq_outdir_forget(outdir, refusal, 1, NULL, 0);
    if (access(path, F_OK) != 0) return 0; /* not a run's folder: a user's files of these names stay */
    oq_outdir_forget(outdir, run_result, N_RESULT, NULL, 0);
    drop_run_junit(outdir);
    return 1;
}

oq_status oq_validate_check_clearable(const char *outdir, oq_err *err)
{
    char plots[4096], probe[4200];
    struct stat sb;
    snprintf(plots, sizeof plots, "%s/plots", outdir);
    if (lstat(plots, &sb) == 0 && !S_ISDIR(sb.st_mode))
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s: %s, where the run draws its figures (ortqual does not write "
                          "through links in an output folder: remove it, or give another output folder)",
                          plots, S_ISLNK(sb.st_mode) ? "a symbolic link" : "not a folder");
    DIR *d = opendir(plots);
    int figures = 0;
    for (struct dirent *e; d && !figures && (e = readdir(d));)
        figures = ends_with(e->d_name, ".png") || ends_with(e->d_name, ".svg");
    if (d) closedir(d);
    if (!figures) return OQ_OK;
    /* a file made and removed: access(2) says yes to root on a read-only mount */
    snprintf(probe, sizeof probe, "%s/.ortqual-probe.XXXXXX", plots);
    int fd = mkstemp(probe);
    if (fd >= 0) {
        close(fd);
        unlink(probe);
        return OQ_OK;
    }
    return oq_err_set(err, OQ_ERR_OUTPUT, "%s: the earlier run's figures cannot be removed: %s (overwriting "
                      "replaces every file of the earlier run: make the folder writable, or choose another output "
                      "folder)",
                      plots, strerror(errno));
}

int oq_validate_drop_left_work(const char *outdir)
{
    char path[4096];
    struct stat sb;
    snprintf(path, sizeof path, "%s/.work", outdir);
    if (lstat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)) return 0; /* a link there is refused where it is made */
    oq_remove_tree(path);
    return 1;
}

void oq_validate_clear_stale(const oq_validate_opts *o, size_t n_batches, char *const *keep, size_t n_keep)
{
    char path[4096];
    remove_matching(o->outdir, o, n_batches, 0, keep, n_keep);
    /* the encoder's weights: a run of another model writes none (a replay's folder kept them) */
    snprintf(path, sizeof path, "%s/weights.npz", o->outdir);
    if (o->kind == OQ_MODEL_USER && !o->weights_path && !read_by_run(path, o)) unlink(path);
    snprintf(path, sizeof path, "%s/plots", o->outdir);
    remove_matching(path, o, 0, 1, NULL, 0);
    rmdir(path); /* when left empty; a run that draws makes it again */
}

void oq_validate_drop_temps(const char *outdir)
{
    DIR *d = opendir(outdir);
    char path[4352];
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!oq_temp_name_is(e->d_name, NULL, 0)) continue;
        snprintf(path, sizeof path, "%s/%s", outdir, e->d_name);
        unlink(path);
    }
    if (d) closedir(d);
}
