"""Logistic regression on scikit-learn's bundled digits dataset (no download, CPU, seconds).

Usage: python train.py --seed 0 --C 1.0 --out results/seed-0

The seed drives the stratified train/test split and the solver's random state. The script
writes OUT/metrics.json ({"test": {"accuracy": ...}, "train": {...}, ...}) and prints one
log line with the test accuracy.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

TEST_SIZE = 0.25
MAX_ITER = 2000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, required=True, help="seed of the split and the model")
    parser.add_argument("--C", type=float, default=1.0, help="inverse L2 regularisation strength")
    parser.add_argument("--out", required=True, help="directory for metrics.json")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=TEST_SIZE, random_state=args.seed, stratify=y
    )
    model = make_pipeline(
        StandardScaler(),
        LogisticRegression(C=args.C, max_iter=MAX_ITER, random_state=args.seed),
    )
    model.fit(X_train, y_train)
    train_acc = accuracy_score(y_train, model.predict(X_train))
    test_acc = accuracy_score(y_test, model.predict(X_test))
    elapsed = time.perf_counter() - start

    metrics = {
        "test": {"accuracy": float(test_acc), "n": int(len(y_test))},
        "train": {"accuracy": float(train_acc), "n": int(len(y_train))},
        "config": {"seed": args.seed, "C": args.C, "test_size": TEST_SIZE, "max_iter": MAX_ITER},
        "elapsed_s": round(elapsed, 3),
    }
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "metrics.json")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(metrics, handle, indent=2, sort_keys=True)
        handle.write("\n")
    os.replace(tmp, path)
    print(f"seed={args.seed} C={args.C:g} train_accuracy={train_acc:.6f} "
          f"test_accuracy={test_acc:.6f} elapsed_s={elapsed:.2f} -> {path}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
