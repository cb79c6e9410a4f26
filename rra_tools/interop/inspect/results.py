"""An Inspect eval log back into RRA: each sample's cell result, as the ``rra_verdict`` scorer
recorded it, gathered into a results file of mode ``score`` (what ``rra bench report`` reads)."""

from __future__ import annotations

from pathlib import Path

from inspect_ai.log import read_eval_log

from ...bench import collect_results, load_taskset
from ...bench.errors import BenchError
from ...bench.taskset import with_conditions
from ...model.bench_results import BenchResults, CellResult
from .task import RESULT_KEY

__all__ = ["read_log"]


def read_log(log: Path, taskset: Path | None = None, references: Path | None = None) -> BenchResults:
    """The results of ``log`` (see the module docstring), over ``taskset`` and ``references`` (by
    default the ones its samples name); BenchError when no sample has an RRA verdict."""
    evaluated = read_eval_log(str(log))
    cells: list[CellResult] = []
    named: dict[str, str] = {}
    for sample in evaluated.samples or []:
        for score in (sample.scores or {}).values():
            data = (score.metadata or {}).get(RESULT_KEY)
            if data is not None:
                cells.append(CellResult.model_validate(data))
                metadata = sample.metadata or {}
                named = {k: str(metadata.get(k) or "") for k in ("rra_taskset", "rra_references")}
                break
    if not cells:
        raise BenchError(f"{log} holds no RRA verdict (no sample scored by rra_verdict)",
                         "give the log of an 'inspect eval' of rra_tools.interop.inspect.rra_task")
    if taskset is None:
        if not named.get("rra_taskset"):
            raise BenchError(f"{log} does not name its task set", "give the task set")
        taskset = Path(named["rra_taskset"])
    if references is None and named.get("rra_references"):
        references = Path(named["rra_references"])
    loaded = load_taskset(taskset, references)
    conditions = sorted({str(c.cell.condition) for c in cells})
    loaded = with_conditions(loaded, conditions)
    return collect_results(loaded, cells, "score")
