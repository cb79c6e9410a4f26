"""Cells: where a reproducer, a builder's agent or a launcher re-execution runs.

- :mod:`.sandbox`: the sandbox backends (bubblewrap, Podman, or none when asked for), the
  limits they enforce and the record of what a cell could see;
- :mod:`.proxy`: the metering proxy, a cell's one way out, which meters every model call from
  the upstream's own answers and enforces the cell's budgets;
- :mod:`.scripted`: a scripted loopback model speaking the providers' protocols, the stand-in for
  a paid upstream in tests, benchmarks and the docs' self-checks.

This layer sits below ``builder`` and ``bench`` and above ``run`` (pyproject's import-linter
contract): both the benchmark's cells and the builder's agent run through it.
"""
