"""What Inspect finds through the ``inspect_ai`` entry point of ``pyproject.toml``: the task
``rra_tools/rra`` (``inspect eval rra_tools/rra -T taskset=TASKS.json -T references=REFS.json
--model ...``) and, imported with it, the sandbox environment ``rra`` and the scorer."""

from __future__ import annotations

from inspect_ai import Task, task

from .task import RRASandbox, build_task, rra_verdict

__all__ = ["RRASandbox", "rra", "rra_verdict"]


@task
def rra(taskset: str, references: str | None = None, conditions: str | None = None, out: str | None = None,
        sandbox: str = "auto", reproducer: str = "inspect") -> Task:
    """The task set ``taskset`` as an Inspect Task (see :func:`rra_tools.interop.inspect.rra_task`);
    ``conditions`` comma-separated."""
    return build_task(taskset, references, conditions, out=out, sandbox=sandbox, reproducer=reproducer)
