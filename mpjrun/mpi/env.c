/*
 * The environment: MPI_Init wires the job up (listen, tell peerd where,
 * wait for everyone's address and the job's key, connect), MPI_Finalize
 * drains and closes, MPI_Abort asks the coordinator to end the job.  A
 * program started without p2prun (no control socket) runs as a job of
 * one rank.
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "ctl.h"
#include "ctltable.h"
#include "decide.h"
#include "rep.h"
#include "sec.h"

#define TABLE_WAIT_MS 120000


static int initialized, finalized, thread_level;
static int env_int(const char *, int);
static int ctl = -1;
static int world_size = 1;

int
mpii_initialized(void)
{
    return initialized && !finalized;
}

int
mpii_replicated(void)
{
    return mpii_nreplicas() > 1;
}

int
mpii_nreplicas(void)
{
    return env_int("P2P_NREPLICAS", 1);
}

int
mpii_env_off(const char *name)
{
    const char *v = getenv(name);

    return v != NULL &&
           (strcmp(v, "0") == 0 || strcmp(v, "no") == 0 || strcmp(v, "off") == 0);
}

int
mpii_sealed(void)
{
    return !mpii_env_off("P2P_ENCRYPT");
}

int
mpii_thread_level(void)
{
    return thread_level;
}

static int
env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    char *end;
    long n;

    if (v == NULL || *v == '\0')
        return dflt;
    n = strtol(v, &end, 10);
    return *end == '\0' && n >= 0 && n < 0x7fffffff ? (int)n : -1;
}

/* Everyone's address and the job's key, once the coordinator has all:
 * a head, then parts, as peerd writes them (ctltable.c checks each). */
static int
env_wait_table(struct ctl_table_rx *rx, uint32_t limit)
{
    size_t cap = sizeof(struct ctl_view_head) + CTL_VIEW_MAX * 4;
    struct pollfd pfd = {ctl, POLLIN, 0};
    uint8_t *buf;
    ssize_t n;
    int rc;

    ctl_table_rx_init(rx, limit);
    if ((buf = malloc(cap)) == NULL)
        return MPI_ERR_NO_MEM;
    for (;;) {
        do
            rc = poll(&pfd, 1, TABLE_WAIT_MS);
        while (rc == -1 && errno == EINTR);
        if (rc != 1 || (n = recv(ctl, buf, cap, 0)) <= 0) {
            snprintf(rx->err, sizeof rx->err, "control socket %s",
                     rc == 1 ? "closed" : "silent");
            rc = -1;
            break;
        }
        if ((rc = ctl_table_rx_feed(rx, buf, (size_t)n)) != 0)
            break;
    }
    free(buf);
    if (rc == 1)
        return MPI_SUCCESS;
    ctl_table_rx_free(rx);
    return MPI_ERR_OTHER;
}

static int local_procs = 1; /* the job's processes on this machine */

/* Is this IP one of this machine's?  Loopback always is. */
static int
env_ip_local(const char *ip, const struct ifaddrs *ifs)
{
    char buf[INET6_ADDRSTRLEN];
    const struct ifaddrs *i;

    if (strncmp(ip, "127.", 4) == 0 || strcmp(ip, "::1") == 0)
        return 1;
    for (i = ifs; i != NULL; i = i->ifa_next) {
        if (i->ifa_addr == NULL ||
            (i->ifa_addr->sa_family != AF_INET &&
             i->ifa_addr->sa_family != AF_INET6))
            continue;
        if (inet_ntop(i->ifa_addr->sa_family,
                      i->ifa_addr->sa_family == AF_INET
                          ? (void *)&((struct sockaddr_in *)i->ifa_addr)
                                ->sin_addr
                          : (void *)&((struct sockaddr_in6 *)i->ifa_addr)
                                ->sin6_addr,
                      buf, sizeof buf) != NULL &&
            strcmp(buf, ip) == 0)
            return 1;
    }
    return 0;
}

/* How many of the job's processes share this machine: every replica
 * counts, whichever peer started it (several peers may share a machine,
 * as the embedded cluster's do). */
