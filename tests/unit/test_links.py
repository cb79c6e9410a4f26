"""``rra_tools.io.links.LinkTree``: where a tree's links lead, judged from the list alone, with
exact problems (path, target, why) at the 40-link limit, for loops, and for links that leave
the root directly or through another link."""

from __future__ import annotations

import dataclasses

import pytest

from rra_tools.io.links import MAX_FOLLOWS, LinkProblem, LinkTree


def _problems(links: list[tuple[str, str]], root_name: str = "the root") -> list[tuple[str, str, str]]:
    tree = LinkTree(root_name)
    for path, target in links:
        tree.add(path, target)
    assert len(tree) == len(links)
    return [(p.path, p.target, p.why) for p in tree.problems()]


def _chain(length: int) -> list[tuple[str, str]]:
    """l0 -> file, l1 -> l0, ...: resolving l<k> passes k + 1 links."""
    return [(f"l{i}", f"l{i - 1}" if i else "file") for i in range(length)]


def test_links_inside_the_root_are_fine() -> None:
    assert _problems([("a/b/lnk", "../.."), ("a/up", ".."), ("./c/./d//e", "../../a/b/lnk/a"), ("f", "a/b/lnk/./a/up"),
                      ("g", "")]) == []


def test_links_that_leave_the_root() -> None:
    assert _problems([("up", ".."), ("a/b/lnk", "../.."), ("esc", "a/b/lnk/../x"), ("deep", "a/b/../../../y"),
                      ("abs", "/etc"), ("via-abs", "abs/passwd")], "the destination") == [
        ("up", "..", "leads outside the destination"),
        ("esc", "a/b/lnk/../x", "leads outside the destination through the symbolic link 'a/b/lnk'"),
        ("deep", "a/b/../../../y", "leads outside the destination"),
        ("abs", "/etc", "is absolute"),
        ("via-abs", "abs/passwd", "is absolute"),
    ]


def test_a_link_through_a_refused_link_is_refused_for_the_same_reason() -> None:
    # 'out' is judged first and refused; judging 'x' resolves 'out' again, which must not look
    # like a loop.
    assert _problems([("out", ".."), ("x", "out/a"), ("y", "./out")]) == [
        ("out", "..", "leads outside the root"), ("x", "out/a", "leads outside the root"),
        ("y", "./out", "leads outside the root")]


def test_loops() -> None:
    assert _problems([("a", "b"), ("b", "a"), ("self", "./self"), ("d/me", "../d/me/x")]) == [
        ("a", "b", "loops back to itself"), ("b", "a", "loops back to itself"),
        ("self", "./self", "loops back to itself"), ("d/me", "../d/me/x", "loops back to itself")]


@pytest.mark.parametrize("reverse", [False, True])
def test_forty_links_in_a_row_are_followed_and_forty_one_are_not(reverse: bool) -> None:
    # In order each link's resolution is reused by the next; in reverse the first one resolved
    # passes through all the others, nested.
    assert MAX_FOLLOWS == 40
    chain = _chain(40)
    assert _problems(chain[::-1] if reverse else chain) == []
    chain = _chain(41)
    assert _problems(chain[::-1] if reverse else chain) == [
        ("l40", "l39", "passes through more than 40 symbolic links")]


def test_forty_links_in_one_target() -> None:
    # One target naming 40 links one after the other (each back to the root): 41 follows.
    links = [(f"s{i}", ".") for i in range(40)]
    assert _problems([*links, ("many", "/".join(f"s{i}" for i in range(39)))]) == []
    assert _problems([*links, ("many", "/".join(f"s{i}" for i in range(40)))]) == [
        ("many", "/".join(f"s{i}" for i in range(40)), "passes through more than 40 symbolic links")]


def test_a_very_long_chain_is_refused_without_deep_recursion() -> None:
    # Resolved from its far end, the chain nests: the depth limit stops it long before the
    # interpreter's recursion limit would.
    got = _problems(_chain(3000)[::-1])
    assert len(got) == 3000 - 40
    assert {why for _, _, why in got} == {"passes through more than 40 symbolic links"}


def test_a_problem_is_a_frozen_value() -> None:
    problem = LinkProblem("a", "..", "leads outside the root")
    assert problem.leaves_root is True  # unless said otherwise, a problem is a way out of the root
    with pytest.raises(dataclasses.FrozenInstanceError):
        problem.path = "b"  # type: ignore[misc]
    assert {problem} == {LinkProblem("a", "..", "leads outside the root")}


def test_a_problem_says_whether_the_link_leaves_the_root() -> None:
    tree = LinkTree()
    for path, target in [("up", ".."), ("abs", "/etc"), ("a", "b"), ("b", "a"), *_chain(41)]:
        tree.add(path, target)
    assert [(p.path, p.leaves_root) for p in tree.problems()] == [
        ("up", True), ("abs", True), ("a", False), ("b", False), ("l40", False)]
    # Resolved from its far end the chain is stopped by its depth, not by its count.
    tree = LinkTree()
    for path, target in _chain(41)[::-1]:
        tree.add(path, target)
    assert [(p.path, p.leaves_root) for p in tree.problems()] == [("l40", False)]
