"""Authoring helpers: scaffolding a new artifact (later: change records, guide, review)."""
