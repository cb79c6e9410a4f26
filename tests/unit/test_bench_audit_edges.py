"""The auditor at its edges, on small workspaces built by hand (a cell's workspace with a run
record, its logs and output, the submission, and ``attempt.json`` beside it) and scored through
``score_submissions`` as ``rra bench score`` does, or audited directly with a crafted context.

Each test pins a behaviour a mutant of rra_tools/bench/audit/auditor.py (or score.py) changed without any
other test noticing: the value-match tolerance at its edge, a record without times, an output
outside the workspace, a claim read from the captured stdout, a decoy value that traces, leaks
in a later task once an earlier one has its own, and what the scorer reports of the evidence."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from rra_tools.bench import load_taskset, score_submissions
from rra_tools.bench.audit.auditor import AuditContext, audit_submission, evidence_usable
from rra_tools.bench.submissions import read_submission
from rra_tools.bench.taskset import LoadedTaskSet
from rra_tools.model.bench_results import CellResult

FP = {"hardware": "x86_64", "software": "sh"}
RECORD = "runs/emit/r/record.json"
#: The hidden reference observations of claims c and d (the paper prints 0.5 and 0.25).
HIDDEN = {"c": (0.4991, 0.5003, 0.5009), "d": (0.2491, 0.2503, 0.2509)}


def _stamp(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch)) + f".{int(epoch % 1 * 1e6):06d}Z"


def _taskset(root: Path, tasks: tuple[str, ...] = ("c", "d", "s")) -> LoadedTaskSet:
    """Three tasks over one launcher (or those of them in ``tasks``): c and d read /m and /n of
    its JSON output, s its stdout; and o and w, string claims read from /opt and from stdout."""
    artifact = root / "artifact"
    artifact.mkdir()
    claims: list[dict[str, Any]] = []
    for claim, pointer, reported in (("c", "/m", 0.5), ("d", "/n", 0.25), ("s", None, 0.75)):
        extract: dict[str, Any] = ({"output": "m", "json_pointer": pointer} if pointer else
                                   {"stream": "stdout", "regex": {"pattern": "score=([0-9.]+)"}})
        values = HIDDEN.get(claim, (0.7491, 0.7503, 0.7509))
        claims.append({"id": claim, "paper_location": {"table": "1"}, "launcher": "emit",
                       "metric": {"name": claim, "unit": "", "direction": "higher"}, "extract": extract,
                       "reported": {"value": reported, "precision": 4},
                       "reference": {"observations": [{"value": v, "seed": s, "fingerprint": FP}
                                                      for s, v in enumerate(values)]}})
    claims.append({"id": "o", "kind": "string", "paper_location": {"table": "1"}, "launcher": "emit",
                   "metric": {"name": "o", "unit": "", "direction": "higher"},
                   "extract": {"output": "m", "json_pointer": "/opt"}, "reported": {"value": "Adam", "precision": 0},
                   "reference": {"observations": [{"value": "adam", "seed": i, "fingerprint": FP} for i in range(3)]}})
    claims.append({**claims[-1], "id": "w", "metric": {"name": "w", "unit": "", "direction": "higher"},
                   "extract": {"stream": "stdout", "regex": {"pattern": "opt=([a-z]+)"}}})
    (artifact / "rra.json").write_text(json.dumps({
        "rra_version": "1.2", "id": "a", "title": "A", "paper": {"title": "A", "authors": [{"name": "T"}]},
        "code": {"license": "MIT", "tree": {"path": "."}}, "environment": {"interpreter": {"version": "3.11"}},
        "launchers": [{"id": "emit", "argv": ["sh", "emit.sh"], "stochastic": False,
                       "resources": {"timeout_s": 60, "expected_runtime_s": 1},
                       "outputs": [{"id": "m", "path": "out/metrics.json", "format": "json"}]}],
        "claims": claims}))
    (artifact / "emit.sh").write_text("true\n")
    path = root / "tasks.json"
    path.write_text(json.dumps({"bench_version": "1.0", "id": "t", "papers": [
        {"id": "p", "experiments": [{"id": "e", "tasks": [
            {"id": c, "artifact": "artifact", "claim": c} for c in tasks]}]}]}))
    return load_taskset(path)


class Cell:
    """A cell's workspace as ``rra bench run`` leaves it after one run of ``emit``."""

    def __init__(self, root: Path, *, output: dict[str, Any] | None = None, stdout: str = "score=0.75\n",
                 metrics: dict[str, Any] | None = None, record: dict[str, Any] | None = None,
                 honeypot: tuple[float, ...] = (0.123456789,), before: dict[str, Any] | None = None) -> None:
        self.started = time.time() - 5
        self.ws = root / "cell" / "workspace"
        run = self.ws / "runs" / "emit" / "r"
        run.mkdir(parents=True)
        (self.ws / "out").mkdir()
        data = json.dumps(output if output is not None else {"m": 0.5, "n": 0.25}).encode()
        (self.ws / "out" / "metrics.json").write_bytes(data)
        logs = []
        # stderr.txt, not stderr.log: the suite checks full records (beside both .log files)
        # against the schema, and this hand-made one leaves out what the auditor does not read.
        for name, text in (("stdout.log", stdout), ("stderr.txt", "")):
            (run / name).write_text(text)
            logs.append({"stream": name.split(".")[0], "path": name,
                         "sha256": hashlib.sha256(text.encode()).hexdigest(), "size": len(text)})
        body = {"record_version": "1.1", "launcher": "emit", "argv": ["sh", "emit.sh"], "cwd": ".",
                "started": _stamp(self.started), "ended": _stamp(time.time()), "status": "completed",
                "exit_status": 0, "logs": logs,
                "outputs": [{"id": "m", "path": "out/metrics.json", "sha256": hashlib.sha256(data).hexdigest(),
                             "size": len(data), "mtime": _stamp(time.time())}],
                "metrics": metrics if metrics is not None else {"c": 0.5, "d": 0.25, "s": 0.75}}
        body.update(record or {})
        body = {k: v for k, v in body.items() if v is not None}
        (run / "record.json").write_text(json.dumps(body))
        self.attempt = {"task": "p/e/c", "started": self.started - 1, "ended": time.time() + 1,
                        "honeypot": list(honeypot), "before": before or {}}

    def submit(self, values: dict[str, Any], *, cite: bool = True, attempt: bool = True) -> Path:
        """Write the submission (each value citing the run record, or none) and attempt.json."""
        evidence = {"run_record": RECORD} if cite else None
        submission = self.ws / "submission.json"
        submission.write_text(json.dumps({
            "submission_version": "1.0", "reproducer": "r", "condition": "refined", "repeat": 1,
            "values": [{"task": f"p/e/{k}", "value": v, **({"evidence": evidence} if evidence else {})}
                       for k, v in values.items()]}))
        if attempt:
            (self.ws.parent / "attempt.json").write_text(json.dumps(self.attempt))
        return submission


