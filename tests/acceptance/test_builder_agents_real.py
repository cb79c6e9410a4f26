"""``rra build --agent mini-swe-agent:MODEL``: the REAL mini-swe-agent answers every decision of
a build, in the bubblewrap sandbox, its only way out the metering proxy, which forwards to a
scripted loopback model (``rra_tools.agents.scripted``).

The fixture repository ``deterministic-metrics`` (tests/builder_repos.py) asks five decisions:
one placeholder and four candidate claims. For each, the scripted model makes mini-swe-agent run
the scripted agent of tests/fixtures/agents (its source given in the tool call, a heredoc: the
file itself is outside the sandbox), which writes the answer file the request names, and then
finish. In the first decision it also tries to read a file outside the artifact, and is told
there is no such file. The build must end with a passing review, each decision metered exactly
as scripted, mini-swe-agent's own usage report kept as ``stated``, and its transcript and
hand-over kept beside the request.

An agent that is not installed fails this test in CI and skips it elsewhere, naming the install
command.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rra_tools.agents.scripted import ScriptedReply, ScriptedUpstream, ScriptedUsage
from tests.builder_repos import make_repo
from tests.rra_cli import rra

from ..agent_scripts import AGENTS, require_agent
from ..unit.agents.sandbox_support import sandbox_backend

SCRIPTED_AGENT = Path(__file__).parents[1] / "fixtures" / "agents" / "scripted_agent.py"
#: The decisions of the fixture, in the order the build asks them.
DECISIONS = ("placeholder/launchers/0/description", "claim-1", "claim-2", "claim-3", "claim-4")
SECRET = "a value no agent may read: 0.4242"


def answer_command() -> str:
    """The shell command that answers the decision in ``$RRA_AGENT_REQUEST`` as the scripted agent does."""
    source = SCRIPTED_AGENT.read_text(encoding="utf-8")
    return f"python3 - deterministic-metrics \"$RRA_AGENT_REQUEST\" <<'RRA_SCRIPTED_AGENT'\n{source}\nRRA_SCRIPTED_AGENT"


def decision_script(secret: Path) -> list[list[ScriptedReply]]:
    """Each decision's model turns: (the first decision: try to read ``secret``), answer, finish."""
    agent = AGENTS["mini-swe-agent"]
    steps: list[list[ScriptedReply]] = []
    for number, _ in enumerate(DECISIONS):
        turns = [ScriptedReply("Answering.", tool_call=agent.call(answer_command()),
                               usage=ScriptedUsage(input=1000 + 100 * number, output=50 + number, cache_read=200)),
                 ScriptedReply("Done.", tool_call=agent.call("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
                               usage=ScriptedUsage(input=1300 + 100 * number, output=7))]
        if number == 0:
            turns.insert(0, ScriptedReply("Looking around.", tool_call=agent.call(f"cat {secret}; echo status $?"),
                                          usage=ScriptedUsage(input=900, output=20)))
        steps.append(turns)
    return steps


def test_mini_swe_agent_builds_a_reviewed_artifact(tmp_path: Path) -> None:
    agent = AGENTS["mini-swe-agent"]
    require_agent(agent.name)
    sandbox_backend("bwrap")
    raw = make_repo("deterministic-metrics", tmp_path)
    artifact = tmp_path / "artifact"
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET, encoding="utf-8")
    script = decision_script(secret)
    with ScriptedUpstream([step for turns in script for step in turns]) as model:
        done = rra("build", str(raw), "-o", str(artifact), "--agent", f"{agent.name}:{agent.model}",
                   "--sandbox", "bwrap", "--model-upstream", f"openai={model.url}", timeout=900)
        requests = model.requests
    assert done.returncode == 0, done.stderr
    assert len(requests) == sum(len(turns) for turns in script)
    review = json.loads((artifact / ".rra/review/review.json").read_text())
    assert review["passed"] is True
    data: dict[str, Any] = json.loads((artifact / ".rra/build/state.json").read_text())
    entries = [d for step in data["steps"] for d in step.get("decisions", [])]
    assert [d["id"] for d in entries] == list(DECISIONS)
    decisions = artifact / ".rra/build/decisions"
    for entry, turns in zip(entries, script, strict=True):
        assert entry["source"] == "agent" and entry["agent"]["adapter"] == "mini-swe-agent"
        assert entry["agent"]["model"] == agent.model
        metered = entry["metered"]
        # Exactly the script: its calls, its tokens (cache reads are input), priced (> 0).
        assert (metered["calls"], metered["input_tokens"], metered["output_tokens"]) == (
            len(turns), sum(t.usage.input + t.usage.cache_read for t in turns), sum(t.usage.output for t in turns))
        assert metered["cost_usd"] > 0
        # mini-swe-agent's own report is kept beside, not counted; here it agrees.
        stated = entry["stated"]
        assert (stated["input_tokens"], stated["output_tokens"], stated["calls"]) == (
            metered["input_tokens"], metered["output_tokens"], metered["calls"])
        stem = entry["id"].replace("/", "-")
        transcript = decisions / f"{stem}.transcript" / "trajectory.json"
        assert entry["agent"]["transcript"] == f".rra/build/decisions/{stem}.transcript"
        assert "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in transcript.read_text(encoding="utf-8")
        assert f"scripted agent: answered {entry['id']}" in transcript.read_text(encoding="utf-8")
        handover = (decisions / f"{stem}.handover.md").read_text(encoding="utf-8")
        assert f"# Build decision {entry['id']}" in handover
        assert (decisions / f"{stem}.model-calls.jsonl").is_file()
    # The metered figures are what the build's step totals count.
    steps = {step["name"]: step for step in data["steps"]}
    claims = [e for e in entries if e["id"].startswith("claim-")]
    assert steps["claims"]["usage_metered"] is True
    assert steps["claims"]["input_tokens"] == sum(e["metered"]["input_tokens"] for e in claims)
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines()[1:-1]}
    assert rows["claims"][3:6] == ["4", str(steps["claims"]["input_tokens"]), str(steps["claims"]["output_tokens"])]
    assert rows["claims"][6] == f"{steps['claims']['cost_usd']:.4f}"
    # The hand-over reached the model, and the file outside the artifact could not be read.
    first = requests[0].raw.decode("utf-8")
    assert "# Build decision placeholder/launchers/0/description" in first
    answered = requests[1].raw.decode("utf-8")
    assert "No such file or directory" in answered
    assert all("0.4242" not in r.raw.decode("utf-8") for r in requests)


@pytest.mark.parametrize("text", ["mini-swe-agent:gpt 5", "command:x", "my-agent:v2", "python agent.py"])
def test_anything_else_is_a_command(text: str) -> None:
    from rra_tools.builder.agent import parse_agent

    assert parse_agent(text) is None
