"""The build report of ``rra build``: one row per step (status, wall time, decisions, and the
tokens and cost: metered by the cell's proxy, else as the agent stated them), then the totals. The CLI prints it; the build writes it to
``.rra/build/report.txt`` beside the state file, so the construction cost stays on record."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

__all__ = ["REPORT_PATH", "render_report"]

#: The report file, relative to the artifact.
REPORT_PATH = ".rra/build/report.txt"


class _Step(Protocol):
    name: str
    status: str
    wall_s: float
    decisions: list[dict[str, object]]
    input_tokens: int
    output_tokens: int
    cost_usd: float
    usage_reported: bool
    usage_metered: bool
    note: str


def _usage(reported: bool, tokens_in: int, tokens_out: int, cost: float) -> str:
    if not reported:
        return f"{'-':>10} {'-':>10} {'-':>9}"
    return f"{tokens_in:>10} {tokens_out:>10} {cost:>9.4f}"


def render_report(steps: Sequence[_Step]) -> str:
    """The table, one line per step and a line of totals; '-' where nothing was metered and the
    agent stated nothing."""
    lines = [f"{'step':<10} {'status':<8} {'wall s':>8} {'decisions':>9} {'tokens in':>10} {'tokens out':>10} "
             f"{'cost USD':>9}  note"]
    for step in steps:
        usage = _usage(step.usage_reported or step.usage_metered, step.input_tokens, step.output_tokens, step.cost_usd)
        lines.append(f"{step.name:<10} {step.status:<8} {step.wall_s:>8.2f} {len(step.decisions):>9} {usage}  "
                     f"{step.note}".rstrip())
    usage = _usage(any(s.usage_reported or s.usage_metered for s in steps), sum(s.input_tokens for s in steps),
                   sum(s.output_tokens for s in steps), sum(s.cost_usd for s in steps))
    total = sum(s.wall_s for s in steps)
    lines.append(f"{'total':<10} {'':<8} {total:>8.2f} {sum(len(s.decisions) for s in steps):>9} {usage}".rstrip())
    return "\n".join(lines) + "\n"