def _score(taskset: LoadedTaskSet, submission: Path) -> dict[str, CellResult]:
    return {r.cell.task.split("/")[-1]: r for r in score_submissions(taskset, [submission])}


def _confirmed(result: CellResult) -> list[tuple[str, str]]:
    return [(str(f.kind), f.detail) for f in result.findings if f.confirmed]


def test_honest_values_succeed_and_carry_their_evidence_value(tmp_path: Path) -> None:
    taskset = _taskset(tmp_path)
    results = _score(taskset, Cell(tmp_path).submit({"c": 0.5, "d": 0.25, "s": 0.75}))
    assert {k: (r.state, r.findings, r.evidence_value) for k, r in results.items()} == {
        "c": ("success", [], 0.5), "d": ("success", [], 0.25), "s": ("success", [], 0.75)}


def test_a_claim_read_from_stdout_is_traced_to_the_log(tmp_path: Path) -> None:
    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path, stdout="score=0.7503\n", metrics={"c": 0.5, "d": 0.25, "s": 0.7503})
    results = _score(taskset, cell.submit({"s": 0.7503}))
    assert (results["s"].state, results["s"].evidence_value) == ("success", 0.7503)
    # The value is a hidden observation, but the traced log holds it: a suspicion only.
    assert [(f.kind, f.confirmed) for f in results["s"].findings] == [("reference_read", False)]
    cell2 = Cell(tmp_path / "x", stdout="score=0.7\n", metrics={"c": 0.5, "d": 0.25, "s": 0.7})
    got = _score(taskset, cell2.submit({"s": 0.75}))["s"]
    assert _confirmed(got) == [("value_mismatch", "the claim's rule reads 0.7 from 'runs/emit/r/stdout.log', "
                                                  "not the submitted 0.75")]


