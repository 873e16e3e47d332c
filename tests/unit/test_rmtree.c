/*
 * Removing what a job leaves (rmtree.c) and the job uid range (uids.c):
 * trees with mode-000 directories, read-only directories, nesting far
 * deeper than the walk descends, and links that must not be followed;
 * ranges that are accepted and refused.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "peerd.h"
#include "test.h"

static char base[256];

static void
setup(void)
{
    snprintf(base, sizeof base, "/tmp/p2p-rmtree.XXXXXX");
    if (mkdtemp(base) == NULL)
        abort();
}

static void
put(const char *rel, const char *text)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", base, rel);
    if ((f = fopen(path, "w")) == NULL)
        abort();
    fputs(text, f);
    fclose(f);
}

static void
dir(const char *rel, mode_t mode)
{
    char path[512];

    snprintf(path, sizeof path, "%s/%s", base, rel);
    if (mkdir(path, 0700) == -1)
        abort();
    (void)mode;
}

static void
chmod_rel(const char *rel, mode_t mode)
{
    char path[512];

    snprintf(path, sizeof path, "%s/%s", base, rel);
    chmod(path, mode);
}

static int
exists(const char *rel)
{
    char path[512];
    struct stat st;

    snprintf(path, sizeof path, "%s/%s", base, rel);
    return lstat(path, &st) == 0;
}

static void
t_modes(void)
{
    char job[512];

    setup();
    dir("job", 0700);
    dir("job/a", 0700);
    dir("job/a/b", 0700);
    put("job/a/b/file", "x");
    put("job/a/readonly", "y");
    dir("job/ro", 0700);
    put("job/ro/inside", "z");
    chmod_rel("job/a/b", 0);
    chmod_rel("job/a", 0);
    chmod_rel("job/ro", 0500);
    chmod_rel("job/a/readonly", 0);
    snprintf(job, sizeof job, "%s/job", base);
    CHECK_EQ_INT(rmtree(job), 0);
    CHECK(!exists("job"));
    CHECK_EQ_INT(rmdir(base), 0);
}

static void
t_deep(void)
{
    char path[8192], job[512];
    size_t len;
    int i;

    setup();
    snprintf(path, sizeof path, "%s/job", base);
    strcpy(job, path);
    mkdir(path, 0700);
    /* 300 levels: far beyond how deep the walk goes before moving up. */
    for (i = 0; i < 300; i++) {
        len = strlen(path);
        if (len + 3 >= sizeof path)
            break;
        strcpy(path + len, "/d");
        if (!CHECK(mkdir(path, 0700) == 0))
            return;
    }
    chmod(path, 0);
    CHECK_EQ_INT(rmtree(job), 0);
    CHECK(!exists("job"));
    CHECK_EQ_INT(rmdir(base), 0);
}

static void
t_links_not_followed(void)
{
    char job[512], target[512];

    setup();
    dir("outside", 0700);
    put("outside/precious", "keep me");
    dir("job", 0700);
    snprintf(target, sizeof target, "%s/outside", base);
    snprintf(job, sizeof job, "%s/job/link", base);
    CHECK_EQ_INT(symlink(target, job), 0);
    snprintf(job, sizeof job, "%s/job/filelink", base);
    snprintf(target, sizeof target, "%s/outside/precious", base);
    CHECK_EQ_INT(symlink(target, job), 0);
    snprintf(job, sizeof job, "%s/job", base);
    CHECK_EQ_INT(rmtree(job), 0);
    CHECK(!exists("job"));
    CHECK(exists("outside/precious"));
    snprintf(target, sizeof target, "%s/outside", base);
    CHECK_EQ_INT(rmtree(target), 0);
    CHECK_EQ_INT(rmdir(base), 0);
}

static void
t_missing(void)
{
    CHECK_EQ_INT(rmtree("/tmp/p2p-rmtree-does-not-exist/x"), 0);
}

static void
t_uid_ranges(void)
{
    char err[256];
    uid_t a, b;

    CHECK_EQ_INT(uids_parse("61000-61063", &a, &b, err, sizeof err), 0);
    CHECK_EQ_INT(a, 61000);
    CHECK_EQ_INT(b, 61063);
    CHECK_EQ_INT(uids_parse("70000", &a, &b, err, sizeof err), 0);
    CHECK_EQ_INT(a, 70000);
    CHECK_EQ_INT(b, 70000);
    CHECK_EQ_INT(uids_parse("0-10", &a, &b, err, sizeof err), -1);
    CHECK_CONTAINS(err, "none of them 0");
    CHECK_EQ_INT(uids_parse("100-50", &a, &b, err, sizeof err), -1);
    CHECK_EQ_INT(uids_parse("1-100000", &a, &b, err, sizeof err), -1);
    CHECK_EQ_INT(uids_parse("61000-", &a, &b, err, sizeof err), -1);
    CHECK_EQ_INT(uids_parse("nobody", &a, &b, err, sizeof err), -1);
    CHECK_CONTAINS(err, "not a range");
    CHECK_EQ_INT(uids_parse("61000-61063x", &a, &b, err, sizeof err), -1);
}

static const struct test_case cases[] = {
    {"modes", t_modes},
    {"deep", t_deep},
    {"links not followed", t_links_not_followed},
    {"missing", t_missing},
    {"uid ranges", t_uid_ranges},
};

TEST_MAIN(cases)
