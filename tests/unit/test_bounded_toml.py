"""The bounded TOML reader (rra_tools/io/read/bounded_toml.py): within bounds it is tomllib; beyond
them, or too deep for tomllib's recursion, a TOMLDecodeError rather than a RecursionError."""

from __future__ import annotations

import tomllib

import pytest

from rra_tools.env.locks import LockError, parse_pylock
from rra_tools.io.read import bounded_toml


def test_what_tomllib_reads_it_reads() -> None:
    text = '[project]\nname = "x"  # [[[\ndependencies = ["a[b]", \'{c\']\n[[tool.t]]\nv = {w = [1, [2]]}\n'
    assert bounded_toml.loads(text) == tomllib.loads(text)
    assert bounded_toml.nesting_depth(text) == 3  # v = {w = [1, [2]]}


@pytest.mark.parametrize("text", ["a = " + "[" * 100_000 + "]" * 100_000,
                                  "a = " + "{b = " * 100_000 + "1" + "}" * 100_000,
                                  "a = " + "[" * 65 + "]" * 65])
def test_deep_nesting_is_a_decode_error(text: str) -> None:
    with pytest.raises(tomllib.TOMLDecodeError, match=r"nested \d+ deep, more than 64"):
        bounded_toml.loads(text)


def test_a_recursion_the_count_misses_is_a_decode_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounded_toml, "MAX_TOML_DEPTH", 10**9)
    with pytest.raises(tomllib.TOMLDecodeError, match="deeper than Python can parse"):
        bounded_toml.loads("a = " + "[" * 100_000 + "]" * 100_000)


def test_too_large_is_a_decode_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounded_toml, "MAX_TOML_BYTES", 10)
    with pytest.raises(tomllib.TOMLDecodeError, match="more than the 10 read"):
        bounded_toml.loads('name = "abcdefgh"')


def test_a_deep_pylock_is_a_lock_error() -> None:
    with pytest.raises(LockError, match="invalid TOML: arrays or tables nested 100000 deep"):
        parse_pylock("lock-version = " + "[" * 100_000 + "]" * 100_000, "pylock.toml")
