"""``rra init RAW_REPO`` on fixture repositories shaped like real research code: each item found is
printed with its file:line, the draft validates with only the placeholders left for the author
(listed exactly here), and nothing is ever overwritten."""

from __future__ import annotations

import json
from pathlib import Path

from rra_tools.io.read.source import parse_document
from tests.builder_repos import git, make_repo
from tests.rra_cli import rra


def _validate(target: Path) -> list[tuple[str, str]]:
    done = rra("validate", "-f", "json", str(target))
    [result] = json.loads(done.stdout)["results"]
    return sorted((d["code"], d["pointer"]) for d in result["diagnostics"])


def _init(*args: str) -> str:
    done = rra("init", *args)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout


def test_plain_scripts_upstream_license_and_paper(tmp_path: Path) -> None:
    repo = make_repo("plain-scripts", tmp_path)
    commit = git(repo, "rev-parse", "HEAD").strip()
    out = _init(str(repo))
    for line in (
        "  paper.title      Sparse Kernel Regression at Scale  [CITATION.cff:9]",
        "  paper.authors    Ada Okafor, Bo Lindqvist  [CITATION.cff:11]",
        "  paper.year       2024  [CITATION.cff:17]",
        "  paper.doi        10.5555/tmlr.2024.0042  [CITATION.cff:18]",
        "  paper.arxiv      2403.01234  [README.md:3]",
        "  license          BSD-3-Clause  [LICENSE:5]",
        "  upstream.url     https://example.org/lab/plain-scripts.git  [git]  (remote origin)",
        f"  upstream.commit  {commit}  [git]  (HEAD)",
    ):
        assert line + "\n" in out, out
    data = parse_document((repo / "rra.yaml").read_text()).data
    assert data["code"]["upstream"] == {"url": "https://example.org/lab/plain-scripts.git", "commit": commit}
    assert data["code"]["license"] == "BSD-3-Clause"
    assert data["paper"]["authors"][0] == {"name": "Ada Okafor", "orcid": "0000-0002-1825-0097"}
    assert (data["paper"]["arxiv"], data["paper"]["citation_file"]) == ("2403.01234", "CITATION.cff")
    # A second fixture copy has the same commit: the fixture's git history is deterministic.
    again = make_repo("plain-scripts", tmp_path / "again")
    assert git(again, "rev-parse", "HEAD").strip() == commit


def test_upstream_option_and_output_directory(tmp_path: Path) -> None:
    repo = make_repo("plain-scripts", tmp_path, remote=None)
    pin = "https://example.org/fork/skr.git@" + "ab" * 20
    out = _init(str(repo), "-o", str(tmp_path / "artifact"), "--upstream", pin)
    assert f"  upstream         https://example.org/fork/skr.git @ {'ab' * 20}  [--upstream]\n" in out
    data = parse_document((tmp_path / "artifact" / "rra.yaml").read_text()).data
    assert data["code"] == {"license": "BSD-3-Clause",
                            "upstream": {"url": "https://example.org/fork/skr.git", "commit": "ab" * 20}}
    assert not (repo / "rra.yaml").exists()


def test_no_remote_is_a_placeholder(tmp_path: Path) -> None:
    repo = make_repo("plain-scripts", tmp_path, remote=None)
    out = _init(str(repo))
    assert "  /code/upstream/url\n" in out
    assert ("RRA214", "/code/upstream/url") in _validate(repo)


def test_bad_upstream_option_and_never_overwrite(tmp_path: Path) -> None:
    repo = make_repo("plain-scripts", tmp_path)
    done = rra("init", str(repo), "--upstream", "https://example.org/x.git@main")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("error: --upstream 'https://example.org/x.git@main' is not URL@COMMIT with a full 40-hex "
                           "commit\nhint: e.g. --upstream https://github.com/org/repo@<40-hex commit>; "
                           "'git rev-parse HEAD' prints the commit\n")
    (repo / "rra.yaml").write_text("keep me\n")
    done = rra("init", str(repo))
    assert (done.returncode, done.stderr) == (2, f"error: {repo / 'rra.yaml'} already exists; nothing was written\n")
    assert (repo / "rra.yaml").read_text() == "keep me\n"
    assert not [p for p in repo.iterdir() if p.name.startswith(".rra.yaml.")]


