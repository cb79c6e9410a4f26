"""The REAL coding agents as reproducers, through ``rra bench run``, with no API key.

Claude Code, Codex, mini-swe-agent and Gemini CLI, at their pinned versions as ``rra bench agents
install`` puts them in the cache (``.ci/run`` does), each run as its adapter runs it: in the
bubblewrap sandbox and in Podman, its only way out the cell's metering proxy, which forwards to a scripted
loopback model (``rra_tools.agents.scripted``) speaking that agent's protocol. The script makes
the agent run the tiny artifact's launcher with ``rra run``, write ``submission.json`` naming
the run record, and finish (tests/agent_scripts.py). Each cell must be scored ``success`` with
no audit finding, be metered exactly as scripted, carry the agent's own usage report (equal to
the metered figures, or the difference reported), keep the transcript outside the workspace,
and record the digest of the hand-over that ``rra bench prompt`` prints.

Failure cases, with Claude Code: a cost budget spent ends the cell ``limit_reached``, and an
agent that reads the references by their absolute path finds nothing.

An agent that is not installed fails these tests in CI and skips them elsewhere, naming the
install command.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rra_tools.agents.proxy.prices import BUILTIN_PRICE_TABLE
from rra_tools.agents.scripted import ReceivedRequest, ScriptedReply, ScriptedUpstream, ScriptedUsage
from rra_tools.model.bench_results import BenchResults, CellResult

from ..agent_scripts import AGENTS, TASK, AgentSpec, one_task_taskset, require_agent, script, totals
from ..bench_tiny import secret_pattern
from ..rra_cli import rra
from ..unit.agents.sandbox_support import sandbox_backend

#: A distinctive line of the hand-over: it must reach the model in the agent's first request.
HANDOVER_LINE = f"# Reproduction task {TASK}"


def price_table(directory: Path) -> Path:
    """The built-in price table with Codex's model added (priced as gpt-5), as an operator's file."""
    builtin = Path(__file__).resolve().parents[2] / "rra_tools" / "agents" / "proxy" / "prices" / BUILTIN_PRICE_TABLE
    table = json.loads(builtin.read_text(encoding="utf-8"))
    models = table["providers"]["openai"]["models"]
    models["gpt-5.5"] = dict(models["gpt-5"])
    path = directory / "prices.json"
    path.write_text(json.dumps(table), encoding="utf-8")
    return path


@dataclass
class Ran:
    """One agent's benchmark: the command's outcome, its one cell, and what the model received."""

    agent: AgentSpec
    proc: Any
    cell: CellResult
    out: Path
    taskset: Path
    steps: list[ScriptedReply]
    requests: list[ReceivedRequest]

    @property
    def directory(self) -> Path:
        """The cell's directory (workspace, logs, transcript, hand-over)."""
        assert self.cell.workspace is not None
        return (self.out / self.cell.workspace).parent


def run_agent(tmp: Path, agent: AgentSpec, steps: list[ScriptedReply], reproducer: str | None = None,
              sandbox: str = "bwrap", **top: Any) -> Ran:
    """``rra bench run`` of the one-task task set with ``agent`` (or the task set's ``reproducer``)
    against a scripted model answering ``steps``."""
    taskset, references = one_task_taskset(tmp, **top)
    out = tmp / "out"
    args = [] if reproducer else ["--reproducer", f"agent={'agent:' + agent.name + ':' + agent.model}"]
    with ScriptedUpstream(steps) as model:
        proc = rra("bench", "run", str(taskset), "--references", str(references), "-o", str(out), "--sandbox", sandbox,
                   "--upstream", f"{agent.provider}={model.url}", "--price-table", str(price_table(tmp)), *args,
                   timeout=600)
        requests = model.requests
    assert proc.returncode == 0, proc.stderr
    results = BenchResults.model_validate_json((out / "results.json").read_text(encoding="utf-8"))
    (cell,) = results.cells
    return Ran(agent, proc, cell, out, taskset, steps, requests)


