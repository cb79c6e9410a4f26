"""``rra discrepancy add``: record where the paper and its code disagree, and which one the
artifact follows and why, in the manifest's ``discrepancies``."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ExitStatus
from ..io.artifact import load_artifact
from .errors import BuilderLayerError
from .manifest_edit import edit_manifest

__all__ = ["DiscrepancyError", "DiscrepancyInput", "add_discrepancy"]

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class DiscrepancyError(BuilderLayerError):
    """The discrepancy cannot be recorded as given; nothing was written."""

    exit_status = ExitStatus.USAGE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


@dataclass(frozen=True)
class DiscrepancyInput:
    """What the paper says, what the code does, which one the artifact follows, why, the
    expected impact and the claims it bears on."""

    id: str
    paper_says: str
    code_does: str
    follows: str
    rationale: str
    impact: str
    claims: Sequence[str] = ()


def _check(item: DiscrepancyInput, data: Mapping[str, Any]) -> None:
    if _ID.fullmatch(item.id) is None:
        raise DiscrepancyError(f"discrepancy id {item.id!r} is not valid: use 1-128 ASCII letters, digits, '.', '_' "
                               "or '-', starting with a letter or digit")
    for option, value in (("--paper-says", item.paper_says), ("--code-does", item.code_does),
                          ("--rationale", item.rationale), ("--impact", item.impact)):
        if not value.strip():
            raise DiscrepancyError(f"discrepancy {item.id!r} has an empty {option[2:]}", f"give {option} TEXT")
    if item.follows not in ("paper", "code"):
        raise DiscrepancyError(f"follows {item.follows!r} is not 'paper' or 'code'")
    if any(isinstance(d, Mapping) and d.get("id") == item.id for d in data.get("discrepancies") or []):
        raise DiscrepancyError(f"a discrepancy with id {item.id!r} is already recorded", "choose another id")
    known = [c.get("id") for c in data.get("claims") or [] if isinstance(c, Mapping)]
    for claim in item.claims:
        if claim not in known:
            listed = ", ".join(repr(k) for k in known) or "none"
            raise DiscrepancyError(f"claim {claim!r} is not declared in the manifest (claims: {listed})")


def add_discrepancy(artifact_dir: str | Path, item: DiscrepancyInput) -> None:
    """Append the discrepancy to the manifest (comments kept, schema-checked, atomic)."""
    artifact = load_artifact(artifact_dir)
    _check(item, artifact.data)

    def mutate(document: Any) -> None:
        entry: dict[str, Any] = {"id": item.id, "paper_says": item.paper_says, "code_does": item.code_does,
                                 "follows": item.follows, "rationale": item.rationale, "impact": item.impact}
        if item.claims:
            entry["claims"] = list(dict.fromkeys(item.claims))
        if document.get("discrepancies") is None:
            document["discrepancies"] = []
        document["discrepancies"].append(entry)

    edit_manifest(artifact.manifest_path, mutate)
