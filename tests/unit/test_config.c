/*
 * config_load: where the file is looked for, every key, the supernode list,
 * paths relative to the file, and errors that name file and line.  Each
 * case works in a fresh directory under /tmp with HOME pointing into it,
 * so the user's own configuration never leaks in.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "test.h"

static char dir[PATH_MAX];

/* Fresh temp dir, HOME inside it (empty), P2P_CONF empty. */
static int
env_setup(void)
{
    char home[PATH_MAX + 8];

    snprintf(dir, sizeof dir, "/tmp/p2p-test-config-XXXXXX");
    if (mkdtemp(dir) == NULL) {
        test_fail(__FILE__, __LINE__, "mkdtemp: %s", strerror(errno));
        return -1;
    }
    snprintf(home, sizeof home, "%s/home", dir);
    mkdir(home, 0700);
    setenv("HOME", home, 1);
    setenv("P2P_CONF", "", 1);
    return 0;
}

/* Remove the temp tree (three levels are enough for these tests). */
static void
rm_tree(const char *path, int depth)
{
    DIR *d;
    struct dirent *de;
    char sub[PATH_MAX + 256];

    if (depth > 0 && (d = opendir(path)) != NULL) {
        while ((de = readdir(d)) != NULL) {
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                continue;
            if (snprintf(sub, sizeof sub, "%s/%s", path, de->d_name) <
                (int)sizeof sub)
                rm_tree(sub, depth - 1);
        }
        closedir(d);
        rmdir(path);
        return;
    }
    if (unlink(path) == -1)
        rmdir(path);
}

static void
env_teardown(void)
{
    rm_tree(dir, 5);
}

/* Write name (relative to dir) with content; returns the full path. */
static const char *
write_conf(const char *name, const char *content)
{
    static char path[PATH_MAX + 64];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    if ((f = fopen(path, "w")) == NULL) {
        test_fail(__FILE__, __LINE__, "%s: %s", path, strerror(errno));
        return path;
    }
    fputs(content, f);
    fclose(f);
    return path;
}

static void
check_defaults(const struct p2p_config *c)
{
    CHECK_EQ_STR(c->group, "p2pmpi");
    CHECK(c->key_file == NULL);
    CHECK_EQ_INT(c->nsupernodes, 0);
    CHECK_EQ_INT(c->handshake_timeout_ms, 5000);
    CHECK_EQ_STR(c->sn_listen, "0.0.0.0:9700");
    CHECK_EQ_INT(c->sn_expire, 10);
    CHECK(c->sn_pid_file == NULL);
    CHECK_EQ_STR(c->peer_listen, "0.0.0.0:9897");
    CHECK(c->state_dir == NULL);
    CHECK_EQ_INT(c->slots, 0);
    CHECK(c->host_label == NULL);
    CHECK_EQ_INT(c->heartbeat_ms, 1000);
    CHECK(c->peer_pid_file == NULL);
}

static void
t_defaults(void)
{
    struct p2p_config c;
    char err[512] = "";

    if (env_setup() == -1)
        return;
    if (CHECK_EQ_INT(config_load(&c, NULL, err, sizeof err), 0)) {
        /* Only the system file could still be found. */
        if (access("/etc/p2p/p2p.conf", F_OK) != 0) {
            CHECK(c.path == NULL);
            check_defaults(&c);
        }
    }
    config_free(&c);
    /* With P2P_CONF unset as well. */
    unsetenv("P2P_CONF");
    if (CHECK_EQ_INT(config_load(&c, NULL, err, sizeof err), 0) &&
        access("/etc/p2p/p2p.conf", F_OK) != 0)
        CHECK(c.path == NULL);
    config_free(&c);
    env_teardown();
}

/* An empty file changes nothing. */
static void
t_empty_file(void)
{
    struct p2p_config c;
    char err[512] = "";
    const char *path;

    if (env_setup() == -1)
        return;
    path = write_conf("p2p.conf", "; nothing here\n\n# nor here\n");
    if (CHECK_EQ_INT(config_load(&c, path, err, sizeof err), 0)) {
        CHECK_EQ_STR(c.path, path);
        check_defaults(&c);
    }
    config_free(&c);
    env_teardown();
}

