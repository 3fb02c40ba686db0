#!/usr/bin/env bash
# MP_Lite's VIA module and its `pong`, unchanged in their use of VIPL, built out of tree
# against libvipl and run between two processes on shm and on tcp, side by side with
# `icnlab via pingpong` and OSU's osu_latency over OpenMPI (shared memory and tcp; when
# OSU_DIR holds osu_latency, built out of tree). Then pong once more on shm with
# ICN_VIA_TRACE, and the recorded trace replayed by `icnlab run` (workload.kind = "ti") on
# the fabrics of the THNPC-II-like and MyVIA/Myrinet experiments: the recorded and the
# replayed message counts and bytes are printed side by side.
#
#   scripts/vipl/mplite-pong.sh NETPIPE_DIR [OUT_DIR]
#
# NETPIPE_DIR: a NetPIPE 5.x checkout with MP_Lite/ (fetched outside the repository; none
# of its code is committed here). OUT_DIR (default /tmp/icn-vipl-mplite) gets the build and
# the outputs. Needs gcc, unshare (util-linux) and root (for a private UTS namespace).
#
# What the script changes, and why (docs/vipl.md, "MP_Lite"):
#   * one line of MP_Lite/via.h (bit-rot unrelated to VIA): `#define MAX_MSGS 100` becomes
#     `#define MAX_MSGS (2 * 10000)`, the size of msg_list[] in the newer globals.h (via.c
#     defines msg_list[MAX_MSGS] against globals.h's extern msg_list[MAX_MSGS*2]); the
#     diff is printed;
#   * compiler and linker flags for 2004 C under gcc 12, no source change: -fcommon
#     (tentative definitions shared between files), -include malloc.h (via.c calls
#     memalign without its header: an implicit int would truncate 64-bit pointers),
#     -Wl,--allow-multiple-definition (via.c and mpcore.c both define n_send_packets and
#     n_recv_packets = 0);
#   * the environment: MP_Lite picks its rank from the host name in .mplite.config and its
#     device from the interface name; both processes run with host name "localhost" in a
#     private UTS+IPC namespace (`unshare -u -i`), so MP_Lite opens "/etc/via_lo" (its own
#     spelling of the loopback device), which libvipl maps to shm, or to tcp with
#     ICN_VIPL_PROVIDER=tcp.
set -euo pipefail
np="${1:?usage: mplite-pong.sh NETPIPE_DIR [OUT_DIR]}"
out="${2:-/tmp/icn-vipl-mplite}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
[ -f "$np/MP_Lite/via.c" ] || { echo "mplite-pong.sh: $np/MP_Lite/via.c not found" >&2; exit 2; }
command -v unshare >/dev/null || { echo "mplite-pong.sh: needs unshare (util-linux)" >&2; exit 2; }

cd "$root"
cargo build --release -q -p icn-vipl
cargo build --release -q -p icnlab --bin icnlab
lib="$root/target/release"
inc="$root/crates/icn-vipl/include"

rm -rf "$out/build" && mkdir -p "$out" && cp -r "$np/MP_Lite" "$out/build"
cd "$out/build"
cp via.h via.h.orig
sed -i 's|^#define MAX_MSGS        100 .*|#define MAX_MSGS        (2 * 10000) /* msg_list[] of globals.h */|' via.h
echo "== the one source change (MP_Lite/via.h):"
diff -u via.h.orig via.h || true
cflags="-O2 -fcommon -DVIA_FILE -D_REENTRANT -include malloc.h -I$inc"
for f in mpcore f77_wrappers timer memory io utils copy lock fifo remap shm mpi_wrappers via; do
    gcc $cflags -c "$f.c" -o "$f.o" 2>>build.log
