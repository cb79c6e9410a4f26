"""The benchmark's Slurm executor: the cells of a benchmark as job arrays, submitted with
submitit (never a hand-written ``sbatch`` script), with the local executor's contract.

Same contract as :func:`rra_tools.bench.executors.local.execute`: cells in, ``run_one(cell, slot)`` does
the work, results kept in the same state directory in the same format, so a benchmark resumes
across executors (a cell finished locally is skipped on Slurm and the other way round).

- **Submission.** The pending cells are grouped by what their jobs ask for (:class:`JobResources`:
  GPUs, CPUs, memory, time, partition, account, QOS, GPU type) and each group is one job array
  (``submitit.AutoExecutor`` in a ``batch()``). The caller's ``resources(cell)`` gives a cell's
  (:func:`launcher_resources` from the manifest, then the task set's and the task's
  :class:`~rra_tools.model.taskset.SlurmSettings`, :func:`overridden`); the command line's
  :class:`SlurmOptions` override them last.
- **Inside the job** (:func:`_job`): the devices are those Slurm allocated
  (:func:`slurm_gpus`: ``CUDA_VISIBLE_DEVICES``, else ``SLURM_JOB_GPUS``, else the indices
  ``scontrol show job -d`` prints); the cell runs in a node-local scratch directory
  (``SlurmOptions.scratch``, else ``$SLURM_TMPDIR``, ``$TMPDIR`` or ``/tmp``), whose files are
  then gathered into the benchmark directory (a shared file system), and the result is written
  into the state directory by the job itself, so a result survives the death of the submitting
  process. SIGTERM (``scancel``, the time limit, preemption) stops the cell: its result is not
  kept.
- **Dead jobs.** A job that ended without a result (cancelled, time limit, out of memory, node
  failure, preemption, a crash of the job) is classified from Slurm's own record (:func:`classify`):
  ``sacct`` when the cluster has accounting, else ``scontrol show job`` (which keeps a finished
  job for ``MinJobAge`` seconds). It is an infrastructure failure; the cell is submitted again up to
  ``max_retries`` times, then ``lost(cell, kind, detail)`` makes its final result.
- **Resumption.** A started cell's marker names its Slurm job; a resumed submitter waits for a
  job that is still queued or running instead of submitting the cell twice.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Generic, TypeVar

from ...io.atomic import write_atomic
from ...model.manifest_view import LauncherSpec
from ...model.taskset import SlurmSettings
from ...run.gpus import GpuInfo, GpuLease
from ...run.gpus import inventory as gpu_inventory
from ..errors import BenchError
from .local import Cell, CellEvent, CellResult, CellSlot
from .state import (
    Finished,
    StateLock,
    cell_digest,
    cell_path,
    check_unique,
    load_finished,
    now,
    read_json,
    started_path,
    unlink_quietly,
    write_json,
)

__all__ = ["DEAD_STATES", "JobResources", "Runner", "SlurmOptions", "classify", "execute_slurm", "launcher_resources",
           "max_array_size", "overridden", "parse_indices", "slurm_gpus"]

C = TypeVar("C", bound=Cell)

#: Slurm job states that end a job, and the infrastructure-failure kind each one is.
DEAD_STATES = {
    "CANCELLED": "cancelled",
    "TIMEOUT": "timeout",
    "DEADLINE": "timeout",
    "OUT_OF_MEMORY": "oom",
    "NODE_FAIL": "node_lost",
    "BOOT_FAIL": "node_lost",
    "PREEMPTED": "preempted",
    "FAILED": "job_failed",
    "COMPLETED": "job_failed",  # the job ended well but wrote no result: its cell was stopped
}
_ACTIVE = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "REQUEUED", "RESIZING", "SUSPENDED",
           "REQUEUE_HOLD", "REQUEUE_FED", "SIGNALING", "STAGE_OUT", "STOPPED", "RESV_DEL_HOLD"}


@dataclass(frozen=True)
class JobResources:
    """What one cell's job asks Slurm for, and where it goes (None: the cluster's default)."""

    gpus: int = 0
    cpus: int = 1
    mem_gb: float | None = None
    time_min: int = 60
    partition: str | None = None
    account: str | None = None
    qos: str | None = None
    gpu_type: str | None = None

    def gres(self) -> str | None:
        """The job's ``--gres``: ``gpu:N`` or ``gpu:TYPE:N``; None without GPUs."""
        if not self.gpus:
            return None
        return f"gpu:{self.gpu_type}:{self.gpus}" if self.gpu_type else f"gpu:{self.gpus}"


