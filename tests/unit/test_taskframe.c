/*
 * The worker protocol's frames (proto/taskframe.c): the byte layout that
 * workers in other languages are written against, decoding fed in any
 * pieces, and every malformed frame refused before its payload is
 * allocated.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "taskframe.h"
#include "test.h"

/* A result frame of task with status and payload, into buf; its size. */
static size_t
result_frame(uint8_t *buf, uint64_t task, int32_t status, const char *data)
{
    size_t n = strlen(data);

    taskframe_result_header(buf, task, status, (uint32_t)n);
    memcpy(buf + TASKFRAME_RESULT_HDR, data, n);
    return TASKFRAME_RESULT_HDR + n;
}

/* The layout is the contract docs/tasks.md gives worker authors. */
static void
t_layout(void)
{
    uint8_t h[TASKFRAME_RESULT_HDR];
    static const uint8_t task_want[TASKFRAME_TASK_HDR] = {
        'P', '2', 'P', 'T', 5, 0, 0, 0, 0x08, 0x07, 0x06, 0x05,
        0x04, 0x03, 0x02, 0x01};
    static const uint8_t result_want[TASKFRAME_RESULT_HDR] = {
        'P', '2', 'P', 'R', 0x00, 0x01, 0, 0, 42, 0, 0, 0,
        0,   0,   0,   0,   0xfe, 0xff, 0xff, 0xff};

    taskframe_task_header(h, 0x0102030405060708ull, 5);
    CHECK_MEM(h, task_want, sizeof task_want);
    taskframe_result_header(h, 42, -2, 256);
    CHECK_MEM(h, result_want, sizeof result_want);
}

/* Two frames fed byte by byte, then all at once, decode the same. */
static void
t_pieces(void)
{
    uint8_t buf[256];
    struct taskframe_dec d;
    struct taskframe f;
    size_t n, used, off;
    int rc, got;

    n = result_frame(buf, 7, 0, "hello");
    n += result_frame(buf + n, 8, 3, "");
    taskframe_dec_init(&d, TASKFRAME_RESULT, 0);
    got = 0;
    for (off = 0; off < n; off++) {
        rc = taskframe_feed(&d, buf + off, 1, &used, &f);
        CHECK(rc >= 0);
        CHECK_EQ_INT(used, 1);
        if (rc == 1) {
            if (got == 0) {
                CHECK_EQ_INT(f.task, 7);
                CHECK_EQ_INT(f.status, 0);
                CHECK_EQ_INT(f.len, 5);
                CHECK_MEM(f.data, "hello", 5);
                CHECK_EQ_INT(f.data[5], 0); /* NUL-ended, for text */
            } else {
                CHECK_EQ_INT(f.task, 8);
                CHECK_EQ_INT(f.status, 3);
                CHECK_EQ_INT(f.len, 0);
                CHECK(f.data != NULL);
            }
            free(f.data);
            got++;
        }
    }
    CHECK_EQ_INT(got, 2);
    CHECK(taskframe_dec_idle(&d));
    /* All at once: one frame per call, the rest fed again. */
    rc = taskframe_feed(&d, buf, n, &used, &f);
    CHECK_EQ_INT(rc, 1);
    CHECK_EQ_INT(used, TASKFRAME_RESULT_HDR + 5);
    free(f.data);
    rc = taskframe_feed(&d, buf + used, n - used, &used, &f);
    CHECK_EQ_INT(rc, 1);
    CHECK_EQ_INT(f.task, 8);
    free(f.data);
    taskframe_dec_free(&d);
}

/* A half-read frame is held, and freed by taskframe_dec_free. */
static void
t_partial(void)
{
    uint8_t buf[64];
    struct taskframe_dec d;
    struct taskframe f;
    size_t n, used;

    taskframe_dec_init(&d, TASKFRAME_TASK, 0);
    taskframe_task_header(buf, 1, 10);
    memcpy(buf + TASKFRAME_TASK_HDR, "0123", 4);
    n = TASKFRAME_TASK_HDR + 4;
    CHECK_EQ_INT(taskframe_feed(&d, buf, n, &used, &f), 0);
    CHECK_EQ_INT(used, n);
    CHECK(!taskframe_dec_idle(&d));
    taskframe_dec_free(&d);
}

/* Bad magic is named at its first wrong byte: junk on stdout (a stray
 * print) is an error at once, not after a header's worth of bytes. */
static void
t_bad_magic(void)
{
    struct taskframe_dec d;
    struct taskframe f;
    size_t used;

    taskframe_dec_init(&d, TASKFRAME_RESULT, 0);
    CHECK_EQ_INT(taskframe_feed(&d, (const uint8_t *)"hi", 2, &used, &f),
                 -1);
    CHECK_CONTAINS(d.why, "bad magic");
    /* And refuses everything after. */
    CHECK_EQ_INT(taskframe_feed(&d, (const uint8_t *)"P2PR", 4, &used, &f),
                 -1);
    taskframe_dec_free(&d);
    /* A task frame is not a result frame. */
    {
        uint8_t h[TASKFRAME_RESULT_HDR];

        taskframe_dec_init(&d, TASKFRAME_RESULT, 0);
        taskframe_task_header(h, 1, 0);
        CHECK_EQ_INT(taskframe_feed(&d, h, sizeof h, &used, &f), -1);
        taskframe_dec_free(&d);
    }
}

