/* Plans and shards: what names a validation plan, how it is split, and what a shard checks
 * before it runs its part (ortqual/shard.h). The JSON of plan.json and started.json is
 * written and read in json.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ortqual/fileio.h"
#include "runtime/runtime-impl.h"
#include "validate/validate-impl.h"

const char *oq_shard_state_name(oq_shard_state s)
{
    static const char *const names[] = {"missing", "unfinished", "failed", "interrupted"};
    return (unsigned)s < sizeof names / sizeof *names ? names[s] : "unknown";
}

oq_shard_part oq_shard_part_of(int32_t count, oq_shard_by by, size_t n_batches, size_t n_configs, int32_t i)
{
    oq_shard_part p = {0, n_batches, 1, n_configs};
    if (by == OQ_SHARD_BY_CONFIG) {
        oq_shard_range(count, i, n_configs ? n_configs - 1 : 0, &p.config_lo, &p.config_hi);
        p.config_lo++;
        p.config_hi++;
    } else {
        oq_shard_range(count, i, n_batches, &p.batch_lo, &p.batch_hi);
    }
    return p;
}

long oq_shard_part_config(const oq_shard_part *p, size_t k)
{
    if (k == 0) return 0;
    return k >= p->config_lo && k < p->config_hi ? (long)(k - p->config_lo + 1) : -1;
}

int oq_shard_is_run(const oq_validate_opts *o) { return o->shard.count > 0 && !o->shard.prepare; }

/* The shard's folder holds a run that never finished: started and no summary (killed, a node
 * lost), or a summary of a run stopped by a signal (a time limit, scancel). The same command
 * again is how such a shard is finished (docs/scale-out.md): it replaces that run's files as
 * --force would; a finished shard's (passed or failed) needs --force. The dead run's work
 * folder goes now: what it staged is no file of the new run's. */
static int shard_unfinished(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    if (access(path, F_OK) == 0) return oq_summary_interrupted(path);
    snprintf(path, sizeof path, "%s/started.json", dir);
    if (access(path, F_OK) != 0) return 0;
    snprintf(path, sizeof path, "%s/.work", dir);
    struct stat sb;
    if (lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) oq_remove_tree(path); /* a link there is refused where it is made */
    return 1;
}

const oq_validate_opts *oq_shard_opts(const oq_validate_opts *o, oq_validate_opts *copy, char *dir, size_t n)
{
    if (!oq_shard_is_run(o)) return o;
    *copy = *o;
    snprintf(dir, n, "%s/shards/%d", o->outdir, (int)o->shard.index);
    copy->outdir = dir;
    copy->overwrite = o->overwrite || shard_unfinished(dir);
    copy->plots = 0; /* drawn once, by the merge */
    return copy;
}

/* ---- the plan's identity ------------------------------------------------------------- */

/* The prepared plan's batches into the description, a line at a time. */
static oq_status desc_batch(void *ctx, const oq_batch_info *b, oq_err *err)
{
    (void)err;
    oq_plan_desc_batch(ctx, b);
    return OQ_OK;
}

oq_status oq_plan_identify(const oq_validate_opts *o, const oq_validate_plan *plans, const oq_shard_plan *plan,
                           oq_plan_desc *d, oq_validate_summary *s, const char *desc_path, oq_err *err)
{
    oq_status st = OQ_OK;
    if (plan) st = oq_plan_desc_begin(d, desc_path, err);
    if (!st && plan)
        st = oq_shard_plan_batches_each(plan, 0, plan->n_batches, desc_batch, d, err);
    if (d->f) { /* ended also after an error: the file is closed */
        oq_status end = st ? OQ_OK : oq_plan_desc_end(d, o, plans, desc_path, s->plan_hash, err);
        if (d->f) fclose(d->f), d->f = NULL;
        if (!st) st = end;
    }
    return st;
}

/* One EP library's size and SHA-256, from one open file: for a bare name, the file of
 * LD_LIBRARY_PATH the loader takes (as oq_runtime_register_ep does), never one of the current
 * folder (a bare name was read there, and loaded from there). */
