"""rra export ro-crate end to end: a real run of the digits example, exported, then checked by
roc-validator (RO-Crate 1.1 + Process Run Crate 0.5, offline; see tests/crate_validator.py)."""

from __future__ import annotations

import json
import shutil
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from ..crate_validator import issues, validate_crate
from ..rra_cli import rra

REPO = Path(__file__).resolve().parents[2]
DIGITS = REPO / "examples" / "digits-logreg"

#: The export run with every socket connection refused: the command must not need the network.
NO_NETWORK = """
import socket, sys
def refuse(*args, **kwargs):
    raise OSError("rra export tried to open a network connection")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from rra_tools.cli.main import entry
sys.argv = ["rra", *sys.argv[1:]]
entry()
"""


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The digits example after a real 'rra run' of two seeds."""
    art = tmp_path_factory.mktemp("export") / "digits"
    shutil.copytree(DIGITS, art, ignore=shutil.ignore_patterns("results", "runs", "__pycache__"))
    for seed in ("0", "1"):
        done = rra("run", str(art), "train", "--seed", seed, timeout=600)
        assert done.returncode == 0, done.stderr
    return art


def _export(art: Path, out: Path, *extra: str) -> None:
    import subprocess

    done = subprocess.run([sys.executable, "-c", NO_NETWORK, "export", "ro-crate", str(art), "-o", str(out), *extra],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{out}: RO-Crate ({'zip' if out.suffix == '.zip' else 'directory'}) with 14 file(s), " \
                          "1 launcher(s), 2 run(s), 1 claim(s)\n"


def _graph(metadata: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["@id"]: e for e in metadata["@graph"]}


def test_export_passes_roc_validator(ran: Path, tmp_path: Path) -> None:
    crate = tmp_path / "crate"
    _export(ran, crate, "--by", "Ada Lovelace")
    report = validate_crate(crate, tmp_path)
    assert report["passed"] and not report["issues"], "\n".join(issues(report))
    assert report["skipped_checks"] == 0, report["skipped_check_details"]
    assert report["validation_settings"]["offline"] is True

    graph = _graph(json.loads((crate / "ro-crate-metadata.json").read_text(encoding="utf-8")))
    root = graph["./"]
    assert root["conformsTo"] == {"@id": "https://w3id.org/ro/wfrun/process/0.5"}
    assert graph["ro-crate-metadata.json"]["conformsTo"] == {"@id": "https://w3id.org/ro/crate/1.1"}
    assert root["license"] == {"@id": "https://spdx.org/licenses/Apache-2.0"}
    assert graph[root["citation"]["@id"]]["name"] == "Example: Logistic Regression on Digits"
    launcher = graph["#launcher-train"]
    assert launcher["@type"] == "SoftwareApplication"
    actions = [graph[a["@id"]] for a in root["mentions"]]
    assert len(actions) == 2
    for action in actions:
        assert action["@type"] == "CreateAction"
        assert action["instrument"] == {"@id": "#launcher-train"}
        assert action["actionStatus"] == "http://schema.org/CompletedActionStatus"
        assert action["startTime"].endswith("+00:00") and action["endTime"] >= action["startTime"]
        assert graph[action["agent"]["@id"]] == {"@id": "#person-Ada-Lovelace", "@type": "Person",
                                                 "name": "Ada Lovelace"}
        inputs = {graph[o["@id"]]["name"]: graph[o["@id"]]["value"] for o in action["object"]}
        assert inputs["C"] == 1.0 and inputs["seed"] in (0, 1)
        results = [graph[r["@id"]] for r in action["result"]]
        output = next(r for r in results if r["@type"] == "File")
        assert output["@id"] == f"results/seed-{inputs['seed']}/metrics.json"
        assert (crate / output["@id"]).is_file() and len(output["sha256"]) == 64
        metric = next(r for r in results if r["@type"] == "PropertyValue")
        assert metric["propertyID"] == "test-accuracy" and 90 < metric["value"] <= 100
        assert (crate / action["subjectOf"][0]["@id"]).name == "record.json"
    claim = graph["#claim-test-accuracy"]
    assert (claim["@type"], claim["value"], claim["unitText"]) == ("PropertyValue", 96.9, "%")
    assert graph["#obtained-test-accuracy"]["value"] == pytest.approx(
        sum(graph[r["@id"]]["value"] for a in actions for r in a["result"] if r["@id"].endswith("metric-test-accuracy")) / 2)


def test_zip_export_passes_roc_validator(ran: Path, tmp_path: Path) -> None:
    out = tmp_path / "digits.crate.zip"
    _export(ran, out)
    with zipfile.ZipFile(out) as archive:
        assert {"ro-crate-metadata.json", "rra.yaml", "train.py"} <= set(archive.namelist())
    report = validate_crate(out, tmp_path)
    assert report["passed"], report["text"]
    assert "RO-Crate is a valid process-run-crate-0.5" in report["text"]


def test_validator_catches_a_broken_crate(ran: Path, tmp_path: Path) -> None:
    """The check can fail: a CreateAction without its instrument breaks a Process Run Crate MUST."""
    crate = tmp_path / "crate"
    _export(ran, crate)
    metadata_file = crate / "ro-crate-metadata.json"
    metadata = json.loads(metadata_file.read_text(encoding="utf-8"))
    for entity in metadata["@graph"]:
        if entity.get("@type") == "CreateAction":
            del entity["instrument"]
    metadata_file.write_text(json.dumps(metadata), encoding="utf-8")
    report = validate_crate(crate, tmp_path)
    assert not report["passed"]
    assert any(i["severity"] == "REQUIRED" and i["check"]["identifier"].startswith("process-run-crate-0.5")
               for i in report["issues"]), "\n".join(issues(report))


def test_refuses_an_existing_output_and_one_inside_the_artifact(ran: Path, tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    done = rra("export", "ro-crate", str(ran), "-o", str(tmp_path / "taken"))
    assert (done.returncode, done.stderr) == (2, f"error: {tmp_path / 'taken'}: already exists\n"
                                                 "hint: remove it or choose another -o\n")
    inside = ran / "crate"
    done = rra("export", "ro-crate", str(ran), "-o", str(inside))
    assert done.returncode == 2 and "the crate would contain itself" in done.stderr
    assert not inside.exists()
    assert not list(tmp_path.glob(".taken.*")), "a temporary directory was left behind"
