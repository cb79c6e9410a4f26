"""``rra init RAW_REPO``: draft a manifest from what a raw repository already says.

The library returns a :class:`Draft` (the manifest data plus every finding, located at
``file:line``); :func:`write_draft` writes it, never over an existing manifest. Whatever the
repository does not say is an explicit ``"TODO: ..."`` value, which ``rra validate`` reports as
RRA214 (unfinished-value) until the author fills it in; values the schema needs as numbers
(resources, the interpreter when nothing names one) are written as stated assumptions instead
and listed in :attr:`Draft.assumed`. Candidate claims (numbers in results tables) are written
as claims with TODOs to confirm (:mod:`.draft_claims`).
"""

from __future__ import annotations

import platform
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import SPEC_VERSION
from .detect.claims import detect_claims
from .detect.claims_written import QUESTION_ADD, written_candidates
from .detect.environment import IMPORTS_SOURCE, DetectedEnvironment, detect_environment
from .detect.findings import Finding
from .detect.launchers import detect_launchers
from .detect.license import declared_license, detect_license
from .detect.paper import detect_paper
from .detect.randomness import settle_stochastic
from .detect.system import detect_system
from .detect.repo import CREDENTIALS_REMOVED, MAX_WALKED, RawRepo, parse_upstream_option, without_credentials
from .draft_claims import draft_claims
from .init import AlreadyExists, _slug, check_id, check_title, schema_modeline
from .yamltext import to_yaml

__all__ = ["REQUIREMENTS_NAME", "Draft", "draft_manifest", "write_draft"]

#: The file the draft's requirements are written to when ``rra lock`` would not find them in place.
REQUIREMENTS_NAME = "requirements.in"
#: What a plain directory (no .git) says of its upstream: nothing.
PLAIN_DIRECTORY_UPSTREAM = "a plain directory: give --upstream URL@COMMIT (the archive's DOI/URL)"
#: Requirement sources ``rra lock`` reads where they are (rra_tools.env.resolve.declared_requirements).
_LOCK_READS = ("requirements.in", "requirements.txt", "pyproject.toml")


@dataclass
class Draft:
    """A drafted manifest and what it was drafted from."""

    #: The manifest, as plain data in the order it is written.
    data: dict[str, Any]
    #: Everything found, in the order of the manifest's sections.
    findings: list[Finding] = field(default_factory=list)
    #: JSON pointers of the ``TODO`` values left for the author, in document order.
    placeholders: list[str] = field(default_factory=list)
    #: Values written without support in the repository, with why (the schema needs a value).
    assumed: list[str] = field(default_factory=list)
    #: Candidate claims, in the order found; :attr:`written` says which became claims.
    candidates: list[Finding] = field(default_factory=list)
    #: Index in :attr:`candidates` -> id of the drafted claim it was written into. A table cell
    #: is written with the printed metric of the same name, if any; the others are reported only.
    written: dict[int, str] = field(default_factory=dict)
    #: Files that could not be read (skipped, with why).
    problems: list[Finding] = field(default_factory=list)
    #: The requirements found and the file they came from (see :mod:`.detect.environment`).
    environment: DetectedEnvironment = field(default_factory=DetectedEnvironment)
    #: Text of a requirements file to write beside the manifest, when ``rra lock`` needs one.
    requirements_text: str | None = None
    #: Why that file was written, in a sentence for a change record's rationale (``None`` with it).
    requirements_reason: str | None = None
    #: Questions for the build's *claim* decision (``item`` ``claim-question``), where the
    #: repository shows results that no claim can read: a figure, a NumPy array, a CSV or JSON file
    #: whose columns or keys are made at run time (each at the writing call's ``file:line``), or no
    #: candidate claim at all (``file`` ``.``). Asked as ``f"{value} ({where}): {note}"``, e.g.
    #: "results only as a figure fig1.png (plot.py:12): no claim can be read from it; add one".
    claim_questions: list[Finding] = field(default_factory=list)

    def text(self) -> str:
        """The manifest file's text: a ``$schema`` line, a header, the data as block YAML."""
        header = (schema_modeline() +
                  "# Drafted by 'rra init' from the repository; fill in the TODOs, then run: rra validate\n")
        return header + to_yaml(self.data)


