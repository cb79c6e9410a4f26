"""Candidate claims: numbers in the README's and docs' Markdown tables, and metric lines the code
prints (``print(f"RMSE: {rmse:.2f}")`` → a regular expression over the launcher's standard
output). They are reported for the author to confirm, not written as claims: a claim needs
reference observations that only runs can give."""

from __future__ import annotations

import ast
import re

from .findings import Finding
from .pycalls import calls
from .repo import RawRepo

__all__ = ["detect_claims", "metric_prints", "table_numbers"]

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
                                             "a number in a results table"))
                row += 1
            index = row
        else:
            index += 1
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
            for match in _PERCENT_FORMAT.finditer(first.left.value):
                label = _label_before(first.left.value[:match.start()])
                if label and match.group(0)[-1] in "dfgei":
                    labels.append(label)
        elif isinstance(first, ast.Constant) and isinstance(first.value, str) and len(node.args) > 1:
            label = _label_before(first.value + " ")
            if label:
                labels.append(label.rstrip() + " ")  # print() puts one space between its arguments
        for label in labels:
            pattern = re.escape(label.rstrip()).replace(r"\ ", " ") + r"\s*([-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?)"
            found.append(Finding("claim-candidate", f"stdout regex {pattern}", name, node.lineno,
                                 f"printed metric {label.rstrip(' :=')!r}"))
    return found


def detect_claims(repo: RawRepo) -> list[Finding]:
    """Candidate claims from Markdown tables (README and docs/) and metric prints in Python files."""
    found: list[Finding] = []
    for name in repo.files:
        if len(found) >= MAX_CANDIDATES:
            break
        lower = name.lower()
        if lower.endswith(".md") and ("/" not in name or lower.startswith("docs/")):
            text = repo.text(name)
            if text is not None and "|" in text:
                found.extend(table_numbers(name, text))
        elif lower.endswith(".py") and not re.search(r"(^|/)tests?/", lower):
            text = repo.text(name)
            if text is not None and "print(" in text:
                tree = repo.tree(name)
                if tree is not None:
                    found.extend(metric_prints(name, text, tree))
    return found[:MAX_CANDIDATES]