def test_a_directory_without_git_gets_the_template(tmp_path: Path) -> None:
    out = _init(str(tmp_path / "new"))
    assert out.startswith(f"wrote {tmp_path / 'new' / 'rra.yaml'}; fill in the TODOs")
    assert "found:" not in out


def _found(out: str, *lines: str) -> None:
    for line in lines:
        assert line + "\n" in out, f"{line!r} not in:\n{out}"


def _drafted_claims(*todos: str) -> list[tuple[str, str]]:
    """What rra validate reports about each drafted claim: its TODOs (always the description and
    the paper's table; ``todos[i]`` names the others of claim i, space-separated) and one
    reference observation (the authors' value) where three are needed."""
    found = []
    for i, more in enumerate(todos):
        for field in ("description", "paper_location/table", *more.split()):
            found.append(("RRA214", f"/claims/{i}/{field}"))
        found.append(("RRA502", f"/claims/{i}/reference/observations"))
    return found


def _draft(name: str, tmp_path: Path) -> tuple[Path, str, dict[str, object]]:
    repo = make_repo(name, tmp_path)
    out = _init(str(repo))
    return repo, out, parse_document((repo / "rra.yaml").read_text()).data


def test_plain_scripts_environment_launcher_and_candidates(tmp_path: Path) -> None:
    repo, out, data = _draft("plain-scripts", tmp_path)
    _found(out,
           "  requirement      numpy>=1.24,<2  [requirements.txt:2]",
           "  launcher         train: python train.py --seed {seed} --lam {lam} --n {n}  [README.md:9]  "
           "(from README.md:9: the README's command for train.py)",
           "  option           --seed: int = 0  [README.md:9]  (the README's seed; train.py:10 declares --seed with "
           "default 0)",
           "  option           --lam: float = 0.1  [README.md:9]  (the README's value; train.py:11 declares --lam with "
           "default 0.1)",
           "  option           --n: int = 200  [train.py:12]  (not passed by the README: its default)",
           "  launcher train: the command README.md:9 shows for train.py (prose may be out of date: the build's "
           "execute step shows whether it runs)",
           "candidate claims (written as claims with TODOs to confirm, or printed only):",
           "  claim-candidate  housing / RMSE = 0.82  [README.md:16]  (a number in a results table; claim housing-rmse)",
           r"  claim-candidate  stdout regex RMSE:\s*([-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?)  [train.py:17]  "
           "(printed metric 'RMSE'; claim housing-rmse)",
           "  claim housing-mae: launcher train (the only launcher: no print call of the metric names one), metric "
           "direction 'lower' (its name says lower is better)",
           "  claim housing-rmse: extraction left as TODO: the print of 'RMSE' (train.py:17) would read every row of "
           "column 'RMSE' (README.md:17 and this one), and its script or launcher does not name this row alone, "
           "metric direction 'lower' (its name says lower is better)",
           "  launcher train seeds [0]: the README's --seed (README.md:9); a full reproduction usually runs several")
    assert data["launchers"] == [{
        "id": "train", "description": "TODO: what train.py computes",
        "argv": ["python", "train.py", "--seed", "{seed}", "--lam", "{lam}", "--n", "{n}"], "seeds": [0],
        "parameters": {"lam": {"type": "float", "default": 0.1}, "n": {"type": "int", "default": 200}},
        "resources": {"timeout_s": 3600, "expected_runtime_s": 600}}]
    # requirements.txt is where 'rra lock' reads it: no second file.
    assert not (repo / "requirements.in").exists()
    # The table's RMSE is the value the authors report (their observation). train.py prints one
    # RMSE, which cannot be both the housing row's and the energy row's: which row it is, is a TODO
    # of each (one extraction for every row would let one run 'reproduce' them all).
    assert [claim["id"] for claim in data["claims"]] == [  # type: ignore[attr-defined]
        "housing-rmse", "housing-mae", "energy-rmse", "energy-mae"]
    assert data["claims"][0] == {  # type: ignore[index]
        "id": "housing-rmse",
        "description": "TODO: confirm the candidate claim 'housing / RMSE = 0.82' (README.md:16, a number in a "
                       "results table), or remove this claim",
        "paper_location": {"table": "TODO: the paper's table that prints it (README.md:16 shows it)",
                           "row": "housing", "column": "RMSE"},
        "launcher": "train",
        "metric": {"name": "RMSE", "unit": "", "direction": "lower"},
        "extract": {"stream": "stdout", "regex": {"pattern": (
            "TODO: the print at train.py:17 shows one value for 2 rows of this column; which row it is is not "
            "known: a regular expression whose group 1 captures this row's value, e.g. RMSE: ([-+]?[0-9.]+)")}},
        "reported": {"value": 0.82, "precision": 2},
        "reference": {"observations": [{
            "value": 0.82, "seed": 0,
            "fingerprint": {"hardware": "not reported by the authors", "software": "not reported by the authors"},
            "provenance": {"by": "the authors (README.md:16)", "code": "raw", "machine": "the authors' machine"}}]}}
    # No print call shows the MAE: how to read it is a TODO too.
    assert data["claims"][1]["extract"] == {"stream": "stdout", "regex": {  # type: ignore[index]
        "pattern": "TODO: a regular expression whose group 1 captures the value, e.g. RMSE: ([-+]?[0-9.]+)"}}
    assert _validate(repo) == sorted([("RRA214", "/launchers/0/description"), ("RRA404", "/environment"),
                                      *_drafted_claims(*["extract/regex/pattern"] * 4)])