def draft_manifest(raw: Path, *, upstream: str | None = None, artifact_id: str | None = None,
                   title: str | None = None, in_place: bool = True, paper_file: Path | None = None) -> Draft:
    """Detect what ``raw`` (a git working tree, or a plain directory) says and draft a manifest from it.

    ``upstream`` (``URL@COMMIT``) replaces what git says; ``in_place`` says the manifest is
    written into the repository itself, so its code is also a shipped tree ``"."``;
    ``paper_file`` (Markdown, LaTeX or PDF) adds the numbers of the paper's tables to the
    candidate claims."""
    repo = RawRepo.open(raw)
    draft = Draft(data={})
    draft.problems.extend(Finding("unreadable", name, name, None, "its name is not UTF-8, which a manifest "
                                  "cannot hold; rename it to use it") for name in repo.undecodable)
    if repo.truncated:
        draft.problems.append(Finding("unreadable", raw.name, ".", None, f"the walk stopped at {MAX_WALKED:,} "
                                      "files; list data trees in a .gitignore to leave them out"))
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
    env = detect_environment(repo, draft.problems)
    draft.environment = env
    draft.findings.extend(env.findings)
    draft.findings.extend(env.conflicts)
    data["environment"] = {"interpreter": {"version": env.python or _default_python(draft)}}
    system, system_found = detect_system(repo)
    data["environment"].update(system)
    draft.findings.extend(system_found)
    draft.requirements_text = _requirements_text(env, in_place)
    draft.requirements_reason = _requirements_reason(env) if draft.requirements_text is not None else None
    draft.assumed.extend(_requirements_assumed(env, draft.requirements_text is not None))
    found = detect_launchers(repo, env.console_scripts, draft.problems)
    settle_stochastic(repo, found.launchers, env.console_scripts, found.assumed, found.findings)
    draft.findings.extend(found.findings)
    draft.assumed.extend(found.assumed)
    launchers = found.launchers or [_template_launcher(draft)]
    for launcher in launchers:
        launcher["resources"] = {"timeout_s": 3600, "expected_runtime_s": 600}
    draft.assumed.append("resources timeout_s 3600 and expected_runtime_s 600 of every launcher: nothing in "
                         "the repository says how long a run takes")
    data["launchers"] = launchers
    draft.candidates = detect_claims(repo)
    printing = {str(c.file) for c in draft.candidates if c.parts[:1] == ("print",)}
    from_files, draft.claim_questions = written_candidates(found.written, printing)
    draft.candidates.extend(from_files)
    if paper_file is not None:
        from .detect.paper_file import paper_candidates

        draft.candidates.extend(paper_candidates(paper_file))
    if not draft.candidates and not draft.claim_questions:
        draft.claim_questions.append(Finding("claim-question", "no candidate claim: no results table, printed metric "
                                             "or number written to a file was found", ".", None, QUESTION_ADD))
    elif not draft.claim_questions and not any(c.parts[:1] == ("cell",) for c in draft.candidates):
        # Printed metrics, but no number the repository states that one of them prints: the
        # result may be printed some other way (a library's report, model.print()), so the author
        # is asked for the claim too, instead of finding no door but an unrelated print's decision.
        draft.claim_questions.append(Finding("claim-question", "no stated number: the printed metrics found read no "
                                             "number the repository's tables or shown outputs state", ".", None,
                                             QUESTION_ADD))
    claims = draft_claims(draft.candidates, launchers)
    data["claims"] = claims.claims
    draft.written = claims.written
    draft.assumed.extend(claims.assumed)
    if found.discrepancies:
        data["discrepancies"] = found.discrepancies
    draft.placeholders = _placeholders(data)
    return draft


