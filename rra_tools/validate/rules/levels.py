"""Which levels (available, functional, reproduced) the artifact actually meets."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from ...answers import AnswerError, answer_mismatch, parse_answer
from ...intervals import aggregate
from ...io.paths import resolve_inside
from ...io.read.run_records import is_successful, read_run_record
from ..context import Context, Finding, strings
from . import check
from ._numbers import as_number
from .experiments import claim_interval
from .files import files
from .pinning import commit_findings, image_findings
from .references import code_source

__all__ = ["LEVELS", "level_reasons", "levels_met", "run_records"]

LEVELS = ("available", "functional", "reproduced")
#: Run-record files read at most; an artifact with more is summarised, not exhausted.
MAX_RUN_RECORDS = 10_000


def run_records(ctx: Context) -> tuple[list[Mapping[str, Any]], list[Finding]]:
    """Run records found in the evidence directory, and RRA602 findings for unreadable ones."""
    if "run_records" in ctx.memo:
        memo: tuple[list[Mapping[str, Any]], list[Finding]] = ctx.memo["run_records"]
        return memo
    records: list[Mapping[str, Any]] = []
    problems: list[Finding] = []
    evidence = ctx.data.get("evidence")
    rel = evidence.get("run_records", "runs") if isinstance(evidence, Mapping) else "runs"
    if ctx.root is not None and isinstance(rel, str):
        resolved = resolve_inside(ctx.root, rel, kind="dir")
        if resolved.path is not None:
            for count, path in enumerate(sorted(resolved.path.rglob("*.json"))):
                if count >= MAX_RUN_RECORDS:
                    break
                record = read_run_record(ctx.root, path)
                if isinstance(record, str):
                    problems.append(Finding("RRA602", record, ("evidence", "run_records")))
                else:
                    records.append(record)
    ctx.memo["run_records"] = (records, problems)
    return records, problems


def level_reasons(ctx: Context) -> dict[str, list[str]]:
    """For each level, why it is not met (an empty list means it is met)."""
    if "level_reasons" in ctx.memo:
        memo: dict[str, list[str]] = ctx.memo["level_reasons"]
        return memo
    available: list[str] = []
    if ctx.root is None:
        available.append("there is no artifact directory to check files in")
    if list(code_source(ctx)) or commit_findings(ctx):
        available.append("the code is not pinned to a full upstream commit or shipped tree")
    if ctx.section("environment").get("lock") is None:
        available.append("the environment has no lock file")
    file_problems = files(ctx)
    if file_problems:
        codes = sorted({f.code for f in file_problems})
        available.append(f"{len(file_problems)} referenced file(s) are missing, escape the root or do not match "
                         f"their digest ({', '.join(codes)})")
    if image_findings(ctx):
        available.append("the container image is not pinned by digest")
    for _, source in ctx.items("data"):
        if source.get("shipped") is True:
            continue
        if source.get("access") == "restricted":
            available.append(f"data source {source.get('id')!r} is restricted and not shipped")
        elif not source.get("url") and not source.get("doi"):
            available.append(f"data source {source.get('id')!r} is neither shipped nor given a url or doi")
    functional = list(available and ["the 'available' level is not met"])
    records, _ = run_records(ctx)
    good: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        if is_successful(record):
            good.setdefault(record["launcher"], []).append(record)
    for _, launcher in ctx.items("launchers"):
        ident = launcher.get("id")
        if isinstance(ident, str) and ident not in good:
            functional.append(f"launcher {ident!r} has no successful run record")
    reproduced = list(functional and ["the 'functional' level is not met"])
    claims = list(ctx.items("claims"))
    if not claims:
        reproduced.append("there are no claims to reproduce")
    explained = {ref for _, d in ctx.items("discrepancies") for _, ref in strings(d.get("claims"))}
    for _, claim in claims:
        reproduced.extend(_claim_reason(claim, good, explained))
    reasons = {"available": available, "functional": functional, "reproduced": reproduced}
    ctx.memo["level_reasons"] = reasons
    return reasons


def _claim_reason(claim: Mapping[str, Any], good: Mapping[str, list[Mapping[str, Any]]],
                  explained: AbstractSet[str] = frozenset()) -> Iterator[str]:
    ident, launcher = claim.get("id"), claim.get("launcher")
    if not isinstance(ident, str):
        return  # the schema layer reports the malformed id
    kind = claim.get("kind", "number")
    if kind in ("string", "set", "list"):
        yield from _answer_reason(claim, ident, kind, good.get(launcher, []) if isinstance(launcher, str) else [])
        return
    values = []
    for record in good.get(launcher, []) if isinstance(launcher, str) else []:
        metrics = record.get("metrics")
        value = as_number(metrics.get(ident)) if isinstance(metrics, Mapping) else None
        if value is not None and math.isfinite(value):
            values.append(value)
    if not values:
        yield f"claim {ident!r} has no obtained value in the run records"
        return
    interval = claim_interval(claim)
    if interval is None:
        yield f"claim {ident!r} has no acceptance interval (too few valid observations)"
        return
    how = claim.get("aggregate", "mean")
    try:
        obtained = aggregate(values, how if isinstance(how, str) else "mean")
    except ValueError as exc:
        yield f"claim {ident!r}: {exc}"
        return
    if not interval.contains(obtained):
        yield (f"claim {ident!r}: obtained {obtained:.6g} lies outside [{interval.low:.6g}, {interval.high:.6g}]")
        return
    # The runs agree with the observations; the paper's number must too (1.2): observations that
    # do not cover it reproduce the artifact, not the paper, unless a discrepancy says why.
    reported = claim.get("reported")
    value = as_number(reported.get("value")) if isinstance(reported, Mapping) else None
    if value is not None and math.isfinite(value) and ident not in explained and not interval.contains(value):
        yield (f"claim {ident!r}: the paper's {value:g} lies outside [{interval.low:.6g}, {interval.high:.6g}], the "
               "interval of its observations, and no discrepancy explains it (RRA506)")


def _answer_reason(claim: Mapping[str, Any], ident: str, kind: str,
                   records: list[Mapping[str, Any]]) -> Iterator[str]:
    """Why a string, set or list claim is not reproduced: every successful record's answer must
    match the reported one (spec/04-levels.md#levels); run records of this version hold numbers."""
    reported = claim.get("reported")
    try:
        expected = parse_answer(reported.get("value") if isinstance(reported, Mapping) else None, kind)
    except AnswerError:
        yield f"claim {ident!r} has no valid reported answer"
        return
    precision = reported.get("precision") if isinstance(reported, Mapping) else 0
    answers = []
    for record in records:
        metrics = record.get("metrics")
        if isinstance(metrics, Mapping) and ident in metrics:
            try:
                answers.append(parse_answer(metrics[ident], kind))
            except AnswerError:
                continue
    if not answers:
        yield f"claim {ident!r} (kind {kind}) has no answer in the run records, which hold numbers only"
        return
    for answer in answers:
        why = answer_mismatch(kind, expected, answer, precision if isinstance(precision, int) else 0)
        if why is not None:
            yield f"claim {ident!r}: an obtained answer does not match: {why}"
            return


def levels_met(ctx: Context) -> list[str]:
    """The levels the artifact meets, lowest first."""
    reasons = level_reasons(ctx)
    return [level for level in LEVELS if not reasons[level]]


@check("RRA601", "RRA602")
def claimed_levels(ctx: Context) -> Iterator[Finding]:
    """Every claimed level is met; run records are readable."""
    _, problems = run_records(ctx)
    yield from problems
    claimed = ctx.data.get("levels")
    if not isinstance(claimed, list):
        return
    reasons = level_reasons(ctx)
    for i, level in enumerate(claimed):
        if isinstance(level, str) and reasons.get(level):
            why = reasons[level]
            more = f" (and {len(why) - 3} more)" if len(why) > 3 else ""
            yield Finding("RRA601", f"level {level!r} is claimed but not met: " + "; ".join(why[:3]) + more,
                          ("levels", i), "remove the level or supply what it needs")
