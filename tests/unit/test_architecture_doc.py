"""docs/architecture.md names real places: every path and module it cites exists."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "architecture.md"
TEXT = DOC.read_text(encoding="utf-8")


def test_every_cited_path_exists() -> None:
    paths = set(re.findall(r"`((?:rra_tools|schemas|spec|docs|conformance)/[^`<>*\s]*)`", TEXT))
    assert len(paths) > 30, "the page should cite the files a newcomer opens"
    missing = sorted(p for p in paths if not (REPO / p).exists())
    assert missing == [], f"docs/architecture.md cites files that do not exist: {missing}"


def _resolves(dotted: str) -> bool:
    """Whether ``dotted`` names a module, or an attribute of the longest module prefix of it."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def test_every_cited_module_or_name_resolves() -> None:
    names = set(re.findall(r"`(rra_tools(?:\.\w+)+)`", TEXT))
    assert len(names) > 10
    # Importing the console entry point would run the command line: its file is enough.
    assert (REPO / "rra_tools" / "__main__.py").is_file()
    names.discard("rra_tools.__main__")
    missing = sorted(n for n in names if not _resolves(n))
    assert missing == [], f"docs/architecture.md cites names that do not exist: {missing}"


def test_every_layer_of_the_contract_is_on_the_page() -> None:
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    contract = pyproject.split('id = "layers"', 1)[1].split("[[tool.importlinter.contracts]]", 1)[0]
    layers = set(re.findall(r"rra_tools(?:\.\w+)?", contract.split("layers = [", 1)[1]))
    absent = sorted(layer for layer in layers if f"`{layer}`" not in TEXT)
    assert absent == [], f"layers of the import contract missing from docs/architecture.md: {absent}"
