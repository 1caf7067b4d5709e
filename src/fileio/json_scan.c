/* A summary.json read without its batch records ever meeting in memory: jansson has no
 * streaming parser, so this walks the text once, keeps everything but the record arrays as
 * text (parsed by jansson at the end) and hands each record to a callback, parsed alone. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/core-impl.h"
#include "fileio/fileio-impl.h"
#include "ortqual/fileio.h"

#define SCAN_DEPTH 64  /* deeper than any summary: a hostile file is refused, never overflows */
#define KEY_MAX 16     /* the keys matched are shorter; a longer key is never one of them */

typedef struct frame {
    char type;          /* '{' or '[' */
    int want_key;       /* an object: the next string is a key */
    char key[KEY_MAX];  /* an object: the key of the value being read */
    long index;         /* an array: the element being read */
} frame;

typedef struct scan {
    FILE *in;
    const char *name;
    long line;
    oq_dynbuf skel;     /* the document without the records */
    oq_dynbuf rec;      /* the record being read */
    frame st[SCAN_DEPTH];
    int depth;
    unsigned flags;     /* OQ_JSON_SCAN_* */
    oq_json_record_fn fn;
    void *ctx;
    oq_err *err;
} scan;

static int next(scan *s)
{
    int c = getc_unlocked(s->in);
    if (c == '\n') s->line++;
    return c;
}

static oq_status bad(scan *s, const char *why)
{
    return oq_err_set(s->err, OQ_ERR_FORMAT, "%s:%ld: not valid JSON: %s", s->name, s->line, why);
}

static oq_status nomem(scan *s) { return oq_err_set(s->err, OQ_ERR_NOMEM, "%s: out of memory", s->name); }

/* A string's rest after its opening quote, copied to `out` (NULL: skipped; and its first
 * KEY_MAX-1 bytes to key when non-NULL; a longer key is cut to "" so it never matches). */
static oq_status string_rest(scan *s, oq_dynbuf *out, char *key)
{
    size_t k = 0;
    for (int c, esc = 0;;) {
        if ((c = next(s)) == EOF) return bad(s, "unterminated string");
        if (out && oq_dynbuf_addc(out, (char)c)) return nomem(s);
        if (!esc && c == '"') break;
        esc = !esc && c == '\\';
        if (key && k < KEY_MAX) key[k++] = (char)c;
    }
    if (key) key[k < KEY_MAX ? k : 0] = '\0';
    return OQ_OK;
}

#define NOT_RECORDS (-100)

/* Where the array opening now is: -1 the top-level "batches", K configs[K].batches,
 * OQ_JSON_PLAN_BATCHES plan.description.batches and OQ_JSON_SHARD_BATCHES shard.batches (when
 * asked for), else NOT_RECORDS. */
static long records_of(const scan *s)
{
    const frame *f = &s->st[s->depth - 1];
    if (f->type != '{' || strcmp(f->key, "batches")) return NOT_RECORDS;
    if (s->depth == 1) return -1;
    if (s->depth == 2 && (s->flags & OQ_JSON_SCAN_SHARD_BATCHES) && !strcmp(s->st[0].key, "shard"))
        return OQ_JSON_SHARD_BATCHES;
    if (s->depth == 3 && !strcmp(s->st[0].key, "configs") && s->st[1].type == '[') return s->st[1].index;
    if (s->depth == 3 && (s->flags & OQ_JSON_SCAN_PLAN_BATCHES) && !strcmp(s->st[0].key, "plan") &&
        s->st[1].type == '{' && !strcmp(s->st[1].key, "description"))
        return OQ_JSON_PLAN_BATCHES;
    return NOT_RECORDS;
}

/* One record's text, to its end at depth 0; *last: the array's ']' ended it; `first`: an
 * empty one is the empty array. */
static oq_status record(scan *s, long which, int first, int *last)
{
    long line0 = s->line; /* the record's text starts on this line of the file */
    oq_dynbuf_reset(&s->rec);
    int skip = (which >= 0 && (s->flags & OQ_JSON_SCAN_RUN_BATCHES_ONLY)) || which == OQ_JSON_SHARD_BATCHES;
    int depth = 0, c;
    oq_dynbuf *out = skip ? NULL : &s->rec;
    int empty = 1;
    for (;;) {
        if ((c = next(s)) == EOF) return bad(s, "unterminated array");
        if (c == '"') {
            empty = 0;
            oq_status st = out && oq_dynbuf_add(out, "\"") ? nomem(s) : string_rest(s, out, NULL);
            if (st) return st;
            continue;
        }
        if (depth == 0 && (c == ',' || c == ']')) break;
        depth += (c == '{' || c == '[') - (c == '}' || c == ']');
        if (depth < 0) return bad(s, "unbalanced brackets");
        empty = empty && strchr(" \t\r\n", c);
        if (out && oq_dynbuf_addc(out, (char)c)) return nomem(s);
    }
    *last = c == ']';
    if (empty) return *last && first ? OQ_OK : bad(s, "an empty array element"); /* [] */
    if (skip) return OQ_OK;
    json_error_t je; /* a syntax error's line is the file's, not the record's */
    json_t *j = json_loadb(s->rec.buf, s->rec.len, 0, &je);
    if (!j)
        return oq_err_set(s->err, OQ_ERR_FORMAT, "%s:%ld: not valid JSON: %s", s->name,
                          line0 + (je.line > 0 ? je.line - 1 : 0), je.text);
    oq_status st = s->fn(s->ctx, which, j, s->err);
    json_decref(j);
    return st;
}