static oq_status file_content(const char *path, oq_file_content *c, oq_err *err)
{
    char found[PATH_MAX];
    if (!strchr(path, '/') && !oq_lib_search(path, found, sizeof found))
        return oq_err_set(err, OQ_ERR_NOT_FOUND, "EP library %s: in no folder of LD_LIBRARY_PATH, so its file cannot "
                          "be recorded: give its path (./%s for one in the current folder)", path, path);
    if (!strchr(path, '/')) path = found;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO is not waited on */
    if (fd < 0) return oq_err_set(err, OQ_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb = {0};
    oq_status st = fstat(fd, &sb) == 0 ? oq_sha256_fd(fd, path, c->sha256, err)
                                       : oq_err_set(err, OQ_ERR_IO, "%s: %s", path, strerror(errno));
    c->size = (int64_t)sb.st_size;
    close(fd);
    return st;
}

oq_status oq_plans_ep_content(const oq_validate_opts *o, oq_validate_plan *plans, oq_err *err)
{
    size_t n = o->n_ep_libs;
    oq_file_content *v = n ? calloc(n, sizeof *v) : NULL;
    if (n && !v) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = OQ_OK;
    for (size_t i = 0; !st && i < n; i++) st = file_content(o->ep_lib_paths[i], &v[i], err);
    for (size_t k = 0; !st && n && k < o->n_configs; k++) { /* hashed once: every plan lists them all */
        if (!(plans[k].ep_lib_content = malloc(n * sizeof *v))) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        else memcpy(plans[k].ep_lib_content, v, n * sizeof *v);
    }
    free(v);
    return st;
}

/* The EP libraries whose content the difference names, with this shard's paths to them: the
 * plan holds their bytes only. */
static void ep_lib_paths_said(const oq_validate_opts *o, const char *diff, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < o->n_ep_libs && used < n; i++) {
        char key[300];
        snprintf(key, sizeof key, "runtime.ep_libs[%s]", o->ep_lib_names[i]);
        if (strstr(diff, key))
            used += (size_t)snprintf(buf + used, n - used, "; this shard's %s library is %s (not the bytes the "
                                     "shards were prepared with)", o->ep_lib_names[i], o->ep_lib_paths[i]);
    }
}

oq_status oq_shard_check_identity(const oq_validate_opts *o, const oq_shard_plan *plan, const oq_validate_summary *s,
                                  const char *desc_path, const char *root, oq_err *err)
{
    if (!strcmp(plan->hash, s->plan_hash)) return OQ_OK;
    char diff[1024], libs[1200];
    oq_plan_difference(plan->description_path, desc_path, diff, sizeof diff);
    ep_lib_paths_said(o, diff, libs, sizeof libs);
    return oq_err_set(err, OQ_ERR_INVALID_ARG,
                      "this shard's options make another plan than %s/shards/plan.json (they differ in: %s%s%s); "
                      "run every shard with the options the shards were prepared with",
                      root, *diff ? diff : "?", strchr(diff, '\'') ? "; the prepared value first" : "", libs);
}

/* ---- step 1: the prepared plan ----------------------------------------------------- */

static void plan_path(const char *root, char *buf, size_t n) { snprintf(buf, n, "%s/shards/plan.json", root); }

oq_status oq_shard_setup(const oq_validate_opts *o, int *replaced, oq_err *err)
{
    *replaced = 0;
    if (!o->shard.prepare) return OQ_OK;
    char path[4096];
    plan_path(o->outdir, path, sizeof path);
    int planned = access(path, F_OK) == 0;
    if (planned && !o->overwrite)
        return oq_err_set(err, OQ_ERR_IO, "%s exists: these shards were prepared already (overwrite to prepare "
                                          "them again, which removes their results, or choose another output "
                                          "folder)", path);
    /* nothing removed yet: a prepare step refused by a later check leaves the earlier plan whole */
    *replaced = planned && o->overwrite;
    return OQ_OK;
}

void oq_shard_drop_results(const char *outdir)
{
    char shards[4096], path[4400];
    /* the merge's summary, page, table and figures first (it takes plan.json to tell them the tool's) */
    oq_validate_merge_drop(outdir, NULL);
    snprintf(shards, sizeof shards, "%s/shards", outdir);
    DIR *d = opendir(shards);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, "plan.json")) continue;
        snprintf(path, sizeof path, "%s/%s", shards, e->d_name);
        oq_remove_tree(path);
    }
    if (d) closedir(d);
}

