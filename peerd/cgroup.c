/*
 * Control groups: the only file that knows them.  Each job on this peer
 * gets a cgroup, and each of its processes a leaf inside it, so that
 * everything a process starts, however it forks or changes session, stays
 * countable and killable; the leaf carries the per-slot limits (memory,
 * processes), the instance above all jobs carries the CPU weight of guest
 * work, and the leaf's peak memory and limit events are read when its
 * process ends.
 *
 * Three layouts are met in the wild and all are handled:
 *  - the unified (v2) hierarchy alone, what current distributions mount:
 *    controllers are enabled down our subtree (cgroup.subtree_control)
 *    and a job is killed with cgroup.kill;
 *  - v1 controllers alone: memory, pids and cpu each in their own
 *    hierarchy, and the freezer to stop a job before killing what is in it;
 *  - both ("hybrid"): v1 controllers for limits next to a v2 mount that
 *    offers cgroup.kill and cgroup.freeze without controllers.
 * A controller is used from v2 when v2 offers it, else from v1 when
 * mounted.  The subtree is NAME under peerd's own cgroup of each
 * hierarchy (jobs/ of one peerd never meet another's), so a restarted
 * peerd finds what an earlier life left and clears it; an instance
 * whose peerd is gone and does not come back (another state directory,
 * as every embedded cluster and test has) is cleared by the next peerd
 * that starts beside it (cg_sweep_orphans).
 *
 * Everything is read from and written to files, from a file-system root
 * that a unit test may point at a fake tree (plain directories and files).
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "monotime.h"
#include "peerd.h"
#include "xmalloc.h"

#define CG_MAX_HIER 5          /* v2, memory, pids, cpu, freezer */
#define CG_KILL_WAIT_MS 2000   /* freezing, or emptying after a kill */
/* An instance's mark: an empty child peerd.PID names the peerd it is
 * of, so that one gone without closing (SIGKILL, a crash) is known. */
#define CG_OWNER "peerd."

enum cg_ctl { CG_MEMORY, CG_PIDS, CG_CPU, CG_NCTL };
static const char *const cg_ctl_name[CG_NCTL] = {"memory", "pids", "cpu"};

/* Where a controller (or the killing) comes from. */
enum cg_from { CG_NONE, CG_V1, CG_V2 };

struct cgroups {
    char *fsroot;    /* "" on a real system */
    int fake;        /* a test's tree: files may be created */
    char *v2;        /* our instance directory in the v2 tree, or NULL */
    int v2_kill;     /* cgroup.kill available */
    int v2_freeze;   /* cgroup.freeze available */
    enum cg_from from[CG_NCTL];
    char *v1[CG_NCTL]; /* instance directory in each v1 controller */
    char *freezer;     /* v1 freezer instance directory, when it kills */
    /* The distinct instance directories (a v1 mount may hold several
     * controllers), each a hierarchy a process must join. */
    char *hier[CG_MAX_HIER];
    int nhier;
    char desc[200];
};

struct cgroup {
    struct cgroups *cgs;
    struct cgroup *parent;
    char *rel;                          /* below the instance: job[/proc] */
    char *procs[CG_MAX_HIER + 1];       /* cgroup.procs files, NULL-ended */
};

static int cg_walk_pids(const char *, int, void (*)(pid_t));
static void cg_sigkill(pid_t);
static void cg_sleep_ms(int);
static int cg_rmtree(const struct cgroups *, const char *, int);

