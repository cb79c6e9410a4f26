"""Command-line options of a Python script, read statically: the ``add_argument`` calls in its
source (parsed with :mod:`ast`, never imported or run), with names, types, defaults and lines."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from .pycalls import calls

__all__ = ["Option", "has_main_guard", "read_options"]


@dataclass(frozen=True)
class Option:
    """One ``add_argument`` call: its flag, the parameter name argparse gives it, and its settings."""

    flag: str
    dest: str
    type: str | None
    default: Any
    has_default: bool
    required: bool
    choices: list[Any] | None
    is_flag: bool
    line: int


_TYPES = {"int": "int", "float": "float", "str": "str", "Path": "path", "pathlib.Path": "path"}


def _literal(node: ast.AST) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def has_main_guard(tree: ast.Module) -> bool:
    """Whether the module runs something under ``if __name__ == "__main__":``."""
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
            sides = [node.test.left, *node.test.comparators]
            if any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and any(
                    isinstance(s, ast.Constant) and s.value == "__main__" for s in sides):
                return True
    return False


def read_options(tree: ast.Module, text: str | None = None) -> list[Option]:
    """Every ``*.add_argument("--name", ...)`` option of the module, in source order (positional
    arguments are skipped: they have no name a launcher parameter could bind to safely).
    ``text``, the source, lets only the lines that call ``add_argument`` be visited."""
    options: list[Option] = []
    nodes = calls(tree, text, "add_argument") if text is not None else (
        n for n in ast.walk(tree) if isinstance(n, ast.Call))
    for node in nodes:
        if not (isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"):
            continue
        flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        long = next((f for f in flags if f.startswith("--")), None) or next(
            (f for f in flags if f.startswith("-")), None)
        if long is None:
            continue
        settings = {k.arg: k.value for k in node.keywords if k.arg is not None}
        dest = long.lstrip("-").replace("-", "_")
        if "dest" in settings:
            ok, value = _literal(settings["dest"])
            dest = value if ok and isinstance(value, str) else dest
        type_name = None
        if "type" in settings:
            type_name = _TYPES.get(ast.unparse(settings["type"]))
        has_default, default = _literal(settings["default"]) if "default" in settings else (False, None)
        action = _literal(settings["action"])[1] if "action" in settings else None
        is_flag = action in ("store_true", "store_false", "count", "store_const", "append_const")
        required = _literal(settings["required"])[1] is True if "required" in settings else False
        choices_ok, choices = _literal(settings["choices"]) if "choices" in settings else (False, None)
        if type_name is None and has_default and default is not None and not is_flag:
            type_name = {bool: "bool", int: "int", float: "float", str: "str"}.get(type(default))
        if type_name is None and not is_flag:
            type_name = "str"  # argparse's own default type
        options.append(Option(long, dest, type_name, default, has_default, required,
                              list(choices) if choices_ok and isinstance(choices, (list, tuple)) else None,
                              is_flag, node.lineno))
    options.sort(key=lambda o: o.line)
    return options
