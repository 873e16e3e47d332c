/*
 * The dashboard over HTTP (docs/dashboard.md): libevent's evhttp serves
 * the embedded page (assets.c, generated from supernode/dashboard/) and
 * the JSON of api.c.  Read-only: GET and HEAD only.
 *
 * Who may look: on a loopback address anyone on the machine; anywhere
 * else a token is required (http_new() refuses to start without one) and
 * checked on every request, from "Authorization: Bearer T", else
 * "?token=T" (answered with a cookie and a redirect that drops it from
 * the address bar), else the cookie.  The page never holds the token: the
 * cookie is HttpOnly and the page's own requests carry it.
 *
 * Bad requests are bounded and logged (a few lines per interval, then a
 * count): headers and URL sizes, methods, connections that made a request
 * and are still open (503 beyond max_conns), idle connections (timeout).
 * The peers come first: from its first request on, an HTTP connection's
 * events run at a lower libevent priority than the peers' channels, so a
 * loaded dashboard delays page views, not heartbeats.
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "log.h"
#include "monotime.h"
#include "netaddr.h"
#include "sec.h"
#include "supernode.h"
#include "xmalloc.h"

/* libevent cuts beyond this itself (413, unlogged); below it, ours. */
#define HTTP_LIBEVENT_MAX_HEADERS (64 * 1024)
#define HTTP_DEFAULT_PORT 8780
#define HTTP_MAX_HEADERS 8192
#define HTTP_MAX_URI 2048
#define HTTP_TIMEOUT_S 10
#define HTTP_COOKIE "p2p_dashboard"
#define HTTP_LOG_EVERY_MS 10000
#define HTTP_LOG_BUDGET 5
/* The API answers at most this stale (the page polls every 1.5 s). */
#define HTTP_CACHE_MS 500

enum http_api { API_PEERS, API_JOBS, API_SUPERNODES, API_HISTORY, API__COUNT };

struct http_cached {
    char *json;
    uint64_t at_ms;
};

struct http {
    struct event_base *base;
    struct server *srv;
    struct evhttp *evh;
    char *token;
    uint8_t token_hash[SEC_HASH_LEN]; /* compared with the caller's */
    char **known;
    const char **source; /* of each known supernode: config, federation */
    int nknown;
    char *self_addr;
    char addr[NETADDR_STRLEN];
    int prio; /* of the connections' events */
    /* connections that made a request and are still open */
    struct evhttp_connection **conns;
    int nconns, max_conns;
    /* bad-request log throttle */
    uint64_t log_start_ms;
    unsigned log_lines[4]; /* by http_log_kind() */
    uint64_t log_quiet;
    struct http_cached cache[API__COUNT];
};

/* Which budget of log lines a refusal takes from: one per kind, so that
 * a flood of one kind does not hide the others. */
static int
http_log_kind(int code)
{
    switch (code) {
    case 401:
        return 0;
    case 414:
    case 431:
        return 1;
    case 503:
        return 2;
    default:
        return 3;
    }
}

/* One line for a refused request, unless this interval had its share of
 * that kind; then a count, said at the next interval. */
static void
http_refused(struct http *h, struct evhttp_request *req, int code,
             const char *why)
{
    uint64_t now = monotime_ms();
    char *peer = NULL;
    ev_uint16_t port = 0;
    struct evhttp_connection *evcon = evhttp_request_get_connection(req);
    int kind = http_log_kind(code);

    if (now - h->log_start_ms >= HTTP_LOG_EVERY_MS) {
        if (h->log_quiet > 0)
            log_warnx("dashboard: %llu more requests refused in the last "
                      "%d s",
                      (unsigned long long)h->log_quiet,
                      HTTP_LOG_EVERY_MS / 1000);
        h->log_start_ms = now;
        memset(h->log_lines, 0, sizeof h->log_lines);
        h->log_quiet = 0;
    }
    if (h->log_lines[kind]++ >= HTTP_LOG_BUDGET) {
        h->log_quiet++;
        return;
    }
    if (evcon != NULL)
        evhttp_connection_get_peer(evcon, &peer, &port);
    log_warnx("dashboard: request from %s:%u refused (%d): %s",
              peer != NULL ? peer : "?", (unsigned)port, code, why);
}

/* The headers of every answer: page, API and errors alike. */
static void
http_reply_headers(struct evhttp_request *req, const char *type,
                   const char *cache)
{
    struct evkeyvalq *out = evhttp_request_get_output_headers(req);

    evhttp_add_header(out, "Content-Type", type);
    evhttp_add_header(out, "Cache-Control", cache);
    evhttp_add_header(out, "X-Content-Type-Options", "nosniff");
    evhttp_add_header(out, "Referrer-Policy", "no-referrer");
    evhttp_add_header(out, "Content-Security-Policy",
                      "default-src 'self'; frame-ancestors 'none'");
}

