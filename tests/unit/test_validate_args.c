/* oq_validate_run refuses a caller's impossible fields up front (OQ_ERR_INVALID_ARG naming the
 * field, nothing written): they used to abort the process (graph_opt), crash it (configs NULL,
 * a repr out of range) or run and be recorded as a runtime error (threads, padding, kind,
 * repeat, warmup). And it takes the output folder's lock itself: a second process's run into
 * the same folder is refused before it writes anything. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ortqual/fileio.h"
#include "ortqual/validate.h"
#define TESTUTIL_VALIDATE
#include "testutil.h"
#include "validate/validate-impl.h"

/* One impossible value set by `spoil`: refused naming it, and the folder never made. */
static void refused(void (*spoil)(oq_validate_opts *, oq_config *), const char *says)
{
    char *dir = temp_dir("vargs");
    char outdir[512];
    snprintf(outdir, sizeof outdir, "%s/out", dir);
    oq_config cfg[2];
    oq_validate_opts o;
    validate_two_configs(&o, cfg, outdir);
    o.isolate = 0;
    spoil(&o, cfg);
    oq_validate_summary *s = NULL;
    oq_err err = OQ_ERR_INIT;
    oq_status st = oq_validate_run(&o, &s, &err);
    int made = access(outdir, F_OK) == 0;
    oq_validate_summary_free(s);
    oq_remove_tree(dir);
    free(dir);
    if (made) fail_msg("%s: the output folder was made (%s)", says, err.msg);
    if (st != OQ_ERR_INVALID_ARG) fail_msg("%s: status %d (%s)", says, (int)st, err.msg);
    assert_null(s);
    if (!strstr(err.msg, says)) fail_msg("'%s' does not say '%s'", err.msg, says);
}

static void graph_opt_9(oq_validate_opts *o, oq_config *c) { (void)c; o->graph_opt = (oq_graph_opt)9; }
static void configs_null(oq_validate_opts *o, oq_config *c) { (void)c; o->configs = NULL; }
static void repr_99(oq_validate_opts *o, oq_config *c) { (void)o; c[1].repr = (oq_repr)99; }
static void precision_9(oq_validate_opts *o, oq_config *c) { (void)o; c[1].precision = (oq_precision)9; }
static void kernel_minus(oq_validate_opts *o, oq_config *c) { (void)o; c[0].kernel = (oq_kernel)-1; }
static void threads_minus_2(oq_validate_opts *o, oq_config *c) { (void)c; o->threads = -2; }
static void padding_7(oq_validate_opts *o, oq_config *c) { (void)c; o->padding = 7; }
static void kind_9(oq_validate_opts *o, oq_config *c) { (void)c; o->kind = (oq_model_kind)9; }
static void repeat_minus_1(oq_validate_opts *o, oq_config *c) { (void)c; o->repeat = -1; }
static void warmup_minus_3(oq_validate_opts *o, oq_config *c) { (void)c; o->warmup = -3; }

static void bad_enums_refused(void **state)
{
    (void)state;
    refused(graph_opt_9, "oq_validate_run: graph_opt 9 out of range 0..4");
    refused(configs_null, "oq_validate_run: configs is NULL (n_configs 2)");
    refused(repr_99, "oq_validate_run: configs[1].repr 99 out of range 0..6");
    refused(precision_9, "oq_validate_run: configs[1].precision 9 out of range 0..4");
    refused(kernel_minus, "oq_validate_run: configs[0].kernel -1 out of range 0..4");
    refused(kind_9, "oq_validate_run: kind 9 out of range 0..2");
}

static void bad_numbers_refused(void **state)
{
    (void)state;
    refused(threads_minus_2, "oq_validate_run: threads -2 out of range (at least 0)");
    refused(padding_7, "oq_validate_run: padding 7 out of range -1..2");
    refused(repeat_minus_1, "oq_validate_run: repeat -1 out of range (at least 1)");
    refused(warmup_minus_3, "oq_validate_run: warmup -3 out of range (at least 0)");
}

/* The events and mask fields: each used to be found only after the folder was made (the events
 * when the batches were drawn, an error.json written), or by an export or worker (a mask form,
 * a polarity, a NULL list). */
