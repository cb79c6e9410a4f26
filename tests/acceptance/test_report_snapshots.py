"""Snapshots of every output format on the broken examples, validated against their consumers'
schemas. Rewrite with ``RRA_UPDATE_SNAPSHOTS=1`` and review the diff."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from jsonschema import Draft4Validator, Draft202012Validator

from rra_tools.validate import ValidationReport, validate_path
from rra_tools.validate.reporters import render

ROOT = Path(__file__).resolve().parents[2]
BROKEN = sorted(p.name for p in (ROOT / "examples" / "broken").iterdir() if (p / "expected.json").exists())
SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"


@pytest.fixture(scope="module")
def report() -> ValidationReport:
    # Relative paths from the repository root, as a CI job would give them.
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        return ValidationReport([validate_path(f"examples/broken/{name}") for name in BROKEN])
    finally:
        os.chdir(cwd)


def normalise(text: str) -> str:
    from rra_tools import __version__

    return text.replace(ROOT.as_uri() + "/", "file:///REPO/").replace(str(ROOT), "/REPO").replace(
        f'"{__version__}"', '"VERSION"')


def check(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("RRA_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    assert path.exists(), f"snapshot {name} is missing: run with RRA_UPDATE_SNAPSHOTS=1 to write it"
    assert text == path.read_bytes().decode("utf-8"), \
        f"{name} differs: rerun with RRA_UPDATE_SNAPSHOTS=1 if the change is intended, and review the diff"


@pytest.mark.parametrize("fmt, suffix", [("text", "txt"), ("json", "json"), ("sarif", "sarif.json"),
                                         ("github", "github.txt")])
def test_snapshot(report: ValidationReport, fmt: str, suffix: str) -> None:
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        text = render(report, fmt)
    finally:
        os.chdir(cwd)
    check(f"broken-examples.{suffix}", normalise(text))
    if fmt == "json":
        schema = json.loads((ROOT / "schemas" / "rra-report-1.0.schema.json").read_text())
        assert not list(Draft202012Validator(schema).iter_errors(json.loads(text)))
    if fmt == "sarif":
        schema = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
        assert not list(Draft4Validator(schema).iter_errors(json.loads(text)))
        results = json.loads(text)["runs"][0]["results"]
        assert len(results) == sum(len(r.diagnostics) for r in report.results)
