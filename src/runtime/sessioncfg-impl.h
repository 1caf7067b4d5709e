/* What the session config check knows of ORT's keys beyond their domain (never installed). */
#ifndef ORTQUAL_SESSIONCFG_IMPL_H
#define ORTQUAL_SESSIONCFG_IMPL_H

/* 1 when an entry of `key` provably cannot change an output (logging, profiling, spinning), so
 * that two sessions apart only in such entries compute the same numbers; 0 otherwise (an
 * unknown key or NULL included). */
int oq_session_config_neutral(const char *key);

/* ORT's level number (0, 1, 2, 3 or 99) that session.graph_optimization_level's value `name`
 * sets; -1 for any other name (or NULL). ORT takes this entry over the level set through
 * SetSessionGraphOptimizationLevel. */
int oq_session_config_level(const char *name);

#define OQ_SESSION_CONFIG_LEVEL_KEY "session.graph_optimization_level"

#endif
