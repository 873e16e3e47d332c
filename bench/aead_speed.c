/*
 * aead_speed: how fast the MPI data path's AEAD (proto/aead.c: libcrypto
 * EVP, and ipsec-mb for AES-256-GCM where proto/imb.h can use it) seals
 * and opens on this machine, for each cipher and library it offers, in
 * the transport's frame size.  The source cycles through a buffer larger
 * than the caches, as a program's 1 MiB messages do; the sealed frame is
 * one reused buffer, as the transport's is.  Prints, per cipher,
 *     <cipher> seal_gbs <GB/s> open_gbs <GB/s> seal_ns <ns> open_ns <ns>
 * (the last two per frame: what a small message pays), and for scale
 * the same two passes as plain copies (what a socket copy costs at
 * best: into the frame from the source, out of it into the destination)
 *     memcpy in_gbs <GB/s> out_gbs <GB/s>
 * Usage: aead_speed [MiB-TO-SEAL [FRAME-BYTES [SOURCE-MiB]]]
 *        (default 1024, 262144, 64; a source of 1 MiB stays in cache)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aead.h"
#include "imb.h"


static double
now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
    static const struct {
        enum aead_cipher cipher;
        enum aead_lib lib;
    } ciphers[] = {{AEAD_AES256GCM, AEAD_LIB_IPSECMB},
                   {AEAD_AES256GCM, AEAD_LIB_LIBCRYPTO},
                   {AEAD_CHACHA20POLY1305, AEAD_LIB_LIBCRYPTO}};
    size_t total = (size_t)(argc > 1 ? atol(argv[1]) : 1024) << 20;
    size_t frame = argc > 2 ? (size_t)atol(argv[2]) : 262144;
    uint8_t key[AEAD_KEY_LEN], nonce[AEAD_NONCE_LEN], ad[72];
    uint8_t *src, *dst, *sealed;
    size_t srcmax = (size_t)(argc > 3 ? atol(argv[3]) : 64) << 20;
    size_t c, done, off, n;
    double t0, ts, to;

    if (frame == 0 || frame > srcmax || total == 0) {
        fprintf(stderr, "usage: aead_speed [MiB [FRAME-BYTES [SOURCE-MiB]]]\n");
        return 2;
    }
    src = malloc(srcmax);
    dst = malloc(srcmax);
    sealed = malloc(frame + AEAD_TAG_LEN);
    if (src == NULL || dst == NULL || sealed == NULL)
        return 1;
    memset(src, 0x5c, srcmax);
    memset(dst, 0, srcmax);
    memset(key, 0x42, sizeof key);
    memset(ad, 0x17, sizeof ad);
    for (c = 0; c < sizeof ciphers / sizeof ciphers[0]; c++) {
        struct aead *tx, *rx;

        if (ciphers[c].lib == AEAD_LIB_IPSECMB && !imb_ready()) {
            printf("# %s from ipsec-mb: not used here (%s)\n",
                   aead_name(ciphers[c].cipher), imb_status());
            continue;
        }
        tx = aead_new_from(ciphers[c].cipher, key, ciphers[c].lib);
        rx = aead_new_from(ciphers[c].cipher, key, ciphers[c].lib);
        if (tx == NULL || rx == NULL)
            return 1;
        ts = to = 0;
        for (done = 0, off = 0; done < total; done += n, off += n) {
            if (off + frame > srcmax)
                off = 0;
            n = frame;
            aead_nonce(nonce, done / frame);
            t0 = now();
            if (aead_seal(tx, sealed, src + off, n, ad, sizeof ad, nonce))
                return 1;
            ts += now() - t0;
            t0 = now();
            if (aead_open(rx, dst + off, sealed, n + AEAD_TAG_LEN, ad,
                          sizeof ad, nonce))
                return 1;
            to += now() - t0;
        }
        printf("%s/%s seal_gbs %.2f open_gbs %.2f seal_ns %.0f open_ns "
               "%.0f\n",
               aead_name(ciphers[c].cipher), aead_lib_name(tx),
               (double)total / ts / 1e9,
               (double)total / to / 1e9, ts * 1e9 / (double)(total / frame),
               to * 1e9 / (double)(total / frame));
        aead_free(tx);
        aead_free(rx);
    }
    ts = to = 0;
    for (done = 0, off = 0; done < total; done += frame, off += frame) {
        if (off + frame > srcmax)
            off = 0;
        t0 = now();
        memcpy(sealed, src + off, frame);
        ts += now() - t0;
        t0 = now();
        memcpy(dst + off, sealed, frame);
        to += now() - t0;
    }
    printf("memcpy in_gbs %.2f out_gbs %.2f\n", (double)total / ts / 1e9,
           (double)total / to / 1e9);
    free(src);
    free(dst);
    free(sealed);
    return 0;
}
