/*
 * The worker protocol's decoder (proto/taskframe.c) over arbitrary bytes,
 * as peerd reads a worker's stdout: fed in pieces whose sizes come from the
 * input, both directions, a small limit and the default.  Besides "no
 * crash", checks the contract: a frame accepted is within the limit, has a
 * task number, and re-encodes to the bytes it came from; a frame streamed
 * in pieces (a stream limit set) comes as pieces of the bytes fed, in
 * order, first and last marked, adding up to its length; once the decoder
 * fails it refuses everything.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "taskframe.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
run(const uint8_t *data, size_t size, enum taskframe_kind kind, uint32_t max,
    uint32_t stream)
{
    struct taskframe_dec d;
    struct taskframe f;
    uint8_t h[TASKFRAME_RESULT_HDR];
    size_t hl = kind == TASKFRAME_TASK ? TASKFRAME_TASK_HDR
                                       : TASKFRAME_RESULT_HDR;
    size_t off = 0, start = 0, piece, used, got = 0;
    int rc;

    taskframe_dec_init(&d, kind, max);
    taskframe_dec_stream(&d, stream);
    while (off < size) {
        /* The first byte of each piece says how long it is. */
        piece = 1 + data[off] % 64;
        if (piece > size - off)
            piece = size - off;
        rc = taskframe_feed(&d, data + off, piece, &used, &f);
        if (used > piece)
            abort();
        off += used;
        if (rc == -1) {
            if (taskframe_feed(&d, data, size, &used, &f) != -1)
                abort();
            break;
        }
        if (rc == 0) {
            if (used != piece)
                abort();
            continue;
        }
        if (rc == 2) {
            /* A piece: the last bytes taken, of a frame over the limit. */
            if (stream == 0 || f.len == 0 || f.len > used ||
                f.data != data + off - f.len || f.first != (got == 0) ||
                f.task == 0)
                abort();
            got += f.len;
            if (f.last) {
                if (got <= stream || off - start != hl + got)
                    abort();
                got = 0;
                start = off;
            }
            continue;
        }
        if (got != 0 || (stream > 0 && f.len > stream))
            abort();
        if (f.task == 0 || f.len > (max ? max : TASKFRAME_MAX_DEFAULT) ||
            f.data == NULL || off - start != hl + f.len)
            abort();
        if (kind == TASKFRAME_TASK)
            taskframe_task_header(h, f.task, (uint32_t)f.len);
        else
            taskframe_result_header(h, f.task, f.status, (uint32_t)f.len);
        if (memcmp(h, data + start, hl) != 0 ||
            memcmp(f.data, data + start + hl, f.len) != 0)
            abort();
        free(f.data);
        start = off;
    }
    taskframe_dec_free(&d);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    run(data, size, TASKFRAME_RESULT, 64, 0);
    run(data, size, TASKFRAME_RESULT, 0, 0);
    run(data, size, TASKFRAME_TASK, 64, 0);
    run(data, size, TASKFRAME_RESULT, 64, 8);
    run(data, size, TASKFRAME_RESULT, 0, 16);
    return 0;
}
