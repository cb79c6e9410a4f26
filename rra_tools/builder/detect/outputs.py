"""Files a script writes, read from its calls with :mod:`ast` (never imported or run).

A run that writes a file its launcher does not declare fails, so the draft declares what the code
visibly writes: ``plt.savefig``/``fig.savefig``, ``np.save``/``np.savez``/``np.savetxt``,
``df.to_csv``/``to_json``/``to_parquet``, ``torch.save``, ``pickle.dump``/``json.dump`` into an
``open(PATH, "w")``, and ``open(PATH, "w")`` itself. A literal path gives the file; an f-string or
``os.path.join`` whose leading part is a literal directory gives that directory (a ``directory``
output); a path made only at run time gives nothing but a finding (never a guess).

What the file holds is kept where it can be read statically, for the candidate claims of
:mod:`.claims_written`: the columns of a CSV (a ``pd.DataFrame`` built from a dict literal or with
``columns=[...]``, a ``csv.writer``'s first ``writerow`` of string literals, a ``csv.DictWriter``'s
``fieldnames``) and the keys of a JSON object (``json.dump`` of a dict literal, or of a name
assigned one).
"""

from __future__ import annotations

import ast
import csv
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from .findings import Finding

__all__ = ["Written", "committed_header", "declare_outputs", "written_files"]

_ID = re.compile(r"[^A-Za-z0-9._-]+")

#: Method names that write their first argument's path (or, for ``dump``, their second's file).
_SAVERS = {"savefig": "figure", "save": "array", "savez": "array", "savez_compressed": "array",
           "savetxt": "text-array", "to_csv": "csv", "to_json": "json", "to_parquet": "binary",
           "to_pickle": "binary", "to_excel": "binary", "to_latex": "text", "to_markdown": "text",
           "imwrite": "figure", "imsave": "figure", "write_html": "text", "write_image": "figure"}
_WRITE_MODE = re.compile(r"[wax]")
_FORMAT = {".json": "json", ".csv": "csv", ".tsv": "csv", ".log": "log", ".txt": "text", ".md": "text",
           ".tex": "text", ".html": "text", ".yaml": "text", ".yml": "text"}
_FIGURE_SUFFIXES = frozenset({".png", ".pdf", ".svg", ".jpg", ".jpeg", ".eps", ".gif", ".tif", ".tiff"})


@dataclass
class Written:
    """One file (or directory) a script writes."""

    #: Path relative to the directory the script runs in; a directory when ``directory``.
    path: str | None
    #: ``figure``, ``array`` (``.npy``/``.npz``), ``text-array``, ``csv``, ``json``, ``text``, ``binary``;
    #: ``shown`` for a figure only shown (``plt.show()``, no ``savefig``), which writes no file.
    kind: str
    line: int
    #: The call, as written (``plt.savefig``), for findings.
    call: str
    directory: bool = False
    #: CSV columns or JSON keys that hold values, when read statically; ``None`` when not known.
    fields: list[str] | None = None
    #: Why ``path`` is None (a path made at run time).
    why: str = ""
    #: Where :attr:`fields` came from when not from the code: the copy of the file the
    #: repository holds (its header row).
    fields_from: str | None = None

    @property
    def format(self) -> str:
        """The output's format in the manifest's terms."""
        if self.directory:
            return "directory"
        if self.kind in ("csv", "json"):
            return self.kind
        return _FORMAT.get(PurePosixPath(self.path or "").suffix.lower(), "binary")


