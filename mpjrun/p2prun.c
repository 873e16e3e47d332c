/*
 * p2prun: run a program as N ranks of R replicas each on the peers of a
 * network (or on an embedded local cluster when none is configured),
 * with its output on this terminal and its exit status as ours.
 */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "log.h"
#include "mpjrun.h"
#include "xmalloc.h"

/* A peer takes messages of at most 4 MiB from an authenticated user
 * (SVC_MAX_FRAME_USER in peerd/service.c); the launch carries arguments,
 * variables, file names and the placement: keep a margin. */
#define P2PRUN_MAX_LAUNCH (3 * 1024 * 1024)

static void
usage(FILE *f)
{
    fprintf(f,
            "usage: p2prun [-n N] [-r R] [-a spread|concentrate] [-l FILE]... "
            "[-x VAR[=VAL]]...\n"
            "              [--tag-output] [--supernode ADDR:PORT]... "
            "[--conf FILE]\n"
            "              [--timeout SECONDS] [-v] [--] PROGRAM "
            "[ARGS...]\n"
            "       p2prun --each INPUTS [--unordered] [--results FILE] "
            "[--retries K]\n"
            "              [--worker] [--task-timeout SECONDS] [--mem SIZE] "
            "[-l FILE]... "
            "[-x VAR[=VAL]]...\n"
            "              [--tag-output] [--] PROGRAM [ARGS...]\n"
            "       p2prun --workers W [--retries K] [--task-timeout SECONDS] "
            "[--mem SIZE]\n"
            "              [-l FILE]... [-x VAR[=VAL]]... [--] PROGRAM "
            "[ARGS...]\n"
            "\n"
            "Runs PROGRAM as N ranks, each as R replicas on R distinct "
            "hosts.  A PROGRAM\n"
            "given as a path is copied to the peers; a bare name is looked "
            "up on their PATH.\n"
            "\n"
            "  -n N                  ranks (default 1)\n"
            "  -r R                  replicas of every rank (default 1)\n"
            "  -a spread|concentrate most hosts first (default), or fill "
            "hosts\n"
            "  -l FILE               copy FILE into the job directory "
            "(repeatable)\n"
            "  -x VAR[=VAL]          export VAR, with its value here or VAL "
            "(repeatable)\n"
            "  --tag-output          prefix every line with [rank]\n"
            "  --no-encrypt          MPI traffic between ranks in clear "
            "(trusted networks)\n"
            "  --no-shm              ranks on the same host talk over "
            "loopback TCP, not shared memory\n"
            "  --supernode ADDR:PORT ask this supernode (repeatable)\n"
            "  --timeout SECONDS     stop the job after this long (exit "
            "124)\n"
            "  -v, --verbose         log what happens (connections, peers, "
            "replicas) on\n"
            "                        stderr; twice for debugging.  Without "
            "it, one line\n"
            "                        per problem\n"
            "\n"
            "  --each INPUTS         run PROGRAM once per line of INPUTS "
            "(- for stdin);\n"
            "                        {} in ARGS is the line, {#} its number "
            "(no {}: the\n"
            "                        line is the last argument); see "
            "docs/tasks.md\n"
            "  --unordered           print each task's output as it "
            "finishes\n"
            "  --results FILE        one JSON object per task and line\n"
            "  --retries K           run a failing task up to K more times\n"
            "  --task-timeout SECONDS kill a task after this long (status "
            "124)\n"
            "  --mem SIZE            memory a task needs (2G, 512M); "
            "default: learnt\n"
            "  --worker              start PROGRAM once per slot and give it "
            "the lines as\n"
            "                        tasks on its stdin, in the worker "
            "protocol (docs/tasks.md)\n"
            "  --workers W           PROGRAM calls tasks (p2p_task.h): run "
            "it here, and\n"
            "                        as workers on the peers, at most W "
            "tasks at a time\n"
            "                        (0: every slot); the exit status is "
            "PROGRAM's\n"
            "                        A PROGRAM that defines tasks "
            "(P2P_TASK) run with -n 1\n"
            "                        (the default) is run so, as with "
            "--workers 0\n"
            "\n"
            "With no supernode configured, the job runs on an embedded "
            "cluster on\n"
            "loopback.  The job's standard input is /dev/null.  The exit "
            "status is 0 when\n"
            "every rank exits 0, else that of the first rank that failed "
            "(128+N for\n"
            "signal N), 1 when the job cannot be placed or started.\n");
}

