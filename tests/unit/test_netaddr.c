/*
 * HOST:PORT parsing as users type it on command lines and in p2p.conf,
 * and the listening sockets made from the result.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

#include "netaddr.h"
#include "test.h"

/* Parse s expecting success and the canonical text want. */
static void
ok_at(const char *file, int line, const char *s, int defport, int family,
      const char *want)
{
    struct netaddr na;
    char err[256] = "";

    if (netaddr_parse(s, defport, &na, err, sizeof err) != 0) {
        test_fail(file, line, "\"%s\" refused: %s", s, err);
        return;
    }
    if (na.ss.ss_family != family)
        test_fail(file, line, "\"%s\": family %d", s, na.ss.ss_family);
    if (strcmp(na.text, want) != 0)
        test_fail(file, line, "\"%s\": text \"%s\", want \"%s\"", s, na.text,
                  want);
    if (na.len != (family == AF_INET ? sizeof(struct sockaddr_in)
                                     : sizeof(struct sockaddr_in6)))
        test_fail(file, line, "\"%s\": length %u", s, (unsigned)na.len);
}
#define OK(s, defport, family, want)                                           \
    ok_at(__FILE__, __LINE__, s, defport, family, want)

/* Parse s expecting failure with a message containing hint. */
static void
bad_at(const char *file, int line, const char *s, const char *hint)
{
    struct netaddr na;
    char err[256] = "";

    if (netaddr_parse(s, 9700, &na, err, sizeof err) == 0) {
        test_fail(file, line, "\"%s\" accepted as %s", s ? s : "(null)",
                  na.text);
        return;
    }
    if (strstr(err, hint) == NULL)
        test_fail(file, line, "\"%s\": error \"%s\" lacks \"%s\"",
                  s ? s : "(null)", err, hint);
}
#define BAD(s, hint) bad_at(__FILE__, __LINE__, s, hint)

static void
t_ipv4(void)
{
    struct netaddr na;
    char err[128];
    const struct sockaddr_in *sin = (const struct sockaddr_in *)&na.ss;

    OK("127.0.0.2:9897", 9700, AF_INET, "127.0.0.2:9897");
    OK("10.1.2.3:0", 9700, AF_INET, "10.1.2.3:0");
    OK("10.1.2.3:65535", 9700, AF_INET, "10.1.2.3:65535");
    if (CHECK_EQ_INT(netaddr_parse("127.0.0.2:9897", 1, &na, err, sizeof err),
                     0)) {
        CHECK_EQ_INT(ntohs(sin->sin_port), 9897);
        CHECK_EQ_INT(ntohl(sin->sin_addr.s_addr), 0x7f000002);
        CHECK_EQ_INT(netaddr_port(&na), 9897);
    }
}

static void
t_ipv6(void)
{
    struct netaddr na;
    char err[128];

    OK("[::1]:9700", 1, AF_INET6, "[::1]:9700");
    OK("[fe80::1:2]:1", 1, AF_INET6, "[fe80::1:2]:1");
    /* Canonical form. */
    OK("[0:0:0:0:0:0:0:1]:80", 1, AF_INET6, "[::1]:80");
    if (CHECK_EQ_INT(netaddr_parse("[::1]:9700", 1, &na, err, sizeof err), 0))
        CHECK_EQ_INT(netaddr_port(&na), 9700);
}

static void
t_default_port(void)
{
    OK("127.0.0.3", 9897, AF_INET, "127.0.0.3:9897");
    OK("[::1]", 9700, AF_INET6, "[::1]:9700");
    OK("0.0.0.0", 9700, AF_INET, "0.0.0.0:9700");
}

/* A name from /etc/hosts resolves to a loopback address. */
static void
t_hostname(void)
{
    struct netaddr na;
    char err[128];

    if (!CHECK_EQ_INT(netaddr_parse("localhost:81", 1, &na, err, sizeof err),
                      0))
        return;
    CHECK_EQ_INT(netaddr_port(&na), 81);
    CHECK(strcmp(na.text, "127.0.0.1:81") == 0 ||
          strcmp(na.text, "[::1]:81") == 0);
}

static void
t_bad_port(void)
{
    BAD("1.2.3.4:99999", "bad port");
    BAD("1.2.3.4:65536", "bad port");
    BAD("1.2.3.4:", "bad port");
    BAD("1.2.3.4:http", "bad port");
    BAD("1.2.3.4:80x", "bad port");
    BAD("1.2.3.4:-1", "bad port");
    BAD("1.2.3.4:99999999999999999999", "bad port");
    BAD("[::1]:", "bad port");
    BAD("[::1]:70000", "bad port");
}

static void
t_empty(void)
{
    BAD("", "empty");
    BAD(NULL, "empty");
    BAD(":9700", "missing host");
    BAD("[]:9700", "missing host");
}

/* An IPv6 address without brackets is ambiguous: refused with the hint. */
static void
t_ipv6_without_brackets(void)
{
    BAD("::1:80", "[ADDR]:PORT");
    BAD("fe80::1", "[ADDR]:PORT");
}

static void
t_brackets(void)
{
    BAD("[::1", "missing ']'");
    BAD("[::1]80", "junk");
    BAD("[::1]x:80", "junk");
}

static void
t_too_long(void)
{
    char s[400];

    memset(s, 'a', sizeof s - 1);
    s[sizeof s - 1] = '\0';
    BAD(s, "too long");
    s[0] = '[';
    s[300] = ']';
    s[301] = '\0';
    BAD(s, "too long");
}

