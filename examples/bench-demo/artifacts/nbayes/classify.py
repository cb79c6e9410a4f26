"""Multinomial naive Bayes spam filter (the upstream code of 'Filtering Spam Simply', 2023)."""
import json
import math
import os
import random
from collections import Counter

# Repaired (change corpus-path): the published path only exists on the authors' machine.
CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus.txt")


def load(path):
    with open(path, encoding="utf-8") as handle:
        return [line.rstrip("\n").split("\t", 1) for line in handle if line.strip()]


messages = load(CORPUS)
random.Random(11).shuffle(messages)
cut = int(len(messages) * 0.7)
train, test = messages[:cut], messages[cut:]
counts = {"spam": Counter(), "ham": Counter()}
docs = Counter(label for label, _ in train)
for label, text in train:
    counts[label].update(text.split())
vocab = set(counts["spam"]) | set(counts["ham"])


def score(label, words):
    total = sum(counts[label].values()) + len(vocab)
    logp = math.log(docs[label] / len(train))
    return logp + sum(math.log((counts[label][w] + 1) / total) for w in words)


correct = sum(max(("spam", "ham"), key=lambda c: score(c, text.split())) == label for label, text in test)
accuracy = correct / len(test)
os.makedirs("results", exist_ok=True)
with open("results/metrics.json", "w") as handle:
    json.dump({"test": {"accuracy": accuracy, "n": len(test)}}, handle, indent=1)
print(f"test accuracy {accuracy:.4f} on {len(test)} messages")
