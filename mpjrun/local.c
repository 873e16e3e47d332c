/*
 * The embedded local cluster: with no supernode configured, p2prun starts
 * a supernode and a few peerd on loopback under a fresh group key, runs
 * the job there, and removes everything afterwards.  The daemons die with
 * p2prun even if it is killed (PR_SET_PDEATHSIG).
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "monotime.h"
#include "mpjrun.h"
#include "xmalloc.h"

#define LOCAL_MAX_PEERS 16
#define LOCAL_START_MS 10000

struct local_cluster {
    char *dir;
    pid_t pids[LOCAL_MAX_PEERS + 1];
    int npids;
};

/* The directory holding the p2prun being run, to find its siblings. */
static char *
local_bindir(void)
{
    char buf[PATH_MAX], *slash;
    ssize_t n;

    if ((n = readlink("/proc/self/exe", buf, sizeof buf - 1)) <= 0)
        return NULL;
    buf[n] = '\0';
    if ((slash = strrchr(buf, '/')) == NULL)
        return NULL;
    *slash = '\0';
    return xstrdup(buf);
}

/* Start a daemon with its stderr in logpath; it dies with us. */
static pid_t
local_spawn(char *const argv[], const char *logpath)
{
    pid_t parent = getpid(), pid;
    int fd;

    if ((pid = fork()) != 0)
        return pid;
    (void)prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
        _exit(1);
    setpgid(0, 0); /* not in the terminal's group: Ctrl-C is ours */
    if ((fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0600)) != -1) {
        dup2(fd, STDERR_FILENO);
        close(fd);
    }
    if ((fd = open("/dev/null", O_RDWR)) != -1) {
        dup2(fd, STDIN_FILENO);
        dup2(fd, STDOUT_FILENO);
        close(fd);
    }
    execv(argv[0], argv);
    execvp(strrchr(argv[0], '/') + 1, argv);
    _exit(127);
}

/* Wait for "listening on 127.0.0.1:PORT," in the supernode's log. */
static int
local_port(const char *logpath, pid_t pid)
{
    char buf[4096], *p;
    uint64_t until = monotime_ms() + LOCAL_START_MS;
    struct timespec ts = {0, 20 * 1000 * 1000};
    ssize_t n;
    int fd, port;

    while (monotime_ms() < until) {
        if ((fd = open(logpath, O_RDONLY)) != -1) {
            n = read(fd, buf, sizeof buf - 1);
            close(fd);
            buf[n > 0 ? n : 0] = '\0';
            if ((p = strstr(buf, "listening on 127.0.0.1:")) != NULL &&
                sscanf(p, "listening on 127.0.0.1:%d,", &port) == 1)
                return port;
        }
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return -1;
        nanosleep(&ts, NULL);
    }
    return -1;
}

