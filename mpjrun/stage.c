/*
 * The files a job takes along: the program (when given as a path) and
 * every -l file.  Each is hashed once here; peers that already hold the
 * content are not sent it again.  Sending reads the file in chunks as the
 * connection drains: never a whole file in memory.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpjrun.h"
#include "xmalloc.h"

#define STAGE_READ (WIRE_MAX_CHUNK)

struct stage_send {
    const struct stage_file *f;
    int fd;
    uint64_t sent;
};

/* What a path is, for a refusal. */
static const char *
stage_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a file";
}

/* Hash a file and note its size and whether it is executable. */
static int
stage_hash(struct stage_file *f, char *err, size_t errlen)
{
    struct sec_hasher h;
    struct stat st;
    uint8_t *buf;
    ssize_t n;
    int fd;

    /* Only regular files: opening a FIFO would wait for a writer
     * forever, a device never ends.  Checked before opening, and again on
     * what was opened (without blocking) in case it was swapped. */
    if (stat(f->path, &st) == -1) {
        snprintf(err, errlen, "%s: %s", f->path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file (%s)", f->path,
                 stage_kind(st.st_mode));
        return -1;
    }
    if ((fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1) {
        snprintf(err, errlen, "%s: %s", f->path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", f->path);
        close(fd);
        return -1;
    }
    (void)fcntl(fd, F_SETFL, 0);
    f->executable = (st.st_mode & 0111) != 0;
    buf = xmalloc(1 << 20);
    sec_hasher_init(&h, NULL);
    f->size = 0;
    while ((n = read(fd, buf, 1 << 20)) > 0) {
        sec_hasher_update(&h, buf, (size_t)n);
        f->size += (uint64_t)n;
    }
    free(buf);
    close(fd);
    if (n == -1) {
        snprintf(err, errlen, "%s: %s", f->path, strerror(errno));
        return -1;
    }
    sec_hasher_final(&h, f->hash);
    return 0;
}

int
stage_prepare(const struct job_spec *js, struct stage_file **files, int *n,
              int *prog, char *err, size_t errlen)
{
    struct stage_file *fs;
    const char *base;
    int i, k = 0, j;

    *prog = -1;
    fs = xcalloc((size_t)js->nfiles + 1, sizeof *fs);
    /* A program given as a path travels; a bare name is found on the
     * peer's PATH. */
    if (strchr(js->argv[0], '/') != NULL) {
        fs[k].path = xstrdup(js->argv[0]);
        *prog = k++;
    }
    for (i = 0; i < js->nfiles; i++)
        fs[k++].path = xstrdup(js->files[i]);
    for (i = 0; i < k; i++) {
        base = strrchr(fs[i].path, '/');
        base = base != NULL ? base + 1 : fs[i].path;
        if (!codec_valid_basename(base)) {
            snprintf(err, errlen, "%s: not a file name that can be staged",
                     fs[i].path);
            goto fail;
        }
        snprintf(fs[i].name, sizeof fs[i].name, "%s", base);
        for (j = 0; j < i; j++)
            if (strcmp(fs[j].name, fs[i].name) == 0) {
                snprintf(err, errlen,
                         "%s and %s would have the same name in the job "
                         "directory",
                         fs[j].path, fs[i].path);
                goto fail;
            }
        if (stage_hash(&fs[i], err, errlen) == -1)
            goto fail;
    }
    if (*prog >= 0 && !fs[*prog].executable) {
        snprintf(err, errlen, "%s: not executable", fs[*prog].path);
        goto fail;
    }
    *files = fs;
    *n = k;
    return 0;
fail:
    stage_free(fs, k);
    return -1;
}

void
stage_free(struct stage_file *fs, int n)
{
    int i;

    if (fs == NULL)
        return;
    for (i = 0; i < n; i++)
        free(fs[i].path);
    free(fs);
}

/* Sending one file over a channel without holding it in memory. */
static struct stage_send *
stage_send_open(const struct stage_file *f, char *err, size_t errlen)
{
    struct stage_send *ss;
    int fd;

    if ((fd = open(f->path, O_RDONLY | O_CLOEXEC)) == -1) {
        snprintf(err, errlen, "%s: %s", f->path, strerror(errno));
        return NULL;
    }
    ss = xcalloc(1, sizeof *ss);
    ss->f = f;
    ss->fd = fd;
    return ss;
}

/* Queue chunks while the channel's backlog allows; returns bytes queued
 * now, and sets *done when the whole file is queued.  -1 with err on a
 * read error (or a file that changed size). */
static long
stage_send_pump(struct stage_send *ss, struct channel *ch, int *done, char *err,
                size_t errlen)
{
    uint8_t buf[STAGE_READ];
    struct msg m;
    long queued = 0;
    ssize_t n;

    *done = 0;
    while (channel_output_len(ch) < 2 * CHANNEL_DRAIN_LOW) {
        n = pread(ss->fd, buf, sizeof buf, (off_t)ss->sent);
        if (n == -1) {
            snprintf(err, errlen, "%s: %s", ss->f->path, strerror(errno));
            return -1;
        }
        if (n == 0) {
            if (ss->sent != ss->f->size) {
                snprintf(err, errlen, "%s changed while being staged",
                         ss->f->path);
                return -1;
            }
            *done = 1;
            return queued;
        }
        memset(&m, 0, sizeof m);
        m.type = MSG_FILE_CHUNK;
        memcpy(m.u.data.hash, ss->f->hash, SEC_HASH_LEN);
        m.u.data.data = buf;
        m.u.data.len = (size_t)n;
        if (channel_send(ch, &m) == -1) {
            snprintf(err, errlen, "connection lost while staging");
            return -1;
        }
        ss->sent += (uint64_t)n;
        queued += n;
        if (ss->sent > ss->f->size) {
            snprintf(err, errlen, "%s changed while being staged", ss->f->path);
            return -1;
        }
    }
    return queued;
}

static void
stage_send_close(struct stage_send *ss)
{
    if (ss == NULL)
        return;
    close(ss->fd);
    free(ss);
}

/* --- one peer's copy of every file -------------------------------------- */

enum stage_fstate { SF_OFFERED, SF_NEEDED, SF_SENDING, SF_DONE };

struct stage_peer {
    const struct stage_file *files;
    int nfiles;
    enum stage_fstate *st;
    int sending; /* file being streamed, -1 none */
    struct stage_send *ss;
};

struct stage_peer *
stage_peer_new(const struct stage_file *files, int nfiles, struct channel *ch)
{
    struct stage_peer *sp;
    struct msg m;
    int i;

    sp = xcalloc(1, sizeof *sp);
    sp->files = files;
    sp->nfiles = nfiles;
    sp->st = xcalloc((size_t)nfiles + 1, sizeof *sp->st);
    sp->sending = -1;
    for (i = 0; i < nfiles; i++) {
        memset(&m, 0, sizeof m);
        m.type = MSG_FILE_OFFER;
        memcpy(m.u.file.hash, files[i].hash, SEC_HASH_LEN);
        m.u.file.size = files[i].size;
        channel_send(ch, &m);
    }
    return sp;
}

void
stage_peer_free(struct stage_peer *sp)
{
    if (sp == NULL)
        return;
    stage_send_close(sp->ss);
    free(sp->st);
    free(sp);
}

int
stage_peer_reply(struct stage_peer *sp, const struct msg *m, uint64_t *needed,
                 char *err, size_t errlen)
{
    int i;

    for (i = 0; i < sp->nfiles; i++)
        if (memcmp(sp->files[i].hash, m->u.file.hash, SEC_HASH_LEN) == 0)
            break;
    if (i == sp->nfiles)
        return 0; /* not ours: ignored */
    if (m->type == MSG_FILE_NEED) {
        if (sp->st[i] != SF_OFFERED)
            return 0;
        sp->st[i] = m->u.file.flag ? SF_NEEDED : SF_DONE;
        if (m->u.file.flag && needed != NULL)
            *needed += sp->files[i].size;
        return 0;
    }
    if (!m->u.file.flag) {
        snprintf(err, errlen, "staging %s failed: %s", sp->files[i].name,
                 m->u.file.reason);
        return -1;
    }
    sp->st[i] = SF_DONE;
    return 0;
}

int
stage_peer_pump(struct stage_peer *sp, struct channel *ch, uint64_t *sent,
                char *err, size_t errlen)
{
    char why[256];
    long n;
    int i, done;

    if (sp->ss == NULL) {
        for (i = 0; i < sp->nfiles; i++)
            if (sp->st[i] == SF_NEEDED)
                break;
        if (i < sp->nfiles) {
            if ((sp->ss = stage_send_open(&sp->files[i], why, sizeof why)) ==
                NULL) {
                snprintf(err, errlen, "staging %s failed: %s",
                         sp->files[i].name, why);
                return -1;
            }
            sp->sending = i;
            sp->st[i] = SF_SENDING;
        }
    }
    if (sp->ss != NULL) {
        n = stage_send_pump(sp->ss, ch, &done, why, sizeof why);
        if (n < 0) {
            snprintf(err, errlen, "staging %s failed: %s",
                     sp->files[sp->sending].name, why);
            return -1;
        }
        if (sent != NULL)
            *sent += (uint64_t)n;
        if (done) {
            stage_send_close(sp->ss);
            sp->ss = NULL; /* the peer's FileDone finishes the file */
        }
        return 0;
    }
    for (i = 0; i < sp->nfiles; i++)
        if (sp->st[i] != SF_DONE)
            return 0;
    return 1;
}
