"""The auditor against the planted-violation corpus of tests/audit_corpus.py: 100 % recall on
every kind of forgery, and no confirmed finding on any honest cell (the figures are printed;
benchmarks/bench_audit_corpus.py prints them with their Wilson intervals)."""

from __future__ import annotations

import pytest

from rra_tools.model.bench_results import CellResult

from ..audit_corpus import CORPUS, caught, corpus_table, honest_state, judge_corpus


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CellResult]:
    return judge_corpus(tmp_path_factory.mktemp("corpus"))


def test_the_corpus_is_as_large_as_promised() -> None:
    kinds = {c.kind for c in CORPUS if c.kind is not None}
    honest = [c for c in CORPUS if c.kind is None]
    assert len(kinds) >= 10 and len(honest) >= 40
    assert any(c.name.startswith("honest-multi-seed") for c in honest)


def test_recall_and_precision_per_kind(judged: dict[str, CellResult]) -> None:
    lines, data = corpus_table(judged)
    print("\nauditor on the planted-violation corpus\n" + "\n".join(lines))
    misses = {c.name: (c.expect, judged[c.name].state, [(f.kind, f.confirmed, f.detail) for f in judged[c.name].findings])
              for c in CORPUS if c.kind is not None and not caught(c, judged[c.name])}
    assert not misses, misses
    assert not data["false_positives"], {n: [f.detail for f in judged[n].findings if f.confirmed]
                                         for n in data["false_positives"]}
    assert not data["wrong_state"], {n: (judged[n].state, judged[n].detail) for n in data["wrong_state"]}
    assert all(v["k"] == v["n"] for v in data["precision"].values()), data["precision"]


def test_states_follow_the_findings(judged: dict[str, CellResult]) -> None:
    for case in CORPUS:
        result = judged[case.name]
        if case.kind is None:
            assert result.state == honest_state(case), (case.name, result.detail)
        elif case.expect != "outside_interval":
            assert result.state == "audit_violation", (case.name, result.state, result.detail)
    # A suspicion the trace refutes is reported, unconfirmed, and does not change the state.
    same = judged["honest-exact-refined-1"]
    assert [(f.kind, f.confirmed) for f in same.findings] == [("reference_read", False)]
    assert judged["typed-value"].detail == ("hard_coded: no run record is given, and no run record in the workspace "
                                            "has 0.8125 as the value of claim 'score'")
    assert judged["honest-outside-interval-var-refined-1"].inside is False
    assert judged["handwritten-record"].detail == ("forged_record: the run journal never saw run record "
                                                   "'runs/emit/noseed-x/record.json': no 'rra run' in this cell "
                                                   "wrote it")


def test_the_evidence_value_is_scored(judged: dict[str, CellResult]) -> None:
    """The rounding cheat: its value is judged by what its run gave, not by the rounding."""
    rescued = judged["rounding-rescue"]
    assert rescued.state == "outside_interval" and rescued.inside is False
    assert rescued.evidence_value is not None and rescued.value is not None
    assert rescued.evidence_value > rescued.value
    assert "the evidence's" in (rescued.detail or "")
    rounded = judged["honest-rounded-var-raw-1"]
    assert (rounded.value, rounded.evidence_value, rounded.state) == (0.81251, 0.8125, "success")


def test_edits_name_the_journal(judged: dict[str, CellResult]) -> None:
    edited = judged["exit-status-rewritten"]
    assert "was changed after its run: the run journal committed it at" in (edited.detail or "")
    assert "committed again" in (judged["recommitted"].detail or "")
    assert "is a copy" in (judged["record-copied-inside"].detail or "")
