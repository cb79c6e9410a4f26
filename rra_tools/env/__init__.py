"""The locked environment: reading locks (PEP 751, pip --require-hashes, conda-lock), writing a
PEP 751 lock with uv, checking a live environment, building one from the lock, and the SBOM.

Modules: ``locks`` (reading), ``resolve`` (rra lock), ``live`` (interpreter and GPU inventory),
``check`` (rra env check, codes RRA700-RRA711), ``create`` (rra env create), ``sbom`` (rra sbom),
``artifact`` (manifest loading and the atomic lock-block update). Nothing heavy is imported here.
"""
