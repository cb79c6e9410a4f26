"""Unfinished values: placeholder text such as ``TODO: SPDX license`` left in a manifest (RRA214).

``rra init`` writes a manifest whose unknowns read ``"TODO: ..."``; it is schema-valid so
editors help while it is filled in, and this rule is what keeps a half-filled manifest from
validating clean (and ``rra sbom`` from publishing ``TODO`` as a license).

The rule was added in RRA 1.1. A manifest that declares 1.0 was valid with such text (a title
may well start with "TODO"), and a minor version must not turn a valid manifest into an invalid
one (spec/03-versioning.md#compatibility): for 1.0 the finding is a warning, from 1.1 on an
error. ``rra init`` declares the version it implements, so its placeholders are errors.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ..context import Context, Finding, Pointer
from ..diagnostics import Severity
from ..schema_layer import declared_version
from . import check

__all__ = ["PLACEHOLDER", "is_placeholder"]

#: The placeholder words (also what the text is searched for before the values are walked).
_WORDS = ("TODO", "TBD", "FIXME")

#: A placeholder word at the start of a string (after spaces or tabs), standing alone: ``TODO``,
#: ``TODO: license`` and ``TBD.`` match; ``TODOs`` or ``Today`` do not. Capitals only, as written
#: by people and templates to stand out (spec/02-manifest.md#unfinished-values).
PLACEHOLDER = re.compile(r"[ \t]*(" + "|".join(_WORDS) + r")(?![A-Za-z0-9_])")


def is_placeholder(value: str) -> bool:
    """True when ``value`` is placeholder text.

    >>> is_placeholder("TODO: SPDX license, e.g. MIT"), is_placeholder("TODOs of the paper")
    (True, False)
    """
    return PLACEHOLDER.match(value) is not None


@check("RRA214")
def unfinished_values(ctx: Context) -> Iterator[Finding]:
    """Every string value (not key) outside x-* extensions that is placeholder text."""
    if not ctx.may_contain(*_WORDS):
        return  # one substring search instead of a walk over every value
    severity = Severity.WARNING if (declared_version(ctx.data) or (1, 1)) < (1, 1) else None
    stack: list[tuple[Pointer, Any]] = [((), ctx.data)]
    while stack:
        pointer, node = stack.pop()
        items = node.items() if isinstance(node, Mapping) else enumerate(node)
        for key, value in items:
            # Exact types first (parsed documents hold plain str, dict and list), and the key
            # looked at only for a candidate or a container: a manifest may hold a million strings.
            kind = type(value)
            if kind is str or (kind is not dict and kind is not list and isinstance(value, str)):
                # Cheap test first.
                if value[:1] in " \tTF" and PLACEHOLDER.match(value) is not None and \
                        not (isinstance(key, str) and key.startswith("x-")):
                    yield Finding("RRA214", f"{value!r} is a placeholder, not a value", (*pointer, key),
                                  "replace it with the real value (or remove the field when it is optional)",
                                  severity=severity)
            elif (kind is dict or kind is list or isinstance(value, (dict, list))) and \
                    not (isinstance(key, str) and key.startswith("x-")):
                stack.append(((*pointer, key), value))  # extensions are the tools' business
