"""``rra init`` reads each source issue 12 lists, on tiny repositories written here (real files, a
real git commit, the real command): ``Pipfile``, ``setup.cfg``, ``runtime.txt`` against
``.python-version``, ``pyproject.toml``'s dependencies and ``[project.scripts]`` (whose click
options become the launcher's parameters), and the precedence among them, which is printed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rra_tools.io.read.source import parse_document
from tests.builder_repos import repo_of
from tests.rra_cli import rra


def _init(repo: Path) -> tuple[list[str], dict[str, object]]:
    done = rra("init", str(repo))
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    return done.stdout.splitlines(), parse_document((repo / "rra.yaml").read_text()).data


PIPFILE = """[[source]]
url = "https://pypi.org/simple"

[packages]
numpy = ">=1.24"
scipy = "*"

[dev-packages]
pytest = "*"
"""

SETUP_CFG = """[metadata]
name = tinypkg

[options]
python_requires = >=3.9
install_requires =
    numpy>=1.20
    pandas

[options.entry_points]
console_scripts =
    tiny-train = tinypkg.train:main
"""


def test_pipfile_alone_and_runtime_txt(tmp_path: Path) -> None:
    lines, data = _init(repo_of(tmp_path, {"Pipfile": PIPFILE, "runtime.txt": "python-3.10.2\n"}))
    assert "  requirement      numpy>=1.24  [Pipfile:5]" in lines
    assert "  requirement      scipy  [Pipfile:6]" in lines
    assert "  python           3.10.2  [runtime.txt:1]" in lines
    assert not any(line.startswith("  requirement      pytest") for line in lines)  # [dev-packages]: not the run's
    assert data["environment"] == {"interpreter": {"version": "3.10.2"}}
    # rra lock does not read a Pipfile: the requirements are drafted into requirements.in.
    assert f"wrote {tmp_path / 'raw' / 'requirements.in'} from Pipfile for 'rra lock'" in lines, "\n".join(lines)
    assert (tmp_path / "raw" / "requirements.in").read_text().splitlines()[1:] == ["numpy>=1.24", "scipy"]


def test_setup_cfg_comes_before_a_pipfile_and_python_version_before_runtime_txt(tmp_path: Path) -> None:
    lines, data = _init(repo_of(tmp_path, {"setup.cfg": SETUP_CFG, "Pipfile": PIPFILE, ".python-version": "3.11.4\n",
                                         "runtime.txt": "python-3.10.2\n"}))
    for line in (
        "  requirement      numpy>=1.20  [setup.cfg:7]",
        "  requirement      pandas  [setup.cfg:8]",
        "  requirements     2 packages  [Pipfile]  (not used: setup.cfg comes first in the precedence order)",
        "  requirement-conflict 'numpy>=1.24' vs 'numpy>=1.20'  [Pipfile:5]  (setup.cfg:7 is used)",
        "  python.requires  >=3.9  [setup.cfg:5]",
        "  python           3.11.4  [.python-version:1]",
        "  python           3.10.2  [runtime.txt:1]  (not used: .python-version comes first in the precedence order)",
        "  launcher         tiny-train: tiny-train  [setup.cfg:12]  (console script tiny-train = tinypkg.train:main)",
    ):
        assert line in lines, "\n".join(lines)
    assert data["environment"] == {"interpreter": {"version": "3.11.4"}}
    assert [launcher["argv"] for launcher in data["launchers"]] == [["tiny-train"]]  # type: ignore[attr-defined]


def test_pyproject_dependencies_and_console_scripts_with_click_options(tmp_path: Path) -> None:
    pyproject = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "tinypkg"
version = "0.1"
requires-python = ">=3.10"
dependencies = [
    "numpy>=1.24",
    "click",
]

[project.scripts]
tiny-eval = "tinypkg.cli:main"
"""
    cli = """import click


@click.command()
@click.option("--seed", type=int, default=0)
@click.option("--lr", type=float, default=0.1, help="learning rate")
def main(seed, lr):
    print(f"accuracy: {0.9}")
"""
    readme = "# Tiny\n\n```sh\npip install .\ntiny-eval --seed 1\n```\n"
    lines, data = _init(repo_of(tmp_path, {"pyproject.toml": pyproject, "tinypkg/__init__.py": "",
                                         "tinypkg/cli.py": cli, "README.md": readme}))
    for line in (
        # The README runs the console script: printed beside the launcher (not an install step).
        "  readme-command   tiny-eval --seed 1  [README.md:5]  (a command the README shows; compare it with the "
        "launchers)",
        "  requirement      numpy>=1.24  [pyproject.toml:10]",
        "  python           3.10  [pyproject.toml:8]  (lower bound of '>=3.10': the oldest allowed, not necessarily "
        "the one the authors ran)",
        "  option           --lr: float = 0.1  [tinypkg/cli.py:6]",
        "  launcher         tiny-eval: tiny-eval --seed {seed} --lr {lr}  [pyproject.toml:15]  (console script "
        "tiny-eval = tinypkg.cli:main)",
    ):
        assert line in lines, "\n".join(lines)
    [launcher] = data["launchers"]  # type: ignore[misc]
    assert (launcher["argv"], launcher["seeds"], launcher["parameters"]) == (
        ["tiny-eval", "--seed", "{seed}", "--lr", "{lr}"], [0], {"lr": {"type": "float", "default": 0.1}})
    # pyproject.toml is read by rra lock where it is: no requirements.in.
    assert not (tmp_path / "raw" / "requirements.in").exists()


