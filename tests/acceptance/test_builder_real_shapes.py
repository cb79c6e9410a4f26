"""``rra init`` on fixtures shaped like the real repositories of issue 24's corpus
(docs/builder-corpus.md): each ``tests/fixtures/repos/real-*`` repository has the layout, kinds of
files, way of writing results and absence of guards or requirement files of one real repository,
in code and text of its own. The tests run the real CLI on a git copy of each (a plain copy for
the plain archive) and check what the draft gets right. The gaps first marked
``xfail(strict=True)`` (README install commands and ``-m`` modules, a console script's ``--seed``,
claims from a CSV the code writes) were built while the corpus was run; none is left.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any


from rra_tools.io.read.source import parse_document
from tests.builder_repos import REPOS, make_repo
from tests.rra_cli import rra


def _init(repo: Path, *args: str) -> str:
    done = rra("init", str(repo), *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _manifest(repo: Path) -> dict[str, Any]:
    data: dict[str, Any] = parse_document((repo / "rra.yaml").read_text()).data
    return data


def _launchers(data: dict[str, Any]) -> dict[str, list[str]]:
    return {launcher["id"]: launcher["argv"] for launcher in data["launchers"]}


def _outputs(data: dict[str, Any]) -> dict[str, list[tuple[str, str]]]:
    return {launcher["id"]: [(o["path"], o["format"]) for o in launcher.get("outputs", [])]
            for launcher in data["launchers"]}


def _line(out: str, *parts: str) -> str:
    """The printed line that holds every one of ``parts``."""
    found = [line for line in out.splitlines() if all(part in line for part in parts)]
    assert found, f"no line holds {parts!r} in:\n{out}"
    return found[0]


def _requirements(repo: Path) -> list[str]:
    """The requirement lines of the drafted requirements.in, without comments."""
    lines = (repo / "requirements.in").read_text().splitlines()
    return [line.split("#")[0].strip() for line in lines if line.split("#")[0].strip()]


def _todo(value: object) -> bool:
    return isinstance(value, str) and value.startswith("TODO")


# -- scripts without a __main__ guard whose results are only figures (pca-figures) ------------


def test_unguarded_figure_scripts_are_launchers(tmp_path: Path) -> None:
    repo = make_repo("real-unguarded-figures", tmp_path)
    out = _init(repo)
    data = _manifest(repo)
    assert _launchers(data) == {"fig_grid": ["python", "fig_grid.py"], "fig_sphere": ["python", "fig_sphere.py"]}
    # helpers.py is imported by fig_grid.py: a module, not a launcher.
    _line(out, "fig_sphere.py has no __main__ guard")
    # savefig writes a file; a figure only shown (plt.show) writes none, and nothing is invented.
    assert _outputs(data) == {"fig_grid": [("fig_grid.png", "binary")], "fig_sphere": []}
    _line(out, "numpy>=1.26", "[pyproject.toml:")
    assert data["environment"]["interpreter"]["version"] == "3.10"
    assert data["claims"] == []


# -- no requirements file: versions in the README, BibTeX, scripts under src/ (mapreduce-figures)


def test_readme_versions_and_citation_without_requirements_file(tmp_path: Path) -> None:
    repo = make_repo("real-no-requirements", tmp_path)
    out = _init(repo)
    data = _manifest(repo)
    assert data["paper"]["title"] == "Cooperative Offloading of Sensor Tasks over Shared Radio Links"
    assert [a["name"] for a in data["paper"]["authors"]] == ["Lena Marsh", "Tomas Okoro"]
    assert data["code"]["license"] == "MIT"
    assert data["environment"]["interpreter"]["version"] == "3.6.9"
    assert _requirements(repo) == ["NumPy==1.16.2", "SciPy==1.2.1", "matplotlib==3.0.3"]
    assert _launchers(data) == {"fig_energy": ["python", "src/fig_energy.py"],
                                "fig_outage": ["python", "src/fig_outage.py"]}
    assert _outputs(data) == {"fig_energy": [("energy.pdf", "binary")], "fig_outage": [("outage.pdf", "binary")]}
    _line(out, "readme-command", "python3 -O fig_energy.py", "[README.md:32]")


# -- conda only: an explicit conda export with build strings (streaming-fl-conda) ---------------


def test_explicit_conda_export_is_translated(tmp_path: Path) -> None:
    repo = make_repo("real-conda-export", tmp_path)
    out = _init(repo)
    data = _manifest(repo)
    assert data["environment"]["interpreter"]["version"] == "3.11.9"
    # Build strings are dropped, the version kept; conda-only packages are comments, not requirements.
    assert _requirements(repo) == ["matplotlib==3.8.4.*", "numpy==1.26.4.*", "scipy==1.13.0.*"]
    assert "#   mkl=2023.1.0=h213fc3f_46344 (environment.yml:12)" in (repo / "requirements.in").read_text()
    assert _launchers(data) == {"main": ["python", "main.py"], "plot_paper": ["python", "plot_paper.py"]}
    # pickle.dump into results/ under a name made at run time: the directory is the output.
    assert _outputs(data) == {"main": [("results", "directory")], "plot_paper": [("plot/losses.pdf", "binary")]}
    _line(out, "readme-command", "python plot_paper.py")


# -- results written to CSV, software listed only in the README (unbiased-csv) ----------------


def test_csv_output_and_readme_requirements(tmp_path: Path) -> None:
    repo = make_repo("real-csv-results", tmp_path)
    _init(repo)
    data = _manifest(repo)
    assert _launchers(data) == {"experiments": ["python", "experiments.py"]}
    assert _outputs(data) == {"experiments": [("data/results.csv", "csv")]}
    assert _requirements(repo) == ["NumPy==1.23.1", "Pandas==1.4.3"]
    assert data["environment"]["interpreter"]["version"] == "3.10.4"


def test_a_csv_whose_columns_are_made_at_run_time_is_a_claim_question(tmp_path: Path) -> None:
    # The rows are dicts updated from the estimators' names at run time: no column can be read
    # statically, so no candidate is guessed; the build's claim step asks about the file.
    repo = make_repo("real-csv-results", tmp_path)
    out = _init(repo)
    assert "experiments.py:27" in _line(out, "claim-question", "data/results.csv", "made at run time")
    assert not any("claim-candidate" in line and "results.csv" in line for line in out.splitlines())


# -- console scripts of a setup.py package, conda file, BibTeX with DOI (triplet-console) -----


def test_console_scripts_are_launchers(tmp_path: Path) -> None:
    repo = make_repo("real-console-scripts", tmp_path)
    _init(repo)
    data = _manifest(repo)
    launchers = _launchers(data)
    assert {name: launchers[name] for name in ("simulate", "plot-results", "fetch-data")} == {
        # simulate's module has no __main__ guard; its click options are read all the same.
        "simulate": ["simulate", "--dimension", "{dimension}", "--seed", "{seed}", "--output", "{output}"],
        "plot-results": ["plot-results"], "fetch-data": ["fetch-data"]}
    assert data["paper"]["title"] == "Counting Latent Dimensions from Odd-One-Out Judgements"
    assert data["paper"]["doi"] == "10.5555/jps.11.2.3"
    assert data["environment"]["interpreter"]["version"] == "3.8.12"
    requirements = _requirements(repo)
    assert requirements[:4] == ["numpy==1.21.2.*", "pandas==1.3.4.*", "torch==1.8.1.*", "click==8.0.3"]
    assert "matplotlib" in requirements  # imported by plot.py, named by no file
    assert not any(r.startswith("cudatoolkit") for r in requirements)


def test_install_command_is_not_a_launcher(tmp_path: Path) -> None:
    repo = make_repo("real-console-scripts", tmp_path)
    _init(repo)
    assert ["python", "setup.py", "develop"] not in _launchers(_manifest(repo)).values()


def test_console_script_seed_option_is_read(tmp_path: Path) -> None:
    repo = make_repo("real-console-scripts", tmp_path)
    _init(repo)
    [simulate] = [launcher for launcher in _manifest(repo)["launchers"] if launcher["id"] == "simulate"]
    # The click --seed (default 0) becomes the launcher's seed: a stochastic launcher (the
    # schema's default), its seed passed as {seed}.
    assert "stochastic" not in simulate and simulate["seeds"] == [0]
    assert simulate["parameters"]["dimension"] == {"type": "int", "default": 2}


# -- requirements in a subfolder, figures shown, a replication's article tooling (smyth-rescience)


def test_subfolder_script_and_imports(tmp_path: Path) -> None:
    repo = make_repo("real-subfolder-requirements", tmp_path)
    out = _init(repo)
    data = _manifest(repo)
    assert _launchers(data)["main"] == ["python", "code/main.py"]
    assert _outputs(data)["main"] == []  # its figures are only shown
    assert data["code"]["license"] == "MIT"
    assert data["paper"]["doi"] == "10.5281/zenodo.1234567"
    assert data["environment"]["interpreter"]["version"] == "3.8.1"
    # code/requirements.txt, the one folder declaring requirements, gives the authors' pins
    # (the imports gave the names only, without them).
    assert _requirements(repo) == ["numpy==1.18.1", "scipy==1.4", "matplotlib==3.1.3"]
    _line(out, "requirement", "numpy==1.18.1", "[code/requirements.txt:1]")


def test_requirements_of_several_folders_are_not_chosen_between(tmp_path: Path) -> None:
    repo = make_repo("real-subfolder-requirements", tmp_path)
    # A docs folder's requirements build the docs: never the run's. A second code folder makes
    # the choice the author's: both are reported, and the imports give the names.
    (repo / "docs").mkdir()
    (repo / "docs" / "requirements.txt").write_text("sphinx==7.2\n")
    (repo / "baseline").mkdir()
    (repo / "baseline" / "requirements.txt").write_text("numpy==1.26.4\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.name=a", "-c", "user.email=a@a", "commit", "-qm", "more"], cwd=repo,
                   check=True)
    out = _init(repo)
    assert _requirements(repo) == ["numpy", "matplotlib"]
    _line(out, "baseline/requirements.txt", "not used: 2 folders declare requirements (baseline, code)")
    _line(out, "code/requirements.txt", "not used: 2 folders declare requirements (baseline, code)")
    assert "sphinx" not in out


# -- a plain archive without .git (sigcor-archive) --------------------------------------------


def test_plain_archive_is_read_without_git(tmp_path: Path) -> None:
    repo = tmp_path / "real-plain-archive"
    shutil.copytree(REPOS / "real-plain-archive", repo)
    out = _init(repo)
    data = _manifest(repo)
    assert data["paper"]["doi"] == "10.5281/zenodo.7654321"
    assert data["environment"]["interpreter"]["version"] == "3.10"
    assert _requirements(repo) == ["jupyter>=1.1", "numpy>=1.26", "matplotlib>=3.5"]
    # No git: the upstream is asked for, and no script is invented (a notebook is not a launcher).
    assert _todo(data["code"]["upstream"]["url"]) and "--upstream" in data["code"]["upstream"]["url"]
    assert [_todo(word) for word in data["launchers"][0]["argv"]] == [True]
    _line(out, "a plain directory")


def test_plain_archive_takes_upstream_option(tmp_path: Path) -> None:
    repo = tmp_path / "real-plain-archive"
    shutil.copytree(REPOS / "real-plain-archive", repo)
    _init(repo, "--upstream", "https://zenodo.org/records/7654321@" + "ab" * 20)
    assert _manifest(repo)["code"]["upstream"] == {"url": "https://zenodo.org/records/7654321", "commit": "ab" * 20}


# -- results printed to stdout, data shipped, no requirements file (weak-signals-stdout) -------


def test_printed_results_and_imported_requirements(tmp_path: Path) -> None:
    repo = make_repo("real-stdout-no-requirements", tmp_path)
    out = _init(repo)
    data = _manifest(repo)
    assert _launchers(data) == {"run_synthetic_experiments": ["python", "run_synthetic_experiments.py"],
                                "run_real_experiments": ["python", "run_real_experiments.py"]}
    assert _requirements(repo) == ["numpy"]
    assert data["environment"]["interpreter"]["version"] == "3.8"
    _line(out, "claim-candidate", "Test accuracy", "[run_synthetic_experiments.py:18]")
    _line(out, "claim-candidate", "Test accuracy", "[run_real_experiments.py:14]")


# -- a notebook only, with requirements.txt and an arXiv link (circulant-notebook) -------------


def test_notebook_only_repository(tmp_path: Path) -> None:
    repo = make_repo("real-notebook-only", tmp_path)
    out = _init(repo)
    data = _manifest(repo)
    assert data["paper"]["arxiv"] == "2402.05555"
    _line(out, "jupyter==1.0.0", "[requirements.txt:3]")
    # Nothing runs the notebook: its command is left for the author, not guessed.
    assert [_todo(word) for word in data["launchers"][0]["argv"]] == [True]


def test_readme_module_command_is_not_a_missing_script(tmp_path: Path) -> None:
    repo = make_repo("real-notebook-only", tmp_path)
    out = _init(repo)
    assert "venv.py" not in out
