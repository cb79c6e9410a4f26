"""Whether a launcher's program draws random numbers that no seed fixes: read from what its script
(and the repository's modules it imports) calls, with :mod:`ast`, never by running it.

A launcher passed no seed is not thereby deterministic. Three verdicts, each with its reason and
the ``file:line`` of the calls it rests on:

- **unseeded**: a random call whose generator nothing seeds: ``np.random.rand`` (and the other
  functions of numpy's global generator) with no ``np.random.seed(...)``, ``random.shuffle`` (...)
  with no ``random.seed(...)``, ``torch.randn``/``randperm``/a layer's random initialisation/a
  ``DataLoader(shuffle=True)`` with no ``torch.manual_seed(...)``, a scikit-learn estimator or
  splitter (``RandomForestClassifier``, ``train_test_split``, ``KFold(shuffle=True)``, ...) given no
  ``random_state`` while numpy's global generator is unseeded, and a generator made from the
  operating system's entropy (``np.random.default_rng()``, ``random.Random()``, ``SystemRandom``);
- **seeded**: random calls, every generator seeded; by constants only (``np.random.seed(0)``,
  ``default_rng(42)``, ``random_state=0``, a module-level ``SEED = 0``), or by a value the program
  computes (``np.random.seed(args.seed)``, ``random.Random(params["seed"])``);
- **none**: no random call found.

A seeding call counts wherever it is in the files read (static reading cannot tell whether it
runs before the draws); ``seed_everything``/``set_seed`` of Lightning, transformers and accelerate
seed numpy, ``random`` and torch together.
"""

from __future__ import annotations

import ast
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from .findings import Finding
from .repo import RawRepo

__all__ = ["UNSEEDED_REPEATS", "Call", "Randomness", "read_randomness", "script_of", "settle_stochastic"]

#: Files followed from the script through the repository's own imports, at most.
MAX_FILES = 50

_NUMPY_DRAWS = frozenset({
    "rand", "randn", "randint", "random", "random_sample", "random_integers", "ranf", "sample", "choice",
    "shuffle", "permutation", "normal", "uniform", "binomial", "poisson", "beta", "gamma", "exponential",
    "multivariate_normal", "standard_normal", "dirichlet", "bytes", "lognormal", "laplace", "logistic",
    "geometric", "hypergeometric", "multinomial", "negative_binomial", "chisquare", "gumbel", "pareto", "power",
    "rayleigh", "triangular", "vonmises", "wald", "weibull", "zipf", "standard_cauchy", "standard_exponential",
    "standard_gamma", "standard_t", "noncentral_chisquare", "noncentral_f", "f"})
_PY_DRAWS = frozenset({
    "random", "randint", "randrange", "choice", "choices", "shuffle", "sample", "uniform", "gauss",
    "normalvariate", "triangular", "betavariate", "expovariate", "gammavariate", "lognormvariate",
    "vonmisesvariate", "paretovariate", "weibullvariate", "getrandbits", "randbytes", "binomialvariate"})
_TORCH_DRAWS = frozenset({
    "torch.rand", "torch.randn", "torch.randint", "torch.randperm", "torch.rand_like", "torch.randn_like",
    "torch.randint_like", "torch.normal", "torch.bernoulli", "torch.multinomial", "torch.poisson",
    "torch.utils.data.random_split"})
#: torch layers whose weights are drawn at random when built (or, for dropout, when run).
_TORCH_LAYERS = re.compile(r"torch\.nn\.(Linear|Bilinear|Conv[123]d|ConvTranspose[123]d|LSTM|GRU|RNN|LSTMCell|"
                           r"GRUCell|RNNCell|Embedding|EmbeddingBag|MultiheadAttention|Transformer\w*|Dropout\w*)")
_TORCH_SEEDS = frozenset({"torch.manual_seed", "torch.cuda.manual_seed", "torch.cuda.manual_seed_all",
                          "torch.random.manual_seed"})
