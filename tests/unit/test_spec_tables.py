"""The spec's field tables follow the models: rows, required flags and defaults are generated."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ruamel.yaml import YAML

import pytest
from pydantic import BaseModel, Field

from rra_tools.model.spec_tables import field_table, manifest_models, with_field_tables

ROOT = Path(__file__).resolve().parents[2]


class _Limits(BaseModel):
    runs: int = 1
    label: str | None = None


class _Thing(BaseModel):
    name: str = Field(description="Name of the thing.")
    tags: list[str] = Field(default_factory=list, description="Tags.")
    note: str | None = Field(default=None, description="A note.")
    limits: _Limits = Field(default_factory=_Limits, description="Limits.")
    added: bool = Field(default=False, description="A field the table does not have yet.")


WRITTEN = """\
| Field | Type | Required | Description | Rules |
|---|---|---|---|---|
| `name` | `Text` | no | The thing's name, as `a\\|b` shows. | `RRA114` |
| `tags` | list of string | yes | Labels. | |
| `gone` | string | no | A field the model no longer has. | |
| `note` | string | no | Free text. | |
| `limits` | `Limits` | no, `{}` | Bounds. | `RRA114` |
"""


def test_rows_follow_the_model_and_prose_cells_are_kept() -> None:
    assert field_table(_Thing, WRITTEN) == """\
| Field | Type | Required | Description | Rules |
|---|---|---|---|---|
| `name` | `Text` | yes | The thing's name, as `a\\|b` shows. | `RRA114` |
| `tags` | list of string | no, `[]` | Labels. | |
| `note` | string | no | Free text. | |
| `limits` | `Limits` | no, `{runs: 1}` | Bounds. | `RRA114` |
| `added` | boolean | no, `false` | A field the table does not have yet. | |
"""


def test_a_marker_naming_no_model_is_refused() -> None:
    text = "<!-- generated: fields Nothing -->\n| x |\n<!-- end generated: fields Nothing -->\n"
    with pytest.raises(ValueError, match=r"^the generated table 'fields Nothing' names no model of the manifest$"):
        with_field_tables(text)


def test_every_object_of_the_manifest_has_a_generated_table() -> None:
    spec = (ROOT / "spec" / "02-manifest.md").read_text(encoding="utf-8")
    tables = re.findall(r"<!-- generated: fields (\w+) -->", spec)
    assert len(tables) == len(set(tables)), "a model has two tables"
    missing = sorted(set(manifest_models()) - set(tables))
    assert not missing, (f"spec/02-manifest.md has no field table for {missing}: put '<!-- generated: fields NAME -->' "
                         "and '<!-- end generated: fields NAME -->' where the object is described, then run "
                         "'python -m rra_tools._generate'")


def test_the_tables_state_the_defaults_of_the_current_schema() -> None:
    from rra_tools import SPEC_VERSION

    schema = json.loads((ROOT / "schemas" / f"rra-manifest-{SPEC_VERSION}.schema.json").read_text(encoding="utf-8"))
    spec = (ROOT / "spec" / "02-manifest.md").read_text(encoding="utf-8")
    stated = {}
    for name, body in re.findall(r"<!-- generated: fields (\w+) -->\n(.*?)<!-- end generated", spec, re.S):
        for field, required in re.findall(r"^\| `([^`]+)` \|[^|]*\| ([^|]+) \|", body, re.M):
            stated[name, field] = required.strip()
    compared = 0
    for name, definition in [("Manifest", schema), *schema["$defs"].items()]:
        for field, prop in definition.get("properties", {}).items():
            if (name, field) in stated:
                has_default = "default" in prop
                if has_default or stated[name, field].startswith("no, "):
                    # Compared as data: the schema's JSON sorts object keys, the table keeps the
                    # model's field order.
                    table = stated[name, field]
                    assert has_default and table.startswith("no, `") and table.endswith("`"), (name, field, table)
                    assert YAML(typ="safe").load(table[len("no, `"):-1]) == prop["default"], (name, field, table)
                    compared += 1
    assert compared >= 20
