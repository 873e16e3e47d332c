/*
 * A federation member's summaries as a supernode receives them: the input
 * is a run of messages, each a 2-byte big-endian length and that many
 * bytes, decoded by codec_decode and, when they are summary parts, handed
 * to summary_apply as one sender's stream, a tenth of a second apart.
 * Whatever the parts say (instances, numbers, parts out of order, the
 * same node key many times), the store stays within its bounds, a refusal
 * carries a reason, and a list built from it (append, de-duplicate,
 * order) is consistent; ASan reports leaks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "supernode.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Senders and entries per sender at most (summary.c's bounds). */
#define MAX_ORIGINS 64
#define MAX_PER_ORIGIN (2 * WIRE_FED_MAX_PARTS * WIRE_FED_PART_ENTRIES)

static void
check_list(const struct summary *s, uint64_t now_ms)
{
    struct peer_entry *v = NULL;
    size_t n = 0, d, i;

    summary_append(s, now_ms, &v, &n);
    if (n != summary_entries(s))
        abort();
    d = rank_dedup(v, n);
    if (d > n)
        abort();
    for (i = 1; i < d; i++)
        if (memcmp(v[i - 1].id, v[i].id, sizeof v[i].id) >= 0)
            abort(); /* de-duplicated means strictly increasing ids */
    rank_sort(v, d);
    for (i = 1; i < d; i++)
        if (rank_compare(&v[i - 1], &v[i]) > 0)
            abort();
    free(v);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct summary *s = summary_new();
    uint64_t now = 1000;
    struct msg m;
    char err[200];
    size_t len;

    while (size >= 2) {
        len = (size_t)data[0] << 8 | data[1];
        data += 2;
        size -= 2;
        if (len > size)
            len = size;
        if (codec_decode(data, len, &m, err, sizeof err) == 0) {
            if (m.type == MSG_FED_SUMMARY) {
                err[0] = '\0';
                if (summary_apply(s, &m.u.fed, now, err, sizeof err) == -1 &&
                    err[0] == '\0')
                    abort();
            }
            codec_msg_free(&m);
        }
        data += len;
        size -= len;
        now += 100;
        if (summary_origins(s) > MAX_ORIGINS ||
            summary_entries(s) > summary_origins(s) * MAX_PER_ORIGIN)
            abort();
        /* Now and then a sender falls silent for the expiry. */
        if (len % 7 == 3)
            summary_expire(s, now - 500);
    }
    check_list(s, now);
    summary_free(s);
    return 0;
}