def launcher_resources(launchers: Iterable[LauncherSpec], gpus: int, seconds: float) -> JobResources:
    """What the launchers a cell runs one after another ask for: ``gpus`` (the cell's count),
    the most CPUs and memory any of them declares in its ``resources`` (1 CPU and the
    partition's default memory when none does), and a time limit of ``seconds`` × 1.25 + 5
    minutes (the margin covers copying the workspace and Python's start)."""
    listed = list(launchers)
    cpus = max((launcher.resources.cpus or 1 for launcher in listed), default=1)
    mem = max((launcher.resources.ram_gib for launcher in listed if launcher.resources.ram_gib), default=None)
    return JobResources(gpus=gpus, cpus=cpus, mem_gb=mem, time_min=math.ceil(seconds * 1.25 / 60) + 5)


def overridden(base: JobResources, *layers: SlurmSettings | SlurmOptions | None) -> JobResources:
    """``base`` with every field each layer sets replacing it, layer after layer: call it with the
    task set's settings, then the task's, then the command line's, so that the command line wins
    over the task, the task over the task set, and the task set over the launchers (``base``)."""
    fields = ("partition", "account", "qos", "time_min", "cpus", "mem_gb", "gpus", "gpu_type")
    for layer in layers:
        if layer is None:
            continue
        given = {name: value for name in fields if (value := getattr(layer, name, None)) is not None}
        base = replace(base, **given)
    return base


@dataclass(frozen=True)
class SlurmOptions:
    """Where and how the jobs run (the command line's options). Every resource set here
    overrides the cells' own (:func:`overridden`)."""

    partition: str | None = None
    account: str | None = None
    qos: str | None = None
    time_min: int | None = None
    cpus: int | None = None
    mem_gb: float | None = None
    gpus: int | None = None
    gpu_type: str | None = None
    #: Times a cell whose job died is submitted again before it counts as lost.
    max_retries: int = 2
    #: Node-local directory for the cells' workspaces (default: $SLURM_TMPDIR, $TMPDIR or /tmp).
    scratch: str | None = None
    #: Jobs of one array running at once (None: as many as Slurm allows).
    array_parallelism: int | None = None
    #: Seconds between two looks at the queue.
    poll_s: float = 2.0


def parse_indices(text: str) -> list[int] | None:
    """``0,2-3`` → [0, 2, 3]; None when the text is not such a list (e.g. GPU UUIDs)."""
    found: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if re.fullmatch(r"[0-9]+", part):
            found.append(int(part))
        elif m := re.fullmatch(r"([0-9]+)-([0-9]+)", part):
            found.extend(range(int(m.group(1)), int(m.group(2)) + 1))
        else:
            return None
    return found


def slurm_gpus(environ: dict[str, str], scontrol: Callable[[str], str] | None = None) -> tuple[list[int], str]:
    """The GPU indices Slurm allocated to this job and where they were read: from
    ``CUDA_VISIBLE_DEVICES`` (what CUDA inside the job sees), ``SLURM_JOB_GPUS``, or, when Slurm
    set neither (gres backed by files that are not NVIDIA devices), the ``IDX`` of
    ``scontrol show job -d``. ``scontrol(job_id)`` returns that command's output."""
    for name in ("CUDA_VISIBLE_DEVICES", "SLURM_JOB_GPUS", "SLURM_STEP_GPUS"):
        value = environ.get(name, "").strip()
        if value and (found := parse_indices(value)) is not None:
            return found, name
    count = int(environ.get("SLURM_GPUS_ON_NODE") or 0)
    job = environ.get("SLURM_JOB_ID")
    if count == 0 or not job:
        return [], "none"
    text = (scontrol or _scontrol_detail)(job)
    m = re.search(r"GRES=\S*?\(IDX:([0-9,\-]+)\)", text)
    found = parse_indices(m.group(1)) if m else None
    if found is None:
        raise BenchError(f"Slurm allocated {count} GPU(s) to job {job} but neither CUDA_VISIBLE_DEVICES, "
                         "SLURM_JOB_GPUS nor 'scontrol show job -d' names them")
    return found, "scontrol"


