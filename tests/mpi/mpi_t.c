/*
 * mpi_t: the tool information interface (MPI 3.1 14.3).
 *
 * Standard behaviour, checked on any MPI: every call but
 * MPI_T_init_thread fails with MPI_T_ERR_NOT_INITIALIZED before it (and
 * after the last MPI_T_finalize); initialisations nest; every control
 * and performance variable and every category can be described, found
 * again by name, and the strings follow 14.3.3 (a length of 0 asks the
 * length, a short buffer gets a truncated string and its null); indices
 * out of range and unknown names are refused; categories name only
 * variables and categories that exist; every control variable bound to
 * no object can be read; every performance variable bound to no object
 * can be given a handle in a session and read; sessions and handles are
 * freed and their handles set to null.
 *
 * Where the library has p2pmpi's variables (p2p_msgs_sent ...), what
 * they say: messages and bytes sent and arrived count what this program
 * did, a handle counts from where it began and from its reset or write,
 * the unexpected queue holds the messages a rank sent before the
 * receives were posted (and its high-water mark stays), the posted
 * queue holds a receive posted before its message; the control
 * variables give the eager limit and the replicas the job runs with,
 * and cannot be written.
 */
#include "mpitest.h"

#define NMSG 5
#define MSG_BYTES 1000

/* p2pmpi's library: every check.  Open MPI 4.1 strays from 3.1 here
 * and there (indices it counts but refuses, MPI_T_ERR_INVALID_INDEX for
 * an enumeration's item, a name its own get_info gave not found): under
 * it the loops pass over what it refuses. */
static int ours;

/* Read the int control variable name bound to no object; with fixed,
 * check that it cannot be written (p2pmpi's).  0 when there is none. */
static int
cvar_int(const char *name, int *value, int fixed)
{
    MPI_T_cvar_handle h;
    int i, count;

    if (MPI_T_cvar_get_index(name, &i) != MPI_SUCCESS)
        return 0;
    MPI_OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    CHECK(count == 1, "%s: count %d", name, count);
    MPI_OK(MPI_T_cvar_read(h, value));
    if (fixed)
        CHECK(MPI_T_cvar_write(h, value) == MPI_T_ERR_CVAR_SET_NEVER,
              "%s written", name);
    {
        MPI_T_cvar_handle stale = h;

        MPI_OK(MPI_T_cvar_handle_free(&h));
        CHECK(h == MPI_T_CVAR_HANDLE_NULL, "handle not nulled");
        /* p2pmpi refuses a freed handle (elsewhere it may be followed). */
        if (ours)
            CHECK(MPI_T_cvar_read(stale, value) == MPI_T_ERR_INVALID_HANDLE &&
                      MPI_T_cvar_read(h, value) == MPI_T_ERR_INVALID_HANDLE,
                  "%s: a freed handle read", name);
    }
    return 1;
}

/* Uninitialised: refused. */
static void
t_not_initialized(void)
{
    int n;

    CHECK(MPI_T_cvar_get_num(&n) == MPI_T_ERR_NOT_INITIALIZED,
          "cvar_get_num before init");
    CHECK(MPI_T_finalize() == MPI_T_ERR_NOT_INITIALIZED,
          "finalize before init");
}

static void
t_strings(void)
{
    char name[256], small[4];
    int len, full, n;

    MPI_OK(MPI_T_cvar_get_num(&n));
    if (n == 0)
        return;
    len = 0;
    MPI_OK(MPI_T_cvar_get_info(0, name, &len, NULL, NULL, NULL, NULL, NULL,
                               NULL, NULL));
    full = len;
    CHECK(full >= 2, "length asked: %d", full);
    len = sizeof name;
    MPI_OK(MPI_T_cvar_get_info(0, name, &len, NULL, NULL, NULL, NULL, NULL,
                               NULL, NULL));
    CHECK(len == full && (int)strlen(name) + 1 == full,
          "length %d, asked %d, string %zu", len, full, strlen(name));
    len = sizeof small;
    memset(small, 'x', sizeof small);
    MPI_OK(MPI_T_cvar_get_info(0, small, &len, NULL, NULL, NULL, NULL, NULL,
                               NULL, NULL));
    if (full > (int)sizeof small)
        CHECK(small[sizeof small - 1] == '\0' &&
                  strncmp(small, name, sizeof small - 1) == 0,
              "truncated '%.4s'", small);
    /* No string: the length needed; no length: the string untouched
     * (as MPICH's mpi_t/mpi_t_str checks). */
    len = 1;
    MPI_OK(MPI_T_cvar_get_info(0, NULL, &len, NULL, NULL, NULL, NULL, NULL,
                               NULL, NULL));
    CHECK(len == full || !ours, "no string: length %d, want %d", len, full);
    memset(small, 'x', sizeof small);
    MPI_OK(MPI_T_cvar_get_info(0, small, NULL, NULL, NULL, NULL, NULL, NULL,
                               NULL, NULL));
    CHECK(memcmp(small, "xxxx", 4) == 0, "no length: string written");
}