done
ar -cr libmplite.a ./*.o
gcc -O2 -fcommon -o pong pong.c -L. -lmplite -L"$lib" -lvipl -lpthread -lm \
    -Wl,--allow-multiple-definition -Wl,-rpath,"$lib" 2>>build.log
echo "== built $out/build/pong against $lib/libvipl.so (compiler warnings: $out/build/build.log)"

run_pong() { # provider
    local dir="$out/run-$1"
    rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
    printf '2\n1\n./pong\n0 localhost\n1 localhost\n' >.mplite.config
    cp "$out/build/pong" .
    ICN_VIPL_PROVIDER="$1" ICN_VIPL_RENDEZVOUS="$dir/rendezvous" timeout 600 \
        unshare -u -i sh -c 'hostname localhost; ./pong >a.out 2>a.err & sleep 0.3; ./pong >b.out 2>b.err; wait'
    # rank 0 prints the table
    if grep -q "bytes took" a.out; then cp a.out pong.out; else cp b.out pong.out; fi
}

for p in shm tcp; do
    echo "== load before $p: $(cat /proc/loadavg)"
    run_pong "$p"
    "$root/target/release/icnlab" via pingpong --provider "$p" \
        --sizes 8,16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536,131072,262144,524288,1048576 \
        --json >"$out/run-$p/icnlab.json"
    osu="${OSU_DIR:-}"
    if [ -x "$osu/osu_latency" ] && command -v mpirun >/dev/null; then
        btl=self,vader
        [ "$p" = tcp ] && btl=self,tcp
        mpirun --allow-run-as-root -np 2 --bind-to core --mca btl "$btl" \
            "$osu/osu_latency" -i 1000 -x 100 >"$out/run-$p/osu.out" 2>"$out/run-$p/osu.err" || true
    fi
    echo "== $p: one-way latency (us) — pong: one round trip / 2 (blocking, asynchronous);"
    echo "   icnlab via pingpong: mean of 1000 round trips / 2; osu_latency (OpenMPI btl $([ "$p" = tcp ] && echo tcp || echo vader)): mean of 1000"
    python3 - "$out/run-$p" <<'PY'
import json, os, re, sys
d = sys.argv[1]
pong = {}
section = 0
for line in open(os.path.join(d, "pong.out")):
    if "Asynchronous" in line:
        section = 1
    if "Bi-directional" in line:
        section = 2
    m = re.match(r"\s*(\d+) bytes took\s+([\d.]+) usec", line)
    if m and section < 2:
        pong.setdefault(int(m.group(1)), [None, None])[section] = float(m.group(2)) / 2
icn = {}
j = json.load(open(os.path.join(d, "icnlab.json")))
for r in j["series"][0]["rows"]:
    icn[int(r["size"])] = float(r["latency_us"])
osu = {}
p = os.path.join(d, "osu.out")
if os.path.exists(p):
    for line in open(p):
        f = line.split()
        if len(f) == 2 and f[0].isdigit():
            osu[int(f[0])] = float(f[1])
print(f"{'bytes':>8} {'pong':>10} {'pong async':>11} {'icnlab':>10} {'osu':>8}")
for s in sorted(set(pong) | set(icn)):
    if s == 0:
        continue
    a, b = pong.get(s, [None, None])
    fmt = lambda v: "-" if v is None else f"{v:.2f}"
    print(f"{s:>8} {fmt(a):>10} {fmt(b):>11} {fmt(icn.get(s)):>10} {fmt(osu.get(s)):>8}")
PY
done
echo "== load after: $(cat /proc/loadavg)"

# The recorded pong and its replays.
dir="$out/run-trace"
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
printf '2\n1\n./pong\n0 localhost\n1 localhost\n' >.mplite.config
cp "$out/build/pong" .
ICN_VIA_TRACE="$dir/trace" ICN_VIPL_PROVIDER=shm ICN_VIPL_RENDEZVOUS="$dir/rendezvous" timeout 600 \
    unshare -u -i sh -c 'hostname localhost; ./pong >a.out 2>a.err & sleep 0.3; ./pong >b.out 2>b.err; wait'
recorded=$(cat "$dir"/trace/rank-*.ti | awk '$2 == "isend" {n++; b += $5} END {print n, b}')
echo "== pong recorded on shm ($dir/trace): messages and bytes: $recorded"
for machine in thnpc myvia; do
    # the experiment's fabric; the TI replay hands whole messages to it (zero NIC)
    python3 - "$root/experiments/cluster-$machine.toml" "$dir/trace/index" >"$dir/$machine.toml" <<'PY'
import sys, tomllib
fabric = tomllib.load(open(sys.argv[1], "rb"))["fabric"]
print('model = "cluster"\ntitle = "MP_Lite pong recorded over libvipl"\n')
print(f'[workload]\nkind = "ti"\nfile = "{sys.argv[2]}"\n\n[nic]\nkind = "zero"\n\n[fabric]')
for k, v in fabric.items():
    print(f"{k} = {v!r}".replace("'", '"'))
PY
    "$root/target/release/icnlab" run --quiet --out "$dir/out-$machine" "$dir/$machine.toml" >/dev/null
    python3 - "$dir/out-$machine/report.json" "$machine" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
def find(o):
    if isinstance(o, dict):
        if o.get("name") in ("messages", "bytes", "completion_us") and "value" in o:
            yield o["name"], o["value"]
        for v in o.values():
            yield from find(v)
    elif isinstance(o, list):
        for v in o:
            yield from find(v)
m = dict(find(r))
print(f"== replay on {sys.argv[2]}: messages and bytes: {m['messages']:.0f} {m['bytes']:.0f}; completion {m['completion_us']:.0f} us")
PY
done
