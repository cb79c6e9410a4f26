"""``rra review``: an independent review that trusts nothing the builder recorded.

:func:`review_artifact`:

1. validates the artifact (``rra validate``'s findings, under their own codes: placeholders
   left are RRA214, a guide out of sync RRA215, missing seeds RRA501, ...) and takes the levels
   the author's records meet;
2. challenges the choices without support (:func:`.review_checks.challenge_choices`) and has
   the patch series proved as ``rra change verify`` does;
3. traces every claim through the author's newest successful records: record -> output file
   (its digest) -> value re-extracted with the claim's rule; checks each observation's record;
4. copies the artifact into a fresh directory and re-runs every launcher with all its seeds
   from a clean shell, in an environment built from the lock (or the container image), through
   :func:`rra_tools.run.run_plans` (:mod:`.review_runs`);
5. compares the new runs with the recorded ones, reads the claims' values from the new runs as
   ``rra results`` does (:func:`rra_tools.run.results.collect_results`, which also gives the
   levels the review's runs meet) and checks them against the acceptance intervals;
6. writes the report, JSON (:class:`rra_tools.model.review_report.ReviewReport`) and Markdown,
   into the review's directory and as the artifact's latest review.

The review passes when no finding is an error. Nothing is printed: progress reaches the caller
through ``progress``; the artifact's own files and run records are never written to.

A review stopped by Ctrl-C (KeyboardInterrupt while it validates, copies the artifact or builds
the environment; SIGINT or SIGTERM while the launchers run, which :func:`rra_tools.run.run_plans`
turns into interrupted runs) is not a review: its directory is removed, no report is written and
:class:`ReviewInterrupted` is raised. The last steps (writing the finished report, removing a
stopped review's directory) hold SIGINT off, so that they are never cut in half.
"""

from __future__ import annotations

import json
import math
import shutil
import signal
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import __version__
from ... import SPEC_VERSION
from ...answers import Answer
from ...errors import ExitStatus, RRAError
from ...intervals import acceptance_interval, aggregate
from ...io.artifact import Artifact, load_artifact
from ...io.atomic import write_atomic
from ...model.manifest_view import ClaimSpec
from ...io.schemas import compiled_is_valid
from ...run.records import utc_stamp
from ...run.results import ClaimResult, Key, claim_values, collect_results, latest_successful
from ...validate.api import validate_path
from ..errors import BuilderLayerError
from .checks import challenge_choices, check_observations, reported_answer, trace_claim
from .findings import Findings, compact
from .runs import CleanShellRuns, compare_with_records, prune_work, run_clean_shell
from .text import render_review

if TYPE_CHECKING:
    from ...model.review_report import ReviewReport

__all__ = ["REPORT_JSON", "REPORT_MD", "REVIEW_DIR", "ReviewError", "ReviewInterrupted", "ReviewOptions",
           "review_artifact", "run_review"]

#: Where reviews go, relative to the artifact root: one directory per review, and the latest
#: review's report beside them.
REVIEW_DIR = ".rra/review"
REPORT_JSON = "review.json"
REPORT_MD = "review.md"

_MODES = ("locked", "current", "container")


class ReviewError(BuilderLayerError):
    """The review cannot be made (its directory exists, an option is wrong)."""

    exit_status = ExitStatus.USAGE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class ReviewInterrupted(ReviewError):
    """The review was stopped (Ctrl-C) before it finished; what it had made is removed."""

    exit_status = ExitStatus.INTERRUPTED