static void
t_every_key(void)
{
    struct p2p_config c;
    char err[512] = "";
    const char *path;

    if (env_setup() == -1)
        return;
    path = write_conf("p2p.conf", "[network]\n"
                                  "group = lab-7\n"
                                  "key_file = /etc/p2p/group.key\n"
                                  "supernodes = 10.0.0.1:9700\n"
                                  "handshake_timeout_ms = 2500\n"
                                  "\n"
                                  "[supernode]\n"
                                  "listen = 127.0.0.1:9701\n"
                                  "expire = 30\n"
                                  "pid_file = /run/sn.pid\n"
                                  "\n"
                                  "[peer]\n"
                                  "listen = [::1]:9898\n"
                                  "state_dir = /var/lib/p2p\n"
                                  "slots = 12\n"
                                  "host_label = node-3\n"
                                  "heartbeat_ms = 250\n"
                                  "pid_file = /run/peer.pid\n");
    if (!CHECK_EQ_INT(config_load(&c, path, err, sizeof err), 0)) {
        fprintf(stderr, "  %s\n", err);
        config_free(&c);
        env_teardown();
        return;
    }
    CHECK_EQ_STR(c.path, path);
    CHECK_EQ_STR(c.group, "lab-7");
    CHECK_EQ_STR(c.key_file, "/etc/p2p/group.key");
    if (CHECK_EQ_INT(c.nsupernodes, 1))
        CHECK_EQ_STR(c.supernodes[0], "10.0.0.1:9700");
    CHECK_EQ_INT(c.handshake_timeout_ms, 2500);
    CHECK_EQ_STR(c.sn_listen, "127.0.0.1:9701");
    CHECK_EQ_INT(c.sn_expire, 30);
    CHECK_EQ_STR(c.sn_pid_file, "/run/sn.pid");
    CHECK_EQ_STR(c.peer_listen, "[::1]:9898");
    CHECK_EQ_STR(c.state_dir, "/var/lib/p2p");
    CHECK_EQ_INT(c.slots, 12);
    CHECK_EQ_STR(c.host_label, "node-3");
    CHECK_EQ_INT(c.heartbeat_ms, 250);
    CHECK_EQ_STR(c.peer_pid_file, "/run/peer.pid");
    config_free(&c);
    CHECK(c.path == NULL && c.group == NULL && c.nsupernodes == 0);
    env_teardown();
}

/* A key given twice keeps the last value (and does not leak the first). */
static void
t_repeated_key(void)
{
    struct p2p_config c;
    char err[512] = "";
    const char *path;

    if (env_setup() == -1)
        return;
    path = write_conf("p2p.conf", "[network]\ngroup = a\ngroup = b\n"
                                  "supernodes = x:1, y:2\n"
                                  "supernodes = z:3\n");
    if (CHECK_EQ_INT(config_load(&c, path, err, sizeof err), 0)) {
        CHECK_EQ_STR(c.group, "b");
        if (CHECK_EQ_INT(c.nsupernodes, 1))
            CHECK_EQ_STR(c.supernodes[0], "z:3");
    }
    config_free(&c);
    env_teardown();
}

static void
t_supernode_list(void)
{
    struct p2p_config c;
    char err[512] = "";
    const char *path;

    if (env_setup() == -1)
        return;
    path = write_conf("p2p.conf", "[network]\n"
                                  "supernodes = 10.0.0.1:9700,  [::1]:9700 ,\t"
                                  "gw.lab ,, 10.0.0.2\n");
    if (CHECK_EQ_INT(config_load(&c, path, err, sizeof err), 0) &&
        CHECK_EQ_INT(c.nsupernodes, 4)) {
        CHECK_EQ_STR(c.supernodes[0], "10.0.0.1:9700");
        CHECK_EQ_STR(c.supernodes[1], "[::1]:9700");
        CHECK_EQ_STR(c.supernodes[2], "gw.lab");
        CHECK_EQ_STR(c.supernodes[3], "10.0.0.2");
    }
    config_free(&c);
    env_teardown();
}

