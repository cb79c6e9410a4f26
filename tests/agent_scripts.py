"""Scripts of model turns that drive the REAL coding agents through a task of the tiny task set
(tests/bench_tiny.py), for the agents' acceptance tests and benchmarks/bench_agents.py.

Each agent gets the same three steps, spelled in its own tool: run the artifact's launcher with
``rra run emit``, write ``submission.json`` naming the run record (a small Python program run by
the shell: the record's path is known only once the run made it), and finish (a final text, or
mini-swe-agent's ``echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT``). The usage of each step is
fixed, so a test knows the exact totals the metering proxy must measure.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rra_tools.agents.adapters import get_adapter, installed, tree
from rra_tools.agents.scripted import ScriptedReply, ScriptedUsage

from .bench_tiny import tiny_artifact, tiny_taskset

__all__ = ["AGENTS", "TASK", "WRITE_SUBMISSION", "AgentSpec", "one_task_taskset", "require_agent", "script",
           "totals"]

#: The task every agent reproduces: the tiny artifact's variable task (its value 0.8125 is inside
#: the interval and equals no hidden reference value, so a clean audit has no finding at all).
TASK = "p/t1/var"

#: The shell program that writes the submission from the run record ``rra run emit`` made.
WRITE_SUBMISSION = f"""python3 - <<'EOF'
import glob, json
(record,) = glob.glob("runs/emit/*/record.json")
value = json.load(open(record))["metrics"]["score"]
json.dump({{"submission_version": "1.0", "values": [{{"task": "{TASK}", "value": value,
           "evidence": {{"run_record": record, "output": "out/metrics.json", "script": "emit.sh"}}}}]}},
          open("submission.json", "w"))
print("wrote submission.json:", value)
EOF"""


@dataclass(frozen=True)
class AgentSpec:
    """How a test points an agent at the scripted model: its model id, the provider the proxy
    forwards it to, and its shell tool (name and the argument holding the command)."""

    name: str
    model: str
    provider: str
    tool: str
    argument: str
    #: Whether it ends with a command (mini-swe-agent) rather than a final text.
    ends_with_command: bool = False

    def call(self, command: str) -> tuple[str, dict[str, Any]]:
        """A tool call running ``command`` in the agent's shell."""
        return (self.tool, {self.argument: command})


#: Every agent the tests drive, with a model its own price list and the built-in table both know
#: (Codex knows only its own model names: gpt-5.5 is priced by the tests' table).
AGENTS = {
    "claude-code": AgentSpec("claude-code", "claude-sonnet-4-5", "anthropic", "Bash", "command"),
    "codex": AgentSpec("codex", "gpt-5.5", "openai", "exec_command", "cmd"),
    "mini-swe-agent": AgentSpec("mini-swe-agent", "openai/gpt-5-mini", "openai", "bash", "command",
                                ends_with_command=True),
    "gemini-cli": AgentSpec("gemini-cli", "gemini-2.5-flash", "gemini", "run_shell_command", "command"),
}

#: The usage of each step of :func:`script` (input, output, cache read).
STEP_USAGE = (ScriptedUsage(input=1200, output=40), ScriptedUsage(input=1500, output=220, cache_read=1000),
              ScriptedUsage(input=1800, output=12))


def script(agent: AgentSpec, commands: tuple[str, ...] = ("rra run emit", WRITE_SUBMISSION),
           usage: tuple[ScriptedUsage, ...] = STEP_USAGE) -> list[ScriptedReply]:
    """The model's turns: one tool call per command, then the end."""
    steps = [ScriptedReply(f"Step {i + 1}.", tool_call=agent.call(command), usage=usage[i])
             for i, command in enumerate(commands)]
    last = usage[len(commands)]
    if agent.ends_with_command:
        steps.append(ScriptedReply("Done.", tool_call=agent.call("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
                                   usage=last))
    else:
        steps.append(ScriptedReply("Done: submission.json is written.", usage=last))
    return steps


def totals(steps: list[ScriptedReply]) -> dict[str, int]:
    """The exact figures the metering proxy must measure for ``steps``."""
    return {"calls": len(steps), "input_tokens": sum(s.usage.input for s in steps),
            "output_tokens": sum(s.usage.output for s in steps),
            "cache_read_tokens": sum(s.usage.cache_read for s in steps),
            "cache_write_tokens": sum(s.usage.cache_write for s in steps)}


def one_task_taskset(directory: Path, **top: Any) -> tuple[Path, Path]:
    """The tiny artifact and a task set of its variable task alone (refined condition, one repeat),
    with ``top`` fields added; the public task set and the private references file."""
    tiny_artifact(directory / "tiny")
    top.setdefault("conditions", ["refined"])
    top.setdefault("limits", {"wall_clock_s": 120})
    taskset, references = tiny_taskset(directory, repeats=1, **top)
    public = json.loads(taskset.read_text())
    tasks = public["papers"][0]["experiments"][0]["tasks"]
    public["papers"][0]["experiments"][0]["tasks"] = [t for t in tasks if t["id"] == TASK.rsplit("/", 1)[1]]
    taskset.write_text(json.dumps(public, indent=1))
    private = json.loads(references.read_text())
    private["references"] = [r for r in private["references"] if r["task"] == TASK]
    references.write_text(json.dumps(private, indent=1))
    return taskset, references


def require_agent(name: str) -> None:
    """Fail (in CI) or skip (elsewhere, saying how to install it) when the agent is not installed."""
    adapter = get_adapter(name)
    if installed(adapter):
        return
    why = (f"{adapter.name} {adapter.version} is not installed in {tree(adapter)}; install it with "
           f"'rra bench agents install {adapter.name}' (.ci/run does)")
    if os.environ.get("CI"):
        pytest.fail(why)
    pytest.skip(why)