static void events_0(oq_validate_opts *o, oq_config *c) { (void)c; o->events.num_events = 0; }
static void batch_minus_1(oq_validate_opts *o, oq_config *c) { (void)c; o->events.batch_size = -1; }
static void features_minus_1(oq_validate_opts *o, oq_config *c) { (void)c; o->events.num_features = -1; }
static void max_len_0(oq_validate_opts *o, oq_config *c) { (void)c; o->events.max_len = 0; }
static void policy_9(oq_validate_opts *o, oq_config *c) { (void)c; o->events.policy = (oq_length_policy)9; }
static void min_len_above(oq_validate_opts *o, oq_config *c)
{
    (void)c;
    o->events.policy = OQ_LENGTH_UNIFORM;
    o->events.min_len = 80;
    o->events.max_len = 64;
}
static void fraction_1(oq_validate_opts *o, oq_config *c)
{
    (void)c;
    o->events.policy = OQ_LENGTH_FRACTION;
    o->events.fraction = 1.0;
}
static void pad_bin_minus_2(oq_validate_opts *o, oq_config *c) { (void)c; o->events.pad_bin_size = -2; }
static void mask_dtype_8(oq_validate_opts *o, oq_config *c) { (void)c; o->events.mask_dtype = (oq_dtype)8; }
static void feature_dtype_int32(oq_validate_opts *o, oq_config *c) { (void)c; o->events.feature_dtype = OQ_DTYPE_INT32; }
static void polarity_5(oq_validate_opts *o, oq_config *c) { (void)c; o->mask_polarity = (oq_mask_polarity)5; }
static void mask_form_8(oq_validate_opts *o, oq_config *c) { (void)c; o->mask_form = (oq_mask_form)8; }
static void seq_axes_null(oq_validate_opts *o, oq_config *c) { (void)c; o->n_seq_axes = 1; }
static const oq_seq_axis no_output = {NULL, 1, 0, 0}, axis_minus_3 = {"y", -3, 0, 0}, batch_minus = {"y", 1, -1, 1};
static void seq_output_null(oq_validate_opts *o, oq_config *c) { (void)c; o->n_seq_axes = 1; o->seq_axes = &no_output; }
static void seq_axis_minus_3(oq_validate_opts *o, oq_config *c) { (void)c; o->n_seq_axes = 1; o->seq_axes = &axis_minus_3; }
static void seq_batch_minus(oq_validate_opts *o, oq_config *c) { (void)c; o->n_seq_axes = 1; o->seq_axes = &batch_minus; }
static void required_null(oq_validate_opts *o, oq_config *c) { (void)c; o->n_required = 2; }
static void expect_kernel_null(oq_validate_opts *o, oq_config *c) { (void)c; o->n_expect_kernel = 1; }
static const char *const one_null[] = {NULL};
static void required_entry_null(oq_validate_opts *o, oq_config *c)
{
    (void)c;
    o->n_required = 1;
    o->required = one_null;
}

/* provider options and session config entries: a list NULL beside a count, an entry NULL */
static const char *const one_key[] = {"sdpa_kernel"}, *const one_value[] = {"2"};
static void ep_keys_null(oq_validate_opts *o, oq_config *c)
{
    (void)c;
    o->n_ep_options = 1;
    o->ep_option_values = one_value;
}
static void ep_values_null(oq_validate_opts *o, oq_config *c)
{
    (void)c;
    o->n_ep_options = 1;
    o->ep_option_keys = one_key;
}
static void session_keys_null(oq_validate_opts *o, oq_config *c)
{
    (void)c;
    o->n_session_configs = 1;
    o->session_config_values = one_value;
}
static void session_values_null(oq_validate_opts *o, oq_config *c)
{
    (void)c;
    o->n_session_configs = 1;
    o->session_config_keys = one_key;
}
static void session_value_entry_null(oq_validate_opts *o, oq_config *c)
{
    (void)c;
    o->n_session_configs = 1;
    o->session_config_keys = one_key;
    o->session_config_values = one_null;
}
/* a session config key given twice: ORT kept the last value without a word */
static const char *const spin_keys[] = {"session.intra_op.allow_spinning", "session.intra_op.allow_spinning"},
                         *const spin_values[] = {"0", "1"};
static void session_key_twice(oq_validate_opts *o, oq_config *c)
{
    (void)c;
    o->n_session_configs = 2;
    o->session_config_keys = spin_keys;
    o->session_config_values = spin_values;
}
/* The placement check sets this entry to 1 in its own session: a user's 0 would be overridden
 * there without a word (it was appended after the user's, and ORT kept the last). */
