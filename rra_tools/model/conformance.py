"""Conformance case files: language-neutral data that pins down what "valid" means."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from ._base import RelPath, RRAModel

__all__ = ["AddedEntry", "Case", "CaseFile", "Expectation", "Layout", "LayoutEdit", "PatchOp", "Verdict"]

CaseId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]{0,127}$")]
Tag = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,63}$")]
Code = Annotated[str, StringConstraints(pattern=r"^RRA[0-9]{3}$")]


class Verdict(str, Enum):
    """Whether a conforming validator accepts the artifact."""

    VALID = "valid"
    INVALID = "invalid"


class Expectation(RRAModel):
    """What a conforming validator reports."""

    verdict: Verdict = Field(description="'valid' (no finding of severity error) or 'invalid'. Normative.")
    codes: list[Code] = Field(
        default_factory=list,
        description="The exact set of rule codes reported (errors and warnings; info excluded). "
        "Checked only under --strict-codes.",
    )
    info: list[Code] | None = Field(
        default=None,
        description="The exact set of rule codes reported with severity info, for a case about a finding that "
        "is information only. Checked only under --strict-codes, and only with an implementation that reports "
        "info findings (an RRA validation report, or 'info' in the short JSON form).",
    )


class PatchOp(RRAModel):
    """One RFC 6902 JSON Patch operation applied to the base manifest."""

    op: Literal["add", "remove", "replace"] = Field(description="'add', 'remove' or 'replace'.")
    path: Annotated[str, StringConstraints(pattern=r"^(/([^~/]|~[01])*)*$")] = Field(
        description="RFC 6901 JSON pointer into the manifest."
    )
    value: Any = Field(default=None, description="New value for 'add' and 'replace'.")


class AddedEntry(RRAModel):
    """A tar entry written as is (any name, type or target) into a layer of a packed-artifact case."""

    layer: Annotated[str, StringConstraints(pattern=r"^(manifest|code|environment|docs|records|data:[^:]+)$")] = Field(
        description="The layer it goes into: a role, or 'data:<id>' for a data source's layer. The layer is "
        "created (at the place of its role) when the artifact has none."
    )
    name: Annotated[str, StringConstraints(min_length=1)] = Field(
        description="The entry's name, written verbatim: it may be absolute or hold '..'."
    )
    type: Literal["file", "dir", "symlink", "hardlink", "fifo", "char", "block"] = Field(
        default="file", description="The entry's type."
    )
    text: str = Field(default="", description="Content of a 'file' entry, as UTF-8.")
    target: str = Field(default="", description="Link target of a 'symlink' or 'hardlink' entry, verbatim.")
    mode: Annotated[int, Field(ge=0, le=0o7777)] = Field(default=0o644, description="Mode bits in the header.")


class LayoutEdit(RRAModel):
    """A change made to the written image layout, after every digest was computed."""

    op: Literal["remove", "append", "flip", "write"] = Field(
        description="'remove' the file, 'append' text to it, 'flip' the lowest bit of its middle byte "
        "(at offset size // 2), or 'write' text as its whole content."
    )
    target: Annotated[str, StringConstraints(pattern=r"^(oci-layout|index\.json|manifest|config|layer:[0-9]+)$")] = Field(
        description="'oci-layout', 'index.json', or the blob of the image 'manifest', its 'config' or "
        "'layer:N' (0-based, in the image manifest's order)."
    )
    text: str = Field(default="", description="Text (UTF-8) for 'append' and 'write'.")


class Layout(RRAModel):
    """A packed-artifact case: the case's artifact packed into an OCI image layout, then altered."""

    compression: Literal["none", "gzip", "zstd"] = Field(default="gzip", description="How every layer is stored.")
    ref_name: str = Field(default="v1", description="The ref name of the image manifest in index.json.")
    select: str | None = Field(
        default=None, description="Ask for this ref name: the target is 'oci-layout:DIR:SELECT' instead of 'oci-layout:DIR'."
    )
    extra_entries: list[AddedEntry] = Field(
        default_factory=list, description="Tar entries appended, in order, after the files of their layer."
    )
    config_patch: list[PatchOp] = Field(default_factory=list, description="JSON Patch applied to the config.")
    manifest_patch: list[PatchOp] = Field(
        default_factory=list, description="JSON Patch applied to the image manifest (after its config descriptor is set)."
    )
    index_patch: list[PatchOp] = Field(
        default_factory=list, description="JSON Patch applied to index.json (after the manifest's descriptor is set)."
    )
    tamper: list[LayoutEdit] = Field(default_factory=list, description="Changes to the written files, in order.")


class Case(RRAModel):
    """One conformance case: an artifact and the verdict a conforming validator gives it."""

    id: CaseId = Field(description="Unique id, lower-case, no spaces.")
    description: Annotated[str, StringConstraints(min_length=1)] = Field(
        description="Present-tense statement, e.g. 'a launcher without argv is invalid'."
    )
    sections: list[Annotated[str, StringConstraints(pattern=r"^spec/[0-9a-z-]+\.md(#[a-z0-9-]+)?$")]] = Field(
        min_length=1, description="Spec sections the case exercises, e.g. 'spec/02-manifest.md#launchers'."
    )
    tags: list[Tag] = Field(
        min_length=1,
        description="'required' for core behaviour, one tag per optional feature, and 'schema' when the "
        "JSON Schema alone decides the verdict.",
    )
    base: Annotated[str, StringConstraints(pattern=r"^[a-z0-9-]+$")] | None = Field(
        default=None, description="Base artifact under bases/<name>/ the case starts from."
    )
    patch: list[PatchOp] = Field(default_factory=list, description="JSON Patch applied to the base manifest.")
    manifest: dict[str, Any] | None = Field(default=None, description="A complete manifest (instead of base).")
    manifest_text: str | None = Field(
        default=None, description="The manifest file's exact text, for cases about reading files."
    )
    manifest_bytes_hex: Annotated[str, StringConstraints(pattern=r"^([0-9a-f]{2})*$")] | None = Field(
        default=None, description="The manifest file's exact bytes in hex, for encoding cases."
    )
    manifest_name: Annotated[str, StringConstraints(pattern=r"^rra\.(yaml|yml|json)$")] = Field(
        default="rra.yaml", description="File name of the manifest."
    )
    files: dict[RelPath, str] = Field(default_factory=dict, description="Text files written into the artifact.")
    symlinks: dict[RelPath, str] = Field(
        default_factory=dict, description="Symbolic links created in the artifact: path -> target."
    )
    no_manifest: bool = Field(default=False, description="Write no manifest file at all.")
    layout: Layout | None = Field(
        default=None, description="Pack the artifact into an OCI image layout and run the implementation on "
        "'oci-layout:DIR' (packaging cases; see the suite README)."
    )
    taskset: dict[str, Any] | None = Field(
        default=None, description="A benchmark task set (spec/07-task-sets.md), written as taskset.json into the "
        "artifact directory; the implementation checks it, as 'taskset:PATH' (task-set cases; its tasks name the "
        "case's artifact as '.')."
    )
    taskset_text: str | None = Field(
        default=None, description="The task set file's exact text (UTF-8), written as taskset.json instead of "
        "'taskset' (task-set cases about reading the file)."
    )
    references: dict[str, Any] | None = Field(
        default=None, description="The task set's private references file, written as references.json beside "
        "taskset.json and checked with it (only with taskset or taskset_text)."
    )
    expect: Expectation


class CaseFile(RRAModel):
    """A file of conformance cases."""

    description: Annotated[str, StringConstraints(min_length=1)] = Field(description="What the file covers.")
    cases: list[Case] = Field(min_length=1)
