/*
 * TCP congestion control of a rank-to-rank connection: Reno between two
 * processes on one host (unless ranks share cores there), the system's
 * otherwise, or what
 * P2P_TCP_CONGESTION says (tcpcc.h).  The choice is made from the
 * addresses alone (tcpcc_choose, a pure function the unit tests drive);
 * tcpcc_apply reads them from a connected socket and sets it.
 */
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>

#include "tcpcc.h"

int
tcpcc_same_host(const struct sockaddr *local, const struct sockaddr *peer)
{
    const struct sockaddr_in *l4 = (const struct sockaddr_in *)local;
    const struct sockaddr_in *p4 = (const struct sockaddr_in *)peer;
    const struct sockaddr_in6 *l6 = (const struct sockaddr_in6 *)local;
    const struct sockaddr_in6 *p6 = (const struct sockaddr_in6 *)peer;

    if (peer->sa_family == AF_INET) {
        if ((ntohl(p4->sin_addr.s_addr) >> 24) == 127)
            return 1;
        return local->sa_family == AF_INET &&
               l4->sin_addr.s_addr == p4->sin_addr.s_addr;
    }
    if (peer->sa_family != AF_INET6)
        return 0;
    if (IN6_IS_ADDR_LOOPBACK(&p6->sin6_addr) ||
        (IN6_IS_ADDR_V4MAPPED(&p6->sin6_addr) &&
         p6->sin6_addr.s6_addr[12] == 127))
        return 1;
    return local->sa_family == AF_INET6 &&
           memcmp(&l6->sin6_addr, &p6->sin6_addr, sizeof p6->sin6_addr) == 0;
}

/* A congestion control module's name as the kernel spells them. */
static int
name_ok(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n >= TCPCC_NAME_MAX)
        return 0;
    for (; *s != '\0'; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return 0;
    return 1;
}

const char *
tcpcc_choose(const struct sockaddr *local, const struct sockaddr *peer,
             int shared, const char *env)
{
    if (env != NULL)
        return strcmp(env, "system") != 0 && name_ok(env) ? env : NULL;
    return !shared && tcpcc_same_host(local, peer) ? TCPCC_SAME_HOST : NULL;
}

const char *
tcpcc_apply(int fd, int shared, int *refused, int *same)
{
    struct sockaddr_storage l, p;
    socklen_t ll = sizeof l, pl = sizeof p;
    const char *name;

    *refused = 0;
    *same = -1;
    if (getsockname(fd, (struct sockaddr *)&l, &ll) == -1 ||
        getpeername(fd, (struct sockaddr *)&p, &pl) == -1)
        return NULL;
    *same = tcpcc_same_host((struct sockaddr *)&l, (struct sockaddr *)&p);
    name = tcpcc_choose((struct sockaddr *)&l, (struct sockaddr *)&p, shared,
                        getenv("P2P_TCP_CONGESTION"));
    if (name == NULL)
        return NULL;
    if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, strlen(name)) == -1) {
        *refused = 1;
        return NULL;
    }
    return name;
}
