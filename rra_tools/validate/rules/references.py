"""Cross-references, ids, dependency cycles, placeholders and the shape of claims."""
