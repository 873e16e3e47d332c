/*
 * The box a job runs in, beyond its cgroup: a uid of its own (uids.c) and
 * a private /tmp, /var/tmp and /dev/shm (mntns.c).  A job has a box to
 * itself; the tasks of one farm (p2prun --each) share their farm's box on
 * this peer (they are one user's, and a box per task would cost a uid scan
 * and a namespace per task), each task still in a cgroup of its own.  A
 * box goes when its last user lets go of it: only then is the uid free
 * for another job, since nothing of the box's can run any more.
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "peerd.h"
#include "xmalloc.h"

struct box {
    uid_t uid;
    gid_t gid;
    int own_uid; /* taken from the pool */
    int mntns;   /* -1 without */
    int refs;
};

struct box *
box_new(struct peerd *pd, char *why, size_t whylen)
{
    struct box *b;
    char *jobs;

    b = xcalloc(1, sizeof *b);
    b->mntns = -1;
    b->refs = 1;
    if (pd->uids == NULL) {
        b->uid = pd->job_uid;
        b->gid = pd->job_gid;
    } else if (uids_take(pd->uids, &b->uid) == -1) {
        snprintf(why, whylen, "no free uid left in [peer] job_uids");
        free(b);
        return NULL;
    } else {
        b->gid = (gid_t)b->uid;
        b->own_uid = 1;
    }
    if (pd->private_tmp) {
        /* The whole jobs/ directory is carried into the namespace, so
         * that job directories made later are there too. */
        xasprintf(&jobs, "%s/jobs", pd->state_dir);
        if (mkdir(jobs, 0711) == -1 && errno != EEXIST)
            log_warn("%s", jobs);
        b->mntns = mntns_new(jobs, pd->tmp_bytes, why, whylen);
        free(jobs);
        if (b->mntns == -1) {
            box_unref(pd, b);
            return NULL;
        }
    }
    return b;
}

struct box *
box_ref(struct box *b)
{
    b->refs++;
    return b;
}

void
box_unref(struct peerd *pd, struct box *b)
{
    if (b == NULL || --b->refs > 0)
        return;
    if (b->mntns != -1)
        close(b->mntns);
    if (b->own_uid)
        uids_give(pd->uids, b->uid);
    free(b);
}

uid_t
box_uid(const struct box *b)
{
    return b->uid;
}

gid_t
box_gid(const struct box *b)
{
    return b->gid;
}

int
box_mntns(const struct box *b)
{
    return b->mntns;
}
