/*
 * Fault injection for the replication tests only: P2P_TEST_KILL set to
 * "RANK.REPLICA:POINT:N" (several separated by commas) makes that process
 * kill itself (SIGKILL) the Nth time it reaches POINT, one of
 *   init      in MPI_Init, after listening, before the address table
 *   send      starting a point-to-point send
 *   rndv      about to write a rendezvous payload
 *   open      about to open a sealed frame of a rendezvous payload (its
 *             sender may have more sealed ahead: sealring.h)
 *   coll      starting a send inside a collective
 *   finalize  in MPI_Finalize, before telling the others
 *   cma       about to read a single copy (shm.h) from the sender
 *   cmasender the same, but the sender is killed instead: the reader
 *             waits until its memory is gone, then reads (ESRCH)
 *   cmarefuse the same, but the read is refused (EPERM), nobody killed
 *   cmawrefuse a sender's write of its half of a split single copy is
 *             refused (EPERM), nobody killed
 *   eagerhalf  a long eager frame over plain TCP, its header and half its
 *             payload written (its receiver reads it in place)
 *   eagerpause the same, but nobody killed: the rest follows 200 ms
 *             later
 * and P2P_TEST_CUT set to "RANK.REPLICA:PROC:N" makes that process close
 * its connection to process index PROC (rank * R + replica), staying
 * alive, the Nth time it starts a point-to-point send: a partial network
 * partition, as both ends see it.  P2P_TEST_CORRUPT set to
 * "RANK.REPLICA:KIND:N" (KIND "data" for rendezvous payloads, "any" for
 * every kind) makes that process flip a bit of the Nth sealed frame of
 * that kind it sends, after sealing: the receiver must refuse it.
 * P2P_TEST_ACCEPTCUT set to "RANK.REPLICA:PROC" (several separated by
 * commas) makes that process close a connection it accepted from process
 * index PROC the moment the handshake proves it, before the frames that
 * waited for it go out: as when PROC dies right after confirming.
 * P2P_TEST_LATEREAD set to "RANK.REPLICA:PROC" makes that process leave
 * what process index PROC sends it unread until PROC has closed its end,
 * then write to PROC until a write fails, and only then read: as when a
 * process, busy, writes to one that has just left before it reads that
 * one's last frames.
 * Nothing happens without the variables.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

static int armed = -1; /* -1 not read yet, 0 off, 1 on */
static char point[16];
static int countdown;
static int cut_armed = -1, cut_proc, cut_countdown;

/* Is this process RANK.REPLICA? */
static int
is_me(int rank, int replica)
{
    return getenv("P2P_RANK") != NULL && getenv("P2P_REPLICA") != NULL &&
           atoi(getenv("P2P_RANK")) == rank &&
           atoi(getenv("P2P_REPLICA")) == replica;
}

static void
test_cut(const char *where)
{
    const char *v;
    int rank, replica, n;

    if (cut_armed == -1) {
        cut_armed = 0;
        v = getenv("P2P_TEST_CUT");
        if (v != NULL &&
            sscanf(v, "%d.%d:%d:%d", &rank, &replica, &cut_proc, &n) == 4 &&
            is_me(rank, replica) && n > 0) {
            cut_armed = 1;
            cut_countdown = n;
        }
    }
    if (cut_armed == 1 && strcmp(where, "send") == 0 &&
        --cut_countdown == 0)
        transport_cut(cut_proc);
}

int
mpii_test_hit(const char *where)
{
    const char *v;
    int rank, replica, n;

    if (armed == -1) {
        armed = 0;
        /* Several may be given, separated by commas: ours is armed. */
        for (v = getenv("P2P_TEST_KILL"); v != NULL && armed == 0;
             v = (v = strchr(v, ',')) != NULL ? v + 1 : NULL)
            if (sscanf(v, "%d.%d:%15[a-z]:%d", &rank, &replica, point, &n) ==
                    4 &&
                is_me(rank, replica) && n > 0) {
                armed = 1;
                countdown = n;
            }
    }
    return armed == 1 && strcmp(where, point) == 0 && --countdown == 0;
}

void
mpii_test_point(const char *where)
{
    /* Neither switch given (every real job, once both are read): every
     * send passes here. */
    if (armed == 0 && cut_armed == 0)
        return;
    test_cut(where);
    if (mpii_test_hit(where))
        raise(SIGKILL);
}

int
mpii_test_corrupt(int data)
{
    static int on = -1, only_data, left;
    const char *v = getenv("P2P_TEST_CORRUPT");
    char kind[8];
    int rank, replica, n;

    if (on == -1) {
        on = v != NULL &&
             sscanf(v, "%d.%d:%7[a-z]:%d", &rank, &replica, kind, &n) == 4 &&
             is_me(rank, replica) && n > 0 &&
             (strcmp(kind, "data") == 0 || strcmp(kind, "any") == 0);
        only_data = on && strcmp(kind, "data") == 0;
        left = on ? n : 0;
    }
    if (!on || (only_data && !data))
        return 0;
    return --left == 0;
}

int
mpii_test_accept_cut(int proc)
{
    const char *v;
    int rank, replica, p;

    for (v = getenv("P2P_TEST_ACCEPTCUT"); v != NULL;
         v = (v = strchr(v, ',')) != NULL ? v + 1 : NULL)
        if (sscanf(v, "%d.%d:%d", &rank, &replica, &p) == 3 &&
            is_me(rank, replica) && p == proc)
            return 1;
    return 0;
}

int
mpii_test_late_read(void)
{
    const char *v = getenv("P2P_TEST_LATEREAD");
    int rank, replica, p;

    if (v != NULL && sscanf(v, "%d.%d:%d", &rank, &replica, &p) == 3 &&
        is_me(rank, replica) && p >= 0)
        return p;
    return -1;
}
