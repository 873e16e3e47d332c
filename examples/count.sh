#!/bin/sh
# Counts to 8, slowly, so that a replica can be killed half way.
i=1
while [ $i -le 8 ]; do
    echo "rank $P2P_RANK (replica $P2P_REPLICA on $P2P_HOST) says $i"
    sleep 0.15
    i=$((i+1))
done
