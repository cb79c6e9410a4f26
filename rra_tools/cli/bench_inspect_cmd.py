"""``rra bench import-inspect``: the RRA verdicts of an Inspect eval log (the ``inspect`` extra;
:mod:`rra_tools.interop.inspect`) as a results file that ``rra bench report`` reads."""

from __future__ import annotations

import click

__all__ = ["import_inspect_command"]


@click.command("import-inspect")
@click.argument("log", type=click.Path(exists=True, dir_okay=False))
@click.option("--taskset", type=click.Path(exists=True, dir_okay=False),
              help="The task set (default: the one the log's samples name).")
@click.option("--references", type=click.Path(exists=True, dir_okay=False),
              help="The private references file (default: the one the log's samples name).")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False),
              help="Write the results here (default: bench-<task set id>-inspect.json).")
def import_inspect_command(log: str, taskset: str | None, references: str | None, output: str | None) -> None:
    """Import LOG, an Inspect eval log of rra_tools.interop.inspect.rra_task, as a results file.

    Each sample's cell result, as RRA's scorer recorded it (auditor and interval), becomes a cell
    of a results file of mode 'score', which 'rra bench report' renders.
    """
    from pathlib import Path

    from ..interop.inspect import import_eval_log
    from ..io.atomic import write_atomic

    results = import_eval_log(log, taskset, references)
    path = Path(output if output is not None else f"bench-{results.taskset}-inspect.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, (results.model_dump_json(indent=2, exclude_none=True) + "\n").encode())
    for state, count in results.totals.states.items():
        if count:
            click.echo(f"{state}: {count}")
    click.echo(f"results: {path}")
