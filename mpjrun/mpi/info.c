/*
 * info.c: info objects (Info_create, set, get, get_valuelen, delete,
 * dup, free, get_nkeys, get_nthkey), MPI_INFO_ENV, and the hints of a
 * communicator (Comm_set_info, Comm_get_info).
 *
 * An info object is an ordered list of (key, value) strings behind a
 * checked handle (handles.c): keys keep the order they were first set
 * in, so Info_get_nthkey is stable.  Keys are at most MPI_MAX_INFO_KEY
 * characters, values MPI_MAX_INFO_VAL.  p2pmpi uses no hints: the calls
 * that take an info check it and go on; Comm_get_info gives a new empty
 * one (the hints in use: none).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpii.h"

#define INFO_KIND 0x5c000000u

struct info_entry {
    char *key, *val;
};

struct mpii_info {
    struct info_entry *e;
    int n, cap;
};

static struct mpii_handles infos = {.kind = INFO_KIND};
static struct mpii_info *env_info; /* MPI_INFO_ENV, made on first use */

static void
info_destroy(void *p)
{
    struct mpii_info *in = p;

    if (in == NULL)
        return;
    for (int i = 0; i < in->n; i++) {
        free(in->e[i].key);
        free(in->e[i].val);
    }
    free(in->e);
    free(in);
}

static int info_put(struct mpii_info *, const char *key, const char *val);

/* MPI_INFO_ENV: how the process was started, as far as p2pmpi knows.
 * No working directory: it is the job's directory on each peer, which
 * differs between the replicas of a rank. */
static struct mpii_info *
info_env(void)
{
    char buf[MPI_MAX_PROCESSOR_NAME];
    struct mpii_info *in;
    struct mpii_comm *w;
    int n;

    if (env_info != NULL)
        return env_info;
    if ((in = calloc(1, sizeof *in)) == NULL)
        return NULL;
    if (PMPI_Get_processor_name(buf, &n) == MPI_SUCCESS && n > 0)
        (void)info_put(in, "host", buf);
    if ((w = mpii_comm_get(MPI_COMM_WORLD)) != NULL) {
        snprintf(buf, sizeof buf, "%d", w->size);
        (void)info_put(in, "maxprocs", buf);
    }
    (void)info_put(in, "thread_level", "MPI_THREAD_SINGLE");
    env_info = in;
    return in;
}

/* The object behind h, or NULL (MPI_INFO_NULL is not an object). */
static struct mpii_info *
info_get(MPI_Info h)
{
    if (h == MPI_INFO_ENV)
        return info_env();
    return mpii_handle_get(&infos, (uint32_t)h);
}

/* A key is 1 .. MPI_MAX_INFO_KEY characters. */
static int
key_ok(const char *key)
{
    size_t n;

    if (key == NULL)
        return 0;
    n = strnlen(key, MPI_MAX_INFO_KEY + 1);
    return n > 0 && n <= MPI_MAX_INFO_KEY;
}

static int
info_find(const struct mpii_info *in, const char *key)
{
    for (int i = 0; i < in->n; i++)
        if (strcmp(in->e[i].key, key) == 0)
            return i;
    return -1;
}

/* Set key to val (copies). */
static int
info_put(struct mpii_info *in, const char *key, const char *val)
{
    int i = info_find(in, key);
    char *v = strdup(val), *k;

    if (v == NULL)
        return MPI_ERR_NO_MEM;
    if (i >= 0) {
        free(in->e[i].val);
        in->e[i].val = v;
        return MPI_SUCCESS;
    }
    if (in->n == in->cap) {
        int ncap = in->cap ? in->cap * 2 : 8;
        struct info_entry *n = realloc(in->e, (size_t)ncap * sizeof *n);

        if (n == NULL) {
            free(v);
            return MPI_ERR_NO_MEM;
        }
        in->e = n;
        in->cap = ncap;
    }
    if ((k = strdup(key)) == NULL) {
        free(v);
        return MPI_ERR_NO_MEM;
    }
    in->e[in->n].key = k;
    in->e[in->n].val = v;
    in->n++;
    return MPI_SUCCESS;
}

/* A new object in *h (a copy of from, if given). */
static int
info_new(const struct mpii_info *from, MPI_Info *h)
{
    struct mpii_info *in = calloc(1, sizeof *in);
    uint32_t u;
    int rc = MPI_SUCCESS;

    if (in == NULL)
        return MPI_ERR_NO_MEM;
    for (int i = 0; from != NULL && i < from->n && rc == MPI_SUCCESS; i++)
        rc = info_put(in, from->e[i].key, from->e[i].val);
    if (rc == MPI_SUCCESS)
        rc = mpii_handle_put(&infos, in, &u);
    if (rc != MPI_SUCCESS) {
        info_destroy(in);
        return rc;
    }
    *h = (MPI_Info)u;
    return MPI_SUCCESS;
}

void
mpii_info_fini(void)
{
    mpii_handles_fini(&infos, info_destroy);
    info_destroy(env_info);
    env_info = NULL;
}

#pragma weak MPI_Info_create = PMPI_Info_create
int
PMPI_Info_create(MPI_Info *info)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Info_create";
    int rc;

    MPII_CHECK_INIT(fn);
    if (info == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    rc = info_new(NULL, info);
    return rc == MPI_SUCCESS ? rc : mpii_err(MPI_COMM_WORLD, rc, fn);
}

