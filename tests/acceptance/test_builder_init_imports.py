"""``rra init`` takes requirements from what the code imports and from the README's dependency
list, decides whether a launcher passed no seed draws unseeded random numbers, and drafts from a
plain directory (an unpacked archive) as from a git repository (issue 24). Tiny repositories
written here, the real command, exact drafted values and findings."""

from __future__ import annotations

import json
from pathlib import Path

from rra_tools.io.read.source import parse_document
from tests.builder_repos import git
from tests.rra_cli import rra

PINNED = "https://example.org/archive/demo.git@" + "ab" * 20


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _repo(tmp_path: Path, files: dict[str, str], *, remote: str | None = "https://example.org/lab/raw.git") -> Path:
    repo = _write(tmp_path / "raw", files)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-gpg-sign", "-m", "as published")
    if remote is not None:
        git(repo, "remote", "add", "origin", remote)
    return repo


def _init(*args: str) -> list[str]:
    done = rra("init", *args)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    return done.stdout.splitlines()


def _has(out: list[str], *lines: str) -> None:
    for line in lines:
        assert line in out, f"{line!r} not in:\n" + "\n".join(out)


def _validate(target: Path) -> list[tuple[str, str]]:
    done = rra("validate", "-f", "json", str(target))
    [result] = json.loads(done.stdout)["results"]
    return sorted((d["code"], d["pointer"]) for d in result["diagnostics"])


EXP1 = '''"""Experiment 1: a random forest on a synthetic set."""
import numpy as np
from sklearn.ensemble import RandomForestClassifier
import yaml
from helpers import load

if __name__ == "__main__":
    x = np.random.rand(100, 3)
    print("accuracy:", RandomForestClassifier().fit(x, x[:, 0] > 0.5).score(x, x[:, 0] > 0.5))
'''
HELPERS = '''import os
from . import sibling
from PIL import Image


def load():
    return os.getcwd()
'''


def test_no_requirements_file_drafts_them_from_the_imports(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"exp1.py": EXP1, "helpers.py": HELPERS, "tests/test_exp.py": "import pytest\n",
                            "setup.py": "import setuptools\n"})
    out = _init(str(repo))
    # The standard library, the repository's own modules, relative imports, tests and setup.py are
    # left out; import names become distribution names by the table.
    _has(out,
         "  requirement      numpy  [exp1.py:2]  (imported (numpy); no file declares the requirements)",
         "  requirement      scikit-learn  [exp1.py:3]  (imported (sklearn); no file declares the requirements)",
         "  requirement      PyYAML  [exp1.py:4]  (imported (yaml); no file declares the requirements)",
         "  requirement      Pillow  [helpers.py:3]  (imported (PIL); no file declares the requirements)",
         "  requirement numpy (exp1.py:2, import numpy): the code's imports is the only source of requirements; no "
         "requirements file declares them",
         f"wrote {repo / 'requirements.in'} from the code's imports for 'rra lock'")
    assert (repo / "requirements.in").read_text() == (
        "# Drafted by 'rra init' from the code's imports; 'rra lock' resolves and pins these.\n"
        "numpy  # exp1.py:2, import numpy\n"
        "scikit-learn  # exp1.py:3, import sklearn\n"
        "PyYAML  # exp1.py:4, import yaml\n"
        "Pillow  # helpers.py:3, import PIL\n")
    assert not [line for line in out if line.startswith("  requirement") and ("pytest" in line or "setuptools" in line)]


def test_an_unknown_import_name_is_kept_and_listed_as_assumed(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"run.py": "import numpy\nimport fancylib.core\n"})
    out = _init(str(repo))
    _has(out, "  distribution 'fancylib' of 'import fancylib' (run.py:2): assumed: distribution name = import name "
              "(not in the table of names that differ)")
    assert not [line for line in out if "distribution 'numpy'" in line]
    assert (repo / "requirements.in").read_text().splitlines()[1:] == ["numpy  # run.py:1, import numpy",
                                                                       "fancylib  # run.py:2, import fancylib"]


