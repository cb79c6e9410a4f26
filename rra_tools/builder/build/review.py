"""Step **review**: the independent review; the build fails when it does not pass."""

from __future__ import annotations

from .context import Build
from .errors import BuildError
from .execute import code_digest
from .state import digest


def inputs(build: Build) -> str:
    """Digest of the step's inputs: the manifest, the code and the review's environment."""
    artifact = build.artifact()
    return digest({"manifest": artifact.digest, "code": code_digest(build, artifact),
                    "env": build.options.review_env})


def run(build: Build) -> None:
    """Run the step (see the module docstring)."""
    from ..review.artifact import ReviewOptions, review_artifact

    report = review_artifact(build.root, options=ReviewOptions(env=build.options.review_env),
                             progress=build.progress)
    counts = report.counts
    where = f"{report.directory}/review.md"
    summary = f"{counts.error} error(s), {counts.warning} warning(s), {counts.info} info; clean shell " \
              f"{report.clean_shell}; report {where}"
    build.steps["review"].outputs = {"directory": report.directory, "passed": report.passed}
    if not report.passed:
        errors = [f"{f.code} {f.message}" for f in report.findings if f.severity == "error"][:3]
        raise BuildError(f"the review did not pass: {summary}" + "".join(f"\n  {e}" for e in errors),
                         f"read {build.root / where}, repair what it found, and run the build again")
    build.steps["review"].note = f"passed: {summary}"
