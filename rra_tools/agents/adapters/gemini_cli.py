"""Gemini CLI (npm ``@google/gemini-cli``), run headless with ``-p``.

- **Command:** ``gemini -p HANDOVER -m MODEL --yolo --skip-trust --output-format stream-json``:
  every tool call approved (the sandbox is the guard), the workspace trusted.
- **Routing:** ``GOOGLE_GEMINI_BASE_URL`` and the dummy ``GEMINI_API_KEY`` of the cell (the
  Gemini API, not Vertex AI); ``GEMINI_CLI_HOME`` is a directory in the cell's transcript
  directory whose ``.gemini/settings.json``, written before it starts, selects API-key auth and
  turns off usage statistics, telemetry and update checks.
- **Transcript:** the JSON event stream on standard output, and its session files under
  ``gemini-home/.gemini/tmp/``.
- **Self-reported usage:** the ``result`` event's ``stats`` (prompt tokens with the cached ones
  among them, cached, candidates and thoughts); it states no cost.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ...model.cell import ReportedUsage
from .base import Adapter, AgentCell, Shell, json_lines, number

__all__ = ["ADAPTER", "GeminiCli"]

SETTINGS = {"security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True}}


@dataclass(frozen=True)
class GeminiCli(Adapter):
    """The adapter of Gemini CLI."""

    def argv(self, cell: AgentCell) -> list[str | Shell]:
        """``gemini -p`` with the stream of events on standard output."""
        return [str(cell.tree / self.program), "-p", cell.prompt, "-m", cell.model, "--yolo", "--skip-trust",
                "--output-format", "stream-json"]

    def env(self, cell: AgentCell) -> dict[str, str]:
        """Its home (settings, sessions) in the transcript directory."""
        return {"GEMINI_CLI_HOME": str(cell.transcript / "gemini-home")}

    def prepare(self, cell: AgentCell) -> None:
        """``settings.json`` in its home."""
        home = cell.transcript / "gemini-home" / ".gemini"
        home.mkdir(parents=True, exist_ok=True)
        (home / "settings.json").write_text(json.dumps(SETTINGS, indent=1) + "\n", encoding="utf-8")

    def transcript_globs(self) -> tuple[str, ...]:
        """The event stream and the session files."""
        return ("<stdout>", "gemini-home/.gemini/tmp/**/chats/*")

    def reported_usage(self, cell: AgentCell) -> ReportedUsage | None:
        """The result event's token counts."""
        stats = None
        for event in json_lines(cell.stdout):
            if isinstance(event, dict) and event.get("type") == "result" and isinstance(event.get("stats"), dict):
                stats = event["stats"]
        if stats is None:
            return None
        prompt = number(stats, "input_tokens")
        cached = number(stats, "cached")
        return ReportedUsage(input_tokens=max(prompt - cached, 0), output_tokens=number(stats, "output_tokens"),
                             cache_read_tokens=cached, cache_write_tokens=0,
                             source="stdout: the result event's stats")


ADAPTER = GeminiCli(name="gemini-cli", summary="Gemini CLI, headless (-p), stream-json events", installer="npm",
                    package="@google/gemini-cli", version="0.61.0", program="node_modules/.bin/gemini",
                    provider="gemini")
