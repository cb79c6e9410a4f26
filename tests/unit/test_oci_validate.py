"""``rra validate oci-layout:DIR``: a good pack is clean, and every packaging rule (RRA801-RRA812)
fires on a layout built to show it — the conformance suite cannot express these, since its
cases are artifact directories."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from rra_tools.cli import validate_cmd
from rra_tools.cli.main import cli
from rra_tools.oci.mediatypes import REQUIRED_ANNOTATIONS
from rra_tools.oci.pack import pack
from rra_tools.oci.targets import PACKED_SCHEMES, validate_target
from rra_tools.oci.validation import parse_layout_target, validate_oci_layout
from rra_tools.validate.catalog import RULES
from rra_tools.validate.config import Config
from rra_tools.validate.rule_docs import rule_doc

from .oci_support import (
    MANIFEST_TEXT,
    REQUIRED,
    Layer,
    Member,
    blob,
    build_layout,
    example_files_layer,
    copy_example,
    manifest_layer,
    manifest_of,
    tar_bytes,
)

REPO = Path(__file__).resolve().parents[2]
PACKAGING = sorted(code for code in RULES if code.startswith("RRA8"))


def _packed(tmp_path: Path) -> Path:
    pack(copy_example(tmp_path / "artifact"), tmp_path / "good", ref_name="v1", environ={})
    return tmp_path / "good"


def _codes(layout: Path, ref: str | None = "v1") -> set[str]:
    return {d.code for d in validate_oci_layout(layout, ref_name=ref).diagnostics}


def test_good_pack_is_clean_and_its_manifest_is_validated(tmp_path: Path) -> None:
    layout = _packed(tmp_path)
    result = validate_oci_layout(layout, ref_name="v1")
    assert result.diagnostics == [] and result.valid
    assert result.levels_met == ["available"] and result.manifest == f"oci-layout:{layout}:v1!/rra.yaml"


def _code(members: list[Member]) -> Layer:
    return Layer("code", tar_bytes(members))


def _tamper(layout: Path, which: Callable[[dict[str, object]], str]) -> None:
    manifest, _ = manifest_of(layout)
    path = blob(layout, which(manifest))
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    path.write_bytes(bytes(data))


def _layer_digest(i: int) -> Callable[[dict[str, object]], str]:
    return lambda m: m["layers"][i]["digest"]  # type: ignore[index,no-any-return]


def _scenario(code: str, tmp_path: Path) -> Path:
    """A layout on which ``code`` fires."""
    good = _packed(tmp_path)
    if code == "RRA801":
        (good / "oci-layout").unlink()
        return good
    if code == "RRA802":
        manifest, _ = manifest_of(good)
        blob(good, manifest["layers"][1]["digest"]).unlink()
        return good
    if code == "RRA803":
        _tamper(good, _layer_digest(1))
        return good
    if code == "RRA804":
        manifest, _ = manifest_of(good)
        with open(blob(good, manifest["config"]["digest"]), "ab") as handle:
            handle.write(b" ")
        return good
    if code == "RRA805":
        return build_layout(tmp_path / "x", [manifest_layer()],
                            edit_manifest=lambda m: m["config"].update(size=40_000_000))
    whole = [manifest_layer(), example_files_layer()]
    if code == "RRA806":
        return build_layout(tmp_path / "x", whole,
                            edit_manifest=lambda m: m.update(artifactType="application/vnd.example.other"))
    if code == "RRA807":
        return build_layout(tmp_path / "x", [manifest_layer(), _code([Member("a.py", data=b"1")])],
                            edit_config=lambda c: c["layers"].pop())
    if code == "RRA808":
        return build_layout(tmp_path / "x", [manifest_layer(), _code([Member("../evil.py", data=b"1")])])
    if code == "RRA809":
        return build_layout(tmp_path / "x", [manifest_layer(), Layer("code", tar_bytes([Member("a.py", data=b"1")]),
                                                                      declared_diff_id="sha256:" + "1" * 64)])
    if code == "RRA810":
        return build_layout(tmp_path / "x", [manifest_layer(MANIFEST_TEXT.replace(
            "title: \"Logistic regression on digits (RRA example)\"", "title: \"Something else\"")),
            example_files_layer()])
    if code == "RRA811":
        return build_layout(tmp_path / "x", whole,
                            annotations={k: v for k, v in REQUIRED.items() if "licenses" not in k})
    if code == "RRA812":
        return build_layout(tmp_path / "x", whole, annotations={**REQUIRED, "dev.rra.validation": "forced"})
    raise AssertionError(code)




@pytest.mark.parametrize("code", PACKAGING)
def test_every_packaging_rule_fires(tmp_path: Path, code: str) -> None:
    layout = _scenario(code, tmp_path)
    result = validate_oci_layout(layout, ref_name="v1")
    codes = {d.code for d in result.diagnostics}
    assert code in codes, [(d.code, d.message) for d in result.diagnostics]
    assert codes == {code}, [(d.code, d.message) for d in result.diagnostics]
    severity = RULES[code].severity
    assert all(d.severity == severity for d in result.diagnostics if d.code == code)
    assert result.valid is (code == "RRA812")  # a warning


def test_tampered_layer_names_blob_and_layer(tmp_path: Path) -> None:
    layout = _scenario("RRA803", tmp_path)
    [diag] = validate_oci_layout(layout, ref_name="v1").diagnostics
    manifest, _ = manifest_of(layout)
    digest = manifest["layers"][1]["digest"]
    assert diag.file == str(layout / "blobs" / "sha256" / digest[7:]) and diag.pointer == "/layers/1"
    assert diag.message.startswith(f"layer {digest} has digest sha256:") and diag.message.endswith("altered")


def test_embedded_manifest_findings_are_reported_inside_the_layout(tmp_path: Path) -> None:
    artifact = copy_example(tmp_path / "artifact")
    (artifact / "requirements.lock").write_text("tampered\n")
    pack(artifact, tmp_path / "out", ref_name="v1", force=True)
    result = validate_oci_layout(tmp_path / "out", ref_name="v1")
    shown = {(d.code, d.file) for d in result.diagnostics}
    assert ("RRA304", f"oci-layout:{tmp_path / 'out'}:v1!/rra.yaml") in shown
    assert "RRA812" in {code for code, _ in shown}
    assert str(tmp_path) + "/tmp" not in " ".join(d.message for d in result.diagnostics)


def test_integrity_rules_cannot_be_ignored(tmp_path: Path) -> None:
    layout = _scenario("RRA803", tmp_path)
    config = Config(ignore=frozenset({"RRA803"}))
    assert {d.code for d in validate_oci_layout(layout, ref_name="v1", config=config).diagnostics} == {"RRA803"}
    forced = _scenario("RRA812", tmp_path / "second")
    config = Config(ignore=frozenset({"RRA812"}))
    assert validate_oci_layout(forced, ref_name="v1", config=config).diagnostics == []


def test_targets_and_cli_exit_codes(tmp_path: Path) -> None:
    layout = _packed(tmp_path)
    assert parse_layout_target(f"oci-layout:{layout}:v1") == (layout, "v1")
    assert parse_layout_target(f"oci-layout:{layout}") == (layout, None)
    assert validate_target(f"oci-layout:{layout}").valid
    # One function takes every kind of target: a plain directory goes to the manifest validator.
    assert validate_target(str(layout)).unreadable
    # The CLI spells the packed prefixes itself (a plain path must not import the OCI package).
    assert validate_cmd.PACKED_SCHEMES == PACKED_SCHEMES
    runner = CliRunner()
    good = runner.invoke(cli, ["validate", f"oci-layout:{layout}:v1"])
    assert good.exit_code == 0, good.output
    assert "1 input(s) checked: 1 clean" in good.output
    bad = tmp_path / "bad"
    shutil.copytree(layout, bad)
    _tamper(bad, _layer_digest(0))
    result = runner.invoke(cli, ["validate", "--format", "json", f"oci-layout:{bad}:v1"])
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert [d["code"] for r in report["results"] for d in r["diagnostics"]] == ["RRA803"]
    missing = runner.invoke(cli, ["validate", f"oci-layout:{tmp_path / 'nowhere'}"])
    assert missing.exit_code == 2 and "RRA001" in missing.output
    wrong_ref = runner.invoke(cli, ["validate", f"oci-layout:{layout}:v2"])
    assert wrong_ref.exit_code == 1 and "index.json has no manifest named 'v2'" in wrong_ref.output


@pytest.mark.parametrize("hostile", ["link-chain", "pax-size"])
def test_hostile_trees_are_findings_through_the_cli(tmp_path: Path, hostile: str) -> None:
    import tarfile

    if hostile == "link-chain":
        code = tar_bytes([Member("chain", tarfile.SYMTYPE, linkname="x/y/lnk/../../../etc/hostname"),
                          Member("x/y/lnk", tarfile.SYMTYPE, linkname="../..")])
        words = "entry 'chain' is a symbolic link to 'x/y/lnk/../../../etc/hostname', which leads outside"
    else:
        member = tarfile.TarInfo("a.py")
        member.size = 1
        member.pax_headers = {"size": "9" * 5000}  # tarfile writes it; a reader must not crash on it
        code = member.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape") + b"x".ljust(512, b"\0") + bytes(1024)
        words = "a PAX size record is '99999"
    layout = build_layout(tmp_path / "x", [manifest_layer(), example_files_layer(), Layer("docs", code)])
    result = CliRunner().invoke(cli, ["validate", "--format", "json", f"oci-layout:{layout}:v1"])
    assert result.exit_code == 1, result.output
    [diag] = [d for r in json.loads(result.output)["results"] for d in r["diagnostics"]]
    assert diag["code"] == "RRA808" and words in diag["message"]


def test_spec_lists_the_required_annotations_and_every_code() -> None:
    spec = (REPO / "spec" / "05-packaging.md").read_text(encoding="utf-8")
    required = re.findall(r"^\| `([a-z.-]+)` \| yes \|", spec, flags=re.M)
    assert sorted(required) == sorted(REQUIRED_ANNOTATIONS)
    for code in PACKAGING:
        assert f"| `{code}` | {RULES[code].name} | {RULES[code].severity.label} |" in spec


@pytest.mark.parametrize("code", PACKAGING)
def test_rule_page_example_shows_its_code(code: str) -> None:
    doc = rule_doc(code)
    assert doc.lang == "console" and f"[{code}]" in doc.example and "$ rra" in doc.fix
