"""Generates :mod:`rra_tools.model.manifest_view`, the run path's plain view of a manifest, from the models.

``rra run`` must not import pydantic (about 0.2 s per run), so it reads the manifest into plain
record classes (slotted, see :mod:`rra_tools.plain`). Their fields, types and defaults are derived here from the pydantic models in
:mod:`rra_tools.model`; only *which* fields the run path needs is written down (:data:`VIEW`).
``python -m rra_tools._generate`` writes the module and ``--check`` fails when it no longer
matches the models.
"""

from __future__ import annotations

import builtins
import enum
import json
import re
import types
import typing
from typing import Any, Literal, Union

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

__all__ = ["VIEW", "spec_module"]


def _view() -> list[tuple[str, type[BaseModel], tuple[str, ...]]]:
    from .claims import (Claim, CsvExtract, Extract, Metric, Observation, Reference, RegexExtract,
                                Reported)
    from .environment import Environment, Lock
    from .launchers import Launcher, Output, Parameter, Resources
    from .manifest import Manifest
    from .review import Evidence

    # (name of the plain class, model, the fields the run path reads), leaves first.
    return [
        ("ParameterSpec", Parameter, ("type", "default", "choices", "secret")),
        ("ResourcesSpec", Resources, ("timeout_s", "expected_runtime_s", "gpus", "cpus", "ram_gib")),
        ("OutputSpec", Output, ("id", "path", "format")),
        ("LauncherSpec", Launcher, ("id", "argv", "resources", "cwd", "env", "parameters", "stochastic", "seeds",
                                    "depends_on", "outputs", "repeats", "secrets")),
        ("CsvSpec", CsvExtract, ("column", "row_index", "where")),
        ("RegexSpec", RegexExtract, ("pattern", "group", "occurrence")),
        ("ExtractSpec", Extract, ("output", "json_pointer", "csv", "regex", "scale", "stream")),
        ("MetricSpec", Metric, ("name", "unit", "direction")),
        ("ReportedSpec", Reported, ("value", "precision")),
        ("ObservationSpec", Observation, ("value", "seed", "repeat")),
        ("ReferenceSpec", Reference, ("observations",)),
        ("ClaimSpec", Claim, ("id", "launcher", "metric", "extract", "reported", "reference", "aggregate", "kind")),
        ("LockSpec", Lock, ("path", "format", "sha256")),
        ("EnvironmentSpec", Environment, ("lock", "image")),
        ("EvidenceSpec", Evidence, ("run_records",)),
        ("ManifestSpec", Manifest, ("id", "launchers", "claims", "environment", "evidence", "levels")),
    ]


#: The plain classes and the model fields each one carries (evaluated on use: it imports the models).
VIEW = _view


def spec_module() -> str:
    """The text of ``rra_tools/model/manifest_view.py``."""
    view = _view()
    names = {model: name for name, model, _ in view}
    classes: list[str] = []
    readers: list[str] = []
    for name, model, fields in view:
        required: list[str] = []
        optional: list[str] = []
        args: list[str] = []
        for field_name in fields:
            info = model.model_fields[field_name]
            annotation = _type_text(info.annotation, names)
            default = _default(info, names)
            if default is None:
                required.append(f"{field_name}: {annotation}")
                access = f'd["{field_name}"]'
                args.append(f"        {field_name}={_convert(info.annotation, access, names)},")
            else:
                optional.append(f"{field_name}: {annotation} = {default[0]}")
                args.append(f"        {field_name}={_convert_optional(info.annotation, field_name, default[1], names)},")
        doc = (model.__doc__ or "").strip().splitlines()[0]
        order = [text.split(":", 1)[0] for text in required + optional]
        # A field named like a builtin (id, type, format) is the model's name for it.
        shadows = "  # noqa: A002" if any(hasattr(builtins, field) for field in order) else ""
        slots = ", ".join(f'"{field}"' for field in order) + ("," if len(order) == 1 else "")
        classes.append(f"class {name}(Frozen):\n    \"\"\"{doc}\"\"\"\n\n    __slots__ = ({slots})\n\n"
                       f"    def __init__(self, {', '.join(required + optional)}) -> None:{shadows}\n"
                       + "".join(f"        self.{field} = {field}\n" for field in order))
        readers.append(f"def {_reader(name)}(d: Mapping[str, Any]) -> {name}:\n    return {name}(\n" + "\n".join(args)
                       + "\n    )\n")
    exported = sorted([name for name, _, _ in view] + ["ParamValue", "read_manifest"])
    return _HEADER.format(all="\n".join(f'    "{n}",' for n in exported)) + "\n\n".join(classes) + "\n\n" + \
        "\n\n".join(readers) + _FOOTER


def _reader(name: str) -> str:
    """``_launcher_spec`` for ``LauncherSpec``: the function reading that class from a document."""
    return "_" + re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _unwrap(annotation: Any) -> Any:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _optional_inner(annotation: Any) -> Any | None:
    """X for ``X | None``; None when the annotation is not optional."""
    annotation = _unwrap(annotation)
    if typing.get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) < len(typing.get_args(annotation)):
            return args[0] if len(args) == 1 else Union[tuple(args)]
    return None


