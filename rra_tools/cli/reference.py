"""The CLI reference page (docs/cli.md), generated from the click commands themselves."""

from __future__ import annotations

import click

__all__ = ["cli_reference"]


def cli_reference() -> str:
    """Markdown with the help text of ``rra`` and of each subcommand, at a fixed width."""
    from .app import cli

    parts = ["# `rra` command-line reference", "",
             "Generated from the commands' own help by `python -m rra_tools._generate`; do not edit.", ""]

    def page(command: click.Command, path: list[str], parent: click.Context | None) -> None:
        with click.Context(command, info_name=path[-1], parent=parent, terminal_width=100,
                           max_content_width=100, help_option_names=["-h", "--help"]) as ctx:
            parts.extend([f"## `{' '.join(path)}`", "", "```text", ctx.get_help(), "```", ""])
            if isinstance(command, click.Group):
                for name in sorted(command.list_commands(ctx)):
                    sub = command.get_command(ctx, name)
                    if sub is not None and not sub.hidden:
                        page(sub, [*path, name], ctx)

    page(cli, ["rra"], None)
    return "\n".join(parts)