def _placeholders(data: Any, pointer: str = "") -> list[str]:
    """JSON pointers of the TODO values, in document order."""
    if isinstance(data, dict):
        return [p for key, value in data.items() for p in _placeholders(value, f"{pointer}/{key}")]
    if isinstance(data, list):
        return [p for index, value in enumerate(data) for p in _placeholders(value, f"{pointer}/{index}")]
    return [pointer] if isinstance(data, str) and re.match(r"[ \t]*TODO(?![A-Za-z0-9_])", data) else []


def _requirements_text(env: DetectedEnvironment, in_place: bool) -> str | None:
    """A requirements.in for ``rra lock``, unless it reads the source itself where it is and the
    code imports nothing the source leaves out.

    A package the code imports that the source does not name is added, each with a comment saying
    where it is imported: the run would fail on that import, and a declared file is never edited
    (in place, a ``requirements.txt`` source is included with ``-r``; a ``pyproject.toml`` one is
    read by ``rra lock`` beside requirements.in; a ``requirements.in`` one cannot be added to)."""
    if env.source is None:
        return None
    missing = [f"{item.distribution}  # imported at {item.where} (import {item.module}); {env.source} does not "
               "name it" for item in env.missing]
    if in_place and env.source in _LOCK_READS:
        if not missing or env.source == REQUIREMENTS_NAME:
            return None
        include = ["-r requirements.txt"] if env.source == "requirements.txt" else []
        return "\n".join([f"# Drafted by 'rra init': {env.source}, plus the packages the code imports that it does "
                          "not name; 'rra lock' resolves and pins these.", *include, *missing]) + "\n"
    lines = [f"# Drafted by 'rra init' from {env.source}; 'rra lock' resolves and pins these."]
    if env.untranslated:
        lines.append("# Not translated (no pip package; install them another way, or drop them):")
        lines.extend(f"#   {entry}" for entry in env.untranslated)
    # Each requirement taken from prose or imports says where it came from, for the author to check.
    requirements = [f"{r}  # {env.origins[r]}" if r in env.origins else r for r in env.requirements]
    return "\n".join([*lines, *requirements, *missing]) + "\n"


def _requirements_reason(env: DetectedEnvironment) -> str:
    """Why the drafted requirements.in exists, from where its lines came."""
    if env.source == IMPORTS_SOURCE:
        why = ("No file of the repository declares its requirements and its README lists none; rra init wrote the "
               "packages the code imports into requirements.in, each with the file:line of its import")
    elif env.origins:  # the README's list (the imports' case is above)
        why = (f"No file of the repository declares its requirements; {env.source} lists them (pip install lines, "
               "a requirements section), and rra init wrote them into requirements.in, each with its line")
    elif env.source in _LOCK_READS:
        why = f"The repository declares its requirements in {env.source}, which rra lock reads"
    else:
        why = (f"The repository declares its requirements in {env.source}, which rra lock does not read; rra init "
               "translated them into requirements.in, whose header lists what could not be translated")
    if env.missing:
        named = ", ".join(f"{item.distribution} ({item.where})" for item in env.missing)
        why += (f"; it adds what the code imports and {env.source} does not name, which the run would fail without: "
                f"{named}")
    return why + "."


def _requirements_assumed(env: DetectedEnvironment, written: bool) -> list[str]:
    """What the drafted requirements assume: each one from the README or the imports, the
    distribution names taken to be import names, each import no source names."""
    lines = [f"requirement {r} ({env.origins[r]}): {env.source} is the only source of requirements; no "
             "requirements file declares them" for r in env.requirements if r in env.origins]
    lines.extend(env.assumed)
    for item in env.missing:
        fate = f"added to {REQUIREMENTS_NAME}" if written else \
            f"add it to {REQUIREMENTS_NAME} by hand (rra init does not edit the repository's own)"
        lines.append(f"requirement {item.distribution}: imported at {item.where} and not named by {env.source}: "
                     f"{fate}")
    return lines


def _todo(text: str) -> str:
    """A placeholder value, which RRA214 reports until the author replaces it."""
    return f"TODO: {text}"