/* -x VAR or -x VAR=VAL as NAME=VALUE. */
static char *
export_arg(const char *arg)
{
    const char *eq = strchr(arg, '='), *val;
    char *out;
    size_t i, n = eq ? (size_t)(eq - arg) : strlen(arg);

    for (i = 0; i < n; i++)
        if (!((arg[i] >= 'A' && arg[i] <= 'Z') ||
              (arg[i] >= 'a' && arg[i] <= 'z') || arg[i] == '_' ||
              (i > 0 && arg[i] >= '0' && arg[i] <= '9')))
            n = 0;
    if (n == 0) {
        fprintf(stderr, "p2prun: -x %s: not a variable name\n", arg);
        return NULL;
    }
    if (eq != NULL)
        return xstrdup(arg);
    if ((val = getenv(arg)) == NULL) {
        fprintf(stderr, "p2prun: -x %s: not set here; use -x %s=VALUE\n", arg,
                arg);
        return NULL;
    }
    xasprintf(&out, "%s=%s", arg, val);
    return out;
}

/* Free what main() allocated for the job's description. */
static void
spec_free(struct job_spec *js)
{
    int i;

    for (i = 0; i < js->nenv; i++)
        free(js->env[i]);
    free(js->env);
    free(js->files);
}

/* What a peer accepts in a launch (proto/wire.h, checked by the peer's
 * decoder), said here where the user typed it rather than as a lost peer
 * later.  Two slots of the environment are kept, for P2P_ENCRYPT and
 * P2P_SHM. */
