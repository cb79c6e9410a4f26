"""Matching a repository's LICENSE file to an SPDX identifier.

No installed library matches license *texts*: ``license-expression`` (installed with the ``env``
extra) parses and validates SPDX *expressions*, and the SPDX matchers that compare full texts
(scancode-toolkit and similar) are large dependencies with data files. Well-known licenses are told
apart by a few sentences that only they contain, so a small table of those sentences is enough
here; anything it does not recognise stays a placeholder for the author rather than a guess.

Where there is no license text (or one the table does not know), the license a metadata file
declares is used: ``CITATION.cff``'s ``license``, ``codemeta.json``'s ``license`` and
``pyproject.toml``'s ``[project] license`` are SPDX identifiers by their own specifications
(codemeta's as an ``https://spdx.org/licenses/ID`` URL), so they are taken as written.
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

from ...io.read import bounded_toml
from .findings import Finding
from .repo import RawRepo

__all__ = ["LICENSE_FILES", "declared_license", "detect_license", "match_license"]

LICENSE_FILES = ("LICENSE", "LICENSE.txt", "LICENSE.md", "LICENCE", "LICENCE.txt", "COPYING", "COPYING.txt")

# Order matters: the more specific text first (LGPL and AGPL texts mention the GPL; the BSD
# 3-clause text contains every sentence of the 2-clause one).
_TABLE: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("AGPL-3.0-only", ("gnu affero general public license", "version 3, 19 november 2007")),
    ("LGPL-3.0-only", ("gnu lesser general public license", "version 3, 29 june 2007")),
    ("LGPL-2.1-only", ("gnu lesser general public license", "version 2.1, february 1999")),
    ("GPL-3.0-only", ("gnu general public license", "version 3, 29 june 2007")),
    ("GPL-2.0-only", ("gnu general public license", "version 2, june 1991")),
    ("Apache-2.0", ("apache license", "version 2.0, january 2004")),
    ("MPL-2.0", ("mozilla public license version 2.0",)),
    ("BSD-3-Clause", ("redistribution and use in source and binary forms", "neither the name of")),
    ("BSD-2-Clause", ("redistribution and use in source and binary forms",
                      "this list of conditions and the following disclaimer")),
    ("MIT", ("permission is hereby granted, free of charge, to any person obtaining a copy",
             "the above copyright notice and this permission notice shall be included")),
    ("ISC", ("permission to use, copy, modify, and/or distribute this software for any purpose",)),
    ("BSL-1.0", ("boost software license - version 1.0",)),
    ("Unlicense", ("this is free and unencumbered software released into the public domain",)),
    ("CC0-1.0", ("cc0 1.0 universal",)),
    ("CC-BY-NC-4.0", ("attribution-noncommercial 4.0 international",)),
    ("CC-BY-4.0", ("attribution 4.0 international",)),
)

_NOTES = {
    # The GNU texts are the same for "only" and "or later"; only the notices in the sources say.
    "AGPL-3.0-only": "the license text does not say 'or later'; the source headers do, if so",
    "LGPL-3.0-only": "the license text does not say 'or later'; the source headers do, if so",
    "LGPL-2.1-only": "the license text does not say 'or later'; the source headers do, if so",
    "GPL-3.0-only": "the license text does not say 'or later'; the source headers do, if so",
    "GPL-2.0-only": "the license text does not say 'or later'; the source headers do, if so",
}


def match_license(text: str) -> tuple[str, int] | None:
    """(SPDX id, 1-based line of its first distinguishing sentence) of a license text, or ``None``.

    >>> match_license("MIT License\\n\\nPermission is hereby granted, free of charge, to any person obtaining "
    ...               "a copy of this software ... The above copyright notice and this permission notice shall "
    ...               "be included in all copies")
    ('MIT', 3)
    """
    flat = re.sub(r"\s+", " ", text).lower()
    for spdx, sentences in _TABLE:
        if all(sentence in flat for sentence in sentences):
            return spdx, _line_of(text, sentences[0])
    return None


def _line_of(text: str, sentence: str) -> int:
    # The sentence may wrap across lines: find the line holding its first three words.
    head = " ".join(sentence.split()[:3])
    for number, line in enumerate(text.splitlines(), 1):
        if head in re.sub(r"\s+", " ", line).lower():
            return number
    return 1


def detect_license(repo: RawRepo) -> list[Finding]:
    """The license of the repository's top-level license file, when the table knows it."""
    name = repo.first(*LICENSE_FILES)
    if name is None:
        return []
    text = repo.text(name)
    if text is None:
        return []
    matched = match_license(text)
    if matched is None:
        return [Finding("license", "unrecognised", name, 1,
                        "not one of the well-known license texts; fill in code.license by hand")]
    spdx, line = matched
    return [Finding("license", spdx, name, line, _NOTES.get(spdx, ""))]


#: An SPDX license expression's shape: ids (``LicenseRef-`` too) joined by AND, OR, WITH.
_SPDX = re.compile(r"\(?[A-Za-z0-9][A-Za-z0-9.+-]*\)?(?: +(?:AND|OR|WITH) +\(?[A-Za-z0-9][A-Za-z0-9.+-]*\)?)*")


def _spdx(value: Any) -> str | None:
    if isinstance(value, dict):  # codemeta: {"@id": "https://spdx.org/licenses/MIT"}
        value = value.get("@id") or value.get("identifier")
    if not isinstance(value, str):
        return None
    text = re.sub(r"^https?://spdx\.org/licenses/", "", value.strip())
    text = re.sub(r"\.(html|json)$", "", text)
    return text if _SPDX.fullmatch(text) else None


def _line(text: str, needle: str) -> int | None:
    return next((n for n, line in enumerate(text.splitlines(), 1) if needle in line), None)


def declared_license(repo: RawRepo) -> Finding | None:
    """The SPDX license a metadata file declares: CITATION.cff, then codemeta.json, then
    pyproject.toml; ``None`` when none declares one."""
    from .yamlfile import read_yaml

    if repo.has("CITATION.cff"):
        cff = read_yaml(repo, "CITATION.cff", [])
        data = cff.data if cff is not None else None
        spdx = _spdx(data.get("license")) if isinstance(data, dict) else None
        if cff is not None and spdx is not None:
            return cff.finding("license", spdx, "license", note="declared in CITATION.cff")
    for name in ("codemeta.json", "pyproject.toml"):
        text = repo.text(name)
        if text is None:
            continue
        try:
            # Bounded: a file nested 100,000 deep is skipped, not a RecursionError.
            data = json.loads(text) if name.endswith(".json") else bounded_toml.loads(text).get("project")
        except (ValueError, RecursionError, tomllib.TOMLDecodeError):
            continue
        spdx = _spdx(data.get("license")) if isinstance(data, dict) else None
        if spdx is not None:
            return Finding("license", spdx, name, _line(text, "license"), f"declared in {name}")
    return None
