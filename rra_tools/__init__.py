"""Tools for Refined Reproducible Artifacts (RRA): the standard's models, validator and CLI."""

__version__ = "0.1.0"

#: The version of the RRA standard these tools implement (major.minor).
SPEC_VERSION = "1.2"

#: The version of each published document format (``schemas/rra-<name>-<version>.schema.json``).
#: The manifest follows the standard; the other formats change only when their own fields do,
#: so a tool keeps reading reports and case files across a minor release of the standard.
FORMAT_VERSIONS = {"manifest": SPEC_VERSION, "run-record": "1.1", "report": "1.0", "conformance": "1.0",
                   "taskset": "1.0", "bench-results": "1.0", "bench-references": "1.0",
                   "submission": "1.0", "review": "1.0", "bench-report": "1.0", "agent-request": "1.0",
                   "agent-answer": "1.0", "review-time": "1.0",
                   "audit-labels": "1.0", "packet-set": "1.0"}

#: Released manifest schemas that are kept byte for byte (tests/unit/test_schema_sync.py checks
#: their SHA-256); only the current version is generated.
FROZEN_MANIFEST_VERSIONS = ("1.0", "1.1")

__all__ = ["FORMAT_VERSIONS", "FROZEN_MANIFEST_VERSIONS", "SPEC_VERSION", "__version__"]
