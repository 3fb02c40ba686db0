#!/usr/bin/env bash
# OSU micro-benchmarks 5.x (osu_latency, osu_bw, osu_alltoall), unchanged, under Open MPI on
# four transports side by side, two ranks on this machine, rounds interleaved:
#   vader       --mca pml ob1 --mca btl self,vader          (Open MPI's shared memory)
#   tcp         --mca pml ob1 --mca btl self,tcp            (Open MPI's TCP, loopback)
#   icnvia-shm  --mca pml cm --mca mtl ofi, FI_PROVIDER="icnvia;ofi_rxm", FI_ICNVIA_LINK=shm
#   icnvia-tcp  the same with FI_ICNVIA_LINK=tcp
#
# Usage: OSU_SRC=DIR scripts/ofi/osu.sh [OUT_DIR] [ROUNDS]
#   OSU_SRC   an OSU micro-benchmarks 5.x source tree (a git clone or an unpacked release);
#             it is copied and built OUTSIDE the repository, in $OSU_BUILD
#             (default /tmp/icnlab-osu-build); the repository holds no OSU code.
#   OUT_DIR   raw outputs and summary.md (default /tmp/icnlab-osu-results)
#   ROUNDS    interleaved rounds per transport (default 3)
# Needs mpicc/mpirun (openmpi-bin, libopenmpi-dev) and libfabric (libfabric1).
# Counts: osu_latency -i 1000 -x 100, osu_bw -i 20 -x 2, osu_alltoall -i 200 -x 20 -m 1048576
# (the defaults take minutes per run on a loaded 2-core machine).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
src=${OSU_SRC:?set OSU_SRC to an OSU micro-benchmarks 5.x source tree}
build=${OSU_BUILD:-/tmp/icnlab-osu-build}
out=${1:-/tmp/icnlab-osu-results}
rounds=${2:-3}
mkdir -p "$out"

if [ ! -x "$build/mpi/pt2pt/osu_bw" ] || [ ! -x "$build/mpi/collective/osu_alltoall" ]; then
  rm -rf "$build"
  cp -r "$src" "$build"
  cd "$build"
  # A fresh copy's timestamps can make make(1) want to rerun autotools: settle them.
  touch aclocal.m4; sleep 1; find . -name Makefile.in -exec touch {} +; touch configure
  ./configure CC=mpicc CXX=mpicxx > "$out/configure.log" 2>&1
  make -C mpi/pt2pt osu_latency osu_bw > "$out/make.log" 2>&1
  make -C mpi/collective osu_alltoall >> "$out/make.log" 2>&1
fi
cd "$repo"
cargo build --release --quiet -p icn-ofi
provider_path="$repo/target/release/ofi"

run() { # transport benchmark args...
  local t=$1; shift
  local base=(mpirun --allow-run-as-root --oversubscribe -np 2 --bind-to core)
  case $t in
    vader) "${base[@]}" --mca pml ob1 --mca btl self,vader "$@" ;;
    tcp) "${base[@]}" --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo "$@" ;;
    icnvia-*) FI_PROVIDER_PATH=$provider_path FI_PROVIDER="icnvia;ofi_rxm" FI_ICNVIA_LINK=${t#icnvia-} \
      "${base[@]}" --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include "icnvia;ofi_rxm" \
      -x FI_PROVIDER_PATH -x FI_PROVIDER -x FI_ICNVIA_LINK "$@" ;;
  esac
}

transports=(vader tcp icnvia-shm icnvia-tcp)
echo "# $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg); $(mpirun --version | head -1); $(dpkg-query -W -f='libfabric ${Version}' libfabric1 2>/dev/null)" | tee "$out/header.txt"
for r in $(seq 1 "$rounds"); do
  for t in "${transports[@]}"; do
    run "$t" "$build/mpi/pt2pt/osu_latency" -i 1000 -x 100 > "$out/latency.$t.$r.txt" 2>&1 || echo "latency $t round $r failed" >&2
    run "$t" "$build/mpi/pt2pt/osu_bw" -i 20 -x 2 > "$out/bw.$t.$r.txt" 2>&1 || echo "bw $t round $r failed" >&2
    run "$t" "$build/mpi/collective/osu_alltoall" -i 200 -x 20 -m 1048576 > "$out/alltoall.$t.$r.txt" 2>&1 || echo "alltoall $t round $r failed" >&2
  done
  echo "round $r done (load $(cut -d' ' -f1 /proc/loadavg))" | tee -a "$out/header.txt"
done

# Median over rounds of one size's value in one benchmark's outputs.
median() { # bench transport size
  for r in $(seq 1 "$rounds"); do
    awk -v s="$3" '$1 == s { print $2 }' "$out/$1.$2.$r.txt"
  done | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "failed" }'
}
{
  cat "$out/header.txt"
  echo
  echo "| transport | osu_latency 8 B (µs) | osu_latency 64 KiB (µs) | osu_bw 8 B (MB/s) | osu_bw 1 MiB (MB/s) | osu_alltoall 8 B (µs) | osu_alltoall 1 MiB (µs) |"
  echo "|---|---|---|---|---|---|---|"
  for t in "${transports[@]}"; do
    echo "| $t | $(median latency "$t" 8) | $(median latency "$t" 65536) | $(median bw "$t" 8) | $(median bw "$t" 1048576) | $(median alltoall "$t" 8) | $(median alltoall "$t" 1048576) |"
  done
  echo
  echo "Medians of $rounds interleaved rounds; raw outputs beside this file."
} > "$out/summary.md"
cat "$out/summary.md"