/* The batches the prepare step will make, known from the options: one per --inputs file, or
 * the generated events in batches (the last one short). */
static size_t planned_batches(const oq_validate_opts *o)
{
    const oq_events_opts *e = &o->events;
    if (o->n_input_files) return o->n_input_files;
    return e->num_events > 0 && e->batch_size > 0 ? (size_t)((e->num_events + e->batch_size - 1) / e->batch_size) : 0;
}

oq_status oq_shard_split_check(const oq_validate_opts *o, oq_err *err)
{
    if (!o->shard.prepare) return OQ_OK;
    size_t n = (size_t)o->shard.count, others = o->n_configs ? o->n_configs - 1 : 0, n_batches = planned_batches(o);
    if (o->shard.by == OQ_SHARD_BY_BATCH && n_batches && n > n_batches)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%zu shards by batch, but the plan has %zu batches", n, n_batches);
    if (o->shard.by == OQ_SHARD_BY_CONFIG && n > others)
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "%zu shards by configuration, but the plan has %zu configurations besides the reference", n,
                          others);
    return OQ_OK;
}

void oq_shard_file(const char *root, const char *name, char *buf, size_t n) { snprintf(buf, n, "%s/%s", root, name); }

static oq_status put_in_dir(void *ctx, const oq_batch_info *b, oq_err *err)
{
    oq_batch_info named = *b;
    const char *in = strrchr(b->inputs, '/'), *ex = b->expected ? strrchr(b->expected, '/') : NULL;
    named.inputs = in ? (char *)in + 1 : b->inputs;
    named.expected = ex ? (char *)ex + 1 : b->expected;
    return oq_batch_info_put(ctx, &named) ? OQ_OK : oq_err_set(err, OQ_ERR_IO, "the plan's batch list cannot be written");
}

/* The batch list `list` (the prepare step's, its paths as its --outdir named DIR) into the plan's
 * `batches`, every file named relative to DIR: the plan, the shards' and the merge's summaries are
 * read from any directory and in a copy of DIR (a name relative to the prepare step's own
 * directory pointed nowhere from another). Renamed into place whole. */
static oq_status names_in_dir(const char *list, const char *batches, oq_err *err)
{
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.named", list);
    FILE *f = NULL;
    oq_status st = oq_fopen_scratch(tmp, &f, err);
    if (st) return st;
    st = oq_batch_list_each(list, put_in_dir, f, err);
    if (fclose(f) && !st) st = oq_err_write(err, tmp, errno);
    if (!st && rename(tmp, batches) != 0)
        st = oq_err_set(err, OQ_ERR_IO, "%s: cannot be moved to %s: %s", tmp, batches, strerror(errno));
    if (st) unlink(tmp);
    return st;
}

/* Each configuration's outputs, the names its ONNX file's graph gives: the merge holds every
 * shard to them (an output left out of every shard's summary was no output of the merged run,
 * and its failures went unseen). null for the reference, which compares none, and for a
 * configuration with no model. */
