"""The rule catalog: every check's stable code, name, default severity and spec section.

It holds every code rra-tools reports: :data:`RULES`, the rules of ``rra validate``,
:data:`ENV_RULES`, the codes RRA700-RRA799 of ``rra env check`` (which compares a live machine
with the manifest, and so is not a rule of the static validator), :data:`REVIEW_RULES`, the codes
RRA900-RRA949 of ``rra review``'s own findings, and :data:`TASKSET_RULES`, the codes RRA950-RRA999
of ``rra bench check`` (which checks a benchmark's task set, not a manifest). No code is in two of
them.

Codes are never reused; a removed rule keeps its entry with ``status="removed"``. The long
documentation of each rule (why it matters, a failing example, the fix) lives beside the check
that reports it, in ``rules/<area>.toml``; :mod:`.rule_docs` renders the pages of
``docs/rules/`` from both.
"""

from __future__ import annotations

from dataclasses import dataclass

from .diagnostics import DOCS_BASE_URL, Severity

__all__ = ["ENV_RULES", "REVIEW_RULES", "RULES", "TASKSET_RULES", "EnvRule", "ReviewRule", "Rule", "TaskSetRule",
           "rule"]

E, W, I = Severity.ERROR, Severity.WARNING, Severity.INFO  # noqa: E741 - short, for the table below


@dataclass(frozen=True)
class Rule:
    """One check of the validator."""

    code: str
    name: str
    severity: Severity
    section: str
    summary: str
    added: str = "1.0"
    enabled: bool = True
    status: str = "stable"
    #: Cannot be ignored: it means the document was not (fully) checked, so hiding it would
    #: make an unchecked artifact look clean.
    mandatory: bool = False

    @property
    def url(self) -> str:
        """The rule's documentation page."""
        return f"{DOCS_BASE_URL}/{self.code}"


#: Codes that mean "not (fully) checked"; no configuration can switch them off.
_MANDATORY = {"RRA001", "RRA002", "RRA003", "RRA004", "RRA006", "RRA007", "RRA008", "RRA100",
              # A packed artifact that fails these was not verified: integrity and safety.
              "RRA801", "RRA802", "RRA803", "RRA804", "RRA805", "RRA806", "RRA807", "RRA808", "RRA809",
              "RRA810"}


def _r(code: str, name: str, severity: Severity, section: str, summary: str, *, enabled: bool = True,
       added: str = "1.0") -> Rule:
    return Rule(code, name, severity, section, summary, added=added, enabled=enabled,
                mandatory=code in _MANDATORY)


