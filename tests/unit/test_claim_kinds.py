"""RRA 1.2 claim kinds: the matching rules of rra_tools.answers (their edges), the manifest model
and schema (a claim without a kind keeps numbers), the rules RRA514 and RRA515 (exact messages,
located), and the run path's view (a non-numeric value reads as NaN, never as a crash)."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest

from rra_tools.answers import (AnswerError, AnswerInterval, answer_mismatch, answers_match, normalise_text,
                               parse_answer, split_elements)
from rra_tools.model.manifest_view import read_manifest
from rra_tools.model.claims import Claim
from rra_tools.validate import validate_bytes, validate_path
from tests.unit.test_rules import base, write


def v12(kind: str | None = None, reported: Any = None, values: list[Any] | None = None,
        precision: int = 0) -> dict[str, Any]:
    m = copy.deepcopy(base())
    m["rra_version"] = "1.2"
    claim = m["claims"][0]
    if kind is not None:
        claim["kind"] = kind
    if reported is not None:
        claim["reported"] = {"value": reported, "precision": precision}
    if values is not None:
        for obs, value in zip(claim["reference"]["observations"], values):
            obs["value"] = value
    return m


def diagnostics(manifest: dict[str, Any]) -> list[tuple[str, str, str]]:
    result = validate_bytes(json.dumps(manifest).encode(), name="rra.json", root=None)
    return [(d.code, d.pointer, d.message) for d in result.diagnostics if d.code != "RRA601"]


# Matching ----------------------------------------------------------------------------------

@pytest.mark.parametrize("a, b, same", [
    ("AdamW", " adamw. ", True), ("ReLU", "ＲｅＬＵ", True), ("Straße", "STRASSE", True),
    ("3.14", "3,14", False), ("1,000", "1000", False), ("state-of-the-art", "stateoftheart", True),
    ("a  b", "a b", True), ("a b", "ab", False), ("x+y", "xy", False), ("50%", "50", True),
])
def test_string_normalisation(a: str, b: str, same: bool) -> None:
    assert (normalise_text(a) == normalise_text(b)) is same


def test_punctuation_between_digits_is_kept_only_there() -> None:
    assert normalise_text("v1.2, (3.5)") == "v1.2 3.5"
    assert normalise_text(".5") == "5" and normalise_text("-3") == "3"


@pytest.mark.parametrize("got, ok", [(0.915, True), (0.905, True), (0.9151, False), (0.9049, False),
                                     ("0.915", True), ("0.92", False)])
def test_list_numbers_match_within_half_a_unit_of_precision_inclusive(got: Any, ok: bool) -> None:
    assert answers_match("list", ("x", 0.91), ("x", got), 2) is ok


def test_list_order_matters_and_set_order_does_not() -> None:
    assert answer_mismatch("list", ("a", "b"), ("b", "a"), 0) == "element 0: \"b\" does not match \"a\" (texts normalised)"
    assert answers_match("set", ("a", "b"), ("b", "a"), 0)
    assert answer_mismatch("set", ("a", "b"), ("a",), 0) == "1 element(s) where 2 are expected"
    assert answer_mismatch("list", ("a",), ("a", "b"), 0) == "2 element(s) where 1 are expected"


def test_set_numbers_pair_up_whenever_a_pairing_exists() -> None:
    # Greedy pairing of 1.00 with the first close value would leave 1.08 without a partner.
    assert answers_match("set", (1.0, 1.08), (1.04, 1.1), 1)
    assert not answers_match("set", (1.0, 1.0), (1.0, 1.2), 1)
    assert answer_mismatch("set", (1.0, 2.0), (1.0, 2.2), 1) == "2.0 has no counterpart within 0.05 in [1.0, 2.2]"


def test_a_number_never_matches_a_text() -> None:
    assert not answers_match("list", ("1",), ("one",), 0)
    assert not answers_match("set", ("adam", 3), ("adam", "three"), 0)


def test_string_kind_takes_a_number_as_its_text() -> None:
    assert answers_match("string", "42", 42.0, 0)
    assert answer_mismatch("string", "42", 42.5, 0) == "'42.5' does not match '42' (normalised: '42.5' vs '42')"
    assert answer_mismatch("string", "a", ("a",), 0) == '["a"] is not a string'


@pytest.mark.parametrize("raw, kind, message", [
    ("Adam", "set", "'Adam' is a string, not a JSON array (kind set)"),
    (3, "list", "3 is a number, not a JSON array (kind list)"),
    (True, "string", "true is not a string (kind string)"),
    (["a", None], "list", "element 1 is null, not a number or a string"),
    (["a", [1]], "set", "element 1 is a JSON array, not a number or a string"),
    ({"a": 1}, "list", "the answer is a JSON object, not a JSON array (kind list)"),
    ("a", "number", "unknown claim kind 'number'; the kinds are number, string, set, list"),
])
def test_parse_answer_refuses_with_the_reason(raw: Any, kind: str, message: str) -> None:
    with pytest.raises(AnswerError) as caught:
        parse_answer(raw, kind)
    assert str(caught.value) == message


def test_parse_answer_scales_numbers_of_a_list() -> None:
    assert parse_answer([0.5, "x"], "list", scale=100) == (50.0, "x")
    assert parse_answer(7, "string") == "7"


def test_split_elements_reads_commas_or_a_json_array() -> None:
    assert split_elements("a,b , c") == ("a", "b", "c")
    assert split_elements("[1, 2.5, \"x\"]") == ("1", "2.5", "x")
    assert split_elements("  ") == ()
    with pytest.raises(AnswerError):
        split_elements("[1, ")


def test_answer_interval_scores_by_match_and_accepts_no_number() -> None:
    interval = AnswerInterval.of("set", ("a", 1.0), 1, 3)
    assert interval.contains(["A", 1.04]) and interval.contains(("a", 0.96))
    assert not interval.contains(["a", 1.06]) and not interval.contains(1.0) and not interval.contains(True)
    assert (interval.low, interval.high, interval.n) == (0.0, 0.0, 3) and not interval.contains(0.0)
    assert interval.mismatch(["a"]) == "1 element(s) where 2 are expected"


# The model and the schema ------------------------------------------------------------------

def test_a_claim_is_a_number_by_default_and_dumps_as_before() -> None:
    claim = Claim.model_validate(base()["claims"][0])
    assert claim.kind == "number"
    assert "kind" not in claim.model_dump(exclude_defaults=True)
    assert claim.model_dump(exclude_defaults=True)["reported"] == {"value": 91.0, "precision": 1}


def test_a_number_claim_with_a_string_is_a_type_error_located(tmp_path: Path) -> None:
    m = v12(reported="91.0", precision=1)
    result = validate_path(write(tmp_path, m))
    [d] = [d for d in result.diagnostics if d.code != "RRA601"]
    assert (d.code, d.pointer, d.message) == ("RRA112", "/claims/0/reported/value", 'expected a number, got string "91.0"')
    assert d.line is not None and d.column is not None


def test_kind_in_a_1_1_manifest_is_rra102() -> None:
    m = v12("string", "AdamW", ["AdamW"] * 5)
    m["rra_version"] = "1.1"
    assert [c for c, _, _ in diagnostics(m)] == ["RRA102"]


def test_unknown_kind_is_reported_once() -> None:
    m = v12("strnig", "AdamW", ["AdamW"] * 5)
    assert [(c, p) for c, p, _ in diagnostics(m)] == [("RRA113", "/claims/0/kind")]


# The rules ---------------------------------------------------------------------------------

def test_valid_kinds_have_no_finding() -> None:
    assert diagnostics(v12("string", "AdamW", ["adamw", "AdamW.", "ADAMW", "AdamW", " AdamW "])) == []
    assert diagnostics(v12("list", ["r18", 0.91], [["r18", 0.912]] * 5, 2)) == []
    assert diagnostics(v12("set", ["b", "a"], [["a", "b"]] * 5)) == []


def test_rra514_messages_and_places() -> None:
    m = v12("string", ["AdamW"], ["AdamW", 3, ["x"], "AdamW", "AdamW"])
    assert diagnostics(m) == [
        ("RRA514", "/claims/0/reported/value", "a JSON array is not a string (kind string)"),
        ("RRA514", "/claims/0/reference/observations/1/value", "3 is a number, not a string (kind string)"),
        ("RRA514", "/claims/0/reference/observations/2/value", "a JSON array is not a string (kind string)"),
    ]


def test_rra514_empty_list_empty_string_and_stability() -> None:
    m = v12("set", [], [["a"]] * 5)
    assert ("RRA514", "/claims/0/reported/value", "the set is empty") in diagnostics(m)
    m = v12("string", " ... ", ["a"] * 5)
    assert ("RRA514", "/claims/0/reported/value", "string answer ' ... ' is empty once normalised") in diagnostics(m)
    m = v12("string", "a", ["a"] * 5)
    m["claims"][0]["reference"]["stability"] = "stable"
    assert diagnostics(m) == [("RRA514", "/claims/0/reference/stability",
                               "a claim of kind string has no stability class (it has no interval)")]


def test_rra515_each_disagreeing_observation_unless_a_discrepancy_lists_the_claim() -> None:
    m = v12("list", ["a", "b"], [["a", "b"], ["b", "a"], ["a", "b"], ["a", "c"], ["a", "b"]])
    assert diagnostics(m) == [
        ("RRA515", "/claims/0/reference/observations/1/value",
         'observation 1 does not give the reported answer: element 0: "b" does not match "a" (texts normalised)'),
        ("RRA515", "/claims/0/reference/observations/3/value",
         'observation 3 does not give the reported answer: element 1: "c" does not match "b" (texts normalised)'),
    ]
    m["discrepancies"] = [{"id": "d", "paper_says": "p", "code_does": "c", "follows": "paper", "rationale": "r",
                           "impact": "i", "claims": ["acc"]}]
    assert diagnostics(m) == []


def test_numeric_rules_leave_non_numeric_claims_alone() -> None:
    # No interval, stability or finiteness finding for answers that are not numbers (RRA504/506/507).
    m = v12("list", [1.0, 2.0], [[1.0, 2.0]] * 5, 1)
    m["claims"][0]["reported"]["value"] = [1.0, 2.0]
    assert diagnostics(m) == []


# The run path's view ------------------------------------------------------------------------

def test_view_reads_a_non_numeric_value_as_nan_and_keeps_the_kind() -> None:
    m = v12("string", "AdamW", ["AdamW"] * 5)
    view = read_manifest(m)
    claim = view.claims[0]
    assert claim.kind == "string" and math.isnan(claim.reported.value)
    assert all(math.isnan(o.value) for o in claim.reference.observations)
    numeric = read_manifest(base()).claims[0]
    assert numeric.kind == "number" and numeric.reported.value == 91.0 and type(numeric.reported.value) is float


def test_reproduced_level_is_not_met_by_a_non_numeric_claim_without_answers() -> None:
    from rra_tools.validate.rules.levels import _claim_reason

    claim = v12("string", "AdamW", ["AdamW"] * 5)["claims"][0]
    record = {"metrics": {"other": 91.0}}
    assert list(_claim_reason(claim, {"train": [record]})) == [
        "claim 'acc' (kind string) has no answer in the run records, which hold numbers only"]
    assert list(_claim_reason(claim, {"train": [{"metrics": {"acc": "adamw."}}]})) == []
    assert list(_claim_reason(claim, {"train": [{"metrics": {"acc": "SGD"}}]})) == [
        "claim 'acc': an obtained answer does not match: 'SGD' does not match 'AdamW' (normalised: 'sgd' vs 'adamw')"]


# rra run ------------------------------------------------------------------------------------

def _answer_artifact(root: Path, body: str) -> Path:
    """An artifact whose launcher writes ``body`` to out/m.json; claims: a number 'n' and a string 'best'."""
    root.mkdir(parents=True)
    claim = {"paper_location": {"table": "1"}, "launcher": "emit", "metric": {"name": "m", "unit": "", "direction": "higher"}}
    observations = [{"value": v, "repeat": i, "fingerprint": {"hardware": "x", "software": "sh"}} for i, v in enumerate("aaa")]
    (root / "rra.json").write_text(json.dumps({
        "rra_version": "1.2", "id": "a", "title": "A", "paper": {"title": "A", "authors": [{"name": "T"}]},
        "code": {"license": "MIT", "tree": {"path": "."}}, "environment": {"interpreter": {"version": "3.11"}},
        "launchers": [{"id": "emit", "argv": ["sh", "emit.sh"], "stochastic": False, "repeats": 3,
                       "resources": {"timeout_s": 60, "expected_runtime_s": 1},
                       "outputs": [{"id": "m", "path": "out/m.json", "format": "json"}]}],
        "claims": [{"id": "n", **claim, "extract": {"output": "m", "json_pointer": "/n"},
                    "reported": {"value": 0.5, "precision": 1},
                    "reference": {"observations": [{**o, "value": 0.5} for o in observations]}},
                   {"id": "best", "kind": "string", **claim, "extract": {"output": "m", "json_pointer": "/best"},
                    "reported": {"value": "a", "precision": 0}, "reference": {"observations": observations}}]}))
    (root / "emit.sh").write_text(f"mkdir -p out && printf '%s' '{body}' > out/m.json\n")
    return root


@pytest.mark.parametrize("body, status, messages", [
    ('{"n": 0.5, "best": "AdamW"}', "completed", []),
    ('{"n": 0.5, "best": ["AdamW"]}', "failed",
     ["claim 'best': output 'm' (out/m.json) the value at '/best': a JSON array is not a string (kind string)"]),
    ('{"n": 0.5}', "failed", ["claim 'best': output 'm' (out/m.json) no member 'best' at '/best'"]),
])
def test_rra_run_checks_a_string_claims_answer_and_records_numbers_only(tmp_path: Path, body: str, status: str,
                                                                         messages: list[str]) -> None:
    from rra_tools.io.artifact import load_artifact
    from rra_tools.run.local import RunOptions, execute
    from rra_tools.run.plan import plan_runs

    root = _answer_artifact(tmp_path / "art", body)
    (plan, *_) = plan_runs(load_artifact(root), "emit")
    result = execute(plan, RunOptions(kill_grace_s=0.5, gpus=[]))
    record = json.loads(result.record_path.read_text())
    assert (record["status"], record["metrics"], record["messages"]) == (status, {"n": 0.5}, messages)


# rra results and rra review -----------------------------------------------------------------

def _run_all(root: Path) -> None:
    from rra_tools.io.artifact import load_artifact
    from rra_tools.run.local import RunOptions, execute
    from rra_tools.run.plan import plan_runs

    for plan in plan_runs(load_artifact(root), "emit", all_seeds=True):
        execute(plan, RunOptions(kill_grace_s=0.5, gpus=[]))


@pytest.mark.parametrize("written, inside", [("A.", True), ("b", False)])
def test_rra_results_reads_a_string_claims_answer_from_the_outputs(tmp_path: Path, written: str,
                                                                   inside: bool) -> None:
    from rra_tools.cli.run_cmd import render_results
    from rra_tools.io.artifact import load_artifact
    from rra_tools.run.results import collect_results

    root = _answer_artifact(tmp_path / "art", json.dumps({"n": 0.5, "best": written}))
    _run_all(root)
    results = collect_results(load_artifact(root))
    best = next(c for c in results.claims if c.claim == "best")
    assert (best.kind, best.expected, best.answer, best.inside) == ("string", "a", written, inside)
    data = best.as_dict()
    assert (data["reported"], data["obtained"], data["inside"]) == ("a", written, inside)
    text = render_results(results, "text")
    assert "claim best (launcher emit, kind string)\n  reported  'a'\n  obtained  " + repr(written) in text
    assert ("  verdict   matches\n" in text) is inside
    numeric = next(c for c in results.claims if c.claim == "n")
    assert numeric.kind == "number" and numeric.inside is True and "kind" not in numeric.as_dict()


def test_rra_review_traces_a_string_claim_to_its_answer(tmp_path: Path) -> None:
    from rra_tools.builder.review.artifact import ReviewOptions, review_artifact

    root = _answer_artifact(tmp_path / "art", json.dumps({"n": 0.5, "best": "b"}))
    _run_all(root)
    report = review_artifact(root, options=ReviewOptions(run=False))
    verdict = next(c for c in report.model_dump(exclude_none=True)["claims"] if c["claim"] == "best")
    assert (verdict["kind"], verdict["reported"], verdict["traced"]) == ("string", "a", False)
    assert [(s["extracted_answer"], s["ok"]) for s in verdict["trace"]] == [("b", False)] * 3
    assert [f.message for f in report.findings if f.code == "RRA923"][0].endswith(
        "'out/m.json' gives 'b', not the reported answer: 'b' does not match 'a' (normalised: 'b' vs 'a')")


def test_rra_review_reruns_a_string_claim_and_judges_its_answer(tmp_path: Path) -> None:
    from rra_tools.builder.review.artifact import ReviewOptions, review_artifact

    root = _answer_artifact(tmp_path / "art", json.dumps({"n": 0.5, "best": "b"}))
    _run_all(root)
    report = review_artifact(root, options=ReviewOptions(env="current"))
    verdict = next(c for c in report.model_dump(exclude_none=True)["claims"] if c["claim"] == "best")
    assert (verdict["reviewed"], verdict["inside"]) == ("b", False)
    [rra901] = [f.message for f in report.findings if f.code == "RRA901"]
    assert rra901.startswith("claim 'best': the review obtained 'b', which does not match the reported answer: ")
    assert rra901.endswith("'b' does not match 'a' (normalised: 'b' vs 'a')")