def test_mlproject_with_a_conda_file(tmp_path: Path) -> None:
    repo, out, data = _draft("mlproject-conda", tmp_path)
    _found(out,
           "  conda_env        conda.yaml  [MLproject:3]",
           "  python           3.10  [conda.yaml:6]  (conda pin)",
           "  requirement      torch==2.1.0.*  [conda.yaml:7]",
           "  requirement      mlflow==2.9.2  [conda.yaml:13]",
           "  parameter        main.lr: float = 0.05  [MLproject:9]",
           "  parameter        evaluate.checkpoint: path, no default  [MLproject:15]",
           "  launcher         main: python train.py --epochs {epochs} --lr {lr} --data-dir {data_dir} --arch {arch}"
           "  [MLproject:12]",
           "  discrepancy      lr: 0.05 vs 0.1  [MLproject:9]  (train.py:9 disagrees; recorded as a discrepancy stub, "
           "not resolved)",
           "not translated from conda.yaml (no pip package):\n  cudatoolkit=11.8 (conda.yaml:9)",
           f"wrote {repo / 'requirements.in'} from conda.yaml for 'rra lock'")
    main, evaluate = data["launchers"]  # type: ignore[misc]
    assert main["parameters"]["lr"] == {"type": "float", "default": 0.05}
    assert evaluate["parameters"]["checkpoint"]["type"] == "path"
    assert data["environment"] == {"interpreter": {"version": "3.10"}}
    [stub] = data["discrepancies"]  # type: ignore[misc]
    assert stub["code_does"] == ("MLproject:9 gives parameter 'lr' the default 0.05; train.py:9 gives --lr the "
                                 "default 0.1")
    assert (repo / "requirements.in").read_text().splitlines()[2:] == [
        "#   cudatoolkit=11.8 (conda.yaml:9)", "torch==2.1.0.*", "torchvision==0.16.0.*", "numpy==1.26.*",
        "mlflow==2.9.2", "tqdm>=4.66"]
    assert _validate(repo) == [
        ("RRA214", "/discrepancies/0/impact"), ("RRA214", "/discrepancies/0/paper_says"),
        ("RRA214", "/discrepancies/0/rationale"), ("RRA214", "/launchers/1/parameters/checkpoint/default"),
        ("RRA214", "/paper/authors/0/name"), ("RRA214", "/paper/title"), ("RRA404", "/environment")]


