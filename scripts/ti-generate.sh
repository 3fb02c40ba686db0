#!/bin/sh
# Writes a synthetic SimGrid TI trace (an index and one file per rank) for the memory check
# of docs/cluster.md: RANKS ranks repeat a block ROUNDS times — COMPUTES computes (default
# 1), a ring exchange with isend/irecv/waitall, and every 16th round an allreduce and a
# barrier. About 66 + 20 × COMPUTES bytes per rank and round.
# usage: ti-generate.sh RANKS ROUNDS OUTDIR [COMPUTES]
set -eu
n=$1; rounds=$2; out=$3; computes=${4:-1}
mkdir -p "$out"
: > "$out/index.txt"
r=0
while [ "$r" -lt "$n" ]; do
  echo "rank$r.txt" >> "$out/index.txt"
  awk -v r="$r" -v n="$n" -v rounds="$rounds" -v computes="$computes" 'BEGIN {
    right = (r + 1) % n; left = (r + n - 1) % n
    print r, "init"
    for (i = 0; i < rounds; i++) {
      for (c = 0; c < computes; c++) print r, "compute", 100000 + (r * 7919 + i * 104729 + c) % 50000
      print r, "isend", right, 0, 4096
      print r, "irecv", left, 0, 4096
      print r, "waitall"
      if (i % 16 == 15) { print r, "allreduce", 64, 10000; print r, "barrier" }
    }
    print r, "finalize"
  }' > "$out/rank$r.txt"
  r=$((r + 1))
done
