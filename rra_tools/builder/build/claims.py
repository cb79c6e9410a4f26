"""Step **claims**: a *claim* decision for every candidate claim the draft found."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ...model.agent import AgentAnswer, AgentRequest, Candidate, DecisionKind
from ..agent import AnswerInvalid
from ..manifest_edit import edit_manifest
from .answers import apply_set, apply_with_files, plain_data
from .context import Build, readme_context


def run(build: Build) -> None:
    """One *claim* decision per candidate: a drafted claim (a table's number the draft wrote with
    TODOs) is confirmed by filling its TODOs, or rejected and removed; a candidate the draft did
    not write (a printed metric without a reported value) is confirmed by appending a claim."""
    record = build.steps["claims"]
    candidates = build.steps["specify"].outputs.get("candidates") or []
    decided: list[int] = record.outputs.setdefault("decided", [])
    confirmed: list[int] = record.outputs.setdefault("confirmed", [])
    settled: dict[str, bool] = {}  # drafted claim id -> kept, for candidates written into one claim
    for index, found in enumerate(candidates, 1):
        drafted = found.get("claim")
        if index in decided:
            if drafted is not None:
                settled.setdefault(str(drafted), index in confirmed)
            continue
        if drafted is not None and str(drafted) in settled:  # decided with the claim's first candidate
            decided.append(index)
            if settled[str(drafted)]:
                confirmed.append(index)
            continue
        candidate = Candidate.model_validate(found)
        ident = f"claim-{index}"
        if drafted is not None:
            kept, request = _drafted_claim(build, ident, candidate, str(drafted))
            settled[str(drafted)] = kept
        else:
            kept, request = _new_claim(build, ident, candidate)
        decided.append(index)
        if kept:
            confirmed.append(index)
        if request is not None:
            build.applied(request)  # saves the state too
        else:
            build.save()
    _questions(build, decided, confirmed)


def _questions(build: Build, decided: list[int], confirmed: list[int]) -> None:
    """One *claim* decision per result the draft could not read (a figure, an array, columns
    made at run time, or no result at all): the answer adds the claim, with the change that
    makes a script write its number if need be, or rejects the question."""
    questions = build.steps["specify"].outputs.get("claim_questions") or []
    offset = len(build.steps["specify"].outputs.get("candidates") or [])
    for number, found in enumerate(questions, 1):
        index = offset + number
        if index in decided:
            continue
        candidate = Candidate.model_validate(found)
        ident = f"claim-question-{number}"
        where = f" ({_where(candidate)})" if candidate.file not in (None, "", ".") else ""
        request = build.request(
            ident, DecisionKind.CLAIM,
            f"{candidate.value}{where}: which claim of the paper does it give? add the claim (at /claims/-), reading "
            "its number from what a launcher prints or writes; if no launcher writes it, write the files that make "
            "one write it (a change record explains them) and declare the output; or reject the question",
            candidate=candidate, context=readme_context(build))
        answer_path = build.answer_path(ident)
        todo = (f"add the claim to {build.root / build.artifact().manifest_path.name} by hand, or write the answer "
                f"{answer_path}: a claim appended ({{\"rra_agent_answer\": \"1.0\", \"request\": \"{ident}\", \"set\": "
                '[{"pointer": "/claims/-", "value": {...}}], with "files" and "change" when code must write the '
                'number}) or a rejection ({..., "reject": "why"})')
        answer = build.ask(request, todo).answer
        if (answer.reject is None) == (not answer.set):
            raise AnswerInvalid(f"answer {answer_path}: field 'reject': an answer to a claim question either adds "
                                "the claim ('set') or rejects the question ('reject'), not both or neither")
        if answer.files and answer.change is None:
            raise AnswerInvalid(f"answer {answer_path}: field 'change': files of the code are written, and a "
                                "change needs its record (id, kind, rationale, alters_method)")
        if answer.set:
            apply_with_files(build, answer, answer_path, f"{candidate.value}{where}",
                             check=_stated_check(build, answer_path))
            confirmed.append(index)
        decided.append(index)
        build.applied(request)


def _where(candidate: Candidate) -> str:
    return f"{candidate.file}:{candidate.line}" if candidate.line else str(candidate.file)


def _claim_index(build: Build, claim_id: str) -> int | None:
    claims = build.artifact().data.get("claims") or []
    return next((i for i, c in enumerate(claims) if isinstance(c, Mapping) and c.get("id") == claim_id), None)


def _drafted_claim(build: Build, ident: str, candidate: Candidate,
                   claim_id: str) -> tuple[bool, AgentRequest | None]:
    """Ask whether the claim the draft wrote is one: whether it is kept, and the request asked
    (None when the manifest already says: the claim removed, or its TODOs filled in, by hand)."""
    from ..draft import _placeholders

    position = _claim_index(build, claim_id)
    if position is None:
        return False, None  # removed by hand: rejected
    pointer = f"/claims/{position}"
    claim = build.artifact().data["claims"][position]
    todos = _placeholders(claim, pointer)
    if not todos:
        return True, None  # its TODOs filled in by hand: confirmed
    request = build.request(ident, DecisionKind.CLAIM,
                            f"is {candidate.value!r} ({_where(candidate)}) a claim of the paper? the draft wrote "
                            f"it as claim {claim_id!r} at {pointer}: confirm it by filling in its TODOs "
                            f"({', '.join(t.removeprefix(pointer + '/') for t in todos)}), or reject it",
                            candidate=candidate, pointer=pointer, value=claim, context=readme_context(build))
    answer_path = build.answer_path(ident)
    manifest = build.root / build.artifact().manifest_path.name
    todo = (f"fill in the TODOs of claim {claim_id!r} at {pointer} in {manifest}, or remove the claim; or write "
            f"the answer {answer_path}: values for its TODOs, or the whole claim, "
            '({"rra_agent_answer": "1.0", "request": "' + ident + '", "set": [{"pointer": "' + pointer
            + '", "value": {...}}]}) or a rejection ({..., "reject": "why"})')
    answer = _claim_answer(build, request, todo, answer_path)
    if answer.reject is not None:
        def remove(document: Any) -> None:
            del document["claims"][position]

        edit_manifest(build.artifact().manifest_path, remove)
        return False, request
    def confirmed(document: Any) -> None:
        claims = document.get("claims") or []
        left = _placeholders(plain_data(claims[position]), pointer) if position < len(claims) else [pointer]
        if left:
            raise AnswerInvalid(f"answer {answer_path}: field 'set': it leaves the TODO at {left[0]}",
                                f"a drafted claim is confirmed where it is: set its TODOs, or the whole claim "
                                f"at {pointer}; or reject it")

    stated = _stated_check(build, answer_path)

    def checked(document: Any) -> None:
        confirmed(document)
        stated(document)

    apply_set(build, answer, answer_path, checked)
    return True, request


def _new_claim(build: Build, ident: str, candidate: Candidate) -> tuple[bool, AgentRequest]:
    """Ask whether a candidate the draft did not write is a claim: whether one was added, and the
    request asked."""
    request = build.request(ident, DecisionKind.CLAIM,
                            f"is {candidate.value!r} ({_where(candidate)}) a claim of the paper? confirm it as a "
                            "claim, or reject it", candidate=candidate, context=readme_context(build))
    answer_path = build.answer_path(ident)
    todo = (f"write the answer {answer_path}: either a claim appended to the manifest "
            '({"rra_agent_answer": "1.0", "request": "' + ident + '", "set": [{"pointer": "/claims/-", '
            '"value": {...}}]}) or a rejection ({..., "reject": "why"})')
    answer = _claim_answer(build, request, todo, answer_path)
    apply_set(build, answer, answer_path, _stated_check(build, answer_path))
    return bool(answer.set), request


def _stated_check(build: Build, answer_path: Path) -> Callable[[Any], None]:
    """A check of an edited manifest (see :func:`.answers.apply_set`): every number claim whose
    reported value the answer sets or changes must print a number the repository states, as
    published (builder/stated.py); otherwise the answer is refused and nothing is applied."""
    from ..stated import unstated_claims

    before = {str(c.get("id")): (c.get("reported") or {}).get("value")
              for c in build.artifact().data.get("claims") or [] if isinstance(c, Mapping)}
    commit = build.steps["specify"].outputs.get("published")

    def check(document: Any) -> None:
        claims = plain_data(document.get("claims") or [])
        ids = [str(c.get("id")) for c in claims if isinstance(c, Mapping)]
        twice = sorted({ident for ident in ids if ids.count(ident) > 1})
        if twice:
            # Two answers may add the same claim (a candidate's and a question's): the second
            # would 'reproduce' with the first one's number (RRA202, RRA939).
            raise AnswerInvalid(f"answer {answer_path}: field 'set': claim {', '.join(map(repr, twice))} is "
                                "already in the manifest", "reject the question, or give the claim its own id and "
                                "number")
        if not commit:
            # A build state from before the commit was recorded: the check has nothing to read.
            build.progress("the reported values the answer gives are not checked against the repository: "
                           "this build's state does not record the commit it started from")
            return
        missing = unstated_claims(build.root, str(commit), claims, before)
        if missing:
            shown = ", ".join(f"{ident!r} ({text})" for ident, text in missing)
            raise AnswerInvalid(
                f"answer {answer_path}: field 'set': the reported value of claim {shown} is printed nowhere in the "
                f"repository as published (commit {str(commit)[:12]}: README, Markdown, LaTeX, CSV or JSON files)",
                "a reported value is the paper's number, and the agent's word is not evidence of it: quote it from "
                "the repository's texts, or reject the question; an author who has it only in the paper adds the "
                "claim to rra.yaml by hand, or quotes the paper's table in the README")

    return check


def _claim_answer(build: Build, request: AgentRequest, todo: str, answer_path: Path) -> AgentAnswer:
    answer = build.ask(request, todo).answer
    if (answer.reject is None) == (not answer.set):
        raise AnswerInvalid(f"answer {answer_path}: field 'reject': a claim answer either sets the claim "
                            "('set') or rejects the candidate ('reject'), not both or neither")
    if answer.files:
        raise AnswerInvalid(f"answer {answer_path}: field 'files': a claim answer changes the manifest only")
    return answer