@dataclass(frozen=True)
class ReviewOptions:
    """How to review.

    ``env``: where the launchers run: ``locked`` (a fresh environment built from the manifest's
    lock; the default), ``current`` (this interpreter: for an artifact without a lock, or
    offline; reported as RRA912) or ``container`` (the artifact's image; ``image``,
    ``engine_url`` and ``network`` as for ``rra run --executor container``).
    ``run``: False checks everything that needs no run (the clean shell is then ``not-run``
    and the review cannot pass). ``directory``: the review's directory (default
    ``<artifact>/.rra/review/<UTC time>/``); it must not exist. ``keep_work``: keep the whole
    copy the launchers ran in (by default only the manifest, the review's run records and logs,
    and the outputs are kept). ``on_output``: receives the launchers' output as they write it
    (stream name, bytes).
    """

    env: str = "locked"
    image: str | None = None
    engine_url: str | None = None
    network: str | None = None
    run: bool = True
    directory: Path | None = None
    keep_work: bool = False
    on_output: Callable[[str, bytes], None] | None = None


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _claims(artifact: Artifact, findings: Findings, runs: CleanShellRuns, reviewed: dict[str, ClaimResult],
            best: Mapping[Key, tuple[Mapping[str, Any], str]]) -> list[dict[str, Any]]:
    verdicts = []
    for index, claim in enumerate(artifact.manifest.claims):
        if claim.kind != "number":
            verdicts.append(_answer_claim(index, claim, findings, runs, reviewed.get(claim.id),
                                          trace_claim(artifact, index, best, findings),
                                          reported_answer(artifact, index)))
            continue
        steps = trace_claim(artifact, index, best, findings)
        recorded_values = [v for _, _, v, _ in claim_values(claim.id, claim.launcher, best)]
        recorded = None
        if recorded_values:
            try:
                recorded = aggregate(recorded_values, str(getattr(claim.aggregate, "value", claim.aggregate)))
            except ValueError:
                recorded = None
        observations = [o.value for o in claim.reference.observations]
        interval = (acceptance_interval(observations, claim.reported.precision)
                    if len(observations) >= 2 and all(math.isfinite(v) for v in observations) else None)
        result = reviewed.get(claim.id)
        value = None if result is None else result.obtained
        inside = None if value is None or interval is None else interval.contains(value)
        if runs.ran and result is not None:
            if value is None:
                findings.at("RRA902", f"claim {claim.id!r}: the review's runs give no value "
                            f"({result.problem})", ("claims", index),
                            hint=f"see the review's runs of launcher {claim.launcher!r}")
            elif inside is False and interval is not None:
                records = ", ".join(where for *_, where in result.values[:3])
                findings.at("RRA901", f"claim {claim.id!r}: the review obtained {value!r}, outside the acceptance "
                            f"interval [{interval.low!r}, {interval.high!r}] (reported {claim.reported.value!r})",
                            ("claims", index), record=findings.rel(runs.work.root / result.values[0][3])
                            if runs.work is not None and result.values else None,
                            hint=f"the runs it comes from: {records}" if records else None)
        verdicts.append({
            **compact(claim=claim.id, launcher=claim.launcher, reported=claim.reported.value,
                      interval_low=None if interval is None else interval.low,
                      interval_high=None if interval is None else interval.high,
                      recorded=recorded, reviewed=value, inside=inside),
            "traced": bool(steps) and all(step["ok"] for step in steps), "trace": steps})
    return verdicts


def _answer_claim(index: int, claim: ClaimSpec, findings: Findings, runs: CleanShellRuns,
                  result: ClaimResult | None, steps: list[dict[str, Any]], expected: Answer | None) -> dict[str, Any]:
    """The verdict on a string, set or list claim (RRA 1.2): the answer the review's runs give,
    read from their outputs by the claim's rule, against the reported one; RRA901 when it does
    not match, RRA902 when there is none."""
    from ...answers import answer_text

    answer = None if result is None else result.answer
    inside = None if result is None else result.inside
    if runs.ran and result is not None:
        if answer is None:
            findings.at("RRA902", f"claim {claim.id!r}: the review's runs give no answer ({result.problem})",
                        ("claims", index), hint=f"see the review's runs of launcher {claim.launcher!r}")
        elif inside is False:
            findings.at("RRA901", f"claim {claim.id!r}: the review obtained {answer_text(answer)}, which does not "
                        f"match the reported answer: {result.problem}", ("claims", index),
                        hint=f"see the review's runs of launcher {claim.launcher!r}")
    return {**compact(claim=claim.id, launcher=claim.launcher, kind=claim.kind,
                      reported=list(expected) if isinstance(expected, tuple) else expected
                      if expected is not None else f"(not an answer of kind {claim.kind})",
                      reviewed=list(answer) if isinstance(answer, tuple) else answer, inside=inside),
            "traced": bool(steps) and all(step["ok"] for step in steps), "trace": steps}


