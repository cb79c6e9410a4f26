"""What ``score_submissions`` puts in each cell besides the state: the reproducer's name when the
submission gives none, the condition and the repeat (numbered per reproducer and condition when
not given), a submission that does not parse, the stated usage, and the audit's timings shared
out over the tasks."""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Any

import pytest

from rra_tools.bench import score as score_module
from rra_tools.bench import score_submissions

from .test_bench_audit_edges import Cell, _taskset


def _submission(path: Path, **fields: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {"submission_version": "1.0", "values": [{"task": "p/e/c", "value": 0.5}], **fields}
    path.write_text(json.dumps({k: v for k, v in body.items() if v is not None}))
    return path


def test_names_conditions_and_repeats_of_submissions_made_elsewhere(tmp_path: Path) -> None:
    taskset = _taskset(tmp_path)
    long = "x" * 120
    paths = [_submission(tmp_path / "a" / "submission.json"),
             _submission(tmp_path / "b" / "my run!.json"),
             _submission(tmp_path / "c" / "my run!.json"),
             _submission(tmp_path / "d" / "..._.json"),
             _submission(tmp_path / "e" / f"{long}.json"),
             _submission(tmp_path / "f" / "submission.json", reproducer="named", condition="raw", repeat=7),
             _submission(tmp_path / "g" / "submission.json", reproducer="named", condition="raw"),
             _submission(tmp_path / "h" / "submission.json", reproducer="named")]
    cells = [r.cell for r in score_submissions(taskset, paths) if r.cell.task == "p/e/c"]
    assert [(c.reproducer, str(c.condition), c.repeat) for c in cells] == [
        ("submission-1", "refined", 1), ("my-run-", "refined", 1), ("my-run-", "refined", 2),
        ("submission", "refined", 1), ("x" * 100, "refined", 1), ("named", "raw", 7), ("named", "raw", 1),
        ("named", "refined", 1)]
    # The condition given to the scorer is the default; the submission's own wins.
    cells = [r.cell for r in score_submissions(taskset, paths[5:], condition="raw") if r.cell.task == "p/e/c"]
    assert [str(c.condition) for c in cells] == ["raw", "raw", "raw"]


def test_a_submission_that_does_not_parse_fails_every_task_without_audit_timings(tmp_path: Path) -> None:
    taskset = _taskset(tmp_path)
    path = tmp_path / "w" / "submission.json"
    path.parent.mkdir()
    path.write_text("{")
    results = score_submissions(taskset, [path])
    assert [r.state for r in results] == ["parse_failure"] * 3
    assert all(r.detail is not None and r.detail.startswith("the submission ") for r in results)
    assert all(r.audit_wall_s is None and r.audit_cpu_s is None and r.findings == [] for r in results)


def test_the_stated_usage_is_kept_as_given(tmp_path: Path) -> None:
    taskset = _taskset(tmp_path)
    with_usage = _submission(tmp_path / "a" / "submission.json", usage={"tokens": 12, "cost_usd": 0.5})
    without = _submission(tmp_path / "b" / "submission.json")
    first, second = (r for r in score_submissions(taskset, [with_usage, without]) if r.cell.task == "p/e/c")
    assert first.usage is not None and first.usage.model_dump(exclude_none=True) == {
        "stated": {"tokens": 12, "cost_usd": 0.5}, "differences": []}
    assert second.usage is None


def test_the_audit_time_is_shared_out_over_the_tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    taskset = _taskset(tmp_path)
    submission = Cell(tmp_path).submit({"c": 0.5})
    wall = iter([100.0, 100.0000369])
    cpu = iter([5.0, 5.0000741])
    monkeypatch.setattr(score_module, "time", types.SimpleNamespace(perf_counter=lambda: next(wall),
                                                                    thread_time=lambda: next(cpu)))
    results = score_submissions(taskset, [submission])
    # 36.9 us and 74.1 us over three tasks, in whole microseconds.
    assert [(r.audit_wall_s, r.audit_cpu_s) for r in results] == [(0.000012, 0.000025)] * 3


def test_the_audit_time_of_a_single_task_is_all_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    taskset = _taskset(tmp_path, ("c",))
    submission = Cell(tmp_path).submit({"c": 0.5})
    wall = iter([100.0, 100.0000369])
    cpu = iter([5.0, 5.0000741])
    monkeypatch.setattr(score_module, "time", types.SimpleNamespace(perf_counter=lambda: next(wall),
                                                                    thread_time=lambda: next(cpu)))
    [result] = score_submissions(taskset, [submission])
    assert (result.state, result.audit_wall_s, result.audit_cpu_s) == ("success", 0.000037, 0.000074)
