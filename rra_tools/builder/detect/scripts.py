"""Scripts without a ``__main__`` guard: Python files whose module level does the work.

Research code is often a file of statements run top to bottom (``x = load(); fit(x);
plt.savefig("fig1.png")``), or one that calls ``main()`` at its end, with no ``if __name__ ==
"__main__":``. Such a file is taken for a script when its module level calls something that is not
only set-up (``sys.path.append``, ``matplotlib.use``, ``warnings.filterwarnings``, seeding, ...),
or loops, and no other file of the repository imports it as a module (a helper that a script
imports runs its module level as a side effect, not as an experiment). Read with :mod:`ast` only:
nothing is imported or run.

Which file an import names is decided by name, as Python would find it from the importing file's
directory or the repository root: ``import utils`` in ``exp/a.py`` names ``exp/utils.py`` or
``utils.py``; ``from pkg import mod`` and ``import pkg.mod`` name ``pkg/mod.py`` (also under
``src/``); relative imports are resolved from the importing file's package.
"""

from __future__ import annotations

import ast
import re
from pathlib import PurePosixPath

from .repo import RawRepo

__all__ = ["first_work", "imported_files"]

#: Calls at module level that set a program up rather than run an experiment: a helper module
#: may make them too, so they alone do not make a file a script.
_SETUP = re.compile(r"(append|insert|extend|use|filterwarnings|simplefilter|basicConfig|seed|manual_seed(_all)?|"
                    r"set|set_[A-Za-z_]*|setdefault|update|load_dotenv|rc|getLogger|register[A-Za-z_]*|"
                    r"disable[A-Za-z_]*|enable[A-Za-z_]*|addHandler|setLevel|setrecursionlimit|chdir)")
_IMPORT_LINE = re.compile(r"^[ \t]*(?:from[ \t]+[.\w]+[ \t]+import|import)[ \t]", re.MULTILINE)


def _call_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _is_guard(node: ast.If) -> bool:
    test = node.test
    if not isinstance(test, ast.Compare):
        return False
    sides = [test.left, *test.comparators]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)


def first_work(tree: ast.Module) -> ast.stmt | None:
    """The first module-level statement that does work (a call that is not only set-up, a loop,
    a ``with`` block; inside a module-level ``if`` or ``try`` too), or ``None`` for a module that
    only imports, assigns and defines. A ``__main__`` guard is not looked into: its file is a
    guarded script, found elsewhere."""
    return _first(tree.body)


def _first(body: list[ast.stmt]) -> ast.stmt | None:
    for node in body:
        if isinstance(node, ast.Expr) and isinstance(node.value, (ast.Call, ast.Await)):
            call = node.value.value if isinstance(node.value, ast.Await) else node.value
            if isinstance(call, ast.Call) and not _SETUP.fullmatch(_call_name(call)):
                return node
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)):
            return node
        elif isinstance(node, ast.If) and not _is_guard(node):
            found = _first(node.body) or _first(node.orelse)
            if found is not None:
                return found
        elif isinstance(node, ast.Try):
            found = _first(node.body)
            if found is not None:
                return found
    return None


def _module_names(name: str) -> list[tuple[str, ...]]:
    """The dotted names (as tuples) an import may use for file ``name``: its path from the root,
    and from ``src/``; a package's ``__init__.py`` is its directory."""
    parts = PurePosixPath(name).with_suffix("").parts
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    names = [parts]
    if parts[:1] == ("src",) and len(parts) > 1:
        names.append(parts[1:])
    return names


def _imports(importer: str, tree: ast.Module) -> set[tuple[str, ...]]:
    """Absolute dotted names ``importer`` imports, each also with the names it may import from it
    (``from a import b`` gives ``a`` and ``a.b``: b may be a module)."""
    package = PurePosixPath(importer).parent.parts
    found: set[tuple[str, ...]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.add(tuple(alias.name.split(".")))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)] if node.level - 1 <= len(package) else ()
                module = (*base, *(node.module.split(".") if node.module else ()))
                found.add(("<root>", *module))  # relative: from the repository root
            else:
                module = tuple(node.module.split(".")) if node.module else ()
            found.add(module)
            for alias in node.names:
                found.add((*module, alias.name))
    return found


def imported_files(repo: RawRepo, candidates: list[str]) -> set[str]:
    """Which of ``candidates`` (Python files) another Python file of the repository imports."""
    if not candidates:
        return set()
    wanted = {PurePosixPath(c).stem if PurePosixPath(c).stem != "__init__" else PurePosixPath(c).parent.name
              for c in candidates}
    mention = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in sorted(wanted)) + r")\b")
    found: set[str] = set()
    for importer in repo.files:
        if not importer.endswith(".py"):
            continue
        text = repo.text(importer)
        # A cheap test before parsing: an import line and one of the candidates' names.
        if text is None or not _IMPORT_LINE.search(text) or not mention.search(text):
            continue
        tree = repo.tree(importer)
        if tree is None:
            continue
        names = _imports(importer, tree)
        here = PurePosixPath(importer).parent.parts
        for candidate in candidates:
            if candidate == importer or candidate in found:
                continue
            for module in _module_names(candidate):
                # From the root, from src/, relative, or (a top-level import) from the importing
                # file's own directory, which Python puts first on the path of a script it runs.
                if module in names or ("<root>", *module) in names or (
                        module[:len(here)] == here and module[len(here):] in names):
                    found.add(candidate)
                    break
    return found
