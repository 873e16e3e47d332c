/*
 * The job views of the dashboard (JobInfo, in a peer's JobReport and in
 * the supernode's ListReply) to and from protobuf-c.  Private to the
 * codec: only codec.c and codec_jobs.c see the generated structs.
 */
#ifndef P2P_CODEC_JOBS_H
#define P2P_CODEC_JOBS_H

#include "codec.h"
#include "p2p.pb-c.h"

/* Copy src into dst[max+1] if it is a token of at most max printable
 * characters; NULL, and "" when may_be_empty, give "".  -1 with err
 * naming what otherwise. */
int codec_token_from_pb(const char *src, char *dst, size_t max,
                        int may_be_empty, const char *what, char *err,
                        size_t errlen);

/* Storage for n encoded JobInfos, borrowed from the job_infos. */
struct jobs_pb {
    P2p__JobInfo *infos, **infop;
    P2p__ProcInfo *procs, **procp;
    size_t n;
};

/* Fill jp from n job_infos (still owned by the caller). */
void codec_jobs_to_pb(const struct job_info *, size_t n, struct jobs_pb *jp);
void codec_jobs_pb_free(struct jobs_pb *);
/* Validate and copy n JobInfos; at most max_jobs and, in all, max_procs
 * processes.  *out is allocated only once everything checked out;
 * -1 with err otherwise. */
int codec_jobs_from_pb(P2p__JobInfo *const *, size_t n, size_t max_jobs,
                       size_t max_procs, struct job_info **out, size_t *nout,
                       char *err, size_t errlen);

#endif