/* dir/file into path; -1 (ENAMETOOLONG) if it does not fit. */
static int
cg_path(char *path, size_t len, const char *dir, const char *file)
{
    int n = snprintf(path, len, "%s/%s", dir, file);

    if (n < 0 || (size_t)n >= len) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

/* Write a whole small value to a cgroup file. */
static int
cg_write(const struct cgroups *cgs, const char *dir, const char *file,
         const char *value)
{
    char path[PATH_MAX];
    size_t len = strlen(value);
    ssize_t n;
    int fd;

    if (cg_path(path, sizeof path, dir, file) == -1)
        return -1;
    fd = open(path, O_WRONLY | O_CLOEXEC | (cgs->fake ? O_CREAT | O_TRUNC : 0),
              0644);
    if (fd == -1)
        return -1;
    /* A limit being set may have to reclaim memory first, and a signal
     * (SIGCHLD) can interrupt that: try again. */
    do
        n = write(fd, value, len);
    while (n == -1 && errno == EINTR);
    if (close(fd) == -1 || n != (ssize_t)len)
        return -1;
    return 0;
}

/* Read a small cgroup file into buf (NUL-terminated); -1 if missing. */
static int
cg_read(const char *dir, const char *file, char *buf, size_t len)
{
    char path[PATH_MAX];
    ssize_t n;
    int fd;

    if (cg_path(path, sizeof path, dir, file) == -1)
        return -1;
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
        return -1;
    n = read(fd, buf, len - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return 0;
}

/* The value of "key N" in a flat-keyed file (memory.events, ...); 0 when
 * absent. */
static uint64_t
cg_read_key(const char *dir, const char *file, const char *key)
{
    char buf[2048], *p;
    size_t klen = strlen(key);

    if (cg_read(dir, file, buf, sizeof buf) == -1)
        return 0;
    for (p = buf; p != NULL && *p != '\0'; p = strchr(p, '\n')) {
        if (*p == '\n')
            p++;
        if (strncmp(p, key, klen) == 0 && p[klen] == ' ')
            return strtoull(p + klen + 1, NULL, 10);
    }
    return 0;
}

static int
cg_is_dir(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int
cg_exists(const char *dir, const char *file)
{
    char path[PATH_MAX];

    if (cg_path(path, sizeof path, dir, file) == -1)
        return 0;
    return access(path, F_OK) == 0;
}

/* rmdir; in a fake tree the files we wrote go first. */
static int
cg_rmdir(const struct cgroups *cgs, const char *dir)
{
    char path[PATH_MAX];
    struct dirent *de;
    DIR *d;

    if (rmdir(dir) == 0 || errno == ENOENT)
        return 0;
    if (!cgs->fake || errno != ENOTEMPTY || (d = opendir(dir)) == NULL)
        return -1;
    while ((de = readdir(d)) != NULL) {
        if (cg_path(path, sizeof path, dir, de->d_name) == -1)
            continue;
        if (de->d_type == DT_REG)
            (void)unlink(path);
    }
    closedir(d);
    return rmdir(dir);
}

/* peerd's own cgroup in the hierarchy that holds ctl ("" for v2), from
 * /proc/self/cgroup; NULL when it is not listed. */
static char *
cg_self_path(const struct cgroups *cgs, const char *ctl)
{
    char path[PATH_MAX], line[1024], *a, *b, *nl, *tok, *save, *found = NULL;
    FILE *f;

    snprintf(path, sizeof path, "%s/proc/self/cgroup", cgs->fsroot);
    if ((f = fopen(path, "re")) == NULL)
        return NULL;
    while (found == NULL && fgets(line, sizeof line, f) != NULL) {
        if ((nl = strchr(line, '\n')) != NULL)
            *nl = '\0';
        if ((a = strchr(line, ':')) == NULL || (b = strchr(a + 1, ':')) == NULL)
            continue;
        *b = '\0';
        if (ctl[0] == '\0') {
            if (line[0] == '0' && a == line + 1 && a[1] == '\0')
                found = xstrdup(b + 1);
            continue;
        }
        for (tok = strtok_r(a + 1, ",", &save); tok != NULL;
             tok = strtok_r(NULL, ",", &save))
            if (strcmp(tok, ctl) == 0)
                found = xstrdup(b + 1);
    }
    fclose(f);
    return found;
}

/* The mount point (under fsroot) of the v2 tree (ctl NULL) or of the v1
 * hierarchy holding ctl; NULL when none is mounted. */
static char *
cg_mount(const struct cgroups *cgs, const char *ctl)
{
    char path[PATH_MAX], line[2048], dev[256], dir[1024], type[64];
    char opts[1024], *tok, *save, *found = NULL;
    FILE *f;

    snprintf(path, sizeof path, "%s/proc/self/mounts", cgs->fsroot);
    if ((f = fopen(path, "re")) == NULL)
        return NULL;
    while (found == NULL && fgets(line, sizeof line, f) != NULL) {
        if (sscanf(line, "%255s %1023s %63s %1023s", dev, dir, type, opts) !=
            4)
            continue;
        if (ctl == NULL) {
            if (strcmp(type, "cgroup2") == 0)
                xasprintf(&found, "%s%s", cgs->fsroot, dir);
            continue;
        }
        if (strcmp(type, "cgroup") != 0)
            continue;
        for (tok = strtok_r(opts, ",", &save); tok != NULL;
             tok = strtok_r(NULL, ",", &save))
            if (strcmp(tok, ctl) == 0)
                xasprintf(&found, "%s%s", cgs->fsroot, dir);
    }
    fclose(f);
    return found;
}

/* Make dir (and its parents up from base).  0 if it exists after. */
static int
cg_mkdir(const char *dir)
{
    return mkdir(dir, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

/* Our instance directory in a hierarchy mounted at mnt, where peerd's own
 * cgroup is self: mnt/self/name, made if needed.  NULL if it cannot be. */
static char *
cg_instance(const char *mnt, const char *self, const char *name)
{
    char *dir;

    if (strcmp(self, "/") == 0)
        self = "";
    xasprintf(&dir, "%s%s/%s", mnt, self, name);
    if (cg_mkdir(dir) == -1 || access(dir, W_OK) == -1) {
        free(dir);
        return NULL;
    }
    return dir;
}

/* Enable the v2 controllers we use in dir's subtree_control. */
static int
cg_v2_delegate(struct cgroups *cgs, const char *dir)
{
    char buf[128] = "";
    size_t len = 0;
    int i;

    for (i = 0; i < CG_NCTL; i++)
        if (cgs->from[i] == CG_V2)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s+%s",
                                    len ? " " : "", cg_ctl_name[i]);
    return buf[0] == '\0' ? 0 : cg_write(cgs, dir, "cgroup.subtree_control", buf);
}

/* v2: our instance under peerd's own cgroup.  With controllers to use,
 * the own cgroup must hold no process of its own (the "no internal
 * processes" rule): peerd moves itself into a leaf beside the instance,
 * as a service with Delegate=yes expects. */
static int
cg_setup_v2(struct cgroups *cgs, const char *mnt, const char *self,
            const char *name, char *why, size_t whylen)
{
    char avail[512], *own, *tok, *save, *leaf;
    int i, want = 0;

    if (strcmp(self, "/") == 0)
        self = "";
    xasprintf(&own, "%s%s", mnt, self);
    if (cg_read(own, "cgroup.controllers", avail, sizeof avail) == -1)
        avail[0] = '\0';
    for (tok = strtok_r(avail, " \n", &save); tok != NULL;
         tok = strtok_r(NULL, " \n", &save))
        for (i = 0; i < CG_NCTL; i++)
            if (strcmp(tok, cg_ctl_name[i]) == 0) {
                cgs->from[i] = CG_V2;
                want = 1;
            }
    if (want && self[0] != '\0') {
        /* Not the root: step aside into a leaf of our own. */
        xasprintf(&leaf, "%s/peerd", own);
        if (cg_mkdir(leaf) == -1 || cg_write(cgs, leaf, "cgroup.procs", "0") ==
                                        -1) {
            snprintf(why, whylen, "cannot move peerd into %s: %s", leaf,
                     strerror(errno));
            want = 0;
        }
        free(leaf);
    }
    if (want && cg_v2_delegate(cgs, own) == -1) {
        snprintf(why, whylen,
                 "cannot enable controllers in %s (%s); start peerd in a "
                 "cgroup of its own (systemd: Delegate=yes)",
                 own, strerror(errno));
        want = 0;
    }
    if (!want)
        for (i = 0; i < CG_NCTL; i++)
            if (cgs->from[i] == CG_V2)
                cgs->from[i] = CG_NONE;
    free(own);
    if ((cgs->v2 = cg_instance(mnt, self[0] ? self : "/", name)) == NULL)
        return -1;
    if (want && cg_v2_delegate(cgs, cgs->v2) == -1)
        log_warn("cgroup %s: enabling controllers", cgs->v2);
    cgs->v2_kill = cg_exists(cgs->v2, "cgroup.kill");
    cgs->v2_freeze = cg_exists(cgs->v2, "cgroup.freeze");
    return 0;
}

static void
cg_add_hier(struct cgroups *cgs, const char *dir)
{
    int i;

    for (i = 0; i < cgs->nhier; i++)
        if (strcmp(cgs->hier[i], dir) == 0)
            return;
    cgs->hier[cgs->nhier++] = xstrdup(dir);
}

/* Is pid a live process of our own program (a peerd; the unit test in
 * its fake tree)?  A pid reused by another program is not. */
static int
cg_same_program(long pid)
{
    char path[64], mine[32] = "", theirs[32] = "";
    FILE *f;

    if (pid <= 0 || (kill((pid_t)pid, 0) == -1 && errno != EPERM))
        return 0;
    if ((f = fopen("/proc/self/comm", "re")) != NULL) {
        (void)!fgets(mine, sizeof mine, f);
        fclose(f);
    }
    snprintf(path, sizeof path, "/proc/%ld/comm", pid);
    if ((f = fopen(path, "re")) != NULL) {
        (void)!fgets(theirs, sizeof theirs, f);
        fclose(f);
    }
    return mine[0] != '\0' && strcmp(mine, theirs) == 0;
}

/* The peerd an instance directory is of: 1 alive, 0 gone, -1 unmarked
 * (made before marks were, or this very moment: left alone).  Marks
 * other than keep's are removed when remove is set. */
static int
cg_owner(const struct cgroups *cgs, const char *dir, const char *keep,
         int remove)
{
    char path[PATH_MAX];
    struct dirent *de;
    int state = -1;
    DIR *d;

    if ((d = opendir(dir)) == NULL)
        return -1;
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, CG_OWNER, strlen(CG_OWNER)) != 0 ||
            (keep != NULL && strcmp(de->d_name, keep) == 0))
            continue;
        if (cg_same_program(atol(de->d_name + strlen(CG_OWNER))))
            state = 1;
        else if (state == -1)
            state = 0;
        if (remove && cg_path(path, sizeof path, dir, de->d_name) == 0)
            (void)cg_rmdir(cgs, path);
    }
    closedir(d);
    return state;
}

/* Our mark in each instance directory (and an earlier life's gone). */
static void
cg_mark(struct cgroups *cgs)
{
    char mark[32], path[PATH_MAX];
    int h;

    snprintf(mark, sizeof mark, CG_OWNER "%ld", (long)getpid());
    for (h = 0; h < cgs->nhier; h++) {
        (void)cg_owner(cgs, cgs->hier[h], mark, 1);
        if (cg_path(path, sizeof path, cgs->hier[h], mark) == 0 &&
            cg_mkdir(path) == -1)
            log_debug("cgroup %s: %s", path, strerror(errno));
    }
}

/* Instances beside ours (named alike up to the first '-') whose peerd
 * is gone: what their jobs left is killed and the directories removed.
 * The number removed. */
static int
cg_sweep_orphans(struct cgroups *cgs, const char *name)
{
    char parent[PATH_MAX], path[PATH_MAX];
    const char *dash = strchr(name, '-');
    size_t plen = dash != NULL ? (size_t)(dash - name) + 1 : 0;
    uint64_t until;
    struct dirent *de;
    int h, n = 0;
    DIR *d;

    for (h = 0; plen > 0 && h < cgs->nhier; h++) {
        snprintf(parent, sizeof parent, "%s", cgs->hier[h]);
        *strrchr(parent, '/') = '\0';
        if ((d = opendir(parent)) == NULL)
            continue;
        while ((de = readdir(d)) != NULL) {
            if (de->d_type != DT_DIR || strncmp(de->d_name, name, plen) != 0 ||
                strcmp(de->d_name, name) == 0 ||
                cg_path(path, sizeof path, parent, de->d_name) == -1 ||
                cg_owner(cgs, path, NULL, 0) != 0)
                continue;
            until = monotime_ms() + CG_KILL_WAIT_MS;
            while (cg_walk_pids(path, 0, cg_sigkill) > 0 &&
                   monotime_ms() < until)
                cg_sleep_ms(1);
            if (cg_rmtree(cgs, path, 0) == 0) {
                log_info("cgroup %s: left by a peerd that is gone: removed",
                         path);
                n++;
            } else
                log_warn("cgroup %s: left by a peerd that is gone", path);
        }
        closedir(d);
    }
    return n;
}

/* Held while instances are made, marked or swept: two peerds starting
 * at once must not take each other's new instance for an orphan.  -1
 * where there is no lock to take (not root; a fake tree without run/). */
static int
cg_lock(const struct cgroups *cgs)
{
    char path[PATH_MAX];
    int fd;

    snprintf(path, sizeof path, "%s/run/p2pmpi-cgroups.lock", cgs->fsroot);
    if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1)
        return -1;
    if (flock(fd, LOCK_EX) == -1) {
        close(fd);
        return -1;
    }
    return fd;
}

