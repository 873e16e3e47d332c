/*
 * The user's signing key: what peers' access lists name.  Made on first
 * use, like an ssh key, and kept secret (0600).
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpjrun.h"
#include "xmalloc.h"

int
userkey_load(const char *path, uint8_t pk[SEC_SIGN_PK_LEN],
             uint8_t sk[SEC_SIGN_SK_LEN], int *created, char *err,
             size_t errlen)
{
    char *def = NULL, *pub, *slash;
    const char *home = NULL;
    int rc;

    *created = 0;
    if (path == NULL) {
        if ((home = getenv("HOME")) == NULL || *home != '/') {
            snprintf(err, errlen, "no user key: set [run] user_key or HOME");
            return -1;
        }
        xasprintf(&def, "%s/.config/p2p/user.key", home);
        path = def;
    }
    if (access(path, F_OK) == 0) {
        rc = sec_keyfile_read(path, sk, SEC_SIGN_SK_LEN, 1, err, errlen);
        if (rc == 0)
            sec_sign_sk_to_pk(pk, sk);
        free(def);
        return rc;
    }
    /* First use: make the directories and the key pair. */
    if (def != NULL) {
        xasprintf(&pub, "%s/.config", home);
        (void)mkdir(pub, 0700);
        free(pub);
        xasprintf(&pub, "%s/.config/p2p", home);
        (void)mkdir(pub, 0700);
        free(pub);
    } else if ((slash = strrchr(path, '/')) != NULL && slash != path) {
        pub = xstrndup(path, (size_t)(slash - path));
        (void)mkdir(pub, 0700);
        free(pub);
    }
    sec_sign_keypair(pk, sk);
    xasprintf(&pub, "%s.pub", path);
    rc = sec_keyfile_write(path, sk, SEC_SIGN_SK_LEN, 0600, err, errlen);
    if (rc == 0) {
        unlink(pub); /* a stale public half must not disagree */
        rc = sec_keyfile_write(pub, pk, SEC_SIGN_PK_LEN, 0644, err, errlen);
    }
    if (rc == 0)
        *created = 1;
    free(pub);
    free(def);
    return rc;
}

void
userkey_auth(struct msg *m, struct channel *ch,
             const uint8_t pk[SEC_SIGN_PK_LEN],
             const uint8_t sk[SEC_SIGN_SK_LEN])
{
    uint8_t buf[16 + SEC_HASH_LEN];
    const char *user = getenv("USER");

    memset(m, 0, sizeof *m);
    m->type = MSG_USER_AUTH;
    memcpy(m->u.auth.user_key, pk, SEC_SIGN_PK_LEN);
    memcpy(buf, "p2p-user\0\0\0\0\0\0\0\0", 16);
    memcpy(buf + 16, channel_session_id(ch), SEC_HASH_LEN);
    sec_sign(m->u.auth.signature, buf, sizeof buf, sk);
    if (user != NULL && codec_valid_token(user, WIRE_MAX_LABEL))
        snprintf(m->u.auth.user, sizeof m->u.auth.user, "%s", user);
}
