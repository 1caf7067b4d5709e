/* Naming content and splitting plans: SHA-256 against the FIPS 180-4 examples, "I/N" parsing, the split,
 * reproducible .npz bytes (a plan names its batch files by hash), and the sbatch scripts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/core-impl.h"
#include "npz/npz-impl.h"
#include "ortqual/npz.h"
#include "ortqual/shard.h"
#include "ortqual/slurm.h"
#include "testutil.h"

static void hex_of(const void *data, size_t n, size_t chunk, char hex[65])
{
    oq_sha256 s;
    oq_sha256_init(&s);
    for (size_t at = 0; at < n; at += chunk) oq_sha256_update(&s, (const char *)data + at, n - at < chunk ? n - at : chunk);
    oq_sha256_hex(&s, hex);
}

static void test_sha256_vectors(void **state)
{
    (void)state;
    char hex[65];
    hex_of("", 0, 1, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    hex_of("abc", 3, 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    /* 56 bytes: the padding needs a second block */
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    hex_of(two, strlen(two), 7, hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    static char million[1000000];
    memset(million, 'a', sizeof million);
    hex_of(million, sizeof million, 4099, hex); /* fed in pieces that straddle blocks */
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* The accelerated blocks (SHA-NI, where this CPU has it) and the portable ones agree on any
 * data, from any state. */
static void test_sha256_paths_agree(void **state)
{
    (void)state;
    unsigned char data[64 * 37];
    uint64_t x = 88172645463325252ULL;
    for (size_t i = 0; i < sizeof data; i++) data[i] = (unsigned char)((x ^= x << 13, x ^= x >> 7, x ^= x << 17) >> 24);
    uint32_t a[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    uint32_t b[8];
    memcpy(b, a, sizeof b);
    for (size_t n = 1; n <= 8; n++) { /* 1+2+...+8 = 36 blocks, each call from the state the last left */
        size_t at = (n - 1) * n / 2 * 64;
        oq_sha256_blocks(a, data + at, n);
        oq_sha256_blocks_portable(b, data + at, n);
        assert_memory_equal(a, b, sizeof a);
    }
}

static void test_sha256_file(void **state)
{
    (void)state;
    char *dir = temp_dir("sha"), path[512], hex[65];
    snprintf(path, sizeof path, "%s/abc", dir);
    FILE *fp = fopen(path, "w");
    fputs("abc", fp);
    fclose(fp);
    assert_int_equal(oq_sha256_file(path, hex, NULL), OQ_OK);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    oq_err err = {0};
    snprintf(path, sizeof path, "%s/none", dir);
    assert_int_equal(oq_sha256_file(path, hex, &err), OQ_ERR_IO);
    assert_non_null(strstr(err.msg, "none"));
    remove_dir(dir);
}

/* A file is named by its bytes every time, whatever its identity says: a second write through
 * a shared mapping to a page already dirty moves neither mtime nor ctime (QA 9b's D2: a digest
 * kept by device, inode, size and times named bytes the file no longer had). The file is 2 MiB
 * and settled 3 s, as such a memo kept it. */
static void test_sha256_shared_write(void **state)
{
    (void)state;
    enum { N = 2 << 20 };
    char *dir = temp_dir("shamap"), path[512], hex[65], want[65];
    snprintf(path, sizeof path, "%s/big.bin", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, N), 0);
    unsigned char *m = mmap(NULL, N, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    assert_true(m != MAP_FAILED);
    memcpy(m + 4096, "AAAA", 4); /* the page made dirty: the times move */
    sleep(3);
    oq_sha256_buf(m, N, want);
    assert_int_equal(oq_sha256_file(path, hex, NULL), OQ_OK);
    assert_string_equal(hex, want);
    struct stat before, after;
    assert_int_equal(fstat(fd, &before), 0);
    memcpy(m + 4100, "BBBB", 4); /* the same dirty page: no fault, the times stay */
    assert_int_equal(fstat(fd, &after), 0);
    oq_sha256_buf(m, N, want);
    assert_int_equal(oq_sha256_file(path, hex, NULL), OQ_OK);
    if (strcmp(hex, want))
        fail_msg("the bytes before the second write named (ctime %s)",
                 before.st_ctim.tv_nsec == after.st_ctim.tv_nsec ? "unmoved" : "moved");
    munmap(m, N);
    close(fd);
    remove_dir(dir);
}

/* The same tensors written at different times give the same bytes. */
static void test_npz_reproducible(void **state)
{
    (void)state;
    char *dir = temp_dir("npzrep"), a[512], b[512], ha[65], hb[65];
    int64_t shape[2] = {2, 3};
    oq_tensor *t = NULL;
    assert_int_equal(oq_tensor_create(&t, OQ_DTYPE_FLOAT32, 2, shape, "x", NULL), OQ_OK);
    for (int i = 0; i < 6; i++) oq_tensor_set_f64(t, i, i * 0.5);
    const oq_tensor *ts[] = {t};
    snprintf(a, sizeof a, "%s/a.npz", dir);
    snprintf(b, sizeof b, "%s/b.npz", dir);
    assert_int_equal(oq_npz_write(a, 1, ts, 1, 0, NULL), OQ_OK);
    sleep(2); /* zip time stamps have a 2-second resolution */
    assert_int_equal(oq_npz_write(b, 1, ts, 1, 0, NULL), OQ_OK);
    assert_int_equal(oq_sha256_file(a, ha, NULL), OQ_OK);
    assert_int_equal(oq_sha256_file(b, hb, NULL), OQ_OK);
    assert_string_equal(ha, hb);
    /* the bytes built in memory (validate hashes and stores those) are the file's */
    unsigned char *buf = NULL;
    size_t n = 0;
    assert_int_equal(oq_npz_bytes(1, ts, 1, "mem", &buf, &n, NULL), OQ_OK);
    oq_sha256 h;
    oq_sha256_init(&h);
    oq_sha256_update(&h, buf, n);
    oq_sha256_hex(&h, hb);
    assert_string_equal(ha, hb);
    free(buf);
    oq_err err = {0};
    const oq_tensor *twice[] = {t, t};
    assert_int_equal(oq_npz_bytes(2, twice, 0, "mem", &buf, &n, &err), OQ_ERR_INVALID_ARG);
    assert_null(buf);
    assert_non_null(strstr(err.msg, "duplicate"));
    oq_tensor_free(t);
    remove_dir(dir);
}

static void test_shard_parse(void **state)
{
    (void)state;
    oq_shard_spec s = {0};
    assert_int_equal(oq_shard_parse("3/4", &s, NULL), OQ_OK);
    assert_int_equal(s.index, 3);
    assert_int_equal(s.count, 4);
    const char *bad[] = {"4/4", "-1/4", "1/0", "1", "/4", "1/4x", "a/b", "1/ 4", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        oq_err err = {0};
        assert_int_equal(oq_shard_parse(bad[i], &s, &err), OQ_ERR_INVALID_ARG);
        assert_non_null(strstr(err.msg, "want I/N"));
    }
    assert_int_equal(oq_shard_by_parse("config"), OQ_SHARD_BY_CONFIG);
    assert_int_equal(oq_shard_by_parse("batch"), OQ_SHARD_BY_BATCH);
    assert_int_equal(oq_shard_by_parse("node"), -1);
}

/* Every item in exactly one shard, in order, the shards' sizes one apart at most. */
static void test_shard_range(void **state)
{
    (void)state;
    const size_t items[] = {0, 1, 4, 7, 1000003};
    const int32_t counts[] = {1, 2, 3, 4, 50};
    for (size_t a = 0; a < sizeof items / sizeof *items; a++)
        for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
            size_t next = 0, smallest = (size_t)-1, largest = 0;
            for (int32_t i = 0; i < counts[c]; i++) {
                size_t lo, hi;
                oq_shard_range(counts[c], i, items[a], &lo, &hi);
                assert_int_equal(lo, next);
                assert_true(hi >= lo);
                next = hi;
                smallest = hi - lo < smallest ? hi - lo : smallest;
                largest = hi - lo > largest ? hi - lo : largest;
            }
            assert_int_equal(next, items[a]);
            assert_true(largest - smallest <= 1);
        }
    size_t lo, hi;
    oq_shard_range(3, 2, 4, &lo, &hi); /* 4 batches in 3 shards: 0 | 1 | 2,3 */
    assert_int_equal(lo, 2);
    assert_int_equal(hi, 4);
}

/* What a shard records of the SLURM task it runs in, and nothing outside SLURM. */
static void test_slurm_task(void **state)
{
    (void)state;
    oq_slurm_task t;
    unsetenv("SLURM_JOB_ID");
    setenv("SLURM_ARRAY_JOB_ID", "812", 1);
    setenv("SLURM_ARRAY_TASK_ID", "3", 1);
    oq_slurm_task_current(&t);
    assert_string_equal(t.job_id, "");
    assert_string_equal(t.array_job_id, "812");
    assert_string_equal(t.array_task_id, "3");
    unsetenv("SLURM_ARRAY_JOB_ID");
    unsetenv("SLURM_ARRAY_TASK_ID");
    char log[256];
    oq_slurm_shard_log("/d", "812", 3, log, sizeof log);
    assert_string_equal(log, "/d/slurm/shard-812_3.out");
    oq_slurm_ids ids;
    oq_err err = {0};
    assert_int_equal(oq_slurm_jobs_read("/nonexistent", &ids, &err), OQ_ERR_NOT_FOUND);
}

static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = 0;
    fclose(fp);
    return buf;
}

