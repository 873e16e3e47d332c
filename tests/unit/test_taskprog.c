/*
 * Recognising a task program (mpjrun/taskprog.c): this test defines a
 * task with P2P_TASK, so its own executable is one; copies of it with the
 * section renamed, cut short or with a bad section-table offset are not,
 * and neither is a shell, a text file, a directory or nothing at all.
 */
#include <sys/stat.h>

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpjrun.h"
#include "p2p_task.h"
#include "test.h"

P2P_TASK(marked)
{
    return p2p_result_write(res, in, inlen);
}

static char dir[] = "/tmp/test_taskprog.XXXXXX";

/* The bytes of this test's own executable. */
static char *
self_bytes(size_t *len)
{
    FILE *f = fopen("/proc/self/exe", "rb");
    char *p = NULL;
    long n;

    if (f == NULL)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 &&
        fseek(f, 0, SEEK_SET) == 0 && (p = malloc((size_t)n)) != NULL &&
        fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    *len = p != NULL ? (size_t)n : 0;
    fclose(f);
    return p;
}

static const char *
write_copy(const char *name, const char *p, size_t len)
{
    static char path[512];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    if ((f = fopen(path, "wb")) == NULL)
        return "/nonexistent";
    fwrite(p, 1, len, f);
    fclose(f);
    return path;
}

static void
t_self(void)
{
    CHECK_EQ_INT(taskprog_is_task_program("/proc/self/exe"), 1);
}

static void
t_not_task_programs(void)
{
    CHECK_EQ_INT(taskprog_is_task_program("/bin/sh"), 0);
    CHECK_EQ_INT(taskprog_is_task_program(write_copy("text", "#!/bin/sh\n",
                                                     10)),
                 0);
    CHECK_EQ_INT(taskprog_is_task_program(dir), 0);
    CHECK_EQ_INT(taskprog_is_task_program("/nonexistent/prog"), 0);
    CHECK_EQ_INT(taskprog_is_task_program(write_copy("empty", "", 0)), 0);
}

static void
t_renamed_section(void)
{
    size_t len, i;
    char *p = self_bytes(&len);

    CHECK(p != NULL);
    if (p == NULL)
        return;
    /* The whole copy is still an ELF file; only the name differs. */
    CHECK_EQ_INT(taskprog_is_task_program(write_copy("same", p, len)), 1);
    for (i = 0; i + sizeof P2P_TASK_SECTION <= len; i++)
        if (memcmp(p + i, P2P_TASK_SECTION, sizeof P2P_TASK_SECTION) == 0)
            p[i + sizeof P2P_TASK_SECTION - 2] = 'z';
    CHECK_EQ_INT(taskprog_is_task_program(write_copy("renamed", p, len)), 0);
    free(p);
}

static void
t_damaged(void)
{
    size_t len;
    char *p = self_bytes(&len);
    Elf64_Ehdr *e = (Elf64_Ehdr *)p;

    CHECK(p != NULL && len > sizeof *e);
    if (p == NULL || len <= sizeof *e)
        return;
    CHECK_EQ_INT(taskprog_is_task_program(write_copy("cut4", p, 4)), 0);
    CHECK_EQ_INT(taskprog_is_task_program(write_copy("cut64", p, 64)), 0);
    CHECK_EQ_INT(taskprog_is_task_program(write_copy("half", p, len / 2)),
                 0);
    e->e_shoff = (Elf64_Off)len - 8;
    CHECK_EQ_INT(taskprog_is_task_program(write_copy("shoff", p, len)), 0);
    e->e_shoff = ~(Elf64_Off)0 - 16;
    CHECK_EQ_INT(taskprog_is_task_program(write_copy("huge", p, len)), 0);
    free(p);
}

static void
t_find(void)
{
    char path[4096];

    CHECK_EQ_INT(taskprog_find("./prog", path, sizeof path), 0);
    CHECK_EQ_STR(path, "./prog");
    CHECK_EQ_INT(taskprog_find("sh", path, sizeof path), 0);
    CHECK(strlen(path) > 3 && strcmp(path + strlen(path) - 3, "/sh") == 0);
    CHECK_EQ_INT(taskprog_find("no-such-program-anywhere", path, sizeof path),
                 -1);
}

static void
t_cleanup(void)
{
    static const char *names[] = {"text",  "empty", "same",  "renamed",
                                  "cut4",  "cut64", "half", "shoff",
                                  "huge"};
    char path[512];
    size_t i;

    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    CHECK_EQ_INT(rmdir(dir), 0);
}

static void
t_setup(void)
{
    CHECK(mkdtemp(dir) != NULL);
}

static const struct test_case cases[] = {
    {"setup", t_setup},
    {"self", t_self},
    {"not task programs", t_not_task_programs},
    {"renamed section", t_renamed_section},
    {"damaged", t_damaged},
    {"find on PATH", t_find},
    {"cleanup", t_cleanup},
};

TEST_MAIN(cases)
