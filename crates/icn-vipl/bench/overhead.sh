#!/usr/bin/env bash
# The C layer's own cost per message, at 8 B and 1 MiB: instructions counted by callgrind
# (not disturbed by the machine's load) for bench/swcost.c through libvipl against
# examples/swcost_rust.rs over icn-via directly, the same loop with the same memory
# (registered by address). Per message = (count at N2 - count at N1) / (2 (N2 - N1)), so
# set-up cancels out.
#
# At 8 B one thread drives both VIs: every wait finds its message already there. At 1 MiB
# (more than the 256 KiB shm ring holds) the answering VI runs on a second thread, and a
# wait spins, yields or sleeps for as long as the other thread takes, which callgrind
# counts too: the polling link's wait (`<ShmLink as Link>::wait`, inclusive) is taken out
# of every count, leaving the library's work and the copies; so is the ack keeper
# (`icn_via::nic::ack_keeper`, inclusive), whose visits every 5 ms grow with the run's
# time, not with its messages (`--threshold=100`: both are well under the 1 % of a run that
# callgrind_annotate's default list leaves out, so without it they were found in some runs
# and not others). Every run is pinned to one CPU: a wait then sees its peer
# on its own CPU and yields at once, so the two threads take turns in the same pieces from
# run to run (unpinned, how the 1 MiB message was cut into pieces varied, and the count
# per message with it, by up to 2.7 %).
#
#   crates/icn-vipl/bench/overhead.sh [N1 N2]        (default 2000 12000; 1 MiB: 100 400)
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
n1="${1:-2000}" n2="${2:-12000}"
cd "$root"
cargo build --release -q -p icn-vipl --lib --example swcost_rust
lib="$root/target/release"
out="${TMPDIR:-/tmp}/icn-vipl-overhead"
mkdir -p "$out"
gcc -O2 -I crates/icn-vipl/include crates/icn-vipl/bench/swcost.c -o "$out/swcost" \
    -L "$lib" -lvipl -lpthread -Wl,-rpath,"$lib"
count() { # program args... -> instructions, less those of the polling link's waits
    if ! taskset -c 0 valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" "$@" >/dev/null 2>"$out/cg.log"; then
        tail -5 "$out/cg.log" >&2
        echo "overhead.sh: $* failed" >&2
        exit 1
    fi
    total=$(awk '/^summary:/ {print $2}' "$out/cg.out")
    polls=$(callgrind_annotate --inclusive=yes --threshold=100 "$out/cg.out" 2>/dev/null |
        awk '/ShmLink as icn_via::link::Link>::wait \[/ {gsub(",", "", $1); print $1; exit}')
    # the ack keeper's visits (icn-via's one helper thread, every 5 ms): a cost per unit of
    # time, which the slow runs under callgrind inflate, not per message
    keeper=$(callgrind_annotate --inclusive=yes --threshold=100 "$out/cg.out" 2>/dev/null |
        awk '/icn_via::nic::ack_keeper \[/ {gsub(",", "", $1); print $1; exit}')
    echo $((total - ${polls:-0} - ${keeper:-0}))
    rm -f "$out/cg.out"
}
printf '%8s %14s %14s %9s\n' size "C (Ir/msg)" "Rust (Ir/msg)" overhead
for size in 8 1048576; do
    a="$n1" b="$n2"
    if [ "$size" -gt 65536 ]; then a=$((n1 / 20)) b=$((n2 / 30)); fi
    c1=$(count "$out/swcost" "$a" "$size"); c2=$(count "$out/swcost" "$b" "$size")
    r1=$(count "$lib/examples/swcost_rust" "$a" "$size"); r2=$(count "$lib/examples/swcost_rust" "$b" "$size")
    python3 -c "
c=($c2-$c1)/(2*($b-$a)); r=($r2-$r1)/(2*($b-$a))
print(f'{$size:>8} {c:>14.0f} {r:>14.0f} {100*(c-r)/r:>8.2f}%  ({c-r:+.0f})')"
done