static const char *placement_keys[] = {OQ_PLACEMENT_SESSION_CONFIG}, *placement_off[] = {"0"};
static void placement_entry_off(oq_validate_opts *o, oq_config *c)
{
    (void)c;
    o->profile = 1;
    o->n_session_configs = 1;
    o->session_config_keys = placement_keys;
    o->session_config_values = placement_off;
}
static void ep_key_entry_null(oq_validate_opts *o, oq_config *c)
{
    (void)c;
    o->n_ep_options = 1;
    o->ep_option_keys = one_null;
    o->ep_option_values = one_value;
}

/* A configuration copied and one field changed: the run took some things from the name and
 * others from the fields (runtime "cuda" ran on the CPU and was recorded as cuda, passed). */
static void runtime_cuda(oq_validate_opts *o, oq_config *c) { (void)o; strcpy(c[1].runtime, "cuda"); }
static void precision_fp16(oq_validate_opts *o, oq_config *c) { (void)o; c[1].precision = OQ_PREC_FP16; }
static void repr_decomposed(oq_validate_opts *o, oq_config *c) { (void)o; c[1].repr = OQ_REPR_DECOMPOSED; }
static void name_other(oq_validate_opts *o, oq_config *c) { (void)o; strcpy(c[1].name, "cpu:attention23:fp32"); }
static void name_spelled(oq_validate_opts *o, oq_config *c) { (void)o; strcpy(c[1].name, "CPU:attention24:fp32"); }
static void runtime_unterminated(oq_validate_opts *o, oq_config *c) { (void)o; memset(c[1].runtime, 'x', sizeof c[1].runtime); }
static void name_unterminated(oq_validate_opts *o, oq_config *c) { (void)o; memset(c[1].name, 'x', sizeof c[1].name); }
static oq_config three[3];
static void name_twice(oq_validate_opts *o, oq_config *c)
{
    three[0] = c[0];
    three[1] = three[2] = c[1];
    o->configs = three;
    o->n_configs = 3;
}
/* the command line: a count with no list was read after every worker had run */
static char *no_arg[] = {NULL};
static void argv_null(oq_validate_opts *o, oq_config *c) { (void)c; o->argc = 3; }
static void argv_entry_null(oq_validate_opts *o, oq_config *c) { (void)c; o->argc = 1; o->argv = no_arg; }
static void argc_minus(oq_validate_opts *o, oq_config *c) { (void)c; o->argc = -1; o->argv = no_arg; }
/* the path fields, named with the function and the count field as the header spells them */
static void outdir_null(oq_validate_opts *o, oq_config *c) { (void)c; o->outdir = NULL; }
static void input_files_null(oq_validate_opts *o, oq_config *c) { (void)c; o->n_input_files = 1; }
static void ep_libs_null(oq_validate_opts *o, oq_config *c) { (void)c; o->n_ep_libs = 1; }

typedef struct spoiled {
    void (*spoil)(oq_validate_opts *, oq_config *);
    const char *says;
} spoiled;

/* A test per field, named by what it must say: each fails alone where its check is missing (the
 * configurations, argv and the path lists' names: 2026-12-06, a C++ service's QA). */
