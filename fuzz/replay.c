/* A main for the harnesses where libFuzzer is not linked (gcc builds): runs
 * LLVMFuzzerTestOneInput once on each file named, and on each file of each
 * directory named, so the seed and regression files replay under ASan/UBSan. */
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "ortqual/fileio.h"

static int run_file(const char *path)
{
    oq_err err = {0};
    unsigned char *buf = NULL;
    size_t n = 0;
    if (oq_read_file(path, &buf, &n, &err) != OQ_OK) {
        fprintf(stderr, "replay: %s\n", err.msg);
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
