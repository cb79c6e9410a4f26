"""Where the repository, as published, states a claim's reported number.

A claim's reported value is the paper's number. When the builder's agent answers a *claim*
decision, that value is the agent's word: it may have made it up, or copied the number its own
run printed, and a run then "reproduces" it, the falsest thing this tool could say. So the build
accepts a reported number only where the repository's own texts state it, read at the commit the
build started from (the raw repository as published, before any answer wrote a file): a README
table, a ``results.md``, a LaTeX table, a shipped CSV or JSON of the paper's results. An author
who has the number only in the paper writes it into ``rra.yaml`` themselves (their word, not the
agent's), or quotes the paper's table in the README.

Matching is literal, as the number is printed with its precision (``91.29``, ``0.950``), between
characters that are not digits, so that ``91.29`` is not found in ``191.29`` or ``91.295``. The
sign is not compared (a text may print a minus as ``−``). A number of one significant digit (``1``,
``0.5``) is found in almost any prose, and an agent could restate a claim at that precision to
match it: it counts only as a whole cell of a table (a Markdown or LaTeX cell, a CSV or TSV field).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["STATED_IN", "printed", "stated_at", "unstated_claims"]

#: The files whose text is read for stated numbers: prose, tables and shipped results.
STATED_IN = ("*.md", "*.markdown", "*.rst", "*.txt", "*.tex", "*.csv", "*.tsv", "*.json", "*.html",
             "README", "README.*", "RESULTS", "RESULTS.*")
#: Files of rra itself, which restate the claims: never evidence of what the paper says.
_OWN = ("rra.yaml", "rra.yml", "rra.json", "REPRODUCE.md")


def printed(value: object, precision: int) -> str | None:
    """``value`` as the paper prints it with ``precision`` digits after the point, without sign;
    None for a value that is not a finite number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return f"{abs(value):.{max(0, min(int(precision), 15))}f}"


def stated_at(root: Path, commit: str, text: str) -> str | None:
    """``FILE:LINE`` of the first place the repository at ``commit`` (in the git repository
    ``root``) prints the number ``text`` (see :func:`printed`), or None."""
    from .patches import git

    number = re.escape(text).replace("\\.", "[.]")
    if len(text.replace(".", "").lstrip("0")) < 2:
        # One significant digit (1, 0.5, 7) is found in almost any prose: it counts only as a
        # whole cell of a table (Markdown, LaTeX, CSV, TSV), where it stands for a result.
        pattern = "(^|[|,;&\t])[ ]*(-|[+]|−)?" + number + "[ ]*%?[ ]*([|,;&\t]|\\\\|$)"
    else:
        pattern = "(^|[^0-9.])" + number + "([^0-9]|[.][^0-9]|[.]?$)"
    specs = [*STATED_IN, *(f":(exclude){name}" for name in _OWN)]
    done = git(["grep", "-n", "-I", "-E", "-m", "1", "--no-color", "-e", pattern, commit, "--", *specs],
               cwd=root, check=False)
    if done.returncode != 0:  # 1: no match (another status: an unreadable commit, also no evidence)
        return None
    first = done.stdout.decode("utf-8", "replace").splitlines()[0]
    # COMMIT:FILE:LINE:TEXT; the file name may hold colons, the commit and line number cannot.
    found = re.match(r"^(.*?):(\d+):", first.removeprefix(f"{commit}:"))
    return f"{found.group(1)}:{found.group(2)}" if found else None


def unstated_claims(root: Path, commit: str, claims: list[Any],
                    before: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(claim id, printed value) of each number claim in ``claims`` whose reported value is new
    or changed against ``before`` (claim id -> reported value as it was) and is stated nowhere
    in the repository at ``commit``."""
    missing: list[tuple[str, str]] = []
    for claim in claims:
        if not isinstance(claim, Mapping) or claim.get("kind", "number") != "number":
            continue
        reported = claim.get("reported")
        if not isinstance(reported, Mapping):
            continue
        value = reported.get("value")
        ident = str(claim.get("id"))
        if ident in before and before[ident] == value:
            continue
        text = printed(value, reported.get("precision", 0) if isinstance(reported.get("precision"), int) else 0)
        if text is not None and stated_at(root, commit, text) is None:
            missing.append((ident, text))
    return missing
