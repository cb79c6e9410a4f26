#!/usr/bin/env python3
"""Where `rra validate` spends its time on one manifest: each stage's minimum over N runs, in one
interpreter, the collector paused.

Usage::

    python benchmarks/validate_stages.py benchmarks/_work/large-10000/yaml/rra.yaml 5
    PYTHONPATH=/tmp/before python benchmarks/validate_stages.py FILE 5   # another tree (git archive)

The stages are the reader (without positions, as `rra validate` reads), the schema layer
(`check_schema`) and each semantic check, run as the engine runs them on a fresh context. The
minimum of several runs is the figure that compares on a busy machine; alternate the trees
being compared rather than timing one after the other. Stages under 15 ms are summed into
"semantic" but not listed.
"""

from __future__ import annotations

import gc
import inspect
import sys
import time
from pathlib import Path


def main() -> int:
    from rra_tools.io.read.source import decode_text, parse_document
    from rra_tools.validate.context import Context
    from rra_tools.validate.rules import load_all
    from rra_tools.validate.schema_layer import check_schema

    path = Path(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    raw = path.read_bytes()
    # Trees from before check_schema took the text still compare.
    takes_text = "text" in inspect.signature(check_schema).parameters
    best: dict[str, float] = {}

    def record(stage: str, seconds: float) -> None:
        best[stage] = min(best.get(stage, seconds), seconds)

    gc.disable()
    for _ in range(runs):
        start = time.perf_counter()
        doc = parse_document(decode_text(raw), located=False)
        record("parse", time.perf_counter() - start)
        start = time.perf_counter()
        list(check_schema(doc.data, doc.values, doc.text) if takes_text else check_schema(doc.data, doc.values))
        record("schema", time.perf_counter() - start)
        ctx = Context(data=doc.data, root=path.parent, deadline=None, text=doc.text)
        for chk in load_all():
            start = time.perf_counter()
            list(chk.run(ctx))
            record(chk.run.__name__, time.perf_counter() - start)
        del doc, ctx
        gc.collect()
    semantic = sum(v for k, v in best.items() if k not in ("parse", "schema"))
    for stage, seconds in best.items():
        if seconds > 0.015 or stage in ("parse", "schema"):
            print(f"{stage:24} {seconds:.3f}")
    print(f"{'semantic':24} {semantic:.3f}\n{'TOTAL':24} {semantic + best['parse'] + best['schema']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
