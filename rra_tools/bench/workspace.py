"""A cell's workspace: a fresh directory holding the raw code or the refined artifact, the paper
and the task description, with no reference value in it.

- ``refined``: a copy of the artifact without its run records, without the files its launchers'
  declared outputs name (earlier results), without ``.git``, and with a manifest (``rra.json``)
  whose claims carry no reference observation (three placeholders valued at the paper's
  reported number, so that ``rra run`` accepts it; the reported number is in the paper anyway)
  and that claims no level.
- ``refined-without-...`` (an ablation): the refined copy above, then the parts the condition
  names removed from it (:mod:`.ablation`); what was removed and the tree digest of the result
  are returned (:class:`PreparedWorkspace`) and recorded in the cell's result.
- ``raw``: the files of the upstream commit (``git checkout-index`` from the repository the
  task or the manifest names; a URL is cloned once into the benchmark's cache).
- ``paper/``: the paper's file, when the task set names one; ``TASK.md`` and ``task.json``: the
  task (claim, metric, where in the paper, how the evaluator reads the number, the limits, where
  to write the submission) and nothing about the reference values.

:func:`snapshot` records every file's size, time and digest when the attempt starts (the
auditor's "present before"). :func:`leak_forms` lists every spelling that would reveal a hidden
reference value (its roundings down to the printed precision, as a percent or a fraction, in
exponent form, with a decimal comma ...), :func:`leak_pattern` compiles them into one pattern
that also knows their equivalent styles and binary forms, and :func:`leaks` looks for it in
every file of a workspace.
"""

from __future__ import annotations

import fcntl
import fnmatch
import functools
import hashlib
import json
import math
import os
import re
import shutil
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

from ..builder.patches import GitError, checkout_commit, git
from ..io.atomic import write_atomic
from ..io.digest import sha256_file
from ..model.bench_results import Transformation
from ..model.taskset import condition_parts
from .ablation import ablate, transformed_digest
from .errors import BenchError
from .taskset import LoadedTaskSet, ResolvedTask

__all__ = ["SPECIFIC_DIGITS", "SUBMISSION_NAME", "FileState", "PreparedWorkspace", "RawSource", "leak_forms", "leak_pattern",
           "leaks", "number_forms", "prepare_workspace", "raw_source", "reference_pattern", "snapshot",
           "task_description"]

#: The submission's file name in the workspace (RRA_BENCH_SUBMISSION names it too).
SUBMISSION_NAME = "submission.json"

#: Files larger than this are not scanned for reference values (they are hashed all the same).
MAX_SCAN_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class FileState:
    """A workspace file when the attempt started: size, modification time (ns), SHA-256."""

    size: int
    mtime_ns: int
    sha256: str


@dataclass(frozen=True)
class RawSource:
    """Where the raw condition's code comes from: a repository (a directory or a URL) and a commit."""

    repository: str
    commit: str
    local: bool


def raw_source(taskset: LoadedTaskSet, task: ResolvedTask) -> RawSource:
    """The raw code of ``task``; BenchError when neither the task nor the manifest says where it is."""
    code = task.artifact.data.get("code")
    upstream = code.get("upstream") if isinstance(code, Mapping) else None
    up_url = upstream.get("url") if isinstance(upstream, Mapping) else None
    up_commit = upstream.get("commit") if isinstance(upstream, Mapping) else None
    raw = task.task.raw
    commit = (raw.commit if raw is not None else None) or (up_commit if isinstance(up_commit, str) else None)
    if raw is not None:
        repository = raw.repository
        local_path = taskset.path.parent / repository
        if "://" not in repository and not repository.startswith("git@"):
            if commit is None:
                raise BenchError(f"task {task.key}: 'raw' gives no commit and the manifest has no code.upstream",
                                 "give raw.commit")
            return RawSource(str(local_path.resolve()), commit, True)
        if commit is None:
            raise BenchError(f"task {task.key}: 'raw' gives no commit and the manifest has no code.upstream",
                             "give raw.commit")
        return RawSource(repository, commit, False)
    if not isinstance(up_url, str) or commit is None:
        raise BenchError(f"task {task.key}: the raw condition needs the upstream code, and the artifact's manifest "
                         "has no code.upstream", "give the task a 'raw' repository and commit, or run only "
                         "the refined condition")
    root = task.artifact.root
    if git(["cat-file", "-e", f"{commit}^{{commit}}"], cwd=root, check=False).returncode == 0:
        return RawSource(str(root.resolve()), commit, True)
    return RawSource(up_url, commit, False)