static void
t_cvars(void)
{
    char name[256], desc[1024];
    int n, i, nl, dl, verb, bind, scope, j, v, rc;
    MPI_Datatype dt;
    MPI_T_enum et;

    MPI_OK(MPI_T_cvar_get_num(&n));
    for (i = 0; i < n; i++) {
        nl = sizeof name;
        dl = sizeof desc;
        rc = MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &et, desc, &dl,
                                 &bind, &scope);
        if (rc != MPI_SUCCESS) {
            CHECK(!ours, "cvar %d: %d", i, rc);
            continue;
        }
        CHECK((MPI_T_cvar_get_index(name, &j) == MPI_SUCCESS && j == i) ||
                  !ours,
              "cvar %s found at %d, not %d", name, j, i);
        if (et != MPI_T_ENUM_NULL) {
            int items, k, value;
            char en[256], in[256];
            int enl = sizeof en, inl;

            MPI_OK(MPI_T_enum_get_info(et, &items, en, &enl));
            CHECK(items > 0, "enum %s of %s empty", en, name);
            for (k = 0; k < items; k++) {
                inl = sizeof in;
                MPI_OK(MPI_T_enum_get_item(et, k, &value, in, &inl));
            }
            rc = MPI_T_enum_get_item(et, items, &value, in, &inl);
            CHECK(rc == MPI_T_ERR_INVALID_ITEM || !ours,
                  "enum item beyond the end: %d", rc);
        }
        /* Read p2pmpi's (Open MPI 4.1 refuses handles to, or reads of,
         * some it describes, with MPI_T_ERR_INVALID_INDEX). */
        if (strncmp(name, "p2p_", 4) == 0) {
            CHECK(bind == MPI_T_BIND_NO_OBJECT && dt == MPI_INT,
                  "%s: bound %d", name, bind);
            CHECK(cvar_int(name, &v,
                           scope == MPI_T_SCOPE_CONSTANT ||
                               scope == MPI_T_SCOPE_READONLY),
                  "%s not read", name);
        }
    }
    if (!ours)
        return;
    CHECK(MPI_T_cvar_get_info(n, name, &nl, NULL, NULL, NULL, NULL, NULL,
                              NULL, NULL) == MPI_T_ERR_INVALID_INDEX,
          "cvar index %d", n);
    CHECK(MPI_T_cvar_get_info(-1, name, &nl, NULL, NULL, NULL, NULL, NULL,
                              NULL, NULL) == MPI_T_ERR_INVALID_INDEX,
          "cvar index -1");
    CHECK(MPI_T_cvar_get_index("no such variable, surely", &j) ==
              MPI_T_ERR_INVALID_NAME,
          "unknown cvar name");
}

