/*
 * The owner comes first.  The machine shares its slots on its owner's
 * terms ([peer] sharing = always | idle | never, hours, days), which the
 * owner may change at run time with p2pshare.  With "idle", the owner
 * counts as present while the keyboard or mouse was used in the last
 * idle_after seconds or while the load that is not ours is above
 * owner_load per core (HTCondor's KeyboardIdle and LoadAvg).
 *
 * When guests stop being welcome, new reservations are refused with the
 * reason and the peer's state becomes owner-busy (or not-sharing); the
 * work running here is suspended (its cgroups frozen, or SIGSTOP) in case
 * the owner only glanced at the machine, and evicted if the owner is
 * still there suspend_s later: killed, and reported to its coordinator as
 * an eviction, not a crash.  If guests are welcome again before that,
 * the work goes on where it stopped.
 *
 *   AWAY    --owner back, sharing off, hours over-->  BACK (suspend)
 *   BACK    --welcome again-->                         AWAY (resume)
 *   BACK    --suspend_s passed-->                      EVICTED (evict)
 *   EVICTED --welcome again-->                         AWAY
 */
#include <sys/stat.h>

#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <utmpx.h>

#include "log.h"
#include "monotime.h"
#include "peerd.h"
#include "xmalloc.h"

#define OWNER_LOAD_EVERY_MS 1000 /* how often the load is sampled */

enum owner_state {
    OWNER_AWAY,   /* guests welcome */
    OWNER_BACK,   /* guests not welcome: their work is suspended */
    OWNER_EVICTED /* guests not welcome: their work was evicted */
};

static const char *const owner_state_name[] = {"away", "back", "evicted"};
static const char *const share_name[] = {"never", "always", "idle"};

struct owner {
    int mode;     /* SHARE_* in force */
    int override; /* set by p2pshare, until "default" */
    enum owner_state state;
    uint64_t since_ms;  /* when guests stopped being welcome */
    int from_min, to_min; /* hours, in minutes since midnight; -1: any */
    uint8_t days;       /* bit 0 Sunday ... bit 6 Saturday */
    int kind;           /* peer state while not welcome */
    char why[160];      /* why guests are not welcome */
    /* Input */
    int input_warned;
    long input_idle_s; /* -1: no source readable */
    /* Load */
    uint64_t load_at_ms;
    uint64_t busy_ticks, guest_us;
    int load_known;
    double load; /* not ours, per core */
};

int
owner_parse_hours(const char *text, int *from_min, int *to_min)
{
    int h1, m1, h2, m2, n = 0;

    if (sscanf(text, "%d:%d-%d:%d%n", &h1, &m1, &h2, &m2, &n) != 4 ||
        text[n] != '\0' || h1 < 0 || h1 > 24 || h2 < 0 || h2 > 24 ||
        m1 < 0 || m1 > 59 || m2 < 0 || m2 > 59 || (h1 == 24 && m1 != 0) ||
        (h2 == 24 && m2 != 0))
        return -1;
    *from_min = h1 * 60 + m1;
    *to_min = h2 * 60 + m2;
    return 0;
}

/* A day's number (0 Sunday) from its English name or three letters. */
static int
owner_day(const char *s, size_t len)
{
    static const char *const names[] = {"sun", "mon", "tue", "wed",
                                        "thu", "fri", "sat"};
    int i;

    if (len < 3)
        return -1;
    for (i = 0; i < 7; i++)
        if (strncasecmp(s, names[i], 3) == 0)
            return i;
    return -1;
}

int
owner_parse_days(const struct conf_list *days, uint8_t *mask)
{
    const char *w, *dash;
    int i, a, b;

    *mask = days->n == 0 ? 0x7f : 0;
    for (i = 0; i < days->n; i++) {
        w = days->v[i];
        if ((dash = strchr(w, '-')) != NULL) {
            a = owner_day(w, (size_t)(dash - w));
            b = owner_day(dash + 1, strlen(dash + 1));
        } else
            a = b = owner_day(w, strlen(w));
        if (a < 0 || b < 0)
            return -1;
        /* mon-fri, and also fri-mon across the weekend */
        for (;;) {
            *mask |= (uint8_t)(1u << a);
            if (a == b)
                break;
            a = (a + 1) % 7;
        }
    }
    return 0;
}

int
owner_window_open(int from_min, int to_min, uint8_t days, const struct tm *tm)
{
    int now = tm->tm_hour * 60 + tm->tm_min, day = tm->tm_wday;

    if (from_min < 0)
        return (days >> day) & 1;
    if (from_min <= to_min)
        return ((days >> day) & 1) && now >= from_min && now < to_min;
    /* Across midnight (19:00-08:00): the morning part belongs to the day
     * the evening started. */
    if (now >= from_min)
        return (days >> day) & 1;
    if (now < to_min)
        return (days >> ((day + 6) % 7)) & 1;
    return 0;
}

