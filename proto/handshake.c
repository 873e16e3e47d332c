/*
 * Group-key-authenticated ephemeral key exchange (see handshake.h).
 */
#include <stdlib.h>
#include <string.h>

#include "handshake.h"
#include "xmalloc.h"

#define HS_LABEL "p2pmpi handshake v1"
#define HS_KDF_CTX "p2pgroup"

enum hs_state {
    HS_C_START,      /* client: nothing sent yet */
    HS_C_WAIT_PROOF, /* client: HELLO sent, waiting for the server's proof */
    HS_S_WAIT_HELLO, /* server: waiting for the client's HELLO */
    HS_S_WAIT_PROOF, /* server: proof sent, waiting for the client's proof */
    HS_ST_DONE,      /* keys derived */
    HS_ST_FAILED,    /* terminal */
};

struct handshake {
    enum hs_role role;
    enum hs_state state;
    uint8_t auth_key[SEC_KEY_LEN]; /* MAC key, from the group key */
    uint8_t mix_key[SEC_KEY_LEN];  /* session key mixing, from the group key */
    uint8_t group_hash[SEC_HASH_LEN];
    uint8_t pk[SEC_KX_PK_LEN], sk[SEC_KX_SK_LEN];
    uint8_t peer_pk[SEC_KX_PK_LEN];
    uint8_t transcript[SEC_HASH_LEN];
    struct hs_keys keys;
    const char *error;
};

struct handshake *
handshake_new(enum hs_role role, const uint8_t key[SEC_KEY_LEN],
              const char *group)
{
    struct handshake *hs;

    hs = xcalloc(1, sizeof *hs);
    hs->role = role;
    hs->state = role == HS_CLIENT ? HS_C_START : HS_S_WAIT_HELLO;
    sec_kdf(hs->auth_key, key, 1, HS_KDF_CTX);
    sec_kdf(hs->mix_key, key, 2, HS_KDF_CTX);
    sec_hash(hs->group_hash, group, strlen(group));
    sec_kx_keypair(hs->pk, hs->sk);
    return hs;
}

void
handshake_free(struct handshake *hs)
{
    if (hs == NULL)
        return;
    sec_wipe(hs, sizeof *hs);
    free(hs);
}

static enum hs_status
hs_fail(struct handshake *hs, const char *why)
{
    hs->state = HS_ST_FAILED;
    hs->error = why;
    return HS_FAIL;
}

/* T = H(label | H(group) | client key | server key). */
static void
hs_transcript(struct handshake *hs)
{
    struct sec_hasher h;
    const uint8_t *cpk, *spk;

    cpk = hs->role == HS_CLIENT ? hs->pk : hs->peer_pk;
    spk = hs->role == HS_CLIENT ? hs->peer_pk : hs->pk;
    sec_hasher_init(&h, NULL);
    sec_hasher_update(&h, HS_LABEL, sizeof HS_LABEL);
    sec_hasher_update(&h, hs->group_hash, sizeof hs->group_hash);
    sec_hasher_update(&h, cpk, SEC_KX_PK_LEN);
    sec_hasher_update(&h, spk, SEC_KX_PK_LEN);
    sec_hasher_final(&h, hs->transcript);
}

/* MAC over who | T with the group's authentication subkey. */
static void
hs_mac(struct handshake *hs, const char *who, uint8_t out[SEC_MAC_LEN])
{
    struct sec_hasher h;

    sec_hasher_init(&h, hs->auth_key);
    sec_hasher_update(&h, who, strlen(who) + 1);
    sec_hasher_update(&h, hs->transcript, sizeof hs->transcript);
    sec_hasher_final(&h, out);
}

/* Keyed H(mix key; what | key | T): binds session keys to the group key. */
static void
hs_mix(struct handshake *hs, const char *what, uint8_t key[SEC_KEY_LEN])
{
    struct sec_hasher h;

    sec_hasher_init(&h, hs->mix_key);
    sec_hasher_update(&h, what, strlen(what) + 1);
    sec_hasher_update(&h, key, SEC_KEY_LEN);
    sec_hasher_update(&h, hs->transcript, sizeof hs->transcript);
    sec_hasher_final(&h, key);
}