def _string(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _literal_dir(node: ast.AST, consts: dict[str, str]) -> str | None:
    """The literal directory a path made at run time starts with: ``f"results/{x}.png"`` and
    ``os.path.join("results", x)`` give ``results``; ``Path("out") / name`` gives ``out``."""
    prefix: str | None = None
    if isinstance(node, ast.JoinedStr) and node.values:
        prefix = _text(node.values[0], consts)
        if isinstance(node.values[0], ast.FormattedValue):
            prefix = _text(node.values[0].value, consts)
            if prefix is not None:
                return prefix.strip("/") or None
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join" \
            and node.args:
        literals: list[str] = []
        for arg in node.args:
            text = _text(arg, consts)
            if text is None:
                break
            literals.append(text)
        if literals and len(literals) < len(node.args):
            return "/".join(p.strip("/") for p in literals if p.strip("/")) or None
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return _path(node.left, consts)[0]
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        prefix = _text(node.left, consts)
    if prefix is None or "/" not in prefix:
        return None
    return prefix.rsplit("/", 1)[0].strip("/") or None


def _text(node: ast.AST | None, consts: dict[str, str]) -> str | None:
    """A string literal, or a name the module binds to one (``OUT = "results"``)."""
    if isinstance(node, ast.Name):
        return consts.get(node.id)
    return _string(node)


def _path(node: ast.AST, consts: dict[str, str]) -> tuple[str | None, bool]:
    """(path, is a directory) of a path expression: a literal, ``Path("x")``, or a literal
    directory under a part made at run time; ``(None, False)`` when nothing is literal."""
    text = _text(node, consts)
    if text is not None:
        return text, False
    if isinstance(node, ast.Call) and _name(node.func) in ("Path", "PurePath", "pathlib.Path") and len(
            node.args) == 1:
        return _path(node.args[0], consts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join":
        parts = [_text(a, consts) for a in node.args]
        if parts and all(p is not None for p in parts):
            return "/".join(p.strip("/") for p in parts if p), False
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left, _ = _path(node.left, consts)
        right = _text(node.right, consts)
        if left is not None and right is not None:
            return f"{left.rstrip('/')}/{right}", False
        return (left, True) if left is not None else (None, False)
    directory = _literal_dir(node, consts)
    return (directory, True) if directory is not None else (None, False)


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return ""


def _open_mode(call: ast.Call) -> str | None:
    """The mode of an ``open(PATH, MODE)`` call (``"r"`` when not given), else ``None``."""
    if _name(call.func) not in ("open", "io.open", "codecs.open") or not call.args:
        return None
    mode = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "mode"), None)
    return _string(mode) if mode is not None else "r"


class _Scope:
    """What names stand for, module-wide (a script's names are few, and read in source order):
    a file opened for writing, a CSV writer on one, a dict literal, a DataFrame's columns."""

    def __init__(self, tree: ast.Module) -> None:
        self.files: dict[str, ast.Call] = {}
        self.writers: dict[str, tuple[str, list[str] | None]] = {}
        self.dicts: dict[str, ast.Dict] = {}
        self.frames: dict[str, list[str]] = {}
        #: Names bound once, at module level, to a string literal (``OUT_DIR = "results"``).
        self.consts: dict[str, str] = {}
        bound: dict[str, int] = {}
        for statement in tree.body:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(
                    statement.targets[0], ast.Name):
                bound[statement.targets[0].id] = bound.get(statement.targets[0].id, 0) + 1
                text = _string(statement.value)
                if text is not None:
                    self.consts[statement.targets[0].id] = text
        self.consts = {k: v for k, v in self.consts.items() if bound[k] == 1}
        for node in ast.walk(tree):
            if isinstance(node, ast.With):
                for item in node.items:
                    if isinstance(item.context_expr, ast.Call) and isinstance(item.optional_vars, ast.Name) \
                            and _open_mode(item.context_expr) is not None:
                        self.files[item.optional_vars.id] = item.context_expr
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self._assign(node.targets[0].id, node.value)

    def _assign(self, name: str, value: ast.expr) -> None:
        if isinstance(value, ast.Dict):
            self.dicts[name] = value
        elif isinstance(value, ast.Call):
            callee = _name(value.func)
            if _open_mode(value) is not None:
                self.files[name] = value
            elif callee.endswith("DataFrame"):
                columns = _frame_columns(value)
                if columns is not None:
                    self.frames[name] = columns
            elif callee.endswith(("csv.writer", "csv.DictWriter")) or callee in ("writer", "DictWriter"):
                target = value.args[0] if value.args else None
                fieldnames = next((k.value for k in value.keywords if k.arg == "fieldnames"), None)
                header = _strings(fieldnames) if fieldnames is not None else None
                if isinstance(target, ast.Name):
                    self.writers[name] = (target.id, header)


def _strings(node: ast.AST | None) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
        texts = [_string(e) for e in node.elts]
        if all(t is not None for t in texts):
            return [t for t in texts if t is not None]
    return None