static void
env_count_local(const struct ctl_entry *tab, int n)
{
    struct ifaddrs *ifs = NULL;
    char ip[72], *colon;
    int i, k = 0;

    (void)getifaddrs(&ifs);
    for (i = 0; i < n; i++) {
        snprintf(ip, sizeof ip, "%s", tab[i].addr);
        if ((colon = strrchr(ip, ':')) != NULL)
            *colon = '\0';
        if (ip[0] == '[') {
            memmove(ip, ip + 1, strlen(ip));
            ip[strlen(ip) - 1] = '\0';
        }
        k += env_ip_local(ip, ifs);
    }
    if (ifs != NULL)
        freeifaddrs(ifs);
    if (k > local_procs)
        local_procs = k;
}

/* The cores this process may run on: its affinity (taskset, a cpuset),
 * else every online one.  Two ranks allowed one core between them, yet
 * counting the machine's two, spun without yielding: each message
 * waited for the scheduler's tick (1-byte latency 4 ms). */
static long
env_cores(void)
{
    cpu_set_t set;

    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    return sysconf(_SC_NPROCESSORS_ONLN);
}

/* Whether ranks here share cores (request.c's waiting policy, and
 * tcpcc.h's choice for the connections made from now on). */
static void
env_note_cores(int say)
{
    int local = env_int("P2P_LOCAL_PROCS", 1);
    long cores = env_cores();

    if (local > local_procs)
        local_procs = local;
    req_set_oversubscribed(cores > 0 && local_procs > cores);
    if (say && getenv("P2P_MPI_STATS") != NULL)
        mpii_log("p2pmpi: rank %d: %d of the job's processes here, "
                 "cores to run on %ld: %s",
                 env_int("P2P_RANK", 0), local_procs, cores,
                 req_oversubscribed() ? "sharing cores" : "a core each");
}

static int
env_wireup(int rank, int size)
{
    struct ctl_addr a;
    struct ctl_table_rx rx;
    const char *bind = getenv("P2P_BIND");
    int replica = env_int("P2P_REPLICA", 0), sealed = mpii_sealed(), rc;
    int nrep = mpii_nreplicas();
    uint16_t port;

    if (replica < 0 || nrep < 1 || nrep > 32 || sec_init() == -1)
        return MPI_ERR_OTHER;
    if (transport_listen(bind != NULL && *bind ? bind : "127.0.0.1", &port) ==
        -1) {
        mpii_log("p2pmpi: rank %d: cannot listen on %s", rank,
                 bind ? bind : "127.0.0.1");
        return MPI_ERR_OTHER;
    }
    memset(&a, 0, sizeof a);
    a.type = CTL_ADDR;
    a.version = CTL_VERSION;
    a.port = port;
    mpii_test_point("init");
    if (send(ctl, &a, sizeof a, MSG_NOSIGNAL) != sizeof a)
        return MPI_ERR_OTHER;
    if ((rc = env_wait_table(&rx, (uint32_t)size * (uint32_t)nrep)) !=
        MPI_SUCCESS) {
        mpii_log("p2pmpi: rank %d: no address table from peerd: %s", rank,
                 rx.err);
        return rc;
    }
    env_count_local(rx.tab, (int)rx.n);
    env_note_cores(0);
    if (nrep > 1) {
        /* Replicas: who is not in the table (no address) is dead. */
        uint8_t *dead = malloc((size_t)size * (size_t)nrep);
        uint32_t i;

        if (dead == NULL || replica >= nrep) {
            free(dead);
            ctl_table_rx_free(&rx);
            return MPI_ERR_OTHER;
        }
        memset(dead, 1, (size_t)size * (size_t)nrep);
        for (i = 0; i < rx.n; i++)
            if (rx.tab[i].rank < (uint32_t)size &&
                rx.tab[i].replica < (uint32_t)nrep && rx.tab[i].addr[0] != '\0')
                dead[rx.tab[i].rank * (uint32_t)nrep + rx.tab[i].replica] = 0;
        rc = rep_init(rank, replica, size, nrep, dead, repio_make(ctl));
        rep_set_progress((rx.flags & CTL_TF_PROGRESS) != 0);
        free(dead);
        if (rc != MPI_SUCCESS) {
            ctl_table_rx_free(&rx);
            return rc;
        }
    }
    rc = transport_connect_all(rx.tab, (int)rx.n, rx.key, rank, size, replica,
                               nrep, sealed, ctl);
    if (rc == MPI_SUCCESS && nrep > 1)
        rep_start();
    ctl_table_rx_free(&rx);
    if (rc != MPI_SUCCESS)
        mpii_log("p2pmpi: rank %d: could not connect to every rank", rank);
    return rc;
}

