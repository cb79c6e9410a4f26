"""Step **fill**: a *placeholder* decision for every ``TODO`` value of the manifest."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ...model.agent import DecisionKind
from ..agent import AnswerInvalid
from .answers import apply_set, get_pointer, plain_data
from .context import MAX_DECISIONS, Build, readme_context
from .errors import BuildError


def run(build: Build) -> None:
    """Run the step (see the module docstring)."""
    from ..draft import _placeholders

    drafted = {str(c["claim"]) for c in build.steps["specify"].outputs.get("candidates") or [] if c.get("claim")}
    for _ in range(MAX_DECISIONS):
        artifact = build.artifact()
        # A drafted claim's TODOs are the claims step's: confirming the claim fills them.
        claims = [c.get("id") if isinstance(c, Mapping) else None for c in artifact.data.get("claims") or []]
        pointers = [p for p in _placeholders(artifact.data) if not (
            p.startswith("/claims/") and claims[int(p.split("/")[2])] in drafted)]
        if not pointers:
            return
        pointer = pointers[0]
        value = get_pointer(artifact.data, pointer)
        ident = "placeholder" + pointer
        manifest = build.rel(artifact.manifest_path)
        request = build.request(ident, DecisionKind.PLACEHOLDER,
                                f"the manifest's {pointer} is a placeholder ({value!r}): what is its value?",
                                pointer=pointer, value=value, context=readme_context(build))
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
        apply_set(build, asked.answer, answer_path, _fills(pointer, answer_path, _owner(artifact.data, pointer)))
        build.applied(request)
    raise BuildError(f"more than {MAX_DECISIONS} placeholders were asked; giving up")


def _owner(data: Any, pointer: str) -> tuple[str, str] | None:
    """The list item the TODO belongs to, as (its pointer, its id): the nearest enclosing object
    with an 'id' (a launcher, a claim, an output), or None (a TODO of /paper or /code)."""
    parts = pointer.split("/")[1:]
    for end in range(len(parts) - 1, 0, -1):
        prefix = "/" + "/".join(parts[:end])
        try:
            node = get_pointer(data, prefix)
        except (KeyError, IndexError, TypeError, ValueError):
            continue
        if isinstance(node, Mapping) and isinstance(node.get("id"), str):
            return prefix, node["id"]
    return None


def _fills(pointer: str, answer_path: Path, owner: tuple[str, str] | None = None) -> Callable[[Any], None]:
    """The check of a placeholder answer, before anything is written: it must leave no TODO at
    ``pointer`` (a refused answer leaves the manifest as it was). An answer that removes the item
    the TODO belonged to (a launcher left out: the next launcher moves to its place, its own TODO
    to the same pointer) settles the question too; that other TODO is asked next."""
    from ..draft import _placeholders

    def check(document: Any) -> None:
        data = plain_data(document)
        if pointer not in _placeholders(data):
            return
        if owner is not None and _owner(data, pointer) != owner:
            return  # the asked TODO's item is gone or moved: what sits there now is another question
        raise AnswerInvalid(f"answer {answer_path}: field 'set': it leaves the TODO at {pointer}",
                            f"set the value at {pointer} itself; nothing was written")

    return check
