/* What the session config check knows of ORT's keys beyond their domain (never installed). */
#ifndef ORTQUAL_SESSIONCFG_IMPL_H
#define ORTQUAL_SESSIONCFG_IMPL_H

#include <stddef.h>

#include <jansson.h>

#include "ortqual/runtime.h"
#include "ortqual/status.h"

/* What two sessions apart only in some entries still share: the numbers they compute, the time
 * they take. */
#define OQ_SESSION_SAME_OUTPUTS 1
#define OQ_SESSION_SAME_TIMING 2

/* 1 when an entry of `key` provably cannot change an output (logging, profiling, spinning), so
 * that two sessions apart only in such entries compute the same numbers; 0 otherwise (an
 * unknown key or NULL included). */
int oq_session_config_neutral(const char *key);
/* The same for what `same` names (OQ_SESSION_SAME_OUTPUTS, OQ_SESSION_SAME_TIMING or both):
 * for a timing only the log id is neutral (spinning, profiling and logging cost time). */
int oq_session_config_neutral_for(const char *key, int same);

/* A session as ORT runs it, the one place two sessions are made comparable (a replay against
 * saved outputs, bench against its baseline): `level` (ORT's number of the level set as an
 * option, -1 its default) and `config` (an object of the config entries, KEY: VALUE) where two
 * spellings make one session. A session.graph_optimization_level entry takes the option's place
 * (ORT takes the entry over it) and leaves `config`, as does every entry neutral for `same`
 * (oq_session_config_neutral_for); returns the level ORT runs, its default as 99. */
int oq_session_as_run(int level, json_t *config, int same);

/* A key given twice among the n entries: ORT keeps the last value without a word (its warning
 * only in its log), so a run would be recorded with both and run with one. OQ_ERR_INVALID_ARG
 * naming `who` (the function) and `field` (the keys' array) and both values. */
oq_status oq_session_config_repeated(const char *who, const char *field, size_t n, const char *const *keys,
                                     const char *const *values, oq_err *err);

/* ORT's level number (0, 1, 2, 3 or 99) that session.graph_optimization_level's value `name`
 * sets; -1 for any other name (or NULL). ORT takes this entry over the level set through
 * SetSessionGraphOptimizationLevel. */
int oq_session_config_level(const char *name);

/* The graph optimization level ORT runs and what set it, {"level", "from", "option"}: a
 * session.graph_optimization_level entry among the n, which ORT takes over the level set as an
 * option ("from" "session_config", "option" that level, -1 none), else `option` ("from"
 * "option"); NULL when neither set one (ORT's default) or out of memory. The one record of it
 * that validate, replay and bench write. */
json_t *oq_session_graph_opt_ran(oq_graph_opt option, size_t n, const char *const *keys, const char *const *values);

/* The warning of each of the n entries that ONNX Runtime `ort_version` takes unchecked (a key the
 * headers do not know, oq_session_config_check_for), appended to the array `warnings`: a
 * summary's record of what was passed to ORT unread by ortqual. */
void oq_session_config_warn(const char *ort_version, size_t n, const char *const *keys, const char *const *values,
                            json_t *warnings);

/* The threads and execution mode ORT runs a session with, and what set each. ORT takes the
 * entries session.intra_op_num_threads, session.inter_op_num_threads and session.execution_mode
 * over SetIntraOpNumThreads, SetInterOpNumThreads and SetSessionExecutionMode, either way
 * (measured on 1.29 and 1.30 by the threads a session starts: docs/results.md), as it takes a
 * level entry over the level option. */
typedef struct oq_session_threads {
    int intra;           /* intra-op threads as run, 0: ORT's default */
    int inter;           /* inter-op threads as run: 0 in sequential mode (ORT starts no
                            inter-op pool then) or ORT's default in parallel mode */
    int parallel;        /* ORT's parallel execution mode */
    int intra_option;    /* the options alone: intra-op and inter-op threads (N >= 1 inter-op */
    int inter_option;    /* threads: ortqual's parallel mode), as oq_session_opts takes them */
    int intra_entry;     /* 1: an entry set the count or mode (over the option) */
    int inter_entry;
    int mode_entry;
    int intra_default;   /* 1: intra is 0, ORT's default (the record says oq_ort_default_threads) */
    const char *affinities; /* the session.intra_op_thread_affinities entry (borrowed from the
                               values given: valid while they are), NULL: none */
} oq_session_threads;

/* The intra-op threads ONNX Runtime starts for a count of 0 here: its physical cores (1: none
 * but the caller's). */
int oq_ort_default_threads(void);

/* The threads and mode ORT runs with the options `intra`, `inter` (oq_session_opts') and the n
 * config entries (the last of a key given twice, as ORT takes it; a value out of its domain:
 * the option's, as oq_session_config_check refuses it before a session is made). */
void oq_session_threads_ran(int intra, int inter, size_t n, const char *const *keys, const char *const *values,
                            oq_session_threads *out);

/* The same for a session recorded as `config` (an object of the entries, KEY: VALUE): the three
 * entries leave `config`, as oq_session_as_run takes the level's, so that two spellings of one
 * session compare equal. */
void oq_session_threads_as_run(int intra, int inter, json_t *config, oq_session_threads *out);

/* A record's fields of `t` (NULL: out of memory): "threads" as run, with "threads_from"
 * ("session_config") and "threads_option" (the option's count) where an entry set it, or
 * "threads_from" "ort-default" where ORT picked it for 0; "thread_affinities" (the entry's
 * value) where one was given; the same
 * for "inter_op_threads" and "execution_mode" ("sequential" or "parallel"), written always when
 * `all` (bench, whose options set them) and otherwise where an entry set them (validate, which
 * runs ORT's sequential mode unless one does), "inter_op_threads" also wherever the mode is
 * parallel (ORT's 0 there is its default pool, recorded as oq_ort_default_threads with
 * "inter_op_threads_from" "ort-default"). The one record validate, replay and bench write. */
json_t *oq_session_threads_json(const oq_session_threads *t, int all);

/* The intra-op count a record (a configuration's "threads", "threads_from") asked ORT for: 0 for
 * ORT's default, recorded as the count ORT started ("ort-default"), so that two records of one
 * session compare equal whatever the summary says of the cores. */
int oq_session_threads_recorded(const json_t *record);

#define OQ_SESSION_CONFIG_LEVEL_KEY "session.graph_optimization_level"

#endif