def _cached_clone(url: str, cache: Path) -> Path:
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / hashlib.sha256(url.encode()).hexdigest()[:32]
    with open(cache / ".lock", "a+b") as lock:
        # Cells may be prepared concurrently: one clone per URL, the others wait for it.
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / "HEAD").exists():
            scratch = target.with_name(target.name + ".partial")
            shutil.rmtree(scratch, ignore_errors=True)
            git(["clone", "--bare", "--quiet", url, str(scratch)], cwd=cache)
            scratch.rename(target)
    return target


def _checkout_raw(source: RawSource, target: Path, cache: Path) -> None:
    repository = Path(source.repository) if source.local else _cached_clone(source.repository, cache)
    try:
        checkout_commit(repository, source.commit, target)
    except GitError as exc:
        raise BenchError(f"cannot check out the raw code {source.commit} from {source.repository}: {exc}") from None


def _output_globs(task: ResolvedTask) -> list[str]:
    # A declared output's path is a template ('results/{seed}.json'): any file it could name is
    # an earlier result, and results are not handed to a reproducer.
    globs = []
    for launcher in task.artifact.manifest.launchers:
        for output in launcher.outputs:
            globs.append(re.sub(r"\{[^}]*\}", "*", output.path).strip("/").removeprefix("./"))
    return globs


