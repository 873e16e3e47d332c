/*
 * What the cgroup files share (peerd-internal): the state of peerd's
 * instance in each hierarchy and of a job's or process's node, and the
 * small file operations on a cgroup tree (cgroup_fs.c).  cgroup_setup.c
 * finds the hierarchies and makes, marks and sweeps instances; cgroup.c
 * makes, kills, freezes and reads the nodes of jobs and processes.  The
 * rest of peerd sees only peerd.h's cgroup_* calls.
 */
#ifndef P2P_PEERD_CGROUP_FS_H
#define P2P_PEERD_CGROUP_FS_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#define CG_MAX_HIER 5          /* v2, memory, pids, cpu, freezer */
#define CG_KILL_WAIT_MS 2000   /* freezing, or emptying after a kill */
/* An instance's mark: an empty child peerd.PID.PIDNS names the peerd
 * it is of (and the PID namespace its pid means something in), so that
 * one gone without closing (SIGKILL, a crash) is known. */
#define CG_OWNER "peerd."

enum cg_ctl { CG_MEMORY, CG_PIDS, CG_CPU, CG_NCTL };
extern const char *const cg_ctl_name[CG_NCTL];

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

/* cgroup_fs.c: files of a cgroup tree, under a real or a test's root */
/* dir/file into path; -1 (ENAMETOOLONG) if it does not fit. */
int cg_path(char *path, size_t len, const char *dir, const char *file);
/* Write a whole small value to a cgroup file. */
int cg_write(const struct cgroups *, const char *dir, const char *file,
             const char *value);
/* Read a small cgroup file into buf (NUL-terminated); -1 if missing. */
int cg_read(const char *dir, const char *file, char *buf, size_t len);
/* The value of "key N" in a flat-keyed file; 0 when absent. */
uint64_t cg_read_key(const char *dir, const char *file, const char *key);
int cg_is_dir(const char *path);
int cg_exists(const char *dir, const char *file);
/* rmdir; in a fake tree the files we wrote go first. */
int cg_rmdir(const struct cgroups *, const char *dir);
/* mkdir; 0 if it exists after. */
int cg_mkdir(const char *dir);
/* Remove dir and the directories below it, children first. */
int cg_rmtree(const struct cgroups *, const char *dir, int depth);
/* Call fn on every pid listed in dir and below; the number listed. */
int cg_walk_pids(const char *dir, int depth, void (*fn)(pid_t));
/* Enable the v2 controllers we use in dir's subtree_control. */
int cg_v2_delegate(struct cgroups *, const char *dir);
void cg_sigkill(pid_t);
void cg_sleep_ms(int);

#endif
