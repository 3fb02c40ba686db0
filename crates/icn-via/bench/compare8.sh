#!/usr/bin/env bash
# The 8-byte row of compare.sh on its own, with the figures side by side at full precision:
# OSU osu_latency over OpenMPI (vader) against `icnlab via pingpong --provider shm`, in
# interleaved rounds (one run of each per round, so they share the load), quiet and then
# with one core busy (a busy loop of this script's), medians of the rounds.
#
# Both sides report the same statistic: the mean one-way latency (round-trip time / 2) of
# N timed round trips after 100 untimed ones, ranks / sides pinned to different cores. OSU
# runs sizes 0, 1, 2 and 4 before 8 (4 × (N + 100) more round trips of warm-up); so does
# icnlab here (--sizes 0,1,2,4,8), which otherwise starts with 8 B right after connecting.
#
# OSU is built outside the repository (see compare.sh); this script wants an osu_latency
# that prints three decimals and stops at 8 B, built from OSU's sources with
#   sed 's/^#define MAX_MSG_SIZE (1<<22)/#define MAX_MSG_SIZE 8/' osu_pt2pt.h   (a copy)
#   mpicc -O2 -DFLOAT_PRECISION=3 -DHAVE_CONFIG_H -I. -o osu_latency_8 osu_latency.c osu_pt2pt.c
# (OSU_LAT8, default /work/osu3/osu_latency_8). Further icnlab binaries to interleave (e.g.
# an older build) go in ICNLAB_EXTRA, space separated.
#
# Usage: crates/icn-via/bench/compare8.sh [rounds] [iterations]   (default 7, 1000)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
rounds="${1:-7}"
iters="${2:-1000}"
osu="${OSU_LAT8:-/work/osu3/osu_latency_8}"
cd "$root"
cargo build --release -q --bin icnlab -p icnlab
icnlabs=(target/release/icnlab ${ICNLAB_EXTRA:-})
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun --allow-run-as-root --oversubscribe -np 2 --bind-to core
    --mca btl self,vader --mca btl_vader_single_copy_mechanism cma)
load() { cut -d' ' -f1-3 /proc/loadavg; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

phase() {
    local name="$1" out
    out="$(mktemp -d)"
    echo "## $name: load before $(load)"
    for r in $(seq "$rounds"); do
        local line="round $r:"
        local v
        v=$("${mpi[@]}" "$osu" -i "$iters" -x 100 | awk '$1 == 8 { print $2 }')
        echo "$v" >>"$out/openmpi"
        line+=" openmpi $v"
        local k=0
        for b in "${icnlabs[@]}"; do
            v=$("$b" via pingpong --provider shm --sizes 0,1,2,4,8 --iterations "$iters" --json |
                tr -d ' \n' | grep -o '"latency_us":[0-9.e-]*,"size":8}' | cut -d: -f2 | cut -d, -f1)
            v=$(awk -v x="$v" 'BEGIN { printf "%.3f", x }')
            echo "$v" >>"$out/icnvia$k"
            line+=" | $b $v"
            k=$((k + 1))
        done
        echo "$line (load $(load))"
    done
    local m="medians: openmpi $(median <"$out/openmpi")"
    local k=0
    for b in "${icnlabs[@]}"; do
        m+=" | $b $(median <"$out/icnvia$k")"
        k=$((k + 1))
    done
    echo "$m"
    echo "## load after $(load)"
}

phase "quiet (nothing added by this script)"
busy() { while :; do :; done; }
busy &
hog=$!
trap 'kill $hog 2>/dev/null || true' EXIT
sleep 2
phase "one core busy (a busy loop of this script's)"
