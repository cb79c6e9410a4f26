"""The auditor and what judges it.

- :mod:`.auditor`: the finder flags suspicious values, the refuter traces each to evidence;
- :mod:`.attempt_file`: ``attempt.json``, what the evaluator knew of an attempt when it judged it,
  so that ``rra bench score`` audits the workspace again exactly as the run did;
- :mod:`.eval`: ``rra bench audit-eval``, the auditor's verdicts against people's.

Nothing is re-exported here: import from the module that holds a name (``rra bench report``
imports :mod:`.eval` for its interval without loading the auditor).
"""