def test_dvc_pipeline(tmp_path: Path) -> None:
    repo, out, data = _draft("dvc-pipeline", tmp_path)
    _found(out,
           "  python           3.11.7  [.python-version:1]",
           "  license          Apache-2.0  [LICENSE:2]",
           "  param            prepare: prepare.seed = 20170428  [params.yaml:8]",
           "  deps             src/train.py, data/prepared/train.csv  [dvc.yaml:26]  (stage train)",
           "  metrics          eval/metrics.json  [dvc.yaml:39]  (stage evaluate)",
           "  launcher         train: python src/train.py data/prepared/train.csv model.pkl  [dvc.yaml:24]",
           "  launcher generate stochastic: false: dvc stage 'generate' reads a fixed seed from params.yaml "
           "(generate.seed = 20170428, params.yaml:2); change it there to draw another sample; the random calls of "
           "src/generate.py are seeded from a value the program computes (random.Random(params['seed']) at "
           "src/generate.py:18), not from a seed rra passes",
           "  random-seeded    random.Random(params['seed'])  [src/generate.py:18]  (launcher generate; the seed is "
           "computed, not a constant)",
           # What the stage's script calls says why passing it no seed is right: it draws nothing.
           "  launcher train stochastic: false: dvc stage 'train' passes it no seed; no random calls found in "
           "src/train.py")
    # depends_on from outs to deps, a dep inside a directory another stage writes included.
    assert [(launcher["id"], launcher.get("depends_on"), launcher["outputs"])  # type: ignore[index]
            for launcher in data["launchers"]] == [  # type: ignore[attr-defined]
        ("generate", None, [{"id": "raw", "path": "data/raw.csv", "format": "csv"}]),
        ("prepare", ["generate"], [{"id": "prepared", "path": "data/prepared", "format": "directory"}]),
        ("train", ["prepare"], [{"id": "model", "path": "model.pkl", "format": "binary"}]),
        ("evaluate", ["prepare", "train"], [{"id": "metrics", "path": "eval/metrics.json", "format": "json"}])]
    # The README's three numbers, drafted as claims of the last stage; no print call reads them.
    assert [(c["id"], c["launcher"], c["metric"]["name"], c["reported"]) for c in data["claims"]] == [  # type: ignore
        ("ridge-0-01-rmse", "evaluate", "RMSE", {"value": 0.115, "precision": 3}),
        ("ridge-0-01-mae", "evaluate", "MAE", {"value": 0.092, "precision": 3}),
        ("ridge-0-01-r2", "evaluate", "R²", {"value": 0.998, "precision": 3})]
    todo = "extract/regex/pattern"
    assert _validate(repo) == sorted([("RRA214", "/paper/authors/0/name"), ("RRA214", "/paper/title"),
                                      ("RRA404", "/environment"), *_drafted_claims(todo, todo, todo)])


def test_dvc_stages_in_any_order(tmp_path: Path) -> None:
    # dvc orders stages by their deps and outs, not by where dvc.yaml writes them: neither does rra init.
    repo = make_repo("dvc-pipeline", tmp_path)
    text = (repo / "dvc.yaml").read_text()
    head, evaluate = text.split("  evaluate:\n")
    (repo / "dvc.yaml").write_text("stages:\n  evaluate:\n" + evaluate + head.removeprefix("stages:\n"))
    _init(str(repo))
    data = parse_document((repo / "rra.yaml").read_text()).data
    assert [(launcher["id"], launcher.get("depends_on")) for launcher in data["launchers"]] == [
        ("evaluate", ["prepare", "train"]), ("generate", None), ("prepare", ["generate"]), ("train", ["prepare"])]


def test_setup_py_package_with_a_console_script_and_a_results_table(tmp_path: Path) -> None:
    repo, out, data = _draft("setup-package", tmp_path)
    _found(out,
           "  requirement      networkx==3.1  [setup.py:16]",
           "  python           3.9  [setup.py:12]  (lower bound of '>=3.9': the oldest allowed, not necessarily the "
           "one the authors ran)",
           "  launcher         graphreg-train: graphreg-train --dataset {dataset} --rank {rank} --gamma {gamma} "
           "--seed {seed}  [setup.py:20]  (console script graphreg-train = graphreg.cli:main)",
           "  claim-candidate  graphreg / Douban = 0.734  [docs/README.md:10]  (a number in a results table; claim "
           "graphreg-douban)",
           r"  claim-candidate  stdout regex test RMSE =\s*([-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?)  [graphreg/cli.py:13]  "
           "(printed metric 'test RMSE'; not written: no reported value)",
           f"wrote {repo / 'requirements.in'} from setup.py for 'rra lock'")
    [launcher] = data["launchers"]  # type: ignore[misc]
    assert launcher["parameters"]["dataset"] == {"type": "str", "default": "movielens-100k",
                                                 "choices": ["movielens-100k", "douban"]}
    assert (repo / "requirements.in").read_text().splitlines()[1:] == ["numpy>=1.22", "scipy>=1.8", "networkx==3.1"]
    # No CITATION.cff: the paper comes from codemeta.json's referencePublication and authors.
    _found(out, "  paper.title      Graph-Regularised Matrix Completion for Sparse Ratings  [codemeta.json:12]",
           "  paper.doi        10.1234/grmc.2023.17  [codemeta.json:13]")
    assert data["paper"] == {"title": "Graph-Regularised Matrix Completion for Sparse Ratings",
                             "authors": [{"name": "Mei Tanaka", "orcid": "0000-0001-5109-3700"}, {"name": "Jonas Berg"}],
                             "year": 2023, "doi": "10.1234/grmc.2023.17", "arxiv": "2301.04567v2"}
    # The columns are data sets: the metric's name is a TODO too.
    assert data["claims"][3]["metric"] == {  # type: ignore[index]
        "name": "TODO: the metric of column 'Douban'", "unit": "", "direction": "higher"}
    todos = "metric/name extract/regex/pattern"
    assert _validate(repo) == sorted([("RRA404", "/environment"), *_drafted_claims(todos, todos, todos, todos)])