README = """# Demo

## Requirements

- numpy >= 1.19
* scikit-learn
- PyTorch 1.4 (for the second experiment)
- Linux or macOS
- a GPU with 8 GB

## Install

```bash
pip install scipy==1.10 -r extra.txt "pandas>=2"
$ python -m pip install --upgrade tqdm
```

## Usage

- run `python exp1.py`
"""


def test_the_readme_dependency_list_comes_before_the_imports(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"README.md": README, "exp1.py": "import numpy\nimport sklearn\nimport lightgbm\n"})
    out = _init(str(repo))
    _has(out,
         "  requirement      numpy>=1.19  [README.md:5]",
         "  requirement      scikit-learn  [README.md:6]",
         "  requirement      torch==1.4  [README.md:7]",
         "  requirement      scipy==1.10  [README.md:14]",
         "  requirement      pandas>=2  [README.md:14]",
         "  requirement      tqdm  [README.md:15]",
         "  imported-not-required lightgbm  [exp1.py:3]  (import lightgbm; README.md does not name it)",
         "  requirement lightgbm: imported at exp1.py:3 and not named by README.md: added to requirements.in",
         f"wrote {repo / 'requirements.in'} from README.md for 'rra lock'")
    assert (repo / "requirements.in").read_text().splitlines() == [
        "# Drafted by 'rra init' from README.md; 'rra lock' resolves and pins these.",
        "numpy>=1.19  # README.md:5", "scikit-learn  # README.md:6", "torch==1.4  # README.md:7",
        "scipy==1.10  # README.md:14", "pandas>=2  # README.md:14", "tqdm  # README.md:15",
        "lightgbm  # imported at exp1.py:3 (import lightgbm); README.md does not name it"]


def test_a_declared_file_missing_an_imported_package(tmp_path: Path) -> None:
    files = {"requirements.txt": "numpy>=1.24\nscikit-learn==1.3.2\n",
             "exp1.py": "import numpy\nfrom sklearn import svm\n",
             "exp2.py": "import numpy\n\nimport lightgbm as lgb\ntry:\n    import ujson as json\nexcept ImportError:\n"
                        "    import json\n"}
    repo = _repo(tmp_path, files)
    # Written elsewhere, the drafted file holds the requirements themselves.
    _init(str(repo), "-o", str(tmp_path / "art"))
    assert (tmp_path / "art" / "requirements.in").read_text().splitlines()[1:] == [
        "numpy>=1.24", "scikit-learn==1.3.2",
        "lightgbm  # imported at exp2.py:3 (import lightgbm); requirements.txt does not name it"]
    out = _init(str(repo))
    _has(out,
         "  imported-not-required lightgbm  [exp2.py:3]  (import lightgbm; requirements.txt does not name it)",
         "  imported-optional ujson  [exp2.py:5]  (inside try/except ImportError; requirements.txt does not name it: "
         "not added)",
         "  requirement lightgbm: imported at exp2.py:3 and not named by requirements.txt: added to requirements.in",
         f"wrote {repo / 'requirements.in'} from requirements.txt for 'rra lock'")
    # requirements.txt is never edited: requirements.in (which rra lock reads first) includes it.
    assert (repo / "requirements.in").read_text() == (
        "# Drafted by 'rra init': requirements.txt, plus the packages the code imports that it does not name; "
        "'rra lock' resolves and pins these.\n-r requirements.txt\n"
        "lightgbm  # imported at exp2.py:3 (import lightgbm); requirements.txt does not name it\n")
    assert (repo / "requirements.txt").read_text() == files["requirements.txt"]


def test_nothing_missing_writes_no_requirements_in(tmp_path: Path) -> None:
    # opencv-python-headless provides cv2 as opencv-python does.
    repo = _repo(tmp_path, {"requirements.txt": "numpy\nPyYAML\nopencv-python-headless\n",
                            "a.py": "import numpy\nimport yaml\nimport cv2\n"})
    out = _init(str(repo))
    assert not [line for line in out if "imported" in line]
    assert not (repo / "requirements.in").exists()


def _script(body: str, imports: str = "import numpy as np\n") -> str:
    return f'{imports}\nif __name__ == "__main__":\n{body}'


