/*
 * coll_round.c: one round of point-to-point traffic that several
 * collectives share (the neighbour collectives, the intercommunicator
 * collectives): a receive posted from every rank of one list into its
 * block, a send to every rank of another list from its block, then a wait
 * for all, on the communicator's collective context.  The blocks of each
 * side are described by a table (struct mpii_blocks, mpii.h).  Each
 * receive names its source, so nothing depends on arrival order and
 * replicas need no agreement.  Also the checks and addressing every
 * collective shares.
 */
#include <stdlib.h>

#include "mpii.h"

int
coll_check_counts(const int counts[], const int displs[], int n)
{
    if (counts == NULL || displs == NULL)
        return MPI_ERR_ARG;
    for (int i = 0; i < n; i++)
        if (counts[i] < 0)
            return MPI_ERR_COUNT;
    return MPI_SUCCESS;
}

char *
coll_at(const void *buf, long long i, MPI_Aint ext)
{
    return (char *)buf + i * (long long)ext;
}

int
mpii_blocks_at(const struct mpii_blocks *s, int i, char **addr, int *count,
               MPI_Datatype *type)
{
    const struct mpii_type *t;
    MPI_Aint ext;

    *type = s->types != NULL ? s->types[i] : s->type;
    *count = s->counts != NULL ? s->counts[i] : s->count;
    if (*count < 0)
        return MPI_ERR_COUNT;
    if ((t = mpii_type_get(*type)) == NULL)
        return MPI_ERR_TYPE;
    ext = mpii_type_extent(t);
    if (s->same)
        *addr = (char *)s->buf;
    else if (s->bdispls != NULL)
        *addr = (char *)s->buf + s->bdispls[i];
    else if (s->displs != NULL)
        *addr = (char *)s->buf + (long long)s->displs[i] * ext;
    else
        *addr = (char *)s->buf + (long long)i * *count * ext;
    return MPI_SUCCESS;
}

int
mpii_blocks_nth(const struct mpii_blocks *s, int i, int n)
{
    return s->pairs_swapped && (i ^ 1) < n ? i ^ 1 : i;
}

int
mpii_blocks_round(struct mpii_comm *c, const int *in, int nin,
                  const struct mpii_blocks *rcv, const int *out, int nout,
                  const struct mpii_blocks *snd, int tag)
{
    MPI_Request *reqs;
    int i, n = 0, rc = MPI_SUCCESS, rc2, count;
    MPI_Datatype type;
    char *addr;

    if ((reqs = malloc((size_t)(nin + nout + 1) * sizeof *reqs)) == NULL)
        return MPI_ERR_NO_MEM;
    for (i = 0; i < nin && rc == MPI_SUCCESS; i++) {
        rc = mpii_blocks_at(rcv, i, &addr, &count, &type);
        if (rc == MPI_SUCCESS)
            rc = mpii_irecv(addr, count, type, in != NULL ? in[i] : i, tag, c,
                            c->ctx + MPII_CTX_COLL, &reqs[n]);
        if (rc == MPI_SUCCESS)
            n++;
    }
    for (i = 0; i < nout && rc == MPI_SUCCESS; i++) {
        int j = mpii_blocks_nth(snd, i, nout);

        rc = mpii_blocks_at(snd, j, &addr, &count, &type);
        if (rc == MPI_SUCCESS)
            rc = mpii_isend(addr, count, type, out != NULL ? out[j] : j, tag, c,
                            c->ctx + MPII_CTX_COLL, MPII_SEND_STANDARD,
                            &reqs[n]);
        if (rc == MPI_SUCCESS)
            n++;
    }
    /* Whatever was started is completed, error or not. */
    rc2 = n > 0 ? mpii_waitall(n, reqs, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        rc = rc2;
    free(reqs);
    return rc;
}
