"""``rra push``, ``rra pull``, ``rra attach``, ``rra discover`` and ``rra provenance``.

Only click is imported at module level; the registry client (and oras) load inside each command.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ..errors import ExitStatus

if TYPE_CHECKING:
    from ..oci.registry import Progress, Reference, RegistryClient

__all__ = ["attach", "discover", "provenance", "pull", "push"]

F = TypeVar("F", bound=Callable[..., Any])


def _registry_options(func: F) -> F:
    options = [
        click.option("--plain-http/--https", "plain_http", default=None,
                     help="Talk plain HTTP instead of HTTPS.  [default: plain HTTP for localhost and loopback "
                     "addresses only]"),
        click.option("--insecure", is_flag=True, help="Do not verify the registry's TLS certificate."),
        click.option("--workers", type=click.IntRange(1, 32), default=4, show_default=True,
                     help="Blobs transferred in parallel."),
        click.option("--retries", type=click.IntRange(1, 20), default=5, show_default=True,
                     help="Tries per request on 5xx answers and dropped connections (waits double, up to 8 s)."),
        click.option("-q", "--quiet", is_flag=True, help="No progress on standard error."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


_SIZE_UNITS = {"": 1, "B": 1, "KB": 1000, "MB": 1000 ** 2, "GB": 1000 ** 3, "TB": 1000 ** 4,
               "KIB": 1024, "MIB": 1024 ** 2, "GIB": 1024 ** 3, "TIB": 1024 ** 4}


def _byte_size(ctx: click.Context, param: click.Parameter, value: str) -> int:
    """A number of bytes: ``1000``, ``500MB`` (powers of 1000), ``2GiB`` (powers of 1024)."""
    text = value.strip()
    digits = text.rstrip("BbIiKkMmGgTt ")
    unit = text[len(digits):].strip().upper()
    if not digits.isascii() or not digits.isdigit() or len(digits) > 20 or unit not in _SIZE_UNITS:
        raise click.BadParameter(f"{value!r} is not a size; write e.g. 1000, 500MB or 2GiB", ctx, param)
    return int(digits) * _SIZE_UNITS[unit]


class _ProgressView:
    """Renders transfer progress on standard error: one updating line on a terminal, a line per
    finished blob otherwise. Called from worker threads, hence the lock."""

    def __init__(self, verb: str, quiet: bool) -> None:
        self.verb = verb
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self._lock = threading.Lock()
        self._done: dict[str, int] = {}
        self._sizes: dict[str, int] = {}
        self._finished = 0
        self._last = 0.0

    def __call__(self, event: Progress) -> None:
        with self._lock:
            if event.event == "retry":
                self._line(f"retry {event.done}/{event.total}: {event.detail}")
            elif event.event in ("start", "bytes"):
                self._done[event.digest] = event.done
                self._sizes[event.digest] = event.total
                now = time.monotonic()
                if self.tty and not self.quiet and now - self._last > 0.2:
                    self._last = now
                    done, total = sum(self._done.values()), sum(self._sizes.values())
                    click.echo(f"\r{self.verb}: {_size(done)} of {_size(total)}, {self._finished} blob(s) done",
                               err=True, nl=False)
            elif event.event in ("done", "skip"):
                self._done[event.digest] = event.total
                self._sizes[event.digest] = event.total
                self._finished += 1
                what = "exists " if event.event == "skip" else ""
                self._line(f"{what}{event.digest[:19]}  {_size(event.total)}", always=False)

    def _line(self, text: str, always: bool = True) -> None:
        if self.quiet or (not always and self.tty):
            return
        click.echo(("\r\033[K" if self.tty else "") + text, err=True)

    def finish(self) -> None:
        if self.tty and not self.quiet:
            click.echo("\r\033[K", err=True, nl=False)


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def _client(ref: Reference, view: _ProgressView, plain_http: bool | None, insecure: bool, workers: int,
            retries: int) -> RegistryClient:
    from ..oci.registry import RegistryClient, RetryPolicy

    return RegistryClient(ref.registry, plain_http=plain_http, verify_tls=not insecure,
                          retry=RetryPolicy(attempts=retries), progress=view, workers=workers)


@click.command()
@click.argument("source", type=click.Path(exists=True))
@click.argument("ref")
@click.option("--ref-name", default=None, metavar="NAME",
              help="Manifest of the layout to push, by its ref name.  [default: the only one, or the one named "
              "like REF's tag]")
@_registry_options
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def push(source: str, ref: str, ref_name: str | None, plain_http: bool | None, insecure: bool, workers: int,
         retries: int, quiet: bool, fmt: str) -> None:
    """Push an OCI image layout, or an artifact directory (packed first), to REF (HOST/REPO:TAG).

    Blobs the registry already has are skipped; the others are streamed, several at a time, and
    retried on transient failures. Prints the pushed manifest's digest.
    """
    from pathlib import Path

    from ..oci.errors import ArtifactInvalid
    from ..oci.push import push as do_push
    from ..oci.registry import Reference
    from .pack_cmd import render_findings

    target = Reference.parse(ref)
    view = _ProgressView("push", quiet)
    try:
        with _client(target, view, plain_http, insecure, workers, retries) as client:
            result = do_push(Path(source), target, client, ref_name=ref_name)
    except ArtifactInvalid as exc:
        # Caught here, not left to the mapper: the findings are the answer, as for rra pack.
        view.finish()
        click.echo(render_findings(exc.result, fmt), nl=False)
        click.echo(f"error: not pushed: {exc}; fix them, or pack with 'rra pack --force' and push the layout",
                   err=True)
        sys.exit(ExitStatus.FINDINGS)
    view.finish()
    if fmt == "json":
        import json

        click.echo(json.dumps({"reference": str(result.reference), "digest": result.digest,
                               "size": result.size, "mediaType": result.media_type,
                               "uploaded": result.uploaded, "skipped": result.skipped,
                               "bytes_uploaded": result.bytes_uploaded,
                               "referrers_tag": result.referrers_tag}, indent=2))
    else:
        click.echo(f"pushed {result.reference} {result.digest}")
        if not quiet:
            click.echo(f"{len(result.uploaded)} blob(s) uploaded ({_size(result.bytes_uploaded)}), "
                       f"{len(result.skipped)} already there", err=True)


@click.command()
@click.argument("ref")
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False),
              help="New directory to unpack into (must not exist or be empty).")
@click.option("--only", default=None, metavar="ROLES",
              help="Comma-separated layer roles to fetch and unpack, e.g. manifest,code.")
@click.option("--layout", "as_layout", is_flag=True,
              help="Write the verified OCI image layout to OUTPUT instead of unpacking it.")
@click.option("--max-unpacked-bytes", callback=_byte_size, default="64GiB", show_default=True, metavar="SIZE",
              help="Refuse an artifact whose layers unpack to more (checked before they are fetched); "
              "e.g. 500MB, 2GiB, 0 for no limit.")
@click.option("--max-entries", type=click.IntRange(1), default=1_000_000, show_default=True,
              help="Refuse an artifact with more files, directories and links.")
@click.option("--max-ratio", type=click.IntRange(0), default=1000, show_default=True,
              help="Refuse a compressed layer that unpacks to more than this many times its size plus 1 MiB "
              "(checked before it is fetched; a decompression bomb); 0 for no limit.")
@_registry_options
def pull(ref: str, output: str, only: str | None, as_layout: bool, max_unpacked_bytes: int, max_entries: int,
         max_ratio: int, plain_http: bool | None, insecure: bool, workers: int, retries: int, quiet: bool) -> None:
    """Pull REF and unpack it into a new directory; every blob is checked against its digest.

    REF is a registry reference (HOST/REPO:TAG or @sha256:...) or a local image layout,
    'oci-layout:DIR[:REF-NAME]'. Before unpacking, an artifact that is not an RRA, or whose
    layers declare more than --max-unpacked-bytes or the free disk space, or with a compressed
    layer that expands more than --max-ratio times, is refused. A failed pull leaves nothing at
    OUTPUT.
    """
    from pathlib import Path

    roles = None if only is None else [r.strip() for r in only.split(",") if r.strip()]

    from ..oci.unpack import UnpackLimits

    limits = UnpackLimits(max_total_bytes=max_unpacked_bytes or None, max_entries=max_entries,
                          max_ratio=max_ratio or None)
    if ref.startswith("oci-layout:"):
        # The embedded default: a layout on disk (from 'rra pack' or 'skopeo copy'), no registry.
        from ..oci.config import read_config
        from ..oci.layout import layout_opener, resolve
        from ..oci.pull import check_unpackable
        from ..oci.unpack import unpack_layers
        from ..oci.validation import parse_layout_target

        if as_layout:
            raise click.UsageError("--layout copies from a registry; the source is already a layout")
        layout, ref_name = parse_layout_target(ref)
        descriptor, manifest = resolve(Path(layout), ref_name)
        _, config = read_config(layout_opener(Path(layout)), manifest)
        check_unpackable(manifest, config, roles, limits, Path(output).absolute().parent, where=ref)
        unpack_layers(Path(layout), manifest, Path(output), only_roles=roles, limits=limits, config=config)
        click.echo(f"unpacked {ref} {descriptor.digest} into {output}")
        return
    from ..oci.pull import fetch_layout
    from ..oci.pull import pull as do_pull
    from ..oci.registry import Reference

    source = Reference.parse(ref)
    view = _ProgressView("pull", quiet)
    with _client(source, view, plain_http, insecure, workers, retries) as client:
        if as_layout:
            result = fetch_layout(source, Path(output), client, roles=roles)
        else:
            result = do_pull(source, Path(output), client, roles=roles, limits=limits)
    view.finish()
    click.echo(f"pulled {source} {result.digest} into {output}")


@click.command()
@click.argument("ref")
@click.option("--sbom", "sbom", type=click.Path(exists=True, dir_okay=False), default=None,
              help="CycloneDX JSON SBOM (artifactType application/vnd.cyclonedx+json).")
@click.option("--provenance", "prov", type=click.Path(exists=True, dir_okay=False), default=None,
              help="in-toto statement, e.g. from 'rra provenance' (application/vnd.in-toto+json).")
@click.option("--report", "report", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Validation report, 'rra validate -f json' output.")
@click.option("--annotation", "annotations", multiple=True, metavar="KEY=VALUE",
              help="Annotation of the referrer manifest (repeatable).")
@_registry_options
def attach(ref: str, sbom: str | None, prov: str | None, report: str | None, annotations: tuple[str, ...],
           plain_http: bool | None, insecure: bool, workers: int, retries: int, quiet: bool) -> None:
    """Attach an SBOM, a provenance statement or a validation report to REF as a referrer.

    Registries without the Referrers API get the referrers tag (sha256-<hex>) updated instead.
    """
    from pathlib import Path

    chosen = [(k, v) for k, v in (("sbom", sbom), ("provenance", prov), ("report", report)) if v]
    if len(chosen) != 1:
        raise click.UsageError("give exactly one of --sbom, --provenance, --report")
    pairs: dict[str, str] = {}
    for item in annotations:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.UsageError(f"--annotation needs KEY=VALUE; got {item!r}")
        pairs[key] = value
    kind, path = chosen[0]

    from ..oci.referrers import attach as do_attach
    from ..oci.registry import Reference

    subject = Reference.parse(ref)
    view = _ProgressView("attach", quiet)
    with _client(subject, view, plain_http, insecure, workers, retries) as client:
        referrer = do_attach(client, subject, Path(path), kind, annotations=pairs or None)
    click.echo(f"attached {kind} {referrer.digest} ({referrer.artifact_type}) to {subject}")


@click.command()
@click.argument("ref")
@click.option("--artifact-type", default=None, metavar="TYPE", help="Only referrers of this artifactType.")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@_registry_options
def discover(ref: str, artifact_type: str | None, fmt: str, plain_http: bool | None, insecure: bool, workers: int,
             retries: int, quiet: bool) -> None:
    """List the referrers of REF (SBOMs, provenance, reports): Referrers API, else the referrers tag."""
    from ..oci.referrers import discover as do_discover
    from ..oci.registry import Reference

    subject = Reference.parse(ref)
    view = _ProgressView("discover", quiet)
    with _client(subject, view, plain_http, insecure, workers, retries) as client:
        digest, found, source = do_discover(client, subject, artifact_type)
    if fmt == "json":
        import json

        click.echo(json.dumps({"subject": str(subject.with_digest(digest)), "source": source,
                               "referrers": [r.as_dict() for r in found]}, indent=2))
        return
    click.echo(f"{subject.with_digest(digest)}: {len(found)} referrer(s) (from the "
               f"{'Referrers API' if source == 'api' else 'referrers tag'})")
    if found:
        width = max(len(r.artifact_type or "-") for r in found)
        for r in found:
            title = r.annotations.get("org.opencontainers.image.title", "")
            click.echo(f"  {(r.artifact_type or '-').ljust(width)}  {r.digest}  {r.size:>7}  {title}".rstrip())


@click.command()
@click.argument("artifact", default=".", type=click.Path(exists=True, file_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, writable=True),
              help="Statement file to write ('-' for standard output).")
@click.option("--layout", "layout", type=click.Path(exists=True, file_okay=False), default=None,
              help="Subject: the manifest of this packed layout (see --ref-name).")
@click.option("--ref-name", default=None, metavar="NAME", help="Manifest of --layout, by ref name.")
@click.option("--digest", "digest", default=None, metavar="sha256:HEX",
              help="Subject: this manifest digest (e.g. printed by 'rra push').")
@click.option("--files", "files", is_flag=True, help="Subject: every file of the artifact, by SHA-256.")
@click.option("--name", "name", default=None, help="Subject name.  [default: the artifact id]")
def provenance(artifact: str, output: str, layout: str | None, ref_name: str | None, digest: str | None,
               files: bool, name: str | None) -> None:
    """Write an in-toto statement (SLSA Provenance v1) of the artifact's runs, from its run records.

    The subject is the packed artifact's manifest digest: from --layout, from --digest, or (by
    default) by packing the artifact into a temporary layout, which gives the digest 'rra push'
    publishes. Deterministic: the same artifact gives the same bytes.
    """
    import re
    from pathlib import Path

    if sum(bool(x) for x in (layout, digest, files)) > 1:
        raise click.UsageError("give at most one of --layout, --digest, --files")
    if digest is not None and not re.match(r"^sha256:[0-9a-f]{64}$", digest):
        raise click.UsageError(f"--digest must be sha256:<64 hex>; got {digest!r}")

    from ..oci.provenance import Subject, build_statement, statement_bytes, subjects_from_files
    from ..run.plan import load_artifact

    root = Path(artifact)
    artifact_id = load_artifact(root).manifest.id
    label = name or artifact_id
    if files:
        real = root.resolve()
        subjects = subjects_from_files(real, [p for p in sorted(real.rglob("*"))
                                              if p.is_file() and not p.is_symlink()])
    elif digest is not None:
        subjects = [Subject.manifest(label, digest)]
    elif layout is not None:
        subjects = [Subject.manifest(label, _layout_digest(Path(layout), ref_name))]
    else:
        subjects = [Subject.manifest(label, _packed_digest(root))]
    data = statement_bytes(build_statement(root, subjects))
    if output == "-":
        click.echo(data.decode("utf-8"), nl=False)
    else:
        Path(output).write_bytes(data)
        click.echo(f"wrote {output}: provenance of {label} ({subjects[0].name}"
                   f"{'' if len(subjects) == 1 else f' and {len(subjects) - 1} more'})", err=True)


def _layout_digest(layout: Any, ref_name: str | None) -> str:
    from ..oci.layout import read_index, select_manifest

    _, descriptor = select_manifest(read_index(layout), ref_name)
    return descriptor.digest


def _packed_digest(root: Any) -> str:
    import shutil
    import tempfile
    from pathlib import Path

    from ..oci.pack import pack

    import os

    # Next to the artifact when writable, as 'rra push' does: a big artifact may not fit in /tmp.
    parent = Path(root).resolve().parent
    scratch = Path(tempfile.mkdtemp(prefix=".rra-provenance-", dir=parent if os.access(parent, os.W_OK) else None))
    try:
        pack(root, scratch / "layout")
        return _layout_digest(scratch / "layout", None)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
