/*
 * The owner's access lists: users matched by verified key (through their
 * [users] name or the hex key), deny before allow, an empty allow list
 * allowing everyone; hosts by address or CIDR prefix, IPv4 and IPv6.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "peerd.h"
#include "test.h"

static uint8_t alice[SEC_SIGN_PK_LEN], bob[SEC_SIGN_PK_LEN],
    carol[SEC_SIGN_PK_LEN];
static char alice_hex[65], bob_hex[65], carol_hex[65];

static void
keys(struct p2p_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    memset(alice, 0xa1, sizeof alice);
    memset(bob, 0xb0, sizeof bob);
    memset(carol, 0xc0, sizeof carol);
    sec_hex(alice_hex, alice, sizeof alice);
    sec_hex(bob_hex, bob, sizeof bob);
    sec_hex(carol_hex, carol, sizeof carol);
    cfg->users = calloc(2, sizeof *cfg->users);
    cfg->users[0].name = strdup("alice");
    cfg->users[0].key_hex = strdup(alice_hex);
    cfg->users[1].name = strdup("bob");
    cfg->users[1].key_hex = strdup(bob_hex);
    cfg->nusers = 2;
}

static void
list(struct conf_list *l, const char *a, const char *b)
{
    l->v = calloc(2, sizeof *l->v);
    l->n = 0;
    if (a != NULL)
        l->v[l->n++] = strdup(a);
    if (b != NULL)
        l->v[l->n++] = strdup(b);
}

static void
t_users(void)
{
    struct p2p_config cfg;
    char name[80], why[256];

    keys(&cfg);
    /* No lists: everyone with the group key. */
    CHECK(access_user(&cfg, carol, name, sizeof name, why, sizeof why));
    CHECK_CONTAINS(name, "key:c0c0");
    CHECK(access_user(&cfg, alice, name, sizeof name, why, sizeof why));
    CHECK_EQ_STR(name, "alice");

    list(&cfg.allow_users, "alice", carol_hex);
    CHECK(access_user(&cfg, alice, name, sizeof name, why, sizeof why));
    CHECK(access_user(&cfg, carol, name, sizeof name, why, sizeof why));
    CHECK(!access_user(&cfg, bob, name, sizeof name, why, sizeof why));
    CHECK_EQ_STR(name, "bob");
    CHECK_CONTAINS(why, "not allowed");

    /* Deny wins over allow. */
    list(&cfg.deny_users, "alice", NULL);
    CHECK(!access_user(&cfg, alice, name, sizeof name, why, sizeof why));
    CHECK_CONTAINS(why, "denied");
    config_free(&cfg);
}

static struct sockaddr_storage
addr(const char *s)
{
    struct sockaddr_storage ss;

    memset(&ss, 0, sizeof ss);
    if (strchr(s, ':') != NULL) {
        ss.ss_family = AF_INET6;
        inet_pton(AF_INET6, s, &((struct sockaddr_in6 *)&ss)->sin6_addr);
    } else {
        ss.ss_family = AF_INET;
        inet_pton(AF_INET, s, &((struct sockaddr_in *)&ss)->sin_addr);
    }
    return ss;
}

static void
t_hosts(void)
{
    struct p2p_config cfg;
    struct sockaddr_storage a;
    char why[256];

    memset(&cfg, 0, sizeof cfg);
    a = addr("10.1.2.3");
    CHECK(access_host(&cfg, (struct sockaddr *)&a, why, sizeof why));

    list(&cfg.allow_hosts, "10.0.0.0/8", "fd00::/8");
    CHECK(access_host(&cfg, (struct sockaddr *)&a, why, sizeof why));
    a = addr("11.0.0.1");
    CHECK(!access_host(&cfg, (struct sockaddr *)&a, why, sizeof why));
    CHECK_CONTAINS(why, "11.0.0.1");
    a = addr("fd12::1");
    CHECK(access_host(&cfg, (struct sockaddr *)&a, why, sizeof why));
    a = addr("fe80::1");
    CHECK(!access_host(&cfg, (struct sockaddr *)&a, why, sizeof why));
    /* An IPv4 client on a dual-stack socket still matches v4 lists. */
    a = addr("::ffff:10.9.9.9");
    CHECK(access_host(&cfg, (struct sockaddr *)&a, why, sizeof why));

    list(&cfg.deny_hosts, "10.1.2.3", NULL);
    a = addr("10.1.2.3");
    CHECK(!access_host(&cfg, (struct sockaddr *)&a, why, sizeof why));
    CHECK_CONTAINS(why, "denied");
    a = addr("10.1.2.4");
    CHECK(access_host(&cfg, (struct sockaddr *)&a, why, sizeof why));
    config_free(&cfg);
}

static void
t_bad_entries_match_nothing(void)
{
    struct p2p_config cfg;
    struct sockaddr_storage a;
    char why[256];

    memset(&cfg, 0, sizeof cfg);
    list(&cfg.allow_hosts, "10.0.0.0/99", "not-an-address");
    a = addr("10.0.0.1");
    CHECK(!access_host(&cfg, (struct sockaddr *)&a, why, sizeof why));
    config_free(&cfg);
}

static const struct test_case cases[] = {
    {"users by verified key, deny before allow", t_users},
    {"hosts by address and prefix", t_hosts},
    {"malformed entries match nothing", t_bad_entries_match_nothing},
};

TEST_MAIN(cases)
