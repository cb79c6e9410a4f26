"""The packages a repository's Python code imports: a source of requirements when no file declares
them, and a check of the one that does (a package imported but not required fails the run).

Every ``.py`` file git lists is parsed with :mod:`ast` (never run) and its ``import x`` and ``from
x import y`` statements read, wherever they are (a function's imports count: the run reaches them
too). Left out:

- the standard library (:data:`sys.stdlib_module_names`) and relative imports;
- the repository's own modules: top-level ``.py`` files and directories holding ``.py`` files (at
  the root and under ``src/``), and the modules beside the importing file (a script's directory is
  on ``sys.path`` when it runs);
- imports under ``if TYPE_CHECKING:`` (never run), and those of tests, docs, ``setup.py``,
  ``conftest.py`` and ``noxfile.py`` (what the experiments need, not the tools around them);
- an import inside ``try:`` whose ``except`` catches ``ImportError`` is *optional*: reported, not
  required.

An import name is mapped to the distribution that provides it by a table of the names that
differ (``sklearn`` -> ``scikit-learn``); a name the table does not know is kept as it is and the
caller lists it as assumed ("distribution name = import name").
"""

from __future__ import annotations

import ast
import posixpath
import re
import sys
from dataclasses import dataclass

from .repo import RawRepo

__all__ = ["ALTERNATIVES", "DISTRIBUTIONS", "KNOWN_SAME", "Imported", "distribution_of", "imported_packages"]

#: Import names whose distribution on PyPI has another name.
DISTRIBUTIONS = {
    "sklearn": "scikit-learn", "cv2": "opencv-python", "PIL": "Pillow", "yaml": "PyYAML",
    "skimage": "scikit-image", "Bio": "biopython", "bs4": "beautifulsoup4", "dateutil": "python-dateutil",
    "attr": "attrs", "dotenv": "python-dotenv", "jwt": "PyJWT", "Crypto": "pycryptodome",
    "OpenSSL": "pyOpenSSL", "serial": "pyserial", "magic": "python-magic", "docx": "python-docx",
    "pptx": "python-pptx", "git": "GitPython", "MySQLdb": "mysqlclient", "umap": "umap-learn",
    "igraph": "python-igraph", "Levenshtein": "python-Levenshtein", "faiss": "faiss-cpu", "zmq": "pyzmq",
    "fitz": "PyMuPDF", "OpenGL": "PyOpenGL", "absl": "absl-py", "hydra": "hydra-core", "haiku": "dm-haiku",
    "tree": "dm-tree", "sonnet": "dm-sonnet", "pytorch_lightning": "pytorch-lightning",
    "mpl_toolkits": "matplotlib", "pkg_resources": "setuptools", "community": "python-louvain",
    "osgeo": "GDAL", "tensorflow_datasets": "tensorflow-datasets", "tensorflow_probability":
    "tensorflow-probability", "google.protobuf": "protobuf", "sentence_transformers": "sentence-transformers",
    "gym_minigrid": "gym-minigrid", "Cython": "Cython", "pycocotools": "pycocotools", "lxml": "lxml",
    "jinja2": "Jinja2", "markdown": "Markdown", "ruamel": "ruamel.yaml", "typing_extensions": "typing-extensions",
    "IPython": "ipython", "google.colab": "google-colab", "torch_geometric": "torch-geometric",
}
#: Other distributions that provide the same import as the one :data:`DISTRIBUTIONS` names (a
#: requirements file naming one of them does not miss the package).
ALTERNATIVES = {
    "opencv-python": ("opencv-python-headless", "opencv-contrib-python", "opencv-contrib-python-headless"),
    "tensorflow": ("tensorflow-gpu", "tensorflow-cpu", "tensorflow-macos", "tf-nightly"),
    "faiss-cpu": ("faiss-gpu", "faiss"), "Pillow": ("pillow-simd",), "psycopg2": ("psycopg2-binary",),
    "scikit-learn": ("sklearn",), "PyYAML": ("pyyaml-include",), "pytorch-lightning": ("lightning",),
    "torch": ("pytorch",), "GDAL": ("gdal-utils",), "pycryptodome": ("pycryptodomex", "pycrypto"),
}
#: Import names that are their distribution's name: well known, so not listed as assumed.
KNOWN_SAME = frozenset({
    "numpy", "scipy", "pandas", "matplotlib", "seaborn", "torch", "torchvision", "torchaudio", "tensorflow",
    "keras", "jax", "flax", "optax", "lightgbm", "xgboost", "catboost", "tqdm", "h5py", "networkx", "sympy",
    "statsmodels", "numba", "transformers", "datasets", "tokenizers", "einops", "timm", "wandb", "mlflow",
    "tensorboard", "requests", "click", "rich", "joblib", "imageio", "plotly", "nltk", "spacy", "gensim",
    "xarray", "shapely", "pyproj", "rasterio", "tables", "openpyxl", "pyarrow", "polars", "omegaconf",
    "gym", "gymnasium", "cvxpy", "pymc", "arviz", "emcee", "astropy", "pytest", "packaging", "tabulate",
    "termcolor", "psutil", "pydantic", "accelerate", "lightning", "sentencepiece", "opt_einsum", "pygame",
    "dill", "cloudpickle", "numexpr", "bottleneck", "patsy", "pyro", "gpytorch", "botorch", "optuna",
})
#: Files whose imports are the tools around the experiments, not what they need.
_NOT_RUN = re.compile(r"(^|/)(tests?|docs?)/|(^|/)(setup|conftest|noxfile)\.py$")
_STDLIB = frozenset(sys.stdlib_module_names)
#: Files read at most: a repository with more Python files than this is mostly vendored code.
MAX_FILES = 5000


