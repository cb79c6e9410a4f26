"""``rra export ro-crate``: the artifact as an RO-Crate (RO-Crate 1.1, Process Run Crate 0.5).

RO-Crate is how workflow registries and archives exchange research objects; a Process Run Crate
adds one ``CreateAction`` per execution of a tool. The crate holds:

- every file the artifact packs (the same walk and ignore rules as ``rra pack``), listed in the
  root dataset's ``hasPart``, so the crate is attached and self-contained;
- the root dataset: the artifact's title and id, its license (an SPDX URI where the expression is
  one identifier), the paper as ``citation`` (a ``ScholarlyArticle`` whose ``@id`` is its DOI,
  arXiv or web URL), the upstream repository and commit as ``isBasedOn``, and the claims as
  ``variableMeasured``;
- each launcher as a ``SoftwareApplication`` (its command line, its parameters);
- each run record as a ``CreateAction``: ``instrument`` the launcher, ``object`` the parameter
  and seed values (``PropertyValue``), ``result`` the declared outputs the record lists (with their
  SHA-256) and the metric values it extracted (``PropertyValue``), ``startTime``/``endTime``,
  ``actionStatus``, ``error`` for a failed run, ``agent`` the person who ran it where it is known
  (``--by``, or the ``by`` directory ``rra reference add`` files a foreign record under), and
  ``subjectOf`` the record file itself;
- each claim as a ``PropertyValue`` with the value the paper reports and, where successful runs
  have values, one with the value they obtain (the claim's aggregate over the newest successful
  run of each seed, as ``rra results`` computes it).

Nothing is fetched: every entity that names a web resource (the license, the paper, the
upstream repository, the profiles) is a contextual entity written as it is, and the ``rocrate``
library is only ever given local files. The crate is written next to its destination and moved
into place, so a failed export leaves nothing behind.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ExitStatus
from ..intervals import aggregate
from ..io.artifact import Artifact, load_artifact
from ..io.digest import sha256_file
from ..io.read.run_records import is_successful, read_run_record
from ..model.manifest import Manifest
from .errors import BuilderLayerError

__all__ = ["PROCESS_RUN_CRATE", "RO_CRATE_VERSION", "ExportError", "ExportResult", "export_ro_crate"]

#: The RO-Crate specification version the crate conforms to (the Process Run Crate builds on 1.1).
RO_CRATE_VERSION = "1.1"
#: The profile the crate declares in the root dataset's ``conformsTo``.
PROCESS_RUN_CRATE = "https://w3id.org/ro/wfrun/process/0.5"
_SPDX_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+-]*$")
# The profile lists these as plain strings (its examples and its checks), not as IRI references.
_COMPLETED = "http://schema.org/CompletedActionStatus"
_FAILED = "http://schema.org/FailedActionStatus"


class ExportError(BuilderLayerError):
    """The crate cannot be written where asked; nothing was written."""

    exit_status = ExitStatus.USAGE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


@dataclass
class ExportResult:
    """What an export wrote."""

    path: Path
    #: "directory" or "zip".
    form: str
    files: int = 0
    launchers: int = 0
    runs: int = 0
    claims: int = 0
    #: Symbolic links of the artifact, left out (an RO-Crate data entity is a file or a directory).
    skipped_links: list[str] = field(default_factory=list)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "x"


def _date_published(newest_run_end: str | None, environ: Mapping[str, str]) -> str:
    """``SOURCE_DATE_EPOCH`` when set (reproducible crates), else the end of the newest run, else now."""
    epoch = environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch:
        if not epoch.isdigit():
            raise ExportError(f"SOURCE_DATE_EPOCH is {epoch!r}; expected a non-negative integer number of seconds")
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(epoch)))
    if newest_run_end:
        return newest_run_end
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _license_entity(expression: str) -> dict[str, Any]:
    if _SPDX_ID.match(expression):
        return {"@id": f"https://spdx.org/licenses/{expression}", "@type": "CreativeWork", "name": expression,
                "identifier": expression}
    # An SPDX expression of several identifiers has no single URI: a local entity names it.
    return {"@id": "#license", "@type": "CreativeWork", "name": expression, "identifier": expression}


def _paper_entities(model: Manifest) -> list[dict[str, Any]]:
    paper = model.paper
    if paper.doi:
        ident = f"https://doi.org/{paper.doi}"
    elif paper.arxiv:
        ident = f"https://arxiv.org/abs/{paper.arxiv}"
    elif paper.url:
        ident = paper.url
    else:
        ident = "#paper"
    people: list[dict[str, Any]] = []
    for n, author in enumerate(paper.authors, 1):
        person: dict[str, Any] = {"@id": f"https://orcid.org/{author.orcid}" if author.orcid else f"#author-{n}",
                                  "@type": "Person", "name": author.name}
        if author.affiliation:
            person["affiliation"] = author.affiliation
        people.append(person)
    article: dict[str, Any] = {"@id": ident, "@type": "ScholarlyArticle", "name": paper.title,
                               "author": [{"@id": p["@id"]} for p in people]}
    if paper.year is not None:
        article["datePublished"] = str(paper.year)
    if paper.venue:
        article["publisher"] = paper.venue
    if paper.doi:
        article["identifier"] = f"doi:{paper.doi}"
    elif paper.arxiv:
        article["identifier"] = f"arXiv:{paper.arxiv}"
    if paper.url and ident != paper.url:
        article["url"] = paper.url
    # Two authors with the same ORCID are one entity.
    unique = {p["@id"]: p for p in people}
    return [article, *unique.values()]


@dataclass(frozen=True)
class _Run:
    """A readable run record: where it is, what it says, and who ran it when that is known."""

    rel: str
    record: Mapping[str, Any]
    by: str | None


def _runs(artifact: Artifact, shipped: set[str], by: str | None) -> list[_Run]:
    """The run records among the shipped files, ordered by launcher, then start time."""
    runs_rel = artifact.runs_dir.relative_to(artifact.root).as_posix()
    prefix = "" if runs_rel == "." else runs_rel + "/"
    found: list[_Run] = []
    for rel in sorted(shipped):
        if not rel.startswith(prefix) or not rel.endswith(".json"):
            continue
        record = read_run_record(artifact.root, artifact.root / rel)
        if isinstance(record, str) or "started" not in record:
            continue
        parts = rel[len(prefix):].split("/")
        # rra reference add files a foreign record under reference/<by>/<launcher>/<run>/.
        who = parts[1] if len(parts) >= 5 and parts[0] == "reference" else by
        found.append(_Run(rel, record, who))
    found.sort(key=lambda r: (str(r.record.get("launcher")), str(r.record.get("started")), r.rel))
    return found


def _plain(value: object) -> str:
    # Enum fields may hold the member or (use_enum_values) its value.
    return str(getattr(value, "value", value))


def _iso_time(stamp: Any) -> str | None:
    """A record's UTC time ('2026-01-31T12:00:00.123456Z') with milliseconds and a '+00:00'
    offset, the form the Process Run Crate profile's checks expect; None when it is not one."""
    match = re.fullmatch(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z", str(stamp))
    if match is None:
        return None
    return f"{match[1]}.{(match[2] or '').ljust(3, '0')[:3]}+00:00"


#: Media types of the files research artifacts hold, by suffix; others are guessed by mimetypes.
_MEDIA_TYPES = {".py": "text/x-python", ".md": "text/markdown", ".yaml": "application/yaml",
                ".yml": "application/yaml", ".json": "application/json", ".toml": "application/toml",
                ".csv": "text/csv", ".txt": "text/plain", ".log": "text/plain", ".lock": "text/plain",
                ".cff": "application/yaml", ".patch": "text/x-diff", ".diff": "text/x-diff",
                ".ipynb": "application/x-ipynb+json", ".sh": "text/x-shellscript"}


def _media_type(rel: str) -> str | None:
    import mimetypes

    suffix = Path(rel).suffix.lower()
    return _MEDIA_TYPES.get(suffix) or mimetypes.guess_type(rel, strict=False)[0]


def _one_or_many(items: list[Any]) -> Any:
    # RO-Crate 1.1 recommends a single value rather than a singleton array.
    return items[0] if len(items) == 1 else items


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def export_ro_crate(artifact_path: str | Path, out: str | Path, *, by: str | None = None,
                    environ: Mapping[str, str] | None = None) -> ExportResult:
    """Write the artifact at ``artifact_path`` as an RO-Crate at ``out``: a directory, or a ZIP
    file when ``out`` ends in ``.zip``. ``by`` names the person who made the artifact's own runs.

    ExportError when ``out`` exists or lies inside the artifact; ArtifactError when the artifact
    cannot be loaded.
    """
    from ..env.artifact import manifest_model
    from ..oci.pack import collect_layers

    artifact = load_artifact(artifact_path)
    model = manifest_model(artifact)
    target = Path(out).absolute()
    form = "zip" if target.suffix.lower() == ".zip" else "directory"
    if target.exists() or target.is_symlink():
        raise ExportError(f"{out}: already exists", hint="remove it or choose another -o")
    if target == artifact.root or target.resolve().is_relative_to(artifact.root):
        raise ExportError(f"{out}: is inside the artifact {artifact.root}; the crate would contain itself",
                          hint="write the crate outside the artifact directory")
    if not target.parent.is_dir():
        raise ExportError(f"{out}: directory {target.parent} does not exist")

    # Imported here: the extra 'export' (the CLI names it when the import fails).
    from rocrate.model.contextentity import ContextEntity
    from rocrate.rocrate import ROCrate

    manifest_rel = artifact.manifest_path.name
    entries = [e for layer in collect_layers(artifact.root, artifact.data, manifest_rel) for e in layer.entries]
    files = sorted(e.name for e in entries if e.kind == "file")
    result = ExportResult(target, form, files=len(files), skipped_links=sorted(e.name for e in entries
                                                                                if e.kind == "symlink"))
    shipped = set(files)
    runs = _runs(artifact, shipped, by)

    crate = ROCrate(version=RO_CRATE_VERSION)
    # RO-Crate 1.1's context has no checksum term; 1.2 maps sha256 to schema.org's, as here.
    crate.metadata.extra_terms["sha256"] = "http://schema.org/sha256"

    def add(entity: dict[str, Any]) -> Any:
        ident = entity["@id"]
        existing = crate.dereference(ident)
        if existing is not None:
            return existing
        return crate.add(ContextEntity(crate, ident, properties={k: v for k, v in entity.items() if k != "@id"}))

    data_entities: dict[str, Any] = {}
    for rel in files:
        media = _media_type(rel)
        data_entities[rel] = crate.add_file(artifact.root / rel, dest_path=rel,
                                            properties={"encodingFormat": media} if media else None)
    data_entities[manifest_rel]["description"] = "The RRA manifest."
    data_entities[manifest_rel]["encodingFormat"] = "application/yaml" if manifest_rel.endswith(
        (".yaml", ".yml")) else "application/json"

    root = crate.root_dataset
    root["name"] = model.title
    root["description"] = (f"Refined Reproducible Artifact (RRA {model.rra_version}) '{model.id}': {model.title}. "
                           f"Exported by rra export ro-crate; the manifest is {manifest_rel}.")
    root["identifier"] = model.id
    newest_end = max((str(r.record.get("ended", "")) for r in runs), default="") or None
    root["datePublished"] = _date_published(newest_end, os.environ if environ is None else environ)
    root["license"] = add(_license_entity(model.code.license))
    profile = add({"@id": PROCESS_RUN_CRATE, "@type": "CreativeWork", "name": "Process Run Crate",
                   "version": "0.5"})
    root["conformsTo"] = profile
    paper, *people = _paper_entities(model)
    # The research is its authors': they are the crate's authors too.
    root["author"] = _one_or_many([add(person) for person in people])
    paper["author"] = _one_or_many(paper["author"])
    root["citation"] = add(paper)
    if model.code.upstream is not None:
        up = model.code.upstream
        root["isBasedOn"] = add({"@id": up.url, "@type": "SoftwareSourceCode", "name": up.url,
                                 "codeRepository": up.url, "version": up.commit})
    if model.paper.citation_file and model.paper.citation_file in data_entities:
        data_entities[model.paper.citation_file]["about"] = root["citation"]

    # Launchers: the tools each CreateAction used.
    tools: dict[str, Any] = {}
    for launcher in model.launchers:
        props: dict[str, Any] = {"@type": "SoftwareApplication", "name": launcher.id,
                                 "description": launcher.description or f"Launcher {launcher.id} of {model.id}.",
                                 "softwareHelp": " ".join(launcher.argv),
                                 # The launcher's code is the upstream commit (patched), else this artifact.
                                 "softwareVersion": model.code.upstream.commit if model.code.upstream
                                 else f"sha256:{artifact.digest}"}
        if model.code.upstream is not None:
            props["url"] = model.code.upstream.url
        if manifest_rel in data_entities:
            props["subjectOf"] = {"@id": data_entities[manifest_rel].id}
        tools[launcher.id] = add({"@id": f"#launcher-{_slug(launcher.id)}", **props})
    result.launchers = len(tools)

    # Claims: what the paper reports and, from the newest successful run per seed, what is obtained.
    measured: list[Any] = []
    best: dict[tuple[str, Any, Any], Mapping[str, Any]] = {}
    for run in runs:
        rec = run.record
        if not is_successful(rec):
            continue
        key = (str(rec.get("launcher")), rec.get("seed"), rec.get("repeat"))
        if key not in best or str(rec.get("ended", "")) >= str(best[key].get("ended", "")):
            best[key] = rec
    for claim in model.claims:
        unit = claim.metric.unit
        reported = {"@id": f"#claim-{_slug(claim.id)}", "@type": "PropertyValue", "name": claim.description,
                    "propertyID": claim.id, "value": claim.reported.value,
                    "description": f"{claim.metric.name} ({_plain(claim.metric.direction)} is better) as "
                                   f"reported by the paper; launcher {claim.launcher}"}
        if unit:
            reported["unitText"] = unit
        measured.append(add(reported))
        values = [float(v) for (launcher, _, _), rec in sorted(best.items(), key=lambda kv: str(kv[0]))
                  if launcher == claim.launcher and isinstance(rec.get("metrics"), Mapping)
                  and (v := _number(rec["metrics"].get(claim.id))) is not None]
        if values:
            how = _plain(claim.aggregate)
            try:
                obtained = aggregate(values, how)
            except ValueError:
                continue
            got = {"@id": f"#obtained-{_slug(claim.id)}", "@type": "PropertyValue",
                   "name": f"{claim.description} (obtained)", "propertyID": claim.id, "value": obtained,
                   "description": f"{how} over the newest successful run of each of {len(values)} "
                                  f"seed(s)/repeat(s) in this crate"}
            if unit:
                got["unitText"] = unit
            measured.append(add(got))
    result.claims = len(model.claims)
    if measured:
        root["variableMeasured"] = _one_or_many(measured)

    digests: dict[str, str] = {}

    def digest_of(rel: str) -> str:
        if rel not in digests:
            digests[rel] = sha256_file(artifact.root / rel)
        return digests[rel]

    # Run records: one CreateAction each.
    actions: list[Any] = []
    for run in runs:
        rec = run.record
        launcher_id = str(rec.get("launcher"))
        base = f"#run-{_slug(run.rel.removesuffix('/record.json').removesuffix('.json'))}"
        inputs: list[Any] = []
        params = rec.get("parameters")
        for name, value in sorted(params.items()) if isinstance(params, Mapping) else []:
            inputs.append(add({"@id": f"{base}-parameter-{_slug(str(name))}", "@type": "PropertyValue",
                               "name": str(name), "value": value}))
        if rec.get("seed") is not None:
            inputs.append(add({"@id": f"{base}-seed", "@type": "PropertyValue", "name": "seed",
                               "value": rec["seed"]}))
        results: list[Any] = []
        record_dir = run.rel.rpartition("/")[0]
        for output in rec.get("outputs") or []:
            if not isinstance(output, Mapping) or not isinstance(output.get("path"), str):
                continue
            path = output["path"]
            entity = data_entities.get(path)
            # The file in the crate is this run's output only while its digest is the recorded one.
            if entity is not None and output.get("sha256") and digest_of(path) == output["sha256"]:
                entity["sha256"] = output["sha256"]
                results.append(entity)
                continue
            results.append(add({"@id": f"{base}-output-{_slug(str(output.get('id', path)))}",
                                "@type": "CreativeWork", "name": path,
                                "description": "an output of this run that the crate does not hold (absent "
                                               "or overwritten by a later run)",
                                **({"sha256": output["sha256"]} if output.get("sha256") else {})}))
        metrics = rec.get("metrics")
        for name, value in sorted(metrics.items()) if isinstance(metrics, Mapping) else []:
            if _number(value) is None:
                continue
            results.append(add({"@id": f"{base}-metric-{_slug(str(name))}", "@type": "PropertyValue",
                                "name": str(name), "propertyID": str(name), "value": value}))
        ok = is_successful(rec)
        props = {"@type": "CreateAction",
                 "name": f"Run of launcher {launcher_id}" + (f", seed {rec['seed']}" if rec.get("seed") is not None
                                                            else ""),
                 "description": f"{rec.get('status')}, exit status {rec.get('exit_status')}, executor "
                                f"{rec.get('executor')}; argv: {' '.join(map(str, rec.get('argv') or []))}",
                 "actionStatus": _COMPLETED if ok else _FAILED}
        for term, stamp in (("startTime", rec.get("started")), ("endTime", rec.get("ended"))):
            shown = _iso_time(stamp)
            if shown is not None:
                props[term] = shown
        if not ok:
            messages = [str(m) for m in rec.get("messages") or []]
            props["error"] = "; ".join(messages) or f"the run ended {rec.get('status')}"
        if run.rel in data_entities:
            props["subjectOf"] = {"@id": data_entities[run.rel].id}
            logs = [data_entities[f"{record_dir}/{lg['path']}"] for lg in rec.get("logs") or []
                    if isinstance(lg, Mapping) and f"{record_dir}/{lg.get('path')}" in data_entities]
            if logs:
                props["subjectOf"] = [{"@id": data_entities[run.rel].id}, *[{"@id": lg.id} for lg in logs]]
        tool = tools.get(launcher_id) or add({"@id": f"#launcher-{_slug(launcher_id)}", "@type": "SoftwareApplication",
                                              "name": launcher_id,
                                              "description": "a launcher the manifest no longer declares"})
        action = crate.add_action(tool, identifier=base, object=_one_or_many(inputs) if inputs else None,
                                  result=_one_or_many(results) if results else None,
                                  properties=props)
        if run.by:
            action["agent"] = add({"@id": f"#person-{_slug(run.by)}", "@type": "Person", "name": run.by})
        actions.append(action)
    result.runs = len(actions)
    if actions:
        root["mentions"] = _one_or_many(actions)

    # Write beside the destination, then move into place: a failure leaves nothing half-written.
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        if form == "zip":
            written = tmp / "crate.zip"
            crate.write_zip(written)
            os.replace(written, target)
        else:
            written = tmp / "crate"
            crate.write(written)
            os.replace(written, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return result
