"""``rra init RAW_REPO``: draft a manifest from what a raw repository already says.

The library returns a :class:`Draft` (the manifest data plus every finding, located at
``file:line``); :func:`write_draft` writes it, never over an existing manifest. Whatever the
repository does not say is an explicit ``"TODO: ..."`` value, which ``rra validate`` reports as
RRA214 (unfinished-value) until the author fills it in; values the schema needs as numbers
(resources, the interpreter when nothing names one) are written as stated assumptions instead
and listed in :attr:`Draft.assumed`.
"""

from __future__ import annotations

import os
import platform
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import SPEC_VERSION
from .detect.findings import Finding
from .detect.license import detect_license
from .detect.paper import detect_paper
from .detect.repo import RawRepo, parse_upstream_option
from .init import SCHEMA_URL, AlreadyExists, _slug, check_id, check_title
from .yamltext import to_yaml

__all__ = ["Draft", "draft_manifest", "write_draft"]


@dataclass
class Draft:
    """A drafted manifest and what it was drafted from."""

    #: The manifest, as plain data in the order it is written.
    data: dict[str, Any]
    #: Everything found, in the order of the manifest's sections.
    findings: list[Finding] = field(default_factory=list)
    #: JSON-pointer-like paths of the ``TODO`` values left for the author.
    placeholders: list[str] = field(default_factory=list)
    #: Values written without support in the repository, with why (the schema needs a value).
    assumed: list[str] = field(default_factory=list)
    #: Candidate claims and other items reported but not written into the manifest.
    candidates: list[Finding] = field(default_factory=list)
    #: Files that could not be read (skipped, with why).
    problems: list[Finding] = field(default_factory=list)

    def todo(self, pointer: str, text: str) -> str:
        """A placeholder value for ``pointer``, recorded in :attr:`placeholders`."""
        self.placeholders.append(pointer)
        return f"TODO: {text}"

    def text(self) -> str:
        """The manifest file's text: a ``$schema`` line, a header, the data as block YAML."""
        header = (f"# yaml-language-server: $schema={SCHEMA_URL}\n"
                  "# Drafted by 'rra init' from the repository; fill in the TODOs, then run: rra validate\n")
        return header + to_yaml(self.data)


def draft_manifest(raw: Path, *, upstream: str | None = None, artifact_id: str | None = None,
                   title: str | None = None, in_place: bool = True) -> Draft:
    """Detect what ``raw`` (a git working tree) says and draft a manifest from it.

    ``upstream`` (``URL@COMMIT``) replaces what git says; ``in_place`` says the manifest is
    written into the repository itself, so its code is also a shipped tree ``"."``."""
    repo = RawRepo.open(raw)
    draft = Draft(data={})
    paper, paper_found = detect_paper(repo, draft.problems)
    name = raw.resolve().name
    artifact_id = check_id(artifact_id if artifact_id is not None else _slug(name))
    title = check_title(title if title is not None else paper.get("title", name))
    data = draft.data
    data["rra_version"] = SPEC_VERSION
    data["id"] = artifact_id
    data["title"] = title
    data["paper"] = _paper(draft, paper)
    draft.findings.extend(paper_found)
    data["code"] = _code(draft, repo, upstream, in_place)
    data["environment"] = {"interpreter": {"version": _default_python(draft)}}
    data["launchers"] = [_template_launcher(draft)]
    data["claims"] = []
    return draft


def _paper(draft: Draft, found: dict[str, Any]) -> dict[str, Any]:
    paper: dict[str, Any] = {
        "title": found.get("title") or draft.todo("/paper/title", "title of the paper"),
        "authors": found.get("authors") or [{"name": draft.todo("/paper/authors/0/name", "first author")}],
    }
    for key in ("venue", "year", "doi", "arxiv", "url", "citation_file"):
        if key in found:
            paper[key] = found[key]
    return paper


def _code(draft: Draft, repo: RawRepo, upstream: str | None, in_place: bool) -> dict[str, Any]:
    licenses = detect_license(repo)
    draft.findings.extend(licenses)
    spdx = licenses[0].value if licenses and licenses[0].value != "unrecognised" else None
    code: dict[str, Any] = {"license": spdx or draft.todo("/code/license", "SPDX license, e.g. MIT")}
    if upstream is not None:
        url, commit = parse_upstream_option(upstream)
        draft.findings.append(Finding("upstream", f"{url} @ {commit}", "--upstream", None))
    else:
        git_url, git_commit = repo.upstream()
        url = git_url or draft.todo("/code/upstream/url", "clone URL of the upstream repository")
        commit = git_commit or draft.todo("/code/upstream/commit", "full 40-hex upstream commit")
        if git_url:
            draft.findings.append(Finding("upstream.url", git_url, None, None, "remote origin"))
        if git_commit:
            draft.findings.append(Finding("upstream.commit", git_commit, None, None, "HEAD"))
    code["upstream"] = {"url": url, "commit": commit}
    if in_place:
        code["tree"] = {"path": "."}
    return code


def _default_python(draft: Draft) -> str:
    version = ".".join(platform.python_version_tuple()[:2])
    draft.assumed.append(f"environment.interpreter.version {version!r}: this Python, as nothing in the "
                         "repository names one")
    return version


def _template_launcher(draft: Draft) -> dict[str, Any]:
    draft.assumed.append("launchers[0].resources timeout_s 3600 and expected_runtime_s 600: nothing in the "
                         "repository says how long a run takes")
    return {
        "id": "main",
        "description": draft.todo("/launchers/0/description", "what this step computes"),
        "argv": [draft.todo("/launchers/0/argv/0", "the command that runs the experiment")],
        "stochastic": False,
        "resources": {"timeout_s": 3600, "expected_runtime_s": 600},
    }


def write_draft(draft: Draft, directory: Path) -> Path:
    """Write ``directory/rra.yaml`` atomically; :class:`AlreadyExists` rather than overwrite a manifest."""
    from ..validate.api import find_manifest

    existing = find_manifest(directory) if directory.is_dir() else None
    if existing is not None:
        raise AlreadyExists(f"{existing} already exists; nothing was written")
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "rra.yaml"
    fd, tmp = tempfile.mkstemp(prefix=".rra.yaml.", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(draft.text())
        # A hard link is created whole or not at all, and fails if the target exists: a manifest
        # that appears meanwhile is never overwritten, and no reader sees half a file.
        try:
            os.link(tmp, target)
        except FileExistsError:
            raise AlreadyExists(f"{target} already exists; nothing was written") from None
    finally:
        os.unlink(tmp)
    return target