/* Arguments are quoted for the shell whatever they hold; #SBATCH values may not hold spaces. */
static void test_slurm_scripts(void **state)
{
    (void)state;
    char *dir = temp_dir("sbatch");
    const char *argv[] = {"validate", "--tolerance", "it's:rtol=1e-3", "--configs", "ref:encoder:fp64,cpu:model:fp32"};
    oq_slurm_job j = {.outdir = dir, .workdir = "/tmp", .self_exe = "/opt/bin/ortqual", .argc = 5, .argv = argv,
                      .shards = 3, .by = OQ_SHARD_BY_CONFIG, .partition = "gpu", .gpus_per_task = "1"};
    oq_slurm_scripts s;
    assert_int_equal(oq_slurm_write(&j, &s, NULL), OQ_OK);
    char *text = slurp(s.shards);
    assert_non_null(strstr(text, "#SBATCH --array=0-2\n"));
    assert_non_null(strstr(text, "#SBATCH --gpus-per-task=1\n"));
    assert_non_null(strstr(text, "exec '/opt/bin/ortqual' 'validate' '--tolerance' 'it'\\''s:rtol=1e-3' '--configs' "
                                 "'ref:encoder:fp64,cpu:model:fp32' --outdir '"));
    assert_non_null(strstr(text, " --shard \"$SLURM_ARRAY_TASK_ID/3\" --shard-by config\n"));
    text = slurp(s.merge);
    assert_non_null(strstr(text, "#SBATCH --partition=gpu\n"));
    assert_null(strstr(text, "--gpus"));
    assert_non_null(strstr(text, "' merge '"));
    assert_non_null(strstr(slurp(s.shards), "# Rerun one shard: sbatch --array=I '"));
    j.workdir = "/tmp/it's#1";
    assert_int_equal(oq_slurm_write(&j, &s, NULL), OQ_OK);
    assert_non_null(strstr(slurp(s.merge), "\n#SBATCH --chdir=/tmp/it\\'s\\#1\n"));
    j.workdir = "/tmp";
    oq_err err = {0};
    j.account = "a b";
    assert_int_equal(oq_slurm_write(&j, &s, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "--account 'a b': whitespace"));
    j.account = NULL;
    j.outdir = "relative";
    assert_int_equal(oq_slurm_write(&j, &s, &err), OQ_ERR_INVALID_ARG);
    remove_dir(dir);
}

