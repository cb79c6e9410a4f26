"""The builder's detection helpers on small inputs: license texts, URL@COMMIT, the YAML writer."""

from __future__ import annotations

import pytest

from rra_tools.builder.detect.license import match_license
from rra_tools.builder.detect.repo import GitError, parse_upstream_option
from rra_tools.builder.yamltext import to_yaml
from rra_tools.io.read.source import parse_document

_GPL = "GNU GENERAL PUBLIC LICENSE\n   Version 3, 29 June 2007\n"
_BSD2 = ("Redistribution and use in source and binary forms, with or without modification, are permitted "
         "provided that ... this list of conditions and the following disclaimer.")


@pytest.mark.parametrize(("text", "spdx"), [
    ("                                 Apache License\n                           Version 2.0, January 2004\n",
     "Apache-2.0"),
    (_GPL, "GPL-3.0-only"),
    ("GNU LESSER GENERAL PUBLIC LICENSE\n Version 3, 29 June 2007\n" + _GPL, "LGPL-3.0-only"),
    ("GNU AFFERO GENERAL PUBLIC LICENSE\n Version 3, 19 November 2007\n" + _GPL, "AGPL-3.0-only"),
    (_BSD2, "BSD-2-Clause"),
    (_BSD2 + "\n3. Neither the name of the copyright holder nor ...", "BSD-3-Clause"),
    ("This is free and unencumbered software released into the public domain.", "Unlicense"),
    ("Mozilla Public License Version 2.0\n==================================", "MPL-2.0"),
])
def test_license_texts_match_their_spdx_id(text: str, spdx: str) -> None:
    assert match_license(text) is not None and match_license(text)[0] == spdx  # type: ignore[index]


def test_an_unknown_license_is_not_guessed() -> None:
    assert match_license("All rights reserved. Ask us before you use this.") is None
    # The MIT grant alone, without its notice condition, could be any permissive text.
    assert match_license("Permission is hereby granted, free of charge, to any person obtaining a copy") is None


@pytest.mark.parametrize("value", ["https://x/y.git@main", "https://x/y.git", "@" + "a" * 40,
                                   "https://x/y.git@" + "A" * 40, "https://x/y.git@" + "a" * 39])
def test_upstream_option_needs_a_full_commit(value: str) -> None:
    with pytest.raises(GitError, match="is not URL@COMMIT with a full 40-hex commit"):
        parse_upstream_option(value)


def test_upstream_option_splits_at_the_last_at() -> None:
    assert parse_upstream_option("git@example.org:lab/x.git@" + "0" * 40) == ("git@example.org:lab/x.git", "0" * 40)


def test_yaml_writer_round_trips_awkward_strings() -> None:
    data = {"a": ["x: y", "#c", "&d", "2024", "true", "", {"k": [], "yes": {}}], "n": [1, 2.5, False, None],
            "nested": [[1, 2], {"e": "é"}]}
    assert parse_document(to_yaml(data)).data == data


def test_conda_packages_translate_to_pip_or_are_listed() -> None:
    from rra_tools.builder.detect.environment import conda_to_pip

    assert [conda_to_pip(s) for s in ["conda-forge::numpy=1.26", "scipy==1.11.4", "pytorch", "pandas>=2",
                                      "py-opencv=4.8=py310h", "mkl=2023.1", "python=3.10", "cuda-nvcc"]] == [
        "numpy==1.26.*", "scipy==1.11.4", "torch", "pandas>=2", "opencv-python==4.8.*", None, None, None]


def test_setup_py_is_parsed_not_run() -> None:
    from rra_tools.builder.detect.environment import setup_py_metadata

    source = ("import os\nos.system('touch /tmp/never')\nfrom setuptools import setup\nREQS = open('r.txt').read()\n"
              "setup(name='p', install_requires=REQS, python_requires='>=3.8',\n"
              "      entry_points={'console_scripts': ['p=p.cli:main']})\n")
    # A value computed at run time (install_requires read from a file) is absent, not guessed.
    assert setup_py_metadata(source) == {"name": ("p", 5), "python_requires": (">=3.8", 5),
                                         "entry_points": ({"console_scripts": ["p=p.cli:main"]}, 6)}
    assert setup_py_metadata("setup(") == {}


def test_argparse_options_are_read_statically() -> None:
    import ast

    from rra_tools.builder.detect.argparse_static import read_options

    tree = ast.parse("import argparse\np = argparse.ArgumentParser()\np.add_argument('data')\n"
                     "p.add_argument('-b', '--batch-size', type=int, default=32)\n"
                     "p.add_argument('--out', dest='output_dir', default='runs')\n"
                     "p.add_argument('--fp16', action='store_true')\n"
                     "p.add_argument('--lr', type=float, required=True)\n")
    assert [(o.flag, o.dest, o.type, o.default, o.is_flag, o.required, o.line) for o in read_options(tree)] == [
        ("--batch-size", "batch_size", "int", 32, False, False, 4),
        ("--out", "output_dir", "str", "runs", False, False, 5),
        ("--fp16", "fp16", None, None, True, False, 6),
        ("--lr", "lr", "float", None, False, True, 7)]


def test_printed_metrics_become_stdout_regexes() -> None:
    import re

    from rra_tools.builder.detect.claims import metric_prints

    source = ('print(f"epoch {e}")\nprint(f"val acc: {acc:.2f}")\nprint("F1 = %.3f" % f1)\n'
              'print("loss:", loss)\nprint("done")\n')
    found = metric_prints("m.py", source)
    assert [(f.line, f.note) for f in found] == [(2, "printed metric 'val acc'"), (3, "printed metric 'F1'"),
                                                 (4, "printed metric 'loss'")]
    for finding, printed, value in zip(found, ["val acc: 0.91", "F1 = 0.734", "loss: 1e-3"],
                                       ["0.91", "0.734", "1e-3"]):
        pattern = finding.value.removeprefix("stdout regex ")
        match = re.search(pattern, f"noise\n{printed}\n")
        assert match is not None and match.group(1) == value


def test_markdown_table_numbers_are_located() -> None:
    from rra_tools.builder.detect.claims import table_numbers

    text = "intro\n\n| Model | Acc | Notes |\n|:--|--:|---|\n| **ours** | **91.2** | best |\n| base | 88% | - |\n"
    assert [(f.value, f.line) for f in table_numbers("README.md", text)] == [
        ("**ours** / Acc = **91.2**", 5), ("base / Acc = 88%", 6)]