_MANIFEST = "spec/02-manifest.md"
_PACKAGING = "spec/05-packaging.md"
_ALL = [
    # Reading the document.
    _r("RRA001", "input-unreadable", E, "spec/01-overview.md#manifest-files",
       "The input path cannot be opened as a regular file holding a manifest."),
    _r("RRA002", "yaml-syntax", E, "spec/01-overview.md#manifest-files",
       "The manifest is not well-formed YAML 1.2 or JSON, or uses tags, complex keys or several documents."),
    _r("RRA003", "empty-manifest", E, "spec/01-overview.md#manifest-files",
       "The manifest file holds no document."),
    _r("RRA004", "not-utf8-text", E, "spec/01-overview.md#manifest-files",
       "The manifest is binary or not valid UTF-8."),
    _r("RRA005", "duplicate-key", E, "spec/01-overview.md#manifest-files",
       "A mapping has the same key twice."),
    _r("RRA006", "document-too-large", E, "spec/01-overview.md#limits",
       "The file is larger than the size cap or its aliases expand beyond the value cap."),
    _r("RRA007", "nesting-too-deep", E, "spec/01-overview.md#limits",
       "Mappings and sequences nest deeper than the nesting cap."),
    _r("RRA008", "budget-exceeded", E, "spec/01-overview.md#limits",
       "Validation stopped because the caller's time budget ran out; the verdict is incomplete."),
    # Version and schema.
    _r("RRA100", "unsupported-major-version", E, "spec/03-versioning.md#major-versions",
       "rra_version names a major version this validator does not implement."),
    _r("RRA101", "newer-minor-version", W, "spec/03-versioning.md#minor-versions",
       "rra_version names a newer minor version than this validator implements."),
    _r("RRA102", "field-newer-than-version", E, "spec/03-versioning.md#fields-and-versions",
       "A field is used that was added in a later version than the manifest declares."),
    _r("RRA103", "extension-field", I, "spec/03-versioning.md#extensions",
       "An x-* extension field is present (reported only when selected: strict profiles).",
       enabled=False),
    _r("RRA110", "missing-field", E, _MANIFEST, "A required field is missing."),
    _r("RRA111", "unknown-field", E, _MANIFEST, "A field is not defined by the standard and is not an x-* extension."),
    _r("RRA112", "wrong-type", E, _MANIFEST, "A value has the wrong type."),
    _r("RRA113", "invalid-value", E, _MANIFEST, "A value does not match its pattern or allowed values."),
    _r("RRA114", "out-of-range", E, _MANIFEST, "A number, string length or list length is out of its bounds."),
    _r("RRA115", "schema-violation", E, _MANIFEST, "The document violates another constraint of the JSON Schema."),
    # References and internal consistency.
    _r("RRA201", "unknown-reference", E, f"{_MANIFEST}#identifiers-and-references",
       "An id reference (launcher, output, claim, data, change) names nothing declared."),
    _r("RRA202", "duplicate-id", E, f"{_MANIFEST}#identifiers-and-references",
       "Two entries of the same list share an id."),
    _r("RRA203", "dependency-cycle", E, f"{_MANIFEST}#launchers", "Launchers depend on each other in a cycle."),
    _r("RRA204", "undefined-placeholder", E, f"{_MANIFEST}#launchers",
       "A {placeholder} in argv, cwd or an output path is neither 'seed' nor a declared parameter."),
    _r("RRA205", "extract-format-mismatch", W, f"{_MANIFEST}#claims",
       "A claim's extraction method does not fit the format of the output it reads."),
    _r("RRA206", "extract-method-count", E, f"{_MANIFEST}#claims",
       "A claim's extract gives no method or more than one (json_pointer, csv, regex)."),
    _r("RRA207", "code-source-missing", E, f"{_MANIFEST}#code",
       "code has neither an upstream commit nor a shipped tree, or patches without an upstream."),
    _r("RRA208", "csv-row-selector", E, f"{_MANIFEST}#claims",
       "A CSV extraction gives neither or both of row_index and where."),
    _r("RRA209", "paper-location-empty", E, f"{_MANIFEST}#claims",
       "A claim's paper_location names no table, figure, section or page."),
    _r("RRA210", "invalid-regex", E, f"{_MANIFEST}#claims",
       "A regex extraction does not compile or lacks the capturing group it names."),
    _r("RRA211", "parameter-default-invalid", E, f"{_MANIFEST}#launchers",
       "A parameter's default or choices do not match its type, or the default is not a choice."),
    _r("RRA213", "secret-stored", E, f"{_MANIFEST}#secrets",
       "A secret variable or parameter is given a value in the manifest, or is used where records store it.",
       added="1.1"),
    _r("RRA214", "unfinished-value", E, f"{_MANIFEST}#unfinished-values",
       "A string value is placeholder text (TODO, TBD or FIXME) left to be filled in "
       "(a warning in a manifest that declares 1.0).", added="1.1"),
    _r("RRA215", "guide-out-of-sync", W, f"{_MANIFEST}#guide",
       "A guide written by 'rra guide' differs from what the manifest renders today."),
    _r("RRA216", "patch-invalid", E, f"{_MANIFEST}#code",
       "A patch is not a well-formed unified diff, touches a path outside the code tree, or disagrees "
       "with the change records."),
    # Files and paths.
    _r("RRA301", "path-escapes-root", E, f"{_MANIFEST}#paths",
       "A path is absolute or uses '..' to leave the artifact root."),
    _r("RRA302", "symlink-escapes-root", E, f"{_MANIFEST}#paths",
       "A path, or a symbolic link the artifact would ship, resolves to a place outside the artifact root."),
    _r("RRA303", "missing-file", E, f"{_MANIFEST}#paths", "A file the manifest refers to does not exist."),
    _r("RRA304", "digest-mismatch", E, f"{_MANIFEST}#digests",
       "A file's SHA-256 differs from the digest the manifest records."),
    _r("RRA305", "size-mismatch", E, f"{_MANIFEST}#digests",
       "A file's size differs from the size the manifest records."),
    _r("RRA306", "not-a-regular-file", E, f"{_MANIFEST}#paths",
       "A path that must name a regular file names a directory, device or FIFO."),
    # Pinning.
    _r("RRA401", "commit-not-pinned", E, f"{_MANIFEST}#code",
       "The upstream commit is not a full 40-hex commit id."),
    _r("RRA402", "image-not-pinned", W, f"{_MANIFEST}#environment",
       "The container image is referenced by tag rather than by @sha256 digest."),
    _r("RRA403", "gpu-requirements-missing", E, f"{_MANIFEST}#environment",
       "Launchers request GPUs that the hardware block does not declare, or CUDA minimums are missing."),
    _r("RRA404", "lock-missing", W, f"{_MANIFEST}#environment",
       "The environment has no lock file, so packages are not pinned with hashes."),
    # Launchers, claims and observations.
    _r("RRA501", "missing-seeds", E, f"{_MANIFEST}#launchers", "A stochastic launcher declares no seeds."),
    _r("RRA502", "too-few-observations", E, "spec/04-levels.md#reference-observations",
       "A claim has fewer than 3 reference observations."),
    _r("RRA503", "few-observations", I, "spec/04-levels.md#reference-observations",
       "A claim has 3 or 4 reference observations; 5 are recommended."),
    _r("RRA504", "non-finite-value", E, "spec/04-levels.md#reference-observations",
       "A reported or observed value is infinite or not a number."),
    _r("RRA505", "duplicate-observation-seed", W, "spec/04-levels.md#reference-observations",
       "Two reference observations of a claim share a seed, so they are not independent."),
    _r("RRA506", "reported-outside-interval", W, "spec/04-levels.md#acceptance-interval",
       "The paper's reported value lies outside the reference interval and no discrepancy explains it; "
       "the claim is then not reproduced (1.2)."),
    _r("RRA507", "stability-mismatch", E, "spec/04-levels.md#stable-and-variable-claims",
       "A claim's declared stability class differs from the class its observations give."),
    _r("RRA508", "unexplained-method-change", E, f"{_MANIFEST}#changes",
       "A change that alters (or may alter) the method names no affected claims."),
    _r("RRA509", "observation-seed-undeclared", W, "spec/04-levels.md#reference-observations",
       "A reference observation's seed is not among its launcher's seeds."),
    _r("RRA510", "timeout-below-runtime", E, f"{_MANIFEST}#launchers",
       "A launcher's timeout is shorter than its expected runtime."),
    _r("RRA511", "duplicate-seed", W, f"{_MANIFEST}#launchers", "A launcher lists the same seed twice."),
    _r("RRA512", "observations-not-independent", W, "spec/04-levels.md#independence",
       "Two reference observations of a claim come from the same run (the same run record or run directory).",
       added="1.1"),
    _r("RRA513", "repeats-on-stochastic-launcher", W, f"{_MANIFEST}#seeds-and-repeats",
       "A stochastic launcher declares repeats, which only a seedless launcher has: its runs are its seeds.",
       added="1.1"),
    _r("RRA514", "answer-kind-mismatch", E, f"{_MANIFEST}#kinds",
       "A reported or observed value of a string, set or list claim does not have the shape of its kind, or "
       "such a claim declares a stability class.", added="1.2"),
    _r("RRA515", "observation-answer-mismatch", W, f"{_MANIFEST}#kinds",
       "A reference observation of a string, set or list claim does not match the reported answer, and no "
       "discrepancy lists the claim.", added="1.2"),
    # Levels and evidence.
    _r("RRA601", "level-not-met", E, "spec/04-levels.md#levels",
       "The manifest claims a level that what is present does not support."),
    _r("RRA602", "run-record-unreadable", W, "spec/04-levels.md#run-records",
       "A file in the run-record directory is not a readable run record."),
    # Packaging: a packed artifact (rra validate oci-layout:DIR).
    _r("RRA801", "oci-layout-invalid", E, f"{_PACKAGING}#image-layout",
       "The OCI image layout, its index or a manifest or config in it is missing or malformed."),
    _r("RRA802", "oci-blob-missing", E, f"{_PACKAGING}#image-layout",
       "A descriptor names a blob that the layout does not hold."),
    _r("RRA803", "oci-blob-digest-mismatch", E, f"{_PACKAGING}#digests-and-sizes",
       "A blob's SHA-256 differs from the digest of its descriptor: the blob was altered."),
    _r("RRA804", "oci-blob-size-mismatch", E, f"{_PACKAGING}#digests-and-sizes",
       "A blob's size differs from the size of its descriptor."),
    _r("RRA805", "oci-too-large", E, f"{_PACKAGING}#size-limits",
       "An image manifest, config or index is above its size cap, or the layers above the unpack limit."),
    _r("RRA806", "oci-media-type-invalid", E, f"{_PACKAGING}#media-types",
       "A media type or artifact type is not the one the packaging format requires."),
    _r("RRA807", "oci-layer-roles-invalid", E, f"{_PACKAGING}#layers",
       "The config's layer table and the manifest's layers disagree, or the manifest layer is missing."),
    _r("RRA808", "oci-unsafe-layer-entry", E, f"{_PACKAGING}#unpacking",
       "A layer entry is an absolute path, climbs out with '..', is an escaping link, a device, a FIFO or a "
       "duplicate."),
    _r("RRA809", "oci-uncompressed-mismatch", E, f"{_PACKAGING}#unpacking",
       "A layer decompresses to other bytes, or more bytes, than its config entry declares."),
    _r("RRA810", "oci-embedded-manifest-mismatch", E, f"{_PACKAGING}#the-config",
       "The config's copy of the manifest differs from the manifest file in the manifest layer."),
    _r("RRA811", "oci-annotation-missing", E, f"{_PACKAGING}#annotations",
       "The image manifest lacks a required annotation."),
    _r("RRA812", "oci-packed-with-findings", W, f"{_PACKAGING}#annotations",
       "The artifact was packed with --force although validation found errors."),
]

