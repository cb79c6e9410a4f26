"""Applying a decision's answer: JSON-pointer edits of the manifest, files of the code, their change records."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from ...io.atomic import write_atomic
from ...model.agent import AgentAnswer, AgentRequest
from ..agent import AnswerInvalid
from ..manifest_edit import EditError, edit_manifest
from .context import Build

#: How much of a failed run's output a repair request carries.
LOG_TAIL = 4000


def _tokens(pointer: str) -> list[str]:
    """The unescaped tokens of a JSON pointer (RFC 6901)."""
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]


def get_pointer(data: Any, pointer: str) -> Any:
    """The value at ``pointer`` in ``data`` (a missing one raises, as indexing does)."""
    for token in _tokens(pointer):
        data = data[int(token)] if isinstance(data, list) else data[token]
    return data


def set_pointer(document: Any, pointer: str, value: Any, where: str) -> None:
    """Set ``pointer`` to ``value`` in ``document``; its parents must exist (``where`` names the answer field in errors)."""
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


def apply_set(build: Build, answer: AgentAnswer, answer_path: Path,
               check: Callable[[Any], None] | None = None) -> None:
    """Apply the answer's ``set`` to the manifest; ``check`` sees the edited document before it
    is written, and what it raises leaves the manifest as it was."""
    if not answer.set:
        return
    manifest = build.artifact().manifest_path

    def mutate(document: Any) -> None:
        for i, edit in enumerate(answer.set):
            set_pointer(document, edit.pointer, edit.value, f"answer {answer_path}: field 'set/{i}/pointer'")
        if check is not None:
            check(document)

    try:
        edit_manifest(manifest, mutate)
    except EditError as exc:
        raise AnswerInvalid(f"answer {answer_path}: field 'set': {exc}") from None


def _file_targets(build: Build, answer: AgentAnswer, answer_path: Path) -> list[tuple[str, Path, str]]:
    """(path, target, content) of each file the answer writes, every path checked before any
    file or manifest value is written: a refused answer changes nothing."""
    from ..patches import own_paths

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


def record_answer_change(build: Build, answer: AgentAnswer, answer_path: Path, files: list[str], evidence: str,
            launcher: str | None = None) -> str | None:
    """Record the change of ``files`` that ``answer`` explains; its id, or None when no file changed."""
    from ..changes import ChangeInput, record_change

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


def plain_data(node: Any) -> Any:
    """A round-trip YAML node as plain dicts, lists and scalars."""
    if isinstance(node, Mapping):
        return {str(k): plain_data(v) for k, v in node.items()}
    if isinstance(node, list):
        return [plain_data(v) for v in node]
    return str(node) if isinstance(node, str) else node


def repair_answer(build: Build, request: AgentRequest, todo: str, evidence: str,
                   launcher: str | None) -> None:
    """Ask for a repair and apply its answer: files written and recorded as a change, then its ``set``."""
    asked = build.ask(request, todo)
    answer = asked.answer
    answer_path = build.answer_path(request.id)
    if not answer.files and not answer.set:
        raise AnswerInvalid(f"answer {answer_path}: field 'files': a repair writes files ('files') or changes "
                            "the manifest ('set')")
    if answer.files and answer.change is None:
        raise AnswerInvalid(f"answer {answer_path}: field 'change': files of the code are written, and a change "
                            "needs its record (id, kind, rationale, alters_method)")
    apply_with_files(build, answer, answer_path, evidence, launcher)
    build.applied(request)


def apply_with_files(build: Build, answer: AgentAnswer, answer_path: Path, evidence: str,
                     launcher: str | None = None, check: Callable[[Any], None] | None = None) -> None:
    """Apply an answer that may write files of the code: every path checked first, then the
    manifest's ``set`` (``check`` as for :func:`apply_set`), the files, and their change record
    (noted in the current decision)."""
    targets = _file_targets(build, answer, answer_path)
    apply_set(build, answer, answer_path, check)
    files = _write_files(targets)
    changed = record_answer_change(build, answer, answer_path, files, evidence, launcher)
    record = build.current
    assert record is not None
    record.decisions[-1]["change"] = changed
    if answer.change is not None and changed is None:
        record.decisions[-1]["rationale"] = answer.change.rationale


def log_tail(directory: Path, record: Mapping[str, Any]) -> str:
    """The last :data:`LOG_TAIL` characters of a run's standard output and error, for a repair request."""
    parts = []
    for stream in ("stdout", "stderr"):
        path = directory / f"{stream}.log"
        try:
            text = path.read_text("utf-8", "replace").strip()
        except OSError:
            continue
        if text:
            parts.append(f"--- {stream} ---\n{text[-LOG_TAIL:]}")
    messages = record.get("messages") or []
    if messages:
        parts.append("--- rra run ---\n" + "\n".join(str(m) for m in messages))
    return "\n".join(parts)[-LOG_TAIL:] or "(no output)"
