"""Candidate claims: numbers in the README's and docs' tables (Markdown, reStructuredText grid and
simple tables, LaTeX ``tabular``), and metric lines the code prints (``print(f"RMSE: {rmse:.2f}")`` → a regular expression over the launcher's standard
output). Each candidate says what it is made of (:attr:`Finding.parts`), from which
:mod:`rra_tools.builder.draft_claims` writes the claims of the draft."""

from __future__ import annotations

import ast
import re
from pathlib import PurePosixPath

from .findings import Finding
from .pycalls import calls
from .repo import RawRepo

__all__ = ["detect_claims", "latex_table_numbers", "metric_prints", "rst_table_numbers", "table_numbers"]

_NUMBER = re.compile(r"[-+]?(?:[0-9]+\.[0-9]+|[0-9]+)(?:[eE][-+]?[0-9]+)?%?")
_SEPARATOR = re.compile(r"\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?")
#: A label and a ':' or '=' right before a printed number: "RMSE: ", "test acc = ".
_LABEL = re.compile(r"([A-Za-z][A-Za-z0-9_@./()\- ]{0,40}?)\s*([:=])\s*$")
_PERCENT_FORMAT = re.compile(r"%[-+ #0]*[0-9]*(?:\.[0-9]+)?[dfgeEis]")
MAX_CANDIDATES = 200


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def table_numbers(name: str, text: str) -> list[Finding]:
    """Every numeric cell of the Markdown tables in ``text``, labelled by its row and column."""
    found: list[Finding] = []
    lines = text.splitlines()
    index = 0
    while index + 1 < len(lines):
        header, separator = lines[index], lines[index + 1]
        if "|" in header and _SEPARATOR.fullmatch(separator.strip()):
            columns = _cells(header)
            row = index + 2
            while row < len(lines) and "|" in lines[row] and lines[row].strip():
                cells = _cells(lines[row])
                for column, cell in zip(columns[1:], cells[1:]):
                    if _NUMBER.fullmatch(cell.replace("**", "").strip()):
                        found.append(Finding("claim-candidate", f"{cells[0]} / {column} = {cell}", name, row + 1,
                                             "a number in a results table",
                                             ("cell", cells[0], column, cell.replace("**", "").strip())))
                row += 1
            index = row
        else:
            index += 1
    return found


def _number_cell(cell: str) -> str | None:
    """The number a table cell shows, without emphasis, math delimiters or a '± error' part."""
    text = re.sub(r"\\(?:textbf|textit|emph|mathbf|underline)\{([^{}]*)\}", r"\1", cell)
    text = text.replace("**", "").replace("$", "").replace("\\%", "%").strip()
    text = re.split(r"\s*(?:±|\\pm|\+/-|\+-)\s*", text)[0].strip()
    return text if _NUMBER.fullmatch(text) else None


def _grid_cells(columns: list[str], cells: list[str], name: str, line: int, what: str) -> list[Finding]:
    found: list[Finding] = []
    for column, cell in zip(columns[1:], cells[1:]):
        number = _number_cell(cell)
        if number is not None:
            found.append(Finding("claim-candidate", f"{cells[0]} / {column} = {number}", name, line, what,
                                 ("cell", cells[0], column, number)))
    return found


_RST_SIMPLE = re.compile(r"=+(?: +=+)+ *")
_RST_GRID = re.compile(r"\+(?:[-=]+\+)+ *")


