/*
 * Who this peer is: its state directory (locked, so two daemons never
 * share one), its long-lived node signing key, and its default host label.
 */
#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "peerd.h"
#include "xmalloc.h"

int
identity_state_dir(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    char *lock;
    int fd;

    if (mkdir(dir, 0700) == -1 && errno != EEXIST) {
        snprintf(err, errlen, "state directory %s: %s", dir, strerror(errno));
        return -1;
    }
    if (stat(dir, &st) == -1 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "state directory %s: not a directory", dir);
        return -1;
    }
    if (st.st_uid != geteuid()) {
        snprintf(err, errlen, "state directory %s: owned by uid %u, not us",
                 dir, (unsigned)st.st_uid);
        return -1;
    }
    xasprintf(&lock, "%s/peerd.lock", dir);
    fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    free(lock);
    if (fd == -1) {
        snprintf(err, errlen, "state directory %s: %s", dir, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
        snprintf(err, errlen, "state directory %s is in use by another peerd",
                 dir);
        close(fd);
        return -1;
    }
    /* fd stays open: the lock lasts as long as we do. */
    return 0;
}

int
identity_node_key(const char *dir, uint8_t pk[SEC_SIGN_PK_LEN],
                  uint8_t sk[SEC_SIGN_SK_LEN], char *err, size_t errlen)
{
    char *path;
    int rc;

    xasprintf(&path, "%s/node.key", dir);
    if (access(path, F_OK) == -1 && errno == ENOENT) {
        sec_sign_keypair(pk, sk);
        rc = sec_keyfile_write(path, sk, SEC_SIGN_SK_LEN, 0600, err, errlen);
    } else {
        rc = sec_keyfile_read(path, sk, SEC_SIGN_SK_LEN, 1, err, errlen);
        if (rc == 0)
            sec_sign_sk_to_pk(pk, sk);
    }
    free(path);
    return rc;
}

void
identity_machine_label(char *out, size_t len)
{
    char buf[128];
    FILE *f;
    size_t n;

    if ((f = fopen("/etc/machine-id", "r")) != NULL) {
        if (fgets(buf, sizeof buf, f) != NULL) {
            buf[strcspn(buf, "\r\n")] = '\0';
            if (strlen(buf) >= 12) {
                /* Twelve hex digits are unique enough within a lab. */
                snprintf(out, len, "%.12s", buf);
                fclose(f);
                return;
            }
        }
        fclose(f);
    }
    if (gethostname(buf, sizeof buf) == 0) {
        buf[sizeof buf - 1] = '\0';
        for (n = 0; buf[n] != '\0'; n++)
            if (buf[n] <= ' ' || buf[n] > '~')
                buf[n] = '_';
        snprintf(out, len, "%s", buf[0] ? buf : "localhost");
        return;
    }
    snprintf(out, len, "localhost");
}

char *
identity_default_state_dir(void)
{
    const char *home, *xdg;
    char *p;

    if (geteuid() == 0)
        return xstrdup("/var/lib/p2p");
    if ((xdg = getenv("XDG_STATE_HOME")) != NULL && *xdg == '/') {
        xasprintf(&p, "%s/p2p", xdg);
        return p;
    }
    if ((home = getenv("HOME")) != NULL && *home == '/') {
        xasprintf(&p, "%s/.local/state", home);
        (void)mkdir(p, 0700);
        free(p);
        xasprintf(&p, "%s/.local/state/p2p", home);
        return p;
    }
    xasprintf(&p, "/tmp/p2p-%u", (unsigned)getuid());
    return p;
}
