/*
 * Fault injection for the replication tests only: P2P_TEST_KILL set to
 * "RANK.REPLICA:POINT:N" makes that process kill itself (SIGKILL) the Nth
 * time it reaches POINT, one of
 *   init      in MPI_Init, after listening, before the address table
 *   send      starting a point-to-point send
 *   rndv      about to write a rendezvous payload
 *   coll      starting a send inside a collective
 *   finalize  in MPI_Finalize, before telling the others
 * Nothing happens without the variable.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

static int armed = -1; /* -1 not read yet, 0 off, 1 on */
static char point[16];
static int countdown;

void
mpii_test_point(const char *where)
{
    const char *v;
    int rank, replica, n;

    if (armed == -1) {
        armed = 0;
        v = getenv("P2P_TEST_KILL");
        if (v != NULL &&
            sscanf(v, "%d.%d:%15[a-z]:%d", &rank, &replica, point, &n) == 4 &&
            getenv("P2P_RANK") != NULL && getenv("P2P_REPLICA") != NULL &&
            atoi(getenv("P2P_RANK")) == rank &&
            atoi(getenv("P2P_REPLICA")) == replica && n > 0) {
            armed = 1;
            countdown = n;
        }
    }
    if (armed == 1 && strcmp(where, point) == 0 && --countdown == 0)
        raise(SIGKILL);
}
