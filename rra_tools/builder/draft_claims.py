"""Candidate claims written into ``rra init``'s draft as claims.

A number in a results table (the README's, docs', or ``--paper``'s) says what the authors
reported: the metric (the column), the value as printed and its precision, and where it is. A
``print`` call that writes a labelled number says how a run shows it: a regular expression over
the launcher's standard output, and (the script it is in) which launcher. A table cell and a
printed metric with the same name become one claim with both.

What neither says is a ``"TODO: ..."`` placeholder that ``rra validate`` reports as RRA214: the
paper's table number, and the extraction when no print call matches. The claim's description is
one too, so that every drafted claim stays unfinished until someone confirms it (fills it in) or
removes it; ``rra build`` asks exactly that at its *claim* decision. The authors' printed value is
the claim's first reference observation (the schema needs one; runs add the others). Values the
schema needs but the repository does not state (the launcher when no print names it, the
metric's direction) are written as stated assumptions.

A printed metric that matches no table cell has no reported value, and a number in a PDF's table
line is not told apart from its neighbours: those stay candidates, printed but not written.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from .detect.findings import Finding

__all__ = ["DraftedClaims", "draft_claims"]

#: The extraction of a claim whose value no print call shows: schema-valid (a pattern with one
#: group, in the portable subset) and a placeholder (RRA214).
EXTRACT_TODO = "TODO: a regular expression whose group 1 captures the value, e.g. RMSE: ([-+]?[0-9.]+)"
#: Words in a metric's name that say lower is better.
_LOWER = re.compile(r"(?<![A-Za-z])(error|err|loss|rmse|mse|mae|mape|cer|wer|perplexity|ppl|fid|lpips|time|"
                    r"latency|distance|nll|bpc|bpd)", re.IGNORECASE)
_SLUG = re.compile(r"[^A-Za-z0-9]+")
#: Words that name a metric: a column headed by one is the metric; one headed by anything else
#: (a data set, a split: 'MovieLens-100K') leaves the metric's name a placeholder.
_METRIC = re.compile(
    r"\b(acc|accuracy|f1|precision|recall|auc|roc|map|ndcg|mrr|hits|rmse|mse|mae|mape|r2|r²|bleu|rouge\w*|"
    r"meteor|cer|wer|perplexity|ppl|loss|error|err|nll|bpc|bpd|iou|miou|dice|fid|psnr|ssim|lpips|top-?[15]|"
    r"score|em|spearman|pearson|correlation|time|latency|throughput|speedup)\b", re.IGNORECASE)


@dataclass
class DraftedClaims:
    """Claims (manifest data) drafted from candidates, and which candidate went into which claim."""

    claims: list[dict[str, Any]] = field(default_factory=list)
    #: Index in the candidate list -> id of the claim it was written into.
    written: dict[int, str] = field(default_factory=dict)
    assumed: list[str] = field(default_factory=list)


def _words(label: str) -> list[str]:
    return [w for w in _SLUG.split(label.lower()) if w]


def _matches(column: str, label: str) -> int:
    """How well a table column names a printed metric: 2 the same words, 1 the same last word
    ('Validation accuracy' and 'val_accuracy', 'RMSE' and 'test RMSE'), 0 not at all."""
    a, b = _words(column), _words(label)
    if not a or not b:
        return 0
    return 2 if a == b else 1 if a[-1] == b[-1] else 0


def _launcher_of(file: str | None, launchers: list[dict[str, Any]]) -> str | None:
    """The launcher that runs the Python file ``file`` (``python file.py``, ``python -m module``)."""
    if file is None:
        return None
    module = PurePosixPath(file).with_suffix("").as_posix().replace("/", ".")
    for launcher in launchers:
        argv = [str(a) for a in launcher.get("argv") or []]
        modules = (module, module.removesuffix(".__main__"), module.removeprefix("src.").removesuffix(".__main__"))
        if file in (a.removeprefix("./") for a in argv[1:2]) or ("-m" in argv[:2] and argv[2:3] and argv[2] in modules):
            return str(launcher["id"])
        described = str(launcher.get("description", ""))
        if f"({module}:" in described:  # a console script: 'console script NAME (module:function)'
            return str(launcher["id"])
    return None


def _number(text: str) -> tuple[float, int, str] | None:
    """The value, precision (digits after the point) and unit of a number as printed."""
    unit = "%" if text.endswith("%") else ""
    digits = text.removesuffix("%")
    try:
        value = float(digits)
    except ValueError:
        return None
    mantissa = re.split(r"[eE]", digits)[0]
    precision = len(mantissa.split(".", 1)[1]) if "." in mantissa else 0
    return value, min(precision, 15), unit


def _unique(base: str, taken: set[str]) -> str:
    # NFKD first, so that 'R²' gives 'r2' rather than 'r'.
    base = (_SLUG.sub("-", unicodedata.normalize("NFKD", base)).strip("-").lower() or "claim")[:120]
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    taken.add(candidate)
    return candidate


def draft_claims(candidates: list[Finding], launchers: list[dict[str, Any]]) -> DraftedClaims:
    """Claims for the table cells among ``candidates``, each with the printed metric of the same
    name when there is one, for the drafted ``launchers``."""
    out = DraftedClaims()
    prints = [(i, c) for i, c in enumerate(candidates) if c.parts[:1] == ("print",)]
    taken: set[str] = set()
    for index, cell in enumerate(candidates):
        if cell.parts[:1] != ("cell",) or not launchers:
            continue
        _, row, column, shown = cell.parts
        number = _number(shown)
        if number is None:
            continue
        value, precision, unit = number
        best = max(prints, key=lambda p: _matches(column, p[1].parts[1]), default=None)
        printed = best if best is not None and _matches(column, best[1].parts[1]) else None
        ident = _unique(f"{row}-{column}", taken)
        where = cell.where
        launcher = _launcher_of(printed[1].file, launchers) if printed is not None else None
        assumed: list[str] = []
        if launcher is None:
            launcher = str(launchers[-1]["id"])
            assumed.append(f"launcher {launcher} (the {'only' if len(launchers) == 1 else 'last'} launcher: no "
                           "print call of the metric names one)")
        if printed is not None:
            extract: dict[str, Any] = {"stream": "stdout", "regex": {"pattern": printed[1].parts[2]}}
            out.written.setdefault(printed[0], ident)  # decided with the first claim it went into
        else:
            extract = {"stream": "stdout", "regex": {"pattern": EXTRACT_TODO}}
        named = _METRIC.search(column) is not None
        direction = "lower" if named and _LOWER.search(column) else "higher"
        assumed.append(f"metric direction {direction!r} ("
                       + ("its name says lower is better)" if direction == "lower" else "its name does not say "
                          "lower is better)" if named else "the metric is not named)"))
        out.assumed.append(f"claim {ident}: {', '.join(assumed)}")
        launcher_data = next(x for x in launchers if x["id"] == launcher)
        seeds = launcher_data.get("seeds")
        observation: dict[str, Any] = {"value": value}
        if launcher_data.get("stochastic") is False or not seeds:
            observation["repeat"] = 0
        else:
            observation["seed"] = seeds[0]
        observation["fingerprint"] = {"hardware": "not reported by the authors",
                                      "software": "not reported by the authors"}
        observation["provenance"] = {"by": f"the authors ({where})", "code": "raw",
                                     "machine": "the authors' machine"}
        location: dict[str, Any] = {"table": f"TODO: the paper's table that prints it ({where} shows it)",
                                    "row": row, "column": column}
        out.claims.append({
            "id": ident,
            "description": f"TODO: confirm the candidate claim {cell.value!r} ({where}, {cell.note}), or remove "
                           "this claim",
            "paper_location": location,
            "launcher": launcher,
            "metric": {"name": column if named else f"TODO: the metric of column {column!r}", "unit": unit,
                       "direction": direction},
            "extract": extract,
            "reported": {"value": value, "precision": precision},
            "reference": {"observations": [observation]},
        })
        out.written[index] = ident
    return out
