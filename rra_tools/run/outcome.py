"""What a finished run leaves behind, whichever executor ran it: outputs, metrics, logs, record.

Every executor ends a run through :func:`write_record`, so a record means the same thing
whether the process ran on the host or in a container: the same output checks (present,
inside the root, written by this run), the same metric extraction, the same rule that a run
which exited 0 but lacks an output or a metric has failed.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import signal
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from pathlib import Path

from ..io.digest import hash_files, sha256_file
from ..model.manifest_view import ClaimSpec
from ..io.paths import PathIssue, resolve_inside
from ..model.vocab import RECORD_VERSION, Executor, RunStatus
from .gpus import GpuInfo
from .journal import commit_record
from .host import env_python, env_site_dirs, host_fingerprint, lock_match, package_set
from .tree import OutputState, Snapshot, output_state, stray_writes, take_snapshot
from .plan import RunPlan
from ..io.atomic import write_atomic
from .records import REDACTED, record_bytes, redact, redact_values, utc_stamp

TYPE_CHECKING = False  # typing costs ~2 ms at import; mypy reads this name as true
if TYPE_CHECKING:
    from typing import Any

__all__ = ["CONCURRENT_CHANGES", "MAX_STRAY_LISTED", "STALE_SLACK_S", "RunSnapshot", "allowed_writes", "assemble_record", "claim_metrics",
           "collect_outputs", "host_record", "log_file", "record_head", "signal_name", "snapshot_before",
           "write_record"]

#: Stray writes listed in a record; the message gives the total.
MAX_STRAY_LISTED = 100

#: Without a snapshot from before the run: outputs modified this long before it started are
#: stale, not produced by the run.
STALE_SLACK_S = 2.0


class RunSnapshot:
    """The artifact tree as it was before the process started (:func:`snapshot_before`):
    ``tree``, the metadata outside the places the run may write (what the stray-write check
    compares), and ``outputs``, each declared output's state by its resolved relative path
    (None: absent; an output counts as written by the run when its state changed). A plain
    class: a dataclass would cost every ``rra run`` its generation at import."""

    __slots__ = ("outputs", "tree")

    def __init__(self, tree: Snapshot, outputs: dict[str, OutputState | None]) -> None:
        self.tree = tree
        self.outputs = outputs


#: Said in a record's messages when the artifact changed outside the declared outputs while other
#: runs of it ran: the changes cannot be told apart, so the run is failed without stray_writes
#: (the auditor reads this to know such a run carries no value).
CONCURRENT_CHANGES = "while other runs of it were running"


def signal_name(number: int) -> str:
    """'SIGTERM' for 15; the number itself for a signal Python does not know."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _tree_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if p.is_file() and not p.is_symlink())


def _tree_digest(directory: Path, files: list[Path], digests: Mapping[Path, str | OSError]) -> tuple[str, int]:
    """Digest of a directory output: SHA-256 of its sorted '<sha256>  <relative path>' lines."""
    lines, total = [], 0
    for path in files:
        digest = digests[path]
        if isinstance(digest, OSError):
            raise digest
        lines.append(f"{digest}  {path.relative_to(directory).as_posix()}\n")
        total += path.stat().st_size
    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest(), total


def _written(path: Path, rel: str, started_epoch: float, before: Mapping[str, OutputState | None] | None) -> bool:
    """Whether the output at ``path`` was written during the run: with a snapshot, whether
    anything in it (the file; for a directory, anything in its tree) was created, changed or
    removed since; without one, whether its newest modification time is not older than the
    start (less STALE_SLACK_S)."""
    state = output_state(path)
    if before is not None and rel in before:
        return state != before[rel]
    newest = max((meta[1] for meta in (state or {}).values()), default=0)
    return newest / 1e9 >= started_epoch - STALE_SLACK_S


