"""What building a task's refined artifact cost, read from the builder's own records.

``rra build`` keeps, in the artifact, the state file ``.rra/build/state.json``: for every step its
wall time over every run of the build, the decisions asked, and the tokens and cost the agent
stated. The benchmark copies their sums into the results beside each task
(:class:`~rra_tools.model.bench_cost.Construction`), so that the report can weigh construction
against what each reproduction saves. An artifact built otherwise has no such file: its
construction is *not recorded* (said so, never counted as free).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ..errors import RRAError
from ..model.bench_cost import Construction

__all__ = ["construction_of"]


@lru_cache(maxsize=256)
def construction_of(artifact: Path) -> Construction:
    """The construction cost of the artifact at ``artifact`` (read once per directory)."""
    from ..builder.build import STATE_PATH, read_state

    try:
        found = read_state(artifact)
    except RRAError as exc:
        return Construction(recorded=False, source=STATE_PATH, note=exc.describe())
    if found is None:
        return Construction(recorded=False)
    _, steps = found
    ran = [s for s in steps if s.runs > 0 or s.wall_s > 0]
    # Known when the agent stated it or the metering proxy measured it (rra build in a sandbox).
    stated = any(s.usage_reported or s.usage_metered for s in steps)
    return Construction(
        recorded=True, source=STATE_PATH, wall_s=round(sum(s.wall_s for s in steps), 6), steps=len(ran),
        decisions=sum(len(s.decisions) for s in steps), input_tokens=sum(s.input_tokens for s in steps),
        output_tokens=sum(s.output_tokens for s in steps),
        cost_usd=round(sum(s.cost_usd for s in steps), 6) if stated else None)
