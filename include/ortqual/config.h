/* Validation configurations: "<runtime>:<representation>:<precision>[:<kernel>]".
 *
 *   runtime         ref (the C reference), cpu, cuda, or the name of a plugin EP; CPU, Cuda,
 *                   CPUExecutionProvider, ... (what ORT takes for cpu and cuda) are named cpu
 *                   and cuda
 *   representation  encoder | sdpa        (the C reference's own forward pass; runtime ref only)
 *                   decomposed | attention23 | attention24   (exported by ortqual)
 *                   model                 (the user's --model file as it is)
 *   precision       fp64 (ref only) | fp32 | fp16 (attention computed in float16, public I/O fp32)
 *                   | tf32 (cuda only: float32 model, TensorFloat-32 matrix products allowed)
 *                   | bf16 (model only: a model of yours computing in bfloat16, judged at its tolerances)
 *   kernel          auto | flash | efficient | cudnn | math   (CUDA sdpa_kernel; default auto)
 *
 * Examples: ref:encoder:fp64, cpu:decomposed:fp32, cuda:attention24:fp16:flash.
 *
 * One configuration is a single word: `expected`, the outputs the user saved (e.g. from
 * PyTorch) beside the inputs, as the reference. Nothing runs for it (runtime "expected",
 * representation expected).
 */
#ifndef ORTQUAL_CONFIG_H
#define ORTQUAL_CONFIG_H

#include <stddef.h>

#include "ortqual/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum oq_repr {
    OQ_REPR_ENCODER = 0,
    OQ_REPR_SDPA,
    OQ_REPR_DECOMPOSED,
    OQ_REPR_ATTENTION23,
    OQ_REPR_ATTENTION24,
    OQ_REPR_MODEL,
    OQ_REPR_EXPECTED /* the `expected` configuration: saved outputs, nothing runs */
} oq_repr;

/* fp32 on CUDA means true float32 (use_tf32=0); tf32 allows TensorFloat-32 matrix products
 * (10-bit mantissa, judged with the fp16 tolerances), which is ORT's CUDA default. bf16 is the
 * precision of a model of yours that computes in bfloat16 (oq_model_precision_of): 8 bits of
 * mantissa, judged with bfloat16's tolerances, which fp16's are 8x tighter than. */
typedef enum oq_precision { OQ_PREC_FP64 = 0, OQ_PREC_FP32, OQ_PREC_FP16, OQ_PREC_TF32, OQ_PREC_BF16 } oq_precision;

typedef enum oq_kernel {
    OQ_KERNEL_AUTO = 0,
    OQ_KERNEL_FLASH,
    OQ_KERNEL_EFFICIENT,
    OQ_KERNEL_CUDNN,
    OQ_KERNEL_MATH
} oq_kernel;

#define OQ_CONFIG_NAME_MAX 96

typedef struct oq_config {
    char name[OQ_CONFIG_NAME_MAX]; /* canonical text, e.g. "cuda:attention24:fp16:flash" */
    char runtime[32];              /* "ref", "cpu", "cuda" or a plugin EP name */
    oq_repr repr;
    oq_precision precision;
    oq_kernel kernel;
} oq_config;

/* Parse and check one configuration; errors name the field and list the choices; a name with
 * whitespace anywhere is refused (" cpu:model:fp32" is no plugin EP " cpu"). A label,
 * "CONFIG@LABEL", names a configuration apart from another that runs the same one (a replay's
 * reference on another ONNX Runtime build: "cpu:model:fp32@reference"); the name keeps it. */
OQ_API oq_status oq_config_parse(const char *text, oq_config *out, oq_err *err);

/* One source of truth: a configuration is what oq_config_parse gives for its name. OQ_OK when
 * c's name parses to exactly c's fields (runtime, repr, precision, kernel) and is the canonical
 * spelling; else OQ_ERR_INVALID_ARG naming the field that differs ("name 'cpu:attention24:fp32'
 * does not match its fields (runtime cuda)"), or that name or runtime is not terminated within
 * its array. oq_validate_run checks each of its configurations so: to change one field of a
 * parsed configuration, parse the new name instead. */
OQ_API oq_status oq_config_check(const oq_config *c, oq_err *err);

/* The i-th configuration oq_config_parse accepts on the runtimes named above (ref, cpu, cuda;
 * a plugin EP takes what cpu takes), its kernel auto: every runtime, representation and
 * precision of the parser's own tables that it accepts, in their order, then `expected`. 1 with
 * *out filled while i is below their number, else 0 (0 for a NULL out). */
OQ_API int oq_config_known(size_t i, oq_config *out);

/* Names as the parser reads them; "unknown" for a value outside the enum. */
OQ_API const char *oq_repr_name(oq_repr r);
OQ_API const char *oq_precision_name(oq_precision p);
OQ_API const char *oq_kernel_name(oq_kernel k);

/* CUDA `sdpa_kernel` bitmask for a kernel choice (0 = let ORT choose, or a value outside oq_kernel). */
OQ_API int oq_kernel_sdpa_mask(oq_kernel k);
/* The name ORT prints in its routing line (SdpaKernel=...), NULL for auto or a value outside oq_kernel. */
OQ_API const char *oq_kernel_ort_name(oq_kernel k);

/* Non-zero for a precision below float32 (fp16, tf32, bf16): tf32 and fp16 are judged with fp16's
 * tolerances, bf16 with bfloat16's. */
OQ_API int oq_precision_is_reduced(oq_precision p);

/* Provider options a configuration implies, added to the caller's: sdpa_kernel from the
 * kernel choice, and on cuda use_tf32 from the precision (fp32 -> "0", tf32 -> "1").
 * The caller's own keys win, except that force_sdpa_kernel >= 0 (a --prove-teeth rerun)
 * replaces any sdpa_kernel. keys/values hold n entries and must have room for 2 more;
 * `buf` (16 bytes or more) keeps the sdpa_kernel text. Returns the new count (n, nothing added, when
 * c, keys, values or buf is NULL). */
OQ_API size_t oq_config_ep_options(const oq_config *c, int force_sdpa_kernel, const char **keys,
                                   const char **values, size_t n, char *buf, size_t bufn);

/* Non-zero when the configuration runs through ONNX Runtime (not the C reference, not the
 * expected outputs). These three answer 0 for a NULL configuration. */
OQ_API int oq_config_uses_ort(const oq_config *c);
/* Non-zero for the `expected` configuration. */
OQ_API int oq_config_is_expected(const oq_config *c);
/* Non-zero when it runs on an execution provider other than ORT's CPU one: the
 * configurations that take the user's provider options and print routing lines. */
OQ_API int oq_config_on_ep(const oq_config *c);

#ifdef __cplusplus
}
#endif
#endif
