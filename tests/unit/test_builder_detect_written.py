"""What a script writes and whether it is a script, read with ``ast`` (rra_tools.builder.detect
.outputs and .scripts), the candidates and questions drawn from what it writes, and the
launcher a README command gives (.readme_launchers)."""

from __future__ import annotations

import ast
from pathlib import Path

from rra_tools.builder.detect.argparse_static import Option
from rra_tools.builder.detect.claims_written import written_candidates
from rra_tools.builder.detect.findings import Finding
from rra_tools.builder.detect.launchers import readme_commands
from rra_tools.builder.detect.outputs import Written, declare_outputs, written_files
from rra_tools.builder.detect.readme_launchers import readme_launchers
from rra_tools.builder.detect.repo import RawRepo
from rra_tools.builder.detect.scripts import first_work

WRITES = '''
import csv, json, os, pickle, sys
import numpy as np
import pandas as pd
import matplotlib.pyplot as plt
import torch
OUT = "results"
df = pd.DataFrame({"model": names, "accuracy": accs, "f1": f1s})
df.to_csv("results.csv", index=False)
pd.DataFrame(rows, columns=["dataset", "rmse"]).to_csv(os.path.join(OUT, "table.csv"))
plt.savefig("fig1.png")
fig.savefig(f"figures/{name}.pdf")
plt.savefig(f"fig_{name}.png")
np.save("weights", w)
json.dump({"acc": acc, "model": "x"}, open("metrics.json", "w"))
with open("r2.json", "w") as f:
    json.dump(summary, f)
summary = {"rmse": r, "mae": m}
torch.save(model.state_dict(), "model.pt")
pickle.dump(obj, open("obj.pkl", "wb"))
with open("scores.csv", "w", newline="") as g:
    w = csv.writer(g)
    w.writerow(["seed", "loss"])
    w.writerow([1, 2])
with open("data.csv") as r:
    pass
np.save(sys.argv[1], x)
model.save("keras.h5")
'''


def test_written_files_reads_literal_paths_directories_and_fields() -> None:
    found = [(w.path, w.kind, w.line, w.call, w.directory, w.fields) for w in written_files(ast.parse(WRITES))]
    assert found == [
        ("results.csv", "csv", 9, "df.to_csv", False, ["model", "accuracy", "f1"]),
        ("results/table.csv", "csv", 10, "to_csv", False, ["dataset", "rmse"]),
        ("fig1.png", "figure", 11, "plt.savefig", False, None),
        ("figures", "figure", 12, "fig.savefig", True, None),
        (None, "figure", 13, "plt.savefig", False, None),  # only made at run time: no guess
        ("weights.npy", "array", 14, "np.save", False, None),  # np.save adds the suffix
        ("metrics.json", "json", 15, "json.dump", False, ["acc"]),  # a text value is not a metric
        ("r2.json", "json", 17, "json.dump", False, ["rmse", "mae"]),
        ("model.pt", "binary", 19, "torch.save", False, None),
        ("obj.pkl", "binary", 20, "pickle.dump", False, None),
        ("scores.csv", "csv", 21, "csv.writer", False, ["seed", "loss"]),
        (None, "array", 27, "np.save", False, None)]


def test_declare_outputs_skips_what_is_declared_and_reports_run_time_paths() -> None:
    launcher = {"id": "train", "argv": ["python", "train.py"],
                "outputs": [{"id": "results", "path": "results", "format": "directory"}]}
    written = [Written("results/a.csv", "csv", 3, "df.to_csv"), Written("fig.png", "figure", 4, "plt.savefig"),
               Written("fig.png", "figure", 5, "plt.savefig"), Written(None, "array", 6, "np.save",
                                                                        why="a path made at run time")]
    findings = declare_outputs(launcher, "train.py", written)
    assert launcher["outputs"] == [{"id": "results", "path": "results", "format": "directory"},
                                   {"id": "fig", "path": "fig.png", "format": "binary"}]
    assert [(f.value, f.where, f.note) for f in findings] == [
        ("train: results/a.csv", "train.py:3", "df.to_csv writes it; already declared"),
        ("train: fig.png (binary)", "train.py:4", "plt.savefig writes it"),
        ("train: fig.png", "train.py:5", "plt.savefig writes it; already declared"),
        ("train: not declared", "train.py:6", "np.save writes to a path made at run time: declare it by hand if a "
                                              "run writes it")]


def test_first_work_skips_definitions_and_set_up() -> None:
    def line(text: str) -> int | None:
        found = first_work(ast.parse(text))
        return found.lineno if found is not None else None

    assert line("import sys\nsys.path.append('..')\nX = f()\n\n\ndef g():\n    print(1)\n") is None
    assert line("import numpy as np\nnp.random.seed(0)\nprint(np.zeros(2))\n") == 3
    assert line("def main():\n    pass\n\n\nmain()\n") == 5
    assert line("for i in range(3):\n    pass\n") == 1
    assert line("if __name__ == '__main__':\n    main()\n") is None  # a guarded script, found elsewhere
    assert line("try:\n    import torch\nexcept ImportError:\n    torch = None\n") is None
    assert line("if FAST:\n    run()\n") == 2


