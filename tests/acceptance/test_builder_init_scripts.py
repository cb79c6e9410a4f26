"""``rra init`` on repositories shaped like most research code (issue 24): scripts without a
``__main__`` guard, commands only in the README, results only in the files a script writes
(a CSV, a JSON object, a figure, a NumPy array). Each is drafted as a launcher with the outputs
its code visibly writes, a candidate claim where a written number can be read back, and a claim
question where none can; every such item is printed with its file:line."""

from __future__ import annotations

import json
from pathlib import Path

from rra_tools.io.read.source import parse_document
from tests.builder_repos import make_repo, repo_of
from tests.rra_cli import rra

RESOURCES = {"timeout_s": 3600, "expected_runtime_s": 600}


def _init(repo: Path) -> tuple[str, dict[str, object]]:
    done = rra("init", str(repo))
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    return done.stdout, parse_document((repo / "rra.yaml").read_text()).data


def _found(out: str, *lines: str) -> None:
    for line in lines:
        assert line + "\n" in out, f"{line!r} not in:\n{out}"


def _validate(target: Path) -> list[tuple[str, str]]:
    done = rra("validate", "-f", "json", str(target))
    [result] = json.loads(done.stdout)["results"]
    return sorted((d["code"], d["pointer"]) for d in result["diagnostics"])


def test_unguarded_scripts_readme_commands_outputs_and_claims(tmp_path: Path) -> None:
    repo = make_repo("unguarded-scripts", tmp_path)
    out, data = _init(repo)
    _found(out,
           # The README runs exp1.py: its command is the launcher (the script has no guard either).
           "  launcher         exp1: python exp1.py  [README.md:9]  (from README.md:9: the README's command for "
           "exp1.py)",
           # exp2.py calls main() at its module level; helpers.py loops at its module level too, but
           # both experiments import it: it is not a script.
           "  launcher         exp2: python exp2.py  [exp2.py:18]  (a script without a __main__ guard: its module "
           "level runs code)",
           "  output           exp1: results.csv (csv)  [exp1.py:11]  (table.to_csv writes it)",
           "  output           exp2: fig2.png (binary)  [exp2.py:13]  (plt.savefig writes it)",
           "  output           exp2: figures/ (directory)  [exp2.py:15]  (plt.savefig writes it (a directory: the "
           "file name is made at run time))",
           "candidate claims (written as claims with TODOs to confirm, or printed only):",
           "  claim-candidate  nearest-mean / accuracy = 0.91  [README.md:14]  (a number in a results table; claim "
           "nearest-mean-accuracy)",
           "  claim-candidate  results.csv csv column accuracy  [exp1.py:11]  (a column of the CSV file table.to_csv "
           "writes; claim nearest-mean-accuracy)",
           "claim questions (rra build's claim step asks them):",
           "  claim-question   results only as a figure fig2.png  [exp2.py:13]  (no claim can be read from it; add "
           "one)",
           "  claim-question   results only as a figure figures/  [exp2.py:15]  (no claim can be read from it; add "
           "one)",
           "  launcher exp1: the command README.md:9 shows for exp1.py (prose may be out of date: the build's "
           "execute step shows whether it runs)",
           "  launcher exp2: exp2.py has no __main__ guard; taken for a script as its module level runs code from "
           "exp2.py:18 and no file of the repository imports it",
           "  claim nearest-mean-accuracy: row_index -1 of results.csv (its last row: which row holds this value is "
           "not known statically, exp1.py:11), metric direction 'higher' (its name does not say lower is better)")
    assert "helpers" not in out.split("candidate claims")[0].replace("helpers.py", "")
    launchers = [{k: v for k, v in launcher.items() if k != "stochastic"}  # type: ignore[union-attr]
                 for launcher in data["launchers"]]  # type: ignore[attr-defined]
    assert launchers == [
        {"id": "exp1", "description": "TODO: what exp1.py computes", "argv": ["python", "exp1.py"],
         "outputs": [{"id": "results", "path": "results.csv", "format": "csv"}], "resources": RESOURCES},
        {"id": "exp2", "argv": ["python", "exp2.py"], "description": "TODO: what exp2.py computes",
         "outputs": [{"id": "fig2", "path": "fig2.png", "format": "binary"},
                     {"id": "figures", "path": "figures", "format": "directory"}], "resources": RESOURCES}]
    # The table's accuracy is read back from the CSV the script writes, by its declared output.
    [claim] = data["claims"]  # type: ignore[misc]
    assert (claim["launcher"], claim["extract"]) == (
        "exp1", {"output": "results", "csv": {"column": "accuracy", "row_index": -1}})
    assert _validate(repo) == sorted([
        ("RRA214", "/claims/0/description"), ("RRA214", "/claims/0/paper_location/table"),
        ("RRA214", "/code/license"), ("RRA214", "/launchers/0/description"), ("RRA214", "/launchers/1/description"),
        ("RRA214", "/paper/authors/0/name"), ("RRA214", "/paper/title"), ("RRA404", "/environment"),
        ("RRA502", "/claims/0/reference/observations")])