#pragma weak MPI_Info_dup = PMPI_Info_dup
int
PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Info_dup";
    const struct mpii_info *in;
    int rc;

    MPII_CHECK_INIT(fn);
    if ((in = info_get(info)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_INFO, fn);
    if (newinfo == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    rc = info_new(in, newinfo);
    return rc == MPI_SUCCESS ? rc : mpii_err(MPI_COMM_WORLD, rc, fn);
}

#pragma weak MPI_Info_free = PMPI_Info_free
int
PMPI_Info_free(MPI_Info *info)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Info_free";
    struct mpii_info *in;

    MPII_CHECK_INIT(fn);
    if (info == NULL || *info == MPI_INFO_ENV ||
        (in = mpii_handle_take(&infos, (uint32_t)*info)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_INFO, fn);
    info_destroy(in);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_set = PMPI_Info_set
int
PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Info_set";
    struct mpii_info *in;
    int rc;

    MPII_CHECK_INIT(fn);
    if (info == MPI_INFO_ENV || (in = info_get(info)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_INFO, fn);
    if (!key_ok(key))
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, fn);
    if (value == NULL || value[0] == '\0' ||
        strnlen(value, MPI_MAX_INFO_VAL + 1) > MPI_MAX_INFO_VAL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_INFO_VALUE, fn);
    rc = info_put(in, key, value);
    return rc == MPI_SUCCESS ? rc : mpii_err(MPI_COMM_WORLD, rc, fn);
}

#pragma weak MPI_Info_delete = PMPI_Info_delete
int
PMPI_Info_delete(MPI_Info info, const char *key)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Info_delete";
    struct mpii_info *in;
    int i;

    MPII_CHECK_INIT(fn);
    if (info == MPI_INFO_ENV || (in = info_get(info)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_INFO, fn);
    if (!key_ok(key))
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, fn);
    if ((i = info_find(in, key)) < 0)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_INFO_NOKEY, fn);
    free(in->e[i].key);
    free(in->e[i].val);
    memmove(&in->e[i], &in->e[i + 1], (size_t)(in->n - i - 1) * sizeof *in->e);
    in->n--;
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_get = PMPI_Info_get
int
PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value,
              int *flag)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Info_get";
    const struct mpii_info *in;
    size_t n;
    int i;

    MPII_CHECK_INIT(fn);
    if ((in = info_get(info)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_INFO, fn);
    if (!key_ok(key))
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, fn);
    if (flag == NULL || valuelen < 0 || (valuelen > 0 && value == NULL))
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    *flag = 0;
    if ((i = info_find(in, key)) < 0)
        return MPI_SUCCESS;
    *flag = 1;
    /* At most valuelen characters, and the terminating null. */
    n = strlen(in->e[i].val);
    if (n > (size_t)valuelen)
        n = (size_t)valuelen;
    if (value != NULL) {
        memcpy(value, in->e[i].val, n);
        value[n] = '\0';
    }
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_get_valuelen = PMPI_Info_get_valuelen
int
PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen,
                       int *flag)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Info_get_valuelen";
    const struct mpii_info *in;
    int i;

    MPII_CHECK_INIT(fn);
    if ((in = info_get(info)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_INFO, fn);
    if (!key_ok(key))
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, fn);
    if (flag == NULL || valuelen == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    i = info_find(in, key);
    *flag = i >= 0;
    if (i >= 0)
        *valuelen = (int)strlen(in->e[i].val);
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_get_nkeys = PMPI_Info_get_nkeys
int
PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Info_get_nkeys";
    const struct mpii_info *in;

    MPII_CHECK_INIT(fn);
    if ((in = info_get(info)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_INFO, fn);
    if (nkeys == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    *nkeys = in->n;
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_get_nthkey = PMPI_Info_get_nthkey
int
PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Info_get_nthkey";
    const struct mpii_info *in;

    MPII_CHECK_INIT(fn);
    if ((in = info_get(info)) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_INFO, fn);
    if (key == NULL || n < 0 || n >= in->n)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn);
    memcpy(key, in->e[n].key, strlen(in->e[n].key) + 1);
    return MPI_SUCCESS;
}

/* An info argument is MPI_INFO_NULL or a live object. */
int
mpii_info_arg(MPI_Info info)
{
    return info == MPI_INFO_NULL || info_get(info) != NULL;
}

#pragma weak MPI_Comm_set_info = PMPI_Comm_set_info
int
PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Comm_set_info";

    MPII_CHECK_INIT(fn);
    if (mpii_comm_get(comm) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (!mpii_info_arg(info))
        return mpii_err(comm, MPI_ERR_INFO, fn);
    return MPI_SUCCESS; /* no hints are used */
}

#pragma weak MPI_Comm_get_info = PMPI_Comm_get_info
int
PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    MPII_ENTER;
    static const char fn[] = "MPI_Comm_get_info";
    int rc;

    MPII_CHECK_INIT(fn);
    if (mpii_comm_get(comm) == NULL)
        return mpii_err(MPI_COMM_WORLD, MPI_ERR_COMM, fn);
    if (info_used == NULL)
        return mpii_err(comm, MPI_ERR_ARG, fn);
    rc = info_new(NULL, info_used);
    return rc == MPI_SUCCESS ? rc : mpii_err(comm, rc, fn);
}
