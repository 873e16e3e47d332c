/*
 * runSuperNode: command line, configuration, daemonizing, signals and the
 * cron timer that drives expiry and round-trip probes.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "cli.h"
#include "config.h"
#include "daemon.h"
#include "log.h"
#include "monotime.h"
#include "netaddr.h"
#include "sec.h"
#include "supernode.h"
#include "xmalloc.h"

#define CRON_MS 100

static struct server *the_server;

static void
usage(FILE *f)
{
    fprintf(f,
            "usage: runSuperNode [--conf FILE] [--listen ADDR:PORT] "
            "[--expire SECONDS]\n"
            "                    [--http ADDR:PORT|none] [--foreground] "
            "[--pid-file FILE]\n"
            "                    [--verbose] [--help] [--version]\n"
            "\n"
            "The directory of a p2pmpi network: peers (peerd) register and\n"
            "heartbeat here; mpihost and p2prun ask it for peers.\n"
            "\n"
            "  --conf FILE         configuration (else $P2P_CONF, "
            "~/.config/p2p/p2p.conf,\n"
            "                      /etc/p2p/p2p.conf)\n"
            "  --listen ADDR:PORT  where to listen (default 0.0.0.0:9700)\n"
            "  --expire SECONDS    drop peers silent this long (default 10)\n"
            "  --http ADDR:PORT    serve the dashboard and its JSON API here\n"
            "                      (default 127.0.0.1:8780; none: off; "
            "beyond\n"
            "                      loopback [supernode] http_token is "
            "required)\n"
            "  --foreground        stay attached and log to stderr\n"
            "  --pid-file FILE     pid file when detached\n"
            "  --verbose           debug logging (repeat for more)\n");
}

/* The dashboard's token: http_token, else the first line of
 * http_token_file; *out NULL when neither is set.  -1 with err. */
static int
dashboard_token(const struct p2p_config *cfg, char **out, char *err,
                size_t errlen)
{
    char line[512];
    FILE *f;
    size_t n;

    *out = NULL;
    if (cfg->sn_http_token != NULL && cfg->sn_http_token[0] != '\0') {
        *out = xstrdup(cfg->sn_http_token);
        return 0;
    }
    if (cfg->sn_http_token_file == NULL || cfg->sn_http_token_file[0] == '\0')
        return 0;
    if ((f = fopen(cfg->sn_http_token_file, "r")) == NULL) {
        snprintf(err, errlen, "http_token_file %s: %s",
                 cfg->sn_http_token_file, strerror(errno));
        return -1;
    }
    if (fgets(line, sizeof line, f) == NULL)
        line[0] = '\0';
    fclose(f);
    n = strcspn(line, "\r\n");
    line[n] = '\0';
    if (n < 8) {
        snprintf(err, errlen,
                 "http_token_file %s: the token's first line is empty or "
                 "shorter than 8 characters",
                 cfg->sn_http_token_file);
        sec_wipe(line, sizeof line);
        return -1;
    }
    *out = xstrdup(line);
    sec_wipe(line, sizeof line);
    return 0;
}

static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
    struct event_base *base = arg;

    log_info("signal %d: shutting down", (int)sig);
    event_base_loopexit(base, NULL);
}

