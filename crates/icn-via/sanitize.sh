#!/usr/bin/env bash
# Runs the shm ring's unit tests (heap areas, two threads streaming, the proptest of
# peer-controlled values), the user-memory, cross-memory-attach and shared-region unit tests
# (the single-copy paths' `unsafe`), the engine's and regions' lock (`lock`), and the API tests (both providers; shm over real memfd mappings) under AddressSanitizer.
# Needs a nightly toolchain (`rustup toolchain install nightly`); own target dir, so the
# normal build is untouched. Usage: crates/icn-via/sanitize.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
export RUSTFLAGS="-Zsanitizer=address" RUSTDOCFLAGS="-Zsanitizer=address"
export CARGO_TARGET_DIR=target/asan ASAN_OPTIONS="detect_leaks=1"
target=x86_64-unknown-linux-gnu  # explicit, so build scripts and proc macros stay uninstrumented
cargo +nightly test --target "$target" -p icn-via --lib ring
# the caller's lent memory and its revocation, and the single-copy path's process_vm_readv
cargo +nightly test --target "$target" -p icn-via --lib -- user_mem memory:: link::cma shared_mem bench::copy lock::
cargo +nightly test --target "$target" -p icn-via --test api
