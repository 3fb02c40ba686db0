#!/usr/bin/env python3
"""Writes a synthetic 2-rank DUMPI trace of about SIZE bytes (default 1 GiB) into DIR, for
measuring that the replay streams it in bounded memory (docs/cluster.md).

Ranks 0 and 1 play ping-pong with 8-byte messages, one send and one receive every 16
records (so at most one message is outstanding: memory that grew would be the reader's);
the other records are MPI_Comm_rank (replayed as no-ops). Every record has the same time stamps (no compute), so one block of
records is written over and over. Labels come from icnlab's own layout table.

Usage: scripts/gen-big-dumpi.py DIR [SIZE_BYTES]
"""
import pathlib
import re
import struct
import sys

here = pathlib.Path(__file__).resolve().parent.parent
table = (here / "crates/icn-cluster/src/ti/dumpi_layouts.rs").read_text()
body = table[table.index("pub const LAYOUTS"):]
names = re.findall(r'\(\s*"(MPIO?_\w+)"', body)
label = {n: i for i, n in enumerate(names)}
out = pathlib.Path(sys.argv[1])
size = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 30
out.mkdir(parents=True, exist_ok=True)

MAGIC = (0xFFAADD44 << 32) | 0x554D5049
MASK = 0x08 | 0x40  # wall times, thread id


def record(name, fields):
    head = struct.pack(">HBH", label[name], MASK, 0) + struct.pack(">HIHI", 0, 0, 0, 0)
    return head + fields


def comm_rank(r):
    return record("MPI_Comm_rank", struct.pack(">hi", 2, r))


def p2p(name, peer):
    # count 8, datatype 0 (1 byte in the size table), peer, tag 0, MPI_COMM_WORLD
    return record(name, struct.pack(">ihiih", 8, 0, peer, 0, 2))


for rank in (0, 1):
    peer = 1 - rank
    pingpong = [p2p("MPI_Send", peer), p2p("MPI_Recv", peer)]
    block = b"".join([comm_rank(rank)] * 14 + (pingpong if rank == 0 else pingpong[::-1]))
    blocks = (size // 2) // len(block)
    path = out / f"big-{rank:04d}.bin"
    with open(path, "wb") as f:
        f.write(struct.pack(">Q", MAGIC))
        header = f.tell()
        f.write(bytes([0, 6, 9]) + struct.pack(">Q", 0))
        for s in (b"host", b"user"):
            f.write(struct.pack(">H", len(s)) + s)
        f.write(struct.pack(">II", 0, 0))
        body_at = f.tell()
        f.write(struct.pack(">II", 0, 0))
        f.write(record("MPI_Init", struct.pack(">I", 0)))
        chunk = block * 4096
        for _ in range(blocks // 4096):
            f.write(chunk)
        f.write(block * (blocks % 4096))
        f.write(record("MPI_Finalize", b""))
        footer = f.tell()
        f.write(struct.pack(">Q", 0xF007FEE7))
        sizes = f.tell()
        f.write(struct.pack(">II", 1, 1))
        f.write(struct.pack(">8Q", MAGIC, sizes, 0, 0, header, body_at, footer, 0))
    print(f"{path}: {path.stat().st_size} bytes, {blocks} round trips")
(out / "big.meta").write_text("numprocs=2\nfileprefix=big\n")