/* Send a short plain-text error. */
static void
http_error(struct http *h, struct evhttp_request *req, int code,
           const char *reason, const char *why)
{
    struct evbuffer *b = evbuffer_new();

    http_refused(h, req, code, why);
    evbuffer_add_printf(b, "%d %s: %s\n", code, reason, why);
    http_reply_headers(req, "text/plain; charset=utf-8", "no-store");
    evhttp_add_header(evhttp_request_get_output_headers(req), "Connection",
                      "close");
    evhttp_send_reply(req, code, reason, b);
    evbuffer_free(b);
}

/* Sizes of the request line and headers, our own limit. */
static size_t
http_headers_size(struct evhttp_request *req)
{
    struct evkeyvalq *hdr = evhttp_request_get_input_headers(req);
    struct evkeyval *kv;
    size_t n = 0;

    TAILQ_FOREACH(kv, hdr, next)
    n += strlen(kv->key) + strlen(kv->value) + 4;
    return n;
}

/* The token compared in constant time (hashes of both, then equal). */
static int
http_token_ok(const struct http *h, const char *given, size_t len)
{
    uint8_t a[SEC_HASH_LEN];

    if (given == NULL)
        return 0;
    sec_hash(a, given, len);
    return sec_equal(a, h->token_hash, sizeof a);
}

enum http_auth {
    AUTH_OK,
    AUTH_OK_QUERY, /* by ?token=: set the cookie */
    AUTH_NO,
};

static enum http_auth
http_check_token(const struct http *h, struct evhttp_request *req,
                 const struct evhttp_uri *uri)
{
    struct evkeyvalq *in = evhttp_request_get_input_headers(req);
    struct evkeyvalq q;
    const char *v, *query;
    char cookie[512];
    enum http_auth r = AUTH_NO;
    int given = 0;

    if (h->token == NULL)
        return AUTH_OK;
    if ((v = httpauth_bearer(evhttp_find_header(in, "Authorization"))) != NULL)
        return http_token_ok(h, v, strlen(v)) ? AUTH_OK : AUTH_NO;
    if ((query = evhttp_uri_get_query(uri)) != NULL) {
        TAILQ_INIT(&q);
        if (evhttp_parse_query_str(query, &q) == 0 &&
            (v = evhttp_find_header(&q, "token")) != NULL) {
            given = 1;
            r = http_token_ok(h, v, strlen(v)) ? AUTH_OK_QUERY : AUTH_NO;
        }
        evhttp_clear_headers(&q);
        if (given)
            return r;
    }
    if (httpauth_cookie(evhttp_find_header(in, "Cookie"), HTTP_COOKIE, cookie,
                        sizeof cookie) == 0)
        r = http_token_ok(h, cookie, strlen(cookie)) ? AUTH_OK : AUTH_NO;
    return r;
}

static void
http_conn_closed(struct evhttp_connection *evcon, void *arg)
{
    struct http *h = arg;
    int i;

    for (i = 0; i < h->nconns; i++)
        if (h->conns[i] == evcon) {
            h->conns[i] = h->conns[--h->nconns];
            return;
        }
}

/* Count the connection if new; -1 when there is no room for it. */
static int
http_conn_track(struct http *h, struct evhttp_connection *evcon)
{
    int i;

    for (i = 0; i < h->nconns; i++)
        if (h->conns[i] == evcon)
            return 0;
    if (h->nconns == h->max_conns)
        return -1;
    h->conns[h->nconns++] = evcon;
    evhttp_connection_set_closecb(evcon, http_conn_closed, h);
    return 0;
}

/* A compiled-in asset: referenced, not copied (it lives as long as the
 * program). */
static void
http_send(struct evhttp_request *req, const char *type, const void *body,
          size_t len, const char *cache)
{
    struct evbuffer *b = evbuffer_new();

    http_reply_headers(req, type, cache);
    evbuffer_add_reference(b, body, len, NULL, NULL);
    evhttp_send_reply(req, HTTP_OK, "OK", b);
    evbuffer_free(b);
}

/* An endpoint's JSON, made again only when older than HTTP_CACHE_MS:
 * ten open pages cost the registry what one does. */
