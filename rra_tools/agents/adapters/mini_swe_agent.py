"""mini-swe-agent (PyPI ``mini-swe-agent``), run with ``mini -y --exit-immediately``.

- **Install:** a virtual environment of its own (made with the evaluator's base interpreter,
  which the sandbox shows anyway), so that its dependencies (litellm and friends) never meet the
  evaluator's.
- **Command:** ``mini -y --exit-immediately -l 0 -c mini.yaml -c rra-mini.yaml -c
  model.model_kwargs.api_base=$BASE_URL -o trajectory.json -t HANDOVER``: no confirmations, its
  own cost limit off (the proxy enforces the cell's budgets), its shipped default configuration
  first (any ``-c`` replaces the default, so it is named), then the cell's: the model, cost
  tracking that does not stop at a model missing from litellm's price list.
- **Routing:** the model is a litellm name; ``openai/`` (the default for a bare name),
  ``anthropic/`` and ``gemini/`` are routed to the proxy's base URL of that provider.
  ``MSWEA_CONFIGURED=1`` skips its first-run wizard, ``MSWEA_GLOBAL_CONFIG_DIR`` keeps its
  settings in the transcript directory, and ``LITELLM_LOCAL_MODEL_COST_MAP=True`` stops litellm
  from fetching its price list from GitHub at import (it would wait for a host that is not there).
- **Transcript:** ``trajectory.json`` in the cell's transcript directory (every message, each
  with the provider's response), and its console output on standard output.
- **Self-reported usage:** the trajectory's per-response ``usage`` (prompt tokens with the cached
  ones among them, cached, completion), summed; its call count and cost
  (``info.model_stats``, litellm's prices; 0 for a model litellm does not know).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ...model.cell import ReportedUsage
from .base import MAX_READ, Adapter, AdapterError, AgentCell, Shell, number

__all__ = ["ADAPTER", "MiniSweAgent"]

#: The proxy's base URL variable of each litellm provider prefix.
BASE_URLS = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL", "gemini": "GOOGLE_GEMINI_BASE_URL"}


def litellm_name(model: str) -> str:
    """The litellm model name: ``openai/`` in front of a bare name.

    >>> litellm_name("gpt-5-mini"), litellm_name("anthropic/claude-sonnet-4-5")
    ('openai/gpt-5-mini', 'anthropic/claude-sonnet-4-5')
    """
    return model if "/" in model else f"openai/{model}"


@dataclass(frozen=True)
class MiniSweAgent(Adapter):
    """The adapter of mini-swe-agent."""

    def check_model(self, model: str) -> None:
        """A provider prefix the proxy routes; AdapterError otherwise."""
        prefix = litellm_name(model).split("/", 1)[0]
        if prefix not in BASE_URLS:
            raise AdapterError(f"mini-swe-agent: the model {model!r} names the provider {prefix!r}, which the "
                               "metering proxy does not route", "use openai/NAME, anthropic/NAME or gemini/NAME")

    def argv(self, cell: AgentCell) -> list[str | Shell]:
        """``mini`` with its default configuration, then the cell's."""
        name = litellm_name(cell.model)
        variable = BASE_URLS[name.split("/", 1)[0]]
        return [str(cell.tree / self.program), "-y", "--exit-immediately", "-l", "0", "-c", "mini.yaml", "-c",
                str(cell.transcript / "rra-mini.yaml"), "-c", Shell(f"model.model_kwargs.api_base=${variable}"),
                "-o", str(cell.transcript / "trajectory.json"), "-t", cell.prompt]

    def env(self, cell: AgentCell) -> dict[str, str]:
        """No wizard, no price-list fetch, its settings in the transcript directory."""
        return {"MSWEA_CONFIGURED": "1", "MSWEA_GLOBAL_CONFIG_DIR": str(cell.transcript / "mini-config"),
                "MSWEA_COST_TRACKING": "ignore_errors", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}

    def prepare(self, cell: AgentCell) -> None:
        """The cell's configuration file (JSON is YAML)."""
        self.check_model(cell.model)
        (cell.transcript / "mini-config").mkdir(parents=True, exist_ok=True)
        config = {"model": {"model_name": litellm_name(cell.model), "cost_tracking": "ignore_errors"}}
        (cell.transcript / "rra-mini.yaml").write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")

    def transcript_globs(self) -> tuple[str, ...]:
        """The trajectory and the console output."""
        return ("trajectory.json", "<stdout>")

    def reported_usage(self, cell: AgentCell) -> ReportedUsage | None:
        """The trajectory's usage, summed over its responses."""
        try:
            with open(cell.transcript / "trajectory.json", "rb") as handle:
                trajectory = json.loads(handle.read(MAX_READ))
        except (OSError, ValueError):
            return None
        if not isinstance(trajectory, dict) or not isinstance(trajectory.get("messages"), list):
            return None
        usages = [m["extra"]["response"]["usage"] for m in trajectory["messages"]
                  if isinstance(m, dict) and isinstance(m.get("extra"), dict)
                  and isinstance(m["extra"].get("response"), dict)
                  and isinstance(m["extra"]["response"].get("usage"), dict)]
        prompt = sum(number(u, "prompt_tokens") for u in usages)
        cached = sum(number(u, "prompt_tokens_details", "cached_tokens") for u in usages)
        stats = trajectory.get("info", {}).get("model_stats", {}) if isinstance(trajectory.get("info"), dict) else {}
        cost = stats.get("instance_cost") if isinstance(stats, dict) else None
        calls = stats.get("api_calls") if isinstance(stats, dict) else None
        return ReportedUsage(input_tokens=max(prompt - cached, 0),
                             output_tokens=sum(number(u, "completion_tokens") for u in usages),
                             cache_read_tokens=cached, cache_write_tokens=0,
                             calls=calls if isinstance(calls, int) and calls >= 0 else len(usages),
                             cost_usd=float(cost) if isinstance(cost, (int, float)) and cost > 0 else None,
                             source="trajectory.json: each response's usage, summed; info.model_stats")


ADAPTER = MiniSweAgent(name="mini-swe-agent", summary="mini-swe-agent, mini -y, one bash tool (litellm)",
                       installer="pypi", package="mini-swe-agent", version="2.4.6", program="bin/mini",
                       provider="openai")
