/* Atomic file output: nothing half-written is ever left at the final path.
 *
 * oq_atomic_open creates "<path>.tmp.<pid>.XXXXXX" in the same directory (so the
 * final rename stays on one filesystem); oq_atomic_commit flushes, fsyncs and
 * renames it over `path`; oq_atomic_abort closes and removes it. With
 * `overwrite == 0`, commit refuses to replace an existing file (checked at
 * commit time with link(2), so a race cannot clobber it either).
 * `no_sync`, set after oq_atomic_open, skips the fsync: the rename still makes the file
 * appear whole to any reader, but a machine crash may lose it. For per-batch and scratch
 * files of a run (thousands of them: an fsync costs ~10 ms each), whose run records what
 * it wrote in a final file that is synced.
 */
#ifndef ORTQUAL_FILEIO_H
#define ORTQUAL_FILEIO_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ortqual/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct oq_atomic_file {
    FILE *fp;      /* write here */
    char *path;    /* final path (owned) */
    char *tmp;     /* temporary path (owned) */
    int overwrite;
    int no_sync;   /* commit without fsync (see above) */
} oq_atomic_file;

OQ_API oq_status oq_atomic_open(oq_atomic_file *af, const char *path, int overwrite, oq_err *err);
OQ_API oq_status oq_atomic_commit(oq_atomic_file *af, oq_err *err);
OQ_API void oq_atomic_abort(oq_atomic_file *af);

/* Removes the temporary file of every write of this process (oq_atomic_*, oq_write_file_*, the
 * figures of plot.h, ...) not yet renamed into place or removed: what a signal that ends the
 * process would leave half-written; and the outputs held by oq_atomic_hold_output (their files,
 * then their folders when empty). Async-signal-safe: for a program's own SIGINT or SIGTERM
 * handler, before the program ends by the signal. Files of other processes, a forked parent's
 * included, are never touched. */
OQ_API void oq_atomic_remove_temporaries(void);
/* For a program without handlers of its own: SIGINT, SIGTERM and SIGHUP (each unless ignored)
 * call oq_atomic_remove_temporaries and then end the process by the signal, as its default
 * action would (the exit status a shell reports, 130 or 143, is the same). */
OQ_API void oq_atomic_catch_signals(void);
/* `path`, one file of a set of outputs not yet complete (a run's summary files, its profiles;
 * held before it is put in place, an earlier run's file there goes too), or with `dir` a folder
 * the set made: a signal that ends the process removes it as it removes the temporaries, so that
 * the set is whole or absent, as a failed write leaves it. oq_atomic_keep_outputs: the set is
 * complete, every output this process holds stays. */
OQ_API void oq_atomic_hold_output(const char *path, int dir);
OQ_API void oq_atomic_keep_outputs(void);

/* Checks, before any work, that `path` can be written by oq_atomic_open/commit: not empty, not
 * a directory, device, FIFO or socket (OQ_ERR_INVALID_ARG), not existing unless `overwrite`
 * (OQ_ERR_IO), its folder exists (OQ_ERR_INVALID_ARG) and is writable (OQ_ERR_OUTPUT: a
 * read-only file system). A full disk is still found only when writing. */
OQ_API oq_status oq_check_output_path(const char *path, int overwrite, oq_err *err);
/* The folder, and each folder above it that is there, is a folder (OQ_ERR_INVALID_ARG "PATH:
 * exists and is not a directory" otherwise): a file there is the user's mistake, not a failure
 * to write ("Not a directory" when making it). An empty dir is OQ_OK (nothing to check). */
OQ_API oq_status oq_check_outdir_kind(const char *dir, oq_err *err);
/* Room a run needs below its folder: a name of its own (a figure named after a model output, with
 * a temporary's ".tmp.<pid>.XXXXXX") a level or two down (.work/, shards/I/); the longest output
 * folder a run (and `ortqual slurm`) takes is then OQ_OUTDIR_MAX bytes. */
#define OQ_OUTDIR_ROOM 320
#define OQ_OUTDIR_MAX (PATH_MAX - OQ_OUTDIR_ROOM - 1)
/* Checks, before any work, the output folder `dir` of a run (DIR/summary.json is a run's): its path
 * is at most OQ_OUTDIR_MAX bytes ("path too long", OQ_ERR_INVALID_ARG); it, and
 * each folder above it that is there, is a folder ("X: exists and is not a directory",
 * OQ_ERR_INVALID_ARG); without `force` it is new, empty or holds only a file named `ignore` (may
 * be NULL) (OQ_ERR_IO: an earlier run's summary.json, or the first other entry, named); it, or
 * the nearest folder above it that is there, takes a file (OQ_ERR_OUTPUT: read-only). */