#: Every rule by code, in code order.
RULES: dict[str, Rule] = {r.code: r for r in _ALL}


def rule(code: str) -> Rule:
    """Return the rule with ``code``; raise KeyError naming the code otherwise."""
    try:
        return RULES[code]
    except KeyError:
        raise KeyError(f"unknown rule code {code!r}") from None


@dataclass(frozen=True)
class EnvRule:
    """One environment check: stable code, name, default severity and what it means."""

    code: str
    name: str
    severity: Severity
    summary: str
    #: The part of the specification whose fields the machine is compared with.
    section: str = "spec/02-manifest.md#environment"


#: The codes of ``rra env check`` (RRA700-RRA799), by code.
ENV_RULES: dict[str, EnvRule] = {r.code: r for r in (
    EnvRule("RRA700", "lock-unreadable", Severity.ERROR,
            "The lock file the manifest names is missing or cannot be parsed (one finding per problem, "
            "with its line)."),
    EnvRule("RRA701", "lock-digest-mismatch", Severity.ERROR,
            "The lock file's SHA-256 differs from `environment.lock.sha256` in the manifest."),
    EnvRule("RRA702", "interpreter-mismatch", Severity.ERROR,
            "The interpreter's implementation or version differs from `environment.interpreter` (a "
            "declared `3.11` matches any 3.11.x)."),
    EnvRule("RRA703", "package-missing", Severity.ERROR,
            "A package the lock pins (for this platform: its marker is true here) is not installed."),
    EnvRule("RRA704", "package-version-mismatch", Severity.ERROR,
            "An installed package's version differs from the version the lock pins."),
    EnvRule("RRA705", "package-extra", Severity.WARNING,
            "A distribution is installed that the lock does not list (installers such as pip, setuptools, "
            "wheel and uv excepted)."),
    EnvRule("RRA706", "accelerator-missing", Severity.ERROR,
            "Fewer GPUs of the required model are present than `environment.hardware` asks for (models "
            "compared ignoring case, punctuation and a leading \"NVIDIA\")."),
    EnvRule("RRA707", "accelerator-memory-low", Severity.ERROR,
            "A GPU of the required model has less than 95 % of `environment.hardware`'s `memory_gib` (an "
            "\"80GB\" card reports slightly under 80 GiB)."),
    EnvRule("RRA708", "driver-too-old", Severity.ERROR,
            "The GPU driver is older than `environment.cuda.min_driver`."),
    EnvRule("RRA709", "cuda-too-old", Severity.ERROR,
            "The CUDA version the driver supports is older than `environment.cuda.min_version`."),
    EnvRule("RRA710", "accelerator-unknown", Severity.WARNING,
            "The manifest needs GPUs but the machine's inventory cannot be read (no `nvidia-smi`, and no "
            "`RRA_GPU_INVENTORY`)."),
    EnvRule("RRA711", "package-unchecked", Severity.INFO,
            "A locked package cannot be compared with the live environment (a conda package, or one "
            "without a version)."),
)}


