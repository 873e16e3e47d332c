/*
 * errh: error handlers and error reporting.  Under MPI_ERRORS_RETURN,
 * invalid arguments come back as error codes of the right class instead
 * of ending the job: a rank out of range (MPI_ERR_RANK), a bad tag,
 * count, datatype, communicator, root, op or buffer.  Error_string gives
 * a non-empty text for each; a user error handler is called with the
 * communicator and the code; the library keeps working afterwards.
 */
#include "mpitest.h"

static int handler_calls, handler_code;
static MPI_Comm handler_comm;

static void
handler(MPI_Comm *comm, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_comm = *comm;
}

static void
expect(int rc, int cls, const char *what)
{
    int got = -1, len = 0;
    char text[MPI_MAX_ERROR_STRING] = "";

    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &got);
    CHECK(got == cls, "%s: returned %d (class %d), expected class %d", what, rc,
          got, cls);
    if (rc != MPI_SUCCESS) {
        MPI_OK(MPI_Error_string(rc, text, &len));
        CHECK(len > 0 && (int)strlen(text) == len,
              "%s: Error_string gave %d chars: '%s'", what, len, text);
    }
}

int
main(int argc, char **argv)
{
    int v = 1, w[4] = {0};
    MPI_Errhandler eh;
    MPI_Status st;

    t_init(&argc, &argv);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "get_errhandler gave another handler");

    /* Point-to-point argument errors. */
    expect(MPI_Send(&v, 1, MPI_INT, t_size, 0, MPI_COMM_WORLD), MPI_ERR_RANK,
           "Send to rank size");
    expect(MPI_Send(&v, 1, MPI_INT, -7, 0, MPI_COMM_WORLD), MPI_ERR_RANK,
           "Send to rank -7");
    expect(MPI_Recv(&v, 1, MPI_INT, t_size + 3, 0, MPI_COMM_WORLD, &st),
           MPI_ERR_RANK, "Recv from rank size + 3");
    expect(MPI_Send(&v, 1, MPI_INT, 0, -5, MPI_COMM_WORLD), MPI_ERR_TAG,
           "Send with tag -5");
    expect(MPI_Send(&v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT,
           "Send with count -1");
    expect(MPI_Send(&v, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD),
           MPI_ERR_TYPE, "Send with DATATYPE_NULL");
    expect(MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM,
           "Send on COMM_NULL");
#ifdef P2PMPI
    /* Checks the standard allows but does not require (Open MPI crashes
     * or answers otherwise). */
    expect(MPI_Send(NULL, 1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER,
           "Send from NULL");
    expect(MPI_Bcast(NULL, 3, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER,
           "Bcast from NULL");
    expect(MPI_Allreduce(&v, w, 1, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD),
           MPI_ERR_TYPE, "Allreduce on DATATYPE_NULL");
#endif

    /* Collective argument errors. */
    expect(MPI_Bcast(&v, 1, MPI_INT, t_size, MPI_COMM_WORLD), MPI_ERR_ROOT,
           "Bcast with root size");
    expect(MPI_Bcast(&v, 1, MPI_INT, -1, MPI_COMM_WORLD), MPI_ERR_ROOT,
           "Bcast with root -1");
    expect(MPI_Bcast(&v, -2, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT,
           "Bcast with count -2");
    expect(MPI_Reduce(&v, w, 1, MPI_INT, MPI_OP_NULL, 0, MPI_COMM_WORLD),
           MPI_ERR_OP, "Reduce with OP_NULL");
    expect(MPI_Allreduce(&v, w, 1, MPI_INT, MPI_MAXLOC, MPI_COMM_WORLD),
           MPI_ERR_OP, "Allreduce MAXLOC on INT");
    expect(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM, "Barrier on COMM_NULL");
    expect(
        MPI_Gather(&v, 1, MPI_INT, w, 1, MPI_INT, t_size + 1, MPI_COMM_WORLD),
        MPI_ERR_ROOT, "Gather with root size + 1");

    MPI_Comm dup;
#ifdef P2PMPI
    /* Ours checks every handle: a freed or forged one is an error (other
     * MPIs use pointers and may crash instead). */
    MPI_Comm stale;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    stale = dup;
    MPI_OK(MPI_Comm_free(&dup));
    int size;
    expect(MPI_Comm_size(stale, &size), MPI_ERR_COMM, "Comm_size on freed");
    expect(MPI_Bcast(&v, 1, MPI_INT, 0, stale), MPI_ERR_COMM, "Bcast on freed");
    expect(MPI_Allreduce(&v, w, 1, MPI_INT, MPI_SUM, (MPI_Comm)0x44001234),
           MPI_ERR_COMM, "Allreduce on a forged handle");
    expect(MPI_Bcast(&v, 1, (MPI_Datatype)0x4c00ffff, 0, MPI_COMM_WORLD),
           MPI_ERR_TYPE, "Bcast with a forged datatype");
#endif

    /* Error_string for every class we use. */
    int classes[] = {MPI_SUCCESS,      MPI_ERR_BUFFER, MPI_ERR_COUNT,
                     MPI_ERR_TYPE,     MPI_ERR_TAG,    MPI_ERR_COMM,
                     MPI_ERR_RANK,     MPI_ERR_ROOT,   MPI_ERR_OP,
                     MPI_ERR_TRUNCATE, MPI_ERR_OTHER,  MPI_ERR_INTERN};
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        char text[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        MPI_OK(MPI_Error_string(classes[i], text, &len));
        CHECK(len > 0 && len < MPI_MAX_ERROR_STRING && (int)strlen(text) == len,
              "Error_string(%d): %d chars", classes[i], len);
    }

    /* A user handler sees the communicator and the code. */
    MPI_Errhandler mine;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_OK(MPI_Comm_create_errhandler(handler, &mine));
    MPI_OK(MPI_Comm_set_errhandler(dup, mine));
    int rc = MPI_Send(&v, 1, MPI_INT, t_size + 5, 0, dup);
    CHECK(handler_calls == 1, "user handler called %d times", handler_calls);
    int cls = -1;
    MPI_Error_class(handler_code, &cls);
    CHECK(cls == MPI_ERR_RANK, "user handler got code %d (class %d)",
          handler_code, cls);
    CHECK(handler_comm == dup, "user handler got another communicator");
    CHECK(rc != MPI_SUCCESS, "Send returned success to a bad rank");
    MPI_OK(MPI_Errhandler_free(&mine));
    MPI_OK(MPI_Comm_free(&dup));

    /* Still working: a ring and a collective. */
    int right = (t_rank + 1) % t_size, left = (t_rank - 1 + t_size) % t_size;
    MPI_OK(MPI_Sendrecv(&t_rank, 1, MPI_INT, right, 9, &v, 1, MPI_INT, left, 9,
                        MPI_COMM_WORLD, &st));
    CHECK(v == left, "ring after errors: %d", v);
    MPI_OK(MPI_Allreduce(&t_rank, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(v == t_size * (t_size - 1) / 2, "allreduce after errors: %d", v);
    return t_finish("errh");
}
