"""A scripted agent for ``rra build --agent``, for the real-repository corpus (scripts/real_repos.py).

Usage: ``python scripts/real_repos_agent.py ANSWERS.json REQUEST_FILE`` (``rra build`` appends the
request file; ``RRA_AGENT_REQUEST`` and ``RRA_AGENT_ANSWER`` name the request and answer files too).

``ANSWERS.json`` holds what the repository's author would answer, written before the build:

.. code-block:: json

    {"answers": {"placeholder/launchers/0/description": {"set": [...]}},
     "by_kind": {"claim": {"reject": "..."}}}

The answer to a request is looked up by its id in ``answers``, else by its kind in ``by_kind``.
Launchers are named by id, not by their place in the draft (which changes as ``rra init`` learns):

- ``launcher_descriptions`` (``{launcher id: text}``) answers ``placeholder/launchers/N/description``
  with the text for the launcher now at ``N``;
- ``drop_launchers`` (``{launcher id: why}``) answers any placeholder of such a launcher by setting
  ``/launchers`` to the drafted list without every launcher named there (an install command the
  README shows is not an experiment);
- in a ``set`` pointer, ``/launchers/{ID}/`` means the launcher whose id is ``ID``;
- a ``files`` entry's ``content`` may be a list of ``[old, new]`` replacements of the artifact's
  file as it is now, instead of the whole text (a one-key fix without a copy of the file).

A request with no answer is answered with ``give_up``, naming the decision, so that the build
stops and says what the scripted author did not know (it never guesses). Every request it saw is
appended, one JSON line each, to ``requests.jsonl`` beside the answers file's name in the
directory named by ``RRA_REAL_REPOS_LOG`` when that is set, for the driver's report.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

ANSWER_FORMAT = "1.0"
#: How a ``give_up`` for a decision the answers file does not cover begins.
NO_ANSWER = "the scripted author has no answer"


_LAUNCHER_PLACEHOLDER = re.compile(r"^placeholder/launchers/(\d+)/(.+)$")
_BY_ID = re.compile(r"^/launchers/\{([^}]+)\}(?=/|$)")


def _launchers(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The launchers of the manifest the request names, as they are now."""
    manifest = Path(request["artifact"]) / request["manifest"]  # relative to the artifact, or absolute
    data = YAML(typ="safe").load(manifest.read_text(encoding="utf-8"))
    launchers = data.get("launchers", []) if isinstance(data, dict) else []
    return [launcher for launcher in launchers if isinstance(launcher, dict)]


def _by_launcher(request: dict[str, Any], table: dict[str, Any]) -> dict[str, Any] | None:
    """An answer to a placeholder of launcher N, from the tables keyed by launcher id."""
    match = _LAUNCHER_PLACEHOLDER.match(str(request.get("id", "")))
    if not match:
        return None
    launchers = _launchers(request)
    index = int(match.group(1))
    if index >= len(launchers):
        return None
    launcher_id = str(launchers[index].get("id"))
    dropped: dict[str, str] = table.get("drop_launchers", {})
    if launcher_id in dropped:
        kept = [launcher for launcher in launchers if launcher.get("id") not in dropped]
        return {"set": [{"pointer": "/launchers", "value": kept}]}
    described: dict[str, str] = table.get("launcher_descriptions", {})
    if match.group(2) == "description" and launcher_id in described:
        return {"set": [{"pointer": f"/launchers/{index}/description", "value": described[launcher_id]}]}
    return None