def collect_outputs(plan: RunPlan, started_epoch: float, messages: list[str],
                    before: Mapping[str, OutputState | None] | None = None
                    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Path]]:
    """The declared outputs this run produced, those it did not, and where the produced ones are.

    ``before`` is :attr:`RunSnapshot.outputs` (see :func:`_written` for what "produced" means).
    Every file of every output is hashed in one parallel batch (large outputs hash at several
    GB/s on a few cores instead of one core's rate).
    """
    produced: list[dict[str, Any]] = []
    missing: list[dict[str, Any]] = []
    paths: dict[str, Path] = {}
    root = plan.artifact.root
    found: list[tuple[str, str, str, Path, os.stat_result, list[Path] | None]] = []
    for ident, rel, fmt in plan.outputs:
        resolved = resolve_inside(root, rel, kind="any")
        if resolved.path is None:
            if resolved.issue is PathIssue.MISSING:
                messages.append(f"declared output {ident!r} ({rel}) was not produced")
            else:
                messages.append(f"declared output {ident!r} ({rel}) leaves the artifact root")
            missing.append({"id": ident, "path": rel})
            continue
        path = resolved.path
        try:
            info = path.stat()
            if not _written(path, rel, started_epoch, before):
                why = "nothing in it changed while it ran" if path.is_dir() else "last modified before it started"
                messages.append(f"declared output {ident!r} ({rel}) was not written by this run ({why})")
                missing.append({"id": ident, "path": rel})
                continue
            if path.is_dir():
                found.append((ident, rel, fmt, path, info, _tree_files(path)))
            elif path.is_file():
                found.append((ident, rel, fmt, path, info, None))
            else:
                messages.append(f"declared output {ident!r} ({rel}) is not a regular file or directory")
                missing.append({"id": ident, "path": rel})
        except OSError as exc:
            messages.append(f"declared output {ident!r} ({rel}) cannot be read: {exc.strerror or exc}")
            missing.append({"id": ident, "path": rel})
    digests = hash_files([f for *_, path, _, files in found for f in (files if files is not None else [path])])
    for ident, rel, fmt, path, info, files in found:
        try:
            if files is not None:
                digest, size = _tree_digest(path, files, digests)
            else:
                one = digests[path]
                if isinstance(one, OSError):
                    raise one
                digest, size = one, info.st_size
        except OSError as exc:
            messages.append(f"declared output {ident!r} ({rel}) cannot be read: {exc.strerror or exc}")
            missing.append({"id": ident, "path": rel})
            continue
        if fmt == "directory" and files is None:
            messages.append(f"declared output {ident!r} ({rel}) should be a directory but is a file")
        mtime = utc_stamp(datetime.fromtimestamp(info.st_mtime, timezone.utc))
        produced.append({"id": ident, "path": rel, "sha256": digest, "size": size, "mtime": mtime})
        paths[ident] = path
    return produced, missing, paths


def claim_metrics(plan: RunPlan, paths: Mapping[str, Path], messages: list[str],
                  directory: Path | None = None) -> tuple[dict[str, float], bool]:
    """Metrics of this launcher's claims; the flag says whether every claim got its value.

    A claim that reads a stream (``extract.stream``) reads the run's captured log in
    ``directory``, as written (secrets already redacted). A claim of kind string, set or list
    (RRA 1.2) must have its answer in the output too, but records hold numbers only: its answer
    stays in the output, whose digest the record gives (spec/04-levels.md#levels)."""
    metrics: dict[str, float] = {}
    complete = True
    declared = {ident: rel for ident, rel, _ in plan.outputs}
    for claim in plan.artifact.manifest.claims:
        if claim.launcher != plan.launcher.id:
            continue
        # Here, not at the top: a launcher without claims (and rra run's start-up) does without
        # the extraction rules and the answer kinds they import.
        from .extract import ExtractError

        stream = claim.extract.stream
        if stream is not None:
            if directory is None:
                messages.append(f"claim {claim.id!r}: no value, the run's {stream} was not captured")
                complete = False
                continue
            try:
                _read(claim, directory / f"{stream}.log", metrics)
            except ExtractError as exc:
                messages.append(f"claim {claim.id!r}: the run's {stream} {exc}")
                complete = False
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
            _read(claim, paths[out], metrics)
        except ExtractError as exc:
            messages.append(f"claim {claim.id!r}: output {out!r} ({declared[out]}) {exc}")
            complete = False
    return metrics, complete


def _read(claim: ClaimSpec, path: Path, metrics: dict[str, float]) -> None:
    """The claim's number into ``metrics``; for a claim of another kind, only the check that its
    answer is there (ExtractError when it is not)."""
    from .extract import extract_answer, extract_value

    if claim.kind == "number":
        metrics[claim.id] = extract_value(path, claim.extract)
    else:
        extract_answer(path, claim.extract, claim.kind)


def log_file(directory: Path, stream: str) -> dict[str, Any]:
    """The entry of ``<stream>.log`` in the run directory."""
    path = directory / f"{stream}.log"
    return {"stream": stream, "path": path.name, "sha256": sha256_file(path), "size": path.stat().st_size}


