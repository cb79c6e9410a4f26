"""Paper metadata: ``CITATION.cff`` (its ``preferred-citation`` when it has one: that is the paper,
the top level describes the software), else ``codemeta.json`` (its ``referencePublication`` for
the title, DOI and year; its authors), else the README's citation block (a BibTeX entry: its
``title`` and ``author``); and arXiv/DOI links in the README. The README's first heading is
offered as the title but not used (it often names the repository, not the paper)."""

from __future__ import annotations

import json
import re
from typing import Any

from .findings import Finding
from .repo import RawRepo
from .yamlfile import YamlFile, read_yaml

__all__ = ["README_FILES", "detect_paper"]

README_FILES = ("README.md", "README.rst", "README.txt", "README")

#: An arXiv id: a link, or "arXiv:ID" also written "arXiv preprint: ID", "arXiv pre-print:ID" or
#: "arXiv e-print ID" (yx14/disentangler_opt: "accompanies the arXiv pre-print:2508.19409").
_ARXIV = re.compile(r"(?:arxiv\.org/(?:abs|pdf)/|arXiv(?:\s+(?:pre-?print|e-?print))?\s?:\s?|arXiv\s+(?:pre-?print|e-?print)\s+)([0-9]{4}\.[0-9]{4,5}(?:v[0-9]+)?)", re.IGNORECASE)
_DOI = re.compile(r"(?:doi\.org/|doi:\s?)(10\.[0-9]{4,9}/[^\s\"'<>\])}]+)", re.IGNORECASE)
_DOI_VALUE = re.compile(r"10\.[0-9]{4,9}/\S+")


def _author(entry: Any) -> dict[str, str] | None:
    if not isinstance(entry, dict):
        return None
    name = entry.get("name")
    if not isinstance(name, str):
        parts = [entry.get("given-names"), entry.get("name-particle"), entry.get("family-names")]
        name = " ".join(str(p) for p in parts if isinstance(p, str) and p.strip())
    if not name.strip():
        return None
    author = {"name": name.strip()}
    orcid = entry.get("orcid")
    if isinstance(orcid, str):
        match = re.search(r"[0-9]{4}-[0-9]{4}-[0-9]{4}-[0-9]{3}[0-9X]", orcid)
        if match:
            author["orcid"] = match.group(0)
    affiliation = entry.get("affiliation")
    if isinstance(affiliation, str) and affiliation.strip():
        author["affiliation"] = affiliation.strip()
    return author


def _citation(cff: YamlFile, paper: dict[str, Any], found: list[Finding]) -> None:
    data = cff.data if isinstance(cff.data, dict) else {}
    base: tuple[str, ...] = ()
    entry = data
    preferred = data.get("preferred-citation")
    if isinstance(preferred, dict):
        entry, base = preferred, ("preferred-citation",)
    title = entry.get("title")
    if isinstance(title, str) and title.strip():
        paper["title"] = title.strip()
        found.append(cff.finding("paper.title", paper["title"], *base, "title"))
    authors = entry.get("authors")
    if isinstance(authors, list):
        people = [a for a in (_author(e) for e in authors) if a is not None]
        if people:
            paper["authors"] = people
            found.append(cff.finding("paper.authors", ", ".join(a["name"] for a in people), *base, "authors"))
    for key in ("journal", "conference", "collection-title"):
        venue = entry.get(key)
        if isinstance(venue, dict):
            venue = venue.get("name")
        if isinstance(venue, str) and venue.strip():
            paper["venue"] = venue.strip()
            found.append(cff.finding("paper.venue", paper["venue"], *base, key))
            break
    year = entry.get("year")
    where: tuple[str | int, ...] = (*base, "year")
    if not isinstance(year, int):
        released = entry.get("date-released") or entry.get("date-published")
        year = int(released[:4]) if isinstance(released, str) and released[:4].isdigit() else None
        where = (*base, "date-released" if "date-released" in entry else "date-published")
    if isinstance(year, int) and 1900 <= year <= 2200:
        paper["year"] = year
        found.append(cff.finding("paper.year", year, *where))
    doi = entry.get("doi")
    if isinstance(doi, str) and _DOI_VALUE.fullmatch(doi.strip()):
        paper["doi"] = doi.strip()
        found.append(cff.finding("paper.doi", paper["doi"], *base, "doi"))
    url = entry.get("url")
    if isinstance(url, str) and re.fullmatch(r"https?://\S+", url.strip()):
        paper["url"] = url.strip()
        found.append(cff.finding("paper.url", paper["url"], *base, "url"))
    paper["citation_file"] = cff.name