static void
on_cron(evutil_socket_t fd, short what, void *arg)
{
    server_cron(the_server, monotime_ms());
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"conf", required_argument, NULL, 'c'},
        {"listen", required_argument, NULL, 'l'},
        {"expire", required_argument, NULL, 'e'},
        {"http", required_argument, NULL, 'H'},
        {"foreground", no_argument, NULL, 'f'},
        {"pid-file", required_argument, NULL, 'p'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *conf = NULL, *listen_s = NULL, *pidfile = NULL,
               *http_s = NULL;
    int ch, foreground = 0, verbose = 0, expire = -1, fd;
    struct p2p_config cfg;
    struct server_params sp;
    struct http_params hp;
    struct http *http = NULL;
    char http_addr_s[NETADDR_STRLEN], *token = NULL;
    int http_fd;
    struct netaddr na, bound;
    struct event_base *base;
    struct event *ev_term, *ev_int, *ev_cron;
    struct timeval cron_tv = {0, CRON_MS * 1000};
    char err[512];
    long v;

    log_init("runSuperNode", 1, P2P_LOG_INFO);
    while ((ch = getopt_long(argc, argv, "c:l:e:fp:vhV", opts, NULL)) != -1) {
        switch (ch) {
        case 'c':
            conf = optarg;
            break;
        case 'l':
            listen_s = optarg;
            break;
        case 'e':
            if (cli_int("--expire", optarg, 1, 3600, &expire) == -1)
                return 2;
            break;
        case 'H':
            http_s = optarg;
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
    if (listen_s != NULL)
        config_set_str(&cfg.sn_listen, listen_s);
    if (expire != -1)
        cfg.sn_expire = expire;
    if (http_s != NULL)
        config_set_str(&cfg.sn_http, http_s);

    memset(&sp, 0, sizeof sp);
    if (group_load(&cfg, &sp.group, err, sizeof err) == -1)
        fatalx("%s", err);
    if (sec_init() == -1)
        fatalx("libsodium failed to initialise");
    sp.expire_s = cfg.sn_expire;
    /* The period asked of peers: [supernode] heartbeat_ms, but three
     * heartbeats must fit in the expiry. */
    sp.heartbeat_ms = cfg.sn_expire * 1000 / 3 < cfg.sn_heartbeat_ms
                          ? cfg.sn_expire * 1000 / 3
                          : cfg.sn_heartbeat_ms;
    /* A round-trip probe per heartbeat period, at most one every 2 s:
     * probing faster than peers heartbeat would cost more than the
     * heartbeats themselves. */
    sp.rtt_every_ms = sp.heartbeat_ms > 2000 ? sp.heartbeat_ms : 2000;
    /* One descriptor per registered peer: take every one the hard limit
     * allows, and say how many that is (the sessions' ceiling). */
    v = net_raise_nofile();
    sp.max_sessions = v > 64 ? (int)(v - 32) : 32;
    sp.max_preauth = sp.max_sessions / 4 < cfg.preauth_max
                         ? sp.max_sessions / 4
                         : cfg.preauth_max;
    sp.preauth_per_host = cfg.preauth_per_host;
    sp.check_peers = cfg.sn_check_peers;
    sp.fed.group = &sp.group;
    sp.fed.members = cfg.sn_federation.v;
    sp.fed.nmembers = cfg.sn_federation.n;
    sp.fed.summary_max = cfg.sn_fed_summary;
    sp.fed.interval_ms = cfg.sn_fed_interval_ms;
    sp.fed.expire_s = cfg.sn_expire;
    sp.fed.list_max = cfg.sn_list_max;
    /* Descriptors: authenticated sessions get what admission leaves. */
    sp.max_sessions -= sp.max_preauth;

    if (netaddr_parse(cfg.sn_listen, CONF_DEFAULT_SUPERNODE_PORT, &na, err,
                      sizeof err) == -1)
        fatalx("listen address: %s", err);
    /* Bind before detaching, so that a taken port is reported here. */
    if ((fd = netaddr_listen(&na, 1024)) == -1)
        fatal("cannot listen on %s", na.text);
    /* With port 0 the kernel chose one: say which. */
    bound.len = sizeof bound.ss;
    if (getsockname(fd, (struct sockaddr *)&bound.ss, &bound.len) == 0)
        netaddr_set_port(&na, netaddr_port(&bound));

    /* The dashboard too: a refusal (no token beyond loopback) or a taken
     * port is reported here, before detaching. */
    http_fd = -1;
    if (strcmp(cfg.sn_http, "none") != 0) {
        memset(&hp, 0, sizeof hp);
        if (dashboard_token(&cfg, &token, err, sizeof err) == -1)
            fatalx("%s", err);
        hp.listen = cfg.sn_http;
        hp.token = token;
        hp.known = (const char *const *)cfg.supernodes;
        hp.nknown = cfg.nsupernodes;
        hp.federation = (const char *const *)cfg.sn_federation.v;
        hp.nfederation = cfg.sn_federation.n;
        hp.self_addr = na.text;
        hp.max_conns = 64;
        if ((http_fd = http_bind(&hp, http_addr_s, sizeof http_addr_s, err,
                                 sizeof err)) == -1) {
            /* The default port taken (another supernode on this machine
             * serves it) costs only the dashboard; anything asked for
             * explicitly must work. */
            if (errno != EADDRINUSE ||
                strcmp(cfg.sn_http, CONF_DEFAULT_SN_HTTP) != 0)
                fatalx("%s", err);
            log_warnx("%s; running without a dashboard", err);
        }
    }

    sp.fed.listen_addr = na.text;
    daemon_start("runSuperNode", foreground,
                 pidfile != NULL ? pidfile : cfg.sn_pid_file,
                 P2P_LOG_INFO + verbose);

    signal(SIGPIPE, SIG_IGN);
    if ((base = event_base_new()) == NULL)
        fatalx("event_base_new failed");
    /* Peers first: the dashboard's connections run at the lowest of
     * three priorities, everything else at the middle one (the default). */
    if (event_base_priority_init(base, 3) == -1)
        fatalx("event_base_priority_init failed");
    the_server = server_new(base, fd, &sp);
    if (http_fd != -1) {
        http = http_new(base, the_server, &hp, http_fd, http_addr_s);
        log_info("dashboard on http://%s/%s", http_addr_s,
                 token != NULL ? " (token required)" : "");
    }
    ev_term = evsignal_new(base, SIGTERM, on_signal, base);
    ev_int = evsignal_new(base, SIGINT, on_signal, base);
    ev_cron = event_new(base, -1, EV_PERSIST, on_cron, NULL);
    evsignal_add(ev_term, NULL);
    evsignal_add(ev_int, NULL);
    evtimer_add(ev_cron, &cron_tv);
    log_info("listening on %s, group %s, expiry %d s, heartbeat %d ms",
             na.text, sp.group.name, sp.expire_s, sp.heartbeat_ms);
    log_info("open files: %ld (soft limit raised to the hard limit); "
             "sessions at most %d, handshakes at most %d",
             v, sp.max_sessions, sp.max_preauth);

    event_base_dispatch(base);

    http_free(http);
    server_free(the_server);
    event_free(ev_term);
    event_free(ev_int);
    event_free(ev_cron);
    /* Let closed channels be reaped before the base goes. */
    event_base_loop(base, EVLOOP_NONBLOCK);
    event_base_free(base);
    group_wipe(&sp.group);
    if (token != NULL) {
        sec_wipe(token, strlen(token));
        free(token);
    }
    config_free(&cfg);
    log_info("stopped");
    return 0;
}
