/*
 * The TCP congestion control a rank-to-rank connection gets (tcpcc.c):
 * Reno between two ends on one host, the system's between hosts, and
 * P2P_TCP_CONGESTION's override; then set on a real loopback connection.
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tcpcc.h"
#include "test.h"

/* An IPv4 or IPv6 socket address from text. */
static struct sockaddr_storage
sa(const char *ip)
{
    struct sockaddr_storage s;

    memset(&s, 0, sizeof s);
    if (strchr(ip, ':') != NULL) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&s;

        a->sin6_family = AF_INET6;
        if (inet_pton(AF_INET6, ip, &a->sin6_addr) != 1)
            test_fail(__FILE__, __LINE__, "bad address %s", ip);
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&s;

        a->sin_family = AF_INET;
        if (inet_pton(AF_INET, ip, &a->sin_addr) != 1)
            test_fail(__FILE__, __LINE__, "bad address %s", ip);
    }
    return s;
}

/* What tcpcc_choose says for local, peer and env ("" for NULL result). */
static const char *
choose_shared(const char *local, const char *peer, int shared, const char *env)
{
    struct sockaddr_storage l = sa(local), p = sa(peer);
    const char *name =
        tcpcc_choose((struct sockaddr *)&l, (struct sockaddr *)&p, shared, env);

    return name != NULL ? name : "";
}

/* The same for a job whose processes here have a core each. */
static const char *
choose(const char *local, const char *peer, const char *env)
{
    return choose_shared(local, peer, 0, env);
}

static void
t_same_host(void)
{
    CHECK_EQ_STR(choose("127.0.0.2", "127.0.0.3", NULL), "reno");
    CHECK_EQ_STR(choose("127.0.0.1", "127.0.0.1", NULL), "reno");
    CHECK_EQ_STR(choose("10.1.2.3", "10.1.2.3", NULL), "reno");
    CHECK_EQ_STR(choose("::1", "::1", NULL), "reno");
    CHECK_EQ_STR(choose("fd00::7", "fd00::7", NULL), "reno");
    CHECK_EQ_STR(choose("::ffff:127.0.0.2", "::ffff:127.0.0.9", NULL), "reno");
}

static void
t_other_host(void)
{
    CHECK_EQ_STR(choose("10.1.2.3", "10.1.2.4", NULL), "");
    CHECK_EQ_STR(choose("192.168.0.1", "128.0.0.1", NULL), "");
    CHECK_EQ_STR(choose("fd00::7", "fd00::8", NULL), "");
    CHECK_EQ_STR(choose("::ffff:10.0.0.1", "::ffff:10.0.0.2", NULL), "");
    /* families differ: not provably the same host */
    CHECK_EQ_STR(choose("10.1.2.3", "::ffff:10.1.2.3", NULL), "");
}

static void
t_shared_cores(void)
{
    /* Ranks sharing cores keep the system's, unless told otherwise. */
    CHECK_EQ_STR(choose_shared("127.0.0.2", "127.0.0.3", 1, NULL), "");
    CHECK_EQ_STR(choose_shared("::1", "::1", 1, NULL), "");
    CHECK_EQ_STR(choose_shared("127.0.0.2", "127.0.0.3", 1, "reno"), "reno");
    CHECK_EQ_STR(choose_shared("127.0.0.2", "127.0.0.3", 1, "system"), "");
}

static void
t_override(void)
{
    CHECK_EQ_STR(choose("10.1.2.3", "10.1.2.4", "reno"), "reno");
    CHECK_EQ_STR(choose("127.0.0.2", "127.0.0.3", "bbr"), "bbr");
    CHECK_EQ_STR(choose("127.0.0.2", "127.0.0.3", "system"), "");
    CHECK_EQ_STR(choose("127.0.0.2", "127.0.0.3", ""), "");
    /* not a module name: the system's */
    CHECK_EQ_STR(choose("127.0.0.2", "127.0.0.3", "Reno"), "");
    CHECK_EQ_STR(choose("127.0.0.2", "127.0.0.3", "re no"), "");
    CHECK_EQ_STR(choose("127.0.0.2", "127.0.0.3", "abcdefghijklmnop"), "");
    CHECK_EQ_STR(choose("127.0.0.2", "127.0.0.3", "abcdefghijklmno"),
                 "abcdefghijklmno");
}

