"""The field tables of ``spec/02-manifest.md``, kept in step with the models.

Each table of an object's fields sits between ``<!-- generated: fields NAME -->`` and
``<!-- end generated: fields NAME -->``, NAME being the model (and schema definition) it
describes. The generator owns which rows there are, their order, the Field column and the
Required column (``yes``; ``no``; or ``no, `DEFAULT``` with the model's default). The Type,
Description and Rules cells are prose: they are kept as written, row by row. A field the table
lacks gets a row with the model's description (refine it by hand); a row whose field the model
no longer has is dropped. ``python -m rra_tools._generate --check`` reports a table that differs.

>>> flow_yaml({"run_records": "runs", "seeds": [0, 1], "strict": False})
'{run_records: runs, seeds: [0, 1], strict: false}'
"""

from __future__ import annotations

import re
import types
from collections.abc import Iterator
from enum import Enum
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from .manifest import Manifest

__all__ = ["field_table", "flow_yaml", "manifest_models", "with_field_tables"]

_HEADER = "| Field | Type | Required | Description | Rules |\n|---|---|---|---|---|\n"
_BLOCK = re.compile(r"(<!-- generated: fields (?P<name>\w+) -->\n)(?P<body>.*?)(<!-- end generated: fields (?P=name) -->)",
                    re.S)
# A cell boundary: a pipe that is not escaped (descriptions quote regexes such as `a\|b`).
_CELL = re.compile(r"(?<!\\)\|")


def _models_in(annotation: Any) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for arg in get_args(annotation):
        yield from _models_in(arg)


def manifest_models() -> dict[str, type[BaseModel]]:
    """Every object model reachable from the manifest, by name, the manifest first."""
    found: dict[str, type[BaseModel]] = {}
    pending: list[type[BaseModel]] = [Manifest]
    while pending:
        model = pending.pop(0)
        if model.__name__ in found:
            continue
        found[model.__name__] = model
        for info in model.model_fields.values():
            pending.extend(_models_in(info.annotation))
    return found


def flow_yaml(value: Any) -> str:
    """``value`` written as a YAML flow value, as the spec's tables write defaults."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Enum):
        return flow_yaml(value.value)
    if isinstance(value, BaseModel):
        return flow_yaml(value.model_dump(mode="json", exclude_none=True, by_alias=True))
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {flow_yaml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(flow_yaml(v) for v in value) + "]"
    return str(value)


def _required(info: FieldInfo, model: type[BaseModel] | None = None, name: str = "") -> str:
    if info.is_required():
        return "yes"
    # A field that one of the model's alternatives requires (e.g. extract needs output or stream).
    alternatives = [a.get("required", []) for a in getattr(model, "_rra_any_of", ())]
    if info.get_default(call_default_factory=True) is None and any(name in names for names in alternatives):
        others = [n for names in alternatives if name not in names for n in names]
        return "yes, unless " + " or ".join(f"`{n}`" for n in others)
    default = info.get_default(call_default_factory=True)
    return "no" if default is None else f"no, `{flow_yaml(default)}`"


def _type(annotation: Any) -> str:
    # Only for a row the table does not have yet; the author then words it like the others.
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        return _type(args[0]) if len(args) == 1 else "value"
    if origin in (list, tuple):
        return f"list of {_type(get_args(annotation)[0])}"
    if origin is not None and get_args(annotation):  # Annotated[...] and the like
        return _type(get_args(annotation)[0])
    if isinstance(annotation, type):
        if issubclass(annotation, BaseModel):
            return f"`{annotation.__name__}`"
        for kind, word in ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
                           (Enum, "string"), (dict, "mapping")):
            if issubclass(annotation, kind):
                return word
    return "value"


def _written_rows(body: str) -> dict[str, list[str]]:
    """The rows of a table as written: field name -> its Type, Description and Rules cells."""
    rows = {}
    for line in body.splitlines()[2:]:
        cells = [c.strip() for c in _CELL.split(line)[1:-1]]
        if len(cells) == 5:
            rows[cells[0].strip("`")] = [cells[1], cells[3], cells[4]]
    return rows


def field_table(model: type[BaseModel], written: str = "") -> str:
    """The Markdown table of ``model``'s fields, keeping the prose cells of the table ``written``."""
    rows = _written_rows(written) if written else {}
    lines = []
    for name, info in model.model_fields.items():
        key = info.alias or name
        kind, description, rules = rows.get(key) or [_type(info.annotation), info.description or "", ""]
        cells = [f"`{key}`", kind, _required(info, model, name), description, rules]
        lines.append("|" + "|".join(f" {cell} " if cell else " " for cell in cells) + "|")
    return _HEADER + "\n".join(lines) + "\n"


def with_field_tables(text: str) -> str:
    """``text`` (the manifest part of the spec) with every generated field table regenerated.

    ValueError when a marker names no model of the manifest.
    """
    models = manifest_models()

    def regenerate(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in models:
            raise ValueError(f"the generated table 'fields {name}' names no model of the manifest")
        return match[1] + field_table(models[name], match["body"]) + match[4]

    return _BLOCK.sub(regenerate, text)