static oq_status model_outputs(const oq_validate_opts *o, char *const *models, json_t **out, oq_err *err)
{
    json_t *a = json_array();
    oq_status st = a ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (size_t k = 0; !st && k < o->n_configs; k++) {
        oq_model_info *mi = NULL;
        if (k && models[k]) st = oq_model_inspect_file(models[k], &mi, err);
        json_t *names = mi ? json_array() : json_null();
        for (size_t i = 0; mi && i < mi->n_outputs; i++)
            json_array_append_new(names, oq_json_text(mi->outputs[i].name));
        oq_model_info_free(mi);
        if (json_array_append_new(a, names)) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    if (st) json_decref(a);
    *out = st ? NULL : a;
    return st;
}

/* The two builds a comparison of ORT builds (--reference-ort-lib) prepared its plan with, by
 * content: {"reference": SHA-256, "under_test": SHA-256} (*out NULL: not such a comparison). */
static oq_status compared_builds(const oq_validate_opts *o, const oq_shard_ort ort[2], json_t **out, oq_err *err)
{
    char sha[2][65] = {"", ""};
    *out = NULL;
    if (!o->reference_ort_lib || !*ort[0].file || !*ort[1].file) return OQ_OK;
    oq_status st = oq_sha256_file(ort[0].file, sha[0], err);
    if (!st) st = oq_sha256_file(ort[1].file, sha[1], err);
    if (!st && !(*out = json_pack("{s:s, s:s}", "reference", sha[0], "under_test", sha[1])))
        st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    return st;
}

oq_status oq_shard_plan_prepare(const oq_validate_opts *o, const oq_batch_sink *k, const char *list,
                                const char *desc_path, const char *plan_hash, char *const *models,
                                const oq_shard_ort ort[2], oq_err *err)
{
    char **names = calloc(o->n_configs ? o->n_configs : 1, sizeof *names);
    if (!names) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < o->n_configs; i++) names[i] = (char *)o->configs[i].name;
    char path[4096], desc[4200], batches[4200];
    snprintf(desc, sizeof desc, "%s/shards/plan_description.json", o->outdir);
    snprintf(batches, sizeof batches, "%s/shards/plan_batches.jsonl", o->outdir);
    /* names borrowed from o: written, never released */
    oq_shard_plan p = {.description_path = desc, .count = o->shard.count, .by = o->shard.by,
                       .n_configs = o->n_configs, .configs = names, .n_batches = k->n, .batches_path = batches,
                       .padded_length = k->padded_length, .first_batch_size = k->first_bl[0],
                       .first_padded_length = k->first_bl[1], .prove_teeth = o->prove_teeth};
    memcpy(p.hash, plan_hash, sizeof p.hash);
    oq_iso_time(p.prepared, sizeof p.prepared);
    gethostname(p.host, sizeof p.host - 1);
    json_t *outputs = NULL, *builds = NULL;
    oq_status st = model_outputs(o, models, &outputs, err);
    if (!st) st = compared_builds(o, ort, &builds, err);
    if (!st) st = oq_mkdir_in(o->outdir, "shards", err);
    if (!st && rename(desc_path, desc) != 0)
        st = oq_err_set(err, OQ_ERR_IO, "%s: cannot be moved to %s: %s", desc_path, desc, strerror(errno));
    if (!st) st = names_in_dir(list, batches, err);
    if (!st) st = oq_sha256_file(batches, p.batches_sha256, err);
    /* a signal before the plan is published stops it; one after this finds it whole (its rename
     * is atomic), and the caller says that it stands */
    if (!st && o->interrupt && *o->interrupt)
        st = oq_err_set(err, OQ_ERR_RUNTIME, "interrupted by SIG%s while writing the shards' plan",
                        sigabbrev_np((int)*o->interrupt) ? sigabbrev_np((int)*o->interrupt) : "?");
    plan_path(o->outdir, path, sizeof path);
    if (!st) st = oq_shard_plan_write(&p, outputs, builds, path, err); /* last: its presence says the plan is whole */
    json_decref(outputs);
    json_decref(builds);
    if (st) { /* no part of a plan left (the caller removes the batches), an earlier one's neither:
                 its shards are gone */
        unlink(desc);
        unlink(batches);
        unlink(path);
        snprintf(path, sizeof path, "%s/shards", o->outdir);
        rmdir(path); /* only when empty: nothing else of the folder's goes */
    }
    free(names);
    return st;
}

/* ---- step 2: one shard -------------------------------------------------------------- */

typedef struct shard_batches {
    const oq_validate_opts *o;
    const char *root; /* DIR, as this shard was given it */
    oq_validate_summary *s;
} shard_batches;

/* A prepared file named as the plan names it, relative to DIR ("inputs_000.npz"): the last part
 * of the path (a plan prepared before 2026-12-06 named it as the prepare step's --outdir did,
 * relative to that step's own directory, "run/inputs_000.npz"). */