def _series(artifact: Artifact, findings: Findings) -> None:
    """RRA933 when the patch series cannot be proved (the check of 'rra change verify')."""
    code = artifact.data.get("code") or {}
    patches = code.get("patches") or []
    if not code.get("upstream") or not patches:
        return
    from ..changes import verify_series

    try:
        verify_series(artifact.root)
    except RRAError as exc:
        findings.at("RRA933", f"the patch series cannot be proved: {exc.describe()}", ("code", "patches"),
                    hint=exc.hint or "run 'rra change verify' for the details")


#: Most errors of the review's copy that RRA940 names.
_WHY_SHOWN = 5


def _why_no_level(work: Artifact, findings: Findings) -> None:
    """RRA940: why the review's copy meets no level, from its errors (located in the copy). A copy
    without errors meets none for what the artifact's own findings already say (no lock: RRA404)."""
    from ...validate.diagnostics import Severity

    errors = [d for d in validate_path(work.root).diagnostics if d.severity == Severity.ERROR]
    if not errors:
        return
    shown = "; ".join(f"{d.code} {d.message}" + (f" (at {d.pointer})" if d.pointer else "")
                      for d in errors[:_WHY_SHOWN])
    more = f"; and {len(errors) - _WHY_SHOWN} more" if len(errors) > _WHY_SHOWN else ""
    findings.run("RRA940", f"the review's runs meet no level: its errors: {shown}{more}", None,
                 file=findings.rel(work.manifest_path),
                 hint=f"run 'rra validate {findings.rel(work.root)}' (keep the copy with --keep-work) to see each "
                      "check the copy fails; a reference observation's run_record must name a record the artifact "
                      "holds")


def review_artifact(artifact_dir: Path, *, options: ReviewOptions,
                    progress: Callable[[str], None] | None = None) -> ReviewReport:
    """Review the artifact at ``artifact_dir`` (see the module docstring) and write its report;
    the report. ArtifactError when the artifact cannot be loaded; ReviewError when the review's
    directory exists or an option is wrong."""
    from ...model.review_report import ReviewReport

    return ReviewReport.model_validate(run_review(artifact_dir, options=options, progress=progress))