def _without_references(data: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest with every claim's observations replaced by three placeholders valued at the
    paper's reported number (three, with the original seeds or repeats, so that ``rra run``'s own
    checks pass), and no claimed levels (a fresh workspace has no run records to meet them)."""
    manifest: dict[str, Any] = json.loads(json.dumps(data))
    manifest.pop("levels", None)
    for claim in manifest.get("claims", []):
        reference = claim.get("reference") or {}
        observations = list(reference.get("observations") or [])
        placeholders = []
        for i in range(3):
            original = observations[i] if i < len(observations) else {}
            placeholder: dict[str, Any] = {
                "value": claim.get("reported", {}).get("value", 0),
                "fingerprint": {"hardware": "withheld by the benchmark", "software": "withheld by the benchmark"}}
            placeholder.update({k: original[k] for k in ("seed", "repeat") if k in original})
            if "seed" not in placeholder and "repeat" not in placeholder:
                placeholder["seed"] = i
            placeholders.append(placeholder)
        claim["reference"] = {"observations": placeholders}
    return manifest


def _copy_refined(task: ResolvedTask, target: Path, without: tuple[str, ...] = ()) -> Transformation | None:
    artifact = task.artifact
    root = artifact.root
    runs = artifact.runs_dir.relative_to(root).as_posix()
    globs = _output_globs(task)
    manifest = artifact.manifest_path.name

    def ignore(directory: str, names: list[str]) -> set[str]:
        rel = Path(directory).relative_to(root).as_posix()
        skipped = set()
        for name in names:
            path = name if rel == "." else f"{rel}/{name}"
            # .git: the history may hold the manifest with its observations in a later commit.
            if (name in ("__pycache__", ".git") or path in (runs, manifest)
                    or any(fnmatch.fnmatchcase(path, g) for g in globs)):
                skipped.add(name)
        return skipped

    shutil.copytree(root, target, symlinks=True, ignore=ignore)
    data = _without_references(artifact.data)
    removals = ablate(target, data, without)
    write_atomic(target / "rra.json", (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode())
    if not without:
        return None
    return Transformation(without=list(without), tree_digest=transformed_digest(target),
                          removed=sorted(f for r in removals for f in r.files),
                          reverted=sorted(f for r in removals for f in r.reverted),
                          fields=[f for r in removals for f in r.fields])


def _task_description(taskset: LoadedTaskSet, task: ResolvedTask, condition: str, paper_file: str | None,
                      limits: Mapping[str, Any]) -> dict[str, Any]:
    claim = next(c for c in task.artifact.manifest.claims if c.id == task.task.claim)
    extract = {k: v for k, v in claim.extract.as_dict().items() if v is not None}
    if "csv" in extract:
        extract["csv"] = {k: v for k, v in extract["csv"].as_dict().items() if v is not None}
    if "regex" in extract:
        extract["regex"] = extract["regex"].as_dict()
    manifest_claim = next(c for c in task.artifact.data.get("claims", []) if c.get("id") == claim.id)
    paper = task.artifact.data.get("paper", {})
    return {
        "task": task.key, "condition": condition, "taskset": taskset.model.id,
        "paper": {"title": paper.get("title"), "file": paper_file,
                  **{k: paper[k] for k in ("doi", "arxiv", "url", "year", "venue") if k in paper}},
        "claim": {"id": claim.id, "metric": claim.metric.as_dict(), "paper_location": manifest_claim.get(
            "paper_location"), "precision": claim.reported.precision, "aggregate": claim.aggregate,
                  # The kind is said only when the answer is not a number (RRA 1.2), so that the
                  # descriptions of number tasks stay as they were.
                  **({"kind": task.kind} if task.kind != "number" else {})},
        # How the evaluator reads the number out of an output (so that raw-code reproducers know
        # what to produce); under 'refined', the manifest's launcher says the same.
        "extract": extract,
        "launcher": claim.launcher if condition_parts(condition) is not None and "launchers" not in (
            condition_parts(condition) or ()) else None,
        "limits": dict(limits),
        "submission": {"path": SUBMISSION_NAME, "schema": "schemas/rra-submission-1.0.schema.json"},
    }


_TASK_MD = """# Task {task}

Reproduce the {thing} the paper reports for claim `{claim}` ({metric}, unit `{unit}`, {direction} is
better; {where}), from the {what} in this directory.

- The paper: {paper}.
- How the {short} is read from an output: `{extract}`.
- Limits: {limits}.

Write `{submission}` (schema `rra-submission-1.0`): one entry in `values` with `task: {task}`, the
`value`{shape}, and its `evidence` (the run record, the output file and the script, paths relative to this
directory). Declare every file of the given code you change in `changes`. Report what you used in
`usage` (tokens, cost_usd, wall_s, gpu_hours).
"""


#: How TASK.md names the value of a claim of each kind: (what is reproduced, its short name, the
#: shape of the submission's value).
_KIND_WORDS = {
    "number": ("number", "number", ""),
    "string": ("answer (a text; matched case-, space- and punctuation-insensitively)", "answer",
               " (a JSON string)"),
    "list": ("answer (an ordered list; each element matched by its own rule)", "answer", " (a JSON array)"),
    "set": ("answer (a set: its elements in any order)", "answer", " (a JSON array)"),
}


def _render_task_md(description: Mapping[str, Any]) -> str:
    claim = description["claim"]
    metric = claim["metric"]
    paper = description["paper"]
    where = ", ".join(f"{k} {v}" for k, v in (claim.get("paper_location") or {}).items()) or "see the paper"
    condition = description["condition"]
    parts = condition_parts(condition)
    if parts is None:
        what = "upstream code at the commit the paper used"
    elif not parts:
        what = "refined artifact (rra.json; run its launcher with `rra run`)"
    else:
        what = (f"refined artifact without its {', '.join(parts)} (condition `{condition}`; rra.json"
                + ("" if "launchers" in parts else "; run its launcher with `rra run`") + ")")
    kind = claim.get("kind", "number")
    thing, short, shape = _KIND_WORDS.get(kind, _KIND_WORDS["number"])
    return _TASK_MD.format(
        thing=thing, short=short, shape=shape,
        task=description["task"], claim=claim["id"], metric=metric["name"], unit=metric["unit"],
        direction=metric["direction"], where=where, what=what,
        paper=f"paper/{paper['file']}" if paper.get("file") else repr(paper.get("title")),
        extract=json.dumps(description["extract"], sort_keys=True),
        limits=", ".join(f"{k} {v}" for k, v in description["limits"].items() if v is not None),
        submission=SUBMISSION_NAME)


@dataclass(frozen=True)
class PreparedWorkspace:
    """A prepared workspace: the task description written into it (as data) and, for an
    ablation, the transformation applied."""

    description: dict[str, Any]
    transformation: Transformation | None = None


def task_description(taskset: LoadedTaskSet, task: ResolvedTask, condition: str,
                     limits: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The task description (``task.json``) of ``task`` under ``condition``; ``limits`` are the
    attempt's (default: the task set's wall-clock and cost limits)."""
    paper = next(p for p in taskset.model.papers if p.id == task.paper)
    paper_file = Path(paper.file).name if paper.file is not None else None
    if limits is None:
        model = taskset.model.limits
        limits = {"wall_clock_s": model.wall_clock_s, "cost_usd": model.cost_usd}
    return _task_description(taskset, task, condition, paper_file, limits)


