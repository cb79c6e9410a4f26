"""What the run records say about each claim: obtained values, interval, inside or outside."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ..intervals import Interval, acceptance_interval, aggregate
from ..io.run_records import is_successful, read_run_record
from .plan import Artifact

__all__ = ["ClaimResult", "Results", "collect_results", "latest_successful"]


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
    #: (seed, value, record path relative to the root) of each newest successful run.
    values: list[tuple[int | None, float, str]]
    obtained: float | None
    problem: str | None

    @property
    def inside(self) -> bool | None:
        """Whether the obtained value lies inside the interval; None when there is no verdict."""
        if self.obtained is None or self.interval is None:
            return None
        return self.interval.contains(self.obtained)

    def as_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        iv = self.interval
        return {
            "claim": self.claim, "launcher": self.launcher, "unit": self.unit,
            "reported": self.reported, "precision": self.precision,
            "interval": None if iv is None else {"low": iv.low, "high": iv.high, "center": iv.center,
                                                 "half_width": iv.half_width, "n": iv.n,
                                                 "class": "stable" if iv.stable else "variable"},
            "aggregate": self.aggregate,
            "values": [{"seed": s, "value": v, "record": r} for s, v, r in self.values],
            "obtained": self.obtained, "inside": self.inside, "problem": self.problem,
        }


@dataclass
class Results:
    """Every claim's result and the levels the artifact meets."""

    claims: list[ClaimResult] = field(default_factory=list)
    levels_claimed: list[str] = field(default_factory=list)
    levels_met: list[str] = field(default_factory=list)
    records: int = 0

    def as_dict(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        return {"claims": [c.as_dict() for c in self.claims], "records": self.records,
                "levels": {"claimed": self.levels_claimed, "met": self.levels_met}}


def _plain(value: object) -> str:
    # Defaults of enum fields are not converted by use_enum_values; read the value either way.
    return str(value.value) if isinstance(value, Enum) else str(value)


def latest_successful(artifact: Artifact) -> tuple[dict[tuple[str, int | None], tuple[Mapping[str, Any], str]], int]:
    """The newest successful record per (launcher, seed), with its path; and the record count."""
    runs = artifact.runs_dir
    best: dict[tuple[str, int | None], tuple[Mapping[str, Any], str]] = {}
    count = 0
    if not runs.is_dir():
        return best, 0
    for path in sorted(runs.rglob("*.json")):
        record = read_run_record(artifact.root, path)
        if isinstance(record, str):
            continue
        count += 1
        if not is_successful(record):
            continue
        seed = record.get("seed")
        key = (record["launcher"], seed if isinstance(seed, int) and not isinstance(seed, bool) else None)
        when = str(record.get("ended", ""))
        held = best.get(key)
        if held is None or when >= str(held[0].get("ended", "")):
            best[key] = (record, path.relative_to(artifact.root).as_posix())
    return best, count


def collect_results(artifact: Artifact) -> Results:
    """Per claim: reported value, acceptance interval, obtained value(s) and verdict; and levels."""
    from ..validate.api import validate_path

    newest, count = latest_successful(artifact)
    results = Results(records=count, levels_claimed=[_plain(x) for x in artifact.manifest.levels])
    for claim in artifact.manifest.claims:
        observations = [o.value for o in claim.reference.observations]
        interval = None
        if len(observations) >= 2 and all(math.isfinite(v) for v in observations):
            interval = acceptance_interval(observations, claim.reported.precision)
        values: list[tuple[int | None, float, str]] = []
        for (launcher, seed), (record, where) in sorted(newest.items(), key=lambda kv: (kv[0][0], kv[0][1] or -1)):
            if launcher != claim.launcher:
                continue
            metrics = record.get("metrics")
            value = metrics.get(claim.id) if isinstance(metrics, Mapping) else None
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                values.append((seed, float(value), where))
        obtained, problem = None, None
        if not values:
            problem = "no successful run record has a value"
        else:
            try:
                obtained = aggregate([v for _, v, _ in values], _plain(claim.aggregate))
            except ValueError as exc:
                problem = str(exc)
        if interval is None and problem is None:
            problem = "no acceptance interval (fewer than 2 finite observations)"
        results.claims.append(ClaimResult(
            claim=claim.id, launcher=claim.launcher, unit=claim.metric.unit, reported=claim.reported.value,
            precision=claim.reported.precision, interval=interval, aggregate=_plain(claim.aggregate),
            values=values, obtained=obtained, problem=problem))
    validation = validate_path(artifact.root)
    results.levels_met = list(validation.levels_met or [])
    return results
