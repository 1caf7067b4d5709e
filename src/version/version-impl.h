/* The library's build, for what it records of itself. */
#ifndef OQ_VERSION_IMPL_H
#define OQ_VERSION_IMPL_H

/* The release and the commit the library was built from: "0.1.0 (commit 5a76c8aa-dirty)", or
 * "(unknown commit)" from sources without their own .git (cmake/commit.cmake). The evidence's
 * tool_version, gate's and bench's ortqual_version and the report pages name the build by it;
 * oq_version() stays the release. */
const char *oq_build_version(void);

#endif
