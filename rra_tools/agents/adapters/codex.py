"""Codex CLI (npm ``@openai/codex``), run with ``codex exec --json``.

- **Command:** ``codex exec --json --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox
  -c model_providers.rra.base_url="$OPENAI_BASE_URL" HANDOVER``: no approvals, and no sandbox of
  its own (it runs inside the cell's).
- **Routing:** ``CODEX_HOME`` is a directory in the cell's transcript directory holding a
  ``config.toml`` written before it starts: the model, a provider ``rra`` (``wire_api =
  "responses"``, key from ``OPENAI_API_KEY``: the cell's dummy) whose base URL is the proxy's,
  set from the cell's ``OPENAI_BASE_URL`` on the command line (it differs between a sandbox and
  ``--sandbox none``). Curated plugin sync and analytics are off: both try hosts that do not
  exist inside, and Codex waits about 5 s for them at exit.
- **Transcript:** the JSON event stream on standard output, and Codex's own rollout files under
  ``codex-home/sessions/``.
- **Self-reported usage:** the sum of the ``turn.completed`` events' ``usage`` (input tokens with
  the cached ones among them, cached, output); Codex states no cost.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ...model.cell import ReportedUsage
from .base import Adapter, AgentCell, Shell, json_lines, number

__all__ = ["ADAPTER", "Codex"]

CONFIG = """# Written by rra for one cell (rra_tools/agents/adapters/codex.py).
model = {model}
model_provider = "rra"

[model_providers.rra]
name = "rra metering proxy"
wire_api = "responses"
env_key = "OPENAI_API_KEY"

[features]
plugins = false

[analytics]
enabled = false
"""


@dataclass(frozen=True)
class Codex(Adapter):
    """The adapter of Codex CLI."""

    def argv(self, cell: AgentCell) -> list[str | Shell]:
        """``codex exec --json`` with the proxy as its provider."""
        return [str(cell.tree / self.program), "exec", "--json", "--skip-git-repo-check",
                "--dangerously-bypass-approvals-and-sandbox", "-c",
                Shell('model_providers.rra.base_url="$OPENAI_BASE_URL"'), cell.prompt]

    def env(self, cell: AgentCell) -> dict[str, str]:
        """Its home (settings, sessions) in the transcript directory."""
        return {"CODEX_HOME": str(cell.transcript / "codex-home")}

    def prepare(self, cell: AgentCell) -> None:
        """``config.toml`` in its home."""
        home = cell.transcript / "codex-home"
        home.mkdir(parents=True, exist_ok=True)
        # A JSON string is a TOML basic string for any model id the task set allows.
        (home / "config.toml").write_text(CONFIG.format(model=json.dumps(cell.model)), encoding="utf-8")

    def transcript_globs(self) -> tuple[str, ...]:
        """The event stream and the rollout files."""
        return ("<stdout>", "codex-home/sessions/**/*.jsonl")

    def reported_usage(self, cell: AgentCell) -> ReportedUsage | None:
        """The summed usage of the turn.completed events."""
        turns = [e["usage"] for e in json_lines(cell.stdout)
                 if isinstance(e, dict) and e.get("type") == "turn.completed" and isinstance(e.get("usage"), dict)]
        if not turns:
            return None
        prompt = sum(number(u, "input_tokens") for u in turns)
        cached = sum(number(u, "cached_input_tokens") for u in turns)
        written = sum(number(u, "cache_write_input_tokens") for u in turns)
        return ReportedUsage(input_tokens=max(prompt - cached - written, 0),
                             output_tokens=sum(number(u, "output_tokens") for u in turns),
                             cache_read_tokens=cached, cache_write_tokens=written,
                             source="stdout: the turn.completed events' usage, summed")


ADAPTER = Codex(name="codex", summary="Codex CLI, codex exec --json, Responses API", installer="npm",
                package="@openai/codex", version="0.171.0", program="node_modules/.bin/codex", provider="openai")
