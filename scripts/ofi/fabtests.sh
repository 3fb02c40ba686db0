#!/usr/bin/env bash
# libfabric's fabtests (the conformance programs providers are checked with) over the icnvia
# provider: a named functional subset for FI_EP_MSG endpoints, and for FI_EP_RDM through
# ofi_rxm, on icn-via's shm and tcp links, server and client on loopback.
#
# Usage: FABTESTS_BIN=DIR scripts/ofi/fabtests.sh [OUT_DIR]
#   FABTESTS_BIN  the bin/ directory of a fabtests build matching the installed libfabric
#                 (1.17: its source is libfabric's fabtests/ at tag v1.17.0; build it OUTSIDE
#                 the repository: ./autogen.sh && ./configure --prefix=DIR && make install)
#   OUT_DIR       one log per test and link, and summary.md (default /tmp/icnlab-fabtests-results)
# FABTESTS_LINKS: the links to run (default "shm tcp"). Each test has 60 s; "expected to fail" marks what the provider does not offer (docs/ofi.md).
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${FABTESTS_BIN:?set FABTESTS_BIN to a fabtests bin/ directory}
out=${1:-/tmp/icnlab-fabtests-results}
mkdir -p "$out"
(cd "$repo" && cargo build --release --quiet -p icn-ofi) || exit 1
export FI_PROVIDER_PATH=$repo/target/release/ofi PATH=$bin:$PATH

# name | provider | expectation | program and arguments (client and server alike)
tests=(
  "msg|icnvia|pass|fi_msg -e msg"
  "msg_pingpong|icnvia|pass|fi_msg_pingpong -I 100"
  "msg_bw|icnvia|pass|fi_msg_bw -e msg -I 100"
  "cm_data|icnvia|pass|fi_cm_data"
  "rma_bw_read|icnvia|pass|fi_rma_bw -e msg -o read -I 50"
  "rma_bw_write|icnvia|pass|fi_rma_bw -e msg -o write -I 50"
  "msg_sockets|icnvia|pass|fi_msg_sockets -s 127.0.0.1"
  "unexpected_msg|icnvia|pass|fi_unexpected_msg -e msg -I 10"
  "msg_inject|icnvia|fail: no inject (inject_size 0)|fi_msg_inject"
  "cq_data|icnvia|fail: no FI_REMOTE_CQ_DATA|fi_cq_data -e msg"
  "shared_ctx|icnvia|fail: no shared contexts|fi_shared_ctx -e msg"
  "msg_epoll|icnvia|fail: no FI_WAIT_FD|fi_msg_epoll"
  "rdm|icnvia;ofi_rxm|pass|fi_rdm"
  "rdm_pingpong|icnvia;ofi_rxm|pass|fi_rdm_pingpong -I 100"
  "rdm_tagged_pingpong|icnvia;ofi_rxm|pass|fi_rdm_tagged_pingpong -I 100"
  "rdm_tagged_bw|icnvia;ofi_rxm|pass|fi_rdm_tagged_bw -I 100"
  "rdm_rma_read|icnvia;ofi_rxm|pass|fi_rma_bw -e rdm -o read -I 50"
  "rdm_rma_write|icnvia;ofi_rxm|pass|fi_rma_bw -e rdm -o write -I 50"
  "rdm_atomic|icnvia;ofi_rxm|fail: no atomics|fi_rdm_atomic"
)
# Single-process tests of the provider's objects.
units=(
  "getinfo_test|icnvia|pass|fi_getinfo_test"
  "eq_test|icnvia|pass|fi_eq_test"
  "dom_test|icnvia|pass|fi_dom_test"
  "mr_test|icnvia|pass|fi_mr_test"
  "cq_test|icnvia|pass|fi_cq_test"
)

port=$((20000 + $$ % 20000))
summary="$out/summary.md"
{
  echo "# fabtests over icnvia, $(date -u +%FT%TZ), load $(cut -d' ' -f1 /proc/loadavg), $(dpkg-query -W -f='libfabric ${Version}' libfabric1 2>/dev/null)"
  echo
  echo "| test | command | link | expected | result |"
  echo "|---|---|---|---|---|"
} > "$summary"
pass=0 fail=0 unexpected=0
record() { # name cmd link expectation rc
  local r
  if [ "$5" -eq 0 ]; then r=pass; else r="fail (rc $5)"; fi
  echo "| $1 | \`$2\` | $3 | $4 | $r |" >> "$summary"
  if [ "$5" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
  if { [ "$4" = pass ] && [ "$5" -ne 0 ]; } || { [ "$4" != pass ] && [ "$5" -eq 0 ]; }; then
    unexpected=$((unexpected + 1))
  fi
}
for link in ${FABTESTS_LINKS:-shm tcp}; do
  export FI_ICNVIA_LINK=$link
  for t in "${tests[@]}"; do
    IFS='|' read -r name prov expect cmd <<< "$t"
    port=$((port + 1))
    log="$out/$name.$link"
    # shellcheck disable=SC2086
    timeout 60 $cmd -p "$prov" -B "$port" > "$log.server" 2>&1 &
    spid=$!
    sleep 0.5
    # shellcheck disable=SC2086
    timeout 60 $cmd -p "$prov" -P "$port" 127.0.0.1 > "$log.client" 2>&1
    crc=$?
    wait "$spid"
    src=$?
    rc=$((crc > src ? crc : src))
    record "$name" "$cmd -p '$prov'" "$link" "$expect" "$rc"
    echo "$name/$link: client $crc server $src"
  done
  for t in "${units[@]}"; do
    IFS='|' read -r name prov expect cmd <<< "$t"
    # shellcheck disable=SC2086
    timeout 60 $cmd -p "$prov" > "$out/$name.$link" 2>&1
    rc=$?
    record "$name" "$cmd -p '$prov'" "$link" "$expect" "$rc"
    echo "$name/$link: $rc"
  done
done
echo >> "$summary"
echo "$pass passed, $fail failed ($unexpected not as expected)" | tee -a "$summary"
cat "$summary"
