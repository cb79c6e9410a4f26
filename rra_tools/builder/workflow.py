"""``rra build RAW_REPO``: the whole builder workflow as steps, with checkpoints.

Steps, in order (:data:`STEPS`):

- **specify**: clone ``RAW_REPO`` into the artifact directory (unless the build is in place) and
  draft the manifest (:func:`rra_tools.builder.draft.draft_manifest`);
- **fill**: ask for every ``TODO`` value of the manifest (a *placeholder* decision each);
- **claims**: ask, for every candidate claim the draft found, whether it is a claim (a *claim*
  decision each): a claim the draft wrote with TODOs is confirmed by filling them in, or removed;
- **lock**: write the PEP 751 lock (:func:`rra_tools.env.resolve.lock_from_requirements`); a
  lock that does not resolve is a *repair* decision; ``skip_lock`` skips it with a reason;
- **execute**: run every launcher once through :func:`rra_tools.run.run_plans`; a launcher that
  fails is a *repair* decision, and the repair (files written) becomes a change record
  (:func:`rra_tools.builder.changes.record_change`); then it runs again;
- **preserve**: prove the patch series (:func:`rra_tools.builder.changes.verify_series`); code
  changed without a change record is a *rationale* decision;
- **reference**: run each claim's launcher ``reference_runs`` times (a stochastic one: each of
  its seeds) and add the runs as reference observations (:func:`rra_tools.builder.reference.add_references`),
  by ``"rra build"``, from the refined code, on this machine;
- **guide**: write the reproduction guide (:func:`rra_tools.builder.guide.write_guide`);
- **review**: the independent review (:func:`rra_tools.builder.review.review_artifact`): every
  launcher re-run from a clean shell in a fresh copy; the build fails when the review does not pass.

Checkpoints: the state file ``.rra/build/state.json`` of the artifact records, for every step,
its status, the digest of its inputs as they were when it finished, its wall time and the
tokens and cost the agent reported. A re-run skips every finished step whose inputs have the
same digest, up to the first one that must run; from there on every step runs. The build stops
at a decision nobody answered (:class:`~rra_tools.builder.agent.DecisionNeeded`) with the state
saved, so running it again resumes there.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import ExitStatus, RRAError
from ..io.artifact import Artifact, load_artifact
from ..io.atomic import write_atomic
from ..model.agent import AgentAnswer, AgentRequest, Candidate, DecisionKind
from ..agents.cell import make_cell_options
from .agent import Agent, AnswerInvalid, Asked, decision_paths
from .manifest_edit import EditError, edit_manifest

__all__ = ["STATE_PATH", "STEPS", "BuildError", "BuildInputError", "BuildOptions", "BuildResult", "StepRecord", "build",
           "read_state"]

#: The steps of a build, in order.
STEPS = ("specify", "fill", "claims", "lock", "execute", "preserve", "reference", "guide", "review")
#: The state file (checkpoints and the build report), relative to the artifact.
STATE_PATH = ".rra/build/state.json"
#: Who the build's own reference observations are by.
BUILDER = "rra build"
_STATE_FORMAT = "1.0"
#: Most decisions one step may ask before the build gives up (a loop guard).
_MAX_DECISIONS = 500
#: How much of a failed run's output a repair request carries.
_LOG_TAIL = 4000

Progress = Callable[[str], None]


class BuildError(RRAError):
    """The build cannot go on; the message says why and the hint what to do."""

    exit_status = ExitStatus.FAILED

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class BuildInputError(BuildError):
    """RAW_REPO or the artifact directory cannot be built from or into (a usage error)."""

    exit_status = ExitStatus.USAGE


@dataclass(frozen=True)
class BuildOptions:
    """What ``rra build`` was asked."""

    raw: Path
    #: The artifact directory; the same as ``raw`` for a build in place.
    artifact: Path
    upstream: str | None = None
    artifact_id: str | None = None
    title: str | None = None
    #: The agent command (``--agent``), or None: stop at the first decision.
    agent: str | None = None
    agent_timeout_s: float = 3600.0
    #: Why the lock step is skipped (``--skip-lock REASON``), or None to lock.
    skip_lock: str | None = None
    #: Runs of each claim's launcher that become reference observations (0: none).
    reference_runs: int = 3
    #: Repairs tried per launcher (and for the lock) before the build gives up.
    max_repairs: int = 3
    #: Where the review runs the launchers: 'locked' (a fresh environment from the lock),
    #: 'current' (this interpreter) or 'container' (the artifact's image).
    review_env: str = "locked"
    #: Where the agent command runs (``--sandbox``): 'auto', 'podman', 'bwrap' or 'none'.
    sandbox: str = "auto"
    #: Where its model calls go (``--upstream PROVIDER=URL``) and the price table (``--price-table``).
    upstreams: tuple[str, ...] = ()
    price_table: Path | None = None


@dataclass
class StepRecord:
    """One step in the state file: its last outcome and what it has cost, all runs together."""

    name: str
    #: 'pending', 'done', 'skipped' (done without doing: see ``note``), 'stopped' (at a decision)
    #: or 'failed'.
    status: str = "pending"
    #: Digest of the step's inputs when it finished ('' until then).
    inputs: str = ""
    started: str | None = None
    finished: str | None = None
    #: Wall-clock seconds spent in the step, over every run of the build (stopped runs too).
    wall_s: float = 0.0
    runs: int = 0
    decisions: list[dict[str, Any]] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    #: Whether the agent stated tokens or cost for any answer of the step.
    usage_reported: bool = False
    #: Whether the metering proxy measured the model calls of an answer of the step (its tokens
    #: and cost then count, not what the agent stated).
    usage_metered: bool = False
    note: str = ""
    #: What the step found or made that later steps (and the report) use.
    outputs: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The record as written to the state file."""
        return {key: getattr(self, key) for key in self.__dataclass_fields__}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StepRecord:
        """A record read back from the state file (unknown keys ignored)."""
        return cls(**{key: data[key] for key in cls.__dataclass_fields__ if key in data})