def test_a_package_main_runs_as_a_module(tmp_path: Path) -> None:
    main = """import argparse

from .core import score

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=3)
    args = parser.parse_args()
    print(f"score: {score(args.n)}")
"""
    repo = repo_of(tmp_path, {"tinypkg/__init__.py": "", "tinypkg/__main__.py": main,
                            "tinypkg/core.py": "def score(n):\n    return n * 0.25\n",
                            "README.md": "| model | score |\n|---|---|\n| tiny | 0.75 |\n"})
    lines, data = _init(repo)
    # 'python tinypkg/__main__.py' would stop at its relative import: it runs as a module.
    assert "  launcher         tinypkg: python -m tinypkg --n {n}  [tinypkg/__main__.py:1]  (a script run as " \
           "__main__)" in lines, "\n".join(lines)
    [launcher] = data["launchers"]  # type: ignore[misc]
    assert launcher["argv"] == ["python", "-m", "tinypkg", "--n", "{n}"]
    # The claim's launcher is the one running the file that prints the metric, not an assumption.
    [claim] = data["claims"]  # type: ignore[misc]
    assert claim["launcher"] == "tinypkg"
    assert not any(line.startswith("  claim tiny-score: launcher") for line in lines)
    done = subprocess.run([sys.executable, "-m", "tinypkg", "--n", "3"], cwd=repo, capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "score: 0.75\n")


def test_arxiv_and_doi_links_of_the_readme(tmp_path: Path) -> None:
    readme = "# Tiny\n\nPaper: https://arxiv.org/abs/2401.01234v2, code of https://doi.org/10.1234/abcd.5678.\n"
    lines, data = _init(repo_of(tmp_path, {"README.md": readme, "run.py": "if __name__ == '__main__':\n    pass\n"}))
    assert "  paper.arxiv      2401.01234v2  [README.md:3]" in lines, "\n".join(lines)
    assert "  paper.doi        10.1234/abcd.5678  [README.md:3]" in lines
    paper = data["paper"]
    assert (paper["arxiv"], paper["doi"]) == ("2401.01234v2", "10.1234/abcd.5678")  # type: ignore[index]


