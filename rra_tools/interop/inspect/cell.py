"""The RRA side of an Inspect sample, without Inspect: the benchmark planned from a task set
(kept per process, so that every sample of a task shares it), a cell prepared and judged, and one
command run in the cell's sandbox over its workspace.

Each command runs as one sandboxed cell command (:func:`rra_tools.agents.cell.run_cell_command`):
the workspace is the only writable place, the benchmark directory and the references stay
hidden, the network is only the metering proxy. Its stdout and stderr are kept in
``<cell>/inspect/exec-N/`` beside the workspace and returned.
"""

from __future__ import annotations

import shlex
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ...agents.cell import DEFAULT_LIMITS, run_cell_command
from ...agents.proxy import Budgets
from ...bench.audit.attempt_file import JOURNAL_NAME
from ...bench.cells import BenchRun, PreparedCell, cell_options, judge_cell, plan_run, prepare_cell
from ...bench.taskset import load_taskset, with_conditions
from ...bench.workspace import SUBMISSION_NAME
from ...model.bench_results import Cell, CellResult
from ...model.cell import SandboxLimits

__all__ = ["ExecOutcome", "SampleCell", "bench_for", "default_out", "judge", "prepare", "run_in_cell", "split_conditions",
           "workspace_path"]

_LOCK = threading.Lock()
_BENCHES: dict[tuple[str, str, str, str, str, tuple[str, ...]], BenchRun] = {}


def split_conditions(conditions: Sequence[str] | str | None) -> tuple[str, ...]:
    """``conditions`` as a tuple (a comma-separated string, as ``inspect eval -T`` gives it, split)."""
    if conditions is None:
        return ()
    if isinstance(conditions, str):
        return tuple(c.strip() for c in conditions.split(",") if c.strip())
    return tuple(conditions)


def bench_for(taskset: str, references: str | None, conditions: Sequence[str], out: str, sandbox: str,
              reproducer: str) -> BenchRun:
    """The benchmark of ``taskset`` under ``out`` with one reproducer, ``reproducer`` (the Inspect
    solver: its command is never run by RRA), planned once per process for these arguments."""
    key = (str(Path(taskset).resolve()), "" if references is None else str(Path(references).resolve()),
           str(Path(out).resolve()), sandbox, reproducer, tuple(conditions))
    with _LOCK:
        found = _BENCHES.get(key)
        if found is None:
            loaded = load_taskset(Path(taskset), None if references is None else Path(references))
            if conditions:
                loaded = with_conditions(loaded, conditions)
            found = plan_run(loaded, Path(out), {reproducer: f"inspect eval (solver {reproducer})"},
                             cell_options(loaded, sandbox))
            _BENCHES[key] = found
        return found


def default_out() -> str:
    """A fresh directory for the cells of one task."""
    return tempfile.mkdtemp(prefix="rra-inspect-")


@dataclass
class SampleCell:
    """One sample's cell: prepared (or its setup failure), when its attempt started, the commands
    run so far and the last one's exit status."""

    bench: BenchRun
    cell: Cell
    prepared: PreparedCell | None
    failed: CellResult | None
    started: float
    execs: int = 0
    exit_status: int | None = None
    #: The sandbox record of the last command (the cell result's ``sandbox``).
    record: dict[str, object] | None = None
    #: The cell's run journal's last digest after the last command (each command's proxy
    #: continues the same journal file).
    journal_head: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    journal_lock: threading.Lock = field(default_factory=threading.Lock)


def prepare(bench: BenchRun, cell_key: str) -> SampleCell:
    """The cell ``cell_key`` of ``bench`` with a fresh workspace (:func:`prepare_cell`)."""
    cell = next((c for c in bench.cells() if c.key == cell_key), None)
    if cell is None:
        raise ValueError(f"{cell_key!r} is not a cell of task set {bench.taskset.model.id!r}")
    made = prepare_cell(cell, bench)
    if isinstance(made, CellResult):
        return SampleCell(bench, cell, None, made, time.time())
    return SampleCell(bench, cell, made, None, time.time())


@dataclass(frozen=True)
class ExecOutcome:
    """How one command ended: exit status (None when it never started), output, and who stopped it."""

    exit_status: int | None
    stdout: str
    stderr: str
    stopped: str | None
    detail: str | None = None


