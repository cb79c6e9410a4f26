"""A notebook's code cells are read for the packages they import (rra_tools/builder/detect/imports.py):
a repository of notebooks only, with no requirements file, gets its requirements from them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from rra_tools.builder.detect.imports import imported_packages, notebook_code
from rra_tools.builder.detect.repo import RawRepo


def _notebook(*cells: tuple[str, str]) -> str:
    # nbformat's layout: indent 1, each source line its own JSON string.
    return json.dumps({"cells": [{"cell_type": kind, "metadata": {}, "source": text.splitlines(keepends=True),
                                  **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                                 for kind, text in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
                      indent=1)


def test_code_cells_are_parsed_and_lines_point_into_the_notebook() -> None:
    text = _notebook(("markdown", "import nothing from prose\n"),
                     ("code", "%matplotlib inline\nimport numpy as np\n"),
                     ("code", "!pip install lightgbm\nx = np.mean?\n"),
                     ("code", "def broken(:\n    import torch\n"),  # not Python: this cell only is left out
                     ("code", "from sklearn.svm import SVC\n"))
    tree, lines = notebook_code(text)
    assert tree is not None
    imports = [(node.lineno, ast_name(node)) for node in tree.body if ast_name(node)]
    raw = text.splitlines()
    assert [name for _, name in imports] == ["numpy", "sklearn.svm"]
    for line, name in imports:
        assert name.split(".")[0] in raw[lines[line - 1] - 1]


def ast_name(node: object) -> str | None:
    import ast

    if isinstance(node, ast.Import):
        return node.names[0].name
    if isinstance(node, ast.ImportFrom):
        return node.module
    return None


def test_a_notebook_that_is_not_json_gives_nothing() -> None:
    assert notebook_code("{not json") == (None, [])
    assert notebook_code("[1, 2]") == (None, [])
    assert notebook_code('{"cells": 3}') == (None, [])
    assert notebook_code("[" * 100_000 + "]" * 100_000) == (None, [])


def test_imports_of_a_notebook_only_repository(tmp_path: Path) -> None:
    (tmp_path / "analysis.ipynb").write_text(_notebook(("code", "import numpy as np\nimport pandas as pd\n"),
                                                       ("code", "import os\nimport helpers\n")))
    (tmp_path / ".ipynb_checkpoints").mkdir()
    (tmp_path / ".ipynb_checkpoints" / "analysis-checkpoint.ipynb").write_text(
        _notebook(("code", "import torch\n")))
    (tmp_path / "helpers.py").write_text("import scipy\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    found = imported_packages(RawRepo.open(tmp_path))
    assert [(item.distribution, item.where) for item in found] == [
        ("numpy", "analysis.ipynb:7"), ("pandas", "analysis.ipynb:8"), ("scipy", "helpers.py:1")]
