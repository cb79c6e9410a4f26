"""Candidate claims written into ``rra init``'s draft as claims.

A number in a results table (the README's, docs', or ``--paper``'s) says what the authors
reported: the metric (the column), the value as printed and its precision, and where it is. A
``print`` call that writes a labelled number says how a run shows it: a regular expression over
the launcher's standard output, and (the script it is in) which launcher. A table cell and a
printed metric with the same name become one claim with both. A print shows one value: when it
would read several rows of a column, it goes to the row its script or launcher names ('Baseline'
and ``baseline.py``), or to none, and the other rows' extractions are TODOs that say so (never the
same extraction for every row, which would let one run 'reproduce' the baseline's number).

What neither says is a ``"TODO: ..."`` placeholder that ``rra validate`` reports as RRA214: the
paper's table number, and the extraction when no print call matches. The claim's description is
one too, so that every drafted claim stays unfinished until someone confirms it (fills it in) or
removes it; ``rra build`` asks exactly that at its *claim* decision. The authors' printed value is
the claim's first reference observation (the schema needs one; runs add the others). Values the
schema needs but the repository does not state (the launcher when no print names it, the
metric's direction) are written as stated assumptions.

A number a script writes to a file it declares as an output (a CSV column, a JSON key:
:mod:`.detect.claims_written`) is matched to the table's columns as a print is, and read back by
``extract: {output, csv: {column, row_index: -1}}`` or ``{output, json_pointer}`` (the CSV's last
row, listed under "assumed": which row holds the table's row is not known statically).

A printed or written metric that matches no table cell has no reported value, and a number in a
PDF's table line is not told apart from its neighbours: those stay candidates, printed but not
written.
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
#: Characters a file name may hold that a regular expression reads as syntax.
_SAFE = re.compile(r"[^A-Za-z0-9_./:-]")
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


def _row_named(row: str, printed: Finding, launchers: list[dict[str, Any]]) -> bool:
    """Whether the table row ``row`` is named by the script of ``printed`` or its launcher's id
    ('Baseline' and baseline.py, 'ours (MLP)' and launcher train-mlp)."""
    names = set(_words(PurePosixPath(printed.file or "").stem))
    launcher = _launcher_of(printed.file, launchers)
    if launcher is not None:
        names.update(_words(launcher))
    return any(len(word) > 2 and word in names for word in _words(row))


def _prints_of_cells(candidates: list[Finding], prints: list[tuple[int, Finding]],
                     launchers: list[dict[str, Any]]
                     ) -> dict[int, tuple[tuple[int, Finding] | None, list[tuple[int, Finding]]]]:
    """For each table cell, the print call whose regex reads it, or none and, when the print of
    its column would read several rows (it shows one value), that print and the other cells.

    A print matched by several rows goes to the one row its script or launcher names, or to
    none: every row given the same extraction would be 'reproduced' by the same value, which is
    the worst thing the tool could say."""
    best: dict[int, tuple[int, Finding]] = {}
    for index, cell in enumerate(candidates):
        if cell.parts[:1] != ("cell",) or len(cell.parts) != 4:
            continue
        column = cell.parts[2]
        # Of the prints that name the column best, the one whose script names the row.
        score = max((_matches(column, p[1].parts[1]) for p in prints), default=0)
        if not score:
            continue
        top = [p for p in prints if _matches(column, p[1].parts[1]) == score]
        named = [p for p in top if _row_named(cell.parts[1], p[1], launchers)]
        best[index] = named[0] if len(named) == 1 else top[0]
    by_print: dict[int, list[int]] = {}
    for index, printed in best.items():
        by_print.setdefault(printed[0], []).append(index)
    out: dict[int, tuple[tuple[int, Finding] | None, list[tuple[int, Finding]]]] = {}
    for at, cells in by_print.items():
        printed = best[cells[0]]
        if len(cells) == 1:
            out[cells[0]] = (printed, [])
            continue
        rows = [i for i in cells if _row_named(candidates[i].parts[1], printed[1], launchers)]
        for index in cells:
            if len(rows) == 1 and index == rows[0]:
                out[index] = (printed, [])
            else:
                others = [(i, candidates[i]) for i in cells if i != index]
                out[index] = (None, [printed, *others])
    return out


def _output_of(found: Finding, launchers: list[dict[str, Any]]) -> str | None:
    """The id of the declared output a written-file candidate reads, if its launcher declares it."""
    launcher = _launcher_of(found.file, launchers)
    data = next((x for x in launchers if x["id"] == launcher), None)
    for output in (data or {}).get("outputs") or []:
        if output.get("path") == found.parts[2]:
            return str(output["id"])
    return None


def _extract(found: Finding, launchers: list[dict[str, Any]], assumed: list[str]) -> dict[str, Any]:
    """The extraction of a print (a regex over standard output) or of a written file's value."""
    if found.parts[:1] == ("print",):
        return {"stream": "stdout", "regex": {"pattern": found.parts[2]}}
    output = _output_of(found, launchers)
    if found.parts[3] == "json":
        return {"output": output, "json_pointer": found.parts[4]}
    assumed.append(f"row_index -1 of {found.parts[2]} (its last row: which row holds this value is not known "
                   f"statically, {found.where})")
    return {"output": output, "csv": {"column": found.parts[4], "row_index": -1}}


