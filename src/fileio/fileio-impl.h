/* Internals of src/fileio shared across the library (never installed): JSON
 * documents written as files, atomically, and parsed from text. */
#ifndef ORTQUAL_FILEIO_IMPL_H
#define ORTQUAL_FILEIO_IMPL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "ortqual/status.h"

/* Every real ortqual writes in JSON reads back as the double it was: jansson writes all of a
 * document's reals at one precision, and 10 digits lost a tolerance of 0.10008144378662108
 * (0.1000814438) while 17 write 1e-5 as 1.0000000000000001e-5. oq_json_real writes v in the
 * fewest digits that read back exactly, from 10 (so a value that fits 10 digits is written as
 * JSON_REAL_PRECISION(10) wrote it), in jansson's form; oq_json_real_form puts a "%g" text in
 * that form (".0" after an integer's digits, the exponent without "+" and leading zeros:
 * "1e-05" -> "1e-5") in place. Both return their buffer (room for 48 bytes). */
char *oq_json_real(double v, char *buf, size_t n);
char *oq_json_real_form(char *t);
/* json_dumps with each real as oq_json_real writes it (jansson's JSON_REAL_PRECISION in
 * `flags` is overridden); NULL when j is NULL or out of memory. The writers below use it. */
char *oq_json_dumps(const json_t *j, size_t flags);

/* `j` dumped as oq_json_dumps dumps it, plus a final newline, written atomically
 * (replacing `path`). OQ_ERR_NOMEM when it cannot be serialized (or j is NULL). */
/* OQ_ERR_OUTPUT "PATH: write failed: <saved_errno's text>" (EIO's for 0): a file of the
 * tool's own (a run's work files included) could not be written: a full disk or a
 * read-only folder, the system's failure (exit 3), never the input's. */
oq_status oq_err_write(oq_err *err, const char *path, int saved_errno);

/* `mode` less the process's umask (read once, thread-safely: fileio.c): the mode of a file made
 * by mkstemp (0600) and then given its output's mode. Files and folders made with open/mkdir
 * get the umask from the kernel. */
mode_t oq_output_mode(mode_t mode);

/* The temporary file of a write of `path` by this process, as mkstemp's template
 * ("<path>.tmp.<pid>.XXXXXX"): the one place that spells it (temps.c). malloc'd; NULL when out
 * of memory. */
char *oq_temp_template(const char *path);
/* Whether folder entry `name` is such a temporary (mkstemp's characters filled in): of file
 * `base` (a name without its folder; NULL: of any file), of process `pid` (0: of any). */
int oq_temp_name_is(const char *name, const char *base, pid_t pid);

/* A temporary file of this process (oq_temp_template's, made) held from when it is made until
 * it was renamed into place or removed (released: the exact name held), for
 * oq_atomic_remove_temporaries (temps.c). Every writer's goes through oq_atomic_* (fileio.c),
 * which holds it. */
void oq_temp_hold(const char *tmp);
void oq_temp_release(const char *tmp);
/* One output held by oq_atomic_hold_output (a file or a folder) let go alone: its set is
 * complete while other sets of the process are not (oq_atomic_keep_outputs lets go of all). */
void oq_output_release(const char *path);
/* A folder this process made for another to name files in (ORT names its profile), held as an
 * output until released (oq_output_release): a signal removes its entries, then it. */
void oq_scratch_hold(const char *dir);
/* The file of a lock this process holds alone (oq_outdir_lock_create), held until released
 * (oq_output_release), whatever set completes meanwhile: a signal that ends the process removes
 * it, as oq_outdir_lock_free would have. */
void oq_lock_hold(const char *path);
/* 1 when the calling thread holds the lock on DIR/NAME (NULL: OQ_OUTDIR_LOCK) through
 * oq_outdir_lock_create (or _shared, where `shared` asks only that): a library call that takes
 * the lock itself leaves it to a caller that took it first, rather than be refused by it. */
int oq_outdir_lock_held(const char *dir, const char *name, int shared);

oq_status oq_json_write_file(const char *path, const json_t *j, size_t flags, oq_err *err);
/* The same without the fsync (oq_write_file_nosync): scratch files of a run. */
oq_status oq_json_write_file_nosync(const char *path, const json_t *j, size_t flags, oq_err *err);

/* oq_write_file_nosync for a run's per-batch file in its output directory: an earlier run's
 * file there (--force) is removed first, since ext4 flushes a file renamed over another
 * (auto_da_alloc), the one cost a scratch file skips the fsync for. The name is missing for a
 * moment, never half-written. An earlier file of the same bytes is left as it is: a run again
 * on the same generated events writes none (ext4 spent ~0.1 ms making each file in a directory
 * whose files had just been deleted: most of a re-run's preparation). */
