"""Fixtures every test gets: a private rra cache, and a schema check of every run record written."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from rra_tools import FORMAT_VERSIONS

SCHEMA = Path(__file__).resolve().parent.parent / "schemas" / f"rra-run-record-{FORMAT_VERSIONS['run-record']}.schema.json"


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Point RRA_CACHE_DIR (environments, parsed locks, checked manifests) at a directory of this
    session, so tests neither read nor fill the user's cache; tests that need their own set it."""
    previous = os.environ.get("RRA_CACHE_DIR")
    os.environ["RRA_CACHE_DIR"] = str(tmp_path_factory.mktemp("rra-cache"))
    yield
    if previous is None:
        os.environ.pop("RRA_CACHE_DIR", None)
    else:
        os.environ["RRA_CACHE_DIR"] = previous


@cache
def _record_validator() -> Any:
    return jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))


def written_run_records(root: Path) -> list[Path]:
    """The run records rra wrote under ``root``: record.json next to its stdout.log and
    stderr.log (hand-made records in tests, which may be broken on purpose, lack the logs)."""
    return sorted(p for p in root.rglob("record.json")
                  if (p.parent / "stdout.log").is_file() and (p.parent / "stderr.log").is_file())


@pytest.fixture(autouse=True)
def _run_records_conform(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test that has a tmp_path: every run record rra wrote there conforms to the
    published run-record schema. ``rra run`` does not check its records at run time (the
    compiled validator's import would be a sixth of its start-up), so this is where a record
    that drifted from the schema is caught, whichever test produced it."""
    tmp: Path | None = request.getfixturevalue("tmp_path") if "tmp_path" in request.fixturenames else None
    yield
    if tmp is None:
        return
    for path in written_run_records(tmp):
        errors = sorted(_record_validator().iter_errors(json.loads(path.read_text(encoding="utf-8"))),
                        key=lambda e: list(e.path))
        assert not errors, f"{path}: {errors[0].message} at {'/'.join(map(str, errors[0].path))}"
