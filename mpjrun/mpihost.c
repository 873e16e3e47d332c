/*
 * mpihost: the peers of the network as a supernode sees them, one line
 * each sorted by round-trip time, or as JSON (jansson, only here); with
 * --jobs the jobs it knows of (as the dashboard lists them); with --watch
 * either, refreshed in place until interrupted.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "jobjson.h"
#include "log.h"
#include "mpjrun.h"

#define WATCH_EVERY_S 2

static volatile sig_atomic_t interrupted;

static void
usage(FILE *f)
{
    fprintf(f, "usage: mpihost [--conf FILE] [--supernode ADDR:PORT]... "
               "[--jobs] [--json]\n"
               "               [--local] [--watch] [--timeout SECONDS] "
               "[--verbose] [--help]\n"
               "               [--version]\n"
               "\n"
               "Lists the peers registered with the network's supernode: host, "
               "address,\n"
               "slots free/total, memory free/total, load, round-trip time, "
               "state, and\n"
               "time since the last heartbeat.  A federated supernode lists "
               "the whole\n"
               "network.\n"
               "\n"
               "  --jobs     list the jobs instead: running ones, then those "
               "finished lately,\n"
               "             with each rank's replicas and their hosts\n"
               "  --json     print JSON (the same fields as the dashboard's "
               "API)\n"
               "  --local    only the peers registered with the supernode "
               "that answers\n"
               "  --watch    refresh every %d s in place until interrupted\n",
            WATCH_EVERY_S);
}

/* Unknown round-trip times (0) sort last. */
static int
by_rtt(const void *a, const void *b)
{
    const struct peer_entry *x = a, *y = b;
    uint64_t rx = x->rtt_us ? x->rtt_us : UINT64_MAX;
    uint64_t ry = y->rtt_us ? y->rtt_us : UINT64_MAX;

    if (rx != ry)
        return rx < ry ? -1 : 1;
    return strcmp(x->host_label, y->host_label);
}

static const char *
fmt_bytes(char *buf, size_t len, uint64_t b)
{
    static const char units[] = "BKMGTP";
    double v = (double)b;
    int u = 0;

    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, u ? "%.1f%c" : "%.0f%c", v, units[u]);
    return buf;
}

static const char *
fmt_rtt(char *buf, size_t len, uint32_t us)
{
    if (us == 0)
        snprintf(buf, len, "-");
    else if (us < 1000)
        snprintf(buf, len, "%uus", us);
    else
        snprintf(buf, len, "%.1fms", us / 1000.0);
    return buf;
}

static void
print_table(const struct msg_list_reply *l)
{
    char mf[16], mt[16], mem[40], slots[24], rtt[16];
    size_t i;

    printf("%-16s %-22s %-7s %-15s %-6s %-8s %-11s %s\n", "HOST", "ADDRESS",
           "SLOTS", "MEMORY", "LOAD", "RTT", "STATE", "AGE");
    for (i = 0; i < l->npeers; i++) {
        const struct peer_entry *p = &l->peers[i];

        snprintf(slots, sizeof slots, "%u/%u", p->res.slots_free,
                 p->res.slots_total);
        snprintf(mem, sizeof mem, "%s/%s",
                 fmt_bytes(mf, sizeof mf, p->res.mem_free),
                 fmt_bytes(mt, sizeof mt, p->res.mem_total));
        printf("%-16s %-22s %-7s %-15s %-6.2f %-8s %-11s %.1fs\n",
               p->host_label, p->addr, slots, mem, p->res.load_milli / 1000.0,
               fmt_rtt(rtt, sizeof rtt, p->rtt_us),
               peer_state_name(p->res.state), p->age_ms / 1000.0);
    }
}

