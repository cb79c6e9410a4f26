"""Candidate claims (rra_tools/builder/detect/claims.py) at their edges: which files are read
(top-level and docs/ documentation only, not tests), the cap on candidates, tables that run to
the end of the text, a table under a heading's underline, the smallest LaTeX table, line numbers
of a text that starts with a blank line, and print calls that print no labelled number."""

from __future__ import annotations

from pathlib import Path

from rra_tools.builder.detect.claims import (MAX_CANDIDATES, detect_claims, latex_table_numbers, metric_prints,
                                             rst_table_numbers, table_numbers)
from rra_tools.builder.detect.findings import Finding
from rra_tools.builder.detect.repo import RawRepo

MARKDOWN = "| model | acc |\n|---|---|\n| ours | 91.5 |\n"
RST = "=====  =====\nmodel  acc\n=====  =====\nours   91.5\n=====  =====\n"
TEX = "\\begin{tabular}{lc}\nmodel & acc \\\\\nours & 91.5 \\\\\n\\end{tabular}\n"
PRINTS = 'acc = 0.915\nprint(f"acc: {acc:.3f}")\n'


def _repo(tmp_path: Path, files: dict[str, str]) -> RawRepo:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return RawRepo(root=tmp_path, files=sorted(files))


def _where(found: list[Finding]) -> list[tuple[str | None, int | None]]:
    return [(f.file, f.line) for f in found]


def test_documentation_is_read_at_the_top_level_and_under_docs_only(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {
        "README.md": MARKDOWN, "docs/results.rst": RST, "docs/paper.tex": TEX, "train.py": PRINTS,
        "src/notes.md": MARKDOWN, "src/notes.rst": RST, "src/table.tex": TEX, "src/eval.py": PRINTS,
        "tests/test_x.py": PRINTS, "pkg/test/helper.py": PRINTS,
    })
    found = detect_claims(repo)
    assert sorted(_where(found)) == [("README.md", 3), ("docs/paper.tex", 3), ("docs/results.rst", 4),
                                     ("src/eval.py", 2), ("train.py", 2)]
    cells = [f.parts for f in found if f.parts[0] == "cell"]
    assert cells == [("cell", "ours", "acc", "91.5")] * 3


def test_documentation_without_a_table_marker_is_not_parsed(tmp_path: Path) -> None:
    # Each reader is asked only when its marker is in the text; a table without one is no table.
    repo = _repo(tmp_path, {"README.md": "ours 91.5\n", "docs/a.rst": "ours 91.5\n", "docs/b.tex": "ours & 91.5\n",
                            "run.py": "x = 1\n"})
    assert detect_claims(repo) == []


def test_candidates_stop_at_the_cap(tmp_path: Path) -> None:
    rows = "".join(f"| row{i} | {i}.5 |\n" for i in range(150))
    table = "| model | acc |\n|---|---|\n" + rows
    repo = _repo(tmp_path, {"A.md": table, "B.md": table})
    found = detect_claims(repo)
    assert MAX_CANDIDATES == 200
    assert len(found) == 200
    assert [f.file for f in found].count("A.md") == 150 and found[-1].parts[1] == "row49"


def test_a_table_under_a_heading_underline_is_found() -> None:
    # 'Results' over '---' is a heading (no '|' in it), not a table header.
    text = "Results\n---\n" + MARKDOWN
    assert [f.parts for f in table_numbers("README.md", text)] == [("cell", "ours", "acc", "91.5")]


def test_rst_tables_that_run_to_the_end_of_the_text() -> None:
    # No closing border: the body runs to the last line; a header with no border after it is no table.
    body = rst_table_numbers("r.rst", "=====  =====\nmodel  acc\n=====  =====\nours   91.5")
    assert [(f.line, f.parts) for f in body] == [(4, ("cell", "ours", "acc", "91.5"))]
    assert rst_table_numbers("r.rst", "=====  =====\nmodel  acc\nours   91.5") == []


def test_the_smallest_latex_table_and_its_line_numbers() -> None:
    # A header and one row is a table; the text's leading blank line counts.
    found = latex_table_numbers("p.tex", "\n" + TEX)
    assert [(f.line, f.parts) for f in found] == [(4, ("cell", "ours", "acc", "91.5"))]
    assert latex_table_numbers("p.tex", "\\begin{tabular}{lc}\nmodel & acc \\\\\n\\end{tabular}\n") == []


def test_a_print_of_a_label_alone_or_of_no_string_is_no_metric() -> None:
    text = 'x = 1\nprint("accuracy:")\nprint(x, 0.5)\nprint("accuracy:", x)\n'
    found = metric_prints("run.py", text)
    assert [(f.line, f.parts[1]) for f in found] == [(4, "accuracy")]
