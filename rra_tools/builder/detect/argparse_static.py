"""Command-line options of a Python script, read statically: argparse's ``add_argument`` calls
and click's ``@click.option`` decorators in its source (parsed with :mod:`ast`, never imported or
run), with names, types, defaults and lines."""

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
#: click's parameter types (``click.INT``, ``click.Path(...)``, ...) by their name.
_CLICK_TYPES = {"INT": "int", "FLOAT": "float", "STRING": "str", "BOOL": "bool", "Path": "path", "File": "path",
                "IntRange": "int", "FloatRange": "float", "UUID": "str", "DateTime": "str"}


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
    """Every ``*.add_argument("--name", ...)`` option and ``@click.option("--name", ...)`` of the
    module, in source order (positional arguments are skipped: they have no name a launcher
    parameter could bind to safely).
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
    if text is None or "option(" in text:
        options.extend(_click_options(tree, text))
    options.sort(key=lambda o: o.line)
    return options


def _is_click_option(func: ast.expr) -> bool:
    # @click.option(...) or, after 'from click import option', @option(...).
    if isinstance(func, ast.Attribute):
        return func.attr == "option" and isinstance(func.value, ast.Name) and func.value.id == "click"
    return isinstance(func, ast.Name) and func.id == "option"


def _click_options(tree: ast.Module, text: str | None) -> list[Option]:
    """The ``@click.option("--name", ...)`` decorators of the module (``@click.argument``s are
    positional and skipped, as argparse's are). The parameter name is click's: an undashed name
    given among the declarations, else the first long option (dashes to underscores)."""
    found: list[Option] = []
    nodes = calls(tree, text, "option") if text is not None else (
        n for n in ast.walk(tree) if isinstance(n, ast.Call))
    for node in nodes:
        if not _is_click_option(node.func):
            continue
        decls = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        names = [d for d in decls if not d.startswith("-")]
        flags = [part for d in decls if d.startswith("-") for part in d.split("/")]
        secondary = any("/" in d for d in decls if d.startswith("-"))  # --flag/--no-flag
        long = next((f for f in flags if f.startswith("--")), None) or next(iter(flags), None)
        if long is None:
            continue
        dest = names[0] if names else long.lstrip("-").replace("-", "_").lower()
        settings = {k.arg: k.value for k in node.keywords if k.arg is not None}
        has_default, default = _literal(settings["default"]) if "default" in settings else (False, None)
        is_flag = secondary or (_literal(settings["is_flag"])[1] is True if "is_flag" in settings else False) \
            or (_literal(settings["count"])[1] is True if "count" in settings else False)
        required = _literal(settings["required"])[1] is True if "required" in settings else False
        type_name, choices = None, None
        if "type" in settings:
            kind = settings["type"]
            target = kind.func if isinstance(kind, ast.Call) else kind
            label = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(
                target, ast.Name) else ""
            if label == "Choice" and isinstance(kind, ast.Call) and kind.args:
                ok, values = _literal(kind.args[0])
                choices = list(values) if ok and isinstance(values, (list, tuple)) else None
                type_name = "str"
            else:
                type_name = _TYPES.get(ast.unparse(target)) or _CLICK_TYPES.get(label)
        if type_name is None and has_default and default is not None and not is_flag:
            type_name = {bool: "bool", int: "int", float: "float", str: "str"}.get(type(default))
        if type_name is None and not is_flag:
            type_name = "str"  # click's default type
        found.append(Option(long, dest, type_name, default, has_default, required, choices, is_flag, node.lineno))
    return found
