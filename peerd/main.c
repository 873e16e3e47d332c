/*
 * peerd: command line, configuration, state directory, identity, the
 * listening service, one link per supernode, and an orderly shutdown
 * (unregister, flush, exit) on SIGTERM or SIGINT.
 */
#include <sys/socket.h>

#include <sys/prctl.h>
#include <sys/stat.h>

#include <getopt.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "cli.h"
#include "daemon.h"
#include "log.h"
#include "monotime.h"
#include "peerd.h"
#include "xmalloc.h"

static struct event *ev_term, *ev_int, *ev_chld;

static void
usage(FILE *f)
{
    fprintf(f,
            "usage: peerd [--conf FILE] [--listen ADDR:PORT] "
            "[--supernode ADDR:PORT]...\n"
            "             [--state-dir DIR] [--slots N] [--host-label NAME]\n"
            "             [--foreground] [--pid-file FILE] [--verbose] "
            "[--help] [--version]\n"
            "\n"
            "Shares this workstation with a p2pmpi network: registers with "
            "every\n"
            "supernode and keeps it informed of cores, memory, load and "
            "slots.\n"
            "\n"
            "  --conf FILE            configuration (else $P2P_CONF, "
            "~/.config/p2p/p2p.conf,\n"
            "                         /etc/p2p/p2p.conf)\n"
            "  --listen ADDR:PORT     service address (default "
            "0.0.0.0:9897; port 0: any)\n"
            "  --supernode ADDR:PORT  register here (repeatable; replaces "
            "the configured list)\n"
            "  --state-dir DIR        keys, cache and job directories\n"
            "  --slots N              slots offered (default: one per core)\n"
            "  --host-label NAME      what counts as one host for replica "
            "placement\n"
            "                         (default: the machine id)\n"
            "  --foreground           stay attached and log to stderr\n"
            "  --pid-file FILE        pid file when detached\n"
            "  --verbose              debug logging\n");
}

/* Who jobs run as: never root.  As root, the configured account (default
 * nobody); otherwise ourselves. */
static int
job_account(const struct p2p_config *cfg, uid_t *uid, gid_t *gid, char *err,
            size_t errlen)
{
    const char *name = cfg->run_as ? cfg->run_as : "nobody";
    struct passwd *pw;

    if (geteuid() != 0) {
        *uid = geteuid();
        *gid = getegid();
        return 0;
    }
    if ((pw = getpwnam(name)) == NULL) {
        snprintf(err, errlen, "[peer] run_as: no user '%s'", name);
        return -1;
    }
    if (pw->pw_uid == 0) {
        snprintf(err, errlen,
                 "[peer] run_as: '%s' is root; jobs never run "
                 "as root",
                 name);
        return -1;
    }
    *uid = pw->pw_uid;
    *gid = pw->pw_gid;
    return 0;
}

/* The box around each job: a uid of its own, a cgroup, a private /tmp.
 * What this machine cannot give is said once, and jobs run without it. */
