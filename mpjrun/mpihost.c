/*
 * mpihost: the peers of the network as a supernode sees them, one line
 * each sorted by round-trip time, or as JSON (jansson, only here).
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "log.h"
#include "mpjrun.h"

static void
usage(FILE *f)
{
    fprintf(f, "usage: mpihost [--conf FILE] [--supernode ADDR:PORT]... "
               "[--json] [--local]\n"
               "               [--timeout SECONDS] [--verbose] [--help] "
               "[--version]\n"
               "\n"
               "Lists the peers registered with the network's supernode: host, "
               "address,\n"
               "slots free/total, memory free/total, load, round-trip time, "
               "state, and\n"
               "time since the last heartbeat.  A federated supernode lists "
               "the whole\n"
               "network; --local lists only the peers registered with it "
               "itself.\n");
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

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"conf", required_argument, NULL, 'c'},
        {"supernode", required_argument, NULL, 's'},
        {"json", no_argument, NULL, 'j'},
        {"local", no_argument, NULL, 'L'},
        {"timeout", required_argument, NULL, 't'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *conf = NULL, *sn[CONF_MAX_SUPERNODES];
    int nsn = 0, json = 0, local = 0, verbose = 0, timeout_s = 5, ch, rc;
    struct p2p_config cfg;
    struct p2p_group g;
    struct msg_list_reply list;
    char err[1024];

    log_init("mpihost", 1, P2P_LOG_WARN);
    /* A peer that vanishes mid-write must be an error on that connection,
     * not the end of this program; output to a closed pipe is dropped. */
    signal(SIGPIPE, SIG_IGN);
    while ((ch = getopt_long(argc, argv, "c:s:jt:vhV", opts, NULL)) != -1) {
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
    rc = snquery_list_scope(&cfg, &g, timeout_s * 1000, local, &list, err,
                            sizeof err);
    group_wipe(&g);
    config_free(&cfg);
    if (rc == -1) {
        fprintf(stderr, "mpihost: %s\n", err);
        return 1;
    }
    if (list.npeers > 1)
        qsort(list.peers, list.npeers, sizeof *list.peers, by_rtt);
    if (json)
        rc = print_json(&list);
    else
        print_table(&list);
    free(list.peers);
    if (rc == -1 || fflush(stdout) == EOF) {
        fprintf(stderr, "mpihost: cannot write the output\n");
        return 1;
    }
    return 0;
}
