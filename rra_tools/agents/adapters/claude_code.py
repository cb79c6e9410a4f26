"""Claude Code (npm ``@anthropic-ai/claude-code``), run headless with ``-p``.

- **Command:** ``claude -p HANDOVER --model MODEL --output-format stream-json --verbose
  --dangerously-skip-permissions``: no approval prompts (the sandbox is the guard). Claude Code
  refuses the bypass as root unless ``IS_SANDBOX=1`` says it runs in a sandbox, which it does.
- **Routing:** ``ANTHROPIC_BASE_URL`` and the dummy ``ANTHROPIC_API_KEY`` of the cell;
  ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` and ``DISABLE_AUTOUPDATER=1`` keep it from
  trying anything but the model (there is no other way out anyway, and a refused connection
  would only cost time).
- **Transcript:** the event stream on standard output (every message, tool call and result, then
  the result event), and its own session file: ``CLAUDE_CONFIG_DIR`` points into the cell's
  transcript directory, so ``projects/<dir>/<session>.jsonl`` is kept there.
- **Self-reported usage:** the last ``result`` event's ``usage`` (input, output, cache read and
  creation tokens) and ``total_cost_usd`` (by Claude Code's own price list).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...model.cell import ReportedUsage
from .base import Adapter, AgentCell, Shell, json_lines, number

__all__ = ["ADAPTER", "ClaudeCode"]


@dataclass(frozen=True)
class ClaudeCode(Adapter):
    """The adapter of Claude Code."""

    def argv(self, cell: AgentCell) -> list[str | Shell]:
        """``claude -p`` with the stream of events on standard output."""
        return [str(cell.tree / self.program), "-p", cell.prompt, "--model", cell.model, "--output-format",
                "stream-json", "--verbose", "--dangerously-skip-permissions"]

    def env(self, cell: AgentCell) -> dict[str, str]:
        """The sandbox flag, no side traffic, and its settings and session files in the transcript directory."""
        return {"IS_SANDBOX": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
                "CLAUDE_CONFIG_DIR": str(cell.transcript / "claude")}

    def prepare(self, cell: AgentCell) -> None:
        """Its configuration directory, made before it starts."""
        (cell.transcript / "claude").mkdir(parents=True, exist_ok=True)

    def transcript_globs(self) -> tuple[str, ...]:
        """The event stream and the session files."""
        return ("<stdout>", "claude/projects/**/*.jsonl")

    def reported_usage(self, cell: AgentCell) -> ReportedUsage | None:
        """The last result event's usage and cost."""
        result = None
        for event in json_lines(cell.stdout):
            if isinstance(event, dict) and event.get("type") == "result":
                result = event
        if result is None or not isinstance(result.get("usage"), dict):
            return None
        usage = result["usage"]
        cost = result.get("total_cost_usd")
        return ReportedUsage(
            input_tokens=number(usage, "input_tokens"), output_tokens=number(usage, "output_tokens"),
            cache_read_tokens=number(usage, "cache_read_input_tokens"),
            cache_write_tokens=number(usage, "cache_creation_input_tokens"),
            cost_usd=float(cost) if isinstance(cost, (int, float)) and cost >= 0 else None,
            source="stdout: the result event's usage and total_cost_usd")


ADAPTER = ClaudeCode(name="claude-code", summary="Claude Code, headless (-p), stream-json events",
                     installer="npm", package="@anthropic-ai/claude-code", version="2.1.332",
                     program="node_modules/.bin/claude", provider="anthropic")
