"""The local executor: one process per run, from a clean environment, in its own session.

The process sees only the launcher's declared variables plus a minimal PATH (this
interpreter's bin directory first, so ``python`` is the interpreter running rra), a fresh
HOME, a C.UTF-8 locale and, when it needs accelerators, CUDA_VISIBLE_DEVICES. It runs in a
new session, so a timeout or an interruption kills its whole process group (SIGTERM, then
SIGKILL after a grace period), grandchildren included. Its standard streams go to log files
in the run directory and, through a callback, to whoever is watching.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO

from ..io.digest import sha256_file
from ..io.paths import PathIssue, resolve_inside
from ..model.run_record import (
    RECORD_VERSION,
    GpuInfo,
    LogFile,
    MissingOutput,
    OutputFile,
    RunRecord,
    RunStatus,
)
from .extract import ExtractError, extract_value
from .gpus import acquire, inventory
from .host import host_fingerprint
from .plan import RunPlan
from .records import new_run_dir, record_bytes, redact, utc_stamp, write_atomic

__all__ = ["MINIMAL_PATH", "Progress", "RunOptions", "RunResult", "clean_environment", "execute"]

MINIMAL_PATH = "/usr/bin:/bin"
#: Outputs modified this long before the run started are stale, not produced by the run.
STALE_SLACK_S = 2.0


@dataclass(frozen=True)
class Progress:
    """Where a running launcher stands."""

    launcher: str
    seed: int | None
    elapsed_s: float
    expected_s: float
    timeout_s: float


@dataclass
class RunOptions:
    """How to run: callbacks for output and progress, a stop event, the kill grace period."""

    #: Called with ('stdout' | 'stderr', bytes) as the process writes; from reader threads.
    on_output: Callable[[str, bytes], None] | None = None
    on_progress: Callable[[Progress], None] | None = None
    progress_interval_s: float = 1.0
    #: Set it (e.g. from a signal handler) to interrupt the run; it is recorded as interrupted.
    stop: threading.Event | None = None
    kill_grace_s: float = 5.0
    #: Accelerator inventory; None reads it from the machine (see :mod:`.gpus`).
    gpus: Sequence[GpuInfo] | None = None
    #: Environment rra itself reads (RRA_GPU_*); None means os.environ. Never passed to the run.
    environ: Mapping[str, str] | None = None


@dataclass(frozen=True)
class RunResult:
    """A finished run: its record and where it was written."""

    record: RunRecord
    directory: Path

    @property
    def record_path(self) -> Path:
        """The record file."""
        return self.directory / "record.json"

    @property
    def successful(self) -> bool:
        """Exit status 0 and status completed, as the levels count it."""
        return self.record.status == RunStatus.COMPLETED.value and self.record.exit_status == 0


def clean_environment(declared: Mapping[str, str], home: str, cuda_visible: str | None) -> dict[str, str]:
    """The complete environment of a run; declared variables win over the defaults."""
    bin_dir = os.path.dirname(sys.executable)
    path = MINIMAL_PATH if not bin_dir or bin_dir in MINIMAL_PATH.split(":") else f"{bin_dir}:{MINIMAL_PATH}"
    env = {"PATH": path, "HOME": home, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    if cuda_visible is not None:
        env["CUDA_VISIBLE_DEVICES"] = cuda_visible
    env.update(declared)
    return env


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _pump(stream: IO[bytes], sink: IO[bytes], name: str, callback: Callable[[str, bytes], None] | None) -> None:
    fd = stream.fileno()
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        try:
            sink.write(chunk)
            sink.flush()
        except (OSError, ValueError):  # the log was closed: the run is over
            break
        if callback is not None:
            try:
                callback(name, chunk)
            except Exception:  # noqa: BLE001 - a broken terminal must not stop the log
                callback = None


def _kill_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _stop(proc: subprocess.Popen[bytes], grace_s: float) -> int:
    """SIGTERM the group, SIGKILL it after ``grace_s``; the signal that ended the leader."""
    _kill_group(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace_s)
        return int(signal.SIGTERM)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid, signal.SIGKILL)
        proc.wait()
        return int(signal.SIGKILL)


def _tree_digest(directory: Path) -> tuple[str, int]:
    import hashlib

    lines, total = [], 0
    for path in sorted(p for p in directory.rglob("*") if p.is_file() and not p.is_symlink()):
        lines.append(f"{sha256_file(path)}  {path.relative_to(directory).as_posix()}\n")
        total += path.stat().st_size
    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest(), total


def _collect_outputs(plan: RunPlan, started_epoch: float, messages: list[str]
                     ) -> tuple[list[OutputFile], list[MissingOutput], dict[str, Path]]:
    produced: list[OutputFile] = []
    missing: list[MissingOutput] = []
    paths: dict[str, Path] = {}
    root = plan.artifact.root
    for ident, rel, fmt in plan.outputs:
        resolved = resolve_inside(root, rel, kind="any")
        if resolved.path is None:
            if resolved.issue is PathIssue.MISSING:
                messages.append(f"declared output {ident!r} ({rel}) was not produced")
            else:
                messages.append(f"declared output {ident!r} ({rel}) leaves the artifact root")
            missing.append(MissingOutput(id=ident, path=rel))
            continue
        path = resolved.path
        try:
            info = path.stat()
            if info.st_mtime < started_epoch - STALE_SLACK_S:
                messages.append(f"declared output {ident!r} ({rel}) was not written by this run "
                                f"(last modified before it started)")
                missing.append(MissingOutput(id=ident, path=rel))
                continue
            if path.is_dir():
                digest, size = _tree_digest(path)
            elif path.is_file():
                digest, size = sha256_file(path), info.st_size
            else:
                messages.append(f"declared output {ident!r} ({rel}) is not a regular file or directory")
                missing.append(MissingOutput(id=ident, path=rel))
                continue
        except OSError as exc:
            messages.append(f"declared output {ident!r} ({rel}) cannot be read: {exc.strerror or exc}")
            missing.append(MissingOutput(id=ident, path=rel))
            continue
        if fmt == "directory" and not path.is_dir():
            messages.append(f"declared output {ident!r} ({rel}) should be a directory but is a file")
        mtime = utc_stamp(datetime.fromtimestamp(info.st_mtime, timezone.utc))
        produced.append(OutputFile(id=ident, path=rel, sha256=digest, size=size, mtime=mtime))
        paths[ident] = path
    return produced, missing, paths


def _metrics(plan: RunPlan, paths: Mapping[str, Path], messages: list[str]) -> tuple[dict[str, float], bool]:
    """Metrics of this launcher's claims; the flag says whether every claim got its value."""
    metrics: dict[str, float] = {}
    complete = True
    declared = {ident: rel for ident, rel, _ in plan.outputs}
    for claim in plan.artifact.manifest.claims:
        if claim.launcher != plan.launcher.id:
            continue
        out = claim.extract.output
        if out not in declared:
            messages.append(f"claim {claim.id!r}: launcher {plan.launcher.id!r} declares no output {out!r}")
            complete = False
            continue
        if out not in paths:
            messages.append(f"claim {claim.id!r}: no value, output {out!r} is missing")
            complete = False
            continue
        try:
            metrics[claim.id] = extract_value(paths[out], claim.extract)
        except ExtractError as exc:
            messages.append(f"claim {claim.id!r}: output {out!r} ({declared[out]}) {exc}")
            complete = False
    return metrics, complete


