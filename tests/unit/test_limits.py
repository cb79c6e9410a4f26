"""rra_tools.io.limits at its edges: the bounds the spec states, the text pre-check of
has_out_of_range_integer byte by byte, containers the readers never make, and the message's
cut-offs. (tests/unit/test_validate_shortcuts.py compares the pre-check with the walk over
every document of the repository and over generated spellings.)"""

from __future__ import annotations

import re
from collections import OrderedDict
from enum import IntEnum
from pathlib import Path
from typing import Any

import pytest

from rra_tools.io import limits
from rra_tools.io.limits import has_out_of_range_integer, out_of_range_integers, out_of_range_message

REPO = Path(__file__).resolve().parents[2]


def test_the_bounds_are_the_ones_the_spec_states() -> None:
    table = (REPO / "spec" / "01-overview.md").read_text(encoding="utf-8")
    assert re.search(r"\| File size \| 16 MiB \(16,777,216 bytes\) \|", table)
    assert re.search(r"with each use of an alias counting the whole aliased value again \| 2,000,000 \|", table)
    assert re.search(r"\| Nesting of mappings and sequences \| 64 levels", table)
    assert limits.MAX_MANIFEST_BYTES == 16_777_216
    assert limits.MAX_NODES == 2_000_000
    assert limits.MAX_DEPTH == 64
    # spec/02-manifest.md#numbers: signed 64-bit.
    assert (limits.INT_MIN, limits.INT_MAX) == (-9223372036854775808, 9223372036854775807)


# What the pre-check must let through to the walk (True) and what it may rule out (False): one
# character at a time around each class's boundaries.
_PRE_CHECK = [
    ("", False),
    ("1" * 18, False),
    ("1" * 19, True),
    ("0" * 19, True),
    ("9" * 19, True),
    ("5" * 9 + "0" + "5" * 9, True),
    ("9" * 9 + "/" + "9" * 9, False),   # the bytes on either side of the digits
    ("9" * 9 + ":" + "9" * 9, False),
    ("0x", True), ("0X", True), ("0o", True), ("0O", True), ("7x", True),
    ("0w", False), ("0y", False), ("0n", False), ("0p", False), ("0Y", False),
    ("x0", False), ("o0", False),
    ("\\", True), ("a\\b", True),
    ("[", False), ("]", False), ("/", False), ("a b: [1, 2]", False),
    ("\u00e9" * 19, False),              # non-ASCII bytes are never digits
    ("\ud800", False),                   # a lone surrogate (surrogatepass) is no digit either
]


@pytest.mark.parametrize(("text", "may"), _PRE_CHECK)
def test_the_text_pre_check_byte_by_byte(text: str, may: bool) -> None:
    assert limits._may_hold_huge_integer(text) is may, text
    # Without a literal that may be large, the data is not even looked at.
    assert has_out_of_range_integer({"a": 2**64} if may else {"a": 1}, text) is may


def test_the_answers_are_booleans() -> None:
    assert has_out_of_range_integer({"a": [1]}) is False
    assert has_out_of_range_integer({"a": [1]}, "a: [1]") is False
    assert has_out_of_range_integer({"a": [1]}, "a: [" + "1" * 19 + "]") is False
    assert has_out_of_range_integer({"a": [2**63]}) is True


class _Small(IntEnum):
    ONE = 1


# Containers and numbers no reader makes (the readers make plain dict, list and int): the answer
# is still the walk's, whatever the level they are found at and whatever follows them.
_ODD = [
    (2**64,), [(2**64,)], {"a": (2**64,), "b": [1]},
    {"a": (1,), "b": [2**64]}, {"a": {1, 2}, "b": [[2**64]]}, {"a": object(), "b": {"c": 2**64}},
    [(1,), [2**64]], [frozenset([1]), {"c": [2**64]}],
    OrderedDict(a=2**64), {"a": OrderedDict(b=1)}, {"a": OrderedDict(b=1), "z": 2**64},
    {"a": OrderedDict(b=[2**64])}, [OrderedDict(b=1), 1],
    {"a": _Small.ONE}, [_Small.ONE, 2**64], {"a": _Small.ONE, "b": 1},
    2**64, -(2**63) - 1, 2**63 - 1, -(2**63), True, None, "1" * 30, 1.5e300,
    {"a": "x", "b": 2**64}, ["x", 2**64], [None, 1.0, True, "s", -(2**63) - 1],
]


@pytest.mark.parametrize("data", _ODD, ids=range(len(_ODD)))
def test_containers_no_reader_makes_get_the_walks_answer(data: Any) -> None:
    assert has_out_of_range_integer(data) is (next(out_of_range_integers(data), None) is not None)


def test_the_message_shows_up_to_40_digits() -> None:
    forty, forty_one = 10**39, 10**40
    assert out_of_range_message(forty) == f"{forty} is out of range: integers must lie between -2^63 and 2^63-1"
    assert out_of_range_message(-forty) == f"-{forty} is out of range: integers must lie between -2^63 and 2^63-1"
    assert out_of_range_message(forty_one) == (
        "an integer of 41 digits is out of range: integers must lie between -2^63 and 2^63-1")
    assert out_of_range_message(-(10**4298)).startswith("an integer of 4299 digits is out of range")
    # Counted exactly up to 4,299 digits (before, every value of 14,000 bits or more, 4,215
    # digits, was "4300 digits or more"); from 4,300 digits (the readers' stand-in for longer
    # literals) it is never converted to decimal: str() refuses more than 4,300 digits.
    assert out_of_range_message(2**13999).startswith("an integer of 4215 digits is")
    assert out_of_range_message(10**4299 - 1).startswith("an integer of 4299 digits is")
    assert out_of_range_message(-(10**4299 - 1)).startswith("an integer of 4299 digits is")
    assert out_of_range_message(10**4299).startswith("an integer of 4300 digits or more is")
    assert out_of_range_message(10**4300 - 1).startswith("an integer of 4300 digits or more is")
    assert out_of_range_message(10**4300).startswith("an integer of 4300 digits or more is")
    assert out_of_range_message(-(10**100_000)).startswith("an integer of 4300 digits or more is")