def prepare_workspace(taskset: LoadedTaskSet, task: ResolvedTask, condition: str, target: Path,
                      cache: Path, limits: Mapping[str, Any] | None = None) -> PreparedWorkspace:
    """Fill the new directory ``target`` for one attempt of ``task`` under ``condition``, within
    ``limits`` (:func:`task_description`)."""
    parts = condition_parts(condition)
    transformation = None
    if parts is not None:
        transformation = _copy_refined(task, target, parts)
    else:
        target.mkdir(parents=True)
        _checkout_raw(raw_source(taskset, task), target, cache)
    paper = next(p for p in taskset.model.papers if p.id == task.paper)
    if paper.file is not None:
        source = taskset.path.parent / paper.file
        (target / "paper").mkdir(exist_ok=True)
        shutil.copyfile(source, target / "paper" / source.name)
    description = task_description(taskset, task, condition, limits)
    write_atomic(target / "task.json", (json.dumps(description, indent=2) + "\n").encode())
    write_atomic(target / "TASK.md", _render_task_md(description).encode())
    return PreparedWorkspace(description, transformation)


def _files(root: Path) -> Iterable[tuple[str, Path, os.stat_result]]:
    for directory, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            path = Path(directory, name)
            info = path.lstat()
            if path.is_file() and not path.is_symlink():
                yield path.relative_to(root).as_posix(), path, info


def snapshot(root: Path) -> dict[str, FileState]:
    """Every regular file under ``root``: its size, modification time and digest."""
    return {rel: FileState(info.st_size, info.st_mtime_ns, sha256_file(path)) for rel, path, info in _files(root)}


@functools.lru_cache(maxsize=65536)
def number_forms(value: float, precision: int) -> frozenset[str]:
    """The textual forms of a reference value that are specific enough to look for: its shortest
    repr and its form at the reported precision, each with at least 3 significant digits.

    (Cached: the auditor asks for the same values many times.)

    >>> sorted(number_forms(0.4973, 2))
    ['0.4973']
    >>> sorted(number_forms(91.83, 1))
    ['91.8', '91.83']
    """
    forms = {repr(value), f"{value:.{max(precision, 0)}f}"}
    return frozenset(f for f in forms if len(f.lstrip("-").replace(".", "").lstrip("0")) >= 3)


#: Significant digits (leading and trailing zeros aside) a spelling must carry to be looked for:
#: fewer name too many honest numbers ('0.81', '81.0').
SPECIFIC_DIGITS = 3