def _type_text(annotation: Any, names: dict[type[BaseModel], str]) -> str:
    annotation = _unwrap(annotation)
    inner = _optional_inner(annotation)
    if inner is not None:
        return f"{_type_text(inner, names)} | None"
    origin = typing.get_origin(annotation)
    if origin is list:
        return f"list[{_type_text(typing.get_args(annotation)[0], names)}]"
    if origin is dict:
        key, value = typing.get_args(annotation)
        return f"dict[{_type_text(key, names)}, {_type_text(value, names)}]"
    if origin in (Union, types.UnionType):
        parts = {_unwrap(a) for a in typing.get_args(annotation)}
        if parts == {int, float, str, bool}:
            return "ParamValue"
        if annotation == _claim_value():
            return "float"  # the run path reads numbers: see _number_of in the generated module
        raise TypeError(f"no plain type for {annotation!r}")
    if origin is Literal:
        return "str"
    if isinstance(annotation, type):
        if issubclass(annotation, BaseModel):
            return names[annotation]
        if issubclass(annotation, enum.Enum) or annotation is str:
            return "str"  # enum values are read as the plain strings the document holds
        if annotation in (int, float, bool):
            return annotation.__name__
    raise TypeError(f"no plain type for {annotation!r}")


def _claim_value() -> Any:
    from .claims import ClaimValue

    return ClaimValue


def _default(info: Any, names: dict[type[BaseModel], str]) -> tuple[str, str] | None:
    """(default as written in the class, default as read from a document) or None when required."""
    if info.default_factory is not None:
        value = info.default_factory()
    elif info.default is PydanticUndefined:
        return None
    else:
        value = info.default
    if isinstance(value, BaseModel):
        plain = names[type(value)]
        if value != type(value).model_validate({}):
            raise ValueError(f"the default of {plain} must be the model with its own defaults")
        return f"{plain}()", "{}"
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, str):
        return json.dumps(value), json.dumps(value)
    if isinstance(value, (int, float, bool, list, dict)) or value is None:
        return repr(value), repr(value)
    raise TypeError(f"no plain default for {value!r}")


def _convert(annotation: Any, expr: str, names: dict[type[BaseModel], str]) -> str:
    """Python source converting the document value ``expr`` (written once) to the plain type."""
    annotation = _unwrap(annotation)
    inner = _optional_inner(annotation)
    if inner is not None:
        converted = _convert(inner, "v", names)
        return expr if converted == "v" else f"(None if (v := {expr}) is None else {converted})"
    origin = typing.get_origin(annotation)
    if origin is list:
        item = _convert(typing.get_args(annotation)[0], "item", names)
        return f"list({expr})" if item == "item" else f"[{item} for item in {expr}]"
    if origin is dict:
        value = _convert(typing.get_args(annotation)[1], "value", names)
        return f"dict({expr})" if value == "value" else f"{{key: {value} for key, value in {expr}.items()}}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"{_reader(names[annotation])}({expr})"
    if annotation == _claim_value():
        return f"_number_of({expr})"
    if annotation is float:
        # The models declare these fields float: an integer in the document reads as a float.
        return f"float({expr})"
    if annotation is int:
        # An integer may be written 4.0 (spec/02-manifest.md#numbers): a seed 4.0 is seed 4.
        return f"int({expr})"
    return expr


def _convert_optional(annotation: Any, field_name: str, default: str, names: dict[type[BaseModel], str]) -> str:
    return _convert(annotation, f'd.get("{field_name}", {default})', names)


_HEADER = '''"""The parts of a manifest that running needs, as plain record classes.

GENERATED by ``python -m rra_tools._generate`` from the pydantic models in ``rra_tools.model``
(the fields are chosen in ``rra_tools/model/view_source.py``); do not edit by hand.

``rra run`` starts a process for every launcher; importing pydantic and building the manifest
models would cost it about 0.2 s each time. The run path therefore checks the manifest against
the published JSON Schema with the compiled validator and reads it into these classes, whose
attribute names, types and defaults are those of the models. (Slotted classes with an
explicit ``__init__`` (:class:`rra_tools.plain.Frozen`), rather than dataclasses or NamedTuples:
they cost next to nothing to create at import, and need neither ``dataclasses`` nor ``typing``.
Their fields are never reassigned, and their list and dict defaults are shared and never
mutated: :func:`read_manifest` always passes fresh values.)
"""

from __future__ import annotations

from collections.abc import Mapping

from ..plain import Frozen

TYPE_CHECKING = False  # typing costs ~2 ms at import; mypy reads this name as true
if TYPE_CHECKING:
    from typing import Any

__all__ = [
{all}
]

ParamValue = int | float | str | bool


'''

_FOOTER = '''

def _number_of(value: Any) -> float:
    """A claim's reported or observed value as the run path reads it: the number, or NaN for the
    string or list of a claim of another kind (spec/02-manifest.md#kinds). The run path and the
    intervals handle numbers only; tools that match answers read them from the manifest's data
    with rra_tools.answers."""
    return value if type(value) is float else float(value) if isinstance(value, (int, float)) else float("nan")


def read_manifest(data: Mapping[str, Any]) -> ManifestSpec:
    """The run-relevant parts of ``data``, a manifest that conforms to the published schema."""
    return _manifest_spec(data)
'''
