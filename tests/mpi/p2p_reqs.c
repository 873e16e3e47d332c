/*
 * p2p_reqs: completion calls and cancellation.
 *  - Waitany over receives that the partner satisfies in reverse order:
 *    each index comes back once, with its status, then MPI_UNDEFINED.
 *  - Waitsome returns every index once in all, with matching statuses.
 *  - Testall is false while a receive is unmatched, true once all are
 *    done; Testany on all-null requests gives flag true and
 *    MPI_UNDEFINED; Test on a null request is true.
 *  - MPI_Cancel of an unmatched receive: Wait completes it and
 *    Test_cancelled says so; the tag can be used afterwards.
 *  - Request_free of a send request: the message still arrives.
 *  - Eager sends that complete as they start (one shared handle,
 *    request.c): Request_get_status leaves the handle, Cancel is
 *    harmless, two of them in one Waitall come back null and not
 *    cancelled, and both messages arrive in order.
 */
#include "mpitest.h"

#include <time.h>

#define N 8

int
main(int argc, char **argv)
{
    int partner, idx, flag, outcount, count, cancelled, partner_cancelled;
    int in[N], out[N], seen[N], indices[N];
    MPI_Request r[N], s[N];
    MPI_Status st, sts[N];

    t_init(&argc, &argv);
    partner = t_partner();

    /* Waitany: receives for tags 0..N-1; the partner sends N-1..0. */
    for (int i = 0; i < N; i++) {
        in[i] = -1;
        seen[i] = 0;
        MPI_OK(
            MPI_Irecv(&in[i], 1, MPI_INT, partner, i, MPI_COMM_WORLD, &r[i]));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = N - 1; i >= 0; i--) {
        out[i] = 100 * t_rank + i;
        MPI_OK(
            MPI_Isend(&out[i], 1, MPI_INT, partner, i, MPI_COMM_WORLD, &s[i]));
    }
    for (int k = 0; k < N; k++) {
        MPI_OK(MPI_Waitany(N, r, &idx, &st));
        CHECK(idx >= 0 && idx < N, "Waitany index %d", idx);
        if (idx < 0 || idx >= N)
            break;
        CHECK(!seen[idx], "Waitany returned %d twice", idx);
        seen[idx] = 1;
        CHECK(r[idx] == MPI_REQUEST_NULL, "request %d not freed", idx);
        CHECK(st.MPI_TAG == idx && st.MPI_SOURCE == partner,
              "Waitany status tag %d source %d for index %d", st.MPI_TAG,
              st.MPI_SOURCE, idx);
        CHECK(in[idx] == 100 * partner + idx, "Waitany data %d", in[idx]);
    }
    MPI_OK(MPI_Waitany(N, r, &idx, &st));
    CHECK(idx == MPI_UNDEFINED, "Waitany on null requests: %d", idx);
    MPI_OK(MPI_Waitall(N, s, MPI_STATUSES_IGNORE));

    /* Waitsome. */
    for (int i = 0; i < N; i++) {
        in[i] = -1;
        seen[i] = 0;
        MPI_OK(MPI_Irecv(&in[i], 1, MPI_INT, partner, 50 + i, MPI_COMM_WORLD,
                         &r[i]));
    }
    for (int i = 0; i < N; i++)
        MPI_OK(MPI_Isend(&out[i], 1, MPI_INT, partner, 50 + (i * 3) % N,
                         MPI_COMM_WORLD, &s[i]));
    int done = 0;
    while (done < N) {
        MPI_OK(MPI_Waitsome(N, r, &outcount, indices, sts));
        CHECK(outcount >= 1 && outcount <= N - done, "Waitsome outcount %d",
              outcount);
        if (outcount < 1 || outcount > N - done)
            break;
        for (int k = 0; k < outcount; k++) {
            int i = indices[k];
            CHECK(i >= 0 && i < N && !seen[i], "Waitsome index %d", i);
            if (i < 0 || i >= N)
                continue;
            seen[i] = 1;
            CHECK(sts[k].MPI_TAG == 50 + i, "Waitsome status tag %d for %d",
                  sts[k].MPI_TAG, i);
        }
        done += outcount;
    }
    MPI_OK(MPI_Waitsome(N, r, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED, "Waitsome on null requests: %d", outcount);
    MPI_OK(MPI_Waitall(N, s, MPI_STATUSES_IGNORE));

    /* Testall: false until the partner sends (after a barrier). */
    for (int i = 0; i < 2; i++)
        MPI_OK(MPI_Irecv(&in[i], 1, MPI_INT, partner, 70 + i, MPI_COMM_WORLD,
                         &r[i]));
    MPI_OK(MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE));
    CHECK(!flag, "Testall true before any send");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Isend(&out[0], 1, MPI_INT, partner, 70, MPI_COMM_WORLD, &s[0]));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* Only one of the two can have completed: the partner sends the
     * other one after the next barrier. */
    MPI_OK(MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE));
    CHECK(!flag, "Testall true with one receive unmatched");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Isend(&out[1], 1, MPI_INT, partner, 71, MPI_COMM_WORLD, &s[1]));
    do
        MPI_OK(MPI_Testall(2, r, &flag, sts));
    while (!flag);
    CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL,
          "Testall left requests");
    CHECK(sts[1].MPI_TAG == 71 && in[1] == 100 * partner + 1,
          "Testall status/data: tag %d data %d", sts[1].MPI_TAG, in[1]);
    MPI_OK(MPI_Waitall(2, s, MPI_STATUSES_IGNORE));

    /* Testany: on null requests, and finding the one that completes. */
    r[0] = r[1] = MPI_REQUEST_NULL;
    MPI_OK(MPI_Testany(2, r, &idx, &flag, &st));
    CHECK(flag && idx == MPI_UNDEFINED, "Testany on null: flag %d index %d",
          flag, idx);
    MPI_OK(MPI_Test(&r[0], &flag, &st));
    CHECK(flag, "Test on a null request is false");
    MPI_OK(MPI_Irecv(&in[0], 1, MPI_INT, partner, 80, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Irecv(&in[1], 1, MPI_INT, partner, 81, MPI_COMM_WORLD, &r[1]));
    MPI_OK(MPI_Isend(&out[0], 1, MPI_INT, partner, 81, MPI_COMM_WORLD, &s[0]));
    do
        MPI_OK(MPI_Testany(2, r, &idx, &flag, &st));
    while (!flag);
    CHECK(idx == 1 && st.MPI_TAG == 81, "Testany index %d tag %d", idx,
          st.MPI_TAG);
    /* The partner sends tag 80 only once this rank's Testany is done. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Isend(&out[1], 1, MPI_INT, partner, 80, MPI_COMM_WORLD, &s[1]));
    MPI_OK(MPI_Wait(&r[0], &st));
    MPI_OK(MPI_Waitall(2, s, MPI_STATUSES_IGNORE));

    /* Cancel an unmatched receive. */
    int never = -7;
    MPI_OK(MPI_Irecv(&never, 1, MPI_INT, partner, 999, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Cancel(&r[0]));
    MPI_OK(MPI_Wait(&r[0], &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "cancelled receive not reported cancelled");
    CHECK(never == -7, "cancelled receive wrote %d", never);
    /* The tag is free again: a new receive gets the next message. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Isend(&out[2], 1, MPI_INT, partner, 999, MPI_COMM_WORLD, &s[0]));
    MPI_OK(MPI_Recv(&in[2], 1, MPI_INT, partner, 999, MPI_COMM_WORLD, &st));
    CHECK(in[2] == 100 * partner + 2, "after cancel: %d", in[2]);
    MPI_OK(MPI_Wait(&s[0], &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag, "completed send reported cancelled");

    /* Request_free on a send: the message is still delivered. */
    MPI_OK(
        MPI_Isend(&out[3], 1, MPI_INT, partner, 1000, MPI_COMM_WORLD, &s[0]));
    MPI_OK(MPI_Request_free(&s[0]));
    CHECK(s[0] == MPI_REQUEST_NULL, "Request_free left the handle");
    MPI_OK(MPI_Recv(&in[3], 1, MPI_INT, partner, 1000, MPI_COMM_WORLD, &st));
    CHECK(in[3] == 100 * partner + 3, "after Request_free: %d", in[3]);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 1, "count %d", count);

    /* Eager sends complete at once (with replicas, soon after). */
    out[4] = 100 * t_rank + 4;
    out[5] = 100 * t_rank + 5;
    MPI_OK(
        MPI_Isend(&out[4], 1, MPI_INT, partner, 1001, MPI_COMM_WORLD, &s[0]));
    MPI_OK(
        MPI_Isend(&out[5], 1, MPI_INT, partner, 1001, MPI_COMM_WORLD, &s[1]));
    do
        MPI_OK(MPI_Request_get_status(s[0], &flag, &st));
    while (!flag);
    MPI_OK(MPI_Request_get_status(s[0], &flag, &st));
    CHECK(flag && s[0] != MPI_REQUEST_NULL, "get_status changed the handle");
    MPI_OK(MPI_Cancel(&s[1]));
    MPI_OK(MPI_Waitall(2, s, sts));
    CHECK(s[0] == MPI_REQUEST_NULL && s[1] == MPI_REQUEST_NULL,
          "Waitall left a handle");
    /* Cancelled (taken back from the receiver: tests/mpi/cancel_send),
     * or sent (replicas, Open MPI): the receiver sees which. */
    MPI_OK(MPI_Test_cancelled(&sts[1], &cancelled));
    MPI_OK(MPI_Test(&s[0], &flag, &st));
    CHECK(flag, "Test on a freed handle");
    MPI_OK(MPI_Sendrecv(&cancelled, 1, MPI_INT, partner, 1002,
                        &partner_cancelled, 1, MPI_INT, partner, 1002,
                        MPI_COMM_WORLD, &st));
    in[5] = 100 * partner + 5;
    MPI_OK(MPI_Recv(&in[4], 1, MPI_INT, partner, 1001, MPI_COMM_WORLD, &st));
    if (!partner_cancelled)
        MPI_OK(
            MPI_Recv(&in[5], 1, MPI_INT, partner, 1001, MPI_COMM_WORLD, &st));
    CHECK(in[4] == 100 * partner + 4 && in[5] == 100 * partner + 5,
          "eager sends arrived as %d, %d", in[4], in[5]);
    MPI_OK(MPI_Iprobe(partner, 1001, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag, "a cancelled eager send arrived");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    return t_finish("p2p_reqs");
}
