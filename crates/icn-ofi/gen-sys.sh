#!/usr/bin/env bash
# Regenerates src/sys.rs from the installed libfabric headers (apt-get install libfabric-dev
# libclang-dev): bindgen in a scratch crate outside the workspace, then the extern blocks
# dropped (the provider links nothing of libfabric) and the header comment put back.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
mkdir -p "$tmp/src"
cp "$here/gen/wrapper.h" "$tmp/"
cp "$here/gen/main.rs" "$tmp/src/main.rs"
cat > "$tmp/Cargo.toml" <<'TOML'
[package]
name = "ofigen"
version = "0.1.0"
edition = "2021"
[workspace]
[dependencies]
bindgen = { version = "0.72", default-features = false, features = ["runtime"] }
TOML
(cd "$tmp" && cargo run --release --quiet)
python3 - "$tmp/bindings.rs" "$here/src/sys.rs" <<'PY'
import sys
src, dst = sys.argv[1], sys.argv[2]
old = open(dst).read().split('\n')
hdr = []
for l in old:
    if l.startswith('//!') or l.startswith('#!['):
        hdr.append(l)
    else:
        break
out, skip, depth = [], False, 0
for l in open(src).read().split('\n'):
    if l.startswith('unsafe extern "C" {'):
        skip, depth = True, l.count('{') - l.count('}')
        continue
    if skip:
        depth += l.count('{') - l.count('}')
        skip = depth > 0
        continue
    out.append(l)
open(dst, 'w').write('\n'.join(hdr) + '\n' + '\n'.join(out))
PY
rm -rf "$tmp"
echo "regenerated $here/src/sys.rs"
