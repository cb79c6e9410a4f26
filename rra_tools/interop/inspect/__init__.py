"""Inspect AI interop (the ``inspect`` extra; docs/agents.md, "Inspect AI").

:func:`rra_task` turns a task set into an Inspect ``Task``: one sample per task x condition, each
sample's workspace prepared by RRA (:func:`rra_tools.bench.cells.prepare_cell`), the sandbox
environment ``rra`` running every command in RRA's cell sandbox over that workspace, and a scorer
that judges the workspace with RRA's auditor and interval (:func:`rra_tools.bench.cells.judge_cell`).
:func:`import_eval_log` reads the eval log back into a results file (mode ``score``) that
``rra bench report`` accepts.

Inspect is imported only when one of them is called: without the extra, they raise
:class:`InspectMissing`, which says how to install it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import ExitStatus
from ..errors import InteropLayerError

if TYPE_CHECKING:
    from ...model.bench_results import BenchResults

__all__ = ["INSTALL_HINT", "InspectMissing", "import_eval_log", "require_inspect", "rra_task"]

#: How to install what this wing needs.
INSTALL_HINT = "pip install 'rra-tools[inspect]'"


class InspectMissing(InteropLayerError):
    """Inspect AI (the ``inspect`` extra) is not installed."""

    exit_status = ExitStatus.USAGE

    def __init__(self, cause: ImportError) -> None:
        super().__init__(f"Inspect AI is not installed ({cause})")
        self.hint = INSTALL_HINT


def require_inspect() -> None:
    """Import Inspect AI now; :class:`InspectMissing` when it is not installed."""
    try:
        import inspect_ai  # noqa: F401
    except ImportError as exc:
        raise InspectMissing(exc) from exc


def rra_task(taskset: str, references: str | None = None, conditions: Sequence[str] | str | None = None, *,
             out: str | None = None, sandbox: str = "auto", reproducer: str = "inspect",
             solver: Any = None) -> Any:
    """An ``inspect_ai.Task`` of ``taskset`` (with its private ``references``) under ``conditions``
    (default: the task set's; a comma-separated string is split), cells kept under ``out`` (default:
    a fresh temporary directory), commands isolated by RRA's ``sandbox`` ('auto', 'bwrap',
    'podman' or 'none'), the cells recorded under the reproducer name ``reproducer``; ``solver``:
    the Task's solver (default: Inspect's, or ``--solver`` of ``inspect eval``)."""
    require_inspect()
    from .task import build_task

    return build_task(taskset, references, conditions, out=out, sandbox=sandbox, reproducer=reproducer,
                      solver=solver)


def import_eval_log(log: str | Path, taskset: str | Path | None = None, references: str | Path | None = None,
                    ) -> BenchResults:
    """The results file (mode ``score``) of the RRA verdicts in the Inspect eval ``log``: each
    sample's cell result, as the ``rra`` scorer recorded it; the task set and references are the
    ones the log's samples name unless given. BenchError for a log without RRA verdicts."""
    require_inspect()
    from .results import read_log

    return read_log(Path(log), None if taskset is None else Path(taskset),
                    None if references is None else Path(references))
