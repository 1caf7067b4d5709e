/* A user's batch file read once (validate-impl.h): hashed and parsed from the same bytes. */
#include <stdlib.h>

#include "ortqual/fileio.h"
#include "ortqual/npz.h"
#include "npz/npz-impl.h"
#include "validate/validate-impl.h"

oq_status oq_user_file_read(const char *path, oq_user_file *f, oq_err *err)
{
    unsigned char *buf = NULL;
    size_t n = 0;
    *f = (oq_user_file){0};
    /* whole, even above the 64 MiB oq_npz_read streams through libzip: a stream would be a
     * second read of a file that may have changed; one batch's bytes are held until parsed */
    oq_status st = oq_read_file(path, &buf, &n, err);
    if (st) return st;
    oq_sha256_buf(buf, n, f->sha256);
    st = oq_npz_parse(buf, n, path, &f->z, err);
    if (!st && !oq_npz_comment_of(buf, n, &f->comment)) st = oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    free(buf);
    return st;
}

void oq_user_file_clear(oq_user_file *f)
{
    oq_npz_free(f->z);
    free(f->comment);
    *f = (oq_user_file){0};
}
