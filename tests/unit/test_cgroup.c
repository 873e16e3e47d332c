/*
 * The cgroup layer against fake trees: plain directories and files laid
 * out as each kind of machine mounts them (v2 alone, at the root or under
 * a service; v1 controllers alone; both), with /proc/self/mounts and
 * /proc/self/cgroup to match.  Checks what is written where: limits,
 * controllers enabled, peerd stepping aside into a leaf, the way a job is
 * killed, what is read back, and what is removed.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "peerd.h"
#include "test.h"

static char root[256];

static int
rm_cb(const char *p, const struct stat *st, int f, struct FTW *w)
{
    return remove(p);
}

static void
fake_reset(void)
{
    if (root[0] != '\0')
        nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
    snprintf(root, sizeof root, "/tmp/p2p-cgtest.XXXXXX");
    if (mkdtemp(root) == NULL)
        abort();
}

/* mkdir -p root/rel */
static void
fake_dir(const char *rel)
{
    char path[512], *p;

    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    mkdir(path, 0755);
}

static void
fake_write(const char *rel, const char *text)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", root, rel);
    if ((f = fopen(path, "w")) == NULL)
        abort();
    fputs(text, f);
    fclose(f);
}

/* The content of root/rel ("" when missing), trailing newline cut. */
static const char *
fake_read(const char *rel)
{
    static char buf[512];
    char path[512];
    size_t n = 0;
    FILE *f;

    buf[0] = '\0';
    snprintf(path, sizeof path, "%s/%s", root, rel);
    if ((f = fopen(path, "r")) != NULL) {
        n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
    if (n > 0 && buf[n - 1] == '\n')
        buf[n - 1] = '\0';
    return buf;
}

static int
fake_exists(const char *rel)
{
    char path[512];

    snprintf(path, sizeof path, "%s/%s", root, rel);
    return access(path, F_OK) == 0;
}

static void
fake_mounts(const char *text)
{
    fake_dir("proc/self");
    fake_write("proc/self/mounts", text);
}

/* The unified hierarchy alone, at the root, with every controller. */
static void
layout_v2(const char *self)
{
    char rel[256];

    fake_mounts("proc /proc proc rw 0 0\n"
                "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n");
    snprintf(rel, sizeof rel, "0::%s\n", self);
    fake_write("proc/self/cgroup", rel);
    snprintf(rel, sizeof rel, "sys/fs/cgroup%s", self);
    fake_dir(rel);
    snprintf(rel, sizeof rel, "sys/fs/cgroup%s/cgroup.controllers",
             strcmp(self, "/") == 0 ? "" : self);
    fake_write(rel, "cpuset cpu io memory hugetlb pids rdma misc\n");
    fake_write("sys/fs/cgroup/cgroup.controllers",
               "cpuset cpu io memory hugetlb pids rdma misc\n");
}

static void
t_v2_root(void)
{
    struct cgroups *cgs;
    struct cgroup *job, *proc;
    char why[256];
    char *const *files;

    fake_reset();
    layout_v2("/");
    /* cgroup.kill shows where the kernel has it; here it must be made. */
    fake_dir("sys/fs/cgroup/inst");
    fake_write("sys/fs/cgroup/inst/cgroup.kill", "");
    cgs = cgroup_open(root, "inst", 20, why, sizeof why);
    if (!CHECK(cgs != NULL))
        return;
    CHECK_CONTAINS(cgroup_describe(cgs), "cgroup v2");
    CHECK_CONTAINS(cgroup_describe(cgs), "memory, pids, cpu, kill");
    CHECK(cgroup_has_limit(cgs, CG_LIMIT_MEMORY));
    CHECK_EQ_STR(fake_read("sys/fs/cgroup/cgroup.subtree_control"),
                 "+memory +pids +cpu");
    CHECK_EQ_STR(fake_read("sys/fs/cgroup/inst/cgroup.subtree_control"),
                 "+memory +pids +cpu");
    CHECK_EQ_STR(fake_read("sys/fs/cgroup/inst/cpu.weight"), "20");
    /* At the root, peerd does not move. */
    CHECK(!fake_exists("sys/fs/cgroup/peerd"));

    job = cgroup_job_new(cgs, "job1", why, sizeof why);
    if (!CHECK(job != NULL))
        return;
    CHECK_EQ_STR(fake_read("sys/fs/cgroup/inst/job1/cgroup.subtree_control"),
                 "+memory +pids +cpu");
    proc = cgroup_proc_new(job, "0.1", 100 << 20, 64, why, sizeof why);
    if (!CHECK(proc != NULL))
        return;
    CHECK_EQ_STR(fake_read("sys/fs/cgroup/inst/job1/0.1/memory.max"),
                 "104857600");
    CHECK_EQ_STR(fake_read("sys/fs/cgroup/inst/job1/0.1/pids.max"), "64");
    files = cgroup_procs_files(proc);
    CHECK(files[0] != NULL && files[1] == NULL);
    CHECK_CONTAINS(files[0], "/sys/fs/cgroup/inst/job1/0.1/cgroup.procs");

    /* What is read back when the process ends. */
    CHECK_EQ_INT(cgroup_limit_hit(proc), CG_LIMIT_NONE);
    fake_write("sys/fs/cgroup/inst/job1/0.1/memory.peak", "314572800\n");
    fake_write("sys/fs/cgroup/inst/job1/0.1/memory.events",
               "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n");
    CHECK_EQ_INT(cgroup_mem_peak(proc), 314572800);
    CHECK_EQ_INT(cgroup_limit_hit(proc), CG_LIMIT_MEMORY);
    fake_write("sys/fs/cgroup/inst/job1/0.1/memory.events", "oom_kill 0\n");
    fake_write("sys/fs/cgroup/inst/job1/0.1/pids.events", "max 3\n");
    CHECK_EQ_INT(cgroup_limit_hit(proc), CG_LIMIT_PIDS);

    /* The whole job is killed with one write. */
    fake_write("sys/fs/cgroup/inst/job1/cgroup.kill", "");
    CHECK_EQ_INT(cgroup_kill_wait(job, 100), 0);
    CHECK_EQ_STR(fake_read("sys/fs/cgroup/inst/job1/cgroup.kill"), "1");
    CHECK_EQ_INT(cgroup_empty(job), 1);
    CHECK_EQ_INT(cgroup_remove(job), 0);
    CHECK(!fake_exists("sys/fs/cgroup/inst/job1"));
    cgroup_free(proc);
    cgroup_free(job);
    cgroup_close(cgs);
}

/* Under a service (Delegate=yes): peerd steps into a leaf so that the
 * controllers can be enabled below its own cgroup. */
static void
t_v2_delegated(void)
{
    struct cgroups *cgs;
    char why[256];

    fake_reset();
    layout_v2("/system.slice/p2p-peerd.service");
    cgs = cgroup_open(root, "inst", 50, why, sizeof why);
    if (!CHECK(cgs != NULL))
        return;
    CHECK_EQ_STR(fake_read("sys/fs/cgroup/system.slice/p2p-peerd.service/"
                           "peerd/cgroup.procs"),
                 "0");
    CHECK_EQ_STR(fake_read("sys/fs/cgroup/system.slice/p2p-peerd.service/"
                           "cgroup.subtree_control"),
                 "+memory +pids +cpu");
    CHECK(fake_exists("sys/fs/cgroup/system.slice/p2p-peerd.service/inst"));
    CHECK_EQ_STR(fake_read("sys/fs/cgroup/system.slice/p2p-peerd.service/"
                           "inst/cpu.weight"),
                 "50");
    /* No cgroup.kill in this tree: killing falls back to signals. */
    CHECK_CONTAINS(cgroup_describe(cgs), "signals");
    cgroup_close(cgs);
}

/* v1 controllers alone, cpu co-mounted with cpuacct, and a freezer. */
static void
layout_v1(void)
{
    fake_mounts("cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n"
                "cgroup /sys/fs/cgroup/pids cgroup rw,pids 0 0\n"
                "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,cpu,cpuacct 0 0\n"
                "cgroup /sys/fs/cgroup/freezer cgroup rw,freezer 0 0\n");
    fake_write("proc/self/cgroup", "5:freezer:/\n"
                                   "4:memory:/sandbox/x\n"
                                   "3:pids:/\n"
                                   "2:cpu,cpuacct:/\n");
    fake_dir("sys/fs/cgroup/memory/sandbox/x");
    fake_dir("sys/fs/cgroup/pids");
    fake_dir("sys/fs/cgroup/cpu,cpuacct");
    fake_dir("sys/fs/cgroup/freezer");
}

static void
t_v1(void)
{
    struct cgroups *cgs;
    struct cgroup *job, *proc;
    char why[256];
    char *const *files;
    int n;

    fake_reset();
    layout_v1();
    cgs = cgroup_open(root, "inst", 20, why, sizeof why);
    if (!CHECK(cgs != NULL))
        return;
    CHECK_CONTAINS(cgroup_describe(cgs), "cgroup v1, memory, pids, cpu, "
                                         "freezer");
    /* Each hierarchy's instance sits under peerd's own cgroup there. */
    CHECK(fake_exists("sys/fs/cgroup/memory/sandbox/x/inst"));
    CHECK_EQ_STR(fake_read("sys/fs/cgroup/cpu,cpuacct/inst/cpu.shares"),
                 "204");
    job = cgroup_job_new(cgs, "job1", why, sizeof why);
    proc = job ? cgroup_proc_new(job, "0.0", 1 << 30, 512, why, sizeof why)
               : NULL;
    if (!CHECK(proc != NULL))
        return;
    CHECK_EQ_STR(fake_read("sys/fs/cgroup/memory/sandbox/x/inst/job1/0.0/"
                           "memory.limit_in_bytes"),
                 "1073741824");
    CHECK_EQ_STR(fake_read("sys/fs/cgroup/pids/inst/job1/0.0/pids.max"),
                 "512");
    /* A process joins all four hierarchies. */
    files = cgroup_procs_files(proc);
    for (n = 0; files[n] != NULL; n++)
        ;
    CHECK_EQ_INT(n, 4);
    fake_write("sys/fs/cgroup/memory/sandbox/x/inst/job1/0.0/"
               "memory.max_usage_in_bytes",
               "52428800\n");
    fake_write("sys/fs/cgroup/memory/sandbox/x/inst/job1/0.0/"
               "memory.oom_control",
               "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
    CHECK_EQ_INT(cgroup_mem_peak(proc), 52428800);
    CHECK_EQ_INT(cgroup_limit_hit(proc), CG_LIMIT_MEMORY);
    /* Killed frozen: frozen first, thawed last. */
    CHECK_EQ_INT(cgroup_kill_wait(job, 100), 0);
    CHECK_EQ_STR(fake_read("sys/fs/cgroup/freezer/inst/job1/freezer.state"),
                 "THAWED");
    CHECK_EQ_INT(cgroup_remove(job), 0);
    CHECK(!fake_exists("sys/fs/cgroup/pids/inst/job1"));
    CHECK(!fake_exists("sys/fs/cgroup/memory/sandbox/x/inst/job1"));
    cgroup_free(proc);
    cgroup_free(job);
    cgroup_close(cgs);
}

/* v1 controllers next to a v2 mount that has only cgroup.kill. */
static void
t_hybrid(void)
{
    struct cgroups *cgs;
    struct cgroup *job;
    char why[256];

    fake_reset();
    layout_v1();
    fake_mounts("cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n"
                "cgroup /sys/fs/cgroup/pids cgroup rw,pids 0 0\n"
                "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,cpu,cpuacct 0 0\n"
                "cgroup /sys/fs/cgroup/freezer cgroup rw,freezer 0 0\n"
                "cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n");
    fake_write("proc/self/cgroup", "4:memory:/sandbox/x\n3:pids:/\n"
                                   "2:cpu,cpuacct:/\n5:freezer:/\n0::/\n");
    fake_dir("sys/fs/cgroup/unified/inst");
    fake_write("sys/fs/cgroup/unified/cgroup.controllers", "hugetlb\n");
    fake_write("sys/fs/cgroup/unified/inst/cgroup.kill", "");
    cgs = cgroup_open(root, "inst", 20, why, sizeof why);
    if (!CHECK(cgs != NULL))
        return;
    CHECK_CONTAINS(cgroup_describe(cgs), "cgroups v1+v2, memory, pids, cpu, "
                                         "kill");
    /* No controller is enabled in v2: it has none of ours. */
    CHECK_EQ_STR(fake_read("sys/fs/cgroup/unified/cgroup.subtree_control"),
                 "");
    job = cgroup_job_new(cgs, "job1", why, sizeof why);
    if (!CHECK(job != NULL))
        return;
    fake_write("sys/fs/cgroup/unified/inst/job1/cgroup.kill", "");
    CHECK_EQ_INT(cgroup_kill(job), 0);
    CHECK_EQ_STR(fake_read("sys/fs/cgroup/unified/inst/job1/cgroup.kill"),
                 "1");
    /* The freezer is not needed, so not used. */
    CHECK(!fake_exists("sys/fs/cgroup/freezer/inst"));
    CHECK_EQ_INT(cgroup_remove(job), 0);
    cgroup_free(job);
    cgroup_close(cgs);
}

/* What an earlier life left is killed and removed. */
static void
t_recover(void)
{
    struct cgroups *cgs;
    char why[256];

    fake_reset();
    layout_v1();
    cgs = cgroup_open(root, "inst", 20, why, sizeof why);
    if (!CHECK(cgs != NULL))
        return;
    fake_dir("sys/fs/cgroup/pids/inst/oldjob/0.0");
    fake_dir("sys/fs/cgroup/memory/sandbox/x/inst/oldjob/0.0");
    fake_write("sys/fs/cgroup/pids/inst/oldjob/0.0/cgroup.procs", "");
    CHECK_EQ_INT(cgroup_recover(cgs), 1);
    CHECK(!fake_exists("sys/fs/cgroup/pids/inst/oldjob"));
    CHECK(!fake_exists("sys/fs/cgroup/memory/sandbox/x/inst/oldjob"));
    CHECK(fake_exists("sys/fs/cgroup/pids/inst"));
    cgroup_close(cgs);
}

/* This process's PID namespace, as marks name it. */
static unsigned long
pidns(void)
{
    struct stat st;

    return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long)st.st_ino
                                               : 0;
}

/* Instances of peerds gone without closing (SIGKILL) are cleared by the
 * next peerd that starts beside them: their jobs' processes killed,
 * their directories removed.  Those of a live peerd, unmarked ones,
 * other programs', those marked from another PID namespace (whose pids
 * mean nothing here) and those marked without one (an older peerd's)
 * stay; an earlier life's mark in ours goes; ours closed with a job
 * still in it stays, marked for whoever comes next. */
static void
t_orphans(void)
{
    struct cgroups *cgs;
    char why[256], rel[256], pids[32];
    unsigned long ns = pidns();
    pid_t dead, victim;
    int status;

    if ((dead = fork()) == 0)
        _exit(0);
    waitpid(dead, NULL, 0);
    if ((victim = fork()) == 0) {
        pause();
        _exit(0);
    }
    fake_reset();
    layout_v1();
    snprintf(rel, sizeof rel, "sys/fs/cgroup/pids/p2pmpi-dead/peerd.%ld.%lu",
             (long)dead, ns);
    fake_dir(rel);
    fake_dir("sys/fs/cgroup/pids/p2pmpi-dead/job1/0.0");
    snprintf(pids, sizeof pids, "%ld\n", (long)victim);
    fake_write("sys/fs/cgroup/pids/p2pmpi-dead/job1/0.0/cgroup.procs", pids);
    snprintf(rel, sizeof rel,
             "sys/fs/cgroup/memory/sandbox/x/p2pmpi-dead/peerd.%ld.%lu",
             (long)dead, ns);
    fake_dir(rel);
    snprintf(rel, sizeof rel, "sys/fs/cgroup/pids/p2pmpi-live/peerd.%ld.%lu",
             (long)getpid(), ns);
    fake_dir(rel);
    fake_dir("sys/fs/cgroup/pids/p2pmpi-unmarked/job2");
    snprintf(rel, sizeof rel, "sys/fs/cgroup/pids/other-x/peerd.%ld.%lu",
             (long)dead, ns);
    fake_dir(rel);
    snprintf(rel, sizeof rel, "sys/fs/cgroup/pids/p2pmpi-foreign/peerd.%ld.%lu",
             (long)dead, ns + 1);
    fake_dir(rel);
    snprintf(rel, sizeof rel, "sys/fs/cgroup/pids/p2pmpi-older/peerd.%ld",
             (long)dead);
    fake_dir(rel);
    snprintf(rel, sizeof rel, "sys/fs/cgroup/pids/p2pmpi-me/peerd.%ld.%lu",
             (long)dead, ns);
    fake_dir(rel);
    cgs = cgroup_open(root, "p2pmpi-me", 20, why, sizeof why);
    if (!CHECK(cgs != NULL)) {
        kill(victim, SIGKILL);
        waitpid(victim, NULL, 0);
        return;
    }
    CHECK(waitpid(victim, &status, 0) == victim && WIFSIGNALED(status) &&
          WTERMSIG(status) == SIGKILL);
    CHECK(!fake_exists("sys/fs/cgroup/pids/p2pmpi-dead"));
    CHECK(!fake_exists("sys/fs/cgroup/memory/sandbox/x/p2pmpi-dead"));
    CHECK(fake_exists("sys/fs/cgroup/pids/p2pmpi-live"));
    CHECK(fake_exists("sys/fs/cgroup/pids/p2pmpi-unmarked/job2"));
    CHECK(fake_exists("sys/fs/cgroup/pids/other-x"));
    CHECK(fake_exists("sys/fs/cgroup/pids/p2pmpi-foreign"));
    CHECK(fake_exists("sys/fs/cgroup/pids/p2pmpi-older"));
    CHECK(!fake_exists(rel)); /* the earlier life's mark */
    snprintf(rel, sizeof rel, "sys/fs/cgroup/pids/p2pmpi-me/peerd.%ld.%lu",
             (long)getpid(), ns);
    CHECK(fake_exists(rel));
    fake_dir("sys/fs/cgroup/pids/p2pmpi-me/keep/0.0");
    cgroup_close(cgs);
    CHECK(fake_exists(rel));
    CHECK(!fake_exists("sys/fs/cgroup/memory/sandbox/x/p2pmpi-me"));
}

static void
t_nothing_writable(void)
{
    struct cgroups *cgs;
    char why[256];

    fake_reset();
    fake_mounts("proc /proc proc rw 0 0\n");
    fake_write("proc/self/cgroup", "0::/\n");
    cgs = cgroup_open(root, "inst", 20, why, sizeof why);
    CHECK(cgs == NULL);
    CHECK_CONTAINS(why, "no writable cgroup hierarchy");
}

static void
t_bad_names(void)
{
    struct cgroups *cgs;
    char why[256];

    fake_reset();
    layout_v1();
    cgs = cgroup_open(root, "inst", 20, why, sizeof why);
    if (!CHECK(cgs != NULL))
        return;
    CHECK(cgroup_job_new(cgs, "../escape", why, sizeof why) == NULL);
    CHECK_CONTAINS(why, "bad cgroup name");
    CHECK(cgroup_job_new(cgs, "..", why, sizeof why) == NULL);
    CHECK(cgroup_job_new(cgs, "", why, sizeof why) == NULL);
    cgroup_close(cgs);
    nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
    root[0] = '\0';
}

static const struct test_case cases[] = {
    {"v2 at the root", t_v2_root},
    {"v2 under a service", t_v2_delegated},
    {"v1 controllers", t_v1},
    {"v1 with a v2 kill", t_hybrid},
    {"recovery", t_recover},
    {"orphans of peerds gone", t_orphans},
    {"nothing writable", t_nothing_writable},
    {"bad names", t_bad_names},
};

TEST_MAIN(cases)
