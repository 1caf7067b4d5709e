/* Files written in place in an output, shard or work folder (the lock, scratch files, a
 * worker's stderr file): never through a symbolic or hard link, never a FIFO or another
 * user's file; a name not there is created afresh. A hard link at the lock's name lost the
 * linked file's data to the run's pid (security QA, 2026-12-06). */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fileio/fileio-impl.h"
#include "ortqual/fileio.h"
#include "ortqual/proc.h"
#include "testutil.h"

static const char data[] = "IMPORTANT DATA, 30 bytes long\n";

static void put(const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(data, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static void assert_intact(const char *path)
{
    char buf[64] = "";
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    assert_int_equal(n, strlen(data));
    assert_string_equal(buf, data);
}

/* open refused with `text` in the message, *fd -1 */
static void expect_refused(const char *path, int flags, const char *text)
{
    int fd = 7;
    oq_err err = OQ_ERR_INIT;
    assert_int_equal(oq_open_in_place(path, flags, 0666, &fd, &err), OQ_ERR_INVALID_ARG);
    assert_int_equal(fd, -1);
    assert_non_null(strstr(err.msg, path));
    if (!strstr(err.msg, text)) fail_msg("'%s' lacks '%s'", err.msg, text);
}

static void test_hard_link_refused(void **state)
{
    (void)state;
    char *dir = temp_dir("inplace_hard");
    char own[512], lnk[512];
    snprintf(own, sizeof own, "%s/precious.txt", dir);
    snprintf(lnk, sizeof lnk, "%s/.ortqual.lock", dir);
    put(own);
    assert_int_equal(link(own, lnk), 0);
    expect_refused(lnk, O_RDWR, "has 2 hard links");
    expect_refused(lnk, O_WRONLY | O_TRUNC, "has 2 hard links");
    FILE *f = NULL;
    oq_err err = OQ_ERR_INIT;
    assert_int_equal(oq_fopen_scratch(lnk, &f, &err), OQ_ERR_INVALID_ARG);
    assert_null(f);
    oq_proc_bg bg;
    char *argv[] = {"/bin/true", NULL};
    assert_int_equal(oq_proc_start_bg(argv, NULL, NULL, lnk, &bg, &err), OQ_ERR_INVALID_ARG);
    assert_non_null(strstr(err.msg, "has 2 hard links"));
    assert_intact(own);
    unlink(lnk);
    unlink(own);
    remove_dir(dir);
}

static void test_symlink_and_fifo_refused(void **state)
{
    (void)state;
    char *dir = temp_dir("inplace_kind");
    char own[512], sym[512], fifo[512];
    snprintf(own, sizeof own, "%s/precious.txt", dir);
    snprintf(sym, sizeof sym, "%s/sym", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    put(own);
    assert_int_equal(symlink(own, sym), 0);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    expect_refused(sym, O_WRONLY | O_TRUNC, "is a symbolic link");
    expect_refused(fifo, O_WRONLY | O_TRUNC, "FIFO"); /* not waited on for a reader */
    expect_refused(fifo, O_RDWR, "FIFO");
    assert_intact(own);
    unlink(sym);
    unlink(fifo);
    unlink(own);
    remove_dir(dir);
}

/* Another user's file at the name: refused (checked where this test may chown, as root) */
static void test_other_owner_refused(void **state)
{
    (void)state;
    if (geteuid() != 0) skip();
    char *dir = temp_dir("inplace_owner");
    char path[512];
    snprintf(path, sizeof path, "%s/.ortqual.lock", dir);
    put(path);
    assert_int_equal(chown(path, 4242, 4242), 0);
    expect_refused(path, O_RDWR, "owned by uid 4242, not by this user");
    assert_intact(path);
    unlink(path);
    remove_dir(dir);
}

/* Its own file of one link: opened and truncated; a name not there: made */
static void test_own_file_written(void **state)
{
    (void)state;
    char *dir = temp_dir("inplace_own");
    char path[512], fresh[512];
    snprintf(path, sizeof path, "%s/scratch", dir);
    snprintf(fresh, sizeof fresh, "%s/fresh", dir);
    put(path);
    int fd = -1;
    oq_err err = OQ_ERR_INIT;
    struct stat sb;
    assert_int_equal(oq_open_in_place(path, O_WRONLY | O_TRUNC | O_CLOEXEC, 0666, &fd, &err), OQ_OK);
    assert_int_equal(fstat(fd, &sb), 0);
    assert_int_equal(sb.st_size, 0);
    close(fd);
    assert_int_equal(oq_open_in_place(fresh, O_RDWR, 0600, &fd, &err), OQ_OK);
    assert_int_equal(fstat(fd, &sb), 0);
    assert_true(S_ISREG(sb.st_mode) && sb.st_nlink == 1);
    close(fd);
    unlink(path);
    unlink(fresh);
    remove_dir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hard_link_refused),
        cmocka_unit_test(test_symlink_and_fifo_refused),
        cmocka_unit_test(test_other_owner_refused),
        cmocka_unit_test(test_own_file_written),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
