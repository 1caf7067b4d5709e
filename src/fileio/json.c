/* JSON documents written as files (one writer for summaries, plans and verdicts) and read
 * from text; outside text (paths, messages) made UTF-8 for them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "core/core-impl.h"
#include "fileio/fileio-impl.h"
#include "ortqual/fileio.h"

/* ---- reals that read back ------------------------------------------------------------- */

char *oq_json_real_form(char *t)
{
    char *e = strchr(t, 'e');
    if (!e && !strchr(t, '.')) strcat(t, ".0");
    if (e) {
        char *from = e + 1, *to = e + 1;
        if (*from == '+') from++;
        else if (*from == '-') from++, to++;
        while (*from == '0' && from[1]) from++;
        memmove(to, from, strlen(from) + 1);
    }
    return t;
}

char *oq_json_real(double v, char *buf, size_t n)
{
    return oq_json_real_form(oq_real_str(v, 10, buf, n));
}

/* The length of the token of JSON text at r: a string with its quotes and escapes, a number,
 * else one character. */
static size_t token_len(const char *r)
{
    size_t k = 1;
    if (*r == '"') {
        while (r[k] && r[k] != '"') k += r[k] == '\\' && r[k + 1] ? 2 : 1;
        return k + (r[k] != '\0');
    }
    return *r == '-' || (*r >= '0' && *r <= '9') ? strspn(r, "0123456789+-.eE") : k;
}

/* The dump `text`, made at 17 digits, with each real as oq_json_real writes it (a form at 10
 * digits can be a character longer: "1.234567891e10" for "12345678910.0"); strings, integers
 * and the rest as they are. NULL when out of memory. */
static char *shorten_reals(const char *text)
{
    oq_dynbuf b = {0};
    int ok = 1;
    for (const char *r = text; ok && *r;) {
        size_t k = token_len(r);
        int real = (*r == '-' || (*r >= '0' && *r <= '9')) && k < 40 &&
                   (memchr(r, '.', k) || memchr(r, 'e', k) || memchr(r, 'E', k));
        char t[48];
        ok = !(real ? oq_dynbuf_add(&b, oq_json_real(strtod(r, NULL), t, sizeof t)) : oq_dynbuf_addn(&b, r, k));
        r += k;
    }
    char *out = ok ? oq_dynbuf_take(&b, NULL) : NULL;
    oq_dynbuf_clear(&b);
    return out;
}

char *oq_json_dumps(const json_t *j, size_t flags)
{
    char *text = j ? json_dumps(j, (flags & ~(size_t)JSON_REAL_PRECISION(0x1f)) | JSON_REAL_PRECISION(17)) : NULL;
    char *out = text ? shorten_reals(text) : NULL;
    free(text);
    return out;
}

/* ---- files ------------------------------------------------------------------------------ */

static oq_status json_write(const char *path, const json_t *j, size_t flags, int no_sync, oq_err *err)
{
    char *text = oq_json_dumps(j, flags);
    if (!text) return oq_err_set(err, OQ_ERR_NOMEM, "%s: cannot serialize JSON", path);
    size_t n = strlen(text);
    text[n] = '\n'; /* json_dumps leaves room for the terminator; reuse it for a newline */
    oq_status st = no_sync ? oq_write_file_nosync(path, text, n + 1, err) : oq_write_file_atomic(path, text, n + 1, 1, err);
    free(text);
    return st;
}

oq_status oq_json_write_file(const char *path, const json_t *j, size_t flags, oq_err *err)
{
    return json_write(path, j, flags, 0, err);
}

oq_status oq_json_write_file_nosync(const char *path, const json_t *j, size_t flags, oq_err *err)
{
    return json_write(path, j, flags, 1, err);
}

json_t *oq_json_parse(const char *text, size_t n, const char *name, oq_err *err)
{
    json_error_t je;
    json_t *doc = json_loadb(text, n, 0, &je);
    if (!doc) oq_err_set(err, OQ_ERR_FORMAT, "%s:%d: not valid JSON: %s", name, je.line, je.text);
    return doc;
}