static void
t_pvars(void)
{
    char name[256], desc[1024];
    int n, i, nl, dl, verb, cls, bind, ro, cont, atomic, j, count, rc;
    MPI_Datatype dt;
    MPI_T_enum et;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    unsigned long long v;

    MPI_OK(MPI_T_pvar_get_num(&n));
    MPI_OK(MPI_T_pvar_session_create(&s));
    for (i = 0; i < n; i++) {
        nl = sizeof name;
        dl = sizeof desc;
        rc = MPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &dt, &et, desc,
                                 &dl, &bind, &ro, &cont, &atomic);
        if (rc != MPI_SUCCESS) {
            CHECK(!ours, "pvar %d: %d", i, rc);
            continue;
        }
        CHECK((MPI_T_pvar_get_index(name, cls, &j) == MPI_SUCCESS &&
               j == i) || !ours,
              "pvar %s found at %d, not %d", name, j, i);
        if (strncmp(name, "p2p_", 4) != 0)
            continue; /* as for control variables */
        CHECK(bind == MPI_T_BIND_NO_OBJECT && dt == MPI_UNSIGNED_LONG_LONG,
              "%s: bound %d", name, bind);
        MPI_OK(MPI_T_pvar_handle_alloc(s, i, NULL, &h, &count));
        CHECK(count == 1, "%s: count %d", name, count);
        if (!cont)
            MPI_OK(MPI_T_pvar_start(s, h));
        MPI_OK(MPI_T_pvar_read(s, h, &v));
        if (!cont)
            MPI_OK(MPI_T_pvar_stop(s, h));
        else
            CHECK(MPI_T_pvar_start(s, h) == MPI_T_ERR_PVAR_NO_STARTSTOP,
                  "%s continuous, yet started", name);
        MPI_OK(MPI_T_pvar_handle_free(s, &h));
        CHECK(h == MPI_T_PVAR_HANDLE_NULL, "handle not nulled");
    }
    CHECK(MPI_T_pvar_get_info(n, name, &nl, NULL, NULL, NULL, NULL, NULL,
                              NULL, NULL, NULL, NULL, NULL) ==
                  MPI_T_ERR_INVALID_INDEX ||
              !ours,
          "pvar index %d", n);
    CHECK(MPI_T_pvar_handle_alloc(s, n, NULL, &h, &count) ==
                  MPI_T_ERR_INVALID_INDEX ||
              !ours,
          "pvar handle of index %d", n);
    MPI_OK(MPI_T_pvar_session_free(&s));
    CHECK(s == MPI_T_PVAR_SESSION_NULL, "session not nulled");
}

static void
t_categories(void)
{
    int n, nc, np, i, k, ncv, npv, ncat, *idx, j, nl, rc;
    char name[256];

    MPI_OK(MPI_T_category_get_num(&n));
    MPI_OK(MPI_T_cvar_get_num(&nc));
    MPI_OK(MPI_T_pvar_get_num(&np));
    for (i = 0; i < n; i++) {
        nl = sizeof name;
        rc = MPI_T_category_get_info(i, name, &nl, NULL, NULL, &ncv, &npv,
                                     &ncat);
        if (rc != MPI_SUCCESS) {
            CHECK(!ours, "category %d: %d", i, rc);
            continue;
        }
        CHECK((MPI_T_category_get_index(name, &j) == MPI_SUCCESS &&
               j == i) || !ours,
              "category %s found at %d, not %d", name, j, i);
        idx = malloc(sizeof *idx * (size_t)(ncv + npv + ncat + 1));
        MPI_OK(MPI_T_category_get_cvars(i, ncv, idx));
        for (k = 0; k < ncv; k++)
            CHECK(idx[k] >= 0 && idx[k] < nc, "%s: cvar %d", name, idx[k]);
        MPI_OK(MPI_T_category_get_pvars(i, npv, idx));
        for (k = 0; k < npv; k++)
            CHECK(idx[k] >= 0 && idx[k] < np, "%s: pvar %d", name, idx[k]);
        MPI_OK(MPI_T_category_get_categories(i, ncat, idx));
        for (k = 0; k < ncat; k++)
            CHECK(idx[k] >= 0 && idx[k] < n, "%s: category %d", name, idx[k]);
        free(idx);
    }
    CHECK(MPI_T_category_get_info(n, name, &nl, NULL, NULL, NULL, NULL,
                                  NULL) == MPI_T_ERR_INVALID_INDEX ||
              !ours,
          "category index %d", n);
    MPI_OK(MPI_T_category_changed(&j));
}

/* A handle of p2pmpi's counter or level name in session s; 0 when the
 * library has no such variable. */
static int
handle(MPI_T_pvar_session s, const char *name, int cls, MPI_T_pvar_handle *h)
{
    int i, count;

    if (MPI_T_pvar_get_index(name, cls, &i) != MPI_SUCCESS)
        return 0;
    MPI_OK(MPI_T_pvar_handle_alloc(s, i, NULL, h, &count));
    return 1;
}

static unsigned long long
readp(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = 0;

    MPI_OK(MPI_T_pvar_read(s, h, &v));
    return v;
}

