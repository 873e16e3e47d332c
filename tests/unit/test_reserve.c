/*
 * peerd's slot ledger: holds never exceed the slots, leases expire unless
 * confirmed or renewed by staging, a launch trims the hold to what it uses, returned slots come
 * back one by one, a vanished requester's unconfirmed holds go, and a peer
 * that is not sharing refuses.
 */
#include <string.h>

#include "monotime.h"
#include "peerd.h"
#include "test.h"

static struct p2p_config cfg;
static struct peerd pd;
static int owner_a, owner_b; /* stand-ins for connections */
#define A ((struct svc_conn *)&owner_a)
#define B ((struct svc_conn *)&owner_b)

static void
setup(int slots)
{
    memset(&cfg, 0, sizeof cfg);
    cfg.sharing = 1;
    cfg.max_lease_ms = 60000;
    memset(&pd, 0, sizeof pd);
    pd.cfg = &cfg;
    pd.slots_total = slots;
}

static void
teardown(void)
{
    while (pd.holds != NULL)
        reserve_release(&pd, pd.holds->job);
}

static void
make_job_id(uint8_t id[WIRE_JOB_ID_LEN], int n)
{
    memset(id, n, WIRE_JOB_ID_LEN);
}

static void
t_take_within_slots(void)
{
    uint8_t j1[WIRE_JOB_ID_LEN], j2[WIRE_JOB_ID_LEN];
    uint32_t free_now;
    char why[128];

    setup(4);
    make_job_id(j1, 1);
    make_job_id(j2, 2);
    CHECK_EQ_INT(reserve_free(&pd), 4);
    CHECK_EQ_INT(reserve_take(&pd, j1, 3, 1000, A, &free_now, why, sizeof why),
                 0);
    CHECK_EQ_INT(free_now, 1);
    /* A second requester cannot get more than what is left. */
    CHECK_EQ_INT(reserve_take(&pd, j2, 2, 1000, B, &free_now, why, sizeof why),
                 -1);
    CHECK_EQ_INT(free_now, 1);
    CHECK_CONTAINS(why, "2 slots asked, 1 free");
    CHECK_EQ_INT(reserve_take(&pd, j2, 1, 1000, B, &free_now, why, sizeof why),
                 0);
    CHECK_EQ_INT(reserve_free(&pd), 0);
    /* Zero slots is never a valid request. */
    CHECK_EQ_INT(reserve_take(&pd, j2, 0, 1000, B, &free_now, why, sizeof why),
                 -1);
    teardown();
}

static void
t_additive_and_owned(void)
{
    uint8_t j[WIRE_JOB_ID_LEN];
    uint32_t free_now;
    char why[128];

    setup(4);
    make_job_id(j, 7);
    CHECK_EQ_INT(reserve_take(&pd, j, 1, 1000, A, &free_now, why, sizeof why),
                 0);
    CHECK_EQ_INT(reserve_take(&pd, j, 2, 1000, A, &free_now, why, sizeof why),
                 0);
    CHECK_EQ_INT(reserve_find(&pd, j)->slots, 3);
    /* Another requester cannot add to (or steal) the same job id. */
    CHECK_EQ_INT(reserve_take(&pd, j, 1, 1000, B, &free_now, why, sizeof why),
                 -1);
    CHECK_CONTAINS(why, "in use");
    teardown();
}

static void
t_lease_expires(void)
{
    uint8_t j[WIRE_JOB_ID_LEN];
    uint32_t free_now;
    char why[128];
    uint64_t now = monotime_ms();

    setup(2);
    make_job_id(j, 3);
    CHECK_EQ_INT(reserve_take(&pd, j, 2, 500, A, &free_now, why, sizeof why),
                 0);
    reserve_cron(&pd, now + 100);
    CHECK_EQ_INT(reserve_free(&pd), 0);
    reserve_cron(&pd, now + 10000);
    CHECK_EQ_INT(reserve_free(&pd), 2);
    CHECK(reserve_find(&pd, j) == NULL);
    teardown();
}

/* Staging renews a requester's unconfirmed holds: each for its own lease
 * from now (never shorter than it was), the confirmed and the other
 * requesters' left alone. */
static void
t_staging_renews(void)
{
    uint8_t j[WIRE_JOB_ID_LEN], k[WIRE_JOB_ID_LEN];
    uint32_t free_now;
    char why[128];
    uint64_t now = monotime_ms();

    setup(4);
    make_job_id(j, 5);
    make_job_id(k, 6);
    CHECK_EQ_INT(reserve_take(&pd, j, 2, 500, A, &free_now, why, sizeof why),
                 0);
    CHECK_EQ_INT(reserve_take(&pd, k, 1, 500, B, &free_now, why, sizeof why),
                 0);
    reserve_renew(&pd, A, now + 400);
    reserve_cron(&pd, now + 700);
    CHECK(reserve_find(&pd, j) != NULL); /* renewed till now + 900 */
    CHECK(reserve_find(&pd, k) == NULL); /* B's went */
    reserve_renew(&pd, A, now + 100); /* an older clock: no shorter */
    reserve_cron(&pd, now + 800);
    CHECK(reserve_find(&pd, j) != NULL);
    reserve_cron(&pd, now + 1000);
    CHECK(reserve_find(&pd, j) == NULL);
    CHECK_EQ_INT(reserve_free(&pd), 4);
    teardown();
}