def _paper(draft: Draft, found: dict[str, Any]) -> dict[str, Any]:
    paper: dict[str, Any] = {
        "title": found.get("title") or _todo("title of the paper"),
        "authors": found.get("authors") or [{"name": _todo("first author")}],
    }
    for key in ("venue", "year", "doi", "arxiv", "url", "citation_file"):
        if key in found:
            paper[key] = found[key]
    return paper


def _code(draft: Draft, repo: RawRepo, upstream: str | None, in_place: bool) -> dict[str, Any]:
    licenses = detect_license(repo)
    spdx = licenses[0].value if licenses and licenses[0].value != "unrecognised" else None
    if spdx is None and (declared := declared_license(repo)) is not None:
        # A license text the table does not know is still reported, with what is used instead.
        licenses = [Finding(f.item, f.value, f.file, f.line, f"not one of the well-known license texts; "
                            f"{declared.file} declares {declared.value}") for f in licenses] + [declared]
        spdx = str(declared.value)
    draft.findings.extend(licenses)
    code: dict[str, Any] = {"license": spdx or _todo("SPDX license, e.g. MIT")}
    if upstream is not None:
        given, commit = parse_upstream_option(upstream)
        url, removed = without_credentials(given)
        draft.findings.append(Finding("upstream", f"{url} @ {commit}", "--upstream", None,
                                      "credentials removed from the URL" if removed else ""))
    elif not repo.is_git:
        url = _todo(PLAIN_DIRECTORY_UPSTREAM)
        commit = _todo("full 40-hex upstream commit: " + PLAIN_DIRECTORY_UPSTREAM)
        draft.findings.append(Finding("upstream", "TODO", ".", None, PLAIN_DIRECTORY_UPSTREAM))
    else:
        git_url, git_commit = repo.upstream()
        url = git_url or _todo("clone URL of the upstream repository")
        commit = git_commit or _todo("full 40-hex upstream commit")
        if git_url:
            draft.findings.append(Finding("upstream.url", git_url, None, None, "remote origin; " + CREDENTIALS_REMOVED
                                          if repo.credentials_removed else "remote origin"))
        if git_commit:
            note = "HEAD; tracked files have uncommitted changes, which this commit does not hold" \
                if repo.modified() else "HEAD"
            if not git_url:
                # A re-committed archive's HEAD exists nowhere else: written, as the patches of a
                # build are made against it, but never passed off as the upstream's commit.
                note = (f"warning: HEAD {git_commit[:7]} has no remote: it is a local commit, not the upstream; "
                        "give --upstream URL@COMMIT")
            draft.findings.append(Finding("upstream.commit", git_commit, None, None, note))
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
    return {
        "id": "main",
        "description": _todo("what this step computes"),
        "argv": [_todo("the command that runs the experiment")],
        "stochastic": False,
    }


def write_draft(draft: Draft, directory: Path) -> list[Path]:
    """Write ``directory/rra.yaml`` (and the drafted requirements.in, if any) atomically; raise
    :class:`AlreadyExists` rather than overwrite a manifest. The paths written, manifest first."""
    from ..io.atomic import write_atomic
    from ..io.read.manifest import find_manifest

    existing = find_manifest(directory) if directory.is_dir() else None
    if existing is not None:
        raise AlreadyExists(f"{existing} already exists; nothing was written")
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "rra.yaml"
    try:
        write_atomic(target, draft.text().encode("utf-8"), replace=False)
    except FileExistsError:
        raise AlreadyExists(f"{target} already exists; nothing was written") from None
    written = [target]
    requirements = directory / REQUIREMENTS_NAME
    if draft.requirements_text is not None:
        if requirements.exists():
            draft.problems.append(Finding("requirements", REQUIREMENTS_NAME, REQUIREMENTS_NAME, None,
                                          "already exists and was kept; the drafted requirements were not written"))
        else:
            write_atomic(requirements, draft.requirements_text.encode("utf-8"), replace=False)
            written.append(requirements)
    return written
