/* Host facts and the safety of the working directory. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "ortqual/evidence.h"
#include "status/args-impl.h"

static char *cpu_model(void)
{
    FILE *fp = fopen("/proc/cpuinfo", "r");
    char line[512];
    char *model = NULL;
    while (fp && !model && fgets(line, sizeof line, fp)) {
        if (strncmp(line, "model name", 10)) continue;
        char *colon = strchr(line, ':');
        if (!colon) continue;
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t') v++;
        v[strcspn(v, "\n")] = '\0';
        model = strdup(v);
    }
    if (fp) fclose(fp);
    return model ? model : strdup("unknown");
}

oq_status oq_host_probe(oq_host *out, oq_err *err)
{
    OQ_NEED(err, out);
    memset(out, 0, sizeof *out);
    char name[256] = "unknown";
    if (gethostname(name, sizeof name) != 0) snprintf(name, sizeof name, "unknown");
    name[sizeof name - 1] = '\0';
    struct utsname u;
    char kernel[600] = "unknown";
    if (uname(&u) == 0) snprintf(kernel, sizeof kernel, "%s %s %s", u.sysname, u.release, u.machine);
    out->hostname = strdup(name);
    out->kernel = strdup(kernel);
    out->cpu_model = cpu_model();
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    out->n_cpus = n > 0 ? (int)n : 0;
    if (!out->hostname || !out->kernel || !out->cpu_model) {
        oq_host_clear(out);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    return OQ_OK;
}

void oq_host_clear(oq_host *h)
{
    if (!h) return;
    free(h->hostname);
    free(h->kernel);
    free(h->cpu_model);
    memset(h, 0, sizeof *h);
}

oq_status oq_cwd_check(const char *dir, oq_cwd_report *out, oq_err *err)
{
    OQ_NEED(err, out);
    memset(out, 0, sizeof *out);
    if (!dir) dir = ".";
    struct stat st;
    char real[PATH_MAX];
    if (stat(dir, &st) != 0 || !realpath(dir, real))
        return oq_err_set(err, OQ_ERR_IO, "%s: cannot inspect the directory", dir);
    out->path = strdup(real);
    out->world_writable = (st.st_mode & S_IWOTH) != 0;
    out->sticky = (st.st_mode & S_ISVTX) != 0;
    /* Python imports these from sys.path, which includes the working directory
     * for `python -c`/`-m`; a child Python process would run them. */
    static const char *const hazards[] = {"sitecustomize.py", "usercustomize.py"};
    out->hazards = calloc(2, sizeof *out->hazards);
    if (!out->path || !out->hazards) {
        oq_cwd_report_clear(out);
        return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < 2; i++) {
        char p[PATH_MAX + 32];
        snprintf(p, sizeof p, "%s/%s", real, hazards[i]);
        if (access(p, F_OK) == 0 && !(out->hazards[out->n_hazards++] = strdup(hazards[i]))) {
            oq_cwd_report_clear(out);
            return oq_err_set(err, OQ_ERR_NOMEM, "out of memory");
        }
    }
    return OQ_OK;
}

void oq_cwd_report_clear(oq_cwd_report *r)
{
    if (!r) return;
    free(r->path);
    for (size_t i = 0; i < r->n_hazards; i++) free(r->hazards[i]);
    free(r->hazards);
    memset(r, 0, sizeof *r);
}
