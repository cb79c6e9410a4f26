"""Least-squares line fit on synthetic data (the upstream code of 'Fitting Lines', 2024)."""
import argparse
import json
import math
import os
import random

parser = argparse.ArgumentParser()
parser.add_argument("--train-fraction", type=float, default=0.75)
parser.add_argument("--out", default="results")
args = parser.parse_args()

rng = random.Random(7)
points = [(x, 3.0 * x + 2.0 + rng.gauss(0, 1.0)) for x in (rng.uniform(0, 10) for _ in range(200))]
cut = int(len(points) * args.train_fraction)
train, test = points[:cut], points[cut:]
mx = sum(x for x, _ in train) / len(train)
my = sum(y for _, y in train) / len(train)
slope = sum((x - mx) * (y - my) for x, y in train) / sum((x - mx) ** 2 for x, _ in train)
intercept = my - slope * mx
rmse = math.sqrt(sum((y - (slope * x + intercept)) ** 2 for x, y in test) / len(test))
os.makedirs(args.out, exist_ok=True)
with open(os.path.join(args.out, "metrics.json"), "w") as handle:
    json.dump({"slope": slope, "intercept": intercept, "test": {"rmse": rmse, "n": len(test)}}, handle, indent=1)
print(f"test RMSE {rmse:.4f} on {len(test)} points")
