"""Fit a small linear model by gradient descent and print its test RMSE, as many research
scripts do: progress and the result go to standard output, and no metrics file is written."""

import argparse
import math
import random

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, required=True)
parser.add_argument("--epochs", type=int, default=40)
args = parser.parse_args()

rng = random.Random(args.seed)
xs = [rng.uniform(-2, 2) for _ in range(200)]
ys = [1.5 * x - 0.3 + rng.gauss(0, 0.8) for x in xs]
train, test = list(zip(xs, ys))[:150], list(zip(xs, ys))[150:]
w = b = 0.0
for epoch in range(1, args.epochs + 1):
    gw = sum((w * x + b - y) * x for x, y in train) / len(train)
    gb = sum(w * x + b - y for x, y in train) / len(train)
    w, b = w - 0.1 * gw, b - 0.1 * gb
    if epoch % 10 == 0:
        loss = sum((w * x + b - y) ** 2 for x, y in train) / len(train)
        print(f"epoch {epoch:3d}  train loss {loss:.4f}")
rmse = math.sqrt(sum((w * x + b - y) ** 2 for x, y in test) / len(test))
print(f"RMSE: {rmse:.4f}")
