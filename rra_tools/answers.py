"""Answers that are not numbers: the claim kinds ``string``, ``set`` and ``list``, how a string is
normalised, and when a submitted answer matches the expected one (spec/02-manifest.md#kinds).

One module, below the validator, the builder and the benchmark evaluator, so that every tool
compares answers alike: the validator checks a reported answer against its kind with
:func:`parse_answer`, the scorer and the auditor compare with :func:`answer_mismatch`.

- **string**: equal after :func:`normalise_text` (Unicode NFKC, case folded, punctuation removed
  except between two digits, white space collapsed).
- **list**: as many elements, in the same order, each matching its counterpart.
- **set**: as many elements, paired one to one in any order (a multiset).
- **elements**: an element is a *number* when it is a JSON number or a string that reads as a
  decimal number (``"0.91"``, ``"-3"``, ``"1e-3"``), else *text*. Two numbers match when they
  differ by at most half a unit of the claim's printed precision (``precision: 2``: 0.005); two
  texts match when equal after :func:`normalise_text`; a number never matches a text.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Union

from .errors import ExitStatus, RRAError
from .intervals import Interval

__all__ = ["KINDS", "NUMBER", "Answer", "AnswerError", "AnswerInterval", "Element", "answer_mismatch",
           "answer_text", "answers_match", "as_decimal", "normalise_text", "number_text", "parse_answer",
           "split_elements", "tolerance"]

#: The claim kinds (spec/02-manifest.md#kinds); 'number' is the default and today's claims.
NUMBER = "number"
KINDS = (NUMBER, "string", "set", "list")

#: An element of a set or list answer: a number or a text.
Element = Union[float, str]
#: A non-numeric answer as compared: a string (kind string) or a tuple of elements (set, list).
Answer = Union[str, tuple[Element, ...]]

#: Elements of a set or list answer at most (a submission is untrusted input).
MAX_ELEMENTS = 10_000
#: Characters of a string answer or element at most.
MAX_TEXT = 4096


class AnswerError(RRAError):
    """A value does not fit the claim's kind (the message says how)."""

    exit_status = ExitStatus.FAILED


def normalise_text(text: str) -> str:
    """``text`` as string answers are compared: Unicode NFKC, case folded, every punctuation
    character (Unicode category P*) removed unless it stands between two digits, runs of white
    space made one space, and none at either end. Punctuation includes ``% & * # @ / - _ ' "`` and
    brackets; symbols (Unicode category S*: ``+ $ < = > | ~``) are kept.

    >>> normalise_text("  The ADAM  optimiser. ")
    'the adam optimiser'
    >>> normalise_text("Accuracy: 3.14% (1,000 runs)")
    'accuracy 3.14 1,000 runs'
    >>> normalise_text("ＲｅＬＵ")  # full-width letters are NFKC-equal to ASCII
    'relu'
    >>> normalise_text("state-of-the-art") == normalise_text("State of the art")
    False
    """
    text = unicodedata.normalize("NFKC", text).casefold()
    kept = []
    last = len(text) - 1
    for i, char in enumerate(text):
        if unicodedata.category(char).startswith("P") and not (
                0 < i < last and text[i - 1].isdigit() and text[i + 1].isdigit()):
            continue
        kept.append(char)
    return " ".join("".join(kept).split())


_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def as_decimal(element: Element) -> float | None:
    """The number an element stands for (a number, or a string that reads as a decimal number
    once white space is stripped); None for text.

    >>> as_decimal(" -0.5 "), as_decimal("1e-3"), as_decimal("adam"), as_decimal("nan")
    (-0.5, 0.001, None, None)
    """
    if isinstance(element, str):
        stripped = element.strip()
        if not _DECIMAL.fullmatch(stripped):
            return None
        value = float(stripped)
        return value if math.isfinite(value) else None
    return element


def number_text(value: float) -> str:
    """A number as text (kind string compares a number submitted for a string answer by this):
    an integral value without its '.0'.

    >>> number_text(42.0), number_text(0.25)
    ('42', '0.25')
    """
    return str(int(value)) if value.is_integer() and abs(value) < 1e16 else repr(value)


def tolerance(precision: int) -> float:
    """How far two number elements may differ and still match: half a unit of ``precision``."""
    return 0.5 * 10.0 ** -max(precision, 0)


def _element(raw: object, where: str, scale: float) -> Element:
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        raise AnswerError(f"{where} is {_shown(raw)}, not a number or a string")
    if isinstance(raw, str):
        if len(raw) > MAX_TEXT:
            raise AnswerError(f"{where} is longer than {MAX_TEXT} characters")
        return raw
    value = float(raw) * scale
    if not math.isfinite(value):
        raise AnswerError(f"{where} is {raw!r}, not a finite number")
    return value