/* p2pmpi's p2p_eager_max, the one control variable a process may set:
 * lowered to 100, a 1000-byte standard send waits for its receive; no
 * more than 65536; set back. */
static void
t_p2p_eager_cap(void)
{
    MPI_T_cvar_handle h;
    MPI_Request rq;
    char buf[1000];
    int i, count, v, small = 100, big = 65537, flag = 0;
    int peer = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;

    if (MPI_T_cvar_get_index("p2p_eager_max", &i) != MPI_SUCCESS)
        return; /* not p2pmpi */
    MPI_OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    CHECK(MPI_T_cvar_write(h, &big) == MPI_T_ERR_INVALID, "65537 taken");
    MPI_OK(MPI_T_cvar_write(h, &small));
    MPI_OK(MPI_T_cvar_read(h, &v));
    CHECK(v == small, "read back %d", v);
    if (t_size > 1) {
        memset(buf, 7, sizeof buf);
        MPI_OK(MPI_Isend(buf, sizeof buf, MPI_BYTE, peer, 60, MPI_COMM_WORLD,
                         &rq));
        for (i = 0; i < 100 && !flag; i++)
            MPI_OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "a 1000-byte send complete before its receive");
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Recv(buf, sizeof buf, MPI_BYTE, from, 60, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        if (!flag)
            MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        CHECK(buf[0] == 7 && buf[sizeof buf - 1] == 7, "data");
    }
    v = 65536;
    MPI_OK(MPI_T_cvar_write(h, &v));
    MPI_OK(MPI_T_cvar_read(h, &v));
    CHECK(v == 65536, "set back: %d", v);
    MPI_OK(MPI_T_cvar_handle_free(&h));
}

