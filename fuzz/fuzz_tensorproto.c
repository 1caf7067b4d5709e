/* libFuzzer harness: onnx.TensorProto bytes (oq_tensorproto_parse), re-serialized when read. */
#include "fuzz.h"
#include "ortqual/tensorproto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    oq_err err = {0};
    oq_tensor *t = NULL;
    if (oq_tensorproto_parse(data, size, "fuzz.pb", &t, &err) == OQ_OK) {
        unsigned char *buf = NULL;
        size_t n = 0;
        if (oq_tensorproto_serialize(t, &buf, &n, &err) == OQ_OK) free(buf);
        oq_tensor_free(t);
    }
    return 0;
}
