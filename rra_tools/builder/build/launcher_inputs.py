"""What one launcher's run depends on, so that the execute step re-runs only the launchers a
change touched (incremental rebuilds).

A launcher's inputs are its manifest entry, the environment block (the lock and interpreter),
the inputs of the launchers it ``depends_on`` (their outputs are its data), and the code: every
file of the work tree except the Python modules its script cannot import. Which modules it can
import is read with ``ast`` from the script ``python FILE`` or ``python -m MODULE`` names,
following the repository's own imports (absolute, and relative within a package) from the
script's directory, the launcher's working directory and the root, as Python would find them.
Whatever cannot be followed for sure counts as an input of every launcher: any file that is not a
``.py`` module (data, configuration, shell scripts), a launcher that is not ``python`` running a
file of the tree, and a module that changes ``sys.path`` or imports by name at run time
(``importlib``, ``__import__``) or starts another program (``subprocess``, ``os.system``) — for
those, every module of the tree is an input. A wrong guess
here can only re-run too much, never skip a launcher whose code changed.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..patches import TreeEntry, tree_digest
from .state import digest

__all__ = ["launcher_inputs", "python_closure"]

#: A Python module larger than this is not parsed: every module then counts (a guard, not a limit
#: a research script reaches).
_MAX_SOURCE = 4 * 1024 * 1024
_PYTHON = re.compile(r"(?:.*/)?python(?:3(?:\.\d+)?)?")
#: Names whose use makes what a module runs unknowable by reading its imports: imports by name,
#: a changed search path, and other programs started (``subprocess.run(["python", "other.py"])``
#: runs a module no import names).
_DYNAMIC = ("importlib", "__import__", "sys.path", "runpy", "exec(", "subprocess", "os.system", "os.popen",
            "os.exec", "os.spawn")


def _script(argv: Sequence[str], cwd: str) -> tuple[str, str] | None:
    """('file', path) or ('module', dotted name) that ``python ...`` runs, else None."""
    if not argv or not _PYTHON.fullmatch(argv[0]):
        return None
    words = list(argv[1:])
    while words and words[0].startswith("-") and words[0] != "-m":
        if words[0] in ("-W", "-X", "-c"):
            return None if words[0] == "-c" else _script([argv[0], *words[2:]], cwd)
        words.pop(0)
    if not words:
        return None
    if words[0] == "-m":
        return ("module", words[1]) if len(words) > 1 and "{" not in words[1] else None
    if "{" in words[0]:
        return None
    return "file", posixpath.normpath(posixpath.join(cwd, words[0]))


def _candidates(name: str, bases: Sequence[str]) -> list[str]:
    """Paths module ``name`` (and the packages above it) may be at, from each base directory."""
    parts = name.split(".")
    found = []
    for base in bases:
        for i in range(1, len(parts) + 1):
            stem = posixpath.normpath(posixpath.join(base, *parts[:i]))
            found += [f"{stem}.py", f"{stem}/__init__.py"]
    return found


def _imports(tree: ast.Module, path: str) -> tuple[list[str], list[str]]:
    """(absolute module names, paths of relative imports) of a module."""
    names: list[str] = []
    relative: list[str] = []
    package = posixpath.dirname(path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package
                for _ in range(node.level - 1):
                    base = posixpath.dirname(base)
                stem = posixpath.join(base, *(node.module or "").split(".")) if node.module else base
                relative += [f"{stem}.py", f"{stem}/__init__.py"]
                relative += [p for alias in node.names
                             for p in (f"{stem}/{alias.name}.py", f"{stem}/{alias.name}/__init__.py")]
            elif node.module:
                names.append(node.module)
                names += [f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*"]
    return names, relative


def python_closure(script: tuple[str, str], cwd: str, sources: Mapping[str, bytes]) -> set[str] | None:
    """The ``.py`` files of ``sources`` (path -> bytes) that running ``script`` may import, the
    script's own included; None when that cannot be known (the module is not in the tree, or one
    of the modules reached imports at run time)."""
    kind, value = script
    roots = [cwd, "."]
    if kind == "file":
        start = [value] if value in sources else []
        roots.insert(0, posixpath.dirname(value) or ".")
    else:
        start = [p for p in _candidates(value, roots) if p in sources]
    if not start:
        return None
    seen: set[str] = set()
    todo = list(start)
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        text = sources[path]
        if len(text) > _MAX_SOURCE or any(word.encode() in text for word in _DYNAMIC):
            return None
        try:
            tree = ast.parse(text, filename=path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        names, relative = _imports(tree, path)
        for candidate in [*_candidates_all(names, roots), *relative]:
            candidate = posixpath.normpath(candidate)
            if candidate in sources and candidate not in seen:
                todo.append(candidate)
    return seen


def _candidates_all(names: Sequence[str], roots: Sequence[str]) -> list[str]:
    return [path for name in names for path in _candidates(name, roots)]


def launcher_inputs(data: Mapping[str, Any], entries: Mapping[str, TreeEntry],
                    sources: Mapping[str, bytes]) -> dict[str, str]:
    """The digest of each launcher's inputs (see the module docstring), by launcher id.

    ``entries`` is the code's work tree (path -> entry), ``sources`` the bytes of its ``.py``
    files."""
    launchers = [x for x in data.get("launchers") or [] if isinstance(x, Mapping) and isinstance(x.get("id"), str)]
    environment = data.get("environment")
    ids = {str(x["id"]) for x in launchers}
    result: dict[str, str] = {}
    pending = list(launchers)
    # Dependencies first: a launcher's digest holds those of the launchers it depends on.
    while pending:
        ready = [x for x in pending if all(str(d) in result or str(d) not in ids for d in x.get("depends_on") or [])]
        if not ready:  # a cycle (the validator reports it): each of them counts every file
            for launcher in pending:
                result[str(launcher["id"])] = _one(launcher, environment, entries, {}, [])
            break
        for launcher in ready:
            needs = [str(d) for d in launcher.get("depends_on") or []]
            result[str(launcher["id"])] = _one(launcher, environment, entries, sources,
                                               [result.get(d, "") for d in needs])
        pending = [x for x in pending if x not in ready]
    return result


def _one(launcher: Mapping[str, Any], environment: Any, entries: Mapping[str, TreeEntry],
         sources: Mapping[str, bytes], upstream: list[str]) -> str:
    argv = [str(word) for word in launcher.get("argv") or []]
    cwd = posixpath.normpath(str(launcher.get("cwd") or "."))
    script = _script(argv, cwd)
    closure = python_closure(script, cwd, sources) if script is not None and sources else None
    code = {path: entry for path, entry in entries.items()
            if closure is None or not path.endswith(".py") or path in closure}
    own = {k: v for k, v in launcher.items() if k != "repeats"}
    return digest({"launcher": own, "environment": environment, "depends_on": upstream,
                   "code": tree_digest(code), "modules": None if closure is None else sorted(closure)})
