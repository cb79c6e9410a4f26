"""x-* extension fields: allowed everywhere, reported only under strict profiles (RRA103)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..context import Context, Finding, Pointer
from . import check

__all__: list[str] = []


@check("RRA103")
def extension_fields(ctx: Context) -> Iterator[Finding]:
    """Every x-* key, wherever it is."""
    if not ctx.may_contain("x-"):
        return  # keys are strings read from the text too: none starts with "x-"
    # Only containers are pushed (a million scalars would each cost a pointer tuple otherwise);
    # parsed documents hold plain dicts and lists.
    stack: list[tuple[Pointer, Any]] = [((), ctx.data)]
    while stack:
        pointer, node = stack.pop()
        if isinstance(node, Mapping):
            for key, value in node.items():
                if isinstance(key, str) and key.startswith("x-"):
                    yield Finding("RRA103", f"extension field {key!r} is not part of the standard", (*pointer, key),
                                  "tools ignore extensions; move it into the standard's fields if one fits",
                                  at_key=True)
                elif isinstance(value, (dict, list)):
                    stack.append(((*pointer, key), value))
        else:
            stack.extend(((*pointer, i), item) for i, item in enumerate(node) if isinstance(item, (dict, list)))
