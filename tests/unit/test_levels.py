"""The levels an artifact meets (rra_tools/validate/rules/levels.py): each reason a level is not
met, on real artifact directories made from the conformance suite's 'reproduced' base."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rra_tools.conformance import suite_path
from rra_tools.io.read.source import parse_document
from rra_tools.validate.api import validate_path
from rra_tools.validate.context import Context
from rra_tools.validate.rules import levels
from rra_tools.validate.rules.levels import level_reasons, levels_met, run_records

BASE = suite_path() / "bases" / "reproduced"
GOOD = {"available": [], "functional": [], "reproduced": []}


def _artifact(tmp_path: Path, edit: Callable[[dict[str, Any]], None] | None = None) -> tuple[Path, dict[str, Any]]:
    root = tmp_path / "artifact"
    shutil.copytree(BASE, root)
    data = parse_document((root / "rra.yaml").read_text(encoding="utf-8")).data
    if edit is not None:
        edit(data)
        (root / "rra.yaml").write_text(json.dumps(data), encoding="utf-8")
    return root, data


def _record(root: Path, name: str, record: dict[str, Any]) -> None:
    path = root / "runs" / "train" / name
    path.write_text(json.dumps({"launcher": "train", "exit_status": 0, "status": "completed", **record}))


def _reasons(root: Path, data: dict[str, Any]) -> dict[str, list[str]]:
    return level_reasons(Context(data, root))


def test_the_base_meets_every_level(tmp_path: Path) -> None:
    root, data = _artifact(tmp_path)
    assert _reasons(root, data) == GOOD
    result = validate_path(root)
    assert result.diagnostics == [] and result.levels_met == ["available", "functional", "reproduced"]


def test_without_a_root_nothing_is_available(tmp_path: Path) -> None:
    _, data = _artifact(tmp_path)
    reasons = level_reasons(Context(data, None))
    assert reasons["available"] == ["there is no artifact directory to check files in"]
    assert reasons["functional"][0] == "the 'available' level is not met"
    assert reasons["reproduced"][0] == "the 'functional' level is not met"


def _sources(*sources: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        data["data"] = [{"license": "CC-BY-4.0", "files": [{"path": f"data/{s['id']}.csv"}], **s} for s in sources]
    return edit


def test_every_unavailable_data_source_is_named_after_a_shipped_one(tmp_path: Path) -> None:
    # A shipped source first: the loop goes on to the sources after it.
    root, data = _artifact(tmp_path, _sources(
        {"id": "local", "shipped": True, "access": "restricted"},
        {"id": "secret", "access": "restricted", "url": "https://example.org/s"},
        {"id": "nowhere", "access": "public"},
        {"id": "fetched", "access": "public", "doi": "10.1234/abcd"}))
    (root / "data").mkdir()
    (root / "data" / "local.csv").write_text("a\n1\n")
    assert _reasons(root, data)["available"] == [
        "data source 'secret' is restricted and not shipped",
        "data source 'nowhere' is neither shipped nor given a url or doi",
    ]


def test_a_claimed_level_with_many_reasons_names_three(tmp_path: Path) -> None:
    root, data = _artifact(tmp_path, _sources(*({"id": f"d{i}", "access": "public"} for i in range(5))))
    result = validate_path(root)
    [finding] = [d for d in result.diagnostics if d.code == "RRA601" and d.pointer == "/levels/0"]
    assert finding.message == (
        "level 'available' is claimed but not met: data source 'd0' is neither shipped nor given a url or doi; "
        "data source 'd1' is neither shipped nor given a url or doi; data source 'd2' is neither shipped nor "
        "given a url or doi (and 2 more)")


@pytest.mark.parametrize("count, ending", [(3, "d2' is neither shipped nor given a url or doi"),
                                           (4, "d2' is neither shipped nor given a url or doi (and 1 more)")])
def test_a_claimed_level_names_at_most_three_reasons(tmp_path: Path, count: int, ending: str) -> None:
    root, data = _artifact(tmp_path, _sources(*({"id": f"d{i}", "access": "public"} for i in range(count))))
    [finding] = [d for d in validate_path(root).diagnostics if d.code == "RRA601" and d.pointer == "/levels/0"]
    assert finding.message.endswith(ending)


def test_a_launcher_without_a_successful_record(tmp_path: Path) -> None:
    root, data = _artifact(tmp_path)
    for name in ("seed-0.json", "seed-1.json", "seed-2.json", "seed-3.json"):
        (root / "runs" / "train" / name).unlink()
    _record(root, "seed-4.json", {"seed": 4, "status": "failed", "exit_status": 1, "metrics": {"accuracy": 91.0}})
    assert _reasons(root, data)["functional"] == ["launcher 'train' has no successful run record"]
    _record(root, "seed-4.json", {"seed": 4, "status": "completed", "exit_status": 1})
    assert _reasons(root, data)["functional"] == ["launcher 'train' has no successful run record"]


def test_obtained_values_outside_the_interval(tmp_path: Path) -> None:
    root, data = _artifact(tmp_path)
    for seed in range(5):
        _record(root, f"seed-{seed}.json", {"seed": seed, "metrics": {"accuracy": 50.0}})
    [reason] = _reasons(root, data)["reproduced"]
    assert reason == "claim 'accuracy': obtained 50 lies outside [90.688, 91.344]"


def test_the_papers_number_outside_the_observations_is_not_reproduced(tmp_path: Path) -> None:
    # The runs agree with the observations (about 91.0), but the paper printed 94.0: what is
    # reproduced is the artifact, not the paper (RRA506), unless a discrepancy explains it.
    def paper_says_94(data: dict[str, Any]) -> None:
        data["claims"][0]["reported"]["value"] = 94.0

    root, data = _artifact(tmp_path, paper_says_94)
    [reason] = _reasons(root, data)["reproduced"]
    assert reason == ("claim 'accuracy': the paper's 94 lies outside [90.688, 91.344], the interval of its "
                      "observations, and no discrepancy explains it (RRA506)")
    result = validate_path(root)
    assert result.levels_met == ["available", "functional"]
    assert {d.code for d in result.diagnostics} == {"RRA506", "RRA601"}

    def explained(data: dict[str, Any]) -> None:
        paper_says_94(data)
        data["discrepancies"] = [{
            "id": "eval-split", "paper_says": "Table 1 is on the validation split.",
            "code_does": "train.py reports the test split.", "follows": "code",
            "rationale": "The released code produced the public checkpoints.", "impact": "About 3 points lower.",
            "claims": ["accuracy"]}]

    shutil.rmtree(tmp_path / "artifact")
    root, data = _artifact(tmp_path, explained)
    assert _reasons(root, data)["reproduced"] == []


def test_only_finite_numbers_are_obtained_values(tmp_path: Path) -> None:
    root, data = _artifact(tmp_path)
    for seed, value in enumerate([True, "91.0", None, {"v": 1}, 1e309 * 0]):
        _record(root, f"seed-{seed}.json", {"seed": seed, "metrics": {"accuracy": value}})
    assert _reasons(root, data)["reproduced"] == ["claim 'accuracy' has no obtained value in the run records"]
    _record(root, "seed-0.json", {"seed": 0, "metrics": {"accuracy": 91}})
    assert _reasons(root, data)["reproduced"] == []


def test_values_of_failed_runs_do_not_count(tmp_path: Path) -> None:
    root, data = _artifact(tmp_path)
    _record(root, "seed-9.json", {"seed": 9, "status": "failed", "exit_status": 1, "metrics": {"accuracy": 0.0}})
    assert _reasons(root, data) == GOOD


def test_a_claim_without_an_interval(tmp_path: Path) -> None:
    def one_observation(data: dict[str, Any]) -> None:
        del data["claims"][0]["reference"]["observations"][1:]
    root, data = _artifact(tmp_path, one_observation)
    assert _reasons(root, data)["reproduced"] == [
        "claim 'accuracy' has no acceptance interval (too few valid observations)"]


def test_an_aggregation_that_does_not_apply(tmp_path: Path) -> None:
    def single(data: dict[str, Any]) -> None:
        data["claims"][0]["aggregate"] = "single"
    root, data = _artifact(tmp_path, single)
    assert _reasons(root, data)["reproduced"] == ["claim 'accuracy': aggregate 'single' needs exactly one value, got 5"]


@pytest.mark.parametrize("how, expected", [("min", "90.9"), ("max", "91.2"), ("median", "91.05")])
def test_the_claim_aggregate_decides_the_obtained_value(tmp_path: Path, how: str, expected: str) -> None:
    def aggregate(data: dict[str, Any]) -> None:
        data["claims"][0]["aggregate"] = how
        data["claims"][0]["reported"]["precision"] = 3
        data["claims"][0]["reference"]["observations"] = [
            {**o, "value": v} for o, v in zip(data["claims"][0]["reference"]["observations"], [10.0, 10.0, 10.0, 10.0, 10.0])]
    root, data = _artifact(tmp_path, aggregate)
    for seed, value in enumerate([90.9, 91.0, 91.05, 91.1, 91.2]):
        _record(root, f"seed-{seed}.json", {"seed": seed, "metrics": {"accuracy": value}})
    [reason] = _reasons(root, data)["reproduced"]
    assert reason == f"claim 'accuracy': obtained {expected} lies outside [9.9995, 10.0005]"


def test_run_records_are_read_up_to_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, data = _artifact(tmp_path)
    (root / "runs" / "train" / "notes.txt").write_text("not a record")
    assert len(run_records(Context(data, root))[0]) == 5
    monkeypatch.setattr(levels, "MAX_RUN_RECORDS", 3)
    assert [r["seed"] for r in run_records(Context(data, root))[0]] == [0, 1, 2]


def test_at_most_ten_thousand_run_records_are_read(tmp_path: Path) -> None:
    root, data = _artifact(tmp_path)
    many = root / "runs" / "many"
    many.mkdir()
    for i in range(levels.MAX_RUN_RECORDS + 1 - 5):
        (many / f"{i:05d}.json").write_text('{"launcher": "other"}')
    assert levels.MAX_RUN_RECORDS == 10_000
    assert len(run_records(Context(data, root))[0]) == 10_000


def test_an_unreadable_record_is_reported_and_does_not_count(tmp_path: Path) -> None:
    root, data = _artifact(tmp_path)
    (root / "runs" / "train" / "seed-0.json").write_text("{")
    records, problems = run_records(Context(data, root))
    assert len(records) == 4 and [p.code for p in problems] == ["RRA602"]
    assert levels_met(Context(data, root)) == ["available", "functional", "reproduced"]