struct cgroups *
cgroup_open(const char *fsroot, const char *name, int cpu_weight, char *why,
            size_t whylen)
{
    struct cgroups *cgs;
    char *mnt, *self, w[32];
    int i, lock;

    cgs = xcalloc(1, sizeof *cgs);
    cgs->fsroot = xstrdup(fsroot != NULL ? fsroot : "");
    cgs->fake = cgs->fsroot[0] != '\0';
    why[0] = '\0';
    lock = cg_lock(cgs);
    if ((mnt = cg_mount(cgs, NULL)) != NULL &&
        (self = cg_self_path(cgs, "")) != NULL) {
        if (cg_setup_v2(cgs, mnt, self, name, why, whylen) == -1 &&
            why[0] == '\0')
            snprintf(why, whylen, "cgroup v2 at %s is not writable", mnt);
        free(self);
    }
    free(mnt);
    for (i = 0; i < CG_NCTL; i++) {
        if (cgs->from[i] != CG_NONE)
            continue;
        if ((mnt = cg_mount(cgs, cg_ctl_name[i])) != NULL &&
            (self = cg_self_path(cgs, cg_ctl_name[i])) != NULL) {
            if ((cgs->v1[i] = cg_instance(mnt, self, name)) != NULL)
                cgs->from[i] = CG_V1;
            free(self);
        }
        free(mnt);
    }
    if (cgs->v2 == NULL || !cgs->v2_kill) {
        if ((mnt = cg_mount(cgs, "freezer")) != NULL &&
            (self = cg_self_path(cgs, "freezer")) != NULL) {
            cgs->freezer = cg_instance(mnt, self, name);
            free(self);
        }
        free(mnt);
    }
    if (cgs->v2 != NULL)
        cg_add_hier(cgs, cgs->v2);
    for (i = 0; i < CG_NCTL; i++)
        if (cgs->from[i] == CG_V1)
            cg_add_hier(cgs, cgs->v1[i]);
    if (cgs->freezer != NULL)
        cg_add_hier(cgs, cgs->freezer);
    if (cgs->nhier == 0) {
        if (why[0] == '\0')
            snprintf(why, whylen, "no writable cgroup hierarchy");
        cgroup_close(cgs);
        if (lock != -1)
            close(lock);
        return NULL;
    }
    cg_mark(cgs);
    (void)cg_sweep_orphans(cgs, name);
    if (lock != -1)
        close(lock);
    /* Guest work as a whole weighs cpu_weight against the owner's 100. */
    if (cgs->from[CG_CPU] == CG_V2) {
        snprintf(w, sizeof w, "%d", cpu_weight);
        if (cg_write(cgs, cgs->v2, "cpu.weight", w) == -1)
            log_warn("cgroup %s: cpu.weight", cgs->v2);
    } else if (cgs->from[CG_CPU] == CG_V1) {
        snprintf(w, sizeof w, "%d", cpu_weight * 1024 / 100 < 2
                                        ? 2
                                        : cpu_weight * 1024 / 100);
        if (cg_write(cgs, cgs->v1[CG_CPU], "cpu.shares", w) == -1)
            log_warn("cgroup %s: cpu.shares", cgs->v1[CG_CPU]);
    }
    snprintf(cgs->desc, sizeof cgs->desc, "%s%s%s%s%s%s%s",
             cgs->v2 && cgs->v1[0] == NULL && cgs->v1[1] == NULL &&
                     cgs->v1[2] == NULL
                 ? "cgroup v2"
                 : cgs->v2 ? "cgroups v1+v2" : "cgroup v1",
             cgs->from[CG_MEMORY] != CG_NONE ? ", memory" : "",
             cgs->from[CG_PIDS] != CG_NONE ? ", pids" : "",
             cgs->from[CG_CPU] != CG_NONE ? ", cpu" : "",
             cgs->v2_kill       ? ", kill"
             : cgs->freezer     ? ", freezer"
                                : ", signals",
             why[0] ? "; " : "", why);
    return cgs;
}