@dataclass(frozen=True)
class ReviewRule:
    """One kind of finding of ``rra review`` that only a review can see (re-running, comparing,
    tracing, challenging choices): stable code, name, default severity and what it means."""

    code: str
    name: str
    severity: Severity
    summary: str
    #: The part of the specification about an artifact's independent review.
    section: str = "spec/02-manifest.md#review"


#: The codes of ``rra review``'s own findings (RRA900-RRA949), by code. A review also reports the
#: findings of ``rra validate`` under the validator's codes; these are for what only a review sees.
#: :mod:`rra_tools.builder.review.codes` takes its codes from here (the builder is above this layer).
REVIEW_RULES: dict[str, ReviewRule] = {r.code: r for r in (
    # Re-running from a clean shell.
    ReviewRule("RRA900", "review-run-failed", E,
               "A launcher's clean-shell run did not succeed (non-zero exit, failed, timeout, interrupted), was skipped "
               "because a dependency failed, or could not be set up."),
    ReviewRule("RRA901", "review-outside-interval", E,
               "The value the review's runs give for a claim lies outside the claim's acceptance interval."),
    ReviewRule("RRA902", "review-no-value", E,
               "The review's runs give no value for a claim (no successful run of its launcher holds one)."),
    ReviewRule("RRA903", "value-differs-from-record", W,
               "A review run's value for a claim differs from the author's recorded run of the same launcher and seed "
               "(or repeat)."),
    ReviewRule("RRA904", "output-differs-from-record", W,
               "A review run's output differs (SHA-256) from the author's recorded run of the same launcher and seed; "
               "a warning for a launcher that is not stochastic, information for a seeded one."),
    ReviewRule("RRA905", "run-not-recorded", W,
               "The review ran a launcher and seed (or repeat) for which the author's run records hold no successful run."),
    # The environment of the review.
    ReviewRule("RRA910", "review-no-lock", E,
               "The manifest has no environment lock, so no fresh environment can be built for the review; it runs in "
               "the current interpreter only with --env current (in a container, --env container, the image is the "
               "environment and no lock is needed to run)."),
    ReviewRule("RRA911", "review-environment-failed", E,
               "The review's environment (built from the lock, or the container image) could not be set up; nothing ran."),
    ReviewRule("RRA912", "review-current-environment", W,
               "The review ran in the interpreter running rra review (--env current), not in an environment built "
               "from the lock."),
    # Tracing each claim to evidence.
    ReviewRule("RRA920", "claim-untraced", E,
               "A claim has no successful run record of its launcher holding a value: it traces to no evidence."),
    ReviewRule("RRA921", "record-output-missing", E,
               "A run record counted for a claim names an output (or log) that is not in the artifact, or names none."),
    ReviewRule("RRA922", "record-output-digest-mismatch", E,
               "The file a run record names has another SHA-256 than the record says: it was changed or overwritten "
               "since the run."),
    ReviewRule("RRA923", "record-value-mismatch", E,
               "Re-extracting the claim's value from the recorded output with the claim's rule does not give the "
               "record's value."),
    ReviewRule("RRA924", "observation-record-mismatch", E,
               "A reference observation's run_record is not a successful run record of the claim's launcher with the "
               "observation's seed and value."),
    # Challenging choices without support.
    ReviewRule("RRA930", "change-without-evidence", E,
               "A change record's evidence says nothing that can be checked (\"none\", \"n/a\", a placeholder), names "
               "a file that is not in the artifact, or names a run record whose run did not succeed."),
    ReviewRule("RRA931", "method-change-unknown", E,
               "A change record says alters_method: unknown: whether it changes what the paper's method computes was "
               "never decided."),
    ReviewRule("RRA932", "patch-without-change", E,
               "A patch of code.patches has no change record saying why it was made."),
    ReviewRule("RRA933", "patch-series-unproven", E,
               "The patch series does not reproduce the artifact's code ('rra change verify' fails)."),
    ReviewRule("RRA934", "discrepancy-undecided", E,
               "A discrepancy's decision is not written: its rationale (or what the paper says, or the impact) is "
               "still a placeholder."),
    ReviewRule("RRA935", "discrepancy-without-claims", W,
               "A discrepancy names no claim, so a reader cannot see which numbers it may move."),
    ReviewRule("RRA936", "seed-not-passed", W,
               "A stochastic launcher declares seeds but its argv never passes {seed}: every seed runs the same command."),
    ReviewRule("RRA937", "hardware-undeclared", W,
               "The manifest does not declare environment.hardware: a reviewer cannot tell whether their machine "
               "matches the one that produced the numbers."),
    ReviewRule("RRA938", "guide-missing", W,
               "The artifact has no reproduction guide (neither guide.path nor REPRODUCE.md); 'rra guide' writes it."),
    ReviewRule("RRA939", "claims-share-extraction", E,
               "Two claims read the same value: the same launcher, extraction and aggregate, so one run's number "
               "'reproduces' both (a table's baseline row given the model's printed accuracy)."),
    ReviewRule("RRA940", "no-level-reviewed", W,
               "The review's runs meet no level because the review's copy has errors; the finding names the "
               "first few of them."),
)}


