"""Documented bounds that keep reading hostile input cheap. Specified in spec/01-overview.md#limits."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

TYPE_CHECKING = False  # typing costs ~2 ms at import; mypy reads this name as true
if TYPE_CHECKING:
    from typing import Any

__all__ = ["INT_MAX", "INT_MIN", "MAX_DEPTH", "MAX_MANIFEST_BYTES", "MAX_NODES", "has_out_of_range_integer", "out_of_range_integers", "out_of_range_message"]

#: Largest manifest file read, in bytes (16 MiB): 10,000 launchers and 10,000 claims with five
#: observations each come to about 15 MiB of compact JSON.
MAX_MANIFEST_BYTES = 16 * 1024 * 1024

#: Most nodes a document may hold once aliases are expanded; stops "billion laughs".
MAX_NODES = 2_000_000

#: Deepest nesting of mappings and sequences; the standard's documents need fewer than 10.
MAX_DEPTH = 64

#: The integers a manifest may carry (spec/02-manifest.md#numbers): signed 64-bit, so every
#: implementation holds them exactly (JSON parsers that read numbers as binary64 do not: write
#: seeds above 2^53 as they are, and they still fit).
INT_MIN, INT_MAX = -(2**63), 2**63 - 1


# What an integer outside INT_MIN..INT_MAX needs in the text it is read from (see
# has_out_of_range_integer), found in the text's UTF-8 bytes with every ASCII digit made "1", the
# letters x and o (either case) made "x", the backslash kept and every other byte made a space:
# one C pass and three substring searches, about 40 ms for 16 MiB where a regular expression of
# the same three needs 0.3 s.
_DIGIT_CLASSES = bytes(0x31 if 0x30 <= b <= 0x39 else 0x78 if b in b"xXoO" else 0x5C if b == 0x5C else 0x20
                       for b in range(256))


def _may_hold_huge_integer(text: str) -> bool:
    classes = text.encode("utf-8", "surrogatepass").translate(_DIGIT_CLASSES)
    return b"\\" in classes or b"1x" in classes or b"1" * 19 in classes


def has_out_of_range_integer(data: Any, text: str | None = None) -> bool:
    """Whether :func:`out_of_range_integers` would find one; a quick answer for large documents
    (level by level, exact types first: parsed documents hold plain ``dict``, ``list`` and ``int``).

    ``text``, the text ``data`` was read from when it is known, can answer at once: a reader
    makes an integer only from a literal written in the text (JSON and YAML 1.2 core decimal
    integers of ASCII digits, YAML ``0x`` hex and ``0o`` octal, also under an ``!!int`` tag,
    whose quoted form may spell digits by escapes), and every decimal integer beyond 2^63-1 in
    size has at least 19 digits. A text without 19 ASCII digits in a row, without a digit
    before an x or an o and without a backslash holds none, and the walk of a 10,000-launcher
    manifest (a quarter of a second) is skipped. The test over-approximates (a long digit run
    inside a string counts too); it then falls back to the walk.

    >>> has_out_of_range_integer({"a": [1, {"b": -2**63 - 1}]}), has_out_of_range_integer([2**63 - 1, True])
    (True, False)
    >>> has_out_of_range_integer({"a": 2**64}, "a: 18446744073709551616"), has_out_of_range_integer({"a": 1}, "a: 1")
    (True, False)
    """
    if text is not None and not _may_hold_huge_integer(text):
        return False
    level = [data]
    while level:
        below: list[Any] = []
        for node in level:
            if type(node) is dict:
                children: Any = node.values()
            elif type(node) is list:
                children = node
            else:  # the root, or a container of another type: the general walk decides
                return next(out_of_range_integers(node), None) is not None
            for child in children:
                kind = type(child)
                if kind is str or kind is float or kind is bool or child is None:
                    continue  # most values
                if kind is int:
                    if not INT_MIN <= child <= INT_MAX:
                        return True
                elif kind is dict or kind is list:
                    below.append(child)
                elif isinstance(child, (int, Mapping, list)) and \
                        next(out_of_range_integers(child), None) is not None:
                    return True  # a subclass (never made by the readers): the general walk
        level = below
    return False


def out_of_range_integers(data: Any) -> Iterator[tuple[tuple[str | int, ...], int]]:
    """(JSON pointer, value) of every integer of ``data`` outside INT_MIN..INT_MAX, in document
    order, wherever it is (extensions and data maps included).

    >>> list(out_of_range_integers({"a": [1, 2**63], "b": -2**63}))
    [(('a', 1), 9223372036854775808)]
    """
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, Mapping):
            stack.extend(((*path, k), v) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend(((*path, i), v) for i, v in reversed(list(enumerate(node))))
        elif isinstance(node, int) and not isinstance(node, bool) and not INT_MIN <= node <= INT_MAX:
            yield path, node


#: The smallest magnitude of more than 4300 decimal digits.
_DECIMAL_CAP = 10**4300


def out_of_range_message(value: int) -> str:
    """What is wrong with an integer outside INT_MIN..INT_MAX, without printing thousands of digits."""
    # str() of an integer of more than 4300 digits raises (Python's default bound on a quadratic
    # conversion), so it is not asked; the readers read longer literals as a 4300-digit stand-in,
    # which cannot say how long the literal was: 4300 digits is "4300 digits or more".
    if abs(value) >= _DECIMAL_CAP:
        shown = "an integer of 4300 digits or more"
    else:
        digits = len(str(abs(value)))
        shown = str(value) if digits <= 40 else (
            f"an integer of {digits} digits" if digits < 4300 else "an integer of 4300 digits or more")
    return f"{shown} is out of range: integers must lie between -2^63 and 2^63-1"
