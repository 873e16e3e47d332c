#!/usr/bin/env python3
"""A persistent worker for `p2prun --each INPUTS --worker`, in the standard
library only (the protocol is docs/tasks.md, "The worker protocol").

    seq 1 1000 | p2prun --each - --worker -- python3 worker.py

runs square() below on every line, in one Python per slot.  To serve your
own function, stage this file beside your script and call serve():

    # mine.py, run as: p2prun --each in.txt --worker -l worker.py -- python3 mine.py
    import worker
    worker.serve(lambda data: data.upper())

The function takes a task's input (bytes: the line) and returns its output
(bytes or str); an exception fails the task with its message.  What the
function prints goes to the task's stderr: the real stdout carries frames.
"""
import os
import struct
import sys
import traceback

TASK = struct.Struct("<4sIQ")     # "P2PT", input length, task number
RESULT = struct.Struct("<4sIQi")  # "P2PR", output length, task, status


def read_exactly(f, n):
    data = f.read(n)
    if data is None or len(data) != n:
        return None
    return data


def serve(fn):
    """Answer task frames on stdin with fn's results until stdin closes."""
    # Frames go to a private copy of stdout; stray prints go to stderr.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    inp = sys.stdin.buffer
    while True:
        hdr = read_exactly(inp, TASK.size)
        if hdr is None:
            return  # the farm is over
        magic, length, task = TASK.unpack(hdr)
        if magic != b"P2PT":
            sys.exit("worker.py: not a task frame")
        data = read_exactly(inp, length)
        if data is None:
            return
        try:
            res, status = fn(data), 0
            if isinstance(res, str):
                res = res.encode()
            elif res is None:
                res = b""
        except Exception as ex:
            traceback.print_exc()
            res, status = ("%s: %s" % (type(ex).__name__, ex)).encode(), 1
        sys.stderr.flush()  # the task's stderr before its answer
        out.write(RESULT.pack(b"P2PR", len(res), task, status) + res)
        out.flush()


def square(data):
    n = int(data)
    return "%d\n" % (n * n)


if __name__ == "__main__":
    serve(square)
