/*
 * The dashboard's JSON (docs/dashboard.md): /api/peers, /api/jobs,
 * /api/supernodes and /api/history, built with jansson (only here) from
 * the registry, the job view and the history.  Read-only, and nothing
 * secret: node ids are public keys, jobs carry a user name and a
 * program's base name, never keys, arguments or environment.  A rank map
 * lists at most API_MAX_RANKS ranks per job (the rest are counted).  On a
 * federated supernode /api/peers adds, marked remote, the best
 * API_MAX_REMOTE of the peers the other members summarised.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "jobjson.h"
#include "log.h"
#include "sec.h"
#include "supernode.h"
#include "xmalloc.h"

#define API_MAX_RANKS 1024
#define API_MAX_GONE 128
/* Peers of the other federation members listed at most (the best). */
#define API_MAX_REMOTE 2000

/* What a peer is, as the page colours it: silent once it has not been
 * heard from for a third of the expiry (at least 1.5 s, a few beats),
 * whatever it said before; the registry drops it at the expiry. */
static const char *
api_peer_state(const struct resources *res, uint64_t age_ms, int expire_s)
{
    uint64_t silent_ms = (uint64_t)expire_s * 1000 / 3;

    if (age_ms > (silent_ms > 1500 ? silent_ms : 1500))
        return "silent";
    return peer_state_name(res->state);
}

static void
api_res(json_t *o, const struct resources *res)
{
    json_object_set_new(o, "cores", json_integer(res->cores));
    json_object_set_new(o, "slots_total", json_integer(res->slots_total));
    json_object_set_new(o, "slots_free", json_integer(res->slots_free));
    json_object_set_new(o, "mem_total",
                        json_integer((json_int_t)res->mem_total));
    json_object_set_new(o, "mem_free", json_integer((json_int_t)res->mem_free));
    json_object_set_new(o, "load", json_real(res->load_milli / 1000.0));
}

static void
api_info(json_t *o, const struct reg_peer_info *in, uint64_t now_unix)
{
    json_object_set_new(o, "version", json_string(in->version));
    json_object_set_new(o, "cpu_model", json_string(in->cpu_model));
    json_object_set_new(o, "os", json_string(in->os));
    json_object_set_new(o, "kernel", json_string(in->kernel));
    json_object_set_new(o, "started", json_integer((json_int_t)in->started));
    json_object_set_new(o, "uptime_s",
                        in->started != 0 && now_unix >= in->started
                            ? json_integer((json_int_t)(now_unix - in->started))
                            : json_null());
}

/* The peers' JSON objects, gathered to be sorted before they go into
 * the one array of the answer. */
struct api_walk {
    json_t **items;
    size_t n, cap;
    uint64_t now_ms, now_unix;
    int expire_s;
};

static void
api_walk_add(struct api_walk *w, json_t *o)
{
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 64;
        w->items = xreallocarray(w->items, w->cap, sizeof *w->items);
    }
    w->items[w->n++] = o;
}

static void
api_peer(const struct reg_peer *p, void *arg)
{
    struct api_walk *w = arg;
    const struct resources *res = reg_peer_res(p);
    uint64_t seen = reg_peer_last_seen(p);
    uint64_t age = w->now_ms > seen ? w->now_ms - seen : 0;
    char id[2 * SEC_SIGN_PK_LEN + 1];
    json_t *o = json_object();

    sec_hex(id, reg_peer_id(p), SEC_SIGN_PK_LEN);
    json_object_set_new(o, "id", json_string(id));
    json_object_set_new(o, "host", json_string(reg_peer_label(p)));
    json_object_set_new(o, "addr", json_string(reg_peer_addr(p)));
    json_object_set_new(o, "state",
                        json_string(api_peer_state(res, age, w->expire_s)));
    json_object_set_new(o, "reported_state",
                        json_string(peer_state_name(res->state)));
    api_res(o, res);
    json_object_set_new(o, "rtt_us", json_integer(reg_peer_rtt(p)));
    json_object_set_new(o, "age_ms", json_integer((json_int_t)age));
    api_info(o, reg_peer_info(p), w->now_unix);
    json_object_set_new(o, "remote", json_false());
    api_walk_add(w, o);
}

/* A peer another member of the federation summarised, and which one. */
struct api_remote {
    struct peer_entry e;
    const char *via;
};

struct api_remotes {
    const struct registry *reg;
    struct api_remote *v;
    size_t n, cap;
};

