"""What a semantic rule sees: the raw document, the artifact root, and helpers that tolerate
schema errors so rules still run (and report) on a document the schema layer rejected."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from .diagnostics import Severity


__all__ = ["Context", "Finding", "IdIndex", "Pointer", "strings"]

Pointer = tuple[str | int, ...]


@dataclass(frozen=True)
class Finding:
    """What a rule reports; the engine adds severity, location and docs link."""

    code: str
    message: str
    pointer: Pointer = ()
    hint: str | None = None
    #: Point at the key rather than the value (e.g. an unknown field).
    at_key: bool = False
    #: Overrides the rule's default severity for this finding (before user configuration).
    severity: Severity | None = None
    #: The file of the artifact the finding is about, relative to the root, when it is not the
    #: manifest (a symbolic link of the tree): the diagnostic is located there, without a line.
    file: str | None = None


@dataclass
class Context:
    """A manifest under validation."""

    data: Mapping[str, Any]
    #: Artifact root directory; None when the manifest came from stdin or bytes.
    root: Path | None
    #: Shared by rules that compute the same thing (levels, resolved paths, digests).
    memo: dict[str, Any] = field(default_factory=dict)
    #: ``time.monotonic()`` value after which validation stops (registries' time budget).
    deadline: float | None = None
    #: The text ``data`` was read from, when known: a rule looking for words in string values
    #: can rule them out for the whole document with one substring search (see
    #: :meth:`may_contain`).
    text: str | None = None

    def may_contain(self, *words: str) -> bool:
        """False only when no string in ``data`` (mapping keys included) can contain any of ``words``.

        A reader builds every string from characters written in the text, except where an
        escape sequence (JSON ``\\u0054``, YAML ``\\x54``, a backslash line break in double quotes)
        stands for others; folded line breaks only ever add spaces. So a text holding neither
        a word nor a backslash holds no string that contains the word. Words must not contain
        spaces or line breaks.
        """
        text = self.text
        # A literal pattern's search (the regular expression engine finds its first character
        # with a plain scan) is 1.5 to 3 times quicker than 'in' for short words in a long text,
        # and one search finds any of the words that share a first character; a text without
        # that character (one quicker scan) is ruled out for them without it.
        return text is None or "\\" in text or any(
            first in text and pattern.search(text) is not None for first, pattern in _searches(words))

    def expired(self) -> bool:
        """True once the time budget is spent."""
        import time

        return self.deadline is not None and time.monotonic() > self.deadline

    def section(self, key: str) -> Mapping[str, Any]:
        """A top-level mapping, or an empty one when absent or mistyped."""
        value = self.data.get(key)
        return value if isinstance(value, Mapping) else {}

    def items(self, key: str, within: Mapping[str, Any] | None = None) -> Iterator[tuple[int, Mapping[str, Any]]]:
        """(index, entry) for each mapping entry of the list at ``key``; other entries are skipped."""
        value = (self.data if within is None else within).get(key)
        if isinstance(value, list):
            # Parsed documents hold plain dicts; the exact type check is several times cheaper
            # than the Mapping ABC on manifests with 100,000s of entries.
            for index, entry in enumerate(value):
                if type(entry) is dict or isinstance(entry, Mapping):
                    yield index, entry

    def ids(self, key: str) -> dict[str, int]:
        """Declared ids of the top-level list ``key``, mapped to their first index (computed once
        per document and shared: callers must not change it)."""
        return self.id_index(key).first

    def id_index(self, key: str) -> IdIndex:
        """The string ids of the top-level list ``key`` (computed once per document)."""
        memo_key = "id_index:" + key
        found: IdIndex | None = self.memo.get(memo_key)
        if found is None:
            first: dict[str, int] = {}
            repeated: list[tuple[int, str]] = []
            value = self.data.get(key)
            if isinstance(value, list):
                for index, entry in enumerate(value):
                    if type(entry) is dict or isinstance(entry, Mapping):
                        ident = entry.get("id")
                        if type(ident) is str or isinstance(ident, str):
                            if ident in first:
                                repeated.append((index, ident))
                            else:
                                first[ident] = index
            found = self.memo[memo_key] = IdIndex(first, repeated)
        return found

    def launcher_outputs(self) -> dict[str, dict[str, str]]:
        """For each launcher id, its outputs' ids mapped to their declared format (computed once
        per document and shared: callers must not change it)."""
        found: dict[str, dict[str, str]] | None = self.memo.get("launcher_outputs")
        return found if found is not None else self._read_outputs()[0]

    def repeated_outputs(self) -> list[tuple[int, int, str, int]]:
        """(launcher index, output index, id, index of the first output with that id) of each
        output whose id its launcher already listed, in document order (computed once per document)."""
        found: list[tuple[int, int, str, int]] | None = self.memo.get("repeated_outputs")
        return found if found is not None else self._read_outputs()[1]

    def _read_outputs(self) -> tuple[dict[str, dict[str, str]], list[tuple[int, int, str, int]]]:
        # One walk over every launcher's outputs for both questions (two rules ask them).
        tables: dict[str, dict[str, str]] = {}
        repeated: list[tuple[int, int, str, int]] = []
        for i, launcher in self.items("launchers"):
            ident = launcher.get("id")
            table = None
            if isinstance(ident, str):
                table = tables.get(ident)
                if table is None:
                    table = tables[ident] = {}
            outputs = launcher.get("outputs")
            if not isinstance(outputs, list):
                continue
            seen: dict[str, int] = {}
            for j, output in enumerate(outputs):
                if type(output) is dict or isinstance(output, Mapping):
                    oid = output.get("id")
                    if isinstance(oid, str):
                        if oid in seen:
                            repeated.append((i, j, oid, seen[oid]))
                        else:
                            seen[oid] = j
                        if table is not None and oid not in table:
                            fmt = output.get("format", "")
                            table[oid] = fmt if type(fmt) is str else str(fmt)
        self.memo["launcher_outputs"], self.memo["repeated_outputs"] = tables, repeated
        return tables, repeated


@dataclass(frozen=True)
class IdIndex:
    """The entries of a top-level list that have a string id."""

    #: Each id, mapped to the index of the first entry that declares it.
    first: dict[str, int]
    #: (index, id) of each later entry that declares an id again, in list order.
    repeated: list[tuple[int, str]]


@lru_cache(maxsize=64)
def _searches(words: tuple[str, ...]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """For each first character of ``words``: the character, and a pattern that matches the words
    that start with it (the regular expression parser takes their common prefix out)."""
    groups: dict[str, list[str]] = {}
    for word in words:
        groups.setdefault(word[:1], []).append(word)
    return tuple((first, re.compile("|".join(map(re.escape, group)))) for first, group in groups.items())


def strings(value: Any) -> Iterator[tuple[int, str]]:
    """(index, item) for the string items of a list value; nothing for anything else."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, str):
                yield index, item