def test_unseeded_random_calls_make_a_launcher_repeat(tmp_path: Path) -> None:
    files = {
        "unseeded.py": _script("    x = np.random.rand(3)\n    print('loss:', x.sum())\n"),
        "seeded.py": _script("    np.random.seed(SEED)\n    random.seed(0)\n    print('loss:', np.random.rand(), "
                             "random.random())\n", "import random\nimport numpy as np\nSEED = 7\n"),
        "deterministic.py": _script("    print('loss:', 1.0)\n", "import math\n"),
        "split.py": _script("    a, b = train_test_split([1, 2, 3])\n    k = KFold(3, shuffle=True, random_state=0)\n",
                            "from sklearn.model_selection import KFold, train_test_split\nfrom helper import net\n"),
        "helper.py": "from torch import nn\n\n\ndef net():\n    return nn.Linear(2, 2)\n",
        # Passed a seed that reaches numpy only: torch's draws are not fixed by it.
        "with_seed.py": _script("    parser = argparse.ArgumentParser()\n    parser.add_argument('--seed', type=int, "
                                "default=1)\n    args = parser.parse_args()\n    np.random.seed(args.seed)\n"
                                "    print('loss:', np.random.rand() + torch.rand(1).item())\n",
                                "import argparse\nimport numpy as np\nimport torch\n"),
    }
    repo = _repo(tmp_path, {**files, "requirements.txt": "numpy\nscikit-learn\ntorch\n"})
    out = _init(str(repo))
    _has(out,
         "  random-unseeded  numpy.random.rand  [unseeded.py:4]  (launcher unseeded: no seed fixes it; drafted with "
         "repeats: 3)",
         "  random-unseeded  sklearn.model_selection.train_test_split (no random_state)  [split.py:5]  (launcher split: "
         "no seed fixes it; drafted with repeats: 3)",
         "  random-unseeded  torch.nn.Linear  [helper.py:5]  (launcher split: no seed fixes it; drafted with repeats: "
         "3)",
         "  random-seeded    numpy.random.seed(SEED)  [seeded.py:6]  (launcher seeded)",
         "  random-unseeded  torch.rand  [with_seed.py:10]  (launcher with_seed is passed a seed, which does not reach "
         "this draw)",
         "  launcher with_seed seeds [1]: the seed does not reach every draw (torch.rand at with_seed.py:10): one seed "
         "may give different numbers on two runs; seed those draws from it (rra change record)",
         "  random-seeded    random.seed(0)  [seeded.py:7]  (launcher seeded)",
         "  launcher deterministic stochastic: false: it has no --seed option; no random calls found in "
         "deterministic.py",
         "  launcher seeded stochastic: false: it has no --seed option; every random call of seeded.py is seeded by a "
         "constant (numpy.random.seed(SEED) at seeded.py:6, random.seed(0) at seeded.py:7): each run draws the same "
         "numbers",
         "  launcher unseeded stochastic: false, repeats: 3: it reads no seed, yet its code (unseeded.py) draws random "
         "numbers that nothing seeds (numpy.random.rand at unseeded.py:4): its results vary from run to run, and 3 "
         "repeats measure by how much; no seed is invented (it would change nothing). To fix the numbers, make it "
         "read a seed (rra change record) and declare seeds")
    data = parse_document((repo / "rra.yaml").read_text()).data
    launchers = {launcher["id"]: launcher for launcher in data["launchers"]}  # type: ignore[attr-defined]
    assert {ident: (launcher.get("stochastic"), launcher.get("repeats"), launcher.get("seeds"))
            for ident, launcher in launchers.items()} == {
        "deterministic": (False, None, None), "seeded": (False, None, None), "split": (False, 3, None),
        "unseeded": (False, 3, None), "with_seed": (None, None, [1])}
    # What is drafted validates: no seed invented, repeats where the spec allows them.
    assert [d for d in _validate(repo) if d[1].startswith("/launchers") and d[0] != "RRA214"] == []


