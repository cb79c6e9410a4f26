"""Generate the published JSON Schemas (draft 2020-12) from the pydantic models."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from .. import FORMAT_VERSIONS
from .vocab import SCHEMA_BASE_URL

__all__ = ["SCHEMA_BASE_URL", "generated_schemas", "render_schema", "schema_for"]

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _without_nulls(value: Any) -> Any:
    # A default object lists only the fields that have a value: optional fields are omitted.
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


class _RRASchemaGenerator(GenerateJsonSchema):
    """pydantic's generator, adjusted so the schema says what the standard says."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        # Optional fields are omitted, never null: the standard has no null values.
        return self.generate_inner(schema["schema"])

    #: State the defaults of fields built with default_factory (see get_default_value).
    factory_defaults = True

    def get_default_value(self, schema: core_schema.WithDefaultSchema) -> Any:
        # pydantic leaves out the default of a field built with default_factory ([] for a list,
        # Evidence() for evidence); the spec states it, so the schema states it too.
        factory = schema.get("default_factory")
        if self.factory_defaults and factory is not None and not schema.get("default_factory_takes_data"):
            return factory()  # type: ignore[call-arg]
        return super().get_default_value(schema)

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        value = super().default_schema(schema)
        if value.get("default", 0) is None:
            del value["default"]
        elif "default" in value:
            value["default"] = _without_nulls(value["default"])
        return value

    def dict_schema(self, schema: core_schema.DictSchema) -> JsonSchemaValue:
        value = super().dict_schema(schema)
        # pydantic emits patternProperties for constrained keys, which leaves other keys open;
        # the standard means "every key matches", which is propertyNames.
        patterns = value.pop("patternProperties", None)
        if patterns:
            ((pattern, item),) = patterns.items()
            value["propertyNames"] = {"pattern": pattern}
            value["additionalProperties"] = item
        return value


class _FirstReleaseGenerator(_RRASchemaGenerator):
    """The generator of the formats still at their first release, 1.0: those were published
    without the defaults of default_factory fields, and a published schema does not change."""

    factory_defaults = False


def schema_for(model: type[BaseModel], name: str) -> dict[str, Any]:
    """Return the JSON Schema of ``model`` with the ``$schema`` and ``$id`` of ``name``."""
    generator = _FirstReleaseGenerator if FORMAT_VERSIONS[name] == "1.0" else _RRASchemaGenerator
    body = model.model_json_schema(schema_generator=generator, mode="validation")
    return {
        "$schema": DIALECT,
        "$id": f"{SCHEMA_BASE_URL}/{FORMAT_VERSIONS[name]}/{name}.schema.json",
        **body,
    }


def render_schema(schema: dict[str, Any]) -> str:
    """Serialise a schema the way it is committed: sorted keys, two-space indent, final newline."""
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def generated_schemas() -> dict[str, str]:
    """Map each published schema's file name to its generated text: the current version of each
    format. Released versions stay committed as they were (frozen), and are not generated."""
    from .agent import AgentAnswer, AgentRequest
    from .audit_labels import AuditLabels
    from .bench_cost import ReviewTime
    from .bench_report import BenchReport
    from .bench_results import BenchResults
    from .conformance import CaseFile
    from .manifest import Manifest
    from .packet import PacketSet
    from .report import Report
    from .review_report import ReviewReport
    from .run_record import RunRecord
    from .submission import Submission
    from .taskset import TaskReferences, TaskSet

    out: dict[str, str] = {}
    models: tuple[tuple[type[BaseModel], str], ...] = (
        (Manifest, "manifest"), (Report, "report"), (CaseFile, "conformance"),
        (RunRecord, "run-record"), (TaskSet, "taskset"), (BenchResults, "bench-results"),
        (TaskReferences, "bench-references"), (Submission, "submission"), (ReviewReport, "review"),
        (BenchReport, "bench-report"), (AgentRequest, "agent-request"), (AgentAnswer, "agent-answer"),
        (ReviewTime, "review-time"), (AuditLabels, "audit-labels"), (PacketSet, "packet-set"))
    for model, name in models:
        out[f"rra-{name}-{FORMAT_VERSIONS[name]}.schema.json"] = render_schema(schema_for(model, name))
    return out
