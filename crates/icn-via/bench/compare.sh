#!/usr/bin/env bash
# icn-via side by side with the OSU micro-benchmarks over OpenMPI (btl vader, CMA single copy
# on), in one run, interleaved (each pair = one OpenMPI run then one icn-via run, so both see
# the same load), medians of the pairs:
#   window bandwidth at 1 MiB and 4 MiB (osu_bw | icnlab via window),
#   pingpong one-way latency at 64 KiB and 8 B (osu_latency | icnlab via pingpong),
#   and the single-copy path's 4 MiB window bandwidth against single-core memcpy
#   (icnlab via copy), all on a quiet machine and again with one core busy (a busy loop
#   started by this script; the load average is printed with every phase).
# Then tcp against raw sockets (icnlab via pingpong --provider tcp --baselines), quiet only.
#
# Needs (outside the repository's set-up; nothing of them is committed here):
#   * OpenMPI: apt-get update && apt-get install -y openmpi-bin libopenmpi-dev   (as root;
#     this script does it when run as root with ICN_VIA_INSTALL_MPI=1, else it says so)
#   * OSU micro-benchmarks built against it, outside the repository, e.g.
#       git clone https://github.com/forresti/osu-micro-benchmarks /work/osu
#       cd /work/osu && ./configure CC=mpicc CXX=mpicxx && make -C mpi/pt2pt
#     and OSU_DIR pointing at the directory holding osu_bw and osu_latency
#     (default /work/osu/mpi/pt2pt).
# Without them the OpenMPI columns are skipped (printed as "-").
# Counts: osu_latency -i 1000 (icnlab pingpong's 1000 round trips; OSU's default 10 000 for
# small sizes made one pair take minutes on a loaded machine), osu_bw -i 20 (its default
# for large sizes: 20 windows of 64 messages; icnlab window moves min(2000 messages, 512 MiB)).
#
# Usage: crates/icn-via/bench/compare.sh [pairs]   (default 5)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
pairs="${1:-5}"
osu="${OSU_DIR:-/work/osu/mpi/pt2pt}"
cd "$root"
cargo build --release -q --bin icnlab -p icnlab
icnlab=target/release/icnlab

if ! command -v mpirun >/dev/null; then
    if [ "$(id -u)" = 0 ] && [ "${ICN_VIA_INSTALL_MPI:-0}" = 1 ]; then
        apt-get update && apt-get install -y openmpi-bin libopenmpi-dev
    else
        echo "# OpenMPI missing: apt-get update && apt-get install -y openmpi-bin libopenmpi-dev" \
            "(as root; or rerun as root with ICN_VIA_INSTALL_MPI=1)" >&2
    fi
fi
mpi=()
if command -v mpirun >/dev/null && [ -x "$osu/osu_bw" ] && [ -x "$osu/osu_latency" ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    mpi=(mpirun --allow-run-as-root --oversubscribe -np 2 --bind-to core
        --mca btl self,vader --mca btl_vader_single_copy_mechanism cma)
    echo "# $(mpirun --version | head -1); OSU from $osu"
else
    echo "# OSU micro-benchmarks not found in $osu (see the header of this script):" \
        "OpenMPI columns skipped" >&2
fi

load() { cut -d' ' -f1-3 /proc/loadavg; }
# value of the row for size $1 in OSU-style output on stdin
at() { awk -v s="$1" '$1 == s { print $2 }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# One phase: $pairs interleaved pairs; raw figures into $dir/<metric>.<who>, one per line.
phase() {
    local dir="$1"
    mkdir -p "$dir"
    for i in $(seq "$pairs"); do
        if [ ${#mpi[@]} -gt 0 ]; then
            bw=$("${mpi[@]}" "$osu/osu_bw" -i 20 -x 2)
            echo "$bw" | at 1048576 >>"$dir/bw1m.openmpi"
            echo "$bw" | at 4194304 >>"$dir/bw4m.openmpi"
        fi
        bw=$("$icnlab" via window --provider shm --sizes 1048576,4194304)
        echo "$bw" | at 1048576 >>"$dir/bw1m.icnvia"
        echo "$bw" | at 4194304 >>"$dir/bw4m.icnvia"
        if [ ${#mpi[@]} -gt 0 ]; then
            lat=$("${mpi[@]}" "$osu/osu_latency" -i 1000 -x 100)
            echo "$lat" | at 65536 >>"$dir/lat64k.openmpi"
            echo "$lat" | at 8 >>"$dir/lat8.openmpi"
        fi
        lat=$("$icnlab" via pingpong --provider shm --sizes 8,65536)
        echo "$lat" | at 65536 >>"$dir/lat64k.icnvia"
        echo "$lat" | at 8 >>"$dir/lat8.icnvia"
        "$icnlab" via copy --sizes 4194304 | at 4194304 >>"$dir/memcpy4m.icnvia"
        echo "#   pair $i done, load $(load)" >&2
    done
}

report() {
    local dir="$1"
    printf '%-34s %12s %12s %8s\n' "metric (median of $pairs pairs)" openmpi icn-via ratio
    for m in "bw1m:window bandwidth 1 MiB (MB/s)" "bw4m:window bandwidth 4 MiB (MB/s)" \
        "lat64k:one-way latency 64 KiB (us)" "lat8:one-way latency 8 B (us)"; do
        local key="${m%%:*}" name="${m#*:}"
        local o i
        o=$(median <"$dir/$key.openmpi" 2>/dev/null || echo -)
        i=$(median <"$dir/$key.icnvia")
        printf '%-34s %12s %12s %8s\n' "$name" "$o" "$i" \
            "$(awk -v a="$i" -v b="$o" 'BEGIN { if (b == "-" || b == 0) print "-"; else printf "%.2f", a / b }')"
    done
    local c w
    c=$(median <"$dir/memcpy4m.icnvia")
    w=$(median <"$dir/bw4m.icnvia")
    printf '%-34s %12s %12s %8s\n' "4 MiB: memcpy vs icn-via window" "$c" "$w" \
        "$(awk -v a="$w" -v b="$c" 'BEGIN { printf "%.2f", a / b }')"
    echo "# raw figures in $dir"
}

out="$(mktemp -d "${TMPDIR:-/tmp}/icn-via-compare.XXXXXX")"
echo "## no load added by this script (other users may load the machine): load before $(load)"
phase "$out/quiet"
echo "# load after $(load)"
report "$out/quiet"

echo "## one core busy (a busy loop of this script's): load before $(load)"
busy() { while :; do :; done; }
busy &
hog=$!
trap 'kill $hog 2>/dev/null || true' EXIT
sleep 2
echo "# load with the busy loop running: $(load)"
phase "$out/busy"
echo "# load after $(load)"
kill "$hog" 2>/dev/null || true
wait "$hog" 2>/dev/null || true
trap - EXIT
report "$out/busy"

echo "## tcp one-way latency (us) at 8 B, 4 KiB, 64 KiB, 1 MiB, 4 MiB: icn-via tcp, raw tcp, raw unix (load $(load))"
for _ in $(seq "$pairs"); do
    "$icnlab" via pingpong --provider tcp --sizes 8,4096,65536,1048576,4194304 --baselines |
        grep -v '^#' | awk '{print $2}' | tr '\n' ' ' | sed 's/ *$//'
    echo
done
echo "# load: $(load)"
