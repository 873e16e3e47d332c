/*
 * Conversion between our message structs and protobuf-c, with validation
 * of everything that arrives.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "codec_jobs.h"
#include "p2p.pb-c.h"
#include "xmalloc.h"

const char *
msg_type_name(enum msg_type t)
{
    static const char *names[] = {
        "none",          "register",      "register-ack", "heartbeat",
        "heartbeat-ack", "unregister",    "ping",         "pong",
        "list-request",  "list-reply",    "error",        "user-auth",
        "reserve",       "reserve-reply", "release",      "kill",
        "file-offer",    "file-need",     "file-chunk",   "file-done",
        "launch",        "launch-reply",  "output",       "proc-exit",
        "proc-addr",     "table",         "job-abort",    "view",
        "suspect",       "farm-open",     "task-started", "output-hold",
        "progress",      "node-challenge", "node-proof",   "job-report",
        "job-note",      "fed-summary",
    };
    _Static_assert(sizeof names / sizeof names[0] == MSG__COUNT,
                   "a message type without a name");

    if ((size_t)t >= sizeof names / sizeof names[0])
        return "?";
    return names[t];
}

const char *
peer_state_name(enum peer_state s)
{
    switch (s) {
    case PEER_STATE_AVAILABLE:
        return "available";
    case PEER_STATE_BUSY:
        return "busy";
    case PEER_STATE_FULL:
        return "full";
    case PEER_STATE_NOT_SHARING:
        return "not-sharing";
    case PEER_STATE_OWNER_BUSY:
        return "owner-busy";
    case PEER_STATE_UNKNOWN:
        break;
    }
    return "unknown";
}

int
codec_valid_token(const char *s, size_t max)
{
    size_t n = 0;

    for (; s[n] != '\0'; n++)
        if (n >= max || s[n] <= ' ' || s[n] > '~')
            return 0;
    return n > 0;
}

/* Printable text, spaces allowed, possibly empty. */
static int
codec_valid_text(const char *s, size_t max)
{
    size_t n = 0;

    for (; s[n] != '\0'; n++)
        if (n >= max || s[n] < ' ' || s[n] > '~')
            return 0;
    return 1;
}

