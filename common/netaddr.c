/*
 * Address parsing and listening sockets.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "netaddr.h"

static int
netaddr_parse_flags(const char *s, int default_port, struct netaddr *na,
                    int numeric, char *err, size_t errlen)
{
    char host[256], port[24];
    const char *colon, *end;
    struct addrinfo hints, *res;
    size_t hlen;
    long p;
    char *ep;
    int rc;

    memset(na, 0, sizeof *na);
    if (s == NULL || *s == '\0') {
        snprintf(err, errlen, "empty address");
        return -1;
    }
    if (*s == '[') { /* [v6]:port */
        if ((end = strchr(s, ']')) == NULL) {
            snprintf(err, errlen, "%s: missing ']'", s);
            return -1;
        }
        hlen = (size_t)(end - s - 1);
        if (hlen >= sizeof host)
            goto toolong;
        memcpy(host, s + 1, hlen);
        host[hlen] = '\0';
        colon = end[1] == ':' ? end + 1 : NULL;
        if (end[1] != '\0' && colon == NULL) {
            snprintf(err, errlen, "%s: junk after ']'", s);
            return -1;
        }
    } else {
        colon = strrchr(s, ':');
        if (colon != NULL && strchr(s, ':') != colon) {
            snprintf(err, errlen, "%s: write IPv6 addresses as [ADDR]:PORT", s);
            return -1;
        }
        hlen = colon ? (size_t)(colon - s) : strlen(s);
        if (hlen >= sizeof host)
            goto toolong;
        memcpy(host, s, hlen);
        host[hlen] = '\0';
    }
    if (colon != NULL) {
        errno = 0;
        p = strtol(colon + 1, &ep, 10);
        /* Plain digits only: no sign, no spaces, at most five. */
        if (colon[1] < '0' || colon[1] > '9' || strlen(colon + 1) > 5 ||
            *ep != '\0' || errno != 0 || p < 0 || p > 65535) {
            snprintf(err, errlen, "%s: bad port", s);
            return -1;
        }
    } else
        p = default_port;
    if (host[0] == '\0') {
        snprintf(err, errlen, "%s: missing host", s);
        return -1;
    }
    snprintf(port, sizeof port, "%ld", p);

    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | (numeric ? AI_NUMERICHOST : 0);
    if ((rc = getaddrinfo(host, port, &hints, &res)) != 0) {
        snprintf(err, errlen, "%s: %s", s, gai_strerror(rc));
        return -1;
    }
    memcpy(&na->ss, res->ai_addr, res->ai_addrlen);
    na->len = res->ai_addrlen;
    freeaddrinfo(res);
    netaddr_format((struct sockaddr *)&na->ss, na->text, sizeof na->text);
    return 0;

toolong:
    snprintf(err, errlen, "address too long");
    return -1;
}

int
netaddr_parse(const char *s, int default_port, struct netaddr *na, char *err,
              size_t errlen)
{
    return netaddr_parse_flags(s, default_port, na, 0, err, errlen);
}

int
netaddr_parse_numeric(const char *s, int default_port, struct netaddr *na,
                      char *err, size_t errlen)
{
    return netaddr_parse_flags(s, default_port, na, 1, err, errlen);
}

const char *
netaddr_format(const struct sockaddr *sa, char *buf, size_t len)
{
    char host[INET6_ADDRSTRLEN];

    switch (sa->sa_family) {
    case AF_INET: {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
        snprintf(buf, len, "%s:%u", host, ntohs(in->sin_port));
        break;
    }
    case AF_INET6: {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
        snprintf(buf, len, "[%s]:%u", host, ntohs(in6->sin6_port));
        break;
    }
    default:
        snprintf(buf, len, "(family %d)", sa->sa_family);
    }
    return buf;
}

int
netaddr_is_any(const struct netaddr *na)
{
    if (na->ss.ss_family == AF_INET)
        return ((const struct sockaddr_in *)&na->ss)->sin_addr.s_addr ==
               htonl(INADDR_ANY);
    if (na->ss.ss_family == AF_INET6)
        return IN6_IS_ADDR_UNSPECIFIED(
            &((const struct sockaddr_in6 *)&na->ss)->sin6_addr);
    return 0;
}

void
netaddr_set_port(struct netaddr *na, int port)
{
    if (na->ss.ss_family == AF_INET)
        ((struct sockaddr_in *)&na->ss)->sin_port = htons((uint16_t)port);
    else if (na->ss.ss_family == AF_INET6)
        ((struct sockaddr_in6 *)&na->ss)->sin6_port = htons((uint16_t)port);
    netaddr_format((struct sockaddr *)&na->ss, na->text, sizeof na->text);
}

int
netaddr_port(const struct netaddr *na)
{
    if (na->ss.ss_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)&na->ss)->sin_port);
    if (na->ss.ss_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)&na->ss)->sin6_port);
    return -1;
}

int
netaddr_listen(const struct netaddr *na, int backlog)
{
    int fd, one = 1, saved;

    fd =
        socket(na->ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd == -1)
        return -1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == -1 ||
        bind(fd, (const struct sockaddr *)&na->ss, na->len) == -1 ||
        listen(fd, backlog) == -1) {
        saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

long
net_raise_nofile(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
        return -1;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
    return (long)rl.rlim_cur;
}
