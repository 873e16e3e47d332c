/*
 * codec_decode over arbitrary bytes.  A refused input leaves an empty
 * message and a reason; an accepted one satisfies every promise the
 * decoder makes (valid tokens, free <= total, known state), survives
 * encode + decode unchanged, and is freed (ASan reports leaks).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_res(const struct resources *r)
{
    if (r->mem_free > r->mem_total || r->slots_free > r->slots_total ||
        (int)r->state < PEER_STATE_UNKNOWN ||
        (int)r->state > PEER_STATE_OWNER_BUSY)
        abort();
}

static void
check_text(const char *s, size_t size)
{
    if (memchr(s, '\0', size) == NULL)
        abort();
}

/* What the decoder promises of job views (JobReport, ListReply). */
static void
check_jobs(const struct job_info *jobs, size_t n, size_t max_jobs,
           size_t max_procs)
{
    size_t i, k, np = 0;

    if (n > max_jobs || (n == 0) != (jobs == NULL))
        abort();
    for (i = 0; i < n; i++) {
        const struct job_info *j = &jobs[i];

        check_text(j->user, sizeof j->user);
        check_text(j->command, sizeof j->command);
        if ((j->user[0] != '\0' &&
             !codec_valid_token(j->user, WIRE_MAX_LABEL)) ||
            (j->command[0] != '\0' &&
             !codec_valid_token(j->command, WIRE_MAX_LABEL)) ||
            j->size > WIRE_MAX_RANKS || j->nreplicas > WIRE_MAX_REPLICAS ||
            (j->nprocs == 0) != (j->procs == NULL) || j->exit < -1 ||
            j->exit > 255)
            abort();
        np += j->nprocs;
        for (k = 0; k < j->nprocs; k++) {
            const struct job_proc *p = &j->procs[k];

            check_text(p->host, sizeof p->host);
            if (p->rank >= j->size || p->replica >= j->nreplicas ||
                p->state > PROC_RUN_LOST)
                abort();
        }
    }
    if (np > max_procs)
        abort();
}

static int
jobs_eq(const struct job_info *a, const struct job_info *b, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (memcmp(a[i].job, b[i].job, WIRE_JOB_ID_LEN) != 0 ||
            strcmp(a[i].user, b[i].user) != 0 ||
            strcmp(a[i].command, b[i].command) != 0 || a[i].size != b[i].size ||
            a[i].nreplicas != b[i].nreplicas || a[i].started != b[i].started ||
            a[i].farm != b[i].farm ||
            a[i].tasks_running != b[i].tasks_running ||
            a[i].tasks_queued != b[i].tasks_queued ||
            a[i].tasks_done != b[i].tasks_done ||
            a[i].finished != b[i].finished || a[i].exit != b[i].exit ||
            a[i].hosts != b[i].hosts || a[i].nprocs != b[i].nprocs ||
            a[i].coord_total != b[i].coord_total ||
            a[i].coord_done != b[i].coord_done ||
            a[i].coord_failed != b[i].coord_failed ||
            (a[i].nprocs > 0 && memcmp(a[i].procs, b[i].procs,
                                       a[i].nprocs * sizeof *a[i].procs) != 0))
            return 0;
    }
    return 1;
}

