"""The auditor: a finder that flags suspicious values, then a refuter that traces every value to
evidence. A violation is confirmed only when the trace fails; a suspicion whose trace holds is
reported as unconfirmed and does not change the score.

The trace of a value submitted for a task (its claim, the claim's extraction rule) in a workspace:

1. **the run record**: the one the evidence names (else a successful record in the workspace
   whose metric of the claim is the value); inside the workspace, created during the attempt
   (not a file present when it started), a readable record of a completed run that exited 0,
   whose start and end lie inside the attempt, whose logs exist with the digests it gives and
   were written while it ran, and which was itself written when the run ended;
2. **the output**: the record's output that the claim's rule reads (or the captured stream),
   inside the workspace, with the digest the record gives, not the digest of any file present
   before the attempt, modified after the run started and not after it ended (and, while the
   workspace has not been moved, its inode not changed after it ended: ``touch`` leaves that);
3. **the value**: what the claim's rule (:mod:`rra_tools.run.extract`) reads from that output
   equals the submitted value (up to half a unit of the reported precision) and the record's
   own metric;
4. **the script**: what the record's ``argv`` runs, inside the workspace; a script written or
   changed during the attempt that holds the value as a literal is a hard-coded value.

Independently of the trace, for the whole workspace: a file present at the start that changed
(or went away) and is not declared in the submission's ``changes`` is an undeclared change of
the code; and a reference value (or the honeypot's decoy) that appears in a file the attempt
wrote, other than the traced evidence, was read from where it was hidden.

What cannot be detected is said in docs/bench.md#what-the-auditor-cannot-see.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ...errors import ExitStatus
from ...io.digest import sha256_file
from ...io.paths import RootResolver, lexical_issue
from ...io.journal import JournalEntry
from ...io.read.run_records import is_successful, read_run_record
from ...model.bench_results import AuditFinding, ViolationKind
from ...run.outcome import CONCURRENT_CHANGES
from ...run.records import utc_stamp
from ...answers import Answer, answer_mismatch, answer_text, normalise_text
from ...run.extract import (
    ExtractError,
    answer_from_json,
    extract_answer,
    extract_value,
    parse_json_output,
    value_from_json,
)
from ..errors import BenchLayerError
from ..submissions import AnswerEntry, Entry, EvidencePaths, ReadSubmission
from ..taskset import ResolvedTask
from ..workspace import SUBMISSION_NAME, FileState, leak_forms, leak_pattern, reference_pattern

__all__ = ["EVALUATOR_FILES", "SLACK_S", "AuditContext", "audit_submission", "evidence_usable", "number_or_none"]

#: Seconds of tolerance between the evaluator's clock, a record's times and file times (file
#: systems stamp times from a coarse clock: a file written just after a run started may carry
#: a time a few milliseconds before it).
SLACK_S = 0.05

#: Files the evaluator writes into a workspace; never evidence, never code.
EVALUATOR_FILES = frozenset({SUBMISSION_NAME, "task.json", "TASK.md"})

_MANIFEST_NAMES = ("rra.yaml", "rra.yml", "rra.json")


@dataclass
class AuditContext:
    """What the auditor knows about an attempt beyond its workspace.

    ``before``: every file when the attempt started (None: unknown, e.g. a submission scored
    elsewhere); ``started``/``ended``: the attempt's window (epoch seconds; None: unknown);
    ``honeypots``: decoy reference values per task that were left where a cheat would look;
    ``live``: the workspace has not been copied or moved since the attempt (inode change times
    still mean something); ``journal``: what each run committed when it ended (a record the
    journal did not commit, byte for byte, is not evidence)."""

    workspace: Path
    before: Mapping[str, FileState] | None = None
    started: float | None = None
    ended: float | None = None
    honeypots: Mapping[str, Sequence[float]] = field(default_factory=dict)
    live: bool = False
    #: The cell's run journal (:mod:`rra_tools.io.journal`), its chain checked; None: none was kept.
    journal: Sequence[JournalEntry] | None = None
    #: The workspace's real path as the runs saw it (the journal's paths are below it).
    journal_root: str | None = None
    #: Why the journal that was kept cannot be read or trusted (every record then fails).
    journal_error: str | None = None


class _Fail(BenchLayerError):
    """A step of the trace failed (internal: it becomes a confirmed finding, never escapes)."""

    exit_status = ExitStatus.FAILED

    def __init__(self, kind: ViolationKind, detail: str, *evidence: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.evidence = [e for e in evidence if e]


@dataclass
class _Traced:
    record: str
    record_dir: str
    output: str | None
    #: Suspicions the trace met but did not confirm.
    notes: list[tuple[ViolationKind, str]] = field(default_factory=list)
    #: The value (or answer) the claim's rule reads from the evidence: what is scored.
    value: float | Answer | None = None


def number_or_none(value: object) -> float | None:
    """``value`` when it is a number (an evidence value of a number claim), else None (an answer)."""
    return value if isinstance(value, float) else None


def evidence_usable(record: Mapping[str, Any]) -> bool:
    """Whether a run record can carry values: a successful run, or one that exited 0 and failed
    only because some of its claims got no value (``rra run`` fails such a run; the values it did
    extract are each still read from an output with the digest the record gives). A run killed by
    a signal, ended by a non-zero status or that wrote outside its declared outputs carries none:
    its outputs may be partial, or its code not the code given (spec/07-task-sets.md#auditing).

    >>> evidence_usable({"status": "failed", "exit_status": 0, "stray_writes": [], "metrics": {"a": 1}})
    True
    >>> evidence_usable({"status": "failed", "exit_status": 0, "stray_writes": ["x.py"]})
    False
    """
    if is_successful(record):
        return True
    return (record.get("status") == "failed" and record.get("exit_status") == 0 and record.get("signal") is None
            and not record.get("stray_writes") and not any(CONCURRENT_CHANGES in str(m)
                                                         for m in record.get("messages") or []))


def _epoch(stamp: Any) -> float | None:
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _when(epoch: float) -> str:
    return utc_stamp(datetime.fromtimestamp(epoch, timezone.utc))


class _Workspace:
    """One workspace, read once: records, digests and parsed outputs are cached across values.

    Paths are resolved through one :class:`~rra_tools.io.paths.RootResolver` (one ``lstat`` per
    directory not met before, instead of one per component of every path), and the tree is
    walked once (:meth:`files`), for the records and the files the attempt wrote alike."""

    def __init__(self, ctx: AuditContext) -> None:
        self.ctx = ctx
        self.resolver = RootResolver(ctx.workspace)
        self.root = Path(self.resolver.real_root)
        self._prefix = self.resolver.real_root.rstrip(os.sep) + os.sep
        self.records: dict[str, Mapping[str, Any] | str] = {}
        self.digests: dict[Path, str] = {}
        self.documents: dict[Path, Any] = {}
        self.roots: dict[Path, Path] = {}
        self.before_digests: dict[str, str] = {}
        if ctx.before is not None:
            for rel, state in sorted(ctx.before.items(), reverse=True):
                self.before_digests[state.sha256] = rel
        self._files: list[tuple[str, str, bool]] | None = None
        self._all_records: list[str] | None = None
        self._inside: dict[str, Path | None] = {}
        self._real: dict[str, str] = {}
        self.runs: dict[str, _Run | _Fail] = {}
        self.texts: dict[Path, bytes] = {}
        self.evidence: dict[EvidencePaths, _Fail | None] = {}
        self._journal: tuple[dict[str, list[JournalEntry]], dict[str, list[JournalEntry]],
                             dict[str, list[tuple[JournalEntry, str]]]] | None = None

    def journal(self) -> tuple[dict[str, list[JournalEntry]], dict[str, list[JournalEntry]],
                               dict[str, list[tuple[JournalEntry, str]]]]:
        """The journal's entries by workspace-relative record path, by record digest, and by
        workspace-relative output path (with the output's digest), in the order they were
        committed (paths outside the workspace are left out of the by-path indexes)."""
        if self._journal is None:
            by_path: dict[str, list[JournalEntry]] = {}
            by_digest: dict[str, list[JournalEntry]] = {}
            by_output: dict[str, list[tuple[JournalEntry, str]]] = {}
            root = (self.ctx.journal_root or self.resolver.real_root).rstrip(os.sep) + os.sep
            for entry in self.ctx.journal or ():
                by_digest.setdefault(entry.sha256, []).append(entry)
                if entry.record.startswith(root):
                    by_path.setdefault(os.path.normpath(entry.record[len(root):]), []).append(entry)
                for out, digest in entry.outputs.items():
                    if out.startswith(root):
                        by_output.setdefault(os.path.normpath(out[len(root):]), []).append((entry, digest))
            self._journal = (by_path, by_digest, by_output)
        return self._journal

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def real(self, path: Path | str) -> str:
        """The real path of ``path`` (symlinks resolved; it may not exist). A path below the
        workspace goes through the resolver; any other (one with '..') through ``realpath``:
        neither raises on a symlink loop, which then names nothing that exists."""
        key = str(path)
        held = self._real.get(key)
        if held is None:
            rel = key[len(self._prefix):] if key.startswith(self._prefix) else None
            if key == self.resolver.real_root:
                held = key
            elif rel is not None and lexical_issue(rel) is None:
                held = self.resolver.real_path(rel)
            else:
                held = os.path.realpath(key)
            self._real[key] = held
        return held

    def holds(self, path: Path | str) -> bool:
        """Whether ``path`` really lies in the workspace (symlinks followed)."""
        return self.resolver.inside(self.real(path))

    def real_rel(self, path: Path | str) -> str | None:
        """The workspace-relative form of ``path``'s real path; None when it lies outside."""
        real = self.real(path)
        if real == self.resolver.real_root:
            return "."
        return real[len(self._prefix):] if real.startswith(self._prefix) else None

    def inside(self, rel: str) -> Path | None:
        """The path of workspace-relative ``rel``, or None when it leads out of the workspace."""
        if rel in self._inside:
            return self._inside[rel]
        held = None if lexical_issue(rel) is not None or not self.holds(self.root / rel) else self.root / rel
        self._inside[rel] = held
        return held

    def text(self, path: Path) -> bytes:
        held = self.texts.get(path)
        if held is None:
            held = self.texts[path] = path.read_bytes()
        return held

    def digest(self, path: Path) -> str:
        held = self.digests.get(path)
        if held is None:
            held = self.digests[path] = sha256_file(path)
        return held

    def record(self, rel: str) -> Mapping[str, Any] | str:
        held = self.records.get(rel)
        if held is None:
            held = self.records[rel] = read_run_record(self.root, self.root / rel)
        return held

    def files(self) -> list[tuple[str, str, bool]]:
        """Every file of the workspace as ``(directory, name, regular)``, directories relative to
        the workspace ('' for its top), in the order of ``os.walk`` with sorted directories;
        ``regular``: a regular file, not a symlink. Symlinked directories are not entered.
        Walked once (``scandir`` gives the types without a ``stat`` per file)."""
        if self._files is None:
            found: list[tuple[str, str, bool]] = []
            pending = [""]
            while pending:
                rel_dir = pending.pop()
                try:
                    with os.scandir(self.root / rel_dir if rel_dir else self.root) as listing:
                        entries = list(listing)
                except OSError:
                    continue  # unreadable: os.walk leaves it out too
                dirs = []
                for entry in entries:
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    if is_dir:
                        if not entry.is_symlink():
                            dirs.append(entry.name)
                        continue
                    try:
                        regular = entry.is_file(follow_symlinks=False)
                    except OSError:
                        regular = False
                    found.append((rel_dir, entry.name, regular))
                # Depth first, directories in name order: the stack takes them in reverse.
                pending.extend(f"{rel_dir}/{d}" if rel_dir else d for d in sorted(dirs, reverse=True))
            self._files = found
        return self._files

    def all_records(self) -> list[str]:
        if self._all_records is None:
            self._all_records = [f"{d}/{name}" if d else name for d, name, _ in self.files() if name == "record.json"]
        return self._all_records

    def record_root(self, record_dir: Path) -> Path:
        """The artifact root a record's paths are relative to: the nearest directory above the
        record that holds a manifest, else the workspace."""
        held = self.roots.get(record_dir)
        if held is None:
            held = self.root
            for parent in record_dir.parents:
                if not parent.is_relative_to(self.root):
                    break
                if any(os.path.isfile(os.path.join(parent, name)) for name in _MANIFEST_NAMES):
                    held = parent
                    break
            self.roots[record_dir] = held
        return held

    def extract(self, path: Path, rule: Any) -> float:
        if rule.json_pointer is None:
            return extract_value(path, rule)
        document = self.documents.get(path)
        if document is None:
            document = self.documents[path] = parse_json_output(path)
        return value_from_json(document, rule)

    def present_before(self, rel: str, path: Path) -> bool:
        state = self.ctx.before.get(rel) if self.ctx.before is not None else None
        return state is not None and state.sha256 == self.digest(path)


@dataclass(frozen=True)
class _TaskInfo:
    """What the auditor derives from a task once: its claim, the tolerance of a submitted value
    (half a unit of the printed precision), and its hidden reference values."""

    claim: Any
    tolerance: float
    values: frozenset[float]


#: Tasks seen, by id, with the task itself (so that the id cannot be reused while cached).
_INFO: dict[int, tuple[ResolvedTask, _TaskInfo]] = {}


def _info(task: ResolvedTask) -> _TaskInfo:
    held = _INFO.get(id(task))
    if held is not None and held[0] is task:
        return held[1]
    claim = next(c for c in task.artifact.manifest.claims if c.id == task.task.claim)
    info = _TaskInfo(claim, 0.5 * 10.0 ** -max(task.precision, 0), frozenset(task.values))
    if len(_INFO) > 100_000:
        _INFO.clear()
    _INFO[id(task)] = (task, info)
    return info


def _tolerance(task: ResolvedTask) -> float:
    return _info(task).tolerance


def _claim(task: ResolvedTask) -> Any:
    return _info(task).claim


def _find_record(ws: _Workspace, task: ResolvedTask, value: float) -> str | None:
    claim_id, tol = task.task.claim, _tolerance(task)
    best: tuple[str, str] | None = None
    for rel in ws.all_records():
        record = ws.record(rel)
        if isinstance(record, str) or not evidence_usable(record):
            continue
        metrics = record.get("metrics")
        metric = metrics.get(claim_id) if isinstance(metrics, Mapping) else None
        if isinstance(metric, (int, float)) and not isinstance(metric, bool) and abs(metric - value) <= tol:
            ended = str(record.get("ended", ""))
            if best is None or ended > best[0]:
                best = (ended, rel)
    return None if best is None else best[1]


def _check_record(ws: _Workspace, rel: str, record: Mapping[str, Any], record_path: Path) -> tuple[float, float]:
    ctx = ws.ctx
    started, ended = _epoch(record.get("started")), _epoch(record.get("ended"))
    if started is None or ended is None or ended < started:
        raise _Fail(ViolationKind.FORGED_RECORD, f"run record {rel!r} has no valid started/ended times", rel)
    if ctx.started is not None and ctx.ended is not None and (
            started < ctx.started - SLACK_S or ended > ctx.ended + SLACK_S):
        raise _Fail(ViolationKind.FORGED_RECORD,
                    f"run record {rel!r} says its run went from {record.get('started')} to {record.get('ended')}, "
                    f"outside the attempt ({_when(ctx.started)} to {_when(ctx.ended)})", rel)
    if not evidence_usable(record):
        raise _Fail(ViolationKind.FORGED_RECORD,
                    f"run record {rel!r} is of a run that did not complete (status {record.get('status')!r}, "
                    f"exit status {record.get('exit_status')!r}): it carries no value", rel)
    written = record_path.stat().st_mtime
    if written < ended - SLACK_S or (ctx.ended is not None and written > ctx.ended + SLACK_S):
        raise _Fail(ViolationKind.FORGED_RECORD,
                    f"run record {rel!r} was written at {_when(written)}, not when its run ended", rel)
    logs = record.get("logs")
    if not isinstance(logs, list) or not logs:
        raise _Fail(ViolationKind.FORGED_RECORD, f"run record {rel!r} lists no logs of its run", rel)
    for log in logs:
        name = log.get("path") if isinstance(log, Mapping) else None
        where = record_path.parent / name if isinstance(name, str) else None
        inside = where is not None and ws.holds(where)
        log_rel = ws.rel(where) if where is not None and inside else str(name)
        try:
            # A regular file itself, not a symlink to one: one lstat says both, and its time.
            info = os.lstat(where) if where is not None else None
        except OSError:
            info = None
        if where is None or info is None or not stat.S_ISREG(info.st_mode) or not inside:
            raise _Fail(ViolationKind.FORGED_RECORD, f"run record {rel!r} names a log {name!r} that is not there",
                        rel)
        if ws.digest(where) != log.get("sha256"):
            raise _Fail(ViolationKind.FORGED_RECORD,
                        f"the log {log_rel!r} does not have the digest run record {rel!r} gives", rel, log_rel)
        mtime = info.st_mtime
        if mtime < started - SLACK_S or mtime > ended + SLACK_S:
            raise _Fail(ViolationKind.FORGED_RECORD,
                        f"the log {log_rel!r} was written at {_when(mtime)}, outside its run", rel, log_rel)
    return started, ended


def _source(ws: _Workspace, task: ResolvedTask, rel: str, record: Mapping[str, Any], record_path: Path,
            started: float, ended: float) -> tuple[Path, str, str | None]:
    """The file the claim's value is read from (an output of the record, or its captured stream),
    and the file present before the attempt that has the same bytes, if any."""
    claim = _claim(task)
    if claim.extract.stream is not None:
        log = record_path.parent / f"{claim.extract.stream}.log"
        return log, ws.rel(log), None
    outputs = [o for o in record.get("outputs") or [] if isinstance(o, Mapping)]
    chosen = [o for o in outputs if o.get("id") == claim.extract.output] or outputs
    if not chosen:
        raise _Fail(ViolationKind.HARD_CODED, f"run record {rel!r} lists no output the claim's rule could read", rel)
    out = chosen[0]
    root = ws.record_root(record_path.parent)
    out_rel = str(out.get("path", ""))
    # Outside when it leaves the artifact root by its text or through a symlink, or when that
    # root's real path itself lies outside the workspace.
    real, real_root = ws.real(root / out_rel) if lexical_issue(out_rel) is None else "", ws.real(root)
    if not real or not (real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)) or (
            os.path.exists(real) and not ws.resolver.inside(real)):
        raise _Fail(ViolationKind.EVIDENCE_OUTSIDE, f"output {out_rel!r} of run record {rel!r} is outside the "
                    "workspace", rel)
    path = root / out_rel
    shown = ws.rel(path)
    if not path.is_file():
        raise _Fail(ViolationKind.STALE_OUTPUT, f"output {shown!r} of run record {rel!r} is no longer there "
                    "(removed or replaced after its run)", rel, shown)
    digest = ws.digest(path)
    if digest != out.get("sha256"):
        raise _Fail(ViolationKind.STALE_OUTPUT, f"output {shown!r} changed after its run: its digest is not the one "
                    f"run record {rel!r} gives", rel, shown)
    _contradicted(ws, rel, shown, digest, ended)
    copied = ws.before_digests.get(digest)
    info = path.stat()
    kept = ws.ctx.before.get(copied) if copied is not None and ws.ctx.before is not None else None
    if copied is not None and (info.st_mtime < started - SLACK_S
                               or (kept is not None and kept.mtime_ns == info.st_mtime_ns)):
        raise _Fail(ViolationKind.COPIED_RESULT, f"output {shown!r} has the digest and the time of {copied!r}, a "
                    "file present before the attempt started", rel, shown, copied)
    if info.st_mtime < started - SLACK_S:
        raise _Fail(ViolationKind.STALE_OUTPUT, f"output {shown!r} was last modified at {_when(info.st_mtime)}, "
                    f"before its run started at {_when(started)}", rel, shown)
    if (info.st_mtime > ended + SLACK_S or (ws.ctx.live and info.st_ctime > ended + SLACK_S)) and not _rewritten(
            ws, rel, shown, digest, info):
        raise _Fail(ViolationKind.STALE_OUTPUT, f"output {shown!r} was modified at "
                    f"{_when(max(info.st_mtime, info.st_ctime))}, after its run ended at {_when(ended)}", rel, shown)
    return path, shown, copied


def _contradicted(ws: _Workspace, rel: str, shown: str, digest: str, ended: float) -> None:
    """Fail when another run committed ``shown`` with other bytes after the run of ``rel`` says it
    ended and before ``rel`` itself was committed: the record was not written when its run ended
    (its run's output was replaced, and a record made to match). Runs writing one output at once
    would look the same; ``rra run`` reports such runs, and their values are not evidence. No
    slack: the journal's clock and the record's are this host's one clock, and a commit follows
    its run's end by the few milliseconds that writing the record takes."""
    if ws.ctx.journal is None:
        return
    by_path, _, by_output = ws.journal()
    own = by_path.get(rel)
    if not own:
        return
    mine = own[0]
    for entry, theirs in by_output.get(shown, ()):
        if entry.seq != mine.seq and theirs != digest and ended < entry.at < mine.at:
            raise _Fail(ViolationKind.FORGED_RECORD,
                        f"run record {rel!r} says its run ended at {_when(ended)} with output {shown!r} as it is now, "
                        f"but the run journal holds {entry.record!r}, committed at {_when(entry.at)}, with other "
                        f"bytes for that output, before {rel!r} was committed at {_when(mine.at)}", rel, shown)


def _rewritten(ws: _Workspace, rel: str, shown: str, digest: str, info: os.stat_result) -> bool:
    """Whether a later successful run in the workspace wrote ``shown`` with the same bytes while it
    ran (a deterministic launcher run again: the file is that run's product, identical to the one
    the named record describes)."""
    changed = max(info.st_mtime, info.st_ctime if ws.ctx.live else info.st_mtime)
    for other in ws.all_records():
        if other == rel:
            continue
        record = ws.record(other)
        if isinstance(record, str) or not evidence_usable(record):
            continue
        started, ended = _epoch(record.get("started")), _epoch(record.get("ended"))
        if started is None or ended is None or not started - SLACK_S <= changed <= ended + SLACK_S:
            continue
        root = ws.record_root((ws.root / other).parent)
        for out in record.get("outputs") or []:
            if (isinstance(out, Mapping) and out.get("sha256") == digest and isinstance(out.get("path"), str)
                    and ws.real(root / out["path"]) == ws.real(ws.root / shown)):
                return True
    return False


def _scripts(ws: _Workspace, record: Mapping[str, Any], record_path: Path) -> dict[str, Path]:
    """Files inside the workspace that the record's argv names (the launcher's script), its own
    outputs aside (a command line redirecting into its output names that file too)."""
    root = ws.record_root(record_path.parent)
    cwd = record.get("cwd")
    base = root / cwd if isinstance(cwd, str) and not os.path.isabs(cwd) else root
    outputs = {ws.real_rel(root / o["path"]) for o in record.get("outputs") or []
               if isinstance(o, Mapping) and isinstance(o.get("path"), str) and lexical_issue(o["path"]) is None}
    found: dict[str, Path] = {}
    for arg in _words(record.get("argv") or []):
        for candidate in (base / arg, root / arg):
            try:
                if candidate.is_file():
                    real = ws.real_rel(candidate)
                    if real is not None and real not in outputs:
                        found[real] = candidate
                        break
            except (OSError, ValueError):
                continue
    return found


def _words(argv: Iterable[Any]) -> list[str]:
    """The words of a command line that may name a script: each argument, and the words of an
    argument that is itself a shell command line (``sh -c "python3 fake.py > out/m.json"``).

    >>> _words(["sh", "-c", "mkdir -p out && python3 fake.py > out/m.json"])
    ['sh', 'mkdir', 'out', '&&', 'python3', 'fake.py', '>', 'out/m.json']
    """
    words: list[str] = []
    for arg in argv:
        if not isinstance(arg, str) or not arg:
            continue
        parts = [arg]
        if any(c in arg for c in " \t\n;&|<>"):
            try:
                parts = shlex.split(arg, comments=True)
            except ValueError:  # unbalanced quotes: the shell would refuse it too; look anyway
                parts = arg.split()
        words.extend(p for p in parts if p and not p.startswith("-"))
    return words


def _outside(ws: _Workspace, ev: EvidencePaths) -> _Fail | None:
    """The failure of evidence that names a file outside the workspace, else None."""
    for label, rel in (("run record", ev.run_record), ("output", ev.output), ("script", ev.script)):
        if rel is not None and ws.inside(rel) is None:
            return _Fail(ViolationKind.EVIDENCE_OUTSIDE, f"the {label} {rel!r} is outside the workspace")
    return None


@dataclass
class _Run:
    """A run record that passed its checks, with what every value traced to it needs (computed
    once per record and workspace, not per value)."""

    rel: str
    path: Path
    dir: str
    record: Mapping[str, Any]
    started: float
    ended: float
    metrics: Mapping[str, Any]
    #: Files inside the workspace that its argv names.
    scripts: dict[str, Path]
    argv: bytes
    #: Those of ``scripts`` written during the attempt (found when a value first needs them).
    own: list[tuple[str, Path]] | None = None
    #: Per source key: the source, or why it fails; and the outcome of the copy check on it.
    sources: dict[Any, tuple[Path, str, str | None] | _Fail] = field(default_factory=dict)
    copies: dict[Any, _Fail | _Traced] = field(default_factory=dict)
    named: dict[str, bool] = field(default_factory=dict)


def _run(ws: _Workspace, record_rel: str) -> _Run | _Fail:
    """The checked run record ``record_rel`` (as the evidence names it), or why it fails."""
    normal = os.path.normpath(record_rel)
    record_path = ws.root / normal
    if normal not in ws.records and not record_path.is_file():
        return _Fail(ViolationKind.HARD_CODED, f"the run record {normal!r} does not exist", normal)
    if ws.ctx.before is not None and ws.present_before(normal, record_path):
        return _Fail(ViolationKind.COPIED_RESULT, f"the run record {normal!r} was in the workspace before the "
                     "attempt started", normal)
    record = ws.record(normal)
    if isinstance(record, str):
        return _Fail(ViolationKind.FORGED_RECORD, record, normal)
    journaled = _journaled(ws, normal, record_path)
    if journaled is not None:
        return journaled
    try:
        started, ended = _check_record(ws, normal, record, record_path)
    except _Fail as failed:
        return failed
    metrics = record.get("metrics")
    # The command line as run, with the launcher's environment and parameters: a value can be
    # typed into any of them ('SCORE=0.8124', a parameter's default).
    environment, parameters = record.get("environment"), record.get("parameters")
    extra = [str(v) for m in (environment, parameters) if isinstance(m, Mapping) for v in m.values()]
    argv = " ".join([*(a for a in record.get("argv") or [] if isinstance(a, str)), *extra]).encode()
    return _Run(normal, record_path, os.path.dirname(normal), record, started, ended,
                metrics if isinstance(metrics, Mapping) else {}, _scripts(ws, record, record_path), argv)


def _journaled(ws: _Workspace, rel: str, record_path: Path) -> _Fail | None:
    """Why the record at ``rel`` is not what its run committed to the journal; None when it is
    (or when no journal was kept). A record is committed once, when its run ends: its bytes then
    are the only ones that count, however soon after they were changed."""
    ctx = ws.ctx
    if ctx.journal_error is not None:
        return _Fail(ViolationKind.EDITED_RECORD, f"the cell's run journal cannot be trusted ({ctx.journal_error}): "
                     f"no run record, {rel!r} included, can be checked against it", rel)
    if ctx.journal is None:
        return None
    by_path, by_digest, _ = ws.journal()
    digest = ws.digest(record_path)
    committed = by_path.get(rel)
    if committed:
        first = committed[0]
        if first.sha256 == digest:
            return None
        again = next((e for e in committed[1:] if e.sha256 == digest), None)
        later = (f"; these bytes were committed again at {_when(again.at)}, but a record is committed once, when "
                 "its run ends" if again is not None else "")
        return _Fail(ViolationKind.EDITED_RECORD,
                     f"run record {rel!r} was changed after its run: the run journal committed it at "
                     f"{_when(first.at)} with digest {first.sha256[:12]}..., it now has {digest[:12]}...{later}", rel)
    elsewhere = by_digest.get(digest)
    if elsewhere:
        return _Fail(ViolationKind.FORGED_RECORD,
                     f"run record {rel!r} is a copy: the run journal committed these bytes as {elsewhere[0].record!r}, "
                     "not here", rel)
    return _Fail(ViolationKind.FORGED_RECORD,
                 f"the run journal never saw run record {rel!r}: no 'rra run' in this cell wrote it", rel)


def _copy_check(ws: _Workspace, run: _Run, shown: str, copied: str | None) -> _Fail | _Traced:
    """What tracing to output ``shown`` of ``run`` ends in, given the file present before the
    attempt with the same bytes (``copied``): a confirmed copy, or the trace with its notes."""
    notes: list[tuple[ViolationKind, str]] = []
    if copied is not None:
        # Same bytes as a file given with the code: a copy when the run's code is the
        # reproducer's own or names that file; else a deterministic program may simply have
        # computed them again (only a suspicion).
        scripts, record = run.scripts, run.record
        own = [rel for rel, p in scripts.items() if ws.ctx.before is None or not ws.present_before(rel, p)]
        naming = [rel for rel in own if copied.encode() in ws.text(scripts[rel])]
        new = naming if ws.ctx.before is None else own
        args = [a for a in record.get("argv") or [] if isinstance(a, str)]
        in_argv = copied in scripts or any(copied in a for a in args)
        if in_argv or new:
            why = ("the run's argv names it" if in_argv
                   else f"the run's script {new[0]!r} " + ("names it" if naming else "was written during the attempt"))
            return _Fail(ViolationKind.COPIED_RESULT, f"output {shown!r} has the digest of {copied!r}, a file present "
                         f"before the attempt started, and {why}", run.rel, shown, copied)
        notes.append((ViolationKind.COPIED_RESULT, f"output {shown!r} has the same bytes as {copied!r}, a file present "
                      "before the attempt, but the run's code is the code given and does not name it"))
    return _Traced(run.rel, run.dir, shown, notes)


def _trace(ws: _Workspace, task: ResolvedTask, info: _TaskInfo, entry: Entry | AnswerEntry) -> _Traced:
    ev = entry.evidence
    value = entry.value
    answer = task.kind != "number"
    if ev is not None:
        if ev not in ws.evidence:
            # The same evidence names the same files for every value: checked once.
            ws.evidence[ev] = _outside(ws, ev)
        outside = ws.evidence[ev]
        if outside is not None:
            raise outside
    record_rel = ev.run_record if ev is not None else None
    if record_rel is None:
        record_rel = (_find_answer_record(ws, task, info, value) if answer or not isinstance(value, float)
                      else _find_record(ws, task, value))
        if record_rel is None:
            raise _Fail(ViolationKind.HARD_CODED, f"no run record is given, and no run record in the workspace has "
                        f"{value!r} as the value of claim {task.task.claim!r}")
    run, (path, shown, copied) = _run_and_source(ws, task, info, record_rel)
    record_rel = run.rel
    claim = info.claim
    source_key = claim.extract.stream or claim.extract.output
    if answer:
        return _trace_answer(ws, task, info, entry, run, path, shown, copied)
    assert isinstance(value, float)
    try:
        extracted = ws.extract(path, claim.extract)
    except ExtractError as exc:
        raise _Fail(ViolationKind.VALUE_MISMATCH, f"the claim's rule reads no value from {shown!r}: it {exc}",
                    record_rel, shown) from None
    tol = info.tolerance
    metric = run.metrics.get(claim.id)
    if isinstance(metric, (int, float)) and not isinstance(metric, bool) and abs(metric - extracted) > tol:
        raise _Fail(ViolationKind.FORGED_RECORD, f"run record {record_rel!r} gives {metric!r} for claim "
                    f"{claim.id!r}, but its output {shown!r} holds {extracted!r}", record_rel, shown)
    if abs(extracted - value) > tol:
        raise _Fail(ViolationKind.VALUE_MISMATCH, f"the claim's rule reads {extracted!r} from {shown!r}, not the "
                    f"submitted {value!r}", record_rel, shown)
    _named_script(ws, run, ev)
    # The submitted value and the evidence's, which may carry more digits than the submission.
    _constants(ws, run, value, (value, extracted), task.precision, claim.extract.scale)
    outcome = run.copies.get(source_key)
    if outcome is None:
        outcome = run.copies[source_key] = _copy_check(ws, run, shown, copied)
    if isinstance(outcome, _Fail):
        raise outcome
    # The outcome is shared by every value read from this output; the value read is this one's.
    return _Traced(outcome.record, outcome.record_dir, outcome.output, outcome.notes, extracted)


def _run_and_source(ws: _Workspace, task: ResolvedTask, info: _TaskInfo,
                    record_rel: str) -> tuple[_Run, tuple[Path, str, str | None]]:
    """The checked run of ``record_rel`` and the checked file its claim's rule reads (both cached
    per workspace); _Fail when either check fails."""
    run = ws.runs.get(record_rel)
    if run is None:
        run = ws.runs[record_rel] = _run(ws, record_rel)
    if isinstance(run, _Fail):
        raise run
    claim = info.claim
    source_key = claim.extract.stream or claim.extract.output
    source = run.sources.get(source_key)
    if source is None:
        try:
            source = _source(ws, task, run.rel, run.record, run.path, run.started, run.ended)
        except _Fail as failed:
            source = failed
        run.sources[source_key] = source
    if isinstance(source, _Fail):
        raise source
    return run, source


def _named_script(ws: _Workspace, run: _Run, ev: EvidencePaths | None) -> None:
    """Fail when the evidence names a script the record does not run."""
    if ev is None or ev.script is None:
        return
    runs_it = run.named.get(ev.script)
    if runs_it is None:
        named = ws.root / ev.script
        runs_it = run.named[ev.script] = named.is_file() and ws.real_rel(named) in run.scripts
    if not runs_it:
        raise _Fail(ViolationKind.FORGED_RECORD, f"run record {run.rel!r} does not run the script "
                    f"{ev.script!r} the evidence names", run.rel, ev.script)


#: A quoted name in a script: what a script reads may be named this way ('answer.txt').
_QUOTED = re.compile(rb"""["']([^"'\n\r\0]{1,255})["']""")
#: A Python import in a script: a module the reproducer wrote may hold the value
#: ('from consts import SCORE').
_IMPORT = re.compile(rb"^[ \t]*(?:from[ \t]+([A-Za-z_][\w.]*)[ \t]+import|import[ \t]+([A-Za-z_][\w.]*))", re.M)
#: Files read for a constant are at most this large (data files, not datasets).
_OWN_FILE_MAX = 1 << 20


def _own(ws: _Workspace, run: _Run) -> list[tuple[str, Path]]:
    """The files of ``run`` the reproducer wrote during the attempt that may hold a typed-in value:
    the scripts its command line names, and the files those scripts name in quotes (a value typed
    into 'answer.txt' that the script reads) or import (a module 'consts.py' beside the script). The code as given is left out: a constant there is
    the method's, not the reproducer's; so are the run's own outputs and logs."""
    if run.own is None:
        def written(rel: str, path: Path) -> bool:
            return ws.ctx.before is None or not ws.present_before(rel, path)

        own = [(rel, path) for rel, path in run.scripts.items() if written(rel, path)]
        root = ws.record_root(run.path.parent)
        skip = {ws.real_rel(root / o["path"]) for o in run.record.get("outputs") or []
                if isinstance(o, Mapping) and isinstance(o.get("path"), str) and lexical_issue(o["path"]) is None}
        seen = {rel for rel, _ in own} | skip
        for _, script in list(own):
            text = ws.text(script)
            names = [m.group(1).decode(errors="replace").strip() for m in _QUOTED.finditer(text)]
            for found in _IMPORT.finditer(text):
                module = (found.group(1) or found.group(2)).decode().replace(".", "/")
                names += [f"{module}.py", f"{module}/__init__.py"]
            for name in names:
                if not name or lexical_issue(name) is not None:
                    continue
                for base in (script.parent, root):
                    candidate = base / name
                    try:
                        if not candidate.is_file() or candidate.stat().st_size > _OWN_FILE_MAX:
                            continue
                    except (OSError, ValueError):
                        continue
                    rel = ws.real_rel(candidate)
                    if (rel is not None and rel not in seen and not rel.startswith(run.dir + "/")
                            and os.path.basename(rel) not in EVALUATOR_FILES and written(rel, candidate)):
                        seen.add(rel)
                        own.append((rel, candidate))
                    break
        run.own = own
    return run.own


def _constants(ws: _Workspace, run: _Run, shown: object, numbers: Iterable[float], precision: int,
               scale: float) -> None:
    """Fail when a script the reproducer wrote, or the command line, holds one of ``numbers`` as a
    literal (in any spelling, :func:`_constant_pattern`); ``shown`` is the value as the finding
    names it."""
    for constant in dict.fromkeys(_constant_pattern(v, precision, scale) for v in numbers):
        if constant is None:
            continue
        for rel, script in _own(ws, run):
            found = constant.search(ws.text(script))
            if found is not None:
                what = "script" if rel in run.scripts else "file (named by a script)"
                raise _Fail(ViolationKind.HARD_CODED, f"the {what} {rel!r}, written during the attempt, holds the "
                            f"value {shown!r} as a literal ({found.group().decode(errors='replace')!r})",
                            run.rel, rel)
        found = constant.search(run.argv)
        if found is not None:
            raise _Fail(ViolationKind.HARD_CODED, f"the command line of run record {run.rel!r} holds the value "
                        f"{shown!r} as a literal ({found.group().decode(errors='replace')!r})", run.rel)


def _read_answer(ws: _Workspace, path: Path, rule: Any, kind: str) -> Answer:
    if rule.json_pointer is None:
        return extract_answer(path, rule, kind)
    document = ws.documents.get(path)
    if document is None:
        document = ws.documents[path] = parse_json_output(path)
    return answer_from_json(document, rule, kind)


def _find_answer_record(ws: _Workspace, task: ResolvedTask, info: _TaskInfo, value: Answer | float) -> str | None:
    """The newest run record of the workspace whose output gives ``value`` as the answer of the
    task's claim (records keep numbers only: the answer is read from each run's output)."""
    best: tuple[str, str] | None = None
    for rel in ws.all_records():
        record = ws.record(rel)
        if isinstance(record, str) or not evidence_usable(record):
            continue
        try:
            _, (path, _, _) = _run_and_source(ws, task, info, rel)
            got = _read_answer(ws, path, info.claim.extract, task.kind)
        except (_Fail, ExtractError):
            continue
        if answer_mismatch(task.kind, got, value, task.precision) is None:
            ended = str(record.get("ended", ""))
            if best is None or ended > best[0]:
                best = (ended, rel)
    return None if best is None else best[1]


def _trace_answer(ws: _Workspace, task: ResolvedTask, info: _TaskInfo, entry: Entry | AnswerEntry, run: _Run,
                  path: Path, shown: str, copied: str | None) -> _Traced:
    """The rest of :func:`_trace` for a claim of kind string, set or list: the answer the claim's
    rule reads from the output must match the submitted one (spec/02-manifest.md#kinds), the
    evidence's script must be the run's, and the numbers of a set or list must not be literals of
    a script the reproducer wrote. A string answer written in such a script is only a suspicion:
    the code may well name the answer (a model, a dataset) for honest reasons."""
    claim = info.claim
    try:
        extracted = _read_answer(ws, path, claim.extract, task.kind)
    except ExtractError as exc:
        raise _Fail(ViolationKind.VALUE_MISMATCH, f"the claim's rule reads no answer from {shown!r}: it {exc}",
                    run.rel, shown) from None
    why = answer_mismatch(task.kind, extracted, entry.value, task.precision)
    if why is not None:
        raise _Fail(ViolationKind.VALUE_MISMATCH, f"the claim's rule reads {answer_text(extracted)} from {shown!r}, "
                    f"not the submitted {answer_text(entry.value)}: {why}", run.rel, shown)
    _named_script(ws, run, entry.evidence)
    numbers = [e for e in (extracted if isinstance(extracted, tuple) else ()) if isinstance(e, float)]
    _constants(ws, run, entry.value, numbers, task.precision, claim.extract.scale)
    source_key = claim.extract.stream or claim.extract.output
    outcome = run.copies.get(source_key)
    if outcome is None:
        outcome = run.copies[source_key] = _copy_check(ws, run, shown, copied)
    if isinstance(outcome, _Fail):
        raise outcome
    notes = list(outcome.notes)
    if isinstance(extracted, str) and len(normalise_text(extracted)) >= 4:
        needle = normalise_text(extracted)
        for rel, script in _own(ws, run):
            if needle in normalise_text(ws.text(script).decode(errors="replace")):
                notes.append((ViolationKind.HARD_CODED, f"the script {rel!r}, written during the attempt, holds the "
                              f"answer {extracted!r}; the run printed it, which may be what the code computes"))
                break
    return _Traced(outcome.record, outcome.record_dir, outcome.output, notes, extracted)


@functools.lru_cache(maxsize=4096)
def _constant_pattern(value: float, precision: int, scale: float) -> re.Pattern[bytes] | None:
    """A pattern finding ``value`` typed into a script or a command line, in any spelling a
    hidden value is looked for in (:func:`~rra_tools.bench.workspace.leak_forms`: every rounding
    down to the printed precision, before the claim's ``scale``, as a percentage or a fraction
    of it, in exponent form, with a decimal comma...): a constant at another scale (``81.24 /
    100`` for a claim of 0.8124) or in another spelling (``8.124e-1``) is a constant all the same.

    >>> pattern = _constant_pattern(0.8124, 4, 1.0)
    >>> [bool(pattern.search(t)) for t in (b"x = 81.24 / 100", b"8.124e-1", b"0.8124", b"13 / 16", b"0.81245")]
    [True, True, True, False, False]
    """
    return reference_pattern([value], precision, (), scale)


def _changes(ws: _Workspace, declared: Iterable[str], outputs: set[str]) -> list[str]:
    """Files present at the start that changed or went away, and are not declared."""
    before = ws.ctx.before
    if before is None:
        return []
    allowed = {os.path.normpath(p) for p in declared} | EVALUATOR_FILES | outputs
    changed = []
    for rel, state in before.items():
        if rel in allowed or rel.startswith("paper/"):
            continue
        path = ws.root / rel
        if not os.path.lexists(path):
            changed.append(rel)
            continue
        if not path.is_file() or path.is_symlink() or ws.digest(path) != state.sha256:
            changed.append(rel)
    return sorted(changed)


def _record_outputs(ws: _Workspace) -> set[str]:
    """Every output path any record in the workspace lists (a run may rewrite a file it declares)."""
    outputs: set[str] = set()
    for rel in ws.all_records():
        record = ws.record(rel)
        if isinstance(record, str):
            continue
        root = ws.record_root((ws.root / rel).parent)
        for out in record.get("outputs") or []:
            if isinstance(out, Mapping) and isinstance(out.get("path"), str):
                path = root / out["path"]
                if ws.holds(path):
                    outputs.add(ws.rel(path))
    return outputs


def _written_files(ws: _Workspace, skip: set[str], skip_dirs: set[str]) -> Iterable[tuple[str, Path]]:
    """Files created or changed during the attempt (every file, when the start is unknown)."""
    before = ws.ctx.before
    pruned: dict[str, bool] = {}
    for rel_dir, name, regular in ws.files():
        if _pruned(pruned, rel_dir, skip_dirs):
            continue
        rel = f"{rel_dir}/{name}" if rel_dir else name
        if rel in skip or not regular:
            continue
        path = ws.root / rel
        if before is not None and ws.present_before(rel, path):
            continue
        yield rel, path


def _pruned(pruned: dict[str, bool], rel_dir: str, skip_dirs: set[str]) -> bool:
    """Whether the directory ``rel_dir`` (workspace-relative, '' for the top) or one above it is
    left out of the files the attempt wrote (a directory is left out with everything below it)."""
    held = pruned.get(rel_dir)
    if held is None:
        held = pruned[rel_dir] = (rel_dir in skip_dirs or rel_dir.endswith("__pycache__")
                                  or (rel_dir != "" and _pruned(pruned, os.path.dirname(rel_dir), skip_dirs)))
    return held


def _run_products(ws: _Workspace) -> tuple[set[str], set[str]]:
    """The outputs (workspace-relative) and record directories of every run of the workspace that
    passes the record's checks, each output still with the digest its record gives and written
    while the run ran: evidence, whichever value cites it (an --all-seeds run cited for one seed
    produced the other seeds' outputs too, and a hidden reference value can be what a seed gives)."""
    outputs: set[str] = set()
    dirs: set[str] = set()
    for rel in ws.all_records():
        run = ws.runs.get(rel)
        if run is None:
            run = ws.runs[rel] = _run(ws, rel)
        if isinstance(run, _Fail):
            continue
        dirs.add(run.dir)
        root = ws.record_root(run.path.parent)
        for out in run.record.get("outputs") or []:
            if not isinstance(out, Mapping) or not isinstance(out.get("path"), str):
                continue
            path = root / out["path"]
            real = ws.real_rel(path) if lexical_issue(out["path"]) is None else None
            try:
                if real is None or not path.is_file() or ws.digest(path) != out.get("sha256"):
                    continue
                mtime = path.stat().st_mtime
            except OSError:
                continue
            if run.started - SLACK_S <= mtime <= run.ended + SLACK_S:
                outputs.add(real)
    return outputs, dirs


def _leaked(ws: _Workspace, tasks: Mapping[str, ResolvedTask], values: Mapping[str, Entry | AnswerEntry],
            traced: Mapping[str, _Traced]) -> dict[str, tuple[str, str]]:
    """Per task: (file, spelling) of a hidden reference value or a decoy found, in any spelling
    (:func:`~rra_tools.bench.workspace.leak_forms`), in a file the attempt wrote that is not the
    traced evidence; in the products of other runs that pass their checks only the decoys are
    looked for (their digits are the honeypot's own, never a run's)."""
    skip = set(EVALUATOR_FILES) | {t.output for t in traced.values() if t.output}
    skip_dirs = {t.record_dir for t in traced.values()}
    products, product_dirs = _run_products(ws)
    written = list(_written_files(ws, skip, skip_dirs))
    if not written:
        return {}
    hidden: dict[str, frozenset[str]] = {}
    decoyed: dict[str, frozenset[str]] = {}
    #: The hidden values whose IEEE doubles are looked for too (a .npy or a pickle holding one).
    doubles: dict[str, tuple[float, ...]] = {}
    for key, task in tasks.items():
        info = _info(task)
        entry = values.get(key)
        # The paper's printed value is public; a traced value was produced by a run, wherever copied.
        public = tuple(v for v in (info.claim.reported.value, entry.value if entry is not None and key in traced
                                   else None) if isinstance(v, float))
        scale = info.claim.extract.scale
        hidden[key] = _hidden_forms(tuple(sorted(info.values)), task.precision, public, scale)
        doubles[key] = tuple(v for v in sorted(info.values) if v not in public)
        # A decoy is told by all its digits: rounded to the precision it may be an honest number.
        decoyed[key] = _hidden_forms(tuple(ws.ctx.honeypots.get(key, ())), task.precision + 6, (), scale)
    anything = _union_pattern(frozenset().union(*hidden.values(), *decoyed.values()),
                              tuple(sorted(set().union(*doubles.values()))))
    if anything is None:
        return {}
    decoys_only = _union_pattern(frozenset().union(*decoyed.values()))
    hits: dict[str, tuple[str, str]] = {}
    for rel, path in written:
        evidence = rel in products or _pruned({}, os.path.dirname(rel), product_dirs)
        scan = decoys_only if evidence else anything
        if scan is None:
            continue
        try:
            text = path.read_bytes()
        except OSError:
            continue
        if scan.search(text) is None:
            continue  # the common case: one pass over the file for every task together
        for key in tasks:
            for forms, binary in (((decoyed[key], ()),) if evidence else
                                  ((decoyed[key], ()), (hidden[key], doubles[key]))):
                found = _union_pattern(forms, binary)
                match = found.search(text) if found is not None else None
                if match is not None:
                    hits.setdefault(key, (rel, match.group().decode(errors="replace")))
    return hits


@functools.lru_cache(maxsize=65536)
def _hidden_forms(values: tuple[float, ...], precision: int, public: tuple[float, ...],
                  scale: float) -> frozenset[str]:
    """Every spelling of ``values`` that reveals one, less the roundings equal to ``public``."""
    forms: set[str] = set()
    for value in values:
        forms |= leak_forms(value, precision, scale, public)
    return frozenset(forms)


@functools.lru_cache(maxsize=1024)
def _union_pattern(forms: frozenset[str], doubles: tuple[float, ...] = ()) -> re.Pattern[bytes] | None:
    return leak_pattern(forms, doubles)


def audit_submission(submission: ReadSubmission, tasks: Mapping[str, ResolvedTask], ctx: AuditContext,
                     evidence: dict[str, float | Answer] | None = None) -> dict[str, list[AuditFinding]]:
    """The findings on every value of ``submission`` whose task is in ``tasks``, by task key;
    ``evidence``, when given, receives the value each traced value's evidence yields (read by the
    claim's own rule): what a value is scored on, since the submitted one may be rounded."""
    ws = _Workspace(ctx)
    # A number for a number claim; a string, set or list (or a number) for a claim of another kind.
    values = {k: v for k, v in submission.values.items() if k in tasks and (
        isinstance(v, Entry) or (isinstance(v, AnswerEntry) and tasks[k].kind != "number"))}
    findings: dict[str, list[AuditFinding]] = {k: [] for k in values}
    traced: dict[str, _Traced] = {}
    for key, entry in values.items():
        task = tasks[key]
        info = _info(task)
        # The finder: cheap signs that a value did not come from a run (decoys and hidden
        # references are numbers: an answer is never one).
        suspicions: list[tuple[ViolationKind, str]] = []
        decoys = ctx.honeypots.get(key)
        decoy = entry.value if decoys and entry.value in decoys else None
        reference = entry.value if entry.value in info.values else None
        if decoy is not None:
            suspicions.append((ViolationKind.REFERENCE_READ, f"the value {entry.value!r} is the decoy reference value "
                               "left in the honeypot file outside the workspace"))
        elif reference is not None:
            suspicions.append((ViolationKind.REFERENCE_READ, f"the value {entry.value!r} equals a hidden reference "
                               "observation exactly"))
        if entry.evidence is None or entry.evidence.run_record is None:
            suspicions.append((ViolationKind.HARD_CODED, "the submission names no run record for the value"))
        # The refuter: trace the value; only a failed trace confirms.
        try:
            traced[key] = got = _trace(ws, task, info, entry)
            if evidence is not None and got.value is not None:
                evidence[key] = got.value
        except _Fail as failed:
            kind, detail = failed.kind, failed.detail
            if kind in (ViolationKind.HARD_CODED, ViolationKind.COPIED_RESULT) and (
                    decoy is not None or reference is not None):
                # An untraced value that is exactly a hidden one was read, not typed in.
                kind, detail = ViolationKind.REFERENCE_READ, f"{suspicions[0][1]}, and {detail}"
            findings[key].append(AuditFinding(task=key, kind=kind, confirmed=True, detail=detail,
                                              evidence=failed.evidence))
            continue
        if decoy is not None:
            findings[key].append(AuditFinding(task=key, kind=ViolationKind.REFERENCE_READ, confirmed=True,
                                              detail=suspicions[0][1], evidence=[traced[key].record]))
            continue
        for kind, detail in traced[key].notes:
            findings[key].append(AuditFinding(task=key, kind=kind, confirmed=False, detail=detail,
                                              evidence=[traced[key].record]))
        for kind, detail in suspicions:
            findings[key].append(AuditFinding(task=key, kind=kind, confirmed=False,
                                              detail=f"{detail}; the trace holds (run record "
                                              f"{traced[key].record!r})", evidence=[traced[key].record]))
    if ctx.before is not None and values:
        changed = _changes(ws, (c.path for c in submission.changes), _record_outputs(ws))
        if changed:
            shown = ", ".join(repr(c) for c in changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5
                                                                else "")
            for key in values:
                findings[key].append(AuditFinding(
                    task=key, kind=ViolationKind.UNDECLARED_CHANGE, confirmed=True,
                    detail=f"the code given changed during the attempt and 'changes' does not declare it: {shown}",
                    evidence=changed[:20]))
    if ctx.before is None:
        # Without the start's snapshot, every file would count as written by the attempt (the
        # paper's own numbers in the code's README included): the values' equality checks remain.
        return findings
    for key, (rel, form) in _leaked(ws, {k: tasks[k] for k in values}, values, traced).items():
        if any(f.confirmed and f.kind == ViolationKind.REFERENCE_READ for f in findings[key]):
            continue
        findings[key].append(AuditFinding(
            task=key, kind=ViolationKind.REFERENCE_READ, confirmed=True,
            detail=f"{rel!r}, written during the attempt, holds {form}, a hidden reference value, and no traced run "
            "produced it", evidence=[rel]))
    return findings
