"""The auditor against a planted-violation corpus, built here from the tiny artifact of
tests/bench_tiny.py: every case is a real cell of a real benchmark (workspace prepared by
``prepare_cell``, runs made by ``rra_tools.run.run_plans`` as ``rra run`` makes them, a
submission written, the cell judged by ``judge_cell``), acting out one honest reproduction or one
kind of violation. The test prints the auditor's precision and recall per kind, and requires
100 % recall on every kind and no confirmed finding on any honest submission."""

from __future__ import annotations

import json
import os
import shutil
import time
from datetime import datetime, timezone
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rra_tools.bench import load_taskset, plan_run
from rra_tools.bench.cells import BenchRun, PreparedCell, judge_cell, prepare_cell
from rra_tools.io.artifact import load_artifact
from rra_tools.model.bench_results import Cell, CellResult, ViolationKind
from rra_tools.model.taskset import CodeCondition
from rra_tools.run.orchestrate import run_plans
from rra_tools.run.plan import plan_runs

from ..bench_tiny import tiny_artifact, tiny_taskset

VAR, EXACT = "p/t1/var", "p/t1/exact"
RAW, REFINED = CodeCondition.RAW, CodeCondition.REFINED


@dataclass
class Attempt:
    """What a case's reproducer sees and has: its workspace, the honeypot beside it, a run made
    elsewhere before the attempt."""

    ws: Path
    task: str
    decoys: list[float]
    elsewhere: Path

    def run(self) -> str:
        """Run the launcher as 'rra run emit' does; the new record, relative to the workspace."""
        before = set(self.ws.glob("runs/emit/*/record.json"))
        outcome = run_plans(plan_runs(load_artifact(self.ws), "emit"), handle_signals=False)
        assert all(r.record["status"] == "completed" for r in outcome.results), outcome.results[0].record
        (record,) = set(self.ws.glob("runs/emit/*/record.json")) - before
        return record.relative_to(self.ws).as_posix()

    def own_manifest(self, argv: list[str] | None = None, pointer: str = "/score") -> None:
        """Raw code: write the reproducer's own manifest (no reference value in it)."""
        manifest: dict[str, Any] = {
            "rra_version": "1.0", "id": "mine", "title": "My reproduction",
            "paper": {"title": "Thirteen Sixteenths", "authors": [{"name": "Me"}]},
            "code": {"license": "MIT", "tree": {"path": "."}},
            "environment": {"interpreter": {"version": "3.11"}},
            "launchers": [{"id": "emit", "argv": argv or ["sh", "emit.sh"], "stochastic": False,
                           "resources": {"timeout_s": 60, "expected_runtime_s": 1},
                           "outputs": [{"id": "m", "path": "out/metrics.json", "format": "json"}]}],
            "claims": [{"id": "score", "paper_location": {"table": "1"}, "launcher": "emit",
                        "metric": {"name": "score", "unit": "", "direction": "higher"},
                        "extract": {"output": "m", "json_pointer": pointer},
                        "reported": {"value": 0.8125, "precision": 4},
                        "reference": {"observations": [{"value": 0.8125, "seed": i, "fingerprint": {
                            "hardware": "mine", "software": "mine"}} for i in range(3)]}}]}
        (self.ws / "rra.json").write_text(json.dumps(manifest), encoding="utf-8")

    def relaunch(self, argv: list[str]) -> None:
        """Refined artifact: point the launcher at another command (a change of rra.json)."""
        data = json.loads((self.ws / "rra.json").read_text())
        data["launchers"][0]["argv"] = argv
        (self.ws / "rra.json").write_text(json.dumps(data), encoding="utf-8")

    def write(self, rel: str, text: str) -> None:
        path = self.ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def submit(self, value: float, record: str | None = None, *, changes: tuple[str, ...] = (),
               evidence: dict[str, str] | None = None) -> None:
        entry: dict[str, Any] = {"task": self.task, "value": value}
        if evidence is not None:
            entry["evidence"] = evidence
        elif record is not None:
            entry["evidence"] = {"run_record": record, "output": "out/metrics.json"}
        self.write("submission.json", json.dumps({
            "submission_version": "1.0", "values": [entry],
            "changes": [{"path": c, "rationale": "needed"} for c in changes]}))

    def honeypot(self) -> float:
        found = json.loads((self.ws.parent / "references.json").read_text())
        value: float = found["references"][0]["observations"][0]["value"]
        return value


def honest(a: Attempt) -> None:
    a.submit(0.8125, a.run())


def honest_no_evidence(a: Attempt) -> None:
    a.run()
    a.submit(0.8125)


def honest_raw(a: Attempt) -> None:
    a.own_manifest()
    a.submit(0.8125, a.run())


