"""Interoperation with other evaluation frameworks: thin wings over :mod:`rra_tools.bench` that
let an operator run RRA's cells and verdicts from their own tools (:mod:`.inspect`: Inspect AI), or
bring another benchmark's tasks in (:mod:`.corebench`: CORE-Bench's task file as a task set).

Above ``bench`` and below ``cli`` in the layer contract; each wing imports its framework lazily,
from the extra of ``pyproject.toml`` that installs it.
"""