def test_candidates_and_questions() -> None:
    written = {
        "a.py": [Written("r.csv", "csv", 3, "df.to_csv", fields=["method", "accuracy", "seed"]),
                 Written("fig.png", "figure", 4, "plt.savefig")],
        "b.py": [Written("fig.png", "figure", 7, "plt.savefig"), Written("m.json", "json", 8, "json.dump")],
        "c.py": [Written("curve.png", "figure", 2, "plt.savefig")],
    }
    candidates, questions = written_candidates(written, printing={"c.py"})
    # The columns naming a row (a method, a seed) are not metrics; a.py gives a candidate, so its
    # figure is no question; c.py prints a metric.
    assert [(c.value, c.where, c.parts) for c in candidates] == [
        ("r.csv csv column accuracy", "a.py:3", ("file", "accuracy", "r.csv", "csv", "accuracy"))]
    assert [f"{q.value} ({q.where}): {q.note}" for q in questions] == [
        "results only as a figure fig.png (b.py:7): no claim can be read from it; add one",
        "results in m.json, whose keys are made at run time (b.py:8): no claim can be read from it; add one"]


def _readme(command: str, options: list[Option]) -> tuple[list[str], dict[str, object]]:
    repo = RawRepo(root=Path("."), files=["train.py"])
    found = [Finding("readme-command", command, "README.md", 7)]
    drafted, notes = readme_launchers(repo, found, {"train.py": options}, set(), lambda name: name)
    assert notes == []
    [one] = drafted
    return one.launcher["argv"], one.launcher.get("parameters", {})


def test_readme_values_become_parameters_and_other_options_follow() -> None:
    options = [Option("--lr", "lr", "float", 0.1, True, False, None, False, 3),
               Option("--epochs", "epochs", "int", 10, True, False, None, False, 4)]
    assert _readme("python train.py --lr 0.5", options) == (
        ["python", "train.py", "--lr", "{lr}", "--epochs", "{epochs}"],
        {"lr": {"type": "float", "default": 0.5}, "epochs": {"type": "int", "default": 10}})
    # '--lr=0.5' passes --lr already: it is not passed a second time (the last would win).
    assert _readme("python train.py --lr=0.5", options) == (
        ["python", "train.py", "--lr=0.5", "--epochs", "{epochs}"], {"epochs": {"type": "int", "default": 10}})
    # A short or unknown option may be one of the declared ones: the command is kept as written.
    assert _readme("python train.py -e 5", options) == (["python", "train.py", "-e", "5"], {})
    assert _readme("python train.py --num-epochs 5 --lr 0.5", options) == (
        ["python", "train.py", "--num-epochs", "5", "--lr", "{lr}"], {"lr": {"type": "float", "default": 0.5}})


def test_a_figure_only_shown_is_a_question_not_an_output() -> None:
    shown = written_files(ast.parse("import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()\n"))
    assert [(w.path, w.kind, w.line, w.call) for w in shown] == [(None, "shown", 3, "plt.show")]
    launcher: dict[str, object] = {"id": "fig", "argv": ["python", "fig.py"]}
    assert declare_outputs(launcher, "fig.py", shown) == [] and "outputs" not in launcher
    _, questions = written_candidates({"fig.py": shown}, printing=set())
    assert [f"{q.value} ({q.where}): {q.note}" for q in questions] == [
        "results only as a figure shown on screen (plt.show, no file) (fig.py:3): no claim can be read from it; "
        "add one"]
    # Saved too: the saved file is the question, not the window.
    both = written_files(ast.parse("import matplotlib.pyplot as plt\nplt.savefig('a.png')\nplt.show()\n"))
    assert [(w.path, w.kind) for w in both] == [("a.png", "figure")]


def test_leading_assignments_of_a_readme_command_are_the_launchers_environment() -> None:
    [command] = readme_commands("README.md", "```bash\nCUDA_VISIBLE_DEVICES=0 OMP_NUM_THREADS=4 python train.py\n```\n")
    assert (command.value, command.where) == ("CUDA_VISIBLE_DEVICES=0 OMP_NUM_THREADS=4 python train.py",
                                              "README.md:2")
    repo = RawRepo(root=Path("."), files=["train.py"])
    [drafted], _ = readme_launchers(repo, [command], {}, set(), lambda name: name)
    assert (drafted.launcher["argv"], drafted.launcher["env"]) == (
        ["python", "train.py"], {"CUDA_VISIBLE_DEVICES": "0", "OMP_NUM_THREADS": "4"})