static int
print_json(const struct msg_list_reply *l)
{
    json_t *arr, *o;
    char id[2 * SEC_SIGN_PK_LEN + 1];
    size_t i;

    arr = json_array();
    for (i = 0; i < l->npeers; i++) {
        const struct peer_entry *p = &l->peers[i];

        sec_hex(id, p->id, sizeof p->id);
        o = json_pack(
            "{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:f, s:I, "
            "s:s, s:I}",
            "id", id, "host", p->host_label, "addr", p->addr, "cores",
            (json_int_t)p->res.cores, "slots_total",
            (json_int_t)p->res.slots_total, "slots_free",
            (json_int_t)p->res.slots_free, "mem_total",
            (json_int_t)p->res.mem_total, "mem_free",
            (json_int_t)p->res.mem_free, "load", p->res.load_milli / 1000.0,
            "rtt_us", (json_int_t)p->rtt_us, "state",
            peer_state_name(p->res.state), "age_ms", (json_int_t)p->age_ms);
        if (o == NULL || json_array_append_new(arr, o) == -1) {
            json_decref(arr);
            return -1;
        }
    }
    if (json_dumpf(arr, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) ==
        -1) {
        json_decref(arr);
        return -1;
    }
    putchar('\n');
    json_decref(arr);
    return 0;
}

static void
print_jobs_table(const struct msg_list_reply *l)
{
    char id[2 * WIRE_JOB_ID_LEN + 1], shape[48], when[16];
    time_t t;
    size_t i, k;

    printf("%-12s %-12s %-16s %-14s %-5s %-8s %s\n", "JOB", "USER",
           "COMMAND", "SHAPE", "HOSTS", "STARTED", "STATE");
    for (i = 0; i < l->njobs; i++) {
        const struct job_info *j = &l->jobs[i];

        sec_hex(id, j->job, WIRE_JOB_ID_LEN);
        if (j->farm && j->coord_total > 0)
            snprintf(shape, sizeof shape, "%llu/%llu tasks",
                     (unsigned long long)j->coord_done,
                     (unsigned long long)j->coord_total);
        else if (j->farm)
            snprintf(shape, sizeof shape, "%u/%u/%u tasks", j->tasks_done,
                     j->tasks_running, j->tasks_queued);
        else
            snprintf(shape, sizeof shape, "%ux%u", j->size, j->nreplicas);
        t = (time_t)j->started;
        if (t == 0 || strftime(when, sizeof when, "%H:%M:%S",
                               localtime(&t)) == 0)
            snprintf(when, sizeof when, "-");
        printf("%-12.12s %-12.12s %-16.16s %-14s %-5u %-8s ", id, j->user,
               j->command, shape, j->hosts, when);
        if (!j->finished)
            printf("running\n");
        else if (j->exit >= 0)
            printf("finished, exit %d\n", j->exit);
        else
            printf("finished\n");
        /* The rank map: one line per rank, its replicas in order. */
        for (k = 0; k < j->nprocs; k++) {
            const struct job_proc *p = &j->procs[k];

            if (k == 0 || p->rank != j->procs[k - 1].rank)
                printf("%s  rank %u:", k ? "\n" : "", p->rank);
            printf(" %u@%s %s", p->replica, p->host,
                   p->state == PROC_RUN_UNKNOWN ? "ended"
                                                : proc_run_name(p->state));
        }
        if (j->nprocs)
            putchar('\n');
    }
    if (l->njobs == 0)
        printf("(no jobs)\n");
}

static int
print_jobs_json(const struct msg_list_reply *l)
{
    json_t *arr = json_array();
    size_t i;
    int rc;

    for (i = 0; i < l->njobs; i++)
        if (json_array_append_new(arr, jobjson_job(&l->jobs[i], SIZE_MAX)) ==
            -1) {
            json_decref(arr);
            return -1;
        }
    rc = json_dumpf(arr, stdout, JSON_INDENT(2));
    putchar('\n');
    json_decref(arr);
    return rc;
}

