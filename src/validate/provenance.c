/* Saved outputs say who made them: `validate --save-outputs` writes, as each .npz archive's
 * comment (numpy and libzip ignore it), the configuration, provider, model, ONNX Runtime and
 * session options that computed them. An `expected` reference made of such files, judged against
 * the very session that saved them (the same model on the same provider and ORT build, with the
 * same session options), compares ORT with itself: it passes with max|err| 0 and proves nothing,
 * as replay's `--ep cpu` against ORT CPU of the same build does; it is refused the same way.
 * Other session options (graph optimizations, config entries, threads, provider options) are a
 * comparison: telling a fusion's error from the model's is what they are for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core-impl.h"
#include "fileio/fileio-impl.h"
#include "inspect/modelfile-impl.h"
#include "npz/npz-impl.h"
#include "runtime/sessioncfg-impl.h"
#include "validate/validate-impl.h"

#define PROVENANCE_MARK "ortqual-outputs "

/* {"KEY": "VALUE", ...} of n pairs (the last of a key given twice, as ORT takes it). */
static json_t *pairs_json(size_t n, const char *const *keys, const char *const *values)
{
    json_t *j = json_object();
    for (size_t i = 0; j && i < n; i++)
        if (json_object_set_new(j, keys[i], json_string(values[i]))) {
            json_decref(j);
            return NULL;
        }
    return j;
}

/* The session options a run gives every ORT configuration, as the comment records them: the
 * threads as ORT runs them (a session.intra_op_num_threads entry's count over `threads`). */
static json_t *session_json(int threads, oq_graph_opt graph_opt, size_t n_cfg, const char *const *cfg_keys,
                            const char *const *cfg_values, size_t n_ep, const char *const *ep_keys,
                            const char *const *ep_values)
{
    oq_session_threads t;
    oq_session_threads_ran(threads, 0, n_cfg, cfg_keys, cfg_values, &t);
    return json_pack("{s:i, s:i, s:o, s:o}", "threads", t.intra, "graph_opt", (int)graph_opt, "config",
                     pairs_json(n_cfg, cfg_keys, cfg_values), "ep_options", pairs_json(n_ep, ep_keys, ep_values));
}

char *oq_outputs_provenance(const oq_validate_plan *p, const char *ort_version, const char *ort_library,
                            const char *ort_sha256, const char *ort_build_id)
{
    json_t *session = session_json(p->threads, p->graph_opt, p->n_session_configs,
                                   (const char *const *)p->session_config_keys,
                                   (const char *const *)p->session_config_values, p->n_ep_options,
                                   (const char *const *)p->ep_option_keys, (const char *const *)p->ep_option_values);
    json_t *j = session ? json_pack("{s:s, s:s, s:s?, s:s?, s:s?, s:s?, s:s*, s:o}", "config", p->config.name,
                                    "provider", p->config.runtime, "model_sha256", p->model_sha256, "ort_version",
                                    ort_version, "ort_library", ort_library, "ort_library_sha256", ort_sha256,
                                    "ort_build_id", ort_build_id, "session", session)
                        : NULL;
    char *body = j ? json_dumps(j, JSON_COMPACT) : NULL, *text = NULL;
    json_decref(j);
    if (body && asprintf(&text, PROVENANCE_MARK "%s", body) < 0) text = NULL;
    free(body);
    return text;
}

/* Whether `lib` (a path a comment names without a SHA-256) holds the bytes of `ort_file`: a
 * copy of the ORT under test at another path is that ORT. Only a regular file of its size is
 * read: stat first, so that a FIFO (which blocked the run until killed), a device (whose open
 * may act) or a slow mount's special file named there is never opened, then opened as a regular
 * file only (O_NONBLOCK, fstat again: one put there since is refused, not waited on). A file
 * that cannot be read is another build. */
static int same_bytes(const char *lib, const char *ort_file, char ort_sha[65])
{
    struct stat named, ort;
    if (stat(lib, &named) != 0 || !S_ISREG(named.st_mode) || stat(ort_file, &ort) != 0 ||
        named.st_size != ort.st_size)
        return 0;
    int fd;
    uint64_t size;
    char sha[65];
    if (oq_open_regular(lib, &fd, &size, NULL)) return 0;
    int same = size == (uint64_t)ort.st_size && !oq_sha256_fd(fd, lib, sha, NULL) &&
               (*ort_sha || !oq_sha256_file(ort_file, ort_sha, NULL)) && !strcmp(sha, ort_sha);
    close(fd);
    return same;
}

