#!/bin/sh
# A trivial job: every rank says who and where it is.
echo "hello from rank $P2P_RANK of $P2P_SIZE (replica $P2P_REPLICA of $P2P_NREPLICAS) on host $P2P_HOST"