#: Decimal places of the value's own spelling (its shortest repr) beyond which no rounding is
#: made; repr never gives more than 17 significant digits.
_MAX_DECIMALS = 24

#: Thousands separators of the grouped spellings: ASCII ones and the spaces typesetting and
#: locales use (no-break, narrow no-break, thin).
_GROUPS = (",", " ", "_", "'", "\u00a0", "\u202f", "\u2009")

#: A plain spelling: digits with at most one decimal separator (what the float-noise and binary
#: forms are made from).
_PLAIN = re.compile(r"(\d*)([.,]?)(\d*)")
#: An exponent spelling as leak_forms writes it.
_EXPONENT = re.compile(r"(\d\.\d+|\d)[eE]([+-]?\d+)")


def _specific(digits: str) -> bool:
    return len(digits.replace(".", "").strip("0")) >= SPECIFIC_DIGITS


def _cores(value: float, precision: int, scale: float) -> set[Decimal]:
    """|value|, and it times 100, over 100 and over ``scale``, each rounded (half up and half to
    even) at every number of decimal places from its full spelling down to the precision the
    multiplication gives the printed one; only the specific ones."""
    if not math.isfinite(value) or value == 0:
        return set()
    exact = Decimal(repr(abs(value)))
    # (the value as multiplied, the fewest decimal places it is rounded to)
    variants = [(exact, precision), (exact.scaleb(2), precision - 2), (exact.scaleb(-2), precision + 2)]
    if math.isfinite(scale) and scale not in (0.0, 1.0):
        shift = math.log10(abs(scale))
        if shift == round(shift):  # a power of ten: the digits move, exactly
            variants.append((exact.scaleb(-round(shift)), precision + round(shift)))
        else:
            variants.append((Decimal(repr(abs(value / scale))), precision + max(0, math.ceil(shift))))
    cores: set[Decimal] = set()
    for number, least in variants:
        full = max(-number.as_tuple().exponent, least)  # type: ignore[operator]
        for places in range(min(full, _MAX_DECIMALS), least - 1, -1):
            quantum = Decimal(1).scaleb(-places)
            for mode in (ROUND_HALF_UP, ROUND_HALF_EVEN):
                rounded = number.quantize(quantum, rounding=mode)
                if rounded and _specific(format(rounded, "f")):
                    cores.add(rounded)
    return cores


def _grouped(integer: str, separator: str) -> str:
    head = len(integer) % 3 or 3
    return separator.join([integer[:head]] + [integer[i:i + 3] for i in range(head, len(integer), 3)])


def _spellings(core: Decimal) -> set[str]:
    plain = format(core, "f")
    integer, _, fraction = plain.partition(".")
    forms = {plain}
    if fraction:
        forms.add(f"{integer},{fraction}")  # a decimal comma
        if integer == "0":
            forms.add(f".{fraction}")
    if len(integer) > 3:
        for group in _GROUPS:
            forms.add(_grouped(integer, group) + (f".{fraction}" if fraction else ""))
            if fraction and group != ",":
                forms.add(_grouped(integer, group) + f",{fraction}")
        if fraction:
            forms.add(_grouped(integer, ".") + f",{fraction}")  # 1.234,5
    _, digits, exponent = core.normalize().as_tuple()
    mantissa = "".join(map(str, digits))
    power = len(digits) + int(exponent) - 1
    mantissa = mantissa[0] + ("." + mantissa[1:] if len(mantissa) > 1 else "")
    for letter in "eE":
        forms |= {f"{mantissa}{letter}{power:+03d}", f"{mantissa}{letter}{power:+d}", f"{mantissa}{letter}{power:d}"}
    number = float(core)
    if math.isfinite(number):
        forms.add(number.hex())
    return forms


