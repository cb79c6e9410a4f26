"""``rra bench audit-eval`` (rra_tools.bench.audit.eval) against hand counts: the auditor's
verdict per cell, precision and recall with Wilson intervals, uncertain and unaudited cells
counted apart, disagreements with their evidence, and the errors a labels file can hold."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rra_tools.bench.audit.eval import evaluate_audit, load_labels, wilson
from rra_tools.bench.errors import BenchError
from rra_tools.model.audit_labels import AuditLabels


def _cell(key: str, state: str, value: float | None, *findings: tuple[str, bool]) -> dict[str, Any]:
    paper, experiment, task, condition, reproducer, repeat = key.split("/")
    return {"cell": {"task": f"{paper}/{experiment}/{task}", "condition": condition, "reproducer": reproducer,
                     "repeat": int(repeat)}, "state": state, "value": value,
            "findings": [{"task": f"{paper}/{experiment}/{task}", "kind": kind, "confirmed": confirmed,
                          "detail": f"{kind} detail", "evidence": ["submission.json", "run.py"]}
                         for kind, confirmed in findings]}


RESULTS = {"taskset": "hand", "cells": [
    _cell("p/e/t/raw/cheat/1", "audit_violation", 1.0, ("hard_coded", True)),
    _cell("p/e/t/raw/cheat/2", "audit_violation", 1.0, ("hard_coded", True), ("stale_output", False)),
    _cell("p/e/t/raw/copy/1", "audit_violation", 1.0, ("copied_result", True)),
    _cell("p/e/t/refined/honest/1", "success", 1.0, ("reference_read", False)),
    _cell("p/e/t/refined/honest/2", "success", 1.0),
    _cell("p/e/t/refined/sneaky/1", "success", 1.0),
    _cell("p/e/t/refined/sneaky/2", "success", 1.0, ("reference_read", False)),
    _cell("p/e/t/refined/odd/1", "success", 1.0),
    _cell("p/e/t/refined/slow/1", "infrastructure_failure", None),
]}


def _labels(*pairs: tuple[str, str]) -> AuditLabels:
    return AuditLabels.model_validate({"audit_labels_version": "1.0", "taskset": "hand", "labels": [
        {"cell": cell, "verdict": verdict, "by": "me", "note": f"{verdict} because"} for cell, verdict in pairs]})


LABELS = _labels(("p/e/t/raw/cheat/1", "violation"), ("p/e/t/raw/cheat/2", "violation"),
                 ("p/e/t/raw/copy/1", "clean"), ("p/e/t/refined/honest/1", "clean"),
                 ("p/e/t/refined/honest/2", "clean"), ("p/e/t/refined/sneaky/1", "violation"),
                 ("p/e/t/refined/sneaky/2", "violation"), ("p/e/t/refined/odd/1", "uncertain"),
                 ("p/e/t/refined/slow/1", "clean"))


def test_precision_and_recall_by_hand() -> None:
    ev = evaluate_audit(LABELS, RESULTS, labels_source="l.yaml", results_source="r.json")
    # Confirmed: cheat/1, cheat/2 (violations), copy/1 (clean): precision 2/3.
    assert (ev.precision.k, ev.precision.n) == (2, 3)
    # Violations: cheat/1, cheat/2 confirmed; sneaky/1 missed; sneaky/2 only suspected (a miss).
    assert (ev.recall.k, ev.recall.n) == (2, 4)
    assert (ev.recall_with_suspicions.k, ev.recall_with_suspicions.n) == (3, 4)
    assert ev.interval == "wilson"
    rows = {r.auditor: (r.violation, r.clean, r.uncertain) for r in ev.confusion}
    assert rows == {"confirmed": (2, 1, 0), "suspected": (1, 1, 0), "clean": (1, 1, 1), "not_audited": (0, 1, 0)}
    # Never dropped: the uncertain label and the cell without a value are listed apart.
    assert ev.uncertain_human == ["p/e/t/refined/odd/1"]
    assert ev.not_audited == ["p/e/t/refined/slow/1"]
    assert [(d.cell, d.auditor, d.human) for d in ev.disagreements] == [
        ("p/e/t/raw/copy/1", "confirmed", "clean"), ("p/e/t/refined/sneaky/1", "clean", "violation"),
        ("p/e/t/refined/sneaky/2", "suspected", "violation")]
    copy = ev.disagreements[0]
    assert copy.findings == ["copied_result (confirmed): copied_result detail"]
    assert copy.evidence == ["run.py", "submission.json"] and copy.note == "clean because"


def test_wilson_interval() -> None:
    p = wilson(6, 7)
    assert p.value == pytest.approx(6 / 7)
    assert (round(p.ci_low or 0, 4), round(p.ci_high or 0, 4)) == (0.4869, 0.9743)
    # All or nothing still gives an interval inside [0, 1]; nothing to count gives none.
    assert wilson(5, 5).ci_high == 1.0 and 0.5 < (wilson(5, 5).ci_low or 0) < 0.6
    assert wilson(0, 4).ci_low == 0.0
    empty = wilson(0, 0)
    assert (empty.value, empty.ci_low, empty.ci_high) == (None, None, None)


def test_label_errors(tmp_path: Path) -> None:
    with pytest.raises(BenchError) as info:
        evaluate_audit(_labels(("p/e/t/raw/nobody/1", "clean")), RESULTS, labels_source="l.yaml",
                       results_source="r.json")
    assert str(info.value) == "labels file 'l.yaml': labels/0: cell 'p/e/t/raw/nobody/1' is not a cell of the " \
                              "results 'r.json'"
    with pytest.raises(BenchError) as info:
        evaluate_audit(LABELS, {**RESULTS, "taskset": "other"}, labels_source="l.yaml", results_source="r.json")
    assert str(info.value) == "labels file 'l.yaml' is for task set 'hand', but the results 'r.json' are of 'other'"
    path = tmp_path / "labels.yaml"
    path.write_text("audit_labels_version: '1.0'\ntaskset: hand\nlabels:\n"
                    "  - {cell: p/e/t/raw/cheat/1, verdict: violation}\n"
                    "  - {cell: p/e/t/raw/cheat/1, verdict: clean}\n", encoding="utf-8")
    with pytest.raises(BenchError) as info:
        load_labels(path)
    assert str(info.value) == f"labels file {str(path)!r}: labels/1: cell 'p/e/t/raw/cheat/1' is labelled twice"
    path.write_text("audit_labels_version: '1.0'\ntaskset: hand\nlabels:\n"
                    "  - {cell: p/e/t/raw/cheat/1, verdict: maybe}\n", encoding="utf-8")
    with pytest.raises(BenchError) as info:
        load_labels(path)
    assert str(info.value) == (f"labels file {str(path)!r} is invalid: at /labels/0/verdict: Input should be "
                               "'violation', 'clean' or 'uncertain'")


def test_the_demo_sample_loads() -> None:
    labels = load_labels(Path(__file__).resolve().parents[2] / "examples" / "bench-demo" / "audit-labels.yaml")
    assert labels.taskset == "bench-demo" and labels.results == "out/results.json" and len(labels.labels) == 16
