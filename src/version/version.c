/* The release and the ABI's version, given by CMakeLists.txt to this file alone. */
#include "ortqual/version.h"

const char *oq_version(void) { return ORTQUAL_VERSION; }
int oq_abi_version(void) { return ORTQUAL_SOVERSION; }