static oq_status records(scan *s, long which)
{
    long line0 = s->line;
    oq_status st = oq_dynbuf_add(&s->skel, "[]") ? nomem(s) : OQ_OK;
    for (int last = 0, first = 1; !st && !last; first = 0) st = record(s, which, first, &last);
    /* the lines the records took stay in the skeleton: its syntax errors name the file's lines */
    for (long l = line0; !st && l < s->line; l++) st = oq_dynbuf_addc(&s->skel, '\n') ? nomem(s) : OQ_OK;
    return st;
}

static oq_status open_container(scan *s, char c)
{
    long which = c == '[' && s->depth ? records_of(s) : NOT_RECORDS;
    if (which != NOT_RECORDS) return records(s, which);
    if (s->depth == SCAN_DEPTH) return bad(s, "nested too deeply");
    s->st[s->depth++] = (frame){.type = c, .want_key = c == '{'};
    return oq_dynbuf_addc(&s->skel, c) ? nomem(s) : OQ_OK;
}

/* A structural character outside strings: the frames follow it. */
static oq_status structural(scan *s, char c)
{
    frame *f = s->depth ? &s->st[s->depth - 1] : NULL;
    if (c == '{' || c == '[') return open_container(s, c);
    if (c == '}' || c == ']') {
        if (!f || f->type != (c == '}' ? '{' : '[')) return bad(s, "unbalanced brackets");
        s->depth--;
    } else if (c == ',' && f) {
        f->want_key = f->type == '{';
        f->index++;
    }
    return oq_dynbuf_addc(&s->skel, c) ? nomem(s) : OQ_OK;
}

static oq_status walk(scan *s)
{
    oq_status st = OQ_OK;
    for (int c; !st && (c = next(s)) != EOF;) {
        frame *f = s->depth ? &s->st[s->depth - 1] : NULL;
        if (c == '"') {
            int is_key = f && f->type == '{' && f->want_key;
            if (is_key) f->want_key = 0;
            st = oq_dynbuf_add(&s->skel, "\"") ? nomem(s) : string_rest(s, &s->skel, is_key ? f->key : NULL);
        } else if (strchr("{}[],", c)) {
            st = structural(s, (char)c);
        } else if (!strchr(" \t\r", c)) { /* newlines kept: the skeleton's lines are the file's */
            st = oq_dynbuf_addc(&s->skel, (char)c) ? nomem(s) : OQ_OK;
        }
    }
    if (!st && ferror(s->in)) st = oq_err_set(s->err, OQ_ERR_IO, "%s: read error", s->name);
    return st;
}

json_t *oq_json_scan_fp(FILE *in, const char *name, unsigned flags, oq_json_record_fn fn, void *ctx, oq_err *err)
{
    scan s = {.in = in, .name = name, .line = 1, .flags = flags, .fn = fn, .ctx = ctx, .err = err};
    oq_status st = walk(&s);
    if (!st && s.depth) st = bad(&s, "unterminated document");
    json_t *doc = st ? NULL : oq_json_parse(s.skel.buf ? s.skel.buf : "", s.skel.len, name, err);
    oq_dynbuf_clear(&s.skel);
    oq_dynbuf_clear(&s.rec);
    return doc;
}

json_t *oq_json_scan_file(const char *path, unsigned flags, oq_json_record_fn fn, void *ctx, oq_err *err)
{
    struct stat sb; /* there but not a file: a folder read as "read error", a FIFO blocked */
    if (stat(path, &sb) == 0 && oq_check_regular_file(path, NULL, err)) return NULL;
    FILE *in = fopen(path, "r");
    if (!in) {
        oq_err_set(err, OQ_ERR_NOT_FOUND, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    json_t *doc = oq_json_scan_fp(in, path, flags, fn, ctx, err);
    fclose(in);
    return doc;
}