def _limits(bench: BenchRun, timeout: float | None) -> SandboxLimits:
    limits = bench.taskset.model.limits
    memory = limits.memory_mib
    if memory is None and (bench.options is None or bench.options.backend.name != "none"):
        memory = DEFAULT_LIMITS["memory_mib"]
    wall = min(timeout, limits.wall_clock_s) if timeout else limits.wall_clock_s
    return SandboxLimits(cpus=limits.cpus, memory_mib=memory, pids=limits.pids or DEFAULT_LIMITS["pids"],
                         wall_clock_s=wall, disk_mib=limits.disk_mib or DEFAULT_LIMITS["disk_mib"])


def _env(sample: SampleCell, workspace: Path, extra: Mapping[str, str]) -> dict[str, str]:
    cell = sample.cell
    return {"RRA_BENCH_WORKSPACE": str(workspace), "RRA_BENCH_TASK": str(workspace / "task.json"),
            "RRA_BENCH_SUBMISSION": str(workspace / SUBMISSION_NAME), "RRA_BENCH_TASK_KEY": cell.task,
            "RRA_BENCH_CONDITION": str(cell.condition), "RRA_BENCH_REPRODUCER": cell.reproducer,
            "RRA_BENCH_REPEAT": str(cell.repeat), **extra}


def run_in_cell(sample: SampleCell, argv: Sequence[str], *, stdin: str | bytes | None = None,
                cwd: str | None = None, env: Mapping[str, str] | None = None,
                timeout: float | None = None) -> ExecOutcome:
    """Run ``argv`` in ``sample``'s sandbox, in ``cwd`` (relative to the workspace), with ``stdin``."""
    if sample.prepared is None:
        assert sample.failed is not None
        return ExecOutcome(None, "", f"the cell could not be prepared: {sample.failed.detail}", "setup")
    bench, prepared = sample.bench, sample.prepared
    extra = dict(env or {})
    command = shlex.join(argv)
    if stdin is not None:
        extra["RRA_INSPECT_STDIN"] = stdin.decode() if isinstance(stdin, bytes) else stdin
        command = f'printf %s "$RRA_INSPECT_STDIN" | {command}'
    if cwd:
        command = f"cd {shlex.quote(cwd)} && {command}"
    with sample.lock:
        sample.execs += 1
        logs = prepared.directory / "inspect" / f"exec-{sample.execs}"
    hidden = [p for p in (bench.out, bench.home, bench.taskset.references) if p is not None]
    assert bench.options is not None  # bench_for plans with options
    # One command at a time per sample: each command's proxy continues the cell's one run journal
    # from the digest the previous one left, which a concurrent writer would break.
    with sample.journal_lock:
        ran = run_cell_command(command, prepared.workspace, options=bench.options,
                               env=_env(sample, prepared.workspace, extra), limits=_limits(bench, timeout),
                               budgets=Budgets(), logs=logs, call_log=logs / "model-calls.jsonl", hidden=hidden,
                               journal=prepared.directory / JOURNAL_NAME, journal_head=sample.journal_head)
        sample.journal_head = ran.journal_head
    ended = ran.exit
    sample.exit_status = ended.exit_status
    sample.record = ended.record.model_dump(exclude_none=True)
    out = (logs / "reproducer.stdout.log").read_text(encoding="utf-8", errors="replace") \
        if (logs / "reproducer.stdout.log").exists() else ""
    err = (logs / "reproducer.stderr.log").read_text(encoding="utf-8", errors="replace") \
        if (logs / "reproducer.stderr.log").exists() else ""
    return ExecOutcome(ended.exit_status, out, err, ended.stopped, ended.setup_error)


def workspace_path(sample: SampleCell, file: str) -> Path:
    """``file`` (relative to the workspace, or absolute inside it) on the host; ValueError outside."""
    if sample.prepared is None:
        raise PermissionError("the cell's workspace could not be prepared")
    root = sample.prepared.workspace.resolve()
    path = (root / file).resolve()
    if path != root and root not in path.parents:
        raise PermissionError(f"{file!r} is outside the cell's workspace")
    return path


def judge(sample: SampleCell) -> CellResult:
    """The cell's verdict now: its setup failure, or the auditor and the interval on its workspace
    (:func:`judge_cell`), the attempt's window from the workspace's preparation until now, with
    the last command's exit status and sandbox record."""
    if sample.prepared is None:
        assert sample.failed is not None
        return sample.failed
    ended = time.time()
    return judge_cell(sample.cell, sample.bench, sample.prepared, sample.started, ended,
                      wall_s=round(ended - sample.started, 6), exit_status=sample.exit_status,
                      sandbox=sample.record, journal_head=sample.journal_head)
