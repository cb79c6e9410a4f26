"""The import scan, the README's dependency list and the randomness reading of ``rra init``, on
files written here (issue 24): what each one takes, and what it must leave alone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rra_tools.builder.detect.imports import distribution_of, imported_packages
from rra_tools.builder.detect.randomness import read_randomness
from rra_tools.builder.detect.readme_deps import readme_requirements
from rra_tools.builder.detect.repo import RawRepo


def _repo(tmp_path: Path, files: dict[str, str]) -> RawRepo:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return RawRepo.open(tmp_path)  # a plain directory: walked


def test_imports_leave_out_the_repository_the_standard_library_and_type_checking(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {
        "main.py": "import os, sys\nimport pkg.sub\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                   "    import mypy_extensions\n\ndef f():\n    import scipy.stats as st\n    from .x import y\n",
        "pkg/__init__.py": "", "pkg/sub.py": "from sibling import g\nimport cv2\n", "pkg/sibling.py": "",
        "src/lib/__init__.py": "", "other.py": "import lib\nimport google.protobuf\nimport mpl_toolkits\n"
                                               "import matplotlib\n"})
    found = [(i.module, i.distribution, i.where, i.known, i.optional) for i in imported_packages(repo)]
    assert found == [("scipy", "scipy", "main.py:8", True, False),
                     ("google.protobuf", "protobuf", "other.py:2", True, False),
                     ("mpl_toolkits", "matplotlib", "other.py:3", True, False),
                     ("matplotlib", "matplotlib", "other.py:4", True, False),
                     ("cv2", "opencv-python", "pkg/sub.py:2", True, False)]


def test_an_import_is_optional_only_if_every_import_of_it_is(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"a.py": "try:\n    import ujson\n    import orjson\nexcept (ImportError, OSError):\n"
                                    "    pass\n", "b.py": "import orjson\n"})
    assert [(i.module, i.optional) for i in imported_packages(repo)] == [("ujson", True), ("orjson", False)]


def test_distribution_names() -> None:
    assert [distribution_of(m)[1] for m in ("sklearn.svm", "PIL.Image", "yaml", "skimage", "Bio.Seq", "bs4",
                                            "dateutil.parser", "attr", "torch.nn", "google.cloud.storage")] == [
        "scikit-learn", "Pillow", "PyYAML", "scikit-image", "biopython", "beautifulsoup4", "python-dateutil",
        "attrs", "torch", "google-cloud-storage"]


def test_readme_list_takes_packages_not_prose(tmp_path: Path) -> None:
    readme = ("Intro\n=====\n\n- numpy (not a requirements section)\n\nDependencies\n------------\n\n"
              "* `numpy` >= 1.19\n* [SciPy](https://scipy.org) 1.10 - optimisation\n* Python 3.8\n* CUDA 11\n"
              "* Install the requirements below\n* matplotlib: plots\n1. pandas\n"
              "- `pip install seaborn tqdm`\n\nUsage\n-----\n\n- numpy2\n\n"
              "```python\npip install notshell\n```\n```\npip install -e . --index-url https://x/simple einops "
              "git+https://github.com/a/b.git && python run.py\n```\n")
    repo = _repo(tmp_path, {"README.rst": readme})
    name, found = readme_requirements(repo)
    assert name == "README.rst"
    assert found == [("numpy>=1.19", 9), ("SciPy==1.10", 10), ("matplotlib", 14), ("pandas", 15), ("seaborn", 16),
                     ("tqdm", 16), ("einops", 27)]


def test_randomness_through_aliases(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {
        "a.py": "from numpy import random as npr\nfrom numpy.random import default_rng, shuffle\nimport random\n"
                "import torch\nfrom torch.utils.data import DataLoader\nrng = default_rng()\nshuffle([1])\n"
                "g = default_rng(3)\ng.normal()\nnpr.seed(1)\nrandom.Random(4).random()\n"
                "DataLoader([], shuffle=True)\nDataLoader([])\n",
        "b.py": "import torch\nimport pytorch_lightning as pl\npl.seed_everything(0)\ntorch.randn(2)\n"})
    a = read_randomness(repo, "a.py")
    assert [c.shown for c in a.unseeded] == ["numpy.random.default_rng() at a.py:6",
                                             "torch.utils.data.DataLoader(shuffle=True) at a.py:12"]
    assert [c.shown for c in a.seeded] == ["numpy.random.shuffle at a.py:7"]
    assert [(c.name, c.constant) for c in a.seeds] == [("numpy.random.default_rng(3)", True),
                                                       ("numpy.random.seed(1)", True), ("random.Random(4)", True)]
    b = read_randomness(repo, "b.py")
    assert (b.verdict, [c.shown for c in b.seeded]) == ("constant", ["torch.randn at b.py:4"])


def test_a_seed_drawn_at_run_time_fixes_nothing(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"c.py": "import time\nimport random\nimport numpy as np\nrandom.seed(int(time.time()))\n"
                                    "np.random.seed(args.seed)\nrandom.shuffle([])\nnp.random.rand()\n"})
    c = read_randomness(repo, "c.py")
    assert (c.verdict, [x.shown for x in c.unseeded]) == ("unseeded", [
        "random.seed(int(time.time())) (a seed drawn at run time) at c.py:4", "random.shuffle at c.py:6"])
    assert [(x.name, x.constant) for x in c.seeds] == [("numpy.random.seed(args.seed)", False)]


def test_a_plain_directory_is_listed_as_git_would(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {".gitignore": "data/\n!keep.log\n*.log\n", "a.py": "", "data/x.py": "", "b.log": "",
                            "env/pyvenv.cfg": "", "env/lib.py": "", "conda/conda-meta/history": "",
                            "node_modules/x.js": "", "pkg/__pycache__/a.pyc": "", "pkg/m.py": "", ".git-like": ""})
    assert (repo.is_git, repo.files) == (False, [".git-like", ".gitignore", "a.py", "pkg/m.py"])
    assert repo.upstream() == (None, None) and not repo.modified()
    # A name that is not UTF-8 is left out and shown escaped, as for git's listing; a link is
    # listed, never followed.
    os.close(os.open(os.path.join(os.fsencode(tmp_path), b"caf\xe9.py"), os.O_CREAT | os.O_WRONLY))
    (tmp_path / "outside").symlink_to("/")
    again = RawRepo.open(tmp_path)
    assert (again.files, again.undecodable) == ([".git-like", ".gitignore", "a.py", "outside", "pkg/m.py"],
                                                 ["caf\\xe9.py"])
    assert again.text("outside") is None


def test_the_walk_of_a_plain_directory_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rra_tools.builder.detect.repo as repo_module

    monkeypatch.setattr(repo_module, "MAX_WALKED", 3)
    repo = _repo(tmp_path, {f"f{n}.py": "" for n in range(5)})
    assert (len(repo.files), repo.truncated) == (3, True)


def test_the_drafted_requirements_say_why_they_were_written(tmp_path: Path) -> None:
    from rra_tools.builder.draft import draft_manifest

    imports = _repo(tmp_path / "a", {"run.py": "import numpy\n"})
    assert draft_manifest(imports.root).requirements_reason == (
        "No file of the repository declares its requirements and its README lists none; rra init wrote the packages "
        "the code imports into requirements.in, each with the file:line of its import.")
    readme = _repo(tmp_path / "b", {"README.md": "```\npip install numpy\n```\n", "run.py": "import scipy\n"})
    assert draft_manifest(readme.root).requirements_reason == (
        "No file of the repository declares its requirements; README.md lists them (pip install lines, a "
        "requirements section), and rra init wrote them into requirements.in, each with its line; it adds what the "
        "code imports and README.md does not name, which the run would fail without: scipy (run.py:1).")
    declared = _repo(tmp_path / "c", {"requirements.txt": "numpy\n", "run.py": "import numpy\n"})
    assert (draft_manifest(declared.root).requirements_text, draft_manifest(declared.root).requirements_reason) == (
        None, None)


def test_a_package_an_optional_extra_names_is_not_added(tmp_path: Path) -> None:
    # pyod's shape: the code imports torch in its deep models, which pyproject.toml declares as
    # the extra 'torch'; the run's requirements are [project] dependencies, so torch is reported,
    # not added (it pulled torch and torch-geometric into a lock of a k-NN example).
    from rra_tools.builder.detect.environment import detect_environment

    for name, text in {
        "pyproject.toml": '[project]\nname = "lib"\ndependencies = ["numpy>=1.20"]\n\n'
                          '[project.optional-dependencies]\ntorch = ["torch>=2", "torch-geometric"]\n',
        "setup.py": "from setuptools import setup\nsetup(name='lib', extras_require={'xgb': ['xgboost']})\n",
        "lib/__init__.py": "", "lib/deep.py": "import torch\nimport torch_geometric\n",
        "lib/boost.py": "import xgboost\n", "lib/knn.py": "import numpy\nimport scipy\n"}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    env = detect_environment(RawRepo.open(tmp_path), [])
    assert env.source == "pyproject.toml"
    assert [item.distribution for item in env.missing] == ["scipy"]
    optional = {f.value: f.note for f in env.findings if f.item == "imported-optional"}
    assert optional["torch"] == ("import torch; the extra 'torch' of pyproject.toml names it, pyproject.toml does "
                                 "not: not added (add it if a launcher needs it)")
    assert "the extra 'xgb' of setup.py" in optional["xgboost"]
