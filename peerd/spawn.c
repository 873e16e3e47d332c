/*
 * Starting a job's process: block signals across fork; in the child reset
 * handlers and mask, start a new session (its own process group, so the
 * whole group can be signalled), join the job's cgroups and mount
 * namespace while still root, drop privileges, set limits, cwd and stdio,
 * close every other descriptor, exec (a bare name is looked up in the
 * job PATH, never in peerd's own), and _exit on failure (after telling
 * the parent why through a close-on-exec pipe).
 */
#include <linux/close_range.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "peerd.h"

/* In the child: report errno and the step that failed, then die. */
static void __attribute__((noreturn)) spawn_child_fail(int fd, const char *step)
{
    char msg[160];
    int n;

    n = snprintf(msg, sizeof msg, "%s: %s", step, strerror(errno));
    if (n > 0)
        (void)!write(fd, msg, (size_t)n);
    _exit(127);
}

/* In the child: exec a bare command name from the job PATH, as a shell
 * would (a file that is there but cannot be run is reported as such);
 * never returns. */
static void __attribute__((noreturn))
spawn_child_search(const struct spawn_req *r, int report)
{
    const char *dir = r->path, *end;
    char file[4096], msg[600];
    int denied = 0, n;
    size_t len;

    while (*dir != '\0') {
        end = strchr(dir, ':');
        len = end != NULL ? (size_t)(end - dir) : strlen(dir);
        if (len > 0 && len + strlen(r->argv[0]) + 2 <= sizeof file) {
            memcpy(file, dir, len);
            file[len] = '/';
            strcpy(file + len + 1, r->argv[0]);
            execve(file, r->argv, r->envp);
            if (errno == EACCES)
                denied = 1;
            else if (errno != ENOENT && errno != ENOTDIR)
                spawn_child_fail(report, file);
        }
        dir += len + (end != NULL);
    }
    if (denied) {
        errno = EACCES;
        spawn_child_fail(report, r->argv[0]);
    }
    n = snprintf(msg, sizeof msg, "command not found: %s on %s (searched %s)",
                 r->argv[0], r->host != NULL ? r->host : "this peer", r->path);
    if (n > 0)
        (void)!write(report, msg, (size_t)n < sizeof msg ? (size_t)n
                                                         : sizeof msg - 1);
    _exit(127);
}

/* In the child, after fork: become the job's process. */
static void __attribute__((noreturn))
spawn_child(const struct spawn_req *r, int inr, int outw, int errw,
            int report)
{
    struct sigaction sa;
    struct sched_param param;
    struct rlimit rl;
    sigset_t none;
    int fd, sig, keep;
    size_t k;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    for (sig = 1; sig < NSIG; sig++)
        (void)sigaction(sig, &sa, NULL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    if (setsid() == -1)
        spawn_child_fail(report, "setsid");
    /* Into the box before anything else: from here on, whatever this
     * process starts is counted, limited and killed with its job. */
    for (k = 0; r->cgroup_procs != NULL && r->cgroup_procs[k] != NULL; k++)
        if ((fd = open(r->cgroup_procs[k], O_WRONLY | O_CLOEXEC)) == -1 ||
            write(fd, "0", 1) != 1 || close(fd) == -1)
            spawn_child_fail(report, "joining the job's cgroup");
    if (r->mntns != -1 && setns(r->mntns, CLONE_NEWNS) == -1)
        spawn_child_fail(report, "entering the job's mount namespace");
    /* Guest work never competes with the owner: the idle CPU class (the
     * owner's processes always run first), nice 19 where that is refused,
     * and idle I/O.  RLIMIT_NICE keeps a job from raising itself again. */
    param.sched_priority = 0;
    if (setpriority(PRIO_PROCESS, 0, 19) == -1 ||
        sched_setscheduler(0, SCHED_IDLE, &param) == -1)
        (void)setpriority(PRIO_PROCESS, 0, 19);
    (void)syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, 0,
                  3 << 13 /* IOPRIO_CLASS_IDLE */);
    rl.rlim_cur = rl.rlim_max = 1; /* nice may not go below 19 */
    (void)setrlimit(RLIMIT_NICE, &rl);
    if (r->mem_mb > 0) {
        rl.rlim_cur = rl.rlim_max = (rlim_t)r->mem_mb << 20;
        if (setrlimit(RLIMIT_AS, &rl) == -1)
            spawn_child_fail(report, "memory limit");
    }
    if (r->nproc > 0) {
        rl.rlim_cur = rl.rlim_max = (rlim_t)r->nproc;
        if (setrlimit(RLIMIT_NPROC, &rl) == -1)
            spawn_child_fail(report, "process limit");
    }
    if (r->nofile > 0) {
        rl.rlim_cur = rl.rlim_max = (rlim_t)r->nofile;
        if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
            spawn_child_fail(report, "open-file limit");
    }
    if (geteuid() == 0) {
        /* Never run a job as root. */
        if (setgroups(0, NULL) == -1 || setgid(r->gid) == -1 ||
            setuid(r->uid) == -1)
            spawn_child_fail(report, "dropping privileges");
        if (getuid() == 0 || geteuid() == 0)
            spawn_child_fail(report, "still root");
    }
    /* Nothing of a job outlives its peerd.  Set after the credentials
     * change, which clears it; a parent already gone means we are late. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != r->parent)
        spawn_child_fail(report, "parent death signal");
    if (chdir(r->dir) == -1)
        spawn_child_fail(report, "job directory");
    if ((fd = inr != -1 ? inr : open("/dev/null", O_RDONLY)) == -1 ||
        dup2(fd, STDIN_FILENO) == -1 || dup2(outw, STDOUT_FILENO) == -1 ||
        dup2(errw, STDERR_FILENO) == -1)
        spawn_child_fail(report, "standard streams");
    /* The control socket, if any, at its agreed place (dup2 leaves it
     * open across exec).  The report pipe is never fd 3: it was made
     * after the stdio pipes, and 0-2 are peerd's own. */
    if (r->ctl_fd != -1 && dup2(r->ctl_fd, CTL_FD) == -1)
        spawn_child_fail(report, "control socket");
    /* Everything else goes at exec; the report pipe is already
     * close-on-exec and must stay open until then. */
    keep = r->ctl_fd != -1 ? CTL_FD + 1 : STDERR_FILENO + 1;
    if (close_range((unsigned)keep, ~0U, CLOSE_RANGE_CLOEXEC) == -1) {
        long max = sysconf(_SC_OPEN_MAX);

        for (fd = keep; fd < (max > 0 ? max : 1024); fd++)
            if (fd != report)
                (void)close(fd);
    }
    if (strchr(r->argv[0], '/') != NULL || r->path == NULL) {
        execve(r->argv[0], r->argv, r->envp);
        spawn_child_fail(report, r->argv[0]);
    }
    spawn_child_search(r, report);
}