struct local_cluster *
local_start(struct p2p_config *cfg, int npeers, int slots, char *err,
            size_t errlen)
{
    struct local_cluster *lc;
    struct p2p_group g;
    struct msg_list_reply list;
    struct timespec ts = {0, 20 * 1000 * 1000};
    char *bindir, *sn, *pd, *conf, *key, *log, *state, listen[32], label[32],
        slotstr[16], snaddr[32], why[512];
    uint8_t k[SEC_KEY_LEN];
    uint64_t until;
    FILE *f;
    int i, port;

    if (npeers > LOCAL_MAX_PEERS)
        npeers = LOCAL_MAX_PEERS;
    lc = xcalloc(1, sizeof *lc);
    lc->dir = xstrdup("/tmp/p2prun-local.XXXXXX");
    if (mkdtemp(lc->dir) == NULL) {
        snprintf(err, errlen, "mkdtemp: %s", strerror(errno));
        free(lc->dir);
        free(lc);
        return NULL;
    }
    /* Peers run jobs under their state directories in here: the job
     * account must pass through (never list). */
    (void)chmod(lc->dir, 0711);
    xasprintf(&key, "%s/group.key", lc->dir);
    xasprintf(&conf, "%s/p2p.conf", lc->dir);
    sec_random(k, sizeof k);
    if (sec_keyfile_write(key, k, sizeof k, 0600, err, errlen) == -1 ||
        (f = fopen(conf, "w")) == NULL) {
        sec_wipe(k, sizeof k);
        goto fail;
    }
    sec_wipe(k, sizeof k);
    fprintf(f, "[network]\ngroup = local\nkey_file = group.key\n"
               "[peer]\nheartbeat_ms = 200\n");
    fclose(f);

    bindir = local_bindir();
    xasprintf(&sn, "%s/runSuperNode", bindir ? bindir : ".");
    xasprintf(&pd, "%s/peerd", bindir ? bindir : ".");
    free(bindir);
    xasprintf(&log, "%s/supernode.log", lc->dir);
    {
        char *argv[] = {sn,         "--conf",      conf,
                        "--listen", "127.0.0.1:0", "--foreground",
                        "--http",   "none",        NULL};
        lc->pids[lc->npids++] = local_spawn(argv, log);
    }
    port = local_port(log, lc->pids[0]);
    free(log);
    if (port <= 0) {
        snprintf(err, errlen, "the embedded supernode did not start (%s)", sn);
        free(sn);
        free(pd);
        goto fail_conf;
    }
    snprintf(snaddr, sizeof snaddr, "127.0.0.1:%d", port);
    snprintf(slotstr, sizeof slotstr, "%d", slots);
    for (i = 0; i < npeers; i++) {
        snprintf(listen, sizeof listen, "127.0.0.%d:0", i + 2);
        snprintf(label, sizeof label, "local%d", i + 1);
        xasprintf(&state, "%s/%s", lc->dir, label);
        xasprintf(&log, "%s/%s.log", lc->dir, label);
        {
            char *argv[] = {pd,     "--conf",       conf,    "--listen",
                            listen, "--supernode",  snaddr,  "--state-dir",
                            state,  "--slots",      slotstr, "--host-label",
                            label,  "--foreground", NULL};
            lc->pids[lc->npids++] = local_spawn(argv, log);
        }
        free(state);
        free(log);
    }
    free(sn);
    free(pd);

    /* Point the caller at it and wait until every peer is listed. */
    config_set_supernodes(cfg, snaddr);
    config_set_str(&cfg->key_file, key);
    config_set_str(&cfg->group, "local");
    if (group_load(cfg, &g, err, errlen) == -1)
        goto fail_conf;
    until = monotime_ms() + LOCAL_START_MS;
    for (;;) {
        if (snquery_list(cfg, &g, 1000, &list, why, sizeof why) == 0) {
            free(list.peers);
            if ((int)list.npeers >= npeers)
                break;
        }
        if (monotime_ms() > until) {
            snprintf(err, errlen,
                     "the embedded peers did not register "
                     "(logs in %s)",
                     lc->dir);
            group_wipe(&g);
            goto fail_conf;
        }
        nanosleep(&ts, NULL);
    }
    group_wipe(&g);
    free(key);
    free(conf);
    return lc;

fail_conf:
fail:
    free(key);
    free(conf);
    local_stop(lc);
    return NULL;
}

static int
local_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)remove(path);
    return 0;
}

void
local_stop(struct local_cluster *lc)
{
    struct timespec ts = {0, 10 * 1000 * 1000};
    uint64_t until;
    int i, left;

    if (lc == NULL)
        return;
    /* Peers first, so that they unregister from a live supernode. */
    for (i = lc->npids - 1; i >= 0; i--)
        if (lc->pids[i] > 0)
            kill(lc->pids[i], SIGTERM);
    until = monotime_ms() + 3000;
    do {
        left = 0;
        for (i = 0; i < lc->npids; i++)
            if (lc->pids[i] > 0) {
                if (waitpid(lc->pids[i], NULL, WNOHANG) == lc->pids[i])
                    lc->pids[i] = 0;
                else
                    left++;
            }
        if (left > 0)
            nanosleep(&ts, NULL);
    } while (left > 0 && monotime_ms() < until);
    for (i = 0; i < lc->npids; i++)
        if (lc->pids[i] > 0) {
            kill(lc->pids[i], SIGKILL);
            (void)waitpid(lc->pids[i], NULL, 0);
        }
    (void)nftw(lc->dir, local_rm, 16, FTW_DEPTH | FTW_PHYS);
    free(lc->dir);
    free(lc);
}