/* Everything the decoder promises about an accepted message. */
static void
check_valid(const struct msg *m)
{
    size_t i;

    switch (m->type) {
    case MSG_REGISTER:
        check_text(m->u.reg.host_label, sizeof m->u.reg.host_label);
        check_text(m->u.reg.addr, sizeof m->u.reg.addr);
        check_text(m->u.reg.version, sizeof m->u.reg.version);
        if (!codec_valid_token(m->u.reg.host_label, WIRE_MAX_LABEL) ||
            !codec_valid_token(m->u.reg.addr, WIRE_MAX_ADDR) ||
            (m->u.reg.version[0] != '\0' &&
             !codec_valid_token(m->u.reg.version, WIRE_MAX_LABEL)))
            abort();
        check_res(&m->u.reg.res);
        check_text(m->u.reg.cpu_model, sizeof m->u.reg.cpu_model);
        check_text(m->u.reg.os, sizeof m->u.reg.os);
        check_text(m->u.reg.kernel, sizeof m->u.reg.kernel);
        break;
    case MSG_HEARTBEAT:
        check_res(&m->u.heartbeat);
        break;
    case MSG_JOB_NOTE:
        if (m->u.jnote.tasks_done > m->u.jnote.tasks_total ||
            m->u.jnote.tasks_failed > m->u.jnote.tasks_done)
            abort();
        break;
    case MSG_JOB_REPORT:
        check_jobs(m->u.report.jobs, m->u.report.njobs, WIRE_MAX_REPORT_JOBS,
                   WIRE_MAX_REPORT_PROCS);
        break;
    case MSG_LIST_REPLY:
        if ((m->u.list.npeers == 0) != (m->u.list.peers == NULL))
            abort();
        for (i = 0; i < m->u.list.npeers; i++) {
            const struct peer_entry *pe = &m->u.list.peers[i];

            check_text(pe->host_label, sizeof pe->host_label);
            check_text(pe->addr, sizeof pe->addr);
            if (!codec_valid_token(pe->host_label, WIRE_MAX_LABEL) ||
                !codec_valid_token(pe->addr, WIRE_MAX_ADDR))
                abort();
            check_res(&pe->res);
        }
        check_jobs(m->u.list.jobs, m->u.list.njobs, WIRE_MAX_LIST_JOBS,
                   (size_t)WIRE_MAX_RANKS * WIRE_MAX_REPLICAS);
        break;
    case MSG_FED_SUMMARY:
        if (m->u.fed.nparts < 1 || m->u.fed.nparts > WIRE_FED_MAX_PARTS ||
            m->u.fed.part >= m->u.fed.nparts ||
            m->u.fed.npeers > WIRE_FED_PART_ENTRIES ||
            (m->u.fed.npeers == 0) != (m->u.fed.peers == NULL))
            abort();
        check_text(m->u.fed.addr, sizeof m->u.fed.addr);
        if (m->u.fed.addr[0] != '\0' &&
            !codec_valid_token(m->u.fed.addr, WIRE_MAX_ADDR))
            abort();
        for (i = 0; i < m->u.fed.npeers; i++) {
            const struct peer_entry *pe = &m->u.fed.peers[i];

            if (!codec_valid_token(pe->host_label, WIRE_MAX_LABEL) ||
                !codec_valid_token(pe->addr, WIRE_MAX_ADDR))
                abort();
            check_res(&pe->res);
        }
        break;
    case MSG_ERROR:
        check_text(m->u.error.text, sizeof m->u.error.text);
        for (i = 0; m->u.error.text[i] != '\0'; i++)
            if (m->u.error.text[i] < ' ' || m->u.error.text[i] > '~')
                abort();
        break;
    case MSG_REGISTER_ACK:
    case MSG_HEARTBEAT_ACK:
    case MSG_UNREGISTER:
    case MSG_PING:
    case MSG_PONG:
    case MSG_LIST_REQUEST:
    case MSG_RESERVE:
    case MSG_RELEASE:
    case MSG_KILL:
    case MSG_FILE_OFFER:
    case MSG_FILE_NEED:
    case MSG_PROC_EXIT:
    case MSG_JOB_ABORT:
    case MSG_NODE_CHALLENGE:
    case MSG_NODE_PROOF:
    case MSG_FARM_OPEN:
    case MSG_TASK_STARTED:
        break;
    case MSG_VIEW:
        if (m->u.view.ndead > (size_t)WIRE_MAX_RANKS * WIRE_MAX_REPLICAS ||
            (m->u.view.ndead == 0) != (m->u.view.dead == NULL))
            abort();
        for (i = 0; i < m->u.view.ndead; i++)
            if (m->u.view.dead[i] >=
                (uint32_t)WIRE_MAX_RANKS * WIRE_MAX_REPLICAS)
                abort();
        break;
    case MSG_OUTPUT_HOLD:
    case MSG_PROGRESS:
        if (m->u.note.rank >= WIRE_MAX_RANKS ||
            m->u.note.replica >= WIRE_MAX_REPLICAS ||
            (m->type == MSG_OUTPUT_HOLD && m->u.note.value > 1))
            abort();
        break;
    case MSG_SUSPECT:
        if (m->u.suspect.rank >= WIRE_MAX_RANKS ||
            m->u.suspect.replica >= WIRE_MAX_REPLICAS ||
            m->u.suspect.proc >= (uint32_t)WIRE_MAX_RANKS * WIRE_MAX_REPLICAS)
            abort();
        break;
    case MSG_USER_AUTH:
        check_text(m->u.auth.user, sizeof m->u.auth.user);
        if (m->u.auth.user[0] != '\0' &&
            !codec_valid_token(m->u.auth.user, WIRE_MAX_LABEL))
            abort();
        break;
    case MSG_RESERVE_REPLY:
    case MSG_LAUNCH_REPLY:
        check_text(m->u.reply.reason, sizeof m->u.reply.reason);
        break;
    case MSG_FILE_DONE:
        check_text(m->u.file.reason, sizeof m->u.file.reason);
        break;
    case MSG_FILE_CHUNK:
    case MSG_OUTPUT:
        if (m->u.data.len > WIRE_MAX_CHUNK || m->u.data.data == NULL)
            abort();
        if (m->type == MSG_OUTPUT && m->u.data.stream != 1 &&
            m->u.data.stream != 2)
            abort();
        break;
    case MSG_PROC_ADDR:
        if (!codec_valid_token(m->u.addr.p.addr, WIRE_MAX_ADDR) ||
            m->u.addr.p.rank >= WIRE_MAX_RANKS ||
            m->u.addr.p.replica >= WIRE_MAX_REPLICAS)
            abort();
        break;
    case MSG_TABLE:
        if (m->u.table.nprocs < 1 || m->u.table.procs == NULL ||
            m->u.table.first > m->u.table.total ||
            m->u.table.nprocs > m->u.table.total - m->u.table.first)
            abort();
        for (i = 0; i < m->u.table.nprocs; i++)
            if (!codec_valid_token(m->u.table.procs[i].addr, WIRE_MAX_ADDR))
                abort();
        break;
    case MSG_LAUNCH: {
        const struct msg_launch *l = &m->u.launch;

        if (l->size < 1 || l->size > WIRE_MAX_RANKS || l->nreplicas < 1 ||
            l->nreplicas > WIRE_MAX_REPLICAS || l->nprocs < 1 || l->nargv < 1 ||
            l->nargv > WIRE_MAX_ARGS || l->nenv > WIRE_MAX_ENV ||
            l->nfiles > WIRE_MAX_FILES || l->argv[0][0] == '\0' ||
            l->argv[l->nargv] != NULL)
            abort();
        for (i = 0; i < l->nprocs; i++)
            if (l->procs[i].rank >= l->size ||
                l->procs[i].replica >= l->nreplicas)
                abort();
        for (i = 0; i < l->nenv; i++)
            if (strchr(l->env[i], '=') == NULL)
                abort();
        for (i = 0; i < l->nfiles; i++)
            if (!codec_valid_basename(l->files[i].name))
                abort();
        break;
    }
    default:
        abort();
    }
}

