"""The dated price table the proxy costs calls with, and how a model name finds its price.

A table is a JSON file: ``name``, ``version`` (the date it was made, ``YYYY-MM-DD``), ``currency``
(``USD``) and ``providers``, each with a ``source`` (where its prices come from and what is
not modelled) and ``models``: per model family, USD per million tokens of ``input``, ``output``,
``cache_read`` and ``cache_write``. The built-in table is ``prices/rra-prices-2026-12-01.json``;
an operator's file replaces it whole. A call costs::

    (input * p_input + output * p_output + cache_read * p_cache_read + cache_write * p_cache_write) / 1e6

with the normalised figures of :mod:`.usage` (output includes reasoning, input excludes cache).
A model is found by its exact name, else by the longest table key that is a prefix of it and
ends where the name goes on with ``-`` or ``@``: ``claude-sonnet-4-5-20250929`` and
``claude-sonnet-4-5@20250929`` are priced as ``claude-sonnet-4-5``, ``gpt-4o-2024-08-06`` as
``gpt-4o``, but ``gpt-5.1`` is not priced as ``gpt-5``.

>>> table = load_price_table(None)
>>> table.label, table.lookup("gpt-4o-mini-2024-07-18")[0]
('rra-prices 2026-12-01', 'gpt-4o-mini')
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Any

from .errors import ProxyError

__all__ = ["BUILTIN_PRICE_TABLE", "ModelPrice", "PriceTable", "load_price_table"]

#: The file name of the built-in table, in the package's ``prices`` folder.
BUILTIN_PRICE_TABLE = "rra-prices-2026-12-01.json"

_FIGURES = ("input", "output", "cache_read", "cache_write")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens of each kind, for one model family."""

    input: float
    output: float
    cache_read: float
    cache_write: float


@dataclass(frozen=True)
class PriceTable:
    """A dated price table: model family -> :class:`ModelPrice`, and where the prices come from."""

    name: str
    version: str
    currency: str
    models: Mapping[str, ModelPrice]
    sources: Mapping[str, str]
    path: str | None = None
    _found: dict[str, tuple[str, ModelPrice] | None] = field(default_factory=dict, repr=False, compare=False)

    @property
    def label(self) -> str:
        """Name and date, as a cell's record cites the table: ``'rra-prices 2026-12-01'``."""
        return f"{self.name} {self.version}"

    def lookup(self, model: str) -> tuple[str, ModelPrice] | None:
        """The table key and price of ``model`` (exact name, else the longest key that is a prefix
        of it followed by ``-`` or ``@``), or None when the table has none."""
        if model in self._found:
            return self._found[model]
        found: tuple[str, ModelPrice] | None = None
        if model in self.models:
            found = (model, self.models[model])
        else:
            best = ""
            for key in self.models:
                if len(key) > len(best) and model.startswith(key) and model[len(key)] in "-@":
                    best = key
            if best:
                found = (best, self.models[best])
        self._found[model] = found  # a dict store is atomic: threads may race to the same answer
        return found

    def cost(self, model: str, input: int, output: int, cache_read: int, cache_write: int) -> float | None:  # noqa: A002 (the token kinds' names)
        """USD for the tokens of one call of ``model``, or None when the table has no price for it."""
        found = self.lookup(model)
        if found is None:
            return None
        price = found[1]
        return (input * price.input + output * price.output + cache_read * price.cache_read
                + cache_write * price.cache_write) / 1e6


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"key {key!r} appears twice in one object")
        seen[key] = value
    return seen


