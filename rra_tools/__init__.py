"""Tools for Refined Reproducible Artifacts (RRA): the standard's models, validator and CLI."""

__version__ = "0.1.0"

#: The version of the RRA standard these tools implement (major.minor).
SPEC_VERSION = "1.0"

__all__ = ["SPEC_VERSION", "__version__"]