static enum hs_status
hs_derive(struct handshake *hs)
{
    uint8_t c2s[SEC_KEY_LEN], s2c[SEC_KEY_LEN];
    int rc;

    /* crypto_kx: the client's tx is the server's rx. */
    if (hs->role == HS_CLIENT)
        rc = sec_kx_client(s2c, c2s, hs->pk, hs->sk, hs->peer_pk);
    else
        rc = sec_kx_server(c2s, s2c, hs->pk, hs->sk, hs->peer_pk);
    if (rc == -1)
        return hs_fail(hs, "key exchange failed (bad public key)");
    hs_mix(hs, "client to server", c2s);
    hs_mix(hs, "server to client", s2c);
    memcpy(hs->keys.tx, hs->role == HS_CLIENT ? c2s : s2c, SEC_KEY_LEN);
    memcpy(hs->keys.rx, hs->role == HS_CLIENT ? s2c : c2s, SEC_KEY_LEN);
    memset(hs->keys.session_id, 0, SEC_KEY_LEN);
    hs_mix(hs, "session id", hs->keys.session_id);
    sec_wipe(c2s, sizeof c2s);
    sec_wipe(s2c, sizeof s2c);
    sec_wipe(hs->sk, sizeof hs->sk);
    hs->state = HS_ST_DONE;
    return HS_DONE;
}

size_t
handshake_start(struct handshake *hs, uint8_t *out)
{
    if (hs->role != HS_CLIENT || hs->state != HS_C_START) {
        hs_fail(hs, "handshake started twice");
        return 0;
    }
    memcpy(out, hs->pk, SEC_KX_PK_LEN);
    hs->state = HS_C_WAIT_PROOF;
    return SEC_KX_PK_LEN;
}

enum hs_status
handshake_input(struct handshake *hs, const uint8_t *in, size_t len,
                uint8_t *out, size_t *outlen)
{
    uint8_t mac[SEC_MAC_LEN];

    *outlen = 0;
    switch (hs->state) {
    case HS_S_WAIT_HELLO:
        if (len != SEC_KX_PK_LEN)
            return hs_fail(hs, "malformed hello");
        memcpy(hs->peer_pk, in, SEC_KX_PK_LEN);
        hs_transcript(hs);
        memcpy(out, hs->pk, SEC_KX_PK_LEN);
        hs_mac(hs, "server", out + SEC_KX_PK_LEN);
        *outlen = SEC_KX_PK_LEN + SEC_MAC_LEN;
        hs->state = HS_S_WAIT_PROOF;
        return HS_CONTINUE;
    case HS_C_WAIT_PROOF:
        if (len != SEC_KX_PK_LEN + SEC_MAC_LEN)
            return hs_fail(hs, "malformed server proof");
        memcpy(hs->peer_pk, in, SEC_KX_PK_LEN);
        hs_transcript(hs);
        hs_mac(hs, "server", mac);
        if (!sec_equal(mac, in + SEC_KX_PK_LEN, SEC_MAC_LEN))
            return hs_fail(hs, "server failed authentication "
                               "(different group key or group name)");
        if (hs_derive(hs) == HS_FAIL)
            return HS_FAIL;
        hs_mac(hs, "client", out);
        *outlen = SEC_MAC_LEN;
        return HS_DONE;
    case HS_S_WAIT_PROOF:
        if (len != SEC_MAC_LEN)
            return hs_fail(hs, "malformed client proof");
        hs_mac(hs, "client", mac);
        if (!sec_equal(mac, in, SEC_MAC_LEN))
            return hs_fail(hs, "client failed authentication "
                               "(different group key or group name)");
        return hs_derive(hs);
    case HS_C_START:
        return hs_fail(hs, "handshake message before hello");
    case HS_ST_DONE:
        return hs_fail(hs, "handshake message after completion");
    case HS_ST_FAILED:
        break;
    }
    return HS_FAIL;
}

const char *
handshake_error(const struct handshake *hs)
{
    return hs->error ? hs->error : "no error";
}

int
handshake_keys(const struct handshake *hs, struct hs_keys *k)
{
    if (hs->state != HS_ST_DONE)
        return -1;
    *k = hs->keys;
    return 0;
}