@dataclass(frozen=True)
class Imported:
    """One package the code imports, where it is first imported (files in path order)."""

    #: The import name (``sklearn``, or ``google.protobuf`` for a namespace the table maps).
    module: str
    #: Its distribution on PyPI.
    distribution: str
    file: str
    line: int
    #: Whether :data:`DISTRIBUTIONS` or :data:`KNOWN_SAME` gives the distribution (else it is assumed).
    known: bool
    #: Whether every import of it is inside ``try: ... except ImportError``.
    optional: bool

    @property
    def where(self) -> str:
        """``file:line``."""
        return f"{self.file}:{self.line}"


def _own_names(files: list[str]) -> dict[str, set[str]]:
    """Directory -> the module names a ``.py`` file there (or a directory of ``.py`` files) gives."""
    names: dict[str, set[str]] = {}
    for name in files:
        if not name.endswith(".py"):
            continue
        parts = name.split("/")
        for depth in range(len(parts)):
            directory = "/".join(parts[:depth])
            stem = parts[depth].removesuffix(".py") if depth == len(parts) - 1 else parts[depth]
            names.setdefault(directory, set()).add(stem)
    return names


def _catches_import_error(handlers: list[ast.ExceptHandler]) -> bool:
    for handler in handlers:
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        for kind in kinds:
            if kind is None or (isinstance(kind, ast.Name) and kind.id in
                                ("ImportError", "ModuleNotFoundError", "Exception", "BaseException")):
                return True
    return False


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(body: list[ast.stmt], optional: bool, found: list[tuple[str, int, bool]]) -> None:
    """(top-level name, line, optional) of the absolute imports in ``body``, recursing into
    compound statements only (an import is a statement: expressions never hold one)."""
    for node in body:
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno, optional) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                found.append((node.module, node.lineno, optional))
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            handlers: list[ast.ExceptHandler] = getattr(node, "handlers", [])
            _imports(getattr(node, "body", []), optional or _catches_import_error(handlers), found)
            for handler in handlers:
                _imports(handler.body, optional, found)
            _imports(getattr(node, "orelse", []), optional, found)
            _imports(getattr(node, "finalbody", []), optional, found)
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                _imports(node.body, optional, found)
            _imports(node.orelse, optional, found)
        else:
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    _imports([n for n in inner if isinstance(n, ast.stmt)], optional, found)
            for case in getattr(node, "cases", []) or []:
                _imports(case.body, optional, found)


