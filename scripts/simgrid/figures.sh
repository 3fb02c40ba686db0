#!/bin/sh
# SimGrid's figures for icnlab's agreement test (crates/icn-cluster/tests/ti.rs):
# every trace replayed by SimGrid (run.sh) with the named algorithms, and its compute-only
# version (every communication removed, reductions kept as computes). Prints TOML.
# usage: figures.sh > experiments/traces/simgrid-3.32-figures.toml
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${OUT:-/work/ext/workloads}
algs="--cfg=smpi/barrier:ompi_recursivedoubling --cfg=smpi/bcast:binomial_tree --cfg=smpi/reduce:binomial \
--cfg=smpi/allreduce:rdb --cfg=smpi/alltoall:ring --cfg=smpi/alltoallv:ring --cfg=smpi/gather:ompi_binomial \
--cfg=smpi/allgatherv:ring --cfg=smpi/reduce_scatter:mpich_pair"
algs32="--cfg=smpi/barrier:ompi_recursivedoubling --cfg=smpi/bcast:binomial_tree --cfg=smpi/allreduce:rdb \
--cfg=smpi/alltoall:pair --cfg=smpi/alltoallv:pair --cfg=smpi/gather:ompi_binomial"
# The project's own MPI program (crates/icn-tirecord/c/mpi_exchange.c) recorded under mpirun -np 4 and 8 with
# `icnlab trace record`: the algorithms CI's replay of a fresh recording names.
algs_own="--cfg=smpi/barrier:ompi_recursivedoubling --cfg=smpi/bcast:binomial_tree --cfg=smpi/allreduce:rdb \
--cfg=smpi/alltoallv:pair"
sim_time() { "$here/run.sh" "$@" | sed -n 's/.*Simulation time \([0-9.]*\).*/\1/p' | tail -n 1; }
# The compute-only version of trace file $1 (ranks $2) into $3.
compute_only() {
  awk -v n="$2" '$2=="compute"||$2=="init"||$2=="finalize"{print; next}
    $2=="allreduce"||$2=="reduce"||$2=="scan"||$2=="exscan"{print $1, "compute", $4; next}
    $2=="reducescatter"{print $1, "compute", $(3+n); next}' "$1" > "$3"
}
echo "# SimGrid $(dpkg-query -W -f='${Version}' libsimgrid-dev 2>/dev/null || echo '?') (Debian libsimgrid-dev), scripts/simgrid/figures.sh:"
echo "# cluster_crossbar.xml, --cfg=network/model:CM02 --cfg=smpi/bw-factor:1 --cfg=smpi/lat-factor:1."
case_of() { # name trace ranks algs
  name=$1; trace=$2; np=$3; cfg=$4
  total=$(sim_time "$repo/$trace" "$np" $cfg)
  mkdir -p "$out/co/$name"
  if head -n 1 "$repo/$trace" | grep -Eq '^[0-9]+ +[a-zA-Z]'; then
    compute_only "$repo/$trace" "$np" "$out/co/$name/trace.txt"
    co=$(sim_time "$out/co/$name/trace.txt" "$np")
  else
    dir=$(dirname "$repo/$trace")
    cp "$repo/$trace" "$out/co/$name/index.txt"
    for f in $(cat "$repo/$trace"); do compute_only "$dir/$f" "$np" "$out/co/$name/$f"; done
    co=$(sim_time "$out/co/$name/index.txt" "$np")
  fi
  printf '\n[[run]]\nname = "%s"\ntrace = "%s"\nranks = %s\nsimgrid_cfg = "%s"\ntotal_s = %s\ncompute_only_s = %s\n' \
    "$name" "$trace" "$np" "$(echo $cfg)" "$total" "$co"
}
case_of ti-32 experiments/traces/simgrid-ti-32/index.txt 32 "$algs32"
case_of mpi-exchange-4 experiments/traces/mpi-exchange-4/index.txt 4 "$algs_own"
case_of mpi-exchange-8 experiments/traces/mpi-exchange-8/index.txt 8 "$algs_own"
for t in bcast allreduce alltoall alltoallv barrier gather reducescatter waitall with_isend allgatherv bcast_reduce_datatypes; do
  f=experiments/traces/simgrid-examples/actions_$t.txt
  np=$(awk 'NF>0{if($1+1>m)m=$1+1} END{print m}' "$repo/$f")
  case_of "$t" "$f" "$np" "$algs"
done
