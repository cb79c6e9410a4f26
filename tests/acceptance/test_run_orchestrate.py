"""``rra_tools.run.run_plans`` without the CLI: a multi-launcher plan with dependencies, a failing
launcher, a run that cannot be set up, signals, and every callback. Real processes throughout."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from rra_tools.run import PlanHooks, RunOptions, RunResult, load_artifact, plan_runs, run_plans
from rra_tools.run.gpus import INVENTORY_ENV, LOCK_DIR_ENV

BASE = {"resources": {"timeout_s": 30, "expected_runtime_s": 1}}


def _write(root: Path, launchers: list[dict[str, Any]]) -> Path:
    root.mkdir(parents=True)
    doc = {
        "rra_version": "1.0", "id": "plan", "title": "A plan of several launchers",
        "paper": {"title": "T", "authors": [{"name": "A"}]},
        "code": {"license": "MIT", "tree": {"path": "."}},
        "environment": {"interpreter": {"version": "3.11"}},
        "launchers": launchers,
    }
    (root / "rra.yaml").write_text(json.dumps(doc), encoding="utf-8")
    return root


def _py(ident: str, code: str, **extra: Any) -> dict[str, Any]:
    return {"id": ident, "argv": ["python", "-c", code], "stochastic": False, **BASE, **extra}


@pytest.fixture()
def art(tmp_path: Path) -> Path:
    return _write(tmp_path / "art", [
        _py("report", "print('report')", depends_on=["train"]),
        {"id": "train", "argv": ["python", "-c", "import sys; print('train', sys.argv[1])", "{seed}"],
         "stochastic": True, "seeds": [0, 1], "depends_on": ["prep"], **BASE},
        _py("prep", "print('prep')"),
        _py("broken", "raise SystemExit(2)"),
        _py("after-broken", "print('never')", depends_on=["broken"]),
        _py("after-after", "print('never')", depends_on=["after-broken"]),
        _py("gpu", "print('never')", resources={"timeout_s": 30, "expected_runtime_s": 1, "gpus": 1}),
        _py("after-gpu", "print('never')", depends_on=["gpu"]),
    ])


def test_a_plan_runs_in_order_skips_dependents_and_reports_every_step(art: Path, tmp_path: Path) -> None:
    artifact = load_artifact(art)
    plans = plan_runs(artifact, None)
    events: list[tuple[Any, ...]] = []
    output: list[bytes] = []
    hooks = PlanHooks(
        on_start=lambda plan, i, n: events.append(("start", plan.launcher.id, plan.seed, i, n)),
        on_finish=lambda r: events.append(("finish", r.record["launcher"], r.record["seed"], r.record["status"],
                                           r.record["exit_status"])),
        on_skip=lambda s: events.append(("skip", s.plan.launcher.id, s.reason, s.interrupted)),
        on_refused=lambda r: events.append(("refused", r.plan.launcher.id, str(r.error))))
    environ = {INVENTORY_ENV: "[]", LOCK_DIR_ENV: str(tmp_path / "locks")}
    options = RunOptions(on_output=lambda stream, chunk: output.append(chunk), gpus=[], environ=environ)

    outcome = run_plans(plans, options, hooks=hooks)

    assert events == [
        ("start", "prep", None, 1, 9), ("finish", "prep", None, "completed", 0),
        ("start", "train", 0, 2, 9), ("finish", "train", 0, "completed", 0),
        ("start", "train", 1, 3, 9), ("finish", "train", 1, "completed", 0),
        ("start", "report", None, 4, 9), ("finish", "report", None, "completed", 0),
        ("start", "broken", None, 5, 9), ("finish", "broken", None, "completed", 2),
        ("skip", "after-broken", "dependency 'broken' did not complete", False),
        ("skip", "after-after", "dependency 'after-broken' did not complete", False),
        ("start", "gpu", None, 8, 9),
        ("refused", "gpu", "launcher 'gpu' needs 1 GPU(s); this machine has 0"),
        ("skip", "after-gpu", "dependency 'gpu' did not complete", False),
    ]
    assert b"".join(output).split() == [b"prep", b"train", b"0", b"train", b"1", b"report"]
    assert not outcome.ok and not outcome.interrupted and outcome.signal is None
    assert [r.record["launcher"] for r in outcome.results] == ["prep", "train", "train", "report", "broken"]
    assert [r.successful for r in outcome.results] == [True, True, True, True, False]
    assert [s.plan.launcher.id for s in outcome.skipped] == ["after-broken", "after-after", "after-gpu"]
    assert [type(r.error).__name__ for r in outcome.refused] == ["GpuUnavailable"]
    # The records on disk are the ones the outcome holds; nothing for skipped or refused plans.
    assert sorted(p.name for p in (art / "runs").iterdir()) == ["broken", "prep", "report", "train"]
    for result in outcome.results:
        assert json.loads(result.record_path.read_text()) == result.record


def test_a_plan_without_failures_is_ok(art: Path) -> None:
    artifact = load_artifact(art)
    outcome = run_plans(plan_runs(artifact, "report"), RunOptions(gpus=[]))
    assert outcome.ok
    assert [r.record["status"] for r in outcome.results] == ["completed"]


def _interrupt_when_ready(root: Path, how: str) -> tuple[Any, list[tuple[str, str]]]:
    """Run 'slow' then 'later'; interrupt (``how``) once 'slow' printed 'ready'."""
    _write(root, [
        _py("slow", "import time; print('ready', flush=True); time.sleep(30)"),
        _py("later", "print('never')"),
    ])
    artifact = load_artifact(root)
    plans = plan_runs(artifact, "slow") + plan_runs(artifact, "later")
    stop = threading.Event()
    seen: list[tuple[str, str]] = []

    def on_output(stream: str, chunk: bytes) -> None:
        if b"ready" in chunk:
            if how == "event":
                stop.set()
            else:
                os.kill(os.getpid(), getattr(signal, how))

    hooks = PlanHooks(on_skip=lambda s: seen.append((s.plan.launcher.id, s.reason)),
                      on_finish=lambda r: seen.append((r.record["launcher"], r.record["status"])))
    outcome = run_plans(plans, RunOptions(on_output=on_output, gpus=[], kill_grace_s=0.5,
                                          stop=stop if how == "event" else None), hooks=hooks)
    return outcome, seen


@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM"])
def test_a_signal_interrupts_the_plan_and_handlers_are_restored(tmp_path: Path, how: str) -> None:
    sig = getattr(signal, how)
    before = signal.getsignal(sig)
    outcome, seen = _interrupt_when_ready(tmp_path / "art", how)
    assert outcome.signal == sig and outcome.interrupted and not outcome.ok
    assert seen == [("slow", "interrupted"), ("later", "interrupted before it started")]
    (result,) = outcome.results
    assert result.record["messages"][0].startswith("interrupted after ")
    assert [s.interrupted for s in outcome.skipped] == [True]
    assert signal.getsignal(sig) is before


def test_the_callers_stop_event_interrupts_the_plan(tmp_path: Path) -> None:
    outcome, seen = _interrupt_when_ready(tmp_path / "art", "event")
    assert outcome.signal is None and outcome.interrupted
    assert seen == [("slow", "interrupted"), ("later", "interrupted before it started")]


def test_signals_are_left_alone_off_the_main_thread_or_when_asked(art: Path) -> None:
    artifact = load_artifact(art)
    got: list[Any] = []
    thread = threading.Thread(target=lambda: got.append(run_plans(plan_runs(artifact, "prep"),
                                                                  RunOptions(gpus=[]))))
    thread.start()
    thread.join(60)
    assert got and got[0].ok
    handler = signal.getsignal(signal.SIGTERM)
    seen: list[Any] = []
    hooks = PlanHooks(on_start=lambda *_: seen.append(signal.getsignal(signal.SIGTERM)))
    assert run_plans(plan_runs(artifact, "prep"), RunOptions(gpus=[]), hooks=hooks, handle_signals=False).ok
    assert seen == [handler]


def test_any_executor_runs_the_plans(art: Path) -> None:
    # An executor is any function (plan, options) -> RunResult (the container executor is one);
    # it gets each plan once, with options carrying the stop event run_plans watches.
    from rra_tools.run import execute

    calls: list[tuple[str, int | None, bool]] = []

    def counting(plan: Any, options: RunOptions) -> RunResult:
        calls.append((plan.launcher.id, plan.seed, options.stop is not None))
        return execute(plan, options)

    outcome = run_plans(plan_runs(load_artifact(art), "train", all_seeds=True), RunOptions(gpus=[]),
                        executor=counting)
    assert calls == [("train", 0, True), ("train", 1, True)]
    assert outcome.ok and not outcome.skipped and not outcome.refused