void
cgroup_close(struct cgroups *cgs)
{
    char mark[32], path[PATH_MAX];
    int i;

    if (cgs == NULL)
        return;
    /* Our instance directories go with us: each peerd start may name a
     * new one (an embedded cluster does, every run), and a kernel holds
     * at most about 65,000 cgroups.  One still holding a job's cgroup
     * (not empty) stays, for cgroup_recover at the next start or
     * cg_sweep_orphans of another peerd. */
    snprintf(mark, sizeof mark, CG_OWNER "%ld", (long)getpid());
    for (i = 0; i < cgs->nhier; i++) {
        if (cg_path(path, sizeof path, cgs->hier[i], mark) == 0)
            (void)cg_rmdir(cgs, path);
        if (rmdir(cgs->hier[i]) == -1 && errno != ENOENT) {
            if (errno != ENOTEMPTY && errno != EBUSY)
                log_debug("cgroup %s: rmdir: %s", cgs->hier[i],
                          strerror(errno));
            else /* marked as of a peerd gone: for whoever comes next */
                (void)cg_mkdir(path);
        }
        free(cgs->hier[i]);
    }
    for (i = 0; i < CG_NCTL; i++)
        free(cgs->v1[i]);
    free(cgs->v2);
    free(cgs->freezer);
    free(cgs->fsroot);
    free(cgs);
}

