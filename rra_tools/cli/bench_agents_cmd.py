"""``rra bench agents`` (the coding agents' adapters, installed or not; ``install``) and ``rra
bench prompt`` (the hand-over an agent receives): parse, call :mod:`rra_tools.agents` and
:mod:`rra_tools.bench`, render."""

from __future__ import annotations

import click

__all__ = ["agents_group", "prompt_command"]


@click.group("agents", invoke_without_command=True)
@click.pass_context
def agents_group(ctx: click.Context) -> None:
    """List the coding agents' adapters: pinned version, package and whether it is installed.

    A task set's reproducer may name one ('agent: claude-code', 'model: ...'), as may
    'rra bench run --reproducer NAME=agent:AGENT:MODEL'. Installed trees live in RRA_AGENTS_CACHE
    (default ~/.cache/rra/agents); docs/agents.md says what each agent sees.
    """
    if ctx.invoked_subcommand is not None:
        return
    from ..agents.adapters import ADAPTERS, cache_root, status

    rows = [("AGENT", "VERSION", "PACKAGE", "INSTALLED", "WHAT")]
    for adapter in ADAPTERS.values():
        found = status(adapter)
        state = "-" if found.installer == "none" else ("yes" if found.installed else "no")
        rows.append((found.name, found.version or "-", found.package or "-", state, found.summary))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        click.echo("  ".join([*(cell.ljust(w) for cell, w in zip(row, widths)), row[-1]]).rstrip())
    click.echo(f"\ncache: {cache_root()} (RRA_AGENTS_CACHE); install one with 'rra bench agents install NAME'")


@agents_group.command("install")
@click.argument("names", nargs=-1, required=True, metavar="NAME...")
@click.option("--force", is_flag=True, help="Install again even when a complete tree is there.")
def install_command(names: tuple[str, ...], force: bool) -> None:
    """Install agents at their pinned versions into read-only trees in the cache (npm packages with
    the system's npm, PyPI ones into a virtual environment of their own). Does nothing for an
    agent already installed, unless --force."""
    from ..agents.adapters import get_adapter, install, installed

    adapters = [get_adapter(name) for name in names]
    for adapter in adapters:
        if installed(adapter) and not force:
            click.echo(f"{adapter.name} {adapter.version}: already installed")
            continue
        click.echo(f"{adapter.name} {adapter.version}: installing {adapter.package}...", err=True)
        target = install(adapter, force=force)
        click.echo(f"{adapter.name} {adapter.version}: installed into {target}")


@click.command("prompt")
@click.argument("taskset", type=click.Path(exists=True, dir_okay=False))
@click.option("--task", "task", required=True, metavar="PAPER/EXPERIMENT/TASK", help="The task.")
@click.option("--condition", default="refined", show_default=True, metavar="CONDITION",
              help="raw, refined or refined-without-PART[-PART...].")
@click.option("--reproducer", "reproducer", metavar="NAME",
              help="A reproducer of the task set whose budget replaces the task set's limits in the text.")
def prompt_command(taskset: str, task: str, condition: str, reproducer: str | None) -> None:
    """Print exactly the hand-over a coding agent receives as its prompt for TASK under CONDITION
    (the text whose SHA-256 each agent cell records), then its version and digest on stderr."""
    from ..bench import load_taskset
    from ..bench.agent_cells import handover_for
    from ..bench.errors import BenchError
    from ..bench.taskset import with_conditions

    loaded = load_taskset(taskset)
    condition = with_conditions(loaded, [condition]).conditions[0]
    spec = None
    if reproducer is not None:
        spec = next((r for r in loaded.model.reproducers if r.name == reproducer), None)
        if spec is None:
            raise BenchError(f"task set {loaded.model.id!r} has no reproducer {reproducer!r}",
                             "give the name of one of its 'reproducers'")
    handover = handover_for(loaded, task, condition, spec)
    click.echo(handover.text, nl=False)
    click.echo(f"hand-over {handover.version}, sha256 {handover.sha256}", err=True)