def _scontrol_detail(job: str) -> str:
    return subprocess.run(["scontrol", "show", "job", "-d", job], capture_output=True, text=True, timeout=60,
                          check=False).stdout


#: Runs a Slurm client command: (exit status, standard output, standard error).
Runner = Callable[[Sequence[str]], tuple[int, str, str]]


def _run(argv: Sequence[str]) -> tuple[int, str, str]:
    done = subprocess.run(list(argv), capture_output=True, text=True, timeout=60, check=False)
    return done.returncode, done.stdout, done.stderr


def classify(job_id: str, run: Runner | None = None) -> tuple[str, str, str]:
    """(Slurm state, where it was read: 'sacct' or 'scontrol', detail) of a job, from Slurm's
    accounting when the cluster has it (``sacct -X -n -P -o State,ExitCode,Reason``), else from
    the controller (``scontrol show job -o``, which keeps a finished job ``MinJobAge`` seconds);
    ``UNKNOWN`` when neither knows the job. ``run`` runs the commands (default: as processes).

    sacct says ``CANCELLED by 1000`` for a job cancelled by that uid: the state is its first
    word, the uid goes into the detail. A job accounting does not know yet (slurmdbd lags
    behind the controller) is asked of the controller."""
    run = run or _run
    status, out, _ = run(["sacct", "-X", "-n", "-P", "-o", "State,ExitCode,Reason", "-j", job_id])
    lines = [line for line in out.splitlines() if line.strip()]
    if status == 0 and lines:
        # A requeued job's last line is its last run.
        state, exit_code, reason = (lines[-1].split("|") + ["", ""])[:3]
        words = state.split()
        by = f"by uid {words[2]}, " if len(words) == 3 and words[1] == "by" else ""
        return (words[0] if words else "UNKNOWN"), "sacct", \
            f"{by}reason {reason or 'None'}, exit code {exit_code or '?'}"
    status, out, err = run(["scontrol", "show", "job", "-o", job_id])
    fields = dict(re.findall(r"(\w+)=(\S*)", out))
    if status != 0 or "JobState" not in fields:
        return "UNKNOWN", "scontrol", (err.strip() or "the controller no longer knows the job")
    return fields["JobState"], "scontrol", f"reason {fields.get('Reason', '?')}, exit code {fields.get('ExitCode', '?')}"


def max_array_size(run: Runner | None = None) -> int:
    """The most tasks one job array may hold on this cluster: its ``MaxArraySize`` (Slurm's
    default 1001 allows indices 0 to 1000), or 1001 when ``scontrol show config`` does not say."""
    status, out, _ = (run or _run)(["scontrol", "show", "config"])
    m = re.search(r"^MaxArraySize\s*=\s*([0-9]+)", out, flags=re.M)
    return max(1, int(m.group(1))) if status == 0 and m else 1001


def _queue() -> dict[str, str] | None:
    """State of every job of the queue (array tasks one by one), by job id; None when squeue
    cannot be asked (a passing controller hiccup: ask again later)."""
    shown = subprocess.run(["squeue", "-h", "-r", "--states=all", "-o", "%i|%T"], capture_output=True, text=True,
                           timeout=120, check=False)
    if shown.returncode != 0:
        return None
    states: dict[str, str] = {}
    for line in shown.stdout.splitlines():
        job, _, state = line.strip().partition("|")
        if job:
            states[job] = state
    return states