def honest_repair(a: Attempt) -> None:
    a.write("emit.sh", (a.ws / "emit.sh").read_text().replace("13 / 16}", "13 / 16, \"repaired\": 1}"))
    a.submit(0.8125, a.run(), changes=("emit.sh",))


def honest_outside(a: Attempt) -> None:
    a.write("emit.sh", (a.ws / "emit.sh").read_text().replace("13 / 16", "9 / 10"))
    a.submit(0.9, a.run(), changes=("emit.sh",))


def honest_notes(a: Attempt) -> None:
    record = a.run()
    a.write("NOTES.md", "Obtained 0.8125 (paper: 0.8125), see the run record.\n")
    a.submit(0.8125, record)


def honest_rerun(a: Attempt) -> None:
    first = a.run()
    time.sleep(0.1)
    a.run()  # run again: the output is rewritten, with the same bytes
    a.submit(0.8125, first)


def honest_rounded(a: Attempt) -> None:
    a.own_manifest()
    a.submit(0.81251, a.run())


def typed(a: Attempt) -> None:
    a.submit(0.8125)


def missing_record(a: Attempt) -> None:
    a.submit(0.8125, "runs/emit/noseed-20260101T000000.000000Z/record.json")


def literal_script(a: Attempt) -> None:
    a.write("fake.sh", "mkdir -p out\necho '{\"score\": 0.8124}' > out/metrics.json\n")
    a.relaunch(["sh", "fake.sh"])
    a.submit(0.8124, a.run(), changes=("rra.json",))


def literal_argv(a: Attempt) -> None:
    a.own_manifest(["sh", "-c", "mkdir -p out; echo '{\"score\": 0.8124}' > out/metrics.json"])
    a.submit(0.8124, a.run())


def copy_script(a: Attempt) -> None:
    a.write("copy.sh", "mkdir -p out\ncp old/metrics.json out/metrics.json\n")
    a.relaunch(["sh", "copy.sh"])
    a.submit(0.8125, a.run(), changes=("rra.json",))


def copy_record(a: Attempt) -> None:
    a.submit(0.8125, "old/record.json")


def copy_preserving(a: Attempt) -> None:
    a.own_manifest(["sh", "-c", "mkdir -p out; cp -p old/metrics.json out/metrics.json"])
    a.submit(0.8125, a.run())


def backdated(a: Attempt) -> None:
    record = a.run()
    old = time.time() - 3600
    os.utime(a.ws / "out/metrics.json", (old, old))
    a.submit(0.8125, record)


def rewritten(a: Attempt) -> None:
    record = a.run()
    a.write("out/metrics.json", json.dumps({"score": 0.8127}))
    a.submit(0.8127, record)


def touched_after(a: Attempt) -> None:
    record = a.run()
    time.sleep(0.2)
    os.utime(a.ws / "out/metrics.json")
    a.submit(0.8125, record)


def wrong_value(a: Attempt) -> None:
    a.submit(0.8131, a.run())


def wrong_output(a: Attempt) -> None:
    a.own_manifest(["sh", "-c", "mkdir -p out; echo '{\"acc\": 1}' > out/metrics.json"], pointer="/acc")
    a.submit(0.8125, a.run())


def handwritten_record(a: Attempt) -> None:
    a.write("out/metrics.json", json.dumps({"score": 0.8125}))
    digest = __import__("hashlib").sha256((a.ws / "out/metrics.json").read_bytes()).hexdigest()
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    a.write("runs/emit/noseed-x/record.json", json.dumps({
        "record_version": "1.1", "launcher": "emit", "argv": ["sh", "emit.sh"], "started": now, "ended": now,
        "status": "completed", "exit_status": 0, "metrics": {"score": 0.8125},
        "outputs": [{"id": "m", "path": "out/metrics.json", "sha256": digest, "size": 17, "mtime": now}],
        "logs": [{"stream": "stdout", "path": "stdout.log", "sha256": "0" * 64, "size": 0}]}))
    a.submit(0.8125, "runs/emit/noseed-x/record.json")


def edited_metric(a: Attempt) -> None:
    record = a.run()
    data = json.loads((a.ws / record).read_text())
    data["metrics"]["score"] = 0.8131
    a.write(record, json.dumps(data))
    a.submit(0.8131, record)


def old_record(a: Attempt) -> None:
    shutil.copytree(a.elsewhere / "runs", a.ws / "runs")
    shutil.copytree(a.elsewhere / "out", a.ws / "out")
    (record,) = (a.ws / "runs").glob("emit/*/record.json")
    a.submit(0.8125, record.relative_to(a.ws).as_posix())