/* Relative paths are relative to the configuration file, not the cwd. */
static void
t_relative_paths(void)
{
    struct p2p_config c;
    char err[512] = "", want[PATH_MAX + 64], sub[PATH_MAX + 8];
    char cwd[PATH_MAX];
    const char *path;

    if (env_setup() == -1)
        return;
    snprintf(sub, sizeof sub, "%s/etc", dir);
    mkdir(sub, 0700);
    path = write_conf("etc/p2p.conf", "[network]\n"
                                      "key_file = keys/group.key\n"
                                      "[supernode]\n"
                                      "pid_file = sn.pid\n"
                                      "[peer]\n"
                                      "state_dir = ../state\n"
                                      "pid_file = /abs/peer.pid\n");
    if (CHECK_EQ_INT(config_load(&c, path, err, sizeof err), 0)) {
        snprintf(want, sizeof want, "%s/etc/keys/group.key", dir);
        CHECK_EQ_STR(c.key_file, want);
        snprintf(want, sizeof want, "%s/etc/sn.pid", dir);
        CHECK_EQ_STR(c.sn_pid_file, want);
        snprintf(want, sizeof want, "%s/etc/../state", dir);
        CHECK_EQ_STR(c.state_dir, want);
        CHECK_EQ_STR(c.peer_pid_file, "/abs/peer.pid");
    }
    config_free(&c);

    /* A file named without a directory: relative to the cwd it was
     * found in. */
    if (getcwd(cwd, sizeof cwd) != NULL && chdir(sub) == 0) {
        if (CHECK_EQ_INT(config_load(&c, "p2p.conf", err, sizeof err), 0)) {
            CHECK(c.key_file != NULL &&
                  strcmp(c.key_file, "./keys/group.key") == 0);
            /* Whatever the form, it names the same file from here. */
        }
        config_free(&c);
        if (chdir(cwd) != 0)
            test_fail(__FILE__, __LINE__, "chdir back failed");
    }
    env_teardown();
}

/* The search order: explicit, $P2P_CONF, ~/.config/p2p/p2p.conf. */
static void
t_search_order(void)
{
    struct p2p_config c;
    char err[512] = "", p[PATH_MAX + 64];
    const char *a, *b;

    if (env_setup() == -1)
        return;
    snprintf(p, sizeof p, "%s/home/.config", dir);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/home/.config/p2p", dir);
    mkdir(p, 0700);
    write_conf("home/.config/p2p/p2p.conf", "[network]\ngroup = home\n");
    if (CHECK_EQ_INT(config_load(&c, NULL, err, sizeof err), 0))
        CHECK_EQ_STR(c.group, "home");
    config_free(&c);

    a = write_conf("env.conf", "[network]\ngroup = env\n");
    setenv("P2P_CONF", a, 1);
    if (CHECK_EQ_INT(config_load(&c, NULL, err, sizeof err), 0))
        CHECK_EQ_STR(c.group, "env");
    config_free(&c);

    b = write_conf("explicit.conf", "[network]\ngroup = explicit\n");
    if (CHECK_EQ_INT(config_load(&c, b, err, sizeof err), 0))
        CHECK_EQ_STR(c.group, "explicit");
    config_free(&c);

    /* $P2P_CONF naming a missing file is an error, not a fallback. */
    snprintf(p, sizeof p, "%s/nope.conf", dir);
    setenv("P2P_CONF", p, 1);
    err[0] = '\0';
    CHECK_EQ_INT(config_load(&c, NULL, err, sizeof err), -1);
    CHECK_CONTAINS(err, "nope.conf");
    config_free(&c);
    setenv("P2P_CONF", "", 1);
    env_teardown();
}

/* Load content, expect failure with all of the hints in the message. */
static void
load_fails_at(const char *file, int line, const char *content,
              const char *hint1, const char *hint2)
{
    struct p2p_config c;
    char err[512] = "";
    const char *path;

    path = write_conf("bad.conf", content);
    if (config_load(&c, path, err, sizeof err) != -1) {
        test_fail(file, line, "accepted: %s", content);
    } else {
        if (strstr(err, hint1) == NULL)
            test_fail(file, line, "error \"%s\" lacks \"%s\"", err, hint1);
        if (hint2 != NULL && strstr(err, hint2) == NULL)
            test_fail(file, line, "error \"%s\" lacks \"%s\"", err, hint2);
    }
    /* config_load leaves what it loaded so far; freeing is always fine. */
    config_free(&c);
}
#define LOAD_FAILS(content, h1, h2)                                            \
    load_fails_at(__FILE__, __LINE__, content, h1, h2)