static void
on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* One answer printed as asked; -1 when it could not be written. */
static int
print_once(struct msg_list_reply *list, int jobs, int json)
{
    int rc = 0;

    if (jobs)
        rc = json ? print_jobs_json(list) : (print_jobs_table(list), 0);
    else {
        if (list->npeers > 1)
            qsort(list->peers, list->npeers, sizeof *list->peers, by_rtt);
        if (json)
            rc = print_json(list);
        else
            print_table(list);
    }
    free(list->peers);
    codec_jobs_free(list->jobs, list->njobs);
    if (rc == -1 || fflush(stdout) == EOF)
        return -1;
    return 0;
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"conf", required_argument, NULL, 'c'},
        {"supernode", required_argument, NULL, 's'},
        {"json", no_argument, NULL, 'j'},
        {"jobs", no_argument, NULL, 'J'},
        {"watch", no_argument, NULL, 'w'},
        {"local", no_argument, NULL, 'L'},
        {"timeout", required_argument, NULL, 't'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *conf = NULL, *sn[CONF_MAX_SUPERNODES];
    int nsn = 0, json = 0, local = 0, verbose = 0, timeout_s = 5, ch, rc;
    int jobs = 0, watch = 0, tty = isatty(STDOUT_FILENO);
    struct p2p_config cfg;
    struct p2p_group g;
    struct msg_list_reply list;
    char err[1024];

    log_init("mpihost", 1, P2P_LOG_WARN);
    /* A peer that vanishes mid-write must be an error on that connection,
     * not the end of this program; output to a closed pipe is dropped. */
    signal(SIGPIPE, SIG_IGN);
    while ((ch = getopt_long(argc, argv, "c:s:jJwt:vhV", opts, NULL)) != -1) {
        switch (ch) {
        case 'c':
            conf = optarg;
            break;
        case 's':
            if (nsn == CONF_MAX_SUPERNODES) {
                fprintf(stderr, "mpihost: at most %d supernodes\n",
                        CONF_MAX_SUPERNODES);
                return 2;
            }
            sn[nsn++] = optarg;
            break;
        case 'j':
            json = 1;
            break;
        case 'J':
            jobs = 1;
            break;
        case 'w':
            watch = 1;
            break;
        case 'L':
            local = 1;
            break;
        case 't':
            if (cli_int("--timeout", optarg, 1, 600, &timeout_s) == -1)
                return 2;
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
    log_set_verbosity(P2P_LOG_WARN + verbose);
    /* A failed attempt is summed up in the one error line below. */
    if (verbose == 0)
        log_set_verbosity(-1);

    if (config_load(&cfg, conf, err, sizeof err) == -1) {
        fprintf(stderr, "mpihost: %s\n", err);
        return 1;
    }
    config_override_supernodes(&cfg, (char *const *)sn, nsn);
    if (sec_init() == -1 || group_load(&cfg, &g, err, sizeof err) == -1) {
        fprintf(stderr, "mpihost: %s\n", err);
        config_free(&cfg);
        return 1;
    }
    if (watch) {
        struct sigaction sa;

        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_interrupt;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
    }
    rc = 0;
    do {
        if (snquery_ask(&cfg, &g, timeout_s * 1000, jobs, local, &list,
                        err, sizeof err) == -1) {
            /* Watching, a supernode away for a moment is shown, not
             * fatal. */
            if (!watch) {
                rc = 1;
                fprintf(stderr, "mpihost: %s\n", err);
                break;
            }
            memset(&list, 0, sizeof list);
            if (tty)
                printf("\033[H\033[J");
            printf("mpihost: %s\n", err);
            fflush(stdout);
        } else {
            if (watch && tty)
                printf("\033[H\033[J"); /* home, clear: redraw in place */
            if (print_once(&list, jobs, json) == -1) {
                fprintf(stderr, "mpihost: cannot write the output\n");
                rc = 1;
                break;
            }
        }
        if (watch && !tty)
            putchar('\n');
        if (watch && !interrupted)
            sleep(WATCH_EVERY_S);
    } while (watch && !interrupted);
    group_wipe(&g);
    config_free(&cfg);
    return rc;
}