static void
box_setup(struct peerd *pd)
{
    const struct p2p_config *cfg = pd->cfg;
    uint8_t h[SEC_HASH_LEN];
    char name[64], hex[2 * 8 + 1], why[512], *lockdir;
    int fd;

    /* One subtree per state directory: a restarted peerd finds its own. */
    sec_hash(h, pd->state_dir, strlen(pd->state_dir));
    sec_hex(hex, h, 8);
    snprintf(name, sizeof name, "p2pmpi-%s", hex);
    if (cfg->cgroups) {
        pd->cgroups = cgroup_open(NULL, name, cfg->job_cpu_weight, why,
                                  sizeof why);
        if (pd->cgroups == NULL)
            log_warnx("no cgroups for jobs (%s): what a job leaves behind "
                      "is found by a sweep of our children once a second, "
                      "and limits are per process (rlimits)",
                      why);
        else
            log_info("jobs are contained by %s",
                     cgroup_describe(pd->cgroups));
    } else
        log_warnx("[peer] cgroups = no: jobs are not contained by cgroups");
    if (geteuid() != 0) {
        log_warnx("not root: jobs run as uid %u, this daemon's own, with "
                  "the machine's /tmp",
                  (unsigned)geteuid());
        return;
    }
    if (strcmp(cfg->job_uids, "none") != 0) {
        if (access("/run", W_OK) == 0)
            lockdir = xstrdup("/run/p2pmpi-uids");
        else
            xasprintf(&lockdir, "%s/uids", pd->state_dir);
        pd->uids = uids_open(cfg->job_uids, lockdir, why, sizeof why);
        free(lockdir);
        if (pd->uids == NULL)
            fatalx("%s", why);
        log_info("each job runs as a uid of its own from %s", cfg->job_uids);
    } else
        log_warnx("[peer] job_uids = none: every job runs as uid %u, and "
                  "jobs can see each other",
                  (unsigned)pd->job_uid);
    if (cfg->private_tmp) {
        pd->tmp_bytes = cfg->job_tmp_mb > 0 ? (uint64_t)cfg->job_tmp_mb << 20
                                            : job_mem_limit(pd);
        /* Try once now, so that a machine that cannot says so at start. */
        if ((fd = mntns_new(pd->state_dir, pd->tmp_bytes, why, sizeof why)) ==
            -1)
            log_warnx("no private /tmp for jobs (%s)", why);
        else {
            close(fd);
            pd->private_tmp = 1;
        }
    }
}

static void
on_sigchld(evutil_socket_t sig, short what, void *arg)
{
    job_reap(arg);
}

static void
on_cron(evutil_socket_t fd, short what, void *arg)
{
    struct peerd *pd = arg;
    uint64_t now = monotime_ms();

    reserve_cron(pd, now);
    owner_cron(pd, now);
    job_cron(pd, now);
    farm_cron(pd, now);
    directory_cron(pd, now);
}

static void
shutdown_links(struct peerd *pd)
{
    int i;

    for (i = 0; i < pd->nlinks; i++)
        link_shutdown(pd->links[i]);
}

/* Stop serving, unregister everywhere, and let the loop run dry: it
 * returns once the last goodbye is written (at most a second). */