def allowed_writes(plan: RunPlan) -> list[str]:
    """Where a run may write inside the artifact: its declared outputs, the record directory,
    and (because runs of other launchers and seeds may go on at the same time) every output any
    launcher declares; a templated path counts from its last directory before a placeholder."""
    allowed = [rel for _, rel, _ in plan.outputs]
    for launcher in plan.artifact.manifest.launchers:
        for output in launcher.outputs:
            fixed = output.path.split("{", 1)[0]
            allowed.append(output.path if fixed == output.path else fixed.rpartition("/")[0])
    try:
        records = plan.artifact.runs_dir.relative_to(plan.artifact.root).as_posix()
    except ValueError:
        return allowed
    # Runs write records under <run_records>/<launcher>/; naming those (not the whole directory)
    # keeps the rule meaningful when run_records is the artifact root itself.
    allowed.extend(posixpath.normpath(f"{records}/{launcher.id}") for launcher in plan.artifact.manifest.launchers)
    return allowed


def snapshot_before(plan: RunPlan) -> RunSnapshot:
    """The artifact tree's metadata outside the allowed places, and the state of each declared
    output, taken before the process starts."""
    outputs: dict[str, OutputState | None] = {}
    for _, rel, _ in plan.outputs:
        resolved = resolve_inside(plan.artifact.root, rel, kind="any")
        outputs[rel] = None if resolved.path is None else output_state(resolved.path)
    return RunSnapshot(take_snapshot(plan.artifact.root, [a for a in allowed_writes(plan) if a]), outputs)


def host_record(plan: RunPlan, executor: Executor, host_gpus: list[GpuInfo], env_dir: Path | None) -> dict[str, Any]:
    """The record's ``host``: this machine, its GPUs, and the run's package set against the lock."""
    if executor == Executor.CONTAINER:
        # The image's packages are not visible from here; the image id in 'container' pins them.
        return host_fingerprint(host_gpus, environment="image")
    packages = package_set(env_site_dirs(env_dir)) if env_dir is not None else package_set()
    lock = lock_match(plan.artifact.root, plan.artifact.manifest.environment.lock, packages)
    return host_fingerprint(host_gpus, packages=packages, environment="locked" if env_dir else "current",
                            lock=lock, python=env_python(env_dir) if env_dir is not None else None)


def record_head(plan: RunPlan, *, executor: Executor, started: datetime, host: dict[str, Any],
                assigned: list[int], environment: dict[str, str]) -> dict[str, Any]:
    """The fields of a record known when the process starts (what a pending record holds);
    the values of the run's secrets are '[redacted]' wherever they would appear."""
    head: dict[str, Any] = {
        "record_version": RECORD_VERSION,
        "artifact_id": plan.artifact.manifest.id,
        "artifact_digest": plan.artifact.digest,
        "launcher": plan.launcher.id,
        "argv": list(plan.argv),
        "cwd": plan.cwd,
        "parameters": {k: REDACTED if k in plan.secrets else v for k, v in plan.parameters.items()},
        "seed": plan.seed,
    }
    if plan.repeat is not None:
        head["repeat"] = plan.repeat
    head.update({
        "started": utc_stamp(started),
        "executor": Executor(executor).value,
        "timeout_s": plan.timeout_s,
        "host": host,
        "gpus": list(assigned),
        "environment": redact({k: REDACTED if k in plan.secrets else v for k, v in environment.items()}),
    })
    if plan.secrets:
        head["secrets"] = sorted(plan.secrets)
    redacted: dict[str, Any] = redact_values(head, plan.secret_values)
    return redacted