@pytest.fixture(scope="module", params=[f"{a}/{b}" for a in sorted(AGENTS) for b in ("bwrap", "podman")])
def ran(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Ran:
    name, backend = str(request.param).split("/")
    agent = AGENTS[name]
    require_agent(agent.name)
    sandbox_backend(backend)  # fails when it cannot run here (Podman may skip outside CI)
    ran = run_agent(tmp_path_factory.mktemp(name), agent, script(agent), sandbox=backend)
    assert ran.cell.sandbox is not None and ran.cell.sandbox.backend == backend
    return ran


def test_the_cell_succeeds_with_a_clean_audit(ran: Ran) -> None:
    cell = ran.cell
    assert (cell.state, cell.value, cell.detail) == ("success", 0.8125, None), ran.proc.stderr
    # The auditor traced the value to the run record the agent named, and found nothing to say.
    assert cell.findings == []
    submission = json.loads((ran.out / str(cell.submission)).read_text(encoding="utf-8"))
    record = submission["values"][0]["evidence"]["run_record"]
    assert record.startswith("runs/emit/") and (ran.directory / "workspace" / record).is_file()
    assert cell.sandbox is not None and cell.sandbox.network == "proxy-only"
    roles = {(m.role, m.mode) for m in cell.sandbox.mounts}
    assert ("transcript", "rw") in roles and ("reproducer", "ro") in roles, roles
    assert cell.agent is not None and (cell.agent.adapter, cell.agent.model) == (ran.agent.name, ran.agent.model)


def test_the_metered_usage_is_exactly_the_script(ran: Ran) -> None:
    assert ran.cell.usage is not None and ran.cell.usage.metered is not None
    metered = ran.cell.usage.metered
    found = {k: getattr(metered, k) for k in totals(ran.steps)}
    assert found == totals(ran.steps)
    assert (metered.refused, metered.retries, metered.unpriced_models) == (0, 0, [])
    assert len(ran.requests) == len(ran.steps)
    assert metered.cost_usd > 0


def test_the_agents_own_report_is_compared(ran: Ran) -> None:
    usage, agent = ran.cell.usage, ran.cell.agent
    assert usage is not None and usage.metered is not None and agent is not None
    reported = agent.reported
    assert reported is not None, "the agent's own usage could not be read"
    assert usage.stated_by == "agent"
    metered = usage.metered
    total = metered.input_tokens + metered.output_tokens + metered.cache_read_tokens + metered.cache_write_tokens
    assert usage.stated is not None and usage.stated.tokens == reported.tokens()
    # Each agent's own count equals the metered one, figure by figure; where a figure differed,
    # the cell would list it among the differences (asserted in the unit tests of the readers).
    assert (reported.input_tokens, reported.output_tokens, reported.cache_read_tokens) == (
        metered.input_tokens, metered.output_tokens, metered.cache_read_tokens)
    assert reported.tokens() == total
    if reported.cost_usd is not None:
        # Claude Code and mini-swe-agent (litellm) price the calls by their own lists.
        assert reported.cost_usd == pytest.approx(metered.cost_usd, rel=1e-6)
    assert usage.differences == []


def test_the_transcript_is_kept_outside_the_workspace(ran: Ran) -> None:
    agent = ran.cell.agent
    assert agent is not None and agent.transcript
    workspace = ran.directory / "workspace"
    files = [ran.out / f for f in agent.transcript]
    assert all(f.is_file() and not f.resolve().is_relative_to(workspace.resolve()) for f in files), files
    # The agent's own record (not only its console) holds the launcher's command and its output.
    own = [f for f in files if f.name != "reproducer.stdout.log"]
    assert own, agent.transcript
    text = "".join(f.read_text(encoding="utf-8", errors="replace") for f in own)
    assert "rra run emit" in text and "wrote submission.json" in text


def test_the_cell_records_the_handover_it_gave(ran: Ran) -> None:
    handover = ran.cell.handover
    assert handover is not None and handover.version == "1.0" and handover.path is not None
    kept = (ran.out / handover.path).read_bytes()
    assert hashlib.sha256(kept).hexdigest() == handover.sha256
    # 'rra bench prompt' prints exactly that text ...
    printed = rra("bench", "prompt", str(ran.taskset), "--task", TASK, "--condition", "refined")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.encode() == kept
    assert f"sha256 {handover.sha256}" in printed.stderr
    # ... and it is what the model received as the task, in the agent's first request.
    first = ran.requests[0].raw.decode("utf-8")
    assert HANDOVER_LINE in first


def test_a_spent_cost_budget_ends_the_cell(tmp_path: Path) -> None:
    agent = AGENTS["claude-code"]
    require_agent(agent.name)
    # 30,000 input tokens of claude-sonnet-4-5 cost 0.09 USD: over the reproducer's budget of 0.05
    # after the first call; the second is refused and the cell is stopped.
    steps = script(agent, usage=(ScriptedUsage(input=30000, output=10), ScriptedUsage(input=100, output=10),
                                 ScriptedUsage(input=100, output=10)))
    ran = run_agent(tmp_path, agent, steps, reproducer="spender", reproducers=[
        {"name": "spender", "agent": "claude-code", "model": agent.model, "budget": {"cost_usd": 0.05}}])
    cell = ran.cell
    assert cell.state == "limit_reached", (cell.detail, ran.proc.stderr)
    assert cell.detail is not None and "cost budget (0.05 USD)" in cell.detail
    assert cell.usage is not None and cell.usage.metered is not None
    assert cell.usage.metered.limit_reached == "cost_usd"
    assert cell.usage.metered.calls == 1 and cell.usage.metered.cost_usd == pytest.approx(0.09015)
    # The budget the agent was told is the reproducer's own, not the task set's.
    assert cell.handover is not None and "- Model cost: 0.05 USD" in (tmp_path / "out" / str(cell.handover.path)).read_text()


def test_the_references_cannot_be_read_by_their_path(tmp_path: Path) -> None:
    agent = AGENTS["claude-code"]
    require_agent(agent.name)
    references = tmp_path / "references.private.json"
    peek = f"cat {references}; ls {tmp_path}; echo status $?"
    steps = script(agent, commands=(peek,))
    ran = run_agent(tmp_path, agent, steps)
    assert ran.cell.state == "missing_value"
    # The model saw the shell's answer: no such file, and none of the secret values anywhere.
    answered = ran.requests[1].raw.decode("utf-8")
    assert "No such file or directory" in answered
    assert "references.private.json" in answered  # the command itself, echoed back
    secret = secret_pattern()
    for request in ran.requests:
        assert not secret.search(request.raw.decode("utf-8")), "a reference value reached the model"
    assert references.is_file()  # it is there, outside the sandbox