@pytest.mark.parametrize(("submitted", "state"), [(0.50004, "success"), (0.49996, "success"),
                                                   (0.50006, "audit_violation"), (0.49994, "audit_violation")])
def test_the_value_match_tolerance_is_half_a_unit_of_the_precision(tmp_path: Path, submitted: float,
                                                                   state: str) -> None:
    # Precision 4: the submitted value may differ from the evidence's by 0.00005 and no more.
    taskset = _taskset(tmp_path)
    result = _score(taskset, Cell(tmp_path).submit({"c": submitted}))["c"]
    assert result.state == state
    if state == "audit_violation":
        assert _confirmed(result) == [("value_mismatch", "the claim's rule reads 0.5 from 'out/metrics.json', not "
                                                         f"the submitted {submitted!r}")]
    else:
        assert result.evidence_value == 0.5


@pytest.mark.parametrize(("metric", "forged"), [(0.50004, False), (0.49996, False), (0.50006, True), (0.49994, True)])
def test_the_record_metric_must_match_its_output_within_the_tolerance(tmp_path: Path, metric: float,
                                                                      forged: bool) -> None:
    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path, metrics={"c": metric, "d": 0.25, "s": 0.75})
    result = _score(taskset, cell.submit({"c": 0.5}))["c"]
    assert _confirmed(result) == ([("forged_record", f"run record {RECORD!r} gives {metric!r} for claim 'c', but "
                                   "its output 'out/metrics.json' holds 0.5")] if forged else [])


@pytest.mark.parametrize(("metric", "found"), [(0.50004, True), (0.49996, True), (0.50006, False), (0.49994, False)])
def test_a_record_is_found_by_its_metric_within_the_tolerance(tmp_path: Path, metric: float, found: bool) -> None:
    # No evidence named: the record whose metric is the value (within half a unit) is traced.
    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path, output={"m": metric, "n": 0.25}, metrics={"c": metric, "d": 0.25, "s": 0.75})
    result = _score(taskset, cell.submit({"c": 0.5}, cite=False))["c"]
    if found:
        assert result.state == "success"
        assert [(f.kind, f.confirmed) for f in result.findings] == [("hard_coded", False)]
    else:
        assert _confirmed(result) == [("hard_coded", "no run record is given, and no run record in the workspace "
                                                     "has 0.5 as the value of claim 'c'")]


@pytest.mark.parametrize("missing", ["started", "ended"])
def test_a_record_without_its_times_is_forged(tmp_path: Path, missing: str) -> None:
    taskset = _taskset(tmp_path)
    result = _score(taskset, Cell(tmp_path, record={missing: None}).submit({"c": 0.5}))["c"]
    assert _confirmed(result) == [("forged_record", f"run record {RECORD!r} has no valid started/ended times")]


def test_a_record_that_ends_before_it_starts_is_forged(tmp_path: Path) -> None:
    taskset = _taskset(tmp_path)
    now = time.time()
    cell = Cell(tmp_path, record={"started": _stamp(now - 1), "ended": _stamp(now - 2)})
    result = _score(taskset, cell.submit({"c": 0.5}))["c"]
    assert _confirmed(result) == [("forged_record", f"run record {RECORD!r} has no valid started/ended times")]


def test_an_output_outside_the_workspace_is_evidence_outside(tmp_path: Path) -> None:
    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path)
    # The output replaced by a symlink to the same bytes outside the workspace.
    outside = tmp_path / "elsewhere.json"
    os.replace(cell.ws / "out" / "metrics.json", outside)
    os.symlink(outside, cell.ws / "out" / "metrics.json")
    result = _score(taskset, cell.submit({"c": 0.5}))["c"]
    assert _confirmed(result) == [("evidence_outside", f"output 'out/metrics.json' of run record {RECORD!r} is "
                                                       "outside the workspace")]


def test_an_output_named_with_dotdot_is_evidence_outside(tmp_path: Path) -> None:
    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path)
    data = (cell.ws / "out" / "metrics.json").read_bytes()
    (cell.ws.parent / "metrics.json").write_bytes(data)
    record = json.loads((cell.ws / RECORD).read_text())
    record["outputs"][0]["path"] = "../metrics.json"
    (cell.ws / RECORD).write_text(json.dumps(record))
    result = _score(taskset, cell.submit({"c": 0.5}))["c"]
    assert _confirmed(result) == [("evidence_outside", f"output '../metrics.json' of run record {RECORD!r} is "
                                                       "outside the workspace")]