/* Whether the ORT build that saved `prov` is the one loading `ort_file` (its ELF build-id
 * `ort_id`): the same build-id where the file records one, whatever the digests say (replay's
 * rule: oq_ort_build_id_same); else the same bytes, told by the SHA-256 the file records
 * (`ort_sha`: ort_file's, hashed here once when still ""), whatever the path either had. A file
 * saved before that was recorded (2026-12-05) names the library by its path alone: the same
 * path as a string (both are the mapped file's path, oq_runtime_lib_path), or a regular file
 * there of the same bytes (same_bytes). *how says which (SAME_*), as the message names both. */
enum { SAME_NOT, SAME_FILE, SAME_BYTES, SAME_BUILD_ID };
static oq_status same_build(const json_t *prov, const char *ort_file, const char *ort_id, char ort_sha[65],
                            int *how, oq_err *err)
{
    const char *sha = json_string_value(json_object_get(prov, "ort_library_sha256"));
    const char *lib = json_string_value(json_object_get(prov, "ort_library"));
    const char *id = json_string_value(json_object_get(prov, "ort_build_id"));
    *how = SAME_NOT;
    if (id && ort_id && oq_ort_build_id_same(id, strlen(id), ort_id, strlen(ort_id)) == OQ_SAME_ORT_BUILD_ID) {
        *how = lib && !strcmp(lib, ort_file) ? SAME_FILE : SAME_BUILD_ID;
        return OQ_OK;
    }
    if (!sha) {
        *how = !lib                                 ? SAME_NOT
               : !strcmp(lib, ort_file)             ? SAME_FILE
               : same_bytes(lib, ort_file, ort_sha) ? SAME_BYTES
                                                    : SAME_NOT;
        return OQ_OK;
    }
    oq_status st = *ort_sha ? OQ_OK : oq_sha256_file(ort_file, ort_sha, err);
    *how = !st && !strcmp(sha, ort_sha) ? SAME_FILE : SAME_NOT;
    return st;
}

/* The session options as ORT runs them, where two spellings make one session: the graph
 * optimization level as ORT's number, its default (-1) being every optimization (99), and a
 * session.graph_optimization_level entry taking the place of the level set as an option (ORT
 * takes the entry over it); entries that cannot change an output (logging, profiling,
 * spinning: oq_session_config_neutral) dropped (oq_session_as_run, which bench's baseline
 * takes too); the thread counts and execution mode as ORT runs them, their entries taking the
 * place of the options (oq_session_threads_as_run). Both sides of same_session go through it. */
static json_t *as_run(const json_t *session)
{
    json_t *s = json_deep_copy(session), *cfg = json_object_get(s, "config");
    const json_t *g = json_object_get(s, "graph_opt");
    if (!s || !json_is_integer(g) || !json_is_object(cfg)) return s;
    int level = oq_graph_opt_level((oq_graph_opt)json_integer_value(g));
    json_object_set_new(s, "graph_opt", json_integer(oq_session_as_run(level, cfg, OQ_SESSION_SAME_OUTPUTS)));
    oq_session_threads t; /* a file saved before 2026-12-07 recorded --threads, not the entry's count */
    oq_session_threads_as_run(oq_session_threads_recorded(s), 0, cfg, &t);
    json_object_set_new(s, "threads", json_integer(t.intra));
    json_object_set_new(s, "execution_mode", json_string(t.parallel ? "parallel" : "sequential"));
    json_object_set_new(s, "inter_op_threads", json_integer(t.inter));
    return s;
}

/* Whether `o` runs the session options `prov` was saved with: 1 as given, 2 only as ORT runs
 * them (as_run); a file saved before they were recorded (2026-12-06) is taken as saved with
 * these (refused as it was). */
