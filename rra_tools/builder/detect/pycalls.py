"""Finding calls of one function in parsed Python source, without visiting every node.

``ast.walk`` over a whole module costs far more than the parse for the few calls detection
looks at (``add_argument``, ``print``); the lines that can hold such a call are known from the
text, so only the nodes whose line span covers one of them are visited.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

__all__ = ["calls"]


def calls(tree: ast.Module, text: str, name: str) -> Iterator[ast.Call]:
    """Calls ``name(...)`` or ``x.name(...)`` in ``tree`` (parsed from ``text``), in no set order."""
    pattern = re.compile(rf"\b{re.escape(name)}\s*\(")
    lines: set[int] = set()
    line, offset = 1, 0
    for match in pattern.finditer(text):
        # Counted from the previous match: one pass over the text, not one per match.
        line += text.count("\n", offset, match.start())
        offset = match.start()
        lines.add(line)
    if not lines:
        return
    low, high = min(lines), max(lines)
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        start = getattr(node, "lineno", None)
        decorators = getattr(node, "decorator_list", None)
        if start is not None and decorators:
            # A decorated definition's lineno is its 'def' line; its decorators come before it.
            start = min(start, *(d.lineno for d in decorators))
        if start is not None:
            end = getattr(node, "end_lineno", None) or start
            if end < low or start > high or not any(start <= line <= end for line in lines):
                continue
            if isinstance(node, ast.Call):
                func = node.func
                if (isinstance(func, ast.Name) and func.id == name) or (
                        isinstance(func, ast.Attribute) and func.attr == name):
                    yield node
        stack.extend(ast.iter_child_nodes(node))
