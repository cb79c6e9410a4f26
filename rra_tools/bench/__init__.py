"""The benchmark evaluator: task sets of papers → experiments → tasks, scored against
acceptance intervals of their reference observations.

What exists: loading a task set (:mod:`.taskset`) and re-execution mode (:mod:`.reproduce`),
which runs each task's launcher through :func:`rra_tools.run.run_plans` and scores every
attempt. Reproducer mode, the auditor and reports are not written yet (``docs/bench.md``).
"""

from .errors import BenchError
from .reproduce import reproduce
from .taskset import LoadedTaskSet, load_taskset

__all__ = ["BenchError", "LoadedTaskSet", "load_taskset", "reproduce"]