def rst_table_numbers(name: str, text: str) -> list[Finding]:
    """Every numeric cell of the reStructuredText tables in ``text``: simple tables (columns
    marked by ``===  ===`` borders) and grid tables (``+---+---+`` borders, one text line per
    row), labelled by row and column."""
    found: list[Finding] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if _RST_SIMPLE.fullmatch(line.rstrip()):
            spans = [(m.start(), m.end()) for m in re.finditer(r"=+", line)]

            def split(row: str, spans: list[tuple[int, int]] = spans) -> list[str]:
                # The last column runs to the end of the line (rst allows text past its border).
                return [row[a:(spans[k + 1][0] if k + 1 < len(spans) else len(row))].strip()
                        for k, (a, _) in enumerate(spans)]

            rows: list[tuple[int, str]] = []
            index += 1
            while index < len(lines) and lines[index].strip() and not _RST_SIMPLE.fullmatch(lines[index].rstrip()):
                rows.append((index, lines[index]))
                index += 1
            # header rows, then a border, then the body up to the closing border
            if index < len(lines) and _RST_SIMPLE.fullmatch(lines[index].rstrip()) and rows:
                columns = split(rows[-1][1])
                index += 1
                while index < len(lines) and lines[index].strip() and not _RST_SIMPLE.fullmatch(
                        lines[index].rstrip()):
                    found.extend(_grid_cells(columns, split(lines[index]), name, index + 1,
                                             "a number in a reStructuredText table"))
                    index += 1
            index += 1
        elif _RST_GRID.fullmatch(line.rstrip()):
            grid_columns: list[str] | None = None
            header: list[str] | None = None
            index += 1
            while index < len(lines) and (lines[index].startswith("|") or _RST_GRID.fullmatch(lines[index].rstrip())):
                current = lines[index]
                if current.startswith("|"):
                    cells = _cells(current)
                    if grid_columns is None:
                        header = header or cells
                    else:
                        found.extend(_grid_cells(grid_columns, cells, name, index + 1,
                                                 "a number in a reStructuredText table"))
                elif "=" in current and header is not None:
                    grid_columns = header  # the +===+ line ends the header
                index += 1
        else:
            index += 1
    return found


_TABULAR = re.compile(r"\\begin\{tabular\*?\}(?:\{[^{}]*\})?\{(?:[^{}]|\{[^{}]*\})*\}(.*?)\\end\{tabular\*?\}", re.S)
_RULES = re.compile(r"\\(?:hline|toprule|midrule|bottomrule|cline\{[^}]*\}|cmidrule(?:\([^)]*\))?\{[^}]*\})")


def latex_table_numbers(name: str, text: str) -> list[Finding]:
    """Every numeric cell of the LaTeX ``tabular`` environments in ``text`` (rows end at ``\\``,
    cells are split at ``&``; the first row is the header), labelled by row and column."""
    found: list[Finding] = []
    for table in _TABULAR.finditer(text):
        body_start = table.start(1)
        rows: list[tuple[int, list[str]]] = []
        offset = body_start
        for raw in re.split(r"\\\\", table.group(1)):
            cleaned = _RULES.sub("", raw)
            lead = re.match(rf"(?:\s+|{_RULES.pattern})*", raw)
            line = text.count("\n", 0, offset + (lead.end() if lead else 0)) + 1
            offset += len(raw) + 2
            if cleaned.strip():
                rows.append((line, [c.strip() for c in cleaned.split("&")]))
        if len(rows) < 2:
            continue
        columns = [re.sub(r"\\[a-zA-Z]+\{([^{}]*)\}", r"\1", c).replace("\\%", "%") for c in rows[0][1]]
        for line, cells in rows[1:]:
            label = re.sub(r"\\[a-zA-Z]+\{([^{}]*)\}", r"\1", cells[0])
            found.extend(_grid_cells(columns, [label, *cells[1:]], name, line, "a number in a LaTeX tabular"))
    return found


def _label_before(text: str) -> str | None:
    match = _LABEL.search(text)
    return match.group(0).lstrip() if match else None


def metric_prints(name: str, text: str, tree: ast.Module | None = None) -> list[Finding]:
    """``print`` calls that write a labelled number, each with the regex that reads it back."""
    if tree is None:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return []
    found: list[Finding] = []
    for node in sorted(calls(tree, text, "print"), key=lambda n: (n.lineno, n.col_offset)):
        if not (isinstance(node.func, ast.Name) and node.args):
            continue
        first = node.args[0]
        labels: list[str] = []
        if isinstance(first, ast.JoinedStr):
            for part, after in zip(first.values, first.values[1:]):
                if isinstance(part, ast.Constant) and isinstance(part.value, str) and isinstance(
                        after, ast.FormattedValue):
                    label = _label_before(part.value)
                    if label:
                        labels.append(label)
        elif isinstance(first, ast.BinOp) and isinstance(first.op, ast.Mod) and isinstance(
                first.left, ast.Constant) and isinstance(first.left.value, str):
            start = 0
            for match in _PERCENT_FORMAT.finditer(first.left.value):
                # The text since the previous directive: "Iter %d. obj: %f" labels %f "obj:", not
                # "d. obj:" (a label never spans another value).
                label = _label_before(first.left.value[start:match.start()])
                start = match.end()
                if label and match.group(0)[-1] in "dfgei":
                    labels.append(label)
        elif isinstance(first, ast.Constant) and isinstance(first.value, str) and len(node.args) > 1:
            label = _label_before(first.value + " ")
            if label:
                labels.append(label.rstrip() + " ")  # print() puts one space between its arguments
        for label in labels:
            pattern = re.escape(label.rstrip()).replace(r"\ ", " ") + r"\s*([-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?)"
            found.append(Finding("claim-candidate", f"stdout regex {pattern}", name, node.lineno,
                                 f"printed metric {label.rstrip(' :=')!r}", ("print", label.rstrip(" :="), pattern)))
    return found


