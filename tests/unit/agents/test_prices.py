"""The dated price table: the built-in one, an operator's file, model lookup, bad files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rra_tools.agents.proxy import ProxyError, load_price_table
from rra_tools.agents.proxy.prices import BUILTIN_PRICE_TABLE
from rra_tools.agents.scripted import ScriptedReply, ScriptedUsage

from .conftest import MakeCell, call

BUILTIN = Path(__file__).resolve().parents[3] / "rra_tools" / "agents" / "proxy" / "prices" / BUILTIN_PRICE_TABLE
REQUIRED = {
    "anthropic": ["claude-opus-4", "claude-opus-4-1", "claude-opus-4-5", "claude-sonnet-4", "claude-sonnet-4-5",
                  "claude-haiku-4-5", "claude-3-5-haiku"],
    "openai": ["gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5-codex", "gpt-4.1", "gpt-4.1-mini", "gpt-4o", "gpt-4o-mini",
               "o3", "o4-mini"],
    "gemini": ["gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"],
}


def test_the_builtin_table() -> None:
    table = load_price_table(None)
    assert table.label == "rra-prices 2026-12-01"
    assert (table.name, table.version, table.currency) == ("rra-prices", "2026-12-01", "USD")
    document = json.loads(BUILTIN.read_text())
    for provider, models in REQUIRED.items():
        assert set(models) <= set(document["providers"][provider]["models"])
        assert table.sources[provider].startswith("https://")
    price = table.models["claude-opus-4-5"]
    assert (price.input, price.output, price.cache_read, price.cache_write) == (5.0, 25.0, 0.5, 6.25)
    # Cache reads are cheaper than input and writes no cheaper, for every model.
    for model, price in table.models.items():
        assert price.cache_read <= price.input <= price.cache_write, model
        assert price.output >= price.input, model


@pytest.mark.parametrize(("model", "key"), [
    ("claude-sonnet-4-5", "claude-sonnet-4-5"),
    ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
    ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
    ("claude-sonnet-4-20250514", "claude-sonnet-4"),
    ("claude-opus-4-1-20250805", "claude-opus-4-1"),
    ("claude-opus-4-20250514", "claude-opus-4"),
    ("claude-3-5-haiku-20241022", "claude-3-5-haiku"),
    ("gpt-4o-2024-08-06", "gpt-4o"),
    ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
    ("gpt-5-codex", "gpt-5-codex"),
    ("gpt-5-mini-2025-08-07", "gpt-5-mini"),
    ("o4-mini-2025-04-16", "o4-mini"),
    ("gemini-2.5-flash-lite-preview-06-17", "gemini-2.5-flash-lite"),
    ("gemini-2.5-flash-preview-05-20", "gemini-2.5-flash"),
    ("gpt-5.1", None),       # not a dated gpt-5: the name goes on with '.'
    ("gpt-4omni", None),
    ("claude", None),
    ("llama-3-70b", None),
])
def test_model_lookup(model: str, key: str | None) -> None:
    found = load_price_table(None).lookup(model)
    assert (found[0] if found else None) == key


def test_cost_by_hand() -> None:
    table = load_price_table(None)
    # gpt-4.1-mini: 0.40 in, 1.60 out, 0.10 cached
    assert table.cost("gpt-4.1-mini-2025-04-14", 1_000_000, 500_000, 2_000_000, 0) == pytest.approx(0.4 + 0.8 + 0.2)
    assert table.cost("unknown-model", 1, 1, 1, 1) is None


def test_an_unpriced_model_is_listed_and_costs_nothing(make_cell: MakeCell) -> None:
    cell = make_cell([ScriptedReply("ok", usage=ScriptedUsage(input=10, output=5))] * 2)
    call(cell.connect(), "POST", "/v1/chat/completions", {"model": "mystery-model-1", "messages": []})
    call(cell.connect(), "POST", "/v1/chat/completions", {"model": "gpt-4o", "messages": []})
    usage = cell.proxy.usage()
    assert usage.unpriced_models == ["mystery-model-1"]
    assert usage.cost_usd == pytest.approx((10 * 2.5 + 5 * 10) / 1e6)
    assert usage.input_tokens == 20
    assert cell.log_lines()[0]["cost_usd"] is None


def write(tmp_path: Path, document: Any) -> Path:
    path = tmp_path / "prices.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


def valid() -> dict[str, Any]:
    return {"name": "lab-prices", "version": "2027-01-15", "currency": "USD", "providers": {
        "openai": {"source": "our contract", "models": {
            "gpt-4o": {"input": 1.0, "output": 4.0, "cache_read": 0.5, "cache_write": 1.0}}}}}


def test_an_operators_table_replaces_the_builtin_one(tmp_path: Path) -> None:
    table = load_price_table(write(tmp_path, valid()))
    assert table.label == "lab-prices 2027-01-15"
    assert table.cost("gpt-4o-2024-08-06", 1_000_000, 0, 0, 0) == 1.0
    assert table.lookup("claude-sonnet-4-5") is None


def test_a_table_with_many_problems_names_them_all(tmp_path: Path) -> None:
    document = valid()
    document["currency"] = "EUR"
    document["version"] = "2027-02-30"
    document["providers"]["openai"]["models"]["gpt-4o"] = {"input": "1.0", "output": -4, "cache-read": 0.5,
                                                           "cache_write": True}
    document["providers"]["anthropic"] = {"models": {"gpt-4o": {}}}
    path = write(tmp_path, document)
    with pytest.raises(ProxyError) as caught:
        load_price_table(path)
    assert str(caught.value) == (
        f"price table {str(path)!r} is not valid: "
        "'version' must be the table's date as YYYY-MM-DD, got '2027-02-30'; "
        "'currency' must be 'USD' (costs are recorded in USD), got 'EUR'; "
        "model 'gpt-4o' (openai) has an unknown figure 'cache-read' (known: input, output, cache_read, cache_write); "
        "'input' of model 'gpt-4o' (openai) must be a number >= 0 of USD per million tokens, got '1.0'; "
        "'output' of model 'gpt-4o' (openai) must be a number >= 0 of USD per million tokens, got -4; "
        "model 'gpt-4o' (openai) lacks 'cache_read'; "
        "'cache_write' of model 'gpt-4o' (openai) must be a number >= 0 of USD per million tokens, got True; "
        "'source' of provider 'anthropic' must say where its prices come from, got None; "
        "model 'gpt-4o' (anthropic) is also priced under provider 'openai'")
    assert caught.value.hint is not None and BUILTIN_PRICE_TABLE in caught.value.hint


@pytest.mark.parametrize(("text", "message"), [
    ('{"name": "x",\n  "version": }', "is not JSON: Expecting value at line 2 column 14"),
    ('{"name": "x", "name": "y"}', "is not valid: key 'name' appears twice in one object"),
    ("[]", "is not valid: the table must be a JSON object, got list"),
    ('{"name": "", "version": "2026-12-01", "currency": "USD", "providers": {"a": 1}}',
     "is not valid: 'name' must be a non-empty string, got ''; provider 'a' must be an object with 'source' and "
     "'models'"),
])
def test_a_file_that_is_not_a_table(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ProxyError) as caught:
        load_price_table(path)
    assert str(caught.value) == f"price table {str(path)!r} {message}"


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ProxyError, match=r"^price table '.*nowhere.json' cannot be read: \[Errno 2\]"):
        load_price_table(tmp_path / "nowhere.json")