def test_a_declared_license_is_used_where_no_license_text_is_known(tmp_path: Path) -> None:
    run = "if __name__ == '__main__':\n    pass\n"
    cff = "cff-version: 1.2.0\nmessage: cite it\ntitle: Tiny\nauthors:\n  - family-names: Okafor\nlicense: MIT\n"
    lines, data = _init(repo_of(tmp_path / "cff", {"CITATION.cff": cff, "LICENSE": "All rights reversed.\n",
                                                 "run.py": run}))
    assert "  license          unrecognised  [LICENSE:1]  (not one of the well-known license texts; CITATION.cff " \
           "declares MIT)" in lines, "\n".join(lines)
    assert "  license          MIT  [CITATION.cff:6]  (declared in CITATION.cff)" in lines
    assert data["code"]["license"] == "MIT"  # type: ignore[index]
    codemeta = '{"name": "tiny",\n "license": "https://spdx.org/licenses/Apache-2.0"}\n'
    lines, data = _init(repo_of(tmp_path / "codemeta", {"codemeta.json": codemeta, "run.py": run}))
    assert "  license          Apache-2.0  [codemeta.json:2]  (declared in codemeta.json)" in lines
    assert data["code"]["license"] == "Apache-2.0"  # type: ignore[index]
    pyproject = '[project]\nname = "tiny"\nversion = "1"\nlicense = "BSD-3-Clause OR MIT"\n'
    lines, data = _init(repo_of(tmp_path / "pyproject", {"pyproject.toml": pyproject, "run.py": run}))
    assert data["code"]["license"] == "BSD-3-Clause OR MIT"  # type: ignore[index]
    # A license that is not an SPDX expression stays a placeholder.
    lines, data = _init(repo_of(tmp_path / "prose", {"pyproject.toml": pyproject.replace(
        '"BSD-3-Clause OR MIT"', '{text = "see the file LICENSE"}'), "run.py": run}))
    assert data["code"]["license"] == "TODO: SPDX license, e.g. MIT"  # type: ignore[index]


SETUP_PY_36 = """from setuptools import setup
setup(name="oldpkg", version="0.1", python_requires="~=3.6", install_requires=["numpy"])
"""


def test_a_python_version_the_readme_names_comes_before_a_lower_bound(tmp_path: Path) -> None:
    """Issue 24: '~=3.6' became 3.6 although the README said what the authors ran."""
    readme = "# Old package\n\nRequirements\n\nTested with Python 3.7.3 and numpy 1.18 (python3.7/site-packages).\n"
    lines, data = _init(repo_of(tmp_path, {"setup.py": SETUP_PY_36, "README.md": readme}))
    assert "  python           3.7.3  [README.md:5]  (the version the README names)" in lines, lines
    assert any(line.startswith("  python           3.6  [setup.py:2]  (not used: README.md comes first")
               for line in lines), lines
    assert data["environment"]["interpreter"]["version"] == "3.7.3"  # type: ignore[index]


def test_a_lower_bound_older_than_any_installable_python_asks_for_a_decision(tmp_path: Path) -> None:
    lines, _ = _init(repo_of(tmp_path, {"setup.py": SETUP_PY_36}))
    (line,) = [line for line in lines if line.startswith("  python           3.6")]
    assert "older than any interpreter the environment tools install: decide which to lock" in line, line


README_BIBTEX = """# fastfit: code for our paper

Code for [Fast Fitting of Lines](https://arxiv.org/abs/2401.01234).

## Citation

```bibtex
@inproceedings{lovelace2024fast,
  title     = {Fast {Fitting} of Lines},
  author    = {Lovelace, Ada and Alan Turing and Hopper, Grace},
  booktitle = {Proceedings of Something},
  year      = {2024}
}
```
"""


def test_title_and_authors_come_from_the_readmes_citation_block(tmp_path: Path) -> None:
    """Issue 24: the README's citation block was ignored although the arXiv id was found."""
    lines, data = _init(repo_of(tmp_path, {"README.md": README_BIBTEX, "fit.py": "print('rmse', 0.92)\n"}))
    paper = data["paper"]
    assert paper["title"] == "Fast Fitting of Lines" and paper["arxiv"] == "2401.01234", paper  # type: ignore[index]
    assert [a["name"] for a in paper["authors"]] == ["Ada Lovelace", "Alan Turing", "Grace Hopper"]  # type: ignore[index]
    assert any("paper.title" in line and "[README.md:8]" in line for line in lines), lines


def test_without_a_citation_the_readmes_heading_is_offered_not_used(tmp_path: Path) -> None:
    """A heading names the repository as often as the paper: a TODO with the heading offered."""
    lines, data = _init(repo_of(tmp_path, {"README.md": "# Fast Fitting of Lines\n\nSee the paper.\n",
                                         "fit.py": "print('rmse', 0.92)\n"}))
    assert str(data["paper"]["title"]).startswith("TODO")  # type: ignore[index]
    assert any("Fast Fitting of Lines  [README.md:1]  (not used: the README's first heading" in line
               for line in lines), lines
