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


def test_text_after_a_table_and_a_text_of_one_line() -> None:
    text = "# Results\n\n" + MARKDOWN + "\nThe rest is prose.\n"
    assert [(f.line, f.parts) for f in table_numbers("README.md", text)] == [(5, ("cell", "ours", "acc", "91.5"))]
    assert table_numbers("README.md", "| one line |") == []


def test_a_latex_table_too_small_does_not_hide_the_next_one() -> None:
    text = "\\begin{tabular}{c}\nalone \\\\\n\\end{tabular}\n" + TEX
    assert [(f.line, f.parts) for f in latex_table_numbers("p.tex", text)] == [(6, ("cell", "ours", "acc", "91.5"))]


def test_prints_without_a_number_do_not_hide_later_ones() -> None:
    text = 'acc = 1\nprint()\nlog = print\nlogger.print("acc: 1")\nprint(f"acc: {acc}")\n'
    assert [(f.line, f.parts[1]) for f in metric_prints("run.py", text)] == [(5, "acc")]


def test_a_table_right_after_one_line_of_text() -> None:
    assert [f.line for f in table_numbers("README.md", "Intro.\n" + MARKDOWN)] == [4]


def test_a_border_without_a_table_does_not_hide_the_next_table() -> None:
    # '=====  =====' and a line under it, then a blank line: no table; the next one is read
    text = "=====  =====\nnot a table\n\n" + RST
    assert [(f.line, f.parts) for f in rst_table_numbers("r.rst", text)] == [(7, ("cell", "ours", "acc", "91.5"))]


GRID = "+-------+------+\n| model | acc  |\n+=======+======+\n| ours  | 91.5 |\n+-------+------+\n"


def test_a_grid_table_needs_its_header_line() -> None:
    assert [(f.line, f.parts) for f in rst_table_numbers("r.rst", GRID)] == [(4, ("cell", "ours", "acc", "91.5"))]
    # without a '+===+' line no row is known to be the header: no cell is read
    assert rst_table_numbers("r.rst", GRID.replace("=", "-")) == []


def test_every_row_of_a_long_latex_table_has_its_line() -> None:
    rows = "".join(f"r{i} & {i}.5 \\\\\n" for i in range(30))
    text = "\\begin{tabular}{lc}\nmodel & acc \\\\\n\\hline\n" + rows + "\\end{tabular}\n"
    assert [(f.line, f.parts[1]) for f in latex_table_numbers("p.tex", text)] == [(4 + i, f"r{i}") for i in range(30)]


def test_only_labelled_numbers_are_metrics() -> None:
    text = ('a, b, name = 1, 2, "x"\nprint(f"{a}{b}")\nprint("name: %s" % name)\nlogger.print("acc:", a)\n'
            'print("acc: %d" % a)\n')
    assert [(f.line, f.parts[1]) for f in metric_prints("run.py", text)] == [(5, "acc")]


def test_python_that_does_not_parse_has_no_metrics() -> None:
    assert metric_prints("run.py", 'print(f"acc: {acc}"\n') == []


def test_listed_files_that_cannot_be_read_are_passed_over(tmp_path: Path) -> None:
    # git lists them, but they are gone (or are links): detection reads only regular files
    repo = _repo(tmp_path, {"README.md": MARKDOWN})
    repo = RawRepo(root=tmp_path, files=["GONE.md", "README.md", "docs/gone.rst", "docs/gone.tex", "gone.py"])
    assert _where(detect_claims(repo)) == [("README.md", 3)]


def test_a_grid_table_alone_in_the_docs_is_read(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"docs/results.rst": "Results\n-------\n\n" + GRID})
    assert _where(detect_claims(repo)) == [("docs/results.rst", 7)]


def test_a_grid_table_of_narrow_columns_alone_in_the_docs_is_read(tmp_path: Path) -> None:
    # no '===' anywhere: its '+--' borders alone say there is a table to read
    narrow = "+--+--+\n|m |a |\n+==+==+\n|x |9 |\n+--+--+\n"
    repo = _repo(tmp_path, {"docs/narrow.rst": narrow})
    assert [(f.file, f.line, f.parts) for f in detect_claims(repo)] == [("docs/narrow.rst", 4, ("cell", "x", "a", "9"))]


def test_numbers_a_readme_code_block_shows_a_script_print() -> None:
    # tsetlin-demos, hdc-digits: the README pastes the example's output under its command; the
    # number of a printed label there is the reported value of that print's claim. Prose and
    # labels no script prints are not read; one (label, number) is taken once.
    from rra_tools.builder.detect.claims import metric_prints, shown_outputs

    prints = metric_prints("demo.py", 'print(f"Accuracy: {acc:.2f}%")\nprint(f"F1: {f1}")\n')
    readme = ("# Demo\n\nAccuracy: 50.00% in prose is not read.\n\n```bash\npython demo.py\n```\n\n```\n"
              "Accuracy: 97.50%\nRecall: 0.123\nF1: 0.9\nAccuracy: 97.50%\n```\n\n```\n$ python3 ./other.py\n"
              "Accuracy: 91.00%\n```\n")
    found = shown_outputs("README.md", readme, prints)
    assert [(f.line, f.value, f.parts) for f in found] == [
        (10, "Accuracy = 97.50", ("cell", "output", "Accuracy", "97.50")),
        (12, "F1 = 0.9", ("cell", "output", "F1", "0.9")),
        # The script a block's command runs is the row of the numbers under it (d-tm-parallel:
        # each demo's pasted output pairs with that demo's print, not the first 'Accuracy:').
        (18, "Accuracy = 91.00", ("cell", "other", "Accuracy", "91.00"))]
