#!/bin/bash
# Rewrites every generated table in docs/*.md (`<!-- keys MODEL -->` … `<!-- /keys -->` and
# `<!-- metrics MODEL -->` … `<!-- /metrics -->`) from the binary, so a merge or a new key
# needs no hand editing. The tests `docs_tables_equal_the_generated_ones` check the result.
# Usage: scripts/regen-doc-tables.sh [path/to/icnlab]   (default: target/release/icnlab)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/icnlab}
python3 - "$bin" <<'PY'
import pathlib, re, subprocess, sys
bin = sys.argv[1]
for doc in sorted(pathlib.Path("docs").glob("*.md")):
    text = doc.read_text()
    def table(m):
        tag, model = m.group(1), m.group(2)
        out = subprocess.run([bin, tag, model, "--markdown"], check=True, capture_output=True, text=True).stdout
        return f"<!-- {tag} {model} -->\n{out}<!-- /{tag} -->"
    new = re.sub(r"<!-- (keys|metrics) ([a-z0-9-]+) -->\n.*?<!-- /\1 -->", table, text, flags=re.S)
    if new != text:
        doc.write_text(new)
        print(f"rewrote {doc}")
PY
