#!/usr/bin/env bash
# Records the project's MPI test program (crates/icn-tirecord/c/mpi_exchange.c, 4 ranks) with
# sst-dumpi and with icnlab's own TI recorder, into experiments/traces/mpi-exchange-4-recorded/
# (dumpi/ and ti/): the test data of crates/icn-cluster/tests/dumpi.rs, which replays both and
# checks they agree.
#
# sst-dumpi is fetched and built OUTSIDE the repository (never committed): give its checkout
# as SST_DUMPI_SRC (a clone of sstsimulator/sst-dumpi); it is built under $WORK.
# Needs OpenMPI (mpicc, mpirun), autoconf, automake, libtool.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
: "${SST_DUMPI_SRC:?set SST_DUMPI_SRC to a checkout of sst-dumpi}"
WORK=${WORK:-/tmp/icnlab-record-exchange}
out="$here/experiments/traces/mpi-exchange-4-recorded"
mkdir -p "$WORK"
if [ ! -f "$WORK/inst/lib/libdumpi.so" ]; then
    rm -rf "$WORK/src" && cp -r "$SST_DUMPI_SRC" "$WORK/src"
    (cd "$WORK/src" && ./bootstrap.sh && ./configure --prefix="$WORK/inst" --enable-libdumpi \
        CC=mpicc CXX=mpicxx && make -j2 && make install) > "$WORK/build.log" 2>&1
fi
src="$here/crates/icn-tirecord/c"
mpicc -O2 -o "$WORK/exchange-dumpi" "$src/mpi_exchange.c" -L"$WORK/inst/lib" -ldumpi \
    -Wl,-rpath,"$WORK/inst/lib"
mpicc -O2 -o "$WORK/exchange" "$src/mpi_exchange.c"
mpicc -O2 -shared -fPIC -o "$WORK/libtirecord.so" "$src/tirecord.c"
mpirun=(mpirun --oversubscribe -np 4)
[ "$(id -u)" = 0 ] && mpirun=(mpirun --allow-run-as-root --oversubscribe -np 4)

rm -rf "$WORK/run" "$out" && mkdir -p "$WORK/run/expected" "$out/dumpi" "$out/ti"
(cd "$WORK/run" && "${mpirun[@]}" "$WORK/exchange-dumpi" "$WORK/run/expected")
# sst-dumpi names its files dumpi-<date>-<rank>.bin: renamed to exchange-<rank>.bin.
meta=$(ls "$WORK"/run/dumpi-*.meta)
stem=$(basename "$meta" .meta)
for f in "$WORK"/run/"$stem"-*.bin; do
    cp "$f" "$out/dumpi/exchange-${f##*-}"
done
sed "s|^fileprefix=.*|fileprefix=exchange|; s|^hostname=.*|hostname=recorder|; s|^username=.*|username=recorder|" \
    "$meta" > "$out/dumpi/exchange.meta"
# The TI recording of the same program: LD_PRELOAD of icnlab's recorder at 1 Gflop/s.
(cd "$WORK/run" && ICN_TI_DIR="$out/ti" ICN_TI_FLOPS=1e9 \
    "${mpirun[@]}" -x LD_PRELOAD="$WORK/libtirecord.so" -x ICN_TI_DIR -x ICN_TI_FLOPS \
    "$WORK/exchange" "$WORK/run/expected")
ls -l "$out"/dumpi "$out"/ti
