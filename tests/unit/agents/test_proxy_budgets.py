"""Budgets: the call that passes a budget is answered, the limit is set at once, and every later
call is refused with a provider-shaped error that SDKs do not retry."""

from __future__ import annotations

import time

import pytest

from rra_tools.agents.proxy import Budgets, ProxyError
from rra_tools.agents.scripted import ScriptedFailure, ScriptedReply, ScriptedUsage

from .conftest import MakeCell, call

MESSAGES = {"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": [{"role": "user", "content": "x"}]}
# 400 + 100 + 300 + 200 = 1,000 tokens; 400*3 + 100*15 + 300*0.3 + 200*3.75 = 3,540 micro-USD.
REPLY = ScriptedReply("ok", usage=ScriptedUsage(input=400, output=100, cache_read=300, cache_write=200))


@pytest.mark.parametrize(("budgets", "name", "message"), [
    (Budgets(tokens=2000), "tokens", "rra: the cell's token budget (2000) is spent"),
    (Budgets(cost_usd=0.007), "cost_usd", "rra: the cell's cost budget (0.007 USD) is spent"),
    (Budgets(calls=2), "calls", "rra: the cell's call budget (2) is spent"),
])
def test_a_budget_trips_after_the_call_that_reaches_it(make_cell: MakeCell, budgets: Budgets, name: str,
                                                       message: str) -> None:
    cell = make_cell([], default=REPLY, budgets=budgets)
    conn = cell.connect()
    assert call(conn, "POST", "/v1/messages", MESSAGES).status == 200
    assert not cell.proxy.limit_event.is_set()
    assert cell.proxy.limit_reached is None
    assert call(conn, "POST", "/v1/messages", MESSAGES).status == 200  # reaches the budget exactly
    assert cell.proxy.limit_event.is_set()
    assert cell.proxy.limit_reached == name
    refused = call(conn, "POST", "/v1/messages", MESSAGES)
    assert refused.status == 403
    assert refused.json() == {"type": "error", "error": {"type": "permission_error", "message": message}}
    assert refused.headers["x-should-retry"] == "false"
    usage = cell.proxy.usage()
    assert (usage.calls, usage.refused, usage.limit_reached) == (2, 1, name)
    assert cell.upstream.calls == 2  # the refused call never reached the upstream
    assert cell.log_lines()[-1]["status"] == 403 and cell.log_lines()[-1]["error"] == message


def test_the_cost_budget_is_spent_when_reached_exactly(make_cell: MakeCell) -> None:
    # claude-haiku-4-5 input costs 1 USD per million: 250,000 tokens are 0.25 USD, exact in binary.
    cell = make_cell([], default=ScriptedReply("ok", usage=ScriptedUsage(input=250_000)),
                     budgets=Budgets(cost_usd=0.5))
    conn = cell.connect()
    body = {**MESSAGES, "model": "claude-haiku-4-5"}
    assert call(conn, "POST", "/v1/messages", body).status == 200
    assert cell.proxy.limit_reached is None
    assert call(conn, "POST", "/v1/messages", body).status == 200
    assert cell.proxy.usage().cost_usd == 0.5
    assert cell.proxy.limit_reached == "cost_usd"
    assert call(conn, "POST", "/v1/messages", body).status == 403


def test_the_refusal_is_in_each_providers_shape(make_cell: MakeCell) -> None:
    cell = make_cell([], default=REPLY, budgets=Budgets(calls=0))
    conn = cell.connect("unix")
    chat = call(conn, "POST", "/v1/chat/completions", {"model": "gpt-4o", "messages": []})
    gemini = call(conn, "POST", "/v1beta/models/gemini-2.5-pro:generateContent", {"contents": []})
    message = "rra: the cell's call budget (0) is spent"
    assert (chat.status, gemini.status) == (403, 403)
    assert chat.json() == {"error": {"message": message, "type": "insufficient_quota", "param": None, "code": None}}
    assert gemini.json() == {"error": {"code": 403, "message": message, "status": "PERMISSION_DENIED"}}
    assert cell.proxy.usage().refused == 2
    assert cell.upstream.calls == 0


def test_working_time_leaves_out_the_waits_to_retry(make_cell: MakeCell) -> None:
    """wall_s 0.5: a call that waits 0.7 s for a retry does not spend it; the watcher sets the
    limit once 0.5 s of working time have passed, with no call coming."""
    cell = make_cell([ScriptedFailure(429, retry_after=0.7), REPLY], budgets=Budgets(wall_s=0.5),
                     backoff_s=0.01)
    conn = cell.connect()
    started = time.monotonic()
    assert call(conn, "POST", "/v1/messages", MESSAGES).status == 200
    assert time.monotonic() - started >= 0.7
    assert 0.7 <= cell.proxy.usage().waiting_s < 1.5
    assert not cell.proxy.limit_event.is_set()
    assert cell.proxy.limit_event.wait(5)
    assert cell.proxy.limit_reached == "wall_s"
    refused = call(conn, "POST", "/v1/messages", MESSAGES)
    assert refused.status == 403
    assert refused.json()["error"]["message"] == "rra: the cell's working-time budget (0.5 s) is spent"


def test_a_negative_budget_is_refused() -> None:
    with pytest.raises(ProxyError, match=r"^the cost_usd budget must be >= 0, got -0.5$"):
        Budgets(cost_usd=-0.5)


def _burst(cell: "object", n: int) -> list[int]:
    """``n`` calls at once, each on its own connection; their statuses."""
    import threading

    statuses: list[int] = []
    lock = threading.Lock()

    def one() -> None:
        # Streamed: the scripted model pauses between events, so the calls overlap.
        answer = call(cell.connect(), "POST", "/v1/messages", {**MESSAGES, "stream": True})  # type: ignore[attr-defined]
        with lock:
            statuses.append(answer.status)

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return statuses


def test_calls_fired_at_once_cannot_overshoot_the_call_budget(make_cell: MakeCell) -> None:
    """Ten calls at once against a budget of three: calls in flight count when admitted, so exactly
    three reach the upstream (without it, all ten passed the check before any was answered)."""
    cell = make_cell([], default=ScriptedReply("ok", usage=ScriptedUsage(input=10), pause_s=0.3),
                     budgets=Budgets(calls=3))
    statuses = _burst(cell, 10)
    assert sorted(statuses) == [200] * 3 + [403] * 7
    assert cell.upstream.calls == 3
    assert cell.proxy.usage().calls == 3


def test_calls_fired_at_once_overshoot_a_token_budget_by_at_most_the_calls_in_flight(make_cell: MakeCell) -> None:
    """Under a token budget at most MAX_IN_FLIGHT calls are forwarded at once; the others wait, then
    find the budget spent."""
    from rra_tools.agents.proxy.budget import MAX_IN_FLIGHT

    cell = make_cell([], default=ScriptedReply("ok", usage=ScriptedUsage(input=1000), pause_s=0.3),
                     budgets=Budgets(tokens=100))
    statuses = _burst(cell, 12)
    assert statuses.count(200) == MAX_IN_FLIGHT == cell.upstream.calls
    assert statuses.count(403) == 12 - MAX_IN_FLIGHT
