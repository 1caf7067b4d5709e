/* Native file-descriptor capture: see what ONNX Runtime writes to fd 1 and fd 2.
 *
 * ORT prints its attention routing lines ("Operator=Attention Node=attn0 ...
 * SdpaKernel=FLASH_ATTENTION") with C++ iostreams straight to file descriptor 1.
 * Redirecting a FILE* (freopen, setvbuf, a Python sys.stdout swap) never sees
 * them. A capture swaps the descriptors themselves for pipe write ends, and one
 * reader thread per descriptor drains its pipe, so a chatty writer never blocks
 * on a full pipe. Each complete line goes to a sink callback; lines the sink
 * does not keep are written on to the ORIGINAL descriptor (pass-through), so the
 * user still sees ORT's warnings and the program's own output.
 *
 *     oq_dispatch_env saved;
 *     oq_dispatch_env_enable(&saved, &err);          // before session creation
 *     oq_dispatch_parser *parser;
 *     oq_dispatch_parser_create(&parser, &err);
 *     oq_capture *cap;
 *     oq_capture_begin_dispatch(&cap, OQ_CAPTURE_STDOUT | OQ_CAPTURE_STDERR, parser, &err);
 *     ... create the session, run it ...
 *     oq_capture_end(cap, NULL, &err);               // always restores fd 1 and fd 2
 *     oq_dispatch_env_restore(&saved);
 *     const oq_dispatch_log *log = oq_dispatch_parser_log(parser);
 *
 * oq_capture_begin takes any line sink instead of the parser.
 *
 * Captures nest (an inner capture passes through into the outer one's pipe) as
 * long as they end in reverse order. While a capture is active, descriptors 1/2
 * are process-wide pipes: other threads' output is captured too.
 */
#ifndef ORTQUAL_CAPTURE_H
#define ORTQUAL_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ortqual/dispatch.h"
#include "ortqual/status.h"

#ifdef __cplusplus
extern "C" {
#endif

enum oq_capture_flags {
    OQ_CAPTURE_STDOUT = 1u << 0, /* capture fd 1 */
    OQ_CAPTURE_STDERR = 1u << 1, /* capture fd 2 (its own pipe and thread) */
    OQ_CAPTURE_QUIET = 1u << 2   /* pass nothing through: the sink sees everything */
};

/* Lines longer than this are not routing text: they bypass the sink and pass
 * straight through in chunks, so memory stays bounded whatever is written. */
#define OQ_CAPTURE_LINE_MAX 65536

/* Called on a reader thread for every complete line written to a captured
 * descriptor, in order per descriptor. `line[len]` is '\0'; the '\n' is not
 * part of the line (a '\r' before it is). ANSI colour codes are left in. Calls are serialized by the capture (one
 * at a time across both descriptors), so the sink needs no locking of its own.
 * A final line without '\n' is delivered at oq_capture_end. Return true to keep
 * the line from the original descriptor, false to pass it through. */
typedef bool (*oq_capture_sink)(void *user, int fd, const char *line, size_t len);

typedef struct oq_capture oq_capture;

typedef struct oq_capture_stats {
    uint64_t bytes[3];     /* bytes read, indexed by fd (1, 2) */
    uint64_t lines[3];     /* lines handed to the sink */
    uint64_t kept[3];      /* lines the sink kept (in dispatch mode: every line, the parser
                              passes the non-routing text through itself) */
    uint64_t overlong[3];  /* bytes of lines longer than OQ_CAPTURE_LINE_MAX */
    uint64_t forward_errors; /* pass-through writes that failed (original fd closed...) */
} oq_capture_stats;

/* Flush stdio, then replace the descriptors chosen by `flags` with pipes read
 * by background threads. `sink` must not be NULL. On failure every descriptor
 * already swapped is restored, nothing is left running, and *out is NULL.
 * Errors: OQ_ERR_INVALID_ARG (no stream chosen, NULL sink/out), OQ_ERR_IO
 * (dup/pipe failed, e.g. fd 2 is closed), OQ_ERR_NOMEM, OQ_ERR_RUNTIME (thread). */
OQ_API oq_status oq_capture_begin(oq_capture **out, unsigned flags, oq_capture_sink sink, void *user,
                                  oq_err *err);

/* The usual pairing with the dispatch parser: every captured line is fed to
 * `parser` (oq_dispatch_parser_feed; a last line without '\n' is finished with
 * oq_dispatch_parser_finish), and what the parser does not recognise as
 * routing text (its pass-through callback, which this installs and
 * oq_capture_end removes) is written to the original descriptor of the stream
 * it came from, unless OQ_CAPTURE_QUIET. Read the records with
 * oq_dispatch_parser_log after oq_capture_end. The parser must outlive the
 * capture and not be fed by anyone else meanwhile. Errors: as oq_capture_begin
 * (OQ_ERR_INVALID_ARG for a NULL parser); oq_capture_end reports OQ_ERR_NOMEM
 * if the parser ran out of memory (lines after that were passed through). */
OQ_API oq_status oq_capture_begin_dispatch(oq_capture **out, unsigned flags, oq_dispatch_parser *parser,
                                           oq_err *err);

/* fflush(NULL), restore the original descriptors, let the readers drain what
 * is already in the pipes (including a last line without '\n'), join them and
 * free `cap`. Always frees and always restores, even when it reports an error
 * (OQ_ERR_IO: a descriptor could not be restored). `stats` may be NULL. A child
 * process that inherited a pipe end cannot make this hang: the readers stop
 * once the pipe is empty after restoration. NULL `cap` is a no-op. */
OQ_API oq_status oq_capture_end(oq_capture *cap, oq_capture_stats *stats, oq_err *err);

/* Send `fd` (1 or 2) to /dev/null until oq_capture_unmute, after fflush(NULL): for output nobody
 * reads (ORT's routing line at every Run of a session made while they were on), with no pipe
 * and no thread. Returns the saved descriptor to give to oq_capture_unmute, or -1 when nothing
 * was muted (the descriptor is then untouched). */
OQ_API int oq_capture_mute(int fd);

/* fflush(NULL), put `saved` back as `fd` and close it; -1 is a no-op. */
OQ_API void oq_capture_unmute(int fd, int saved);

/* ORT reads ORT_ENABLE_ATTENTION_KERNEL_DEBUG_INFO when a session is created
 * (not at run time), so set it before oq_session_create. */
typedef struct oq_dispatch_env {
    bool was_set;   /* the variable existed before */
    char *previous; /* its previous value (owned), NULL if unset */
} oq_dispatch_env;

#define OQ_DISPATCH_ENV_VAR "ORT_ENABLE_ATTENTION_KERNEL_DEBUG_INFO"

/* setenv(ORT_ENABLE_ATTENTION_KERNEL_DEBUG_INFO, "1") and remember the old
 * value in `saved`. Errors: OQ_ERR_INVALID_ARG (NULL saved), OQ_ERR_NOMEM. */
OQ_API oq_status oq_dispatch_env_enable(oq_dispatch_env *saved, oq_err *err);

/* Put the previous value back (or unset it) and free what `saved` holds. */
OQ_API void oq_dispatch_env_restore(oq_dispatch_env *saved);

#ifdef __cplusplus
}
#endif
#endif