def run_review(artifact_dir: Path, *, options: ReviewOptions,
               progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """:func:`review_artifact` returning the report as plain JSON data (as written to
    ``review.json``; it conforms to ``schemas/rra-review-1.0.schema.json`` by construction, which
    the tests check): what the CLI calls, so that it never imports pydantic. ReviewInterrupted
    when Ctrl-C stops it (see the module docstring)."""
    if options.env not in _MODES:
        raise ReviewError(f"unknown review environment {options.env!r}; expected one of {', '.join(_MODES)}")
    state = _State()
    try:
        return _review(artifact_dir, options, progress or (lambda _text: None), state)
    except KeyboardInterrupt:
        with _sigint_held():  # a second Ctrl-C must not leave the removal half done
            removed = state.remove_made()
        what = f"; its directory {str(removed)!r} was removed" if removed is not None else ""
        raise ReviewInterrupted(f"the review was interrupted while {state.stage}: no report was written{what}") \
            from None


class _State:
    """What an interrupted review was doing, and the directories it created (to remove)."""

    def __init__(self) -> None:
        self.stage = "validating the artifact"
        #: The review's directory, then each parent it had to create, deepest first.
        self.made: list[Path] = []

    def make(self, directory: Path) -> None:
        """Create ``directory`` (it must not exist) and its missing parents, remembering them."""
        absolute = directory.absolute()
        missing = [p for p in (absolute, *absolute.parents) if not p.exists()]
        directory.mkdir(parents=True)
        self.made = missing

    def remove_made(self) -> Path | None:
        """Remove the review's directory, and each parent it created once empty; that directory."""
        if not self.made:
            return None
        shutil.rmtree(self.made[0], ignore_errors=True)
        for parent in self.made[1:]:
            try:
                parent.rmdir()
            except OSError:  # another review's directory is in it, or it holds something else
                break
        return self.made[0]


@contextmanager
def _sigint_held() -> Iterator[None]:
    """SIGINT ignored meanwhile (where signals can be handled: the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler if previous is None else previous)


def _review(artifact_dir: Path, options: ReviewOptions, say: Callable[[str], None], state: _State) -> dict[str, Any]:
    started = _now()
    artifact = load_artifact(artifact_dir)
    # Two validations follow (the author's artifact here, the review's copy for its levels):
    # with the compiled schema validator loaded first, the schema layer answers a valid manifest
    # without importing jsonschema (17 ms of CPU instead of 57 ms, see docs/performance.md).
    compiled_is_valid(artifact.data)
    # The author's evidence as it is before the review adds anything to the artifact (when
    # evidence.run_records is the root itself, the review's records would be under it).
    validation = validate_path(artifact.root)
    best, _ = latest_successful(artifact)
    directory = options.directory or artifact.root / REVIEW_DIR / started.strftime("%Y%m%dT%H%M%S.%fZ")
    if directory.exists():
        raise ReviewError(f"the review directory {str(directory)!r} already exists",
                          "give a new directory, or remove the old one")
    try:
        state.make(directory)
    except OSError as exc:
        raise ReviewError(f"cannot create the review directory {str(directory)!r}: {exc.strerror or exc}",
                          "give a writable directory with -o DIR") from None
    directory = directory.resolve()
    findings = Findings(artifact)

    state.stage = "checking the manifest's choices and the evidence"
    say("checking the manifest's choices, the patch series and the evidence of each claim ...")
    challenge_choices(artifact, findings)
    _series(artifact, findings)
    check_observations(artifact, findings)
    runs = CleanShellRuns()
    if options.run:
        def stage(what: str) -> None:
            state.stage = what

        runs = run_clean_shell(artifact, directory / "work", findings, mode=options.env, image=options.image,
                               engine_url=options.engine_url, network=options.network, say=say,
                               on_output=options.on_output, on_stage=stage)
        if runs.outcome is not None and runs.outcome.signal is not None:
            # run_plans stopped the launchers and recorded them as interrupted: a review of
            # interrupted runs would report failures that are not the artifact's.
            raise KeyboardInterrupt
    state.stage = "comparing the runs"
    reviewed: dict[str, ClaimResult] = {}
    reviewed_levels: list[str] = []
    if runs.ran and runs.work is not None:
        results = collect_results(runs.work)
        reviewed = {c.claim: c for c in results.claims}
        reviewed_levels = results.levels_met
        if not reviewed_levels:
            _why_no_level(runs.work, findings)
        if not options.keep_work:
            prune_work(runs.work, runs.plans)
    review_runs = compare_with_records(runs, best, findings)
    claims = _claims(artifact, findings, runs, reviewed, best)
    findings.add_diagnostics(validation.diagnostics)

    ordered = findings.sorted()
    counts = {severity: sum(f["severity"] == severity for f in ordered) for severity in ("error", "warning", "info")}
    if not runs.ran:
        clean_shell = "not-run"
    else:
        clean_shell = "pass" if runs.outcome is not None and runs.outcome.ok else "fail"
    report: dict[str, Any] = {
        "review_version": "1.0",
        "tool": {"name": "rra-tools", "version": __version__, "spec_version": SPEC_VERSION},
        "artifact_id": artifact.manifest.id, "artifact_digest": artifact.digest, "manifest": findings.manifest_name,
        "started": utc_stamp(started), "ended": utc_stamp(_now()), "directory": findings.rel(directory),
        "environment": runs.environment, "clean_shell": clean_shell,
        "passed": counts["error"] == 0 and clean_shell == "pass",
        "levels": {"claimed": list(validation.levels_claimed or []), "recorded": list(validation.levels_met or []),
                   "reviewed": reviewed_levels},
        "counts": counts, "runs": review_runs, "claims": claims, "findings": ordered}
    # The review is done: a Ctrl-C now would only leave the two copies of its report unequal.
    with _sigint_held():
        _write(report, directory)
        say(f"review written to {findings.rel(directory / REPORT_JSON)} and {REPORT_MD}")
        latest = artifact.root / REVIEW_DIR
        if latest != directory:
            try:
                _write(report, latest)
            except ReviewError as exc:
                # The review's own directory holds the report; the artifact may be read-only.
                say(f"the latest review was not copied into {findings.rel(latest)}: {exc}")
    return report


def _write(report: dict[str, Any], directory: Path) -> None:
    """The report as JSON and Markdown into ``directory``."""
    data = json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    text = render_review(report)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        write_atomic(directory / REPORT_JSON, data.encode("utf-8"))
        write_atomic(directory / REPORT_MD, text.encode("utf-8"))
    except OSError as exc:
        raise ReviewError(f"cannot write the review report: {exc.strerror or exc}") from None
