"""The manifest's own checks before a run (rra_tools/run/preflight.py) are cached, and the cached
lines name the manifest they were found in, not the first one with the same bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from rra_tools.run.preflight import manifest_problems

ROOT = Path(__file__).resolve().parents[2]


def test_two_manifests_with_the_same_bytes_are_each_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RRA_CACHE_DIR", str(tmp_path / "cache"))
    text = (ROOT / "examples" / "digits-logreg" / "rra.yaml").read_text()
    assert "    launcher: train\n" in text
    text = text.replace("    launcher: train\n", "    launcher: no-such-launcher\n", 1)
    found = []
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "rra.yaml").write_text(text)
        errors, _ = manifest_problems(tmp_path / name / "rra.yaml")
        assert errors, "the unknown launcher is an error that blocks a run"
        found.append(errors)
    assert all(line.startswith(str(tmp_path / "first" / "rra.yaml")) for line in found[0]), found[0]
    assert all(line.startswith(str(tmp_path / "second" / "rra.yaml")) for line in found[1]), found[1]
    assert len(list((tmp_path / "cache" / "preflight").iterdir())) == 2
