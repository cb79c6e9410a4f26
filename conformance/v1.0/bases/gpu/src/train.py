"""Train the student (placeholder for the conformance suite; never run)."""
