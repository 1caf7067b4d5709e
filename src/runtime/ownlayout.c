/* Linked into ortqual's own programs only (the tool, its tests and benchmarks), never into
 * libortqual: they may find ONNX Runtime in the project's layout around their executable, which
 * in any other program's neighbourhood could be a library planted by someone else. */
#include "runtime/runtime-impl.h"

__attribute__((constructor)) static void own_layout(void)
{
    oq_runtime_own_layout();
}