def _line_of(text: str, needle: str) -> int | None:
    for number, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return number
    return None


def _codemeta(repo: RawRepo, paper: dict[str, Any], found: list[Finding]) -> None:
    text = repo.text("codemeta.json")
    try:
        data = json.loads(text) if text is not None else None
    except (ValueError, RecursionError):  # RecursionError: nested too deep for the decoder
        data = None
    if not isinstance(data, dict) or text is None:
        return
    where = "codemeta.json"
    publication = data.get("referencePublication")
    publication = publication[0] if isinstance(publication, list) and publication else publication
    if isinstance(publication, dict):
        title = publication.get("name") or publication.get("headline")
        if isinstance(title, str) and title.strip():
            paper["title"] = title.strip()
            found.append(Finding("paper.title", paper["title"], where, _line_of(text, title)))
        identifier = publication.get("identifier") or publication.get("@id")
        doi = re.search(r"10\.[0-9]{4,9}/\S+", identifier) if isinstance(identifier, str) else None
        if doi is not None:
            paper["doi"] = doi.group(0)
            found.append(Finding("paper.doi", paper["doi"], where, _line_of(text, doi.group(0))))
        date = publication.get("datePublished")
        if isinstance(date, str) and date[:4].isdigit() and 1900 <= int(date[:4]) <= 2200:
            paper["year"] = int(date[:4])
            found.append(Finding("paper.year", date[:4], where, _line_of(text, date)))
    authors = data.get("author")
    people = []
    for entry in authors if isinstance(authors, list) else []:
        if not isinstance(entry, dict):
            continue
        converted = _author({"given-names": entry.get("givenName"), "family-names": entry.get("familyName"),
                             "name": entry.get("name") if isinstance(entry.get("name"), str) else None,
                             "orcid": entry.get("@id") if "orcid.org" in str(entry.get("@id")) else None})
        if converted is not None:
            people.append(converted)
    if people:
        paper["authors"] = people
        first = people[0]["name"].split()[-1]
        found.append(Finding("paper.authors", ", ".join(a["name"] for a in people), where, _line_of(text, first),
                             "authors of the software, as codemeta.json lists them; check them against the paper"))


def _readme_links(repo: RawRepo, paper: dict[str, Any], found: list[Finding]) -> None:
    name = repo.first(*README_FILES)
    text = repo.text(name) if name else None
    if name is None or text is None:
        return
    # Several papers linked (a bibliography, related work): the first link is not more likely the
    # paper's than the others, and taking it mixes one paper's title with another's id. Keep the
    # ids only when the README links one paper (or the ids given already, from a citation file).
    arxivs = set(match.group(1) for match in _ARXIV.finditer(text))
    dois = set(match.group(1).rstrip(".,;") for match in _DOI.finditer(text))
    # One arXiv id and one DOI are most often the preprint and the published paper: one paper.
    several = (len(arxivs) > 1 or len(dois) > 1) and "arxiv" not in paper and "doi" not in paper
    for number, line in enumerate(text.splitlines(), 1):
        # One id may be written twice on a line ([arXiv:X](https://arxiv.org/abs/X)): report it once.
        for value in dict.fromkeys(match.group(1) for match in _ARXIV.finditer(line)):
            note = ""
            if several:
                note = f"not used: the README links {len(arxivs)} arXiv id(s) and {len(dois)} DOI(s)"
            elif "arxiv" not in paper:
                paper["arxiv"] = value
            elif paper["arxiv"] != value:
                note = f"another arXiv id than {paper['arxiv']!r}; the first one is used"
            found.append(Finding("paper.arxiv", value, name, number, note))
        for value in dict.fromkeys(match.group(1).rstrip(".,;") for match in _DOI.finditer(line)):
            note = ""
            if several:
                note = f"not used: the README links {len(arxivs)} arXiv id(s) and {len(dois)} DOI(s)"
            elif "doi" not in paper:
                paper["doi"] = value
            elif paper["doi"] != value:
                note = f"another DOI than {paper['doi']!r} (kept); check which one is the paper's"
            found.append(Finding("paper.doi", value, name, number, note))


