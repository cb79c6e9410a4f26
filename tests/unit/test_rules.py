"""Exact messages and locations of the important semantic rules, on a small artifact on disk."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from rra_tools.cli.main import cli
from rra_tools.validate import validate_bytes, validate_path

LOCK = "numpy==2.0.0 --hash=sha256:" + "a" * 64 + "\n"
OBS = [{"value": v, "seed": s, "fingerprint": {"hardware": "x86_64", "software": "cpython 3.11"}}
       for s, v in enumerate([91.0, 91.2, 90.9, 91.1, 91.0])]


def base() -> dict[str, Any]:
    return {
        "rra_version": "1.0", "id": "demo", "title": "Demo",
        "paper": {"title": "A paper", "authors": [{"name": "Ada"}]},
        "code": {"license": "MIT", "tree": {"path": "."}},
        "environment": {"interpreter": {"version": "3.11"},
                        "lock": {"path": "requirements.lock", "format": "requirements-hashes",
                                 "sha256": hashlib.sha256(LOCK.encode()).hexdigest()}},
        "launchers": [{"id": "train", "argv": ["python", "train.py", "--seed", "{seed}"], "seeds": [0, 1, 2, 3, 4],
                       "resources": {"timeout_s": 60, "expected_runtime_s": 5},
                       "outputs": [{"id": "metrics", "path": "out/{seed}.json", "format": "json"}]}],
        "claims": [{"id": "acc", "paper_location": {"table": "1"}, "launcher": "train",
                    "metric": {"name": "accuracy", "unit": "%", "direction": "higher"},
                    "extract": {"output": "metrics", "json_pointer": "/accuracy"},
                    "reported": {"value": 91.0, "precision": 1}, "reference": {"observations": OBS}}],
        "levels": ["available"],
    }


def write(root: Path, manifest: dict[str, Any]) -> Path:
    (root / "requirements.lock").write_text(LOCK)
    with open(root / "rra.yaml", "w") as handle:
        YAML().dump(manifest, handle)
    return root


def findings(root: Path) -> list[tuple[str, str, str]]:
    return [(d.code, d.pointer, d.message) for d in validate_path(root).diagnostics]


def test_base_is_clean_and_available(tmp_path: Path) -> None:
    result = validate_path(write(tmp_path, base()))
    assert result.diagnostics == [] and result.levels_met == ["available"]


def test_unknown_reference_with_suggestion(tmp_path: Path) -> None:
    m = base()
    m["claims"][0]["launcher"] = "trian"
    result = validate_path(write(tmp_path, m))
    [d] = [d for d in result.diagnostics if d.code == "RRA201"]
    assert (d.message, d.hint, d.pointer) == ("launcher 'trian' is not declared", "did you mean 'train'?",
                                              "/claims/0/launcher")
    assert d.file is not None and d.file.endswith("rra.yaml") and d.line is not None and d.column is not None


def test_unknown_references_share_a_budget_for_suggestions(tmp_path: Path) -> None:
    # A renamed sweep: every claim names a launcher that is not declared. Each "did you mean"
    # compares the reference with every declared id, so the suggestions stop once the unknown
    # references have been compared with _BUDGET names; a repeated value is answered again free.
    from rra_tools.validate.rules.references import _BUDGET

    m = base()
    launcher = m["launchers"][0]
    count = 1_000
    m["launchers"] = [dict(launcher, id=f"train-{i:04d}") for i in range(count)]
    claim = m["claims"][0]
    per = _BUDGET // count  # unknown references that get a suggestion (200: the message's figure)
    assert _BUDGET == 200_000
    m["claims"] = [dict(claim, id=f"acc-{i:04d}", launcher=f"trian-{i:04d}") for i in range(per + 3)]
    m["claims"].append(dict(claim, id="again", launcher="trian-0000"))  # asked before: still answered
    hints = [d.hint for d in validate_path(write(tmp_path, m)).diagnostics if d.code == "RRA201"]
    assert len(hints) == per + 4
    assert hints[:per] == [f"did you mean 'train-{i:04d}'?" for i in range(per)]
    listed = ", ".join(f"'train-{i:04d}'" for i in range(8))
    assert hints[per:per + 3] == [
        f"declared launcher ids: {listed}, ... ({count} in all; no 'did you mean': the unknown references "
        "before this one used up its budget of 200,000 name comparisons)"] * 3
    assert hints[-1] == "did you mean 'train-0000'?"


def test_a_reference_answered_before_the_budget_ran_out_keeps_its_answer() -> None:
    # A value with no close name, asked again once the budget is spent, still says only that
    # (not that the budget ran out); one with a close name keeps its suggestion.
    from rra_tools.validate.rules.references import _ref, _Suggestions

    known = {f"train-{i}": {} for i in range(5)}
    suggestions = _Suggestions(budget=10)
    listed = "declared launcher ids: 'train-0', 'train-1', 'train-2', 'train-3', 'train-4'"
    spent = f"{listed} (5 in all; no 'did you mean': the unknown references before this one used up its budget"
    hints = [_ref("launcher", value, known, ("claims", i, "launcher"), suggestions).hint
             for i, value in enumerate(["zzzz", "trian-1", "trian-2", "zzzz", "trian-1"])]
    assert hints[:2] == [listed, "did you mean 'train-1'?"]
    assert hints[2] is not None and hints[2].startswith(spent)
    assert hints[3:] == [listed, "did you mean 'train-1'?"]
    # Eight ids are listed whole; of nine, eight and an ellipsis.
    eight = {f"t{i}": {} for i in range(8)}
    assert _ref("launcher", "zzzz", eight, ()).hint == "declared launcher ids: " + ", ".join(f"'t{i}'" for i in range(8))
    nine = {**eight, "t8": {}}
    assert _ref("launcher", "zzzz", nine, ()).hint == "declared launcher ids: " + ", ".join(
        f"'t{i}'" for i in range(8)) + ", ..."


def test_digest_mismatch_names_both_digests(tmp_path: Path) -> None:
    write(tmp_path, base())
    (tmp_path / "requirements.lock").write_text(LOCK + "# edited\n")
    actual = hashlib.sha256((LOCK + "# edited\n").encode()).hexdigest()
    expected = hashlib.sha256(LOCK.encode()).hexdigest()
    got = findings(tmp_path)
    assert ("RRA304", "/environment/lock/sha256",
            f"sha256 of 'requirements.lock' is {actual}, the manifest says {expected}") in got
    assert any(c == "RRA601" and "level 'available' is claimed but not met" in msg for c, _, msg in got)


def test_paths_never_leave_the_root(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    root = tmp_path / "artifact"
    root.mkdir()
    os.symlink(outside, root / "link.txt")
    m = base()
    m["guide"] = {"path": "link.txt"}
    m["paper"]["citation_file"] = "../outside.txt"
    m["launchers"][0]["outputs"][0]["path"] = "/tmp/out.json"
    got = {(c, p) for c, p, _ in findings(write(root, m))}
    assert {("RRA302", "/guide/path"), ("RRA301", "/paper/citation_file"),
            ("RRA301", "/launchers/0/outputs/0/path")} <= got


def test_paths_through_a_link_chain_never_leave_the_root(tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("secret")
    root = tmp_path / "artifact"
    (root / "x" / "y").mkdir(parents=True)
    os.symlink("../..", root / "x" / "y" / "lnk")  # the root itself
    # By their text both stay inside; through 'lnk' they lead to the root's parent.
    os.symlink("x/y/lnk/../outside.txt", root / "guide.md")
    os.symlink("x/y/lnk/..", root / "up")
    m = base()
    m["guide"] = {"path": "guide.md"}
    m["launchers"][0]["outputs"][0]["path"] = "up/out.json"
    got = {(c, p) for c, p, _ in findings(write(root, m))}
    assert {("RRA302", "/guide/path"), ("RRA302", "/launchers/0/outputs/0/path")} <= got


def test_fifo_is_reported_not_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "GUIDE.md")
    m = base()
    m["guide"] = {"path": "GUIDE.md"}
    assert ("RRA306", "/guide/path", "'GUIDE.md' is a FIFO, not a regular file") in findings(write(tmp_path, m))


def test_interval_rules(tmp_path: Path) -> None:
    m = base()
    m["claims"][0]["reported"]["value"] = 95.0
    m["claims"][0]["reference"]["stability"] = "stable"
    got = {c: msg for c, _, msg in findings(write(tmp_path, m))}
    assert got["RRA506"].startswith("reported value 95 lies outside the reference interval [90.")
    assert got["RRA507"].startswith("claim 'acc' is declared 'stable' but its observations make it 'variable'")
    m["discrepancies"] = [{"id": "d1", "paper_says": "95", "code_does": "91", "follows": "code",
                           "rationale": "r", "impact": "i", "claims": ["acc"]}]
    assert "RRA506" not in {c for c, _, _ in findings(write(tmp_path, m))}


def test_functional_and_reproduced_levels_from_run_records(tmp_path: Path) -> None:
    m = base()
    m["levels"] = ["available", "functional", "reproduced"]
    write(tmp_path, m)
    got = findings(tmp_path)
    assert [c for c, _, _ in got] == ["RRA601", "RRA601"]
    runs = tmp_path / "runs"
    runs.mkdir()
    for seed, value in enumerate([91.0, 91.1, 90.9, 91.0, 91.2]):
        (runs / f"train-{seed}.json").write_text(json.dumps(
            {"launcher": "train", "seed": seed, "exit_status": 0, "status": "completed", "metrics": {"acc": value}}))
    result = validate_path(tmp_path)
    assert result.diagnostics == [] and result.levels_met == ["available", "functional", "reproduced"]
    (runs / "broken.json").write_text("{not json")
    codes = [d.code for d in validate_path(tmp_path).diagnostics]
    assert codes == ["RRA602"]


def test_bytes_without_root_skip_file_checks_but_not_levels() -> None:
    text = json.dumps(base())
    result = validate_bytes(text.encode(), name="upload.json")
    assert [(d.code, d.message) for d in result.diagnostics] == [
        ("RRA601", "level 'available' is claimed but not met: there is no artifact directory to check files in")]


def test_stdin_and_several_inputs(tmp_path: Path) -> None:
    write(tmp_path, base())
    runner = CliRunner()
    result = runner.invoke(cli, ["validate", "-"], input=(tmp_path / "rra.yaml").read_text())
    # From stdin there is no artifact root (spec/01-overview.md): file checks are skipped, not
    # resolved against the working directory, so no level is met; the summary says so.
    assert result.exit_code == 1, result.output
    assert "RRA303" not in result.output and "error[RRA601] level 'available' is claimed but not met" in result.output
    assert result.output.endswith("1 input(s) checked: 0 clean; 1 error(s), 0 warning(s), 0 info; artifact files "
                                  "not checked for - (manifest only: no artifact root)\n")
    result = runner.invoke(cli, ["validate", str(tmp_path), str(tmp_path / "rra.yaml")])
    assert result.exit_code == 0, result.output
    assert "2 input(s) checked: 2 clean; 0 error(s), 0 warning(s), 0 info" in result.output


@pytest.mark.parametrize("version, code, status", [("2.0", "RRA100", 1), ("1.7", "RRA101", 0)])
def test_version_rules(tmp_path: Path, version: str, code: str, status: int) -> None:
    m = base()
    m["rra_version"] = version
    m["x-future"] = 1
    m["new_field"] = {"a": 1}
    result = CliRunner().invoke(cli, ["validate", "-f", "json", str(write(tmp_path, m))])
    assert result.exit_code == status
    report = json.loads(result.output)["results"][0]["diagnostics"]
    assert report[0]["code"] == code or any(d["code"] == code for d in report)
    if code == "RRA101":
        # Under a newer minor version, unknown fields are warnings: they may be that version's fields.
        assert {(d["code"], d["severity"]) for d in report} == {("RRA101", "warning"), ("RRA111", "warning")}
    else:
        assert [d["code"] for d in report] == ["RRA100"]


def test_field_newer_than_declared_version() -> None:
    # v1.0 has no later fields yet; the mechanism reads "x-rra-added" annotations from the schema.
    from rra_tools.validate.schema_layer import _newer_fields

    schema = {"$defs": {"L": {"properties": {"id": {}, "retries": {"x-rra-added": "1.2"}}}},
              "properties": {"launchers": {"items": {"$ref": "#/$defs/L"}}}}
    data = {"launchers": [{"id": "a"}, {"id": "b", "retries": 3}]}
    found = list(_newer_fields(schema, schema, data, (), (1, 1)))
    assert [(f.code, f.pointer, f.message) for f in found] == [
        ("RRA102", ("launchers", 1, "retries"),
         "field 'retries' was added in RRA 1.2, but the manifest declares rra_version '1.1'")]
    assert list(_newer_fields(schema, schema, data, (), (1, 2))) == []


def test_time_budget_stops_validation_and_never_reports_clean(tmp_path: Path) -> None:
    m = base()
    big = tmp_path / "data.bin"
    big.write_bytes(os.urandom(1024 * 1024) * 64)
    digest = hashlib.sha256(big.read_bytes()).hexdigest()
    m["data"] = [{"id": "d", "license": "CC0-1.0", "access": "public", "shipped": True,
                  "files": [{"path": "data.bin", "sha256": digest}]}]
    write(tmp_path, m)
    assert validate_path(tmp_path).valid
    result = validate_path(tmp_path, time_budget_s=0.0)
    assert not result.valid and result.levels_met == []
    assert [d.code for d in result.diagnostics] == ["RRA008"]


def test_results_and_levels_share_the_run_record_reader(tmp_path: Path) -> None:
    # NaN is not JSON: both the validator's levels and `rra results` must refuse the record.
    from rra_tools.io.read.run_records import read_run_record

    record = tmp_path / "r.json"
    record.write_text('{"launcher": "train", "exit_status": 0, "status": "completed", "metrics": {"acc": NaN}}')
    assert read_run_record(tmp_path, record) == (
        "run record 'r.json' is not valid JSON: NaN is not a JSON value")
