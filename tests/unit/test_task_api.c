/*
 * The C task API's argument checks and its farm without a network
 * (p2p_task.h): a program started on its own runs each call in its own
 * process, so the API's contract is checked here without p2prun; the
 * network side is tests/integration/test_workers.py.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "p2p_task.h"
#include "test.h"

P2P_TASK(twice)
{
    if (p2p_result_write(res, in, inlen) != 0)
        return 1;
    return p2p_result_write(res, in, inlen);
}

P2P_TASK(refuse)
{
    return p2p_result_fail(res, 300, "no %s", in);
}

P2P_TASK(silent)
{
    return 0;
}

static int
t_twice_body(const char *in, size_t inlen, p2p_result *res)
{
    return p2p_result_write(res, in, inlen);
}

static p2p_farm *
open_local(void)
{
    p2p_farm_opts o = {1};

    return p2p_farm_open(NULL, NULL, &o);
}

static void
t_register(void)
{
    CHECK_EQ_INT(p2p_task_register(NULL, t_twice_body), P2P_EINVAL);
    CHECK_EQ_INT(p2p_task_register("", t_twice_body), P2P_EINVAL);
    CHECK_EQ_INT(p2p_task_register("x", NULL), P2P_EINVAL);
    /* P2P_TASK registered it before main: a second is refused. */
    CHECK_EQ_INT(p2p_task_register("twice", t_twice_body), P2P_EINVAL);
    CHECK_EQ_INT(p2p_task_register(
                     "a_name_longer_than_sixty_three_bytes_is_refused_by_"
                     "the_registry_x",
                     t_twice_body),
                 P2P_EINVAL);
    CHECK_EQ_INT(p2p_task_register("other", t_twice_body), P2P_OK);
}

static void
t_submit_checks(void)
{
    p2p_farm *f = open_local();
    /* Refused on its length alone: never read. */
    static char big[1];
    p2p_task_id id = 0;

    CHECK(f != NULL);
    CHECK_EQ_INT(p2p_submit(NULL, "twice", "a", 1, &id), P2P_EHANDLE);
    CHECK_EQ_INT(p2p_submit(f, NULL, "a", 1, &id), P2P_EINVAL);
    CHECK_EQ_INT(p2p_submit(f, "twice", NULL, 1, &id), P2P_EINVAL);
    CHECK_EQ_INT(p2p_submit(f, "nosuch", "a", 1, &id), P2P_ENOTASK);
    CHECK_CONTAINS(p2p_farm_error(f), "nosuch");
    CHECK_EQ_INT(p2p_submit(f, "twice", big,
                                (size_t)P2P_TASK_INPUT_MAX + 1, &id), P2P_ETOOBIG);
    CHECK_EQ_INT(id, 0);
    /* An empty input is a call like any other. */
    CHECK_EQ_INT(p2p_submit(f, "twice", NULL, 0, &id), P2P_OK);
    CHECK_EQ_INT(id, 1);
    CHECK_EQ_INT(p2p_farm_close(f), P2P_OK);
}

static void
t_handles(void)
{
    p2p_farm *f = open_local(), *g = open_local();
    p2p_outcome o;
    uint64_t forged[16] = {0};

    CHECK(f != NULL && g != NULL && f != g);
    CHECK_EQ_INT(p2p_farm_close(f), P2P_OK);
    /* Closed, forged, NULL: an error, never a crash. */
    CHECK_EQ_INT(p2p_farm_close(f), P2P_EHANDLE);
    CHECK_EQ_INT(p2p_submit(f, "twice", "a", 1, NULL), P2P_EHANDLE);
    CHECK_EQ_INT(p2p_wait_any((p2p_farm *)forged, &o), P2P_EHANDLE);
    CHECK_EQ_INT(p2p_wait_any(NULL, &o), P2P_EHANDLE);
    CHECK_EQ_STR(p2p_farm_error(f), "not an open farm");
    /* The other farm is untouched. */
    CHECK_EQ_INT(p2p_wait_any(g, NULL), P2P_EINVAL);
    CHECK_EQ_INT(p2p_wait_any(g, &o), P2P_ENONE);
    CHECK_EQ_INT(p2p_farm_close(g), P2P_OK);
}

