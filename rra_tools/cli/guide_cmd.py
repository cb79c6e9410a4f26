"""``rra guide``: write REPRODUCE.md from the manifest and the run records, or check it."""

from __future__ import annotations

import sys

import click

__all__ = ["guide"]


@click.command()
@click.argument("artifact", default=".", type=click.Path())
@click.option("--check", is_flag=True,
              help="Write nothing; exit 1 with a diff summary when the guide file differs from what would be written.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write (or check) this file instead.  [default: the manifest's guide.path, else REPRODUCE.md]")
@click.option("--no-records", is_flag=True, help="Leave out the section rendered from the run records.")
@click.option("--force", is_flag=True, help="Replace a guide file that 'rra guide' did not write.")
def guide(artifact: str, check: bool, output: str | None, no_records: bool, force: bool) -> None:
    """Render the reproduction guide: the environment in one command, one command per launcher
    with runtime, resources and seeds, where outputs land, how each claim is measured (never its
    reference values), the changes with their rationales and the discrepancies.

    Deterministic: the same manifest and run records give the same bytes. 'rra validate'
    reports a generated guide that is out of sync with the manifest (RRA215).
    """
    from ..builder.guide import check_guide, write_guide

    if check:
        result = check_guide(artifact, output=output, records=not no_records)
        if result.missing:
            click.echo(f"{result.path}: missing; run 'rra guide' to write it", err=True)
            sys.exit(1)
        if result.diff:
            added = sum(1 for line in result.diff if line.startswith("+") and not line.startswith("+++"))
            removed = sum(1 for line in result.diff if line.startswith("-") and not line.startswith("---"))
            hunks = [line for line in result.diff if line.startswith("@@")]
            click.echo(f"{result.path}: out of sync ({len(hunks)} hunk(s), {added} line(s) to add, "
                       f"{removed} to remove); run 'rra guide' to rewrite it", err=True)
            for line in result.diff[:40]:
                click.echo(line, err=True)
            if len(result.diff) > 40:
                click.echo(f"... ({len(result.diff) - 40} more diff lines)", err=True)
            sys.exit(1)
        click.echo(f"{result.path}: up to date")
        return
    result = write_guide(artifact, output=output, records=not no_records, force=force)
    click.echo(f"{result.path}: {'written' if result.diff or result.missing else 'up to date'}")