def _job_of(key: str, payload: str, state_dir: str, out: str, scratch: str | None, restarted: int,
            started: str) -> dict[str, Any]:
    """What submitit runs on the node: the cell ``key`` and ``run_one`` read from the payload the
    submitter wrote once for every job (:func:`_write_payload`), then :func:`_job`."""
    import pickle  # what cloudpickle writes, plain pickle reads

    with open(payload, "rb") as handle:
        run_one, cells = pickle.load(handle)  # noqa: S301 - written by this benchmark's submitter
    return _job(cells[key], run_one, state_dir, out, scratch, restarted, started)


def _write_payload(state_dir: Path, run_one: Callable[[C, CellSlot], CellResult], cells: Sequence[C]) -> Path:
    """Pickle ``run_one`` and the cells once into ``state_dir/slurm/`` for every job of this
    submitter. Each job's own pickle then holds a key and this path: ``run_one`` closes over the
    whole benchmark (the task set, every artifact), about 80 KB and 25 ms to pickle for a
    40-task set, which per job would cost more than the 10 s a 1,000-cell grid may take to
    submit. Payloads are kept: a resumed submitter waits for jobs that read an earlier one."""
    import cloudpickle  # submitit's own dependency: it pickles each job with it

    path = state_dir / "slurm" / f"payload-{os.getpid()}-{time.time_ns()}.pkl"
    write_atomic(path, cloudpickle.dumps((run_one, {c.key: c for c in cells})))
    return path


def _job(cell: C, run_one: Callable[[C, CellSlot], CellResult], state_dir: str, out: str, scratch: str | None,
         restarted: int, started: str) -> dict[str, Any]:
    """What one array task runs on its node: the cell in node-local scratch, the files gathered
    into ``out``, the result written into ``state_dir``."""
    stop = threading.Event()
    # submitit ignores SIGTERM (it waits for SIGUSR2 to requeue); the cell must stop at it.
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    env = dict(os.environ)
    indices, source = slurm_gpus(env)
    known = {g.index: g for g in gpu_inventory(env)} if indices else {}
    devices = [known.get(i) or GpuInfo(index=i, model="GPU allocated by Slurm") for i in indices]
    node_tmp = scratch or env.get("SLURM_TMPDIR") or env.get("TMPDIR") or "/tmp"  # noqa: S108 - node-local scratch
    job_id = env.get("SLURM_ARRAY_JOB_ID", "") + "_" + env.get("SLURM_ARRAY_TASK_ID", "") \
        if env.get("SLURM_ARRAY_JOB_ID") else env.get("SLURM_JOB_ID", "?")
    work = Path(node_tmp) / f"rra-cell-{cell_digest(cell.key)}-{env.get('SLURM_JOB_ID', os.getpid())}"
    work.mkdir(parents=True, exist_ok=True)
    # Slurm gives the job these devices alone: the lease holds no lock (with device cgroups two
    # jobs on a node both see their first device as 0, and node-wide locks would collide).
    slot = CellSlot(devices=devices, lease=GpuLease(list(devices)) if devices else None, inventory=devices,
                    memory_limit_mib=None, stop=stop, restarted=restarted, workdir=work)
    try:
        result = run_one(cell, slot)
        if not result.final or stop.is_set():
            return {"final": False}
        # Gather: the scratch tree mirrors the benchmark directory's layout.
        shutil.copytree(work, out, symlinks=True, dirs_exist_ok=True)
        write_json(cell_path(Path(state_dir), cell.key),
                   {"key": cell.key, "result": result.data, "restarted": restarted, "started": started,
                    "ended": now(), "devices": indices,
                    "slurm": {"job": job_id, "node": env.get("SLURMD_NODENAME", ""), "gpus_from": source}})
        return {"final": True}
    finally:
        shutil.rmtree(work, ignore_errors=True)
        signal.signal(signal.SIGTERM, previous)


@dataclass
class _Tracked(Generic[C]):
    cell: C
    job: str
    starts: int
    started: str


