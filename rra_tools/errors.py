"""The one error root of rra-tools and the exit statuses it maps to.

Every error the library raises on purpose derives from :class:`RRAError`, which carries the exit
status the ``rra`` command ends with when the error reaches it. A library user catches
``RRAError`` to catch everything rra-tools raises for a bad input or a failed operation; any
other exception is a bug. This module is the bottom layer: it imports nothing of rra-tools.

Below the root, each layer of the package (the layers contract in ``pyproject.toml``) has one
base in its ``errors`` module, named ``<Layer>LayerError`` so that it takes no name a caller
already catches for something narrower (``RunError``, ``OCIError``, ``BenchError``); catching it
catches everything that layer raises. The bases set no exit status: every error keeps the one
its own class (or the root) gives it. ``answers``, a layer of one module and one error, has
``AnswerError`` as its base. The tree, each class with its module under ``rra_tools`` and, where
it has two parents, the other one (``tests/unit/test_errors.py`` checks that this picture is
the real tree, class for class)::

    RRAError (errors)
    ├── IOLayerError (io.errors)
    │   ├── ArtifactError (io.artifact)
    │   ├── DiffProblem (io.unidiff)
    │   ├── InputError (io.errors)
    │   │   └── GitConfigRefused (io.safegit)
    │   ├── JournalError (io.journal)
    │   ├── LoadError (io.errors)
    │   ├── SchemaNotFound (io.schemas)
    │   ├── UnknownSchema (io.schemas)
    │   ├── YamlBoundsError (io.read.bounded_yaml)
    │   ├── _GiveUp (io.read.blockyaml)
    │   └── _Refused (io.links)
    ├── AnswerError (answers)
    ├── ValidateLayerError (validate.errors)
    │   └── ConfigError (validate.config)
    ├── EnvLayerError (env.errors)
    │   ├── CreateError (env.create)
    │   ├── LiveEnvError (env.live)
    │   ├── LockError (env.locks)
    │   ├── OwnPackageError (env.own_package; also ArtifactError)
    │   └── ResolveError (env.resolve)
    │       └── UvNotFound (env.resolve)
    ├── RunLayerError (run.errors)
    │   ├── ExtractError (run.extract)
    │   └── RunError (run.errors)
    │       ├── EngineUnavailable (run.errors)
    │       ├── EngineUnsupported (run.errors)
    │       ├── GpuUnavailable (run.errors)
    │       ├── ImageUnavailable (run.errors)
    │       ├── OutputBusy (run.concurrency)
    │       └── PlanError (run.errors)
    ├── OCILayerError (oci.errors)
    │   ├── OCIError (oci.errors)
    │   │   ├── BlobMissing (oci.errors)
    │   │   ├── DigestMismatch (oci.errors)
    │   │   │   └── UncompressedMismatch (oci.errors)
    │   │   ├── DocumentTooLarge (oci.errors)
    │   │   ├── LayerRoleError (oci.errors)
    │   │   ├── LayoutError (oci.errors)
    │   │   ├── MediaTypeError (oci.errors)
    │   │   ├── SizeMismatch (oci.errors)
    │   │   └── UnsafeLayer (oci.errors)
    │   ├── PackError (oci.errors)
    │   │   └── ArtifactInvalid (oci.errors)
    │   ├── ProvenanceError (oci.provenance)
    │   ├── RegistryError (oci.registry)
    │   │   ├── AuthenticationError (oci.registry)
    │   │   ├── Cancelled (oci.registry)
    │   │   ├── IntegrityError (oci.registry)
    │   │   │   ├── MalformedError (oci.registry)
    │   │   │   └── SizeMismatchError (oci.registry)
    │   │   ├── InvalidReference (oci.registry)
    │   │   ├── NotFoundError (oci.registry)
    │   │   ├── StreamBroken (oci.registry)
    │   │   ├── TooLargeError (oci.registry)
    │   │   └── _Transient (oci.registry)
    │   └── UnpackError (oci.errors)
    ├── AgentsLayerError (agents.errors)
    │   ├── AdapterError (agents.adapters.base)
    │   ├── ProxyError (agents.proxy.errors)
    │   └── SandboxError (agents.sandbox.errors)
    ├── BuilderLayerError (builder.errors)
    │   ├── AgentFailed (builder.agent)
    │   ├── AlreadyExists (builder.init)
    │   ├── AnswerInvalid (builder.agent)
    │   ├── BuildError (builder.build.errors)
    │   │   └── BuildInputError (builder.build.errors)
    │   ├── ChangeError (builder.changes)
    │   ├── DecisionNeeded (builder.agent)
    │   ├── DiscrepancyError (builder.discrepancy)
    │   ├── EditError (builder.manifest_edit)
    │   ├── ExportError (builder.export)
    │   ├── GitError (builder.detect.repo)
    │   ├── GitError (builder.patches)
    │   ├── GuideError (builder.guide)
    │   ├── InvalidValue (builder.init)
    │   ├── ObservationError (builder.reference)
    │   ├── PaperFileError (builder.detect.paper_file)
    │   ├── ReviewError (builder.review.artifact)
    │   │   └── ReviewInterrupted (builder.review.artifact)
    │   └── SeriesMismatch (builder.changes)
    ├── ConformanceLayerError (conformance.errors)
    │   └── CaseError (conformance.cases)
    ├── BenchLayerError (bench.errors)
    │   ├── BenchError (bench.errors)
    │   └── _Fail (bench.audit.auditor)
    └── InteropLayerError (interop.errors)
        ├── CoreBenchError (interop.corebench)
        └── InspectMissing (interop.inspect)
"""

from __future__ import annotations

from enum import IntEnum

TYPE_CHECKING = False  # typing costs ~2 ms at import; mypy reads this name as true
if TYPE_CHECKING:
    from typing import ClassVar

__all__ = ["ExitStatus", "RRAError"]


class ExitStatus(IntEnum):
    """Exit statuses of the ``rra`` command, the same for every command.

    >>> int(ExitStatus.FINDINGS), int(ExitStatus.USAGE)
    (1, 2)
    """

    #: Done; nothing at or above the failing severity was found.
    OK = 0
    #: The operation failed (a run, a registry transfer, an integrity check).
    FAILED = 1
    #: Findings at or above ``--fail-on`` (validation), mismatches (``env check``): the same
    #: status as a failed operation, named for what the command checks.
    FINDINGS = 1
    #: A usage error, or an input that cannot be read or used at all.
    USAGE = 2
    #: Stopped, not failed: the command needs a decision nobody has made yet (``rra build``
    #: without an agent) and says what to do next; run it again once that is done.
    STOPPED = 3
    #: Interrupted by the user (Ctrl-C, SIGINT) before the command finished: 128 + SIGINT, as a
    #: shell reports a program that SIGINT ended. The command removed what it had half-made.
    INTERRUPTED = 130


class RRAError(Exception):
    """Root of every error rra-tools raises on purpose.

    ``exit_status`` is the status the CLI ends with (class attribute; subclasses set their
    own); ``hint``, when set, says what to do about it and is printed after the message.

    >>> class Broken(RRAError):
    ...     exit_status = ExitStatus.FAILED
    >>> error = Broken("the thing broke")
    >>> error.describe(), int(error.exit_status), error.hint
    ('the thing broke', 1, None)
    """

    exit_status: ClassVar[ExitStatus] = ExitStatus.USAGE
    hint: str | None = None

    def describe(self) -> str:
        """The message the CLI prints after ``error:`` (the exception's text unless a subclass
        adds, e.g., a rule code)."""
        return str(self)
