"""The two files of ``rra build --agent CMD``: the request the builder writes at a decision point,
and the answer the agent writes back.

At each decision the builder writes an :class:`AgentRequest` (what is asked, with everything the
agent needs to know) and runs the agent command; the agent writes an :class:`AgentAnswer` to the
path the request names. Both are closed objects (unknown keys are errors, ``x-*`` extensions
are allowed), so a typo in an answer is reported instead of silently ignored. Which fields of an
answer a decision needs is said per kind in ``docs/builder.md`` and checked by the builder.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any

from pydantic import Field, StringConstraints

from ._base import RRAModel

__all__ = ["AgentAnswer", "AgentRequest", "AnswerChange", "Candidate", "DecisionKind", "FileWrite",
           "ManifestSet", "Usage"]

Text = Annotated[str, StringConstraints(min_length=1)]
#: A JSON pointer (RFC 6901) into the manifest; a last token '-' appends to a list.
Pointer = Annotated[str, StringConstraints(pattern=r"^(/([^~/]|~[01])*)+$")]


class DecisionKind(str, Enum):
    """What the builder asks."""

    #: A ``TODO`` value of the manifest to fill in (``pointer``, ``value``).
    PLACEHOLDER = "placeholder"
    #: A candidate claim found in the repository to confirm (as a claim) or reject (``candidate``;
    #: ``pointer`` and ``value``: the claim the draft wrote for it, with TODOs, if it wrote one).
    CLAIM = "claim"
    #: A failing step to repair: a launcher that failed (``launcher``, ``argv``, ``log_tail``) or a
    #: lock that does not resolve (``log_tail``).
    REPAIR = "repair"
    #: Changes of the code that no change record explains: say why (``files``, ``diff``).
    RATIONALE = "rationale"


class Candidate(RRAModel):
    """A number the repository shows that may be a claim of the paper."""

    item: Text = Field(description="What was found, e.g. 'claim-candidate'.")
    value: Text = Field(description="The finding as 'rra init' prints it, e.g. 'housing / RMSE = 0.82'.")
    file: str | None = Field(default=None, description="File it was found in, relative to the repository.")
    line: int | None = Field(default=None, ge=1, description="Line in that file.")
    note: str | None = Field(default=None, description="How it was found.")
    claim: str | None = Field(default=None, description="Id of the claim 'rra init' wrote it into (with TODOs "
                              "to confirm), if it wrote one.")


class AgentRequest(RRAModel):
    """One decision the builder cannot make itself, written to a file for the agent command."""

    rra_agent_request: str = Field(pattern=r"^1\.0$", description="Format version of this file: '1.0'.")
    id: Text = Field(description="Identifier of the decision, stable across re-runs of the build; the "
                     "answer names it in 'request'.")
    kind: DecisionKind = Field(description="'placeholder', 'claim', 'repair' or 'rationale'.")
    step: Text = Field(description="The build step that asks.")
    question: Text = Field(description="The decision in one sentence, for a person or a language model.")
    artifact: Text = Field(description="Absolute path of the artifact directory (a git checkout).")
    manifest: Text = Field(description="The manifest's path relative to the artifact.")
    answer: Text = Field(description="Absolute path the answer must be written to.")
    pointer: str | None = Field(default=None, description="placeholder: JSON pointer of the TODO value; "
                                "claim: of the claim the draft wrote for the candidate, if it wrote one.")
    value: Any = Field(default=None, description="placeholder: the TODO value as it is now; claim: the drafted "
                       "claim as it is now.")
    candidate: Candidate | None = Field(default=None, description="claim: the candidate to confirm or reject.")
    launcher: str | None = Field(default=None, description="repair: id of the launcher that failed (absent "
                                 "for a lock that does not resolve).")
    argv: list[str] | None = Field(default=None, description="repair: the command that ran.")
    exit_status: int | None = Field(default=None, description="repair: its exit status.")
    status: str | None = Field(default=None, description="repair: how the run ended ('failed', 'timeout', ...).")
    run_record: str | None = Field(default=None, description="repair: the failed run's record, relative to "
                                   "the artifact.")
    log_tail: str | None = Field(default=None, description="repair: the end of the run's output (or of the "
                                 "lock's error).")
    attempt: int | None = Field(default=None, ge=1, description="repair: 1 for the first repair of this "
                                "launcher, 2 after one repair did not help, ...")
    files: list[str] | None = Field(default=None, description="rationale: code files changed without a "
                                    "change record.")
    diff: str | None = Field(default=None, description="rationale: the unrecorded changes as a diff (its "
                             "start).")
    context: dict[str, str] | None = Field(default=None, description="What else the repository says that may "
                                           "help, e.g. the commands its README shows.")


class ManifestSet(RRAModel):
    """Set one value of the manifest."""

    pointer: Pointer = Field(description="JSON pointer of the value to set; a last token '-' appends to a "
                             "list. Parents must exist.")
    value: Any = Field(description="The new value (any JSON).")


class FileWrite(RRAModel):
    """Replace (or create) one file of the artifact's code."""

    path: Text = Field(description="Path relative to the artifact; it must stay inside it.")
    content: str = Field(description="The whole new text of the file (UTF-8).")


class AnswerChange(RRAModel):
    """The change record of a repair: why the code was changed."""

    id: Text = Field(description="Change id, e.g. 'fix-readme-command'.")
    kind: Annotated[str, StringConstraints(
        pattern=r"^(dependency-pin|loader-repair|bug-fix|config|path|performance|other)$")] = Field(
        description="dependency-pin, loader-repair, bug-fix, config, path, performance or other.")
    rationale: Text = Field(description="Why the change was needed.")
    alters_method: Annotated[str, StringConstraints(pattern=r"^(yes|no|unknown)$")] = Field(
        description="Whether it may alter what the paper's method computes: yes, no or unknown.")
    evidence: str | None = Field(default=None, description="What shows it was needed; default: the failing "
                                 "log the request carried.")
    summary: str | None = Field(default=None, description="One line; default: the rationale's first line.")


class Usage(RRAModel):
    """What answering cost, as the agent reports it; recorded in the build report."""

    model: str | None = Field(default=None, description="The model or tool that answered.")
    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    cost_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False, description="Cost in US dollars.")


class AgentAnswer(RRAModel):
    """The agent's answer to one request. Which fields a kind needs: placeholder: 'set' (it must
    replace the TODO); claim: 'set' (the drafted claim's TODOs, or the whole claim at the request's
    'pointer'; without one, a claim appended at '/claims/-') or 'reject'; repair:
    'files' and/or 'set', and 'change' when files of the code are written; rationale: 'change'."""

    rra_agent_answer: str = Field(pattern=r"^1\.0$", description="Format version of this file: '1.0'.")
    request: Text = Field(description="The id of the request answered.")
    set: list[ManifestSet] = Field(default_factory=list, description="Manifest values to set, in order.")
    files: list[FileWrite] = Field(default_factory=list, description="Code files to write, in order.")
    change: AnswerChange | None = Field(default=None, description="The change record of the files written "
                                        "(repair) or of the unrecorded changes (rationale).")
    reject: str | None = Field(default=None, description="claim: why the candidate is not a claim.")
    give_up: str | None = Field(default=None, description="The agent cannot decide: why. The build stops "
                                "and shows it.")
    usage: Usage | None = Field(default=None, description="Tokens and cost of producing this answer.")