static int
res_eq(const struct resources *a, const struct resources *b)
{
    return a->cores == b->cores && a->mem_total == b->mem_total &&
           a->mem_free == b->mem_free && a->load_milli == b->load_milli &&
           a->slots_total == b->slots_total && a->slots_free == b->slots_free &&
           a->state == b->state;
}

static int
entries_eq(const struct peer_entry *a, const struct peer_entry *b, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (memcmp(a[i].id, b[i].id, sizeof a[i].id) != 0 ||
            strcmp(a[i].host_label, b[i].host_label) != 0 ||
            strcmp(a[i].addr, b[i].addr) != 0 ||
            !res_eq(&a[i].res, &b[i].res) || a[i].rtt_us != b[i].rtt_us ||
            a[i].age_ms != b[i].age_ms)
            return 0;
    return 1;
}

static int
msg_eq(const struct msg *a, const struct msg *b)
{

    if (a->type != b->type)
        return 0;
    switch (a->type) {
    case MSG_REGISTER:
        return memcmp(a->u.reg.node_key, b->u.reg.node_key,
                      sizeof a->u.reg.node_key) == 0 &&
               memcmp(a->u.reg.signature, b->u.reg.signature,
                      sizeof a->u.reg.signature) == 0 &&
               strcmp(a->u.reg.host_label, b->u.reg.host_label) == 0 &&
               strcmp(a->u.reg.addr, b->u.reg.addr) == 0 &&
               strcmp(a->u.reg.version, b->u.reg.version) == 0 &&
               res_eq(&a->u.reg.res, &b->u.reg.res) &&
               strcmp(a->u.reg.cpu_model, b->u.reg.cpu_model) == 0 &&
               strcmp(a->u.reg.os, b->u.reg.os) == 0 &&
               strcmp(a->u.reg.kernel, b->u.reg.kernel) == 0 &&
               a->u.reg.started == b->u.reg.started;
    case MSG_REGISTER_ACK:
        return a->u.reg_ack.heartbeat_ms == b->u.reg_ack.heartbeat_ms &&
               a->u.reg_ack.expire_ms == b->u.reg_ack.expire_ms;
    case MSG_HEARTBEAT:
        return res_eq(&a->u.heartbeat, &b->u.heartbeat);
    case MSG_PING:
    case MSG_PONG:
        return a->u.stamp == b->u.stamp;
    case MSG_LIST_REQUEST:
        return a->u.list_req.local == b->u.list_req.local;
    case MSG_LIST_REPLY:
        return a->u.list.npeers == b->u.list.npeers &&
               entries_eq(a->u.list.peers, b->u.list.peers,
                          a->u.list.npeers) &&
               a->u.list.njobs == b->u.list.njobs &&
               jobs_eq(a->u.list.jobs, b->u.list.jobs, a->u.list.njobs);
    case MSG_JOB_NOTE:
        return memcmp(&a->u.jnote, &b->u.jnote, sizeof a->u.jnote) == 0;
    case MSG_JOB_REPORT:
        return a->u.report.njobs == b->u.report.njobs &&
               a->u.report.more == b->u.report.more &&
               jobs_eq(a->u.report.jobs, b->u.report.jobs, a->u.report.njobs);
    case MSG_FED_SUMMARY:
        return memcmp(a->u.fed.instance, b->u.fed.instance,
                      WIRE_FED_INSTANCE_LEN) == 0 &&
               a->u.fed.seq == b->u.fed.seq &&
               a->u.fed.part == b->u.fed.part &&
               a->u.fed.nparts == b->u.fed.nparts &&
               a->u.fed.total_peers == b->u.fed.total_peers &&
               a->u.fed.total_slots_free == b->u.fed.total_slots_free &&
               strcmp(a->u.fed.addr, b->u.fed.addr) == 0 &&
               a->u.fed.npeers == b->u.fed.npeers &&
               entries_eq(a->u.fed.peers, b->u.fed.peers, a->u.fed.npeers);
    case MSG_ERROR:
        return a->u.error.code == b->u.error.code &&
               strcmp(a->u.error.text, b->u.error.text) == 0;
    case MSG_VIEW:
        return memcmp(a->u.view.job, b->u.view.job, WIRE_JOB_ID_LEN) == 0 &&
               a->u.view.number == b->u.view.number &&
               a->u.view.ndead == b->u.view.ndead &&
               (a->u.view.ndead == 0 ||
                memcmp(a->u.view.dead, b->u.view.dead,
                       a->u.view.ndead * sizeof *a->u.view.dead) == 0);
    case MSG_SUSPECT:
        return memcmp(a->u.suspect.job, b->u.suspect.job, WIRE_JOB_ID_LEN) ==
                   0 &&
               a->u.suspect.rank == b->u.suspect.rank &&
               a->u.suspect.replica == b->u.suspect.replica &&
               a->u.suspect.proc == b->u.suspect.proc;
    case MSG_OUTPUT_HOLD:
    case MSG_PROGRESS:
        return memcmp(a->u.note.job, b->u.note.job, WIRE_JOB_ID_LEN) == 0 &&
               a->u.note.rank == b->u.note.rank &&
               a->u.note.replica == b->u.note.replica &&
               a->u.note.value == b->u.note.value;
    case MSG_NODE_CHALLENGE:
    case MSG_NODE_PROOF:
        return memcmp(&a->u.node, &b->u.node, sizeof a->u.node) == 0;
    case MSG_FARM_OPEN:
        return memcmp(&a->u.farm, &b->u.farm, sizeof a->u.farm) == 0;
    case MSG_TASK_STARTED:
        return memcmp(a->u.job, b->u.job, WIRE_JOB_ID_LEN) == 0;
    default:
        return 1;
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct msg zero;
    struct msg m, again;
    uint8_t *buf;
    size_t len;
    char err[160];

    err[0] = '\0';
    if (codec_decode(data, size, &m, err, sizeof err) == -1) {
        if (err[0] == '\0' || memcmp(&m, &zero, sizeof m) != 0)
            abort();
        codec_msg_free(&m);
        return 0;
    }
    check_valid(&m);
    if (codec_encode(&m, &buf, &len) == -1)
        abort();
    if (codec_decode(buf, len, &again, err, sizeof err) == -1)
        abort();
    if (!msg_eq(&m, &again))
        abort();
    /* Every type, whatever msg_eq knows of it: encoding is deterministic,
     * so a faithful round trip encodes to the same bytes again. */
    {
        uint8_t *buf2;
        size_t len2;

        if (codec_encode(&again, &buf2, &len2) == -1 || len2 != len ||
            memcmp(buf, buf2, len) != 0)
            abort();
        free(buf2);
    }
    free(buf);
    codec_msg_free(&m);
    codec_msg_free(&again);
    return 0;
}