def _resolve(body: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    """``body`` with each ``/launchers/{ID}`` of its ``set`` pointers made the launcher's index."""
    sets = body.get("set")
    if not isinstance(sets, list) or not any(_BY_ID.match(str(item.get("pointer", ""))) for item in sets):
        return body
    index = {str(launcher.get("id")): i for i, launcher in enumerate(_launchers(request))}
    resolved = []
    for item in sets:
        match = _BY_ID.match(str(item.get("pointer", "")))
        if match:
            if match.group(1) not in index:
                return {"give_up": f"the scripted answer names launcher {match.group(1)!r}, which the manifest lacks"}
            item = {**item, "pointer": _BY_ID.sub(f"/launchers/{index[match.group(1)]}", item["pointer"])}
        resolved.append(item)
    return {**body, "set": resolved}


def answer_for(request: dict[str, Any], table: dict[str, Any]) -> dict[str, Any]:
    """The answer body for ``request`` from ``table`` (by id, by launcher id, then by kind), or a ``give_up``."""
    ident = str(request.get("id", ""))
    kind = str(request.get("kind", ""))
    by_id: dict[str, Any] = table.get("answers", {})
    by_kind: dict[str, Any] = table.get("by_kind", {})
    by_launcher = _by_launcher(request, table) if ident not in by_id else None
    if ident in by_id:
        body = _resolve(dict(by_id[ident]), request)
    elif by_launcher is not None:
        body = by_launcher
    elif kind in by_kind:
        body = dict(by_kind[kind])
    else:
        question = str(request.get("question", "")).strip()
        body = {"give_up": f"{NO_ANSWER} for decision {ident!r} ({kind}): {question}"}
    body.pop("x-note", None)  # the answers file's own remarks stay out of the answer
    if kind == "claim" and request.get("pointer") and isinstance(body.get("set"), list):
        # rra init wrote the candidate as a claim with TODOs (at the request's pointer): a claim
        # the answers append confirms it where it is, whatever place the draft gave it.
        body["set"] = [{**item, "pointer": request["pointer"]} if item.get("pointer") == "/claims/-" else item
                       for item in body["set"]]
    if body.get("files"):
        try:
            body["files"] = [_edited(request, write) for write in body["files"]]
        except ValueError as exc:
            body = {"give_up": f"the scripted answer's replacement does not apply: {exc}"}
    return {"rra_agent_answer": ANSWER_FORMAT, "request": ident, **body}


def _edited(request: dict[str, Any], write: dict[str, Any]) -> dict[str, Any]:
    """A file to write: given whole, or as ``[[old, new], ...]`` replacements of the artifact's file
    as it is now (a one-key fix is written as that key's change, not as a copy of the repository's
    file; the same form as the tests' scripted agent, tests/fixtures/agents/scripted_agent.py)."""
    content = write.get("content")
    if isinstance(content, str) or not isinstance(content, list):
        return write
    path = Path(request["artifact"]) / str(write["path"])
    text = path.read_text(encoding="utf-8")
    for old, new in content:
        if old not in text:
            raise ValueError(f"{old!r} is not in {write['path']}")
        text = text.replace(old, new)
    return {**write, "content": text}


def _log(request: dict[str, Any], answer: dict[str, Any]) -> None:
    directory = os.environ.get("RRA_REAL_REPOS_LOG")
    if not directory:
        return
    if "give_up" in answer:
        outcome = "no_answer" if str(answer["give_up"]).startswith(NO_ANSWER) else "give_up"
    else:
        outcome = "reject" if "reject" in answer else "answered"
    line = {"id": request.get("id"), "kind": request.get("kind"), "step": request.get("step"),
            "question": request.get("question"), "outcome": outcome,
            "give_up": answer.get("give_up"), "log_tail": request.get("log_tail")}
    with (Path(directory) / "requests.jsonl").open("a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def main(argv: list[str]) -> int:
    """Answer the request named last in ``argv`` from the answers file named first."""
    if len(argv) < 2:
        print("usage: real_repos_agent.py ANSWERS.json REQUEST_FILE", file=sys.stderr)
        return 2
    table = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    request_path = Path(os.environ.get("RRA_AGENT_REQUEST", argv[-1]))
    request = json.loads(request_path.read_text(encoding="utf-8"))
    answer = answer_for(request, table)
    target = Path(os.environ.get("RRA_AGENT_ANSWER", request["answer"]))
    target.write_text(json.dumps(answer, indent=2) + "\n", encoding="utf-8")
    _log(request, answer)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