struct owner *
owner_new(const struct p2p_config *cfg, char *err, size_t errlen)
{
    struct owner *o;

    o = xcalloc(1, sizeof *o);
    o->mode = cfg->sharing;
    o->from_min = o->to_min = -1;
    o->input_idle_s = -1;
    if (cfg->hours != NULL && cfg->hours[0] != '\0' &&
        owner_parse_hours(cfg->hours, &o->from_min, &o->to_min) == -1) {
        snprintf(err, errlen, "[peer] hours '%s': not like 19:00-08:00",
                 cfg->hours);
        free(o);
        return NULL;
    }
    if (owner_parse_days(&cfg->days, &o->days) == -1) {
        snprintf(err, errlen,
                 "[peer] days: not day names or ranges like mon-fri");
        free(o);
        return NULL;
    }
    return o;
}

void
owner_free(struct owner *o)
{
    free(o);
}

/* The newest use of one input source, or 0. */
static time_t
owner_touched(const char *path)
{
    struct stat st;

    if (stat(path, &st) == -1)
        return 0;
    return st.st_atime > st.st_mtime ? st.st_atime : st.st_mtime;
}

/* Seconds since the owner last used the keyboard or mouse: the newest
 * access to an input device or a logged-in user's terminal (or to the
 * configured files); -1 when no source is readable. */
static long
owner_input_idle(const struct peerd *pd)
{
    const struct conf_list *files = &pd->cfg->idle_files;
    struct utmpx *u;
    char path[64];
    time_t newest = 0, t;
    glob_t g;
    size_t i;
    int n;

    if (files->n > 0) {
        for (n = 0; n < files->n; n++)
            if ((t = owner_touched(files->v[n])) > newest)
                newest = t;
    } else {
        if (glob("/dev/input/event*", 0, NULL, &g) == 0) {
            for (i = 0; i < g.gl_pathc; i++)
                if ((t = owner_touched(g.gl_pathv[i])) > newest)
                    newest = t;
            globfree(&g);
        }
        setutxent();
        while ((u = getutxent()) != NULL)
            if (u->ut_type == USER_PROCESS && u->ut_line[0] != '\0') {
                snprintf(path, sizeof path, "/dev/%.*s",
                         (int)sizeof u->ut_line, u->ut_line);
                if (strstr(path, "..") == NULL &&
                    (t = owner_touched(path)) > newest)
                    newest = t;
            }
        endutxent();
    }
    if (newest == 0)
        return -1;
    t = time(NULL);
    return t > newest ? (long)(t - newest) : 0;
}

/* Busy CPU ticks of the whole machine, from /proc/stat. */
static int
owner_busy_ticks(uint64_t *busy)
{
    unsigned long long v[8] = {0};
    FILE *f;
    int n;

    if ((f = fopen("/proc/stat", "re")) == NULL)
        return -1;
    n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
               &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (n < 4)
        return -1;
    /* user nice system [idle] [iowait] irq softirq steal */
    *busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    return 0;
}

/* Sample the load that is not ours: the machine's busy time less our
 * cgroups' over the last interval; without cgroups, the load average
 * less our running processes. */
static void
owner_sample_load(struct peerd *pd, struct owner *o, uint64_t now_ms)
{
    uint64_t busy, guest = UINT64_MAX;
    long hz = sysconf(_SC_CLK_TCK);
    unsigned cores = resources_cores() > 0 ? resources_cores() : 1;
    double la, dt;
    FILE *f;

    if (now_ms - o->load_at_ms < OWNER_LOAD_EVERY_MS)
        return;
    if (pd->cgroups != NULL)
        guest = cgroup_cpu_usage_us(pd->cgroups);
    if (guest != UINT64_MAX && owner_busy_ticks(&busy) == 0 && hz > 0) {
        if (o->load_at_ms != 0 && busy >= o->busy_ticks &&
            guest >= o->guest_us) {
            dt = (double)(now_ms - o->load_at_ms) / 1000;
            la = ((double)(busy - o->busy_ticks) / (double)hz -
                  (double)(guest - o->guest_us) / 1e6) /
                 dt / cores;
            o->load = la > 0 ? la : 0;
            o->load_known = 1;
        }
        o->busy_ticks = busy;
        o->guest_us = guest;
    } else if ((f = fopen("/proc/loadavg", "re")) != NULL) {
        if (fscanf(f, "%lf", &la) == 1) {
            la -= (double)job_running_procs(pd);
            o->load = la > 0 ? la / cores : 0;
            o->load_known = 1;
        }
        fclose(f);
    }
    o->load_at_ms = now_ms;
}

