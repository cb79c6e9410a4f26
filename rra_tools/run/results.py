"""What the run records say about each claim: obtained values, interval, inside or outside."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from ..answers import Answer, AnswerError, answer_mismatch, parse_answer
from ..intervals import Interval, acceptance_interval, aggregate
from ..model.manifest_view import ClaimSpec
from ..io.paths import resolve_inside
from ..io.read.run_records import is_successful, read_run_record
from .extract import ExtractError, extract_answer
from .pending import Unfinished, finish_orphaned_runs
from .plan import Artifact

__all__ = ["ClaimResult", "Results", "claim_answers", "claim_values", "collect_results", "latest_successful"]


@dataclass(frozen=True)
class ClaimResult:
    """One claim against the evidence."""

    claim: str
    launcher: str
    unit: str
    reported: float
    precision: int
    interval: Interval | None
    aggregate: str
    #: (seed, repeat, value, record path relative to the root) of each newest successful run, by
    #: seed (a stochastic launcher) or by repeat (a seedless one).
    values: list[tuple[int | None, int | None, float, str]]
    obtained: float | None
    problem: str | None
    #: Runs of the claim's launcher whose newest record did not succeed, newest first per seed:
    #: (seed, status, record path relative to the root, whether an older successful run of that
    #: seed is counted instead). A verdict from the other seeds does not hide them.
    not_counted: list[tuple[int | None, str, str, bool]] = field(default_factory=list)
    #: The claim's kind (RRA 1.2); a string, set or list claim has no interval and no numbers:
    #: ``expected`` is its reported answer and ``answer`` the one its records' outputs give (the
    #: first that does not match, else the newest record's).
    kind: str = "number"
    expected: Answer | None = None
    answer: Answer | None = None

    @property
    def inside(self) -> bool | None:
        """Whether the obtained value lies inside the interval (an answer: matches the reported
        one); None when there is no verdict."""
        if self.kind != "number":
            if self.answer is None or self.expected is None:
                return None
            return answer_mismatch(self.kind, self.expected, self.answer, self.precision) is None
        if self.obtained is None or self.interval is None:
            return None
        return self.interval.contains(self.obtained)

    def as_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        if self.kind != "number":
            return {"claim": self.claim, "launcher": self.launcher, "kind": self.kind,
                    "reported": _jsonable(self.expected), "precision": self.precision,
                    "obtained": _jsonable(self.answer), "inside": self.inside, "problem": self.problem,
                    "not_counted": [{"seed": seed, "status": status, "record": record, "older_success_counted": older}
                                    for seed, status, record, older in self.not_counted]}
        iv = self.interval
        return {
            "claim": self.claim, "launcher": self.launcher, "unit": self.unit,
            "reported": self.reported, "precision": self.precision,
            "interval": None if iv is None else {"low": iv.low, "high": iv.high, "center": iv.center,
                                                 "half_width": iv.half_width, "n": iv.n,
                                                 "class": "stable" if iv.stable else "variable"},
            "aggregate": self.aggregate,
            "values": [{"seed": s, "repeat": n, "value": v, "record": r} for s, n, v, r in self.values],
            "obtained": self.obtained, "inside": self.inside, "problem": self.problem,
            "not_counted": [{"seed": seed, "status": status, "record": record, "older_success_counted": older}
                            for seed, status, record, older in self.not_counted],
        }


@dataclass
class Results:
    """Every claim's result and the levels the artifact meets."""

    claims: list[ClaimResult] = field(default_factory=list)
    levels_claimed: list[str] = field(default_factory=list)
    levels_met: list[str] = field(default_factory=list)
    records: int = 0
    #: Records whose run did not succeed (failed, non-zero exit, timeout, interrupted).
    unsuccessful: int = 0
    #: Run directories without a record (see :func:`rra_tools.run.pending.finish_orphaned_runs`).
    unfinished: list[Unfinished] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        return {"claims": [c.as_dict() for c in self.claims], "records": self.records,
                "unsuccessful_records": self.unsuccessful,
                "unfinished_runs": [{"directory": u.directory, "state": u.state, "record": u.record}
                                    for u in self.unfinished],
                "levels": {"claimed": self.levels_claimed, "met": self.levels_met}}


def _plain(value: object) -> str:
    # Defaults of enum fields are not converted by use_enum_values; read the value either way.
    return str(value.value) if isinstance(value, Enum) else str(value)


#: (launcher, seed, repeat): the runs that count once each, newest first.
Key = tuple[str, "int | None", "int | None"]


