"""Benchmark tasks whose claim is not a number (RRA 1.2 kinds): a submission's string and list
values, the expected answer a task resolves to (and the errors when its references disagree),
scoring by match, and answers read from a run's output (extract_answer)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rra_tools.answers import AnswerInterval
from rra_tools.bench import BenchError, load_taskset, score_submissions
from rra_tools.bench.scoring import score_value
from rra_tools.bench.submissions import AnswerEntry, Entry, EvidencePaths, read_submission
from rra_tools.intervals import acceptance_interval
from rra_tools.model.manifest_view import CsvSpec, ExtractSpec, RegexSpec
from rra_tools.run.extract import ExtractError, extract_answer

FP = {"hardware": "x86_64", "software": "sh"}


def _artifact(root: Path, answers: list[Any] | None = None) -> Path:
    """An artifact with a number claim 'n' and a list claim 'l' (its observations ``answers``)."""
    answers = answers if answers is not None else [["adam", 0.5]] * 3
    root.mkdir(parents=True)
    claim = {"paper_location": {"table": "1"}, "launcher": "emit",
             "metric": {"name": "m", "unit": "", "direction": "higher"}}
    (root / "rra.json").write_text(json.dumps({
        "rra_version": "1.2", "id": "a", "title": "A", "paper": {"title": "A", "authors": [{"name": "T"}]},
        "code": {"license": "MIT", "tree": {"path": "."}}, "environment": {"interpreter": {"version": "3.11"}},
        "launchers": [{"id": "emit", "argv": ["sh", "emit.sh"], "stochastic": False, "repeats": 3,
                       "resources": {"timeout_s": 60, "expected_runtime_s": 1},
                       "outputs": [{"id": "m", "path": "out/metrics.json", "format": "json"}]}],
        "claims": [
            {"id": "n", **claim, "extract": {"output": "m", "json_pointer": "/n"}, "reported": {"value": 0.5, "precision": 2},
             "reference": {"observations": [{"value": v, "repeat": i, "fingerprint": FP}
                                            for i, v in enumerate((0.49, 0.5, 0.51))]}},
            {"id": "l", "kind": "list", **claim, "extract": {"output": "m", "json_pointer": "/l"},
             "reported": {"value": ["adam", 0.5], "precision": 1},
             "reference": {"observations": [{"value": v, "repeat": i, "fingerprint": FP}
                                            for i, v in enumerate(answers)]}}]}))
    return root


def _taskset(root: Path, answers: list[Any] | None = None) -> Path:
    _artifact(root / "artifact", answers)
    path = root / "tasks.json"
    path.write_text(json.dumps({"bench_version": "1.0", "id": "t", "papers": [{"id": "p", "experiments": [
        {"id": "e", "tasks": [{"id": "n", "artifact": "artifact", "claim": "n"},
                              {"id": "l", "artifact": "artifact", "claim": "l"}]}]}]}))
    return path


def _submission(path: Path, values: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"submission_version": "1.0", "reproducer": "r", "values": values}))
    return path


# Reading -----------------------------------------------------------------------------------

def test_string_and_list_values_are_answer_entries_and_numbers_stay_entries(tmp_path: Path) -> None:
    read = read_submission(_submission(tmp_path / "s.json", [
        {"task": "p/e/a", "value": 0.5}, {"task": "p/e/b", "value": "AdamW", "evidence": {"output": "o.json"}},
        {"task": "p/e/c", "value": ["adam", 3]}, {"task": "p/e/d", "value": ["adam", [3]]},
        {"task": "p/e/e", "value": ["adam", True]}]))
    assert read.values["p/e/a"] == Entry("p/e/a", 0.5, None) and type(read.values["p/e/a"].value) is float
    assert read.values["p/e/b"] == AnswerEntry("p/e/b", "AdamW", EvidencePaths(None, "o.json", None), 1)
    assert read.values["p/e/c"] == AnswerEntry("p/e/c", ("adam", 3.0), None, 2)
    assert str(read.values["p/e/d"]).startswith("values/3: entry is invalid at /value")
    assert read.values["p/e/e"] == 'values/4: value ["adam", true] holds a boolean, not a number or a string'


def test_a_string_for_a_number_task_is_the_parse_failure_it_always_was(tmp_path: Path) -> None:
    read = read_submission(_submission(tmp_path / "s.json", [{"task": "p/e/t", "value": "0.91"}]))
    interval = acceptance_interval([0.9, 0.91, 0.92], 2)
    assert score_value("p/e/t", interval, read.values["p/e/t"], []) == (
        "parse_failure", None, None, "values/0: value '0.91' is a string, not a JSON number")
    read = read_submission(_submission(tmp_path / "s.json", [{"task": "p/e/t", "value": [0.91]}]))
    assert score_value("p/e/t", interval, read.values["p/e/t"], []) == (
        "parse_failure", None, None, "values/0: value [0.91] is a JSON array, not a JSON number")


# Scoring -----------------------------------------------------------------------------------

def test_score_by_match_and_shape() -> None:
    interval = AnswerInterval.of("list", ("adam", 0.5), 1, 3)
    entry = AnswerEntry("p/e/l", ("ADAM", 0.54), None)
    assert score_value("p/e/l", interval, entry, []) == ("success", None, True, None)
    assert score_value("p/e/l", interval, entry._replace(value=("adam", 0.56)), []) == (
        "outside_interval", None, False, "element 1: 0.56 does not match 0.5 (numbers within 0.05)")
    assert score_value("p/e/l", interval, Entry("p/e/l", 0.5, None), []) == (
        "parse_failure", None, None, "value 0.5 is a number, not a JSON array: the claim is of kind list")
    strings = AnswerInterval.of("string", "42", 0, 3)
    assert score_value("p/e/s", strings, Entry("p/e/s", 42.0, None), []) == ("success", 42.0, True, None)
    assert score_value("p/e/s", strings, AnswerEntry("p/e/s", ("42",), None), [])[0] == "parse_failure"


def test_scoring_on_the_evidence_answer_when_the_auditor_gives_one() -> None:
    interval = AnswerInterval.of("string", "AdamW", 0, 3)
    entry = AnswerEntry("p/e/s", "AdamW", None)
    assert score_value("p/e/s", interval, entry, [], evidence="SGD") == (
        "outside_interval", None, False,
        "the evidence's answer (submitted as 'AdamW'): 'SGD' does not match 'AdamW' (normalised: 'sgd' vs 'adamw')")


# The task set ------------------------------------------------------------------------------

def test_a_list_task_resolves_to_its_expected_answer(tmp_path: Path) -> None:
    loaded = load_taskset(_taskset(tmp_path, [["adam", 0.5], ["Adam", 0.52], ["adam.", 0.46]]))
    number, answer = loaded.tasks
    assert (number.kind, answer.kind) == ("number", "list")
    assert number.values == (0.49, 0.5, 0.51) and type(number.interval) is not AnswerInterval
    assert isinstance(answer.interval, AnswerInterval) and answer.values == ()
    assert (answer.interval.expected, answer.interval.precision, answer.interval.n) == (("adam", 0.5), 1, 3)


def test_references_that_disagree_or_do_not_fit_are_errors(tmp_path: Path) -> None:
    with pytest.raises(BenchError) as caught:
        load_taskset(_taskset(tmp_path / "a", [["adam", 0.5], ["sgd", 0.5], ["adam", 0.5]]))
    assert str(caught.value) == ("task p/e/l: reference observation 1 (in the manifest) gives another answer than "
                                 "observation 0: element 0: \"sgd\" does not match \"adam\" (texts normalised)")
    path = _taskset(tmp_path / "b")
    (tmp_path / "b" / "refs.json").write_text(json.dumps({"bench_version": "1.0", "taskset": "t", "references": [
        {"task": "p/e/n", "observations": [{"value": v, "by": "x", "machine": "m", "code": "raw"}
                                           for v in (0.5, "high", 0.5)]}]}))
    with pytest.raises(BenchError) as caught:
        load_taskset(path, tmp_path / "b" / "refs.json")
    assert str(caught.value) == ("task p/e/n: reference observation 1 (in the references file) is 'high', not a "
                                 "number: claim 'n' is of kind number")


def test_rra_bench_score_scores_numbers_and_answers_side_by_side(tmp_path: Path) -> None:
    loaded = load_taskset(_taskset(tmp_path))
    cell = tmp_path / "cell" / "workspace"
    cell.mkdir(parents=True)
    submission = _submission(cell / "submission.json", [{"task": "p/e/n", "value": "0.5"},
                                                        {"task": "p/e/l", "value": ["Adam", "0.5"]}])
    results = {r.cell.task: r for r in score_submissions(loaded, [submission])}
    assert (results["p/e/n"].state, results["p/e/n"].detail) == (
        "parse_failure", "values/0: value '0.5' is a string, not a JSON number")
    # The answer matches, but no run produced it: the auditor traces answers as it traces numbers
    # (tests/acceptance/test_bench_audit_answers.py has the runs).
    assert results["p/e/l"].state == "audit_violation"
    assert results["p/e/l"].findings[0].kind == "hard_coded" and results["p/e/l"].inside is True


# Answers read from outputs -------------------------------------------------------------------

def test_extract_answer_by_pointer_csv_and_regex(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    out.write_text(json.dumps({"best": "AdamW", "ranking": ["a", 0.5], "n": 3, "obj": {"a": 1}}))
    assert extract_answer(out, ExtractSpec(output="m", json_pointer="/best"), "string") == "AdamW"
    assert extract_answer(out, ExtractSpec(output="m", json_pointer="/ranking", scale=100), "list") == ("a", 50.0)
    assert extract_answer(out, ExtractSpec(output="m", json_pointer="/n"), "string") == "3"
    with pytest.raises(ExtractError) as caught:
        extract_answer(out, ExtractSpec(output="m", json_pointer="/obj"), "set")
    assert str(caught.value) == "the value at '/obj': the answer is a JSON object, not a JSON array (kind set)"
    table = tmp_path / "t.csv"
    table.write_text("split,best,top\ntest,Adam W,\"a, b\"\n")
    assert extract_answer(table, ExtractSpec(output="t", csv=CsvSpec("best", row_index=0)), "string") == "Adam W"
    assert extract_answer(table, ExtractSpec(output="t", csv=CsvSpec("top", where={"split": "test"})), "set") == (
        "a", "b")
    log = tmp_path / "run.log"
    log.write_text("top: [\"x\", 0.25]\nbest = sgd\n")
    assert extract_answer(log, ExtractSpec(stream="stdout", regex=RegexSpec("^top: (.*)$")), "list") == ("x", 0.25)
    assert extract_answer(log, ExtractSpec(stream="stdout", regex=RegexSpec("^best = (.*)$")), "string") == "sgd"
    with pytest.raises(ExtractError) as caught:
        extract_answer(log, ExtractSpec(stream="stdout", regex=RegexSpec("^nothing (.*)$")), "string")
    assert str(caught.value) == "has no match for regex '^nothing (.*)$'"