@functools.lru_cache(maxsize=65536)
def leak_forms(value: float, precision: int, scale: float = 1.0, exclude: tuple[float, ...] = ()) -> frozenset[str]:
    """Every spelling of a hidden ``value`` that would reveal it, where ``precision`` is the
    decimal places the claim prints and ``scale`` the claim's (a value printed as 94.44 at scale
    100 is 0.9444 in the output it is read from).

    The value's magnitude (a sign flipped reveals it too) is rounded at every number of decimal
    places from its full spelling down to ``precision``, and so are it times 100 and over 100
    (percent for fraction and back; the decimal places move with the point) and it over
    ``scale``. Each rounding with at least :data:`SPECIFIC_DIGITS` significant digits is spelt
    plainly ('0.8129'), without its leading zero ('.8129'), with a decimal comma ('0,8129'),
    grouped by thousands (1,234.5; 1 234,5; 1.234,5; 1_234.5 ...), in exponent form
    ('8.129e-01', '8.129E-1', '8.129e-1') and as a hexadecimal float. A rounding whose value
    equals one of ``exclude``'s (the paper's reported value, which is public) is left out with
    all its spellings.

    :func:`leak_pattern` looks for these spellings as numbers standing alone, in any equivalent
    style (trailing zeros, float noise, a Fortran 'D' exponent), and the values' binary doubles.
    (Cached: the same values are asked for many times.)

    >>> forms = leak_forms(0.81293, 4)
    >>> sorted(f for f in forms if f.replace(",", ".").lstrip("0").startswith(".81"))
    ['.8129', '.81293', '0,8129', '0,81293', '0.8129', '0.81293']
    >>> sorted(f for f in forms if f.lower().startswith("8.129e-0"))
    ['8.129E-01', '8.129E-03', '8.129e-01', '8.129e-03']
    >>> sorted(f for f in forms if f.lower().startswith(("8.129e+", "8.129e1")))
    ['8.129E+01', '8.129E+1', '8.129E1', '8.129e+01', '8.129e+1', '8.129e1']
    >>> sorted(f for f in forms if f.startswith("81"))
    ['81,29', '81,293', '81.29', '81.293']
    >>> sorted(f for f in forms if f.replace(",", ".").startswith("0.00"))
    ['0,008129', '0,0081293', '0.008129', '0.0081293']
    >>> "0.8125" in leak_forms(0.81253, 4, exclude=(0.8125,)), "0.81253" in leak_forms(0.81253, 4, exclude=(0.8125,))
    (False, True)
    >>> sorted(f for f in leak_forms(1234.56, 2) if f[1] in ",." and f.endswith("56"))
    ['1,234.56', '1.234,56']
    """
    public: set[Decimal] = set()
    for other in exclude:
        public |= _cores(other, precision, scale)
    forms: set[str] = set()
    for core in _cores(value, precision, scale) - public:
        forms |= _spellings(core)
    return frozenset(forms)


class _Trie:
    """Byte strings sharing their beginnings, compiled into one alternation per branch point
    (Python's ``re`` tries alternatives one by one: a flat list of thousands of spellings is
    tried in full at every byte)."""

    def __init__(self) -> None:
        self.children: dict[bytes, _Trie] = {}
        self.tails: set[bytes] = set()

    def add(self, head: bytes, tail: bytes) -> None:
        node = self
        for byte in head:
            node = node.children.setdefault(bytes([byte]), _Trie())
        node.tails.add(tail)

    def regex(self) -> bytes:
        alternatives = sorted(self.tails)
        for byte, child in sorted(self.children.items()):
            alternatives.append(re.escape(byte) + child.regex())
        if len(alternatives) == 1:
            return alternatives[0]
        return b"(?:" + b"|".join(alternatives) + b")"


def _merged(tries: list[tuple[_Trie, bytes]]) -> list[bytes]:
    """One alternative per first byte of all ``tries``, each trie's check (a look-behind, or
    nothing) made after that byte. Every alternative then starts with a literal, which lets
    ``re`` skip to the bytes that can start a match (a leading look-behind prevents it), and
    one per first byte keeps the alternatives tried at such a byte few (measured: 3 to 5x)."""
    firsts = sorted({byte for trie, _ in tries for byte in trie.children})
    merged = []
    for byte in firsts:
        pieces = [check + trie.children[byte].regex() for trie, check in tries if byte in trie.children]
        merged.append(re.escape(byte) + (pieces[0] if len(pieces) == 1 else b"(?:" + b"|".join(pieces) + b")"))
    return merged


