"""Candidate claims from the numbers a script writes to a file, and questions where it writes none
that can be read.

A CSV whose columns are known statically (:mod:`.outputs`), or from the header of the copy the
repository holds of the file it writes, gives one candidate per column that
holds values (not one that names the row: a model, a data set, a seed), read back by the claim's
``extract: {output, csv: {column}}``; a JSON object of a dict literal gives one per key, read by
``json_pointer``. No reported value is known (the paper has it): like a printed metric, such a
candidate is written into a claim only with a table cell of the same name
(:mod:`rra_tools.builder.draft_claims`), else printed for the build's *claim* decision.

Results a claim cannot read are questions for that decision (``item`` ``claim-question``): a
figure (``savefig``, or only ``plt.show()``), a NumPy array (``.npy``/``.npz``, ``savetxt``), or a CSV/JSON file whose
columns or keys are made at run time, when the script gives no candidate at all. The question's
text is ``f"{value} ({file}:{line}): {note}"``.
"""

from __future__ import annotations

import re

from .findings import Finding
from .outputs import Written

__all__ = ["QUESTION_ADD", "written_candidates"]

#: The note of every claim question: what the build's *claim* decision asks the agent to do.
QUESTION_ADD = "no claim can be read from it; add one"
#: Column names that label a row rather than hold a value.
_LABEL = re.compile(r"(?i)(model|method|name|dataset|data|task|seed|run|split|fold|id|config|setting|label|"
                    r"epoch|step|iter|iteration|experiment|variant)s?")


def _pointer(key: str) -> str:
    return "/" + key.replace("~", "~0").replace("/", "~1")


def written_candidates(written: dict[str, list[Written]], printing: set[str]) -> tuple[list[Finding], list[Finding]]:
    """(candidates, questions) from what each script writes (``written``, by script file);
    ``printing`` are the scripts that print a metric (a candidate already, so no question)."""
    candidates: list[Finding] = []
    questions: list[Finding] = []
    for script, items in written.items():
        found: list[Finding] = []
        unreadable: list[Finding] = []
        for item in items:
            shown = (item.path or "?") + ("/" if item.directory else "")
            if item.kind == "shown":
                unreadable.append(Finding("claim-question", f"results only as a figure shown on screen ({item.call}, "
                                          "no file)", script, item.line, QUESTION_ADD))
                continue
            if item.path is None:
                continue
            if item.kind == "csv" and item.fields and not item.directory:
                for column in item.fields:
                    if _LABEL.fullmatch(column):
                        continue
                    header = " (its header as the repository's copy has it)" if item.fields_from else ""
                    found.append(Finding("claim-candidate", f"{item.path} csv column {column}", script, item.line,
                                         f"a column of the CSV file {item.call} writes{header}",
                                         ("file", column, item.path, "csv", column)))
            elif item.kind == "json" and item.fields and not item.directory:
                for key in item.fields:
                    found.append(Finding("claim-candidate", f"{item.path} json {_pointer(key)}", script, item.line,
                                         f"a key of the JSON object {item.call} writes",
                                         ("file", key, item.path, "json", _pointer(key))))
            elif item.kind == "figure":
                unreadable.append(Finding("claim-question", f"results only as a figure {shown}", script, item.line,
                                          QUESTION_ADD))
            elif item.kind in ("array", "text-array"):
                unreadable.append(Finding("claim-question", f"results only as a NumPy array {shown}", script,
                                          item.line, QUESTION_ADD))
            elif item.kind in ("csv", "json"):
                unreadable.append(Finding("claim-question", f"results in {shown}, whose "
                                          f"{'columns' if item.kind == 'csv' else 'keys'} are made at run time",
                                          script, item.line, QUESTION_ADD))
        candidates.extend(found)
        if not found and script not in printing:
            questions.extend(unreadable)
    return candidates, questions
