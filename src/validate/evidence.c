/* What shaped a result, recorded beside it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/core-impl.h"
#include "evidence/evidence-impl.h"
#include "ortqual/runtime.h"
#include "runtime/runtime-impl.h"
#include "runtime/sessioncfg-impl.h"
#include "validate/validate-impl.h"
#include "version/version-impl.h"

/* The parent loads the core library only: execution-provider libraries are loaded by the
 * workers (an EP may crash on load), which record their own devices and libraries. The library
 * is the one mapped, named by its bytes when it was first asked (check_ort_libs, before the
 * workers); one replaced before that is not named, and `warnings` says so. */
static json_t *runtime_evidence(const oq_validate_opts *o, json_t *warnings)
{
    oq_runtime *rt;
    oq_err e = {0};
    if (oq_runtime_load(o->ort_lib, &rt, &e)) return json_pack("{s:o}", "error", oq_json_text(e.msg));
    char sha[65], why[OQ_ERR_MSG_MAX];
    if (!oq_runtime_lib_sha256(rt, sha, why, sizeof why)) json_array_append_new(warnings, oq_json_text(why));
    json_t *j = json_pack("{s:s, s:o, s:o, s:i, s:s}", "version", oq_runtime_version(rt), "library",
                          oq_json_text(oq_runtime_lib_path(rt)), "library_sha256", *sha ? json_string(sha) : json_null(),
                          "api_version", oq_runtime_api_version(rt), "build_info", oq_runtime_build_info(rt));
    oq_runtime_free(rt);
    return j;
}

static json_t *env_evidence(void)
{
    oq_kv *kv = NULL;
    size_t n = 0;
    json_t *j = json_object();
    if (oq_ort_env_capture(&kv, &n, NULL) != OQ_OK) return j;
    for (size_t i = 0; i < n; i++)
        json_object_set_new(j, kv[i].key, kv[i].value ? oq_json_text(kv[i].value) : json_null());
    oq_kvs_free(kv, n);
    return j;
}

char *oq_validate_evidence(const oq_validate_opts *o)
{
    struct utsname u;
    char host[256] = "", cwd[4096] = "";
    uname(&u);
    gethostname(host, sizeof host - 1);
    if (!getcwd(cwd, sizeof cwd)) cwd[0] = 0;
    json_t *argv = json_array();
    /* the command line and folder for people: a path that is not UTF-8 shown with U+FFFD */
    for (int i = 0; i < o->argc; i++) json_array_append_new(argv, oq_json_text(o->argv[i]));
    json_t *system = oq_evidence_collect_json(NULL, NULL);
    json_t *ort = runtime_evidence(o, json_object_get(system, "warnings"));
    /* entries passed to a newer ORT unchecked, beside the evidence's own warnings */
    oq_session_config_warn(json_string_value(json_object_get(ort, "version")), o->n_session_configs,
                           o->session_config_keys, o->session_config_values, json_object_get(system, "warnings"));
    json_t *j = json_pack("{s:s, s:o, s:o, s:{s:s, s:s, s:s, s:s}, s:o, s:o, s:o}", "tool_version", oq_build_version(),
                          "onnxruntime", ort, "ort_environment", env_evidence(), "host", "name",
                          host, "system", u.sysname, "release", u.release, "machine", u.machine, "command", argv,
                          "cwd", oq_json_text(cwd), "system", system);
    char *text = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    return text;
}
