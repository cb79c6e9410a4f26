"""Running launchers for ``rra run``: plan, call :mod:`rra_tools.run`, say what happens, pick
the exit status. Without click, so that ``rra run ARTIFACT LAUNCHER`` can run without importing
it (rra_tools/cli/main.py); the command and its arguments are in :mod:`.run_cmd`."""

from __future__ import annotations

import sys

from ..errors import ExitStatus
from .output import echo

TYPE_CHECKING = False  # typing costs ~2 ms at import; mypy reads this name as true
if TYPE_CHECKING:
    from typing import Any

    from ..run.container import Engine
    from ..run.local import Progress, RunResult
    from ..run.orchestrate import Executor, Skipped
    from ..run.pending import Unfinished
    from ..run.plan import RunPlan

__all__ = ["execute_runs", "unfinished_lines"]


class _Terminal:
    """Streams the run's output to the terminal and keeps one progress line on stderr."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.progress_shown = False

    def _clear(self) -> None:
        if self.progress_shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
            self.progress_shown = False

    def output(self, stream: str, chunk: bytes) -> None:
        if self.quiet:
            return
        self._clear()
        target = sys.stdout if stream == "stdout" else sys.stderr
        target.buffer.write(chunk)
        target.flush()

    def progress(self, p: Progress) -> None:
        if not self.tty:
            return
        seed = "noseed" if p.seed is None else f"seed {p.seed}"
        sys.stderr.write(f"\r\033[K[rra] {p.launcher} {seed} {p.elapsed_s:.0f}s/{p.expected_s:g}s "
                         f"(timeout {p.timeout_s:g}s)")
        sys.stderr.flush()
        self.progress_shown = True

    def say(self, text: str) -> None:
        self._clear()
        echo(f"[rra] {text}", err=True)


def _describe(result: RunResult, root: Any) -> str:
    record = result.record
    seed = f"seed {record['seed']}" if record["seed"] is not None else (
        f"repeat {record['repeat']}" if record.get("repeat") is not None else "noseed")
    where = result.record_path.relative_to(root) if result.record_path.is_relative_to(root) else result.record_path
    exit_text = "no exit status" if record["exit_status"] is None else f"exit {record['exit_status']}"
    return f"{record['launcher']} {seed}: {record['status']}, {exit_text}, {record['duration_s']:.1f} s -> {where}"


def _preflight(artifact_path: str, force: bool) -> bool:
    """False (after saying why) when the manifest has errors and the run is not forced."""
    from ..run.preflight import manifest_file, manifest_problems

    errors, warnings = manifest_problems(manifest_file(artifact_path))
    if warnings:
        echo(f"warning: the manifest has {len(warnings)} error(s) that do not stop a run (the runs are how "
                   "they are mended; 'rra validate' explains them):", err=True)
        for line in warnings:
            echo(f"  {line}", err=True)
    if not errors:
        return True
    head = "warning" if force else "error"
    echo(f"{head}: the manifest has {len(errors)} error(s) ('rra validate' explains them):", err=True)
    for line in errors:
        echo(f"  {line}", err=True)
    if not force:
        echo("nothing was run; fix them, or run anyway with --force", err=True)
    return force


def execute_runs(artifact_path: str, launcher: str | None, seed: int | None, all_seeds: bool,
                 params: tuple[str, ...], quiet: bool, executor: str = "local", image: str | None = None,
                 engine_url: str | None = None, network: str | None = None, env: str = "current",
                 force: bool = False) -> int:
    """Plan, run through :func:`rra_tools.run.run_plans`, render; return the exit status. A run
    that cannot be planned or started raises a :class:`~rra_tools.errors.RRAError` before anything runs;
    a manifest with errors is not run unless ``force``."""
    from ..errors import RRAError
    from ..run import PlanHooks, RunOptions, execute, load_artifact, parse_overrides, plan_runs, run_plans
    from ..run.records import redact_values
    from ..run.gpus import inventory

    term = _Terminal(quiet)
    engine: Engine | None = None
    try:
        artifact = load_artifact(artifact_path)
        from ..run.pending import finish_orphaned_runs

        # Runs in progress are another rra run's business; orphans are finished and said.
        for line in unfinished_lines([u for u in finish_orphaned_runs(artifact) if u.state != "running"]):
            term.say(line)
        plans = plan_runs(artifact, launcher, seed=seed, all_seeds=all_seeds, overrides=parse_overrides(params))
        if not _preflight(artifact_path, force):
            return ExitStatus.USAGE
        if executor == "container":
            from ..run import container

            engine, resolved = container.prepare(artifact, plans, image, engine_url)
            term.say(f"container engine: {engine.description} at {engine.url}; image {resolved.reference} "
                     f"({resolved.id})")
        env_dir = None
        if env == "locked":
            from ..run.locked_env import locked_environment

            if artifact.manifest.environment.lock is not None:
                term.say(f"environment: building or reusing the one locked by "
                         f"{artifact.manifest.environment.lock.path} ...")
            created = locked_environment(artifact)
            term.say(f"environment: {created.path} ({'reused' if created.reused else 'built'}, "
                     f"{created.packages} package(s))")
            env_dir = created.path
        gpus = inventory()  # once: nvidia-smi is slow, and the devices do not change between runs
    except RRAError:
        # Reported by the CLI's error mapper (exit status 2); the engine is closed first.
        if engine is not None:
            engine.close()
        raise
    options = RunOptions(on_output=term.output, on_progress=term.progress, gpus=gpus, env_dir=env_dir)
    run_one: Executor = execute
    if engine is not None:
        from ..run import container

        options = container.ContainerOptions(on_output=term.output, on_progress=term.progress, gpus=gpus,
                                             image=image, network=network, engine=engine)
        run_one = container.execute

    def started(plan: RunPlan, i: int, total: int) -> None:
        seed_text = f"seed {plan.seed}" if plan.seed is not None else (
            f"repeat {plan.repeat}" if plan.repeat is not None else "noseed")
        shown = redact_values(list(plan.argv), plan.secret_values)  # a secret is never shown
        term.say(f"run {plan.launcher.id} {seed_text} ({i}/{total}): {' '.join(shown)}")

    def finished(result: RunResult) -> None:
        term.say(_describe(result, artifact.root))
        for message in result.record["messages"]:
            term.say(f"  {message}")

    def skipped(skip: Skipped) -> None:
        if not skip.interrupted:  # the plan's interruption is said once, below
            term.say(f"skip {skip.plan.launcher.id}: {skip.reason}")

    hooks = PlanHooks(on_start=started, on_finish=finished, on_skip=skipped,
                      on_refused=lambda refused: term.say(f"error: {refused.error}"))
    try:
        outcome = run_plans(plans, options, executor=run_one, hooks=hooks)
    finally:
        if engine is not None:
            engine.close()
    if outcome.signal is not None:
        term.say("interrupted; remaining runs skipped")
    return ExitStatus.OK if outcome.ok else ExitStatus.FAILED


def unfinished_lines(unfinished: list[Unfinished]) -> list[str]:
    """What the run-record directory holds besides records, one line each."""
    said = {"finished": "its rra run was killed; finished it as interrupted",
            "running": "still running (no record yet)",
            "unknown": "no record and nothing to finish it from"}
    return [f"run without a record: {u.directory}: {said.get(u.state, u.state)}"
            + (f" -> {u.record}" if u.record else "") for u in unfinished]
