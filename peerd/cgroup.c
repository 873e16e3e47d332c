/*
 * Control groups of jobs and processes.  Each job on this peer gets a
 * cgroup, and each of its processes a leaf inside it, so that everything
 * a process starts, however it forks or changes session, stays countable
 * and killable; the leaf carries the per-slot limits (memory, processes),
 * and its peak memory and limit events are read when its process ends.
 * A job is killed with cgroup.kill (v2), else frozen and killed (v1
 * freezer), else signalled until nothing is listed.  The instance they
 * live in (the hierarchies, peerd's subtree, the CPU weight of guest
 * work, recovery) is cgroup_setup.c's; the three cgroup files are the
 * only ones that know control groups.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup_fs.h"
#include "log.h"
#include "monotime.h"
#include "peerd.h"
#include "xmalloc.h"

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

