#!/usr/bin/env bash
# BookSim2's side of the equivalence suite (docs/booksim.md): fetches and builds BookSim2 at a
# pinned commit OUTSIDE this repository (in DIR), runs every case of
# crates/icn-thnet/tests/booksim/cases.csv — first at saturation (sim_type = throughput,
# offered 1.0 flit/node/cycle), then in latency mode at the case's loads (by default 30 %,
# 60 % and 85 % of the saturation throughput it found), but the loads EXCLUDED below — and
# writes crates/icn-thnet/tests/booksim/booksim2.csv with the BookSim2 commit on every row.
# The test `booksim_equivalence` compares icnlab against it. The committed file is this
# script's output as it stands: edit the cases or the exclusions here, never the rows.
#
#   scripts/booksim/equivalence.sh DIR [CASE...]     (default: every case)
#
# Needs git, make, g++, bison, flex. Takes about an hour on one core (BookSim2 runs until its
# sample periods converge); the rows of the cases given are replaced, the others kept.
# BOOKSIM_OUT=FILE writes elsewhere (to run groups of cases side by side).
set -euo pipefail
COMMIT=28f43299f1706a3160ffac721ca461d74eb6e618
REPO=$(cd "$(dirname "$0")/../.." && pwd)
CASES="$REPO/crates/icn-thnet/tests/booksim/cases.csv"
OUT=${BOOKSIM_OUT:-"$REPO/crates/icn-thnet/tests/booksim/booksim2.csv"}
DIR=${1:?usage: equivalence.sh DIR [CASE...]}
shift
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
case "$DIR/" in "$REPO"/*) echo "DIR must be outside the repository" >&2; exit 2 ;; esac

if [ ! -d "$DIR/booksim2/.git" ]; then
    git clone https://github.com/booksim/booksim2 "$DIR/booksim2"
fi
git -C "$DIR/booksim2" checkout -q "$COMMIT"
[ -x "$DIR/booksim2/src/booksim" ] || make -C "$DIR/booksim2/src" -j2 >/dev/null
# The "valiant" build, for the cases marked valiant_build=1:
# - valiant_dragonflynew is not upstream: BookSim2's UGAL with its fixed bias at −10⁶, so it
#   never takes the minimal route for an intermediate node outside the source group;
# - upstream valiant_torus reads an uninitialised ring partition on every hop that continues
#   in a dimension (dor_next_torus sets it only on entering one) and aborts on its own
#   assert(ring_part == 1) at once; the fix keeps the partition the packet carries in
#   f->ph = 2·phase + partition, as dim_order_torus does;
# - upstream valiant_torus lets a packet that passes its destination router in phase 0 (on
#   the way to its intermediate) take any VC there, which mixes the classes and deadlocks an
#   8×8 torus at offered 1.0 within 4 000 cycles (accepted 0 with 1 880 flits in flight); the
#   fix frees the VCs only for the ejection itself (out_port = 2·n), as the comment means.
V="$DIR/booksim2-valiant/src"
if ! grep -qs 'if(out_port != 2\*gN) { // ejection only' "$V/routefunc.cpp"; then
    rm -rf "$DIR/booksim2-valiant"
    cp -r "$DIR/booksim2" "$DIR/booksim2-valiant"
    sed -i 's/int adaptive_threshold = 30;/int adaptive_threshold = -1000000;/' \
        "$V/networks/dragonfly.cpp"
    grep -q 'adaptive_threshold = -1000000' "$V/networks/dragonfly.cpp"
    sed -i '/^void valiant_torus/,/^}/s/    int ring_part;/    int ring_part = f->ph % 2;/' \
        "$V/routefunc.cpp"
    grep -q 'int ring_part = f->ph % 2;' "$V/routefunc.cpp"
    sed -i '/^void valiant_torus/,/^}/s|    if(r->GetID() != f->dest) {|    if(out_port != 2*gN) { // ejection only|' \
        "$V/routefunc.cpp"
    grep -q 'if(out_port != 2\*gN) { // ejection only' "$V/routefunc.cpp"
    make -C "$V" -j2 >/dev/null
fi

# The router and measurement every case shares (BookSim2's iq router, iSLIP allocators,
# 5-flit packets, all pipeline delays 1).
cat > "$DIR/base.cfg" <<'CFG'
router = iq;
vc_allocator = islip;
sw_allocator = islip;
alloc_iters = 1;
wait_for_tail_credit = 0;
routing_delay = 1;
vc_alloc_delay = 1;
sw_alloc_delay = 1;
st_final_delay = 1;
credit_delay = 1;
input_speedup = 1;
output_speedup = 1;
internal_speedup = 1.0;
packet_size = 5;
injection_rate_uses_flits = 1;
warmup_periods = 3;
sample_period = 2000;
max_samples = 8;
sim_count = 1;
CFG

# run BINARY ARGS... → "latency accepted" of the Overall statistics, or "deadlock deadlock"
# at BookSim2's first deadlock warning (awk exits, so BookSim2 stops on its next write).
run() {
    local bin=$1
    shift
    "$bin" "$DIR/base.cfg" "$@" 2>&1 | awk -F'= ' '
        /Possible network deadlock/ { print "deadlock deadlock"; done = 1; exit }
        /Overall Traffic Statistics/ { on = 1 }
        on && /^Packet latency average/ { split($2, a, " "); lat = a[1] }
        on && /^Accepted flit rate average/ { split($2, a, " "); acc = a[1] }
        END { if (done) {} else if (acc == "") { print "NaN NaN" } else { print lat, acc } }' || true
}

# Loads not measured, with their reason. The transposes at their knee (mesh at 0.15, torus at
# 0.25) are past saturation: an open-loop run's mean latency there grows with the length of
# its window (BookSim2 alone, sample_period 1000/2000/4000: mesh 123.8/154.1/287.7 cycles,
# torus 84.3/124.1/190.2; docs/booksim.md), so no figure there can agree between two
# simulators with different windows. Their throughput at offered 1.0 is compared instead.
EXCLUDED="mesh-transpose:0.15 torus-transpose:0.25"
excluded() { case " $EXCLUDED " in *" $1:$2 "*) return 0 ;; esac; return 1; }

TMP=$(mktemp)
[ -f "$OUT" ] && grep -v '^case,' "$OUT" > "$TMP" || true
tail -n +2 "$CASES" | while IFS= read -r line; do
    name=${line%%,*}
    if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then continue; fi
    args=${line##*,}
    bin="$DIR/booksim2/src/booksim"
    case " $args " in *" valiant_build=1 "*) bin="$DIR/booksim2-valiant/src/booksim" ;; esac
    args=$(printf '%s' "$args" | sed 's/ *valiant_build=1//')
    # sat_seeds=N: the saturation figure is the mean of BookSim2's seeds 0..N−1 (for cases
    # whose seed-to-seed spread at offered 1.0 is as wide as the tolerance, e.g. ROMM).
    seeds=1
    case " $args " in *" sat_seeds="*) seeds=$(printf '%s' "$args" | sed 's/.*sat_seeds=\([0-9]*\).*/\1/') ;; esac
    args=$(printf '%s' "$args" | sed 's/ *sat_seeds=[0-9]*//')
    # vcs and buf from the icnlab columns (5th and 6th) — the same values on both sides.
    vcs=$(printf '%s' "$line" | python3 -c 'import csv,sys; print(next(csv.reader(sys.stdin))[4])')
    buf=$(printf '%s' "$line" | python3 -c 'import csv,sys; print(next(csv.reader(sys.stdin))[5])')
    read -ra bargs <<< "$args"
    bargs+=("num_vcs=$vcs" "vc_buf_size=$buf")
    grep -v "^$name," "$TMP" > "$TMP.k" || true
    mv "$TMP.k" "$TMP"
    sat=$(for ((i = 0; i < seeds; i++)); do
        run "$bin" "${bargs[@]}" sim_type=throughput injection_rate=1.0 seed=$i
    done | awk '{ if ($2 == "deadlock" || $2 == "NaN") bad = $2; s += $2; n++ }
                END { if (bad != "") print bad; else printf "%.6g\n", s / n }')
    echo "$name,saturation,1.0,NaN,$sat,$COMMIT" >> "$TMP"
    echo "$name saturation: $sat" >&2
    # The case's three loads, or 30 %, 60 % and 85 % of the saturation throughput (only
    # for patterns where every node's accepted rate saturates together, e.g. uniform).
    loads=$(printf '%s' "$line" | python3 -c 'import csv,sys; print(next(csv.reader(sys.stdin))[6])')
    [ -n "$loads" ] || loads=$(python3 -c "print(' '.join(str(round(f * $sat, 2)) for f in (0.3, 0.6, 0.85)))")
    for load in $loads; do
        if excluded "$name" "$load"; then
            echo "$name $load: excluded (past the knee, see EXCLUDED)" >&2
            continue
        fi
        read -r lat acc < <(run "$bin" "${bargs[@]}" sim_type=latency injection_rate="$load")
        echo "$name,latency,$load,$lat,$acc,$COMMIT" >> "$TMP"
        echo "$name $load: $lat $acc" >&2
    done
done
{ echo "case,kind,load,latency,accepted,booksim2_commit"; sort -t, -k1,1 -s "$TMP"; } > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
rm -f "$TMP"
echo "wrote $OUT" >&2