#: A BibTeX field of a citation block: ``title = {...}`` or ``title="..."`` (one level of braces
#: inside, as titles protect capitals with them).
_BIB_FIELD = r"(?is)\b{name}\s*=\s*(?:\{{((?:[^{{}}]|\{{[^{{}}]*\}})*)\}}|\"([^\"]*)\")"
_HEADING = re.compile(r"^\s{0,3}#\s+(.+?)\s*#*\s*$")


def _bib_field(block: str, name: str) -> str | None:
    found = re.search(_BIB_FIELD.format(name=name), block)
    if found is None:
        return None
    value = found.group(1) if found.group(1) is not None else found.group(2)
    return re.sub(r"\s+", " ", value.replace("{", "").replace("}", "")).strip() or None


def _bib_author(name: str) -> str:
    """'Last, First' as 'First Last' (BibTeX's two forms of a name).

    >>> _bib_author("Lovelace, Ada"), _bib_author("Alan Turing")
    ('Ada Lovelace', 'Alan Turing')
    """
    last, comma, first = name.partition(",")
    return f"{first.strip()} {last.strip()}".strip() if comma else name.strip()


def _readme_metadata(repo: RawRepo, paper: dict[str, Any], found: list[Finding]) -> None:
    """Title and authors from the README when no citation file gave them: its first BibTeX entry;
    without one, its first level-one heading is offered as the title (a finding), not used."""
    name = repo.first(*README_FILES)
    text = repo.text(name) if name else None
    if name is None or text is None:
        return
    entries = list(re.finditer(r"@(?:article|inproceedings|misc|conference|techreport|phdthesis|book)\s*\{",
                               text, re.I))
    entry = entries[0] if entries else None
    if entry is not None and len(entries) > 1 and "title" not in paper:
        # A list of citations (the group's papers, related work): which one is this code's paper
        # is the author's answer, not the first entry's.
        line = text.count("\n", 0, entry.start()) + 1
        found.append(Finding("paper.title", _bib_field(text[entry.start():entry.start() + 5000], "title") or "?",
                             name, line, f"not used: the README holds {len(entries)} citation blocks; which one "
                             "is the paper is asked"))
        entry = None
    if entry is not None:
        block = text[entry.start():entry.start() + 5000]
        line = text.count("\n", 0, entry.start()) + 1
        title = _bib_field(block, "title")
        if title and "title" not in paper:
            paper["title"] = title
            found.append(Finding("paper.title", title, name, line, "from the README's citation block"))
        authors = _bib_field(block, "author")
        if authors and "authors" not in paper:
            people = [{"name": _bib_author(a)} for a in re.split(r"\s+and\s+", authors) if a.strip()]
            if people:
                paper["authors"] = people
                found.append(Finding("paper.authors", ", ".join(p["name"] for p in people), name, line,
                                     "from the README's citation block"))
    if "title" not in paper:
        for number, raw in enumerate(text.splitlines(), 1):
            heading = _HEADING.match(raw)
            if heading is not None:
                title = re.sub(r"[*_`]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.group(1)).strip()
                if title:
                    # A heading names the repository as often as the paper: offered, not used (the
                    # title stays a TODO that rra build's fill decision settles).
                    found.append(Finding("paper.title", title, name, number,
                                         "not used: the README's first heading, which may name the repository "
                                         "rather than the paper; confirm the title"))
                break


def detect_paper(repo: RawRepo, problems: list[Finding]) -> tuple[dict[str, Any], list[Finding]]:
    """The ``paper`` fields found (possibly none) and where each came from."""
    paper: dict[str, Any] = {}
    found: list[Finding] = []
    cff = read_yaml(repo, "CITATION.cff", problems) if repo.has("CITATION.cff") else None
    if cff is not None:
        _citation(cff, paper, found)
    elif repo.has("codemeta.json"):
        _codemeta(repo, paper, found)
    _readme_metadata(repo, paper, found)
    _readme_links(repo, paper, found)
    return paper, found
