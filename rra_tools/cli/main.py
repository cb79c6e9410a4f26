"""Entry point of the ``rra`` command: :func:`entry` (the console script) and :func:`main`.

The click group and its commands are in :mod:`.app`, loaded when click parses the command line.
The exceptions are the commonest calls, written to ordinary standard streams: ``rra validate
[PATH]...`` with plain paths and no option, and ``rra run ARTIFACT LAUNCHER`` with no option but
``-q``. :func:`entry` runs them without importing click (11 ms of a 60 ms ``rra validate``),
with the same output, errors and exit status (tests/unit/test_cli_fast_path.py compares the
two paths). Anything else, including help, goes through click.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

TYPE_CHECKING = False  # typing costs ~2 ms at import; mypy reads this name as true
if TYPE_CHECKING:
    from typing import Any, NoReturn

    from .failure import Failure

# cli, COMMANDS and FORMATS are also read here (see __getattr__), from .app.
__all__ = ["FAST_EXIT_COMMANDS", "entry", "fast_run_args", "fast_validate_paths", "main"]


def __getattr__(name: str) -> Any:
    # The click group and its tables, for callers that knew them here (tests, scripts).
    if name in ("cli", "COMMANDS", "FORMATS"):
        from . import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None) -> Any:
    """Run the CLI through click: click maps usage errors to exit status 2,
    :class:`~.errors.RRAGroup` maps library errors to ``error:`` and their exit status."""
    from .app import cli

    return cli.main(args=argv, prog_name="rra")


#: Commands after which the ``rra`` process ends without interpreter finalization.
FAST_EXIT_COMMANDS = frozenset({"run"})

#: Targets the fast path leaves to click: standard input and packed artifacts
#: (:data:`.validate_cmd.PACKED_SCHEMES`, spelt here so as not to import it for other commands).
_NOT_FAST = ("-", "oci://", "oci-layout:")


def fast_validate_paths(argv: list[str]) -> tuple[str, ...] | None:
    """The paths of ``rra validate PATH...`` when ``argv`` is that call with no option and only
    plain paths, and click's shell completion is not asked for; else None (click runs it).

    >>> fast_validate_paths(["validate", "a", "b/rra.yaml"]) is not None
    True
    >>> fast_validate_paths(["validate", "--format", "json", "a"]) is None
    True
    """
    if not argv or argv[0] != "validate" or os.environ.get("_RRA_COMPLETE"):
        return None
    paths = tuple(argv[1:])
    # Every option, '--' and '-h' start with '-'; '-' alone is standard input.
    if any(not path or path.startswith(_NOT_FAST) for path in paths):
        return None
    return paths


def fast_run_args(argv: list[str]) -> tuple[str, str, bool] | None:
    """(artifact, launcher, quiet) when ``argv`` is ``run ARTIFACT LAUNCHER`` with no option but
    ``-q``/``--quiet``, and click's shell completion is not asked for; else None.

    >>> fast_run_args(["run", "art", "train", "-q"])
    ('art', 'train', True)
    >>> fast_run_args(["run", "train"]) is None  # one argument: a launcher here or an artifact
    True
    """
    if not argv or argv[0] != "run" or os.environ.get("_RRA_COMPLETE"):
        return None
    positional = [arg for arg in argv[1:] if arg not in ("-q", "--quiet")]
    if len(positional) != 2 or any(not arg or arg.startswith("-") for arg in positional):
        return None
    return positional[0], positional[1], len(positional) < len(argv) - 1


def _fast_command(argv: list[str]) -> Callable[[], int] | None:
    """The command :func:`entry` runs without click for ``argv``, with its options' defaults."""
    paths = fast_validate_paths(argv)
    if paths is not None:
        def validate() -> int:
            from .validate_cmd import run_validate

            return run_validate(paths or (".",), fmt="text", fail_on=None, select=None, extend_select=None,
                                ignore=None, config_file=None, color=None, output=None)

        return validate
    run = fast_run_args(argv)
    if run is not None:
        def run_launcher() -> int:
            # No cyclic garbage collection in this process: its passes over the objects the run
            # path's imports create cost 1.5 ms of every run (issue 25). What the command
            # allocates is freed by reference counting (plans, records, output chunks: no
            # cycles), and the process ends with os._exit once the runs are recorded.
            import gc

            gc.disable()
            from .run_exec import execute_runs

            artifact, launcher, quiet = run
            return execute_runs(artifact, launcher, None, False, (), quiet)

        return run_launcher
    return None


def _reported(command: Callable[[], int]) -> int:
    """``command``'s exit status, with failures reported as :class:`~.errors.RRAGroup` and
    click's ``main`` report them."""
    import errno

    from ..errors import RRAError
    from .output import echo

    # .failure is imported on a failure only: a run that succeeds does not pay for it.
    failure: Failure | None
    try:
        return command()
    except KeyboardInterrupt:
        from .failure import INTERRUPTED

        failure = INTERRUPTED
    except (RRAError, ImportError, FileNotFoundError) as exc:
        from .failure import as_failure

        failure = as_failure(exc)
        if failure is None:
            raise
    except EOFError:
        # click's main: an empty line, then "Aborted!", status 1.
        echo("", err=True)
        echo("Aborted!", err=True)
        return 1
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        # Standard output closed by its reader: click's main ends quietly with status 1.
        from click.utils import _PacifyFlushWrapper

        sys.stdout = _PacifyFlushWrapper(sys.stdout)
        sys.stderr = _PacifyFlushWrapper(sys.stderr)
        return 1
    for line in failure.lines():
        echo(line, err=True)
    return failure.exit_status


def entry() -> None:
    """The ``rra`` console script: :func:`main`, ending ``rra run`` and the fast path of ``rra
    validate PATH...`` (see the module's docstring) with ``os._exit``.

    Finalizing an interpreter that has loaded the run path takes about 18 ms, an eighth of what
    ``rra run`` costs over running the launcher directly (5 ms of a 60 ms ``rra validate``). When
    these commands return, their records are fsynced, their files closed and their threads
    joined, so there is nothing left to finalize: the standard streams are flushed and the
    process ends. Other commands (which may hold temporary directories or connections that clean
    up at exit) end normally.
    """
    command = _fast_command(sys.argv[1:])
    if command is not None:
        from .output import plain_streams

        # Only on streams click writes to as they are (an ASCII one it replaces, for one).
        if plain_streams():
            _end_now(_reported(command))
    try:
        main()
    except SystemExit as exc:
        if sys.argv[1:2] and sys.argv[1] in FAST_EXIT_COMMANDS:
            _end_now(exc.code)
        raise


def _end_now(code: object) -> NoReturn:
    """End the process with ``code`` (as ``sys.exit`` would read it) without finalization."""
    if not isinstance(code, int):
        if code is not None:
            print(code, file=sys.stderr)
        code = 0 if code is None else 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 1
    os._exit(code)