def _frame_columns(call: ast.Call) -> list[str] | None:
    given = next((k.value for k in call.keywords if k.arg == "columns"), None)
    if given is not None:
        return _strings(given)
    if call.args and isinstance(call.args[0], ast.Dict):
        keys = [_string(k) for k in call.args[0].keys]
        if keys and all(k is not None for k in keys):
            return [k for k in keys if k is not None]
    return None


def _dict_keys(node: ast.Dict) -> list[str] | None:
    """The keys of a dict literal whose values are not text (a model's name is not a metric)."""
    keys: list[str] = []
    for key, value in zip(node.keys, node.values):
        text = _string(key)
        if text is None:
            return None
        if _string(value) is None and not isinstance(value, (ast.Dict, ast.List)):
            keys.append(text)
    return keys


def _target(node: ast.AST, scope: _Scope) -> ast.Call | None:
    """The ``open(...)`` call a file argument is: inline, or a name bound to one."""
    if isinstance(node, ast.Call) and _open_mode(node) is not None:
        return node
    return scope.files.get(node.id) if isinstance(node, ast.Name) else None


def written_files(tree: ast.Module) -> list[Written]:
    """Every write of a file that ``tree`` visibly makes, in source order; one per path."""
    scope = _Scope(tree)
    found: list[Written] = []
    dumped: set[int] = set()  # open() calls whose file a dump or a writer already describes
    headers: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "writerow" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id in scope.writers:
            header = _strings(node.args[0]) if node.args else None
            first = headers.setdefault(node.func.value.id, header or [])
            if header and not first:
                headers[node.func.value.id] = header
    calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
    for call in calls:
        method = call.func.attr if isinstance(call.func, ast.Attribute) else _name(call.func)
        callee = _name(call.func) if not _name(call.func).startswith(".") else method
        if method in ("dump",) and len(call.args) >= 2 and callee.split(".")[0] in ("json", "pickle", "yaml",
                                                                                      "joblib", "torch"):
            handle = _target(call.args[1], scope)
            if handle is not None:
                dumped.add(id(handle))
                kind = "json" if callee.startswith("json") else "text" if callee.startswith("yaml") else "binary"
                fields = None
                if kind == "json":
                    data = call.args[0]
                    literal = data if isinstance(data, ast.Dict) else scope.dicts.get(
                        data.id) if isinstance(data, ast.Name) else None
                    fields = _dict_keys(literal) if literal is not None else None
                found.append(_at(handle.args[0], kind, call, callee, fields, scope.consts))
            elif callee.startswith("joblib") and len(call.args) >= 2:
                found.append(_at(call.args[1], "binary", call, callee, None, scope.consts))
        elif callee in ("torch.save", "joblib.dump") and len(call.args) >= 2:
            found.append(_at(call.args[1], "binary", call, callee, None, scope.consts))
        elif method in _SAVERS and call.args and not (method == "save" and callee.startswith("torch")):
            kind = _SAVERS[method]
            if method == "save" and not callee.startswith(("np.", "numpy.")):
                continue  # model.save(...), img.save(...): not known to be an array
            fields = None
            if kind == "csv" and isinstance(call.func, ast.Attribute):
                frame = call.func.value
                fields = scope.frames.get(frame.id) if isinstance(frame, ast.Name) else _frame_columns(
                    frame) if isinstance(frame, ast.Call) and _name(frame.func).endswith("DataFrame") else None
            found.append(_at(call.args[0], kind, call, callee, fields, scope.consts))
        elif _open_mode(call) is not None and _WRITE_MODE.search(_open_mode(call) or ""):
            writer = next((w for w, (f, _) in scope.writers.items()
                           if f in scope.files and scope.files[f] is call), None)
            if writer is not None:
                dumped.add(id(call))
                given = scope.writers[writer][1]
                found.append(_at(call.args[0], "csv", call, "csv.writer", given or headers.get(writer) or None,
                                 scope.consts))
            elif id(call) not in dumped:
                found.append(_at(call.args[0], "text", call, "open", None, scope.consts))
    if not any(item.kind == "figure" for item in found):
        # A figure only shown (plt.show()) is written nowhere: no output, but a result all the same.
        shown = next((c for c in calls if _name(c.func) in ("plt.show", "pyplot.show", "matplotlib.pyplot.show")),
                     None)
        if shown is not None:
            found.append(Written(None, "shown", shown.lineno, _name(shown.func), why="a figure shown on screen"))
    # A later json.dump of an open() seen first: the dump says more (its keys).
    unique: dict[str, Written] = {}
    runtime: list[Written] = []
    for item in found:
        if item.path is None:
            runtime.append(item)
            continue
        key = item.path + ("/" if item.directory else "")
        previous = unique.get(key)
        if previous is None or (previous.kind == "text" and item.kind != "text") or (
                previous.fields is None and item.fields is not None and previous.kind == item.kind):
            unique[key] = item
    return sorted([*unique.values(), *runtime], key=lambda w: w.line)


