"""Scoring one submitted value: parse failure, missing value, audit violation, outside the
interval or success, each reported apart; and totals in which every cell counts."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..intervals import Interval
from .submissions import Entry
from ..model.bench_results import RUN_STATES, AttemptState, AuditFinding, CellResult, GroupTotals, Totals

__all__ = ["group_totals", "score_value", "totals"]


_SUCCESS, _OUTSIDE = AttemptState.SUCCESS.value, AttemptState.OUTSIDE_INTERVAL.value


def score_value(task: str, interval: Interval, entry: Entry | str | None,
                findings: Sequence[AuditFinding], evidence: float | None = None,
                ) -> tuple[str, float | None, bool | None, str | None]:
    """(state, value, inside, detail) of the value submitted for ``task`` (None: no entry; a string:
    why the entry does not parse); the state is an :class:`AttemptState` value (a string: reading
    an enum member costs more than the rest of the scoring). A confirmed finding makes it an audit
    violation whether or not the value lies inside the interval; ``inside`` still says which.

    ``evidence`` is the value the submitted one's evidence yields (the auditor reads it with the
    claim's rule): when given, it is what the interval judges, not the submitted value, whose
    rounding is the submitter's to choose (the auditor has checked that the two agree to the
    claim's printed precision)."""
    if entry is None:
        return AttemptState.MISSING_VALUE.value, None, None, f"the submission has no value for task {task!r}"
    if isinstance(entry, str):
        return AttemptState.PARSE_FAILURE.value, None, None, entry
    value = entry.value
    judged = value if evidence is None else evidence
    inside = interval.contains(judged)
    confirmed = [f for f in findings if f.confirmed] if findings else findings
    if confirmed:
        first = confirmed[0]
        more = f" (and {len(confirmed) - 1} more)" if len(confirmed) > 1 else ""
        return AttemptState.AUDIT_VIOLATION.value, value, inside, f"{first.kind}: {first.detail}{more}"
    if inside:
        return _SUCCESS, value, True, None
    shown = f"{value!r}" if judged == value else f"the evidence's {judged!r} (submitted as {value!r})"
    return (_OUTSIDE, value, False, f"{shown} is outside [{interval.low!r}, {interval.high!r}]")


def totals(states: Iterable[str], listed: Sequence[AttemptState] = RUN_STATES) -> Totals:
    """Every state of ``listed`` (zero when absent; a state outside it is added), their sum, and
    the success rate."""
    counts = {state.value: 0 for state in listed}
    for state in states:
        counts[str(state)] = counts.get(str(state), 0) + 1
    total = sum(counts.values())
    return Totals(attempts=total, states=counts,
                  success_rate=counts[AttemptState.SUCCESS.value] / total if total else None)


def group_totals(cells: Sequence[CellResult]) -> list[GroupTotals]:
    """Totals per (reproducer, condition), in the order they first appear."""
    groups: dict[tuple[str, str], list[str]] = {}
    for result in cells:
        groups.setdefault((result.cell.reproducer, str(result.cell.condition)), []).append(str(result.state))
    return [GroupTotals.model_validate({"reproducer": r, "condition": c, "totals": totals(states)})
            for (r, c), states in groups.items()]