def _index(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _order(key: Key) -> tuple[str, int, int]:
    return key[0], -1 if key[1] is None else key[1], -1 if key[2] is None else key[2]


def as_finite(value: Any) -> float | None:
    """A record's metric as a finite binary64, or None (not a number, infinite, or an integer
    too large for binary64: a record is JSON anyone may have written).

    >>> as_finite(2), as_finite(float("nan")), as_finite(10**400), as_finite(True)
    (2.0, None, None, None)
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


@dataclass
class _Scan:
    """Every record of the artifact, read once."""

    #: Newest successful record per (launcher, seed, repeat), with its path.
    best: dict[Key, tuple[Mapping[str, Any], str]] = field(default_factory=dict)
    #: Newest record of any outcome per (launcher, seed, repeat): (ended, status, path, successful).
    newest: dict[Key, tuple[str, str, str, bool]] = field(default_factory=dict)
    count: int = 0
    unsuccessful: int = 0


def _scan(artifact: Artifact) -> _Scan:
    runs = artifact.runs_dir
    scan = _Scan()
    if not runs.is_dir():
        return scan
    for path in sorted(runs.rglob("*.json")):
        record = read_run_record(artifact.root, path)
        if isinstance(record, str):
            continue
        scan.count += 1
        # A record without a repeat (of a stochastic launcher, or of format 1.0) has repeat None.
        key = (record["launcher"], _index(record.get("seed")), _index(record.get("repeat")))
        when = str(record.get("ended", ""))
        where = path.relative_to(artifact.root).as_posix()
        ok = is_successful(record)
        if not ok:
            scan.unsuccessful += 1
        latest = scan.newest.get(key)
        if latest is None or when >= latest[0]:
            status = str(record.get("status", "?"))
            if status == "completed":
                status = f"completed with exit status {record.get('exit_status')}"
            scan.newest[key] = (when, status, where, ok)
        if not ok:
            continue
        held = scan.best.get(key)
        if held is None or when >= str(held[0].get("ended", "")):
            scan.best[key] = (record, where)
    return scan


def latest_successful(artifact: Artifact) -> tuple[dict[Key, tuple[Mapping[str, Any], str]], int]:
    """The newest successful record per (launcher, seed, repeat), with its path; and the record count."""
    scan = _scan(artifact)
    return scan.best, scan.count


def claim_values(claim_id: str, launcher_id: str,
                 best: Mapping[Key, tuple[Mapping[str, Any], str]]) -> list[tuple[int | None, int | None, float, str]]:
    """(seed, repeat, value, record path) of each record in ``best`` (see :func:`latest_successful`)
    of the launcher ``launcher_id`` whose ``metrics[claim_id]`` is a finite number, in order."""
    values: list[tuple[int | None, int | None, float, str]] = []
    for (launcher, seed, repeat), (record, where) in sorted(best.items(), key=lambda kv: _order(kv[0])):
        if launcher != launcher_id:
            continue
        metrics = record.get("metrics")
        number = as_finite(metrics.get(claim_id)) if isinstance(metrics, Mapping) else None
        if number is not None:
            values.append((seed, repeat, number, where))
    return values


def _jsonable(answer: Answer | None) -> str | list[float | str] | None:
    return list(answer) if isinstance(answer, tuple) else answer


def _answer_file(root: Path, record: Mapping[str, Any], where: str, claim: ClaimSpec) -> Path | str:
    """The file of a record that holds the claim's answer: its captured stream, or the output the
    claim reads (as the record lists it, never outside the artifact); else why there is none."""
    if claim.extract.stream is not None:
        return (root / where).parent / f"{claim.extract.stream}.log"
    for output in record.get("outputs") or []:
        if isinstance(output, Mapping) and output.get("id") == claim.extract.output and isinstance(output.get("path"), str):
            resolved = resolve_inside(root, output["path"])
            return resolved.path if resolved.path is not None else f"output {output['path']!r} {resolved.detail}"
    return f"lists no output {claim.extract.output!r}"


def claim_answers(artifact: Artifact, claim: ClaimSpec, best: Mapping[Key, tuple[Mapping[str, Any], str]]
                  ) -> tuple[list[tuple[int | None, int | None, Answer, str]], list[str]]:
    """(seed, repeat, answer, record path) of each record in ``best`` of the claim's launcher
    whose output holds an answer of a string, set or list claim (read by the claim's rule), in
    order; and why each other record gives none ('<record>: <why>')."""
    answers: list[tuple[int | None, int | None, Answer, str]] = []
    problems: list[str] = []
    for (launcher, seed, repeat), (record, where) in sorted(best.items(), key=lambda kv: _order(kv[0])):
        if launcher != claim.launcher:
            continue
        path = _answer_file(artifact.root, record, where, claim)
        if isinstance(path, str):
            problems.append(f"{where}: {path}")
            continue
        try:
            answers.append((seed, repeat, extract_answer(path, claim.extract, claim.kind), where))
        except ExtractError as exc:
            problems.append(f"{where}: {path.relative_to(artifact.root).as_posix()} {exc}")
    return answers, problems


def _reported_answer(artifact: Artifact, claim: ClaimSpec) -> Answer | None:
    """The reported answer of a string, set or list claim, as the manifest writes it (the run
    path's view holds numbers only)."""
    for raw in artifact.data.get("claims") or []:
        if isinstance(raw, Mapping) and raw.get("id") == claim.id and isinstance(raw.get("reported"), Mapping):
            try:
                return parse_answer(raw["reported"].get("value"), claim.kind)
            except AnswerError:
                return None
    return None


def _not_counted(claim: ClaimSpec, scan: _Scan) -> list[tuple[int | None, str, str, bool]]:
    return [(seed, status, where, (claim.launcher, seed, repeat) in scan.best)
            for (launcher, seed, repeat), (_, status, where, ok) in sorted(scan.newest.items(),
                                                                         key=lambda kv: _order(kv[0]))
            if launcher == claim.launcher and not ok]


def _answer_result(artifact: Artifact, claim: ClaimSpec, newest: Mapping[Key, tuple[Mapping[str, Any], str]],
                   not_counted: list[tuple[int | None, str, str, bool]]) -> ClaimResult:
    expected = _reported_answer(artifact, claim)
    answers, problems = claim_answers(artifact, claim, newest)
    answer, problem = None, None
    if not answers:
        problem = "no successful run record's output holds an answer" + (f" ({problems[0]})" if problems else "")
    else:
        answer = answers[-1][2]
        for _, _, got, where in answers:
            why = None if expected is None else answer_mismatch(claim.kind, expected, got, claim.reported.precision)
            if why is not None:
                answer, problem = got, f"{where}: {why}"
                break
    if expected is None and problem is None:
        problem = f"the reported value is not an answer of kind {claim.kind}"
    return ClaimResult(claim=claim.id, launcher=claim.launcher, unit=claim.metric.unit, reported=math.nan,
                       precision=claim.reported.precision, interval=None, aggregate=_plain(claim.aggregate), values=[],
                       obtained=None, problem=problem, not_counted=not_counted, kind=claim.kind, expected=expected,
                       answer=answer)


def collect_results(artifact: Artifact) -> Results:
    """Per claim: reported value, acceptance interval, obtained value(s) and verdict; and levels."""
    from ..validate.api import validate_path

    unfinished = finish_orphaned_runs(artifact)
    scan = _scan(artifact)
    newest = scan.best
    results = Results(records=scan.count, unsuccessful=scan.unsuccessful, unfinished=unfinished,
                      levels_claimed=[_plain(x) for x in artifact.manifest.levels])
    for claim in artifact.manifest.claims:
        if claim.kind != "number":
            results.claims.append(_answer_result(artifact, claim, newest, _not_counted(claim, scan)))
            continue
        observations = [o.value for o in claim.reference.observations]
        interval = None
        if len(observations) >= 2 and all(math.isfinite(v) for v in observations):
            interval = acceptance_interval(observations, claim.reported.precision)
        values = claim_values(claim.id, claim.launcher, newest)
        obtained, problem = None, None
        if not values:
            problem = "no successful run record has a value"
        else:
            try:
                obtained = aggregate([v for _, _, v, _ in values], _plain(claim.aggregate))
            except ValueError as exc:
                problem = str(exc)
        if interval is None and problem is None:
            problem = "no acceptance interval (fewer than 2 finite observations)"
        not_counted = _not_counted(claim, scan)
        results.claims.append(ClaimResult(
            claim=claim.id, launcher=claim.launcher, unit=claim.metric.unit, reported=claim.reported.value,
            precision=claim.reported.precision, interval=interval, aggregate=_plain(claim.aggregate),
            values=values, obtained=obtained, problem=problem, not_counted=not_counted))
    validation = validate_path(artifact.root)
    results.levels_met = list(validation.levels_met or [])
    return results