/* Lengths over the limit and task 0 are refused from the header alone. */
static void
t_limits(void)
{
    uint8_t h[TASKFRAME_RESULT_HDR];
    struct taskframe_dec d;
    struct taskframe f;
    size_t used;

    taskframe_dec_init(&d, TASKFRAME_RESULT, 100);
    taskframe_result_header(h, 1, 0, 101);
    CHECK_EQ_INT(taskframe_feed(&d, h, sizeof h, &used, &f), -1);
    CHECK_CONTAINS(d.why, "longer than the limit");
    taskframe_dec_free(&d);
    taskframe_dec_init(&d, TASKFRAME_RESULT, 100);
    taskframe_result_header(h, 1, 0, 100);
    CHECK_EQ_INT(taskframe_feed(&d, h, sizeof h, &used, &f), 0);
    taskframe_dec_free(&d);
    taskframe_dec_init(&d, TASKFRAME_RESULT, 0);
    taskframe_result_header(h, 0, 0, 0);
    CHECK_EQ_INT(taskframe_feed(&d, h, sizeof h, &used, &f), -1);
    CHECK_CONTAINS(d.why, "task number 0");
    taskframe_dec_free(&d);
    /* The default limit applies when none is given. */
    taskframe_dec_init(&d, TASKFRAME_TASK, 0);
    taskframe_task_header(h, 1, TASKFRAME_MAX_DEFAULT + 1);
    CHECK_EQ_INT(taskframe_feed(&d, h, TASKFRAME_TASK_HDR, &used, &f), -1);
    taskframe_dec_free(&d);
}

/* Over the stream limit, a frame comes in the pieces it was fed in,
 * never held; at or under it, whole as before; and the two mix. */
static void
t_streamed(void)
{
    uint8_t buf[256];
    struct taskframe_dec d;
    struct taskframe f;
    size_t n, used, off = 0;
    char got[64] = "";

    n = result_frame(buf, 4, 3, "0123456789abcdef");
    n += result_frame(buf + n, 5, 0, "small");
    taskframe_dec_init(&d, TASKFRAME_RESULT, 100);
    taskframe_dec_stream(&d, 8);
    /* The header and 6 payload bytes: the first piece. */
    CHECK_EQ_INT(taskframe_feed(&d, buf, TASKFRAME_RESULT_HDR + 6, &used, &f),
                 2);
    CHECK_EQ_INT((int)used, TASKFRAME_RESULT_HDR + 6);
    CHECK_EQ_INT((int)f.task, 4);
    CHECK_EQ_INT(f.status, 3);
    CHECK(f.first && !f.last);
    CHECK(f.data == buf + TASKFRAME_RESULT_HDR);
    strncat(got, (const char *)f.data, f.len);
    CHECK(!taskframe_dec_idle(&d));
    off = used;
    /* The rest and the next frame at once: the last piece, then the
     * small frame whole. */
    CHECK_EQ_INT(taskframe_feed(&d, buf + off, n - off, &used, &f), 2);
    CHECK(!f.first && f.last);
    strncat(got, (const char *)f.data, f.len);
    CHECK_EQ_STR(got, "0123456789abcdef");
    CHECK(taskframe_dec_idle(&d));
    off += used;
    CHECK_EQ_INT(taskframe_feed(&d, buf + off, n - off, &used, &f), 1);
    CHECK_EQ_INT((int)f.task, 5);
    CHECK_EQ_STR((const char *)f.data, "small");
    free(f.data);
    CHECK_EQ_INT((int)(off + used), (int)n);
    /* A header that ends the bytes fed gives no empty piece. */
    n = result_frame(buf, 6, 0, "0123456789");
    CHECK_EQ_INT(taskframe_feed(&d, buf, TASKFRAME_RESULT_HDR, &used, &f), 0);
    CHECK_EQ_INT(taskframe_feed(&d, buf + TASKFRAME_RESULT_HDR,
                                n - TASKFRAME_RESULT_HDR, &used, &f),
                 2);
    CHECK(f.first && f.last && f.len == 10);
    /* The limit still holds for streamed frames. */
    taskframe_result_header(buf, 7, 0, 101);
    CHECK_EQ_INT(taskframe_feed(&d, buf, TASKFRAME_RESULT_HDR, &used, &f),
                 -1);
    taskframe_dec_free(&d);
}

static const struct test_case cases[] = {
    {"streamed", t_streamed},
    {"layout", t_layout},       {"pieces", t_pieces},
    {"partial", t_partial},     {"bad_magic", t_bad_magic},
    {"limits", t_limits},
};

TEST_MAIN(cases)
