"""The benchmark evaluator: task sets of papers → experiments → tasks, scored against
acceptance intervals of their reference observations.

- :mod:`.taskset`: loading a task set (and its private references file);
- :mod:`.reproduce`: re-execution mode, each task's launcher run through
  :func:`rra_tools.run.run_plans`;
- :mod:`.cells`: reproducer mode, one cell (task × condition × reproducer × repeat) at a time in
  a fresh workspace (:mod:`.workspace`, :mod:`.reproducer`); an ablation condition's workspace is
  the refined artifact without some of its parts (:mod:`.ablation`);
- :mod:`.submissions`, :mod:`.scoring`, :mod:`.score`: reading, scoring and auditing submissions;
- :mod:`.audit`: the auditor (finder, then refuter);
- :mod:`.report`: ``rra bench report``'s figures, with the factorial analysis of ablations in
  :mod:`.report_factorial`.
"""

from .cells import BenchRun, collect_results, plan_run, run_benchmark, run_cell, run_cells
from .errors import BenchError
from .reproduce import reproduce
from .score import score_submissions
from .taskset import LoadedTaskSet, load_taskset

__all__ = ["BenchError", "BenchRun", "LoadedTaskSet", "collect_results", "load_taskset", "plan_run", "reproduce",
           "run_benchmark", "run_cell", "run_cells", "score_submissions"]
