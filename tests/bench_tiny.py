"""A tiny artifact for the benchmark's reproducer-mode tests: one deterministic launcher whose
claim 'score' is 13/16 = 0.8125, in a git repository whose upstream commit holds the code (and
an old result, for copy cheats) but not the manifest, and a task set (public part plus private
references) over it with one variable and one exact task.

Reference values are chosen so that their textual forms (0.8117, 0.8129, ...) appear nowhere else;
the paper's reported value, 0.8125, is printed in the paper and is not a secret.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from .builder_repos import git

__all__ = ["EXACT_REFS", "REPRODUCERS", "VARIABLE_REFS", "secret_pattern", "tiny_artifact", "tiny_taskset"]

#: The variable task's hidden reference values, and the exact task's.
VARIABLE_REFS = (0.8117, 0.8129, 0.8133, 0.8121, 0.8126)
EXACT_REFS = (0.8125, 0.8125, 0.8125)

EMIT_SH = """mkdir -p out
python3 -c 'import json; print(json.dumps({"score": 13 / 16}))' > out/metrics.json
echo done
"""


def _manifest(commit: str) -> dict[str, Any]:
    return {
        "rra_version": "1.0", "id": "tiny", "title": "Tiny deterministic artifact",
        "paper": {"title": "Thirteen Sixteenths", "authors": [{"name": "Test"}]},
        "code": {"license": "MIT", "upstream": {"url": "https://example.org/lab/tiny.git", "commit": commit}},
        "environment": {"interpreter": {"version": "3.11"}},
        "launchers": [{"id": "emit", "argv": ["sh", "emit.sh"], "stochastic": False,
                       "resources": {"timeout_s": 60, "expected_runtime_s": 1},
                       "outputs": [{"id": "m", "path": "out/metrics.json", "format": "json"}]}],
        "claims": [{"id": "score", "paper_location": {"table": "1", "row": "ours"}, "launcher": "emit",
                    "metric": {"name": "score", "unit": "", "direction": "higher"},
                    "extract": {"output": "m", "json_pointer": "/score"},
                    "reported": {"value": 0.8125, "precision": 4},
                    "reference": {"observations": [
                        {"value": v, "seed": i, "fingerprint": {"hardware": "x86_64", "software": "sh"}}
                        for i, v in enumerate(VARIABLE_REFS)]}}],
    }


def tiny_artifact(root: Path) -> Path:
    """The artifact at ``root``: a git repository (upstream commit: emit.sh, old/metrics.json,
    old/record.json) with an untracked rra.json whose claim carries the variable references."""
    root.mkdir(parents=True)
    (root / "emit.sh").write_text(EMIT_SH, encoding="utf-8")
    (root / "old").mkdir()
    (root / "old" / "metrics.json").write_text(json.dumps({"score": 13 / 16, "run": "2023"}) + "\n",
                                               encoding="utf-8")
    (root / "old" / "record.json").write_text(json.dumps({"launcher": "emit", "metrics": {"score": 13 / 16}}) + "\n",
                                              encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-gpg-sign", "-m", "tiny as published")
    commit = git(root, "rev-parse", "HEAD").strip()
    (root / "rra.json").write_text(json.dumps(_manifest(commit), indent=1), encoding="utf-8")
    return root


def tiny_taskset(directory: Path, artifact: str = "tiny", **top: Any) -> tuple[Path, Path]:
    """The public task set (no reference value) and the private references file, in ``directory``."""
    def refs(values: tuple[float, ...]) -> list[dict[str, Any]]:
        return [{"value": v, "by": f"lab {i}", "machine": f"m{i}", "code": "raw"} for i, v in enumerate(values)]

    public = {"bench_version": "1.0", "id": "tiny-bench", **top,
              "papers": [{"id": "p", "title": "Thirteen Sixteenths", "file": "paper.txt", "experiments": [
                  {"id": "t1", "tasks": [{"id": "var", "artifact": artifact, "claim": "score"},
                                         {"id": "exact", "artifact": artifact, "claim": "score"}]}]}]}
    private = {"bench_version": "1.0", "taskset": "tiny-bench", "references": [
        {"task": "p/t1/var", "observations": refs(VARIABLE_REFS)},
        {"task": "p/t1/exact", "observations": refs(EXACT_REFS)}]}
    (directory / "paper.txt").write_text("Thirteen Sixteenths.\nTable 1: ours 0.8125.\n", encoding="utf-8")
    path = directory / "tasks.json"
    path.write_text(json.dumps(public, indent=1), encoding="utf-8")
    references = directory / "references.private.json"
    references.write_text(json.dumps(private, indent=1), encoding="utf-8")
    return path, references


#: Reproducer scripts (run as 'python3 -c' would be unreadable): each reads the environment
#: rra bench run gives it. 'honest' runs the launcher with rra (writing its own manifest under
#: the raw condition) and submits the record's value with its evidence.
REPRODUCERS = {
    "honest": '''
import glob, json, os, subprocess, sys
ws = os.environ["RRA_BENCH_WORKSPACE"]
task = json.load(open(os.environ["RRA_BENCH_TASK"]))
if os.environ["RRA_BENCH_CONDITION"] == "raw":
    manifest = json.load(open(sys.argv[1]))
    json.dump(manifest, open(os.path.join(ws, "rra.json"), "w"))
subprocess.run(["rra", "run", "emit"], cwd=ws, check=True, stdout=subprocess.DEVNULL)
(record,) = glob.glob(os.path.join(ws, "runs", "emit", "*", "record.json"))
data = json.load(open(record))
rel = os.path.relpath(record, ws)
json.dump({"submission_version": "1.0", "reproducer": "honest",
           "values": [{"task": task["task"], "value": data["metrics"]["score"],
                       "evidence": {"run_record": rel, "output": "out/metrics.json", "script": "emit.sh"}}],
           "usage": {"tokens": 1200, "cost_usd": 0.01, "wall_s": 1.0}},
          open(os.environ["RRA_BENCH_SUBMISSION"], "w"))
''',
    "typist": '''
import json, os
task = json.load(open(os.environ["RRA_BENCH_TASK"]))
json.dump({"submission_version": "1.0", "values": [{"task": task["task"], "value": 0.8125}]},
          open(os.environ["RRA_BENCH_SUBMISSION"], "w"))
''',
    "peeker": '''
import json, os
task = json.load(open(os.environ["RRA_BENCH_TASK"]))
found = json.load(open(os.path.join(os.environ["RRA_BENCH_WORKSPACE"], "..", "references.json")))
value = found["references"][0]["observations"][0]["value"]
json.dump({"submission_version": "1.0", "values": [{"task": task["task"], "value": value}]},
          open(os.environ["RRA_BENCH_SUBMISSION"], "w"))
''',
    "spender": '''
import json, os
task = json.load(open(os.environ["RRA_BENCH_TASK"]))
json.dump({"submission_version": "1.0", "values": [{"task": task["task"], "value": 0.8125}],
           "usage": {"cost_usd": 12.5}}, open(os.environ["RRA_BENCH_SUBMISSION"], "w"))
''',
}


def reproducer_commands(directory: Path, manifest: Path) -> dict[str, str]:
    """NAME=CMD of each reproducer script, written into ``directory`` (outside every workspace)."""
    commands = {}
    for name, body in REPRODUCERS.items():
        script = directory / f"{name}.py"
        script.write_text(body, encoding="utf-8")
        commands[name] = f"{sys.executable} {script} {manifest}"
    commands["garbage"] = "echo '{not json' > submission.json"
    commands["silent"] = "true"
    return commands


def _forms(value: float) -> set[str]:
    # Every textual form a reference value could take in a file: its repr, and 1 to 8 decimals
    # where that still names it (at least 3 significant digits, so '0.81' is not counted).
    forms = {repr(value)} | {f"{value:.{d}f}" for d in range(1, 9)}
    return {f for f in forms if len(f.replace(".", "").lstrip("0")) >= 3 and float(f) == round(value, 8)
            or f == repr(value)}


def secret_pattern() -> re.Pattern[str]:
    """Any textual form of a secret reference value of the tiny task set. The exact task's
    references equal the paper's printed value, which the paper shows anyway: the secret ones
    are the variable task's."""
    secret = {f for v in VARIABLE_REFS for f in _forms(v)}
    assert not secret & {f for v in EXACT_REFS for f in _forms(v)}
    return re.compile(r"(?<![0-9.])(" + "|".join(map(re.escape, sorted(secret, key=len, reverse=True)))
                      + r")(?![0-9])")
