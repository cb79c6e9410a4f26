"""``rra_tools.run.outcome`` called directly, on real artifacts on disk: which outputs count as
written by a run (with and without a snapshot, at the exact age boundary), every reason an
output or a metric is unusable, in order, the places a run may write, the record's fields and
their order, and the messages about stray writes past their listing limits.

The acceptance tests (tests/acceptance/test_run_outputs.py) show the same rules through real
``rra run`` processes; these pin the boundaries, which a process cannot place exactly.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from rra_tools.model.vocab import RECORD_VERSION, Executor, RunStatus
from rra_tools.run import RunPlan, load_artifact, plan_runs
from rra_tools.run.outcome import (
    MAX_STRAY_LISTED,
    STALE_SLACK_S,
    allowed_writes,
    assemble_record,
    claim_metrics,
    collect_outputs,
    host_record,
    log_file,
    record_head,
    signal_name,
    snapshot_before,
    write_record,
)

FP = {"hardware": "x86_64", "software": "cpython"}
#: 1,700,000,000 s after the epoch: 2023-11-14T22:13:20Z.
EPOCH_NS = 1_700_000_000 * 10**9


def _claim(ident: str, launcher: str, extract: dict[str, Any]) -> dict[str, Any]:
    return {"id": ident, "paper_location": {"table": "1"}, "launcher": launcher,
            "metric": {"name": "accuracy", "unit": "", "direction": "higher"}, "extract": extract,
            "reported": {"value": 0.5, "precision": 1},
            "reference": {"observations": [{"value": 0.5, "seed": s, "fingerprint": FP} for s in range(3)]}}


def _launcher(ident: str, outputs: list[tuple[str, str, str]], **extra: Any) -> dict[str, Any]:
    return {"id": ident, "argv": ["python", "job.py"], "stochastic": False,
            "resources": {"timeout_s": 30, "expected_runtime_s": 1},
            "outputs": [{"id": i, "path": p, "format": f} for i, p, f in outputs], **extra}


def _artifact(root: Path, launchers: list[dict[str, Any]], claims: list[dict[str, Any]] | None = None) -> Path:
    data = {"rra_version": "1.1", "id": "outcome", "title": "Outcome",
            "paper": {"title": "T", "authors": [{"name": "A"}]}, "code": {"license": "MIT", "tree": {"path": "."}},
            "environment": {"interpreter": {"version": "3.11"}}, "launchers": launchers, "claims": claims or []}
    root.mkdir(parents=True, exist_ok=True)
    (root / "rra.yaml").write_text(json.dumps(data, indent=1), encoding="utf-8")
    (root / "job.py").write_text("print('hi')\n", encoding="utf-8")
    return root


def _plan(root: Path, launcher: str, **options: Any) -> RunPlan:
    (plan,) = plan_runs(load_artifact(root), launcher, **options)
    return plan


def _set_mtime(path: Path, ns: int) -> None:
    os.utime(path, ns=(ns, ns), follow_symlinks=False)


def test_signal_names() -> None:
    assert (signal_name(15), signal_name(9), signal_name(250)) == ("SIGTERM", "SIGKILL", "250")


# -- written by this run ------------------------------------------------------------------------


def _one_file(tmp_path: Path) -> tuple[RunPlan, Path]:
    root = _artifact(tmp_path / "art", [_launcher("job", [("s", "out/s.json", "json")])])
    (root / "out").mkdir()
    (root / "out" / "s.json").write_text('{"acc": 0.5}')
    return _plan(root, "job"), root / "out" / "s.json"


def test_without_a_snapshot_an_output_as_old_as_the_slack_is_written(tmp_path: Path) -> None:
    # The file was modified exactly STALE_SLACK_S before the start: still this run's (>=).
    plan, path = _one_file(tmp_path)
    _set_mtime(path, EPOCH_NS)
    messages: list[str] = []
    produced, missing, paths = collect_outputs(plan, 1_700_000_000 + STALE_SLACK_S, messages)
    assert (messages, missing, paths) == ([], [], {"s": path})
    assert produced == [{"id": "s", "path": "out/s.json", "sha256": hashlib.sha256(b'{"acc": 0.5}').hexdigest(),
                         "size": 12, "mtime": "2023-11-14T22:13:20.000000Z"}]


def test_without_a_snapshot_an_output_older_than_the_slack_is_not_written(tmp_path: Path) -> None:
    # Half a second older than the slack allows; its change time (now) does not count.
    plan, path = _one_file(tmp_path)
    _set_mtime(path, EPOCH_NS)
    messages: list[str] = []
    produced, missing, paths = collect_outputs(plan, 1_700_000_000 + STALE_SLACK_S + 0.5, messages)
    assert (produced, paths) == ([], {})
    assert missing == [{"id": "s", "path": "out/s.json"}]
    assert messages == ["declared output 's' (out/s.json) was not written by this run (last modified before it "
                        "started)"]
    assert STALE_SLACK_S == 2.0


def test_without_a_snapshot_a_directory_counts_its_newest_entry(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art", [_launcher("job", [("d", "store", "directory")])])
    (root / "store" / "sub").mkdir(parents=True)
    (root / "store" / "sub" / "new.txt").write_text("n")
    for path in (root / "store", root / "store" / "sub"):
        _set_mtime(path, EPOCH_NS)
    _set_mtime(root / "store" / "sub" / "new.txt", EPOCH_NS + 100 * 10**9)
    plan = _plan(root, "job")
    messages: list[str] = []
    produced, _, _ = collect_outputs(plan, 1_700_000_100.0, messages)
    assert ([p["id"] for p in produced], messages) == (["d"], [])
    produced, _, _ = collect_outputs(plan, 1_700_000_102.5, messages)
    assert produced == []
    assert messages == ["declared output 'd' (store) was not written by this run (nothing in it changed while it ran)"]


def test_with_a_snapshot_only_a_change_counts(tmp_path: Path) -> None:
    plan, path = _one_file(tmp_path)
    before = snapshot_before(plan)
    # Unchanged since the snapshot: not written, however recent its time (the start is 0).
    messages: list[str] = []
    assert collect_outputs(plan, 0.0, messages, before.outputs)[0] == []
    assert messages == ["declared output 's' (out/s.json) was not written by this run (last modified before it "
                        "started)"]
    # Changed since (a new inode): written, however old its time.
    path.unlink()
    path.write_text('{"acc": 0.5}')
    _set_mtime(path, EPOCH_NS)
    messages = []
    assert [p["id"] for p in collect_outputs(plan, 2e9, messages, before.outputs)[0]] == ["s"]
    assert messages == []
    # A snapshot that does not know the output: its time decides.
    assert [p["id"] for p in collect_outputs(plan, 1_700_000_000.0, messages, {})[0]] == ["s"]
    assert collect_outputs(plan, 1_700_000_003.0, messages, {})[0] == []


# -- every reason an output is unusable, in order --------------------------------------------------


def test_each_unusable_output_is_said_and_the_later_ones_still_checked(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "s.json").write_text("{}")
    root = _artifact(tmp_path / "art", [_launcher("job", [
        ("gone", "out/gone.json", "json"), ("esc", "link/s.json", "json"), ("pipe", "out/pipe", "binary"),
        ("old", "out/old.json", "json"), ("flat", "out/flat", "directory"), ("tree", "out/tree", "directory"),
        ("f", "out/f.json", "json")])])
    out = root / "out"
    (out / "tree" / "b").mkdir(parents=True)
    os.symlink(outside, root / "link")
    os.mkfifo(out / "pipe")
    (out / "old.json").write_text("{}")
    _set_mtime(out / "old.json", EPOCH_NS - 10 * 10**9)
    (out / "flat").write_text("x")
    (out / "tree" / "a.txt").write_text("a")
    (out / "tree" / "b" / "c.txt").write_text("cc")
    os.symlink("a.txt", out / "tree" / "link")  # not part of the digest
    (out / "f.json").write_text("{}")
    plan = _plan(root, "job")
    messages: list[str] = []
    produced, missing, paths = collect_outputs(plan, 1_700_000_000.0, messages)
    assert messages == [
        "declared output 'gone' (out/gone.json) was not produced",
        "declared output 'esc' (link/s.json) leaves the artifact root",
        "declared output 'pipe' (out/pipe) is not a regular file or directory",
        "declared output 'old' (out/old.json) was not written by this run (last modified before it started)",
        "declared output 'flat' (out/flat) should be a directory but is a file",
    ]
    assert [m["id"] for m in missing] == ["gone", "esc", "pipe", "old"]
    assert [p["id"] for p in produced] == ["flat", "tree", "f"] == list(paths)
    listing = f"{hashlib.sha256(b'a').hexdigest()}  a.txt\n{hashlib.sha256(b'cc').hexdigest()}  b/c.txt\n"
    tree = produced[1]
    assert (tree["sha256"], tree["size"]) == (hashlib.sha256(listing.encode()).hexdigest(), 3)
    assert (produced[0]["sha256"], produced[0]["size"]) == (hashlib.sha256(b"x").hexdigest(), 1)


# -- metrics --------------------------------------------------------------------------------------


def _metrics_artifact(tmp_path: Path) -> Path:
    claims = [
        _claim("theirs", "other", {"output": "o", "json_pointer": "/acc"}),
        _claim("undeclared", "job", {"output": "nosuch", "json_pointer": "/acc"}),
        _claim("absent", "job", {"output": "later", "json_pointer": "/acc"}),
        _claim("unreadable", "job", {"output": "scores", "json_pointer": "/nope"}),
        _claim("from-log", "job", {"stream": "stdout", "regex": {"pattern": "^acc=([0-9.]+)$"}}),
        _claim("not-in-log", "job", {"stream": "stderr", "regex": {"pattern": "^acc=([0-9.]+)$"}}),
        _claim("good", "job", {"output": "scores", "json_pointer": "/acc", "scale": 2}),
        _claim("mine", "other", {"output": "o", "json_pointer": "/acc"}),
    ]
    root = _artifact(tmp_path / "art", [_launcher("job", [("scores", "out/s.json", "json"),
                                                           ("later", "out/l.json", "json")]),
                                        _launcher("other", [("o", "out/o.json", "json")])], claims)
    (root / "out").mkdir()
    (root / "out" / "s.json").write_text('{"acc": 0.25}')
    (root / "out" / "o.json").write_text('{"acc": 0.75}')
    return root


def test_every_claim_is_tried_and_every_failure_said(tmp_path: Path) -> None:
    root = _metrics_artifact(tmp_path)
    logs = tmp_path / "run"
    logs.mkdir()
    (logs / "stdout.log").write_text("epoch 1\nacc=0.5\n")
    (logs / "stderr.log").write_text("")
    messages: list[str] = []
    metrics, complete = claim_metrics(_plan(root, "job"), {"scores": root / "out" / "s.json"}, messages, logs)
    assert (metrics, complete) == ({"from-log": 0.5, "good": 0.5}, False)
    assert messages == [
        "claim 'undeclared': launcher 'job' declares no output 'nosuch'",
        "claim 'absent': no value, output 'later' is missing",
        "claim 'unreadable': output 'scores' (out/s.json) no member 'nope' at '/nope'",
        "claim 'not-in-log': the run's stderr has no match for regex '^acc=([0-9.]+)$'",
    ]


def test_stream_claims_without_captured_logs(tmp_path: Path) -> None:
    root = _metrics_artifact(tmp_path)
    messages: list[str] = []
    metrics, complete = claim_metrics(_plan(root, "job"), {"scores": root / "out" / "s.json"}, messages)
    assert (metrics, complete) == ({"good": 0.5}, False)
    assert messages[3:] == ["claim 'from-log': no value, the run's stdout was not captured",
                            "claim 'not-in-log': no value, the run's stderr was not captured"]


def test_a_launcher_whose_claims_all_have_values_is_complete(tmp_path: Path) -> None:
    # Its claims come after six claims of another launcher, which are skipped.
    root = _metrics_artifact(tmp_path)
    messages: list[str] = []
    metrics, complete = claim_metrics(_plan(root, "other"), {"o": root / "out" / "o.json"}, messages)
    assert (metrics, complete, messages) == ({"theirs": 0.75, "mine": 0.75}, True, [])


@pytest.mark.parametrize("extract, paths, message", [
    ({"output": "nosuch", "json_pointer": "/acc"}, {}, "claim 'c': launcher 'job' declares no output 'nosuch'"),
    ({"output": "scores", "json_pointer": "/acc"}, {}, "claim 'c': no value, output 'scores' is missing"),
    ({"output": "scores", "json_pointer": "/x"}, {"scores": "out/s.json"},
     "claim 'c': output 'scores' (out/s.json) no member 'x' at '/x'"),
    ({"stream": "stdout", "regex": {"pattern": "^acc=([0-9.]+)$"}}, {},
     "claim 'c': no value, the run's stdout was not captured"),
    ({"stream": "stdout", "regex": {"pattern": "^loss=([0-9.]+)$"}}, {"logs": True},
     "claim 'c': the run's stdout has no match for regex '^loss=([0-9.]+)$'"),
])
def test_any_one_claim_without_its_value_leaves_the_metrics_incomplete(
        tmp_path: Path, extract: dict[str, Any], paths: dict[str, Any], message: str) -> None:
    root = _artifact(tmp_path / "art", [_launcher("job", [("scores", "out/s.json", "json")])],
                     [_claim("c", "job", extract)])
    (root / "out").mkdir()
    (root / "out" / "s.json").write_text('{"acc": 0.25}')
    logs = None
    if paths.pop("logs", False):
        logs = tmp_path / "run"
        logs.mkdir()
        (logs / "stdout.log").write_text("acc=0.5\n")
    messages: list[str] = []
    got = claim_metrics(_plan(root, "job"), {k: root / v for k, v in paths.items()}, messages, logs)
    assert (got, messages) == (({}, False), [message])


_COLLECT = """
import json, sys
from rra_tools.run import load_artifact, plan_runs
from rra_tools.run.outcome import collect_outputs
(plan,) = plan_runs(load_artifact(sys.argv[1]), "job")
messages = []
produced, missing, paths = collect_outputs(plan, 0.0, messages)
print(json.dumps({"produced": [p["id"] for p in produced], "missing": missing, "messages": messages}))
"""


def test_unreadable_outputs_are_said_and_the_later_ones_still_recorded(tmp_path: Path) -> None:
    # Root reads everything: as root, the outputs are collected by a process without the
    # capabilities that let root ignore file modes.
    from tests.acceptance.test_run_outputs import _without_dac_override

    # 'locked' and 'tree/inner.bin' cannot be hashed; 'half/sub' can be listed but what it
    # holds cannot be looked at, so 'half' cannot even be listed as a tree.
    root = _artifact(tmp_path / "art", [_launcher("job", [
        ("locked", "out/locked.json", "json"), ("half", "out/half", "directory"), ("tree", "out/tree", "directory"),
        ("f", "out/f.json", "json")])])
    for rel in ("out/tree", "out/half/sub"):
        (root / rel).mkdir(parents=True)
    for rel in ("out/locked.json", "out/tree/inner.bin", "out/f.json", "out/half/sub/x"):
        (root / rel).write_text("{}")
    for rel in ("out/locked.json", "out/tree/inner.bin"):
        (root / rel).chmod(0)
    (root / "out" / "half" / "sub").chmod(0o644)
    proc = subprocess.run([sys.executable, "-c", _COLLECT, str(root)], capture_output=True, text=True, timeout=60,
                          preexec_fn=_without_dac_override if os.geteuid() == 0 else None)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {
        "produced": ["f"],
        "missing": [{"id": "half", "path": "out/half"}, {"id": "locked", "path": "out/locked.json"},
                    {"id": "tree", "path": "out/tree"}],
        "messages": ["declared output 'half' (out/half) cannot be read: Permission denied",
                     "declared output 'locked' (out/locked.json) cannot be read: Permission denied",
                     "declared output 'tree' (out/tree) cannot be read: Permission denied"]}


# -- where a run may write -----------------------------------------------------------------------


def test_allowed_writes(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art", [
        _launcher("job", [("s", "out/s.json", "json"), ("d", "out/dir", "directory")]),
        _launcher("sweep", [("r", "res/{lr}/x-{seed}.json", "json"), ("p", "plain/y.txt", "text"),
                            ("t", "{lr}.json", "json")],
                  parameters={"lr": {"type": "str", "default": "a"}})])
    assert allowed_writes(_plan(root, "job")) == ["out/s.json", "out/dir", "out/s.json", "out/dir", "res",
                                                  "plain/y.txt", "", "runs/job", "runs/sweep"]


# -- the record ----------------------------------------------------------------------------------


STARTED = datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=timezone.utc)


def _secret_artifact(tmp_path: Path) -> RunPlan:
    root = _artifact(tmp_path / "art", [_launcher(
        "job", [], repeats=2, secrets=["TRACKING_TOKEN"],
        parameters={"hub": {"type": "str", "secret": True}, "lr": {"type": "str", "default": "0.1"}})])
    (plan, second) = plan_runs(load_artifact(root), "job", all_seeds=True,
                               environ={"TRACKING_TOKEN": "tok-123456", "hub": "hf-abcdef"})
    assert (plan.repeat, second.repeat) == (0, 1)
    return second


def test_record_head_redacts_secrets_and_names_the_repeat(tmp_path: Path) -> None:
    plan = _secret_artifact(tmp_path)
    head = record_head(plan, executor=Executor.LOCAL, started=STARTED, host={"h": 1}, assigned=[1],
                       environment={"TRACKING_TOKEN": "tok-123456", "PATH": "/bin", "API_KEY": "k",
                                    "NOTE": "uses hf-abcdef"})
    assert head == {
        "record_version": RECORD_VERSION, "artifact_id": "outcome", "artifact_digest": plan.artifact.digest,
        "launcher": "job", "argv": ["python", "job.py"], "cwd": ".",
        "parameters": {"hub": "[redacted]", "lr": "0.1"}, "seed": None, "repeat": 1,
        "started": "2026-01-02T03:04:05.123456Z", "executor": "local", "timeout_s": 30.0, "host": {"h": 1},
        "gpus": [1], "environment": {"TRACKING_TOKEN": "[redacted]", "PATH": "/bin", "API_KEY": "[redacted]",
                                     "NOTE": "uses [redacted]"},
        "secrets": ["TRACKING_TOKEN", "hub"],
    }
    assert list(head) == ["record_version", "artifact_id", "artifact_digest", "launcher", "argv", "cwd",
                          "parameters", "seed", "repeat", "started", "executor", "timeout_s", "host", "gpus",
                          "environment", "secrets"]


def test_assembled_record_keeps_the_models_field_order(tmp_path: Path) -> None:
    plan = _secret_artifact(tmp_path)
    head = record_head(plan, executor=Executor.CONTAINER, started=STARTED, host={"h": 1}, assigned=[],
                       environment={})
    record = assemble_record(head, ended=datetime(2026, 1, 2, 3, 4, 6, tzinfo=timezone.utc),
                             duration_s=1.23456789, status=RunStatus.INTERRUPTED, exit_status=None, killed_by=9,
                             container={"image": "x"}, outputs=[], missing=[], logs=[], metrics={"c": 1.0},
                             stray=[f"f{i:03d}" for i in range(150)], messages=["m"])
    assert list(record) == ["record_version", "artifact_id", "artifact_digest", "launcher", "argv", "cwd",
                            "parameters", "seed", "repeat", "started", "ended", "duration_s", "status",
                            "exit_status", "signal", "executor", "container", "timeout_s", "host", "gpus",
                            "environment", "secrets", "outputs", "missing_outputs", "logs", "metrics",
                            "stray_writes", "messages"]
    assert (record["duration_s"], record["status"], record["signal"], record["container"]) == \
        (1.234568, "interrupted", 9, {"image": "x"})
    assert (record["repeat"], record["secrets"], record["executor"]) == (1, ["TRACKING_TOKEN", "hub"], "container")
    assert record["stray_writes"] == [f"f{i:03d}" for i in range(MAX_STRAY_LISTED)] and MAX_STRAY_LISTED == 100
    plain = assemble_record({k: v for k, v in head.items() if k not in ("repeat", "secrets")},
                            ended=STARTED, duration_s=0.0, status=RunStatus.COMPLETED, exit_status=0,
                            killed_by=None, container=None, outputs=[], missing=[], logs=[], metrics={}, stray=[],
                            messages=[])
    assert not {"repeat", "secrets", "signal", "container"} & set(plain)


def test_host_record_by_executor_and_environment(tmp_path: Path) -> None:
    plan, _ = _one_file(tmp_path)
    image = host_record(plan, Executor.CONTAINER, [], None)
    assert image["environment"] == "image" and "lock" not in image
    current = host_record(plan, Executor.LOCAL, [], None)
    assert current["environment"] == "current" and current["packages"] == image["packages"] > 0
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    (site / "demo_pkg-1.2.dist-info").mkdir(parents=True)
    (site / "demo_pkg-1.2.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.2\n")
    locked = host_record(plan, Executor.LOCAL, [], tmp_path / "venv")
    assert (locked["environment"], locked["packages"]) == ("locked", 1)
    assert locked["packages_digest"] == hashlib.sha256(b"demo-pkg==1.2\n").hexdigest()


def _finish(plan: RunPlan, tmp_path: Path, *, status: RunStatus = RunStatus.COMPLETED, exit_status: int | None = 0,
            **options: Any) -> dict[str, Any]:
    directory = tmp_path / "runs" / "job" / "r1"
    directory.mkdir(parents=True)
    (directory / "stdout.log").write_text("hello\n")
    (directory / "stderr.log").write_text("")
    host = host_record(plan, Executor.CONTAINER, [], None)
    written = write_record(plan, directory, executor=Executor.LOCAL, started=STARTED, ended=STARTED,
                           duration_s=0.5, started_epoch=1_700_000_000.0, status=status, exit_status=exit_status,
                           killed_by=None, host_gpus=[], assigned=[], environment={}, messages=[],
                           host=host, **options)
    assert json.loads((directory / "record.json").read_text()) == written
    assert written["host"] == host
    assert written["logs"] == [{"stream": "stdout", "path": "stdout.log",
                                "sha256": hashlib.sha256(b"hello\n").hexdigest(), "size": 6},
                               {"stream": "stderr", "path": "stderr.log",
                                "sha256": hashlib.sha256(b"").hexdigest(), "size": 0}]
    return written


def test_a_clean_run_stays_completed(tmp_path: Path) -> None:
    plan, _ = _one_file(tmp_path)
    before = snapshot_before(plan)
    (tmp_path / "art" / "out" / "s.json").write_text('{"acc": 0.75}')
    record = _finish(plan, tmp_path, before=before)
    assert (record["status"], record["messages"], record["stray_writes"]) == ("completed", [], [])


@pytest.mark.parametrize("status, exit_status, expected", [
    (RunStatus.COMPLETED, 0, "failed"), (RunStatus.COMPLETED, 1, "completed"),
    (RunStatus.TIMEOUT, None, "timeout"), (RunStatus.INTERRUPTED, 0, "interrupted")])
def test_a_missing_output_fails_only_a_run_that_completed_with_status_0(
        tmp_path: Path, status: RunStatus, exit_status: int | None, expected: str) -> None:
    plan, path = _one_file(tmp_path)
    path.unlink()
    record = _finish(plan, tmp_path, status=status, exit_status=exit_status)
    assert (record["status"], record["missing_outputs"]) == (expected, [{"id": "s", "path": "out/s.json"}])


def _stray(root: Path, count: int) -> None:
    for i in range(count):
        (root / f"stray{i}.txt").write_text("x")


@pytest.mark.parametrize("count, shown", [
    (5, "stray0.txt, stray1.txt, stray2.txt, stray3.txt, stray4.txt"),
    (6, "stray0.txt, stray1.txt, stray2.txt, stray3.txt, stray4.txt and 1 more"),
    (101, "stray0.txt, stray1.txt, stray10.txt, stray100.txt, stray11.txt and 96 more")])
def test_stray_writes_are_listed_and_counted(tmp_path: Path, count: int, shown: str) -> None:
    plan, path = _one_file(tmp_path)
    before = snapshot_before(plan)
    path.write_text('{"acc": 0.75}')
    _stray(tmp_path / "art", count)
    record = _finish(plan, tmp_path, before=before)
    assert record["status"] == "failed"
    assert record["stray_writes"] == sorted(f"stray{i}.txt" for i in range(count))[:100]
    assert record["messages"] == [f"the run wrote outside its declared outputs ({count} file(s)): {shown}; "
                                  "declare them as outputs or write them elsewhere"]


@pytest.mark.parametrize("others, listed", [
    (3, "run a; run b; run c"), (4, "run a; run b; run c; and 1 more")])
def test_stray_writes_while_others_ran_are_not_claimed(tmp_path: Path, others: int, listed: str) -> None:
    plan, path = _one_file(tmp_path)
    before = snapshot_before(plan)
    path.write_text('{"acc": 0.75}')
    _stray(tmp_path / "art", 6)
    record = _finish(plan, tmp_path, before=before, concurrent=lambda: [f"run {c}" for c in "abcd"[:others]])
    assert (record["status"], record["stray_writes"]) == ("failed", [])
    assert record["messages"] == [
        "the artifact changed outside the declared outputs (6 file(s)): stray0.txt, stray1.txt, stray2.txt, "
        f"stray3.txt, stray4.txt and 1 more, while other runs of it were running ({listed}); which run changed "
        "them cannot be told, so this record does not claim them; run the launcher alone to check it"]


def test_a_record_is_never_overwritten(tmp_path: Path) -> None:
    plan, _ = _one_file(tmp_path)
    directory = tmp_path / "run"
    directory.mkdir()
    for name in ("stdout.log", "stderr.log"):
        (directory / name).write_text("")
    (directory / "record.json").write_text("{}")
    with pytest.raises(FileExistsError):
        write_record(plan, directory, executor=Executor.LOCAL, started=STARTED, ended=STARTED, duration_s=0.5,
                     started_epoch=0.0, status=RunStatus.COMPLETED, exit_status=0, killed_by=None, host_gpus=[],
                     assigned=[], environment={}, messages=[], host={})
    assert (directory / "record.json").read_text() == "{}"
    for name in ("stdout.log", "stderr.log"):  # the hand-made record is not one to check against the schema
        (directory / name).unlink()


def test_log_file_entry(tmp_path: Path) -> None:
    (tmp_path / "stderr.log").write_bytes(b"abc")
    assert log_file(tmp_path, "stderr") == {"stream": "stderr", "path": "stderr.log",
                                            "sha256": hashlib.sha256(b"abc").hexdigest(), "size": 3}
