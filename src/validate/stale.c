/* --force into an earlier run's folder: the files of that run this one does not write again go,
 * so that the folder holds one run (a glob 'DIR/inputs_*.npz' must not pick up the earlier run's
 * last batches, nor DIR/plots its figures). Only names the tool writes, only where the earlier
 * run's summary.json says the folder is a run's, and never a file this run reads: a user's
 * other files stay. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "validate/validate-impl.h"

/* The batch index of a per-batch file the tool writes (inputs_NNN.npz, expected_NNN.npz,
 * outputs_<tag>_NNN.npz), else -1. */
static long batch_file_index(const char *name)
{
    size_t n = strlen(name);
    int is_inputs = !strncmp(name, "inputs_", 7) && n == 14;
    int is_expected = !strncmp(name, "expected_", 9) && n == 16;
    int is_outputs = !strncmp(name, "outputs_", 8) && n > 16 && name[n - 8] == '_';
    if (!(is_inputs || is_expected || is_outputs) || strcmp(name + n - 4, ".npz")) return -1;
    const char *d = name + n - 7;
    for (int i = 0; i < 3; i++)
        if (d[i] < '0' || d[i] > '9') return -1;
    return (d[0] - '0') * 100 + (d[1] - '0') * 10 + (d[2] - '0');
}

/* Every saved output goes (this run writes its own again, under its configurations' names);
 * inputs and expected outputs from batch n_batches on (those below are written over). */
static int stale_batch_file(const char *name, size_t n_batches)
{
    long index = batch_file_index(name);
    return index >= 0 && (!strncmp(name, "outputs_", 8) || (size_t)index >= n_batches);
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

static void remove_matching(const char *dir, const oq_validate_opts *o, size_t n_batches, int figures)
{
    DIR *d = opendir(dir);
    char path[4352];
    for (struct dirent *e; d && (e = readdir(d));) {
        const char *name = e->d_name;
        int stale = figures ? ends_with(name, ".png") || ends_with(name, ".svg")
                            : stale_batch_file(name, n_batches) || exported_model(name, o);
        if (!stale) continue;
        snprintf(path, sizeof path, "%s/%s", dir, name);
        if (!read_by_run(path, o)) unlink(path);
    }
    if (d) closedir(d);
}

void oq_validate_drop_tables(const char *outdir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/validate.csv", outdir);
    unlink(path);
    snprintf(path, sizeof path, "%s/plots", outdir);
    remove_matching(path, NULL, 0, 1);
}

void oq_validate_clear_stale(const oq_validate_opts *o, size_t n_batches)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/summary.json", o->outdir);
    if (!o->overwrite || oq_shard_is_run(o) || access(path, F_OK) != 0) return;
    remove_matching(o->outdir, o, n_batches, 0);
    /* the encoder's weights: a run of another model writes none (a replay's folder kept them) */
    snprintf(path, sizeof path, "%s/weights.npz", o->outdir);
    if (o->kind == OQ_MODEL_USER && !o->weights_path && !read_by_run(path, o)) unlink(path);
    snprintf(path, sizeof path, "%s/plots", o->outdir);
    remove_matching(path, o, 0, 1);
    rmdir(path); /* when left empty; a run that draws makes it again */
}
