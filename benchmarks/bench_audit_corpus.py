"""The auditor against the planted-violation corpus of tests/audit_corpus.py, in one command:
recall per forgery kind and precision per finding kind, each with its Wilson 95 % interval, and
the false-positive rate on the honest cells.

    python benchmarks/bench_audit_corpus.py [--json FILE]

Every cell is real (a workspace prepared by ``prepare_cell``, runs made as ``rra run`` makes
them, each committed to the cell's run journal through a metering proxy on loopback, judged by
``judge_cell``); the corpus is built in benchmarks/_work/audit-corpus and takes about 20 s. The
peer is the physical limit: 100 % recall and no false positive, which the figures are compared
with. Exits 1 when any forgery is missed or any honest cell is flagged.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, WORK, machine

sys.path.insert(0, str(REPO))
from tests.audit_corpus import CORPUS, corpus_table, judge_corpus


def main() -> int:
    out = Path(sys.argv[sys.argv.index("--json") + 1]) if "--json" in sys.argv else None
    print(f"machine: {machine()}")
    root = WORK / "audit-corpus"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    t0 = time.perf_counter()
    results = judge_corpus(root)
    elapsed = time.perf_counter() - t0
    lines, data = corpus_table(results)
    forged = sum(1 for c in CORPUS if c.kind is not None)
    kinds = len({c.kind for c in CORPUS if c.kind is not None})
    print(f"corpus: {forged} forged cells of {kinds} kinds, {data['honest']} honest cells, built and judged in "
          f"{elapsed:.1f} s")
    print("\n".join(lines))
    caught = sum(v["k"] for v in data["recall"].values())
    print(f"overall recall {caught}/{forged} = {caught / forged:.1%} (limit: 100 %); false positives "
          f"{len(data['false_positives'])}/{data['honest']} (limit: 0)")
    if out is not None:
        out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return 0 if caught == forged and not data["false_positives"] and not data["wrong_state"] else 1


if __name__ == "__main__":
    sys.exit(main())