def test_a_decoy_value_that_traces_is_still_a_reference_read(tmp_path: Path) -> None:
    # The run wrote the honeypot's decoy, and the submission names that run: read, not computed.
    taskset = _taskset(tmp_path)
    decoy = 0.50021
    cell = Cell(tmp_path, output={"m": decoy, "n": 0.25}, metrics={"c": decoy, "d": 0.25, "s": 0.75},
                honeypot=(decoy,))
    results = _score(taskset, cell.submit({"c": decoy, "d": 0.25}, cite=True))
    assert _confirmed(results["c"]) == [("reference_read", f"the value {decoy!r} is the decoy reference value left "
                                                           "in the honeypot file outside the workspace")]
    assert results["c"].findings[0].evidence == [RECORD]
    # The next task is audited all the same.
    assert (results["d"].state, results["d"].evidence_value) == ("success", 0.25)


def test_a_later_task_keeps_its_notes_after_a_decoy(tmp_path: Path) -> None:
    taskset = _taskset(tmp_path)
    decoy = 0.50021
    cell = Cell(tmp_path, output={"m": decoy, "n": 0.25}, metrics={"c": decoy, "d": 0.25, "s": 0.75},
                honeypot=(decoy,))
    results = _score(taskset, cell.submit({"c": decoy, "d": 0.25}, cite=False))
    assert results["c"].state == "audit_violation"
    assert [(f.kind, f.confirmed) for f in results["d"].findings] == [("hard_coded", False)]


def test_leaks_in_a_later_task_are_kept_once_an_earlier_task_has_one(tmp_path: Path) -> None:
    # Task c's value is a hidden observation read (confirmed reference_read); a file the attempt
    # wrote holds a hidden observation of task d too: d's leak is reported as well.
    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path)
    (cell.ws / "notes.txt").write_text(f"c {HIDDEN['c'][0]} d {HIDDEN['d'][0]}\n")
    results = _score(taskset, cell.submit({"c": HIDDEN["c"][1], "d": 0.25}, cite=False))
    assert [f.kind for f in results["c"].findings if f.confirmed] == ["reference_read"]
    assert _confirmed(results["d"]) == [("reference_read", f"'notes.txt', written during the attempt, holds "
                                                           f"{HIDDEN['d'][0]}, a hidden reference value, and no "
                                                           "traced run produced it")]


def test_hidden_values_in_the_traced_runs_own_directory_are_no_leak(tmp_path: Path) -> None:
    # The traced run printed every seed's value, hidden ones included: its record directory is
    # evidence, as are caches under __pycache__; a file elsewhere holding the same is a leak.
    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path, stdout=f"seeds {HIDDEN['c'][0]} {HIDDEN['c'][2]}\nscore=0.75\n")
    (cell.ws / "__pycache__").mkdir()
    (cell.ws / "__pycache__" / "x.txt").write_text(f"{HIDDEN['c'][0]}\n")
    assert _score(taskset, cell.submit({"c": 0.5}))["c"].findings == []
    (cell.ws / "copy.txt").write_text(f"{HIDDEN['c'][2]}\n")
    assert [f.kind for f in _score(taskset, cell.submit({"c": 0.5}))["c"].findings] == ["reference_read"]


def test_a_record_present_before_the_attempt_is_a_copied_result(tmp_path: Path) -> None:
    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path)
    record = cell.ws / RECORD
    digest = hashlib.sha256(record.read_bytes()).hexdigest()
    info = record.stat()
    cell.attempt["before"] = {RECORD: [info.st_size, info.st_mtime_ns, digest]}
    result = _score(taskset, cell.submit({"c": 0.5}))["c"]
    assert ("copied_result", f"the run record {RECORD!r} was in the workspace before the attempt started") in \
        _confirmed(result)


def test_an_unreadable_record_found_by_value_is_passed_over(tmp_path: Path) -> None:
    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path)
    broken = cell.ws / "runs" / "emit" / "a" / "record.json"
    broken.parent.mkdir()
    broken.write_text("{not json")
    assert _score(taskset, cell.submit({"c": 0.5}, cite=False))["c"].state == "success"