static const char *
http_json(struct http *h, enum http_api which)
{
    struct http_cached *c = &h->cache[which];
    uint64_t now = monotime_ms();

    if (c->json != NULL && now - c->at_ms < HTTP_CACHE_MS)
        return c->json;
    free(c->json);
    switch (which) {
    case API_PEERS:
        c->json = api_peers(h->srv, now);
        break;
    case API_JOBS:
        c->json = api_jobs(h->srv, now);
        break;
    case API_SUPERNODES:
        c->json = api_supernodes(h->srv, (const char *const *)h->known,
                                 h->source, h->nknown, h->self_addr);
        break;
    case API_HISTORY:
    default:
        c->json = api_history(h->srv);
        break;
    }
    c->at_ms = now;
    return c->json;
}

/* An endpoint's JSON: copied, as the cache may replace it before a slow
 * client has read it. */
static void
http_send_json(struct evhttp_request *req, const char *json)
{
    struct evbuffer *b = evbuffer_new();

    http_reply_headers(req, "application/json", "no-store");
    evbuffer_add(b, json, strlen(json));
    evbuffer_add(b, "\n", 1);
    evhttp_send_reply(req, HTTP_OK, "OK", b);
    evbuffer_free(b);
}

/* Every request: limits, token, then the page or the API. */
static void
http_on_request(struct evhttp_request *req, void *arg)
{
    struct http *h = arg;
    const char *uri_s = evhttp_request_get_uri(req), *path;
    struct evhttp_uri *uri = NULL;
    const struct asset *a;
    enum http_auth auth;
    char cookie[600];

    /* From its first request on, the connection's events run below the
     * peers' channels (libevent sets a new connection's socket after any
     * hook of ours could, at the default priority): the page keeps its
     * connection, so its polls come second to heartbeats. */
    if (h->prio >= 0 && evhttp_request_get_connection(req) != NULL)
        bufferevent_priority_set(evhttp_connection_get_bufferevent(
                                     evhttp_request_get_connection(req)),
                                 h->prio);
    if (http_conn_track(h, evhttp_request_get_connection(req)) == -1) {
        http_error(h, req, 503, "Service Unavailable",
                   "too many dashboard connections");
        return;
    }
    if (uri_s == NULL || strlen(uri_s) > HTTP_MAX_URI) {
        http_error(h, req, 414, "URI Too Long", "URL too long");
        return;
    }
    if (http_headers_size(req) > HTTP_MAX_HEADERS) {
        http_error(h, req, 431, "Request Header Fields Too Large",
                   "headers too large");
        return;
    }
    if ((uri = evhttp_uri_parse(uri_s)) == NULL ||
        (path = evhttp_uri_get_path(uri)) == NULL) {
        http_error(h, req, 400, "Bad Request", "malformed URL");
        goto out;
    }
    auth = http_check_token(h, req, uri);
    if (auth == AUTH_NO) {
        evhttp_add_header(evhttp_request_get_output_headers(req),
                          "WWW-Authenticate", "Bearer realm=\"p2pmpi\"");
        http_error(h, req, 401, "Unauthorized", "missing or wrong token");
        goto out;
    }
    if (auth == AUTH_OK_QUERY) {
        /* Keep it in a cookie, and out of the address bar and history. */
        snprintf(cookie, sizeof cookie,
                 HTTP_COOKIE "=%s; Path=/; HttpOnly; SameSite=Strict",
                 h->token);
        evhttp_add_header(evhttp_request_get_output_headers(req), "Set-Cookie",
                          cookie);
        /* Only a path of ours: "//host" would send the browser away. */
        evhttp_add_header(
            evhttp_request_get_output_headers(req), "Location",
            path[0] == '/' && path[1] != '/' && path[1] != '\\' ? path : "/");
        evhttp_send_reply(req, 303, "See Other", NULL);
        goto out;
    }
    if (strcmp(path, "/api/peers") == 0)
        http_send_json(req, http_json(h, API_PEERS));
    else if (strcmp(path, "/api/jobs") == 0)
        http_send_json(req, http_json(h, API_JOBS));
    else if (strcmp(path, "/api/supernodes") == 0)
        http_send_json(req, http_json(h, API_SUPERNODES));
    else if (strcmp(path, "/api/history") == 0)
        http_send_json(req, http_json(h, API_HISTORY));
    else if ((a = asset_find(path)) != NULL)
        http_send(req, a->type, a->data, a->len, "no-cache");
    else {
        evhttp_send_error(req, HTTP_NOTFOUND, NULL);
    }
out:
    if (uri != NULL)
        evhttp_uri_free(uri);
}