README = """# Tiny

```bash
mlflow run .
python -m pkg.run --lr 0.01 --verbose
bash run.sh
python train.py --epochs 3
python evaluate.py | tee eval.log
python missing.py
```
"""

RUN = """import argparse, os, sys
parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.1)
parser.add_argument("--verbose", action="store_true")
parser.add_argument("--out", default="out")
args = parser.parse_args()
with open(os.path.join("logs", args.out + ".txt"), "w") as handle:
    handle.write("done")
with open(sys.argv[0] + ".log", "w") as handle:
    handle.write("x")
"""


def test_readme_commands_beside_a_declared_launcher(tmp_path: Path) -> None:
    repo = repo_of(tmp_path, {
        "README.md": README,
        "MLproject": 'name: tiny\nentry_points:\n  main:\n    command: "python train.py"\n',
        "train.py": 'import json\nprint("training")\njson.dump({"loss": 0.5, "model": "mlp"}, open("metrics.json", '
                    '"w"))\n',
        "evaluate.py": "print('evaluating')\n",
        "pkg/__init__.py": "",
        "pkg/run.py": RUN,
        "run.sh": "#!/bin/sh\npython train.py\n",
    })
    out, data = _init(repo)
    _found(out,
           "  launcher         main: python train.py  [MLproject:4]",
           # MLproject runs train.py: the README's 'python train.py --epochs 3' is not drafted again.
           "  launcher         not drafted: python evaluate.py | tee eval.log  [README.md:8]  (the command needs a "
           "shell (a pipe, a redirection, '&&', a variable or a continued line): write its launcher by hand)",
           "  launcher         not drafted: python missing.py  [README.md:9]  (it runs missing.py, which the "
           "repository does not hold)",
           "  launcher         run: python -m pkg.run --lr {lr} --verbose --out {out}  [README.md:5]  (from "
           "README.md:5: the README's command for pkg/run.py)",
           "  option           --lr: float = 0.01  [README.md:5]  (the README's value; pkg/run.py:3 declares --lr with "
           "default 0.1)",
           "  option           --out: str = 'out'  [pkg/run.py:5]  (not passed by the README: its default)",
           "  launcher         run-2: bash run.sh  [README.md:6]  (from README.md:6: the README's command for run.sh)",
           "  output           main: metrics.json (json)  [train.py:3]  (json.dump writes it)",
           "  output           run: logs/ (directory)  [pkg/run.py:7]  (open writes it (a directory: the file name "
           "is made at run time))",
           "  output           run: not declared  [pkg/run.py:9]  (open writes to a path made at run time: declare it "
           "by hand if a run writes it)",
           # A JSON key whose value is not text is a candidate; with no table cell of its name, it
           # is not written: the build's claim step asks about it.
           "  claim-candidate  metrics.json json /loss  [train.py:3]  (a key of the JSON object json.dump writes; not "
           "written: no reported value)")
    assert "README.md:7" not in out.split("candidate claims")[0].replace("readme-command   python train.py --epochs "
                                                                         "3  [README.md:7]", "")
    launchers = {launcher["id"]: launcher for launcher in data["launchers"]}  # type: ignore[attr-defined]
    assert sorted(launchers) == ["main", "run", "run-2"]
    assert launchers["run"]["argv"] == ["python", "-m", "pkg.run", "--lr", "{lr}", "--verbose", "--out", "{out}"]
    assert launchers["run"]["parameters"] == {"lr": {"type": "float", "default": 0.01},
                                              "out": {"type": "str", "default": "out"}}
    assert launchers["run"]["outputs"] == [{"id": "logs", "path": "logs", "format": "directory"}]
    assert launchers["main"]["outputs"] == [{"id": "metrics", "path": "metrics.json", "format": "json"}]
    assert launchers["run-2"]["argv"] == ["bash", "run.sh"]
    assert "claims" not in data or data["claims"] == []


def test_what_is_not_a_script(tmp_path: Path) -> None:
    repo = repo_of(tmp_path, {
        # Only definitions and constants; set-up calls (a logger, warnings) alone are not work.
        "defs.py": '"""Only definitions."""\nimport logging\nimport warnings\nwarnings.filterwarnings("ignore")\n'
                   'LOG = logging.getLogger(__name__)\nX = 3\n\n\ndef f():\n    return X\n',
        # Module-level work, but imported (relatively) by another module: a helper, not a script.
        "pkg/__init__.py": "",
        "pkg/registry.py": "REGISTRY = {}\nfor name in ('a', 'b'):\n    REGISTRY[name] = len(name)\n",
        "pkg/model.py": "from .registry import REGISTRY\n\n\ndef model():\n    return REGISTRY\n",
        # Tests, docs and examples run code at import; they are not experiments.
        "tests/test_model.py": "from pkg.model import model\nprint(model())\n",
        "examples/demo.py": "print('demo')\n",
        "setup.py": "from setuptools import setup\nsetup(name='p')\n",
        # A script: it prints at its module level, and nothing imports it.
        "run_all.py": "from pkg.model import model\n\nif model():\n    print(f'RMSE: {len(model())}')\n",
    })
    out, data = _init(repo)
    assert [(launcher["id"], launcher["argv"]) for launcher in data["launchers"]] == [  # type: ignore[attr-defined]
        ("run_all", ["python", "run_all.py"])]
    _found(out, "  launcher         run_all: python run_all.py  [run_all.py:4]  (a script without a __main__ guard: its "
                "module level runs code)")
    # The printed metric is a candidate with no reported value, and no number the repository
    # states: the claim step also asks for the claim (the result may be printed another way).
    _found(out, "  claim-question   no stated number: the printed metrics found read no number the repository's "
                "tables or shown outputs state  [.]  (no claim can be read from it; add one)")


