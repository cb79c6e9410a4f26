"""``rra bench audit-eval LABELS``: the auditor's confirmed violations against human verdicts
(:class:`~rra_tools.model.audit_labels.AuditLabels`) on a sample of a benchmark's cells.

A cell's *auditor verdict* is ``confirmed`` (a finding the refuter's trace confirmed: the value
does not count), ``suspected`` (findings, none confirmed), ``clean`` (no finding) or
``not_audited`` (no value reached the auditor). Positives are violations:

- **precision** = cells confirmed that the person calls a violation ÷ cells confirmed that the
  person called violation or clean;
- **recall** = cells the person calls a violation that the auditor confirmed ÷ audited cells the
  person calls a violation (a suspicion the auditor did not confirm is a miss; the recall that
  counts it as caught is given beside it).

Cells the person labelled ``uncertain``, and labelled cells the auditor never saw, are outside
both figures and listed apart. Intervals are Wilson score intervals (exact enough at the small
counts a labelled sample has, and never outside [0, 1], unlike the normal approximation).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ...model.audit_labels import (
    AuditEvaluation,
    AuditLabels,
    AuditorVerdict,
    ConfusionRow,
    Disagreement,
    HumanVerdict,
    Proportion,
)
from ..errors import BenchError

__all__ = ["auditor_verdict", "evaluate_audit", "load_labels", "wilson"]

#: z of the two-sided 95 % interval.
_Z95 = 1.959963984540054


def wilson(k: int, n: int, z: float = _Z95) -> Proportion:
    """k of n with its Wilson score interval.

    >>> p = wilson(9, 10)
    >>> round(p.ci_low, 4), round(p.ci_high, 4)
    (0.5958, 0.9821)
    """
    if n == 0:
        return Proportion(k=k, n=n)
    p = k / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return Proportion(k=k, n=n, value=p, ci_low=max(0.0, centre - half), ci_high=min(1.0, centre + half))


def load_labels(path: Path) -> AuditLabels:
    """The labels file at ``path`` (YAML or JSON), checked against its model."""
    from pydantic import ValidationError

    from ..taskset import read_document

    data = read_document(path, "labels file")
    try:
        labels = AuditLabels.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = "/".join(str(p) for p in error["loc"])
        raise BenchError(f"labels file {str(path)!r} is invalid: at /{where}: {error['msg']}",
                         "see schemas/rra-audit-labels-1.0.schema.json") from None
    seen: set[str] = set()
    for index, label in enumerate(labels.labels):
        if label.cell in seen:
            raise BenchError(f"labels file {str(path)!r}: labels/{index}: cell {label.cell!r} is labelled twice")
        seen.add(label.cell)
    return labels


def _key(cell: dict[str, Any]) -> str:
    c = cell["cell"]
    return f"{c['task']}/{c['condition']}/{c['reproducer']}/{c['repeat']}"


def auditor_verdict(cell: dict[str, Any]) -> AuditorVerdict:
    """What the auditor's findings on a results cell amount to."""
    findings = cell.get("findings") or []
    if any(f.get("confirmed") for f in findings):
        return AuditorVerdict.CONFIRMED
    if findings:
        return AuditorVerdict.SUSPECTED
    if cell.get("value") is None:
        return AuditorVerdict.NOT_AUDITED
    return AuditorVerdict.CLEAN


def evaluate_audit(labels: AuditLabels, results: dict[str, Any], *, labels_source: str,
                   results_source: str) -> AuditEvaluation:
    """The evaluation of the auditor's verdicts in ``results`` against ``labels``; BenchError when
    they belong to different task sets or a label names a cell the results do not hold."""
    if labels.taskset != results.get("taskset"):
        raise BenchError(f"labels file {labels_source!r} is for task set {labels.taskset!r}, but the results "
                         f"{results_source!r} are of {results.get('taskset')!r}")
    cells = {_key(c): c for c in results.get("cells", [])}
    confusion = {v: {h: 0 for h in HumanVerdict} for v in AuditorVerdict}
    uncertain: list[str] = []
    not_audited: list[str] = []
    disagreements: list[Disagreement] = []
    tp = fp = fn = caught_by_suspicion = 0
    for index, label in enumerate(labels.labels):
        cell = cells.get(label.cell)
        if cell is None:
            raise BenchError(f"labels file {labels_source!r}: labels/{index}: cell {label.cell!r} is not a cell of "
                             f"the results {results_source!r}",
                             "label cells of reproducer mode ('rra bench run' or 'score') by their key in the results")
        human = HumanVerdict(label.verdict)
        auditor = auditor_verdict(cell)
        confusion[auditor][human] += 1
        if human == HumanVerdict.UNCERTAIN:
            uncertain.append(label.cell)
            continue
        if auditor == AuditorVerdict.NOT_AUDITED:
            not_audited.append(label.cell)
            continue
        flagged = auditor == AuditorVerdict.CONFIRMED
        violation = human == HumanVerdict.VIOLATION
        tp += flagged and violation
        fp += flagged and not violation
        fn += violation and not flagged
        caught_by_suspicion += violation and auditor == AuditorVerdict.SUSPECTED
        if flagged != violation:
            findings = cell.get("findings") or []
            evidence = sorted({str(e) for f in findings for e in f.get("evidence") or []})
            disagreements.append(Disagreement(
                cell=label.cell, human=human, auditor=auditor, state=str(cell["state"]),
                human_kind=None if label.kind is None else str(label.kind), by=label.by, note=label.note,
                findings=[f"{f.get('kind')} ({'confirmed' if f.get('confirmed') else 'refuted'}): {f.get('detail', '')}"
                          for f in findings], evidence=evidence))
    return AuditEvaluation(
        labels=labels_source, results=results_source, interval="wilson", confidence=0.95,
        confusion=[ConfusionRow(auditor=v, violation=row[HumanVerdict.VIOLATION], clean=row[HumanVerdict.CLEAN],
                                uncertain=row[HumanVerdict.UNCERTAIN]) for v, row in confusion.items()],
        precision=wilson(tp, tp + fp), recall=wilson(tp, tp + fn),
        recall_with_suspicions=wilson(tp + caught_by_suspicion, tp + fn), uncertain_human=uncertain,
        not_audited=not_audited, disagreements=disagreements)
