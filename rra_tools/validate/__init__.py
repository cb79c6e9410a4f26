"""Validation of RRA manifests: the schema layer, semantic rules, diagnostics and reporters."""

from .api import validate_bytes, validate_path
from .diagnostics import Diagnostic, Severity
from .result import ValidationReport, ValidationResult

__all__ = [
    "Diagnostic",
    "Severity",
    "ValidationReport",
    "ValidationResult",
    "validate_bytes",
    "validate_path",
]
