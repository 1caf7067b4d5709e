/* A model file as a run reads it: once, so that every session of the run is made from the
 * bytes that were hashed (the file may be replaced while the run goes on), with its identity:
 * what a validation plan records and a worker checks before it runs anything.
 */
#ifndef ORTQUAL_INSPECT_MODELFILE_IMPL_H
#define ORTQUAL_INSPECT_MODELFILE_IMPL_H

#include <stddef.h>

#include "fileio/fileio-impl.h"
#include "onnx.pb-c.h"
#include "ortqual/inspect.h"
#include "ortqual/status.h"

/* The model's identity: the SHA-256 of its file, or, with external-data files (ORT reads those
 * itself, from the model's folder), the SHA-256 of that SHA-256 and of each file's name and
 * SHA-256. The file's own bytes are held (oq_session_create takes them with the path); each
 * external file's identity (device, inode, size, change time) is kept from before it was
 * hashed, so that any change to it since shows. */
typedef struct oq_model_file {
    char *path;
    unsigned char *bytes;
    size_t n;
    oq_model_info *mi;      /* the bytes inspected; NULL when they are no model inspect reads ... */
    oq_err inspected;       /* ... and then why (a worker leaves it to ORT to say) */
    size_t n_ext;
    char **ext_paths;       /* the external-data files (as paths beside the model) ... */
    oq_file_id *ext_ids;    /* ... and which files they were when hashed (zeroed: none there) */
    char sha256[65];        /* "": not known, an external file cannot be read ... */
    oq_err unhashed;        /* ... and why (ORT says so too, when it reads the file) */
} oq_model_file;

/* `path` read once and inspected (the raw bytes of large initializers not copied), its external
 * files hashed. OQ_ERR_IO: the model cannot be read (not a regular file included: a FIFO is not
 * waited on); an external file that cannot be read leaves the identity unknown. */
oq_status oq_model_file_read(const char *path, oq_model_file *m, oq_err *err);
/* The model is still the one `planned` (a SHA-256 as m->sha256 holds it; NULL: m's own,
 * known or not): m's identity is it, and no external file changed since it was hashed.
 * OQ_ERR_RUNTIME "PATH: changed during the run (sha256 X in the plan, Y now)" otherwise. */
oq_status oq_model_file_unchanged(const oq_model_file *m, const char *planned, oq_err *err);
void oq_model_file_clear(oq_model_file *m);
/* Every external initializer of g, of the model at `path`, as convert checks it before it reads
 * the data: its reference (oq_ext_ref_of), its file there (OQ_ERR_IO naming it: missing,
 * unreadable, not a regular file) and holding its bytes (OQ_ERR_FORMAT: a file cut short, which
 * ORT reports only when a session loads it, in its own words). The first found. */
oq_status oq_model_ext_check(const Onnx__GraphProto *g, const char *path, oq_err *err);

#endif