oq_status oq_replace_file_nosync(const char *path, const void *buf, size_t n, oq_err *err);
/* oq_write_file_nosync for a file others may be reading, shared by concurrent writers of the
 * same bytes (the reference cache): a file already holding them is kept, its inode untouched
 * (a reader that took its identity still finds it); one of other bytes, or anything else but a
 * folder (a FIFO, a link: the folder is the library's own), is replaced, atomically. A reader
 * sees the whole old file or the whole new one, never part of one. `add`: mode bits the new file
 * gets whatever the umask (a group's shared cache: S_IRGRP), 0: the umask's mode alone. */
oq_status oq_install_file_nosync(const char *path, const void *buf, size_t n, mode_t add, oq_err *err);


/* Whether external-data location `loc` of a model in folder `dir` may be read, checked before
 * anything is opened, as ORT checks it: a relative path with no ".." part, and (dir non-NULL)
 * the file dir/loc, where it exists, inside `dir` once its symbolic links are resolved (one
 * absent is left to the open that follows to name). OQ_ERR_FORMAT "external data location 'LOC'
 * is not a path inside the model's folder" or "... leads out of the model's folder through a
 * symbolic link (ORT refuses it)" otherwise; the caller prefixes the model (and tensor). A
 * model may come from anyone: its locations must not make the tool read (and publish a hash
 * of) a file elsewhere. */
oq_status oq_ext_location_check(const char *dir, const char *loc, oq_err *err);
/* dir/loc (dir non-NULL) opened for reading, and the file opened is the one the check allows:
 * checked before the open (oq_ext_location_check: a link out is never opened) and again on the
 * descriptor, so a link put at a name of the path between the check and the open is refused,
 * not read. Read the file through the descriptor only (another open of the path may find
 * another file). O_NONBLOCK: a FIFO named there is not waited on (the caller fstat's it).
 * The descriptor; -1 with err set: the check's OQ_ERR_FORMAT, or OQ_ERR_IO "DIR/LOC: cannot
 * open: ..." (errno kept). */
int oq_ext_open(const char *dir, const char *loc, oq_err *err);

/* open(path, flags, mode) into *fd of a file written in place (not temp + rename) in an output, shard
 * or work folder, where anyone who can write the folder may have put something at the name:
 * never through a symbolic link (O_NOFOLLOW) or a hard link (more than one link: the file is
 * another name's too, and truncating it truncates that file: a lock file linked to the
 * user's data lost the data), never a file of another user, a device or a FIFO. A name not
 * there is created with O_EXCL, so the file checked is the file written; O_TRUNC truncates it
 * only once checked (O_CREAT and O_EXCL in flags are ignored). Errors, *fd -1:
 * OQ_ERR_INVALID_ARG "PATH: is a symbolic link: ... (remove it)" (or "has 2 hard links",
 * "owned by uid N", "is a FIFO ..."), else oq_err_write's OQ_ERR_OUTPUT (errno kept). */
oq_status oq_open_in_place(const char *path, int flags, mode_t mode, int *fd, oq_err *err);

/* fopen(path, "w") into *f for a run's scratch file in its own work folder, through
 * oq_open_in_place (closed on exec). */
oq_status oq_fopen_scratch(const char *path, FILE **f, oq_err *err);

/* Which file a read read: another file in its place (renamed over it) or the same one written
 * since (its size or change time moved) is not the same. */
typedef struct oq_file_id {
    uint64_t dev, ino, size;
    int64_t ctime_s, ctime_ns;
    uint32_t uid; /* its owner: who wrote a cache entry (not part of its identity) */
} oq_file_id;
/* `path` opened for reading into *fd (close it), *size its size: a regular file only, as
 * oq_read_file takes it (O_NONBLOCK: a FIFO is not waited on; its messages). */
oq_status oq_open_regular(const char *path, int *fd, uint64_t *size, oq_err *err);
/* oq_read_file, and *id (may be NULL) the identity of the file the bytes came from (fstat of
 * the descriptor read). */
oq_status oq_read_file_id(const char *path, unsigned char **buf, size_t *n, oq_file_id *id, oq_err *err);
/* The same for a file the library made itself (a reference cache's entry): a symbolic link
 * there is none of its files, and is refused ("PATH: is a symbolic link, ..."), not followed. */
