"""Claims of another kind than number (RRA 1.2): their values fit the kind, and the reference
observations give the reported answer (spec/02-manifest.md#kinds)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ...answers import NUMBER, Answer, AnswerError, answer_mismatch, normalise_text, parse_answer
from ..context import Context, Finding, Pointer, strings
from . import check
from ._numbers import as_int

__all__: list[str] = []

_KIND_HINT = {
    "string": "write the answer as a string, e.g. value: \"AdamW\"",
    "set": "write the answer as a list of numbers and strings, e.g. value: [adam, sgd]",
    "list": "write the answer as a list of numbers and strings, e.g. value: [resnet-18, 0.91]",
}


def _answer(value: Any, kind: str, pointer: Pointer) -> tuple[Answer | None, Finding | None]:
    """The answer ``value`` gives as one of ``kind``, or the RRA514 finding that it does not (None
    and None for a value the schema refuses whatever the kind: RRA112)."""
    if isinstance(value, bool) or not isinstance(value, (str, list, int, float)) or (
            isinstance(value, list) and not all(isinstance(v, (str, int, float)) and not isinstance(v, bool)
                                                for v in value)):
        return None, None
    try:
        answer = parse_answer(value, kind)
    except AnswerError as exc:
        return None, Finding("RRA514", f"{exc}", pointer, _KIND_HINT[kind])
    if kind == "string" and isinstance(value, str) and not normalise_text(value):
        return None, Finding("RRA514", f"string answer {value!r} is empty once normalised", pointer,
                             "write the answer's text; punctuation and white space alone are removed")
    if isinstance(value, str) and kind == "string":
        return answer, None
    if not isinstance(value, list):
        # A number given for a string answer: the schema says string, so it is not one.
        return None, Finding("RRA514", f"{value!r} is a number, not a string (kind string)", pointer,
                             _KIND_HINT[kind])
    if not value:
        return None, Finding("RRA514", f"the {kind} is empty", pointer, "list at least one element")
    return answer, None


@check("RRA514", "RRA515")
def claim_kinds(ctx: Context) -> Iterator[Finding]:
    """Reported and observed values of a string, set or list claim have the shape of its kind and
    give its reported answer (a number claim's values are numbers by the schema: RRA112)."""
    explained: set[str] | None = None
    for i, claim in ctx.items("claims"):
        kind = claim.get("kind", NUMBER)
        if kind not in ("string", "set", "list", NUMBER):
            continue  # the schema layer reports an unknown kind (RRA113)
        if kind == NUMBER:
            continue  # the schema says a number claim's values are numbers (RRA112)
        reported = claim.get("reported")
        reference = claim.get("reference")
        observations = reference.get("observations") if isinstance(reference, Mapping) else None
        expected: Answer | None = None
        if isinstance(reported, Mapping) and "value" in reported:
            expected, problem = _answer(reported["value"], kind, ("claims", i, "reported", "value"))
            if problem is not None:
                yield problem
        if isinstance(reference, Mapping) and "stability" in reference:
            yield Finding("RRA514", f"a claim of kind {kind} has no stability class (it has no interval)",
                          ("claims", i, "reference", "stability"), "remove stability", at_key=True)
        precision = as_int(reported.get("precision")) if isinstance(reported, Mapping) else None
        if not isinstance(observations, list):
            continue
        for j, obs in enumerate(observations):
            if not isinstance(obs, Mapping) or "value" not in obs:
                continue
            pointer = ("claims", i, "reference", "observations", j, "value")
            got, problem = _answer(obs["value"], kind, pointer)
            if problem is not None:
                yield problem
                continue
            if expected is None or got is None:
                continue
            why = answer_mismatch(kind, expected, got, max(precision or 0, 0))
            if why is None:
                continue
            if explained is None:
                explained = {ref for _, d in ctx.items("discrepancies") for _, ref in strings(d.get("claims"))}
            if claim.get("id") in explained:
                continue
            yield Finding("RRA515", f"observation {j} does not give the reported answer: {why}", pointer,
                          "record a discrepancy that lists this claim, or check the observation")