def _shown(raw: object) -> str:
    if raw is None:
        return "null"
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, (dict, list, tuple)):
        return f"a JSON {'object' if isinstance(raw, dict) else 'array'}"
    return repr(raw)


def _described(raw: object) -> str:
    """What a value is, for a message: "'adam' is a string", "the answer is null"."""
    if isinstance(raw, str):
        return f"{raw[:60]!r} is a string"
    if isinstance(raw, bool):
        return f"{_shown(raw)} is a boolean"
    if isinstance(raw, (int, float)):
        return f"{raw!r} is a number"
    return f"the answer is {_shown(raw)}"


def parse_answer(raw: object, kind: str, scale: float = 1.0) -> Answer:
    """``raw`` (a JSON value) as an answer of ``kind`` ('string', 'set' or 'list'); AnswerError
    saying why it does not fit. A string answer may be given as a number (it is then its
    :func:`number_text`); a set or list is a JSON array of numbers and strings, its numbers
    multiplied by ``scale``.

    >>> parse_answer(["Adam", 3], "list")
    ('Adam', 3.0)
    >>> parse_answer("Adam", "set")
    Traceback (most recent call last):
    ...
    rra_tools.answers.AnswerError: 'Adam' is a string, not a JSON array (kind set)
    """
    if kind == "string":
        if isinstance(raw, str):
            if len(raw) > MAX_TEXT:
                raise AnswerError(f"the answer is longer than {MAX_TEXT} characters")
            return raw
        if isinstance(raw, (int, float)) and not isinstance(raw, bool) and math.isfinite(raw):
            return number_text(float(raw))
        raise AnswerError(f"{_shown(raw)} is not a string (kind string)")
    if kind in ("set", "list"):
        if isinstance(raw, (list, tuple)):
            if len(raw) > MAX_ELEMENTS:
                raise AnswerError(f"the answer has {len(raw)} elements, more than {MAX_ELEMENTS}")
            return tuple(_element(item, f"element {i}", scale) for i, item in enumerate(raw))
        raise AnswerError(f"{_described(raw)}, not a JSON array (kind {kind})")
    raise AnswerError(f"unknown claim kind {kind!r}; the kinds are {', '.join(KINDS)}")


def split_elements(text: str) -> tuple[str, ...]:
    """A set or list read from one line of text (a CSV cell, a regex group): a JSON array when it
    starts with '[', else the comma-separated items, each stripped of white space.

    >>> split_elements(" adam, sgd ,rmsprop")
    ('adam', 'sgd', 'rmsprop')
    >>> split_elements('["a, b", 2]')
    ('a, b', '2')
    """
    import json

    stripped = text.strip()
    if stripped.startswith("["):
        try:
            items = json.loads(stripped)
        except ValueError as exc:
            raise AnswerError(f"{stripped[:60]!r} starts with '[' but is not a JSON array: {exc}") from None
        if not isinstance(items, list) or any(isinstance(i, (bool, dict, list)) or i is None for i in items):
            raise AnswerError(f"{stripped[:60]!r} is not a JSON array of numbers and strings")
        return tuple(i if isinstance(i, str) else number_text(float(i)) for i in items)
    if not stripped:
        return ()
    return tuple(item.strip() for item in stripped.split(","))


def _elements_match(expected: Element, got: Element, tol: float) -> bool:
    a, b = as_decimal(expected), as_decimal(got)
    if a is not None or b is not None:
        if a is None or b is None:
            return False
        return abs(a - b) <= tol + 1e-12 * max(1.0, abs(a))
    assert isinstance(expected, str) and isinstance(got, str)
    return normalise_text(expected) == normalise_text(got)


def answer_text(answer: Answer | float) -> str:
    """An answer as a detail shows it: a string quoted, a set or list as a JSON array."""
    import json

    if isinstance(answer, str):
        return repr(answer)
    if isinstance(answer, float):
        return repr(answer)
    return json.dumps(list(answer), ensure_ascii=False)