def _at(node: ast.AST, kind: str, call: ast.Call, callee: str, fields: list[str] | None,
        consts: dict[str, str]) -> Written:
    path, directory = _path(node, consts)
    if path is not None:
        path = path.removeprefix("./")
    if path is not None and not directory and kind in ("figure", "array", "text-array", "binary", "text"):
        suffix = PurePosixPath(path).suffix.lower()
        if suffix in _FIGURE_SUFFIXES:
            kind = "figure"
        elif suffix in (".npy", ".npz"):
            kind = "array"
        elif kind == "array" and not suffix:
            path += ".npy"  # np.save adds the suffix
        elif suffix == ".json":
            kind = "json"
        elif suffix in (".csv", ".tsv"):
            kind = "csv"
    if path is None or path.startswith("/") or ".." in PurePosixPath(path).parts or not path:
        why = "an absolute path or one outside the repository" if path else "a path made at run time"
        return Written(None, kind, call.lineno, callee or "open", why=why)
    return Written(path, kind, call.lineno, callee or "open", directory=directory, fields=fields)


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def declare_outputs(launcher: dict[str, Any], script: str, written: list[Written]) -> list[Finding]:
    """Add what ``script`` writes to ``launcher``'s outputs (a path already declared, or inside a
    declared directory, is left as it is); the findings, each at the writing call's ``file:line``.
    A path made at run time is a finding only: what it will be is not known."""
    findings: list[Finding] = []
    outputs: list[dict[str, Any]] = launcher.setdefault("outputs", [])
    for item in written:
        if item.kind == "shown":
            continue
        if item.path is None:
            findings.append(Finding("output", f"{launcher['id']}: not declared", script, item.line,
                                    f"{item.call} writes to {item.why}: declare it by hand if a run writes it"))
            continue
        shown = item.path + ("/" if item.directory else "")
        if any(_inside(item.path, str(o["path"])) and (o["format"] == "directory" or o["path"] == item.path)
               for o in outputs):
            findings.append(Finding("output", f"{launcher['id']}: {shown}", script, item.line,
                                    f"{item.call} writes it; already declared"))
            continue
        taken = {str(o["id"]) for o in outputs}
        base = _ID.sub("-", PurePosixPath(item.path).stem if not item.directory else PurePosixPath(
            item.path).name).strip("-._")[:60] or "output"
        ident, n = base, 2
        while ident in taken:
            ident, n = f"{base}-{n}", n + 1
        outputs.append({"id": ident, "path": item.path, "format": item.format})
        findings.append(Finding("output", f"{launcher['id']}: {shown} ({item.format})", script, item.line,
                                f"{item.call} writes it" + (" (a directory: the file name is made at run time)"
                                                            if item.directory else "")))
    if not outputs:
        del launcher["outputs"]
    return findings


def committed_header(text: str) -> list[str] | None:
    """The header row of a CSV file's text (a copy of the results the repository holds), or
    ``None`` when it is not one (a Git LFS pointer, one column, an empty or numeric first row)."""
    if text.startswith("version https://git-lfs"):
        return None
    first = text.split("\n", 1)[0].strip()
    try:
        [row] = list(csv.reader([first]))
    except (csv.Error, ValueError):
        return None
    names = [name.strip() for name in row]
    if len(names) < 2 or any(not name or re.fullmatch(r"[-+0-9.eE]+", name) for name in names):
        return None
    return names
