"""The hand-over: what every coding agent is told, one versioned template for all of them.

The same written instructions go to every agent under a condition, so that agents differ only
in themselves (DESIGN.md, "Cells"). The template is ``template-<version>.md`` in this folder; it
is rendered per cell from the task description the benchmark writes into the workspace
(``task.json``) and the cell's budgets, and the rendered text is the agent's prompt, byte for
byte. Its SHA-256 and the template's version go into the cell's result
(:class:`~rra_tools.model.cell.HandoverRecord`); ``rra bench prompt`` prints the same text.

A change of wording is a new template version (a new file): results name the version, and two
benchmarks compare only under the same one.

>>> text = render_handover(_EXAMPLE, {"wall_clock_s": 600, "cost_usd": 2.5}).text
>>> "table 1, row ours." in text, "- Model cost: 2.5 USD" in text
(True, True)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import Any

from ...model.taskset import condition_parts

__all__ = ["BUILD_TEMPLATE_VERSION", "TEMPLATE_VERSION", "Handover", "render_build_handover", "render_handover",
           "template_text"]

#: The version of the template in use (the file ``template-<version>.md``).
TEMPLATE_VERSION = "1.0"
#: The version of the builder's hand-over in use (the file ``build-<version>.md``): what an
#: agent adapter answering one decision of ``rra build`` is told.
BUILD_TEMPLATE_VERSION = "1.0"


@dataclass(frozen=True)
class Handover:
    """A rendered hand-over: the text, the template's version and the text's SHA-256 (UTF-8)."""

    text: str
    version: str
    sha256: str


def template_text(version: str = TEMPLATE_VERSION, kind: str = "template") -> str:
    """The template of ``version`` as shipped in the package (``kind`` 'build': the builder's)."""
    return resources.files(__package__).joinpath(f"{kind}-{version}.md").read_text(encoding="utf-8")


def render_build_handover(request: Mapping[str, Any], request_path: str,
                          version: str = BUILD_TEMPLATE_VERSION) -> Handover:
    """The hand-over of one decision of ``rra build``: ``request`` is the request file's content
    (rra-agent-request-1.0) and ``request_path`` where it is; the answer's schema is the one the
    builder validates with.

    >>> text = render_build_handover({"id": "claim-1", "kind": "claim", "step": "claims", "question": "Q?",
    ...     "manifest": "rra.yaml", "answer": "/a/claim-1.answer.json"}, "/a/claim-1.request.json").text
    >>> "Write your answer as one JSON document to `/a/claim-1.answer.json`" in text
    True
    """
    from ...model.agent import AgentAnswer

    schema = json.dumps(AgentAnswer.model_json_schema(), indent=1, sort_keys=True)
    text = Template(template_text(version, "build")).substitute(
        ident=request["id"], manifest=request["manifest"], step=request["step"], kind=request["kind"],
        question=request["question"], request_path=request_path, answer_path=request["answer"],
        request=json.dumps(request, indent=2, ensure_ascii=False), schema=schema)
    return Handover(text, version, hashlib.sha256(text.encode("utf-8")).hexdigest())


def _code(description: Mapping[str, Any]) -> str:
    condition = str(description["condition"])
    parts = condition_parts(condition)
    launcher = description.get("launcher")
    if parts is None:
        return ("The upstream code as its authors published it, at the commit the paper used: no RRA manifest and "
                "no run records. Run the experiment with `rra run` so that a run record is kept: describe it in an "
                "`rra.json` manifest first (`rra init` starts one; `rra validate` checks it).")
    run = (f"Run the claim's launcher with `rra run {launcher}`: it records the run under `runs/{launcher}/`."
           if launcher else "Its launchers were removed: describe how to run it in the manifest's `launchers`, then "
           "run it with `rra run LAUNCHER` so that a run record is kept.")
    if not parts:
        return ("The refined artifact (an RRA): `rra.json` describes the code, its environment, its launchers and "
                f"its claims, and `REPRODUCE.md` (when present) is its guide. {run}")
    removed = ", ".join(parts)
    return (f"The refined artifact (an RRA) without its {removed}: `rra.json` describes what is left. {run}")


def _budgets(limits: Mapping[str, Any]) -> str:
    lines = [f"- Wall clock: {float(limits['wall_clock_s']):g} s for the whole attempt."]
    if limits.get("cost_usd") is not None:
        lines.append(f"- Model cost: {float(limits['cost_usd']):g} USD, priced from the provider's usage.")
    if limits.get("tokens") is not None:
        lines.append(f"- Model tokens: {int(limits['tokens'])} (input, cached and output together).")
    if limits.get("calls") is not None:
        lines.append(f"- Model calls: {int(limits['calls'])}.")
    return "\n".join(lines)


def _aggregate(claim: Mapping[str, Any]) -> str:
    aggregate = claim.get("aggregate") or "mean"
    if aggregate == "single":
        return "The paper's number comes from a single run: submit your run's value."
    return f"The paper's number is the {aggregate} over runs (seeds); submit the value of your run."


def render_handover(description: Mapping[str, Any], limits: Mapping[str, Any],
                    version: str = TEMPLATE_VERSION) -> Handover:
    """The hand-over of one cell: ``description`` is the task description of the workspace
    (``task.json``), ``limits`` the cell's budgets (``wall_clock_s``, and ``cost_usd``, ``tokens``,
    ``calls`` when set)."""
    claim = description["claim"]
    metric = claim["metric"]
    paper = description.get("paper") or {}
    location = ", ".join(f"{k} {v}" for k, v in (claim.get("paper_location") or {}).items()) or "(see the paper)"
    title = paper.get("title")
    shown = f"`paper/{paper['file']}`" if paper.get("file") else "not given as a file"
    text = Template(template_text(version)).substitute(
        task=description["task"], paper=f"{title!r} ({shown})" if title else shown, claim=claim["id"],
        metric=metric["name"], unit=metric.get("unit") or "none", direction=metric.get("direction", "higher"),
        location=location, precision=claim.get("precision", 0), aggregate=_aggregate(claim),
        extract=json.dumps(description.get("extract") or {}, sort_keys=True), condition=description["condition"],
        code=_code(description), budgets=_budgets(limits))
    return Handover(text, version, hashlib.sha256(text.encode("utf-8")).hexdigest())


#: A task description as the benchmark writes it (for the doctest).
_EXAMPLE: dict[str, Any] = {
    "task": "p/t1/var", "condition": "refined", "paper": {"title": "Thirteen Sixteenths", "file": "paper.txt"},
    "claim": {"id": "score", "metric": {"name": "score", "unit": "", "direction": "higher"},
              "paper_location": {"table": "1", "row": "ours"}, "precision": 4, "aggregate": "mean"},
    "extract": {"output": "m", "json_pointer": "/score"}, "launcher": "emit"}