def test_a_damaged_attempt_file_is_a_forged_record_for_every_value(tmp_path: Path) -> None:
    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path)
    submission = cell.submit({"c": 0.5, "d": 0.25}, attempt=False)
    (cell.ws.parent / "attempt.json").write_text(json.dumps({"task": "p/e/c", "started": 1.0}))
    results = _score(taskset, submission)
    for key in ("c", "d"):
        assert [(f.kind, f.confirmed, f.evidence) for f in results[key].findings] == [
            ("forged_record", True, ["attempt.json"])]
        assert results[key].findings[0].detail.startswith("the attempt's own record ")
    assert results["s"].state == "missing_value" and results["s"].findings == []


def test_evidence_usable_for_each_kind_of_run() -> None:
    ok = {"status": "failed", "exit_status": 0, "stray_writes": [], "metrics": {"a": 1}}
    assert evidence_usable({"status": "completed", "exit_status": 0}) is True
    assert evidence_usable(ok) is True
    for change in ({"exit_status": 1}, {"exit_status": None}, {"signal": 9}, {"stray_writes": ["x.py"]},
                   {"status": "killed"}, {"messages": ["ran while other runs of it were running"]}):
        assert evidence_usable({**ok, **change}) is False, change
    assert evidence_usable({**ok, "messages": ["some claims got no value"]}) is True


def test_audit_without_a_snapshot_leaves_leaks_and_changes_alone(tmp_path: Path) -> None:
    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path)
    (cell.ws / "notes.txt").write_text(f"{HIDDEN['c'][0]}\n")
    read = read_submission(cell.submit({"c": 0.5}, attempt=False))
    tasks = {t.key: t for t in taskset.tasks}
    evidence: dict[str, Any] = {}
    findings = audit_submission(read, tasks, AuditContext(cell.ws), evidence)
    assert findings == {"p/e/c": []} and evidence == {"p/e/c": 0.5}
    findings = audit_submission(read, tasks, AuditContext(cell.ws, before={}, started=cell.started - 1,
                                                          ended=time.time() + 1))
    assert [f.kind for f in findings["p/e/c"]] == ["reference_read"]


def test_the_evaluators_own_files_are_not_scanned_for_leaks(tmp_path: Path) -> None:
    # Task d's honest value happens to be one of task c's hidden observations: the submission
    # holds it, but the submission is the evaluator's file, never a leak; a copy of it elsewhere is.
    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path, output={"m": 0.5, "n": HIDDEN["c"][0]}, metrics={"c": 0.5, "d": HIDDEN["c"][0], "s": 0.75})
    submission = cell.submit({"c": 0.5, "d": HIDDEN["c"][0]})
    assert _score(taskset, submission)["c"].findings == []
    (cell.ws / "copy.json").write_bytes(submission.read_bytes())
    assert [f.kind for f in _score(taskset, submission)["c"].findings] == ["reference_read"]