@dataclass
class BuildResult:
    """What one run of the build did: the steps it ran and skipped, and the whole state."""

    artifact: Path
    steps: list[StepRecord]
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_state(artifact: Path) -> tuple[dict[str, Any], list[StepRecord]] | None:
    """The header and step records of the state file of ``artifact``, or None when it has none."""
    path = artifact / STATE_PATH
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_bytes())
        header = {k: v for k, v in data.items() if k != "steps"}
        steps = [StepRecord.from_json(s) for s in data["steps"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BuildError(f"the build state {path} cannot be read: {exc}",
                         "remove it to start the build over (every step then runs again)") from None
    if data.get("rra_build_state") != _STATE_FORMAT:
        raise BuildError(f"the build state {path} is of format {data.get('rra_build_state')!r}, not "
                         f"{_STATE_FORMAT!r}", "remove it to start the build over")
    return header, steps


class _Build:
    """One run of the build: options, the agent, the state, progress."""

    def __init__(self, options: BuildOptions, progress: Progress) -> None:
        self.options = options
        self.raw = options.raw.resolve()
        self.root = options.artifact.resolve()
        self.progress = progress
        cell = None
        if options.agent is not None:
            cell = make_cell_options(options.sandbox, options.upstreams, options.price_table)
        self.agent = Agent(options.agent, timeout_s=options.agent_timeout_s, progress=progress, cell=cell)
        self.header: dict[str, Any] = {}
        self.steps = {name: StepRecord(name) for name in STEPS}
        self.current: StepRecord | None = None

    # -- state ---------------------------------------------------------------------------------

    def load_state(self) -> bool:
        found = read_state(self.root) if self.root.is_dir() else None
        if found is None:
            return False
        self.header, records = found
        for record in records:
            if record.name in self.steps:
                self.steps[record.name] = record
        return True

    def save(self) -> None:
        path = self.root / STATE_PATH
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {"rra_build_state": _STATE_FORMAT, **{k: v for k, v in self.header.items() if k != "rra_build_state"},
                "steps": [self.steps[name].to_json() for name in STEPS]}
        write_atomic(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
        from .build_report import REPORT_PATH, render_report

        write_atomic(self.root / REPORT_PATH, render_report([self.steps[name] for name in STEPS]).encode("utf-8"))

    # -- helpers -------------------------------------------------------------------------------

    def artifact(self) -> Artifact:
        return load_artifact(self.root)

    def rel(self, path: Path) -> str:
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def ask(self, request: AgentRequest, todo: str) -> Asked:
        record = self.current
        assert record is not None
        if len(record.decisions) >= _MAX_DECISIONS:
            raise BuildError(f"step {record.name!r} asked {_MAX_DECISIONS} decisions; giving up")
        asked = self.agent.ask(self.root, request, todo)
        usage = asked.answer.usage
        kind = request.kind.value if isinstance(request.kind, DecisionKind) else str(request.kind)
        entry: dict[str, Any] = {"id": request.id, "kind": kind, "source": asked.source,
                                 "wall_s": round(asked.wall_s, 3)}
        if asked.adapter is not None:
            name, version, model = asked.adapter
            request_path, _ = decision_paths(self.root, request.id)
            entry["agent"] = {"adapter": name, "version": version, "model": model,
                              "transcript": self.rel(request_path.with_name(
                                  request_path.name.replace(".request.json", ".transcript")))}
        metered = asked.metered
        if metered is not None:
            entry["metered"] = {"calls": metered.calls, "input_tokens": metered.input_tokens + metered.cache_read_tokens
                                + metered.cache_write_tokens, "output_tokens": metered.output_tokens,
                                "cost_usd": metered.cost_usd, "price_table": metered.price_table}
        if metered is not None and metered.calls:
            # Measured by the proxy: these count; what the agent stated is kept beside them.
            record.input_tokens += entry["metered"]["input_tokens"]
            record.output_tokens += metered.output_tokens
            record.cost_usd = round(record.cost_usd + metered.cost_usd, 6)
            record.usage_metered = True
            if asked.reported is not None:
                # An agent adapter's run: what the agent program reported of itself.
                reported = asked.reported
                figures = {"input_tokens": None if reported.input_tokens is None else reported.input_tokens + (
                    reported.cache_read_tokens or 0) + (reported.cache_write_tokens or 0),
                    "output_tokens": reported.output_tokens, "calls": reported.calls, "cost_usd": reported.cost_usd}
                entry["stated"] = {k: v for k, v in figures.items() if v is not None}
            elif usage is not None:
                entry["stated"] = {k: getattr(usage, k) for k in ("model", "input_tokens", "output_tokens", "cost_usd")
                                   if getattr(usage, k) is not None}
        elif usage is not None:
            for key in ("model", "input_tokens", "output_tokens", "cost_usd"):
                value = getattr(usage, key)
                if value is not None:
                    entry[key] = value
            record.input_tokens += usage.input_tokens or 0
            record.output_tokens += usage.output_tokens or 0
            record.cost_usd = round(record.cost_usd + (usage.cost_usd or 0.0), 6)
            record.usage_reported = record.usage_reported or any(
                v is not None for v in (usage.input_tokens, usage.output_tokens, usage.cost_usd))
        if asked.answer.give_up:
            request_path, answer_path = decision_paths(self.root, request.id)
            if answer_path.is_file():  # kept aside: the next run asks again
                answer_path.rename(answer_path.with_name(answer_path.name.replace(".answer.json", ".gave-up.json")))
            record.decisions.append({**entry, "gave_up": asked.answer.give_up})
            raise BuildError(f"the agent gave up on {request.id} ({request.question}): {asked.answer.give_up}",
                             f"decide it by hand: {todo}; the request is {request_path}")
        record.decisions.append(entry)
        return asked

    def applied(self, request: AgentRequest) -> None:
        """Keep an applied answer beside its request under another name, so that a later
        decision with the same id is asked again instead of answered by this one."""
        request_path, answer_path = decision_paths(self.root, request.id)
        if answer_path.is_file():
            stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
            answer_path.rename(answer_path.with_name(answer_path.name.replace(".answer.json",
                                                                              f".applied-{stamp}.json")))
        self.save()

    def request(self, ident: str, kind: DecisionKind, question: str, **fields: Any) -> AgentRequest:
        _, answer = decision_paths(self.root, ident)
        assert self.current is not None
        return AgentRequest(rra_agent_request="1.0", id=ident, kind=kind, step=self.current.name, question=question,
                            artifact=str(self.root), manifest=self.artifact().manifest_path.name, answer=str(answer),
                            **fields)

    def answer_path(self, ident: str) -> Path:
        return decision_paths(self.root, ident)[1]


# -- applying answers --------------------------------------------------------------------------


def _tokens(pointer: str) -> list[str]:
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]


def _get(data: Any, pointer: str) -> Any:
    for token in _tokens(pointer):
        data = data[int(token)] if isinstance(data, list) else data[token]
    return data


def _set_pointer(document: Any, pointer: str, value: Any, where: str) -> None:
    tokens = _tokens(pointer)
    node = document
    for depth, token in enumerate(tokens[:-1]):
        shown = "/" + "/".join(tokens[:depth + 1])
        if isinstance(node, list):
            if not token.isdigit() or int(token) >= len(node):
                raise AnswerInvalid(f"{where}: {pointer!r}: the list at {shown.rsplit('/', 1)[0] or '/'} has no "
                                    f"item {token!r}")
            node = node[int(token)]
        elif isinstance(node, Mapping):
            if token not in node:
                raise AnswerInvalid(f"{where}: {pointer!r}: {shown} does not exist (parents must exist)")
            node = node[token]
        else:
            raise AnswerInvalid(f"{where}: {pointer!r}: {shown} is inside a value that is not a mapping or a list")
    last = tokens[-1]
    if isinstance(node, list):
        if last == "-" or (last.isdigit() and int(last) == len(node)):
            node.append(value)
        elif last.isdigit() and int(last) < len(node):
            node[int(last)] = value
        else:
            raise AnswerInvalid(f"{where}: {pointer!r}: {last!r} is not an index of the list (or '-')")
    elif hasattr(node, "__setitem__") and isinstance(node, Mapping):
        node[last] = value  # type: ignore[index]
    else:
        raise AnswerInvalid(f"{where}: {pointer!r}: the parent is not a mapping or a list")


def _apply_set(build: _Build, answer: AgentAnswer, answer_path: Path,
               check: Callable[[Any], None] | None = None) -> None:
    """Apply the answer's ``set`` to the manifest; ``check`` sees the edited document before it
    is written, and what it raises leaves the manifest as it was."""
    if not answer.set:
        return
    manifest = build.artifact().manifest_path

    def mutate(document: Any) -> None:
        for i, edit in enumerate(answer.set):
            _set_pointer(document, edit.pointer, edit.value, f"answer {answer_path}: field 'set/{i}/pointer'")
        if check is not None:
            check(document)

    try:
        edit_manifest(manifest, mutate)
    except EditError as exc:
        raise AnswerInvalid(f"answer {answer_path}: field 'set': {exc}") from None


def _file_targets(build: _Build, answer: AgentAnswer, answer_path: Path) -> list[tuple[str, Path, str]]:
    """(path, target, content) of each file the answer writes, every path checked before any
    file or manifest value is written: a refused answer changes nothing."""
    from .patches import own_paths

    artifact = build.artifact()
    own = own_paths(artifact.manifest_path.name, artifact.data)
    targets: list[tuple[str, Path, str]] = []
    for i, write in enumerate(answer.files):
        rel = PurePosixPath(write.path.replace("\\", "/"))
        text = rel.as_posix().removeprefix("./")
        where = f"answer {answer_path}: field 'files/{i}/path'"
        if rel.is_absolute() or ".." in rel.parts or text in ("", "."):
            raise AnswerInvalid(f"{where}: {write.path!r} is not a path inside the artifact")
        if text == ".git" or text.startswith(".git/") or any(text == o or text.startswith(f"{o}/") for o in own):
            raise AnswerInvalid(f"{where}: {write.path!r} is one of the artifact's own files, not code",
                                "change the manifest with 'set', not 'files'")
        target = build.root / text
        if not target.parent.resolve().is_relative_to(build.root) or target.is_symlink():
            raise AnswerInvalid(f"{where}: {write.path!r} leads out of the artifact")
        targets.append((text, target, write.content))
    return targets


def _write_files(targets: Sequence[tuple[str, Path, str]]) -> list[str]:
    """Write the files :func:`_file_targets` checked; their paths."""
    for _, target, content in targets:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, content.encode("utf-8"))
    return [text for text, _, _ in targets]


def _record(build: _Build, answer: AgentAnswer, answer_path: Path, files: list[str], evidence: str,
            launcher: str | None = None) -> str | None:
    """Record the change of ``files`` that ``answer`` explains; its id, or None when no file changed."""
    from .changes import ChangeInput, record_change

    if not files:
        return None
    change = answer.change
    if change is None:
        raise AnswerInvalid(f"answer {answer_path}: field 'change': files of the code were written "
                            f"({', '.join(files)}), and a change needs its record (id, kind, rationale, "
                            "alters_method)")
    recorded = record_change(build.root, ChangeInput(
        id=change.id, kind=change.kind, rationale=change.rationale, evidence=change.evidence or evidence,
        alters_method=change.alters_method, summary=change.summary, paths=files,
        launchers=(launcher,) if launcher else ()))
    build.progress(f"recorded change {recorded.id}: {recorded.patch} ({', '.join(recorded.files)})")
    return recorded.id


# -- the steps ---------------------------------------------------------------------------------


def _raw_commit(raw: Path) -> str:
    from .patches import git

    done = git(["rev-parse", "--verify", "-q", "HEAD^{commit}"], cwd=raw, check=False)
    commit = done.stdout.decode().strip()
    if done.returncode != 0 or not commit:
        raise BuildInputError(f"{raw} has no commit yet", "commit the repository as published first: the build "
                         "records repairs as patches against a commit")
    return commit


def _specify_inputs(build: _Build) -> str:
    options = build.options
    return _digest({"raw": str(build.raw), "commit": _raw_commit(build.raw), "upstream": options.upstream,
                    "id": options.artifact_id, "title": options.title})


def _clone(build: _Build) -> None:
    from .detect.repo import RawRepo
    from .patches import git

    if build.root.exists() and any(build.root.iterdir()):
        raise BuildInputError(f"{build.root} is not empty and holds no build state",
                         "build into a new directory (-o), or resume a build in the directory it wrote")
    build.root.parent.mkdir(parents=True, exist_ok=True)
    git(["clone", "--quiet", "--no-hardlinks", str(build.raw), str(build.root)], cwd=build.root.parent)
    url, _ = RawRepo.open(build.raw).upstream()
    if url is not None:
        git(["remote", "set-url", "origin", url], cwd=build.root)
    else:  # the clone's origin is the local path, which is not where the code comes from
        git(["remote", "remove", "origin"], cwd=build.root)


def _specify(build: _Build) -> None:
    from .detect.repo import RawRepo, is_raw_repo
    from .draft import draft_manifest, write_draft
    from .init import _slug

    if not is_raw_repo(build.raw):
        raise BuildInputError(f"{build.raw} is not the root of a git working tree",
                         "rra build starts from a git repository: clone it, or 'git init && git add -A && "
                         "git commit' it as published")
    record = build.steps["specify"]
    if build.root != build.raw:
        if RawRepo.open(build.raw).modified():
            record.note = "RAW_REPO has uncommitted changes; the artifact starts from its commit"
        if not (build.root / ".git").exists():
            _clone(build)
    draft = draft_manifest(build.root, upstream=build.options.upstream,
                           artifact_id=build.options.artifact_id or _slug(build.raw.name),
                           title=build.options.title, in_place=True)
    written = write_draft(draft, build.root)
    build.progress(f"wrote {build.rel(written[0])}: {len(draft.placeholders)} placeholder(s), "
                   f"{len(draft.candidates)} candidate claim(s)")
    if len(written) > 1:
        _record_drafted_requirements(build, build.rel(written[1]), str(draft.environment.source))
    record.outputs = {
        "candidates": [{"item": f.item, "value": str(f.value), **({"file": f.file} if f.file else {}),
                        **({"line": f.line} if f.line else {}), **({"note": f.note} if f.note else {}),
                        **({"claim": draft.written[i]} if i in draft.written else {})}
                       for i, f in enumerate(draft.candidates)],
        "readme_commands": [str(f.value) for f in draft.findings if f.item == "readme-command"],
        "assumed": list(draft.assumed),
    }


def _record_drafted_requirements(build: _Build, rel: str, source: str) -> None:
    """The requirements file ``rra init`` wrote is a change of the code: record it, with why."""
    from .changes import ChangeInput, record_change
    from .patches import GitError

    upstream = (build.artifact().data.get("code") or {}).get("upstream") or {}
    if not re.fullmatch(r"[0-9a-f]{40}", str(upstream.get("commit", ""))):
        return  # no upstream commit to patch against; the preserve step says so
    try:
        recorded = record_change(build.root, ChangeInput(
            id="drafted-requirements", kind="config", alters_method="no", paths=(rel,),
            summary=f"{rel} drafted from {source} for rra lock",
            rationale=f"The repository declares its requirements in {source}, which rra lock does not read "
                      f"(it reads requirements.in, requirements.txt or pyproject.toml); rra init translated them "
                      f"into {rel}, whose header lists what could not be translated.",
            evidence=f"rra init: the requirements found in {source}, in the order of its precedence rules"))
    except GitError:
        return
    build.progress(f"recorded change {recorded.id}: {recorded.patch} ({rel})")


def _context(build: _Build) -> dict[str, str] | None:
    commands = build.steps["specify"].outputs.get("readme_commands") or []
    return {"readme_commands": "\n".join(commands)} if commands else None


def _fill(build: _Build) -> None:
    from .draft import _placeholders

    drafted = {str(c["claim"]) for c in build.steps["specify"].outputs.get("candidates") or [] if c.get("claim")}
    for _ in range(_MAX_DECISIONS):
        artifact = build.artifact()
        # A drafted claim's TODOs are the claims step's: confirming the claim fills them.
        claims = [c.get("id") if isinstance(c, Mapping) else None for c in artifact.data.get("claims") or []]
        pointers = [p for p in _placeholders(artifact.data) if not (
            p.startswith("/claims/") and claims[int(p.split("/")[2])] in drafted)]
        if not pointers:
            return
        pointer = pointers[0]
        value = _get(artifact.data, pointer)
        ident = "placeholder" + pointer
        manifest = build.rel(artifact.manifest_path)
        request = build.request(ident, DecisionKind.PLACEHOLDER,
                                f"the manifest's {pointer} is a placeholder ({value!r}): what is its value?",
                                pointer=pointer, value=value, context=_context(build))
        answer_path = build.answer_path(ident)
        todo = (f"replace the TODO at {pointer} in {build.root / manifest} (now {value!r}), or write the answer "
                f"{answer_path}")
        asked = build.ask(request, todo)
        if not asked.answer.set:
            raise AnswerInvalid(f"answer {answer_path}: field 'set': a placeholder answer sets the value at "
                                f"{pointer}")
        if asked.answer.files:
            raise AnswerInvalid(f"answer {answer_path}: field 'files': a placeholder answer changes the "
                                "manifest only")
        _apply_set(build, asked.answer, answer_path, _fills(pointer, answer_path))
        build.applied(request)
    raise BuildError(f"more than {_MAX_DECISIONS} placeholders were asked; giving up")


def _fills(pointer: str, answer_path: Path) -> Callable[[Any], None]:
    """The check of a placeholder answer, before anything is written: it must leave no TODO at
    ``pointer`` (a refused answer leaves the manifest as it was)."""
    from .draft import _placeholders

    def check(document: Any) -> None:
        if pointer in _placeholders(_plain(document)):
            raise AnswerInvalid(f"answer {answer_path}: field 'set': it leaves the TODO at {pointer}",
                                f"set the value at {pointer} itself; nothing was written")

    return check


def _claims(build: _Build) -> None:
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


def _plain(node: Any) -> Any:
    """A round-trip YAML node as plain dicts, lists and scalars."""
    if isinstance(node, Mapping):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return str(node) if isinstance(node, str) else node


def _where(candidate: Candidate) -> str:
    return f"{candidate.file}:{candidate.line}" if candidate.line else str(candidate.file)


def _claim_index(build: _Build, claim_id: str) -> int | None:
    claims = build.artifact().data.get("claims") or []
    return next((i for i, c in enumerate(claims) if isinstance(c, Mapping) and c.get("id") == claim_id), None)


def _drafted_claim(build: _Build, ident: str, candidate: Candidate,
                   claim_id: str) -> tuple[bool, AgentRequest | None]:
    """Ask whether the claim the draft wrote is one: whether it is kept, and the request asked
    (None when the manifest already says: the claim removed, or its TODOs filled in, by hand)."""
    from .draft import _placeholders

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
                            candidate=candidate, pointer=pointer, value=claim, context=_context(build))
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
        left = _placeholders(_plain(claims[position]), pointer) if position < len(claims) else [pointer]
        if left:
            raise AnswerInvalid(f"answer {answer_path}: field 'set': it leaves the TODO at {left[0]}",
                                f"a drafted claim is confirmed where it is: set its TODOs, or the whole claim "
                                f"at {pointer}; or reject it")

    _apply_set(build, answer, answer_path, confirmed)
    return True, request