static void
t_unknown_key(void)
{
    char where[PATH_MAX + 32];

    if (env_setup() == -1)
        return;
    snprintf(where, sizeof where, "%s/bad.conf:3", dir);
    LOAD_FAILS("[network]\ngroup = x\ngruop = y\n", where, "gruop");
    LOAD_FAILS("[network]\n\n\n\n[peer]\nslot = 4\n", "bad.conf:6",
               "unknown key");
    /* A known key in the wrong section is unknown there. */
    LOAD_FAILS("[peer]\ngroup = x\n", "bad.conf:2", "unknown key");
    LOAD_FAILS("[networks]\ngroup = x\n", "bad.conf:2", "unknown key");
    /* Keys outside any section. */
    LOAD_FAILS("group = x\n", "bad.conf:1", "unknown key");
    env_teardown();
}

static void
t_bad_integer(void)
{
    if (env_setup() == -1)
        return;
    LOAD_FAILS("[peer]\nslots = many\n", "bad.conf:2", "slots");
    LOAD_FAILS("[peer]\nslots = 12x\n", "bad.conf:2", "not a number");
    LOAD_FAILS("[peer]\nslots =\n", "bad.conf:2", "not a number");
    LOAD_FAILS("[peer]\nslots = -1\n", "bad.conf:2", "0 to 4096");
    LOAD_FAILS("[peer]\nslots = 4097\n", "bad.conf:2", "not a number");
    LOAD_FAILS("[peer]\nheartbeat_ms = 49\n", "bad.conf:2", "heartbeat_ms");
    LOAD_FAILS("[supernode]\nexpire = 0\n", "bad.conf:2", "expire");
    LOAD_FAILS("[supernode]\nexpire = 3601\n", "bad.conf:2", "expire");
    LOAD_FAILS("[network]\nhandshake_timeout_ms = 99999999999999999999\n",
               "bad.conf:2", "handshake_timeout_ms");
    LOAD_FAILS("[network]\nhandshake_timeout_ms = 4294967396\n", "bad.conf:2",
               "handshake_timeout_ms");
    env_teardown();
}

/* The limits themselves are accepted. */
static void
t_integer_limits(void)
{
    struct p2p_config c;
    char err[512] = "";
    const char *path;

    if (env_setup() == -1)
        return;
    path = write_conf("p2p.conf", "[peer]\nslots = 4096\nheartbeat_ms = 50\n"
                                  "[supernode]\nexpire = 1\n"
                                  "[network]\nhandshake_timeout_ms = 60000\n");
    if (CHECK_EQ_INT(config_load(&c, path, err, sizeof err), 0)) {
        CHECK_EQ_INT(c.slots, 4096);
        CHECK_EQ_INT(c.heartbeat_ms, 50);
        CHECK_EQ_INT(c.sn_expire, 1);
        CHECK_EQ_INT(c.handshake_timeout_ms, 60000);
    }
    config_free(&c);
    path = write_conf("p2p.conf", "[peer]\nslots = 0\n");
    if (CHECK_EQ_INT(config_load(&c, path, err, sizeof err), 0))
        CHECK_EQ_INT(c.slots, 0);
    config_free(&c);
    env_teardown();
}

static void
t_syntax_error(void)
{
    if (env_setup() == -1)
        return;
    LOAD_FAILS("[network]\ngroup = x\nthis line is not ini\n", "bad.conf:3",
               NULL);
    LOAD_FAILS("[network\ngroup = x\n", "bad.conf:1", NULL);
    env_teardown();
}

/* With several mistakes, the message describes the line it names. */
static void
t_first_error_reported(void)
{
    if (env_setup() == -1)
        return;
    LOAD_FAILS("[peer]\nbogus = 1\nslots = x\n", "bad.conf:2", "bogus");
    LOAD_FAILS("[peer]\nslots = x\nbogus = 1\n", "bad.conf:2", "slots");
    env_teardown();
}

