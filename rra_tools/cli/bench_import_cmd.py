"""``rra bench import``: another benchmark's tasks as an RRA task set (``corebench``:
:mod:`rra_tools.interop.corebench`)."""

from __future__ import annotations

import click

__all__ = ["import_group"]


@click.group("import")
def import_group() -> None:
    """Turn another benchmark's task file into an RRA task set and its private references."""


@import_group.command("corebench")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--code", "code", required=True, type=click.Path(file_okay=False),
              help="Where the capsules are unpacked: DIR/<capsule id>/ (code/, data/, results/ as CodeOcean "
                   "exports them). Nothing is downloaded.")
@click.option("--out", "out", required=True, type=click.Path(),
              help="A new directory for taskset.json, references.json (private), capsules/ (private: the claims "
                   "with their answers), papers/ and raw/ (each capsule's code without results/).")
@click.option("--id", "taskset_id", help="The task set's id (default: FILE's name, e.g. 'core_test').")
def corebench_command(file: str, code: str, out: str, taskset_id: str | None) -> None:
    """Import FILE, CORE-Bench's core_train.json or core_test.json (decrypted).

    Each question of each capsule becomes a task of the kind of its answers: a number (the
    interval of the runs' values), a string, a list or a set (the answer the runs agree on).
    Questions that fewer than 3 runs answer, or whose runs disagree, are left out and listed.
    """
    from ..interop.corebench import import_corebench

    done = import_corebench(file, code, out, taskset_id=taskset_id)
    kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(done.kinds.items()))
    click.echo(f"{done.tasks} task(s) from {done.capsules} capsule(s): {kinds}")
    for skipped in done.skipped:
        click.echo(f"left out: {skipped.capsule}: {skipped.question!r}: {skipped.reason}")
    click.echo(f"task set: {done.taskset}")
    click.echo(f"references (private): {done.references}")
