#!/bin/sh
# One evaluation of the sweep (examples/sweep.sh): the input line "ALPHA
# BETA" is one argument; prints "ALPHA BETA SCORE".
set -eu
set -- $1
awk -v a="$1" -v b="$2" 'BEGIN {
    s = 0
    for (i = 1; i <= 200000; i++) s += (a * i % 7 - b) ^ 2 / i
    printf "%s %s %.4f\n", a, b, s
}'