def _price(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def _check(document: Any) -> tuple[list[str], PriceTable | None]:
    # Every problem of the table at once, in the order of the file (house rule: validators yield all).
    if not isinstance(document, dict):
        return [f"the table must be a JSON object, got {type(document).__name__}"], None
    problems: list[str] = []
    name, version, currency = document.get("name"), document.get("version"), document.get("currency")
    if not isinstance(name, str) or not name:
        problems.append(f"'name' must be a non-empty string, got {name!r}")
    valid_date = isinstance(version, str) and _DATE.fullmatch(version) is not None
    if valid_date:
        try:
            date.fromisoformat(str(version))
        except ValueError:
            valid_date = False
    if not valid_date:
        problems.append(f"'version' must be the table's date as YYYY-MM-DD, got {version!r}")
    if currency != "USD":
        problems.append(f"'currency' must be 'USD' (costs are recorded in USD), got {currency!r}")
    providers = document.get("providers")
    models: dict[str, ModelPrice] = {}
    sources: dict[str, str] = {}
    owner: dict[str, str] = {}
    if not isinstance(providers, dict) or not providers:
        problems.append(f"'providers' must be a non-empty object, got {providers!r}")
        providers = {}
    for provider, entry in providers.items():
        if not isinstance(entry, dict):
            problems.append(f"provider {provider!r} must be an object with 'source' and 'models'")
            continue
        source = entry.get("source")
        if not isinstance(source, str) or not source:
            problems.append(f"'source' of provider {provider!r} must say where its prices come from, got {source!r}")
        else:
            sources[provider] = source
        table = entry.get("models")
        if not isinstance(table, dict) or not table:
            problems.append(f"'models' of provider {provider!r} must be a non-empty object, got {table!r}")
            continue
        for model, prices in table.items():
            where = f"model {model!r} ({provider})"
            if model in owner:
                problems.append(f"{where} is also priced under provider {owner[model]!r}")
                continue
            owner[model] = provider
            if not isinstance(prices, dict):
                problems.append(f"{where} must be an object with {', '.join(_FIGURES)}, got {prices!r}")
                continue
            for key in prices:
                if key not in _FIGURES:
                    problems.append(f"{where} has an unknown figure {key!r} (known: {', '.join(_FIGURES)})")
            bad = False
            for figure in _FIGURES:
                if figure not in prices:
                    problems.append(f"{where} lacks {figure!r}")
                    bad = True
                elif not _price(prices[figure]):
                    problems.append(f"{figure!r} of {where} must be a number >= 0 of USD per million tokens, "
                                    f"got {prices[figure]!r}")
                    bad = True
            if not bad:
                models[model] = ModelPrice(*(float(prices[figure]) for figure in _FIGURES))
    if problems:
        return problems, None
    return [], PriceTable(str(name), str(version), "USD", models, sources)


def load_price_table(path: Path | None) -> PriceTable:
    """The price table in ``path``, or the built-in one when ``path`` is None.

    Raises :class:`ProxyError` naming the file and every problem in it when it cannot be read,
    is not JSON, or is not a valid table.

    >>> import tempfile, os
    >>> bad = Path(tempfile.mkdtemp()) / "prices.json"
    >>> _ = bad.write_text('{"name": "mine", "version": "2026-13-01", "currency": "USD", "providers": {}}')
    >>> load_price_table(bad)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rra_tools.agents.proxy.errors.ProxyError: price table '...prices.json' is not valid: 'version' must be the table's date as YYYY-MM-DD, got '2026-13-01'; 'providers' must be a non-empty object, got {}
    """
    if path is None:
        where = f"built-in {BUILTIN_PRICE_TABLE}"
        text = resources.files(__package__).joinpath("prices").joinpath(BUILTIN_PRICE_TABLE).read_text(encoding="utf-8")
    else:
        where = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ProxyError(f"price table {where!r} cannot be read: {error}") from None
    try:
        document = json.loads(text, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as error:
        raise ProxyError(f"price table {where!r} is not JSON: {error.msg} at line {error.lineno} column "
                         f"{error.colno}") from None
    except ValueError as error:
        raise ProxyError(f"price table {where!r} is not valid: {error}") from None
    problems, table = _check(document)
    if table is None:
        raise ProxyError(f"price table {where!r} is not valid: {'; '.join(problems)}",
                         hint="the built-in table shows the format: rra_tools/agents/proxy/prices/" + BUILTIN_PRICE_TABLE)
    return PriceTable(table.name, table.version, table.currency, table.models, table.sources, path=where)
