/*
 * Network addresses written as HOST:PORT ("127.0.0.2:9897", "[::1]:9700",
 * "gateway.lab:9700") and the sockets made from them.
 */
#ifndef P2P_NETADDR_H
#define P2P_NETADDR_H

#include <sys/socket.h>

#define NETADDR_STRLEN 64

struct netaddr {
    struct sockaddr_storage ss;
    socklen_t len;
    char text[NETADDR_STRLEN]; /* canonical numeric "host:port" */
};

/* Parse and resolve "HOST:PORT"; a bare HOST takes default_port.  Returns 0,
 * or -1 with a message in err. */
int netaddr_parse(const char *, int default_port, struct netaddr *, char *err,
                  size_t errlen);
/* The same for a numeric host only ("10.0.0.7:9897", "[::1]:9700"): no
 * name is looked up, so a daemon never blocks on an address it was sent. */
int netaddr_parse_numeric(const char *, int default_port, struct netaddr *,
                          char *err, size_t errlen);
/* Format a socket address as numeric "host:port". */
const char *netaddr_format(const struct sockaddr *, char *, size_t);
/* Non-zero for 0.0.0.0 or ::. */
int netaddr_is_any(const struct netaddr *);
/* Same address, other port. */
void netaddr_set_port(struct netaddr *, int port);
int netaddr_port(const struct netaddr *);
/* Bound, listening, non-blocking, close-on-exec socket; -1 and errno. */
int netaddr_listen(const struct netaddr *, int backlog);
/* Raise the open-file limit to its hard maximum; returns the new limit. */
long net_raise_nofile(void);

#endif
