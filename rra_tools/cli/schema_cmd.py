"""``rra schema``: print a published JSON Schema, or where it is installed (for editors)."""

from __future__ import annotations

import click

__all__ = ["schema_command"]


@click.command("schema")
@click.argument("name", default="manifest")
@click.option("--version", "version", metavar="X.Y", default=None,
              help="The format's version.  [default: the version this tool writes]")
@click.option("--path", "show_path", is_flag=True, help="Print the installed file's absolute path instead.")
def schema_command(name: str, version: str | None, show_path: bool) -> None:
    """Print the published JSON Schema NAME (manifest, taskset, run-record, ...) as installed.

    The schemas ship inside the package, so they resolve offline: --path prints the file's
    absolute path, which an editor's YAML language server can use, e.g. the line
    '# yaml-language-server: $schema=PATH' that 'rra init' writes. An unknown NAME or
    version is an error that lists the ones there are."""
    from ..io.schemas import schema_bytes, schema_path

    if show_path:
        click.echo(str(schema_path(name, version)))
    elif version is None:
        click.echo(schema_bytes(name).decode("utf-8"), nl=False)
    else:
        click.echo(schema_path(name, version).read_text(encoding="utf-8"), nl=False)
