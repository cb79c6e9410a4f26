"""The independent review of an artifact (``rra review``): its checks of the manifest's choices and
evidence (checks), the clean-shell re-runs (runs), the findings and their codes (findings, codes),
the report (text), and the review itself (artifact), which runs them in order."""
