"""Configuration in .rra.toml / [tool.rra]: selection, re-levelling, fail-on, and its own validation."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from rra_tools.cli.main import cli
from rra_tools.validate.catalog import RULES
from rra_tools.validate.config import Config, ConfigError, find_config, load_config, parse_config
from rra_tools.validate.diagnostics import Severity

# A manifest whose only findings are RRA402 (warning) and RRA404 (warning).
MANIFEST = """\
rra_version: "1.0"
id: demo
title: Demo
paper: {title: T, authors: [{name: A}]}
code: {license: MIT, tree: {path: .}}
environment: {interpreter: {version: "3.11"}, image: "python:3.11"}
launchers:
  - id: train
    argv: [python, train.py]
    stochastic: false
    resources: {timeout_s: 60, expected_runtime_s: 5}
"""


@pytest.fixture()
def artifact(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()  # stops the upward search for configuration here
    (tmp_path / "rra.yaml").write_text(MANIFEST)
    return tmp_path


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["validate", "--format", "json", *args])
    return result.exit_code, result.output


def codes(output: str) -> list[str]:
    import json

    return [d["code"] for r in json.loads(output)["results"] for d in r["diagnostics"]]


def test_defaults(artifact: Path) -> None:
    status, output = run(str(artifact))
    assert status == 0 and sorted(codes(output)) == ["RRA402", "RRA404"]


def test_rra_toml_ignore_and_relevel(artifact: Path) -> None:
    (artifact / ".rra.toml").write_text('ignore = ["RRA404"]\nfail-on = "warning"\n[severity]\nRRA402 = "error"\n')
    status, output = run(str(artifact))
    assert status == 1 and codes(output) == ["RRA402"]
    assert '"severity": "error"' in output


def test_pyproject_tool_rra_and_cli_override(artifact: Path) -> None:
    (artifact / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.rra]\nselect = ["RRA4"]\n')
    assert sorted(codes(run(str(artifact))[1])) == ["RRA402", "RRA404"]
    assert codes(run(str(artifact), "--ignore", "image-not-pinned")[1]) == ["RRA404"]
    assert run(str(artifact), "--fail-on", "warning")[0] == 1


def test_extend_select_enables_rules_off_by_default(artifact: Path) -> None:
    (artifact / "rra.yaml").write_text(MANIFEST + "x-lab: {queue: gpu}\n")
    assert "RRA103" not in codes(run(str(artifact))[1])
    assert "RRA103" in codes(run(str(artifact), "--extend-select", "RRA103")[1])


@pytest.mark.parametrize("toml, message", [
    ('selct = ["RRA1"]\n', "unknown key 'selct' in [tool.rra]"),
    ('select = "RRA1"\n', "select: expected a list of rule codes, prefixes or names, got 'RRA1'"),
    ('ignore = ["RRA999"]\n', "ignore: 'RRA999' matches no rule; see 'rra rules'"),
    ('[severity]\nRRA201 = "fatal"\n', "severity.RRA201: unknown severity 'fatal'"),
    ('fail-on = "sometimes"\n', "fail-on: unknown severity 'sometimes'"),
    ('select = [\n', "invalid TOML"),
])
def test_invalid_configuration_is_a_usage_error(artifact: Path, toml: str, message: str) -> None:
    (artifact / ".rra.toml").write_text(toml)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")):
        load_config(artifact / ".rra.toml")
    result = CliRunner().invoke(cli, ["validate", str(artifact)])
    assert result.exit_code == 2 and "error:" in result.output and ".rra.toml" in result.output


def test_find_config_walks_up_to_the_repository_root(artifact: Path) -> None:
    (artifact / "pyproject.toml").write_text("[tool.other]\nx = 1\n")
    nested = artifact / "a" / "b"
    nested.mkdir(parents=True)
    assert find_config(nested) is None
    (artifact / "pyproject.toml").write_text("[tool.rra]\nignore = []\n")
    assert find_config(nested) == artifact / "pyproject.toml"


def test_config_selection_semantics() -> None:
    config = parse_config({"select": ["RRA3", "unknown-reference"], "ignore": ["RRA304"]}, "test")
    enabled = {code for code, r in RULES.items() if config.enabled(r)}
    mandatory = {c for c, r in RULES.items() if r.mandatory}
    assert enabled == {c for c in RULES if c.startswith("RRA3") and c != "RRA304"} | {"RRA201"} | mandatory
    # Codes that mean "not checked" cannot be hidden.
    assert {"RRA008", "RRA100"} <= mandatory and parse_config({"ignore": ["RRA008"]}, "t").enabled(RULES["RRA008"])
    assert Config().severity_of(RULES["RRA402"]) is Severity.WARNING
