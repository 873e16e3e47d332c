/*
 * peerd's instance of control groups: which hierarchies there are, our
 * subtree in each, its mark, the CPU weight of guest work, and what an
 * earlier life or a peerd gone left behind (cgroup.c has the jobs'
 * and processes' nodes inside it; cgroup_fs.h what both share).
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
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup_fs.h"
#include "log.h"
#include "monotime.h"
#include "peerd.h"
#include "xmalloc.h"

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

/* Our PID namespace (its inode): a pid names a process only in the
 * namespace it was read in.  0 when /proc does not say. */
static unsigned long
cg_pidns(void)
{
    struct stat st;

    return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long)st.st_ino
                                               : 0;
}

/* Our mark: CG_OWNER "PID.PIDNS". */
static void
cg_mark_name(char *mark, size_t len)
{
    snprintf(mark, len, CG_OWNER "%ld.%lu", (long)getpid(), cg_pidns());
}

/* The peerd an instance directory is of: 1 alive, 0 gone, -1 unmarked
 * (made before marks were, or this very moment: left alone).  A mark
 * from another PID namespace (a peerd in a container that shares our
 * cgroup tree) cannot be judged from here: alive, as far as we know; so
 * is one without its namespace (an older peerd's).  Marks other than
 * keep's are removed when remove is set. */
static int
cg_owner(const struct cgroups *cgs, const char *dir, const char *keep,
         int remove)
{
    char path[PATH_MAX], extra;
    unsigned long ns, mine = cg_pidns();
    struct dirent *de;
    int state = -1;
    long pid;
    DIR *d;

    if ((d = opendir(dir)) == NULL)
        return -1;
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, CG_OWNER, strlen(CG_OWNER)) != 0 ||
            (keep != NULL && strcmp(de->d_name, keep) == 0))
            continue;
        if (sscanf(de->d_name + strlen(CG_OWNER), "%ld.%lu%c", &pid, &ns,
                   &extra) != 2 || mine == 0 || ns != mine ||
            cg_same_program(pid))
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
    char mark[64], path[PATH_MAX];
    int h;

    cg_mark_name(mark, sizeof mark);
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
    char mark[64], path[PATH_MAX];
    int i;

    if (cgs == NULL)
        return;
    /* Our instance directories go with us: each peerd start may name a
     * new one (an embedded cluster does, every run), and a kernel holds
     * at most about 65,000 cgroups.  One still holding a job's cgroup
     * (not empty) stays, for cgroup_recover at the next start or
     * cg_sweep_orphans of another peerd. */
    cg_mark_name(mark, sizeof mark);
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