static void
t_outcomes(void)
{
    p2p_farm *f = open_local();
    p2p_task_id a, b, c;
    p2p_outcome o;

    p2p_submit(f, "twice", "ab", 2, &a);
    p2p_submit(f, "refuse", "way", 3, &b);
    p2p_submit(f, "silent", "", 0, &c);
    CHECK_EQ_INT(p2p_wait_any(f, &o), P2P_OK);
    CHECK_EQ_INT(o.id, a);
    CHECK_EQ_INT(o.status, 0);
    CHECK_EQ_INT(o.outlen, 4);
    CHECK_MEM(o.out, "abab", 5); /* and a NUL */
    p2p_outcome_free(&o);
    CHECK(o.out == NULL);
    CHECK_EQ_INT(p2p_wait_any(f, &o), P2P_OK);
    CHECK_EQ_INT(o.id, b);
    CHECK_EQ_INT(o.status, 1); /* 300 is out of 1..255 */
    CHECK_EQ_STR(o.message, "no way");
    CHECK(o.out == NULL);
    CHECK_EQ_INT(p2p_wait_any(f, &o), P2P_OK);
    CHECK_EQ_INT(o.id, c);
    CHECK_EQ_INT(o.status, 0);
    CHECK(o.out == NULL && o.outlen == 0);
    CHECK_EQ_INT(p2p_wait_any(f, &o), P2P_ENONE);
    CHECK_EQ_INT(p2p_farm_close(f), P2P_OK);
}

static void
t_map(void)
{
    p2p_farm *f = open_local();
    const char *ins[] = {"x", "yz", ""};
    size_t lens[] = {1, 2, 0}, outlens[3];
    void *outs[3];
    int st[3];
    p2p_task_id early;
    p2p_outcome o;

    /* An earlier call's outcome is kept for wait_any. */
    p2p_submit(f, "twice", "e", 1, &early);
    CHECK_EQ_INT(p2p_map(f, "twice", (const void *const *)ins, lens, 3, outs,
                         outlens, st),
                 P2P_OK);
    CHECK_EQ_INT(st[0] | st[1] | st[2], 0);
    CHECK_MEM(outs[0], "xx", 2);
    CHECK_MEM(outs[1], "yzyz", 4);
    CHECK(outs[2] == NULL && outlens[2] == 0);
    free(outs[0]);
    free(outs[1]);
    CHECK_EQ_INT(p2p_wait_any(f, &o), P2P_OK);
    CHECK_EQ_INT(o.id, early);
    p2p_outcome_free(&o);
    CHECK_EQ_INT(p2p_map(f, "refuse", (const void *const *)ins, lens, 3,
                         NULL, NULL, st),
                 P2P_EFAILED);
    CHECK_EQ_INT(st[1], 1);
    CHECK_CONTAINS(p2p_farm_error(f), "call 0: no x");
    CHECK_EQ_INT(p2p_map(f, "twice", NULL, lens, 3, NULL, NULL, NULL),
                 P2P_EINVAL);
    CHECK_EQ_INT(p2p_map(f, "twice", NULL, NULL, 0, NULL, NULL, NULL), P2P_OK);
    CHECK_EQ_INT(p2p_farm_close(f), P2P_OK);
}

static void
t_strerror(void)
{
    int c;

    for (c = P2P_EFAILED; c <= P2P_OK; c++)
        CHECK(strcmp(p2p_task_strerror(c), "unknown error") != 0);
    CHECK_EQ_STR(p2p_task_strerror(42), "unknown error");
}

static const struct test_case cases[] = {
    {"register", t_register}, {"submit_checks", t_submit_checks},
    {"handles", t_handles},   {"outcomes", t_outcomes},
    {"map", t_map},           {"strerror", t_strerror},
};

TEST_MAIN(cases)
