"""Candidate claims from the paper itself (``rra init --paper FILE``): the numbers of its tables.

- Markdown (``.md``): the cells of its pipe tables, as for the README;
- LaTeX (``.tex``): the cells of its ``tabular`` environments;
- PDF (``.pdf``, with the optional extra 'paper', pdfminer.six): the text of each page; the
  lines from a caption ``Table N`` to the end of the page that hold numbers. A PDF keeps no
  table structure, so each candidate names the table, the page and the line's text. Only the
  first :data:`MAX_PDF_PAGES` pages are read, in a child process held to :data:`PDF_MEMORY_BYTES`
  of address space and :data:`PDF_SECONDS` seconds: a small PDF can decompress to gigabytes (a
  FlateDecode stream of zeros) or hold 100,000 pages, and pdfminer itself has no such bounds.

Each candidate carries its location: ``file:line`` for text formats, ``file`` with the page for
a PDF. The file is only read, never run or rendered beyond text extraction.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from ...errors import ExitStatus
from ..errors import BuilderLayerError
from .claims import _NUMBER, latex_table_numbers, table_numbers
from .findings import Finding

__all__ = ["PaperFileError", "paper_candidates"]

#: Larger paper files are refused (a paper PDF is a few MiB).
MAX_PAPER_BYTES = 64 * 1024 * 1024
MAX_CANDIDATES = 200
#: Pages of a PDF read (a paper's tables are in its first pages; appendices past this are not).
MAX_PDF_PAGES = 50
#: Address space of the child that extracts a PDF's text (the interpreter and pdfminer take
#: about 100 MiB; a paper's text is a few MiB).
PDF_MEMORY_BYTES = 1024 * 1024 * 1024
#: Wall-clock time the extraction may take (a 50-page paper takes about 2 s).
PDF_SECONDS = 30
#: Text the child may send back.
MAX_PDF_TEXT = 16 * 1024 * 1024
_CAPTION = re.compile(r"^\s*Table\s+([0-9]+|[IVXLC]+)\b")


class PaperFileError(BuilderLayerError):
    """The paper file cannot be read."""

    exit_status = ExitStatus.USAGE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


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


#: The child: limits first (they hold for the import and the parse), then the pages' text as a
#: JSON list on stdout; exit 3 for a missing pdfminer, 4 for memory, 5 for an unreadable PDF.
_CHILD = """
import io, json, sys
try:
    import resource
    limit = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CPU, (int(sys.argv[3]), int(sys.argv[3]) + 1))
except (ImportError, ValueError, OSError):
    pass
try:
    import logging
    logging.disable(logging.CRITICAL)
    from pdfminer.high_level import extract_text
except ImportError:
    sys.exit(3)
try:
    pages = extract_text(io.BytesIO(sys.stdin.buffer.read()), maxpages=int(sys.argv[2])).split("\\f")
    sys.stdout.write(json.dumps(pages[:int(sys.argv[2])]))
except MemoryError:
    sys.exit(4)
except RecursionError:
    sys.stderr.write("nesting too deep"); sys.exit(5)
except Exception as exc:
    sys.stderr.write(type(exc).__name__ + ": " + str(exc)[:300]); sys.exit(5)
"""


def _pdf_pages(name: str, raw: bytes) -> list[str]:
    """The text of the first pages of the PDF ``raw``, extracted in a bounded child process."""
    # Imported here too, so that a missing extra 'paper' is named by the CLI as before.
    import pdfminer  # noqa: F401

    # -P: the current directory (perhaps the repository's) is not put on the child's path.
    argv = [sys.executable, "-P", "-c", _CHILD, str(PDF_MEMORY_BYTES), str(MAX_PDF_PAGES), str(PDF_SECONDS)]
    try:
        done = subprocess.run(argv, input=raw, capture_output=True, timeout=PDF_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        raise PaperFileError(f"--paper {name}: reading its text took more than {PDF_SECONDS} s; nothing was "
                             "taken from it", hint="give the paper's tables as Markdown or LaTeX instead") from None
    if done.returncode == 3:
        # The CLI names the extra 'paper' for this module.
        raise ModuleNotFoundError("No module named 'pdfminer'", name="pdfminer")
    if done.returncode == 4 or (done.returncode < 0 and not done.stdout):
        raise PaperFileError(f"--paper {name}: reading its text needs more than {PDF_MEMORY_BYTES >> 20} MiB "
                             "of memory or CPU time (a compressed stream that expands without bound?); nothing "
                             "was taken from it", hint="give the paper's tables as Markdown or LaTeX instead")
    if done.returncode != 0 or len(done.stdout) > MAX_PDF_TEXT:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["more text than it can hold"]
        raise PaperFileError(f"--paper {name}: not a readable PDF ({why[0][:300]})")
    pages = json.loads(done.stdout)
    return [page for page in pages if isinstance(page, str)] if isinstance(pages, list) else []


def _pdf_candidates(name: str, raw: bytes) -> list[Finding]:
    found: list[Finding] = []
    pages = _pdf_pages(name, raw)
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