char *oq_text_utf8(const char *s)
{
    return s ? oq_utf8_lossy(s) : NULL;
}

json_t *oq_json_text(const char *s)
{
    json_t *j = json_string(s ? s : "");
    if (j || !s) return j;
    char *b = oq_utf8_lossy(s);
    j = b ? json_string(b) : NULL;
    free(b);
    return j;
}

/* ---- paths, byte for byte ---------------------------------------------------------------- */

/* "<key>_hex" into buf; 0 when the key does not fit (keys are short names of ours). */
static int hex_key(char *buf, size_t n, const char *key)
{
    return snprintf(buf, n, "%s_hex", key) < (int)n;
}

int oq_json_set_path(json_t *obj, const char *key, const char *path)
{
    if (!path) return 1;
    json_t *exact = json_string(path);
    if (exact) return json_object_set_new(obj, key, exact) == 0;
    char hk[64];
    size_t n = strlen(path);
    char *hex = malloc(2 * n + 1);
    for (size_t i = 0; hex && i < n; i++) snprintf(hex + 2 * i, 3, "%02x", (unsigned char)path[i]);
    if (hex) hex[2 * n] = '\0';
    int ok = hex && hex_key(hk, sizeof hk, key) && json_object_set_new(obj, key, oq_json_text(path)) == 0 &&
             json_object_set_new(obj, hk, json_string(hex)) == 0;
    free(hex);
    return ok;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The bytes of a "<key>_hex" value; NULL when it is not even-length hex of bytes other than 0,
 * or when out of memory, which also clears *ok. */
static char *unhex(const char *hex, int *ok)
{
    size_t n = strlen(hex);
    char *b = n % 2 ? NULL : malloc(n / 2 + 1);
    if (!b && n % 2 == 0) *ok = 0;
    for (size_t i = 0; b && i < n / 2; i++) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0 || !(hi | lo)) {
            free(b);
            return NULL;
        }
        b[i] = (char)(hi << 4 | lo);
    }
    if (b) b[n / 2] = '\0';
    return b;
}

char *oq_json_path_dup(const json_t *obj, const char *key, int *ok)
{
    char hk[64];
    const char *hex = hex_key(hk, sizeof hk, key) ? json_string_value(json_object_get(obj, hk)) : NULL;
    const char *s = json_string_value(json_object_get(obj, key));
    if (!s) return NULL;
    char *p = hex ? unhex(hex, ok) : strdup(s);
    if (!p && !hex) *ok = 0; /* (bad hex: as if there were no path, which its reader refuses) */
    return p;
}

/* ---- JSON lines: one compact document per line (records streamed between processes) ---- */

int oq_jsonl_put(FILE *f, json_t *j, size_t flags)
{
    char *text = oq_json_dumps(j, flags & ~(size_t)JSON_INDENT(0x1f));
    int ok = text && fputs(text, f) != EOF && fputc('\n', f) != EOF;
    free(text);
    json_decref(j);
    return ok;
}

oq_status oq_jsonl_each(const char *path, oq_jsonl_fn fn, void *ctx, oq_err *err)
{
    FILE *in = fopen(path, "r");
    if (!in) return oq_err_set(err, OQ_ERR_IO, "%s: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0, n = 0;
    oq_status st = OQ_OK;
    for (ssize_t len; !st && (len = getline(&line, &cap, in)) > 0;) {
        json_error_t je;
        json_t *j = json_loadb(line, (size_t)len, 0, &je);
        st = j ? fn(ctx, j, n, err) : oq_err_set(err, OQ_ERR_FORMAT, "%s:%zu: not valid JSON: %s", path, n + 1, je.text);
        n++;
        json_decref(j);
    }
    if (!st && ferror(in)) st = oq_err_set(err, OQ_ERR_IO, "%s: read error", path);
    free(line);
    fclose(in);
    return st;
}
