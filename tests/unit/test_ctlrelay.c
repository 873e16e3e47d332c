/*
 * peerd's relay of the coordinator's address table (ctlrelay_table): the
 * table arrives in parts (proto/ctltable.c encodes what the processes
 * get), and every part is untrusted.  ctlrelay.c is compiled in alone,
 * with the job accessors it calls faked below, so that parts can be fed
 * to it directly; no process is spawned and no relay is open.
 */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "peerd.h"
#include "test.h"

/* The job the parts belong to: only its size matters here. */
struct job {
    uint32_t nprocs;
};

static const uint8_t fake_id[WIRE_JOB_ID_LEN];

const char *
job_hex(const struct job *j)
{
    return "0badc0de";
}

const uint8_t *
job_id(const struct job *j)
{
    return fake_id;
}

uint32_t
job_nprocs_total(const struct job *j)
{
    return j->nprocs;
}

const char *
job_bind_host(const struct job *j)
{
    return "127.0.0.1";
}

struct svc_conn *
job_owner(const struct job *j)
{
    return NULL;
}

int
svc_conn_send(struct svc_conn *c, const struct msg *m)
{
    return 0;
}

size_t
svc_conn_backlog(const struct svc_conn *c)
{
    return 0;
}

/* The warnings logged, one line after another. */
static char logged[4096];

static void
capture(int level, const char *line)
{
    size_t have = strlen(logged);

    if (level == P2P_LOG_WARN)
        snprintf(logged + have, sizeof logged - have, "%s\n", line);
}

static void
setup(void)
{
    log_init("test_ctlrelay", 1, P2P_LOG_WARN);
    log_set_sink(capture);
    logged[0] = '\0';
}

static struct proc_addr addrs[4] = {
    {0, 0, "127.0.0.2:4000"},
    {1, 0, "127.0.0.3:4000"},
    {2, 0, "127.0.0.4:4000"},
    {3, 0, "127.0.0.5:4000"},
};

/* Part [first, first + n) of a table of total entries, keyed by key. */
static int
feed(struct ctltable_in **in, const struct job *j, uint32_t first, size_t n,
     uint32_t total, uint8_t key)
{
    struct msg_table t;

    memset(&t, 0, sizeof t);
    memset(t.key, key, sizeof t.key);
    t.first = first;
    t.total = total;
    t.nprocs = n;
    t.procs = n > 0 ? &addrs[first] : NULL;
    return ctlrelay_table(in, j, NULL, 0, &t);
}

/* The normal case: two parts make the table; a part after it is late. */
static void
t_parts(void)
{
    struct job j = {3};
    struct ctltable_in *in = NULL;

    setup();
    CHECK_EQ_INT(feed(&in, &j, 0, 2, 3, 1), 0);
    CHECK_EQ_INT(feed(&in, &j, 2, 1, 3, 1), 0);
    CHECK_EQ_INT(logged[0], '\0');
    CHECK_EQ_INT(feed(&in, &j, 3, 1, 3, 1), -1);
    CHECK_CONTAINS(logged, "does not fit");
    ctltable_in_free(in);
}

/* An empty first part adds nothing: refused with a log line, and it
 * leaves nothing behind (the real first part still sets size and key). */
static void
t_empty_first(void)
{
    struct job j = {3};
    struct ctltable_in *in = NULL;

    setup();
    CHECK_EQ_INT(feed(&in, &j, 0, 0, 3, 1), -1);
    CHECK_CONTAINS(logged, "address table part of 0 entries at 0 of 3");
    /* Had it been taken, the next part could restate the table's size
     * (1) and key (2) with nothing to hold it to the first. */
    logged[0] = '\0';
    CHECK_EQ_INT(feed(&in, &j, 0, 1, 1, 2), 0);
    CHECK_EQ_INT(logged[0], '\0');
    ctltable_in_free(in);
}

/* An empty part in the middle is refused too, and the table is still
 * held to its first part's size and key. */
static void
t_empty_middle(void)
{
    struct job j = {3};
    struct ctltable_in *in = NULL;

    setup();
    CHECK_EQ_INT(feed(&in, &j, 0, 1, 3, 1), 0);
    CHECK_EQ_INT(feed(&in, &j, 1, 0, 3, 1), -1);
    CHECK_CONTAINS(logged, "address table part of 0 entries at 1 of 3");
    CHECK_EQ_INT(feed(&in, &j, 1, 2, 3, 2), -1); /* another key */
    CHECK_EQ_INT(feed(&in, &j, 1, 2, 3, 1), 0);
    ctltable_in_free(in);
}

/* Many empty parts: each refused, none allocates or crashes (the
 * sanitizer build checks for leaks). */
static void
t_empty_many(void)
{
    struct job j = {4};
    struct ctltable_in *in = NULL;
    int i, refused = 0;

    setup();
    for (i = 0; i < 1000; i++)
        refused += feed(&in, &j, 0, 0, 4, (uint8_t)i) == -1;
    CHECK_EQ_INT(refused, 1000);
    CHECK_EQ_INT(feed(&in, &j, 0, 4, 4, 7), 0);
    ctltable_in_free(in);
}

static const struct test_case cases[] = {
    {"parts", t_parts},
    {"empty_first", t_empty_first},
    {"empty_middle", t_empty_middle},
    {"empty_many", t_empty_many},
};

TEST_MAIN(cases)