def assemble_record(head: Mapping[str, Any], *, ended: datetime, duration_s: float, status: RunStatus,
                    exit_status: int | None, killed_by: int | None, container: dict[str, Any] | None,
                    outputs: list[dict[str, Any]], missing: list[dict[str, Any]], logs: list[dict[str, Any]],
                    metrics: dict[str, float], stray: list[str], messages: list[str]) -> dict[str, Any]:
    """A whole record from its :func:`record_head` and how the run ended, in the field order the
    RunRecord model writes (absent optionals left out; seed and exit_status always present)."""
    record: dict[str, Any] = {key: head[key] for key in ("record_version", "artifact_id", "artifact_digest",
                                                          "launcher", "argv", "cwd", "parameters", "seed")}
    if "repeat" in head:
        record["repeat"] = head["repeat"]
    record["started"] = head["started"]
    record.update({"ended": utc_stamp(ended), "duration_s": round(duration_s, 6),
                   "status": RunStatus(status).value, "exit_status": exit_status})
    if killed_by is not None:
        record["signal"] = killed_by
    record["executor"] = head["executor"]
    if container is not None:
        record["container"] = container
    record.update({key: head[key] for key in ("timeout_s", "host", "gpus", "environment")})
    if "secrets" in head:
        record["secrets"] = head["secrets"]
    record.update({"outputs": outputs, "missing_outputs": missing, "logs": logs, "metrics": metrics,
                   "stray_writes": stray[:MAX_STRAY_LISTED], "messages": messages})
    return record


def write_record(plan: RunPlan, directory: Path, *, executor: Executor, started: datetime, ended: datetime,
                 duration_s: float, started_epoch: float, status: RunStatus, exit_status: int | None,
                 killed_by: int | None, host_gpus: list[GpuInfo], assigned: list[int],
                 environment: dict[str, str], messages: list[str],
                 container: dict[str, Any] | None = None, before: RunSnapshot | None = None,
                 env_dir: Path | None = None, host: dict[str, Any] | None = None,
                 concurrent: Callable[[], list[str]] | None = None) -> dict[str, Any]:
    """Check the outputs and the tree, extract the metrics, and write ``record.json`` atomically;
    the record as written (plain JSON data).

    The record conforms to the published run-record schema by construction; it is not checked
    here because the compiled validator's import alone is ~25 ms of every ``rra run``. The test
    suite checks every record any test writes against the schema (tests/conftest.py).

    ``before`` is the tree snapshot taken before the run (:func:`snapshot_before`); files
    created, changed or removed outside the allowed places since then fail the run. ``host``
    is :func:`host_record`, when the executor took it before the run. ``concurrent`` lists the
    other runs of the artifact active during this one (``concurrency.RunSlot.concurrent``):
    changes outside the allowed places made while others ran cannot be told apart from theirs,
    so they fail the run with a message but are not listed as its ``stray_writes``.
    """
    outputs, missing, paths = collect_outputs(plan, started_epoch, messages,
                                              None if before is None else before.outputs)
    metrics, complete = claim_metrics(plan, paths, messages, directory)
    stray: list[str] = []
    unattributed = False
    if before is not None:
        changed = stray_writes(before.tree, take_snapshot(plan.artifact.root, [a for a in allowed_writes(plan) if a]))
        others = concurrent() if changed and concurrent is not None else []
        if changed:
            shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
            if others:
                unattributed = True
                listed = "; ".join(others[:3]) + (f"; and {len(others) - 3} more" if len(others) > 3 else "")
                messages.append(f"the artifact changed outside the declared outputs ({len(changed)} file(s)): "
                                f"{shown}, {CONCURRENT_CHANGES} ({listed}); which run "
                                "changed them cannot be told, so this record does not claim them; run the "
                                "launcher alone to check it")
            else:
                stray = changed
                messages.append(f"the run wrote outside its declared outputs ({len(stray)} file(s)): {shown}; "
                                "declare them as outputs or write them elsewhere")
    if status == RunStatus.COMPLETED and exit_status == 0 and (missing or not complete or stray or unattributed):
        status = RunStatus.FAILED
    head = record_head(plan, executor=executor, started=started,
                       host=host if host is not None else host_record(plan, executor, host_gpus, env_dir),
                       assigned=assigned, environment=environment)
    record = assemble_record(head, ended=ended, duration_s=duration_s, status=status, exit_status=exit_status,
                             killed_by=killed_by, container=container, outputs=outputs, missing=missing,
                             logs=[log_file(directory, "stdout"), log_file(directory, "stderr")],
                             metrics=metrics, stray=stray, messages=messages)
    # A secret's value never reaches the record, wherever the program or a message put it.
    redacted: dict[str, Any] = redact_values(record, plan.secret_values)
    data = record_bytes(redacted)
    write_atomic(directory / "record.json", data, replace=False)
    # Inside a benchmark cell: the record as written, committed before anyone can edit it. A
    # failed commit leaves the record unjournaled, which the auditor reports; nothing to add here.
    commit_record(directory / "record.json", data, redacted, plan.artifact.root)
    return redacted
