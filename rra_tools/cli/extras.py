"""Optional extras: which one a missing module belongs to, and the one message that says so.

Commands import their heavy dependencies lazily (so ``rra --help`` stays fast); when one of them
is not installed the import fails deep inside a command. The CLI's error mapper
(:func:`rra_tools.cli.errors.as_failure`) catches that failure once for every command and prints
:func:`missing_extra_message` after ``error:`` instead of a traceback.
"""

from __future__ import annotations

import types

__all__ = ["EXTRA_OF_MODULE", "extra_for", "missing_extra_message"]

#: Top-level module -> the extra of ``pyproject.toml`` that installs it.
EXTRA_OF_MODULE = {
    "oras": "oci",
    # requests comes only with oras (and docker); the registry client imports it directly.
    "requests": "oci",
    "cyclonedx": "env",
    "uv": "env",
    "docker": "container",
    # rra bench report's bootstrap imports numpy before matplotlib draws anything.
    "numpy": "report",
    "matplotlib": "report",
    "rocrate": "export",
    "pdfminer": "paper",
    "inspect_ai": "inspect",
}


def _module_of(exc: ImportError) -> str | None:
    """The top-level module whose import failed: the one the import machinery names, else (an
    ImportError raised by a broken install) the innermost frame that belongs to an extra."""
    if exc.name:
        return exc.name.partition(".")[0]
    found: str | None = None
    tb: types.TracebackType | None = exc.__traceback__
    while tb is not None:
        module = str(tb.tb_frame.f_globals.get("__name__", "")).partition(".")[0]
        if module in EXTRA_OF_MODULE:
            found = module
        tb = tb.tb_next
    return found


def extra_for(exc: ImportError) -> tuple[str, str] | None:
    """(module, extra) when ``exc`` comes from a module of an optional extra, else None.

    >>> extra_for(ModuleNotFoundError("No module named 'oras.auth'", name="oras.auth"))
    ('oras', 'oci')
    >>> extra_for(ModuleNotFoundError("No module named 'yaml'", name="yaml")) is None
    True
    """
    module = _module_of(exc)
    if module is None or module not in EXTRA_OF_MODULE:
        return None
    return module, EXTRA_OF_MODULE[module]


def missing_extra_message(module: str, extra: str) -> str:
    """The message for a command whose optional dependency ``module`` cannot be imported.

    >>> print(missing_extra_message("cyclonedx", "env"))
    this command needs the optional extra 'env' ('cyclonedx' cannot be imported); install it with: pip install 'rra-tools[env]'
    """
    return (f"this command needs the optional extra {extra!r} ({module!r} cannot be imported); "
            f"install it with: pip install 'rra-tools[{extra}]'")
