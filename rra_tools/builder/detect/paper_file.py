"""Candidate claims from the paper itself (``rra init --paper FILE``): the numbers of its tables.

- Markdown (``.md``): the cells of its pipe tables, as for the README;
- LaTeX (``.tex``): the cells of its ``tabular`` environments;
- PDF (``.pdf``, with the optional extra 'paper', pdfminer.six): the text of each page; the
  lines from a caption ``Table N`` to the end of the page that hold numbers. A PDF keeps no
  table structure, so each candidate names the table, the page and the line's text.

Each candidate carries its location: ``file:line`` for text formats, ``file`` with the page for
a PDF. The file is only read, never run or rendered beyond text extraction.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...errors import ExitStatus, RRAError
from .claims import _NUMBER, latex_table_numbers, table_numbers
from .findings import Finding

__all__ = ["PaperFileError", "paper_candidates"]

#: Larger paper files are refused (a paper PDF is a few MiB).
MAX_PAPER_BYTES = 64 * 1024 * 1024
MAX_CANDIDATES = 200
_CAPTION = re.compile(r"^\s*Table\s+([0-9]+|[IVXLC]+)\b")


class PaperFileError(RRAError):
    """The paper file cannot be read."""

    exit_status = ExitStatus.USAGE


def paper_candidates(path: Path) -> list[Finding]:
    """Candidate claims from the tables of the paper at ``path`` (.md, .tex or .pdf)."""
    suffix = path.suffix.lower()
    if suffix not in (".md", ".markdown", ".tex", ".pdf"):
        raise PaperFileError(f"--paper {path}: not a Markdown (.md), LaTeX (.tex) or PDF (.pdf) file")
    try:
        size = path.stat().st_size
        if size > MAX_PAPER_BYTES:
            raise PaperFileError(f"--paper {path}: {size} bytes, more than {MAX_PAPER_BYTES}")
        raw = path.read_bytes()
    except OSError as exc:
        raise PaperFileError(f"--paper {path}: cannot be read: {exc.strerror or exc}") from None
    name = path.name
    if suffix == ".pdf":
        return _pdf_candidates(name, raw)[:MAX_CANDIDATES]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise PaperFileError(f"--paper {path}: not UTF-8 text") from None
    found = latex_table_numbers(name, text) if suffix == ".tex" else table_numbers(name, text)
    return found[:MAX_CANDIDATES]


def _pdf_candidates(name: str, raw: bytes) -> list[Finding]:
    import io

    # Imported here: the extra 'paper' (the CLI names it when the import fails).
    from pdfminer.high_level import extract_text
    from pdfminer.pdfparser import PDFSyntaxError

    found: list[Finding] = []
    try:
        pages = extract_text(io.BytesIO(raw)).split("\f")
    except (PDFSyntaxError, ValueError, TypeError, KeyError) as exc:
        raise PaperFileError(f"--paper {name}: not a readable PDF ({type(exc).__name__}: {exc})") from None
    for number, page in enumerate(pages, 1):
        table: str | None = None
        for line in page.splitlines():
            caption = _CAPTION.match(line)
            if caption:
                table = caption.group(1)
                continue
            if table is None:
                continue
            values = [m.group(0) for m in _NUMBER.finditer(line) if not re.fullmatch(r"(19|20)[0-9]{2}", m.group(0))]
            if values and re.search(r"[A-Za-z]", line):
                label = line.strip()
                found.append(Finding("claim-candidate", f"Table {table}: {label}", f"{name} page {number}", None,
                                     "numbers in a table of the paper (PDF text; check the columns)"))
    return found