const char *
cgroup_describe(const struct cgroups *cgs)
{
    return cgs->desc;
}

int
cgroup_has_limit(const struct cgroups *cgs, enum cg_limit what)
{
    switch (what) {
    case CG_LIMIT_MEMORY:
        return cgs->from[CG_MEMORY] != CG_NONE;
    case CG_LIMIT_PIDS:
        return cgs->from[CG_PIDS] != CG_NONE;
    default:
        return 0;
    }
}

/* A node's directory in hierarchy h. */
static void
cg_dir(const struct cgroup *cg, int h, char *out, size_t len)
{
    snprintf(out, len, "%s/%s", cg->cgs->hier[h], cg->rel);
}

/* A node's directory in the hierarchy of controller c (v2 or v1). */
static int
cg_ctl_dir(const struct cgroup *cg, enum cg_ctl c, char *out, size_t len)
{
    const struct cgroups *cgs = cg->cgs;

    if (cgs->from[c] == CG_V2)
        snprintf(out, len, "%s/%s", cgs->v2, cg->rel);
    else if (cgs->from[c] == CG_V1)
        snprintf(out, len, "%s/%s", cgs->v1[c], cg->rel);
    else
        return -1;
    return 0;
}

/* A node with directories in every hierarchy; NULL with why. */
static struct cgroup *
cg_node(struct cgroups *cgs, struct cgroup *parent, const char *name,
        int create, char *why, size_t whylen)
{
    struct cgroup *cg;
    char dir[PATH_MAX];
    int h;

    if (strchr(name, '/') != NULL || name[0] == '.' || name[0] == '\0') {
        snprintf(why, whylen, "bad cgroup name '%s'", name);
        return NULL;
    }
    cg = xcalloc(1, sizeof *cg);
    cg->cgs = cgs;
    cg->parent = parent;
    if (parent != NULL)
        xasprintf(&cg->rel, "%s/%s", parent->rel, name);
    else
        cg->rel = xstrdup(name);
    for (h = 0; h < cgs->nhier; h++) {
        cg_dir(cg, h, dir, sizeof dir);
        if (create && mkdir(dir, 0755) == -1 &&
            (errno != EEXIST || !cg_is_dir(dir))) {
            snprintf(why, whylen, "cgroup %s: %s", dir, strerror(errno));
            cgroup_free(cg);
            return NULL;
        }
        xasprintf(&cg->procs[h], "%s/cgroup.procs", dir);
    }
    return cg;
}

