"""``rra push DIR`` of an invalid artifact shows the findings, as ``rra pack DIR`` does, and pushes
nothing (the registry is never contacted: the address below has no server)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.rra_cli import rra

NOWHERE = "127.0.0.1:9/nobody/nothing:v1"


def test_push_of_an_invalid_artifact_prints_its_findings(tmp_path: Path) -> None:
    assert rra("init", str(tmp_path / "art")).returncode == 0  # four TODOs: RRA214 errors
    pack = rra("pack", str(tmp_path / "art"), "-o", str(tmp_path / "layout"))
    push = rra("push", str(tmp_path / "art"), NOWHERE)
    assert (pack.returncode, push.returncode) == (1, 1)
    assert "error[RRA214]" in push.stdout and push.stdout == pack.stdout
    assert push.stderr == ("error: not pushed: the artifact has 4 validation error(s); fix them, or pack with "
                           "'rra pack --force' and push the layout\n")
    as_json = rra("push", "-f", "json", str(tmp_path / "art"), NOWHERE)
    [result] = json.loads(as_json.stdout)["results"]
    assert as_json.returncode == 1 and [d["code"] for d in result["diagnostics"]].count("RRA214") == 4
