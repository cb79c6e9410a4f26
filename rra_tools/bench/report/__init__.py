"""``rra bench report``: the figures of a benchmark's results and their renderings.

- :mod:`.build`: the report (:class:`~rra_tools.model.bench_report.BenchReport`) computed from
  a results file, and written with its pages;
- :mod:`.factorial`: the factorial analysis of ablations;
- :mod:`.cost`: the full cost of the reproductions and the break-even of the refined artifacts,
  laid out as tables by :mod:`.cost_tables`;
- :mod:`.plots` and :mod:`.render`: the SVG plots, the HTML page and the Markdown summary.

Nothing is re-exported here: import from the module that holds a name.
"""