struct cgroup *
cgroup_job_new(struct cgroups *cgs, const char *name, char *why, size_t whylen)
{
    struct cgroup *cg;
    char dir[PATH_MAX];

    if ((cg = cg_node(cgs, NULL, name, 1, why, whylen)) == NULL)
        return NULL;
    if (cgs->v2 != NULL) {
        if (cg_path(dir, sizeof dir, cgs->v2, name) == -1 ||
            cg_v2_delegate(cgs, dir) == -1) {
            snprintf(why, whylen, "cgroup %s/%s: enabling controllers: %s",
                     cgs->v2, name, strerror(errno));
            cgroup_remove(cg);
            cgroup_free(cg);
            return NULL;
        }
    }
    return cg;
}

struct cgroup *
cgroup_proc_new(struct cgroup *job, const char *name, uint64_t mem_bytes,
                uint32_t max_pids, char *why, size_t whylen)
{
    struct cgroups *cgs = job->cgs;
    struct cgroup *cg;
    char dir[PATH_MAX], v[32];

    if ((cg = cg_node(cgs, job, name, 1, why, whylen)) == NULL)
        return NULL;
    if (mem_bytes > 0 && cg_ctl_dir(cg, CG_MEMORY, dir, sizeof dir) == 0) {
        snprintf(v, sizeof v, "%llu", (unsigned long long)mem_bytes);
        if (cg_write(cgs, dir,
                     cgs->from[CG_MEMORY] == CG_V2 ? "memory.max"
                                                   : "memory.limit_in_bytes",
                     v) == -1) {
            snprintf(why, whylen, "cgroup %s: memory limit: %s", dir,
                     strerror(errno));
            goto fail;
        }
        /* v2: no swapping around the limit either. */
        if (cgs->from[CG_MEMORY] == CG_V2 &&
            cg_exists(dir, "memory.swap.max"))
            (void)cg_write(cgs, dir, "memory.swap.max", "0");
    }
    if (max_pids > 0 && cg_ctl_dir(cg, CG_PIDS, dir, sizeof dir) == 0) {
        snprintf(v, sizeof v, "%u", max_pids);
        if (cg_write(cgs, dir, "pids.max", v) == -1) {
            snprintf(why, whylen, "cgroup %s: process limit: %s", dir,
                     strerror(errno));
            goto fail;
        }
    }
    return cg;
fail:
    cgroup_remove(cg);
    cgroup_free(cg);
    return NULL;
}

struct cgroup *
cgroup_adopt(struct cgroups *cgs, const char *name)
{
    char why[128];

    return cg_node(cgs, NULL, name, 0, why, sizeof why);
}

char *const *
cgroup_procs_files(const struct cgroup *cg)
{
    return (char *const *)cg->procs;
}

void
cgroup_free(struct cgroup *cg)
{
    int h;

    if (cg == NULL)
        return;
    for (h = 0; h < CG_MAX_HIER; h++)
        free(cg->procs[h]);
    free(cg->rel);
    free(cg);
}

