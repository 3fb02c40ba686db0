#!/usr/bin/env bash
# Builds and runs the OpenMPI baselines next to icn-via's shm benchmarks, if MPI is present
# (apt-get install openmpi-bin libopenmpi-dev). Usage: bench/run_mpi.sh [sizes...]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v mpicc >/dev/null || ! command -v mpirun >/dev/null; then
    echo "MPI not installed: skipping the MPI baselines" >&2
    exit 0
fi
out="${TMPDIR:-/tmp}/icn-via-mpi"
mkdir -p "$out"
mpicc -O2 -o "$out/mpi_pingpong" "$here/mpi_pingpong.c"
flags=(--allow-run-as-root --oversubscribe -np 2 --mca btl self,vader)
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun "${flags[@]}" "$out/mpi_pingpong" latency "$@"
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun "${flags[@]}" "$out/mpi_pingpong" bw "$@"
