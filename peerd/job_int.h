/*
 * What the job files share (peerd-internal): the state of a job and of
 * its processes.  job.c has their lifecycle (states, reaping, ending,
 * killing, the cron, suspending and evicting, reports, recovery),
 * job_launch.c the launch (directory, box, cgroup, spawning in batches),
 * job_output.c the processes' output (pipes read and relayed, paused
 * while the coordinator is backed up, held when it asks).  The rest of
 * peerd sees peerd.h's job_* calls only.
 */
#ifndef P2P_PEERD_JOB_INT_H
#define P2P_PEERD_JOB_INT_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <event2/event.h>

#include "peerd.h"

enum proc_state {
    PROC_RUNNING, /* started: pid is ours to reap */
    PROC_DEAD,    /* reaped; its pipes may still be open */
    PROC_DONE     /* reaped and drained: exit reported, slot returned */
};

enum job_state {
    JOB_RUNNING, /* processes run */
    JOB_KILLING, /* SIGTERM sent; the whole cgroup goes at kill_at_ms */
    JOB_ENDED    /* every process done: the box is being taken apart */
};

struct proc_stream {
    struct proc *proc;
    int stream; /* 1 stdout, 2 stderr */
    int fd;     /* -1 once drained */
    struct event *ev;
};

struct proc {
    struct job *job;
    uint32_t rank, replica;
    enum proc_state state;
    pid_t pid;          /* while RUNNING */
    int status;         /* wait status, once reaped */
    uint64_t reaped_ms; /* when, for the grace of its pipes */
    struct proc_stream out[2];
    struct ctlrelay *ctl;
    struct cgroup *cg; /* its leaf, NULL without cgroups */
    int held;          /* the coordinator holds its output: not read */
    int gone;          /* declared dead before it started: never started */
};

struct job {
    struct peerd *pd;
    uint8_t id[WIRE_JOB_ID_LEN];
    char hex[2 * WIRE_JOB_ID_LEN + 1];
    enum job_state state;
    struct svc_conn *owner; /* NULL once the coordinator is gone */
    char *dir;
    struct proc *procs;
    size_t nprocs, nrunning;  /* nrunning: not yet done */
    uint32_t size, nreplicas; /* of the whole job, not just here */
    uint32_t lease_ms;
    uint64_t last_heard_ms;
    uint64_t kill_at_ms; /* SIGKILL due while KILLING */
    uint64_t ended_ms;   /* when it ended, for a cgroup slow to empty */
    int paused;
    char bind_host[48]; /* where its processes listen (an IP) */
    /* The box */
    struct box *box;    /* uid and private /tmp (a farm's, for a task) */
    struct cgroup *cg;  /* NULL without cgroups */
    uint64_t mem_limit; /* per process, 0: none */
    int suspended;      /* frozen while the owner is back */
    int evicted;        /* killed for the owner: exits say so */
    char evict_reason[WIRE_MAX_TEXT + 1];
    char user[64];      /* who launched it, for p2pshare status */
    char *cmd;          /* its program, likewise */
    int task;           /* a farm's task: reported with its farm */
    time_t started;     /* wall clock, for the dashboard */
    struct ctltable_in *table; /* the address table, as it arrives */
    /* Spawning in batches: the program and environment are kept until
     * every process is started (nstarted of nprocs, in order). */
    char **argv, **env;
    size_t nargv, nenv, nstarted;
    struct event *spawn_ev;
    struct worker *worker; /* a farm's persistent worker (worker.c) */
    int *worker_in;        /* where its stdin pipe goes, at the start */
    struct job *next;
};

/* job.c */
void job_free(struct job *);
/* SIGKILL what p left in its session and cgroup. */
void proc_kill_all(struct proc *);
/* p reaped or drained: report it when both, and end the job after its
 * last. */
void proc_check_done(struct proc *);

/* job_launch.c */
/* Nothing more to spawn: drop the program, environment and event. */
void job_spawn_forget(struct job *);
/* SIGKILL every process of j, reap them here and now, and free j. */
void job_kill_now(struct job *);

/* job_output.c */
void job_stream_cb(evutil_socket_t, short, void *);
void proc_stream_close(struct proc_stream *);
/* Stop or restart reading a job's pipes. */
void job_pause(struct job *, int pause);
/* Stop or restart reading one process's pipes. */
void proc_hold(struct proc *, int hold);

#endif