#: scikit-learn names that draw from their ``random_state`` (numpy's global generator when None).
_SKLEARN_RANDOM = frozenset({
    "RandomForestClassifier", "RandomForestRegressor", "ExtraTreesClassifier", "ExtraTreesRegressor",
    "GradientBoostingClassifier", "GradientBoostingRegressor", "HistGradientBoostingClassifier",
    "HistGradientBoostingRegressor", "DecisionTreeClassifier", "DecisionTreeRegressor", "ExtraTreeClassifier",
    "ExtraTreeRegressor", "BaggingClassifier", "BaggingRegressor", "AdaBoostClassifier", "AdaBoostRegressor",
    "IsolationForest", "RandomTreesEmbedding", "KMeans", "MiniBatchKMeans", "BisectingKMeans", "SpectralClustering",
    "MLPClassifier", "MLPRegressor", "SGDClassifier", "SGDRegressor", "Perceptron", "PassiveAggressiveClassifier",
    "TSNE", "TruncatedSVD", "GaussianMixture", "BayesianGaussianMixture", "train_test_split", "ShuffleSplit",
    "StratifiedShuffleSplit", "GroupShuffleSplit", "RepeatedKFold", "RepeatedStratifiedKFold",
    "permutation_importance", "RandomizedSearchCV", "make_classification", "make_regression", "make_blobs",
    "make_moons", "make_circles", "shuffle", "resample", "GaussianRandomProjection", "SparseRandomProjection"})
#: scikit-learn splitters that draw only with ``shuffle=True``.
_SKLEARN_SHUFFLE = frozenset({"KFold", "StratifiedKFold", "GroupKFold", "StratifiedGroupKFold"})
_SEED_ALL = re.compile(r"(pytorch_lightning|lightning(\.\w+)*|transformers|accelerate\.utils|lightning_fabric\w*)"
                       r"\.(seed_everything|set_seed)")


@dataclass(frozen=True)
class Call:
    """One random or seeding call: what it calls (dotted, imports resolved), where, and how."""

    name: str
    file: str
    line: int
    #: For a seeding call: whether its seed is a constant (``None`` for a random call).
    constant: bool | None = None

    @property
    def shown(self) -> str:
        """``name at file:line``."""
        return f"{self.name} at {self.file}:{self.line}"


@dataclass
class Randomness:
    """What a script draws and seeds, and the verdict."""

    script: str
    #: Files read: the script and the repository modules it imports (transitively), in order.
    files: list[str] = field(default_factory=list)
    #: Random calls that nothing seeds.
    unseeded: list[Call] = field(default_factory=list)
    #: Random calls whose generator is seeded.
    seeded: list[Call] = field(default_factory=list)
    #: Seeding calls (and calls given their own seed, such as ``random_state=0``).
    seeds: list[Call] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """``unseeded``, ``constant`` (seeded by constants only), ``computed`` or ``none``."""
        if self.unseeded:
            return "unseeded"
        if self.seeds:
            return "constant" if all(call.constant for call in self.seeds) else "computed"
        return "none"


def script_of(argv: list[str], console_scripts: dict[str, tuple[str, str, int]], repo: RawRepo) -> str | None:
    """The repository's Python file a command runs: ``python x.py``, ``python -m pkg.mod``, or a
    console script of the repository's package; ``None`` for anything else."""
    if not argv:
        return None
    if re.fullmatch(r"python[0-9.]*", posixpath.basename(argv[0])) and len(argv) >= 2:
        if argv[1].endswith(".py"):
            path = posixpath.normpath(argv[1])
            return path if repo.has(path) else None
        if argv[1] == "-m" and len(argv) >= 3:
            return _module_file(repo, argv[2], ("", "src"), main=True)
        return None
    target = console_scripts.get(argv[0])
    if target is not None:
        return _module_file(repo, target[0].split(":", 1)[0].strip(), ("", "src"))
    return None


def _module_file(repo: RawRepo, module: str, bases: tuple[str, ...], main: bool = False) -> str | None:
    path = module.replace(".", "/")
    for base in bases:
        stem = posixpath.join(base, path) if base else path
        for candidate in ((f"{stem}/__main__.py",) if main else ()) + (f"{stem}.py", f"{stem}/__init__.py"):
            if repo.has(candidate):
                return candidate
    return None


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> dotted name it was imported as (``np`` -> ``numpy``, ``rand`` -> ``numpy.random.rand``)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    top = alias.name.split(".", 1)[0]
                    names[top] = top
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _dotted(node: ast.expr, aliases: dict[str, str]) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None  # a local object (rng.normal on a seeded generator, self.layer, ...)
    return ".".join([aliases[node.id], *reversed(parts)])