static void
api_remote_add(const struct peer_entry *e, const char *origin, void *arg)
{
    struct api_remotes *r = arg;

    /* Registered here too (it moved, or registers twice): ours is
     * fresher and complete. */
    if (registry_find(r->reg, e->id) != NULL)
        return;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 256;
        r->v = xreallocarray(r->v, r->cap, sizeof *r->v);
    }
    r->v[r->n].e = *e;
    r->v[r->n].via = origin;
    r->n++;
}

/* By node key, the freshest first. */
static int
api_remote_by_id(const void *va, const void *vb)
{
    const struct api_remote *a = va, *b = vb;
    int c = memcmp(a->e.id, b->e.id, sizeof a->e.id);

    if (c != 0)
        return c;
    return a->e.age_ms < b->e.age_ms ? -1 : a->e.age_ms > b->e.age_ms;
}

static int
api_remote_best(const void *a, const void *b)
{
    return rank_compare(&((const struct api_remote *)a)->e,
                        &((const struct api_remote *)b)->e);
}

/* The other members' peers that are not ours, each once (the freshest
 * word on it), the best API_MAX_REMOTE of them; how many there were in
 * all. */
static size_t
api_remote_peers(struct server *srv, struct api_walk *w)
{
    /* A summary describes no machine: the same fields, empty. */
    static const struct reg_peer_info no_info;
    struct api_remotes r = {server_registry(srv), NULL, 0, 0};
    char id[2 * SEC_SIGN_PK_LEN + 1];
    size_t i, n = 0;
    json_t *o;

    server_remote_walk(srv, w->now_ms, api_remote_add, &r);
    if (r.n > 1) {
        qsort(r.v, r.n, sizeof *r.v, api_remote_by_id);
        for (i = 0; i < r.n; i++)
            if (n == 0 || memcmp(r.v[n - 1].e.id, r.v[i].e.id,
                                 sizeof r.v[i].e.id) != 0)
                r.v[n++] = r.v[i];
        if (n > API_MAX_REMOTE)
            qsort(r.v, n, sizeof *r.v, api_remote_best);
    } else
        n = r.n;
    for (i = 0; i < n && i < API_MAX_REMOTE; i++) {
        const struct peer_entry *e = &r.v[i].e;

        o = json_object();
        sec_hex(id, e->id, SEC_SIGN_PK_LEN);
        json_object_set_new(o, "id", json_string(id));
        json_object_set_new(o, "host", json_string(e->host_label));
        json_object_set_new(o, "addr", json_string(e->addr));
        /* Whether it is silent is its own supernode's to say: the
         * summary lists it while that supernode does. */
        json_object_set_new(o, "state",
                            json_string(peer_state_name(e->res.state)));
        json_object_set_new(o, "reported_state",
                            json_string(peer_state_name(e->res.state)));
        api_res(o, &e->res);
        json_object_set_new(o, "rtt_us",
                            e->rtt_us ? json_integer(e->rtt_us) : json_null());
        json_object_set_new(o, "age_ms", json_integer((json_int_t)e->age_ms));
        api_info(o, &no_info, w->now_unix);
        json_object_set_new(o, "remote", json_true());
        json_object_set_new(o, "supernode", json_string(r.v[i].via));
        api_walk_add(w, o);
    }
    free(r.v);
    return n;
}

/* Peers by host label, then address, so that tiles keep their place. */
static int
api_peer_order(const void *a, const void *b)
{
    json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    int c = strcmp(json_string_value(json_object_get(x, "host")),
                   json_string_value(json_object_get(y, "host")));

    return c != 0 ? c
                  : strcmp(json_string_value(json_object_get(x, "addr")),
                           json_string_value(json_object_get(y, "addr")));
}

static char *
api_dump(json_t *root)
{
    char *s = json_dumps(root, JSON_COMPACT);

    json_decref(root);
    if (s == NULL)
        fatalx("json_dumps: out of memory");
    return s;
}

