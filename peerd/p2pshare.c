/*
 * p2pshare: the owner's switch.  Talks to the peerd of this machine over
 * its control socket (STATE_DIR/control.sock): change the sharing policy
 * until the next restart, go back to the configured one, show what the
 * peer sees and runs, or empty the machine now.  Only root and the
 * peerd's own user are obeyed; peerd checks, with the kernel's peer
 * credentials.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "log.h"
#include "peerd.h"
#include "xmalloc.h"

static void
usage(FILE *f)
{
    fprintf(f,
            "usage: p2pshare [--conf FILE] [--state-dir DIR] "
            "on|off|idle|default|status|evict\n"
            "\n"
            "Changes how this workstation shares itself, until peerd "
            "restarts.\n"
            "\n"
            "  on         share always\n"
            "  off        share never: running guest work is suspended, "
            "then evicted\n"
            "  idle       share while the owner is away (no input, low "
            "load)\n"
            "  default    back to [peer] sharing in the configuration\n"
            "  status     the policy, whether the owner counts as present "
            "and why,\n"
            "             and what runs here\n"
            "  evict      stop every guest job here now\n"
            "\n"
            "  --conf FILE       configuration (for [peer] state_dir)\n"
            "  --state-dir DIR   the peerd's state directory\n");
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"conf", required_argument, NULL, 'c'},
        {"state-dir", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    static const char *const verbs[] = {"on",     "off",    "idle",
                                        "default", "status", "evict"};
    const char *conf = NULL, *state_dir = NULL, *verb;
    struct p2p_config cfg;
    struct sockaddr_un sun;
    char err[512], *dir, answer[16384];
    ssize_t n;
    size_t i;
    int ch, fd;

    log_init("p2pshare", 1, P2P_LOG_WARN);
    while ((ch = getopt_long(argc, argv, "c:d:hV", opts, NULL)) != -1) {
        switch (ch) {
        case 'c':
            conf = optarg;
            break;
        case 'd':
            state_dir = optarg;
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
    if (optind != argc - 1) {
        usage(stderr);
        return 2;
    }
    verb = argv[optind];
    for (i = 0; i < sizeof verbs / sizeof *verbs; i++)
        if (strcmp(verb, verbs[i]) == 0)
            break;
    if (i == sizeof verbs / sizeof *verbs) {
        fprintf(stderr, "p2pshare: unknown request '%s'\n", verb);
        usage(stderr);
        return 2;
    }
    if (config_load(&cfg, conf, err, sizeof err) == -1) {
        fprintf(stderr, "p2pshare: %s\n", err);
        return 1;
    }
    if (state_dir != NULL)
        dir = xstrdup(state_dir);
    else if (cfg.state_dir != NULL)
        dir = xstrdup(cfg.state_dir);
    else
        dir = identity_default_state_dir();
    config_free(&cfg);
    memset(&sun, 0, sizeof sun);
    sun.sun_family = AF_UNIX;
    if ((size_t)snprintf(sun.sun_path, sizeof sun.sun_path, "%s/control.sock",
                         dir) >= sizeof sun.sun_path) {
        fprintf(stderr, "p2pshare: %s: path too long\n", dir);
        free(dir);
        return 1;
    }
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd == -1 || connect(fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
        fprintf(stderr, "p2pshare: no peerd at %s: %s\n", sun.sun_path,
                strerror(errno));
        free(dir);
        return 1;
    }
    free(dir);
    if (send(fd, verb, strlen(verb), MSG_NOSIGNAL) == -1 ||
        (n = recv(fd, answer, sizeof answer - 1, 0)) <= 0) {
        fprintf(stderr, "p2pshare: peerd did not answer\n");
        close(fd);
        return 1;
    }
    close(fd);
    answer[n] = '\0';
    if (strncmp(answer, "ok\n", 3) == 0) {
        fputs(answer + 3, stdout);
        return 0;
    }
    fprintf(stderr, "p2pshare: %s", strncmp(answer, "error: ", 7) == 0
                                       ? answer + 7
                                       : answer);
    return 1;
}
