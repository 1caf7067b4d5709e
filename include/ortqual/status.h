/* ortqual status codes and error detail.
 *
 * Every library function that can fail returns an enum oq_status. When the
 * caller passes a non-NULL `oq_err *`, the function also fills it with a
 * one-line message that names the file, tensor, event or position at fault.
 * The message buffer belongs to the caller (usually on the stack), so errors
 * are thread-safe and need no freeing.
 *
 * A NULL where a function of any public header (include/ortqual/) needs an
 * object, a path, an array of n > 0 entries or an out pointer is
 * OQ_ERR_INVALID_ARG, "FUNCTION: ARGUMENT is NULL", ARGUMENT named as the
 * header names it (the graph builder's calls record it in the builder), never
 * a crash. A void function (oq_*_free, oq_*_clear, oq_*_default, a setter)
 * given NULL does nothing, as free() does. A function returning a value (a
 * getter, a count, a name) given a NULL object returns its "nothing": NULL, or
 * "" where its header promises a string; 0 for a count; -1 where -1 already
 * means none; an enum's unknown value; NaN for a value read; a zeroed struct.
 * Each header says which. tests/arch/nulls.sh holds every header to all three.
 *
 *     oq_err err = OQ_ERR_INIT;
 *     if (oq_npz_read("in.npz", &npz, &err) != OQ_OK)
 *         fprintf(stderr, "ortqual: %s\n", err.msg);
 */
#ifndef ORTQUAL_STATUS_H
#define ORTQUAL_STATUS_H

#include <stddef.h>

/* Marks what libortqual.so exports: the library is built with hidden visibility,
 * so a function or object is part of the API only when its header says OQ_API. */
#if defined(__GNUC__)
#define OQ_API __attribute__((visibility("default")))
#else
#define OQ_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum oq_status {
    OQ_OK = 0,
    OQ_ERR_INVALID_ARG,  /* a caller passed something the API does not accept */
    OQ_ERR_IO,           /* a file could not be opened, read, written or renamed */
    OQ_ERR_FORMAT,       /* a file or buffer is malformed or of an unsupported kind */
    OQ_ERR_SHAPE,        /* tensor shapes or dtypes do not fit together */
    OQ_ERR_MASK,         /* a mask breaks the prefix-of-ones contract */
    OQ_ERR_NOMEM,        /* an allocation failed */
    OQ_ERR_UNSUPPORTED,  /* valid, but not something this build can do */
    OQ_ERR_RUNTIME,      /* ONNX Runtime or an execution provider reported an error */
    OQ_ERR_NOT_FOUND,    /* a library, symbol, tensor or device was not found */
    OQ_ERR_CHECK_FAILED, /* a qualification check ran and did not pass */
    OQ_ERR_OUTPUT        /* an output could not be written (read-only folder, full disk): the
                            system failed, not the input (the tool exits 3) */
} oq_status;

#define OQ_ERR_MSG_MAX 1024

typedef struct oq_err {
    oq_status status;
    char msg[OQ_ERR_MSG_MAX];
} oq_err;

/* An empty oq_err, in C and in C++ (where `= {0}` is refused: an int is no
 * oq_status): `oq_err err = OQ_ERR_INIT;`. */
#define OQ_ERR_INIT {OQ_OK, {0}}

/* Short, stable name of a status, as the table below says (also the "status" of the tool's
 * error.json); "unknown status" for a value not in it. Never NULL.
 *   OQ_OK               "ok"
 *   OQ_ERR_INVALID_ARG  "invalid argument"
 *   OQ_ERR_IO           "i/o error"
 *   OQ_ERR_FORMAT       "malformed input"
 *   OQ_ERR_SHAPE        "shape mismatch"
 *   OQ_ERR_MASK         "mask contract violated"
 *   OQ_ERR_NOMEM        "out of memory"
 *   OQ_ERR_UNSUPPORTED  "unsupported"
 *   OQ_ERR_RUNTIME      "runtime error"
 *   OQ_ERR_NOT_FOUND    "not found"
 *   OQ_ERR_CHECK_FAILED "check failed"
 *   OQ_ERR_OUTPUT       "cannot write output" */
OQ_API const char *oq_status_str(oq_status s);
/* The schema of a refusal's document: the tool's --json refusal and a run's error.json, {"schema",
 * "command", "status" (oq_status_str), "error" (the message), "exit_code"}. */