static void
t_missing_explicit(void)
{
    struct p2p_config c;
    char err[512] = "", path[PATH_MAX + 32];

    if (env_setup() == -1)
        return;
    snprintf(path, sizeof path, "%s/does-not-exist.conf", dir);
    CHECK_EQ_INT(config_load(&c, path, err, sizeof err), -1);
    CHECK_CONTAINS(err, path);
    CHECK_CONTAINS(err, strerror(ENOENT));
    config_free(&c);
    /* A directory is not a configuration file. */
    err[0] = '\0';
    if (config_load(&c, dir, err, sizeof err) == 0)
        test_fail(__FILE__, __LINE__, "a directory was accepted as config");
    config_free(&c);
    env_teardown();
}

static void
t_supernode_limits(void)
{
    struct p2p_config c;
    char err[512] = "", list[1024], one[32], content[1200];
    int i;

    if (env_setup() == -1)
        return;
    memset(&c, 0, sizeof c);
    for (i = 0; i < CONF_MAX_SUPERNODES; i++) {
        snprintf(one, sizeof one, "h%d:1", i);
        CHECK_EQ_INT(config_add_supernode(&c, one), 0);
    }
    CHECK_EQ_INT(config_add_supernode(&c, "one-too-many:1"), -1);
    CHECK_EQ_INT(c.nsupernodes, CONF_MAX_SUPERNODES);
    CHECK_EQ_STR(c.supernodes[CONF_MAX_SUPERNODES - 1], "h15:1");

    /* set replaces the whole list. */
    CHECK_EQ_INT(config_set_supernodes(&c, "a:1,b:2"), 0);
    CHECK_EQ_INT(c.nsupernodes, 2);
    CHECK_EQ_STR(c.supernodes[1], "b:2");
    CHECK_EQ_INT(config_set_supernodes(&c, ""), 0);
    CHECK_EQ_INT(c.nsupernodes, 0);

    list[0] = '\0';
    for (i = 0; i < CONF_MAX_SUPERNODES; i++) {
        snprintf(one, sizeof one, "%sh%d:1", i ? "," : "", i);
        strcat(list, one);
    }
    CHECK_EQ_INT(config_set_supernodes(&c, list), 0);
    CHECK_EQ_INT(c.nsupernodes, CONF_MAX_SUPERNODES);
    strcat(list, ",h16:1");
    CHECK_EQ_INT(config_set_supernodes(&c, list), -1);
    CHECK(c.nsupernodes <= CONF_MAX_SUPERNODES);
    config_free(&c);

    /* The same limit in a file. */
    snprintf(content, sizeof content, "[network]\nsupernodes = %s\n", list);
    LOAD_FAILS(content, "bad.conf:2", "more than 16");
    (void)err;
    env_teardown();
}

static void
t_set_str(void)
{
    char *field = NULL;

    config_set_str(&field, "one");
    CHECK_EQ_STR(field, "one");
    config_set_str(&field, "two");
    CHECK_EQ_STR(field, "two");
    config_set_str(&field, NULL);
    CHECK(field == NULL);
}

/* conf/p2p.conf documents every key: it must parse, with its values. */
static void
t_example_conf(void)
{
    struct p2p_config c;
    char err[512];

    if (!CHECK_EQ_INT(config_load(&c, P2P_EXAMPLE_CONF, err, sizeof err), 0))
        fprintf(stderr, "%s\n", err);
    CHECK_EQ_STR(c.group, "lab");
    CHECK_EQ_INT(c.nsupernodes, 1);
    CHECK_EQ_INT(c.sn_expire, 10);
    CHECK_EQ_INT(c.sharing, 1);
    CHECK_EQ_INT(c.cache_mb, 1024);
    CHECK_EQ_INT(c.lease_ms, 5000);
    CHECK_EQ_STR(c.strategy, "spread");
    config_free(&c);
}

static const struct test_case cases[] = {
    {"conf/p2p.conf parses", t_example_conf},
    {"defaults", t_defaults},
    {"empty_file", t_empty_file},
    {"every_key", t_every_key},
    {"repeated_key", t_repeated_key},
    {"supernode_list", t_supernode_list},
    {"relative_paths", t_relative_paths},
    {"search_order", t_search_order},
    {"unknown_key", t_unknown_key},
    {"bad_integer", t_bad_integer},
    {"integer_limits", t_integer_limits},
    {"syntax_error", t_syntax_error},
    {"first_error_reported", t_first_error_reported},
    {"missing_explicit", t_missing_explicit},
    {"supernode_limits", t_supernode_limits},
    {"set_str", t_set_str},
};

TEST_MAIN(cases)
