/*
 * The worker protocol's frames: headers written and read byte by byte
 * (little-endian whatever the host), payloads bounded before they are
 * allocated.  See taskframe.h for the layout.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "taskframe.h"

static void
put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t
get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

void
taskframe_task_header(uint8_t out[TASKFRAME_TASK_HDR], uint64_t task,
                      uint32_t len)
{
    memcpy(out, TASKFRAME_TASK_MAGIC, 4);
    put_u32(out + 4, len);
    put_u32(out + 8, (uint32_t)task);
    put_u32(out + 12, (uint32_t)(task >> 32));
}

void
taskframe_result_header(uint8_t out[TASKFRAME_RESULT_HDR], uint64_t task,
                        int32_t status, uint32_t len)
{
    memcpy(out, TASKFRAME_RESULT_MAGIC, 4);
    put_u32(out + 4, len);
    put_u32(out + 8, (uint32_t)task);
    put_u32(out + 12, (uint32_t)(task >> 32));
    put_u32(out + 16, (uint32_t)status);
}

void
taskframe_dec_init(struct taskframe_dec *d, enum taskframe_kind kind,
                   uint32_t max)
{
    memset(d, 0, sizeof *d);
    d->kind = kind;
    d->max = max > 0 ? max : TASKFRAME_MAX_DEFAULT;
    d->need = kind == TASKFRAME_TASK ? TASKFRAME_TASK_HDR
                                     : TASKFRAME_RESULT_HDR;
}

void
taskframe_dec_stream(struct taskframe_dec *d, uint32_t over)
{
    d->stream_over = over;
}

void
taskframe_dec_free(struct taskframe_dec *d)
{
    free(d->f.data);
    d->f.data = NULL;
}

int
taskframe_dec_idle(const struct taskframe_dec *d)
{
    return d->hlen == 0 && !d->inframe;
}

static int
taskframe_fail(struct taskframe_dec *d, const char *why)
{
    d->failed = 1;
    strncpy(d->why, why, sizeof d->why - 1);
    return -1;
}

/* Between frames again. */
static void
taskframe_reset(struct taskframe_dec *d)
{
    memset(&d->f, 0, sizeof d->f);
    d->hlen = 0;
    d->got = 0;
    d->inframe = 0;
}

/* A complete header: check it and make room for the payload. */
static int
taskframe_header(struct taskframe_dec *d)
{
    const char *magic = d->kind == TASKFRAME_TASK ? TASKFRAME_TASK_MAGIC
                                                  : TASKFRAME_RESULT_MAGIC;
    uint32_t len = get_u32(d->hdr + 4);

    if (memcmp(d->hdr, magic, 4) != 0)
        return taskframe_fail(d, d->kind == TASKFRAME_TASK
                                     ? "not a task frame (bad magic)"
                                     : "not a result frame (bad magic)");
    if (len > d->max)
        return taskframe_fail(d, "frame longer than the limit");
    d->f.task = (uint64_t)get_u32(d->hdr + 8) |
                (uint64_t)get_u32(d->hdr + 12) << 32;
    if (d->f.task == 0)
        return taskframe_fail(d, "task number 0");
    d->f.status = d->kind == TASKFRAME_RESULT ? (int32_t)get_u32(d->hdr + 16)
                                              : 0;
    d->f.len = len;
    d->got = 0;
    d->inframe = 1;
    /* Long enough to stream: never held here. */
    if (d->stream_over > 0 && len > d->stream_over)
        return 0;
    /* One more byte: a NUL after the payload, for text's sake. */
    if ((d->f.data = malloc((size_t)len + 1)) == NULL)
        return taskframe_fail(d, "out of memory for a frame");
    return 0;
}

int
taskframe_feed(struct taskframe_dec *d, const uint8_t *p, size_t n,
               size_t *used, struct taskframe *out)
{
    size_t k, off = 0;

    *used = 0;
    if (d->failed)
        return -1;
    while (off < n) {
        if (!d->inframe) {
            k = d->need - d->hlen;
            if (k > n - off)
                k = n - off;
            memcpy(d->hdr + d->hlen, p + off, k);
            d->hlen += k;
            off += k;
            /* Bad magic is known from the first differing byte: junk on
             * a worker's stdout is named at once, not after 20 bytes. */
            if (memcmp(d->hdr,
                       d->kind == TASKFRAME_TASK ? TASKFRAME_TASK_MAGIC
                                                 : TASKFRAME_RESULT_MAGIC,
                       d->hlen < 4 ? d->hlen : 4) != 0) {
                *used = off;
                return taskframe_fail(d, d->kind == TASKFRAME_TASK
                                             ? "not a task frame (bad magic)"
                                             : "not a result frame (bad "
                                               "magic)");
            }
            if (d->hlen < d->need)
                continue;
            if (taskframe_header(d) == -1) {
                *used = off;
                return -1;
            }
        }
        k = d->f.len - d->got;
        if (k > n - off)
            k = n - off;
        if (d->f.data == NULL && d->f.len > 0) {
            if (k == 0)
                break; /* the header ended the bytes: no piece yet */
            /* A piece of a streamed frame, as it came. */
            *out = d->f;
            out->data = (uint8_t *)(uintptr_t)(p + off);
            out->len = k;
            out->first = d->got == 0;
            d->got += k;
            off += k;
            out->last = d->got == d->f.len;
            if (out->last)
                taskframe_reset(d);
            *used = off;
            return 2;
        }
        memcpy(d->f.data + d->got, p + off, k);
        d->got += k;
        off += k;
        if (d->got == d->f.len) {
            d->f.data[d->f.len] = 0;
            *out = d->f;
            taskframe_reset(d);
            *used = off;
            return 1;
        }
    }
    *used = off;
    return 0;
}
