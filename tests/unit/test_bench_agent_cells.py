"""Reproducers that name a coding agent, without running one: the task set's form, the command
line's spelling, the budgets, the hand-over (each condition's wording, its digest, ``rra bench
prompt``), and the refusal to start a benchmark whose agent is not installed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import jsonschema
import pytest
from pydantic import ValidationError

from rra_tools.agents.handover import TEMPLATE_VERSION, render_handover, template_text
from rra_tools.bench import load_taskset
from rra_tools.bench.agent_cells import attempt_limits, description_limits, handover_for, parse_reproducer, spec_text
from rra_tools.bench.errors import BenchError
from rra_tools.model.schema import generated_schemas
from rra_tools.model.taskset import AttemptLimits, Reproducer
from rra_tools.validate.taskset import check_taskset

from ..agent_scripts import one_task_taskset
from ..rra_cli import rra


def test_the_command_line_names_an_agent_or_a_command() -> None:
    opus = parse_reproducer("opus", "agent:claude-code:claude-opus-4-5")
    assert (opus.agent, opus.model, opus.command) == ("claude-code", "claude-opus-4-5", None)
    assert parse_reproducer("mini", "agent:mini-swe-agent:openai/gpt-5-mini").model == "openai/gpt-5-mini"
    assert parse_reproducer("h", "python3 h.py --x=1").command == "python3 h.py --x=1"
    with pytest.raises(BenchError, match="reproducer 'x': no agent 'aider'; the agents are claude-code, codex, "
                       "gemini-cli, mini-swe-agent"):
        parse_reproducer("x", "agent:aider:gpt-5")
    with pytest.raises(BenchError, match=r"reproducer 'x': 'agent:codex' names no model") as caught:
        parse_reproducer("x", "agent:codex")
    assert caught.value.hint == "write agent:codex:MODEL_ID"


def test_a_reproducer_is_a_command_or_an_agent_with_its_model() -> None:
    for bad, message in [({"command": "x", "agent": "codex", "model": "m"}, "exactly one of 'command' and 'agent'"),
                         ({}, "exactly one of 'command' and 'agent'"),
                         ({"agent": "codex"}, "an agent needs its 'model'"),
                         ({"command": "x", "model": "m"}, "'model' goes with 'agent'")]:
        with pytest.raises(ValidationError, match=message):
            Reproducer.model_validate({"name": "r", **bad})
    schema = jsonschema.Draft202012Validator(json.loads(generated_schemas()["rra-taskset-1.0.schema.json"]))
    base = {"bench_version": "1.0", "id": "t", "papers": [{"id": "p", "experiments": [{"id": "e", "tasks": [
        {"id": "t", "artifact": "a", "claim": "c"}]}]}]}
    good = {"name": "opus", "agent": "claude-code", "model": "claude-opus-4-5", "budget": {"cost_usd": 20,
                                                                                         "tokens": 5000000}}
    assert not list(schema.iter_errors({**base, "reproducers": [good]}))
    assert list(schema.iter_errors({**base, "reproducers": [{"name": "r"}]}))
    assert list(schema.iter_errors({**base, "reproducers": [{"name": "r", "agent": "aider", "model": "m"}]}))


def test_the_check_locates_a_bad_agent(tmp_path: Path) -> None:
    taskset, references = one_task_taskset(tmp_path, reproducers=[{"name": "r", "agent": "aider", "model": "m"}])
    found = check_taskset(taskset, references).diagnostics
    assert [(d.code, d.pointer) for d in found] == [("RRA951", "/reproducers/0/agent")], found
    taskset.write_text(taskset.read_text().replace('"aider"', '"codex"'))
    assert check_taskset(taskset, references).diagnostics == []


def test_a_reproducers_budget_replaces_the_task_sets_limits() -> None:
    limits = AttemptLimits(wall_clock_s=600, cost_usd=5, tokens=1000, calls=9)
    spec = Reproducer(name="r", agent="codex", model="gpt-5.5", budget={"cost_usd": 20, "tokens": 5000000})
    merged = attempt_limits(limits, spec)
    assert (merged.wall_clock_s, merged.cost_usd, merged.tokens, merged.calls) == (600, 20, 5000000, 9)
    assert attempt_limits(limits, Reproducer(name="c", command="x")) is limits
    assert description_limits(merged) == {"wall_clock_s": 600, "cost_usd": 20, "tokens": 5000000, "calls": 9}
    assert spec_text(spec) == 'agent:codex:gpt-5.5 budget={"tokens":5000000,"cost_usd":20.0}'


@pytest.fixture
def taskset(tmp_path: Path) -> Path:
    path, _ = one_task_taskset(tmp_path, conditions=["raw", "refined", {"refined": {"without": ["launchers"]}}],
                               limits={"wall_clock_s": 900, "cost_usd": 5},
                               reproducers=[{"name": "big", "agent": "codex", "model": "gpt-5.5",
                                             "budget": {"cost_usd": 20, "calls": 50}}])
    return path


def test_the_handover_says_what_each_condition_gives(taskset: Path) -> None:
    loaded = load_taskset(taskset)
    refined = handover_for(loaded, "p/t1/var", "refined").text
    assert "The refined artifact (an RRA)" in refined and "`rra run emit`" in refined
    raw = handover_for(loaded, "p/t1/var", "raw").text
    assert "The upstream code as its authors published it" in raw and "rra run emit" not in raw
    ablated = handover_for(loaded, "p/t1/var", "refined-without-launchers").text
    assert "without its launchers" in ablated and "Its launchers were removed" in ablated
    for text in (refined, raw, ablated):
        assert "The paper: 'Thirteen Sixteenths' (`paper/paper.txt`)." in text
        assert "- Wall clock: 900 s for the whole attempt.\n- Model cost: 5 USD" in text
        assert "Reference values (the results other people obtained for this claim) are not available" in text
        assert "The network is only the model you are talking to" in text
        assert '"run_record": "runs/LAUNCHER/RUN_ID/record.json"' in text
        assert "0.8117" not in text and "0.8129" not in text
    big = handover_for(loaded, "p/t1/var", "refined", loaded.model.reproducers[0]).text
    assert "- Model cost: 20 USD, priced from the provider's usage.\n- Model calls: 50." in big
    with pytest.raises(BenchError, match="task set 'tiny-bench' has no task 'p/t1/nope'; its tasks are p/t1/var"):
        handover_for(loaded, "p/t1/nope", "refined")


def test_the_handover_digest_is_of_the_text_and_stable(taskset: Path) -> None:
    loaded = load_taskset(taskset)
    first = handover_for(loaded, "p/t1/var", "refined")
    assert first == handover_for(loaded, "p/t1/var", "refined")
    assert first.version == TEMPLATE_VERSION == "1.0"
    assert first.sha256 == hashlib.sha256(first.text.encode()).hexdigest()
    assert handover_for(loaded, "p/t1/var", "raw").sha256 != first.sha256
    assert "$task" in template_text() and "$" not in first.text
    # Every placeholder of the template is filled (string.Template refuses a missing one).
    with pytest.raises(KeyError):
        render_handover({"task": "t"}, {"wall_clock_s": 1})


def test_rra_bench_prompt_prints_the_text(taskset: Path) -> None:
    proc = rra("bench", "prompt", str(taskset), "--task", "p/t1/var", "--condition", "refined-without-launchers",
               "--reproducer", "big")
    assert proc.returncode == 0, proc.stderr
    expected = handover_for(load_taskset(taskset), "p/t1/var", "refined-without-launchers",
                            load_taskset(taskset).model.reproducers[0])
    assert proc.stdout == expected.text
    assert proc.stderr.strip() == f"hand-over 1.0, sha256 {expected.sha256}"
    missing = rra("bench", "prompt", str(taskset), "--task", "p/t1/var", "--reproducer", "nobody")
    assert missing.returncode == 2 and "has no reproducer 'nobody'" in missing.stderr


def test_a_benchmark_with_an_agent_not_installed_does_not_start(tmp_path: Path) -> None:
    taskset, references = one_task_taskset(tmp_path)
    proc = rra("bench", "run", str(taskset), "--references", str(references), "-o", str(tmp_path / "out"),
               "--sandbox", "none", "--reproducer", "c=agent:codex:gpt-5.5",
               env={"RRA_AGENTS_CACHE": str(tmp_path / "empty")})
    assert proc.returncode == 2
    assert "reproducer 'c': the agent codex 0.171.0 is not installed" in proc.stderr
    assert "rra bench agents install codex" in proc.stderr
    assert not (tmp_path / "out" / "cells").exists()


def test_rra_bench_agents_lists_them(tmp_path: Path) -> None:
    proc = rra("bench", "agents", env={"RRA_AGENTS_CACHE": str(tmp_path / "empty")})
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line.split()[1:4] for line in proc.stdout.splitlines()[1:6]}
    assert rows["claude-code"] == ["2.1.332", "@anthropic-ai/claude-code", "no"]
    assert rows["mini-swe-agent"] == ["2.4.6", "mini-swe-agent", "no"]
    assert f"cache: {tmp_path / 'empty'}" in proc.stdout
    bad = rra("bench", "agents", "install", "aider")
    assert bad.returncode == 2 and "no agent adapter 'aider'" in bad.stderr
