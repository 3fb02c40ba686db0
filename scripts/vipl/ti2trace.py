#!/usr/bin/env python3
"""Converts a SimGrid time-independent trace (an index of per-rank files, as libvipl's
ICN_VIA_TRACE writes) into icn-cluster's trace format, so a recorded VIA run replays with
`model = "cluster"` until icn-cluster reads TI traces itself:

    R send P TAG B  ->  R send P B TAG
    R recv P TAG B  ->  R recv P B TAG
    R compute F   ->  R compute NS     (NS = F / FLOPS_PER_NS, default 1: libvipl's default rate)
    init, finalize, # comments  ->  dropped

Usage: ti2trace.py INDEX OUT [FLOPS_PER_NS]. Prints the message count and bytes."""
import os
import sys

index, out = sys.argv[1], sys.argv[2]
rate = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
base = os.path.dirname(index)
files = [l.strip() for l in open(index) if l.strip()]
lines, messages, nbytes = [f"# ranks {len(files)}"], 0, 0
for f in files:
    for n, line in enumerate(open(os.path.join(base, f)), 1):
        w = line.split()
        if not w or w[0].startswith("#") or w[1] in ("init", "finalize"):
            continue
        if w[1] in ("send", "recv") and len(w) == 5:
            lines.append(f"{w[0]} {w[1]} {w[2]} {w[4]} {w[3]}")
            if w[1] == "send":
                messages += 1
                nbytes += int(w[4])
        elif w[1] == "compute" and len(w) == 3:
            lines.append(f"{w[0]} compute {max(0, round(float(w[2]) / rate))}")
        else:
            sys.exit(f"{f}:{n}: unknown action: {line.strip()}")
with open(out + ".tmp", "w") as o:
    o.write("\n".join(lines) + "\n")
os.replace(out + ".tmp", out)
print(f"{len(files)} ranks, {messages} messages, {nbytes} B")
