/*
 * Aborting allocators with overflow checks.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"

void *
xmalloc(size_t size)
{
    void *p;

    if (size == 0)
        fatalx("xmalloc: zero size");
    if ((p = malloc(size)) == NULL)
        fatalx("xmalloc: allocating %zu bytes failed", size);
    return p;
}

void *
xcalloc(size_t n, size_t size)
{
    void *p;

    if (n == 0 || size == 0)
        fatalx("xcalloc: zero size");
    if ((p = calloc(n, size)) == NULL)
        fatalx("xcalloc: allocating %zu * %zu bytes failed", n, size);
    return p;
}

void *
xreallocarray(void *old, size_t n, size_t size)
{
    void *p;

    if (n == 0 || size == 0)
        fatalx("xreallocarray: zero size");
    if (SIZE_MAX / n < size)
        fatalx("xreallocarray: %zu * %zu overflows", n, size);
    if ((p = realloc(old, n * size)) == NULL)
        fatalx("xreallocarray: allocating %zu * %zu bytes failed", n, size);
    return p;
}

char *
xstrdup(const char *s)
{
    char *p;

    if ((p = strdup(s)) == NULL)
        fatalx("xstrdup: out of memory");
    return p;
}

char *
xstrndup(const char *s, size_t n)
{
    char *p;

    if ((p = strndup(s, n)) == NULL)
        fatalx("xstrndup: out of memory");
    return p;
}

int
xasprintf(char **ret, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vasprintf(ret, fmt, ap);
    va_end(ap);
    if (n < 0)
        fatalx("xasprintf: out of memory");
    return n;
}
