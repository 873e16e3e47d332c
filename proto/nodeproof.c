/*
 * Making and checking node-key proofs (see nodeproof.h).
 */
#include <stdio.h>
#include <string.h>

#include "nodeproof.h"

#define NODEPROOF_LABEL "p2p-node-proof\0\0" /* 16 bytes */

static void
nodeproof_bytes(const struct channel *ch, uint8_t out[16 + SEC_HASH_LEN])
{
    memcpy(out, NODEPROOF_LABEL, 16);
    memcpy(out + 16, channel_session_id(ch), SEC_HASH_LEN);
}

void
nodeproof_challenge(const uint8_t *want, struct msg *out)
{
    memset(out, 0, sizeof *out);
    out->type = MSG_NODE_CHALLENGE;
    if (want != NULL)
        memcpy(out->u.node.node_key, want, SEC_SIGN_PK_LEN);
}

void
nodeproof_make(const struct channel *ch, const uint8_t pk[SEC_SIGN_PK_LEN],
               const uint8_t sk[SEC_SIGN_SK_LEN], struct msg *out)
{
    uint8_t buf[16 + SEC_HASH_LEN];

    memset(out, 0, sizeof *out);
    out->type = MSG_NODE_PROOF;
    memcpy(out->u.node.node_key, pk, SEC_SIGN_PK_LEN);
    nodeproof_bytes(ch, buf);
    sec_sign(out->u.node.signature, buf, sizeof buf, sk);
}

int
nodeproof_check(const struct channel *ch, const struct msg_node *p,
                const uint8_t want[SEC_SIGN_PK_LEN], char *why, size_t whylen)
{
    uint8_t buf[16 + SEC_HASH_LEN];
    char got[17], exp[17];

    if (!sec_equal(p->node_key, want, SEC_SIGN_PK_LEN)) {
        snprintf(why, whylen,
                 "the peer at this address is node %s, not the registered "
                 "node %s",
                 sec_hex(got, p->node_key, 8), sec_hex(exp, want, 8));
        return -1;
    }
    nodeproof_bytes(ch, buf);
    if (sec_verify(p->signature, buf, sizeof buf, want) == -1) {
        snprintf(why, whylen, "node key proof does not verify");
        return -1;
    }
    return 0;
}
