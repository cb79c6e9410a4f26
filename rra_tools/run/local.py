"""The local executor: one process per run, from a clean environment, in its own session.

The process sees only the launcher's declared variables plus a minimal PATH (this
interpreter's bin directory first, so ``python`` is the interpreter running rra), a fresh
HOME, a C.UTF-8 locale and, when it needs accelerators, CUDA_VISIBLE_DEVICES. It runs in a
new session, so a timeout or an interruption kills its whole process group (SIGTERM, then
SIGKILL after a grace period), grandchildren included. Its standard streams go to log files
in the run directory and, through a callback, to whoever is watching.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path

from ..io.paths import resolve_inside
from ..model.vocab import Executor, RunStatus
from ..plain import Frozen, Plain
from .concurrency import RunSlot
from .errors import RunError
from .gpus import GpuInfo, GpuLease, held_for_run, inventory
from .outcome import signal_name as _signal_name
from .outcome import host_record, record_head, snapshot_before, write_record
from .pending import Pending
from .plan import RunPlan
from .records import StreamRedactor, fresh_private_dir, new_run_dir

TYPE_CHECKING = False  # typing costs ~2 ms at import; mypy reads this name as true
if TYPE_CHECKING:
    from typing import IO, Any

__all__ = ["MEMORY_LIMIT_NOTE", "MINIMAL_PATH", "Progress", "RunOptions", "RunResult", "Tee", "Watchdog", "clean_environment", "execute"]

MINIMAL_PATH = "/usr/bin:/bin"


class Progress(Frozen):
    """Where a running launcher stands."""

    __slots__ = ("launcher", "seed", "elapsed_s", "expected_s", "timeout_s")

    def __init__(self, launcher: str, seed: int | None, elapsed_s: float, expected_s: float,
                 timeout_s: float) -> None:
        self.launcher, self.seed, self.elapsed_s, self.expected_s, self.timeout_s = (
            launcher, seed, elapsed_s, expected_s, timeout_s)


class RunOptions(Plain):
    """How to run: callbacks for output and progress, a stop event, the kill grace period.

    Its fields (keyword arguments, all optional):

    - ``on_output``: called with ('stdout' | 'stderr', bytes) as the process writes; from reader
      threads.
    - ``on_progress``: called with a :class:`Progress` every ``progress_interval_s``.
    - ``stop``: set it (e.g. from a signal handler) to interrupt the run; it is recorded as
      interrupted.
    - ``kill_grace_s``: seconds between SIGTERM and SIGKILL.
    - ``gpus``: accelerator inventory; None reads it from the machine (see :mod:`.gpus`).
    - ``environ``: environment rra itself reads (RRA_GPU_*); None means os.environ. Never passed
      to the run.
    - ``env_dir``: a virtual environment to run in (e.g. the one 'rra env create' built from the
      lock): its bin directory leads PATH and VIRTUAL_ENV names it. None: this interpreter's
      environment.
    - ``gpu_lease``: devices the caller already holds for this run (the benchmark executor's cell
      lease): the run uses them instead of locking others, and leaves them held when it ends.
    - ``memory_limit_mib``: address-space limit of the launcher's process, MiB (RLIMIT_AS,
      inherited by what it starts); None: no limit. The local executor only.
    """

    __slots__ = ("on_output", "on_progress", "progress_interval_s", "stop", "kill_grace_s", "gpus", "environ",
                 "env_dir", "gpu_lease", "memory_limit_mib")

    def __init__(self, on_output: Callable[[str, bytes], None] | None = None,
                 on_progress: Callable[[Progress], None] | None = None, progress_interval_s: float = 1.0,
                 stop: threading.Event | None = None, kill_grace_s: float = 5.0,
                 gpus: Sequence[GpuInfo] | None = None, environ: Mapping[str, str] | None = None,
                 env_dir: Path | None = None, gpu_lease: GpuLease | None = None,
                 memory_limit_mib: int | None = None) -> None:
        self.on_output, self.on_progress, self.progress_interval_s = on_output, on_progress, progress_interval_s
        self.stop, self.kill_grace_s, self.gpus, self.environ = stop, kill_grace_s, gpus, environ
        self.env_dir, self.gpu_lease, self.memory_limit_mib = env_dir, gpu_lease, memory_limit_mib


class RunResult(Frozen):
    """A finished run: its record (as written: JSON data conforming to
    schemas/rra-run-record-1.0.schema.json) and the directory it was written in."""

    __slots__ = ("record", "directory")

    def __init__(self, record: dict[str, Any], directory: Path) -> None:
        self.record, self.directory = record, directory

    @property
    def record_path(self) -> Path:
        """The record file."""
        return self.directory / "record.json"

    @property
    def successful(self) -> bool:
        """Exit status 0 and status completed, as the levels count it."""
        return bool(self.record["status"] == RunStatus.COMPLETED.value and self.record["exit_status"] == 0)


def clean_environment(declared: Mapping[str, str], home: str, cuda_visible: str | None,
                      path: str | None = None, env_dir: Path | None = None) -> dict[str, str]:
    """The complete environment of a run; declared variables win over the defaults.

    ``path`` is the PATH of the run; by default the bin directory of ``env_dir`` (a virtual
    environment) or of this interpreter, then MINIMAL_PATH (a container run passes its image's
    PATH instead). Python is told not to write bytecode caches: a ``__pycache__`` next to the
    code would be a write outside the declared outputs.
    """
    if path is None:
        bin_dir = str(env_dir / "bin") if env_dir is not None else os.path.dirname(sys.executable)
        path = MINIMAL_PATH if not bin_dir or bin_dir in MINIMAL_PATH.split(":") else f"{bin_dir}:{MINIMAL_PATH}"
    env = {"PATH": path, "HOME": home, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
    if env_dir is not None:
        env["VIRTUAL_ENV"] = str(env_dir)
    if cuda_visible is not None:
        env["CUDA_VISIBLE_DEVICES"] = cuda_visible
    env.update(declared)
    return env


def _now() -> datetime:
    return datetime.now(timezone.utc)


class Tee:
    """Copies one stream of a run to its log file and to the caller's ``on_output`` callback.

    Shared by both executors: the log is the record's evidence, so a callback that raises (a
    closed terminal) is dropped rather than allowed to stop the log. The values of the run's
    ``secrets`` are replaced by '[redacted]' before anything is logged or passed on; call
    :meth:`finish` once the stream has ended.
    """

    def __init__(self, sink: IO[bytes], name: str, callback: Callable[[str, bytes], None] | None,
                 secrets: Sequence[str] = ()) -> None:
        self.sink, self.name, self.callback = sink, name, callback
        self.redactor = StreamRedactor(list(secrets)) if secrets else None

    def write(self, chunk: bytes) -> bool:
        """Log ``chunk`` and pass it on; False once the log is closed (the run is over)."""
        if self.redactor is not None:
            chunk = self.redactor.feed(chunk)
            if not chunk:
                return True
        return self._emit(chunk)

    def finish(self) -> None:
        """Write what the redactor held back (the end of the stream)."""
        if self.redactor is not None:
            rest = self.redactor.flush()
            if rest:
                self._emit(rest)

    def _emit(self, chunk: bytes) -> bool:
        try:
            self.sink.write(chunk)
            self.sink.flush()
        except (OSError, ValueError):
            return False
        if self.callback is not None:
            try:
                self.callback(self.name, chunk)
            except Exception:  # noqa: BLE001 - a broken terminal must not stop the log
                self.callback = None
        return True


def _pump(stream: IO[bytes], tee: Tee) -> None:
    fd = stream.fileno()
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk or not tee.write(chunk):
            break


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


def execute(plan: RunPlan, options: RunOptions | None = None) -> RunResult:
    """Run ``plan`` and write its record; raises only when no run could be set up (e.g.
    GpuUnavailable). Whatever the process does, a truthful record is written."""
    options = options or RunOptions()
    environ = dict(os.environ if options.environ is None else options.environ)
    gpus = list(options.gpus) if options.gpus is not None else inventory(environ)
    home: str | None = None
    try:
        with held_for_run(plan, gpus, environ, options.gpu_lease) as (lease, slot):
            try:
                home = fresh_private_dir("rra-home-")
            except OSError as exc:
                raise RunError(f"cannot create a temporary HOME for the run: {exc}") from None
            return _execute(plan, options, gpus, lease.visible if lease.devices else None, home,
                            [g.index for g in lease.devices], slot, (*lease.fds, *slot.fds))
    finally:
        # After the devices and the slot are given back: a HOME the run filled can take a while.
        if home is not None:
            try:
                os.rmdir(home)
            except OSError:  # the run left files in its HOME
                import shutil

                shutil.rmtree(home, ignore_errors=True)


def _execute(plan: RunPlan, options: RunOptions, gpus: list[GpuInfo], visible: str | None, home: str,
             assigned: list[int], slot: RunSlot, lock_fds: tuple[int, ...]) -> RunResult:
    started = _now()
    directory = new_run_dir(plan.artifact.runs_dir, plan.launcher.id, plan.seed, started, plan.repeat)
    env = clean_environment(plan.env, home, visible, env_dir=options.env_dir)
    host = host_record(plan, Executor.LOCAL, gpus, options.env_dir)
    pending = Pending.start(directory, record_head(plan, executor=Executor.LOCAL, started=started, host=host,
                                                   assigned=assigned, environment=env))
    try:
        record = _run_process(plan, options, gpus, env, assigned, directory, started, host,
                              (pending.fd, *lock_fds), slot)
    except BaseException:
        os.close(pending.fd)  # left in place: the next rra run or rra results finishes it
        raise
    pending.finish()
    return RunResult(record, directory)


def _run_process(plan: RunPlan, options: RunOptions, gpus: list[GpuInfo], env: dict[str, str],
                 assigned: list[int], directory: Path, started: datetime, host: dict[str, Any],
                 inherited: tuple[int, ...], slot: RunSlot) -> dict[str, Any]:
    """Start the launcher, stream, wait, stop, and write the record; the record."""
    messages: list[str] = []
    status = RunStatus.COMPLETED
    exit_status: int | None = None
    killed_by: int | None = None
    cwd = resolve_inside(plan.artifact.root, plan.cwd, kind="dir")
    before = snapshot_before(plan)
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
                # The launcher inherits the locked descriptors of the pending record, the GPUs,
                # its outputs and its registration: they stay locked for as long as it lives,
                # even if rra run is killed.
                proc = subprocess.Popen(plan.argv, cwd=cwd.path, env=env, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        start_new_session=True, close_fds=True, pass_fds=inherited)
            except OSError as exc:
                messages.append(f"cannot start {plan.argv[0]!r}: {exc.strerror or exc}")
                status = RunStatus.FAILED
        if proc is not None and options.memory_limit_mib is not None:
            _limit_memory(proc, options.memory_limit_mib, messages)
        if proc is not None:
            assert proc.stdout is not None and proc.stderr is not None
            watchdog = Watchdog(proc.pid, options.kill_grace_s)
            tees = [Tee(out_log, "stdout", options.on_output, plan.secret_values),
                    Tee(err_log, "stderr", options.on_output, plan.secret_values)]
            readers = [threading.Thread(target=_pump, args=(proc.stdout, tees[0]), daemon=True),
                       threading.Thread(target=_pump, args=(proc.stderr, tees[1]), daemon=True)]
            for reader in readers:
                reader.start()
            try:
                status, killed_by = _wait(proc, plan, options, t0, messages)
                # Sweep what the launcher left behind in its group, so pipes close and nothing lingers.
                _kill_group(proc.pid, signal.SIGKILL)
            finally:
                watchdog.dismiss()
            for reader in readers:
                reader.join(timeout=5.0)
            if any(reader.is_alive() for reader in readers):
                messages.append("a process that left the launcher's process group still holds its output; "
                                "the logs may be incomplete")
            else:
                proc.stdout.close()
                proc.stderr.close()
            for tee in tees:
                tee.finish()
            code = proc.returncode
            if code is not None and code >= 0:
                exit_status = code
            elif code is not None and killed_by is None:
                killed_by = -code
                status = RunStatus.FAILED
                messages.append(f"process was killed by signal {_signal_name(-code)}")
            if status == RunStatus.COMPLETED and exit_status not in (None, 0):
                messages.append(f"process exited with status {exit_status}")
            if options.memory_limit_mib is not None and (exit_status != 0 or killed_by is not None):
                messages.append(f"{MEMORY_LIMIT_NOTE} of {options.memory_limit_mib} MiB (RLIMIT_AS)")
    return write_record(plan, directory, executor=Executor.LOCAL, started=started, ended=_now(),
                        duration_s=time.monotonic() - t0, started_epoch=started_epoch, status=status,
                        exit_status=exit_status, killed_by=killed_by, host_gpus=gpus, assigned=assigned,
                        environment=env, messages=messages, before=before, env_dir=options.env_dir, host=host,
                        concurrent=slot.concurrent)


#: Begins the record's message of a failed run that had a memory limit (the benchmark reads it).
MEMORY_LIMIT_NOTE = "the launcher ran under an address-space limit"


def _limit_memory(proc: subprocess.Popen[bytes], mib: int, messages: list[str]) -> None:
    """Set RLIMIT_AS on the started launcher. Set from here rather than in a ``preexec_fn``,
    which is unsafe in a threaded caller (the benchmark executor runs cells on threads) and makes
    every spawn a full fork; the launcher has run for well under a millisecond of its start-up
    by then, and every allocation after it is bounded."""
    import resource

    limit = mib * 1024 * 1024
    try:
        resource.prlimit(proc.pid, resource.RLIMIT_AS, (limit, limit))
    except (OSError, ValueError) as exc:
        messages.append(f"cannot set the memory limit of {mib} MiB: {exc}")


#: Dismissed watchdogs not reaped yet (held so that no Popen is dropped while running).
_DISMISSED: list[subprocess.Popen[bytes]] = []


@atexit.register
def _reap_dismissed() -> None:
    for proc in _DISMISSED:
        try:
            proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    _DISMISSED.clear()


class Watchdog:
    """Stops the launcher's process group if ``rra run`` dies without doing it.

    A tiny shell (in its own session, so a terminal's Ctrl-C or a kill of rra's group does not
    reach it) waits on a pipe whose only writer is this process. When the run ends normally,
    :meth:`dismiss` tells it so and it exits. When this process dies in any way, SIGKILL and the
    out-of-memory killer included, the kernel closes the pipe: the shell reads end-of-file and
    stops the group with SIGTERM, then SIGKILL after the grace period, as a timeout would.

    Why not only ``prctl(PR_SET_PDEATHSIG)`` in the child: it reaches the launcher's first
    process alone, not the workers and subprocesses in its group (a ``sh -c`` wrapper dies and
    its ``python train.py`` keeps the GPU), and setting it needs a ``preexec_fn``, which makes
    every spawn a full fork and costs the ctypes import on every run. The shell costs about a
    millisecond. Once the group is gone, the watchdog is dismissed before the leader's process
    id can be reused, so it never signals a stranger.
    """

    # $1: the group; $2: the grace period in tenths of a second, polled so that a group that
    # ends at SIGTERM lets the watchdog end at once.
    _SCRIPT = ('read line; [ "$line" = done ] && exit 0; kill -s TERM -- "-$1" 2>/dev/null || exit 0; i=0; '
               'while [ "$i" -lt "$2" ]; do kill -s 0 -- "-$1" 2>/dev/null || exit 0; sleep 0.1; i=$((i+1)); '
               'done; kill -s KILL -- "-$1" 2>/dev/null; exit 0')

    def __init__(self, pgid: int, grace_s: float) -> None:
        _DISMISSED[:] = [p for p in _DISMISSED if p.poll() is None]
        self.proc: subprocess.Popen[bytes] | None
        try:
            tenths = str(max(1, round(grace_s * 10)))
            self.proc = subprocess.Popen(["/bin/sh", "-c", self._SCRIPT, "rra-watchdog", str(pgid), tenths],
                                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
        except OSError:  # no /bin/sh: the run goes on, unguarded
            self.proc = None

    def dismiss(self) -> None:
        """The group is stopped: let the watchdog exit without signalling anything."""
        if self.proc is None or self.proc.stdin is None:
            return
        try:
            self.proc.stdin.write(b"done\n")
            self.proc.stdin.close()
        except OSError:
            pass
        # Not waited for (its start-up would add a millisecond to every run): it exits on its
        # own and is reaped when the next watchdog starts.
        _DISMISSED.append(self.proc)
        self.proc = None


class _ExitWaiter:
    """Waits up to a given time for a process to exit and says whether it has.

    ``Popen.wait(timeout)`` polls with sleeps that double up to the timeout, so a process that
    runs 20 ms is noticed about 10 ms late; a pidfd (Linux 5.3+) becomes readable the moment
    the process exits. Where there is none, this falls back to ``Popen.wait``.
    """

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        import select

        self.proc = proc
        self.fd: int | None
        try:
            self.fd = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):
            self.fd = None
        else:
            self.poller = select.poll()  # not select(): it fails for descriptors >= 1024
            self.poller.register(self.fd, select.POLLIN)

    def __call__(self, timeout: float) -> bool:
        if self.fd is not None:
            if self.proc.returncode is None and self.poller.poll(timeout * 1000):
                self.proc.wait()
            return self.proc.returncode is not None
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _wait(proc: subprocess.Popen[bytes], plan: RunPlan, options: RunOptions, t0: float,
          messages: list[str]) -> tuple[RunStatus, int | None]:
    """Wait for the process, enforcing the timeout and the stop event."""
    next_progress = t0 + options.progress_interval_s
    exited = _ExitWaiter(proc)
    try:
        while True:
            if exited(0.05):
                return RunStatus.COMPLETED, None
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
    finally:
        exited.close()
