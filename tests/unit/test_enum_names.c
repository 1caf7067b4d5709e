/* Every enum's name getter on a value outside its enum: "unknown" (status.h's rule), no abort, no
 * crash and no read past a table, whatever a caller's cast hands it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ortqual/advice.h"
#include "ortqual/bench.h"
#include "ortqual/config.h"
#include "ortqual/dispatch.h"
#include "ortqual/events.h"
#include "ortqual/evidence.h"
#include "ortqual/export.h"
#include "ortqual/gate.h"
#include "ortqual/inspect.h"
#include "ortqual/mask.h"
#include "ortqual/placement.h"
#include "ortqual/runtime.h"
#include "ortqual/shard.h"
#include "ortqual/tensor.h"
#include "ortqual/validate.h"

/* Below and far above every enum. */
static const int OUTSIDE[] = {-1, 1000000};

#define ASSERT_UNKNOWN(call_of_v)                                                \
    for (size_t i = 0; i < sizeof OUTSIDE / sizeof *OUTSIDE; i++) {              \
        int v = OUTSIDE[i];                                                      \
        const char *got = call_of_v;                                             \
        assert_non_null(got);                                                    \
        if (strcmp(got, "unknown")) fail_msg("%s(%d) = \"%s\"", #call_of_v, v, got); \
    }

static void test_outside_names_unknown(void **state)
{
    (void)state;
    ASSERT_UNKNOWN(oq_attn_mask_kind_name((oq_attn_mask_kind)v));
    ASSERT_UNKNOWN(oq_io_binding_name((oq_io_binding)v));
    ASSERT_UNKNOWN(oq_bench_status_name((oq_bench_status)v));
    ASSERT_UNKNOWN(oq_repr_name((oq_repr)v));
    ASSERT_UNKNOWN(oq_precision_name((oq_precision)v));
    ASSERT_UNKNOWN(oq_kernel_name((oq_kernel)v));
    ASSERT_UNKNOWN(oq_sdpa_kernel_name((oq_sdpa_kernel)v));
    ASSERT_UNKNOWN(oq_dispatch_failure_kind_name((oq_dispatch_failure_kind)v));
    ASSERT_UNKNOWN(oq_length_policy_name((oq_length_policy)v));
    ASSERT_UNKNOWN(oq_lib_group_name((oq_lib_group)v));
    ASSERT_UNKNOWN(oq_attn_format_name((oq_attn_format)v));
    ASSERT_UNKNOWN(oq_mask_form_name((oq_mask_form)v));
    ASSERT_UNKNOWN(oq_runner_name((oq_runner)v));
    ASSERT_UNKNOWN(oq_elem_type_name((int32_t)v));
    ASSERT_UNKNOWN(oq_mask_polarity_name((oq_mask_polarity)v));
    ASSERT_UNKNOWN(oq_node_place_name((oq_node_place)v));
    ASSERT_UNKNOWN(oq_hw_type_name((oq_hw_type)v));
    ASSERT_UNKNOWN(oq_shard_by_name((oq_shard_by)v));
    ASSERT_UNKNOWN(oq_dtype_name((oq_dtype)v));
    ASSERT_UNKNOWN(oq_verdict_name((oq_verdict)v));
    ASSERT_UNKNOWN(oq_run_verdict_name((oq_run_verdict)v));
    ASSERT_UNKNOWN(oq_shard_state_name((oq_shard_state)v));
}

/* The valid "other"/"none"/"undefined" values keep their own names: only strays are unknown. */
static void test_catch_all_values_keep_names(void **state)
{
    (void)state;
    assert_string_equal(oq_lib_group_name(OQ_LIB_OTHER), "other");
    assert_string_equal(oq_hw_type_name(OQ_HW_OTHER), "other");
    assert_string_equal(oq_runner_name(OQ_RUNNER_NONE), "none");
    assert_string_equal(oq_dtype_name(OQ_DTYPE_UNDEFINED), "undefined");
    assert_string_equal(oq_io_binding_name(OQ_IO_AUTO), "auto");
    assert_string_equal(oq_bench_status_name(OQ_BENCH_FAILED), "failed");
    assert_string_equal(oq_dispatch_failure_kind_name(OQ_DISPATCH_FAILURE_TEXT), "text");
    assert_string_equal(oq_sdpa_kernel_name(OQ_SDPA_UNKNOWN), "UNKNOWN");
}

static void test_outside_graph_opt_level(void **state)
{
    (void)state;
    assert_int_equal(oq_graph_opt_level((oq_graph_opt)-1), OQ_GRAPH_OPT_LEVEL_UNKNOWN);
    assert_int_equal(oq_graph_opt_level((oq_graph_opt)1000000), OQ_GRAPH_OPT_LEVEL_UNKNOWN);
    assert_int_equal(oq_graph_opt_level(OQ_GRAPH_OPT_ALL), 99);
    /* The kernel's other getters index the same table. */
    assert_null(oq_kernel_ort_name((oq_kernel)1000000));
    assert_int_equal(oq_kernel_sdpa_mask((oq_kernel)-1), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_outside_names_unknown),
        cmocka_unit_test(test_catch_all_values_keep_names),
        cmocka_unit_test(test_outside_graph_opt_level),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