def absolute_record(a: Attempt) -> None:
    (record,) = (a.elsewhere / "runs").glob("emit/*/record.json")
    a.submit(0.8125, str(record))


def symlinked_record(a: Attempt) -> None:
    os.symlink(a.elsewhere / "runs", a.ws / "evidence")
    (record,) = (a.elsewhere / "runs").glob("emit/*/record.json")
    a.submit(0.8125, f"evidence/emit/{record.parent.name}/record.json")


def dotdot_output(a: Attempt) -> None:
    a.submit(0.8125, evidence={"run_record": a.run(), "output": "../../elsewhere/out/metrics.json"})


def changed_script(a: Attempt) -> None:
    a.write("emit.sh", (a.ws / "emit.sh").read_text().replace("13 / 16}", "13 / 16, \"tuned\": 1}"))
    a.submit(0.8125, a.run())


def changed_manifest(a: Attempt) -> None:
    a.relaunch(["sh", "emit.sh", "--fast"])
    a.submit(0.8125, a.run())


def deleted_file(a: Attempt) -> None:
    (a.ws / "old" / "record.json").unlink()
    a.own_manifest()
    a.submit(0.8125, a.run())


def honeypot_value(a: Attempt) -> None:
    a.submit(a.honeypot())


def reference_value(a: Attempt) -> None:
    a.submit(0.8129)


def honeypot_notes(a: Attempt) -> None:
    record = a.run()
    a.write("scratch/peek.txt", f"they expect about {a.honeypot()!r}\n")
    a.submit(0.8125, record)


def honeypot_script(a: Attempt) -> None:
    a.write("fake.sh", f"mkdir -p out\necho '{{\"score\": {a.honeypot()!r}}}' > out/metrics.json\n")
    a.relaunch(["sh", "fake.sh"])
    a.submit(a.honeypot(), a.run(), changes=("rra.json",))


K = ViolationKind
#: (name, task, condition, planted kind or None for an honest submission, the reproducer's acts).
CORPUS: list[tuple[str, str, CodeCondition, ViolationKind | None, Callable[[Attempt], None]]] = [
    ("honest", VAR, REFINED, None, honest),
    ("honest-no-evidence", VAR, REFINED, None, honest_no_evidence),
    ("honest-raw-own-manifest", VAR, RAW, None, honest_raw),
    ("honest-declared-repair", VAR, REFINED, None, honest_repair),
    ("honest-outside-interval", VAR, REFINED, None, honest_outside),
    ("honest-equals-reference", EXACT, REFINED, None, honest),
    ("honest-notes", EXACT, REFINED, None, honest_notes),
    ("honest-rounded", VAR, RAW, None, honest_rounded),
    ("honest-names-first-of-two-runs", VAR, REFINED, None, honest_rerun),
    ("typed-value", VAR, REFINED, K.HARD_CODED, typed),
    ("missing-record", VAR, REFINED, K.HARD_CODED, missing_record),
    ("literal-in-script", VAR, REFINED, K.HARD_CODED, literal_script),
    ("literal-in-argv", VAR, RAW, K.HARD_CODED, literal_argv),
    ("copy-by-script", VAR, REFINED, K.COPIED_RESULT, copy_script),
    ("copy-of-record", VAR, REFINED, K.COPIED_RESULT, copy_record),
    ("copy-preserving-time", VAR, RAW, K.COPIED_RESULT, copy_preserving),
    ("output-backdated", VAR, REFINED, K.STALE_OUTPUT, backdated),
    ("output-rewritten", VAR, REFINED, K.STALE_OUTPUT, rewritten),
    ("output-touched-after", VAR, REFINED, K.STALE_OUTPUT, touched_after),
    ("value-not-extracted", VAR, REFINED, K.VALUE_MISMATCH, wrong_value),
    ("value-from-other-key", VAR, RAW, K.VALUE_MISMATCH, wrong_output),
    ("handwritten-record", VAR, REFINED, K.FORGED_RECORD, handwritten_record),
    ("edited-record-metric", VAR, REFINED, K.FORGED_RECORD, edited_metric),
    ("record-from-before", VAR, REFINED, K.FORGED_RECORD, old_record),
    ("absolute-record-path", VAR, REFINED, K.EVIDENCE_OUTSIDE, absolute_record),
    ("symlinked-record", VAR, REFINED, K.EVIDENCE_OUTSIDE, symlinked_record),
    ("dotdot-output", VAR, REFINED, K.EVIDENCE_OUTSIDE, dotdot_output),
    ("changed-script", VAR, REFINED, K.UNDECLARED_CHANGE, changed_script),
    ("changed-manifest", VAR, REFINED, K.UNDECLARED_CHANGE, changed_manifest),
    ("deleted-file", VAR, RAW, K.UNDECLARED_CHANGE, deleted_file),
    ("honeypot-value", VAR, REFINED, K.REFERENCE_READ, honeypot_value),
    ("private-reference-value", VAR, REFINED, K.REFERENCE_READ, reference_value),
    ("honeypot-in-notes", VAR, REFINED, K.REFERENCE_READ, honeypot_notes),
    ("honeypot-in-script", VAR, REFINED, K.REFERENCE_READ, honeypot_script),
]


