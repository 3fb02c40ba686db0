#!/bin/sh
# SimGrid's replay of a TI trace, for icnlab's agreement check (docs/cluster.md).
# usage: run.sh TRACE NP [extra smpirun/--cfg options...]
# TRACE: an index (one file per rank) or a shared trace (every rank's lines in one file,
# first line `0 init`; SimGrid takes it through a one-line index, written to $OUT).
# Builds the replayer (replay.cpp) into $OUT (default /work/ext/workloads) if needed; runs
# from TRACE's folder (index entries are relative to it); prints SimGrid's output, whose
# last line is "Simulation time T".
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tracedir=$(cd "$(dirname "$1")" && pwd)
index=$tracedir/$(basename "$1")
np=$2
shift 2
out=${OUT:-/work/ext/workloads}
mkdir -p "$out"
[ -x "$out/replay" ] || smpicxx -std=c++17 -O2 "$here/replay.cpp" -o "$out/replay"
platform=${PLATFORM:-$here/../../experiments/traces/cluster_crossbar.xml}
if head -n 1 "$index" | grep -Eq '^[0-9]+ +[a-zA-Z]'; then
  echo "$index" > "$out/one-trace.index"
  index="$out/one-trace.index"
fi
hosts="$out/hostfile-$np"
i=0; : > "$hosts"; while [ $i -lt "$np" ]; do echo "node-$i.simgrid.org" >> "$hosts"; i=$((i+1)); done
cd "$tracedir"
smpirun -np "$np" -platform "$platform" -hostfile "$hosts" -replay "$index" \
  --cfg=network/model:CM02 --cfg=smpi/bw-factor:1 --cfg=smpi/lat-factor:1 \
  "$@" "$out/replay" 2>&1