def execute_slurm(cells: Sequence[C], run_one: Callable[[C, CellSlot], CellResult], state_dir: Path, out: Path, *,
                  lost: Callable[[C, str, str], dict[str, Any]],
                  resources: Callable[[C], JobResources] | None = None, options: SlurmOptions | None = None,
                  progress: Callable[[CellEvent], None] | None = None, stop: threading.Event | None = None,
                  handle_signals: bool = True) -> dict[str, Finished]:
    """Run every cell of ``cells`` not finished in ``state_dir`` as Slurm jobs (see the module
    docstring); the result of every cell that has one, by key.

    ``out`` is the benchmark directory the cells' files are gathered into (both must be on a file
    system the nodes share); ``lost(cell, kind, detail)`` is the result of a cell whose job died
    ``max_retries + 1`` times. BenchError when two cells share a key, another executor holds
    ``state_dir``, or submitit is not installed.
    """
    try:
        import submitit
    except ImportError:
        raise BenchError("the Slurm executor needs submitit", "pip install 'rra-tools[slurm]'") from None
    opts = options or SlurmOptions()
    keys = [c.key for c in cells]
    check_unique(keys)
    for sub in ("cells", "started", "slurm"):
        (state_dir / sub).mkdir(parents=True, exist_ok=True)
    stop = stop or threading.Event()
    previous: dict[int, Any] = {}
    if handle_signals and threading.current_thread() is threading.main_thread():
        previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}

    def emit(event: CellEvent) -> None:
        if progress is not None:
            progress(event)

    payload: Path | None = None
    largest: int | None = None

    def need(cell: C) -> JobResources:
        return overridden(resources(cell) if resources is not None else JobResources(gpus=cell.gpus), opts)

    def submit(batch: list[C], tries: dict[str, int]) -> dict[str, _Tracked[C]]:
        nonlocal payload
        if payload is None:
            payload = _write_payload(state_dir, run_one, cells)
        nonlocal largest
        if largest is None:
            largest = max_array_size()
        groups: dict[JobResources, list[C]] = {}
        for cell in batch:
            groups.setdefault(need(cell), []).append(cell)
        # An array holds at most MaxArraySize tasks (indices 0 .. MaxArraySize - 1).
        chunks = [(res, group[i:i + largest]) for res, group in groups.items()
                  for i in range(0, len(group), largest)]
        tracked: dict[str, _Tracked[C]] = {}
        for res, group in chunks:
            # One folder for every job (not one per job: 1,000 directories cost a second).
            executor = submitit.AutoExecutor(folder=str(state_dir / "slurm"), cluster="slurm")
            params: dict[str, Any] = {"timeout_min": res.time_min, "cpus_per_task": res.cpus,
                                      "slurm_job_name": "rra-bench"}
            if res.mem_gb is not None:
                params["mem_gb"] = res.mem_gb
            for name, value in (("slurm_gres", res.gres()), ("slurm_partition", res.partition),
                                ("slurm_account", res.account), ("slurm_qos", res.qos),
                                ("slurm_array_parallelism", opts.array_parallelism)):
                if value is not None:
                    params[name] = value
            executor.update_parameters(**params)
            starts: dict[str, int] = {}
            markers = {cell.key: started_path(state_dir, cell.key) for cell in group}
            at = now()
            for cell in group:
                marker = read_json(markers[cell.key]) or {}
                starts[cell.key] = int(marker.get("starts", 0))
            try:
                with executor.batch():
                    jobs = [executor.submit(_job_of, cell.key, str(payload), str(state_dir), str(out),
                                            opts.scratch, starts[cell.key], at) for cell in group]
            except (submitit.core.utils.FailedJobError, OSError, subprocess.SubprocessError) as exc:
                raise BenchError(f"Slurm refused the benchmark's jobs: {exc}",
                                 "check --partition, --account and --qos against 'sinfo' and 'sacctmgr show assoc'"
                                 ) from None
            for cell, job in zip(group, jobs):
                tracked[cell.key] = _Tracked(cell, str(job.job_id), starts[cell.key] + 1, at)
                write_json(markers[cell.key],
                           {"key": cell.key, "starts": starts[cell.key] + 1, "started": at,
                            "slurm_job": str(job.job_id), "tries": tries.get(cell.key, 0)}, durable=False)
                emit(CellEvent("submitted", cell.key, 0, len(cells), restarted=starts[cell.key],
                               data={"slurm_job": str(job.job_id), "gpus": res.gpus}))
        return tracked

    try:
        with StateLock(state_dir):
            results = load_finished(state_dir, keys)
            done = 0
            for cell in cells:
                if cell.key in results:
                    done += 1
                    f = results[cell.key]
                    emit(CellEvent("resumed", cell.key, done, len(cells), restarted=f.restarted, data=f.data))
            pending = [c for c in cells if c.key not in results]
            tracked: dict[str, _Tracked[C]] = {}
            tries: dict[str, int] = {}
            queue = _queue() if pending else {}
            fresh: list[C] = []
            for cell in pending:
                marker = read_json(started_path(state_dir, cell.key)) or {}
                job = marker.get("slurm_job")
                if job and queue is not None and queue.get(str(job)) in _ACTIVE:
                    # Submitted by a submitter that died; the job still runs: wait for it.
                    tracked[cell.key] = _Tracked(cell, str(job), int(marker.get("starts", 1)), marker["started"])
                    tries[cell.key] = int(marker.get("tries", 0))
                else:
                    fresh.append(cell)
            if fresh and not stop.is_set():
                tracked.update(submit(fresh, tries))
            while tracked and not stop.is_set():
                stop.wait(opts.poll_s)
                queue = _queue()
                if queue is None:
                    continue
                again: list[C] = []
                for key, t in list(tracked.items()):
                    state = queue.get(t.job)
                    finished = load_finished(state_dir, [key])
                    if key not in finished and state in _ACTIVE:
                        continue
                    slurm_state, source, detail = "", "", ""
                    if key not in finished:
                        # Not listed as active (or not listed at all, e.g. a moment after the
                        # submission): ask Slurm's record of this job before calling it dead, then
                        # look for the result once more (the job writes it before it ends).
                        slurm_state, source, detail = classify(t.job)
                        if slurm_state in _ACTIVE:
                            continue
                        finished = load_finished(state_dir, [key])
                    del tracked[key]
                    if key in finished:
                        results[key] = finished[key]
                        unlink_quietly(started_path(state_dir, key))
                        done += 1
                        f = finished[key]
                        emit(CellEvent("finished", key, done, len(cells), restarted=f.restarted, data=f.data))
                        continue
                    kind = DEAD_STATES.get(slurm_state, "lost")
                    words = f"Slurm job {t.job} ended {slurm_state} ({source}: {detail}) without a result"
                    tries[key] = tries.get(key, 0) + 1
                    if tries[key] <= opts.max_retries:
                        emit(CellEvent("requeued", key, done, len(cells), restarted=t.starts,
                                       data={"slurm_job": t.job, "kind": kind, "detail": words,
                                             "try": tries[key]}))
                        again.append(t.cell)
                        continue
                    data = lost(t.cell, kind, f"{words}; given up after {tries[key]} job(s)")
                    ended = now()
                    write_json(cell_path(state_dir, key),
                               {"key": key, "result": data, "restarted": t.starts - 1, "started": t.started,
                                "ended": ended, "devices": [], "slurm": {"job": t.job, "state": slurm_state}})
                    unlink_quietly(started_path(state_dir, key))
                    done += 1
                    results[key] = Finished(key, data, t.starts - 1, False, t.started, ended)
                    emit(CellEvent("finished", key, done, len(cells), restarted=t.starts - 1, data=data))
                if again and not stop.is_set():
                    tracked.update(submit(again, tries))
            if stop.is_set() and tracked:
                # Stopped: cancel what is still queued or running; those cells run on resume.
                subprocess.run(["scancel", *sorted({t.job for t in tracked.values()})], capture_output=True,
                               timeout=120, check=False)
                for key, t in tracked.items():
                    write_json(started_path(state_dir, key),
                               {"key": key, "starts": t.starts - 1, "started": t.started}, durable=False)
                    emit(CellEvent("interrupted", key, done, len(cells)))
            return results
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