#pragma weak MPI_Init = PMPI_Init
int
PMPI_Init(int *argc, char ***argv)
{
    MPII_ENTER;
    int rank, size, rc;

    (void)argc;
    (void)argv;
    if (initialized || finalized)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_OTHER, "MPI_Init");
    if (getenv(CTL_FD_ENV) == NULL) {
        /* Not started by p2prun: a job of one. */
        rank = 0;
        size = 1;
        if ((rc = transport_connect_all(NULL, 0, (const uint8_t *)"", 0, 1, 0,
                                        1, 0, -1)) != MPI_SUCCESS)
            return rc;
    } else {
        ctl = env_int(CTL_FD_ENV, -1);
        rank = env_int("P2P_RANK", -1);
        size = env_int("P2P_SIZE", -1);
        if (ctl < 0 || rank < 0 || size < 1 || rank >= size)
            return MPI_ERR_OTHER;
        if ((rc = env_wireup(rank, size)) != MPI_SUCCESS) {
            /* With replicas, this replica alone leaves: the coordinator
             * declares it dead and the others go on without it. */
            if (mpii_replicated())
                _exit(MPII_EXIT_WIREUP);
            mpii_abort(1);
            return rc;
        }
    }
    world_size = size;
    env_note_cores(1);
    if ((rc = mpii_comm_init(rank, size)) != MPI_SUCCESS)
        return rc;
    mpii_thread_init(0);
    initialized = 1;
    return MPI_SUCCESS;
}

#pragma weak MPI_Init_thread = PMPI_Init_thread
int
PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    MPII_ENTER;
    int rc = PMPI_Init(argc, argv);

    /* MPI_THREAD_MULTIPLE: a lock around the library (thread.c).  Not
     * under replication: the replicas of a rank must make the same calls
     * in the same order, and threads would interleave theirs differently
     * in each.  SERIALIZED is given there: threads that take turns in an
     * order of the program's own run alike in every replica. */
    thread_level = required < MPI_THREAD_SINGLE     ? MPI_THREAD_SINGLE
                   : required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                                                    : required;
    if (thread_level == MPI_THREAD_MULTIPLE && mpii_replicated())
        thread_level = MPI_THREAD_SERIALIZED;
    if (rc == MPI_SUCCESS)
        mpii_thread_init(thread_level == MPI_THREAD_MULTIPLE);
    if (provided != NULL)
        *provided = thread_level;
    return rc;
}

#pragma weak MPI_Query_thread = PMPI_Query_thread
int
PMPI_Query_thread(int *provided)
{
    MPII_ENTER;
    if (provided == NULL)
        return MPI_ERR_ARG;
    *provided = thread_level;
    return MPI_SUCCESS;
}

#pragma weak MPI_Is_thread_main = PMPI_Is_thread_main
int
PMPI_Is_thread_main(int *flag)
{
    MPII_ENTER;
    if (flag == NULL)
        return MPI_ERR_ARG;
    *flag = mpii_thread_is_main();
    return MPI_SUCCESS;
}

#pragma weak MPI_Initialized = PMPI_Initialized
int
PMPI_Initialized(int *flag)
{
    MPII_ENTER;
    if (flag == NULL)
        return MPI_ERR_ARG;
    *flag = initialized;
    return MPI_SUCCESS;
}

#pragma weak MPI_Finalized = PMPI_Finalized
int
PMPI_Finalized(int *flag)
{
    MPII_ENTER;
    if (flag == NULL)
        return MPI_ERR_ARG;
    *flag = finalized;
    return MPI_SUCCESS;
}

static int
all_flushed(void *arg)
{
    (void)arg;
    return transport_flushed();
}

static int
all_fins(void *arg)
{
    (void)arg;
    if (rep_active())
        return rep_fin_step();
    return transport_fin_step();
}

