/*
 * The address table stream of the control socket (proto/ctltable.c): the
 * input is a sequence of messages, each a 2-byte little-endian length and
 * its bytes, fed to a receiver as the MPI library does.  Besides "no
 * crash", checks the contract: a complete table has every entry it
 * announced, each address terminated; a refusal says why.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctltable.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ctl_table_rx rx;
    size_t len, off = 0;
    uint32_t i;
    int rc = 0;

    ctl_table_rx_init(&rx, 4096);
    while (rc == 0 && size - off >= 2) {
        len = (size_t)data[off] | (size_t)data[off + 1] << 8;
        off += 2;
        if (len > size - off)
            len = size - off;
        rc = ctl_table_rx_feed(&rx, data + off, len);
        off += len;
    }
    if (rc == 1) {
        if (rx.have != rx.n || rx.n > 4096 || (rx.n > 0 && rx.tab == NULL))
            abort();
        for (i = 0; i < rx.n; i++)
            if (memchr(rx.tab[i].addr, '\0', sizeof rx.tab[i].addr) == NULL)
                abort();
    }
    if (rc == -1 && rx.err[0] == '\0')
        abort();
    ctl_table_rx_free(&rx);
    return 0;
}
