"""Print a feature-importance table for the Iris measurements: a deterministic program (it
reads no seed) whose results are rows of a table on standard output."""

ROWS = [
    # sepal length, sepal width, petal length, petal width, class
    (5.1, 3.5, 1.4, 0.2, 0), (4.9, 3.0, 1.4, 0.2, 0), (6.3, 3.3, 6.0, 2.5, 2), (5.8, 2.7, 5.1, 1.9, 2),
    (7.0, 3.2, 4.7, 1.4, 1), (6.4, 3.2, 4.5, 1.5, 1), (5.0, 3.6, 1.4, 0.2, 0), (6.5, 3.0, 5.8, 2.2, 2),
    (5.5, 2.3, 4.0, 1.3, 1), (4.6, 3.1, 1.5, 0.2, 0), (6.9, 3.1, 4.9, 1.5, 1), (7.1, 3.0, 5.9, 2.1, 2),
]
NAMES = ["sepal length", "sepal width", "petal length", "petal width"]


def spread(column: int) -> float:
    """Between-class spread of a feature's class means, relative to its range."""
    values = [row[column] for row in ROWS]
    means = []
    for label in (0, 1, 2):
        members = [row[column] for row in ROWS if row[4] == label]
        means.append(sum(members) / len(members))
    return (max(means) - min(means)) / (max(values) - min(values))


scores = [spread(i) for i in range(4)]
total = sum(scores)
print(f"{'feature':<13}| importance")
for name, score in zip(NAMES, scores):
    print(f"{name:<13}| {round(100 * score / total)}%")