/* Call fn on every pid listed in dir and below; the number listed. */
static int
cg_walk_pids(const char *dir, int depth, void (*fn)(pid_t))
{
    char path[PATH_MAX], *buf = NULL, *p, *end;
    size_t len = 0, cap = 0;
    struct dirent *de;
    int n = 0, fd;
    ssize_t r;
    DIR *d;
    long pid;

    if (cg_path(path, sizeof path, dir, "cgroup.procs") == 0 &&
        (fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
        /* The whole list first: a pid cut at a buffer's edge would be
         * two wrong pids, and these are killed. */
        for (;;) {
            if (cap - len < 4096) {
                cap = cap ? cap * 2 : 8192;
                buf = xreallocarray(buf, cap, 1);
            }
            r = read(fd, buf + len, cap - len - 1);
            if (r <= 0)
                break;
            len += (size_t)r;
        }
        close(fd);
        if (buf != NULL) {
            buf[len] = '\0';
            for (p = buf; *p != '\0'; p = end) {
                pid = strtol(p, &end, 10);
                if (end == p)
                    break;
                if (pid > 0) {
                    n++;
                    if (fn != NULL)
                        fn((pid_t)pid);
                }
                while (*end == '\n' || *end == ' ')
                    end++;
            }
            free(buf);
        }
    }
    if (depth > 4 || (d = opendir(dir)) == NULL)
        return n;
    while ((de = readdir(d)) != NULL)
        if (de->d_type == DT_DIR && de->d_name[0] != '.') {
            if (cg_path(path, sizeof path, dir, de->d_name) == -1)
                continue;
            n += cg_walk_pids(path, depth + 1, fn);
        }
    closedir(d);
    return n;
}

static void
cg_sigkill(pid_t pid)
{
    (void)kill(pid, SIGKILL);
}

static void
cg_sleep_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};

    nanosleep(&ts, NULL);
}

int
cgroup_empty(const struct cgroup *cg)
{
    const struct cgroups *cgs = cg->cgs;
    char dir[PATH_MAX], buf[256];
    int h;

    if (cgs->v2 != NULL) {
        if (cg_path(dir, sizeof dir, cgs->v2, cg->rel) == -1)
            return 0;
        if (cg_read(dir, "cgroup.events", buf, sizeof buf) == 0)
            return cg_read_key(dir, "cgroup.events", "populated") == 0;
    }
    for (h = 0; h < cgs->nhier; h++) {
        cg_dir(cg, h, dir, sizeof dir);
        if (cg_walk_pids(dir, 0, NULL) > 0)
            return 0;
    }
    return 1;
}

int
cgroup_kill(struct cgroup *cg)
{
    struct cgroups *cgs = cg->cgs;
    char dir[PATH_MAX], state[32];
    uint64_t until;
    int h, rounds;

    if (cgs->v2_kill) {
        if (cg_path(dir, sizeof dir, cgs->v2, cg->rel) == -1)
            return -1;
        if (cg_write(cgs, dir, "cgroup.kill", "1") == 0)
            return 0;
        if (errno == ENOENT)
            return 0; /* already gone */
        log_warn("cgroup %s: cgroup.kill", dir);
    }
    if (cgs->freezer != NULL) {
        /* Frozen, nothing can fork a successor while we kill. */
        if (cg_path(dir, sizeof dir, cgs->freezer, cg->rel) == -1)
            return -1;
        if (cg_write(cgs, dir, "freezer.state", "FROZEN") == 0) {
            until = monotime_ms() + CG_KILL_WAIT_MS;
            while (cg_read(dir, "freezer.state", state, sizeof state) == 0 &&
                   strncmp(state, "FROZEN", 6) != 0 && monotime_ms() < until)
                cg_sleep_ms(1);
            cg_walk_pids(dir, 0, cg_sigkill);
            (void)cg_write(cgs, dir, "freezer.state", "THAWED");
            return 0;
        }
    }
    /* Signals alone: repeat until nothing is listed (a fork racing a pass
     * is caught by the next; the pids limit bounds how many). */
    for (rounds = 0; rounds < 100; rounds++) {
        int n = 0;

        for (h = 0; h < cgs->nhier; h++) {
            cg_dir(cg, h, dir, sizeof dir);
            n += cg_walk_pids(dir, 0, cg_sigkill);
        }
        if (n == 0)
            break;
        cg_sleep_ms(1);
    }
    return 0;
}