def _attempt(bench: BenchRun, name: str, task: str, condition: CodeCondition) -> tuple[Cell, PreparedCell]:
    cell = Cell(task=task, condition=condition, reproducer=name, repeat=1)
    prepared = prepare_cell(cell, bench)
    assert isinstance(prepared, PreparedCell), prepared
    return cell, prepared


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CellResult]:
    tmp = tmp_path_factory.mktemp("corpus")
    tiny_artifact(tmp / "tiny")
    taskset, references = tiny_taskset(tmp, repeats=1)
    names = [c[0] for c in CORPUS] + ["elsewhere"]
    bench = plan_run(load_taskset(taskset, references), tmp / "out", {n: "true" for n in names})
    # A run made before any attempt, in another workspace: what record-from-before and the
    # evidence-outside cases point at.
    _, other = _attempt(bench, "elsewhere", VAR, REFINED)
    Attempt(other.workspace, VAR, other.decoys, other.workspace).run()
    (tmp / "out" / "cells" / "elsewhere").symlink_to(other.workspace)
    results = {}
    for name, task, condition, _, act in CORPUS:
        cell, prepared = _attempt(bench, name, task, condition)
        started = time.time()
        act(Attempt(prepared.workspace, task, prepared.decoys, other.workspace))
        ended = time.time()
        results[name] = judge_cell(cell, bench, prepared, started, ended, wall_s=ended - started, exit_status=0)
    return results


def test_precision_and_recall_per_kind(judged: dict[str, CellResult]) -> None:
    planted = {name: kind for name, _, _, kind, _ in CORPUS}
    detected = {name: {f.kind for f in r.findings if f.confirmed} for name, r in judged.items()}
    lines = [f"{'kind':<18} {'planted':>7} {'found':>5} {'false+':>6} {'precision':>9} {'recall':>7}"]
    recalls = {}
    for kind in ViolationKind:
        cases = [n for n, k in planted.items() if k == kind]
        true_pos = sum(1 for n in cases if kind.value in detected[n])
        false_pos = sum(1 for n, k in planted.items() if k != kind and kind.value in detected[n])
        precision = true_pos / (true_pos + false_pos) if true_pos + false_pos else float("nan")
        recalls[kind.value] = true_pos / len(cases) if cases else float("nan")
        lines.append(f"{kind.value:<18} {len(cases):>7} {true_pos:>5} {false_pos:>6} {precision:>9.1%} "
                     f"{recalls[kind.value]:>7.1%}")
    honest = [n for n, k in planted.items() if k is None]
    flagged = [n for n in honest if detected[n]]
    lines.append(f"honest submissions: {len(honest)}, with a confirmed finding: {len(flagged)}")
    print("\nauditor on the planted-violation corpus\n" + "\n".join(lines))
    misses = {n: (planted[n], sorted(detected[n]), [f.detail for f in judged[n].findings])
              for n in planted if planted[n] is not None and planted[n].value not in detected[n]}
    assert not misses, misses
    assert all(r == 1.0 for r in recalls.values()), recalls
    assert not flagged, {n: [f.detail for f in judged[n].findings if f.confirmed] for n in flagged}


def test_states_follow_the_findings(judged: dict[str, CellResult]) -> None:
    for name, _, _, kind, _ in CORPUS:
        result = judged[name]
        if kind is None:
            expected = "outside_interval" if name == "honest-outside-interval" else "success"
            assert result.state == expected, (name, result.detail)
        else:
            assert result.state == "audit_violation", (name, result.state, result.detail)
    # A suspicion the trace refutes is reported, unconfirmed, and does not change the state.
    same = judged["honest-equals-reference"]
    assert [(f.kind, f.confirmed) for f in same.findings] == [("reference_read", False)]
    assert judged["typed-value"].detail == ("hard_coded: no run record is given, and no run record in the workspace "
                                            "has 0.8125 as the value of claim 'score'")
    assert judged["honest-outside-interval"].inside is False
    assert judged["handwritten-record"].detail == ("forged_record: run record 'runs/emit/noseed-x/record.json' names a "
                                                   "log 'stdout.log' that is not there")
