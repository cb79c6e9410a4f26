"""``rra guide``: render REPRODUCE.md from the manifest and the run records, or check it.

The manifest part comes from :func:`rra_tools.guide_text.render_guide` (the same
function RRA215 of ``rra validate`` compares with). The run records add one section, after the
records marker: per launcher, how many runs completed and how long they took. It shows no
metric values (a record's values may have become reference observations, which the guide never
shows). ``rra validate`` ignores that section, so a new run never makes the guide "out of sync";
``rra guide --check`` compares the whole file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ExitStatus, RRAError
from ..io.artifact import Artifact, load_artifact
from ..io.atomic import write_atomic
from ..io.read.run_records import is_successful, read_run_record
from ..guide_text import guide_path, is_generated, render_guide
from .errors import BuilderLayerError

__all__ = ["GuideError", "GuideResult", "check_guide", "records_section", "render_artifact_guide", "write_guide"]


class GuideError(BuilderLayerError):
    """The guide cannot be written, or its path leads out of the artifact."""

    exit_status = ExitStatus.FAILED

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


@dataclass(frozen=True)
class GuideResult:
    """Where the guide is, the text it should have, and how the file on disk differs."""

    path: Path
    text: str
    #: Unified diff (file on disk -> rendered), empty when they agree or the file is missing.
    diff: list[str]
    #: The file on disk was absent.
    missing: bool
    #: The file on disk exists and was not written by ``rra guide`` (no marker line).
    hand_written: bool = False


def records_section(artifact: Artifact) -> str:
    """Markdown about the run records: per launcher (manifest order), completed runs, their
    seeds and the range of their wall-clock durations; "" when there are none."""
    runs = artifact.runs_dir
    if not runs.is_dir():
        return ""
    seen: dict[str, list[tuple[int | None, float]]] = {}
    for path in sorted(runs.rglob("*.json")):
        record = read_run_record(artifact.root, path)
        if isinstance(record, str) or not is_successful(record):
            continue
        seed = record.get("seed")
        duration = record.get("duration_s")
        seen.setdefault(str(record["launcher"]), []).append(
            (seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
             float(duration) if isinstance(duration, (int, float)) and not isinstance(duration, bool) else -1.0))
    if not seen:
        return ""
    order = [str(launcher.get("id")) for launcher in _launchers(artifact.data)]
    lines = ["## Recorded runs", "", "| Launcher | Completed runs | Seeds | Wall-clock time per run |", "|---|---|---|---|"]
    for lid in [*order, *sorted(set(seen) - set(order))]:
        if lid not in seen:
            continue
        runs_of = seen[lid]
        seeds = sorted({s for s, _ in runs_of if s is not None})
        times = sorted(d for _, d in runs_of if d >= 0)
        span = "?" if not times else (f"{times[0]:.1f} s" if times[0] == times[-1]
                                      else f"{times[0]:.1f}-{times[-1]:.1f} s")
        lines.append(f"| `{lid}` | {len(runs_of)} | {', '.join(map(str, seeds)) or '-'} | {span} |")
    return "\n".join(lines) + "\n"


def _launchers(data: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    launchers = data.get("launchers")
    return [x for x in launchers if isinstance(x, Mapping)] if isinstance(launchers, list) else []


def render_artifact_guide(artifact: Artifact, *, records: bool = True) -> str:
    """The guide of ``artifact``: the manifest part and, with ``records``, the records section."""
    return render_guide(artifact.data, records_section(artifact) if records else "")


def _target(artifact: Artifact, output: str | Path | None) -> Path:
    if output is not None:
        return Path(output)
    rel = guide_path(artifact.data)
    try:
        return artifact.inside(rel)
    except RRAError as exc:
        raise GuideError(f"guide path {rel!r} leads out of the artifact",
                         "set guide.path to a file inside the artifact, e.g. REPRODUCE.md") from exc


def check_guide(path: str | Path, *, output: str | Path | None = None, records: bool = True) -> GuideResult:
    """Compare the guide file of the artifact at ``path`` with what ``rra guide`` would write."""
    artifact = load_artifact(path)
    target = _target(artifact, output)
    text = render_artifact_guide(artifact, records=records)
    try:
        current = target.read_text(encoding="utf-8")
        missing = False
    except FileNotFoundError:
        current, missing = "", True
    except (OSError, UnicodeDecodeError) as exc:
        raise GuideError(f"cannot read the guide {str(target)!r}: {exc}") from None
    diff: list[str] = []
    if current != text and not missing:
        # Only here: an unchanged guide needs no difflib, and a missing one no diff (it would be
        # the whole text; the caller reports it as missing).
        import difflib

        diff = list(difflib.unified_diff(current.splitlines(), text.splitlines(), f"{target.name} (on disk)",
                                         f"{target.name} (rendered)", lineterm=""))
    return GuideResult(target, text, diff, missing, hand_written=not missing and not is_generated(current))


def write_guide(path: str | Path, *, output: str | Path | None = None, records: bool = True,
                force: bool = False) -> GuideResult:
    """Write the guide of the artifact at ``path`` (atomically; untouched when already equal).

    A guide written by hand (no marker line) is replaced only with ``force``: it may hold text
    nobody else has.
    """
    result = check_guide(path, output=output, records=records)
    if result.hand_written and not force:
        raise GuideError(f"{result.path} was not written by 'rra guide'; it is left as it is",
                         "pass --force to replace it, or -o FILE to write the guide elsewhere")
    if result.diff or result.missing:
        try:
            write_atomic(result.path, result.text.encode("utf-8"))
        except OSError as exc:
            raise GuideError(f"cannot write the guide {str(result.path)!r}: {exc.strerror or exc}") from None
    return result
