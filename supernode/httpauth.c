/*
 * Where the dashboard's token is found in a request's headers
 * (supernode/http.c): the bearer of an Authorization header, and one
 * cookie of a Cookie header.  Pure string work on untrusted bytes, no
 * libevent, so that a unit test and a fuzzer drive it.
 */
#include <string.h>
#include <strings.h>

#include "supernode.h"

const char *
httpauth_bearer(const char *authorization)
{
    const char *p;

    if (authorization == NULL || strncasecmp(authorization, "Bearer", 6) != 0)
        return NULL;
    p = authorization + 6;
    if (*p != ' ' && *p != '\t')
        return NULL;
    while (*p == ' ' || *p == '\t')
        p++;
    return *p != '\0' ? p : NULL;
}

int
httpauth_cookie(const char *header, const char *name, char *out, size_t outlen)
{
    size_t nl = strlen(name), vl;
    const char *p = header, *v;

    if (header == NULL || outlen == 0)
        return -1;
    while (*p != '\0') {
        /* At the start of a pair: skip the separators. */
        while (*p == ' ' || *p == '\t' || *p == ';')
            p++;
        if (strncmp(p, name, nl) == 0 && p[nl] == '=') {
            v = p + nl + 1;
            vl = strcspn(v, "; \t");
            if (vl >= outlen)
                return -1;
            memcpy(out, v, vl);
            out[vl] = '\0';
            return 0;
        }
        if ((p = strchr(p, ';')) == NULL)
            break;
    }
    return -1;
}