/* A connected loopback TCP pair in fd[0], fd[1] (accepted); 0 on
 * success. */
static int
tcp_pair(int fd[2])
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int l = socket(AF_INET, SOCK_STREAM, 0);

    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (l == -1 || bind(l, (struct sockaddr *)&a, sizeof a) == -1 ||
        listen(l, 1) == -1 || getsockname(l, (struct sockaddr *)&a, &len) == -1)
        return -1;
    fd[0] = socket(AF_INET, SOCK_STREAM, 0);
    if (fd[0] == -1 || connect(fd[0], (struct sockaddr *)&a, sizeof a) == -1)
        return -1;
    fd[1] = accept(l, NULL, NULL);
    close(l);
    return fd[1] == -1 ? -1 : 0;
}

/* The congestion control fd has now. */
static const char *
cc_of(int fd)
{
    static char name[TCPCC_NAME_MAX + 1];
    socklen_t len = TCPCC_NAME_MAX;

    memset(name, 0, sizeof name);
    if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len) == -1)
        return "?";
    return name;
}

static void
t_apply_loopback(void)
{
    char before[TCPCC_NAME_MAX + 1];
    int fd[2], refused = -1, same;
    const char *name;

    unsetenv("P2P_TCP_CONGESTION");
    if (!CHECK(tcp_pair(fd) == 0))
        return;
    /* Reno is open to every process (the kernel never restricts it). */
    name = tcpcc_apply(fd[1], 0, &refused, &same);
    CHECK_EQ_STR(name != NULL ? name : "(null)", "reno");
    CHECK_EQ_INT(refused, 0);
    CHECK_EQ_STR(cc_of(fd[1]), "reno");
    /* Kept: the system's stays. */
    snprintf(before, sizeof before, "%s", cc_of(fd[0]));
    setenv("P2P_TCP_CONGESTION", "system", 1);
    CHECK(tcpcc_apply(fd[0], 0, &refused, &same) == NULL);
    CHECK_EQ_INT(refused, 0);
    CHECK_EQ_STR(cc_of(fd[0]), before);
    /* Sharing cores: the system's stays too. */
    unsetenv("P2P_TCP_CONGESTION");
    CHECK(tcpcc_apply(fd[0], 1, &refused, &same) == NULL);
    CHECK_EQ_INT(refused, 0);
    CHECK_EQ_STR(cc_of(fd[0]), before);
    /* No such module: refused, the system's stays. */
    setenv("P2P_TCP_CONGESTION", "nosuchcc", 1);
    CHECK(tcpcc_apply(fd[0], 0, &refused, &same) == NULL);
    CHECK_EQ_INT(refused, 1);
    CHECK_EQ_STR(cc_of(fd[0]), before);
    unsetenv("P2P_TCP_CONGESTION");
    close(fd[0]);
    close(fd[1]);
}

static void
t_apply_unconnected(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0), refused = -1, same;

    /* No peer to judge by: nothing set, nothing refused. */
    CHECK(tcpcc_apply(fd, 0, &refused, &same) == NULL);
    CHECK_EQ_INT(refused, 0);
    close(fd);
}

/* Whether connected socket fd stays on this host, as tcpcc_apply
 * reports it. */
static int
same_host_of(int fd)
{
    int refused, same;

    (void)tcpcc_apply(fd, 0, &refused, &same);
    return same;
}

/* A connection's own ends say whether it stays on this host. */
static void
t_fd_same_host(void)
{
    int fd[2], u = socket(AF_INET, SOCK_STREAM, 0);

    if (!CHECK(tcp_pair(fd) == 0))
        return;
    CHECK_EQ_INT(same_host_of(fd[0]), 1);
    CHECK_EQ_INT(same_host_of(fd[1]), 1);
    /* Not connected: it cannot say. */
    CHECK_EQ_INT(same_host_of(u), -1);
    close(u);
    close(fd[0]);
    close(fd[1]);
}

static const struct test_case cases[] = {
    {"same_host", t_same_host},
    {"other_host", t_other_host},
    {"shared_cores", t_shared_cores},
    {"override", t_override},
    {"apply_loopback", t_apply_loopback},
    {"apply_unconnected", t_apply_unconnected},
    {"fd_same_host", t_fd_same_host},
};

TEST_MAIN(cases)