static int
check_limits(const struct job_spec *js)
{
    size_t len, total = 0;
    int i;

    if (js->nenv > WIRE_MAX_ENV - 2) {
        fprintf(stderr, "p2prun: -x given %d times; a peer accepts at most "
                        "%d variables\n",
                js->nenv, WIRE_MAX_ENV - 2);
        return -1;
    }
    if (js->nfiles > WIRE_MAX_FILES - 1) {
        fprintf(stderr, "p2prun: -l given %d times; a job takes at most %d "
                        "files besides its program\n",
                js->nfiles, WIRE_MAX_FILES - 1);
        return -1;
    }
    if (js->argc > WIRE_MAX_ARGS) {
        fprintf(stderr, "p2prun: the program has %d arguments; a peer "
                        "accepts at most %d\n",
                js->argc - 1, WIRE_MAX_ARGS - 1);
        return -1;
    }
    for (i = 0; i < js->nenv; i++) {
        if ((len = strlen(js->env[i])) > WIRE_MAX_ARG) {
            fprintf(stderr, "p2prun: -x %.*s: %zu bytes as NAME=VALUE; a "
                            "peer accepts at most %d per variable\n",
                    (int)strcspn(js->env[i], "="), js->env[i], len,
                    WIRE_MAX_ARG);
            return -1;
        }
        total += len + 8;
    }
    for (i = 0; i < js->argc; i++) {
        if ((len = strlen(js->argv[i])) > WIRE_MAX_ARG) {
            fprintf(stderr, "p2prun: %s %d is %zu bytes long; a peer "
                            "accepts at most %d per argument\n",
                    i == 0 ? "the program name, argument" : "argument", i,
                    len, WIRE_MAX_ARG);
            return -1;
        }
        total += len + 8;
    }
    if (total > P2PRUN_MAX_LAUNCH) {
        fprintf(stderr, "p2prun: the program's arguments and -x variables "
                        "come to %zu bytes; a peer accepts at most %d in all\n",
                total, P2PRUN_MAX_LAUNCH);
        return -1;
    }
    return 0;
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"tag-output", no_argument, NULL, 'T'},
        {"no-encrypt", no_argument, NULL, 'E'},
        {"no-shm", no_argument, NULL, 'H'},
        {"supernode", required_argument, NULL, 's'},
        {"conf", required_argument, NULL, 'c'},
        {"timeout", required_argument, NULL, 't'},
        {"verbose", no_argument, NULL, 'v'},
        {"each", required_argument, NULL, 'e'},
        {"unordered", no_argument, NULL, 'U'},
        {"results", required_argument, NULL, 'R'},
        {"retries", required_argument, NULL, 'K'},
        {"task-timeout", required_argument, NULL, 'O'},
        {"mem", required_argument, NULL, 'M'},
        {"worker", no_argument, NULL, 'W'},
        {"workers", required_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    struct job_spec js;
    struct p2p_config cfg;
    struct p2p_group g;
    struct local_cluster *lc = NULL;
    const char *conf = NULL, *strategy = NULL, *sn[CONF_MAX_SUPERNODES];
    uint8_t pk[SEC_SIGN_PK_LEN], sk[SEC_SIGN_SK_LEN];
    char err[1024], *x;
    int ch, nsn = 0, verbose = 0, status, created, npeers, slots;
    int no_encrypt = 0, no_shm = 0, task_program = 0;
    char progpath[PATH_MAX];

    /* Our own messages say what went wrong in one line each; the log
     * lines behind them (connections, peers) only with -v. */
    log_init("p2prun", 1, P2P_LOG_QUIET);
    /* A peer that vanishes mid-write must be an error on that connection,
     * not the end of this program; output to a closed pipe is dropped. */
    signal(SIGPIPE, SIG_IGN);
    memset(&js, 0, sizeof js);
    /* Every exit from here on goes through done, which frees what is
     * set up (a zeroed cfg and a NULL lc free nothing); until the
     * command line is accepted, with a usage error. */
    memset(&cfg, 0, sizeof cfg);
    status = 2;
    js.n = js.r = 1;
    js.files = xcalloc((size_t)argc + 1, sizeof *js.files);
    js.env = xcalloc((size_t)argc + 1, sizeof *js.env);
    /* '+': options end at the program, whose own options are its own. */
    while ((ch = getopt_long(argc, argv, "+n:r:a:l:x:vhV", opts, NULL)) != -1) {
        switch (ch) {
        case 'n':
            if (cli_int("-n", optarg, 1, WIRE_MAX_RANKS, &js.n) == -1)
                goto done;
            break;
        case 'r':
            if (cli_int("-r", optarg, 1, WIRE_MAX_REPLICAS, &js.r) == -1)
                goto done;
            break;
        case 'a':
            if (strcmp(optarg, "spread") != 0 &&
                strcmp(optarg, "concentrate") != 0) {
                fprintf(stderr,
                        "p2prun: -a: '%s' is not spread or concentrate\n",
                        optarg);
                goto done;
            }
            strategy = optarg;
            break;
        case 'l':
            js.files[js.nfiles++] = optarg;
            break;
        case 'x':
            if ((x = export_arg(optarg)) == NULL)
                goto done;
            js.env[js.nenv++] = x;
            break;
        case 'T':
            js.tag_output = 1;
            break;
        case 'E':
            no_encrypt = 1;
            break;
        case 'H':
            no_shm = 1;
            break;
        case 's':
            if (nsn == CONF_MAX_SUPERNODES) {
                fprintf(stderr, "p2prun: at most %d supernodes\n",
                        CONF_MAX_SUPERNODES);
                goto done;
            }
            sn[nsn++] = optarg;
            break;
        case 'c':
            conf = optarg;
            break;
        case 't':
            if (cli_int("--timeout", optarg, 1, 86400 * 365, &js.timeout_s) ==
                -1)
                goto done;
            break;
        case 'v':
            verbose++;
            break;
        case 'e':
            js.each = optarg;
            break;
        case 'U':
            js.unordered = 1;
            break;
        case 'W':
            js.worker = 1;
            break;
        case 'P':
            if (cli_int("--workers", optarg, 0, 1000000, &js.workers_max) ==
                -1)
                goto done;
            js.caller = 1;
            break;
        case 'R':
            js.results = optarg;
            break;
        case 'K':
            if (cli_int("--retries", optarg, 0, 1000, &js.retries) == -1)
                goto done;
            break;
        case 'O':
            if (cli_int("--task-timeout", optarg, 1, 86400 * 365,
                        &js.task_timeout_s) == -1)
                goto done;
            break;
        case 'M':
            if (each_parse_mem(optarg, &js.mem_need) == -1) {
                fprintf(stderr, "p2prun: --mem: '%s' is not a size like 2G "
                                "or 512M\n",
                        optarg);
                goto done;
            }
            break;
        case 'h':
            usage(stdout);
            status = 0;
            goto done;
        case 'V':
            cli_version();
            status = 0;
            goto done;
        default:
            usage(stderr);
            goto done;
        }
    }
    if (optind == argc) {
        fprintf(stderr, "p2prun: no program to run\n");
        usage(stderr);
        goto done;
    }
    js.argv = argv + optind;
    js.argc = argc - optind;
    /* A program that defines tasks (P2P_TASK), started as one rank, is
     * the caller of a farm whose workers are itself: as --workers 0. */
    if (!js.caller && js.each == NULL && js.n == 1 && js.r == 1 &&
        taskprog_find(js.argv[0], progpath, sizeof progpath) == 0 &&
        taskprog_is_task_program(progpath)) {
        js.caller = 1;
        js.workers_max = 0;
        task_program = 1;
    }
    if (js.caller && (js.each != NULL || js.worker || js.unordered ||
                      js.results)) {
        fprintf(stderr, "p2prun: %s runs a program that calls tasks: "
                        "not with --each, --worker, --unordered or "
                        "--results\n",
                task_program ? "-n 1 of a task program (P2P_TASK)"
                             : "--workers");
        goto done;
    }
    if (js.caller)
        js.worker = 1; /* its workers are the program itself */
    else if (js.each == NULL &&
             (js.unordered || js.results || js.retries || js.task_timeout_s ||
              js.mem_need || js.worker)) {
        fprintf(stderr, "p2prun: --unordered, --results, --retries, "
                        "--task-timeout, --mem and --worker go with "
                        "--each\n");
        goto done;
    }
    if ((js.each != NULL || js.caller) && (js.n != 1 || js.r != 1)) {
        fprintf(stderr, "p2prun: --each runs one task per input line: -n and "
                        "-r are for jobs\n");
        goto done;
    }
    if (check_limits(&js) == -1) {
        goto done;
    }
    log_set_verbosity(verbose > 0 ? P2P_LOG_INFO + verbose - 1
                                  : P2P_LOG_QUIET);
    if (task_program)
        log_info("%s defines tasks (P2P_TASK): farming its calls out as "
                 "with --workers 0",
                 progpath);

    if (config_load(&cfg, conf, err, sizeof err) == -1) {
        fprintf(stderr, "p2prun: %s\n", err);
        status = 1;
        goto done;
    }
    config_override_supernodes(&cfg, (char *const *)sn, nsn);
    if (strategy == NULL)
        strategy = cfg.strategy;
    if (strcmp(strategy, "concentrate") == 0)
        js.strategy = ALLOC_CONCENTRATE;
    else if (strcmp(strategy, "spread") == 0)
        js.strategy = ALLOC_SPREAD;
    else {
        fprintf(stderr,
                "p2prun: [run] strategy: '%s' is not spread or "
                "concentrate\n",
                strategy);
        status = 1;
        goto done;
    }
    js.lease_ms = cfg.lease_ms;
    js.lag_ms = cfg.replica_lag_ms;
    js.spool_bytes = (uint64_t)cfg.output_spool_mb * 1024 * 1024;
    /* MPI traffic between the ranks: sealed unless the job says not. */
    if (no_encrypt || !cfg.encrypt)
        js.env[js.nenv++] = xstrdup("P2P_ENCRYPT=0");
    /* Ranks on one host: shared memory unless the job says not. */
    if (no_shm || !cfg.shm)
        js.env[js.nenv++] = xstrdup("P2P_SHM=0");
    if (sec_init() == -1) {
        fprintf(stderr, "p2prun: libsodium failed to initialise\n");
        status = 1;
        goto done;
    }

    if (cfg.nsupernodes == 0) {
        /* Nothing configured: a cluster of our own, with enough hosts for
         * the replicas and enough slots for the ranks; tasks get a slot
         * per core. */
        npeers = js.r > 2 ? js.r : 2;
        slots = (js.n * js.r + npeers - 1) / npeers;
        if (slots < (int)sysconf(_SC_NPROCESSORS_ONLN))
            slots = (int)sysconf(_SC_NPROCESSORS_ONLN);
        if (js.each != NULL || js.caller) {
            const char *ls = getenv("P2P_LOCAL_SLOTS");

            slots = ((int)sysconf(_SC_NPROCESSORS_ONLN) + npeers - 1) /
                    npeers;
            /* Benchmarks: a given number of slots per embedded peer. */
            if (ls != NULL && atoi(ls) > 0 && atoi(ls) <= 1024)
                slots = atoi(ls);
            if (slots < 1)
                slots = 1;
        }
        fprintf(stderr,
                "p2prun: no supernode configured: running on an embedded "
                "local cluster (%d peers on 127.0.0.2-%d)\n",
                npeers, npeers + 1);
        if ((lc = local_start(&cfg, npeers, slots, err, sizeof err)) == NULL) {
            fprintf(stderr, "p2prun: %s\n", err);
            status = 1;
            goto done;
        }
        sec_sign_keypair(pk, sk);
    } else if (userkey_load(cfg.user_key, pk, sk, &created, err, sizeof err) ==
               -1) {
        fprintf(stderr, "p2prun: user key: %s\n", err);
        status = 1;
        goto done;
    } else if (created)
        fprintf(stderr, "p2prun: created your user key in %s\n",
                cfg.user_key ? cfg.user_key : "~/.config/p2p/user.key");

    if (group_load(&cfg, &g, err, sizeof err) == -1) {
        fprintf(stderr, "p2prun: %s\n", err);
        status = 1;
        goto done;
    }
    status = js.each != NULL || js.caller ? each_run(&cfg, &g, pk, sk, &js)
                             : coord_run(&cfg, &g, pk, sk, &js);
    group_wipe(&g);
done:
    sec_wipe(sk, sizeof sk);
    local_stop(lc);
    spec_free(&js);
    config_free(&cfg);
    return status;
}