def _new_claim(build: _Build, ident: str, candidate: Candidate) -> tuple[bool, AgentRequest]:
    """Ask whether a candidate the draft did not write is a claim: whether one was added, and the
    request asked."""
    request = build.request(ident, DecisionKind.CLAIM,
                            f"is {candidate.value!r} ({_where(candidate)}) a claim of the paper? confirm it as a "
                            "claim, or reject it", candidate=candidate, context=_context(build))
    answer_path = build.answer_path(ident)
    todo = (f"write the answer {answer_path}: either a claim appended to the manifest "
            '({"rra_agent_answer": "1.0", "request": "' + ident + '", "set": [{"pointer": "/claims/-", '
            '"value": {...}}]}) or a rejection ({..., "reject": "why"})')
    answer = _claim_answer(build, request, todo, answer_path)
    _apply_set(build, answer, answer_path)
    return bool(answer.set), request


def _claim_answer(build: _Build, request: AgentRequest, todo: str, answer_path: Path) -> AgentAnswer:
    answer = build.ask(request, todo).answer
    if (answer.reject is None) == (not answer.set):
        raise AnswerInvalid(f"answer {answer_path}: field 'reject': a claim answer either sets the claim "
                            "('set') or rejects the candidate ('reject'), not both or neither")
    if answer.files:
        raise AnswerInvalid(f"answer {answer_path}: field 'files': a claim answer changes the manifest only")
    return answer