static int same_session(const oq_validate_opts *o, const json_t *prov)
{
    const json_t *recorded = json_object_get(prov, "session");
    if (!recorded) return 1;
    json_t *given = session_json(o->threads, o->graph_opt, o->n_session_configs, o->session_config_keys,
                                 o->session_config_values, o->n_ep_options, o->ep_option_keys, o->ep_option_values);
    json_t *saved = as_run(recorded), *now = given ? as_run(given) : NULL;
    int same = !saved || !now || json_equal(saved, now); /* out of memory: as before, refused */
    if (same && given && !json_equal(given, recorded)) same = 2;
    json_decref(given);
    json_decref(saved);
    json_decref(now);
    return same;
}

/* The configuration under test that runs the session which saved `prov` (NULL: none): the same
 * model (its files' SHA-256), provider, ORT build and session options; *spelt is set when the
 * options are the same only as ORT runs them. */
static const oq_config *saved_by(const oq_validate_opts *o, const json_t *prov, const char *model_sha, int same_ort,
                                 int *spelt)
{
    const char *provider = json_string_value(json_object_get(prov, "provider"));
    const char *sha = json_string_value(json_object_get(prov, "model_sha256"));
    int same = provider && sha && !strcmp(sha, model_sha) && same_ort ? same_session(o, prov) : 0;
    *spelt = same == 2;
    if (!same) return NULL;
    for (size_t k = 1; k < o->n_configs; k++)
        if (o->configs[k].repr == OQ_REPR_MODEL && !strcasecmp(o->configs[k].runtime, provider)) return &o->configs[k];
    return NULL;
}

/* The model's identity as a plan records it (its file's and its external files' SHA-256):
 * read only when a saved-outputs comment is there to compare with. */
static oq_status model_identity(const char *path, char sha[65], oq_err *err)
{
    oq_model_file m;
    oq_status st = oq_model_file_read(path, &m, err);
    if (!st) snprintf(sha, 65, "%s", m.sha256);
    oq_model_file_clear(&m);
    return st;
}

/* The provenance file `path` records (its archive's comment, oq_outputs_provenance) into *prov;
 * NULL when it records none. */
static oq_status provenance_of(const char *path, json_t **prov, oq_err *err)
{
    char *comment = NULL;
    oq_status st = oq_npz_comment_read(path, &comment, err);
    *prov = !st && comment && !strncmp(comment, PROVENANCE_MARK, strlen(PROVENANCE_MARK))
                ? json_loads(comment + strlen(PROVENANCE_MARK), 0, NULL)
                : NULL;
    free(comment);
    return st;
}

oq_status oq_validate_saved_by(const oq_validate_opts *o, char **saved_by, oq_err *err)
{
    *saved_by = NULL;
    if (!o->n_input_files) return OQ_OK;
    const char *file = o->n_expected_files ? o->expected_files[0] : o->input_files[0];
    char copy[4096]; /* the run folder's copy keeps the comment: the user's file is read once */
    oq_validate_expected_path(o, 0, copy, sizeof copy);
    json_t *prov = NULL;
    oq_status st = access(copy, F_OK) ? OQ_OK : provenance_of(copy, &prov, err);
    if (st || !prov) return st;
    static const char *const keys[] = {"config", "provider", "ort_version", "ort_library", "ort_library_sha256",
                                       "ort_build_id"};
    json_t *j = json_pack("{s:o}", "file", oq_json_text(file));
    for (size_t i = 0; j && i < sizeof keys / sizeof *keys; i++)
        if (json_is_string(json_object_get(prov, keys[i])))
            json_object_set(j, keys[i], json_object_get(prov, keys[i]));
    json_decref(prov);
    if (j && !(*saved_by = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER))) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    json_decref(j);
    return j ? st : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
}

/* The ELF build-id r's worker recorded of the library it mapped, into id[n] ("" none). */
static void worker_build_id(const oq_config_result *r, char *id, size_t n)
{
    json_t *ev = r->evidence_json ? json_loads(r->evidence_json, 0, NULL) : NULL;
    const char *v = json_string_value(json_object_get(json_object_get(ev, "ort"), "build_id"));
    snprintf(id, n, "%s", v ? v : "");
    json_decref(ev);
}

