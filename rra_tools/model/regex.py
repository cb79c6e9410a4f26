"""The regular-expression dialect of ``extract.regex.pattern``: a portable subset.

A claim's pattern must mean the same to every implementation of the standard, but regex
dialects differ: Python's ``re`` refuses ECMA-262's ``(?<name>...)``, ECMA refuses Python's
``(?P<name>...)`` and inline flags, and the two disagree on ``\\d``, ``\\s`` and ``\\b`` beyond
ASCII. The standard therefore admits only the constructs both read alike
(spec/02-manifest.md#regular-expressions); :func:`subset_problem` names the first construct
outside it, and :func:`compile_pattern` compiles a pattern with the meaning the spec gives it.
Plain Python without pydantic: ``rra run`` uses it too.
"""

from __future__ import annotations

import re

__all__ = ["compile_pattern", "normalise_newlines", "subset_problem"]

#: Escapes allowed outside and inside character classes (besides escaped punctuation).
_CLASS_ESCAPES = set("dDwWsStnrfv")
_ESCAPES = _CLASS_ESCAPES | set("bB123456789")
_PUNCTUATION = set("\\^$.|?*+()[]{}/-")
_QUANTIFIER = re.compile(r"\{[0-9]+(,[0-9]*)?\}")


def subset_problem(pattern: str) -> str | None:
    """None when ``pattern`` is in the portable subset; else what is outside it, and where.

    >>> subset_problem(r"RMSE: ([0-9]+\\.[0-9]+)") is None
    True
    >>> subset_problem(r"(?<v>[0-9.]+)")
    "named group '(?<' at offset 0: use a plain group '(...)' and 'group: N'"
    """
    i, n = 0, len(pattern)
    after_atom = False  # a quantifier needs something to repeat
    while i < n:
        c = pattern[i]
        if c == "\\":
            problem = _escape(pattern, i, in_class=False)
            if problem:
                return problem
            i += _escape_length(pattern, i)
            after_atom = True
            continue
        if c == "[":
            end = _class_end(pattern, i)
            if isinstance(end, str):
                return end
            i, after_atom = end, True
            continue
        if c == "(":
            if pattern.startswith("(?", i):
                kind = pattern[i:i + 3]
                if kind not in ("(?:", "(?=", "(?!"):
                    return _group_problem(pattern, i)
                i += 3
            else:
                i += 1
            after_atom = False
            continue
        if c in "*+?":
            if not after_atom:
                return f"quantifier {c!r} at offset {i} repeats nothing"
            i += 1
            if i < n and pattern[i] == "?":
                i += 1
            if i < n and pattern[i] in "*+":
                return f"possessive or doubled quantifier at offset {i - 1}: not in the portable subset"
            after_atom = False
            continue
        if c == "{":
            match = _QUANTIFIER.match(pattern, i)
            if match is None:
                return f"'{{' at offset {i} does not start a quantifier {{n}}, {{n,}} or {{n,m}}: write '\\{{'"
            if not after_atom:
                return f"quantifier {match.group(0)!r} at offset {i} repeats nothing"
            i = match.end()
            if i < n and pattern[i] == "?":
                i += 1
            if i < n and pattern[i] in "*+":
                return f"possessive or doubled quantifier at offset {i - 1}: not in the portable subset"
            after_atom = False
            continue
        if c in "}]":
            return f"{c!r} at offset {i} must be escaped as '\\{c}'"
        after_atom = c not in "|^$)" or c == ")"
        i += 1
    return None


def _escape_length(pattern: str, i: int) -> int:
    nxt = pattern[i + 1] if i + 1 < len(pattern) else ""
    return {"x": 4, "u": 6}.get(nxt, 2)


def _escape(pattern: str, i: int, *, in_class: bool) -> str | None:
    nxt = pattern[i + 1] if i + 1 < len(pattern) else ""
    if not nxt:
        return "the pattern ends with a lone '\\'"
    if nxt in ("x", "u"):
        digits = 2 if nxt == "x" else 4
        if not re.fullmatch(f"[0-9A-Fa-f]{{{digits}}}", pattern[i + 2:i + 2 + digits]):
            return f"'\\{nxt}' at offset {i} needs {digits} hexadecimal digits"
        return None
    if nxt in _PUNCTUATION or nxt in (_CLASS_ESCAPES if in_class else _ESCAPES):
        return None
    return f"escape '\\{nxt}' at offset {i} is not in the portable subset"


def _class_end(pattern: str, i: int) -> int | str:
    """The offset after the character class opened at ``i``, or what is wrong with it."""
    j = i + 1
    if j < len(pattern) and pattern[j] == "^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        return f"empty character class at offset {i}, or a ']' that must be escaped as '\\]'"
    while j < len(pattern):
        c = pattern[j]
        if c == "\\":
            problem = _escape(pattern, j, in_class=True)
            if problem:
                return problem
            j += _escape_length(pattern, j)
            continue
        if c == "[":
            return f"'[' inside the character class at offset {i} must be escaped as '\\['"
        if c == "]":
            return j + 1
        j += 1
    return f"character class opened at offset {i} is not closed"


def _group_problem(pattern: str, i: int) -> str:
    head = pattern[i:i + 4]
    if head.startswith(("(?<=", "(?<!")):
        return f"lookbehind {head!r} at offset {i}: not in the portable subset; use a group around the number"
    if head.startswith(("(?P<", "(?<", "(?P=", "(?'")):
        return f"named group {head[:3]!r} at offset {i}: use a plain group '(...)' and 'group: N'"
    if head.startswith("(?#"):
        return f"comment group at offset {i}: not in the portable subset"
    if head.startswith("(?>"):
        return f"atomic group at offset {i}: not in the portable subset"
    if head.startswith("(?("):
        return f"conditional group at offset {i}: not in the portable subset"
    return f"inline flags or modifier {pattern[i:i + 3]!r} at offset {i}: not in the portable subset (patterns " \
           "are always multi-line and case-sensitive)"


def normalise_newlines(text: str) -> str:
    """Text with CRLF and lone CR line ends turned into LF, as patterns see it.

    >>> normalise_newlines("a\\r\\nb\\rc")
    'a\\nb\\nc'
    """
    return text.replace("\r\n", "\n").replace("\r", "\n")


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled with the subset's meaning: ``^``/``$`` at line boundaries, ``\\d``,
    ``\\w``, ``\\s`` and ``\\b`` in ASCII (re.error when it does not compile)."""
    return re.compile(pattern, re.MULTILINE | re.ASCII)