/* Values sbatch reads as numbers or times, in the forms its manual gives, and nothing else. */
static void test_slurm_values(void **state)
{
    (void)state;
    const char *argv[] = {"validate"};
    oq_slurm_job j = {.outdir = "/d", .workdir = "/tmp", .self_exe = "/opt/bin/ortqual", .argc = 1, .argv = argv,
                      .shards = 2};
    const char *times[] = {"0", "90", "10:30", "02:00:00", "1-0", "1-12:30", "2-00:00:00", "unlimited"};
    const char *bad_times[] = {"1h", "", "1:2:3:4", "1-2-3", "1-", ":5", "5:", "-1", "1-2:3:4:5"};
    const char *gpus[] = {"1", "h100:2", "h100:1,a100:2"}, *bad_gpus[] = {"0", "h100:", ":1", "a:b:1", "1,", "x"};
    const char *mems[] = {"0", "512", "512m", "8G", "1t", "64K"}, *bad_mems[] = {"lots", "-3", "1.5G", "8GB", "G"};
    oq_err err = {0};
    for (size_t i = 0; i < sizeof times / sizeof *times; i++) {
        j.time = times[i];
        assert_int_equal(oq_slurm_check(&j, &err), OQ_OK);
    }
    for (size_t i = 0; i < sizeof bad_times / sizeof *bad_times; i++) {
        j.time = bad_times[i];
        assert_int_equal(oq_slurm_check(&j, &err), OQ_ERR_INVALID_ARG);
        assert_non_null(strstr(err.msg, "--time '"));
    }
    j.time = NULL;
    for (size_t i = 0; i < sizeof gpus / sizeof *gpus; i++) {
        j.gpus_per_task = gpus[i];
        assert_int_equal(oq_slurm_check(&j, &err), OQ_OK);
    }
    for (size_t i = 0; i < sizeof bad_gpus / sizeof *bad_gpus; i++) {
        j.gpus_per_task = bad_gpus[i];
        assert_int_equal(oq_slurm_check(&j, &err), OQ_ERR_INVALID_ARG);
    }
    j.gpus_per_task = NULL;
    for (size_t i = 0; i < sizeof mems / sizeof *mems; i++) {
        j.merge_mem = mems[i];
        assert_int_equal(oq_slurm_check(&j, &err), OQ_OK);
    }
    for (size_t i = 0; i < sizeof bad_mems / sizeof *bad_mems; i++) {
        j.merge_mem = bad_mems[i];
        assert_int_equal(oq_slurm_check(&j, &err), OQ_ERR_INVALID_ARG);
        assert_non_null(strstr(err.msg, "--merge-mem '"));
    }
    j.merge_mem = NULL;
    j.cpus_per_task = "2147483648";
    assert_int_equal(oq_slurm_check(&j, &err), OQ_ERR_INVALID_ARG);
    assert_string_equal(err.msg, "--cpus-per-task '2147483648': want a positive integer");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_vectors),
        cmocka_unit_test(test_sha256_paths_agree), cmocka_unit_test(test_sha256_file),
        cmocka_unit_test(test_sha256_shared_write),
        cmocka_unit_test(test_npz_reproducible), cmocka_unit_test(test_shard_parse),
        cmocka_unit_test(test_slurm_scripts), cmocka_unit_test(test_shard_range),
        cmocka_unit_test(test_slurm_task), cmocka_unit_test(test_slurm_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