char *
api_peers(struct server *srv, uint64_t now_ms)
{
    const struct history_gone *gone[API_MAX_GONE];
    struct api_walk w = {NULL, 0, 0, now_ms, (uint64_t)time(NULL),
                         server_expire_s(srv)};
    json_t *root = json_object(), *arr = json_array(), *o;
    char id[2 * SEC_SIGN_PK_LEN + 1];
    size_t i, ng, nremote;

    registry_walk(server_registry(srv), api_peer, &w);
    nremote = api_remote_peers(srv, &w);
    if (w.n > 1)
        qsort(w.items, w.n, sizeof *w.items, api_peer_order);
    for (i = 0; i < w.n; i++)
        json_array_append_new(arr, w.items[i]);
    free(w.items);

    ng = history_gone(server_history(srv), server_registry(srv), now_ms, gone,
                      API_MAX_GONE);
    for (i = 0; i < ng; i++) {
        o = json_object();
        sec_hex(id, gone[i]->id, SEC_SIGN_PK_LEN);
        json_object_set_new(o, "id", json_string(id));
        json_object_set_new(o, "host", json_string(gone[i]->host));
        json_object_set_new(o, "addr", json_string(gone[i]->addr));
        json_object_set_new(o, "state", json_string("gone"));
        json_object_set_new(o, "reported_state",
                            json_string(peer_state_name(gone[i]->res.state)));
        json_object_set_new(o, "gone_why", json_string(gone[i]->why));
        api_res(o, &gone[i]->res);
        json_object_set_new(o, "rtt_us", json_null());
        json_object_set_new(
            o, "age_ms", json_integer((json_int_t)(now_ms - gone[i]->gone_ms)));
        api_info(o, &gone[i]->info, w.now_unix);
        json_object_set_new(o, "remote", json_false());
        json_array_append_new(arr, o);
    }
    json_object_set_new(root, "now", json_integer((json_int_t)w.now_unix));
    json_object_set_new(root, "expire_ms",
                        json_integer((json_int_t)server_expire_s(srv) * 1000));
    json_object_set_new(root, "remote_total",
                        json_integer((json_int_t)nremote));
    json_object_set_new(root, "remote_max", json_integer(API_MAX_REMOTE));
    json_object_set_new(root, "peers", arr);
    return api_dump(root);
}

char *
api_jobs(struct server *srv, uint64_t now_ms)
{
    struct job_info *jobs;
    json_t *root = json_object(), *arr = json_array();
    size_t n, i;

    (void)now_ms;
    jobview_export(server_jobview(srv), JOBVIEW_EXPORT_MAX_PROCS, &jobs, &n);
    for (i = 0; i < n; i++)
        json_array_append_new(arr, jobjson_job(&jobs[i], API_MAX_RANKS));
    codec_jobs_free(jobs, n);
    json_object_set_new(root, "now", json_integer((json_int_t)time(NULL)));
    json_object_set_new(root, "jobs", arr);
    return api_dump(root);
}

char *
api_supernodes(struct server *srv, const char *const *known,
               const char *const *source, int nknown, const char *self_addr)
{
    json_t *root = json_object(), *arr = json_array(), *self = json_object();
    int i;

    json_object_set_new(self, "addr", json_string(self_addr));
    json_object_set_new(self, "version", json_string(P2P_VERSION));
    json_object_set_new(self, "peers",
                        json_integer((json_int_t)server_peer_count(srv)));
    json_object_set_new(
        self, "jobs",
        json_integer((json_int_t)jobview_count(server_jobview(srv))));
    json_object_set_new(
        self, "federated_peers",
        json_integer((json_int_t)server_remote_peer_count(srv)));
    json_object_set_new(
        self, "summaries_sent",
        json_integer((json_int_t)server_summaries_sent(srv)));
    for (i = 0; i < nknown; i++)
        json_array_append_new(arr, json_pack("{s:s,s:s}", "addr", known[i],
                                             "source", source[i]));
    json_object_set_new(root, "self", self);
    json_object_set_new(root, "known", arr);
    return api_dump(root);
}

char *
api_history(struct server *srv)
{
    static struct history_sample samples[HISTORY_SAMPLES];
    json_t *root = json_object(), *arr = json_array();
    size_t n, i;

    n = history_samples(server_history(srv), samples,
                        sizeof samples / sizeof samples[0]);
    for (i = 0; i < n; i++)
        json_array_append_new(arr,
                              json_pack("[I,I,I,I,I]", (json_int_t)samples[i].t,
                                        (json_int_t)samples[i].peers,
                                        (json_int_t)samples[i].slots_total,
                                        (json_int_t)samples[i].slots_used,
                                        (json_int_t)samples[i].jobs));
    json_object_set_new(root, "every_ms", json_integer(HISTORY_EVERY_MS));
    json_object_set_new(root, "samples", arr);
    return api_dump(root);
}
