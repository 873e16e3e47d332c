/*
 * A tiny test harness: each test program is a table of named cases run in
 * order.  CHECK* macros record a failure with file:line and the case name
 * and let the case go on; test_run() prints one line per failed case and,
 * as its very last line, "N passed, N failed", and returns non-zero if
 * anything failed.  Header only, so a test is one .c file.
 *
 *     static void t_roundtrip(void) { CHECK_EQ_INT(f(1), 2); }
 *     static const struct test_case cases[] = {
 *         {"roundtrip", t_roundtrip},
 *     };
 *     TEST_MAIN(cases)
 */
#ifndef P2P_TEST_H
#define P2P_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct test_case {
    const char *name;
    void (*fn)(void);
};

/* The case running now and how many checks failed in it. */
static const char *test_current_name = "?";
static int test_current_failures;

static inline void test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Record one failed check. */
static inline void
test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;

    test_current_failures++;
    fprintf(stderr, "%s:%d: [%s] FAIL: ", file, line, test_current_name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

/* Each macro evaluates its arguments once and yields 1 if the check
 * passed, so a case can stop early: if (!CHECK(p != NULL)) return; */
#define CHECK(cond) test_check(__FILE__, __LINE__, #cond, (cond) ? 1 : 0)

#define CHECK_EQ_INT(a, b)                                                     \
    test_check_int(__FILE__, __LINE__, #a, #b, (long long)(a), (long long)(b))

#define CHECK_EQ_STR(a, b) test_check_str(__FILE__, __LINE__, #a, #b, (a), (b))

#define CHECK_MEM(a, b, len)                                                   \
    test_check_mem(__FILE__, __LINE__, #a, #b, (a), (b), (len))

/* Substring check, for error messages. */
#define CHECK_CONTAINS(hay, needle)                                            \
    test_check_contains(__FILE__, __LINE__, #hay, (hay), (needle))

static inline int
test_check(const char *file, int line, const char *expr, int ok)
{
    if (!ok)
        test_fail(file, line, "%s", expr);
    return ok;
}

static inline int
test_check_int(const char *file, int line, const char *ea, const char *eb,
               long long a, long long b)
{
    if (a == b)
        return 1;
    test_fail(file, line, "%s == %s: %lld != %lld", ea, eb, a, b);
    return 0;
}

static inline int
test_check_str(const char *file, int line, const char *ea, const char *eb,
               const char *a, const char *b)
{
    if (a != NULL && b != NULL && strcmp(a, b) == 0)
        return 1;
    if (a == NULL && b == NULL)
        return 1;
    test_fail(file, line, "%s == %s: \"%s\" != \"%s\"", ea, eb,
              a ? a : "(null)", b ? b : "(null)");
    return 0;
}

static inline int
test_check_mem(const char *file, int line, const char *ea, const char *eb,
               const void *a, const void *b, size_t len)
{
    const uint8_t *pa = a, *pb = b;
    size_t i;

    for (i = 0; i < len; i++)
        if (pa[i] != pb[i]) {
            test_fail(file, line,
                      "%s == %s (%zu bytes): differ at %zu: %02x != %02x", ea,
                      eb, len, i, pa[i], pb[i]);
            return 0;
        }
    return 1;
}

static inline int
test_check_contains(const char *file, int line, const char *ehay,
                    const char *hay, const char *needle)
{
    if (hay != NULL && strstr(hay, needle) != NULL)
        return 1;
    test_fail(file, line, "%s contains \"%s\": got \"%s\"", ehay, needle,
              hay ? hay : "(null)");
    return 0;
}

/* Run every case; the last line printed is "N passed, N failed". */
static inline int
test_run(const struct test_case *cases, size_t n)
{
    size_t i, passed = 0, failed = 0;

    for (i = 0; i < n; i++) {
        test_current_name = cases[i].name;
        test_current_failures = 0;
        cases[i].fn();
        if (test_current_failures == 0) {
            passed++;
            printf("ok   %s\n", cases[i].name);
        } else {
            failed++;
            printf("FAIL %s (%d checks)\n", cases[i].name,
                   test_current_failures);
        }
        fflush(stdout);
    }
    test_current_name = "?";
    printf("%zu passed, %zu failed\n", passed, failed);
    fflush(stdout);
    return failed != 0;
}

#define TEST_MAIN(cases)                                                       \
    int main(void)                                                             \
    {                                                                          \
        return test_run(cases, sizeof(cases) / sizeof((cases)[0]));            \
    }

#endif
