/*
 * The owner's sharing policy: allow/deny lists for users and hosts.  Users
 * are matched by their verified signing key (its name from [users], or the
 * key in hex), never by a name the requester wrote; hosts by the address
 * the connection really comes from.
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peerd.h"

/* Does a list entry name this user (by [users] name or hex key)? */
static int
access_user_in(const struct conf_list *l, const char *name, const char *hex)
{
    int i;

    for (i = 0; i < l->n; i++)
        if ((name != NULL && strcmp(l->v[i], name) == 0) ||
            strcasecmp(l->v[i], hex) == 0)
            return 1;
    return 0;
}

int
access_user(const struct p2p_config *cfg, const uint8_t key[SEC_SIGN_PK_LEN],
            char *name, size_t namelen, char *why, size_t whylen)
{
    char hex[2 * SEC_SIGN_PK_LEN + 1];
    const char *known = NULL;
    int i;

    sec_hex(hex, key, SEC_SIGN_PK_LEN);
    for (i = 0; i < cfg->nusers; i++)
        if (strcasecmp(cfg->users[i].key_hex, hex) == 0) {
            known = cfg->users[i].name;
            break;
        }
    if (known != NULL)
        snprintf(name, namelen, "%s", known);
    else
        snprintf(name, namelen, "key:%.12s", hex);
    if (access_user_in(&cfg->deny_users, known, hex)) {
        snprintf(why, whylen, "user %s is denied on this peer", name);
        return 0;
    }
    if (cfg->allow_users.n > 0 &&
        !access_user_in(&cfg->allow_users, known, hex)) {
        snprintf(why, whylen, "user %s is not allowed on this peer", name);
        return 0;
    }
    return 1;
}

/* Does "ADDR" or "ADDR/BITS" contain the address? */
static int
access_host_match(const char *entry, const struct sockaddr *sa)
{
    unsigned char want[16], have[16];
    char buf[64], *slash;
    int family, len, bits, i;

    snprintf(buf, sizeof buf, "%s", entry);
    family = strchr(buf, ':') != NULL ? AF_INET6 : AF_INET;
    len = family == AF_INET ? 4 : 16;
    bits = len * 8;
    if ((slash = strchr(buf, '/')) != NULL) {
        *slash = '\0';
        bits = atoi(slash + 1);
        if (bits < 0 || bits > len * 8)
            return 0;
    }
    if (inet_pton(family, buf, want) != 1)
        return 0;
    if (sa->sa_family == AF_INET && family == AF_INET)
        memcpy(have, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    else if (sa->sa_family == AF_INET6 && family == AF_INET6)
        memcpy(have, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
    else if (sa->sa_family == AF_INET6 && family == AF_INET &&
             IN6_IS_ADDR_V4MAPPED(
                 &((const struct sockaddr_in6 *)sa)->sin6_addr))
        memcpy(
            have,
            ((const uint8_t *)&((const struct sockaddr_in6 *)sa)->sin6_addr) +
                12,
            4);
    else
        return 0;
    for (i = 0; i < bits; i++)
        if (((want[i / 8] ^ have[i / 8]) >> (7 - i % 8)) & 1)
            return 0;
    return 1;
}

static int
access_host_in(const struct conf_list *l, const struct sockaddr *sa)
{
    int i;

    for (i = 0; i < l->n; i++)
        if (access_host_match(l->v[i], sa))
            return 1;
    return 0;
}

int
access_host(const struct p2p_config *cfg, const struct sockaddr *sa, char *why,
            size_t whylen)
{
    char addr[NETADDR_STRLEN];

    netaddr_format(sa, addr, sizeof addr);
    if (access_host_in(&cfg->deny_hosts, sa)) {
        snprintf(why, whylen, "requests from %s are denied on this peer", addr);
        return 0;
    }
    if (cfg->allow_hosts.n > 0 && !access_host_in(&cfg->allow_hosts, sa)) {
        snprintf(why, whylen, "requests from %s are not allowed on this peer",
                 addr);
        return 0;
    }
    return 1;
}