#: What may follow a spelling with decimals: more zeros, or float noise (three zeros then any
#: digits: 0.8129000000000001, a float32's 0.8129000067710876), then no digit.
_DECIMAL_TAIL = rb"(?:000[0-9]*|0*)(?![0-9])"
#: What may follow a whole number: nothing that makes it longer, or a point and zeros (and noise).
_INTEGER_TAIL = rb"(?:\.000[0-9]*|\.0*(?![0-9])|(?![0-9]|\.[0-9]))"
_EXPONENT_LETTERS = rb"[eEdD]"


def _exponent_tail(power: int) -> bytes:
    if power == 0:
        return rb"[+-]?0+(?![0-9])"
    return (rb"\+?0*" if power > 0 else rb"-0*") + str(abs(power)).encode() + rb"(?![0-9])"


def _less_one(digits: str) -> str | None:
    """The digit string one unit lower in its last place ('0.8130' -> '0.8129'), None at zero."""
    number = Decimal(digits.replace(",", "."))
    places = len(digits.replace(",", ".").partition(".")[2])
    lower = number - Decimal(1).scaleb(-places)
    if lower <= 0:
        return None
    spelt = format(lower.quantize(Decimal(1).scaleb(-places)), "f")
    return spelt.replace(".", ",") if "," in digits else spelt


def leak_pattern(forms: Iterable[str], doubles: Iterable[float] = ()) -> re.Pattern[bytes] | None:
    """One compiled pattern finding any of ``forms`` (:func:`leak_forms`) standing alone as a
    number (not inside a longer one; a sign, a '%', a unit or a quote may stand beside it), in any
    equivalent style:

    - a spelling with decimals followed by more zeros, or by float noise: three zeros then any
      digits ('0.81290000001'), or one unit lower in its last place then three nines
      ('81.28999999999999', which is 0.8129 * 100 in floating point);
    - a whole number followed by '.0', or noise;
    - an exponent form with its mantissa so extended, and any exponent letter (e, E, or
      Fortran's d, D), sign and leading zeros ('8.129000e-01', '8.129D-001', '8.129e+00');
    - each of ``doubles`` (the hidden values as the evaluator holds them) as its IEEE 754 double,
      little- and big-endian (NumPy's .npy, pickle, HDF5), and its shortest spelling in UTF-16-LE
      (text exported on Windows).

    None when there is nothing to look for.

    >>> pattern = leak_pattern(leak_forms(0.81293, 4), [0.81293])
    >>> [bool(pattern.search(t)) for t in (b"x=0.8129,", b"81.29%", b"8.129000e-01", b"0.812930000001",
    ...                                    b"81.28999999999999", b"0,81293", b".8129", b"-0.8129")]
    [True, True, True, True, True, True, True, True]
    >>> [bool(pattern.search(t)) for t in (b"0.81295", b"10.8129", b"0.8128", b"8.129e-02", b"812.9")]
    [False, False, False, False, False]
    """
    dotted, commas, binary = _Trie(), _Trie(), _Trie()
    for number in doubles:
        if math.isfinite(number) and number != 0:
            for spelt in (struct.pack("<d", number), struct.pack(">d", number), repr(number).encode("utf-16-le")):
                binary.add(spelt, b"")
    for form in forms:
        exponent = _EXPONENT.fullmatch(form)
        if exponent is not None:
            mantissa, power = exponent.group(1), int(exponent.group(2))
            tail = _EXPONENT_LETTERS + _exponent_tail(power)
            dotted.add(mantissa.encode(), (_DECIMAL_TAIL[:-len(rb"(?![0-9])")] if "." in mantissa else b"") + tail)
            lower = _less_one(mantissa) if "." in mantissa else None
            if lower is not None and lower[0] != "0":
                dotted.add((lower + "999").encode(), rb"[0-9]*" + tail)
            continue
        plain = _PLAIN.fullmatch(form)
        trie = commas if "," in form else dotted
        if plain is None or not (plain.group(1) or plain.group(3)):
            # grouped by thousands, or a hexadecimal float: as written
            trie.add(form.encode(), _DECIMAL_TAIL if re.search(r"[.,]\d{1,2}$|[.,]\d{4,}$", form) and "x" not in form
                     else rb"(?![0-9]|[.,][0-9])")
            continue
        if re.fullmatch(r"[1-9]\d{0,2},\d{3}", form):
            # '1,235': a thousand and more, grouped, or a decimal comma; either way not part of a
            # longer number
            trie.add(form.encode(), rb"(?![0-9]|[.,][0-9])")
        elif plain.group(2):
            trie.add(form.encode(), _DECIMAL_TAIL)
            lower = _less_one(form)
            if lower is not None:
                trie.add((lower + "999").encode(), rb"[0-9]*")
        else:
            trie.add(form.encode(), _INTEGER_TAIL)
            lower = _less_one(form)
            if lower is not None:
                trie.add((lower + ".999").encode(), rb"[0-9]*")
    # Not after a digit or a point; a decimal comma not after a comma either: '4,0,8129' is a list.
    parts = _merged([(dotted, rb"(?<![0-9.][\x00-\xff])"), (commas, rb"(?<![0-9.,][\x00-\xff])"), (binary, b"")])
    if not parts:
        return None
    return re.compile(b"|".join(parts))