static void
t_is_any(void)
{
    struct netaddr na;
    char err[128];

    if (CHECK_EQ_INT(netaddr_parse("0.0.0.0:9700", 1, &na, err, sizeof err), 0))
        CHECK(netaddr_is_any(&na));
    if (CHECK_EQ_INT(netaddr_parse("[::]:9700", 1, &na, err, sizeof err), 0))
        CHECK(netaddr_is_any(&na));
    if (CHECK_EQ_INT(netaddr_parse("127.0.0.1:9700", 1, &na, err, sizeof err),
                     0))
        CHECK(!netaddr_is_any(&na));
    if (CHECK_EQ_INT(netaddr_parse("[::1]:9700", 1, &na, err, sizeof err), 0))
        CHECK(!netaddr_is_any(&na));
    memset(&na, 0, sizeof na);
    na.ss.ss_family = AF_UNIX;
    CHECK(!netaddr_is_any(&na));
}

static void
t_set_port(void)
{
    struct netaddr na;
    char err[128];

    if (CHECK_EQ_INT(netaddr_parse("127.0.0.2:9897", 1, &na, err, sizeof err),
                     0)) {
        netaddr_set_port(&na, 1234);
        CHECK_EQ_INT(netaddr_port(&na), 1234);
        CHECK_EQ_STR(na.text, "127.0.0.2:1234");
        netaddr_set_port(&na, 0);
        CHECK_EQ_STR(na.text, "127.0.0.2:0");
    }
    if (CHECK_EQ_INT(netaddr_parse("[::1]:9700", 1, &na, err, sizeof err), 0)) {
        netaddr_set_port(&na, 65535);
        CHECK_EQ_INT(netaddr_port(&na), 65535);
        CHECK_EQ_STR(na.text, "[::1]:65535");
    }
}

static void
t_format(void)
{
    struct sockaddr_in sin;
    struct sockaddr_un sun;
    char buf[NETADDR_STRLEN];

    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_port = htons(443);
    sin.sin_addr.s_addr = htonl(0xc0a80001);
    CHECK_EQ_STR(netaddr_format((struct sockaddr *)&sin, buf, sizeof buf),
                 "192.168.0.1:443");
    memset(&sun, 0, sizeof sun);
    sun.sun_family = AF_UNIX;
    CHECK_CONTAINS(netaddr_format((struct sockaddr *)&sun, buf, sizeof buf),
                   "family");
    /* A short buffer is truncated, not overrun. */
    memset(buf, 'z', sizeof buf);
    netaddr_format((struct sockaddr *)&sin, buf, 5);
    CHECK_EQ_STR(buf, "192.");
    CHECK(buf[5] == 'z');
}

/* Port 0 gets a free port; the socket is non-blocking and close-on-exec;
 * a second listener on the same port is refused. */
static void
t_listen(void)
{
    struct netaddr na, bound;
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    char err[128];
    int fd, fd2, port;

    if (!CHECK_EQ_INT(netaddr_parse("127.0.0.1:0", 1, &na, err, sizeof err), 0))
        return;
    fd = netaddr_listen(&na, 16);
    if (!CHECK(fd >= 0))
        return;
    CHECK(fcntl(fd, F_GETFL) & O_NONBLOCK);
    CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    CHECK_EQ_INT(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
    port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    CHECK(port > 0);
    bound = na;
    netaddr_set_port(&bound, port);
    errno = 0;
    fd2 = netaddr_listen(&bound, 16);
    CHECK_EQ_INT(fd2, -1);
    CHECK_EQ_INT(errno, EADDRINUSE);
    if (fd2 >= 0)
        close(fd2);
    close(fd);
}

/* Numeric parsing takes addresses as peerd announces them and never
 * looks a name up. */
static void
t_numeric(void)
{
    static const struct {
        const char *in;
        int ok;
        const char *text;
    } cases[] = {
        {"127.0.0.2:9897", 1, "127.0.0.2:9897"},
        {"[::1]:9700", 1, "[::1]:9700"},
        {"0.0.0.0:1", 1, "0.0.0.0:1"},
        {"localhost:9897", 0, NULL},
        {"ws17.lab:9897", 0, NULL},
        {"127.0.0.2:x", 0, NULL},
        {"", 0, NULL},
    };
    struct netaddr na;
    char err[160];
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = netaddr_parse_numeric(cases[i].in, 9, &na, err, sizeof err);

        if (!CHECK_EQ_INT(rc, cases[i].ok ? 0 : -1))
            fprintf(stderr, "  input %s\n", cases[i].in);
        if (rc == 0 && cases[i].text != NULL)
            CHECK_EQ_STR(na.text, cases[i].text);
    }
}

static const struct test_case cases[] = {
    {"ipv4", t_ipv4},
    {"ipv6", t_ipv6},
    {"default_port", t_default_port},
    {"hostname", t_hostname},
    {"bad_port", t_bad_port},
    {"empty", t_empty},
    {"ipv6_without_brackets", t_ipv6_without_brackets},
    {"brackets", t_brackets},
    {"too_long", t_too_long},
    {"is_any", t_is_any},
    {"set_port", t_set_port},
    {"format", t_format},
    {"listen", t_listen},
    {"numeric", t_numeric},
};

TEST_MAIN(cases)