/* Whether the saved outputs' ORT is `r`'s: the same ELF build-id where both have one (replay's
 * rule: oq_ort_build_id_same); else the same bytes where the file recorded its SHA-256 (r's
 * library as its worker named it; one it could not name, replaced after it was loaded, is not
 * read now); else the same version at the same path. */
static int same_ort_as(const json_t *saved, const oq_config_result *r)
{
    const char *version = json_string_value(json_object_get(saved, "ort_version"));
    const char *lib = json_string_value(json_object_get(saved, "ort_library"));
    const char *sha = json_string_value(json_object_get(saved, "ort_library_sha256"));
    const char *saved_id = json_string_value(json_object_get(saved, "ort_build_id"));
    char id[129];
    worker_build_id(r, id, sizeof id);
    if (saved_id && oq_ort_build_id_same(saved_id, strlen(saved_id), id, strlen(id)) == OQ_SAME_ORT_BUILD_ID) return 1;
    if (!version || strcmp(version, r->ort_version)) return 0;
    return sha ? !strcmp(r->ort_library_sha256, sha) : lib && !strcmp(lib, r->ort_library);
}

oq_status oq_validate_saved_by_compare(oq_config_result *configs, size_t n, oq_err *err)
{
    if (!n || !configs[0].saved_by) return OQ_OK;
    size_t k = 1;
    while (k < n && (!configs[k].ort_version || !configs[k].ort_library)) k++;
    if (k == n) return OQ_OK; /* nothing ran ORT: nothing to compare with */
    json_t *saved = json_loads(configs[0].saved_by, JSON_DECODE_ANY, NULL);
    int same = saved && same_ort_as(saved, &configs[k]);
    oq_status st = saved ? OQ_OK : oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    char *text = NULL;
    if (!st && (json_object_set_new(saved, "same_ort", json_boolean(same)) ||
                !(text = json_dumps(saved, JSON_COMPACT | JSON_PRESERVE_ORDER))))
        st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    json_decref(saved);
    if (st) return st;
    free(configs[0].saved_by);
    configs[0].saved_by = text;
    return OQ_OK;
}

oq_status oq_validate_saved_self(const oq_validate_opts *o, const char *ort_file, const char *ort_build_id,
                                 oq_err *err)
{
    if (!*ort_file || !o->n_configs || !oq_config_is_expected(&o->configs[0]) || !o->model_path) return OQ_OK;
    size_t n = o->n_expected_files ? o->n_expected_files : o->n_input_files;
    const char *const *files = o->n_expected_files ? o->expected_files : o->input_files;
    char model_sha[65] = "", ort_sha[65] = "";
    oq_status st = OQ_OK;
    for (size_t i = 0; !st && i < n; i++) {
        json_t *prov = NULL;
        st = provenance_of(files[i], &prov, err);
        if (prov && !*model_sha) st = model_identity(o->model_path, model_sha, err);
        int how = SAME_NOT, spelt = 0;
        if (prov && !st) st = same_build(prov, ort_file, ort_build_id, ort_sha, &how, err);
        const oq_config *c = prov && !st ? saved_by(o, prov, model_sha, how != SAME_NOT, &spelt) : NULL;
        const char *as = how == SAME_BYTES      ? ", the same bytes as "
                         : how == SAME_BUILD_ID ? ", the ELF build-id of "
                                                : "";
        const char *version = json_string_value(json_object_get(prov, "ort_version"));
        const char *lib = json_string_value(json_object_get(prov, "ort_library"));
        if (c)
            st = oq_err_set(err, OQ_ERR_INVALID_ARG,
                            "%s: saved by '%s' (validate with save_outputs) running this model_path on %s with ORT "
                            "%s (%s%s%s) and the same session options%s, the session '%s' runs: compared with its own "
                            "outputs ORT is compared with "
                            "itself, which passes and proves nothing (judge it against outputs of another build, "
                            "provider or framework)",
                            files[i], json_string_value(json_object_get(prov, "config")), c->runtime,
                            version ? version : "?", *as && lib ? lib : "", as, ort_file,
                            spelt ? " as ORT runs them (a graph optimization level is one however given; entries "
                                    "of logging, profiling or spinning change no output)"
                                  : "",
                            c->name);
        json_decref(prov);
    }
    return st;
}
