"""``rra export ro-crate``: write the artifact as an RO-Crate (Process Run Crate profile)."""

from __future__ import annotations

import click

__all__ = ["export"]


@click.group()
def export() -> None:
    """Write the artifact in another exchange format."""


@export.command("ro-crate")
@click.argument("artifact", default=".", type=click.Path())
@click.option("-o", "--output", "output", type=click.Path(), default=None,
              help="Crate to write: a directory, or a ZIP file when the name ends in .zip.  "
                   "[default: <artifact id>-ro-crate in the current directory]")
@click.option("--by", metavar="NAME", default=None,
              help="Who made the artifact's own runs: the agent of their CreateActions. Records that "
                   "'rra reference add --by' filed keep their own.")
def ro_crate(artifact: str, output: str | None, by: str | None) -> None:
    """Write ARTIFACT as an RO-Crate 1.1 that conforms to the Process Run Crate 0.5 profile:
    every file of the artifact, the launchers as SoftwareApplication entities, each run record
    as a CreateAction (instrument, object, result, start and end times, status, agent), the
    claims as PropertyValue entities, the license, the paper as citation and the upstream code
    as isBasedOn. Needs the 'export' extra; fetches nothing.
    """
    from ..builder.export import export_ro_crate
    from ..io.artifact import load_artifact

    if output is None:
        output = f"{load_artifact(artifact).data['id']}-ro-crate"
    result = export_ro_crate(artifact, output, by=by)
    for link in result.skipped_links:
        click.echo(f"warning: {link}: a symbolic link, left out of the crate", err=True)
    click.echo(f"{result.path}: RO-Crate ({result.form}) with {result.files} file(s), {result.launchers} "
               f"launcher(s), {result.runs} run(s), {result.claims} claim(s)")
