"""The builder's detection helpers on small inputs: license texts, URL@COMMIT, the YAML writer."""

from __future__ import annotations

import pytest

from rra_tools.builder.detect.license import match_license
from rra_tools.builder.detect.repo import GitError, parse_upstream_option
from rra_tools.builder.yamltext import to_yaml
from rra_tools.io.source import parse_document

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
