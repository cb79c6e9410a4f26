"""The review report ``rra review`` writes into the artifact (``review.json``).

A review trusts nothing the builder recorded: it re-runs every launcher from a clean shell in a
fresh copy of the artifact and an environment built from the lock, compares the new runs with
the recorded ones and with the claims' acceptance intervals, traces every claim to a run
record, an output file and a re-extracted value, and challenges the choices that have no
support. The report holds all of it: the runs, each claim's trace and verdict, the levels, and
every finding with its stable code and where it comes from.
"""

from __future__ import annotations

from typing import Annotated, Union

from pydantic import Field, StringConstraints

from ._base import RRAModel
from .claims import ClaimValue
from .report import Counts, Severity, ToolInfo
from .review import CleanShell, Level

__all__ = ["ClaimVerdict", "ReviewEnvironment", "ReviewFinding", "ReviewLevels", "ReviewReport", "ReviewRun",
           "TraceStep"]

Code = Annotated[str, StringConstraints(pattern=r"^RRA[0-9]{3}$")]
Name = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")]


class ReviewFinding(RRAModel):
    """One finding: a stable code, and where it comes from (the manifest's file:line, or a run
    record or run directory)."""

    code: Code = Field(description="Stable code: a rule of 'rra validate' (RRA001-RRA699) or of 'rra review' "
                       "(RRA900-RRA949).")
    name: Name = Field(description="Kebab-case name of the code.")
    severity: Severity
    message: str = Field(description="What was found, quoting the values involved.")
    file: str | None = Field(default=None, description="File the finding is located in, relative to the artifact "
                             "root (the manifest, a run record, a patch); omitted when in none.")
    line: int | None = Field(default=None, ge=1, description="1-based line in 'file'; omitted when unknown.")
    pointer: str | None = Field(default=None, description="RFC 6901 JSON pointer into the manifest; omitted when "
                                "the finding is not about a manifest value.")
    record: str | None = Field(default=None, description="Run record (or run directory) the finding comes from, "
                               "relative to the artifact root; omitted when none.")
    hint: str | None = Field(default=None, description="What to do about it; omitted when there is nothing to add.")


class ReviewEnvironment(RRAModel):
    """Where the review's runs took place."""

    mode: Annotated[str, StringConstraints(pattern=r"^(locked|current|container)$")] = Field(
        description="'locked' (a fresh environment built from the manifest's lock), 'current' (the interpreter "
        "running rra review) or 'container' (the artifact's image).")
    detail: str | None = Field(default=None, description="The environment's directory or the image, when known.")


class ReviewRun(RRAModel):
    """One clean-shell run of the review, and the recorded run it is compared with."""

    launcher: str
    seed: int | None = Field(default=None, description="Seed of the run (stochastic launcher).")
    repeat: int | None = Field(default=None, description="Number of the run (seedless launcher run repeats times).")
    status: str = Field(description="'completed', 'failed', 'timeout', 'interrupted', or 'skipped' / 'refused' "
                        "when it did not start.")
    exit_status: int | None = Field(default=None, description="Exit status of the process, when it ended by itself.")
    successful: bool = Field(description="Exit status 0 and status completed, as the levels count it.")
    duration_s: float | None = Field(default=None, ge=0, description="Wall-clock time of the run.")
    record: str | None = Field(default=None, description="The review's run record, relative to the artifact root.")
    recorded: str | None = Field(default=None, description="The author's newest successful run record of the same "
                                 "launcher and seed (or repeat), relative to the artifact root; omitted when none.")
    metrics: dict[str, float] = Field(default_factory=dict, description="Value obtained for each claim of the launcher.")
    same_outputs: bool | None = Field(default=None, description="Whether every output's SHA-256 equals the recorded "
                                      "run's; omitted when there is no recorded run to compare with.")
    detail: str | None = Field(default=None, description="Why the run did not succeed or did not start, in words.")


class TraceStep(RRAModel):
    """One link of a claim's evidence chain: run record -> output file -> re-extracted value."""

    record: str = Field(description="The author's run record, relative to the artifact root.")
    seed: int | None = None
    repeat: int | None = None
    output: str | None = Field(default=None, description="The output file (or captured stream log) the value is "
                               "read from, relative to the artifact root.")
    digest_ok: bool | None = Field(default=None, description="The file's SHA-256 equals the record's; omitted when "
                                   "it could not be checked (a directory output).")
    recorded_value: float | None = Field(
        default=None, description="The value the record holds for the claim; omitted for a claim of kind string, set "
        "or list (RRA 1.2), whose answer records do not hold.")
    extracted_value: float | None = Field(default=None, description="The value re-extracted from the file with the "
                                          "claim's rule; omitted when it could not be.")
    extracted_answer: Union[str, list[Union[float, str]], None] = Field(
        default=None, description="A string, set or list claim's answer read from the file with the claim's rule; "
        "omitted when it could not be.")
    ok: bool = Field(description="Every link holds: the file exists, its digest and the value match.")


class ClaimVerdict(RRAModel):
    """A claim against the review's runs and against the author's evidence."""

    claim: str
    launcher: str
    kind: str | None = Field(default=None, description="The claim's kind when it is not a number: 'string', 'set' "
                             "or 'list' (RRA 1.2); its values are then answers, and it has no interval.")
    reported: ClaimValue = Field(description="The value as printed in the paper (an answer: a string or a list).")
    interval_low: float | None = Field(default=None, description="Low bound of the acceptance interval.")
    interval_high: float | None = Field(default=None, description="High bound of the acceptance interval.")
    recorded: float | None = Field(default=None, description="Value obtained from the author's run records.")
    reviewed: Union[float, str, list[Union[float, str]], None] = Field(
        default=None, description="Value (or answer) obtained from the review's clean-shell runs.")
    inside: bool | None = Field(default=None, description="Whether the reviewed value lies inside the interval; "
                                "omitted when there is no verdict.")
    traced: bool = Field(description="Every recorded run counted for the claim traces to an output and a value.")
    trace: list[TraceStep] = Field(default_factory=list, description="The evidence chain of each counted record.")


class ReviewLevels(RRAModel):
    """Levels claimed by the manifest and those met, from the author's records and from the review's runs."""

    claimed: list[Level]
    recorded: list[Level] = Field(description="Levels met with the author's run records (as 'rra validate').")
    reviewed: list[Level] = Field(description="Levels met with the review's own runs in place of the author's.")


class ReviewReport(RRAModel):
    """The report of one ``rra review`` of an artifact."""

    review_version: Annotated[str, StringConstraints(pattern=r"^1\.0$")] = Field(
        description="Version of this report format.")
    tool: ToolInfo
    artifact_id: str
    artifact_digest: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")] = Field(
        description="SHA-256 of the manifest's canonical JSON, as run records carry it.")
    manifest: str = Field(description="The manifest file, relative to the artifact root.")
    started: str = Field(description="UTC start of the review, ISO 8601.")
    ended: str = Field(description="UTC end of the review, ISO 8601.")
    directory: str = Field(description="The review's directory (its runs, this report), relative to the artifact "
                           "root when inside it.")
    environment: ReviewEnvironment
    clean_shell: CleanShell = Field(description="'pass' when every launcher's run succeeded, 'fail' when one did not, "
                                    "'not-run' when nothing was run.")
    passed: bool = Field(description="True when no finding is an error.")
    levels: ReviewLevels
    counts: Counts
    runs: list[ReviewRun] = Field(default_factory=list)
    claims: list[ClaimVerdict] = Field(default_factory=list)
    findings: list[ReviewFinding] = Field(default_factory=list, description="Errors first, then warnings, then info.")
