"""rra init extras: click options read statically, candidate claims from reStructuredText and
LaTeX tables, and from the paper given as --paper FILE (Markdown, LaTeX, PDF), each located."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from rra_tools.builder.detect.argparse_static import read_options
from rra_tools.builder.detect.claims import latex_table_numbers, rst_table_numbers
from tests.builder_repos import git
from tests.rra_cli import rra

CLICK_SCRIPT = '''\
import click


@click.command()
@click.option("--rank", type=int, default=10, help="Rank of the factorisation.")
@click.option("--gamma", default=0.01)
@click.option("--dataset", type=click.Choice(["movielens-100k", "douban"]), default="douban")
@click.option("--out", "out_dir", type=click.Path(), required=True)
@click.option("--verbose/--quiet", default=False)
@click.option("-s", "--seed", type=click.INT, default=0)
@click.argument("config")
def main(rank, gamma, dataset, out_dir, verbose, seed, config):
    print("test RMSE = %.3f" % 0.912)


if __name__ == "__main__":
    main()
'''

RST = """\
Results
=======

=========  ========  =====
Model      RMSE      MAE
=========  ========  =====
GRMC       0.912     0.71
Baseline   0.951     0.74
=========  ========  =====

+----------+-------+
| Dataset  | RMSE  |
+==========+=======+
| douban   | 0.731 |
+----------+-------+
"""

TEX = r"""\section{Results}
\begin{table}[t]
\begin{tabular}{l|cc}
\toprule
Method & RMSE & Acc. (\%) \\
\midrule
\textbf{GRMC} & \textbf{0.912} $\pm$ 0.004 & 95.1\% \\
Baseline & 0.951 & n/a \\
\bottomrule
\end{tabular}
\caption{Held-out error.}
\end{table}
"""


def test_click_options_are_read_without_running_the_script() -> None:
    options = {o.flag: o for o in read_options(ast.parse(CLICK_SCRIPT), CLICK_SCRIPT)}
    assert sorted(options) == ["--dataset", "--gamma", "--out", "--rank", "--seed", "--verbose"]
    rank = options["--rank"]
    assert (rank.dest, rank.type, rank.default, rank.has_default, rank.line) == ("rank", "int", 10, True, 5)
    assert (options["--gamma"].type, options["--gamma"].default) == ("float", 0.01)
    assert (options["--dataset"].choices, options["--dataset"].type) == (["movielens-100k", "douban"], "str")
    assert (options["--out"].dest, options["--out"].type, options["--out"].required) == ("out_dir", "path", True)
    assert options["--verbose"].is_flag and options["--seed"].type == "int"


def test_rst_tables() -> None:
    found = [(f.where, f.value) for f in rst_table_numbers("docs/results.rst", RST)]
    assert found == [("docs/results.rst:7", "GRMC / RMSE = 0.912"), ("docs/results.rst:7", "GRMC / MAE = 0.71"),
                     ("docs/results.rst:8", "Baseline / RMSE = 0.951"), ("docs/results.rst:8", "Baseline / MAE = 0.74"),
                     ("docs/results.rst:14", "douban / RMSE = 0.731")]


def test_latex_tabular() -> None:
    found = [(f.where, f.value) for f in latex_table_numbers("paper/main.tex", TEX)]
    assert found == [("paper/main.tex:7", "GRMC / RMSE = 0.912"), ("paper/main.tex:7", "GRMC / Acc. (%) = 95.1%"),
                     ("paper/main.tex:8", "Baseline / RMSE = 0.951")]


def tiny_pdf(lines: list[str]) -> bytes:
    """A one-page PDF whose text is ``lines`` (Helvetica, one line each), written by hand."""
    def escape(text: str) -> str:
        return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    content = "BT /F1 11 Tf 14 TL 72 720 Td " + " ".join(f"({escape(line)}) '" for line in lines) + " ET"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        "/Resources << /Font << /F1 5 0 R >> >> >>",
        f"<< /Length {len(content)} >>\nstream\n{content}\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "grmc"
    (root / "docs").mkdir(parents=True)
    (root / "train.py").write_text(CLICK_SCRIPT)
    (root / "docs" / "results.rst").write_text(RST)
    (root / "requirements.txt").write_text("click==8.1.7\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-gpg-sign", "-m", "published")
    return root


def test_rra_init_reads_click_options_rst_tables_and_the_paper(repo: Path, tmp_path: Path) -> None:
    paper = tmp_path / "paper.tex"
    paper.write_text(TEX)
    done = rra("init", str(repo), "-o", str(tmp_path / "art"), "--paper", str(paper))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "  option           --rank: int = 10  [train.py:5]" in out
    assert ("  claim-candidate  GRMC / RMSE = 0.912  [docs/results.rst:7]  (a number in a reStructuredText table; "
            "claim grmc-rmse)") in out
    assert "  claim-candidate  GRMC / RMSE = 0.912  [paper.tex:7]  (a number in a LaTeX tabular; claim grmc-rmse-2)" in out
    draft = (tmp_path / "art" / "rra.yaml").read_text()
    assert '"{rank}"' in draft or "{rank}" in draft


def test_paper_pdf(repo: Path, tmp_path: Path) -> None:
    paper = tmp_path / "paper.pdf"
    paper.write_bytes(tiny_pdf(["4 Experiments", "Table 2: Held-out RMSE.", "Method RMSE MAE",
                                "GRMC 0.912 0.71", "Baseline 0.951 0.74"]))
    done = rra("init", str(repo), "-o", str(tmp_path / "art"), "--paper", str(paper))
    assert done.returncode == 0, done.stderr
    # A line of numbers is not one number: printed, not written as a claim.
    assert ("  claim-candidate  Table 2: GRMC 0.912 0.71  [paper.pdf page 1]  (numbers in a table of the paper "
            "(PDF text; check the columns); not written: not one number)") in done.stdout
    assert "Table 2: 4 Experiments" not in done.stdout and "Method RMSE MAE" not in done.stdout


def test_paper_of_another_kind_is_refused(repo: Path, tmp_path: Path) -> None:
    paper = tmp_path / "paper.docx"
    paper.write_bytes(b"PK")
    done = rra("init", str(repo), "-o", str(tmp_path / "art"), "--paper", str(paper))
    assert (done.returncode, done.stderr) == (2, f"error: --paper {paper}: not a Markdown (.md), LaTeX (.tex) or "
                                                 "PDF (.pdf) file\n")
    assert not (tmp_path / "art").exists()


def test_pdf_without_the_extra_names_it(repo: Path, tmp_path: Path) -> None:
    paper = tmp_path / "paper.pdf"
    paper.write_bytes(tiny_pdf(["Table 1: x", "GRMC 0.912"]))
    shim = tmp_path / "shim" / "pdfminer"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ModuleNotFoundError(f'No module named {__name__!r}', name=__name__)\n")
    done = rra("init", str(repo), "-o", str(tmp_path / "art"), "--paper", str(paper),
               env={"PYTHONPATH": os.pathsep.join(p for p in (str(shim.parent), os.environ.get("PYTHONPATH", "")) if p)})
    assert (done.returncode, done.stderr) == (2, "error: this command needs the optional extra 'paper' ('pdfminer' "
                                                 "cannot be imported); install it with: pip install "
                                                 "'rra-tools[paper]'\n")
    assert not (tmp_path / "art").exists()