def _constants(tree: ast.Module) -> set[str]:
    """Module-level names bound once to an integer constant (``SEED = 0``)."""
    bound: dict[str, int] = {}
    constant: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound[target.id] = bound.get(target.id, 0) + 1
                    if isinstance(node.value, ast.Constant) and isinstance(node.value.value, int):
                        constant.add(target.id)
    return {name for name in constant if bound[name] == 1}


def _is_constant(node: ast.expr, constants: set[str]) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return (isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool)) \
        or (isinstance(node, ast.Name) and node.id in constants)


def _with(dotted: str, arg: ast.expr, keyword: str = "") -> str:
    """``dotted(arg)`` as the source writes the argument (cut to 40 characters)."""
    text = ast.unparse(arg)
    return f"{dotted}({keyword}{text if len(text) <= 40 else text[:37] + '...'})"


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


#: Where a seed computed from them comes from: the clock or the operating system's entropy.
_ENTROPY = re.compile(r"(time\.(time|time_ns|perf_counter|perf_counter_ns|monotonic)|os\.(urandom|getpid)|"
                      r"secrets\.\w+|uuid\.uuid[14]|datetime\.datetime\.now|random\.\w+|numpy\.random\.\w+|"
                      r"torch\.(rand|randn|randint|seed|initial_seed))")


def _from_entropy(node: ast.expr, aliases: dict[str, str]) -> bool:
    """Whether a seed expression draws on a random number, the clock or the process id: a seed
    that is different on every run fixes nothing."""
    return any(isinstance(inner, ast.Call) and (dotted := _dotted(inner.func, aliases)) is not None
               and _ENTROPY.fullmatch(dotted) is not None for inner in ast.walk(node))


def _is_none(node: ast.expr | None) -> bool:
    return node is None or (isinstance(node, ast.Constant) and node.value is None)


