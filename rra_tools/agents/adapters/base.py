"""What every adapter is: data (the pinned package, the program in its installed tree, the
provider it calls) plus a little code (its command line, its environment, its configuration
files, where its transcript lands, how to read the usage it reports of itself).

An adapter never starts anything itself: :meth:`Adapter.launch` says what the cell runs, and
:func:`rra_tools.agents.cell.run_cell_command` runs it in the sandbox behind the metering proxy,
with the proxy's base URLs and dummy keys already set (the routing an adapter adds goes on top).
"""

from __future__ import annotations

import glob
import json
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ...errors import ExitStatus
from ...model.cell import ReportedUsage
from ..errors import AgentsLayerError

__all__ = ["MAX_READ", "Adapter", "AdapterError", "AgentCell", "Launch", "Shell", "first_existing", "json_lines", "number"]


class AdapterError(AgentsLayerError):
    """An agent cannot be used as asked: an unknown adapter, a failed install, no npm."""

    exit_status = ExitStatus.USAGE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


@dataclass(frozen=True)
class Shell:
    """A piece of a command line left to the cell's shell, for the variables only known inside
    (the proxy's base URL differs between a sandbox and ``--sandbox none``): ``$NAME`` expands,
    the rest is quoted."""

    text: str

    def render(self) -> str:
        """The piece in double quotes, with only ``$NAME`` expanding."""
        escaped = self.text.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`")
        return f'"{escaped}"'


@dataclass(frozen=True)
class AgentCell:
    """One cell as an adapter sees it."""

    #: The hand-over, given to the agent as its prompt.
    prompt: str
    #: The model the agent is told to use.
    model: str
    workspace: Path
    #: The cell's transcript directory: outside the workspace, read-write inside the sandbox,
    #: empty when the cell starts. The agent's settings go there too.
    transcript: Path
    #: Where the cell's standard output is kept (the event stream of most agents).
    stdout: Path
    #: The agent's installed tree (read-only inside).
    tree: Path


@dataclass(frozen=True)
class Launch:
    """What a cell runs for an agent: the command (``sh -c``), the variables added to the cell's,
    and the host paths shown read-only and read-write besides the workspace."""

    command: str
    env: Mapping[str, str] = field(default_factory=dict)
    readonly: tuple[Path, ...] = ()
    writable: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Adapter:
    """An agent's adapter. Subclasses override :meth:`argv`, :meth:`env`, :meth:`prepare`,
    :meth:`transcript_globs` and :meth:`reported_usage`; the data fields say what is installed."""

    #: The name a task set and ``--reproducer NAME=agent:NAME:MODEL`` use.
    name: str
    #: One line for ``rra bench agents``.
    summary: str
    #: 'npm' (installed with ``npm install --prefix``), 'pypi' (a virtual environment) or 'none'.
    installer: Literal["npm", "pypi", "none"]
    #: The registry's package name, and its pinned version.
    package: str = ""
    version: str = ""
    #: The program, relative to the installed tree.
    program: str = ""
    #: The provider whose protocol it speaks by default (the proxy routes by path anyway).
    provider: str = ""

    def argv(self, cell: AgentCell) -> list[str | Shell]:
        """The non-interactive command line, with no approval prompts (the sandbox is the guard)."""
        raise NotImplementedError

    def check_model(self, model: str) -> None:
        """AdapterError when the agent cannot be pointed at ``model`` (checked before any cell runs)."""

    def env(self, cell: AgentCell) -> dict[str, str]:
        """Variables on top of the cell's (which already route every provider to the proxy)."""
        return {}

    def prepare(self, cell: AgentCell) -> None:
        """Write the agent's settings into ``cell.transcript`` before it starts."""

    def transcript_globs(self) -> tuple[str, ...]:
        """Where its transcript lands, as globs relative to the transcript directory; ``'<stdout>'``
        names the cell's standard output."""
        return ("<stdout>",)

    def reported_usage(self, cell: AgentCell) -> ReportedUsage | None:
        """The usage the agent reported of itself, read after it ended; None when it reported none
        (it was killed, it wrote nothing readable)."""
        return None

    def launch(self, cell: AgentCell) -> Launch:
        """The cell's command: the agent's settings written, then its command line, standard input
        from /dev/null (a piped stdin is read as more prompt by some agents)."""
        self.prepare(cell)
        parts = [part.render() if isinstance(part, Shell) else shlex.quote(part) for part in self.argv(cell)]
        return Launch(command="exec " + " ".join(parts) + " </dev/null", env=self.env(cell), readonly=(cell.tree,),
                      writable=(cell.transcript,))

    def transcript(self, cell: AgentCell) -> list[Path]:
        """The transcript files that exist after the cell, in a stable order."""
        found: list[Path] = []
        for pattern in self.transcript_globs():
            if pattern == "<stdout>":
                if cell.stdout.is_file():
                    found.append(cell.stdout)
                continue
            found += sorted(Path(p) for p in glob.glob(str(cell.transcript / pattern), recursive=True)
                            if Path(p).is_file() and not Path(p).is_symlink())
        return found


#: The most of a transcript file read for its usage (a runaway agent's output is not parsed whole).
MAX_READ = 256 << 20


def json_lines(path: Path) -> Iterator[Any]:
    """Each line of ``path`` that parses as JSON (others, such as progress text, are skipped)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_READ)
    except OSError:
        return
    for line in data.splitlines():
        line = line.strip()
        if not line.startswith(b"{"):
            continue
        try:
            yield json.loads(line)
        except ValueError:
            continue


def number(document: Mapping[str, Any], *keys: str) -> int:
    """The integer at ``keys`` of nested mappings, 0 when absent or not a number."""
    value: Any = document
    for key in keys:
        value = value.get(key) if isinstance(value, Mapping) else None
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def first_existing(paths: Sequence[Path]) -> Path | None:
    """The first of ``paths`` that is a regular file."""
    return next((p for p in paths if p.is_file() and not p.is_symlink()), None)
