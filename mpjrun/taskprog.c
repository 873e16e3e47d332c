/*
 * Recognising a task program: one that defines tasks with P2P_TASK, so
 * that `p2prun -n 1 ./prog` farms its calls out as `--workers 0` would.
 *
 * P2P_TASK puts each task's name in an ELF section named p2p_tasks
 * (P2P_TASK_SECTION in p2p_task.h) of the program that defines it; the
 * MPI library itself has none, so a plain MPI program, a script or a
 * program from elsewhere never has one.  Only the section headers are
 * read (nothing of the program runs here), and every offset and size in
 * them is checked against the file, so a truncated or hostile file is
 * simply "not a task program".
 */
#include <sys/stat.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpjrun.h"
#include "xmalloc.h"

/* The section's name: the same string P2P_TASK_SECTION is in p2p_task.h
 * (taskprog.c must not need the user's header). */
#define TASKPROG_SECTION "p2p_tasks"
/* Bounds on what is read: more section headers or a longer name table
 * than any real program has means "not a task program". */
#define TASKPROG_MAX_SHNUM 65536
#define TASKPROG_MAX_SHSTRTAB (4 * 1024 * 1024)

/* One section header, whichever class the file is. */
struct taskprog_sh {
    uint32_t name;
    uint64_t offset, size, link;
};

static int
read_at(int fd, void *buf, size_t len, uint64_t off, uint64_t fsize)
{
    ssize_t n;
    size_t got = 0;

    if (off > fsize || len > fsize - off)
        return -1;
    while (got < len) {
        n = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
        if (n == -1 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    return 0;
}

/* Section header i of the file (class 32 or 64, native byte order). */
static int
read_sh(int fd, int is64, uint64_t shoff, uint32_t i, uint64_t fsize,
        struct taskprog_sh *sh)
{
    Elf64_Shdr s64;
    Elf32_Shdr s32;

    if (is64) {
        if (read_at(fd, &s64, sizeof s64, shoff + (uint64_t)i * sizeof s64,
                    fsize) == -1)
            return -1;
        sh->name = s64.sh_name;
        sh->offset = s64.sh_offset;
        sh->size = s64.sh_size;
        sh->link = s64.sh_link;
    } else {
        if (read_at(fd, &s32, sizeof s32, shoff + (uint64_t)i * sizeof s32,
                    fsize) == -1)
            return -1;
        sh->name = s32.sh_name;
        sh->offset = s32.sh_offset;
        sh->size = s32.sh_size;
        sh->link = s32.sh_link;
    }
    return 0;
}

static int
native_data(void)
{
    const uint16_t one = 1;

    return *(const uint8_t *)&one == 1 ? ELFDATA2LSB : ELFDATA2MSB;
}

int
taskprog_is_task_program(const char *path)
{
    unsigned char ident[EI_NIDENT];
    Elf64_Ehdr e64;
    Elf32_Ehdr e32;
    struct taskprog_sh sh, strsh;
    struct stat st;
    uint64_t shoff, fsize, shnum, shstrndx, shentsize;
    char *names = NULL;
    uint32_t i;
    int fd, is64, found = 0;

    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
        return 0;
    if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode))
        goto done;
    fsize = (uint64_t)st.st_size;
    if (read_at(fd, ident, sizeof ident, 0, fsize) == -1 ||
        memcmp(ident, ELFMAG, SELFMAG) != 0 ||
        (ident[EI_CLASS] != ELFCLASS64 && ident[EI_CLASS] != ELFCLASS32) ||
        ident[EI_DATA] != native_data())
        goto done;
    is64 = ident[EI_CLASS] == ELFCLASS64;
    if (is64) {
        if (read_at(fd, &e64, sizeof e64, 0, fsize) == -1)
            goto done;
        shoff = e64.e_shoff;
        shnum = e64.e_shnum;
        shstrndx = e64.e_shstrndx;
        shentsize = e64.e_shentsize;
    } else {
        if (read_at(fd, &e32, sizeof e32, 0, fsize) == -1)
            goto done;
        shoff = e32.e_shoff;
        shnum = e32.e_shnum;
        shstrndx = e32.e_shstrndx;
        shentsize = e32.e_shentsize;
    }
    if (shoff == 0 ||
        shentsize != (is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)))
        goto done;
    /* Many sections: the real counts are in section header 0. */
    if (shnum == 0 || shstrndx == SHN_XINDEX) {
        if (read_sh(fd, is64, shoff, 0, fsize, &sh) == -1)
            goto done;
        if (shnum == 0)
            shnum = sh.size;
        if (shstrndx == SHN_XINDEX)
            shstrndx = sh.link;
    }
    if (shnum == 0 || shnum > TASKPROG_MAX_SHNUM || shstrndx >= shnum ||
        read_sh(fd, is64, shoff, (uint32_t)shstrndx, fsize, &strsh) == -1 ||
        strsh.size == 0 || strsh.size > TASKPROG_MAX_SHSTRTAB)
        goto done;
    names = xmalloc((size_t)strsh.size + 1);
    if (read_at(fd, names, (size_t)strsh.size, strsh.offset, fsize) == -1)
        goto done;
    names[strsh.size] = '\0';
    for (i = 1; i < shnum && !found; i++) {
        if (read_sh(fd, is64, shoff, i, fsize, &sh) == -1)
            goto done;
        /* A task program names at least one task in it. */
        if (sh.name < strsh.size &&
            strcmp(names + sh.name, TASKPROG_SECTION) == 0 && sh.size > 0)
            found = 1;
    }
done:
    free(names);
    close(fd);
    return found;
}

int
taskprog_find(const char *prog, char *path, size_t pathlen)
{
    const char *dirs, *p, *colon;
    size_t dlen;

    /* As execvp: a name with a slash is a path; otherwise PATH. */
    if (strchr(prog, '/') != NULL) {
        if ((size_t)snprintf(path, pathlen, "%s", prog) >= pathlen)
            return -1;
        return 0;
    }
    if ((dirs = getenv("PATH")) == NULL)
        dirs = "/usr/local/bin:/usr/bin:/bin";
    for (p = dirs;; p = colon + 1) {
        colon = strchr(p, ':');
        dlen = colon != NULL ? (size_t)(colon - p) : strlen(p);
        if ((size_t)snprintf(path, pathlen, "%.*s%s%s", (int)dlen, p,
                             dlen > 0 ? "/" : "", prog) < pathlen &&
            access(path, X_OK) == 0)
            return 0;
        if (colon == NULL)
            return -1;
    }
}