def _imported_files(repo: RawRepo, name: str, tree: ast.Module) -> list[str]:
    """The repository files ``name``'s imports name (modules and the packages holding them)."""
    here = posixpath.dirname(name)
    found: list[str] = []
    for node in ast.walk(tree):
        modules: list[tuple[str, tuple[str, ...]]] = []
        if isinstance(node, ast.Import):
            modules = [(alias.name, (here, "", "src")) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here
                for _ in range(node.level - 1):
                    base = posixpath.dirname(base)
                bases: tuple[str, ...] = (base,)
            else:
                bases = (here, "", "src")
            prefix = node.module or ""
            modules = [(prefix, bases)] if prefix else []
            modules += [(f"{prefix}.{alias.name}" if prefix else alias.name, bases) for alias in node.names]
        for module, where in modules:
            parts = module.split(".")
            for depth in range(1, len(parts) + 1):
                file = _module_file(repo, ".".join(parts[:depth]), where)
                if file is not None and file not in found:
                    found.append(file)
    return found


def _read(name: str, tree: ast.Module, out: Randomness, families: dict[str, list[Call]]) -> None:
    aliases = _aliases(tree)
    if not aliases:
        return
    constants = _constants(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        dotted = _dotted(node.func, aliases)
        if dotted is None:
            continue
        line = node.lineno
        arg = node.args[0] if node.args else _keyword(node, "seed")
        last = dotted.rsplit(".", 1)[-1]
        if arg is not None and not _is_none(arg) and _from_entropy(arg, aliases) and (
                dotted in ("numpy.random.seed", "random.seed", "numpy.random.default_rng", "numpy.random.RandomState",
                           "random.Random") or dotted in _TORCH_SEEDS or _SEED_ALL.fullmatch(dotted)):
            out.unseeded.append(Call(_with(dotted, arg) + " (a seed drawn at run time)", name, line))
        elif dotted == "numpy.random.seed" or dotted == "random.seed" or dotted in _TORCH_SEEDS:
            if not _is_none(arg):
                assert arg is not None
                family = "numpy" if dotted.startswith("numpy") else "random" if dotted == "random.seed" else "torch"
                out.seeds.append(Call(_with(dotted, arg), name, line, _is_constant(arg, constants)))
                families.setdefault(family + ":seed", [])
        elif _SEED_ALL.fullmatch(dotted):
            if not _is_none(arg):
                assert arg is not None
                out.seeds.append(Call(_with(dotted, arg), name, line, _is_constant(arg, constants)))
                for family in ("numpy", "random", "torch"):
                    families.setdefault(family + ":seed", [])
        elif dotted in ("numpy.random.default_rng", "numpy.random.RandomState", "random.Random",
                        "numpy.random.PCG64", "numpy.random.MT19937"):
            # A generator of its own: seeded by its argument, else by the operating system's entropy.
            if _is_none(arg):
                out.unseeded.append(Call(dotted + "()", name, line))
            else:
                assert arg is not None
                out.seeds.append(Call(_with(dotted, arg), name, line, _is_constant(arg, constants)))
        elif dotted in ("random.SystemRandom", "secrets.randbelow", "secrets.choice", "os.urandom"):
            out.unseeded.append(Call(dotted, name, line))
        elif dotted.startswith("numpy.random.") and last in _NUMPY_DRAWS and dotted.count(".") == 2:
            families.setdefault("numpy", []).append(Call(dotted, name, line))
        elif dotted.startswith("random.") and last in _PY_DRAWS and dotted.count(".") == 1:
            families.setdefault("random", []).append(Call(dotted, name, line))
        elif dotted in _TORCH_DRAWS or _TORCH_LAYERS.fullmatch(dotted):
            families.setdefault("torch", []).append(Call(dotted, name, line))
        elif dotted in ("torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"):
            shuffle = _keyword(node, "shuffle")
            if isinstance(shuffle, ast.Constant) and shuffle.value is True or (
                    shuffle is not None and not isinstance(shuffle, ast.Constant)):
                families.setdefault("torch", []).append(Call(dotted + "(shuffle=True)", name, line))
        elif dotted.startswith("sklearn.") and (last in _SKLEARN_RANDOM or last in _SKLEARN_SHUFFLE):
            if last in _SKLEARN_SHUFFLE:
                shuffle = _keyword(node, "shuffle")
                if shuffle is None or (isinstance(shuffle, ast.Constant) and shuffle.value is not True):
                    continue
            state = _keyword(node, "random_state")
            if _is_none(state):
                # random_state=None draws from numpy's global generator.
                families.setdefault("numpy", []).append(Call(f"{dotted} (no random_state)", name, line))
            else:
                assert state is not None
                out.seeds.append(Call(_with(dotted, state, "random_state="), name, line, _is_constant(state, constants)))


def read_randomness(repo: RawRepo, script: str) -> Randomness:
    """The random and seeding calls of ``script`` and the repository modules it imports."""
    out = Randomness(script)
    families: dict[str, list[Call]] = {}
    queue = [script]
    while queue and len(out.files) < MAX_FILES:
        name = queue.pop(0)
        if name in out.files:
            continue
        out.files.append(name)
        tree = repo.tree(name)
        if tree is None:
            continue
        _read(name, tree, out, families)
        queue.extend(f for f in _imported_files(repo, name, tree) if f not in out.files)
    for family in ("numpy", "random", "torch"):
        calls = families.get(family, [])
        (out.seeded if family + ":seed" in families else out.unseeded).extend(calls)
    out.unseeded.sort(key=lambda call: (out.files.index(call.file), call.line))
    return out


#: Repeats drafted for a launcher whose draws no seed fixes: the fewest runs whose spread says
#: anything, and the three observations a claim needs for *reproduced* (RRA502).
UNSEEDED_REPEATS = 3
#: The line of "assumed" that says why a launcher was drafted ``stochastic: false`` (launchers.py).
_ASSUMED = re.compile(r"launcher (\S+) stochastic: false\b")


def settle_stochastic(repo: RawRepo, launchers: list[dict[str, Any]], console_scripts: dict[str, tuple[str, str, int]],
                      assumed: list[str], findings: list[Finding]) -> None:
    """Decide, for each launcher drafted ``stochastic: false`` (it is passed no seed), from what
    its program calls: the reason is added to its line in ``assumed``, and each unseeded random
    call is a finding.

    A program whose draws no seed fixes stays seedless (``stochastic: false``: the spec's
    launcher that reads no seed, whose seeds would change nothing and must not be invented), and
    gets ``repeats`` so that a full reproduction measures how much its results vary; to fix them,
    the author makes it read a seed (a change record) and declares seeds."""
    # Each launcher's line, found once (a repository of thousands of scripts has thousands of lines).
    lines: dict[str, int] = {}
    for number, text in enumerate(assumed):
        said = _ASSUMED.match(text)
        if said is not None:
            lines.setdefault(said.group(1), number)
    for launcher in launchers:
        if launcher.get("seeds"):
            _seeded_launcher(repo, launcher, console_scripts, assumed, findings)
            continue
        if launcher.get("stochastic") is not False:
            continue
        script = script_of([str(a) for a in launcher.get("argv") or []], console_scripts, repo)
        if script is None:
            continue
        ident = launcher["id"]
        prefix = f"launcher {ident} stochastic: false"
        index = lines.get(ident)
        old = assumed[index] if index is not None else prefix + ": it is passed no seed"
        found = read_randomness(repo, script)
        read = script if len(found.files) == 1 else f"{script} and the {len(found.files) - 1} module(s) it imports"
        verdict = found.verdict
        if verdict == "unseeded":
            launcher["repeats"] = UNSEEDED_REPEATS
            shown = ", ".join(call.shown for call in found.unseeded[:3]) + (
                f" and {len(found.unseeded) - 3} more" if len(found.unseeded) > 3 else "")
            line = (f"launcher {ident} stochastic: false, repeats: {UNSEEDED_REPEATS}: it reads no seed, yet its code "
                    f"({read}) draws random numbers that nothing seeds ({shown}): its results vary from run to run, and "
                    f"{UNSEEDED_REPEATS} repeats measure by how much; no seed is invented (it would change nothing). "
                    "To fix the numbers, make it read a seed (rra change record) and declare seeds")
            for call in found.unseeded:
                findings.append(Finding("random-unseeded", call.name, call.file, call.line,
                                        f"launcher {ident}: no seed fixes it; drafted with repeats: {UNSEEDED_REPEATS}"))
        elif verdict == "none":
            line = f"{old}; no random calls found in {read}"
        else:
            seeds = ", ".join(call.shown for call in found.seeds[:3])
            line = (f"{old}; every random call of {read} is seeded by a constant ({seeds}): each run draws the same "
                    "numbers" if verdict == "constant" else
                    f"{old}; the random calls of {read} are seeded from a value the program computes ({seeds}), not "
                    "from a seed rra passes")
            findings.extend(Finding("random-seeded", call.name, call.file, call.line, f"launcher {ident}"
                                    + ("" if call.constant else "; the seed is computed, not a constant"))
                            for call in found.seeds)
        if index is None:
            assumed.append(line)
        else:
            assumed[index] = line


def _seeded_launcher(repo: RawRepo, launcher: dict[str, Any], console_scripts: dict[str, tuple[str, str, int]],
                     assumed: list[str], findings: list[Finding]) -> None:
    """A launcher passed a seed whose program also draws what no seed fixes (the seed reaches numpy,
    torch is left unseeded): the same seed then gives different numbers. Said, not changed: the
    launcher stays stochastic with its seeds, and the fix is the program's (a change record)."""
    script = script_of([str(a) for a in launcher.get("argv") or []], console_scripts, repo)
    if script is None:
        return
    found = read_randomness(repo, script)
    if not found.unseeded:
        return
    ident = launcher["id"]
    for call in found.unseeded:
        findings.append(Finding("random-unseeded", call.name, call.file, call.line,
                                f"launcher {ident} is passed a seed, which does not reach this draw"))
    shown = ", ".join(call.shown for call in found.unseeded[:3]) + (
        f" and {len(found.unseeded) - 3} more" if len(found.unseeded) > 3 else "")
    assumed.append(f"launcher {ident} seeds {launcher['seeds']}: the seed does not reach every draw ({shown}): one "
                   "seed may give different numbers on two runs; seed those draws from it (rra change record)")