def distribution_of(module: str) -> tuple[str, str, bool]:
    """(import name kept, distribution, known) for a dotted module ``module``.

    >>> distribution_of("sklearn.model_selection"), distribution_of("foo.bar")
    (('sklearn', 'scikit-learn', True), ('foo', 'foo', False))
    >>> distribution_of("google.cloud.storage.blob")
    ('google.cloud.storage', 'google-cloud-storage', True)
    """
    top = module.split(".", 1)[0]
    two = ".".join(module.split(".")[:2])
    parts = module.split(".")
    if parts[:2] == ["google", "cloud"] and len(parts) > 2:
        # The google.cloud namespace: one distribution per service, google-cloud-<service>.
        return ".".join(parts[:3]), f"google-cloud-{parts[2].replace('_', '-')}", True
    if two in DISTRIBUTIONS:
        return two, DISTRIBUTIONS[two], True
    if top in DISTRIBUTIONS:
        return top, DISTRIBUTIONS[top], True
    return top, top, top in KNOWN_SAME


#: A line of IPython, not Python: a magic (``%matplotlib inline``, ``%%time``), a shell escape
#: (``!pip install x``), help (``np.mean?``).
_IPYTHON_LINE = re.compile(r"^\s*([%!?]|.*\?\s*$)")


def notebook_code(text: str) -> tuple[ast.Module | None, list[int]]:
    """The code cells of a Jupyter notebook's JSON ``text`` parsed as one module (never run; IPython
    lines left out, line numbers kept), and, for each line of that code, the line of ``text``
    that holds it (nbformat writes each source line as its own JSON string); (None, []) for a
    notebook that cannot be read."""
    import json

    try:
        cells = json.loads(text).get("cells")
    except (ValueError, AttributeError, RecursionError):
        return None, []
    if not isinstance(cells, list):
        return None, []
    raw = text.splitlines()
    body: list[ast.stmt] = []
    where: list[int] = []
    cursor = 0
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        if not isinstance(source, str):
            continue
        code: list[str] = []
        for line in source.splitlines():
            quoted = json.dumps(line)[1:-1]
            found = next((i for i in range(cursor, min(len(raw), cursor + 400))
                         if quoted and quoted in raw[i]), None)
            if found is not None:
                cursor = found
            where.append(cursor + 1)
            code.append("" if _IPYTHON_LINE.match(line) else line)
        # Cell by cell: one cell that is not Python (a syntax error, cell magic's body) leaves the
        # others' imports readable.
        try:
            tree = ast.parse("\n".join(code) + "\n")
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        body.extend(ast.increment_lineno(tree, len(where) - len(code)).body)
    return ast.Module(body=body, type_ignores=[]), where


def imported_packages(repo: RawRepo) -> list[Imported]:
    """The third-party packages the repository's code imports, each once (its first import, files
    in path order), in that order."""
    own = _own_names(repo.files)
    top_level = own.get("", set()) | own.get("src", set())
    first: dict[str, Imported] = {}
    required: set[str] = set()
    scanned = 0
    for name in repo.files:
        if not name.endswith((".py", ".ipynb")) or _NOT_RUN.search(name) or ".ipynb_checkpoints/" in name:
            continue
        text = repo.text(name)
        if text is None or "import" not in text:
            continue
        scanned += 1
        if scanned > MAX_FILES:
            break
        lines: list[int] | None = None
        if name.endswith(".ipynb"):
            tree, lines = notebook_code(text)
        else:
            tree = repo.tree(name)
        if tree is None:
            continue
        found: list[tuple[str, int, bool]] = []
        _imports(tree.body, False, found)
        if lines is not None:  # a notebook's code line -> the line of the notebook file that holds it
            found = [(module, lines[line - 1] if 0 < line <= len(lines) else 1, optional)
                     for module, line, optional in found]
        local = top_level | own.get(posixpath.dirname(name), set())
        for module, line, optional in found:
            top = module.split(".", 1)[0]
            if top in _STDLIB or top in local or top == "__main__" or not top.isidentifier():
                continue
            kept, distribution, known = distribution_of(module)
            if not optional:
                required.add(kept)
            if kept not in first:
                first[kept] = Imported(kept, distribution, name, line, known, optional)
    # Optional only where no import of it is required.
    return [item if item.module not in required or not item.optional else
            Imported(item.module, item.distribution, item.file, item.line, item.known, False)
            for item in first.values()]
