"""Which modules a launcher's script may import: what an incremental rebuild re-runs for."""

from __future__ import annotations

from rra_tools.builder.build.launcher_inputs import launcher_inputs, python_closure
from rra_tools.builder.patches import TreeEntry

SOURCES = {
    "train.py": b"import numpy as np\nfrom models import net\nfrom utils.io import load\n",
    "evaluate.py": b"import json\nimport metrics\n",
    "metrics.py": b"from math import sqrt\n",
    "models/__init__.py": b"",
    "models/net.py": b"from .layers import dense\n",
    "models/layers.py": b"",
    "utils/__init__.py": b"",
    "utils/io.py": b"from . import paths\n",
    "utils/paths.py": b"",
    "unused.py": b"",
    "pkg/__init__.py": b"",
    "pkg/run.py": b"from pkg import helpers\n",
    "pkg/helpers.py": b"",
    "plugin.py": b"import importlib\nimportlib.import_module('x')\n",
    "driver.py": b"import subprocess, sys\nsubprocess.run([sys.executable, 'metrics.py'])\n",
}


def test_the_closure_follows_absolute_relative_and_package_imports() -> None:
    assert python_closure(("file", "train.py"), ".", SOURCES) == {
        "train.py", "models/__init__.py", "models/net.py", "models/layers.py", "utils/__init__.py", "utils/io.py",
        "utils/paths.py"}
    assert python_closure(("file", "evaluate.py"), ".", SOURCES) == {"evaluate.py", "metrics.py"}
    assert python_closure(("module", "pkg.run"), ".", SOURCES) == {"pkg/__init__.py", "pkg/run.py", "pkg/helpers.py"}


def test_what_cannot_be_followed_counts_every_module() -> None:
    assert python_closure(("file", "plugin.py"), ".", SOURCES) is None  # imports by name at run time
    assert python_closure(("file", "driver.py"), ".", SOURCES) is None  # runs metrics.py, which it never imports
    assert python_closure(("file", "missing.py"), ".", SOURCES) is None
    assert python_closure(("file", "broken.py"), ".", {"broken.py": b"def (:\n"}) is None


def entries(changed: str = "") -> dict[str, TreeEntry]:
    files = {**{path: "0" for path in SOURCES}, "data.csv": "0"}
    if changed:
        files[changed] = "1"
    return {path: TreeEntry("100644", digest) for path, digest in files.items()}


def test_a_change_re_runs_only_the_launchers_it_reaches() -> None:
    data = {"environment": {"lock": {"sha256": "a"}}, "launchers": [
        {"id": "train", "argv": ["python", "train.py"]}, {"id": "evaluate", "argv": ["python3", "evaluate.py"]},
        {"id": "report", "argv": ["bash", "report.sh"], "depends_on": ["evaluate"]},
        {"id": "after", "argv": ["python", "unused.py"], "depends_on": ["train"]}]}
    before = launcher_inputs(data, entries(), SOURCES)
    changed = {name: {k for k in before if launcher_inputs(data, entries(name), SOURCES)[k] != before[k]}
               for name in ("metrics.py", "models/layers.py", "unused.py", "data.csv")}
    # bash report.sh: its imports are unknown, so every module is its input.
    assert changed["metrics.py"] == {"evaluate", "report"}
    assert changed["models/layers.py"] == {"train", "report", "after"}  # after depends on train
    assert changed["unused.py"] == {"report", "after"}
    assert changed["data.csv"] == {"train", "evaluate", "report", "after"}  # not a module: everyone's
    # The lock is every launcher's input.
    relocked = launcher_inputs({**data, "environment": {"lock": {"sha256": "b"}}}, entries(), SOURCES)
    assert all(relocked[k] != before[k] for k in before)
