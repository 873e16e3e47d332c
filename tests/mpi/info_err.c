/*
 * info_err: info objects (create, set, get, get_valuelen, delete, dup,
 * free, nkeys, nthkey, MPI_INFO_ENV, Comm_set_info / get_info); error
 * classes, codes and strings a program adds, Comm_call_errhandler with
 * a user handler, the deprecated Errhandler_create/set/get,
 * MPI_LASTUSEDCODE; C/Fortran handle conversion for every handle kind.
 */
#include "mpitest.h"

static void
check_info(void)
{
    MPI_Info in, dup, used;
    char val[64], key[MPI_MAX_INFO_KEY + 1];
    int flag = -1, n = -1, len = -1;

    MPI_OK(MPI_Info_create(&in));
    MPI_OK(MPI_Info_get_nkeys(in, &n));
    CHECK(n == 0, "new info has %d keys", n);
    MPI_OK(MPI_Info_set(in, "alpha", "one"));
    MPI_OK(MPI_Info_set(in, "beta", "a longer value"));
    MPI_OK(MPI_Info_set(in, "gamma", "3"));
    MPI_OK(MPI_Info_set(in, "alpha", "uno")); /* replaces, keeps its place */
    MPI_OK(MPI_Info_get_nkeys(in, &n));
    CHECK(n == 3, "nkeys %d", n);
    MPI_OK(MPI_Info_get(in, "alpha", sizeof val - 1, val, &flag));
    CHECK(flag && strcmp(val, "uno") == 0, "alpha = %s (flag %d)", val, flag);
    MPI_OK(MPI_Info_get_valuelen(in, "beta", &len, &flag));
    CHECK(flag && len == 14, "valuelen of beta %d", len);
    /* Truncated to valuelen characters. */
    MPI_OK(MPI_Info_get(in, "beta", 4, val, &flag));
    CHECK(flag && strcmp(val, "a lo") == 0, "truncated beta = '%s'", val);
    MPI_OK(MPI_Info_get(in, "delta", sizeof val - 1, val, &flag));
    CHECK(!flag, "absent key found");
    MPI_OK(MPI_Info_get_valuelen(in, "delta", &len, &flag));
    CHECK(!flag, "absent key has a length");
    MPI_OK(MPI_Info_get_nthkey(in, 1, key));
    CHECK(strcmp(key, "beta") == 0, "key 1 = %s", key);

    MPI_OK(MPI_Info_dup(in, &dup));
    MPI_OK(MPI_Info_delete(in, "beta"));
    MPI_OK(MPI_Info_get_nkeys(in, &n));
    CHECK(n == 2, "nkeys after delete %d", n);
    MPI_OK(MPI_Info_get_nthkey(in, 1, key));
    CHECK(strcmp(key, "gamma") == 0, "key 1 after delete = %s", key);
    MPI_OK(MPI_Info_get(dup, "beta", sizeof val - 1, val, &flag));
    CHECK(flag && strcmp(val, "a longer value") == 0,
          "the dup lost beta (%d, %s)", flag, val);
    MPI_OK(MPI_Info_get_nkeys(dup, &n));
    CHECK(n == 3, "dup nkeys %d", n);

    /* Errors are returned, not fatal, on MPI_COMM_WORLD's handler. */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK(MPI_Info_delete(in, "beta") != MPI_SUCCESS,
          "deleting an absent key succeeded");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));

    MPI_OK(MPI_Info_free(&in));
    CHECK(in == MPI_INFO_NULL, "Info_free left the handle");
    MPI_OK(MPI_Info_free(&dup));

    MPI_OK(MPI_Info_get_nkeys(MPI_INFO_ENV, &n));
    CHECK(n >= 0, "MPI_INFO_ENV nkeys %d", n);

    MPI_OK(MPI_Info_create(&in));
    MPI_OK(MPI_Info_set(in, "no_such_hint", "true"));
    MPI_OK(MPI_Comm_set_info(MPI_COMM_WORLD, in));
    MPI_OK(MPI_Comm_get_info(MPI_COMM_WORLD, &used));
    CHECK(used != MPI_INFO_NULL, "Comm_get_info gave MPI_INFO_NULL");
    MPI_OK(MPI_Info_free(&used));
    MPI_OK(MPI_Info_free(&in));
}

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
check_errors(void)
{
    int cls, code, code2, c, len, flag, *last;
    char text[MPI_MAX_ERROR_STRING];
    MPI_Errhandler eh, got;
    MPI_Comm dup;

    MPI_OK(MPI_Add_error_class(&cls));
    MPI_OK(MPI_Add_error_code(cls, &code));
    MPI_OK(MPI_Add_error_code(cls, &code2));
    CHECK(code != code2 && code != cls, "codes %d %d class %d", code, code2,
          cls);
    MPI_OK(MPI_Add_error_string(cls, "the whole class"));
    MPI_OK(MPI_Add_error_string(code, "my first code"));
    MPI_OK(MPI_Error_class(code, &c));
    CHECK(c == cls, "class of my code %d, want %d", c, cls);
    MPI_OK(MPI_Error_string(code, text, &len));
    CHECK(strcmp(text, "my first code") == 0 && len == 13,
          "string of my code '%s' (%d)", text, len);
    MPI_OK(MPI_Error_string(cls, text, &len));
    CHECK(strcmp(text, "the whole class") == 0, "string of my class '%s'",
          text);
    MPI_OK(MPI_Error_class(MPI_ERR_TRUNCATE, &c));
    CHECK(c == MPI_ERR_TRUNCATE, "class of MPI_ERR_TRUNCATE %d", c);
    /* A code in a predefined class. */
    MPI_OK(MPI_Add_error_code(MPI_ERR_ARG, &c));
    {
        int k;

        MPI_OK(MPI_Error_class(c, &k));
        CHECK(k == MPI_ERR_ARG, "class of a code in MPI_ERR_ARG %d", k);
    }
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag && *last >= c && *last >= code2, "MPI_LASTUSEDCODE %d",
          flag ? *last : -1);

    /* A user handler, called on demand with an added code. */
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_OK(MPI_Comm_create_errhandler(handler, &eh));
    MPI_OK(MPI_Comm_set_errhandler(dup, eh));
    MPI_OK(MPI_Comm_call_errhandler(dup, code));
    CHECK(handler_calls == 1 && handler_code == code,
          "handler calls %d code %d", handler_calls, handler_code);
    {
        int res;

        MPI_OK(MPI_Comm_compare(handler_comm, dup, &res));
        CHECK(res == MPI_IDENT, "the handler got another communicator");
    }
    /* An error of a real call goes to it too. */
    {
        int rc = MPI_Send(NULL, -1, MPI_INT, 0, 0, dup);

        CHECK(rc != MPI_SUCCESS, "a send of -1 elements succeeded");
        CHECK(handler_calls == 2 && handler_code == rc,
              "handler calls %d (code %d) after a bad send (%d)",
              handler_calls, handler_code, rc);
    }
    MPI_OK(MPI_Comm_get_errhandler(dup, &got));
    MPI_OK(MPI_Errhandler_free(&got));
    MPI_OK(MPI_Errhandler_free(&eh));
    MPI_OK(MPI_Comm_free(&dup));

