"""Reading documents within bounds and locating their values: the one manifest loader
(:mod:`.manifest`), the located and the fast YAML readers and the locators of a finding's line
and column, bounded YAML and TOML for files rra did not write, and run records.

The bounds themselves (:mod:`rra_tools.io.limits`) and the reading errors
(:mod:`rra_tools.io.errors`) stay in ``io``: packing, unpacking and the validator share them.
"""
