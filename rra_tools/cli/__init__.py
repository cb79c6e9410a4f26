"""The ``rra`` command line: parse, call the library, render; the only place that prints or exits."""
