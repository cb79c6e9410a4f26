"""rra sbom: CycloneDX 1.6 JSON that the library's strict validator accepts, byte-identical across runs."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest

from rra_tools.env.artifact import manifest_model
from rra_tools.io.artifact import load_artifact
from rra_tools.env.sbom import SBOM_NAMESPACE, sbom_for

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = ["digits-logreg", "gpu-resnet-cifar"]


def validate(text: str) -> None:
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    errors = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)
    assert errors is None, errors


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_sbom_validates_and_is_deterministic(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    artifact = load_artifact(REPO / "examples" / name)
    first = sbom_for(artifact)
    second = sbom_for(load_artifact(REPO / "examples" / name))
    assert first == second
    validate(first)
    bom = json.loads(first)
    assert bom["specVersion"] == "1.6"
    assert bom["serialNumber"] == f"urn:uuid:{uuid.uuid5(SBOM_NAMESPACE, artifact.digest)}"
    review = manifest_model(artifact).review
    # No SOURCE_DATE_EPOCH: the review date, else the Unix epoch.
    expected = f"{review.date}T00:00:00+00:00" if review else "1970-01-01T00:00:00+00:00"
    assert bom["metadata"]["timestamp"] == expected
    assert bom["metadata"]["component"]["name"] == artifact.manifest.id


def test_digits_components() -> None:
    bom = json.loads(sbom_for(load_artifact(REPO / "examples/digits-logreg")))
    libraries = {c["purl"]: c for c in bom["components"] if c["type"] == "library"}
    assert len(libraries) == 7
    sklearn = libraries["pkg:pypi/scikit-learn@1.9.1"]
    assert sklearn["hashes"] == [{"alg": "SHA-256",
                                  "content": "52a0703bbc07ad27f560fa63fa68e4c54dd735bfbbf65b4dd3c225dc7547b6df"}]
    code = next(c for c in bom["components"] if c["bom-ref"] == "rra:code")
    assert code["type"] == "application" and code["licenses"] == [{"expression": "Apache-2.0"}]
    assert len(code["hashes"][0]["content"]) == 64  # the shipped tree's digest


def test_gpu_components() -> None:
    bom = json.loads(sbom_for(load_artifact(REPO / "examples/gpu-resnet-cifar")))
    by_type: dict[str, list[dict[str, object]]] = {}
    for component in bom["components"]:
        by_type.setdefault(component["type"], []).append(component)
    assert len(by_type["library"]) == 25
    (data,) = by_type["data"]
    assert data["hashes"] == [{"alg": "SHA-256",
                               "content": "6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce"}]
    (image,) = by_type["container"]
    assert image["purl"] == ("pkg:oci/resnet-cifar-rra@sha256:15e8a986c61b84b0ae406a73949b16f1ac10b1519716988c17665bc"
                             "4a77a9a43?repository_url=ghcr.io/example-org/resnet-cifar-rra")
    (code,) = by_type["application"]
    assert code["version"] == "1966fa073c8acdc8dcd2759d766e490395f5ae69"
    assert code["externalReferences"][0]["url"] == "https://github.com/example-org/resnet-cifar.git"


def test_timestamp_from_source_date_epoch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    bom = json.loads(sbom_for(load_artifact(REPO / "examples/digits-logreg")))
    assert bom["metadata"]["timestamp"] == "2023-11-14T22:13:20+00:00"


def test_serial_follows_the_content(tmp_path: Path) -> None:
    copy = tmp_path / "digits"
    shutil.copytree(REPO / "examples/digits-logreg", copy, ignore=shutil.ignore_patterns("results"))
    before = json.loads(sbom_for(load_artifact(copy)))["serialNumber"]
    manifest = copy / "rra.yaml"
    manifest.write_text(manifest.read_text().replace("value: 96.9", "value: 97.0"))
    assert json.loads(sbom_for(load_artifact(copy)))["serialNumber"] != before


def test_shipped_tree_digest_ignores_run_outputs(tmp_path: Path) -> None:
    copy = tmp_path / "digits"
    shutil.copytree(REPO / "examples/digits-logreg", copy, ignore=shutil.ignore_patterns("results", "runs"))
    before = sbom_for(load_artifact(copy))
    for place in ("runs", "results/seed-0", ".cache"):
        (copy / place).mkdir(parents=True)
        (copy / place / "out.json").write_text("{}")
    assert sbom_for(load_artifact(copy)) == before
    (copy / "train.py").write_text((copy / "train.py").read_text() + "\n# edited\n")
    assert sbom_for(load_artifact(copy)) != before
