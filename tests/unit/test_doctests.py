"""The examples in rra_tools' docstrings are run, so they stay true."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import rra_tools

MODULES = sorted(m.name for m in pkgutil.walk_packages(rra_tools.__path__, "rra_tools.")
                 if not m.name.endswith("__main__"))


def _with_examples() -> list[str]:
    finder = doctest.DocTestFinder()
    return [name for name in MODULES
            if any(t.examples for t in finder.find(importlib.import_module(name), name))]


@pytest.mark.parametrize("name", _with_examples())
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed"


def test_the_examples_are_found() -> None:
    assert "rra_tools.env.markers" in _with_examples()
    assert "rra_tools.run.records" in _with_examples()