#define OQ_ERROR_SCHEMA "ortqual-error/1"
/* The exit status of a command refused with status s, the one table the tool and error.json
 * use: 3 when the runtime or the system failed (OQ_ERR_RUNTIME, OQ_ERR_OUTPUT, OQ_ERR_NOMEM),
 * else 2 (bad usage or input: arguments, files read, shapes, masks). Never 0, OQ_OK included:
 * a refusal is not a success. */
OQ_API int oq_status_exit_code(oq_status s);
/* Every enum's name getter (oq_verdict_name, oq_repr_name, oq_dtype_name...) keeps this rule: a
 * value outside its enum names "unknown" (never NULL, never an abort): a stray cast in a caller
 * must not read past a table. oq_graph_opt_level says OQ_GRAPH_OPT_LEVEL_UNKNOWN. */

/* Fill `err` (if non-NULL) with status and a printf-style message; returns `s`
 * so callers can write `return oq_err_set(err, OQ_ERR_IO, "...", ...)`. The
 * message is one line: a control character in it (a newline in a path or a
 * tensor name, an escape sequence) is written as \xNN (a C1 control, UTF-8
 * "\xC2\x9B" say, as \x9b); other bytes are kept. oq_err_prefix does the same. */
OQ_API oq_status oq_err_set(oq_err *err, oq_status s, const char *fmt, ...)
           __attribute__((format(printf, 3, 4)));

/* `s` as a message shows it: each control character as \xNN, other bytes kept; for text made
 * for people from names that come from outside (a folder's, a file's, a tensor's), so that an
 * escape sequence in one does not reach the terminal nor a newline forge a line. Malloc'ed;
 * NULL for NULL or when out of memory. */
OQ_API char *oq_text_printable(const char *s);
/* Whether `s` holds a control character oq_text_printable would show as \xNN (0 for NULL). */
OQ_API int oq_text_has_control(const char *s);

/* The decimal real that `s` starts with, as people write one: [+-]DIGITS[.DIGITS][e[+-]DIGITS]
 * (or .DIGITS), into *v; returns where it ends, NULL when `s` starts with none. strtod's hex
 * ("0x10"), leading spaces, "inf" and "nan" are typos in an option, not numbers: every real
 * an option or a spec takes is read by this one function. A value beyond double's range is
 * +-HUGE_VAL (the caller's finite check refuses it). */
OQ_API const char *oq_text_real(const char *s, double *v);

/* Prefix an existing message with more context ("file.npz: " + old message). */
OQ_API oq_status oq_err_prefix(oq_err *err, const char *fmt, ...)
           __attribute__((format(printf, 2, 3)));

/* The library's texts name the API's fields (opts.seq_axes), never a tool's options. Its
 * messages (an oq_err's, validate's progress lines) and the texts it keeps in its results and
 * writes into documents itself (a bench row's error, a gate reason, a convert step, advice,
 * report.html) it rewords with this function, so that a tool whose users set options gives its
 * own words (`ortqual` passes the one that says its options). fn is given the library's own
 * words only, never what came from outside (a path, a tensor's, a folder's or a node's name, a
 * log's line): a message gives it the runs of its format between the values (a '%' its
 * rewording holds stays text), and a value that is the library's own words ("mask_name '") is
 * given alone, so a path that holds such words is never reworded.
 * fn returns `text`, or its rewording written into buf (n bytes, NUL-terminated); NULL (the
 * default): the library's words. Process-wide: set it once, before the first other call; a
 * validation worker process (oq_validate_worker) sets it back to NULL, and the run that reads
 * its result words what the worker worded (the placement note, the dispatch advice, the teeth
 * rerun's advice) with this function, so that an isolated run says what an in-process one says. */
typedef const char *(*oq_terms_fn)(const char *text, char *buf, size_t n);
OQ_API void oq_set_terms(oq_terms_fn fn);

/* Programmer errors (broken invariants, not bad input) abort with file/line. */
#define OQ_ASSERT(x)                                                             \
    do {                                                                         \
        if (!(x)) oq_abort_(__FILE__, __LINE__, #x);                             \
    } while (0)
OQ_API void oq_abort_(const char *file, int line, const char *expr) __attribute__((noreturn));

#ifdef __cplusplus
}
#endif
#endif