#ifdef P2PMPI
    /* The MPI-1 names (Open MPI's mpi.h refuses them since MPI-3.0). */
    MPI_OK(MPI_Errhandler_create(handler, &eh));
    MPI_OK(MPI_Errhandler_set(MPI_COMM_SELF, eh));
    MPI_OK(MPI_Errhandler_get(MPI_COMM_SELF, &got));
    MPI_OK(MPI_Comm_call_errhandler(MPI_COMM_SELF, code2));
    CHECK(handler_calls == 3 && handler_code == code2,
          "MPI-1 handler calls %d code %d", handler_calls, handler_code);
    MPI_OK(MPI_Errhandler_set(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Errhandler_free(&got));
    MPI_OK(MPI_Errhandler_free(&eh));
#endif
}

static void
check_fint(void)
{
    MPI_Comm dup;
    MPI_Datatype t;
    MPI_Group g;
    MPI_Request r;
    MPI_Op op = MPI_SUM;
    MPI_Info in;
    MPI_Errhandler eh = MPI_ERRORS_RETURN;
    MPI_Status st, back;
    MPI_Fint f[32];
    int x = 0;

    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &t));
    MPI_OK(MPI_Type_commit(&t));
    MPI_OK(MPI_Comm_group(dup, &g));
    MPI_OK(MPI_Info_create(&in));
    MPI_OK(MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, dup, &r));
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(dup)) == dup, "Comm");
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD,
          "COMM_WORLD");
    CHECK(MPI_Type_f2c(MPI_Type_c2f(t)) == t, "Type");
    CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE, "DOUBLE");
    CHECK(MPI_Group_f2c(MPI_Group_c2f(g)) == g, "Group");
    CHECK(MPI_Request_f2c(MPI_Request_c2f(r)) == r, "Request");
    CHECK(MPI_Op_f2c(MPI_Op_c2f(op)) == op, "Op");
    CHECK(MPI_Info_f2c(MPI_Info_c2f(in)) == in, "Info");
    CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(eh)) == eh, "Errhandler");
    CHECK(MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)) == MPI_WIN_NULL, "Win");
    CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NULL)) ==
              MPI_MESSAGE_NULL,
          "Message");
    /* A converted handle works. */
    {
        MPI_Comm back_comm = MPI_Comm_f2c(MPI_Comm_c2f(dup));
        int size;

        MPI_OK(MPI_Comm_size(back_comm, &size));
        CHECK(size == t_size, "size through a converted handle %d", size);
    }
    MPI_OK(MPI_Wait(&r, &st));
    st.MPI_SOURCE = 3;
    st.MPI_TAG = 9;
    memset(f, 0, sizeof f);
    MPI_OK(MPI_Status_c2f(&st, f));
    MPI_OK(MPI_Status_f2c(f, &back));
    CHECK(back.MPI_SOURCE == 3 && back.MPI_TAG == 9, "Status %d %d",
          back.MPI_SOURCE, back.MPI_TAG);
    MPI_OK(MPI_Info_free(&in));
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Type_free(&t));
    MPI_OK(MPI_Comm_free(&dup));
}

int
main(int argc, char **argv)
{
    t_init(&argc, &argv);
    check_info();
    check_errors();
    check_fint();
    return t_finish("info_err");
}