static oq_status in_dir(char **path, oq_err *err)
{
    const char *slash = strrchr(*path, '/');
    if (!slash) return OQ_OK;
    char *name = strdup(slash + 1);
    if (!name) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    free(*path);
    *path = name;
    return OQ_OK;
}

/* A prepared file the shard reads, root/NAME: the one the plan names by its SHA-256. */
static oq_status prepared_file(const shard_batches *sb, const char *name, const char *sha256, oq_err *err)
{
    char hex[65], path[OQ_PATH_BUF];
    oq_shard_file(sb->root, name, path, sizeof path);
    if (oq_sha256_file(path, hex, err)) return oq_err_prefix(err, "shard %d: ", (int)sb->o->shard.index);
    if (strcmp(hex, sha256) != 0)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: SHA-256 %.12s... is not the prepared %.12s... (changed since "
                                              "the shards were prepared)", path, hex, sha256);
    return OQ_OK;
}

/* One of this shard's batches: its files in DIR (inputs, and the saved outputs the `expected`
 * reference is) checked against the plan, then copied into s named relative to DIR, as the plan
 * names them: the shard's summary is read from anywhere (its workers get root/NAME,
 * oq_shard_file). */
/* The user's file of batch b that this shard's list (input_files, expected_files: `files`)
 * names at the batch's place: its bytes must be the ones the batch was prepared from (`sha256`),
 * else the shard would run the prepared copy while its command names other data (changed since,
 * or another file). The same bytes at another path (a node's copy) are the plan's; a file not
 * there at all (a node that has only DIR) leaves the prepared copy to speak. The caller names
 * the list before the message. */
static oq_status given_is_source(const char *const *files, size_t n, const oq_batch_info *b, const char *source,
                                 const char *sha256, const char *root, oq_err *err)
{
    if (!source || !*sha256 || !n) return OQ_OK;
    const char *given = b->index >= 0 && (size_t)b->index < n ? files[b->index] : NULL;
    if (!given)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "names %zu files, but batch %lld of %s/shards/plan.json was "
                          "prepared from one after them (%s): run every shard with the files the shards were prepared "
                          "with", n, (long long)b->index, root, source);
    char now[65];
    if (access(given, F_OK)) return OQ_OK;
    oq_status st = oq_sha256_file(given, now, err);
    if (st || !strcmp(now, sha256)) return st;
    if (!strcmp(given, source))
        return oq_err_set(err, OQ_ERR_INVALID_ARG,
                          "%s changed since the shards were prepared (SHA-256 %.12s... now, %.12s... then): this "
                          "shard would run the batch prepared from the earlier file; prepare the shards again "
                          "(shard.prepare with overwrite)", source, now, sha256);
    return oq_err_set(err, OQ_ERR_INVALID_ARG,
                      "%s (SHA-256 %.12s...) is not the file batch %lld of %s/shards/plan.json was prepared from (%s, "
                      "%.12s...): this shard would run the plan's batch, not the file it names; run every shard with "
                      "the files the shards were prepared with", given, now, (long long)b->index, root, source, sha256);
}

/* A shard's command makes its batches as the plan's were made: from the user's files where the plan's
 * batch was read from one (`source`), generated where it was generated. A command without the files
 * (or with files for a plan of generated events) is another run's: unsharded it would generate
 * events (or read files) the plan never ran, and sharded it ran the plan's batches while it named
 * other data (before the thirty-fourth session, silently). */
static oq_status made_as_planned(const shard_batches *sb, const oq_batch_info *b, oq_err *err)
{
    if (b->source && !sb->o->n_input_files)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "input_files names no file, but batch %lld of %s/shards/plan.json was "
                          "prepared from the user's file %s (SHA-256 %.12s...): this shard's command would generate "
                          "events, not read the files the plan runs; run every shard with the files the shards were "
                          "prepared with", (long long)b->index, sb->root, b->source, b->source_sha256);
    if (!b->source && sb->o->n_input_files)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "input_files names %zu files, but batch %lld of %s/shards/plan.json "
                          "holds generated events, read from no file: this shard would run them, not the files it "
                          "names; run every shard with the options the shards were prepared with",
                          sb->o->n_input_files, (long long)b->index, sb->root);
    return OQ_OK;
}