@dataclass(frozen=True)
class TaskSetRule:
    """One check of a benchmark task set (``rra bench check``): stable code, name, default
    severity and what it means."""

    code: str
    name: str
    severity: Severity
    summary: str
    #: The part of the specification the check enforces.
    section: str = "spec/07-task-sets.md"
    #: Cannot be ignored: the task set was not (fully) read.
    mandatory: bool = False


_TASKSETS = "spec/07-task-sets.md"

#: The codes of ``rra bench check`` (RRA950-RRA999), by code. The task-set checks also run
#: before ``rra bench run``, ``reproduce`` and ``score`` start.
TASKSET_RULES: dict[str, TaskSetRule] = {r.code: r for r in (
    TaskSetRule("RRA950", "taskset-unreadable", E,
                "The task-set file cannot be read: missing, not a regular file, too large, not UTF-8, not "
                "well-formed YAML or JSON, or a key given twice.", f"{_TASKSETS}#task-set-files", mandatory=True),
    TaskSetRule("RRA951", "taskset-schema-violation", E,
                "The task set violates its schema (schemas/rra-taskset-1.0.schema.json): a required field is "
                "missing, a field is unknown, or a value has the wrong type or form.", f"{_TASKSETS}#the-task-set"),
    TaskSetRule("RRA952", "taskset-duplicate-id", E,
                "Two papers, two experiments of a paper, two tasks of an experiment, two reproducers or two "
                "conditions share an id.", f"{_TASKSETS}#identifiers"),
    TaskSetRule("RRA953", "task-artifact-unusable", E,
                "A task's artifact directory does not exist or holds no manifest that loads.",
                f"{_TASKSETS}#tasks"),
    TaskSetRule("RRA954", "task-claim-unknown", E,
                "A task names a claim its artifact's manifest does not have.", f"{_TASKSETS}#tasks"),
    TaskSetRule("RRA955", "task-too-few-observations", E,
                "Fewer than 3 reference observations reach a task (from the task, the references file or the "
                "claim in the manifest).", f"{_TASKSETS}#reference-observations"),
    TaskSetRule("RRA956", "task-few-observations", W,
                "A task has 3 or 4 reference observations; 5 are the norm.", f"{_TASKSETS}#reference-observations"),
    TaskSetRule("RRA957", "observation-without-provenance", W,
                "A task takes its reference observations from its claim in the manifest, and some of them carry "
                "no provenance (who ran it, on which machine, from which code).",
                f"{_TASKSETS}#reference-observations"),
    TaskSetRule("RRA958", "references-in-public-part", E,
                "A task carries reference values in the task set although a private references file is given: "
                "the public part must hold none.", f"{_TASKSETS}#the-private-references-file"),
    TaskSetRule("RRA959", "task-artifact-not-checked", I,
                "A task's artifact is an OCI reference: its claim and observations are checked when the benchmark "
                "pulls it, not by this static check.", f"{_TASKSETS}#tasks"),
    TaskSetRule("RRA960", "repeats-invalid", E,
                "'repeats' is not a whole number from 1 to 100.", f"{_TASKSETS}#repeats-and-limits"),
    TaskSetRule("RRA961", "limit-invalid", E,
                "A per-attempt limit is not positive (wall clock) or is negative (cost), or is not a number.",
                f"{_TASKSETS}#repeats-and-limits"),
    TaskSetRule("RRA962", "references-file-invalid", E,
                "The private references file cannot be read, violates its schema, belongs to another task set or "
                "lists a task twice.", f"{_TASKSETS}#the-private-references-file", mandatory=True),
    TaskSetRule("RRA963", "references-unknown-task", E,
                "The private references file gives observations for a task the task set does not have.",
                f"{_TASKSETS}#the-private-references-file"),
)}