static void
t_confirm_trims_and_stops_lease(void)
{
    uint8_t j[WIRE_JOB_ID_LEN];
    uint32_t free_now;
    char why[128];

    setup(4);
    make_job_id(j, 4);
    CHECK_EQ_INT(reserve_take(&pd, j, 4, 500, A, &free_now, why, sizeof why),
                 0);
    reserve_confirm(&pd, reserve_find(&pd, j), 3);
    CHECK_EQ_INT(reserve_free(&pd), 1);
    /* Confirmed: no lease runs out any more. */
    reserve_cron(&pd, monotime_ms() + 1000000);
    CHECK_EQ_INT(reserve_free(&pd), 1);
    /* A launched job cannot reserve more under the same id. */
    CHECK_EQ_INT(reserve_take(&pd, j, 1, 500, A, &free_now, why, sizeof why),
                 -1);
    /* Processes end one by one; the last one removes the hold. */
    reserve_return_one(&pd, j);
    CHECK_EQ_INT(reserve_free(&pd), 2);
    reserve_return_one(&pd, j);
    reserve_return_one(&pd, j);
    CHECK_EQ_INT(reserve_free(&pd), 4);
    CHECK(reserve_find(&pd, j) == NULL);
    reserve_return_one(&pd, j); /* harmless */
    CHECK_EQ_INT(reserve_free(&pd), 4);
    teardown();
}

static void
t_drop_owner(void)
{
    uint8_t j1[WIRE_JOB_ID_LEN], j2[WIRE_JOB_ID_LEN], j3[WIRE_JOB_ID_LEN];
    uint32_t free_now;
    char why[128];

    setup(6);
    make_job_id(j1, 1);
    make_job_id(j2, 2);
    make_job_id(j3, 3);
    reserve_take(&pd, j1, 2, 1000, A, &free_now, why, sizeof why);
    reserve_take(&pd, j2, 2, 1000, A, &free_now, why, sizeof why);
    reserve_take(&pd, j3, 1, 1000, B, &free_now, why, sizeof why);
    reserve_confirm(&pd, reserve_find(&pd, j2), 2);
    reserve_drop_owner(&pd, A);
    /* The unconfirmed hold goes; the launched job keeps its slots until
     * its processes end; B is untouched. */
    CHECK(reserve_find(&pd, j1) == NULL);
    CHECK(reserve_find(&pd, j2) != NULL);
    CHECK(reserve_find(&pd, j3) != NULL);
    CHECK_EQ_INT(reserve_free(&pd), 3);
    teardown();
}

static void
t_not_sharing(void)
{
    uint8_t j[WIRE_JOB_ID_LEN];
    uint32_t free_now;
    char why[128];

    setup(4);
    cfg.sharing = 0;
    snprintf(pd.host_label, sizeof pd.host_label, "ws3");
    pd.owner = owner_new(&cfg, why, sizeof why);
    if (!CHECK(pd.owner != NULL))
        return;
    owner_cron(&pd, 1);
    make_job_id(j, 9);
    CHECK_EQ_INT(reserve_take(&pd, j, 1, 1000, A, &free_now, why, sizeof why),
                 -1);
    CHECK_CONTAINS(why, "not sharing on ws3");
    CHECK_EQ_INT(reserve_free(&pd), 4);
    CHECK_EQ_INT(owner_peer_state(&pd), PEER_STATE_NOT_SHARING);
    /* p2pshare on: welcome again. */
    owner_set_mode(&pd, SHARE_ALWAYS);
    CHECK_EQ_INT(reserve_take(&pd, j, 1, 1000, A, &free_now, why, sizeof why),
                 0);
    CHECK_EQ_INT(owner_peer_state(&pd), PEER_STATE_UNKNOWN);
    teardown();
    owner_free(pd.owner);
    pd.owner = NULL;
}

static const struct test_case cases[] = {
    {"holds never exceed the slots", t_take_within_slots},
    {"holds add up, and belong to their requester", t_additive_and_owned},
    {"an unconfirmed lease expires", t_lease_expires},
    {"staging renews the requester's leases", t_staging_renews},
    {"a launch trims the hold; exits return slots", t_confirm_trims_and_stops_lease},
    {"a vanished requester loses unconfirmed holds", t_drop_owner},
    {"not sharing refuses", t_not_sharing},
};

TEST_MAIN(cases)
