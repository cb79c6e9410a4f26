"""Monte Carlo estimate of pi (the upstream code of 'Counting Darts', 2022)."""
import argparse
import json
import os
import random

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, required=True)
parser.add_argument("--samples", type=int, default=20000)
args = parser.parse_args()
rng = random.Random(args.seed)
inside = sum(rng.random() ** 2 + rng.random() ** 2 <= 1.0 for _ in range(args.samples))
estimate = 4.0 * inside / args.samples
os.makedirs("results", exist_ok=True)
with open(f"results/seed-{args.seed}.json", "w") as handle:
    json.dump({"pi": estimate, "samples": args.samples, "seed": args.seed}, handle, indent=1)
print(f"pi ~ {estimate:.4f} from {args.samples} samples (seed {args.seed})")
