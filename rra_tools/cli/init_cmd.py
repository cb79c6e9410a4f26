"""``rra init``: a blank template, or a draft detected from a raw repository (git or a plain directory)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ..builder.detect.findings import Finding
    from ..builder.draft import Draft

__all__ = ["init_command"]


@click.command("init")
@click.argument("raw_repo", metavar="[RAW_REPO]", default=".", type=click.Path(file_okay=False))
@click.option("-o", "--output", "artifact", metavar="ARTIFACT", type=click.Path(file_okay=False), default=None,
              help="Directory to write rra.yaml into.  [default: RAW_REPO]")
@click.option("--upstream", metavar="URL@COMMIT", default=None,
              help="Upstream repository and full 40-hex commit, instead of git's remote 'origin' and HEAD.")
@click.option("--id", "artifact_id", default=None, help="Artifact id.  [default: from the directory name]")
@click.option("--title", default=None,
              help="Artifact title.  [default: the paper's title from CITATION.cff, else the directory name]")
@click.option("--paper", "paper_file", metavar="FILE", type=click.Path(dir_okay=False), default=None,
              help="The paper (Markdown, LaTeX, or PDF with the 'paper' extra): the numbers of its tables "
                   "become candidate claims, each with its location.")
def init_command(raw_repo: str, artifact: str | None, upstream: str | None, artifact_id: str | None,
                 title: str | None, paper_file: str | None) -> None:
    """Draft rra.yaml from what a repository already says, or write a starting template.

    When RAW_REPO is the root of a git working tree, its files (those git lists, never ignored
    ones) are read; a plain directory (an archive: no .git) is walked instead, honouring its
    .gitignore and leaving out virtual environments and caches, and its upstream is a TODO until
    --upstream URL@COMMIT gives it. They are read for the upstream URL and commit, the license
    (LICENSE matched to SPDX), the paper's metadata (CITATION.cff or codemeta.json, arXiv/DOI links
    in the README), the environment (requirements files, pyproject.toml, setup.py read without
    running it, setup.cfg, conda files, Pipfile, the README's dependency list, else the packages
    the code imports; .python-version, runtime.txt; the first in that order is used and the others
    are reported, and a package the code imports that the requirements leave out is added to the
    drafted requirements.in; apt.txt; a Dockerfile's base image), launchers (MLproject, dvc.yaml,
    console scripts, the README's commands that run a file of the repository, scripts with a
    __main__ guard or whose module level runs code, with their argparse or click options; the files
    their code writes become outputs) and candidate claims (numbers in Markdown, reStructuredText
    and LaTeX tables, printed metrics (with the number a README's code block shows the print give as the reported value),
    CSV columns and JSON keys the code writes, and the tables of
    --paper FILE; a table's number becomes a claim, with the printed or written metric of the same
    name as its extraction, and TODOs to confirm it; results only in a figure or an array are
    printed as questions for rra build's claim step). Each item found is printed with its
    file:line; whatever the repository does not say is a TODO that 'rra validate' reports (RRA214),
    and two sources that disagree become a discrepancy stub.
    An empty or missing directory gets a blank template. Never overwrites a manifest."""
    import shlex
    from pathlib import Path

    from ..builder.detect.repo import is_draftable

    raw = Path(raw_repo)
    target = Path(artifact) if artifact is not None else raw
    shown = artifact if artifact is not None else raw_repo
    if not is_draftable(raw):
        if upstream is not None or paper_file is not None:
            option = "--upstream" if upstream is not None else "--paper"
            raise click.UsageError(f"{option} drafts from a repository, and {raw_repo!r} is empty or does not "
                                   "exist")
        from ..builder.init import scaffold

        path = scaffold(target, artifact_id=artifact_id, title=title)
        # Quoted: the line is meant to be pasted into a shell as it is.
        click.echo(f"wrote {path}; fill in the TODOs, then run: rra validate {shlex.quote(shown)}")
        return
    from ..builder.draft import draft_manifest, write_draft

    in_place = artifact is None or target.resolve() == raw.resolve()
    draft = draft_manifest(raw, upstream=upstream, artifact_id=artifact_id, title=title, in_place=in_place,
                           paper_file=Path(paper_file) if paper_file is not None else None)
    written = write_draft(draft, target)
    _render(draft)
    if len(written) > 1:
        click.echo(f"wrote {written[1]} from {draft.environment.source} for 'rra lock'")
    click.echo(f"wrote {written[0]}; fill in the TODOs, then run: rra validate {shlex.quote(shown)}")


def _render(draft: Draft) -> None:
    click.echo("found:")
    for finding in draft.findings:
        click.echo(_line(finding))
    if not draft.findings:
        click.echo("  nothing")
    if draft.environment.untranslated:
        click.echo(f"not translated from {draft.environment.source} (no pip package):")
        for entry in draft.environment.untranslated:
            click.echo(f"  {entry}")
    if draft.candidates:
        click.echo("candidate claims (written as claims with TODOs to confirm, or printed only):")
        for index, finding in enumerate(draft.candidates):
            claim = draft.written.get(index)
            fate = f"claim {claim}" if claim is not None else \
                "not written: no reported value" if finding.parts[:1] in (("print",), ("file",)) else \
                "not written: not one number"
            click.echo(_line(finding, fate))
    if draft.claim_questions:
        click.echo("claim questions (rra build's claim step asks them):")
        for finding in draft.claim_questions:
            click.echo(_line(finding))
    for problem in draft.problems:
        click.echo(f"skipped {problem.where}: {problem.note}")
    if draft.assumed:
        click.echo("assumed (check these):")
        for line in draft.assumed:
            click.echo(f"  {line}")
    if draft.placeholders:
        click.echo("left as TODO (rra validate reports each as RRA214 until filled in):")
        for pointer in draft.placeholders:
            click.echo(f"  {pointer}")


def _line(finding: Finding, fate: str = "") -> str:
    notes = "; ".join(n for n in (finding.note, fate) if n)
    note = f"  ({notes})" if notes else ""
    # A fixed column (not the longest item's width): the same finding prints the same line in
    # every repository, which scripts and tests can rely on.
    return f"  {finding.item:<16} {finding.value}  [{finding.where}]{note}"
