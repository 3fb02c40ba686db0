#!/usr/bin/env bash
# The comparisons behind the crate README's "Benchmarks" figures, interleaved so that icn-via
# and its peers see the same machine load: shm vs OpenMPI (vader) 8-byte latency and 64 KiB–1 MiB
# window bandwidth, and tcp vs a raw TCP socket pingpong. OpenMPI parts are skipped when mpicc or
# mpirun is missing. Usage: crates/icn-via/bench/compare.sh [pairs]   (default 5)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
pairs="${1:-5}"
cd "$root"
cargo build --release -q --bin icnlab -p icnlab
cargo build --release -q -p icn-via --example ppstats
icnlab=target/release/icnlab
ppstats=target/release/examples/ppstats
bw_sizes=65536,131072,262144,524288,1048576
mpi=""
if command -v mpicc >/dev/null && command -v mpirun >/dev/null; then
    out="${TMPDIR:-/tmp}/icn-via-mpi"
    mkdir -p "$out"
    mpicc -O2 -o "$out/mpi_pingpong" "$here/mpi_pingpong.c"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    mpi=(mpirun --allow-run-as-root --oversubscribe -np 2 --mca btl self,vader --bind-to core
        "$out/mpi_pingpong")
else
    echo "# MPI not installed: OpenMPI columns skipped" >&2
fi
row() { tr '\n' ' ' | sed 's/ *$//'; echo; }
echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "## 8-byte one-way latency, median of per-round-trip times (us): openmpi | icn-via shm"
for _ in $(seq "$pairs"); do
    [ -n "$mpi" ] && "${mpi[@]}" stats 200000 8 | awk '{printf "%s | ", $9}'
    "$ppstats" 200000 | awk '{print $8}'
done
echo "## 8-byte one-way latency, OSU mean of 1000 round trips (us): openmpi | icn-via shm"
for _ in $(seq "$pairs"); do
    [ -n "$mpi" ] && "${mpi[@]}" latency 8 | tail -1 | awk '{printf "%s | ", $2}'
    "$icnlab" via pingpong --provider shm --sizes 8 | tail -1 | awk '{print $2}'
done
echo "## window bandwidth (MB/s) at $bw_sizes: openmpi, then icn-via shm"
for _ in $(seq "$pairs"); do
    [ -n "$mpi" ] && "${mpi[@]}" bw ${bw_sizes//,/ } | grep -v '^#' | awk '{print $2}' | row
    "$icnlab" via window --provider shm --sizes "$bw_sizes" | grep -v '^#' | awk '{print $2}' | row
done
echo "## tcp one-way latency (us) at 8 B, 4 KiB, 64 KiB, 1 MiB, 4 MiB: icn-via tcp, raw tcp, raw unix"
for _ in $(seq "$pairs"); do
    "$icnlab" via pingpong --provider tcp --sizes 8,4096,65536,1048576,4194304 --baselines \
        | grep -v '^#' | awk '{print $2}' | row
done
echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