/* Are guests welcome now?  If not, why (and the peer state to show). */
static int
owner_welcome_now(struct peerd *pd, struct owner *o, uint64_t now_ms)
{
    const struct p2p_config *cfg = pd->cfg;
    struct tm tm;
    time_t t;

    if (o->mode == SHARE_NEVER) {
        snprintf(o->why, sizeof o->why, "not sharing%s",
                 o->override ? " (p2pshare off)" : "");
        o->kind = PEER_STATE_NOT_SHARING;
        return 0;
    }
    t = time(NULL);
    localtime_r(&t, &tm);
    if (!owner_window_open(o->from_min, o->to_min, o->days, &tm)) {
        snprintf(o->why, sizeof o->why, "outside its sharing hours");
        o->kind = PEER_STATE_NOT_SHARING;
        return 0;
    }
    if (o->mode != SHARE_IDLE)
        return 1;
    /* Only now: the owner's presence matters with "idle" alone. */
    o->input_idle_s = owner_input_idle(pd);
    owner_sample_load(pd, o, now_ms);
    if (o->input_idle_s == -1 && !o->input_warned) {
        o->input_warned = 1;
        log_warnx("no input device or terminal is readable: the owner's "
                  "presence is judged by the load alone");
    }
    o->kind = PEER_STATE_OWNER_BUSY;
    if (o->input_idle_s >= 0 && o->input_idle_s < cfg->idle_after) {
        snprintf(o->why, sizeof o->why, "owner active (input %ld s ago)",
                 o->input_idle_s);
        return 0;
    }
    if (o->load_known &&
        o->load * 1000 > (double)cfg->owner_load_milli) {
        snprintf(o->why, sizeof o->why,
                 "owner active (load %.2f per core)", o->load);
        return 0;
    }
    return 1;
}

static void
owner_set_state(struct peerd *pd, enum owner_state s)
{
    struct owner *o = pd->owner;

    log_info("owner: %s -> %s%s%s", owner_state_name[o->state],
             owner_state_name[s], s != OWNER_AWAY ? ": " : "",
             s != OWNER_AWAY ? o->why : "");
    o->state = s;
    link_announce(pd);
}

void
owner_cron(struct peerd *pd, uint64_t now_ms)
{
    struct owner *o = pd->owner;
    int welcome = owner_welcome_now(pd, o, now_ms);

    switch (o->state) {
    case OWNER_AWAY:
        if (welcome)
            break;
        o->since_ms = now_ms;
        owner_set_state(pd, OWNER_BACK);
        farm_refuse_all(pd, o->why);
        job_suspend_all(pd, 1);
        /* suspend_s = 0: straight on to eviction */
        if (pd->cfg->suspend_s == 0) {
            owner_set_state(pd, OWNER_EVICTED);
            job_evict_all(pd, o->why);
        }
        break;
    case OWNER_BACK:
        if (welcome) {
            owner_set_state(pd, OWNER_AWAY);
            job_suspend_all(pd, 0);
        } else if (now_ms - o->since_ms >=
                   (uint64_t)pd->cfg->suspend_s * 1000) {
            owner_set_state(pd, OWNER_EVICTED);
            job_evict_all(pd, o->why);
        }
        break;
    case OWNER_EVICTED:
        if (welcome)
            owner_set_state(pd, OWNER_AWAY);
        break;
    }
}

int
owner_welcome(const struct peerd *pd, char *why, size_t whylen)
{
    const struct owner *o = pd->owner;

    if (o->state == OWNER_AWAY)
        return 1;
    snprintf(why, whylen, "%s on %s", o->why, pd->host_label);
    return 0;
}

int
owner_peer_state(const struct peerd *pd)
{
    const struct owner *o = pd->owner;

    return o->state == OWNER_AWAY ? PEER_STATE_UNKNOWN : o->kind;
}

void
owner_set_mode(struct peerd *pd, int mode)
{
    struct owner *o = pd->owner;

    if (mode < 0) {
        o->mode = pd->cfg->sharing;
        o->override = 0;
    } else {
        o->mode = mode;
        o->override = 1;
    }
    log_info("owner: sharing is now %s%s", share_name[o->mode],
             o->override ? " (p2pshare)" : " (configuration)");
    owner_cron(pd, monotime_ms());
}

void
owner_evict_now(struct peerd *pd)
{
    log_info("owner: evicting every job (p2pshare evict)");
    job_suspend_all(pd, 0);
    job_evict_all(pd, "evicted by the owner (p2pshare evict)");
}

size_t
owner_status(const struct peerd *pd, char *buf, size_t len)
{
    const struct owner *o = pd->owner;
    char presence[128];
    size_t n;

    if (o->mode != SHARE_IDLE)
        snprintf(presence, sizeof presence,
                 "presence not watched (sharing %s)", share_name[o->mode]);
    else if (o->input_idle_s < 0)
        snprintf(presence, sizeof presence,
                 "no input source readable, load not ours %.2f per core%s",
                 o->load, o->load_known ? "" : " (not measured yet)");
    else
        snprintf(presence, sizeof presence,
                 "input idle for %ld m %ld s, load not ours %.2f per core%s",
                 o->input_idle_s / 60, o->input_idle_s % 60, o->load,
                 o->load_known ? "" : " (not measured yet)");
    n = (size_t)snprintf(
        buf, len, "sharing: %s (%s)\nowner: %s%s%s\n%s\n",
        share_name[o->mode], o->override ? "set by p2pshare" : "configured",
        o->state == OWNER_AWAY ? "guests welcome"
        : o->state == OWNER_BACK ? "guests suspended"
                                 : "guests evicted",
        o->state == OWNER_AWAY ? "" : ": ", o->state == OWNER_AWAY ? "" : o->why,
        presence);
    return n < len ? n : len - 1;
}
