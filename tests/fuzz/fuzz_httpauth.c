/*
 * Fuzz the dashboard's token lookup in request headers
 * (supernode/httpauth.c): any bytes as an Authorization or Cookie header
 * must give a token within the header, or nothing, and a cookie value
 * within its buffer, terminated.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "supernode.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *hdr = malloc(size + 1), out[64];
    const char *b;

    if (hdr == NULL)
        return 0;
    memcpy(hdr, data, size);
    hdr[size] = '\0';
    b = httpauth_bearer(hdr);
    if (b != NULL && (b < hdr || b >= hdr + strlen(hdr) || *b == '\0'))
        abort();
    memset(out, 'x', sizeof out);
    if (httpauth_cookie(hdr, "p2p_dashboard", out, sizeof out) == 0) {
        if (memchr(out, '\0', sizeof out) == NULL || strstr(hdr, out) == NULL)
            abort();
    }
    free(hdr);
    return 0;
}
