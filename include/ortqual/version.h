/* libortqual's own version, as the library a program loaded says it: the release ("0.1.0",
 * what `ortqual --version`, ortqual.pc and the CMake package say) and the ABI's version N, the
 * libortqual.so.N the program was linked against (docs/design.md, "ABI and versioning"). Both
 * come from CMakeLists.txt, their one place. A program built against these headers loads only a
 * library of its own N (the loader reads the SONAME), so oq_abi_version() is for its log, and a
 * release within one N may be newer than the headers it was compiled with:
 *
 *     fprintf(log, "qualified by libortqual %s (ABI %d)\n", oq_version(), oq_abi_version());
 */
#ifndef ORTQUAL_VERSION_H
#define ORTQUAL_VERSION_H

#include "ortqual/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The release, "MAJOR.MINOR.PATCH"; never NULL. */
OQ_API const char *oq_version(void);
/* The ABI's version: N of libortqual.so.N. */
OQ_API int oq_abi_version(void);

#ifdef __cplusplus
}
#endif
#endif
