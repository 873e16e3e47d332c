/*
 * A job of the dashboard's job view (struct job_info) as JSON, the one
 * form both /api/jobs (supernode) and `mpihost --jobs --json` print; the
 * fields are documented in docs/dashboard.md.  The only place jansson
 * meets a job_info.
 */
#ifndef P2P_JOBJSON_H
#define P2P_JOBJSON_H

#include <jansson.h>

#include "codec.h"

/* A new JSON object for j; its rank map lists at most max_ranks ranks
 * ("ranks_truncated" says when more were left out). */
json_t *jobjson_job(const struct job_info *j, size_t max_ranks);

#endif
