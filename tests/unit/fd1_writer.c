/* A separate shared object that writes like ONNX Runtime does: straight to the
 * native descriptor, not through the test program's FILE* objects. The capture
 * test dlopen()s it, so nothing here is visible to stdio-level redirection in
 * the test itself. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int fdw_write(int fd, const char *buf, size_t n);
int fdw_write_str(int fd, const char *s);
int fdw_printf_line(const char *s);
int fdw_write_repeated(int fd, char c, size_t n, size_t line_every);

/* write(2) the whole buffer; 0 on success. */
int fdw_write(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

int fdw_write_str(int fd, const char *s) { return fdw_write(fd, s, strlen(s)); }

/* The module's own stdio: printf + fflush, as a C library logging would. */
int fdw_printf_line(const char *s)
{
    if (printf("%s\n", s) < 0) return -1;
    return fflush(stdout);
}

/* n bytes of `c` in ONE write(2) call, with '\n' every `line_every` bytes
 * (0: no newline at all), to show a big write cannot deadlock the capture. */
int fdw_write_repeated(int fd, char c, size_t n, size_t line_every)
{
    char *buf = malloc(n);
    if (!buf) return -1;
    for (size_t i = 0; i < n; i++)
        buf[i] = (line_every && (i + 1) % line_every == 0) ? '\n' : c;
    int rc = fdw_write(fd, buf, n);
    free(buf);
    return rc;
}
