"""``rra pack``: validate, pack into an OCI image layout, print the digest and the layer table.

Only click is imported at module level so that ``rra --help`` stays fast.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import ExitStatus

if TYPE_CHECKING:
    from ..oci.pack import PackResult
    from ..validate.result import ValidationResult

__all__ = ["pack_command", "render_findings", "render_pack"]

#: Inputs smaller than this pack in a blink; a progress bar would only flicker.
_PROGRESS_FROM = 64 * 1024 * 1024
#: Without a terminal, one progress line this often (seconds), for CI logs.
_LINE_EVERY_S = 10.0


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover


class _Progress:
    """A progress bar on stderr when it is a terminal, else a line every few seconds."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.bar: Any = None
        self.shown = 0
        self.last_line = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        if total < _PROGRESS_FROM:
            return
        if self.tty:
            if self.bar is None:
                self.bar = click.progressbar(length=total, label="packing", file=sys.stderr, width=30,
                                             show_eta=True, show_percent=True)
                self.bar.__enter__()
            self.bar.update(done - self.shown)
            self.shown = done
        elif time.monotonic() - self.last_line >= _LINE_EVERY_S:
            self.last_line = time.monotonic()
            click.echo(f"packing: {_size(done)} of {_size(total)}", err=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


def render_pack(result: PackResult, fmt: str) -> str:
    """The pack summary: the manifest digest and one row per layer (text), or a JSON object."""
    if fmt == "json":
        from ..validate.diagnostics import Severity

        data = {
            "layout": str(result.layout),
            "ref_name": result.ref_name,
            "manifest": result.manifest.to_json(),
            "config": result.config.to_json(),
            "forced": result.forced,
            "validation": {severity: result.validation.count(Severity.parse(severity))
                           for severity in ("error", "warning", "info")},
            "levels_met": result.validation.levels_met or [],
            "layers": [{"role": layer.role, "dataset": layer.dataset, **layer.descriptor.to_json(),
                        "diff_id": layer.diff_id, "uncompressed_size": layer.uncompressed_size,
                        "files": layer.files, "ratio": round(layer.ratio, 4)} for layer in result.layers],
        }
        return json.dumps(data, indent=2) + "\n"
    ref = f":{result.ref_name}" if result.ref_name else ""
    lines = [f"packed into {result.layout}{ref}",
             f"manifest {result.manifest.digest} ({result.manifest.size} bytes)"]
    if result.forced:
        lines.append("forced: the artifact has validation errors (annotation dev.rra.validation=forced)")
    rows = [("role", "media type", "size", "uncompressed", "ratio", "files")]
    for layer in result.layers:
        role = layer.role if layer.dataset is None else f"data:{layer.dataset}"
        rows.append((role, layer.descriptor.mediaType, _size(layer.descriptor.size),
                     _size(layer.uncompressed_size), f"{100 * layer.ratio:.0f}%", str(layer.files)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1]),
                 *(cell.rjust(width) for cell, width in zip(row[2:], widths[2:]))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def render_findings(result: ValidationResult, fmt: str) -> str:
    """The validation findings of a refused (or forced) pack, in ``fmt``."""
    from ..validate.reporters import render
    from ..validate.result import ValidationReport

    from .terminal import color_wanted

    return render(ValidationReport([result]), fmt, color=fmt == "text" and color_wanted(None, sys.stdout))


@click.command("pack")
@click.argument("artifact", type=click.Path(file_okay=False))
@click.option("-o", "--output", "output", required=True, type=click.Path(),
              help="OCI image layout directory to write. A new directory is created; an existing layout "
                   "gets the artifact added.")
@click.option("--ref-name", default=None, metavar="NAME",
              help="Name of the artifact in index.json (org.opencontainers.image.ref.name), e.g. 'v1'.")
@click.option("--force", is_flag=True,
              help="Pack even when validation finds errors; the manifest records it (dev.rra.validation=forced).")
@click.option("--compression", type=click.Choice(["zstd", "gzip"]), default=None,
              help="Compression of compressible layers.  [default: zstd when installed, else gzip]")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output format.")
def pack_command(artifact: str, output: str, ref_name: str | None, force: bool, compression: str | None,
                 fmt: str) -> None:
    """Pack an artifact directory into an OCI image layout, deterministically.

    The artifact is validated first; an artifact with errors is refused (exit 1) unless
    --force. Files matched by .rraignore and version-control metadata are left out. Prints
    the manifest digest and one line per layer. Exit status: 0 packed, 1 validation errors,
    2 usage error or an artifact that cannot be packed.
    """
    from ..oci.errors import ArtifactInvalid
    from ..oci.pack import pack
    from ..validate.config import Config, find_config, load_config

    found = find_config(Path(artifact)) if Path(artifact).is_dir() else None
    config = load_config(found) if found is not None else Config()
    progress = _Progress()
    try:
        result = pack(artifact, output, ref_name=ref_name, force=force, progress=progress,
                      compression=compression, config=config)
    except ArtifactInvalid as exc:
        # Caught here, not left to the mapper, because the findings are rendered first.
        progress.close()
        click.echo(render_findings(exc.result, fmt), nl=False)
        click.echo(f"error: not packed: {exc}; fix them, or pass --force to pack anyway", err=True)
        sys.exit(ExitStatus.FINDINGS)
    finally:
        progress.close()
    if result.forced and fmt == "text":
        click.echo(render_findings(result.validation, fmt), nl=False)
    click.echo(render_pack(result, fmt), nl=False)
    sys.exit(ExitStatus.OK)