def test_setup_py_is_never_executed(tmp_path: Path) -> None:
    repo = make_repo("setup-package", tmp_path)
    (repo / "setup.py").write_text("import pathlib\npathlib.Path('EXECUTED').write_text('x')\n"
                                   + (repo / "setup.py").read_text())
    commit = git(repo, "rev-parse", "HEAD").strip()
    out = _init(str(repo))
    # The draft says that the commit does not hold what it read.
    _found(out, f"  upstream.commit  {commit}  [git]  (HEAD; tracked files have uncommitted changes, which this "
                "commit does not hold)")
    assert not (repo / "EXECUTED").exists() and not (tmp_path / "EXECUTED").exists()


def test_readme_commands_apt_packages_and_the_base_image_are_reported(tmp_path: Path) -> None:
    _, out, _ = _draft("plain-scripts", tmp_path)
    _found(out, "  readme-command   python train.py --seed 0 --lam 0.1  [README.md:9]  (a command the README shows; "
                "compare it with the launchers)")
    repo, out, data = _draft("dvc-pipeline", tmp_path)
    _found(out, "  system-package   libgomp1  [apt.txt:2]",
           "  base-image       python:3.11-slim  [Dockerfile:1]  (the final stage's base image, pinned by tag only; "
           "environment.image is the built image, pinned by digest after building)")
    assert data["environment"] == {"interpreter": {"version": "3.11.7"},  # type: ignore[comparison-overlap]
                                   "system_packages": [{"name": "libgomp1", "manager": "apt"},
                                                       {"name": "graphviz", "manager": "apt"}]}
    # The later stage builds FROM the first one: the base image is the first stage's.
    _, out, data = _draft("setup-package", tmp_path)
    _found(out, f"  base-image       python:3.11-slim@sha256:{'ab' * 32}  [Dockerfile:1]  (the final stage's base "
                "image, pinned by digest; environment.image is the built image, pinned by digest after building)")
    assert "image" not in data["environment"]  # type: ignore[operator]


def test_candidates_are_printed_with_what_became_of_them(tmp_path: Path) -> None:
    # The table's "Validation accuracy" and the val_accuracy train.py prints are one claim; the
    # other printed numbers have no reported value and are not written (docs/builder.md shows this).
    repo, out, data = _draft("wrong-readme", tmp_path)
    _found(out,
           "candidate claims (written as claims with TODOs to confirm, or printed only):",
           "  claim-candidate  Perceptron / Validation accuracy = 0.92  [README.md:15]  (a number in a results table; "
           "claim perceptron-validation-accuracy)",
           r"  claim-candidate  stdout regex lr=\s*([-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?)  [train.py:41]  (printed metric "
           "'lr'; not written: no reported value)",
           r"  claim-candidate  stdout regex val_accuracy:\s*([-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?)  [train.py:42]  "
           "(printed metric 'val_accuracy'; claim perceptron-validation-accuracy)")
    [claim] = data["claims"]  # type: ignore[misc]
    assert (claim["launcher"], claim["extract"]["regex"]["pattern"]) == (
        "train", r"val_accuracy:\s*([-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?)")
    # The README's command is the launcher, as written: it passes an option train.py does not
    # declare (--num-epochs), so the script's own options are not added to it.
    _found(out, "  launcher         train: python train.py --num-epochs 20  [README.md:8]  (from README.md:8: the "
                "README's command for train.py)")
    assert [launcher["argv"] for launcher in data["launchers"]] == [  # type: ignore[attr-defined]
        ["python", "train.py", "--num-epochs", "20"]]
