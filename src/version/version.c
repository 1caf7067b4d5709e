/* The release and the ABI's version, given by CMakeLists.txt to this file alone, and the build's
 * commit (gen/ortqual_commit.h, made at every build). */
#include "ortqual/version.h"
#include "ortqual_commit.h"
#include "version/version-impl.h"

const char *oq_version(void) { return ORTQUAL_VERSION; }
const char *oq_build_version(void) { return ORTQUAL_VERSION_BUILD; }
int oq_abi_version(void) { return ORTQUAL_SOVERSION; }
