"""Scoring one submitted value: parse failure, missing value, audit violation, outside the
interval or success, each reported apart; and totals in which every cell counts.

A task whose claim is of kind string, set or list (RRA 1.2) has an :class:`AnswerInterval`, its
expected answer, for an interval: a value of the kind's shape that does not match it is
``outside_interval`` (the detail says what differs), one of another shape (a number for a list, a
string for a number claim) a ``parse_failure``, as a string for a number claim always was."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..answers import Answer, AnswerInterval, answer_text
from ..intervals import Interval
from .submissions import AnswerEntry, Entry
from ..model.bench_results import RUN_STATES, AttemptState, AuditFinding, CellResult, GroupTotals, Totals

__all__ = ["group_totals", "score_value", "totals"]


_SUCCESS, _OUTSIDE = AttemptState.SUCCESS.value, AttemptState.OUTSIDE_INTERVAL.value


def score_value(task: str, interval: Interval, entry: Entry | AnswerEntry | str | None,
                findings: Sequence[AuditFinding], evidence: float | Answer | None = None,
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
    if isinstance(entry, AnswerEntry) or isinstance(interval, AnswerInterval) or isinstance(evidence, (str, tuple)):
        return _score_answer(interval, entry, findings, evidence)
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


def _score_answer(interval: Interval, entry: Entry | AnswerEntry, findings: Sequence[AuditFinding],
                  evidence: float | Answer | None) -> tuple[str, float | None, bool | None, str | None]:
    """:func:`score_value` of a task whose claim is not a number, or of an answer given for a task
    whose claim is."""
    if not isinstance(interval, AnswerInterval):
        assert isinstance(entry, AnswerEntry)
        return AttemptState.PARSE_FAILURE.value, None, None, entry.not_a_number()
    value = entry.value
    shape = str if interval.kind == "string" else tuple
    if not isinstance(value, shape) and not (shape is str and isinstance(value, float)):
        what = "a number" if isinstance(value, float) else "a string" if isinstance(value, str) else "a JSON array"
        wanted = "a string" if shape is str else "a JSON array"
        return (AttemptState.PARSE_FAILURE.value, None, None,
                f"value {value!r} is {what}, not {wanted}: the claim is of kind {interval.kind}")
    judged = value if evidence is None else evidence
    why = interval.mismatch(judged)
    number = value if isinstance(value, float) else None
    confirmed = [f for f in findings if f.confirmed] if findings else findings
    if confirmed:
        first = confirmed[0]
        more = f" (and {len(confirmed) - 1} more)" if len(confirmed) > 1 else ""
        return AttemptState.AUDIT_VIOLATION.value, number, why is None, f"{first.kind}: {first.detail}{more}"
    if why is None:
        return _SUCCESS, number, True, None
    shown = "" if judged == value else f"the evidence's answer (submitted as {answer_text(value)}): "
    return _OUTSIDE, number, False, f"{shown}{why}"


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
