"""Step **preserve**: prove the patch series; unrecorded code changes are a *rationale* decision."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...model.agent import DecisionKind
from ..agent import AnswerInvalid
from .answers import LOG_TAIL, record_answer_change
from .context import Build
from .execute import code_digest
from .state import digest


def inputs(build: Build) -> str:
    """Digest of the step's inputs: the code and the patches."""
    artifact = build.artifact()
    patches = [p.get("sha256") for p in ((artifact.data.get("code") or {}).get("patches") or [])]
    return digest({"code": code_digest(build, artifact), "patches": patches})


def _unrecorded_diff(build: Build, files: Sequence[str]) -> str:
    from ..patches import git

    done = git(["diff", "--no-color", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "HEAD", "--",
                *files], cwd=build.root, check=False)
    return done.stdout.decode("utf-8", "replace")[:LOG_TAIL]


def run(build: Build) -> None:
    """Run the step (see the module docstring)."""
    from ..changes import SeriesMismatch, verify_series

    record = build.steps["preserve"]
    upstream = (build.artifact().data.get("code") or {}).get("upstream") or {}
    if not re.fullmatch(r"[0-9a-f]{40}", str(upstream.get("commit", ""))):
        record.note = "no upstream commit: there is no patch series to prove"
        return
    rationales = record.outputs.setdefault("rationales", 0)
    while True:
        try:
            verified = verify_series(build.root)
        except SeriesMismatch as exc:
            files = [d.rsplit(" (", 1)[0] for d in exc.differences]
            if not files:
                raise
            if rationales >= build.options.max_repairs:
                raise
            ident = f"rationale-{rationales + 1}"
            request = build.request(ident, DecisionKind.RATIONALE,
                                    f"the code differs from the upstream commit and the recorded patches in "
                                    f"{', '.join(files)}: why?", files=files, diff=_unrecorded_diff(build, files))
            todo = (f"record them: rra change record ID {' '.join(files)} -C {build.root} --kind KIND --rationale "
                    f"WHY --evidence TEXT --alters-method yes|no|unknown (or undo them); or write the answer "
                    f"{build.answer_path(ident)}")
            asked = build.ask(request, todo)
            answer_path = build.answer_path(ident)
            if asked.answer.change is None:
                raise AnswerInvalid(f"answer {answer_path}: field 'change': a rationale answer gives the change "
                                    "record (id, kind, rationale, alters_method)") from None
            runs = build.steps["execute"].outputs.get("runs") or {}
            evidence = "runs that succeed with it: " + ", ".join(sorted(runs.values())) if runs else \
                "found by rra build: the code differs from the recorded series"
            record_answer_change(build, asked.answer, answer_path, files, evidence)
            rationales += 1
            record.outputs["rationales"] = rationales
            build.applied(request)
            continue
        record.note = f"{len(verified.patches)} patch(es) prove the code: tree digest {verified.actual}"
        return