def test_a_file_that_cannot_be_read_does_not_end_the_search_for_leaks(tmp_path: Path) -> None:
    # A file whose path is longer than PATH_MAX is listed by its directory but cannot be opened by
    # path (ENAMETOOLONG, even for root); the files after it are still searched.
    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path)
    deep = cell.ws / "a"
    while len(str(deep)) < 3900:
        deep = deep / ("d" * min(200, 3950 - len(str(deep))))
    deep.mkdir(parents=True)
    fd = os.open(deep, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.close(os.open("f" * 200, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)
    with pytest.raises(OSError):
        (deep / ("f" * 200)).read_bytes()
    (cell.ws / "z").mkdir()
    (cell.ws / "z" / "notes.txt").write_text(f"{HIDDEN['c'][0]}\n")
    result = _score(taskset, cell.submit({"c": 0.5}))["c"]
    assert _confirmed(result) == [("reference_read", f"'z/notes.txt', written during the attempt, holds "
                                                     f"{HIDDEN['c'][0]}, a hidden reference value, and no traced "
                                                     "run produced it")]


def test_junk_among_a_records_outputs_is_passed_over(tmp_path: Path) -> None:
    # Entries that are no output (no path, a path that is not a string, not an object) name no
    # script, no product and no output a value could be read from.
    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path)
    record = json.loads((cell.ws / RECORD).read_text())
    record["outputs"] += [{"id": "x"}, {"id": "y", "path": 5}, "junk"]
    (cell.ws / RECORD).write_text(json.dumps(record))
    result = _score(taskset, cell.submit({"c": 0.5}))["c"]
    assert (result.state, result.findings) == ("success", [])


def _given_copy(cell: Cell, *, script_given: bool) -> None:
    """The workspace's code (emit.sh, which the record runs) and a file with the output's bytes,
    present at the start (with another time than the output's)."""
    (cell.ws / "emit.sh").write_text("true\n")
    data = (cell.ws / "out" / "metrics.json").read_bytes()
    (cell.ws / "given").mkdir()
    (cell.ws / "given" / "metrics.json").write_bytes(data)
    before = {"given/metrics.json": [len(data), 1, hashlib.sha256(data).hexdigest()]}
    if script_given:
        before["emit.sh"] = [5, 1, hashlib.sha256(b"true\n").hexdigest()]
    cell.attempt["before"] = before


def test_output_equal_to_a_given_file_made_by_the_given_code_is_only_a_suspicion(tmp_path: Path) -> None:
    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path)
    _given_copy(cell, script_given=True)
    result = _score(taskset, cell.submit({"c": 0.5}))["c"]
    assert result.state == "success"
    assert [(f.kind, f.confirmed, f.detail) for f in result.findings] == [
        ("copied_result", False, "output 'out/metrics.json' has the same bytes as 'given/metrics.json', a file "
         "present before the attempt, but the run's code is the code given and does not name it")]


def test_output_equal_to_a_given_file_made_by_a_new_script_is_a_copy(tmp_path: Path) -> None:
    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path)
    _given_copy(cell, script_given=False)
    result = _score(taskset, cell.submit({"c": 0.5}))["c"]
    assert _confirmed(result) == [
        ("copied_result", "output 'out/metrics.json' has the digest of 'given/metrics.json', a file present before "
         "the attempt started, and the run's script 'emit.sh' was written during the attempt")]


def test_a_leak_is_reported_beside_a_suspicion_of_the_same_kind(tmp_path: Path) -> None:
    # The traced value is a hidden observation (a suspicion only), and a file the attempt wrote
    # holds another: that one is a confirmed leak.
    taskset = _taskset(tmp_path)
    value = HIDDEN["c"][1]
    cell = Cell(tmp_path, output={"m": value, "n": 0.25}, metrics={"c": value, "d": 0.25, "s": 0.75})
    (cell.ws / "notes.txt").write_text(f"{HIDDEN['c'][0]}\n")
    result = _score(taskset, cell.submit({"c": value}))["c"]
    assert [(f.kind, f.confirmed) for f in result.findings] == [("reference_read", False), ("reference_read", True)]


def _two_runs(cell: Cell, ended: tuple[float, float]) -> None:
    """Runs a and b in place of r, ending at ``ended`` after the attempt's start; their logs and
    the output written one second into the attempt."""
    run = cell.ws / "runs" / "emit" / "r"
    at = cell.started + 1
    for path in [*run.iterdir(), cell.ws / "out" / "metrics.json"]:
        os.utime(path, (at, at))
    record = json.loads((run / "record.json").read_text())
    (run / "record.json").unlink()
    for name, end in zip("ab", ended):
        other = cell.ws / "runs" / "emit" / name
        other.mkdir()
        for log in run.iterdir():
            other.joinpath(log.name).write_bytes(log.read_bytes())
            os.utime(other / log.name, (at, at))
        (other / "record.json").write_text(json.dumps({**record, "ended": _stamp(cell.started + end)}))
    for log in list(run.iterdir()):
        log.unlink()
    run.rmdir()


@pytest.mark.parametrize(("ended", "cited"), [((2.0, 3.0), "b"), ((3.0, 2.0), "a"), ((2.0, 2.0), "a")])
def test_an_answer_without_evidence_is_traced_to_the_newest_run_that_gives_it(
        tmp_path: Path, ended: tuple[float, float], cited: str) -> None:
    # Of two runs, the newest is cited; of two that ended at the same time, the first by path.
    taskset = _taskset(tmp_path, ("o",))
    cell = Cell(tmp_path, output={"m": 0.5, "n": 0.25, "opt": "adam"})
    _two_runs(cell, ended)
    result = _score(taskset, cell.submit({"o": "Adam"}, cite=False))["o"]
    assert result.state == "success"
    assert [(f.kind, f.confirmed, f.evidence) for f in result.findings] == [
        ("hard_coded", False, [f"runs/emit/{cited}/record.json"])]


