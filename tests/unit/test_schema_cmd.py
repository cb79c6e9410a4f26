"""Issue 25 item 6: editor schemas. ``rra schema NAME`` prints the committed schema and
``--path`` its installed file; ``rra init``'s first line names that file (it resolves offline,
and no unserved URL is written); an unknown name or version is an error that lists the ones
there are; the SchemaStore catalog entry names the ``$id`` of each committed manifest schema."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from rra_tools import FORMAT_VERSIONS, SPEC_VERSION
from rra_tools.builder import init as init_module
from rra_tools.cli.main import cli
from rra_tools.io.schemas import SCHEMA_NAMES, schema_versions

from ..rra_cli import rra

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = REPO / "schemas"


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_schema_prints_the_committed_file(name: str) -> None:
    result = CliRunner().invoke(cli, ["schema", name])
    assert result.exit_code == 0, result.output
    committed = SCHEMAS / f"rra-{name}-{FORMAT_VERSIONS[name]}.schema.json"
    assert result.output == committed.read_text(encoding="utf-8")
    assert json.loads(result.output)["$id"].endswith(f"/{FORMAT_VERSIONS[name]}/{name}.schema.json")


def test_schema_path_is_the_installed_file_and_versions_are_there() -> None:
    result = CliRunner().invoke(cli, ["schema", "--path"])
    path = Path(result.output.rstrip("\n"))
    assert result.exit_code == 0 and path.is_absolute() and path.is_file()
    assert path.read_bytes() == (SCHEMAS / f"rra-manifest-{SPEC_VERSION}.schema.json").read_bytes()
    assert schema_versions("manifest")[:2] == ["1.0", "1.1"] and schema_versions("manifest")[-1] == SPEC_VERSION
    old = CliRunner().invoke(cli, ["schema", "manifest", "--version", "1.0"])
    assert old.output == (SCHEMAS / "rra-manifest-1.0.schema.json").read_text(encoding="utf-8")
    old_path = CliRunner().invoke(cli, ["schema", "manifest", "--version", "1.1", "--path"])
    assert Path(old_path.output.rstrip("\n")).read_bytes() == (SCHEMAS / "rra-manifest-1.1.schema.json").read_bytes()


def test_a_wheel_installs_the_schemas_in_the_package() -> None:
    # schema_path looks in rra_tools/_schemas first: a wheel puts the committed schemas/ there.
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]["schemas"] == "rra_tools/_schemas"


def test_an_unknown_name_or_version_is_an_error_listing_those_there_are() -> None:
    done = rra("schema", "manifets")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("error: no published schema is named 'manifets'\n"
                           f"hint: the schemas are: {', '.join(SCHEMA_NAMES)}\n")
    assert "taskset" in SCHEMA_NAMES and "run-record" in SCHEMA_NAMES
    result = CliRunner().invoke(cli, ["schema", "manifest", "--version", "../1.0", "--path"])
    assert result.exit_code == 2
    assert "the schema 'manifest' has no version '../1.0'" in result.output
    assert f"its versions are: 1.0, 1.1, {SPEC_VERSION}" in result.output


def test_init_points_the_editor_at_the_installed_schema(tmp_path: Path) -> None:
    done = rra("init", str(tmp_path / "a"))
    assert done.returncode == 0, done.stderr
    first = (tmp_path / "a" / "rra.yaml").read_text(encoding="utf-8").splitlines()[0]
    prefix = "# yaml-language-server: $schema="
    assert first.startswith(prefix) and "://" not in first  # a file, not a URL nobody serves
    path = Path(first[len(prefix):])
    assert path.is_absolute() and path.is_file()
    assert path == Path(rra("schema", "--path").stdout.rstrip("\n"))


def test_a_path_with_a_space_is_written_as_a_file_uri(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The language server reads the value up to the first space.
    spaced = tmp_path / "my env" / "rra-manifest.schema.json"
    monkeypatch.setattr(init_module, "schema_path", lambda name: spaced)
    line = init_module.schema_modeline()
    assert line == f"# yaml-language-server: $schema={spaced.as_uri()}\n" and " " not in line.split("=", 1)[1]


def test_the_schemastore_entry_names_each_manifest_schema_by_its_id() -> None:
    entry = json.loads((SCHEMAS / "catalog" / "schemastore-entry.json").read_text(encoding="utf-8"))
    ids = {v: json.loads((SCHEMAS / f"rra-manifest-{v}.schema.json").read_text(encoding="utf-8"))["$id"]
           for v in schema_versions("manifest")}
    assert entry["versions"] == ids
    assert entry["url"] == ids[SPEC_VERSION]
    assert set(entry["fileMatch"]) == {"rra.yaml", "rra.yml", "rra.json"}
    assert {"name", "description"} <= set(entry)
