"""The codes of ``rra review``'s own findings (RRA900-RRA949).

A review also reports every finding of ``rra validate`` on the artifact under the validator's
codes (RRA214 for a placeholder left, RRA215 for a guide out of sync, RRA501 for a stochastic
launcher without seeds, RRA601 for a claimed level that is not met, ...); the codes below are
for what only a review can see: what re-running, comparing and tracing show, and the choices it
challenges. They are documented in ``docs/builder.md`` (the table there is generated from
:data:`REVIEW_CODES` by ``python -m rra_tools._generate``). Codes are never reused.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["REVIEW_CODES", "ReviewCode", "review_code", "review_codes_table"]


@dataclass(frozen=True)
class ReviewCode:
    """One kind of review finding."""

    code: str
    name: str
    #: 'error' (the review fails), 'warning' or 'info'.
    severity: str
    summary: str


def _c(code: str, name: str, severity: str, summary: str) -> ReviewCode:
    return ReviewCode(code, name, severity, summary)


#: Every code of ``rra review``, by code.
REVIEW_CODES: dict[str, ReviewCode] = {c.code: c for c in (
    # Re-running from a clean shell.
    _c("RRA900", "review-run-failed", "error",
       "A launcher's clean-shell run did not succeed (non-zero exit, failed, timeout, interrupted), was skipped "
       "because a dependency failed, or could not be set up."),
    _c("RRA901", "review-outside-interval", "error",
       "The value the review's runs give for a claim lies outside the claim's acceptance interval."),
    _c("RRA902", "review-no-value", "error",
       "The review's runs give no value for a claim (no successful run of its launcher holds one)."),
    _c("RRA903", "value-differs-from-record", "warning",
       "A review run's value for a claim differs from the author's recorded run of the same launcher and seed "
       "(or repeat)."),
    _c("RRA904", "output-differs-from-record", "warning",
       "A review run's output differs (SHA-256) from the author's recorded run of the same launcher and seed; "
       "a warning for a launcher that is not stochastic, information for a seeded one."),
    _c("RRA905", "run-not-recorded", "warning",
       "The review ran a launcher and seed (or repeat) for which the author's run records hold no successful run."),
    # The environment of the review.
    _c("RRA910", "review-no-lock", "error",
       "The manifest has no environment lock, so no fresh environment can be built for the review; it runs in "
       "the current interpreter only with --env current (in a container, --env container, the image is the "
       "environment and no lock is needed to run)."),
    _c("RRA911", "review-environment-failed", "error",
       "The review's environment (built from the lock, or the container image) could not be set up; nothing ran."),
    _c("RRA912", "review-current-environment", "warning",
       "The review ran in the interpreter running rra review (--env current), not in an environment built "
       "from the lock."),
    # Tracing each claim to evidence.
    _c("RRA920", "claim-untraced", "error",
       "A claim has no successful run record of its launcher holding a value: it traces to no evidence."),
    _c("RRA921", "record-output-missing", "error",
       "A run record counted for a claim names an output (or log) that is not in the artifact, or names none."),
    _c("RRA922", "record-output-digest-mismatch", "error",
       "The file a run record names has another SHA-256 than the record says: it was changed or overwritten "
       "since the run."),
    _c("RRA923", "record-value-mismatch", "error",
       "Re-extracting the claim's value from the recorded output with the claim's rule does not give the "
       "record's value."),
    _c("RRA924", "observation-record-mismatch", "error",
       "A reference observation's run_record is not a successful run record of the claim's launcher with the "
       "observation's seed and value."),
    # Challenging choices without support.
    _c("RRA930", "change-without-evidence", "error",
       "A change record's evidence says nothing that can be checked (\"none\", \"n/a\", a placeholder), names "
       "a file that is not in the artifact, or names a run record whose run did not succeed."),
    _c("RRA931", "method-change-unknown", "error",
       "A change record says alters_method: unknown: whether it changes what the paper's method computes was "
       "never decided."),
    _c("RRA932", "patch-without-change", "error",
       "A patch of code.patches has no change record saying why it was made."),
    _c("RRA933", "patch-series-unproven", "error",
       "The patch series does not reproduce the artifact's code ('rra change verify' fails)."),
    _c("RRA934", "discrepancy-undecided", "error",
       "A discrepancy's decision is not written: its rationale (or what the paper says, or the impact) is "
       "still a placeholder."),
    _c("RRA935", "discrepancy-without-claims", "warning",
       "A discrepancy names no claim, so a reader cannot see which numbers it may move."),
    _c("RRA936", "seed-not-passed", "warning",
       "A stochastic launcher declares seeds but its argv never passes {seed}: every seed runs the same command."),
    _c("RRA937", "hardware-undeclared", "warning",
       "The manifest does not declare environment.hardware: a reviewer cannot tell whether their machine "
       "matches the one that produced the numbers."),
    _c("RRA938", "guide-missing", "warning",
       "The artifact has no reproduction guide (neither guide.path nor REPRODUCE.md); 'rra guide' writes it."),
)}


def review_code(code: str) -> ReviewCode:
    """The review code ``code``; KeyError naming it otherwise."""
    try:
        return REVIEW_CODES[code]
    except KeyError:
        raise KeyError(f"unknown review code {code!r}") from None


def review_codes_table() -> str:
    """The Markdown table of every review code (generated into docs/builder.md)."""
    rows = ["| Code | Name | Severity | Meaning |", "|---|---|---|---|"]
    rows.extend(f"| `{c.code}` | `{c.name}` | {c.severity} | {c.summary} |" for c in REVIEW_CODES.values())
    return "\n".join(rows) + "\n"
