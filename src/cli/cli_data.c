/* Data files the tool ships (the ONNX conformance set): beside an installed tool in
 * <prefix>/share/ortqual, or in the source tree the tool was built from. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "ortqual/advice.h"
#include "ortqual/fileio.h"
#include "ortqual/inspect.h"

#ifndef ORTQUAL_SOURCE_DIR
#define ORTQUAL_SOURCE_DIR ""
#endif

static char *existing_dir(const char *path)
{
    struct stat sb;
    char buf[PATH_MAX];
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode) || !realpath(path, buf)) return NULL;
    return strdup(buf);
}

char *oq_cli_data_path(const char *rel)
{
    char exe[PATH_MAX], path[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) *slash = '\0';
        snprintf(path, sizeof path, "%s/../share/ortqual/%s", exe, rel);
        char *found = existing_dir(path);
        if (found) return found;
    }
    if (!ORTQUAL_SOURCE_DIR[0]) return NULL;
    snprintf(path, sizeof path, "%s/tests/data/%s", ORTQUAL_SOURCE_DIR, rel);
    return existing_dir(path);
}

const char *oq_cli_summary_of(const char *arg, char *buf, size_t n)
{
    struct stat sb;
    if (stat(arg, &sb) != 0 || !S_ISDIR(sb.st_mode)) return arg;
    snprintf(buf, n, "%s%ssummary.json", arg, arg[0] && arg[strlen(arg) - 1] == '/' ? "" : "/");
    return buf;
}

/* A float16 or bfloat16 Attention node: such a model misses float32 tolerances by its own
 * rounding, so validate and replay judge it with fp16 ones by default. */
oq_dtype oq_cli_reduced_attention(const char *model_path, char *node, size_t n)
{
    oq_node_info *nodes = NULL;
    size_t cnt = 0;
    if (n) node[0] = '\0';
    if (oq_model_find_nodes(model_path, NULL, "Attention", &nodes, &cnt, NULL))
        return OQ_DTYPE_UNDEFINED;
    oq_attention_facts f = {0};
    for (size_t i = 0; i < cnt && f.dtype != OQ_DTYPE_FLOAT16 && f.dtype != OQ_DTYPE_BFLOAT16; i++)
        oq_attention_facts_from_node(&nodes[i], 0, &f);
    oq_dtype d = f.dtype == OQ_DTYPE_FLOAT16 || f.dtype == OQ_DTYPE_BFLOAT16 ? f.dtype : OQ_DTYPE_UNDEFINED;
    snprintf(node, n, "%s", f.node ? f.node : "?");
    oq_node_infos_free(nodes, cnt);
    return d;
}
