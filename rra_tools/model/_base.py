"""The base every RRA document model derives from: closed objects that admit ``x-*`` extensions."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

__all__ = ["EXTENSION_PATTERN", "INT_MAX", "INT_MIN", "VISIBLE", "Id", "RelPath", "RRAModel", "Sha256", "added"]

#: Keys matching this pattern are extensions: any object may carry them and tools ignore them.
EXTENSION_PATTERN = r"^x-"

#: One character that is neither whitespace nor a control character. Spelled out rather than
#: ``\S`` because ``\s`` differs between regex dialects (Python counts U+001C-U+001F and U+0085
#: as space, ECMA-262 counts U+FEFF): every JSON Schema implementation must agree on our patterns.
#: For the same reason patterns say ``[0-9]``, not ``\d`` (which is Unicode-aware in Python).
VISIBLE = r"[^\s\x00-\x1f\x7f-\x9f\ufeff]"


#: Bounds of every integer a manifest may carry (spec/02-manifest.md#numbers): signed 64-bit.
INT_MIN, INT_MAX = -(2**63), 2**63 - 1


def added(version: str) -> dict[str, Any]:
    """The ``json_schema_extra`` of a field added in ``version`` of the standard: the schema marks
    it ``x-rra-added``, and a manifest declaring an older version that uses it is RRA102."""
    return {"x-rra-added": version}


def _close_with_extensions(schema: dict[str, Any], cls: type[Any]) -> None:
    # pydantic renders extra="allow" as an open object; the standard is closed except for x-* keys.
    schema["additionalProperties"] = False
    schema["patternProperties"] = {EXTENSION_PATTERN: {}}
    # A field that 1.0 required and a later minor version lets another field replace: the object
    # needs one of them (a minor version may not make a field required, so the alternative is
    # spelled as anyOf, and a 1.0 manifest keeps meaning what it meant).
    alternatives: tuple[dict[str, Any], ...] = getattr(cls, "_rra_any_of", ())
    if alternatives:
        schema["anyOf"] = [dict(a) for a in alternatives]


class RRAModel(BaseModel):
    """A closed object of the standard; unknown keys are errors unless they start with ``x-``."""

    model_config = ConfigDict(
        extra="allow",
        frozen=True,
        use_enum_values=True,
        json_schema_extra=_close_with_extensions,
        defer_build=True,
    )

    @model_validator(mode="after")
    def _only_extensions_extra(self) -> RRAModel:
        extra = self.__pydantic_extra__
        if not extra:
            return self  # the common case, and the check runs for every object of a large file
        unknown = sorted(k for k in extra if not k.startswith("x-"))
        if unknown:
            raise ValueError(f"unknown field(s) {unknown!r}; extensions must start with 'x-'")
        return self


Id = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"),
    Field(description="An identifier: ASCII letters, digits, '.', '_' or '-', 1-128 characters, "
          "starting with a letter or digit. Unique within its list."),
]

RelPath = Annotated[
    str,
    StringConstraints(min_length=1, max_length=4096),
    Field(description="A POSIX path relative to the artifact root. It must not be absolute, "
          "contain '..' or resolve (through symlinks) outside the root."),
]

Sha256 = Annotated[
    str,
    StringConstraints(pattern=r"^[0-9a-f]{64}$"),
    Field(description="A SHA-256 digest as 64 lower-case hexadecimal digits."),
]