def reference_pattern(values: Iterable[float], precision: int, exclude: Iterable[float] = (),
                      scale: float = 1.0) -> re.Pattern[bytes] | None:
    """A pattern matching any spelling of ``values`` (:func:`leak_forms`, :func:`leak_pattern`)
    standing alone as a number, except the roundings equal to ``exclude`` (the paper's reported
    value, which the paper prints); None when no spelling is specific enough."""
    public = tuple(exclude)
    forms: set[str] = set()
    hidden = list(values)
    for value in hidden:
        forms |= leak_forms(value, precision, scale, public)
    return leak_pattern(forms, [v for v in hidden if leak_forms(v, precision, scale, public)])


def leaks(root: Path, pattern: re.Pattern[bytes] | None, skip: Iterable[str] = ()) -> list[tuple[str, str]]:
    """(file, form) of each file under ``root`` (but ``skip``) in which ``pattern`` matches."""
    if pattern is None:
        return []
    skipped = set(skip)
    found = []
    for rel, path, info in _files(root):
        if rel in skipped or info.st_size > MAX_SCAN_BYTES:
            continue
        match = pattern.search(path.read_bytes())
        if match is not None:
            found.append((rel, _shown(match.group())))
    return found


def _shown(form: bytes) -> str:
    """A spelling :func:`leak_pattern` found, as a message shows it: text as written, a binary
    double as its number.

    >>> _shown(b"8.129e-01"), _shown("0.8129".encode("utf-16-le")), _shown(struct.pack(">d", 0.8129))
    ('8.129e-01', '0.8129 (UTF-16)', '0.8129 (a binary double)')
    """
    if form.isascii() and form.decode().isprintable():
        return form.decode()
    if len(form) % 2 == 0 and not form[1::2].strip(b"\0"):
        return form.decode("utf-16-le") + " (UTF-16)"
    if len(form) == 8:
        little, big = struct.unpack("<d", form)[0], struct.unpack(">d", form)[0]
        plausible = [v for v in (little, big) if math.isfinite(v) and 1e-12 < abs(v) < 1e15]
        if plausible:
            return f"{plausible[0]!r} (a binary double)"
    return form.decode("utf-8", "backslashreplace")