pid_t
spawn_process(const struct spawn_req *r, int *out, int *err, char *why,
              size_t whylen)
{
    int op[2] = {-1, -1}, ep[2] = {-1, -1}, rp[2] = {-1, -1};
    int ip[2] = {-1, -1};
    sigset_t all, old;
    char msg[600];
    ssize_t n;
    pid_t pid;

    if (pipe2(op, O_CLOEXEC) == -1 || pipe2(ep, O_CLOEXEC) == -1 ||
        pipe2(rp, O_CLOEXEC) == -1 ||
        (r->in != NULL && pipe2(ip, O_CLOEXEC) == -1)) {
        snprintf(why, whylen, "pipe: %s", strerror(errno));
        goto fail;
    }
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    ((struct spawn_req *)r)->parent = getpid();
    pid = fork();
    if (pid == 0) {
        close(op[0]);
        close(ep[0]);
        close(rp[0]);
        if (ip[1] != -1)
            close(ip[1]);
        spawn_child(r, ip[0], op[1], ep[1], rp[1]);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (pid == -1) {
        snprintf(why, whylen, "fork: %s", strerror(errno));
        goto fail;
    }
    close(op[1]);
    close(ep[1]);
    close(rp[1]);
    if (ip[0] != -1)
        close(ip[0]);
    ip[0] = -1;
    /* The report pipe closes at exec (success) or carries the reason. */
    do
        n = read(rp[0], msg, sizeof msg - 1);
    while (n == -1 && errno == EINTR);
    close(rp[0]);
    if (n > 0) {
        msg[n] = '\0';
        if (strncmp(msg, "command not found: ", 19) == 0)
            snprintf(why, whylen, "%s", msg);
        else
            snprintf(why, whylen, "cannot start: %s", msg);
        (void)waitpid(pid, NULL, 0);
        close(op[0]);
        close(ep[0]);
        if (ip[1] != -1)
            close(ip[1]);
        return -1;
    }
    (void)fcntl(op[0], F_SETFL, O_NONBLOCK);
    (void)fcntl(ep[0], F_SETFL, O_NONBLOCK);
    *out = op[0];
    *err = ep[0];
    if (r->in != NULL) {
        (void)fcntl(ip[1], F_SETFL, O_NONBLOCK);
        *r->in = ip[1];
    }
    return pid;

fail:
    for (n = 0; n < 2; n++) {
        if (op[n] != -1)
            close(op[n]);
        if (ep[n] != -1)
            close(ep[n]);
        if (rp[n] != -1)
            close(rp[n]);
        if (ip[n] != -1)
            close(ip[n]);
    }
    return -1;
}