def _lock_inputs(build: _Build) -> str:
    root = build.root
    names = ("requirements.in", "requirements.txt", "pyproject.toml", "environment.yml", "environment.yaml")
    files = {name: hashlib.sha256((root / name).read_bytes()).hexdigest() for name in names if (root / name).is_file()}
    environment = build.artifact().data.get("environment") or {}
    return _digest({"files": files, "interpreter": (environment.get("interpreter") or {}).get("version"),
                    "lock": (environment.get("lock") or {}).get("sha256"), "skip": build.options.skip_lock})


def _repair_answer(build: _Build, request: AgentRequest, todo: str, evidence: str,
                   launcher: str | None) -> None:
    asked = build.ask(request, todo)
    answer = asked.answer
    answer_path = build.answer_path(request.id)
    if not answer.files and not answer.set:
        raise AnswerInvalid(f"answer {answer_path}: field 'files': a repair writes files ('files') or changes "
                            "the manifest ('set')")
    if answer.files and answer.change is None:
        raise AnswerInvalid(f"answer {answer_path}: field 'change': files of the code are written, and a change "
                            "needs its record (id, kind, rationale, alters_method)")
    targets = _file_targets(build, answer, answer_path)
    _apply_set(build, answer, answer_path)
    files = _write_files(targets)
    changed = _record(build, answer, answer_path, files, evidence, launcher)
    record = build.current
    assert record is not None
    record.decisions[-1]["change"] = changed
    if answer.change is not None and changed is None:
        record.decisions[-1]["rationale"] = answer.change.rationale
    build.applied(request)