def draft_claims(candidates: list[Finding], launchers: list[dict[str, Any]]) -> DraftedClaims:
    """Claims for the table cells among ``candidates``, each with the printed or written metric of
    the same name when there is one, for the drafted ``launchers``."""
    out = DraftedClaims()
    prints = [(i, c) for i, c in enumerate(candidates) if c.parts[:1] == ("print",) or (
        c.parts[:1] == ("file",) and len(c.parts) == 5 and _output_of(c, launchers) is not None)]
    taken: set[str] = set()
    chosen = _prints_of_cells(candidates, prints, launchers)
    for index, cell in enumerate(candidates):
        if cell.parts[:1] != ("cell",) or not launchers:
            continue
        _, row, column, shown = cell.parts
        number = _number(shown)
        if number is None:
            continue
        value, precision, unit = number
        printed, shared = chosen.get(index, (None, []))
        ident = _unique(f"{row}-{column}", taken)
        where = cell.where
        source = printed if printed is not None else shared[0] if shared else None
        launcher = _launcher_of(source[1].file, launchers) if source is not None else None
        assumed: list[str] = []
        if launcher is None:
            launcher = str(launchers[-1]["id"])
            assumed.append(f"launcher {launcher} (the {'only' if len(launchers) == 1 else 'last'} launcher: no "
                           "print call of the metric names one)")
        extract: dict[str, Any]
        if printed is not None:
            extract = _extract(printed[1], launchers, assumed)
            out.written.setdefault(printed[0], ident)  # decided with the first claim it went into
        elif shared:
            # Several rows would be read by the one print, which shows one value: not guessed.
            (at, found), others = shared[0], shared[1:]
            where_print = _SAFE.sub("_", found.where)
            what = f"the print at {where_print} shows" if found.parts[:1] == ("print",) else \
                f"the file {_SAFE.sub('_', found.parts[2])} written at {where_print} holds"
            extract = {"stream": "stdout", "regex": {"pattern": (
                f"TODO: {what} one value for {len(others) + 1} rows of this column; "
                f"which row it is is not known: a regular expression whose group 1 captures this row's value, "
                f"e.g. RMSE: ([-+]?[0-9.]+)")}}
            out.written.setdefault(at, ident)  # decided with the first claim of its rows
            source_kind = "print" if found.parts[:1] == ("print",) else "written value"
            assumed.append(f"extraction left as TODO: the {source_kind} of {found.parts[1]!r} ({found.where}) would "
                           f"read every row of column {column!r} ({', '.join(o[1].where for o in others)} and this "
                           "one), and its script or launcher does not name this row alone")
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
