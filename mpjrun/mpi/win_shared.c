/*
 * win_shared.c: the memory of Win_allocate_shared.  The processes of the
 * communicator must be able to load and store one another's segments, so
 * they must be on one host: rank 0 creates a POSIX shared memory object
 * (shm_open) as large as every segment together, every rank maps it, and
 * rank 0 unlinks the name once all have it (the memory lives until the
 * last unmaps).  Segments follow in rank order, each rounded up to 16
 * bytes.
 *
 * Refused (MPI_ERR_RMA_SHARED, the same answer at every rank) when the
 * ranks are on different hosts (P2P_HOST), or in a replicated job with
 * more than one process: a replica must own its memory, and replicas of
 * different ranks run on different hosts anyway (which is why
 * Comm_split_type(MPI_COMM_TYPE_SHARED) gives every rank a communicator
 * of its own there).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rma.h"

#define SEG_ALIGN 16

/* The host label as a number, the same for every process of a host. */
static long long
host_hash(void)
{
    const char *s = getenv("P2P_HOST");
    unsigned long long h = 1469598103934665603ull;

    for (; s != NULL && *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (long long)(h >> 1);
}

/* Map the object rank 0 named (or create it, at rank 0): 0 or -1. */
static int
shm_map(const char *name, int create, size_t len, void **map)
{
    int fd = shm_open(name, create ? O_CREAT | O_EXCL | O_RDWR : O_RDWR, 0600);

    *map = NULL;
    if (fd == -1)
        return -1;
    if (create && ftruncate(fd, (off_t)len) == -1) {
        close(fd);
        return -1;
    }
    *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (*map == MAP_FAILED) {
        *map = NULL;
        return -1;
    }
    return 0;
}

int
rma_shared_alloc(MPI_Comm comm, MPI_Aint size, void **map, size_t *maplen,
                 MPI_Aint **offsets)
{
    static unsigned serial;
    struct mpii_comm *c = mpii_intra_get(comm);
    long long mine[2], *all = NULL;
    char name[64];
    size_t total = 0;
    int i, ok, allok = 0, rc;

    *map = NULL;
    *offsets = NULL;
    if (c == NULL)
        return MPI_ERR_COMM;
    if (mpii_replicated())
        return MPI_ERR_RMA_SHARED;
    mine[0] = size;
    mine[1] = host_hash();
    all = malloc((size_t)c->size * sizeof mine);
    *offsets = malloc((size_t)c->size * sizeof **offsets);
    ok = all != NULL && *offsets != NULL;
    /* Everyone takes part in every collective below, whatever failed
     * here, and all decide together from what they share. */
    rc = PMPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, comm);
    if (rc != MPI_SUCCESS || !allok) {
        free(all);
        return rc != MPI_SUCCESS ? rc : MPI_ERR_NO_MEM;
    }
    if ((rc = PMPI_Allgather(mine, 2, MPI_LONG_LONG, all, 2, MPI_LONG_LONG,
                             comm)) != MPI_SUCCESS) {
        free(all);
        return rc;
    }
    for (i = 0; i < c->size; i++) {
        if (all[2 * i + 1] != all[1]) {
            free(all);
            return MPI_ERR_RMA_SHARED; /* not one host */
        }
        (*offsets)[i] = (MPI_Aint)total;
        total += ((size_t)all[2 * i] + SEG_ALIGN - 1) / SEG_ALIGN * SEG_ALIGN;
    }
    free(all);
    *maplen = total > 0 ? total : SEG_ALIGN;
    memset(name, 0, sizeof name);
    if (c->rank == 0) {
        snprintf(name, sizeof name, "/p2pmpi-%ld-%u", (long)getpid(), ++serial);
        ok = shm_map(name, 1, *maplen, map) == 0;
        if (!ok)
            name[0] = '\0';
    }
    rc = PMPI_Bcast(name, (int)sizeof name, MPI_CHAR, 0, comm);
    if (rc == MPI_SUCCESS && c->rank != 0)
        ok = name[0] != '\0' && shm_map(name, 0, *maplen, map) == 0;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, comm);
    /* Every rank has opened it (or given up): the name can go. */
    if (c->rank == 0 && name[0] != '\0')
        (void)shm_unlink(name);
    if (rc == MPI_SUCCESS && !allok)
        rc = MPI_ERR_RMA_SHARED;
    if (rc != MPI_SUCCESS && *map != NULL) {
        munmap(*map, *maplen);
        *map = NULL;
    }
    return rc;
}

void
rma_shared_free(void *map, size_t maplen)
{
    if (map != NULL)
        munmap(map, maplen);
}