def _lock(build: _Build) -> None:
    from ..env.artifact import update_lock_block
    from ..env.locks import read_lock
    from ..env.resolve import ResolveError, lock_from_requirements
    from ..io.digest import sha256_file

    record = build.steps["lock"]
    if build.options.skip_lock is not None:
        record.status = "skipped"
        record.note = f"skipped: {build.options.skip_lock}"
        return
    repairs = record.outputs.setdefault("repairs", 0)
    while True:
        artifact = build.artifact()
        lock = (artifact.data.get("environment") or {}).get("lock") or {}
        rel = str(lock["path"]) if lock.get("format") == "pylock" and lock.get("path") else "pylock.toml"
        target = artifact.inside(rel)
        try:
            lock_from_requirements(artifact, target)
        except ResolveError as exc:
            message = str(exc)
            if "could not be reached" in message or "declares no requirements" in message:
                raise BuildError(f"the lock step failed: {message}",
                                 "fix that and run the build again, or skip the step with --skip-lock REASON "
                                 "(the artifact then has no lock and is not 'available')") from None
            if repairs >= build.options.max_repairs:
                raise BuildError(f"the lock still does not resolve after {repairs} repair(s): {message}") from None
            ident = f"repair-lock-{repairs + 1}"
            request = build.request(ident, DecisionKind.REPAIR, "the declared requirements do not resolve: repair "
                                    "them (e.g. a pin that no longer installs on this Python)",
                                    log_tail=message[-_LOG_TAIL:], attempt=repairs + 1, context=_context(build))
            todo = (f"fix the requirements in {build.root} and record the fix with 'rra change record ID PATH... "
                    f"-C {build.root} --kind dependency-pin --rationale WHY --evidence TEXT --alters-method "
                    f"yes|no|unknown', or write the answer {build.answer_path(ident)}")
            _repair_answer(build, request, todo, message[-_LOG_TAIL:], None)
            repairs += 1
            record.outputs["repairs"] = repairs
            continue
        packages = len(read_lock(target, "pylock", display=rel).packages)
        update_lock_block(artifact.manifest_path, rel, "pylock", sha256_file(target))
        record.note = f"{rel}: {packages} package(s)"
        return


