"""``rra init`` writes a manifest with a $schema line that validates, and never overwrites one."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from rra_tools.cli.main import cli
from rra_tools.validate import validate_path


def test_init_writes_a_valid_manifest_with_schema_line(tmp_path: Path) -> None:
    target = tmp_path / "My Paper (2026)"
    result = CliRunner().invoke(cli, ["init", str(target)])
    assert result.exit_code == 0, result.output
    text = (target / "rra.yaml").read_text()
    assert text.startswith("# yaml-language-server: $schema=https://rra.dev/schemas/1.0/manifest.schema.json\n")
    assert "id: my-paper-2026\n" in text
    report = validate_path(target)
    # Only the lock the author still has to add is reported.
    assert [d.code for d in report.diagnostics] == ["RRA404"]


def test_init_never_overwrites(tmp_path: Path) -> None:
    (tmp_path / "rra.json").write_text("{}")
    result = CliRunner().invoke(cli, ["init", str(tmp_path)])
    assert result.exit_code == 2 and "already exists; nothing was written" in result.output
    assert (tmp_path / "rra.json").read_text() == "{}" and not (tmp_path / "rra.yaml").exists()