static const spoiled events_and_masks[] = {
    {events_0, "oq_validate_run: events.num_events 0 out of range (at least 1)"},
    {batch_minus_1, "oq_validate_run: events.batch_size -1 out of range (at least 1)"},
    {features_minus_1, "oq_validate_run: events.num_features -1 out of range (at least 0)"},
    {max_len_0, "oq_validate_run: events.max_len 0 out of range (at least 1)"},
    {policy_9, "oq_validate_run: events.policy 9 out of range 0..3"},
    {min_len_above, "oq_validate_run: events.min_len 80 out of range 1..64"},
    {fraction_1, "oq_validate_run: events.fraction 1 outside [0, 1)"},
    {pad_bin_minus_2, "oq_validate_run: events.pad_bin_size -2 out of range (at least 0)"},
    {mask_dtype_8, "oq_validate_run: events.mask_dtype 8 (unknown) is not a mask dtype"},
    {feature_dtype_int32, "oq_validate_run: events.feature_dtype 6 (int32) is not a float dtype"},
    {polarity_5, "oq_validate_run: mask_polarity 5 out of range 0..1"},
    {mask_form_8, "oq_validate_run: mask_form 8 out of range 0..4"},
    {seq_axes_null, "oq_validate_run: seq_axes is NULL (n_seq_axes 1)"},
    {seq_output_null, "oq_validate_run: seq_axes[0].output is NULL"},
    {seq_axis_minus_3, "oq_validate_run: seq_axes[0].axis -3 out of range (at least -1)"},
    {seq_batch_minus, "oq_validate_run: seq_axes[0].batch -1 out of range (at least 0)"},
    {required_null, "oq_validate_run: required is NULL (n_required 2)"},
    {expect_kernel_null, "oq_validate_run: expect_kernel is NULL (n_expect_kernel 1)"},
    {required_entry_null, "oq_validate_run: required[0] is NULL"},
    {ep_keys_null, "oq_validate_run: ep_option_keys is NULL (n_ep_options 1)"},
    {ep_values_null, "oq_validate_run: ep_option_values is NULL (n_ep_options 1)"},
    {ep_key_entry_null, "oq_validate_run: ep_option_keys[0] is NULL"},
    {session_keys_null, "oq_validate_run: session_config_keys is NULL (n_session_configs 1)"},
    {session_values_null, "oq_validate_run: session_config_values is NULL (n_session_configs 1)"},
    {session_value_entry_null, "oq_validate_run: session_config_values[0] is NULL (key 'sdpa_kernel')"},
    {session_key_twice, "oq_validate_run: session_config_keys[0] and [1] are both 'session.intra_op.allow_spinning' "
                        "(values '0' and '1'): ORT would keep the last without a word; give each key once"},
    {placement_entry_off, "oq_validate_run: session config session.record_ep_graph_assignment_info=0: the placement "
                          "check (require_full_gpu, profile) records where ORT placed each node with it set to '1'; "
                          "give '1' or leave it out"},
    {runtime_cuda, "oq_validate_run: configs[1]: name 'cpu:attention24:fp32' does not match its fields (runtime cuda)"},
    {precision_fp16, "oq_validate_run: configs[1]: name 'cpu:attention24:fp32' does not match its fields (precision fp16)"},
    {repr_decomposed, "oq_validate_run: configs[1]: name 'cpu:attention24:fp32' does not match its fields (repr decomposed)"},
    {name_other, "oq_validate_run: configs[1]: name 'cpu:attention23:fp32' does not match its fields (repr attention24)"},
    {name_spelled, "oq_validate_run: configs[1]: name 'CPU:attention24:fp32' does not match its fields (its canonical "
                   "name is 'cpu:attention24:fp32')"},
    {runtime_unterminated, "oq_validate_run: configs[1]: config 'cpu:attention24:fp32': runtime is not terminated "
                           "within its 32 bytes"},
    {name_unterminated, "oq_validate_run: configs[1]: config name is not terminated within its 96 bytes"},
    {name_twice, "oq_validate_run: configs[1] and configs[2] are both 'cpu:attention24:fp32'"},
    {argv_null, "oq_validate_run: argv is NULL (argc 3)"},
    {argv_entry_null, "oq_validate_run: argv[0] is NULL (argc 1)"},
    {argc_minus, "oq_validate_run: argc -1 out of range 0..2147483647"},
    {outdir_null, "oq_validate_run: outdir is NULL"},
    {input_files_null, "oq_validate_run: input_files is NULL (n_input_files 1)"},
    {ep_libs_null, "oq_validate_run: ep_lib_names is NULL (n_ep_libs 1)"},
};

static void field_refused(void **state)
{
    const spoiled *t = *state;
    refused(t->spoil, t->says);
}

/* Two processes, one folder: each forked child runs oq_validate_run, and every wait of the test
 * is bounded (poll, alarm), so a missing lock fails the test instead of hanging it (an earlier
 * version waited on pipes its own children held open, forever). */

/* The first run, stopped at its first progress line (the lock held) until the parent writes to
 * h->go[1]; h is left with the parent's ends open. */
static pid_t first_run(const char *outdir, struct run_hold *h)
{
    run_hold_open(h);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(2 * RUN_HOLD_MS / 1000);
        close(h->ready[0]);
        close(h->go[1]);
        oq_status st;
        _exit(validate_tiny_held(outdir, h, &st) ? 0 : 1);
    }
    close(h->ready[1]);
    close(h->go[0]);
    h->ready[1] = h->go[0] = -1;
    return pid;
}

