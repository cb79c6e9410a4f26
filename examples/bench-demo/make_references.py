#!/usr/bin/env python3
"""Make the demo's reference observations by running the artifacts (how references.private.yaml
and the manifests' observations were made; rerun it to remake them).

For each artifact: copy it to a scratch directory, run its claim's launcher five times with
``rra run`` (a stochastic launcher: its five declared seeds; a deterministic one: five runs),
read each run's value from its run record, and write them (a) into the artifact's rra.yaml, as
the claim's observations with this machine's fingerprint and their provenance (RRA 1.1), and (b) into references.private.yaml,
the private part of the task set that only the evaluator reads.

    python make_references.py        # needs the rra of this checkout on PATH (or RRA=path/to/rra)
"""

from __future__ import annotations

import glob
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
RRA = os.environ.get("RRA") or shutil.which("rra") or str(Path(sys.executable).parent / "rra")
#: artifact -> (task key, launcher, claim, stochastic)
TASKS = {
    "linfit": ("fitting-lines/table-1/rmse", "fit", "test-rmse", False),
    "nbayes": ("filtering-spam/table-2/accuracy", "classify", "test-accuracy", False),
    "montecarlo": ("counting-darts/table-1/pi", "estimate", "pi", True),
}


def values(name: str, launcher: str, claim: str, stochastic: bool) -> list[float]:
    with tempfile.TemporaryDirectory() as scratch:
        art = Path(scratch) / name
        shutil.copytree(HERE / "artifacts" / name, art, ignore=shutil.ignore_patterns("runs", "results"))
        runs = [[RRA, "run", str(art), "--all"]] if stochastic else [[RRA, "run", str(art), launcher]] * 5
        for argv in runs:
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        records = [json.loads(Path(p).read_text()) for p in glob.glob(str(art / "runs" / launcher / "*" / "record.json"))]
        records.sort(key=lambda r: (r.get("seed") or 0, r["started"]))
        return [r["metrics"][claim] for r in records]


def main() -> None:
    machine = f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"
    software = f"cpython {platform.python_version()}"
    private = ['# The private part of the bench demo task set: only the evaluator reads it (rra bench run',
               '# --references). Made by make_references.py from real runs of the refined artifacts.',
               'bench_version: "1.0"', "taskset: bench-demo", "references:"]
    for name, (key, launcher, claim, stochastic) in TASKS.items():
        found = values(name, launcher, claim, stochastic)
        print(name, found)
        manifest = HERE / "artifacts" / name / "rra.yaml"
        text = manifest.read_text(encoding="utf-8")
        block = "".join(f"        - value: {v!r}\n          seed: {i}\n          fingerprint:\n"
                        f"            hardware: \"{machine}\"\n            software: \"{software}\"\n"
                        f"          provenance:\n            by: \"make_references.py run {i + 1}\"\n"
                        f"            code: refined\n            machine: \"{machine}\"\n"
                        for i, v in enumerate(found))
        text = re.sub(r"(      observations:\n)(        - value:.*?\n(?:          .*\n)+)+", lambda m: m.group(1) + block, text)
        manifest.write_text(text, encoding="utf-8")
        private.append(f"  - task: {key}\n    observations:")
        private += [f"      - {{value: {v!r}, by: \"make_references.py run {i + 1}\", machine: \"{machine}\", "
                    f"code: refined}}" for i, v in enumerate(found)]
    (HERE / "references.private.yaml").write_text("\n".join(private) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
