#include <stdio.h>

#include "cli/cli.h"

int oq_cli_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("ortqual %s\n", ORTQUAL_VERSION);
    return OQ_EXIT_OK;
}
