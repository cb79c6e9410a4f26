"""Ablation conditions: how a task set declares them (and the located errors of a wrong one), and
each transformation on its own: what it removes, that every other file stays byte-identical, and
whether the artifact still loads (docs/bench.md#ablations)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from rra_tools.bench import BenchError, load_taskset
from rra_tools.bench.ablation import (
    ablate,
    transformed_digest,
    without_guide,
    without_launchers,
    without_lock,
    without_repairs,
)
from rra_tools.bench.taskset import with_conditions
from rra_tools.io.artifact import load_artifact
from rra_tools.io.read.manifest import load_manifest_bytes, read_manifest_bytes
from rra_tools.model.taskset import condition_name, condition_parts
from rra_tools.run.errors import ArtifactError

from .test_bench_taskset import artifact, write

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "bench-demo"


# --- declaring conditions -------------------------------------------------------------------

def _conditions(tmp_path: Path, **top: Any) -> tuple[str, ...]:
    artifact(tmp_path / "a")
    return load_taskset(write(tmp_path / "t.json", [{"id": "x", "artifact": "a", "claim": "score"}], **top)).conditions


def test_conditions_default_and_ablations_by_name(tmp_path: Path) -> None:
    assert _conditions(tmp_path) == ("raw", "refined")
    shutil.rmtree(tmp_path / "a")
    got = _conditions(tmp_path, conditions=["refined", {"refined": {"without": ["guide", "repairs"]}},
                                            {"refined": {"without": ["lock"]}}])
    # An ablation's name lists its parts in canonical order, whatever order the task set gives.
    assert got == ("refined", "refined-without-repairs-guide", "refined-without-lock")


def test_factorial_expands_to_every_combination(tmp_path: Path) -> None:
    got = _conditions(tmp_path, conditions=["raw"], factorial=["guide", "repairs", "lock", "launchers"])
    assert len(got) == 1 + 16
    assert got[:6] == ("raw", "refined", "refined-without-repairs", "refined-without-lock",
                       "refined-without-launchers", "refined-without-guide")
    assert got[-1] == "refined-without-repairs-lock-launchers-guide"
    assert len(set(got)) == len(got)
    assert {condition_parts(c) for c in got[1:]} == {
        tuple(p for i, p in enumerate(("repairs", "lock", "launchers", "guide")) if mask >> i & 1)
        for mask in range(16)}


def test_docs_ablation_example(tmp_path: Path) -> None:
    import yaml

    text = (REPO / "docs" / "bench.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```yaml\n(.*?)```", text, flags=re.S) if "factorial" in b]
    got = _conditions(tmp_path, **yaml.safe_load(block))
    assert got[:3] == ("raw", "refined", "refined-without-repairs")
    assert len(got) == 1 + 16 and got[3] == "refined-without-lock"


def test_factorial_does_not_repeat_listed_conditions(tmp_path: Path) -> None:
    got = _conditions(tmp_path, conditions=["refined", {"refined": {"without": ["lock"]}}], factorial=["lock"])
    assert got == ("refined", "refined-without-lock")


@pytest.mark.parametrize(("top", "message"), [
    ({"conditions": ["raw", {"refined": {"without": ["lock", "docs"]}}]},
     "is invalid at /conditions/1/refined/without/1: unknown part 'docs'; the parts are repairs, lock, launchers, "
     "guide"),
    ({"conditions": [{"refined": {"without": ["lock", "guide", "lock"]}}]},
     "is invalid at /conditions/0/refined/without/2: part 'lock' is listed twice (also at "
     "/conditions/0/refined/without/0)"),
    ({"conditions": ["refined", {"refined": {"without": ["guide", "lock"]}}, {"refined": {"without": ["lock", "guide"]}}]},
     "is invalid at /conditions/2: condition 'refined-without-lock-guide' is used twice (first at /conditions/1)"),
    ({"conditions": ["raw", "raw"]}, "is invalid at /conditions/1: condition 'raw' is used twice (first at "
     "/conditions/0)"),
    ({"conditions": ["refined", "ablated"]},
     "is invalid at /conditions/1: unknown condition 'ablated'; a condition is 'raw', 'refined' or "
     "{refined: {without: [PART, ...]}}"),
    ({"conditions": [{"raw": {"without": ["lock"]}}]},
     "is invalid at /conditions/0: unknown key 'raw' in an ablation"),
    ({"factorial": ["repairs", "tests"]}, "is invalid at /factorial/1: unknown part 'tests'"),
    ({"factorial": ["guide", "guide"]}, "is invalid at /factorial/1: part 'guide' is listed twice"),
    ({"conditions": [{"refined": {"without": []}}]}, "is invalid at /conditions/0/refined: an ablation needs "
     "{without: [PART, ...]} with at least one part"),
    ({"conditions": [3]}, "is invalid at /conditions/0: 3 is not a condition"),
])
def test_wrong_conditions_are_located_errors(tmp_path: Path, top: dict[str, Any], message: str) -> None:
    with pytest.raises(BenchError) as caught:
        _conditions(tmp_path, **top)
    assert message in str(caught.value)
    assert str(tmp_path / "t.json") in str(caught.value)


def test_with_conditions_takes_names_in_any_order(tmp_path: Path) -> None:
    artifact(tmp_path / "a")
    loaded = load_taskset(write(tmp_path / "t.json", [{"id": "x", "artifact": "a", "claim": "score"}]))
    assert with_conditions(loaded, ["refined-without-guide-repairs", "raw"]).conditions == (
        "refined-without-repairs-guide", "raw")
    with pytest.raises(BenchError, match="unknown condition 'refined-without-docs'"):
        with_conditions(loaded, ["refined-without-docs"])
    with pytest.raises(BenchError, match="unknown condition 'refined-without-lock-lock'"):
        with_conditions(loaded, ["refined-without-lock-lock"])


def test_condition_names() -> None:
    assert condition_name(["guide", "launchers", "lock", "repairs"]) == "refined-without-repairs-lock-launchers-guide"
    assert condition_parts("raw") is None
    assert condition_parts("refined") == ()


# --- the transformations ----------------------------------------------------------------------

def _files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _copy(tmp_path: Path, name: str) -> tuple[Path, dict[str, Any]]:
    """A copy of a demo artifact and its manifest data, as the workspace gets them."""
    root = tmp_path / name
    shutil.copytree(DEMO / "artifacts" / name, root)
    data = load_manifest_bytes(read_manifest_bytes(root / "rra.yaml"), path=root / "rra.yaml").data
    assert isinstance(data, dict)
    return root, data


def _save(root: Path, data: dict[str, Any]) -> None:
    """Write the transformed manifest as the workspace does (rra.json, the YAML gone)."""
    (root / "rra.yaml").unlink(missing_ok=True)
    (root / "rra.json").write_text(json.dumps(data), encoding="utf-8")


def test_without_repairs_is_the_upstream_code_and_keeps_the_rest(tmp_path: Path) -> None:
    root, data = _copy(tmp_path, "nbayes")
    before = _files(root)
    removal = without_repairs(root, data)
    after = _files(root)
    assert removal.files == ["0001-corpus-path.patch"]
    assert removal.reverted == ["classify.py"]
    assert removal.fields == ["/code/patches", "/changes/0"]
    # The code is the upstream commit's, byte for byte ...
    assert (root / "classify.py").read_bytes() == (DEMO / "raw" / "nbayes" / "classify.py").read_bytes()
    # ... and nothing else changed.
    assert set(before) - set(after) == {"0001-corpus-path.patch"}
    assert {k for k in after if after[k] != before[k]} == {"classify.py"}
    assert "patches" not in data["code"] and "changes" not in data
    assert data["code"]["upstream"]["commit"] == "b1178f981744c6f3eb4ad4765232a65dc1ef4bd8"
    _save(root, data)
    assert load_artifact(root).manifest.launchers[0].id == "classify"  # still an artifact that runs


def test_without_repairs_of_an_artifact_without_a_series_removes_nothing(tmp_path: Path) -> None:
    root, data = _copy(tmp_path, "linfit")
    before, manifest = _files(root), json.dumps(data)
    removal = without_repairs(root, data)
    assert (removal.files, removal.reverted, removal.fields) == ([], [], [])
    assert _files(root) == before and json.dumps(data) == manifest


def test_without_repairs_refuses_a_series_that_does_not_reverse(tmp_path: Path) -> None:
    root, data = _copy(tmp_path, "nbayes")
    (root / "classify.py").write_text((DEMO / "raw" / "nbayes" / "classify.py").read_text())
    with pytest.raises(BenchError, match=r"patch 0001-corpus-path.patch does not reverse cleanly on the artifact's "
                       r"code \(the code is not the upstream commit with the series applied\)"):
        without_repairs(root, data)


def test_without_lock(tmp_path: Path) -> None:
    root, data = _copy(tmp_path, "montecarlo")
    before = _files(root)
    removal = without_lock(root, data)
    assert (removal.files, removal.fields) == (["requirements.lock"], ["/environment/lock"])
    assert _files(root) == {k: v for k, v in before.items() if k != "requirements.lock"}
    assert "lock" not in data["environment"] and data["environment"]["interpreter"]["version"] == "3.11"
    _save(root, data)
    assert load_artifact(root).manifest.launchers[0].id == "estimate"


def test_without_launchers_no_longer_loads(tmp_path: Path) -> None:
    root, data = _copy(tmp_path, "montecarlo")
    before = _files(root)
    removal = without_launchers(root, data)
    assert removal.files == [] and removal.fields == ["/launchers", "/claims/0/launcher"]
    assert _files(root) == before
    assert "launchers" not in data and "launcher" not in data["claims"][0]
    assert data["claims"][0]["extract"]["output"] == "estimate"  # how the number is read stays
    _save(root, data)
    with pytest.raises(ArtifactError, match="launchers"):
        load_artifact(root)


def test_without_guide(tmp_path: Path) -> None:
    root, data = _copy(tmp_path, "linfit")
    (root / "docs").mkdir()
    (root / "docs" / "HOWTO.md").write_text("# How to\n")
    data["guide"] = {"path": "docs/HOWTO.md"}
    before = _files(root)
    removal = without_guide(root, data)
    assert (removal.files, removal.fields) == (["docs/HOWTO.md"], ["/guide"])
    assert _files(root) == {k: v for k, v in before.items() if k != "docs/HOWTO.md"}
    _save(root, data)
    assert load_artifact(root).manifest.launchers[0].id == "fit"
    # Without a 'guide' field the default file goes.
    root, data = _copy(tmp_path / "again", "linfit")
    (root / "REPRODUCE.md").write_text("# Reproducing\n")
    assert without_guide(root, data).files == ["REPRODUCE.md"]


def test_without_guide_never_deletes_outside_the_copy(tmp_path: Path) -> None:
    root, data = _copy(tmp_path, "linfit")
    outside = tmp_path / "keep.md"
    outside.write_text("mine\n")
    (root / "up").symlink_to(tmp_path, target_is_directory=True)
    data["guide"] = {"path": "up/keep.md"}
    with pytest.raises(BenchError, match="the manifest names 'up/keep.md', which is not a file inside the artifact"):
        without_guide(root, data)
    assert outside.read_text() == "mine\n"


def test_ablate_applies_parts_in_canonical_order_and_digests_the_tree(tmp_path: Path) -> None:
    root, data = _copy(tmp_path, "nbayes")
    (root / "REPRODUCE.md").write_text("# Reproducing\n")
    removals = ablate(root, data, ["guide", "repairs", "lock"])
    assert [r.part for r in removals] == ["repairs", "lock", "guide"]
    assert sorted(_files(root)) == ["classify.py", "corpus.txt", "rra.yaml"]
    digest = transformed_digest(root)
    assert len(digest) == 64
    other, _ = _copy(tmp_path / "b", "nbayes")
    assert transformed_digest(other) != digest