static oq_status own_batch(void *ctx, const oq_batch_info *b, oq_err *err)
{
    shard_batches *sb = ctx;
    /* a plan prepared before the saved outputs were named by content cannot tell a swapped file */
    if (b->expected && !*b->expected_sha256)
        return oq_err_set(err, OQ_ERR_FORMAT, "%s: the prepared plan does not name it by SHA-256 (prepared by an "
                                              "older ortqual): prepare the shards again (shard.prepare with overwrite)",
                          b->expected);
    const oq_validate_opts *o = sb->o;
    oq_status changed = made_as_planned(sb, b, err);
    if (changed) return changed;
    changed = given_is_source(o->input_files, o->n_input_files, b, b->source, b->source_sha256, sb->root, err);
    if (changed) return oq_err_prefix(err, "input_files ");
    changed = given_is_source(o->expected_files, o->n_expected_files, b, b->expected_source, b->expected_source_sha256,
                              sb->root, err);
    if (changed) return oq_err_prefix(err, "expected_files ");
    oq_batch_info *mine = OQ_PUSH(sb->s->batches, sb->s->n_batches);
    if (!mine) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    oq_status st = oq_batch_info_copy(mine, b, err);
    if (!st) st = in_dir(&mine->inputs, err);
    if (!st && mine->expected) st = in_dir(&mine->expected, err);
    if (!st) st = prepared_file(sb, mine->inputs, mine->sha256, err);
    if (!st && mine->expected) st = prepared_file(sb, mine->expected, mine->expected_sha256, err);
    return st;
}

oq_status oq_shard_plan_open(const oq_validate_opts *o, const char *root, oq_shard_plan *plan, oq_err *err)
{
    if (!oq_shard_is_run(o)) return OQ_OK;
    oq_status st = oq_shard_plan_read(root, plan, err);
    if (st) return st;
    if (plan->count != o->shard.count || plan->by != o->shard.by)
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "%s/shards/plan.json was prepared for %d shards by %s, not %d by %s",
                          root, (int)plan->count, oq_shard_by_name(plan->by), (int)o->shard.count,
                          oq_shard_by_name(o->shard.by));
    return OQ_OK;
}

oq_status oq_shard_load(const oq_validate_opts *o, const char *root, const oq_shard_plan *plan, oq_validate_summary *s,
                        oq_err *err)
{
    if (o->n_input_files > plan->n_batches) /* a batch per file: the extra ones would not run */
        return oq_err_set(err, OQ_ERR_INVALID_ARG, "input_files names %zu files, but %s/shards/plan.json was prepared "
                          "from %zu: run every shard with the files the shards were prepared with",
                          o->n_input_files, root, plan->n_batches);
    oq_shard_part part = oq_shard_part_of(plan->count, plan->by, plan->n_batches, plan->n_configs, o->shard.index);
    shard_batches sb = {o, root, s};
    return oq_shard_plan_batches_each(plan, part.batch_lo, part.batch_hi, own_batch, &sb, err);
}

/* Who runs this shard, where and since when: also what a merge reports when it never ends. */
oq_status oq_shard_begin(const oq_validate_opts *o, const oq_shard_plan *plan, oq_validate_summary *s, oq_err *err)
{
    oq_shard_info *i = &s->shard;
    i->index = o->shard.index;
    i->count = o->shard.count;
    i->by = o->shard.by;
    oq_shard_part part = oq_shard_part_of(plan->count, plan->by, plan->n_batches, plan->n_configs, o->shard.index);
    int ok = 1;
    for (size_t b = 0; ok && b < s->n_batches; b++) {
        int64_t *v = OQ_PUSH(i->batches, i->n_batches);
        if ((ok = v != NULL)) *v = s->batches[b].index;
    }
    for (size_t k = 0; ok && k < o->n_configs; k++)
        if (oq_shard_part_config(&part, k) >= 0) ok = !oq_strv_push(&i->configs, &i->n_configs, o->configs[k].name);
    if (!ok) return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    gethostname(i->host, sizeof i->host - 1);
    oq_iso_time(i->start, sizeof i->start);
    i->pid = (int64_t)getpid();
    oq_slurm_task_current(&i->slurm);
    char path[4096];
    snprintf(path, sizeof path, "%s/started.json", o->outdir);
    return oq_shard_info_write(i, path, err);
}