def answer_mismatch(kind: str, expected: Answer, got: Answer | float, precision: int) -> str | None:
    """Why ``got`` does not match ``expected`` (an answer of ``kind``, numbers printed with
    ``precision`` decimals), in words; None when it matches.

    >>> answer_mismatch("string", "Adam optimizer", "adam  Optimizer.", 0) is None
    True
    >>> answer_mismatch("list", ("sgd", 0.91), ("sgd", "0.912"), 2) is None
    True
    >>> answer_mismatch("list", ("sgd", 0.91), ("sgd", 0.92), 2)
    'element 1: 0.92 does not match 0.91 (numbers within 0.005)'
    >>> answer_mismatch("set", ("a", "b"), ("B", "A"), 0) is None
    True
    >>> print(answer_mismatch("set", ("a", "b"), ("a", "a"), 0))
    'b' has no counterpart in ["a", "a"]
    """
    tol = tolerance(precision)
    if kind == "string":
        text = got if isinstance(got, str) else number_text(got) if isinstance(got, float) else None
        if text is None:
            return f"{answer_text(got)} is not a string"
        if normalise_text(text) == normalise_text(expected if isinstance(expected, str) else ""):
            return None
        return f"{text!r} does not match {expected!r} (normalised: {normalise_text(text)!r} vs " \
               f"{normalise_text(expected if isinstance(expected, str) else '')!r})"
    if isinstance(got, (str, float)) or isinstance(expected, str):
        return f"{answer_text(got)} is not a JSON array"
    if len(got) != len(expected):
        return f"{len(got)} element(s) where {len(expected)} are expected"
    if kind == "list":
        for i, (e, g) in enumerate(zip(expected, got)):
            if not _elements_match(e, g, tol):
                return f"element {i}: {answer_text((g,))[1:-1]} does not match {answer_text((e,))[1:-1]}" + (
                    f" (numbers within {tol:g})" if as_decimal(e) is not None else " (texts normalised)")
        return None
    return _set_mismatch(expected, got, tol)


def _set_mismatch(expected: Sequence[Element], got: Sequence[Element], tol: float) -> str | None:
    """Texts pair up when their normalised multisets are equal; numbers pair up within ``tol``
    exactly when they do in sorted order (one dimension, one tolerance: sorted pairing is a
    perfect pairing whenever one exists)."""
    e_num = sorted(v for v in map(as_decimal, expected) if v is not None)
    g_num = sorted(v for v in map(as_decimal, got) if v is not None)
    e_txt = Counter(normalise_text(str(x)) for x in expected if as_decimal(x) is None)
    g_txt = Counter(normalise_text(str(x)) for x in got if as_decimal(x) is None)
    shown = answer_text(tuple(got))
    if e_txt != g_txt or len(e_num) != len(g_num):
        missing = e_txt - g_txt
        if missing:
            original = next(str(x) for x in expected if as_decimal(x) is None
                            and normalise_text(str(x)) in missing)
            return f"{original!r} has no counterpart in {shown}"
        return f"{shown} has elements that {answer_text(tuple(expected))} does not"
    for a, b in zip(e_num, g_num):
        if abs(a - b) > tol + 1e-12 * max(1.0, abs(a)):
            return f"{a!r} has no counterpart within {tol:g} in {shown}"
    return None


def answers_match(kind: str, expected: Answer, got: Answer | float, precision: int) -> bool:
    """Whether ``got`` matches ``expected`` (:func:`answer_mismatch` says why not)."""
    return answer_mismatch(kind, expected, got, precision) is None


@dataclass(frozen=True)
class AnswerInterval(Interval):
    """The acceptance "interval" of a non-numeric task: its expected answer. It takes the place
    of an :class:`Interval` wherever a task carries one (``ResolvedTask.interval``), so that the
    scorer's one call decides both kinds. No range of numbers is accepted: its numeric fields are
    zero (finite, so that results files and decoy values made from them stay valid JSON), and
    :meth:`contains` accepts only an answer that matches."""

    kind: str = "string"
    expected: Answer = ""
    precision: int = 0

    @classmethod
    def of(cls, kind: str, expected: Answer, precision: int, n: int) -> AnswerInterval:
        """The interval of an answer of ``kind`` from ``n`` reference observations."""
        return cls(0.0, 0.0, 0.0, tolerance(precision), n, kind, expected, precision)

    def contains(self, value: object) -> bool:
        """Whether ``value`` matches the expected answer."""
        return self.mismatch(value) is None

    def mismatch(self, value: object) -> str | None:
        """Why ``value`` does not match the expected answer; None when it does."""
        if isinstance(value, list):
            value = tuple(value)
        if isinstance(value, bool) or not isinstance(value, (str, float, int, tuple)):
            return f"{value!r} is not an answer"
        got = float(value) if isinstance(value, int) else value
        return answer_mismatch(self.kind, self.expected, got, self.precision)
