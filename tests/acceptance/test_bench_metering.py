"""``rra bench run`` meters the model calls of a sandboxed reproducer from outside, through the
real CLI: a scripted loopback upstream (``rra_tools.agents.scripted``) answers four calls, one per
protocol (Anthropic Messages streamed, OpenAI Chat Completions, OpenAI Responses streamed, Gemini
generateContent), made from inside the sandbox with dummy keys to the base URLs the cell is
given. The cell's ``usage.metered`` equals the script's figures exactly, its cost is the price
table's, the upstream received the real keys (which never entered the sandbox), the call log
sits outside the workspace, and a token budget ends a cell as ``limit_reached``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rra_tools.agents.scripted import ScriptedReply, ScriptedUpstream, ScriptedUsage
from rra_tools.model.bench_results import BenchResults

from ..bench_tiny import tiny_artifact, tiny_taskset
from ..rra_cli import rra

#: One reply per call, in the order the reproducer makes them: (model, usage).
CALLS = [
    ("claude-sonnet-4-5", ScriptedUsage(input=100, output=20, cache_read=50, cache_write=10)),
    ("gpt-4o-mini", ScriptedUsage(input=200, output=30, cache_read=40)),
    ("gpt-5", ScriptedUsage(input=300, output=40, cache_read=100, reasoning=10)),
    ("gemini-2.5-flash", ScriptedUsage(input=400, output=50, reasoning=5)),
]
#: USD per million tokens (input, output, cache read, cache write), as the dated table lists them.
PRICES = {"claude-sonnet-4-5": (3.0, 15.0, 0.3, 3.75), "gpt-4o-mini": (0.15, 0.6, 0.075, 0.15),
          "gpt-5": (1.25, 10.0, 0.125, 1.25), "gemini-2.5-flash": (0.3, 2.5, 0.03, 0.3)}

REAL_KEYS = {"ANTHROPIC_API_KEY": "sk-ant-real-test", "OPENAI_API_KEY": "sk-openai-real-test",
             "GEMINI_API_KEY": "gemini-real-test"}

#: The reproducer: four model calls with the keys it was given, then an honest run and submission
#: (stating the tokens it counted itself).
REPRODUCER = r'''
import glob, json, os, subprocess, urllib.request

def post(url, body, key_header, key):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"content-type": "application/json", key_header: key})
    with urllib.request.urlopen(req, timeout=30) as answer:
        return answer.read().decode()

env = os.environ
seen = {k: env.get(k) for k in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY")}
open("keys-inside.json", "w").write(json.dumps(seen))
texts = []
texts.append(post(env["ANTHROPIC_BASE_URL"] + "/v1/messages",
                  {"model": "claude-sonnet-4-5", "max_tokens": 50, "stream": True,
                   "messages": [{"role": "user", "content": "hi"}],
                   "tools": [{"type": "web_search_20250305", "name": "web_search"}]},
                  "x-api-key", env["ANTHROPIC_API_KEY"]))
texts.append(post(env["OPENAI_BASE_URL"] + "/chat/completions",
                  {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]},
                  "authorization", "Bearer " + env["OPENAI_API_KEY"]))
texts.append(post(env["OPENAI_BASE_URL"] + "/responses",
                  {"model": "gpt-5", "input": "hi", "stream": True},
                  "authorization", "Bearer " + env["OPENAI_API_KEY"]))
texts.append(post(env["GOOGLE_GEMINI_BASE_URL"] + "/v1beta/models/gemini-2.5-flash:generateContent",
                  {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
                  "x-goog-api-key", env["GEMINI_API_KEY"]))
subprocess.run(["rra", "run", "emit"], check=True, stdout=subprocess.DEVNULL)
(record,) = glob.glob("runs/emit/*/record.json")
value = json.load(open(record))["metrics"]["score"]
json.dump({"submission_version": "1.0", "values": [{"task": env["RRA_BENCH_TASK_KEY"], "value": value,
           "evidence": {"run_record": record, "output": "out/metrics.json", "script": "emit.sh"}}],
           "usage": {"tokens": STATED}}, open(env["RRA_BENCH_SUBMISSION"], "w"))
'''


def _expected() -> dict[str, Any]:
    totals = {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0,
              "reasoning_tokens": 0}
    cost = 0.0
    for model, u in CALLS:
        totals["input_tokens"] += u.input
        totals["output_tokens"] += u.output
        totals["cache_read_tokens"] += u.cache_read
        totals["cache_write_tokens"] += u.cache_write
        totals["reasoning_tokens"] += u.reasoning
        p_in, p_out, p_cr, p_cw = PRICES[model]
        cost += (u.input * p_in + u.output * p_out + u.cache_read * p_cr + u.cache_write * p_cw) / 1e6
    return {**totals, "calls": len(CALLS), "cost_usd": cost}


def _run(tmp: Path, sandbox: str, stated: int, limits: dict[str, Any],
         reproducer: str = REPRODUCER) -> tuple[Any, BenchResults, Path, ScriptedUpstream]:
    tiny_artifact(tmp / "tiny")
    taskset, references = tiny_taskset(tmp, repeats=1, conditions=["refined"], limits=limits,
                                       sandbox={"readonly": ["reproducer"]})
    public = json.loads(taskset.read_text())
    public["papers"][0]["experiments"][0]["tasks"] = public["papers"][0]["experiments"][0]["tasks"][:1]
    taskset.write_text(json.dumps(public))
    private = json.loads(references.read_text())
    private["references"] = private["references"][:1]
    references.write_text(json.dumps(private))
    (tmp / "reproducer").mkdir()
    script = tmp / "reproducer" / "calls.py"
    script.write_text(reproducer.replace("STATED", str(stated)), encoding="utf-8")
    upstream = ScriptedUpstream([ScriptedReply(f"reply {i}", usage=u) for i, (_, u) in enumerate(CALLS)])
    upstream.start()
    out = tmp / "out"
    try:
        proc = rra("bench", "run", str(taskset), "--references", str(references), "-o", str(out),
                   "--sandbox", sandbox, "--reproducer", f"calls=python3 {script}",
                   *(a for p in ("anthropic", "openai", "gemini") for a in ("--upstream", f"{p}={upstream.url}")),
                   env=REAL_KEYS, timeout=300)
    finally:
        upstream.close()
    assert proc.returncode == 0, proc.stderr
    return proc, BenchResults.model_validate_json((out / "results.json").read_text()), out, upstream


@pytest.mark.parametrize("sandbox", ["bwrap", "podman"])
def test_the_calls_are_metered_exactly_outside_the_cell(tmp_path: Path, sandbox: str) -> None:
    expected = _expected()
    tokens = sum(expected[k] for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"))
    proc, results, out, upstream = _run(tmp_path, sandbox, stated=tokens + 500, limits={"wall_clock_s": 120})
    (cell,) = results.cells
    assert cell.state == "success", (cell.detail, (out / cell.workspace / "..").resolve())
    assert cell.usage is not None and cell.usage.metered is not None
    metered = cell.usage.metered.model_dump()
    for name, value in expected.items():
        assert metered[name] == pytest.approx(value, abs=1e-12), name
    assert metered["price_table"] == "rra-prices 2026-12-01"
    # What the reproducer stated (500 tokens too many) is kept apart, and the difference reported.
    assert cell.usage.stated is not None and cell.usage.stated.tokens == tokens + 500
    assert [(d.field, d.stated, d.metered) for d in cell.usage.differences] == [("tokens", tokens + 500, tokens)]
    assert "stated usage differs from the metered usage by more than 1 %" in proc.stdout
    # The real keys reached the upstream; inside, the reproducer held only dummies.
    got = [(r.headers.get("x-api-key") or r.headers.get("x-goog-api-key") or r.headers.get("authorization"))
           for r in upstream.requests]
    assert got == ["sk-ant-real-test", "Bearer sk-openai-real-test", "Bearer sk-openai-real-test",
                   "gemini-real-test"]
    inside = json.loads((out / cell.workspace / "keys-inside.json").read_text())
    assert set(inside.values()) == {"rra-cell-dummy-key"}
    # The provider-side web search tool never reached the upstream.
    assert "tools" not in upstream.requests[0].body or not upstream.requests[0].body["tools"]
    # One line per call in the call log, beside the workspace, not in it.
    log = out / cell.usage.metered.call_log
    assert log.parent == (out / cell.workspace).parent
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(x["provider"], x["status"]) for x in lines] == [("anthropic", 200), ("openai", 200), ("openai", 200),
                                                             ("gemini", 200)]
    assert not any("real-test" in line for line in log.read_text().splitlines())


def test_a_spent_token_budget_ends_the_cell_as_limit_reached(tmp_path: Path) -> None:
    proc, results, out, upstream = _run(tmp_path, "bwrap", stated=0, limits={"wall_clock_s": 120, "tokens": 150})
    (cell,) = results.cells
    assert cell.state == "limit_reached", cell.detail
    assert cell.detail == ("the reproducer spent its token budget (150), as the metering proxy measured it, "
                           "and was stopped")
    assert cell.usage is not None and cell.usage.metered is not None
    assert cell.usage.metered.limit_reached == "tokens"
    # The first call (180 tokens) went through and passed the budget; nothing after it did.
    assert len(upstream.requests) == 1
    assert "limits reached (1):" in proc.stdout


def test_a_spent_working_time_ends_the_cell_as_limit_reached(tmp_path: Path) -> None:
    """limits.working_s: the proxy refuses the first call made after it, and the cell ends."""
    slow = REPRODUCER.replace('texts.append(post(env["OPENAI_BASE_URL"] + "/chat/completions"',
                              'import time; time.sleep(2.5)\ntexts.append(post(env["OPENAI_BASE_URL"] + "/chat/completions"',
                              1)
    assert slow != REPRODUCER
    _, results, _, upstream = _run(tmp_path, "bwrap", stated=0, limits={"wall_clock_s": 120, "working_s": 2},
                                   reproducer=slow)
    (cell,) = results.cells
    assert cell.state == "limit_reached", cell.detail
    assert cell.detail == ("the reproducer spent its working-time budget (2 s), as the metering proxy measured it, "
                           "and was stopped")
    assert len(upstream.requests) == 1  # the call made in time went through; the late one did not
