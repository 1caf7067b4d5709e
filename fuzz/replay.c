/* A main for the harnesses where libFuzzer is not linked (gcc builds): runs
 * LLVMFuzzerTestOneInput once on each file named, and on each file of each
 * directory named, so the seed and regression files replay under ASan/UBSan. */
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        fprintf(stderr, "replay: %s: cannot open\n", path);
        return 1;
    }
    size_t cap = 1 << 16, n = 0, got;
    uint8_t *buf = malloc(cap), *grown;
    while (buf && (got = fread(buf + n, 1, cap - n, fp)) > 0) {
        if ((n += got) < cap) continue;
        if (!(grown = realloc(buf, cap *= 2))) free(buf);
        buf = grown;
    }
    fclose(fp);
    if (!buf) {
        fprintf(stderr, "replay: %s: out of memory\n", path);
        return 1;
    }
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

static int run_path(const char *path, int *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s: not found\n", path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) return ++*count, run_file(path);
    DIR *d = opendir(path);
    if (!d) return 1;
    int bad = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        bad |= run_path(p, count);
    }
    closedir(d);
    return bad;
}

int main(int argc, char **argv)
{
    int bad = 0, count = 0;
    for (int i = 1; i < argc; i++) bad |= run_path(argv[i], &count);
    printf("replay: %d inputs run\n", count);
    return bad || !count;
}