/* What p2pmpi's variables say, where they exist. */
static void
t_p2p_values(void)
{
    MPI_T_pvar_session s;
    MPI_T_pvar_handle sent, bytes, arrived, abytes, unexp, peak, posted;
    char buf[NMSG][MSG_BYTES];
    MPI_Request reqs[NMSG];
    unsigned long long v, w;
    int i, eager, reps, hosts, peer = (t_rank + 1) % t_size;
    int from = (t_rank + t_size - 1) % t_size;

    MPI_OK(MPI_T_pvar_session_create(&s));
    if (!handle(s, "p2p_msgs_sent", MPI_T_PVAR_CLASS_COUNTER, &sent)) {
        MPI_OK(MPI_T_pvar_session_free(&s));
        return; /* not p2pmpi */
    }
    CHECK(handle(s, "p2p_bytes_sent", MPI_T_PVAR_CLASS_COUNTER, &bytes) &&
              handle(s, "p2p_msgs_arrived", MPI_T_PVAR_CLASS_COUNTER,
                     &arrived) &&
              handle(s, "p2p_bytes_arrived", MPI_T_PVAR_CLASS_COUNTER,
                     &abytes) &&
              handle(s, "p2p_unexpected", MPI_T_PVAR_CLASS_LEVEL, &unexp) &&
              handle(s, "p2p_unexpected_peak",
                     MPI_T_PVAR_CLASS_HIGHWATERMARK, &peak) &&
              handle(s, "p2p_posted", MPI_T_PVAR_CLASS_LEVEL, &posted),
          "p2pmpi's variables missing");
    CHECK(cvar_int("p2p_eager_max", &eager, 0) && eager == 65536,
          "eager limit %d", eager);
    CHECK(cvar_int("p2p_replicas", &reps, 1) && reps >= 1, "replicas %d",
          reps);
    CHECK(cvar_int("p2p_coll_hosts", &hosts, 1) && hosts == 1,
          "collectives by host %d", hosts);
    if (getenv("P2P_NREPLICAS") != NULL)
        CHECK(reps == atoi(getenv("P2P_NREPLICAS")), "replicas %d, env %s",
              reps, getenv("P2P_NREPLICAS"));
    /* A new handle starts at 0. */
    CHECK(readp(s, sent) == 0 && readp(s, bytes) == 0, "new handles %llu",
          readp(s, sent));

    /* NMSG messages to the next rank before it posts a receive: they
     * wait in its unexpected queue.  Then a mark: once it is received,
     * they have all arrived (one connection, in order). */
    memset(buf, t_rank, sizeof buf);
    for (i = 0; i < NMSG; i++)
        MPI_OK(MPI_Send(buf[i], MSG_BYTES, MPI_BYTE, peer, 10 + i,
                        MPI_COMM_WORLD));
    MPI_OK(MPI_Send(buf[0], 0, MPI_BYTE, peer, 50, MPI_COMM_WORLD));
    MPI_OK(MPI_Recv(buf[0], 0, MPI_BYTE, from, 50, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    CHECK(readp(s, sent) >= NMSG, "sent %llu", readp(s, sent));
    CHECK(readp(s, bytes) >= NMSG * MSG_BYTES, "bytes %llu",
          readp(s, bytes));
    CHECK(readp(s, unexp) >= NMSG, "unexpected %llu", readp(s, unexp));
    CHECK(readp(s, peak) >= NMSG, "peak %llu", readp(s, peak));
    w = readp(s, abytes);
    v = readp(s, arrived);
    for (i = 0; i < NMSG; i++)
        MPI_OK(MPI_Recv(buf[i], MSG_BYTES, MPI_BYTE, from, 10 + i,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(readp(s, arrived) >= NMSG && v >= NMSG, "arrived %llu",
          readp(s, arrived));
    CHECK(w >= NMSG * MSG_BYTES, "bytes arrived %llu", w);
    CHECK(readp(s, unexp) < NMSG, "unexpected after the receives %llu",
          readp(s, unexp));
    CHECK(readp(s, peak) >= NMSG, "peak after the receives %llu",
          readp(s, peak));
    /* Levels and marks are not reset. */
    CHECK(MPI_T_pvar_reset(s, peak) == MPI_T_ERR_PVAR_NO_WRITE,
          "high-water mark reset");

    /* A receive posted before its message waits in the posted queue. */
    MPI_OK(MPI_Irecv(buf[0], MSG_BYTES, MPI_BYTE, from, 99, MPI_COMM_WORLD,
                     &reqs[0]));
    CHECK(readp(s, posted) >= 1, "posted %llu", readp(s, posted));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Send(buf[1], MSG_BYTES, MPI_BYTE, peer, 99, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));

    /* Reset, read-and-reset and write restart a counter's handle. */
    MPI_OK(MPI_T_pvar_reset(s, sent));
    CHECK(readp(s, sent) == 0, "after reset %llu", readp(s, sent));
    MPI_OK(MPI_Send(buf[0], 1, MPI_BYTE, peer, 7, MPI_COMM_WORLD));
    MPI_OK(MPI_Recv(buf[0], 1, MPI_BYTE, from, 7, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    MPI_OK(MPI_T_pvar_readreset(s, sent, &v));
    CHECK(v == 1, "one send counted %llu", v);
    CHECK(readp(s, sent) == 0, "after readreset %llu", readp(s, sent));
    v = 1000;
    MPI_OK(MPI_T_pvar_write(s, sent, &v));
    CHECK(readp(s, sent) == 1000, "written %llu", readp(s, sent));
    CHECK(MPI_T_pvar_write(s, unexp, &v) == MPI_T_ERR_PVAR_NO_WRITE,
          "level written");
    MPI_OK(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES));
    CHECK(readp(s, sent) == 0 && readp(s, bytes) == 0,
          "reset all: %llu %llu", readp(s, sent), readp(s, bytes));
    MPI_OK(MPI_T_pvar_session_free(&s));
}

int
main(int argc, char **argv)
{
    int provided, provided2;

    t_not_initialized();
    /* Before MPI_Init, as tools do. */
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    t_init(&argc, &argv);
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided2));
    {
        int i;

        ours = MPI_T_cvar_get_index("p2p_eager_max", &i) == MPI_SUCCESS;
    }
    t_strings();
    t_cvars();
    t_pvars();
    t_categories();
    t_p2p_values();
    t_p2p_eager_cap();
    /* Nested: the first finalize leaves it initialised. */
    MPI_OK(MPI_T_finalize());
    {
        int n;

        CHECK(MPI_T_cvar_get_num(&n) == MPI_SUCCESS,
              "after one of two finalizes");
    }
    MPI_OK(MPI_T_finalize());
    t_not_initialized();
    return t_finish("mpi_t");
}