def _log(directory: Path, stream: str) -> LogFile:
    path = directory / f"{stream}.log"
    return LogFile(stream=stream, path=path.name, sha256=sha256_file(path), size=path.stat().st_size)


def execute(plan: RunPlan, options: RunOptions | None = None) -> RunResult:
    """Run ``plan`` and write its record; raises only when no run could be set up (e.g.
    GpuUnavailable). Whatever the process does, a truthful record is written."""
    options = options or RunOptions()
    environ = dict(os.environ if options.environ is None else options.environ)
    gpus = list(options.gpus) if options.gpus is not None else inventory(environ)
    lease = acquire(plan.launcher.resources.gpus, plan.launcher.id, gpus, environ)
    home = tempfile.mkdtemp(prefix="rra-home-")
    try:
        return _execute(plan, options, gpus, lease.visible if lease.devices else None, home,
                        [g.index for g in lease.devices])
    finally:
        lease.release()
        shutil.rmtree(home, ignore_errors=True)


def _execute(plan: RunPlan, options: RunOptions, gpus: list[GpuInfo], visible: str | None, home: str,
             assigned: list[int]) -> RunResult:
    started = _now()
    directory = new_run_dir(plan.artifact.runs_dir, plan.launcher.id, plan.seed, started)
    env = clean_environment(plan.env, home, visible)
    messages: list[str] = []
    status = RunStatus.COMPLETED
    exit_status: int | None = None
    killed_by: int | None = None
    cwd = resolve_inside(plan.artifact.root, plan.cwd, kind="dir")
    started_epoch = time.time()
    t0 = time.monotonic()
    with open(directory / "stdout.log", "wb") as out_log, open(directory / "stderr.log", "wb") as err_log:
        proc: subprocess.Popen[bytes] | None = None
        if cwd.path is None:
            messages.append(f"working directory {plan.cwd!r} is not a directory inside the artifact "
                            f"({cwd.issue.value if cwd.issue else 'unusable'})")
            status = RunStatus.FAILED
        else:
            try:
                proc = subprocess.Popen(plan.argv, cwd=cwd.path, env=env, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        start_new_session=True, close_fds=True)
            except OSError as exc:
                messages.append(f"cannot start {plan.argv[0]!r}: {exc.strerror or exc}")
                status = RunStatus.FAILED
        if proc is not None:
            assert proc.stdout is not None and proc.stderr is not None
            readers = [threading.Thread(target=_pump, args=(proc.stdout, out_log, "stdout", options.on_output),
                                        daemon=True),
                       threading.Thread(target=_pump, args=(proc.stderr, err_log, "stderr", options.on_output),
                                        daemon=True)]
            for reader in readers:
                reader.start()
            status, killed_by = _wait(proc, plan, options, t0, messages)
            # Sweep what the launcher left behind in its group, so pipes close and nothing lingers.
            _kill_group(proc.pid, signal.SIGKILL)
            for reader in readers:
                reader.join(timeout=5.0)
            if any(reader.is_alive() for reader in readers):
                messages.append("a process that left the launcher's process group still holds its output; "
                                "the logs may be incomplete")
            else:
                proc.stdout.close()
                proc.stderr.close()
            code = proc.returncode
            if code is not None and code >= 0:
                exit_status = code
            elif code is not None and killed_by is None:
                killed_by = -code
                status = RunStatus.FAILED
                messages.append(f"process was killed by signal {_signal_name(-code)}")
            if status == RunStatus.COMPLETED and exit_status not in (None, 0):
                messages.append(f"process exited with status {exit_status}")
    ended = _now()
    duration = time.monotonic() - t0
    outputs, missing, paths = _collect_outputs(plan, started_epoch, messages)
    metrics, complete = _metrics(plan, paths, messages)
    if status == RunStatus.COMPLETED and exit_status == 0 and (missing or not complete):
        status = RunStatus.FAILED
    record = RunRecord(
        record_version=RECORD_VERSION,
        artifact_id=plan.artifact.manifest.id,
        artifact_digest=plan.artifact.digest,
        launcher=plan.launcher.id,
        argv=plan.argv,
        cwd=plan.cwd,
        parameters=plan.parameters,
        seed=plan.seed,
        started=utc_stamp(started),
        ended=utc_stamp(ended),
        duration_s=round(duration, 6),
        status=status,
        exit_status=exit_status,
        signal=killed_by,
        executor="local",
        timeout_s=plan.timeout_s,
        host=host_fingerprint(gpus),
        gpus=assigned,
        environment=redact(env),
        outputs=outputs,
        missing_outputs=missing,
        logs=[_log(directory, "stdout"), _log(directory, "stderr")],
        metrics=metrics,
        messages=messages,
    )
    write_atomic(directory / "record.json", record_bytes(record))
    return RunResult(record, directory)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _wait(proc: subprocess.Popen[bytes], plan: RunPlan, options: RunOptions, t0: float,
          messages: list[str]) -> tuple[RunStatus, int | None]:
    """Wait for the process, enforcing the timeout and the stop event."""
    next_progress = t0 + options.progress_interval_s
    try:
        while True:
            try:
                proc.wait(timeout=0.05)
                return RunStatus.COMPLETED, None
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            if options.stop is not None and options.stop.is_set():
                sig = _stop(proc, options.kill_grace_s)
                messages.append(f"interrupted after {now - t0:.1f} s; process group stopped with "
                                f"{_signal_name(sig)}")
                return RunStatus.INTERRUPTED, sig
            if now - t0 > plan.timeout_s:
                sig = _stop(proc, options.kill_grace_s)
                messages.append(f"timed out after {plan.timeout_s:g} s; process group stopped with "
                                f"{_signal_name(sig)}")
                return RunStatus.TIMEOUT, sig
            if options.on_progress is not None and now >= next_progress:
                next_progress = now + options.progress_interval_s
                options.on_progress(Progress(plan.launcher.id, plan.seed, now - t0, plan.expected_s,
                                             plan.timeout_s))
    except KeyboardInterrupt:
        sig = _stop(proc, options.kill_grace_s)
        messages.append(f"interrupted; process group stopped with {_signal_name(sig)}")
        return RunStatus.INTERRUPTED, sig
