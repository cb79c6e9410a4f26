"""Reproducers that are coding agents: what :func:`~.cells.run_cell` does differently for them.

A reproducer of a task set names a ``command`` or an ``agent`` with its ``model``
(:class:`~rra_tools.model.taskset.Reproducer`); ``--reproducer NAME=agent:AGENT:MODEL`` says the
same on the command line (:func:`parse_reproducer`). For an agent's cell:

1. the hand-over is rendered from the workspace's task description (:mod:`rra_tools.agents.handover`)
   and kept beside the workspace as ``handover.md``; its version and digest go into the result;
2. the adapter (:mod:`rra_tools.agents.adapters`) writes the agent's settings into the cell's
   ``transcript/`` directory (beside the workspace, shown read-write inside) and gives the
   command, which runs in the sandbox like any reproducer's;
3. afterwards the transcript files are listed and the usage the agent program reported of
   itself is read from its output (not from the submission, which the model writes) into the
   cell's ``usage.stated``, compared with the metered usage.

A reproducer's ``budget`` replaces the task set's limits of the same names for its cells
(:func:`attempt_limits`), command or agent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agents.adapters import Adapter, AgentCell, Launch, get_adapter, installed
from ..agents.adapters import tree as agent_tree
from ..agents.handover import Handover, render_handover
from ..io.atomic import write_atomic
from ..model.cell import AgentRecord, HandoverRecord
from ..model.submission import Usage
from ..model.taskset import AGENTS, AttemptLimits, Reproducer
from .errors import BenchError
from .taskset import LoadedTaskSet
from .workspace import task_description

__all__ = ["AGENT_PREFIX", "HANDOVER_NAME", "TRANSCRIPT_DIR", "AgentPlan", "agent_record", "attempt_limits",
           "check_agents", "description_limits", "handover_for", "parse_reproducer", "plan_agent", "spec_text"]

#: How the command line names an agent: ``agent:AGENT:MODEL``.
AGENT_PREFIX = "agent:"
#: The rendered hand-over's file name beside the workspace.
HANDOVER_NAME = "handover.md"
#: The agent's transcript directory beside the workspace.
TRANSCRIPT_DIR = "transcript"

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def parse_reproducer(name: str, text: str) -> Reproducer:
    """The reproducer ``--reproducer NAME=TEXT`` gives: ``agent:AGENT:MODEL`` names an agent and
    its model, anything else is a shell command. BenchError for an unknown agent or no model.

    >>> parse_reproducer("opus", "agent:claude-code:claude-opus-4-5").agent
    'claude-code'
    >>> parse_reproducer("honest", "python3 honest.py").command
    'python3 honest.py'
    """
    if not _NAME.fullmatch(name):
        raise BenchError(f"{name!r} is not a reproducer name (letters, digits, '.', '_', '-')")
    if not text.startswith(AGENT_PREFIX):
        return Reproducer(name=name, command=text)
    agent, sep, model = text[len(AGENT_PREFIX):].partition(":")
    if agent not in AGENTS:
        raise BenchError(f"reproducer {name!r}: no agent {agent!r}; the agents are {', '.join(AGENTS)}",
                         "'rra bench agents' lists them")
    if not sep or not model:
        raise BenchError(f"reproducer {name!r}: {text!r} names no model", f"write agent:{agent}:MODEL_ID")
    try:
        return Reproducer(name=name, agent=agent, model=model)
    except ValueError as exc:
        raise BenchError(f"reproducer {name!r}: the model {model!r} is not a model id: {exc}") from None


def spec_text(reproducer: Reproducer) -> str:
    """What a reproducer is, in one string (the benchmark's identity when it is resumed)."""
    if reproducer.command is not None:
        text = reproducer.command
    else:
        text = f"{AGENT_PREFIX}{reproducer.agent}:{reproducer.model}"
    if reproducer.budget is not None:
        text += " budget=" + reproducer.budget.model_dump_json(exclude_none=True)
    return text


def attempt_limits(limits: AttemptLimits, reproducer: Reproducer | None) -> AttemptLimits:
    """The task set's ``limits`` with the reproducer's budget in place of the figures it sets."""
    if reproducer is None or reproducer.budget is None:
        return limits
    return limits.model_copy(update=reproducer.budget.model_dump(exclude_none=True))


def description_limits(limits: AttemptLimits) -> dict[str, Any]:
    """The limits a task description (``task.json``) and the hand-over state."""
    found: dict[str, Any] = {"wall_clock_s": limits.wall_clock_s, "cost_usd": limits.cost_usd}
    found.update({k: v for k, v in (("tokens", limits.tokens), ("calls", limits.calls)) if v is not None})
    return found


def check_agents(reproducers: Mapping[str, Reproducer]) -> None:
    """Before any cell runs: each agent's adapter is installed and accepts its model. BenchError
    naming the install command otherwise."""
    for spec in reproducers.values():
        if spec.agent is None:
            continue
        adapter = get_adapter(spec.agent)
        adapter.check_model(spec.model or "")
        if not installed(adapter):
            raise BenchError(f"reproducer {spec.name!r}: the agent {adapter.name} {adapter.version} is not installed "
                             f"(no complete tree at {str(agent_tree(adapter))!r})",
                             f"run 'rra bench agents install {adapter.name}'")


@dataclass(frozen=True)
class AgentPlan:
    """An agent's cell, ready to run: its adapter, what the adapter sees, what the cell runs, and
    the hand-over."""

    adapter: Adapter
    cell: AgentCell
    launch: Launch
    handover: Handover
    handover_path: Path


def plan_agent(spec: Reproducer, directory: Path, workspace: Path, description: Mapping[str, Any]) -> AgentPlan:
    """Steps 1-2 of the module docstring for the cell in ``directory``. AdapterError (an RRAError)
    when the agent cannot be launched."""
    assert spec.agent is not None and spec.model is not None  # the model's validator holds it
    adapter = get_adapter(spec.agent)
    handover = render_handover(description, description["limits"])
    path = directory / HANDOVER_NAME
    write_atomic(path, handover.text.encode("utf-8"))
    transcript = directory / TRANSCRIPT_DIR
    transcript.mkdir(exist_ok=True)
    cell = AgentCell(prompt=handover.text, model=spec.model, workspace=workspace, transcript=transcript,
                     stdout=directory / "reproducer.stdout.log", tree=agent_tree(adapter))
    return AgentPlan(adapter, cell, adapter.launch(cell), handover, path)


def agent_record(plan: AgentPlan, root: Path) -> tuple[dict[str, Any], dict[str, Any], Usage | None]:
    """Step 3: the result's ``agent`` and ``handover`` fields (paths relative to ``root``, the
    benchmark directory) and the agent's own usage as the cell's stated usage (None when it
    reported none)."""
    reported = plan.adapter.reported_usage(plan.cell)
    files = [p.relative_to(root).as_posix() for p in plan.adapter.transcript(plan.cell)]
    agent = AgentRecord(adapter=plan.adapter.name, version=plan.adapter.version, model=plan.cell.model,
                        transcript=files, reported=reported)
    handover = HandoverRecord(version=plan.handover.version, sha256=plan.handover.sha256,
                              path=plan.handover_path.relative_to(root).as_posix())
    stated = None if reported is None else Usage(tokens=reported.tokens(), cost_usd=reported.cost_usd)
    return agent.model_dump(exclude_none=True), handover.model_dump(exclude_none=True), stated


def handover_for(taskset: LoadedTaskSet, task_key: str, condition: str, reproducer: Reproducer | None = None) -> Handover:
    """The hand-over an agent gets for ``task_key`` under ``condition`` (with ``reproducer``'s
    budget, when given), exactly as a cell renders it (``rra bench prompt``). BenchError for an
    unknown task."""
    task = next((t for t in taskset.tasks if t.key == task_key), None)
    if task is None:
        keys = ", ".join(t.key for t in taskset.tasks[:20])
        raise BenchError(f"task set {taskset.model.id!r} has no task {task_key!r}; its tasks are {keys}",
                         "give the task as PAPER/EXPERIMENT/TASK")
    description = task_description(taskset, task, condition, description_limits(
        attempt_limits(taskset.model.limits, reproducer)))
    return render_handover(description, description["limits"])