def test_results_that_no_claim_can_read_are_questions(tmp_path: Path) -> None:
    repo = repo_of(tmp_path, {
        "simulate.py": "import numpy as np\nimport os\nOUT = 'arrays'\nx = np.linspace(0, 1, 5)\n"
                       "np.save(os.path.join(OUT, 'x.npy'), x)\nnp.savetxt('curve.txt', x)\n"
                       "import pandas as pd\npd.DataFrame(x).to_csv('table.csv')\n",
    })
    out, data = _init(repo)
    _found(out,
           "  output           simulate: arrays/x.npy (binary)  [simulate.py:5]  (np.save writes it)",
           "  output           simulate: curve.txt (text)  [simulate.py:6]  (np.savetxt writes it)",
           "  output           simulate: table.csv (csv)  [simulate.py:8]  (to_csv writes it)",
           "claim questions (rra build's claim step asks them):",
           "  claim-question   results only as a NumPy array arrays/x.npy  [simulate.py:5]  (no claim can be read "
           "from it; add one)",
           "  claim-question   results only as a NumPy array curve.txt  [simulate.py:6]  (no claim can be read from "
           "it; add one)",
           "  claim-question   results in table.csv, whose columns are made at run time  [simulate.py:8]  (no claim "
           "can be read from it; add one)")
    assert "candidate claims" not in out
    [launcher] = data["launchers"]  # type: ignore[misc]
    assert [o["id"] for o in launcher["outputs"]] == ["x", "curve", "table"]


def test_no_result_at_all_is_one_question(tmp_path: Path) -> None:
    repo = repo_of(tmp_path, {"go.py": "import math\nmath.sqrt(2)\n"})
    out, _ = _init(repo)
    _found(out, "claim questions (rra build's claim step asks them):",
           "  claim-question   no candidate claim: no results table, printed metric or number written to a file was "
           "found  [.]  (no claim can be read from it; add one)")


def test_install_commands_and_a_committed_results_header(tmp_path: Path) -> None:
    repo = repo_of(tmp_path, {
        "README.md": "# R\n\n```bash\npython3 -m venv venv\npython setup.py develop\npython run.py\n```\n",
        "setup.py": "from setuptools import setup\nsetup(name='r')\n",
        # The columns are made at run time, but the repository holds the table the script wrote.
        "run.py": "import pandas as pd\nOUT = 'results/table.csv'\nrows = [dict(model='a', accuracy=0.5)]\n"
                  "pd.DataFrame(rows).to_csv(OUT, index=False)\n",
        "results/table.csv": "model,accuracy\na,0.5\n",
    })
    out, data = _init(repo)
    # Installing (setup.py, an installed module) is not an experiment, nor a missing file.
    assert [launcher["argv"] for launcher in data["launchers"]] == [["python", "run.py"]]  # type: ignore[attr-defined]
    assert "venv.py" not in out and "not drafted" not in out
    _found(out, "  claim-candidate  results/table.csv csv column accuracy  [run.py:4]  (a column of the CSV file "
                "to_csv writes (its header as the repository's copy has it); not written: no reported value)")


def test_a_readme_of_several_citations_leaves_the_paper_to_the_author(tmp_path: Path) -> None:
    # The tsetlin-demos README cites the group's papers: the first citation's title with another
    # link's arXiv id mixed three papers. With several, the title and ids are asked.
    bib = "@article{{a{0},\n  title={{Paper {0}}},\n  author={{A. Author}},\n  year={{2021}}\n}}\n"
    repo = repo_of(tmp_path, {
        "README.md": ("# Tool\n\nSee https://arxiv.org/abs/1804.01508 and https://arxiv.org/abs/2105.00001, and "
                      "https://doi.org/10.1000/xyz123.\n\n"
                      "```bibtex\n" + bib.format(1) + bib.format(2) + "```\n"),
        "run.py": "print('x')\n",
    })
    out, data = _init(repo)
    paper = data["paper"]
    assert isinstance(paper, dict)
    assert "arxiv" not in paper and "doi" not in paper and str(paper["title"]).startswith("TODO")
    assert "not used: the README links 2 arXiv id(s) and 1 DOI(s)" in out
    assert "not used: the README holds 2 citation blocks; which one is the paper is asked" in out
