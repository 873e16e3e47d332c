/*
 * A job_info as JSON (see jobjson.h): summary, task counts of a farm, the
 * rank map of an MPI job.
 */
#include "jobjson.h"
#include "sec.h"

/* One job: its summary and, for an MPI job, its rank map. */
json_t *
jobjson_job(const struct job_info *j, size_t max_ranks)
{
    json_t *o = json_object(), *ranks, *reps = NULL, *r;
    char id[2 * WIRE_JOB_ID_LEN + 1];
    uint32_t cur = UINT32_MAX;
    size_t shown = 0;
    size_t i;

    sec_hex(id, j->job, WIRE_JOB_ID_LEN);
    json_object_set_new(o, "id", json_string(id));
    json_object_set_new(o, "kind", json_string(j->farm ? "farm" : "mpi"));
    json_object_set_new(o, "user", json_string(j->user));
    json_object_set_new(o, "command", json_string(j->command));
    json_object_set_new(o, "started", json_integer((json_int_t)j->started));
    json_object_set_new(o, "state",
                        json_string(j->finished ? "finished" : "running"));
    json_object_set_new(o, "exit",
                        j->finished && j->exit >= 0 ? json_integer(j->exit)
                                                    : json_null());
    json_object_set_new(o, "hosts", json_integer(j->hosts));
    if (j->farm) {
        json_t *t = json_pack(
            "{s:I,s:I,s:I}", "running", (json_int_t)j->tasks_running, "queued",
            (json_int_t)j->tasks_queued, "done", (json_int_t)j->tasks_done);

        /* What only the coordinator knows, once it said so. */
        json_object_set_new(t, "inputs",
                            j->coord_total
                                ? json_integer((json_int_t)j->coord_total)
                                : json_null());
        json_object_set_new(t, "reported",
                            j->coord_total
                                ? json_integer((json_int_t)j->coord_done)
                                : json_null());
        json_object_set_new(t, "failed",
                            j->coord_total
                                ? json_integer((json_int_t)j->coord_failed)
                                : json_null());
        json_object_set_new(o, "tasks", t);
        return o;
    }
    json_object_set_new(o, "size", json_integer(j->size));
    json_object_set_new(o, "replicas", json_integer(j->nreplicas));
    /* procs are sorted by rank then replica: one entry per rank seen. */
    ranks = json_array();
    for (i = 0; i < j->nprocs; i++) {
        const struct job_proc *p = &j->procs[i];

        if (p->rank != cur) {
            if (shown == max_ranks)
                break;
            cur = p->rank;
            reps = json_array();
            r = json_object();
            json_object_set_new(r, "rank", json_integer(p->rank));
            json_object_set_new(r, "replicas", reps);
            json_array_append_new(ranks, r);
            shown++;
        }
        r = json_object();
        json_object_set_new(r, "replica", json_integer(p->replica));
        json_object_set_new(r, "host", json_string(p->host));
        json_object_set_new(r, "state", json_string(proc_run_name(p->state)));
        if (p->state == PROC_RUN_EXITED || p->state == PROC_RUN_KILLED)
            json_object_set_new(r, "code", json_integer(p->code));
        json_array_append_new(reps, r);
    }
    json_object_set_new(o, "ranks", ranks);
    json_object_set_new(o, "ranks_truncated", json_boolean(i < j->nprocs));
    return o;
}
