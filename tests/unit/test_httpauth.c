/*
 * The dashboard's token in request headers (supernode/httpauth.c): the
 * bearer of an Authorization header and one cookie of a Cookie header,
 * over well-formed, odd and hostile headers.
 */
#include <string.h>

#include "supernode.h"
#include "test.h"

struct bearer_case {
    const char *header, *want; /* want NULL: none */
};

static void
t_bearer(void)
{
    static const struct bearer_case cases[] = {
        {"Bearer abc", "abc"},
        {"bearer abc", "abc"},
        {"BEARER   abc", "abc"},
        {"Bearer\tabc", "abc"},
        {"Bearer", NULL},
        {"Bearer ", NULL},
        {"Bearerabc", NULL},
        {"Basic dXNlcjpwYXNz", NULL},
        {"", NULL},
        {NULL, NULL},
    };
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = httpauth_bearer(cases[i].header);

        if (cases[i].want == NULL)
            CHECK(got == NULL);
        else if (CHECK(got != NULL))
            CHECK_EQ_STR(got, cases[i].want);
    }
}

struct cookie_case {
    const char *header, *want; /* want NULL: -1 */
};

static void
t_cookie(void)
{
    static const struct cookie_case cases[] = {
        {"p2p_dashboard=tok", "tok"},
        {"a=1; p2p_dashboard=tok; b=2", "tok"},
        {"a=1;p2p_dashboard=tok", "tok"},
        {"x_p2p_dashboard=evil; p2p_dashboard=tok", "tok"},
        {"p2p_dashboard_x=evil", NULL},
        {"p2p_dashboard=", ""},
        {"a=p2p_dashboard=evil", NULL},
        {"; ; ;", NULL},
        {"", NULL},
        {NULL, NULL},
    };
    char out[16];
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc =
            httpauth_cookie(cases[i].header, "p2p_dashboard", out, sizeof out);

        if (cases[i].want == NULL)
            CHECK_EQ_INT(rc, -1);
        else if (CHECK_EQ_INT(rc, 0))
            CHECK_EQ_STR(out, cases[i].want);
    }
}

/* A value longer than the room for it is refused, never cut. */
static void
t_cookie_too_long(void)
{
    char out[8];

    CHECK_EQ_INT(httpauth_cookie("p2p_dashboard=1234567", "p2p_dashboard", out,
                                 sizeof out),
                 0);
    CHECK_EQ_INT(httpauth_cookie("p2p_dashboard=12345678", "p2p_dashboard", out,
                                 sizeof out),
                 -1);
}

static const struct test_case cases[] = {
    {"bearer", t_bearer},
    {"cookie", t_cookie},
    {"cookie too long", t_cookie_too_long},
};

TEST_MAIN(cases)
