"""``rra change record|verify``, ``rra discrepancy add``, ``rra reference add``: parse, call
:mod:`rra_tools.builder`, render. Only click is imported at module level."""

from __future__ import annotations

import click

__all__ = ["change", "discrepancy", "reference"]

KINDS = ("dependency-pin", "loader-repair", "bug-fix", "config", "path", "performance", "other")
ARTIFACT_HELP = "The artifact directory (a git checkout of the upstream repository)."


@click.group()
def change() -> None:
    """Record repairs of the upstream code as a patch series with change records, and prove it."""


@change.command("record")
@click.argument("change_id", metavar="ID")
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option("-C", "--artifact", default=".", show_default=True, type=click.Path(file_okay=False),
              help=ARTIFACT_HELP)
@click.option("--kind", required=True, type=click.Choice(KINDS), help="What sort of change it is.")
@click.option("--rationale", default="", help="Why the change was needed (required; a record without one is "
              "refused).")
@click.option("--evidence", default=None, help="What shows it works: an error it fixes, a run record path.")
@click.option("--evidence-file", type=click.Path(dir_okay=False), default=None,
              help="A log whose end (at most 4000 characters) is the evidence.")
@click.option("--alters-method", required=True, type=click.Choice(["yes", "no", "unknown"]),
              help="Whether the change may alter what the paper's method computes.")
@click.option("--summary", default=None, help="One line saying what changed.  [default: the rationale's first line]")
@click.option("--launcher", "launchers", multiple=True, metavar="ID", help="An affected launcher (repeatable).")
@click.option("--claim", "claims", multiple=True, metavar="ID", help="An affected claim (repeatable).")
def change_record(change_id: str, paths: tuple[str, ...], artifact: str, kind: str, rationale: str,
                  evidence: str | None, evidence_file: str | None, alters_method: str, summary: str | None,
                  launchers: tuple[str, ...], claims: tuple[str, ...]) -> None:
    """Write what the working tree changed since the upstream commit and the recorded patches
    (only PATHs, when given) as the next patch patches/NNNN-ID.patch, and add it to
    code.patches with its change record in 'changes'. The manifest keeps its comments and is
    replaced atomically."""
    from pathlib import Path

    from ..builder.changes import ChangeInput, evidence_from_file, record_change

    if evidence is not None and evidence_file is not None:
        raise click.UsageError("give --evidence or --evidence-file, not both")
    text = evidence_from_file(Path(evidence_file)) if evidence_file is not None else (evidence or "")
    recorded = record_change(artifact, ChangeInput(
        id=change_id, kind=kind, rationale=rationale, evidence=text, alters_method=alters_method, summary=summary,
        paths=paths, launchers=launchers, claims=claims))
    click.echo(f"recorded change {recorded.id}: {recorded.patch} ({len(recorded.files)} file(s): "
               f"{', '.join(recorded.files)})")


@change.command("verify")
@click.option("-C", "--artifact", default=".", show_default=True, type=click.Path(file_okay=False),
              help=ARTIFACT_HELP)
def change_verify(artifact: str) -> None:
    """Apply code.patches in order to a clean checkout of code.upstream.commit and prove that the
    result equals the artifact's code (tree digest against tree digest). Exit status 1 names
    the patch that does not apply or the paths that differ."""
    from ..builder.changes import verify_series

    result = verify_series(artifact)
    click.echo(f"ok: {len(result.patches)} patch(es) apply cleanly; tree digest {result.actual} "
               f"({result.files} files) equals the artifact's code")


@click.group()
def discrepancy() -> None:
    """Record where the paper and its code disagree."""


@discrepancy.command("add")
@click.argument("discrepancy_id", metavar="ID")
@click.option("-C", "--artifact", default=".", show_default=True, type=click.Path(file_okay=False),
              help="The artifact directory.")
@click.option("--paper-says", required=True, help="What the paper states.")
@click.option("--code-does", required=True, help="What the code does.")
@click.option("--follows", required=True, type=click.Choice(["paper", "code"]),
              help="Which one the artifact follows.")
@click.option("--rationale", required=True, help="Why the artifact follows that side.")
@click.option("--impact", required=True, help="Expected effect on the results.")
@click.option("--claim", "claims", multiple=True, metavar="ID", help="A claim it bears on (repeatable; must exist).")
def discrepancy_add(discrepancy_id: str, artifact: str, paper_says: str, code_does: str, follows: str,
                    rationale: str, impact: str, claims: tuple[str, ...]) -> None:
    """Add a discrepancy to the manifest's 'discrepancies' (comments kept, replaced atomically)."""
    from ..builder.discrepancy import DiscrepancyInput, add_discrepancy

    add_discrepancy(artifact, DiscrepancyInput(discrepancy_id, paper_says, code_does, follows, rationale, impact,
                                               claims))
    bears = f" (claims: {', '.join(claims)})" if claims else ""
    click.echo(f"recorded discrepancy {discrepancy_id}: the artifact follows the {follows}{bears}")


@click.group()
def reference() -> None:
    """Reference observations of the claims, from run records."""


@reference.command("add")
@click.argument("records", nargs=-1, required=True, metavar="RUN_RECORD...")
@click.option("-C", "--artifact", default=".", show_default=True, type=click.Path(file_okay=False),
              help="The artifact directory.")
@click.option("--by", required=True, help="Who ran these runs (a name or an e-mail address).")
@click.option("--from", "origin", required=True, type=click.Choice(["raw", "refined"]),
              help="Whether the runs used the raw upstream code or the refined artifact.")
@click.option("--machine", default=None, help="A name for the machine the runs were made on, distinct per "
              "machine.  [default: the record's OS, CPU architecture and CPU count]")
@click.option("--all", "every", is_flag=True,
              help="From a launcher's run folder, take every successful record that is not an observation yet, "
                   "not only the newest.")
def reference_add(records: tuple[str, ...], artifact: str, by: str, origin: str, machine: str | None,
                  every: bool) -> None:
    """Turn run records (record.json files, or run directories, possibly copied from other
    machines) into reference observations of the claims their launcher produces. A launcher's
    run folder (runs/LAUNCHER) gives its newest successful record (completed, exit status 0), or
    with --all each successful one. A record that is not 'completed', of another manifest or of a
    launcher no claim reads is refused; records from outside the artifact are copied under its
    run-record directory."""
    from ..builder.reference import add_references

    set_aside: list[str] = []
    added = add_references(artifact, records, by=by, origin=origin, machine=machine, every=every,
                           set_aside=set_aside)
    for item in added:
        click.echo(f"claim {item.claim}: observation {item.value:g} (seed or repeat {item.seed}) from "
                   f"{item.run_record}")
    for line in set_aside:
        click.echo(line)