#pragma weak MPI_Finalize = PMPI_Finalize
int
PMPI_Finalize(void)
{
    MPII_ENTER;
    int rc;

    MPII_CHECK_INIT("MPI_Finalize");
    mpii_attr_finalize(); /* MPI_COMM_SELF's attributes go first */
    /* Everything we sent is on its way; then tell everyone we are done
     * and wait until everyone is: no rank closes a connection another
     * still reads.  Every rank we talked to is told (all_fins): with
     * replicas, every rank we exchanged a message with; otherwise every
     * rank we have a connection with. */
    mpii_test_point("finalize");
    rc = req_wait_until(all_flushed, NULL);
    if (rc == MPI_SUCCESS)
        rc = req_wait_until(all_fins, NULL);
    if (rc == MPI_SUCCESS)
        rc = req_wait_until(all_flushed, NULL);
    if (getenv("P2P_MPI_STATS") != NULL)
        mpii_log("p2pmpi: rank %d: tests and probes that found nothing "
                 "yielded the core %lu times", env_int("P2P_RANK", 0),
                 req_poll_yields());
    transport_fini();
    rep_fini();
    dec_fini();
    match_fini();
    mpii_win_fini();
    req_fini();
    mpii_red_fini();
    mpii_errclass_fini();
    mpii_info_fini();
    mpii_message_fini();
    mpii_comm_fini();
    mpii_attr_fini();
    mpii_group_fini();
    mpii_type_fini();
    mpii_op_fini();
    if (ctl != -1)
        close(ctl);
    ctl = -1;
    finalized = 1;
    return rc == MPI_SUCCESS ? rc : MPI_ERR_OTHER;
}

void
mpii_abort(int status)
{
    struct ctl_abort a;
    struct timespec ts = {10, 0};

    if (ctl != -1) {
        memset(&a, 0, sizeof a);
        a.type = CTL_ABORT;
        a.version = CTL_VERSION;
        a.status = status;
        if (send(ctl, &a, sizeof a, MSG_NOSIGNAL) == sizeof a)
            nanosleep(&ts, NULL); /* the job is stopped around us */
    }
    _exit(status != 0 ? status & 0xff : 1);
}

#pragma weak MPI_Abort = PMPI_Abort
int
PMPI_Abort(MPI_Comm comm, int errorcode)
{
    MPII_ENTER;
    (void)comm;
    mpii_abort(errorcode);
    return MPI_ERR_OTHER;
}

#pragma weak MPI_Wtime = PMPI_Wtime
double
PMPI_Wtime(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#pragma weak MPI_Wtick = PMPI_Wtick
double
PMPI_Wtick(void)
{
    return 1e-9;
}

#pragma weak MPI_Get_processor_name = PMPI_Get_processor_name
int
PMPI_Get_processor_name(char *name, int *len)
{
    MPII_ENTER;
    const char *host = getenv("P2P_HOST");
    char buf[MPI_MAX_PROCESSOR_NAME];
    int n;

    if (name == NULL || len == NULL)
        return MPI_ERR_ARG;
    if (host == NULL || *host == '\0') {
        if (gethostname(buf, sizeof buf) == -1)
            snprintf(buf, sizeof buf, "localhost");
        buf[sizeof buf - 1] = '\0';
        host = buf;
    }
    n = snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", host);
    *len = n < MPI_MAX_PROCESSOR_NAME ? n : MPI_MAX_PROCESSOR_NAME - 1;
    return MPI_SUCCESS;
}

/* Profiling control: the library itself profiles nothing, so any level
 * is accepted and changes nothing (MPI 3.1 14.2.4); a tool that wraps
 * MPI_Pcontrol sees the call. */
#pragma weak MPI_Pcontrol = PMPI_Pcontrol
int
PMPI_Pcontrol(const int level, ...)
{
    MPII_ENTER;
    (void)level;
    return MPI_SUCCESS;
}

#pragma weak MPI_Get_version = PMPI_Get_version
int
PMPI_Get_version(int *version, int *subversion)
{
    MPII_ENTER;
    if (version == NULL || subversion == NULL)
        return MPI_ERR_ARG;
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

#pragma weak MPI_Get_library_version = PMPI_Get_library_version
int
PMPI_Get_library_version(char *version, int *len)
{
    MPII_ENTER;
    int n;

    if (version == NULL || len == NULL)
        return MPI_ERR_ARG;
    n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                 "p2pmpi %s (MPI %d.%d subset)", P2P_VERSION, MPI_VERSION,
                 MPI_SUBVERSION);
    *len = n;
    return MPI_SUCCESS;
}