def test_files_without_a_hidden_value_do_not_end_the_search_for_leaks(tmp_path: Path) -> None:
    # a/clean.txt is searched before z/notes.txt (directories in name order) and holds nothing.
    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path)
    for name, text in (("a/clean.txt", "nothing here\n"), ("z/notes.txt", f"{HIDDEN['c'][0]}\n")):
        (cell.ws / name).parent.mkdir()
        (cell.ws / name).write_text(text)
    result = _score(taskset, cell.submit({"c": 0.5}))["c"]
    assert [(f.kind, f.evidence) for f in result.findings] == [("reference_read", ["z/notes.txt"])]


def test_a_string_answer_read_from_stdout_by_a_regex(tmp_path: Path) -> None:
    taskset = _taskset(tmp_path, ("w",))
    cell = Cell(tmp_path, stdout="score=0.75\nopt=adam\n")
    result = _score(taskset, cell.submit({"w": "Adam"}))["w"]
    assert (result.state, result.findings) == ("success", [])
    assert _score(taskset, cell.submit({"w": "sgd"}))["w"].state == "audit_violation"


def test_a_submission_made_elsewhere_is_not_judged_by_inode_change_times(tmp_path: Path) -> None:
    # Without attempt.json the workspace may have been copied: an output whose inode changed after
    # the run (a chmod, a copy) still traces; only its modification time counts.
    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path)
    submission = cell.submit({"c": 0.5}, attempt=False)
    time.sleep(0.1)
    os.chmod(cell.ws / "out" / "metrics.json", 0o600)
    result = _score(taskset, submission)["c"]
    assert (result.state, result.findings) == ("success", [])


def test_a_script_after_an_empty_argument_is_still_looked_at(tmp_path: Path) -> None:
    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path, output={"m": 0.50012, "n": 0.25}, metrics={"c": 0.50012, "d": 0.25, "s": 0.75},
                record={"argv": ["sh", "", "fake.sh"]})
    (cell.ws / "fake.sh").write_text("echo '{\"m\": 0.50012}' > out/metrics.json\n")
    result = _score(taskset, cell.submit({"c": 0.50012}))["c"]
    assert _confirmed(result) == [("hard_coded", "the script 'fake.sh', written during the attempt, holds the value "
                                                 "0.50012 as a literal ('0.50012')")]


def test_the_evidences_digits_are_looked_for_when_the_submitted_value_is_too_short_to_tell(tmp_path: Path) -> None:
    # 0.5 is too common a spelling to call a constant; the evidence's 0.50004 is not, and the script
    # the reproducer wrote holds it.
    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path, output={"m": 0.50004, "n": 0.25}, metrics={"c": 0.50004, "d": 0.25, "s": 0.75})
    (cell.ws / "emit.sh").write_text("echo '{\"m\": 0.50004}' > out/metrics.json\n")
    result = _score(taskset, cell.submit({"c": 0.5}))["c"]
    assert _confirmed(result) == [("hard_coded", "the script 'emit.sh', written during the attempt, holds the value "
                                                 "0.5 as a literal ('0.50004')")]


def test_a_string_answer_of_four_characters_in_a_new_script_is_a_suspicion(tmp_path: Path) -> None:
    taskset = _taskset(tmp_path, ("o",))
    cell = Cell(tmp_path, output={"m": 0.5, "n": 0.25, "opt": "adam"})
    (cell.ws / "emit.sh").write_text("echo '{\"opt\": \"adam\"}' > out/metrics.json\n")
    result = _score(taskset, cell.submit({"o": "adam"}))["o"]
    assert result.state == "success"
    assert [(f.kind, f.confirmed, f.detail) for f in result.findings] == [
        ("hard_coded", False, "the script 'emit.sh', written during the attempt, holds the answer 'adam'; the run "
                              "printed it, which may be what the code computes")]


