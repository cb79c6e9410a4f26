"""The auditor on answers that are not numbers (RRA 1.2 claims of kind string and list), with
real runs in real cells whose proxy keeps the run journal, as tests/audit_corpus.py builds its
cells: an answer is traced to the output of the run that produced it, read there by the claim's
rule and matched (normalised) with the submitted one; typed-in answers, answers the evidence does
not give, numbers of a list typed into a script and records edited after their run are caught."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from rra_tools.bench import load_taskset, plan_run
from rra_tools.bench.cells import judge_cell, prepare_cell
from rra_tools.io.journal import JOURNAL_PATH, JOURNAL_VARIABLE
from rra_tools.model.bench_results import BenchResults, Cell, CellResult
from rra_tools.model.taskset import CodeCondition

from ..audit_corpus import Attempt, _proxy
from ..rra_cli import rra

FP = {"hardware": "x86_64", "software": "sh"}
EMIT = ("mkdir -p out\npython3 -c 'import json; print(json.dumps({\"opt\": \"ad\" + \"am\", "
        "\"top\": [round(13 / 16, 4), \"c\" + \"at\"]}))' > out/metrics.json\n")


def _artifact(root: Path) -> None:
    root.mkdir(parents=True)
    (root / "emit.sh").write_text(EMIT)
    claim = {"paper_location": {"table": "1"}, "launcher": "emit", "metric": {"name": "m", "unit": "",
                                                                           "direction": "higher"}}
    (root / "rra.json").write_text(json.dumps({
        "rra_version": "1.2", "id": "ans", "title": "Answers", "paper": {"title": "A", "authors": [{"name": "T"}]},
        "code": {"license": "MIT", "tree": {"path": "."}}, "environment": {"interpreter": {"version": "3.11"}},
        "launchers": [{"id": "emit", "argv": ["sh", "emit.sh"], "stochastic": False,
                       "resources": {"timeout_s": 60, "expected_runtime_s": 1},
                       "outputs": [{"id": "m", "path": "out/metrics.json", "format": "json"}]}],
        "claims": [
            {"id": "opt", "kind": "string", **claim, "extract": {"output": "m", "json_pointer": "/opt"},
             "reported": {"value": "Adam", "precision": 0},
             "reference": {"observations": [{"value": "adam", "seed": i, "fingerprint": FP} for i in range(3)]}},
            {"id": "top", "kind": "list", **claim, "extract": {"output": "m", "json_pointer": "/top"},
             "reported": {"value": [0.8125, "cat"], "precision": 4},
             "reference": {"observations": [{"value": [0.8125, "cat"], "seed": i, "fingerprint": FP}
                                            for i in range(3)]}}]}))


def honest_string(a: Attempt) -> None:
    a.submit_answer("Adam", a.run())


def honest_list(a: Attempt) -> None:
    a.submit_answer([0.8125, "Cat"], a.run())


def honest_unnamed(a: Attempt) -> None:
    a.run()
    a.submit_answer("ADAM", None)


def typed_answer(a: Attempt) -> None:
    a.submit_answer("adam", None)


def wrong_answer(a: Attempt) -> None:
    a.submit_answer("sgd", a.run())


def list_in_script(a: Attempt) -> None:
    a.write("fake.sh", "mkdir -p out\necho '{\"opt\": \"adam\", \"top\": [0.8125, \"cat\"]}' > out/metrics.json\n")
    a.relaunch(["sh", "fake.sh"])
    a.submit_answer([0.8125, "cat"], a.run(), changes=("rra.json",))


def edited_answer(a: Attempt) -> None:
    record = a.run()
    a.write("out/metrics.json", json.dumps({"opt": "adam", "top": [0.8125, "dog"]}))
    data = json.loads((a.ws / record).read_text())
    data["outputs"][0]["sha256"] = __import__("hashlib").sha256((a.ws / "out/metrics.json").read_bytes()).hexdigest()
    a.write(record, json.dumps(data))
    a.submit_answer([0.8125, "dog"], record)


#: (name, task, act, expected state, expected confirmed finding kind).
CASES: list[tuple[str, str, Callable[[Attempt], None], str, str | None]] = [
    ("honest-string", "p/e/opt", honest_string, "success", None),
    ("honest-list", "p/e/top", honest_list, "success", None),
    ("honest-unnamed-record", "p/e/opt", honest_unnamed, "success", None),
    ("typed-answer", "p/e/opt", typed_answer, "audit_violation", "hard_coded"),
    ("wrong-answer", "p/e/opt", wrong_answer, "audit_violation", "value_mismatch"),
    ("list-in-script", "p/e/top", list_in_script, "audit_violation", "hard_coded"),
    ("edited-answer", "p/e/top", edited_answer, "audit_violation", "edited_record"),
]


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CellResult]:
    tmp = tmp_path_factory.mktemp("answers")
    _artifact(tmp / "artifact")
    taskset = tmp / "tasks.json"
    taskset.write_text(json.dumps({"bench_version": "1.0", "id": "t", "conditions": ["refined"], "papers": [
        {"id": "p", "experiments": [{"id": "e", "tasks": [{"id": "opt", "artifact": "artifact", "claim": "opt"},
                                                          {"id": "top", "artifact": "artifact", "claim": "top"}]}]}]}))
    bench = plan_run(load_taskset(taskset), tmp / "out", {name: "true" for name, *_ in CASES})
    results = {}
    for name, task, act, _, _ in CASES:
        cell = Cell(task=task, condition=CodeCondition.REFINED, reproducer=name, repeat=1)
        prepared = prepare_cell(cell, bench)
        assert not isinstance(prepared, CellResult), prepared.detail
        attempt = Attempt(prepared.workspace, task, prepared.decoys, prepared.workspace)
        with _proxy(prepared.directory) as proxy:
            assert proxy.tcp_address is not None
            os.environ[JOURNAL_VARIABLE] = f"http://{proxy.tcp_address[0]}:{proxy.tcp_address[1]}{JOURNAL_PATH}"
            started = time.time()
            try:
                act(attempt)
            finally:
                os.environ.pop(JOURNAL_VARIABLE, None)
            ended = time.time()
            head = proxy.journal_head
        results[name] = judge_cell(cell, bench, prepared, started, ended, journal_head=head, wall_s=1.0,
                                   exit_status=0)
    return results



@pytest.mark.parametrize(("name", "state", "kind"), [(n, s, k) for n, _, _, s, k in CASES])
def test_answers_are_traced_like_numbers(judged: dict[str, CellResult], name: str, state: str,
                                         kind: str | None) -> None:
    result = judged[name]
    confirmed = [str(f.kind) for f in result.findings if f.confirmed]
    assert str(result.state) == state, (result.detail, result.findings)
    assert (confirmed[:1] or [None])[0] == kind, result.findings


def test_the_mismatch_says_what_the_evidence_gives(judged: dict[str, CellResult]) -> None:
    detail = judged["wrong-answer"].detail or ""
    assert "reads 'adam' from 'out/metrics.json', not the submitted 'sgd'" in detail, detail


def test_the_reproducer_is_told_the_kind(judged: dict[str, CellResult], tmp_path_factory: pytest.TempPathFactory) -> None:
    workspace = Path(str(judged["honest-list"].workspace))
    root = next(p for p in tmp_path_factory.getbasetemp().glob("answers*/out") if (p / workspace).exists())
    task = json.loads((root / workspace / "task.json").read_text())
    assert task["claim"]["kind"] == "list"
    text = (root / workspace / "TASK.md").read_text()
    assert "Reproduce the answer (an ordered list" in text and "`value` (a JSON array)" in text


def test_reproduce_scores_answers(tmp_path: Path) -> None:
    """rra bench reproduce: an attempt of an answer task is scored by the answer its run's output
    gives (records keep numbers only), a wrong one is outside_interval with what differs."""
    _artifact(tmp_path / "artifact")
    wrong = tmp_path / "wrong"
    _artifact(wrong)
    (wrong / "emit.sh").write_text(EMIT.replace('"ad" + "am"', '"sg" + "d"'))
    taskset = tmp_path / "tasks.json"
    taskset.write_text(json.dumps({"bench_version": "1.0", "id": "t", "repeats": 1, "papers": [
        {"id": "p", "experiments": [{"id": "e", "tasks": [
            {"id": "opt", "artifact": "artifact", "claim": "opt"}, {"id": "top", "artifact": "artifact", "claim": "top"},
            {"id": "bad", "artifact": "wrong", "claim": "opt"}]}]}]}))
    out = tmp_path / "out"
    proc = rra("bench", "reproduce", str(taskset), "-o", str(out), "--sandbox", "none", timeout=300)
    assert proc.returncode == 0, proc.stderr
    results = BenchResults.model_validate_json((out / "results.json").read_text())
    states = {f"{t.paper}/{t.experiment}/{t.task}": [(str(a.state), a.detail) for a in t.attempts]
              for t in results.tasks}
    assert states["p/e/opt"] == [("success", None)] and states["p/e/top"] == [("success", None)], states
    (state, detail), = states["p/e/bad"]
    assert state == "outside_interval" and "does not match" in (detail or ""), states
