"""The one way rra runs git: never with a command that a repository's configuration names.

A repository handed to ``rra init`` or ``rra build`` (or an artifact handed to a review) is
hostile input, and its ``.git/config`` can name programs that plain git runs on its own:
``core.fsmonitor`` runs on nearly every command that looks at the work tree, a
``filter.<driver>.clean`` on ``git status``/``git add``, a ``smudge`` on a checkout. Every git
command of rra goes through :func:`run_git`, which

- drops the caller's ``GIT_*`` variables and reads neither the system configuration
  (``GIT_CONFIG_NOSYSTEM``) nor the user's (``GIT_CONFIG_GLOBAL`` is the empty ``/dev/null``);
  so nothing outside the repository adds a driver, a hook or a helper either;
- pins on the command line (which outranks every configuration file) the keys that run programs
  whatever the repository says: ``core.fsmonitor=false``, ``core.hooksPath=/dev/null`` (no
  hooks), ``core.attributesFile=/dev/null``, ``core.pager=cat`` with ``--no-pager``,
  ``credential.helper=`` (an empty value clears the list), ``diff.external=``,
  ``commit.gpgSign``/``tag.gpgSign=false``, ``protocol.ext.allow=never`` (``ext::`` URLs run a
  command), no automatic ``gc``/maintenance; and the editor, askpass and ssh programs through the
  variables that outrank their keys (``GIT_EDITOR``, ``GIT_ASKPASS``, ``GIT_SSH_COMMAND``...);
- reads the repository's own configuration first (``git config --list``, which runs nothing)
  and empties every key it sets whose value is a program: ``filter.<driver>.clean``, ``smudge``,
  ``process`` (and ``required=false``), ``diff.<driver>.textconv``/``command``,
  ``merge.<driver>.driver``, ``credential.<url>.helper``, ``gpg.*program``,
  ``core.alternateRefsCommand``... The driver names cannot be known in advance, so they are
  taken from the listing (included files too: ``--list`` follows ``include``/``includeIf``). A
  name that the command line cannot carry (an ``=`` in it) is refused, not run.

What remains, and why it cannot fire in the commands rra runs:

- ``uploadpack.packObjectsHook`` and ``trace2.*`` are honoured only from the system, global or
  command-line configuration, which are ours;
- ``alias.*`` cannot replace a built-in command, and rra runs only built-ins;
- ``remote.<name>.vcs``/``uploadpack``/``receivepack``, ``core.sshCommand``, ``core.gitProxy``
  and ``submodule.<name>.update=!cmd`` act only when fetching, pushing or updating submodules,
  which rra never does in a repository it was given (a clone is *from* a path or URL rra names,
  and never recurses into submodules);
- ``difftool.*``/``mergetool.*``/``sequence.editor``/``pager.<cmd>``: commands rra never runs,
  or paging, which ``--no-pager`` turns off;
- ``core.worktree`` changes which files git lists, not what runs; the builder reads file
  contents itself, by path under the directory it was given.

git's own refusal of a repository owned by another user (``safe.directory``) is kept.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from .errors import InputError

__all__ = ["FIXED_OVERRIDES", "GitConfigRefused", "run_git", "safe_environment"]

#: Keys pinned on every command, whatever the repository sets.
FIXED_OVERRIDES: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"), ("core.hooksPath", os.devnull), ("core.attributesFile", os.devnull),
    ("core.pager", "cat"), ("core.editor", "true"), ("core.askPass", ""), ("core.sshCommand", "false"),
    ("core.gitProxy", ""), ("core.alternateRefsCommand", ""), ("credential.helper", ""), ("diff.external", ""),
    ("commit.gpgSign", "false"), ("tag.gpgSign", "false"), ("protocol.ext.allow", "never"),
    ("gc.auto", "0"), ("maintenance.auto", "false"),
)

#: The last part of a key (lower case, as ``git config --list`` prints it) whose value git runs
#: as a program; any such key the repository sets is emptied on the command line.
_PROGRAM_KEYS = frozenset({"clean", "smudge", "process", "textconv", "command", "driver", "helper", "program",
                           "defaultkeycommand", "fsmonitor", "sshcommand", "askpass", "editor", "pager",
                           "gitproxy", "alternaterefscommand", "external", "cmd", "uploadpack", "receivepack"})

#: Variables that outrank their configuration keys, set to programs that do nothing.
_SAFE_VARIABLES = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_ATTR_NOSYSTEM": "1",
                   "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "GIT_EDITOR": "true",
                   "GIT_SEQUENCE_EDITOR": "true", "GIT_ASKPASS": "true", "SSH_ASKPASS": "true",
                   "GIT_SSH_COMMAND": "false", "LC_ALL": "C"}


class GitConfigRefused(InputError):
    """The repository's git configuration sets a program under a name rra cannot override."""


def safe_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without its ``GIT_*`` variables, with the safe ones set, then
    ``extra`` (the caller's own ``GIT_DIR``, ``GIT_INDEX_FILE``...: rra's choices, not the repo's)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(_SAFE_VARIABLES)
    env.update(extra or {})
    return env


def _overrides(git: str, cwd: Path, env: Mapping[str, str], timeout: float | None) -> list[str]:
    """``-c key=value`` arguments: the fixed ones, and an empty value for every program key the
    repository's configuration (as git would read it here) sets."""
    pairs = list(FIXED_OVERRIDES)
    pinned = {key.lower() for key, _ in FIXED_OVERRIDES}
    listed = subprocess.run([git, "--no-pager", "config", "-z", "--list"], cwd=cwd, env=dict(env),
                            stdin=subprocess.DEVNULL, capture_output=True, check=False, timeout=timeout)
    seen: set[str] = set()
    for item in listed.stdout.split(b"\0") if listed.returncode == 0 else ():
        key = item.split(b"\n", 1)[0].decode("utf-8", "surrogateescape")
        if "." not in key or key in seen or key.lower() in pinned:
            continue
        seen.add(key)
        last = key.rsplit(".", 1)[1].lower()
        if last in _PROGRAM_KEYS:
            if "=" in key or "\n" in key:
                raise GitConfigRefused(f"the git configuration of {cwd} sets the program key {key!r}, which rra "
                                       "cannot override on git's command line; git was not run",
                                       hint="remove that key from the repository's .git/config")
            pairs.append((key, ""))
            if key.startswith("filter.") and last in ("clean", "smudge", "process"):
                pairs.append((key.rsplit(".", 1)[0] + ".required", "false"))
    return [arg for key, value in pairs for arg in ("-c", f"{key}={value}")]


def run_git(args: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None = None, stdin: bytes | None = None,
            timeout: float | None = 600.0, git: str = "git") -> subprocess.CompletedProcess[bytes]:
    """Run ``git ARGS`` in ``cwd`` under the safe environment and overrides (module docstring);
    the completed process, whatever its exit status.

    Raises FileNotFoundError when git is missing, subprocess.TimeoutExpired past ``timeout``
    seconds (a FIFO named by an ``include.path`` would otherwise block forever), and
    :class:`GitConfigRefused` when the configuration cannot be neutralised.
    """
    environment = safe_environment(env)
    command = [git, "--no-pager", *_overrides(git, cwd, environment, timeout), *args]
    return subprocess.run(command, cwd=cwd, env=environment, input=stdin,
                          stdin=None if stdin is not None else subprocess.DEVNULL, capture_output=True,
                          check=False, timeout=timeout)