int
cgroup_freeze(struct cgroup *cg, int frozen)
{
    struct cgroups *cgs = cg->cgs;
    char dir[PATH_MAX];

    if (cgs->v2_freeze) {
        if (cg_path(dir, sizeof dir, cgs->v2, cg->rel) == -1)
            return -1;
        return cg_write(cgs, dir, "cgroup.freeze", frozen ? "1" : "0");
    }
    if (cgs->freezer != NULL) {
        if (cg_path(dir, sizeof dir, cgs->freezer, cg->rel) == -1)
            return -1;
        return cg_write(cgs, dir, "freezer.state",
                        frozen ? "FROZEN" : "THAWED");
    }
    errno = ENOTSUP;
    return -1;
}

/* Remove the node's directories, children first (what the unit test's
 * fake tree and a recovered job's unknown leaves need). */
static int
cg_rmtree(const struct cgroups *cgs, const char *dir, int depth)
{
    char path[PATH_MAX];
    struct dirent *de;
    DIR *d;
    int rc = 0;

    if (depth < 4 && (d = opendir(dir)) != NULL) {
        while ((de = readdir(d)) != NULL)
            if (de->d_type == DT_DIR && de->d_name[0] != '.') {
                if (cg_path(path, sizeof path, dir, de->d_name) == -1)
                    continue;
                if (cg_rmtree(cgs, path, depth + 1) == -1)
                    rc = -1;
            }
        closedir(d);
    }
    if (cg_rmdir(cgs, dir) == -1)
        rc = -1;
    return rc;
}

int
cgroup_remove(struct cgroup *cg)
{
    char dir[PATH_MAX];
    int h, rc = 0;

    for (h = 0; h < cg->cgs->nhier; h++) {
        cg_dir(cg, h, dir, sizeof dir);
        if (cg_rmtree(cg->cgs, dir, 0) == -1)
            rc = -1;
    }
    return rc;
}

int
cgroup_kill_wait(struct cgroup *cg, int wait_ms)
{
    uint64_t until = monotime_ms() + (uint64_t)wait_ms;

    cgroup_kill(cg);
    while (!cgroup_empty(cg)) {
        if (monotime_ms() >= until)
            return -1;
        cg_sleep_ms(1);
    }
    return 0;
}

uint64_t
cgroup_cpu_usage_us(const struct cgroups *cgs)
{
    if (cgs->v2 == NULL || !cg_exists(cgs->v2, "cpu.stat"))
        return UINT64_MAX;
    return cg_read_key(cgs->v2, "cpu.stat", "usage_usec");
}

uint64_t
cgroup_mem_peak(const struct cgroup *cg)
{
    char dir[PATH_MAX], buf[64];

    if (cg_ctl_dir(cg, CG_MEMORY, dir, sizeof dir) == -1)
        return 0;
    if (cg_read(dir,
                cg->cgs->from[CG_MEMORY] == CG_V2 ? "memory.peak"
                                                  : "memory.max_usage_in_bytes",
                buf, sizeof buf) == -1)
        return 0;
    return strtoull(buf, NULL, 10);
}

enum cg_limit
cgroup_limit_hit(const struct cgroup *cg)
{
    const struct cgroups *cgs = cg->cgs;
    char dir[PATH_MAX];

    if (cg_ctl_dir(cg, CG_MEMORY, dir, sizeof dir) == 0 &&
        cg_read_key(dir,
                    cgs->from[CG_MEMORY] == CG_V2 ? "memory.events"
                                                  : "memory.oom_control",
                    "oom_kill") > 0)
        return CG_LIMIT_MEMORY;
    if (cg_ctl_dir(cg, CG_PIDS, dir, sizeof dir) == 0 &&
        cg_read_key(dir, "pids.events", "max") > 0)
        return CG_LIMIT_PIDS;
    return CG_LIMIT_NONE;
}

int
cgroup_recover(struct cgroups *cgs)
{
    struct cgroup *cg;
    struct dirent *de;
    int h, n = 0;
    DIR *d;

    /* Every hierarchy: a job's directory may be left in one only. */
    for (h = 0; h < cgs->nhier; h++) {
        if ((d = opendir(cgs->hier[h])) == NULL)
            continue;
        while ((de = readdir(d)) != NULL) {
            if (de->d_type != DT_DIR || de->d_name[0] == '.' ||
                strncmp(de->d_name, CG_OWNER, strlen(CG_OWNER)) == 0)
                continue;
            if ((cg = cgroup_adopt(cgs, de->d_name)) == NULL)
                continue;
            if (cgroup_kill_wait(cg, CG_KILL_WAIT_MS) == -1)
                log_warnx("cgroup %s: processes of an earlier life survive "
                          "a kill",
                          de->d_name);
            if (cgroup_remove(cg) == 0)
                n++;
            cgroup_free(cg);
        }
        closedir(d);
    }
    return n;
}