#: A command line of a README code block that runs a Python script: its group 1 is the script.
_RUN_SCRIPT = re.compile(r"^\s*(?:\$\s*)?python(?:3(?:\.\d+)?)?\s+(?:-u\s+)?([\w./-]+\.py)\b")


def shown_outputs(name: str, text: str, prints: list[Finding]) -> list[Finding]:
    """Numbers a README's code blocks show a script print: a line of a block (the output pasted
    under its command, a session's transcript) that one of ``prints``' patterns reads, as a
    table cell whose column is the printed label, so that the draft pairs it with that print.
    Prose is not read (a number in a sentence says too little of what it is)."""
    from .fences import OUTSIDE, fenced_lines

    patterns = [(f.parts[1], re.compile(f.parts[2])) for f in prints if len(f.parts) == 3 and f.parts[0] == "print"]
    found: list[Finding] = []
    seen: set[tuple[str, str, str]] = set()
    # The script a block's command runs ('python3 ./NoisyXORDemo.py' above its pasted output):
    # the row of the block's numbers, so that the draft pairs them with that script's print and
    # not with the first script that prints the same label (2DNoisyXORDemo.py's 'Accuracy:').
    script, previous = "output", OUTSIDE
    for index, line, where in fenced_lines(text.splitlines()):
        if where != previous:
            script, previous = "output", where
        if where == OUTSIDE or len(line) > 500:
            continue
        command = _RUN_SCRIPT.match(line)
        if command:
            script = PurePosixPath(command.group(1)).stem
            continue
        for label, pattern in patterns:
            match = pattern.search(line)
            number = match.group(1).rstrip(".") if match else None
            if number is None or not _NUMBER.fullmatch(number) or (script, label, number) in seen:
                continue
            seen.add((script, label, number))
            found.append(Finding("claim-candidate", f"{label} = {number}", name, index + 1,
                                 "a number a code block of the README shows a run print",
                                 ("cell", script, label, number)))
    return found


def detect_claims(repo: RawRepo) -> list[Finding]:
    """Candidate claims from Markdown, reStructuredText and LaTeX tables (top-level files and docs/)
    and metric prints in Python files."""
    found: list[Finding] = []
    for name in repo.files:
        if len(found) >= MAX_CANDIDATES:
            break
        lower = name.lower()
        documentation = "/" not in name or lower.startswith("docs/")
        if lower.endswith(".md") and documentation:
            text = repo.text(name)
            if text is not None and "|" in text:
                found.extend(table_numbers(name, text))
        elif lower.endswith(".rst") and documentation:
            text = repo.text(name)
            if text is not None and ("===" in text or "+--" in text):
                found.extend(rst_table_numbers(name, text))
        elif lower.endswith(".tex") and documentation:
            text = repo.text(name)
            if text is not None and "tabular" in text:
                found.extend(latex_table_numbers(name, text))
        elif lower.endswith(".py") and not re.search(r"(^|/)tests?/", lower):
            text = repo.text(name)
            if text is not None and "print(" in text:
                tree = repo.tree(name)
                if tree is not None:
                    found.extend(metric_prints(name, text, tree))
    prints = [f for f in found if f.parts[:1] == ("print",)]
    readme = repo.first("README.md", "README.markdown", "README.rst", "README.txt", "README")
    text = repo.text(readme) if readme is not None and prints else None
    if readme is not None and text is not None:
        tabled = {f.parts[2] for f in found if f.parts[:1] == ("cell",)}
        # A label the README's tables already give a number for keeps the table's.
        found.extend(f for f in shown_outputs(readme, text, prints) if f.parts[2] not in tabled)
    return found[:MAX_CANDIDATES]