/* 1 for an address of the loopback network (127/8, ::1). */
static int
http_is_loopback(const struct netaddr *na)
{
    static const struct in6_addr lo6 = IN6ADDR_LOOPBACK_INIT;
    const struct sockaddr_in *s4 = (const struct sockaddr_in *)&na->ss;
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&na->ss;

    if (na->ss.ss_family == AF_INET)
        return (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
    if (na->ss.ss_family == AF_INET6)
        return memcmp(&s6->sin6_addr, &lo6, sizeof lo6) == 0;
    return 0;
}

int
http_bind(const struct http_params *p, char *bound_addr, size_t bound_len,
          char *err, size_t errlen)
{
    struct netaddr na, bound;
    int fd;

    if (netaddr_parse(p->listen, HTTP_DEFAULT_PORT, &na, err, errlen) == -1)
        return -1;
    if (p->token != NULL && p->token[0] == '\0') {
        snprintf(err, errlen, "the dashboard's token is empty");
        return -1;
    }
    if (p->token != NULL &&
        p->token[strspn(p->token, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
                                  "qrstuvwxyz0123456789-._~+/=")] != '\0') {
        snprintf(err, errlen,
                 "the dashboard's token may hold only letters, digits and "
                 "-._~+/= (it travels in a cookie and a URL)");
        return -1;
    }
    if (!http_is_loopback(&na) && p->token == NULL) {
        snprintf(err, errlen,
                 "refusing to serve the dashboard on %s without a token: "
                 "set [supernode] http_token or http_token_file, or bind it "
                 "to 127.0.0.1 (or http = none)",
                 na.text);
        return -1;
    }
    if ((fd = netaddr_listen(&na, 64)) == -1) {
        int e = errno; /* the caller tells a taken port apart */

        snprintf(err, errlen, "dashboard: cannot listen on %s: %s", na.text,
                 strerror(e));
        errno = e;
        return -1;
    }
    bound.len = sizeof bound.ss;
    if (getsockname(fd, (struct sockaddr *)&bound.ss, &bound.len) == 0)
        netaddr_set_port(&na, netaddr_port(&bound));
    snprintf(bound_addr, bound_len, "%s", na.text);
    return fd;
}

struct http *
http_new(struct event_base *base, struct server *srv,
         const struct http_params *p, int fd, const char *bound_addr)
{
    struct http *h;
    int i;

    h = xcalloc(1, sizeof *h);
    h->base = base;
    h->srv = srv;
    h->token = p->token != NULL ? xstrdup(p->token) : NULL;
    if (h->token != NULL)
        sec_hash(h->token_hash, h->token, strlen(h->token));
    h->nknown = p->nknown + p->nfederation;
    h->known = xcalloc((size_t)h->nknown + 1, sizeof *h->known);
    h->source = xcalloc((size_t)h->nknown + 1, sizeof *h->source);
    for (i = 0; i < p->nknown; i++) {
        h->known[i] = xstrdup(p->known[i]);
        h->source[i] = "config";
    }
    for (i = 0; i < p->nfederation; i++) {
        h->known[p->nknown + i] = xstrdup(p->federation[i]);
        h->source[p->nknown + i] = "federation";
    }
    h->self_addr = xstrdup(p->self_addr);
    snprintf(h->addr, sizeof h->addr, "%s", bound_addr);
    h->max_conns = p->max_conns > 0 ? p->max_conns : 64;
    h->conns = xcalloc((size_t)h->max_conns, sizeof *h->conns);
    /* The lowest priority the base has, when it has more than one. */
    h->prio = event_base_get_npriorities(base) > 1
                  ? event_base_get_npriorities(base) - 1
                  : -1;

    if ((h->evh = evhttp_new(base)) == NULL)
        fatalx("evhttp_new failed");
    evhttp_set_allowed_methods(h->evh, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
    evhttp_set_max_headers_size(h->evh, HTTP_LIBEVENT_MAX_HEADERS);
    evhttp_set_max_body_size(h->evh, 1024);
    evhttp_set_timeout(h->evh, HTTP_TIMEOUT_S);
    evhttp_set_gencb(h->evh, http_on_request, h);
    if (evhttp_accept_socket_with_handle(h->evh, fd) == NULL)
        fatalx("dashboard: cannot serve HTTP on %s", bound_addr);
    return h;
}

const char *
http_addr(const struct http *h)
{
    return h->addr;
}

void
http_free(struct http *h)
{
    int i;

    if (h == NULL)
        return;
    if (h->evh != NULL)
        evhttp_free(h->evh);
    for (i = 0; i < API__COUNT; i++)
        free(h->cache[i].json);
    for (i = 0; i < h->nknown; i++)
        free(h->known[i]);
    free(h->known);
    free(h->source);
    free(h->conns);
    free(h->self_addr);
    if (h->token != NULL) {
        sec_wipe(h->token, strlen(h->token));
        sec_wipe(h->token_hash, sizeof h->token_hash);
        free(h->token);
    }
    free(h);
}