OQ_API oq_status oq_check_outdir(const char *dir, int force, const char *ignore, oq_err *err);
/* At a run's start, before its work: the result files an earlier run left in folder `dir`, each
 * of `names` (n_names of them) that is there, removed in that order (the verdict first: a run
 * ended between two removals leaves no verdict beside the rest), so that this run, ended at any
 * moment after (SIGKILL too, which no handler sees), leaves none of them to stand for its own.
 * Only those names, only in `dir`: a user's other files stay. The names that went are appended to
 * `said` (NULL: not said; `said_size` bytes with its NUL, cut short when full), ", " between them.
 * Returns how many went; 0 for a NULL dir or names. */
OQ_API size_t oq_outdir_forget(const char *dir, const char *const *names, size_t n_names, char *said,
                               size_t said_size);
/* One run at a time in an output folder: an exclusive flock(2) on DIR/NAME (NULL:
 * OQ_OUTDIR_LOCK; a shard of a prepared split takes its own, oq_shard_lock_name of shard.h), which
 * holds the holder's pid. The kernel drops the lock when its process ends, however (a SIGKILL
 * included): a lock file left behind holds nobody, and the next run takes it. The folder is made
 * when missing (and removed again by oq_outdir_lock_free when left empty). Errors: OQ_ERR_IO
 * "DIR: in use by another ortqual run (pid N, holding DIR/NAME): ..." when held (exit 2);
 * OQ_ERR_INVALID_ARG when the lock file is a symbolic link or not a regular file; OQ_ERR_OUTPUT
 * when no descriptor is left (EMFILE, ENFILE). A folder that cannot be made or written, or a
 * file system without flock (ENOLCK, EOPNOTSUPP), gives OQ_OK and *lock NULL: the run goes on
 * unlocked and its own checks say what is wrong with the folder. */
#define OQ_OUTDIR_LOCK ".ortqual.lock"
typedef struct oq_outdir_lock oq_outdir_lock;
OQ_API oq_status oq_outdir_lock_create(const char *dir, const char *name, oq_outdir_lock **lock, oq_err *err);
/* The same lock on DIR/OQ_OUTDIR_LOCK taken shared (flock LOCK_SH): the shards of one split
 * (`validate --shard I`) hold it together, each besides its own exclusive shard lock, so that a
 * run that takes the folder whole (a plain or --force run, --prepare-shards, merge, report) is
 * refused while any shard runs ("DIR: in use by the shards of a split run (holding DIR/NAME)"),
 * and a shard while such a run holds it. Its file holds "shards" instead of a pid; the last shard
 * to release it removes it. */
OQ_API oq_status oq_outdir_lock_create_shared(const char *dir, oq_outdir_lock **lock, oq_err *err);
/* Releases the lock and removes its file (a shared lock's only when no other holds it), and the
 * folder, when this lock made it and it is left empty. NULL is a no-op. */
OQ_API void oq_outdir_lock_free(oq_outdir_lock *lock);
/* Write a whole buffer atomically. */
OQ_API oq_status oq_write_file_atomic(const char *path, const void *buf, size_t n, int overwrite,
                                      oq_err *err);
/* The same without the fsync (no_sync above), replacing `path`. */
OQ_API oq_status oq_write_file_nosync(const char *path, const void *buf, size_t n, oq_err *err);
/* The largest file oq_read_file reads, and the largest .npz member: 16 GiB. */
#define OQ_READ_MAX ((uint64_t)16 << 30)

/* Read a whole regular file into a malloc'ed buffer (NUL-terminated for
 * convenience). OQ_ERR_IO, the message naming the path and the reason: cannot
 * open, a directory, a device, FIFO or socket (never read: they have no end;
 * a FIFO is not waited on), larger than OQ_READ_MAX, or a read error. */
OQ_API oq_status oq_read_file(const char *path, unsigned char **buf, size_t *n, oq_err *err);
/* Check that `path` is a regular file of at most OQ_READ_MAX bytes, with
 * oq_read_file's messages; *size (may be NULL) gets its size. */
OQ_API oq_status oq_check_regular_file(const char *path, uint64_t *size, oq_err *err);
/* mkdir -p with mode 0777 less the umask (OQ_ERR_OUTPUT when a folder cannot be made). */
OQ_API oq_status oq_mkdirs(const char *path, oq_err *err);
/* Makes directory `name` inside the existing directory `parent`, or takes it as it is, and
 * refuses (OQ_ERR_INVALID_ARG) a symbolic link or anything but a directory there (checked by
 * opening it with O_NOFOLLOW below parent's descriptor): what a tool writes below its output
 * folder stays in it, whatever was planted there. */
OQ_API oq_status oq_mkdir_in(const char *parent, const char *name, oq_err *err);
/* A copy of `s` that is valid UTF-8, for the documents that must be (JSON, XML, HTML): each byte
 * that starts no valid UTF-8 sequence becomes U+FFFD, so a path (bytes, on Linux) or a message
 * that names one is shown as near as it can be, never refused. Malloc'ed; NULL for NULL or when
 * out of memory. */
OQ_API char *oq_text_utf8(const char *s);

#ifdef __cplusplus
}
#endif
#endif
