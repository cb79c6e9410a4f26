"""``rra init`` writes a manifest with a $schema line, keeps the id and title it is given exactly
(or refuses them), prints a next step a shell can run, and never overwrites a manifest. Its
TODOs are findings until they are filled in (RRA214), and ``rra sbom`` will not publish them."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from click.testing import CliRunner

from rra_tools import SPEC_VERSION
from rra_tools.cli.main import cli
from rra_tools.io.read.source import parse_document
from tests.rra_cli import rra


def _validate(target: Path) -> tuple[int, list[str]]:
    done = rra("validate", "-f", "json", str(target))
    [result] = json.loads(done.stdout)["results"]
    return done.returncode, [d["code"] for d in result["diagnostics"]]


def test_init_writes_a_manifest_whose_todos_are_findings(tmp_path: Path) -> None:
    target = tmp_path / "My Paper (2026)"
    done = rra("init", str(target))
    assert done.returncode == 0, done.stderr
    text = (target / "rra.yaml").read_text()
    assert text.startswith("# yaml-language-server: $schema=/")  # the installed schema (tests/unit/test_schema_cmd.py)
    assert text.splitlines()[0].endswith(f"rra-manifest-{SPEC_VERSION}.schema.json")
    assert 'id: "my-paper-2026"\n' in text
    # The template's four TODOs are errors until filled in; the lock is still to add.
    status, codes = _validate(target)
    assert (status, sorted(codes)) == (1, ["RRA214"] * 4 + ["RRA404"])
    sbom = rra("sbom", str(target))
    assert (sbom.returncode, sbom.stdout) == (2, "")
    assert sbom.stderr == (f"error: {target / 'rra.yaml'}: code.license is a placeholder ('TODO: SPDX license, "
                           "e.g. MIT'), not a license; fill it in before writing an SBOM ('rra validate' reports it "
                           "as RRA214)\n")


def test_init_keeps_the_title_and_id_exactly(tmp_path: Path) -> None:
    title = "A \"quoted\": title #1 & 'more'"
    done = rra("init", str(tmp_path / "t"), "--id", "2024", "--title", title)
    assert done.returncode == 0, done.stderr
    data = parse_document((tmp_path / "t" / "rra.yaml").read_text()).data
    assert (data["id"], data["title"]) == ("2024", title)
    assert _validate(tmp_path / "t")[1].count("RRA214") == 4  # nothing else broke


def test_init_refuses_an_invalid_id_or_title(tmp_path: Path) -> None:
    done = rra("init", str(tmp_path / "a"), "--id", "a: b")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("error: artifact id 'a: b' is not valid: use 1-128 ASCII letters, digits, '.', '_' or '-', "
                           "starting with a letter or digit, e.g. 'a-b'\n")
    done = rra("init", str(tmp_path / "a"), "--title", "two\nlines")
    assert (done.returncode, done.stderr) == (2, "error: title 'two\\nlines' holds the control character U+000A; "
                                                 "a title is one line of visible text\n")
    assert not (tmp_path / "a").exists()


def test_init_prints_a_next_step_a_shell_can_run(tmp_path: Path) -> None:
    directory = "it's a $dir"
    done = rra("init", directory, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    step = done.stdout.rstrip("\n").split("then run: ", 1)[1]
    assert shlex.split(step) == ["rra", "validate", directory]


def test_init_never_overwrites(tmp_path: Path) -> None:
    (tmp_path / "rra.json").write_text("{}")
    result = CliRunner().invoke(cli, ["init", str(tmp_path)])
    assert result.exit_code == 2 and "already exists; nothing was written" in result.output
    assert (tmp_path / "rra.json").read_text() == "{}" and not (tmp_path / "rra.yaml").exists()


def test_placeholder_text_is_an_error_in_1_1_and_a_warning_in_1_0(tmp_path: Path) -> None:
    # RRA214 came with RRA 1.1: a 1.0 manifest that was valid with such text stays valid.
    target = tmp_path / "art"
    assert rra("init", str(target)).returncode == 0
    text = (target / "rra.yaml").read_text()
    assert f'rra_version: "{SPEC_VERSION}"' in text and SPEC_VERSION == "1.2"
    (target / "rra.yaml").write_text(text.replace('rra_version: "1.2"', 'rra_version: "1.0"'))
    done = rra("validate", str(target))
    assert "warning[RRA214] 'TODO: SPDX license, e.g. MIT' is a placeholder, not a value" in done.stdout
    assert "error[RRA214]" not in done.stdout
    assert done.returncode == 0 and "0 clean; 0 error(s), 5 warning(s), 0 info" in done.stdout  # with RRA404
    assert _validate(target)[1].count("RRA214") == 4
