"""Scoring one value (``score_value``) and the totals, called directly: every state with its exact
detail, the evidence's value judged in place of the submitted one, confirmed findings against
unconfirmed ones, answers of each shape, and totals in which every state counts."""

from __future__ import annotations

import pytest

from rra_tools.answers import AnswerInterval
from rra_tools.bench.scoring import group_totals, score_value, totals
from rra_tools.bench.submissions import AnswerEntry, Entry
from rra_tools.intervals import Interval
from rra_tools.model.bench_results import AuditFinding, CellResult

INTERVAL = Interval(0.5, 0.01, 0.005, 0.01, 3)  # [0.49, 0.51]


def _finding(kind: str = "hard_coded", confirmed: bool = True, detail: str = "d") -> AuditFinding:
    return AuditFinding(task="p/e/t", kind=kind, confirmed=confirmed, detail=detail)


def test_no_entry_is_a_missing_value_and_a_string_a_parse_failure() -> None:
    assert score_value("p/e/t", INTERVAL, None, []) == (
        "missing_value", None, None, "the submission has no value for task 'p/e/t'")
    assert score_value("t", INTERVAL, "values/0: not a number", []) == (
        "parse_failure", None, None, "values/0: not a number")


def test_a_value_inside_succeeds_and_one_outside_says_where() -> None:
    assert score_value("t", INTERVAL, Entry("t", 0.5, None), []) == ("success", 0.5, True, None)
    assert score_value("t", INTERVAL, Entry("t", 0.52, None), []) == (
        "outside_interval", 0.52, False, f"0.52 is outside [{INTERVAL.low!r}, {INTERVAL.high!r}]")


def test_the_evidence_is_judged_not_the_submitted_rounding() -> None:
    # Submitted inside, its evidence outside: outside, and the detail names both.
    assert score_value("t", INTERVAL, Entry("t", 0.51, None), [], 0.5104) == (
        "outside_interval", 0.51, False,
        f"the evidence's 0.5104 (submitted as 0.51) is outside [{INTERVAL.low!r}, {INTERVAL.high!r}]")
    # Submitted outside, its evidence inside: success, the submitted value kept.
    assert score_value("t", INTERVAL, Entry("t", 0.52, None), [], 0.5096) == ("success", 0.52, True, None)
    # Evidence equal to the value: the plain detail.
    assert score_value("t", INTERVAL, Entry("t", 0.52, None), [], 0.52)[3] == (
        f"0.52 is outside [{INTERVAL.low!r}, {INTERVAL.high!r}]")


def test_only_confirmed_findings_make_a_violation() -> None:
    entry = Entry("t", 0.5, None)
    assert score_value("t", INTERVAL, entry, [_finding(confirmed=False)]) == ("success", 0.5, True, None)
    assert score_value("t", INTERVAL, entry, [_finding(confirmed=False), _finding("copied_result", detail="x")]) == (
        "audit_violation", 0.5, True, "copied_result: x")
    two = [_finding("forged_record", detail="first"), _finding(confirmed=False), _finding()]
    assert score_value("t", INTERVAL, entry, two)[3] == "forged_record: first (and 1 more)"
    many = [_finding("forged_record", detail="first"), _finding(confirmed=False), _finding(), _finding()]
    assert score_value("t", INTERVAL, Entry("t", 0.6, None), many) == (
        "audit_violation", 0.6, False, "forged_record: first (and 2 more)")


@pytest.mark.parametrize("kind", ["string", "set"])
def test_an_answer_of_another_shape_is_a_parse_failure(kind: str) -> None:
    interval = AnswerInterval.of(kind, "adam" if kind == "string" else ("a", "b"), 2, 3)
    wrong = ("a", "b") if kind == "string" else "adam"
    state, value, inside, detail = score_value("t", interval, AnswerEntry("t", wrong, None), [])
    assert (state, value, inside) == ("parse_failure", None, None)
    shown = "a JSON array" if kind == "string" else "a string"
    wanted = "a string" if kind == "string" else "a JSON array"
    assert detail == f"value {wrong!r} is {shown}, not {wanted}: the claim is of kind {kind}"
    if kind == "set":
        assert score_value("t", interval, Entry("t", 1.0, None), [])[3] == (
            "value 1.0 is a number, not a JSON array: the claim is of kind set")


def test_answers_matched_outside_and_violated() -> None:
    interval = AnswerInterval.of("string", "adam", 0, 3)
    assert score_value("t", interval, AnswerEntry("t", "Adam", None), []) == ("success", None, True, None)
    state, value, inside, detail = score_value("t", interval, AnswerEntry("t", "sgd", None), [])
    assert (state, value, inside) == ("outside_interval", None, False) and detail and "sgd" in detail
    assert not detail.startswith("the evidence's")
    # The evidence's answer is judged, and named when it differs.
    state, _, inside, detail = score_value("t", interval, AnswerEntry("t", "adam", None), [], "sgd")
    assert (state, inside) == ("outside_interval", False)
    assert detail is not None and detail.startswith("the evidence's answer (submitted as 'adam'): ")
    assert score_value("t", interval, AnswerEntry("t", "sgd", None), [], "adam") == ("success", None, True, None)
    # A number given for a string claim is read as a string, and kept as the cell's value.
    assert score_value("t", AnswerInterval.of("string", "3.5", 1, 3), Entry("t", 3.5, None), []) == (
        "success", 3.5, True, None)
    many = [_finding(confirmed=False), _finding("reference_read", detail="r"), _finding()]
    assert score_value("t", interval, AnswerEntry("t", "sgd", None), many) == (
        "audit_violation", None, False, "reference_read: r (and 1 more)")
    assert score_value("t", interval, AnswerEntry("t", "adam", None), [_finding(detail="h")]) == (
        "audit_violation", None, True, "hard_coded: h")
    assert score_value("t", interval, AnswerEntry("t", "adam", None), [_finding(confirmed=False)]) == (
        "success", None, True, None)


def test_an_answer_for_a_number_claim_is_a_parse_failure() -> None:
    state, value, inside, detail = score_value("t", INTERVAL, AnswerEntry("t", "x", None, 3), [])
    assert (state, value, inside, detail) == (
        "parse_failure", None, None, "values/3: value 'x' is a string, not a JSON number")


def test_totals_count_every_state_and_add_unlisted_ones() -> None:
    got = totals(["success", "success", "outside_interval", "program_failure"])
    assert got.attempts == 4 and got.success_rate == 0.5
    assert got.states["success"] == 2 and got.states["outside_interval"] == 1
    assert got.states["missing_value"] == 0 and got.states["program_failure"] == 1
    empty = totals([])
    assert empty.attempts == 0 and empty.success_rate is None and set(empty.states) >= {"success"}


def test_group_totals_by_reproducer_and_condition_in_order() -> None:
    def cell(reproducer: str, condition: str, state: str) -> CellResult:
        return CellResult.model_validate({"cell": {"task": "p/e/t", "condition": condition, "reproducer": reproducer,
                                                   "repeat": 1}, "state": state})

    groups = group_totals([cell("b", "raw", "success"), cell("a", "raw", "outside_interval"),
                           cell("b", "raw", "outside_interval"), cell("b", "refined", "success")])
    assert [(g.reproducer, g.condition, g.totals.attempts, g.totals.success_rate) for g in groups] == [
        ("b", "raw", 2, 0.5), ("a", "raw", 1, 0.0), ("b", "refined", 1, 1.0)]