def _core(data: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest without what runs do not depend on (change records, observations, guide,
    review, levels), so that later steps adding those do not invalidate the execute step."""
    core = {k: v for k, v in data.items() if k not in ("changes", "guide", "review", "levels")}
    code = dict(core.get("code") or {})
    code.pop("patches", None)
    core["code"] = code
    core["claims"] = [{k: v for k, v in c.items() if k != "reference"} for c in data.get("claims") or []
                      if isinstance(c, Mapping)]
    # The reference step raises a launcher's repeats to number its reference runs.
    core["launchers"] = [{k: v for k, v in launcher.items() if k != "repeats"}
                         for launcher in data.get("launchers") or [] if isinstance(launcher, Mapping)]
    return core


def _code_digest(build: _Build, artifact: Artifact) -> str:
    from .patches import own_paths, tree_digest, work_tree_entries

    return tree_digest(work_tree_entries(build.root, own_paths(artifact.manifest_path.name, artifact.data)))


def _execute_inputs(build: _Build) -> str:
    artifact = build.artifact()
    return _digest({"manifest": _core(artifact.data), "code": _code_digest(build, artifact)})


def _log_tail(directory: Path, record: Mapping[str, Any]) -> str:
    parts = []
    for stream in ("stdout", "stderr"):
        path = directory / f"{stream}.log"
        try:
            text = path.read_text("utf-8", "replace").strip()
        except OSError:
            continue
        if text:
            parts.append(f"--- {stream} ---\n{text[-_LOG_TAIL:]}")
    messages = record.get("messages") or []
    if messages:
        parts.append("--- rra run ---\n" + "\n".join(str(m) for m in messages))
    return "\n".join(parts)[-_LOG_TAIL:] or "(no output)"


def _run_launcher(build: _Build, launcher_id: str) -> tuple[bool, dict[str, Any]]:
    """Run ``launcher_id`` once (its first seed); (successful, facts for a repair request)."""
    from ..run import RunOptions, plan_runs, run_plans

    artifact = load_artifact(build.root)
    from ..run import load_artifact as run_artifact

    plans = plan_runs(run_artifact(artifact.root), launcher_id)[:1]
    build.progress(f"running {launcher_id}: {' '.join(plans[0].argv)}")
    outcome = run_plans(plans, RunOptions())
    if outcome.interrupted:
        raise BuildError(f"the run of {launcher_id} was interrupted", "run the build again to resume")
    for refused in outcome.refused:
        return False, {"argv": list(refused.plan.argv), "log_tail": str(refused.error)}
    result = outcome.results[0]
    facts = {"argv": list(result.record.get("argv") or plans[0].argv), "exit_status": result.record.get("exit_status"),
             "status": result.record.get("status"), "run_record": build.rel(result.record_path)}
    if result.successful:
        return True, facts
    facts["log_tail"] = _log_tail(result.directory, result.record)
    facts["stderr_log"] = str(result.directory / "stderr.log")
    return False, facts


def _execute(build: _Build) -> None:
    from ..run import launcher_order
    from ..run import load_artifact as run_artifact

    record = build.steps["execute"]
    repairs: dict[str, int] = record.outputs.setdefault("repairs", {})
    runs: dict[str, str] = record.outputs.setdefault("runs", {})
    order = [launcher.id for launcher in launcher_order(run_artifact(build.root))]
    for launcher in order:
        while True:
            ok, facts = _run_launcher(build, launcher)
            if ok:
                runs[launcher] = facts["run_record"]
                build.progress(f"{launcher}: ok ({facts['run_record']})")
                build.save()
                break
            done = repairs.get(launcher, 0)
            if done >= build.options.max_repairs:
                raise BuildError(f"launcher {launcher!r} still fails after {done} repair(s); last run: "
                                 f"{facts.get('run_record', 'not started')}", facts.get("log_tail"))
            ident = f"repair-{launcher}-{done + 1}"
            shown = " ".join(facts["argv"])
            request = build.request(
                ident, DecisionKind.REPAIR,
                f"launcher {launcher!r} fails ({shown}, exit status {facts.get('exit_status')}): repair it",
                launcher=launcher, argv=facts["argv"], exit_status=facts.get("exit_status"),
                status=facts.get("status"), run_record=facts.get("run_record"), log_tail=facts.get("log_tail"),
                attempt=done + 1, context=_context(build))
            log = facts.get("stderr_log", "LOG")
            todo = (f"make launcher {launcher!r} work: fix the code in {build.root} and record each fix with "
                    f"'rra change record ID PATH... -C {build.root} --kind KIND --rationale WHY --evidence-file "
                    f"{log} --alters-method yes|no|unknown', or change the launcher in the manifest; or write the "
                    f"answer {build.answer_path(ident)}")
            _repair_answer(build, request, todo, facts.get("log_tail") or "", launcher)
            repairs[launcher] = done + 1
            build.save()


def _preserve_inputs(build: _Build) -> str:
    artifact = build.artifact()
    patches = [p.get("sha256") for p in ((artifact.data.get("code") or {}).get("patches") or [])]
    return _digest({"code": _code_digest(build, artifact), "patches": patches})


def _unrecorded_diff(build: _Build, files: Sequence[str]) -> str:
    from .patches import git

    done = git(["diff", "--no-color", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "HEAD", "--",
                *files], cwd=build.root, check=False)
    return done.stdout.decode("utf-8", "replace")[:_LOG_TAIL]


def _preserve(build: _Build) -> None:
    from .changes import SeriesMismatch, verify_series

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
            _record(build, asked.answer, answer_path, files, evidence)
            rationales += 1
            record.outputs["rationales"] = rationales
            build.applied(request)
            continue
        record.note = f"{len(verified.patches)} patch(es) prove the code: tree digest {verified.actual}"
        return


def _reference_inputs(build: _Build) -> str:
    data = build.artifact().data
    return _digest({k: v for k, v in data.items() if k not in ("guide", "review", "levels")})


def _reference(build: _Build) -> None:
    from ..run import RunOptions, plan_runs, run_plans
    from ..run import load_artifact as run_artifact
    from .reference import add_references

    record = build.steps["reference"]
    artifact = build.artifact()
    claims = [c for c in artifact.data.get("claims") or [] if isinstance(c, Mapping)]
    if not claims:
        record.note = "no claims: nothing to observe"
        return
    if build.options.reference_runs <= 0:
        record.note = "no reference runs asked (--reference-runs 0)"
        return
    _drop_own_observations(build)
    launchers = list(dict.fromkeys(str(c.get("launcher")) for c in claims))
    _number_repeats(build, launchers)
    loaded = run_artifact(build.root)
    data = build.artifact().data
    records: list[Path] = []
    for launcher_id in launchers:
        launcher = next(x for x in loaded.manifest.launchers if x.id == launcher_id)
        if launcher.stochastic:  # each declared seed no observation of its claims holds yet
            seeds = _taken(data, launcher_id, "seed")
            plans = [p for p in plan_runs(loaded, launcher_id, all_seeds=True) if p.seed not in seeds]
        else:  # the repeat indexes no observation of its claims holds yet
            taken = _taken(data, launcher_id, "repeat")
            plans = [p for p in plan_runs(loaded, launcher_id, all_seeds=True)
                     if p.repeat not in taken][:build.options.reference_runs]
        if not plans:
            continue
        build.progress(f"reference runs of {launcher_id}: {len(plans)}")
        outcome = run_plans(plans, RunOptions())
        failed = [r for r in outcome.results if not r.successful]
        if outcome.interrupted or outcome.refused or failed:
            raise BuildError(f"a reference run of {launcher_id} did not succeed"
                             + (f": {build.rel(failed[0].record_path)}" if failed else ""),
                             "the launcher worked in the execute step; look at the run's logs")
        records.extend(r.record_path for r in outcome.results)
    if not records:
        record.note = "every seed already has an observation: no reference run"
        return
    added = add_references(build.root, records, by=BUILDER, origin="refined")
    record.note = f"{len(added)} observation(s) of {len({a.claim for a in added})} claim(s)"


def _taken(data: Mapping[str, Any], launcher_id: str, key: str) -> set[int]:
    """The seeds (or repeat indexes) the observations of ``launcher_id``'s claims hold."""
    return {o[key] for c in data.get("claims") or [] if c.get("launcher") == launcher_id
            for o in (c.get("reference") or {}).get("observations") or []
            if isinstance(o, Mapping) and isinstance(o.get(key), int)}


def _number_repeats(build: _Build, launchers: Sequence[str]) -> None:
    """Give each deterministic claim launcher enough ``repeats`` for the observations it has and
    the reference runs to come, so that every observation's repeat index is one of its runs."""
    data = build.artifact().data
    wanted: dict[str, int] = {}
    for launcher in data.get("launchers") or []:
        ident = launcher.get("id")
        if ident not in launchers or launcher.get("stochastic", True) is not False:
            continue
        taken = _taken(data, ident, "repeat")
        need, free = max(taken, default=-1) + 1, 0
        free = need - len(taken)
        while free < build.options.reference_runs:  # the fewest runs with enough free indexes
            need, free = need + 1, free + 1
        if int(launcher.get("repeats", 1)) < need:
            wanted[ident] = need
    if not wanted:
        return

    def mutate(document: Any) -> None:
        for launcher in document["launchers"]:
            if launcher.get("id") in wanted:
                launcher["repeats"] = wanted[launcher["id"]]

    edit_manifest(build.artifact().manifest_path, mutate)


def _drop_own_observations(build: _Build) -> None:
    """Observations an earlier run of this step added are of code or a manifest that changed."""
    data = build.artifact().data
    if not any(_by_builder(o) for c in data.get("claims") or [] for o in (c.get("reference") or {}).get(
            "observations") or []):
        return

    def mutate(document: Any) -> None:
        for claim in document.get("claims") or []:
            reference = claim.get("reference")
            if reference and reference.get("observations"):
                kept = [o for o in reference["observations"] if not _by_builder(o)]
                if kept:
                    reference["observations"] = kept
                else:
                    del claim["reference"]

    edit_manifest(build.artifact().manifest_path, mutate)


def _by_builder(observation: Any) -> bool:
    if not isinstance(observation, Mapping):
        return False
    provenance = observation.get("provenance") or observation.get("x-provenance") or {}
    return isinstance(provenance, Mapping) and provenance.get("by") == BUILDER


def _guide_inputs(build: _Build) -> str:
    artifact = build.artifact()
    guide = (artifact.data.get("guide") or {}).get("path", "REPRODUCE.md")
    path = build.root / guide
    return _digest({"manifest": artifact.digest,
                    "guide": hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None})


def _guide(build: _Build) -> None:
    from .guide import write_guide

    artifact = build.artifact()
    if not artifact.data.get("guide"):
        def mutate(document: Any) -> None:
            document["guide"] = {"path": "REPRODUCE.md"}

        edit_manifest(artifact.manifest_path, mutate)
    result = write_guide(build.root)
    build.steps["guide"].note = f"{build.rel(result.path)}"


def _review_inputs(build: _Build) -> str:
    artifact = build.artifact()
    return _digest({"manifest": artifact.digest, "code": _code_digest(build, artifact),
                    "env": build.options.review_env})


def _review(build: _Build) -> None:
    from .review import ReviewOptions, review_artifact

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


#: name -> (run the step, the digest of its inputs when it is done).
_STEP_FUNCTIONS: dict[str, tuple[Callable[[_Build], None], Callable[[_Build], str]]] = {
    "specify": (_specify, _specify_inputs),
    "fill": (_fill, lambda b: b.steps["specify"].inputs),
    "claims": (_claims, lambda b: _digest([b.steps["specify"].inputs, "claims"])),
    "lock": (_lock, _lock_inputs),
    "execute": (_execute, _execute_inputs),
    "preserve": (_preserve, _preserve_inputs),
    "reference": (_reference, _reference_inputs),
    "guide": (_guide, _guide_inputs),
    "review": (_review, _review_inputs),
}


#: How often a step may send the build back to an earlier step whose inputs it changed.
_MAX_RESTARTS = 3


def _run_steps(build: _Build, result: BuildResult) -> None:
    rerun = False
    restarts = 0
    index = 0
    while index < len(STEPS):
        name = STEPS[index]
        record = build.steps[name]
        run, inputs = _STEP_FUNCTIONS[name]
        if not rerun and record.status in ("done", "skipped") and record.inputs and record.inputs == inputs(build):
            build.progress(f"{name}: done earlier (finished {record.finished}); not redone")
            result.skipped.append(name)
            index += 1
            continue
        rerun = True
        _run_step(build, record, run)
        record.inputs = inputs(build)
        result.ran.append(name)
        # Every later step runs again: mark them so an interrupted build does not skip them.
        for later in STEPS[index + 1:]:
            if build.steps[later].status in ("done", "skipped"):
                build.steps[later].status = "pending"
        build.save()
        # A repair may change what an earlier step used (a requirement, the interpreter): that
        # step, and every one after it, runs again.
        changed = next((i for i, earlier in enumerate(STEPS[:index]) if build.steps[earlier].status == "done"
                        and build.steps[earlier].inputs != _STEP_FUNCTIONS[earlier][1](build)), None)
        if changed is not None:
            restarts += 1
            if restarts > _MAX_RESTARTS:
                raise BuildError(f"step {name!r} keeps changing the inputs of step {STEPS[changed]!r}; giving up")
            build.progress(f"{name} changed the inputs of {STEPS[changed]}: running it again")
            for later in STEPS[changed:]:
                build.steps[later].status = "pending"
            build.save()
            index = changed
            continue
        index += 1


def _run_step(build: _Build, record: StepRecord, run: Callable[[_Build], None]) -> None:
    """Run one step, adding its wall time to its record whether it finishes, stops or fails."""
    build.current = record
    record.status = "running"
    record.note = ""
    record.runs += 1
    started = time.monotonic()
    record.started = _now()
    build.progress(f"{record.name}: running")
    try:
        run(build)
    except BaseException as exc:
        from .agent import DecisionNeeded

        record.status = "stopped" if isinstance(exc, DecisionNeeded) else "failed"
        record.wall_s = round(record.wall_s + time.monotonic() - started, 3)
        if build.root.is_dir() and (build.root / ".git").exists():
            build.save()
        raise
    record.wall_s = round(record.wall_s + time.monotonic() - started, 3)
    record.finished = _now()
    if record.status == "running":
        record.status = "done"
    build.progress(f"{record.name}: {record.status} in {time.monotonic() - started:.1f} s"
                   + (f" ({record.note})" if record.note else ""))


def build(options: BuildOptions, progress: Progress | None = None) -> BuildResult:
    """Run the build (see the module docstring); resumes from the artifact's state file."""
    state = _Build(options, progress or (lambda _: None))
    resumed = state.load_state()
    if not resumed:
        state.header = {"raw": str(state.raw), "artifact": str(state.root), "created": _now()}
    elif state.header.get("raw") != str(state.raw):
        raise BuildInputError(f"{state.root} was built from {state.header.get('raw')}, not {state.raw}",
                         "build into a new directory (-o)")
    specify = state.steps["specify"]
    if resumed and specify.status == "done" and specify.inputs != _specify_inputs(state):
        raise BuildInputError(f"the raw repository {state.raw} or the build's options (--upstream, --id, --title) "
                         f"changed since {state.root} was specified from it",
                         "build into a new directory (-o), or remove the artifact and build again")
    result = BuildResult(state.root, [])
    _run_steps(state, result)
    result.steps = [state.steps[name] for name in STEPS]
    return result
