/* ortqual --version [--ort-lib PATH]: the tool's version and the ORT it loads. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void version_help(FILE *fp)
{
    fprintf(fp,
            "usage: ortqual --version [--ort-lib PATH]\n"
            "\n"
            "Print the ortqual version and the ONNX Runtime it loads (version, C API version,\n"
            "library path), or why none could be loaded.\n"
            "\n"
            "  --ort-lib PATH        libonnxruntime.so to load (default: $ORTQUAL_ORT_LIB, else\n"
            "                        the copy bundled beside ortqual)\n"
            "\n"
            "example: ortqual --version --ort-lib /opt/onnxruntime/lib/libonnxruntime.so\n");
}

int oq_cli_version(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"ort-lib", required_argument, NULL, OQ_CLI_OPT_ORT_LIB},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct oq_cli_runtime cr = {0};
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        if (c == 'h') {
            version_help(stdout);
            return OQ_EXIT_OK;
        }
        if (c == '?' || oq_cli_runtime_opt(&cr, c, optarg) <= 0) {
            fprintf(stderr, "ortqual: --version: unknown option '%s'\n", argv[optind - 1]);
            return OQ_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ortqual: --version: unexpected argument '%s'\n", argv[optind]);
        return OQ_EXIT_USAGE;
    }
    printf("ortqual %s\n", ORTQUAL_VERSION);
    oq_err err = {0};
    oq_runtime *rt = NULL;
    if (oq_runtime_load(cr.ort_lib, &rt, &err) != OQ_OK) {
        printf("ONNX Runtime: not loaded (%s)\n", err.msg);
    } else {
        printf("ONNX Runtime %s (C API %d) %s\n", oq_runtime_version(rt), oq_runtime_api_version(rt),
               oq_runtime_lib_path(rt));
        oq_runtime_free(rt);
    }
    return OQ_EXIT_OK;
}
