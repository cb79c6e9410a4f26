"""CORE-Bench's task file as an RRA task set (``rra bench import corebench``; docs/bench.md#core-bench).

CORE-Bench (Siegel et al., 2024) gives, per CodeOcean capsule, a task prompt and the answers of
several runs of the capsule's code: ``results`` is a list with one object per run, mapping each
question's text to that run's answer (a number, a string or a list). The importer turns each
question into a task whose claim has the answer's kind (RRA 1.2, spec/02-manifest.md#kinds):

- a number: the runs' values are the reference observations, and the interval comes from them as
  for any claim (spec/04-levels.md#acceptance-interval), the printed precision being the most
  decimals a run's value shows;
- a string or a list: the answer the runs agree on is the expected answer (compared as the kind
  says: normalised strings, lists element by element); a list whose runs give the same elements
  in different orders is a set; runs that disagree otherwise leave the question out.

Nothing is downloaded: the operator unpacks the capsules under ``--code DIR`` (``DIR/<capsule
id>/``, as CodeOcean exports them, with ``code/``, ``data/``, ``environment/`` and ``results/``).
Each capsule's code becomes the task's raw condition: one commit of its files in a bare git
repository of the output, without its ``results/`` directory (which holds the answers: CORE-Bench's
hard setting). What is written (``OUT``):

- ``taskset.json``: the public task set (no value), condition ``raw``;
- ``references.json``: the private reference observations, one entry per task;
- ``capsules/<id>/rra.json``: each capsule's claims as an RRA manifest (kinds, extraction from the
  ``report.json`` CORE-Bench asks for, keyed by the question's text). It holds the answers too
  (as reported values and observations): keep ``capsules/`` with the references, away from
  reproducers;
- ``papers/<id>.md``: the capsule's task prompt and questions, copied into every workspace;
- ``raw/<id>.git``: the capsule's code.

A question is left out, with the reason (:class:`Skipped`), when fewer than 3 runs answer it, its
answers are of different types, or its string or list answers disagree.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from ..answers import AnswerError, answer_mismatch, parse_answer
from ..builder.patches import git
from ..errors import ExitStatus
from ..io.atomic import write_atomic
from ..model.taskset import MIN_OBSERVATIONS
from .errors import InteropLayerError

__all__ = ["CoreBenchError", "ImportedCoreBench", "Skipped", "import_corebench", "question_kind"]

#: A CORE-Bench task file larger than this is not read (the test set is about 1 MB).
MAX_FILE_BYTES = 64 * 1024 * 1024

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
#: The author and committer of the raw code's commit, and its date: fixed, so that importing the
#: same capsule twice gives the same commit.
_COMMIT_ENV = {"GIT_AUTHOR_NAME": "CORE-Bench capsule", "GIT_AUTHOR_EMAIL": "capsule@corebench.invalid",
               "GIT_COMMITTER_NAME": "rra bench import", "GIT_COMMITTER_EMAIL": "import@rra.invalid",
               "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z"}


class CoreBenchError(InteropLayerError):
    """The CORE-Bench file, the capsule directory or the output directory is not usable."""

    exit_status = ExitStatus.USAGE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


@dataclass(frozen=True)
class Skipped:
    """A question the import leaves out, and why."""

    capsule: str
    question: str
    reason: str


@dataclass(frozen=True)
class ImportedCoreBench:
    """What an import wrote."""

    taskset: Path
    references: Path
    capsules: int
    #: Tasks by kind ('number', 'string', 'set', 'list').
    kinds: dict[str, int]
    skipped: list[Skipped] = field(default_factory=list)

    @property
    def tasks(self) -> int:
        """Tasks written."""
        return sum(self.kinds.values())


def question_kind(answers: Sequence[object]) -> str | None:
    """The kind of a question whose runs gave ``answers``: 'number', 'string' or 'list' when they
    all are one; None when they mix types or hold something else (a boolean, an object, null).

    >>> question_kind([0.91, 0.9, 1]), question_kind(["Adam", "adam"]), question_kind([["a"], ["a"]])
    ('number', 'string', 'list')
    >>> question_kind([1, "1"]) is None
    True
    """
    kinds = set()
    for answer in answers:
        if isinstance(answer, bool) or answer is None:
            return None
        if isinstance(answer, (int, float)):
            kinds.add("number")
        elif isinstance(answer, str):
            kinds.add("string")
        elif isinstance(answer, list):
            kinds.add("list")
        else:
            return None
    return kinds.pop() if len(kinds) == 1 else None


def _decimals(value: float) -> int:
    """Decimals the shortest form of ``value`` shows (``0.9412``: 4, ``3``: 0, ``1e-05``: 5)."""
    exponent = Decimal(repr(float(value)) if isinstance(value, float) else str(value)).as_tuple().exponent
    return min(max(-exponent, 0), 15) if isinstance(exponent, int) else 0


def _precision(answers: Sequence[object]) -> int:
    numbers: list[float] = []
    for answer in answers:
        items = answer if isinstance(answer, list) else [answer]
        numbers.extend(i for i in items if isinstance(i, (int, float)) and not isinstance(i, bool))
    return max((_decimals(n) for n in numbers), default=0)


def _pointer(question: str) -> str:
    """The JSON pointer of ``question`` as a key of report.json (RFC 6901 escapes)."""
    return "/" + question.replace("~", "~0").replace("/", "~1")


def _fail(file: Path, message: str) -> CoreBenchError:
    return CoreBenchError(f"CORE-Bench file {str(file)!r}: {message}",
                          "the file is CORE-Bench's core_train.json or core_test.json (decrypted): a JSON list of "
                          "capsules with capsule_id, capsule_title, task_prompt and results")


def _read(file: Path) -> list[dict[str, Any]]:
    try:
        if file.stat().st_size > MAX_FILE_BYTES:
            raise _fail(file, f"is larger than {MAX_FILE_BYTES} bytes")
        data = json.loads(file.read_bytes().decode("utf-8-sig"))
    except OSError as exc:
        raise CoreBenchError(f"CORE-Bench file {str(file)!r} cannot be read: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _fail(file, f"is not valid JSON: {exc}") from None
    if not isinstance(data, list) or not data:
        raise _fail(file, "is not a non-empty JSON list of capsules")
    seen: set[str] = set()
    for i, capsule in enumerate(data):
        where = f"capsule {i}"
        if not isinstance(capsule, dict):
            raise _fail(file, f"{where} is not an object")
        ident = capsule.get("capsule_id")
        if not isinstance(ident, str) or not _ID.match(ident):
            raise _fail(file, f"{where}: capsule_id {ident!r} is not an id (letters, digits, '.', '_', '-')")
        where = f"capsule {i} ({ident})"
        if ident in seen:
            raise _fail(file, f"{where}: capsule_id is given twice")
        seen.add(ident)
        for key in ("capsule_title", "task_prompt"):
            if not isinstance(capsule.get(key), str) or not capsule[key].strip():
                raise _fail(file, f"{where}: {key} is not a non-empty string")
        results = capsule.get("results")
        if not isinstance(results, list) or not results or not all(isinstance(r, dict) for r in results):
            raise _fail(file, f"{where}: results is not a non-empty list of objects (one per run)")
    return data


def _check_code(code: Path, capsules: Sequence[Mapping[str, Any]]) -> None:
    if not code.is_dir():
        raise CoreBenchError(f"capsule directory {str(code)!r} does not exist",
                             "give --code the directory where the capsules are unpacked, DIR/<capsule id>/")
    missing = [c["capsule_id"] for c in capsules if not (code / c["capsule_id"]).is_dir()]
    if missing:
        shown = ", ".join(repr(m) for m in missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise CoreBenchError(f"{len(missing)} capsule(s) of the file are not in {str(code)!r}: {shown} "
                             f"(looked for {str(code / missing[0])!r})",
                             "unpack each capsule as DIR/<capsule id>/ (the layout of a CodeOcean capsule export)")


def _questions(capsule: Mapping[str, Any]) -> list[str]:
    order: dict[str, None] = {}
    for run in capsule["results"]:
        for question in run:
            order.setdefault(str(question))
    return list(order)


def _observations(answers: Sequence[object]) -> list[dict[str, Any]]:
    return [{"value": a, "by": "CORE-Bench", "machine": f"the capsule's run {i + 1} in CORE-Bench's results",
             "code": "raw"} for i, a in enumerate(answers)]


def _claim(task_id: str, question: str, kind: str, answers: Sequence[object], precision: int) -> dict[str, Any]:
    fingerprint = {"hardware": "unknown (CORE-Bench's runs)", "software": "unknown (CORE-Bench's runs)"}
    values: list[Any] = [float(a) if isinstance(a, (int, float)) else a for a in answers]
    claim: dict[str, Any] = {
        "id": task_id,
        **({} if kind == "number" else {"kind": kind}),
        "description": question,
        "paper_location": {"section": "questions", "row": question},
        "launcher": "run",
        "metric": {"name": question, "unit": "", "direction": "higher"},
        "extract": {"output": "report", "json_pointer": _pointer(question)},
        "reported": {"value": values[0], "precision": precision},
        "reference": {"observations": [{"value": v, "repeat": i, "fingerprint": fingerprint}
                                       for i, v in enumerate(values)]},
    }
    return claim


def _manifest(capsule: Mapping[str, Any], claims: list[dict[str, Any]], code: Path) -> dict[str, Any]:
    ident = capsule["capsule_id"]
    language = str(capsule.get("language") or "Python")
    script = next((s for s in ("code/run.sh", "code/run") if (code / ident / s).is_file()), "code/run.sh")
    paper: dict[str, Any] = {"title": capsule["capsule_title"],
                             "authors": [{"name": "the capsule's authors (CORE-Bench names none)"}]}
    doi = capsule.get("capsule_doi")
    if isinstance(doi, str) and re.match(r"^10\.[0-9]{4,9}/\S+$", doi):
        paper["doi"] = doi
    return {
        "rra_version": "1.2", "id": ident, "title": f"CORE-Bench {ident}: {capsule['capsule_title']}",
        "paper": paper,
        "code": {"license": "NOASSERTION", "tree": {"path": "."}},
        "environment": {"interpreter": {"name": "R", "version": "4"} if language.strip().upper() == "R"
                        else {"name": "cpython", "version": "3"}},
        "launchers": [{"id": "run", "argv": ["bash", script], "stochastic": False, "repeats": len(
            claims[0]["reference"]["observations"]) if claims else 1,
            "resources": {"timeout_s": 86400, "expected_runtime_s": 3600},
            "outputs": [{"id": "report", "path": "report.json", "format": "json"}]}],
        "claims": claims,
    }


def _paper_text(capsule: Mapping[str, Any], questions: Sequence[str]) -> str:
    lines = [f"# {capsule['capsule_title']}", "",
             f"CORE-Bench capsule `{capsule['capsule_id']}`"
             + "".join(f"; {k}: {capsule[k]}" for k in ("field", "language") if isinstance(capsule.get(k), str)),
             "", "## Task", "", capsule["task_prompt"].strip(), "", "## Questions", "",
             "Answer each in `report.json`, keyed by the question's text, and submit each answer as the value of "
             "its task.", ""]
    lines.extend(f"- {q}" for q in questions)
    return "\n".join(lines) + "\n"


def _commit_raw(source: Path, repository: Path, capsule: str) -> str:
    """One commit of ``source`` (less its results/ directory) in the new bare ``repository``."""
    source, repository = source.resolve(), repository.resolve()
    repository.parent.mkdir(parents=True, exist_ok=True)
    git(["init", "--bare", "--quiet", str(repository)], cwd=repository.parent)
    index = repository / "rra-import-index"
    env = {"GIT_DIR": str(repository), "GIT_WORK_TREE": str(source), "GIT_INDEX_FILE": str(index), **_COMMIT_ENV}
    # -f: a capsule's own .gitignore does not drop files the capsule ships; results/ holds the answers.
    git(["add", "-A", "-f", "--", ".", ":(exclude)results", ":(exclude).git"], cwd=source, env=env)
    tree = git(["write-tree"], cwd=source, env=env).stdout.decode().strip()
    commit = git(["commit-tree", tree, "-m", f"CORE-Bench capsule {capsule} (without results/)"],
                 cwd=source, env=env).stdout.decode().strip()
    git(["update-ref", "refs/heads/main", commit], cwd=source, env=env)
    index.unlink()
    return commit


def import_corebench(file: str | Path, code: str | Path, out: str | Path, *,
                     taskset_id: str | None = None) -> ImportedCoreBench:
    """Write the task set, references, manifests, papers and raw code of CORE-Bench's task file
    ``file`` into the new directory ``out``, the capsules' code being under ``code``;
    CoreBenchError when the file, a capsule or the output directory is not usable."""
    file, code, out = Path(file), Path(code), Path(out)
    capsules = _read(file)
    _check_code(code, capsules)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CoreBenchError(f"output directory {str(out)!r} exists and is not empty", "give a new directory")
    ident = taskset_id or re.sub(r"[^A-Za-z0-9._-]", "-", file.stem).strip("-.") or "corebench"
    if not _ID.match(ident):
        raise CoreBenchError(f"task-set id {ident!r} is not an id", "give --id with letters, digits, '.', '_', '-'")
    out.mkdir(parents=True, exist_ok=True)
    papers: list[dict[str, Any]] = []
    references: list[dict[str, Any]] = []
    kinds: Counter[str] = Counter()
    skipped: list[Skipped] = []
    for capsule in capsules:
        cid = capsule["capsule_id"]
        claims: list[dict[str, Any]] = []
        asked: list[str] = []
        for question in _questions(capsule):
            answers = [run[question] for run in capsule["results"] if question in run]
            reason, kind = _unusable(answers)
            if reason is not None or kind is None:
                skipped.append(Skipped(cid, question, reason or "no kind"))
                continue
            task_id = f"q{len(claims) + 1:02d}"
            claims.append(_claim(task_id, question, kind, answers, _precision(answers)))
            references.append({"task": f"{cid}/questions/{task_id}", "observations": _observations(answers)})
            asked.append(question)
            kinds[kind] += 1
        if not claims:
            continue
        artifact = out / "capsules" / cid
        artifact.mkdir(parents=True)
        write_atomic(artifact / "rra.json", _dump(_manifest(capsule, claims, code)))
        (out / "papers").mkdir(exist_ok=True)
        write_atomic(out / "papers" / f"{cid}.md", _paper_text(capsule, asked).encode())
        commit = _commit_raw(code / cid, out / "raw" / f"{cid}.git", cid)
        papers.append({"id": cid, "title": capsule["capsule_title"], "file": f"papers/{cid}.md", "experiments": [
            {"id": "questions", "tasks": [
                {"id": c["id"], "artifact": f"capsules/{cid}", "claim": c["id"],
                 "raw": {"repository": f"raw/{cid}.git", "commit": commit}} for c in claims]}]})
    if not papers:
        raise CoreBenchError(f"no question of {str(file)!r} can be a task: " + "; ".join(
            f"{s.capsule}: {s.reason}" for s in skipped[:3]))
    taskset = out / "taskset.json"
    write_atomic(taskset, _dump({"bench_version": "1.0", "id": ident, "conditions": ["raw"], "papers": papers}))
    refs = out / "references.json"
    write_atomic(refs, _dump({"bench_version": "1.0", "taskset": ident, "references": references}))
    return ImportedCoreBench(taskset, refs, len(papers), dict(kinds), skipped)


def _unusable(answers: Sequence[object]) -> tuple[str | None, str | None]:
    """(why a question with these run answers cannot be a task, or None; its kind)."""
    if len(answers) < MIN_OBSERVATIONS:
        return (f"{len(answers)} run(s) answer it; a task needs {MIN_OBSERVATIONS} reference observations", None)
    kind = question_kind(answers)
    if kind is None:
        types = sorted({type(a).__name__ for a in answers})
        return f"its answers are not all numbers, all strings or all lists ({', '.join(types)})", None
    if kind == "number":
        if not all(math.isfinite(float(a)) for a in answers if isinstance(a, (int, float))):
            return "an answer is not a finite number", None
        return None, kind
    try:
        parsed = [parse_answer(a, kind) for a in answers]
    except AnswerError as exc:
        return f"an answer does not fit kind {kind}: {exc}", None
    if kind == "string" and not any(str(p).strip() for p in parsed):
        return "its answers are empty", None
    precision = _precision(answers)
    for candidate in ((kind, "set") if kind == "list" else (kind,)):
        whys = [answer_mismatch(candidate, parsed[0], other, precision) for other in parsed[1:]]
        if all(why is None for why in whys):
            return None, candidate
    i, why = next((i, w) for i, w in enumerate(whys, start=2) if w is not None)
    return f"run {i} gives another answer than run 1 ({why})", None


def _dump(data: Any) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()
