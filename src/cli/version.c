/* ortqual --version [--ort-lib PATH]: the tool's version and the ORT it loads. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ortqual_commit.h" /* ORTQUAL_VERSION_BUILD (gen/, made at every build) */

static const char head[] =
    "usage: ortqual --version [--ort-lib PATH]\n"
    "\n"
    "Print the ortqual version (the release and the commit it was built from, as `git\n"
    "describe --always --dirty` said at configure time, or \"unknown commit\" outside a git\n"
    "checkout) and the ONNX Runtime it loads (version, C API version, library path), or\n"
    "why none could be loaded: then, with --ort-lib, exit 3.\n";

static const char foot[] = "\nexample: ortqual --version --ort-lib /opt/onnxruntime/lib/libonnxruntime.so\n";

int oq_cli_version(int argc, char **argv)
{
    struct oq_cli_runtime cr = {0};
    const oq_opt opts[] = {
        OQ_OPT_GROUP("options:"),
        OQ_OPT_CALLBACK("ort-lib", "PATH", oq_cli_runtime_string, &cr, OQ_CLI_ORT_LIB_HELP),
        OQ_OPT_END};
    const oq_cli_command c = {"--version", head, foot, opts};
    int rc = oq_cli_parse(&c, argc, argv, NULL);
    if (rc) return rc > 0 ? OQ_EXIT_OK : OQ_EXIT_USAGE;
    printf("ortqual %s\n", ORTQUAL_VERSION_BUILD); /* "0.1.0 (commit 5a76c8aa-dirty)": the build, not only the release */
    oq_err err = {0};
    oq_runtime *rt = NULL;
    if (oq_runtime_load(cr.ort_lib, &rt, &err) != OQ_OK) {
        oq_cli_load_failed(cr.ort_lib, &err);
        printf("ONNX Runtime: not loaded (%s)\n", err.msg);
        /* the library asked for is unusable: a deployment check must not pass. Without
         * --ort-lib the tool's own version is still the answer asked for. */
        if (cr.ort_lib) return OQ_EXIT_RUNTIME;
    } else {
        printf("ONNX Runtime %s (C API %d) %s\n", oq_runtime_version(rt), oq_runtime_api_version(rt),
               oq_runtime_lib_path(rt));
        oq_runtime_free(rt);
    }
    return OQ_EXIT_OK;
}