/* ---- the ONNX Runtime a shard loads ----------------------------------------------- */

/* Which of ort[2] configuration k loads: --reference-ort-lib's for the reference, else the others'. */
static const oq_shard_ort *ort_of(const oq_validate_opts *o, const oq_shard_ort ort[2], size_t k)
{
    return k == 0 && o->reference_ort_lib ? &ort[0] : &ort[1];
}

/* The configurations this shard runs on a library hashed at its start: 1 in want[k], the count returned. */
static size_t to_hold(const oq_validate_opts *o, const oq_shard_part *part, const oq_shard_ort ort[2], char *want)
{
    size_t n = 0;
    for (size_t k = 0; k < o->n_configs; k++) {
        want[k] = oq_shard_part_config(part, k) >= 0 && oq_config_uses_ort(&o->configs[k]) && *ort_of(o, ort, k)->sha256;
        n += (size_t)want[k];
    }
    return n;
}

/* This shard's configurations still wanted (want[k], *left of them) against shard j's records
 * rec[0..n) of the same plan, by position as the merge pairs them (replay's reference and the
 * configuration under test may share a name); one that shard j recorded is no longer wanted. */
static oq_status held_to(const oq_validate_opts *o, const oq_shard_plan *plan, const oq_shard_ort ort[2], char *want,
                         size_t *left, int32_t j, const oq_ort_record *rec, size_t n, oq_err *err)
{
    oq_shard_part theirs = oq_shard_part_of(plan->count, plan->by, plan->n_batches, plan->n_configs, j);
    for (size_t k = 0; k < o->n_configs; k++) {
        const oq_shard_ort *mine = ort_of(o, ort, k);
        long pos = oq_shard_part_config(&theirs, k);
        const oq_ort_record *r = pos >= 0 && (size_t)pos < n ? &rec[pos] : NULL;
        if (want[k] && r && r->config && !strcmp(r->config, o->configs[k].name) && *r->sha256) {
            want[k] = 0, (*left)--;
            if (!strcmp(r->sha256, mine->sha256)) continue;
            return oq_err_set(err, OQ_ERR_INVALID_ARG, "shard %d would run %s on the ONNX Runtime library %s (SHA-256 "
                              "%.12s), shard %d ran it on ONNX Runtime %s (%s, SHA-256 %.12s): another build, which "
                              "the merge refuses; run shard %d where shard %d ran, or shard %d again (overwrite) here",
                              (int)o->shard.index, o->configs[k].name, mine->file, mine->sha256, (int)j,
                              r->version ? r->version : "?", r->library ? r->library : "?", r->sha256,
                              (int)o->shard.index, (int)j, (int)j);
        }
    }
    return OQ_OK;
}

/* A comparison of two ORT builds runs the pairing it was prepared with: a shard that loads
 * another (the libraries swapped, another release) compares what the plan does not, and shards
 * that all did so merged green. */
static oq_status held_to_plan(const oq_validate_opts *o, const char *root, const oq_shard_ort ort[2], oq_err *err)
{
    static const char *const what[] = {"the reference's", "the tested"};
    char sha[2][65];
    oq_status st = o->reference_ort_lib ? oq_shard_plan_ort(root, sha, err) : OQ_OK;
    for (int i = 0; !st && o->reference_ort_lib && i < 2; i++)
        if (*sha[i] && *ort[i].sha256 && strcmp(sha[i], ort[i].sha256))
            st = oq_err_set(err, OQ_ERR_INVALID_ARG, "shard %d would load %s as %s ONNX Runtime library (SHA-256 "
                            "%.12s), but %s/shards/plan.json was prepared with SHA-256 %.12s there: another pairing "
                            "of builds than the plan compares; run every shard with the ort_lib and "
                            "reference_ort_lib the shards were prepared with", (int)o->shard.index, ort[i].file,
                            what[i], ort[i].sha256, root, sha[i]);
    return st;
}