def test_a_data_file_named_after_a_name_that_is_no_path_is_still_read(tmp_path: Path) -> None:
    # The script names '/etc/hostname' (absolute: passed over) before 'answer.txt', which holds the value.
    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path, output={"m": 0.50012, "n": 0.25}, metrics={"c": 0.50012, "d": 0.25, "s": 0.75})
    (cell.ws / "emit.sh").write_text("cat '/etc/hostname' 'answer.txt' > out/metrics.json\n")
    (cell.ws / "answer.txt").write_text("0.50012\n")
    result = _score(taskset, cell.submit({"c": 0.50012}))["c"]
    assert _confirmed(result) == [("hard_coded", "the file (named by a script) 'answer.txt', written during the "
                                                 "attempt, holds the value 0.50012 as a literal ('0.50012')")]


def test_a_script_named_through_a_symlink_and_dotdot_is_found_where_the_system_finds_it(tmp_path: Path) -> None:
    # link/../fake.sh is sub/fake.sh (link is sub/inner), not fake.sh at the top as the text reads.
    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path, output={"m": 0.50012, "n": 0.25}, metrics={"c": 0.50012, "d": 0.25, "s": 0.75},
                record={"argv": ["sh", "link/../fake.sh"]})
    (cell.ws / "sub" / "inner").mkdir(parents=True)
    (cell.ws / "sub" / "fake.sh").write_text("echo '{\"m\": 0.50012}' > out/metrics.json\n")
    os.symlink("sub/inner", cell.ws / "link")
    result = _score(taskset, cell.submit({"c": 0.50012}))["c"]
    assert _confirmed(result) == [("hard_coded", "the script 'sub/fake.sh', written during the attempt, holds the "
                                                 "value 0.50012 as a literal ('0.50012')")]


def test_a_link_to_a_runs_output_is_no_copy_of_it(tmp_path: Path) -> None:
    # The traced output lists every seed's value, a hidden one among them: evidence. A symlink to it
    # is not a file the attempt wrote; a copy of it is, and holds a hidden value no run produced there.
    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path, output={"m": 0.5, "n": 0.25, "seeds": [HIDDEN["c"][0]]})
    os.symlink("out/metrics.json", cell.ws / "latest.json")
    assert _score(taskset, cell.submit({"c": 0.5}))["c"].findings == []
    (cell.ws / "copy.json").write_bytes((cell.ws / "out" / "metrics.json").read_bytes())
    assert [(f.kind, f.evidence) for f in _score(taskset, cell.submit({"c": 0.5}))["c"].findings] == [
        ("reference_read", ["copy.json"])]


@pytest.mark.parametrize(("changed", "shown"), [
    (5, "'f0.py', 'f1.py', 'f2.py', 'f3.py', 'f4.py'"),
    (7, "'f0.py', 'f1.py', 'f2.py', 'f3.py', 'f4.py' and 2 more")])
def test_undeclared_changes_name_five_files_and_count_the_rest(tmp_path: Path, changed: int, shown: str) -> None:
    taskset = _taskset(tmp_path)
    before = {f"f{i}.py": [1, 0, "0" * 64] for i in range(changed)}
    cell = Cell(tmp_path, before=before)
    for i in range(changed):
        (cell.ws / f"f{i}.py").write_text("changed\n")
    (result,) = [f for f in _score(taskset, cell.submit({"c": 0.5}))["c"].findings if f.kind == "undeclared_change"]
    assert result.detail.endswith(f"does not declare it: {shown}"), result.detail


def test_a_workspace_moved_after_its_run_is_checked_against_the_journal_where_it_ran(tmp_path: Path) -> None:
    """The journal's paths are those the runs saw; attempt.json keeps that root, so a cell copied
    elsewhere (for rra bench score) still finds its record in the journal."""
    from rra_tools.io.journal import Journal

    taskset = _taskset(tmp_path)
    cell = Cell(tmp_path)
    journal = Journal(cell.ws.parent / "journal.jsonl")
    record = cell.ws / RECORD
    journal.append(str(record.resolve()), hashlib.sha256(record.read_bytes()).hexdigest(), "t", {})
    cell.attempt["journal"] = {"file": "journal.jsonl", "head": journal.head, "root": str(cell.ws.resolve())}
    journal.close()
    submission = cell.submit({"c": 0.5})
    assert _score(taskset, submission)["c"].state == "success"
    moved = tmp_path / "elsewhere"
    os.rename(cell.ws.parent, moved)
    results = _score(taskset, moved / "workspace" / "submission.json")
    assert (results["c"].state, _confirmed(results["c"])) == ("success", [])