oq_status oq_read_own_file_id(const char *path, unsigned char **buf, size_t *n, oq_file_id *id, oq_err *err);
int oq_file_id_same(const oq_file_id *a, const oq_file_id *b);
/* The identity of the file at `path` now (stat: a link followed); -1 with errno when there is none. */
int oq_file_id_at(const char *path, oq_file_id *id);
/* The same of the file open on fd (fstat). */
int oq_file_id_fd(int fd, oq_file_id *id);
/* Whether the files at p and q hold the same bytes (0 when either cannot be read): a copy of
 * one ORT build is that build. */
int oq_file_same_bytes(const char *p, const char *q);

/* A JSON string of s (NULL: ""), kept when s is not UTF-8 (jansson refuses it, and a pack
 * with it fails whole): each byte that starts no valid sequence becomes U+FFFD. NULL on OOM. */
json_t *oq_json_text(const char *s);
/* A path in a document ortqual reads back (a worker's plan, the batch list, a result), byte for
 * byte: obj[key] is the path when it is UTF-8. A path need not be (Linux takes any bytes but
 * '/' and 0) and JSON must: then obj[key] shows it for people (oq_json_text) and
 * obj["<key>_hex"] holds its bytes. 0 on OOM; a NULL path sets nothing. */
int oq_json_set_path(json_t *obj, const char *key, const char *path);
/* The path oq_json_set_path set, malloc'ed; NULL when obj has no string under key (or a
 * "<key>_hex" that is not hex), and when out of memory, which also clears *ok. */
char *oq_json_path_dup(const json_t *obj, const char *key, int *ok);
/* `n` bytes of JSON text parsed; NULL with OQ_ERR_FORMAT "<name>:<line>: not valid JSON: ..."
 * when they are not JSON. */
json_t *oq_json_parse(const char *text, size_t n, const char *name, oq_err *err);

/* JSON lines (one document per line), the records streamed between processes:
 * oq_jsonl_put writes j as a line as oq_json_dumps dumps it with `flags` (any indentation dropped: one
 * line) and releases it (0: j NULL or a write error);
 * oq_jsonl_each gives fn every line parsed, with its 0-based number (fn borrows it), and
 * stops at fn's error, a line that is not JSON (OQ_ERR_FORMAT, naming PATH:LINE) or a read error. */
typedef oq_status (*oq_jsonl_fn)(void *ctx, json_t *line, size_t i, oq_err *err);
int oq_jsonl_put(FILE *f, json_t *j, size_t flags);
oq_status oq_jsonl_each(const char *path, oq_jsonl_fn fn, void *ctx, oq_err *err);

/* A summary.json read with its batch records one at a time: each element of the top-level
 * "batches" array (which -1) and of every configs[K].batches (which K) parsed alone and given
 * to fn (which may keep it with json_incref); the rest returned as a document in which those
 * arrays are empty. With OQ_JSON_SCAN_PLAN_BATCHES in flags, plan.description.batches (every
 * batch by SHA-256) goes the same way (which OQ_JSON_PLAN_BATCHES): for readers that never
 * check the plan's hash against the description (the report, the merge: it compares each
 * shard's hash with the prepared plan's, whose description it copies). fn's error stops the walk.
 * NULL on error (OQ_ERR_NOT_FOUND: unreadable, OQ_ERR_FORMAT: not JSON). Memory: the document
 * without the records, and one record. */
#define OQ_JSON_SCAN_PLAN_BATCHES 1u
/* With OQ_JSON_SCAN_RUN_BATCHES_ONLY, the configurations' records are walked over (checked
 * for balance), never parsed nor given to fn: a second pass that needs only the run's. */
#define OQ_JSON_SCAN_RUN_BATCHES_ONLY 2u
/* With OQ_JSON_SCAN_SHARD_BATCHES, a shard's summary's shard.batches (its batch indices) are
 * walked over, never parsed nor given to fn (which OQ_JSON_SHARD_BATCHES): for the merge, which
 * takes them from the plan. */
#define OQ_JSON_SCAN_SHARD_BATCHES 4u
#define OQ_JSON_PLAN_BATCHES (-3L)
#define OQ_JSON_SHARD_BATCHES (-4L)
typedef oq_status (*oq_json_record_fn)(void *ctx, long which, json_t *record, oq_err *err);
json_t *oq_json_scan_file(const char *path, unsigned flags, oq_json_record_fn fn, void *ctx, oq_err *err);
/* The same from an open stream (`name` in messages). */
json_t *oq_json_scan_fp(FILE *in, const char *name, unsigned flags, oq_json_record_fn fn, void *ctx, oq_err *err);

#endif