oq_status oq_shard_runtimes_start(const oq_validate_opts *o, const oq_shard_plan *plan, const char *root,
                                  oq_shard_ort ort[2], oq_err *err)
{
    oq_status st = OQ_OK;
    for (int i = 0; !st && i < 2; i++) {
        if (i == 1 && *ort[0].sha256 && !strcmp(ort[0].file, ort[1].file)) /* one library: hashed once */
            memcpy(ort[1].sha256, ort[0].sha256, sizeof ort[1].sha256);
        else if (*ort[i].file)
            st = oq_sha256_file(ort[i].file, ort[i].sha256, err);
    }
    if (!st) st = held_to_plan(o, root, ort, err);
    oq_shard_part part = oq_shard_part_of(plan->count, plan->by, plan->n_batches, plan->n_configs, o->shard.index);
    char *want = st ? NULL : calloc(o->n_configs ? o->n_configs : 1, 1);
    if (!st && !want) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    /* the first finished shard that ran a configuration is enough: one that differs from it
     * cannot merge anyway (a shard's summary may be tens of MB) */
    size_t left = want ? to_hold(o, &part, ort, want) : 0;
    for (int32_t j = 0; !st && left && j < plan->count; j++) {
        if (j == o->shard.index) continue; /* its own earlier result is the one this run replaces */
        char path[OQ_PATH_BUF];
        snprintf(path, sizeof path, "%s/shards/%d/summary.json", root, (int)j);
        oq_ort_record *rec = NULL;
        size_t n = 0;
        st = oq_summary_ort_records(path, &rec, &n, err);
        if (!st) st = held_to(o, plan, ort, want, &left, j, rec, n, err);
        oq_ort_records_free(rec, n);
    }
    free(want);
    return st;
}

/* What the worker's evidence (evidence.h) says of the bytes of the library it had mapped, where
 * it names r's library: 1 with their SHA-256 in hex, -1 not named (the file was replaced after it
 * was loaded: the one at that path now is another), 0 nothing. A run's parent reads no library. */
static int worker_hashed(const oq_config_result *r, char hex[65])
{
    json_t *ev = r->evidence_json ? json_loads(r->evidence_json, 0, NULL) : NULL, *ort = json_object_get(ev, "ort");
    const char *lib = json_string_value(json_object_get(ort, "lib_path"));
    const char *sha = json_string_value(json_object_get(ort, "library_sha256"));
    int said = lib && !strcmp(lib, r->ort_library) ? (sha && strlen(sha) == 64 ? 1 : -1) : 0;
    if (said > 0) memcpy(hex, sha, 65);
    json_decref(ev);
    return said;
}

oq_status oq_shard_runtimes(oq_validate_summary *s, const oq_shard_ort ort[2], int must, oq_err *err)
{
    for (size_t k = 0; k < s->n_configs; k++) {
        oq_config_result *r = &s->configs[k];
        if (!r->ort_library) continue;
        /* the worker's record of what it mapped first; else hashed at the start, or for an earlier configuration */
        char hex[65];
        int said = worker_hashed(r, hex);
        const char *known = said > 0 ? hex : NULL;
        for (int i = 0; !known && !said && i < 2; i++)
            if (*ort[i].sha256 && !strcmp(ort[i].file, r->ort_library)) known = ort[i].sha256;
        for (size_t j = 0; !known && !said && j < k; j++)
            if (s->configs[j].ort_library && !strcmp(s->configs[j].ort_library, r->ort_library))
                known = s->configs[j].ort_library_sha256;
        oq_status st = OQ_OK;
        if (known) memcpy(r->ort_library_sha256, known, sizeof r->ort_library_sha256);
        else if (said < 0) /* the file there now never ran */
            st = oq_err_set(must ? err : NULL, OQ_ERR_IO,
                            "%s: replaced after %s loaded it: the bytes that ran are not named", r->ort_library,
                            r->config.name);
        else st = oq_sha256_file(r->ort_library, r->ort_library_sha256, must ? err : NULL);
        if (st && must) return st;
        if (st) r->ort_library_sha256[0] = '\0'; /* gone since the worker loaded it: not known */
    }
    return OQ_OK;
}
