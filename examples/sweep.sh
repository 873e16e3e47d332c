#!/bin/sh
# A parameter sweep with p2prun --each: one task per (alpha, beta) pair,
# each printing its score; the results also go to sweep.json, one JSON
# object per task.  Run from this directory:
#   sh sweep.sh | sort -k3 -g | head -3
# With no supernode configured it runs on the embedded local cluster.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
p2prun=${P2PRUN:-p2prun}
for a in 0.1 0.2 0.5 1 2; do
    for b in 1 2 3 4; do
        echo "$a $b"
    done
done | "$p2prun" --each - --results sweep.json -- "$here/score.sh" {}