/* The second run, its status and message written back on `*out` (read end). */
static pid_t second_run(const char *outdir, int *out)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(2 * RUN_HOLD_MS / 1000);
        close(p[0]);
        oq_validate_summary *s = NULL;
        oq_err err = OQ_ERR_INIT;
        int st = validate_tiny_again(outdir, &s, &err);
        oq_validate_summary_free(s);
        _exit(write(p[1], &st, sizeof st) == sizeof st && write(p[1], err.msg, strlen(err.msg) + 1) > 0 ? 0 : 1);
    }
    close(p[1]);
    *out = p[0];
    return pid;
}

/* Its exit status, waited for at most RUN_HOLD_MS; -1 (and killed) when it did not end. */
static int ended(pid_t pid)
{
    int status = 0;
    for (int ms = 0; ms < RUN_HOLD_MS; ms += 10) {
        if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

/* The folder's entries, their sizes and times, as one text. */
static void listing(const char *dir, char *buf, size_t n)
{
    DIR *d = opendir(dir);
    size_t at = 0;
    *buf = 0;
    for (struct dirent *e; d && (e = readdir(d)) && at < n;) {
        char path[1024];
        struct stat sb;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &sb) == 0)
            at += (size_t)snprintf(buf + at, n - at, "%s %lld %lld.%09ld\n", e->d_name, (long long)sb.st_size,
                                   (long long)sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec);
    }
    if (d) closedir(d);
}

/* The second process is refused at once (OQ_ERR_IO naming the folder and the first's pid) and
 * changes nothing in the folder; the first runs on and passes; the lock goes with it. */
static void second_process_refused(void **state)
{
    (void)state;
    char *dir = temp_dir("vlock");
    char outdir[512], lock[600], inputs[600], before[8192], after[8192], msg[1024] = "";
    snprintf(outdir, sizeof outdir, "%s/out", dir);
    snprintf(lock, sizeof lock, "%s/" OQ_OUTDIR_LOCK, outdir);
    snprintf(inputs, sizeof inputs, "%s/inputs_000.npz", outdir);
    int out, st = -1;
    struct run_hold hold;
    pid_t first = first_run(outdir, &hold);
    int began = run_hold_wait(&hold); /* the first run holds the lock */
    int locked = access(lock, F_OK) == 0;
    listing(outdir, before, sizeof before);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t second = began ? second_run(outdir, &out) : -1;
    int answered = second > 0 && fd_readable(out, RUN_HOLD_MS) && read(out, &st, sizeof st) == sizeof st;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ssize_t got = answered ? read(out, msg, sizeof msg - 1) : 0;
    msg[got > 0 ? got : 0] = 0;
    int second_rc = second > 0 ? ended(second) : -1;
    listing(outdir, after, sizeof after);
    if (began && write(hold.go[1], "g", 1) != 1) began = 0; /* a first run that never began has no reader: SIGPIPE */
    int first_rc = ended(first);
    run_hold_close(&hold);
    if (second > 0) close(out);

    if (!began) fail_msg("the first run never reached its first progress line (exit %d)", first_rc);
    assert_true(locked);
    if (!answered) fail_msg("the second run did not answer within %d ms (exit %d)", RUN_HOLD_MS, second_rc);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    print_message("the second run answered after %.3f s\n", s);
    if (st != OQ_ERR_IO) fail_msg("the second run: status %d (%s), want OQ_ERR_IO", st, msg);
    char holder[1200];
    snprintf(holder, sizeof holder, "%s: in use by another ortqual run (pid %ld, holding %s)", outdir, (long)first,
             lock);
    if (!strstr(msg, holder)) fail_msg("'%s' does not say '%s'", msg, holder);
    if (s > 5) fail_msg("the second run was refused after %.1f s, not at once", s);
    assert_string_equal(before, after); /* it wrote nothing there */
    assert_int_equal(second_rc, 0);
    assert_int_equal(first_rc, 0);                /* the first run passed, undisturbed */
    assert_int_equal(access(lock, F_OK), -1);     /* released when it ended */
    assert_int_equal(access(inputs, F_OK), 0);
    oq_remove_tree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_enums_refused),
        cmocka_unit_test(bad_numbers_refused),
        cmocka_unit_test(second_process_refused),
    };
    struct CMUnitTest fields[sizeof events_and_masks / sizeof *events_and_masks];
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        fields[i] = (struct CMUnitTest){events_and_masks[i].says, field_refused, NULL, NULL, (void *)&events_and_masks[i]};
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    return failed + cmocka_run_group_tests_name("events and mask fields", fields, NULL, NULL);
}
