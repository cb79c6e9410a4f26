"""Scoring submissions made elsewhere (``rra bench score``): every task of the task set against
every submission, each value audited in the directory that holds the submission (its workspace).

A submission written by ``rra bench run`` sits in a cell's workspace beside ``attempt.json``;
then the auditor has the attempt's window, the snapshot of the workspace at its start and the
honeypot's decoys, and audits as the run did. Otherwise it traces each value without them (see
docs/bench.md#scoring-submissions-made-elsewhere for what that leaves out).
"""

from __future__ import annotations

import gc
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..answers import Answer
from ..model.bench_results import AttemptState, AuditFinding, CellResult, ViolationKind
from ..model.taskset import CodeCondition
from .audit.attempt_file import ATTEMPT_NAME, read_attempt
from .audit.auditor import audit_submission, number_or_none
from .scoring import score_value
from .submissions import ReadSubmission, read_submission
from .taskset import LoadedTaskSet, ResolvedTask

__all__ = ["score_submissions"]

#: Called after each submission with its path and the results of its tasks.
OnSubmission = Callable[[Path, list[CellResult]], None]


def _name(read: ReadSubmission, index: int) -> str:
    if read.reproducer:
        return read.reproducer
    stem = re.sub(r"[^A-Za-z0-9._-]", "-", read.path.stem).lstrip("._-") or "submission"
    return stem[:100] if read.path.stem != "submission" else f"submission-{index}"


@contextmanager
def _results_set_aside() -> Iterator[Callable[[], None]]:
    """A function that sets every object made so far aside from the cyclic garbage collector
    (``gc.freeze``), called after each submission; all of it is handed back (``gc.unfreeze``)
    when the block ends, however it ends.

    Scoring keeps every result while it builds a few objects per value: each full collection
    would walk the growing list of results again (a fifth of the CPU time of 100,000 values).
    Unlike pausing the collector, this leaves it running for everything else, the callbacks
    included: what a submission's audit leaves in cycles is collected as usual. Nothing is set
    aside when something else froze objects before (unfreezing would hand theirs back too) or
    when the collector is off."""
    if gc.get_freeze_count() or not gc.isenabled():
        yield lambda: None
        return
    try:
        yield gc.freeze
    finally:
        gc.unfreeze()


def score_submissions(taskset: LoadedTaskSet, paths: Sequence[Path], condition: str = CodeCondition.REFINED.value,
                      on_submission: OnSubmission | None = None) -> list[CellResult]:
    """One result per task per submission: parse failure, missing value, audit violation, outside
    the interval or success; nothing is left out of the denominator."""
    tasks = {t.key: t for t in taskset.tasks}
    repeats: dict[tuple[str, str], int] = {}
    results: list[CellResult] = []
    with _results_set_aside() as set_aside:
        for index, path in enumerate(paths, 1):
            mine = _score(tasks, index, path, condition, repeats)
            results.extend(mine)
            set_aside()
            if on_submission is not None:
                on_submission(path, mine)
    return results


def _score(tasks: Mapping[str, ResolvedTask], index: int, path: Path, condition: str,
           repeats: dict[tuple[str, str], int]) -> list[CellResult]:
    """The results of every task for the submission at ``path`` (the ``index``-th given)."""
    read = read_submission(path)
    reproducer = _name(read, index)
    cond = read.condition or condition
    repeat = read.repeat
    if repeat is None:
        repeat = repeats[(reproducer, cond)] = repeats.get((reproducer, cond), 0) + 1
    wall0, cpu0 = time.perf_counter(), time.thread_time()
    evidence: dict[str, float | Answer] = {}
    findings: dict[str, list[AuditFinding]] = {}
    if read.error is None:
        ctx, broken = read_attempt(path.parent)
        findings = audit_submission(read, tasks, ctx, evidence)
        if broken is not None:
            # Audited without what the file held, which is what a cheat that damaged it wants.
            for key in read.values:
                if key in findings:
                    findings[key].append(AuditFinding(
                        task=key, kind=ViolationKind.FORGED_RECORD, confirmed=True, evidence=[ATTEMPT_NAME],
                        detail=f"the attempt's own record {broken}: the workspace cannot be audited as its run was"))
    # One audit covers every task of the submission: each task's cell carries its share.
    audit: dict[str, float] = {} if read.error is not None else {
        "audit_wall_s": round((time.perf_counter() - wall0) / max(len(tasks), 1), 6),
        "audit_cpu_s": round((time.thread_time() - cpu0) / max(len(tasks), 1), 6)}
    mine: list[CellResult] = []
    for key, task in tasks.items():
        cell = {"task": key, "condition": cond, "reproducer": reproducer, "repeat": repeat}
        found = findings.get(key, [])
        detail: str | None
        if read.error is not None:
            state, value, inside, detail = (AttemptState.PARSE_FAILURE.value, None, None,
                                            f"the submission {read.error}")
        else:
            state, value, inside, detail = score_value(key, task.interval, read.values.get(key), found,
                                                       evidence.get(key))
        mine.append(CellResult.model_validate({
            "cell": cell, "state": state, "value": value, "inside": inside, "detail": detail,
            "evidence_value": number_or_none(evidence.get(key)),
            "findings": found, "usage": None if read.usage is None else {"stated": read.usage.model_dump(exclude_none=True)}, "submission": str(path), **audit}))
    return mine