int
codec_valid_basename(const char *s)
{
    size_t n;

    for (n = 0; s[n] != '\0'; n++)
        if (n >= WIRE_MAX_NAME || s[n] == '/' || (unsigned char)s[n] < ' ' ||
            s[n] == 0x7f)
            return 0;
    return n > 0 && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

/* NAME=VALUE with NAME a shell identifier. */
static int
codec_valid_env(const char *s)
{
    size_t n = 0;

    if (!((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') ||
          s[0] == '_'))
        return 0;
    for (n = 1; s[n] != '=' && s[n] != '\0'; n++)
        if (!((s[n] >= 'A' && s[n] <= 'Z') || (s[n] >= 'a' && s[n] <= 'z') ||
              (s[n] >= '0' && s[n] <= '9') || s[n] == '_'))
            return 0;
    return s[n] == '=';
}

/* --- encoding ---------------------------------------------------------- */

static void
res_to_pb(const struct resources *r, P2p__Resources *pb)
{
    p2p__resources__init(pb);
    pb->cores = r->cores;
    pb->mem_total = r->mem_total;
    pb->mem_free = r->mem_free;
    pb->load_milli = r->load_milli;
    pb->slots_total = r->slots_total;
    pb->slots_free = r->slots_free;
    pb->state = (P2p__PeerState)r->state;
}

#define BYTES(b, p, n)                                                         \
    do {                                                                       \
        (b).data = (uint8_t *)(p);                                             \
        (b).len = (n);                                                         \
    } while (0)

/* Pack a message into a new buffer (*out, *len). */
static void
pack_message(const P2p__Message *pb, uint8_t **out, size_t *len)
{
    *len = p2p__message__get_packed_size(pb);
    /* A message with every field at its default packs to a few bytes; keep
     * at least one so that the buffer is never a zero-size allocation. */
    *out = xmalloc(*len > 0 ? *len : 1);
    p2p__message__pack(pb, *out);
}

/* Pack a Launch (its arrays need their own storage). */
static void
encode_launch(const struct msg_launch *l, P2p__Message *pb, uint8_t **out,
              size_t *len)
{
    P2p__Launch la = P2P__LAUNCH__INIT;
    P2p__ProcSpec *procs = NULL, **procp = NULL;
    P2p__JobFile *files = NULL, **filep = NULL;
    ProtobufCBinaryData *argv = NULL, *env = NULL;
    size_t i;

    BYTES(la.job, l->job, WIRE_JOB_ID_LEN);
    la.size = l->size;
    la.nreplicas = l->nreplicas;
    la.lease_ms = l->lease_ms;
    la.task = l->task;
    la.mem_need = l->mem_need;
    if (l->task != 0)
        BYTES(la.farm, l->farm, WIRE_JOB_ID_LEN);
    la.worker = l->worker;
    la.input_more = l->input_more;
    if (l->input_len > 0)
        BYTES(la.input, l->input, l->input_len);
    if (l->nprocs > 0) {
        procs = xcalloc(l->nprocs, sizeof *procs);
        procp = xcalloc(l->nprocs, sizeof *procp);
    }
    for (i = 0; i < l->nprocs; i++) {
        p2p__proc_spec__init(&procs[i]);
        procs[i].rank = l->procs[i].rank;
        procs[i].replica = l->procs[i].replica;
        procp[i] = &procs[i];
    }
    la.n_procs = l->nprocs;
    la.procs = procp;
    if (l->nargv > 0)
        argv = xcalloc(l->nargv, sizeof *argv);
    for (i = 0; i < l->nargv; i++)
        BYTES(argv[i], l->argv[i], strlen(l->argv[i]));
    la.n_argv = l->nargv;
    la.argv = argv;
    if (l->nenv > 0)
        env = xcalloc(l->nenv, sizeof *env);
    for (i = 0; i < l->nenv; i++)
        BYTES(env[i], l->env[i], strlen(l->env[i]));
    la.n_env = l->nenv;
    la.env = env;
    if (l->nfiles > 0) {
        files = xcalloc(l->nfiles, sizeof *files);
        filep = xcalloc(l->nfiles, sizeof *filep);
    }
    for (i = 0; i < l->nfiles; i++) {
        p2p__job_file__init(&files[i]);
        files[i].name = (char *)l->files[i].name;
        BYTES(files[i].hash, l->files[i].hash, SEC_HASH_LEN);
        files[i].executable = l->files[i].executable;
        filep[i] = &files[i];
    }
    la.n_files = l->nfiles;
    la.files = filep;
    pb->body_case = P2P__MESSAGE__BODY_LAUNCH;
    pb->launch = &la;
    pack_message(pb, out, len);
    free(procs);
    free(procp);
    free(argv);
    free(env);
    free(files);
    free(filep);
}

/* Pack a Table (its entries need their own storage). */
static void
encode_table(const struct msg_table *t, P2p__Message *pb, uint8_t **out,
             size_t *len)
{
    P2p__Table ta = P2P__TABLE__INIT;
    P2p__ProcAddr *e = NULL, **ep = NULL;
    size_t i;

    BYTES(ta.job, t->job, WIRE_JOB_ID_LEN);
    BYTES(ta.key, t->key, SEC_KEY_LEN);
    if (t->nprocs > 0) {
        e = xcalloc(t->nprocs, sizeof *e);
        ep = xcalloc(t->nprocs, sizeof *ep);
    }
    for (i = 0; i < t->nprocs; i++) {
        p2p__proc_addr__init(&e[i]);
        e[i].rank = t->procs[i].rank;
        e[i].replica = t->procs[i].replica;
        e[i].addr = (char *)t->procs[i].addr;
        ep[i] = &e[i];
    }
    ta.n_procs = t->nprocs;
    ta.procs = ep;
    ta.first = t->first;
    ta.total = t->total;
    pb->body_case = P2P__MESSAGE__BODY_TABLE;
    pb->table = &ta;
    pack_message(pb, out, len);
    free(e);
    free(ep);
}

/* Point protobuf entries at n peer entries; the three arrays are the
 * caller's to free (NULL when n is 0). */
static void
entries_to_pb(const struct peer_entry *pe, size_t n, P2p__PeerEntry **entries,
              P2p__PeerEntry ***entryp, P2p__Resources **eres)
{
    size_t i;

    if (n == 0)
        return;
    *entries = xcalloc(n, sizeof **entries);
    *entryp = xcalloc(n, sizeof **entryp);
    *eres = xcalloc(n, sizeof **eres);
    for (i = 0; i < n; i++) {
        P2p__PeerEntry *e = &(*entries)[i];

        p2p__peer_entry__init(e);
        e->id.data = (uint8_t *)pe[i].id;
        e->id.len = sizeof pe[i].id;
        e->host_label = (char *)pe[i].host_label;
        e->addr = (char *)pe[i].addr;
        res_to_pb(&pe[i].res, &(*eres)[i]);
        e->res = &(*eres)[i];
        e->rtt_us = pe[i].rtt_us;
        e->age_ms = pe[i].age_ms;
        (*entryp)[i] = e;
    }
}

int
codec_encode(const struct msg *m, uint8_t **out, size_t *len)
{
    P2p__Message pb = P2P__MESSAGE__INIT;
    P2p__Register reg = P2P__REGISTER__INIT;
    P2p__RegisterAck ack = P2P__REGISTER_ACK__INIT;
    P2p__Heartbeat hb = P2P__HEARTBEAT__INIT;
    P2p__HeartbeatAck hback = P2P__HEARTBEAT_ACK__INIT;
    P2p__Unregister unreg = P2P__UNREGISTER__INIT;
    P2p__Ping ping = P2P__PING__INIT;
    P2p__Pong pong = P2P__PONG__INIT;
    P2p__ListRequest lreq = P2P__LIST_REQUEST__INIT;
    P2p__ListReply lrep = P2P__LIST_REPLY__INIT;
    P2p__Error error = P2P__ERROR__INIT;
    P2p__UserAuth ua = P2P__USER_AUTH__INIT;
    P2p__Reserve rsv = P2P__RESERVE__INIT;
    P2p__ReserveReply rrep = P2P__RESERVE_REPLY__INIT;
    P2p__LaunchReply lrep2 = P2P__LAUNCH_REPLY__INIT;
    P2p__Release rel = P2P__RELEASE__INIT;
    P2p__Kill kill = P2P__KILL__INIT;
    P2p__FileOffer foff = P2P__FILE_OFFER__INIT;
    P2p__FileNeed fneed = P2P__FILE_NEED__INIT;
    P2p__FileChunk fchunk = P2P__FILE_CHUNK__INIT;
    P2p__FileDone fdone = P2P__FILE_DONE__INIT;
    P2p__Output outp = P2P__OUTPUT__INIT;
    P2p__ProcExit pexit = P2P__PROC_EXIT__INIT;
    P2p__ProcAddr paddr = P2P__PROC_ADDR__INIT;
    P2p__JobAbort jabort = P2P__JOB_ABORT__INIT;
    P2p__View view = P2P__VIEW__INIT;
    P2p__Suspect susp = P2P__SUSPECT__INIT;
    P2p__FarmOpen farm = P2P__FARM_OPEN__INIT;
    P2p__TaskStarted tstart = P2P__TASK_STARTED__INIT;
    P2p__OutputHold ohold = P2P__OUTPUT_HOLD__INIT;
    P2p__Progress prog = P2P__PROGRESS__INIT;
    P2p__NodeChallenge nchal = P2P__NODE_CHALLENGE__INIT;
    P2p__NodeProof nproof = P2P__NODE_PROOF__INIT;
    P2p__JobReport jrep = P2P__JOB_REPORT__INIT;
    P2p__JobNote jnote = P2P__JOB_NOTE__INIT;
    struct jobs_pb jobs_pb = {0}; /* job reports and lists; freed below */
    P2p__FedSummary fsum = P2P__FED_SUMMARY__INIT;
    static const uint8_t zero_key[SEC_SIGN_PK_LEN];
    P2p__Resources res;
    P2p__PeerEntry *entries = NULL, **entryp = NULL;
    P2p__Resources *eres = NULL;

    switch (m->type) {
    case MSG_REGISTER:
        reg.node_key.data = (uint8_t *)m->u.reg.node_key;
        reg.node_key.len = sizeof m->u.reg.node_key;
        reg.signature.data = (uint8_t *)m->u.reg.signature;
        reg.signature.len = sizeof m->u.reg.signature;
        reg.host_label = (char *)m->u.reg.host_label;
        reg.addr = (char *)m->u.reg.addr;
        reg.version = (char *)m->u.reg.version;
        reg.cpu_model = (char *)m->u.reg.cpu_model;
        reg.os = (char *)m->u.reg.os;
        reg.kernel = (char *)m->u.reg.kernel;
        reg.started = m->u.reg.started;
        res_to_pb(&m->u.reg.res, &res);
        reg.res = &res;
        pb.body_case = P2P__MESSAGE__BODY_REG;
        pb.reg = &reg;
        break;
    case MSG_REGISTER_ACK:
        ack.heartbeat_ms = m->u.reg_ack.heartbeat_ms;
        ack.expire_ms = m->u.reg_ack.expire_ms;
        pb.body_case = P2P__MESSAGE__BODY_REG_ACK;
        pb.reg_ack = &ack;
        break;
    case MSG_HEARTBEAT:
        res_to_pb(&m->u.heartbeat, &res);
        hb.res = &res;
        pb.body_case = P2P__MESSAGE__BODY_HEARTBEAT;
        pb.heartbeat = &hb;
        break;
    case MSG_HEARTBEAT_ACK:
        pb.body_case = P2P__MESSAGE__BODY_HEARTBEAT_ACK;
        pb.heartbeat_ack = &hback;
        break;
    case MSG_UNREGISTER:
        pb.body_case = P2P__MESSAGE__BODY_UNREG;
        pb.unreg = &unreg;
        break;
    case MSG_PING:
        ping.stamp = m->u.stamp;
        pb.body_case = P2P__MESSAGE__BODY_PING;
        pb.ping = &ping;
        break;
    case MSG_PONG:
        pong.stamp = m->u.stamp;
        pb.body_case = P2P__MESSAGE__BODY_PONG;
        pb.pong = &pong;
        break;
    case MSG_LIST_REQUEST:
        lreq.jobs = m->u.list_req.jobs != 0;
        lreq.local = m->u.list_req.local != 0;
        pb.body_case = P2P__MESSAGE__BODY_LIST_REQ;
        pb.list_req = &lreq;
        break;
    case MSG_JOB_REPORT:
        codec_jobs_to_pb(m->u.report.jobs, m->u.report.njobs, &jobs_pb);
        jrep.n_jobs = jobs_pb.n;
        jrep.jobs = jobs_pb.infop;
        jrep.more = m->u.report.more;
        pb.body_case = P2P__MESSAGE__BODY_JOB_REPORT;
        pb.job_report = &jrep;
        break;
    case MSG_JOB_NOTE:
        BYTES(jnote.job, m->u.jnote.job, WIRE_JOB_ID_LEN);
        jnote.tasks_total = m->u.jnote.tasks_total;
        jnote.tasks_done = m->u.jnote.tasks_done;
        jnote.tasks_failed = m->u.jnote.tasks_failed;
        pb.body_case = P2P__MESSAGE__BODY_JOB_NOTE;
        pb.job_note = &jnote;
        break;
    case MSG_LIST_REPLY:
        entries_to_pb(m->u.list.peers, m->u.list.npeers, &entries, &entryp,
                      &eres);
        lrep.n_peers = m->u.list.npeers;
        lrep.peers = entryp;
        codec_jobs_to_pb(m->u.list.jobs, m->u.list.njobs, &jobs_pb);
        lrep.n_jobs = jobs_pb.n;
        lrep.jobs = jobs_pb.infop;
        pb.body_case = P2P__MESSAGE__BODY_LIST_REPLY;
        pb.list_reply = &lrep;
        break;
    case MSG_FED_SUMMARY:
        entries_to_pb(m->u.fed.peers, m->u.fed.npeers, &entries, &entryp,
                      &eres);
        BYTES(fsum.instance, m->u.fed.instance, WIRE_FED_INSTANCE_LEN);
        fsum.seq = m->u.fed.seq;
        fsum.part = m->u.fed.part;
        fsum.nparts = m->u.fed.nparts;
        fsum.total_peers = m->u.fed.total_peers;
        fsum.total_slots_free = m->u.fed.total_slots_free;
        fsum.addr = (char *)m->u.fed.addr;
        fsum.n_peers = m->u.fed.npeers;
        fsum.peers = entryp;
        pb.body_case = P2P__MESSAGE__BODY_FED_SUMMARY;
        pb.fed_summary = &fsum;
        break;
    case MSG_ERROR:
        error.code = m->u.error.code;
        error.text = (char *)m->u.error.text;
        pb.body_case = P2P__MESSAGE__BODY_ERROR;
        pb.error = &error;
        break;
    case MSG_USER_AUTH:
        BYTES(ua.user_key, m->u.auth.user_key, SEC_SIGN_PK_LEN);
        BYTES(ua.signature, m->u.auth.signature, SEC_SIG_LEN);
        ua.user = (char *)m->u.auth.user;
        pb.body_case = P2P__MESSAGE__BODY_USER_AUTH;
        pb.user_auth = &ua;
        break;
    case MSG_RESERVE:
        BYTES(rsv.job, m->u.reserve.job, WIRE_JOB_ID_LEN);
        rsv.slots = m->u.reserve.slots;
        rsv.lease_ms = m->u.reserve.lease_ms;
        pb.body_case = P2P__MESSAGE__BODY_RESERVE;
        pb.reserve = &rsv;
        break;
    case MSG_RESERVE_REPLY:
        BYTES(rrep.job, m->u.reply.job, WIRE_JOB_ID_LEN);
        rrep.ok = m->u.reply.ok;
        rrep.granted = m->u.reply.granted;
        rrep.reason = (char *)m->u.reply.reason;
        pb.body_case = P2P__MESSAGE__BODY_RESERVE_REPLY;
        pb.reserve_reply = &rrep;
        break;
    case MSG_LAUNCH_REPLY:
        BYTES(lrep2.job, m->u.reply.job, WIRE_JOB_ID_LEN);
        lrep2.ok = m->u.reply.ok;
        lrep2.reason = (char *)m->u.reply.reason;
        pb.body_case = P2P__MESSAGE__BODY_LAUNCH_REPLY;
        pb.launch_reply = &lrep2;
        break;
    case MSG_RELEASE:
        BYTES(rel.job, m->u.job, WIRE_JOB_ID_LEN);
        pb.body_case = P2P__MESSAGE__BODY_RELEASE;
        pb.release = &rel;
        break;
    case MSG_KILL:
        BYTES(kill.job, m->u.job, WIRE_JOB_ID_LEN);
        pb.body_case = P2P__MESSAGE__BODY_KILL;
        pb.kill = &kill;
        break;
    case MSG_FILE_OFFER:
        BYTES(foff.hash, m->u.file.hash, SEC_HASH_LEN);
        foff.size = m->u.file.size;
        pb.body_case = P2P__MESSAGE__BODY_FILE_OFFER;
        pb.file_offer = &foff;
        break;
    case MSG_FILE_NEED:
        BYTES(fneed.hash, m->u.file.hash, SEC_HASH_LEN);
        fneed.need = m->u.file.flag;
        pb.body_case = P2P__MESSAGE__BODY_FILE_NEED;
        pb.file_need = &fneed;
        break;
    case MSG_FILE_DONE:
        BYTES(fdone.hash, m->u.file.hash, SEC_HASH_LEN);
        fdone.ok = m->u.file.flag;
        fdone.reason = (char *)m->u.file.reason;
        pb.body_case = P2P__MESSAGE__BODY_FILE_DONE;
        pb.file_done = &fdone;
        break;
    case MSG_FILE_CHUNK:
        BYTES(fchunk.hash, m->u.data.hash, SEC_HASH_LEN);
        BYTES(fchunk.data, m->u.data.data, m->u.data.len);
        pb.body_case = P2P__MESSAGE__BODY_FILE_CHUNK;
        pb.file_chunk = &fchunk;
        break;
    case MSG_OUTPUT:
        BYTES(outp.job, m->u.data.job, WIRE_JOB_ID_LEN);
        outp.rank = m->u.data.rank;
        outp.replica = m->u.data.replica;
        outp.stream = m->u.data.stream;
        BYTES(outp.data, m->u.data.data, m->u.data.len);
        pb.body_case = P2P__MESSAGE__BODY_OUTPUT;
        pb.output = &outp;
        break;
    case MSG_PROC_EXIT:
        BYTES(pexit.job, m->u.exit.job, WIRE_JOB_ID_LEN);
        pexit.rank = m->u.exit.rank;
        pexit.replica = m->u.exit.replica;
        pexit.signaled = m->u.exit.signaled;
        pexit.code = m->u.exit.code;
        pexit.mem_peak = m->u.exit.mem_peak;
        pexit.limit = (P2p__ExitLimit)m->u.exit.limit;
        pexit.limit_value = m->u.exit.limit_value;
        pexit.evicted = m->u.exit.evicted;
        pexit.evict_reason = (char *)m->u.exit.evict_reason;
        pexit.worker_lost = m->u.exit.worker_lost;
        pexit.error = (char *)m->u.exit.error;
        if (m->u.exit.out_len > 0)
            BYTES(pexit.out, m->u.exit.out, m->u.exit.out_len);
        pb.body_case = P2P__MESSAGE__BODY_PROC_EXIT;
        pb.proc_exit = &pexit;
        break;
    case MSG_LAUNCH:
        encode_launch(&m->u.launch, &pb, out, len);
        return 0;
    case MSG_TABLE:
        encode_table(&m->u.table, &pb, out, len);
        return 0;
    case MSG_PROC_ADDR:
        BYTES(paddr.job, m->u.addr.job, WIRE_JOB_ID_LEN);
        paddr.rank = m->u.addr.p.rank;
        paddr.replica = m->u.addr.p.replica;
        paddr.addr = (char *)m->u.addr.p.addr;
        pb.body_case = P2P__MESSAGE__BODY_PROC_ADDR;
        pb.proc_addr = &paddr;
        break;
    case MSG_JOB_ABORT:
        BYTES(jabort.job, m->u.addr.job, WIRE_JOB_ID_LEN);
        jabort.rank = m->u.addr.p.rank;
        jabort.replica = m->u.addr.p.replica;
        jabort.status = m->u.addr.status;
        pb.body_case = P2P__MESSAGE__BODY_JOB_ABORT;
        pb.job_abort = &jabort;
        break;
    case MSG_VIEW:
        BYTES(view.job, m->u.view.job, WIRE_JOB_ID_LEN);
        view.number = m->u.view.number;
        /* Borrowed: packing only reads it. */
        view.n_dead = m->u.view.ndead;
        view.dead = m->u.view.dead;
        pb.body_case = P2P__MESSAGE__BODY_VIEW;
        pb.view = &view;
        break;
    case MSG_FARM_OPEN:
        BYTES(farm.farm, m->u.farm.farm, WIRE_JOB_ID_LEN);
        farm.lease_ms = m->u.farm.lease_ms;
        pb.body_case = P2P__MESSAGE__BODY_FARM_OPEN;
        pb.farm_open = &farm;
        break;
    case MSG_TASK_STARTED:
        BYTES(tstart.job, m->u.job, WIRE_JOB_ID_LEN);
        pb.body_case = P2P__MESSAGE__BODY_TASK_STARTED;
        pb.task_started = &tstart;
        break;
    case MSG_SUSPECT:
        BYTES(susp.job, m->u.suspect.job, WIRE_JOB_ID_LEN);
        susp.rank = m->u.suspect.rank;
        susp.replica = m->u.suspect.replica;
        susp.proc = m->u.suspect.proc;
        pb.body_case = P2P__MESSAGE__BODY_SUSPECT;
        pb.suspect = &susp;
        break;
    case MSG_OUTPUT_HOLD:
        BYTES(ohold.job, m->u.note.job, WIRE_JOB_ID_LEN);
        ohold.rank = m->u.note.rank;
        ohold.replica = m->u.note.replica;
        ohold.hold = m->u.note.value != 0;
        pb.body_case = P2P__MESSAGE__BODY_OUTPUT_HOLD;
        pb.output_hold = &ohold;
        break;
    case MSG_PROGRESS:
        BYTES(prog.job, m->u.note.job, WIRE_JOB_ID_LEN);
        prog.rank = m->u.note.rank;
        prog.replica = m->u.note.replica;
        prog.count = m->u.note.value;
        pb.body_case = P2P__MESSAGE__BODY_PROGRESS;
        pb.progress = &prog;
        break;
    case MSG_NODE_CHALLENGE:
        /* An all-zero key means "any": it is left out. */
        if (memcmp(m->u.node.node_key, zero_key, sizeof zero_key) != 0)
            BYTES(nchal.node_key, m->u.node.node_key, SEC_SIGN_PK_LEN);
        pb.body_case = P2P__MESSAGE__BODY_NODE_CHALLENGE;
        pb.node_challenge = &nchal;
        break;
    case MSG_NODE_PROOF:
        BYTES(nproof.node_key, m->u.node.node_key, SEC_SIGN_PK_LEN);
        BYTES(nproof.signature, m->u.node.signature, SEC_SIG_LEN);
        pb.body_case = P2P__MESSAGE__BODY_NODE_PROOF;
        pb.node_proof = &nproof;
        break;
    default:
        return -1;
    }
    pack_message(&pb, out, len);
    codec_jobs_pb_free(&jobs_pb);
    free(entries);
    free(entryp);
    free(eres);
    return 0;
}

/* --- decoding ---------------------------------------------------------- */

static int
res_from_pb(const P2p__Resources *pb, struct resources *r, char *err,
            size_t errlen)
{
    if (pb == NULL) {
        snprintf(err, errlen, "resources missing");
        return -1;
    }
    if (pb->mem_free > pb->mem_total || pb->slots_free > pb->slots_total) {
        snprintf(err, errlen, "resources: free exceeds total");
        return -1;
    }
    if ((int)pb->state < PEER_STATE_UNKNOWN ||
        (int)pb->state > PEER_STATE_OWNER_BUSY) {
        snprintf(err, errlen, "resources: unknown state %d", (int)pb->state);
        return -1;
    }
    r->cores = pb->cores;
    r->mem_total = pb->mem_total;
    r->mem_free = pb->mem_free;
    r->load_milli = pb->load_milli;
    r->slots_total = pb->slots_total;
    r->slots_free = pb->slots_free;
    r->state = (enum peer_state)pb->state;
    return 0;
}

/* Copy a validated token into dst[max+1] (contract in codec_jobs.h). */
int
codec_token_from_pb(const char *src, char *dst, size_t max, int may_be_empty,
                    const char *what, char *err, size_t errlen)
{
    if (src == NULL || (src[0] == '\0' && may_be_empty)) {
        dst[0] = '\0';
        return 0;
    }
    if (!codec_valid_token(src, max)) {
        snprintf(err, errlen, "%s: empty, too long or not printable", what);
        return -1;
    }
    snprintf(dst, max + 1, "%s", src);
    return 0;
}

static int
bytes_from_pb(const ProtobufCBinaryData *b, uint8_t *dst, size_t len,
              const char *what, char *err, size_t errlen)
{
    if (b->len != len) {
        snprintf(err, errlen, "%s: %zu bytes, expected %zu", what, b->len, len);
        return -1;
    }
    memcpy(dst, b->data, len);
    return 0;
}

/* An output hold or a progress report: the process within the limits,
 * then the job id. */
static int
note_from_pb(const ProtobufCBinaryData *job, struct msg *m, char *err,
             size_t errlen)
{
    if (m->u.note.rank >= WIRE_MAX_RANKS ||
        m->u.note.replica >= WIRE_MAX_REPLICAS) {
        snprintf(err, errlen, "%s: process %u.%u out of range",
                 msg_type_name(m->type), m->u.note.rank, m->u.note.replica);
        return -1;
    }
    return bytes_from_pb(job, m->u.note.job, WIRE_JOB_ID_LEN, "job id", err,
                         errlen);
}

static int
entry_from_pb(const P2p__PeerEntry *e, struct peer_entry *pe, char *err,
              size_t errlen)
{
    if (bytes_from_pb(&e->id, pe->id, sizeof pe->id, "peer id", err, errlen) ==
            -1 ||
        codec_token_from_pb(e->host_label, pe->host_label, WIRE_MAX_LABEL, 0,
                            "host label", err, errlen) == -1 ||
        codec_token_from_pb(e->addr, pe->addr, WIRE_MAX_ADDR, 0, "address", err,
                            errlen) == -1 ||
        res_from_pb(e->res, &pe->res, err, errlen) == -1)
        return -1;
    pe->rtt_us = e->rtt_us;
    pe->age_ms = e->age_ms;
    return 0;
}

/* Printable text (spaces allowed) into dst[max+1]; a missing one is
 * empty. */
static int
text_from_pb(const char *src, char *dst, size_t max, const char *what,
             char *err, size_t errlen)
{
    if (src == NULL) {
        dst[0] = '\0';
        return 0;
    }
    if (!codec_valid_text(src, max)) {
        snprintf(err, errlen, "%s: too long or not printable", what);
        return -1;
    }
    snprintf(dst, max + 1, "%s", src);
    return 0;
}

/* A NUL-terminated copy of bytes that must not contain NUL. */
static char *
cstr_from_pb(const ProtobufCBinaryData *b, size_t max)
{
    char *s;

    /* An empty field decodes as {0, NULL}: never hand NULL to memchr or
     * memcpy. */
    if (b->len > max ||
        (b->len > 0 && memchr(b->data, '\0', b->len) != NULL))
        return NULL;
    s = xmalloc(b->len + 1);
    if (b->len > 0)
        memcpy(s, b->data, b->len);
    s[b->len] = '\0';
    return s;
}

/* Decode a Launch; on failure what was allocated stays in l for
 * codec_msg_free(). */
static int
decode_launch(const P2p__Launch *pb, struct msg_launch *l, char *err,
              size_t errlen)
{
    size_t i;

    if (bytes_from_pb(&pb->job, l->job, WIRE_JOB_ID_LEN, "job id", err,
                      errlen) == -1)
        return -1;
    if (pb->size < 1 || pb->size > WIRE_MAX_RANKS || pb->nreplicas < 1 ||
        pb->nreplicas > WIRE_MAX_REPLICAS) {
        snprintf(err, errlen, "launch: %u ranks x %u replicas out of range",
                 pb->size, pb->nreplicas);
        return -1;
    }
    if (pb->n_procs < 1 || pb->n_procs > (size_t)pb->size * pb->nreplicas ||
        pb->n_argv < 1 || pb->n_argv > WIRE_MAX_ARGS ||
        pb->n_env > WIRE_MAX_ENV || pb->n_files > WIRE_MAX_FILES) {
        snprintf(err, errlen,
                 "launch: too many or too few processes, "
                 "arguments, variables or files");
        return -1;
    }
    l->size = pb->size;
    l->nreplicas = pb->nreplicas;
    l->lease_ms = pb->lease_ms;
    l->task = pb->task;
    l->mem_need = pb->mem_need;
    if (l->task != 0) {
        if (pb->size != 1 || pb->nreplicas != 1 || pb->n_procs != 1) {
            snprintf(err, errlen, "launch: a task is one process of a farm");
            return -1;
        }
        if (bytes_from_pb(&pb->farm, l->farm, WIRE_JOB_ID_LEN, "farm id", err,
                          errlen) == -1)
            return -1;
    }
    if ((pb->worker || pb->input.len > 0 || pb->input_more) &&
        l->task == 0) {
        snprintf(err, errlen, "launch: a worker's input outside a farm");
        return -1;
    }
    if (pb->input.len > WIRE_MAX_CHUNK) {
        snprintf(err, errlen, "launch: task input of %zu bytes, limit %d",
                 pb->input.len, WIRE_MAX_CHUNK);
        return -1;
    }
    if (pb->input_more && !pb->worker) {
        snprintf(err, errlen, "launch: input pieces for a task without a "
                              "worker");
        return -1;
    }
    l->worker = pb->worker;
    l->input_more = pb->input_more;
    if (pb->input.len > 0) {
        l->input = xmalloc(pb->input.len);
        memcpy(l->input, pb->input.data, pb->input.len);
        l->input_len = pb->input.len;
    }
    /* Every count is checked against its bound above. */
    l->procs = xcalloc(pb->n_procs, sizeof *l->procs);
    l->nprocs = pb->n_procs;
    for (i = 0; i < pb->n_procs; i++) {
        if (pb->procs[i]->rank >= pb->size ||
            pb->procs[i]->replica >= pb->nreplicas) {
            snprintf(err, errlen, "launch: process %u.%u outside the job",
                     pb->procs[i]->rank, pb->procs[i]->replica);
            return -1;
        }
        l->procs[i].rank = pb->procs[i]->rank;
        l->procs[i].replica = pb->procs[i]->replica;
    }
    l->argv = xcalloc(pb->n_argv + 1, sizeof *l->argv);
    l->nargv = pb->n_argv;
    for (i = 0; i < pb->n_argv; i++)
        if ((l->argv[i] = cstr_from_pb(&pb->argv[i], WIRE_MAX_ARG)) == NULL) {
            snprintf(err, errlen, "launch: argument %zu too long or has NUL",
                     i);
            return -1;
        }
    if (l->argv[0][0] == '\0') {
        snprintf(err, errlen, "launch: empty program name");
        return -1;
    }
    l->env = xcalloc(pb->n_env + 1, sizeof *l->env);
    l->nenv = pb->n_env;
    for (i = 0; i < pb->n_env; i++)
        if ((l->env[i] = cstr_from_pb(&pb->env[i], WIRE_MAX_ARG)) == NULL ||
            !codec_valid_env(l->env[i])) {
            snprintf(err, errlen, "launch: variable %zu is not NAME=VALUE", i);
            return -1;
        }
    if (pb->n_files > 0)
        l->files = xcalloc(pb->n_files, sizeof *l->files);
    l->nfiles = pb->n_files;
    for (i = 0; i < pb->n_files; i++) {
        if (pb->files[i]->name == NULL ||
            !codec_valid_basename(pb->files[i]->name)) {
            snprintf(err, errlen, "launch: file %zu: not a plain file name", i);
            return -1;
        }
        snprintf(l->files[i].name, sizeof l->files[i].name, "%s",
                 pb->files[i]->name);
        if (bytes_from_pb(&pb->files[i]->hash, l->files[i].hash, SEC_HASH_LEN,
                          "file hash", err, errlen) == -1)
            return -1;
        l->files[i].executable = pb->files[i]->executable;
    }
    return 0;
}

static int
addr_from_pb(const P2p__ProcAddr *pb, struct proc_addr *p, char *err,
             size_t errlen)
{
    if (pb->rank >= WIRE_MAX_RANKS || pb->replica >= WIRE_MAX_REPLICAS) {
        snprintf(err, errlen, "process %u.%u out of range", pb->rank,
                 pb->replica);
        return -1;
    }
    p->rank = pb->rank;
    p->replica = pb->replica;
    return codec_token_from_pb(pb->addr, p->addr, WIRE_MAX_ADDR, 0, "address",
                               err, errlen);
}

/* A view: every index names a process a job can have. */
static int
decode_view(const P2p__View *pb, struct msg_view *v, char *err, size_t errlen)
{
    const size_t max = (size_t)WIRE_MAX_RANKS * WIRE_MAX_REPLICAS;
    size_t i;

    if (bytes_from_pb(&pb->job, v->job, WIRE_JOB_ID_LEN, "job id", err,
                      errlen) == -1)
        return -1;
    if (pb->n_dead > max) {
        snprintf(err, errlen, "view of %zu dead processes", pb->n_dead);
        return -1;
    }
    for (i = 0; i < pb->n_dead; i++)
        if (pb->dead[i] >= max) {
            snprintf(err, errlen, "view: process index %u out of range",
                     pb->dead[i]);
            return -1;
        }
    v->number = pb->number;
    if (pb->n_dead == 0)
        return 0;
    /* Bounded above; the indices were already read by protobuf-c. */
    v->dead = xcalloc(pb->n_dead, sizeof *v->dead);
    memcpy(v->dead, pb->dead, pb->n_dead * sizeof *v->dead);
    v->ndead = pb->n_dead;
    return 0;
}

/* Take a copy of a data chunk of at most WIRE_MAX_CHUNK bytes. */
static int
data_from_pb(const ProtobufCBinaryData *b, struct msg_data *d, char *err,
             size_t errlen)
{
    if (b->len > WIRE_MAX_CHUNK) {
        snprintf(err, errlen, "chunk of %zu bytes, limit %d", b->len,
                 WIRE_MAX_CHUNK);
        return -1;
    }
    d->len = b->len;
    d->data = xmalloc(b->len > 0 ? b->len : 1);
    if (b->len > 0)
        memcpy(d->data, b->data, b->len);
    return 0;
}

/* Validate n entries, then copy them into a new array (*out, *nout);
 * nothing is allocated for a list that will be refused, whatever count
 * it claims. */
static int
entries_from_pb(P2p__PeerEntry *const *pb, size_t n, struct peer_entry **out,
                size_t *nout, char *err, size_t errlen)
{
    struct peer_entry tmp;
    size_t i;

    *out = NULL;
    *nout = 0;
    for (i = 0; i < n; i++)
        if (entry_from_pb(pb[i], &tmp, err, errlen) == -1)
            return -1;
    if (n == 0)
        return 0;
    *out = xcalloc(n, sizeof **out);
    *nout = n;
    for (i = 0; i < n; i++)
        entry_from_pb(pb[i], &(*out)[i], err, errlen);
    return 0;
}

/* One part of a federation summary, within the wire's bounds. */
static int
fed_from_pb(const P2p__FedSummary *pb, struct msg_fed_summary *f, char *err,
            size_t errlen)
{
    if (pb->nparts < 1 || pb->nparts > WIRE_FED_MAX_PARTS ||
        pb->part >= pb->nparts) {
        snprintf(err, errlen, "summary part %u of %u out of range", pb->part,
                 pb->nparts);
        return -1;
    }
    if (pb->n_peers > WIRE_FED_PART_ENTRIES) {
        snprintf(err, errlen, "summary part of %zu entries, limit %d",
                 pb->n_peers, WIRE_FED_PART_ENTRIES);
        return -1;
    }
    if (bytes_from_pb(&pb->instance, f->instance, WIRE_FED_INSTANCE_LEN,
                      "instance id", err, errlen) == -1 ||
        codec_token_from_pb(pb->addr, f->addr, WIRE_MAX_ADDR, 1, "address", err,
                            errlen) == -1)
        return -1;
    f->seq = pb->seq;
    f->part = pb->part;
    f->nparts = pb->nparts;
    f->total_peers = pb->total_peers;
    f->total_slots_free = pb->total_slots_free;
    return entries_from_pb(pb->peers, pb->n_peers, &f->peers, &f->npeers, err,
                           errlen);
}

static int
decode_body(const P2p__Message *pb, struct msg *m, char *err, size_t errlen)
{
    const P2p__Register *reg;
    size_t i;

    switch (pb->body_case) {
    case P2P__MESSAGE__BODY_REG:
        reg = pb->reg;
        m->type = MSG_REGISTER;
        if (bytes_from_pb(&reg->node_key, m->u.reg.node_key,
                          sizeof m->u.reg.node_key, "node key", err,
                          errlen) == -1 ||
            bytes_from_pb(&reg->signature, m->u.reg.signature,
                          sizeof m->u.reg.signature, "signature", err,
                          errlen) == -1 ||
            codec_token_from_pb(reg->host_label, m->u.reg.host_label,
                                WIRE_MAX_LABEL, 0, "host label", err,
                                errlen) == -1 ||
            codec_token_from_pb(reg->addr, m->u.reg.addr, WIRE_MAX_ADDR, 0,
                                "address", err, errlen) == -1 ||
            codec_token_from_pb(reg->version, m->u.reg.version, WIRE_MAX_LABEL,
                                1, "version", err, errlen) == -1 ||
            text_from_pb(reg->cpu_model, m->u.reg.cpu_model, WIRE_MAX_HOSTINFO,
                         "cpu model", err, errlen) == -1 ||
            text_from_pb(reg->os, m->u.reg.os, WIRE_MAX_HOSTINFO, "os", err,
                         errlen) == -1 ||
            text_from_pb(reg->kernel, m->u.reg.kernel, WIRE_MAX_HOSTINFO,
                         "kernel", err, errlen) == -1)
            return -1;
        m->u.reg.started = reg->started;
        return res_from_pb(reg->res, &m->u.reg.res, err, errlen);
    case P2P__MESSAGE__BODY_REG_ACK:
        m->type = MSG_REGISTER_ACK;
        m->u.reg_ack.heartbeat_ms = pb->reg_ack->heartbeat_ms;
        m->u.reg_ack.expire_ms = pb->reg_ack->expire_ms;
        return 0;
    case P2P__MESSAGE__BODY_HEARTBEAT:
        m->type = MSG_HEARTBEAT;
        return res_from_pb(pb->heartbeat->res, &m->u.heartbeat, err, errlen);
    case P2P__MESSAGE__BODY_HEARTBEAT_ACK:
        m->type = MSG_HEARTBEAT_ACK;
        return 0;
    case P2P__MESSAGE__BODY_UNREG:
        m->type = MSG_UNREGISTER;
        return 0;
    case P2P__MESSAGE__BODY_PING:
        m->type = MSG_PING;
        m->u.stamp = pb->ping->stamp;
        return 0;
    case P2P__MESSAGE__BODY_PONG:
        m->type = MSG_PONG;
        m->u.stamp = pb->pong->stamp;
        return 0;
    case P2P__MESSAGE__BODY_LIST_REQ:
        m->type = MSG_LIST_REQUEST;
        m->u.list_req.local = pb->list_req->local;
        m->u.list_req.jobs = pb->list_req->jobs;
        return 0;
    case P2P__MESSAGE__BODY_JOB_REPORT:
        m->type = MSG_JOB_REPORT;
        m->u.report.more = pb->job_report->more;
        return codec_jobs_from_pb(
            pb->job_report->jobs, pb->job_report->n_jobs, WIRE_MAX_REPORT_JOBS,
            WIRE_MAX_REPORT_PROCS, &m->u.report.jobs, &m->u.report.njobs, err,
            errlen);
    case P2P__MESSAGE__BODY_JOB_NOTE:
        if (pb->job_note->job.len != WIRE_JOB_ID_LEN ||
            pb->job_note->tasks_done > pb->job_note->tasks_total ||
            pb->job_note->tasks_failed > pb->job_note->tasks_done) {
            snprintf(err, errlen, "job note: bad job id or counts");
            return -1;
        }
        m->type = MSG_JOB_NOTE;
        memcpy(m->u.jnote.job, pb->job_note->job.data, WIRE_JOB_ID_LEN);
        m->u.jnote.tasks_total = pb->job_note->tasks_total;
        m->u.jnote.tasks_done = pb->job_note->tasks_done;
        m->u.jnote.tasks_failed = pb->job_note->tasks_failed;
        return 0;
    case P2P__MESSAGE__BODY_LIST_REPLY:
        m->type = MSG_LIST_REPLY;
        /* Every entry is checked before anything is allocated. */
        if (entries_from_pb(pb->list_reply->peers, pb->list_reply->n_peers,
                            &m->u.list.peers, &m->u.list.npeers, err,
                            errlen) == -1)
            return -1;
        if (codec_jobs_from_pb(pb->list_reply->jobs, pb->list_reply->n_jobs,
                               WIRE_MAX_LIST_JOBS,
                               (size_t)WIRE_MAX_RANKS * WIRE_MAX_REPLICAS,
                               &m->u.list.jobs, &m->u.list.njobs, err,
                               errlen) == -1) {
            free(m->u.list.peers);
            m->u.list.peers = NULL;
            m->u.list.npeers = 0;
            return -1;
        }
        return 0;
    case P2P__MESSAGE__BODY_FED_SUMMARY:
        m->type = MSG_FED_SUMMARY;
        return fed_from_pb(pb->fed_summary, &m->u.fed, err, errlen);
    case P2P__MESSAGE__BODY_ERROR:
        m->type = MSG_ERROR;
        m->u.error.code = pb->error->code;
        if (pb->error->text == NULL ||
            !codec_valid_text(pb->error->text, WIRE_MAX_TEXT)) {
            snprintf(err, errlen, "error text too long or not printable");
            return -1;
        }
        snprintf(m->u.error.text, sizeof m->u.error.text, "%s",
                 pb->error->text);
        return 0;
    case P2P__MESSAGE__BODY_USER_AUTH:
        m->type = MSG_USER_AUTH;
        if (bytes_from_pb(&pb->user_auth->user_key, m->u.auth.user_key,
                          SEC_SIGN_PK_LEN, "user key", err, errlen) == -1 ||
            bytes_from_pb(&pb->user_auth->signature, m->u.auth.signature,
                          SEC_SIG_LEN, "signature", err, errlen) == -1)
            return -1;
        return codec_token_from_pb(pb->user_auth->user, m->u.auth.user,
                                   WIRE_MAX_LABEL, 1, "user name", err, errlen);
    case P2P__MESSAGE__BODY_RESERVE:
        m->type = MSG_RESERVE;
        m->u.reserve.slots = pb->reserve->slots;
        m->u.reserve.lease_ms = pb->reserve->lease_ms;
        return bytes_from_pb(&pb->reserve->job, m->u.reserve.job,
                             WIRE_JOB_ID_LEN, "job id", err, errlen);
    case P2P__MESSAGE__BODY_RESERVE_REPLY:
        m->type = MSG_RESERVE_REPLY;
        m->u.reply.ok = pb->reserve_reply->ok;
        m->u.reply.granted = pb->reserve_reply->granted;
        if (text_from_pb(pb->reserve_reply->reason, m->u.reply.reason,
                         WIRE_MAX_TEXT, "reason", err, errlen) == -1)
            return -1;
        return bytes_from_pb(&pb->reserve_reply->job, m->u.reply.job,
                             WIRE_JOB_ID_LEN, "job id", err, errlen);
    case P2P__MESSAGE__BODY_LAUNCH_REPLY:
        m->type = MSG_LAUNCH_REPLY;
        m->u.reply.ok = pb->launch_reply->ok;
        if (text_from_pb(pb->launch_reply->reason, m->u.reply.reason,
                         WIRE_MAX_TEXT, "reason", err, errlen) == -1)
            return -1;
        return bytes_from_pb(&pb->launch_reply->job, m->u.reply.job,
                             WIRE_JOB_ID_LEN, "job id", err, errlen);
    case P2P__MESSAGE__BODY_RELEASE:
        m->type = MSG_RELEASE;
        return bytes_from_pb(&pb->release->job, m->u.job, WIRE_JOB_ID_LEN,
                             "job id", err, errlen);
    case P2P__MESSAGE__BODY_KILL:
        m->type = MSG_KILL;
        return bytes_from_pb(&pb->kill->job, m->u.job, WIRE_JOB_ID_LEN,
                             "job id", err, errlen);
    case P2P__MESSAGE__BODY_FILE_OFFER:
        m->type = MSG_FILE_OFFER;
        m->u.file.size = pb->file_offer->size;
        return bytes_from_pb(&pb->file_offer->hash, m->u.file.hash,
                             SEC_HASH_LEN, "hash", err, errlen);
    case P2P__MESSAGE__BODY_FILE_NEED:
        m->type = MSG_FILE_NEED;
        m->u.file.flag = pb->file_need->need;
        return bytes_from_pb(&pb->file_need->hash, m->u.file.hash, SEC_HASH_LEN,
                             "hash", err, errlen);
    case P2P__MESSAGE__BODY_FILE_DONE:
        m->type = MSG_FILE_DONE;
        m->u.file.flag = pb->file_done->ok;
        if (text_from_pb(pb->file_done->reason, m->u.file.reason, WIRE_MAX_TEXT,
                         "reason", err, errlen) == -1)
            return -1;
        return bytes_from_pb(&pb->file_done->hash, m->u.file.hash, SEC_HASH_LEN,
                             "hash", err, errlen);
    case P2P__MESSAGE__BODY_FILE_CHUNK:
        m->type = MSG_FILE_CHUNK;
        if (bytes_from_pb(&pb->file_chunk->hash, m->u.data.hash, SEC_HASH_LEN,
                          "hash", err, errlen) == -1)
            return -1;
        return data_from_pb(&pb->file_chunk->data, &m->u.data, err, errlen);
    case P2P__MESSAGE__BODY_OUTPUT:
        m->type = MSG_OUTPUT;
        if (pb->output->stream != 1 && pb->output->stream != 2) {
            snprintf(err, errlen, "output: unknown stream %u",
                     pb->output->stream);
            return -1;
        }
        m->u.data.rank = pb->output->rank;
        m->u.data.replica = pb->output->replica;
        m->u.data.stream = pb->output->stream;
        if (bytes_from_pb(&pb->output->job, m->u.data.job, WIRE_JOB_ID_LEN,
                          "job id", err, errlen) == -1)
            return -1;
        return data_from_pb(&pb->output->data, &m->u.data, err, errlen);
    case P2P__MESSAGE__BODY_PROC_EXIT:
        m->type = MSG_PROC_EXIT;
        m->u.exit.rank = pb->proc_exit->rank;
        m->u.exit.replica = pb->proc_exit->replica;
        m->u.exit.signaled = pb->proc_exit->signaled;
        m->u.exit.code = pb->proc_exit->code;
        m->u.exit.mem_peak = pb->proc_exit->mem_peak;
        m->u.exit.limit = pb->proc_exit->limit == P2P__EXIT_LIMIT__EXIT_LIMIT_MEMORY
                              ? EXIT_LIMIT_MEMORY
                          : pb->proc_exit->limit == P2P__EXIT_LIMIT__EXIT_LIMIT_PROCS
                              ? EXIT_LIMIT_PROCS
                              : EXIT_LIMIT_NONE;
        m->u.exit.limit_value = pb->proc_exit->limit_value;
        m->u.exit.evicted = pb->proc_exit->evicted;
        if (text_from_pb(pb->proc_exit->evict_reason, m->u.exit.evict_reason,
                         WIRE_MAX_TEXT, "evict reason", err, errlen) == -1 ||
            text_from_pb(pb->proc_exit->error, m->u.exit.error, WIRE_MAX_TEXT,
                         "error", err, errlen) == -1)
            return -1;
        m->u.exit.worker_lost = pb->proc_exit->worker_lost;
        if (pb->proc_exit->out.len > WIRE_MAX_CHUNK) {
            snprintf(err, errlen, "proc exit: answer of %zu bytes, limit %d",
                     pb->proc_exit->out.len, WIRE_MAX_CHUNK);
            return -1;
        }
        if (pb->proc_exit->out.len > 0) {
            m->u.exit.out = xmalloc(pb->proc_exit->out.len);
            memcpy(m->u.exit.out, pb->proc_exit->out.data,
                   pb->proc_exit->out.len);
            m->u.exit.out_len = pb->proc_exit->out.len;
        }
        return bytes_from_pb(&pb->proc_exit->job, m->u.exit.job,
                             WIRE_JOB_ID_LEN, "job id", err, errlen);
    case P2P__MESSAGE__BODY_LAUNCH:
        m->type = MSG_LAUNCH;
        return decode_launch(pb->launch, &m->u.launch, err, errlen);
    case P2P__MESSAGE__BODY_PROC_ADDR:
        m->type = MSG_PROC_ADDR;
        if (bytes_from_pb(&pb->proc_addr->job, m->u.addr.job,
                          WIRE_JOB_ID_LEN, "job id", err, errlen) == -1)
            return -1;
        return addr_from_pb(pb->proc_addr, &m->u.addr.p, err, errlen);
    case P2P__MESSAGE__BODY_JOB_ABORT:
        m->type = MSG_JOB_ABORT;
        m->u.addr.p.rank = pb->job_abort->rank;
        m->u.addr.p.replica = pb->job_abort->replica;
        m->u.addr.status = pb->job_abort->status;
        return bytes_from_pb(&pb->job_abort->job, m->u.addr.job,
                             WIRE_JOB_ID_LEN, "job id", err, errlen);
    case P2P__MESSAGE__BODY_TABLE:
        m->type = MSG_TABLE;
        if (bytes_from_pb(&pb->table->job, m->u.table.job, WIRE_JOB_ID_LEN,
                          "job id", err, errlen) == -1 ||
            bytes_from_pb(&pb->table->key, m->u.table.key, SEC_KEY_LEN,
                          "job key", err, errlen) == -1)
            return -1;
        if (pb->table->n_procs < 1 ||
            pb->table->n_procs > (size_t)WIRE_MAX_RANKS * WIRE_MAX_REPLICAS ||
            pb->table->total > (uint32_t)WIRE_MAX_RANKS * WIRE_MAX_REPLICAS ||
            pb->table->first > pb->table->total ||
            pb->table->n_procs > pb->table->total - pb->table->first) {
            snprintf(err, errlen, "table part of %zu entries at %u of %u",
                     pb->table->n_procs, pb->table->first, pb->table->total);
            return -1;
        }
        m->u.table.first = pb->table->first;
        m->u.table.total = pb->table->total;
        /* Bounded above; the entries were already read by protobuf-c. */
        m->u.table.procs =
            xcalloc(pb->table->n_procs, sizeof *m->u.table.procs);
        m->u.table.nprocs = pb->table->n_procs;
        for (i = 0; i < pb->table->n_procs; i++)
            if (addr_from_pb(pb->table->procs[i], &m->u.table.procs[i], err,
                             errlen) == -1)
                return -1;
        return 0;
    case P2P__MESSAGE__BODY_VIEW:
        m->type = MSG_VIEW;
        return decode_view(pb->view, &m->u.view, err, errlen);
    case P2P__MESSAGE__BODY_SUSPECT:
        m->type = MSG_SUSPECT;
        if (pb->suspect->rank >= WIRE_MAX_RANKS ||
            pb->suspect->replica >= WIRE_MAX_REPLICAS ||
            pb->suspect->proc >= (uint32_t)WIRE_MAX_RANKS * WIRE_MAX_REPLICAS) {
            snprintf(
                err, errlen, "suspect: process %u.%u or index %u out of range",
                pb->suspect->rank, pb->suspect->replica, pb->suspect->proc);
            return -1;
        }
        m->u.suspect.rank = pb->suspect->rank;
        m->u.suspect.replica = pb->suspect->replica;
        m->u.suspect.proc = pb->suspect->proc;
        return bytes_from_pb(&pb->suspect->job, m->u.suspect.job,
                             WIRE_JOB_ID_LEN, "job id", err, errlen);
    case P2P__MESSAGE__BODY_FARM_OPEN:
        m->type = MSG_FARM_OPEN;
        m->u.farm.lease_ms = pb->farm_open->lease_ms;
        return bytes_from_pb(&pb->farm_open->farm, m->u.farm.farm,
                             WIRE_JOB_ID_LEN, "farm id", err, errlen);
    case P2P__MESSAGE__BODY_TASK_STARTED:
        m->type = MSG_TASK_STARTED;
        return bytes_from_pb(&pb->task_started->job, m->u.job,
                             WIRE_JOB_ID_LEN, "job id", err, errlen);
    case P2P__MESSAGE__BODY_OUTPUT_HOLD:
        m->type = MSG_OUTPUT_HOLD;
        m->u.note.rank = pb->output_hold->rank;
        m->u.note.replica = pb->output_hold->replica;
        m->u.note.value = pb->output_hold->hold ? 1 : 0;
        return note_from_pb(&pb->output_hold->job, m, err, errlen);
    case P2P__MESSAGE__BODY_PROGRESS:
        m->type = MSG_PROGRESS;
        m->u.note.rank = pb->progress->rank;
        m->u.note.replica = pb->progress->replica;
        m->u.note.value = pb->progress->count;
        return note_from_pb(&pb->progress->job, m, err, errlen);
    case P2P__MESSAGE__BODY_NODE_CHALLENGE:
        m->type = MSG_NODE_CHALLENGE;
        /* Empty: any key; else exactly one key. */
        if (pb->node_challenge->node_key.len == 0)
            return 0;
        return bytes_from_pb(&pb->node_challenge->node_key,
                             m->u.node.node_key, SEC_SIGN_PK_LEN, "node key",
                             err, errlen);
    case P2P__MESSAGE__BODY_NODE_PROOF:
        m->type = MSG_NODE_PROOF;
        if (bytes_from_pb(&pb->node_proof->node_key, m->u.node.node_key,
                          SEC_SIGN_PK_LEN, "node key", err, errlen) == -1)
            return -1;
        return bytes_from_pb(&pb->node_proof->signature, m->u.node.signature,
                             SEC_SIG_LEN, "signature", err, errlen);
    case P2P__MESSAGE__BODY__NOT_SET:
    default:
        snprintf(err, errlen, "message without a known body");
        return -1;
    }
}

int
codec_decode(const uint8_t *buf, size_t len, struct msg *m, char *err,
             size_t errlen)
{
    P2p__Message *pb;
    int rc;

    memset(m, 0, sizeof *m);
    if ((pb = p2p__message__unpack(NULL, len, buf)) == NULL) {
        snprintf(err, errlen, "undecodable message");
        return -1;
    }
    rc = decode_body(pb, m, err, errlen);
    p2p__message__free_unpacked(pb, NULL);
    if (rc == -1) {
        codec_msg_free(m);
        memset(m, 0, sizeof *m);
    }
    return rc;
}

void
codec_msg_free(struct msg *m)
{
    size_t i;

    if (m == NULL)
        return;
    switch (m->type) {
    case MSG_LIST_REPLY:
        free(m->u.list.peers);
        m->u.list.peers = NULL;
        m->u.list.npeers = 0;
        codec_jobs_free(m->u.list.jobs, m->u.list.njobs);
        m->u.list.jobs = NULL;
        m->u.list.njobs = 0;
        break;
    case MSG_JOB_REPORT:
        codec_jobs_free(m->u.report.jobs, m->u.report.njobs);
        m->u.report.jobs = NULL;
        m->u.report.njobs = 0;
        break;
    case MSG_FED_SUMMARY:
        free(m->u.fed.peers);
        m->u.fed.peers = NULL;
        m->u.fed.npeers = 0;
        break;
    case MSG_FILE_CHUNK:
    case MSG_OUTPUT:
        free(m->u.data.data);
        m->u.data.data = NULL;
        break;
    case MSG_TABLE:
        free(m->u.table.procs);
        m->u.table.procs = NULL;
        break;
    case MSG_VIEW:
        free(m->u.view.dead);
        m->u.view.dead = NULL;
        m->u.view.ndead = 0;
        break;
    case MSG_LAUNCH:
        free(m->u.launch.procs);
        if (m->u.launch.argv != NULL)
            for (i = 0; i < m->u.launch.nargv; i++)
                free(m->u.launch.argv[i]);
        free(m->u.launch.argv);
        if (m->u.launch.env != NULL)
            for (i = 0; i < m->u.launch.nenv; i++)
                free(m->u.launch.env[i]);
        free(m->u.launch.env);
        free(m->u.launch.files);
        free(m->u.launch.input);
        memset(&m->u.launch, 0, sizeof m->u.launch);
        break;
    case MSG_PROC_EXIT:
        free(m->u.exit.out);
        m->u.exit.out = NULL;
        m->u.exit.out_len = 0;
        break;
    default:
        break;
    }
}
