"""The benchmark evaluator: task sets of papers → experiments → tasks, scored against
acceptance intervals of their reference observations.

- :mod:`.taskset`: loading a task set (and its private references file);
- :mod:`.reproduce`: re-execution mode, each task's launcher run through
  :func:`rra_tools.run.run_plans`;
- :mod:`.cells`: reproducer mode, one cell (task × condition × reproducer × repeat) at a time in
  a fresh workspace (:mod:`.workspace`, :mod:`.reproducer`); an ablation condition's workspace is
  the refined artifact without some of its parts (:mod:`.ablation`);
- :mod:`.executors` (a subpackage): where cells run, on this machine (:mod:`.executors.local`) or
  as Slurm jobs (:mod:`.executors.slurm`), and the state directory both keep;
- :mod:`.submissions`, :mod:`.scoring`, :mod:`.score`: reading, scoring and auditing submissions;
- :mod:`.audit` (a subpackage): the auditor (finder, then refuter) in :mod:`.audit.auditor`, the
  attempt's file it reads again in :mod:`.audit.attempt_file`, its evaluation in :mod:`.audit.eval`;
- :mod:`.report` (a subpackage): ``rra bench report``'s figures (:mod:`.report.build`), with the
  factorial analysis of ablations in :mod:`.report.factorial`, the full cost in
  :mod:`.report.cost`, the plots and the pages.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .cells import BenchRun, collect_results, plan_run, run_benchmark, run_cell, run_cells
    from .errors import BenchError
    from .reproduce import reproduce
    from .score import score_submissions
    from .taskset import LoadedTaskSet, load_taskset

__all__ = ["BenchError", "BenchRun", "LoadedTaskSet", "collect_results", "load_taskset", "plan_run", "reproduce",
           "run_benchmark", "run_cell", "run_cells", "score_submissions"]

#: Where each name of :data:`__all__` is defined. They are imported on first use: importing one
#: module of the package (``rra bench report`` needs only :mod:`.report`) does not import the
#: executors, the auditor and the run layer (0.13 s of CPU).
_HOMES = {"BenchRun": "cells", "collect_results": "cells", "plan_run": "cells", "run_benchmark": "cells",
          "run_cell": "cells", "run_cells": "cells", "BenchError": "errors", "reproduce": "reproduce",
          "score_submissions": "score", "LoadedTaskSet": "taskset", "load_taskset": "taskset"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value
