"""``rra bench audit-eval`` and ``rra bench packet``: the benchmark measured against people
(human verdicts on the auditor, human reproducers). Parse, call :mod:`rra_tools.bench`, render.

Only click is imported at module level so that ``rra --help`` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ..model.audit_labels import AuditEvaluation, Proportion
    from ..model.packet import Assignment

__all__ = ["audit_eval_command", "render_evaluation"]

#: The corner of the confusion table: rows are the auditor's verdicts, columns the people's.
_CORNER = "auditor \\ people"


def _proportion(name: str, p: Proportion) -> str:
    if p.value is None:
        return f"{name}: undefined (0 cells to count it over)"
    assert p.ci_low is not None and p.ci_high is not None
    return (f"{name}: {p.k}/{p.n} = {p.value * 100:.1f} % [{p.ci_low * 100:.1f}, {p.ci_high * 100:.1f}] "
            "(95 % Wilson interval)")


def render_evaluation(ev: AuditEvaluation) -> str:
    """The figures, the confusion table, the cells counted apart and every disagreement."""
    labelled = sum(r.violation + r.clean + r.uncertain for r in ev.confusion)
    lines = [f"{labelled} labelled cell(s) of {ev.results} (labels: {ev.labels})",
             _proportion("precision", ev.precision), _proportion("recall", ev.recall),
             _proportion("recall counting unconfirmed suspicions as caught", ev.recall_with_suspicions), "",
             f"{_CORNER:<18} {'violation':>9} {'clean':>6} {'uncertain':>9}"]
    for row in ev.confusion:
        lines.append(f"{row.auditor:<18} {row.violation:>9} {row.clean:>6} {row.uncertain:>9}")
    lines.append("")
    lines.append(f"counted apart: {len(ev.uncertain_human)} labelled uncertain by people, {len(ev.not_audited)} "
                 "without a value to audit")
    for cell in ev.uncertain_human:
        lines.append(f"  uncertain: {cell}")
    for cell in ev.not_audited:
        lines.append(f"  not audited: {cell}")
    lines.append("")
    lines.append(f"disagreements ({len(ev.disagreements)}):")
    for d in ev.disagreements:
        who = f" ({d.by})" if d.by else ""
        kind = f" {d.human_kind}" if d.human_kind else ""
        lines.append(f"  {d.cell} [{d.state}]: auditor {d.auditor}, people {d.human}{kind}{who}")
        if d.note:
            lines.append(f"    people: {d.note}")
        for finding in d.findings:
            lines.append(f"    auditor: {finding}")
        if d.evidence:
            lines.append(f"    evidence: {', '.join(d.evidence)}")
    return "\n".join(lines) + "\n"


@click.command("audit-eval")
@click.argument("labels", type=click.Path(exists=True, dir_okay=False))
@click.option("--results", type=click.Path(exists=True, dir_okay=False),
              help="The results file the labelled cells come from (default: the labels file's 'results').")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False),
              help="Also write the evaluation as JSON here.")
def audit_eval_command(labels: str, results: str | None, output: str | None) -> None:
    """Measure the auditor against human verdicts on a sample of cells.

    LABELS (schemas/rra-audit-labels-1.0.schema.json) gives, per cell of a results file of
    rra bench run or score, a person's verdict: violation, clean or uncertain. Prints the
    auditor's precision and recall (its confirmed violations as positives) with 95 % Wilson
    score intervals, the confusion table, the cells counted apart (uncertain to people, or with
    no value to audit) and every disagreement with the auditor's findings and evidence.
    """
    from pathlib import Path

    from ..bench.audit.eval import evaluate_audit, load_labels
    from ..bench.errors import BenchError
    from ..bench.report.build import load_results
    from ..io.atomic import write_atomic

    path = Path(labels)
    model = load_labels(path)
    if results is not None:
        results_path = Path(results)
    elif model.results is not None:
        results_path = path.parent / model.results
    else:
        raise BenchError(f"labels file {labels!r} names no results file", "give --results RESULTS")
    evaluation = evaluate_audit(model, load_results(results_path), labels_source=labels,
                                results_source=str(results_path))
    if output is not None:
        write_atomic(Path(output), (evaluation.model_dump_json(indent=2, exclude_none=True) + "\n").encode())
    click.echo(render_evaluation(evaluation), nl=False)
    if output is not None:
        click.echo(f"wrote {output}")


@click.command("packet")
@click.argument("taskset", type=click.Path(exists=True, dir_okay=False))
@click.option("--person", "people", multiple=True, required=True, metavar="NAME",
              help="A person who will reproduce (repeatable; letters, digits, '.', '_', '-').")
@click.option("--seed", type=int, required=True, help="Seed of the random assignment of conditions (recorded).")
@click.option("--condition", "conditions", multiple=True, metavar="CONDITION",
              help="Conditions to assign (repeatable; default: the task set's): raw, refined or "
              "refined-without-PART[-PART...].")
@click.option("--references", type=click.Path(exists=True, dir_okay=False),
              help="The private references file: read to check that no packet holds a reference value.")
@click.option("-o", "--output", "output", type=click.Path(file_okay=False), required=True,
              help="A new directory for packet-set.json, packets/ (hand these out) and state/ (keep these).")
@click.option("--cache", "cache", type=click.Path(file_okay=False),
              help="Where artifacts named by an OCI reference are pulled, verified and kept, once per digest "
              "(default: bench-<task set id>/artifacts, never under OUTPUT).")
def packet_command(taskset: str, people: tuple[str, ...], seed: int, conditions: tuple[str, ...],
                   references: str | None, output: str, cache: str | None) -> None:
    """Export task packets for human reproducers, conditions assigned at random.

    Every person gets every task of TASKSET, each under one condition drawn from --seed
    (balanced per task; the same seed, people and task set give the same assignment). Each
    packet, OUTPUT/packets/<person>/<task>/, holds the raw code or the refined artifact, the
    paper and TASK.md, and no reference value; the person writes submission.json into it.
    OUTPUT/packet-set.json records who got what, the seed and the method; OUTPUT/state/ keeps
    each packet's files as made, for the auditor. Score the returned packets with
    'rra bench score TASKSET --packets OUTPUT'.
    """
    import re
    from pathlib import Path

    from ..bench import load_taskset
    from ..bench.packet import export_packets
    from .bench_cache import artifact_cache

    for person in people:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", person):
            raise click.BadParameter(f"{person!r} is not a name (letters, digits, '.', '_', '-')",
                                     param_hint="'--person'")
    # Not under OUTPUT (the default of the other commands): a pulled artifact holds its reference
    # observations, and OUTPUT is what is handed out.
    loaded = load_taskset(taskset, references, artifacts=artifact_cache(cache, None))
    def progress(number: int, count: int, a: Assignment) -> None:
        click.echo(f"[{number}/{count}] {a.person}: {a.task} ({a.condition}) packed", err=True)

    packet_set = export_packets(loaded, list(people), Path(output), seed=seed, conditions=list(conditions) or None,
                                on_packet=progress)
    width = max(len(p) for p in packet_set.people)
    for a in packet_set.assignments:
        click.echo(f"{a.person:<{width}}  {a.task}  {a.condition:<7}  {Path(output) / a.packet}")
    click.echo(f"{len(packet_set.assignments)} packet(s) for {len(packet_set.people)} person(s), seed {seed}: "
               f"{Path(output) / 'packet-set.json'}")