static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
    struct peerd *pd = arg;

    if (pd->stopping)
        return;
    pd->stopping = 1;
    log_info("signal %d: shutting down", (int)sig);
    event_del(ev_term);
    event_del(ev_int);
    event_del(ev_chld);
    event_del(pd->cron);
    service_free(pd->service);
    pd->service = NULL;
    control_free(pd->control);
    pd->control = NULL;
    job_shutdown(pd);
    shutdown_links(pd);
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"conf", required_argument, NULL, 'c'},
        {"listen", required_argument, NULL, 'l'},
        {"supernode", required_argument, NULL, 's'},
        {"state-dir", required_argument, NULL, 'd'},
        {"slots", required_argument, NULL, 'n'},
        {"host-label", required_argument, NULL, 'L'},
        {"foreground", no_argument, NULL, 'f'},
        {"pid-file", required_argument, NULL, 'p'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *conf = NULL, *listen_s = NULL, *state_dir = NULL;
    const char *label = NULL, *pidfile = NULL;
    char *sn[CONF_MAX_SUPERNODES];
    int nsn = 0, slots = -1, foreground = 0, verbose = 0, ch, fd, i;
    struct p2p_config cfg;
    struct peerd pd;
    struct netaddr bound = {.len = sizeof bound.ss};
    struct timeval cron_tv = {0, 100000};
    char err[512], *abs_dir, *cache_dir;

    log_init("peerd", 1, P2P_LOG_INFO);
    while ((ch = getopt_long(argc, argv, "c:l:s:d:n:L:fp:vhV", opts, NULL)) !=
           -1) {
        switch (ch) {
        case 'c':
            conf = optarg;
            break;
        case 'l':
            listen_s = optarg;
            break;
        case 's':
            if (nsn == CONF_MAX_SUPERNODES) {
                fprintf(stderr, "peerd: at most %d supernodes\n",
                        CONF_MAX_SUPERNODES);
                return 2;
            }
            sn[nsn++] = optarg;
            break;
        case 'd':
            state_dir = optarg;
            break;
        case 'n':
            if (cli_int("--slots", optarg, 0, 4096, &slots) == -1)
                return 2;
            break;
        case 'L':
            label = optarg;
            if (!codec_valid_token(label, WIRE_MAX_LABEL)) {
                fprintf(stderr,
                        "peerd: --host-label: 1 to %d printable "
                        "characters without spaces\n",
                        WIRE_MAX_LABEL);
                return 2;
            }
            break;
        case 'f':
            foreground = 1;
            break;
        case 'p':
            pidfile = optarg;
            break;
        case 'v':
            verbose++;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            cli_version();
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (cli_no_operands(argc, argv, optind, usage) == -1)
        return 2;
    log_set_verbosity(P2P_LOG_INFO + verbose);

    if (config_load(&cfg, conf, err, sizeof err) == -1)
        fatalx("%s", err);
    config_override_supernodes(&cfg, (char *const *)sn, nsn);
    if (listen_s != NULL)
        config_set_str(&cfg.peer_listen, listen_s);
    if (state_dir != NULL)
        config_set_str(&cfg.state_dir, state_dir);
    if (slots != -1)
        cfg.slots = slots;
    if (label != NULL)
        config_set_str(&cfg.host_label, label);

    memset(&pd, 0, sizeof pd);
    pd.cfg = &cfg;
    if (sec_init() == -1)
        fatalx("libsodium failed to initialise");
    if (group_load(&cfg, &pd.group, err, sizeof err) == -1)
        fatalx("%s", err);
    if (resources_init(err, sizeof err) == -1)
        fatalx("%s", err);
    pd.slots_total = cfg.slots > 0 ? cfg.slots : (int)resources_cores();
    pd.heartbeat_ms = cfg.heartbeat_ms;
    if (cfg.host_label != NULL) {
        if (!codec_valid_token(cfg.host_label, WIRE_MAX_LABEL))
            fatalx("[peer] host_label '%s' is not a valid label",
                   cfg.host_label);
        snprintf(pd.host_label, sizeof pd.host_label, "%s", cfg.host_label);
    } else
        identity_machine_label(pd.host_label, sizeof pd.host_label);

    pd.state_dir =
        cfg.state_dir ? xstrdup(cfg.state_dir) : identity_default_state_dir();
    if (identity_state_dir(pd.state_dir, err, sizeof err) == -1)
        fatalx("%s", err);
    /* Absolute from here on: a detached daemon works from "/". */
    if ((abs_dir = realpath(pd.state_dir, NULL)) == NULL)
        fatal("state directory %s", pd.state_dir);
    free(pd.state_dir);
    pd.state_dir = abs_dir;
    if (identity_node_key(pd.state_dir, pd.node_pk, pd.node_sk, err,
                          sizeof err) == -1)
        fatalx("node key: %s", err);
    /* Jobs run in STATE_DIR/jobs/<id>: the job account must be able to
     * pass through the state directory, though not to list it. */
    if (chmod(pd.state_dir, 0711) == -1)
        fatal("state directory %s", pd.state_dir);
    xasprintf(&cache_dir, "%s/cache", pd.state_dir);
    pd.cache =
        cache_open(cache_dir, (uint64_t)cfg.cache_mb << 20, err, sizeof err);
    free(cache_dir);
    if (pd.cache == NULL)
        fatalx("cache: %s", err);
    if (job_account(&cfg, &pd.job_uid, &pd.job_gid, err, sizeof err) == -1)
        fatalx("%s", err);
    box_setup(&pd);
    if ((pd.owner = owner_new(&cfg, err, sizeof err)) == NULL)
        fatalx("%s", err);
    /* Before offering slots: nothing of an earlier life may still run. */
    job_recover(&pd);
    farm_init(&pd);
    worker_init(&pd);
    /* Not fatal: a peer may be started before its directory is fixed, and
     * a launch then fails with the same explanation. */
    if (job_reachable(pd.state_dir, pd.job_uid, err, sizeof err) == -1)
        log_warnx("%s", err);

    if (netaddr_parse(cfg.peer_listen, CONF_DEFAULT_PEER_PORT, &pd.listen_addr,
                      err, sizeof err) == -1)
        fatalx("listen address: %s", err);
    if ((fd = netaddr_listen(&pd.listen_addr, 128)) == -1)
        fatal("cannot listen on %s", pd.listen_addr.text);
    /* With port 0 the kernel chose one: announce that. */
    if (getsockname(fd, (struct sockaddr *)&bound.ss, &bound.len) == 0)
        netaddr_set_port(&pd.listen_addr, netaddr_port(&bound));
    /* Talk to supernodes from the address we serve on, so that several
     * peerd on one machine (127.0.0.2, 127.0.0.3, ...) look distinct. */
    pd.source = netaddr_is_any(&pd.listen_addr) ? NULL : &pd.listen_addr;

    daemon_start("peerd", foreground,
                 pidfile != NULL ? pidfile : cfg.peer_pid_file,
                 P2P_LOG_INFO + verbose);

    signal(SIGPIPE, SIG_IGN);
    /* What a job's processes leave behind (setsid and a double fork)
     * comes back to us, not to init, so that it can be killed. */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
        log_warn("cannot become a child subreaper");
    if ((pd.base = event_base_new()) == NULL ||
        event_base_priority_init(pd.base, PEERD_NPRIO) == -1)
        fatalx("event_base_new failed");
    pd.service = service_new(&pd, fd);
    if ((pd.control = control_new(&pd, err, sizeof err)) == NULL)
        log_warnx("no control socket for p2pshare: %s", err);
    /* The owner's policy holds from the first heartbeat on. */
    owner_cron(&pd, monotime_ms());
    ev_term = evsignal_new(pd.base, SIGTERM, on_signal, &pd);
    ev_int = evsignal_new(pd.base, SIGINT, on_signal, &pd);
    ev_chld = evsignal_new(pd.base, SIGCHLD, on_sigchld, &pd);
    pd.cron = event_new(pd.base, -1, EV_PERSIST, on_cron, &pd);
    event_priority_set(pd.cron, PEERD_PRIO_CRON);
    evsignal_add(ev_term, NULL);
    evsignal_add(ev_int, NULL);
    evsignal_add(ev_chld, NULL);
    evtimer_add(pd.cron, &cron_tv);

    log_info("peer %s serving on %s with %d slots, state in %s", pd.host_label,
             pd.listen_addr.text, pd.slots_total, pd.state_dir);
    if (cfg.nsupernodes == 0)
        log_warnx("no supernode configured: this peer is not announced "
                  "anywhere");
    directory_new(&pd, cfg.supernodes, cfg.nsupernodes,
                  cfg.supernodes_per_peer);

    event_base_dispatch(pd.base);

    for (i = 0; i < pd.nlinks; i++)
        link_free(pd.links[i]);
    free(pd.links);
    directory_free(pd.directory);
    service_free(pd.service);
    control_free(pd.control);
    worker_fini(&pd);
    job_shutdown(&pd);
    event_free(ev_term);
    event_free(ev_int);
    event_free(ev_chld);
    event_free(pd.cron);
    event_base_loop(pd.base, EVLOOP_NONBLOCK);
    event_base_free(pd.base);
    sec_wipe(pd.node_sk, sizeof pd.node_sk);
    group_wipe(&pd.group);
    resources_fini();
    cache_close(pd.cache);
    uids_close(pd.uids);
    owner_free(pd.owner);
    farm_fini(&pd);
    cgroup_close(pd.cgroups);
    free(pd.state_dir);
    config_free(&cfg);
    log_info("stopped");
    return 0;
}