def test_a_plain_directory_is_drafted_and_its_upstream_is_a_todo(tmp_path: Path) -> None:
    plain = _write(tmp_path / "archive", {
        ".gitignore": "data/\n*.log\n",
        "train.py": _script("    print('accuracy:', 0.9)\n"),
        "requirements.txt": "numpy\n",
        "LICENSE": "MIT License\n\nPermission is hereby granted, free of charge, to any person obtaining a copy\n",
        "data/gen.py": "import notapackage\n", "run.log": "x\n",
        ".venv/pyvenv.cfg": "home = /usr\n", ".venv/lib/site.py": "import alsonot\n",
        "__pycache__/x.py": "import neither\n", ".hg/store.py": "import nope\n"})
    out = _init(str(plain))
    _has(out,
         "  upstream         TODO  [.]  (a plain directory: give --upstream URL@COMMIT (the archive's DOI/URL))",
         "  launcher         train: python train.py  [train.py:1]  (a script run as __main__)",
         "  requirement      numpy  [requirements.txt:1]")
    assert not [line for line in out if "notapackage" in line or "alsonot" in line or "neither" in line
                or "nope" in line]
    data = parse_document((plain / "rra.yaml").read_text()).data
    assert data["code"]["upstream"] == {  # type: ignore[index]
        "url": "TODO: a plain directory: give --upstream URL@COMMIT (the archive's DOI/URL)",
        "commit": "TODO: full 40-hex upstream commit: a plain directory: give --upstream URL@COMMIT (the archive's "
                  "DOI/URL)"}
    assert {("RRA214", "/code/upstream/url"), ("RRA214", "/code/upstream/commit")} <= set(_validate(plain))
    assert not (plain / ".git").exists()


def test_a_plain_directory_with_upstream(tmp_path: Path) -> None:
    plain = _write(tmp_path / "archive", {"train.py": _script("    print('accuracy:', 0.9)\n")})
    out = _init(str(plain), "-o", str(tmp_path / "art"), "--upstream", PINNED)
    _has(out, f"  upstream         https://example.org/archive/demo.git @ {'ab' * 20}  [--upstream]")
    data = parse_document((tmp_path / "art" / "rra.yaml").read_text()).data
    assert data["code"]["upstream"] == {"url": "https://example.org/archive/demo.git",  # type: ignore[index]
                                        "commit": "ab" * 20}


def test_an_empty_directory_still_gets_the_template_and_refuses_upstream(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    done = rra("init", str(tmp_path / "empty"), "--upstream", PINNED)
    assert (done.returncode, done.stderr) == (2, f"Usage: rra init [OPTIONS] [RAW_REPO]\nTry 'rra init --help' for help.\n\n"
                                              f"Error: --upstream drafts from a repository, and "
                                              f"{str(tmp_path / 'empty')!r} is empty or does not exist\n")
    out = _init(str(tmp_path / "empty"))
    assert out[0].startswith(f"wrote {tmp_path / 'empty' / 'rra.yaml'}; fill in the TODOs")


def test_a_git_repository_without_a_remote_warns_that_head_is_local(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"train.py": _script("    print('accuracy:', 0.9)\n")}, remote=None)
    commit = git(repo, "rev-parse", "HEAD").strip()
    out = _init(str(repo))
    _has(out, f"  upstream.commit  {commit}  [git]  (warning: HEAD {commit[:7]} has no remote: it is a local commit, "
              "not the upstream; give --upstream URL@COMMIT)")
    data = parse_document((repo / "rra.yaml").read_text()).data
    assert data["code"]["upstream"] == {"url": "TODO: clone URL of the upstream repository",  # type: ignore[index]
                                        "commit": commit}


def test_a_requirements_file_including_another_names_its_packages(tmp_path: Path) -> None:
    # requirements.txt holds only '-r requirements/base.txt': its packages are the declared ones,
    # located at the '-r' line; a cycle of includes ends.
    repo = _repo(tmp_path, {"requirements.txt": "-r requirements/base.txt\nscipy\n",
                            "requirements/base.txt": "numpy>=1.24\n--requirement=../requirements.txt\n",
                            "run.py": "import numpy\nimport scipy\n"})
    out = _init(str(repo))
    _has(out, "  requirement      numpy>=1.24  [requirements.txt:1]", "  requirement      scipy  [requirements.txt:2]")
    assert not [line for line in out if "imported-not-required" in line]
    assert not (repo / "requirements.in").exists()
