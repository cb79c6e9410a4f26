"""``rra bench report``: the figures of a benchmark's results (:class:`BenchReport`), computed
from a results file of ``rra bench reproduce``, ``rra bench run`` or ``rra bench score``.

Both kinds of results become one list of cells (paper, task, condition, reproducer, class,
state, usage): a re-execution attempt is a cell of condition ``refined`` (the RRA was run) and
reproducer ``re-execution``. Rates count every cell of their group. Confidence intervals come
from a seeded percentile bootstrap that resamples papers (per-paper rates resample the paper's
tasks), so the same results and seed always give the same report. numpy is imported here, by
``rra bench report`` only.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import Any

from ...model.bench_cost import CostPrices, ReviewTime
from ...model.bench_report import (
    BenchReport,
    Bootstrap,
    CostTime,
    Finding,
    GroupRate,
    InfrastructureFailure,
    PairedDifference,
    ParetoPoint,
    Rate,
    ReproducerSpread,
    TaskDifference,
)
from ..audit.eval import wilson
from ..errors import BenchError
from .factorial import factorial_analyses

__all__ = ["REEXECUTION", "ReportCell", "build_report", "cells_of", "load_results", "write_report"]

#: The reproducer of re-execution mode's cells.
REEXECUTION = "re-execution"
_SUCCESS = "success"
_INFRA = "infrastructure_failure"


@dataclass(slots=True)
class ReportCell:
    """One cell as the report sees it."""

    key: str
    paper: str
    task: str
    condition: str
    reproducer: str
    stability: str
    state: str
    detail: str | None = None
    infrastructure: str | None = None
    wall_s: float | None = None
    cost_usd: float | None = None
    tokens: int | None = None
    gpu_hours: float | None = None
    #: GPU-hours the executor measured (wall x GPUs assigned), and the auditor's own time.
    gpu_hours_measured: float | None = None
    audit_cpu_s: float | None = None
    audit_wall_s: float | None = None
    findings: list[dict[str, Any]] = field(default_factory=list)
    #: The sandbox backend the cell ran under ('none': unisolated), and the price table of its
    #: metered cost; None for results without them.
    sandbox: str | None = None
    price_table: str | None = None


def load_results(path: Path) -> dict[str, Any]:
    """The results file at ``path`` as JSON data, checked against the results model."""
    from pydantic import ValidationError

    from ...model.bench_results import BenchResults

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchError(f"results file {str(path)!r} does not exist",
                         "give the results.json that rra bench reproduce, run or score wrote") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BenchError(f"results file {str(path)!r} cannot be read as JSON: {exc}") from None
    try:
        BenchResults.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = "/".join(str(p) for p in error["loc"])
        raise BenchError(f"results file {str(path)!r} is not a benchmark results file: at /{where}: {error['msg']}",
                         "see schemas/rra-bench-results-1.0.schema.json") from None
    if not isinstance(data, dict):  # pragma: no cover - the model accepts objects only
        raise BenchError(f"results file {str(path)!r} is not a JSON object")
    return data


def _infra_kind(detail: str | None) -> str:
    """The kind of a re-execution infrastructure failure, from its detail."""
    text = detail or ""
    for needle, kind in ((": timeout", "timeout"), ("out of memory", "oom"), ("GPU", "gpu_unavailable"),
                         ("interrupted", "interrupted"), ("killed", "interrupted")):
        if needle in text:
            return kind
    return "other"


def cells_of(data: dict[str, Any]) -> list[ReportCell]:
    """Every cell of a results file (re-execution attempts and reproducer-mode cells)."""
    cells: list[ReportCell] = []
    stability: dict[str, str] = {}
    for task in data.get("tasks", []):
        key = f"{task['paper']}/{task['experiment']}/{task['task']}"
        stability[key] = task["interval"]["stability"]
        gpus = task.get("gpus") or 0
        for a in task.get("attempts", []):
            state = a["state"]
            wall = a.get("wall_s")
            cells.append(ReportCell(
                key=f"{key}/attempt-{a['number']}", paper=task["paper"], task=key, condition="refined",
                reproducer=REEXECUTION, stability=stability[key], state=state, detail=a.get("detail"),
                infrastructure=_infra_kind(a.get("detail")) if state == _INFRA else None, wall_s=wall,
                gpu_hours_measured=wall * gpus / 3600 if gpus and wall is not None else None))
    for c in data.get("cells", []):
        cell = c["cell"]
        task = str(cell["task"])
        usage = _usage(c.get("usage") or {})
        wall = c.get("wall_s")
        cells.append(ReportCell(
            key=f"{task}/{cell['condition']}/{cell['reproducer']}/{cell['repeat']}", paper=task.split("/", 1)[0],
            task=task, condition=str(cell["condition"]), reproducer=str(cell["reproducer"]),
            stability=stability.get(task, "stable"), state=str(c["state"]), detail=c.get("detail"),
            infrastructure=c.get("infrastructure") or (_infra_kind(c.get("detail")) if c["state"] == _INFRA else None),
            wall_s=wall if wall is not None else usage.get("wall_s"), cost_usd=usage.get("cost_usd"),
            tokens=usage.get("tokens"), gpu_hours=usage.get("gpu_hours"), gpu_hours_measured=c.get("gpu_hours"),
            audit_cpu_s=c.get("audit_cpu_s"), audit_wall_s=c.get("audit_wall_s"),
            findings=list(c.get("findings") or []), sandbox=(c.get("sandbox") or {}).get("backend"),
            price_table=((c.get("usage") or {}).get("metered") or {}).get("price_table")))
    return cells


def _usage(usage: dict[str, Any]) -> dict[str, Any]:
    """A cell's cost figures, metered first: the proxy's tokens and cost when it saw a call, else
    what the reproducer stated (results written before metering hold the stated figures flat)."""
    if "metered" not in usage and "stated" not in usage:
        return usage
    stated = dict(usage.get("stated") or {})
    metered = usage.get("metered")
    if metered and (metered.get("calls") or stated.get("cost_usd") is None):
        stated["cost_usd"] = metered.get("cost_usd")
        stated["tokens"] = sum(int(metered.get(k) or 0) for k in (
            "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"))
    return stated


class _Bootstrapper:
    """Seeded percentile bootstrap of a success rate over clusters of cells."""

    def __init__(self, resamples: int, seed: int, confidence: float) -> None:
        import numpy as np

        self.np, self.resamples, self.confidence = np, resamples, confidence
        self.rng = np.random.default_rng(seed)
        #: z of the two-sided interval at this confidence, for the Wilson fallback.
        self.z = statistics.NormalDist().inv_cdf(1 - (1 - confidence) / 2)

    def rate(self, cells: Sequence[ReportCell], cluster: str) -> Rate:
        np = self.np
        key = attrgetter(cluster)
        # Cells and successes per cluster, clusters in the order they first appear (the order
        # the resamples index them in).
        per = Counter(map(key, cells))
        won = Counter(key(c) for c in cells if c.state == _SUCCESS)
        successes = sum(won.values())
        total = len(cells)
        if not total:
            return Rate(successes=0, cells=0, papers=0)
        s = np.array([won[k] for k in per], dtype=float)
        n = np.array(list(per.values()), dtype=float)
        pick = self.rng.integers(0, len(s), size=(self.resamples, len(s)))
        rates = s[pick].sum(axis=1) / n[pick].sum(axis=1)
        tail = (1 - self.confidence) / 2 * 100
        low, high = np.percentile(rates, [tail, 100 - tail])
        papers = len(set(map(attrgetter("paper"), cells)))
        method = "bootstrap"
        if low == high:
            # No spread: 0/80 would read [0, 0]. The draws above are made all the same, so the
            # other groups' intervals do not depend on which groups fell back.
            fallback = wilson(successes, total, self.z)
            assert fallback.ci_low is not None and fallback.ci_high is not None
            # At 0 and at k = n the bound is exactly 0 (1); the formula leaves float dust (3e-18).
            low = 0.0 if successes == 0 else fallback.ci_low
            high = 1.0 if successes == total else fallback.ci_high
            method = "wilson"
        return Rate(successes=successes, cells=total, rate=successes / total, ci_low=float(low), ci_high=float(high),
                    interval=method, papers=papers)

    def contrasts(self, successes: list[list[int]], cells: list[list[int]],
                  weights: list[list[float]]) -> list[tuple[float | None, float | None, float | None]]:
        """Linear contrasts of per-condition success rates and their intervals: ``successes`` and
        ``cells`` count each cluster's (row) cells per condition (column), ``weights`` holds one
        row per contrast; the clusters (papers) are resampled, once for every contrast."""
        np = self.np
        s = np.asarray(successes, dtype=float)
        n = np.asarray(cells, dtype=float)
        w = np.asarray(weights, dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            point = (s.sum(axis=0) / n.sum(axis=0)) @ w.T
            pick = self.rng.integers(0, len(s), size=(self.resamples, len(s)))
            samples = (s[pick].sum(axis=1) / n[pick].sum(axis=1)) @ w.T
        tail = (1 - self.confidence) / 2 * 100
        out: list[tuple[float | None, float | None, float | None]] = []
        for i, estimate in enumerate(point):
            column = samples[:, i]
            column = column[~np.isnan(column)]
            if np.isnan(estimate) or not len(column):
                out.append((None, None, None))
                continue
            low, high = np.percentile(column, [tail, 100 - tail])
            out.append((float(estimate), float(low), float(high)))
        return out

    def mean(self, values: Sequence[float], clusters: Sequence[str]) -> tuple[float | None, float | None, float | None]:
        """Mean of per-task ``values`` and its interval, resampling the clusters (papers)."""
        np = self.np
        if not values:
            return None, None, None
        per: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        for v, k in zip(values, clusters):
            per[k][0] += v
            per[k][1] += 1
        s = np.array([v[0] for v in per.values()])
        n = np.array([v[1] for v in per.values()])
        pick = self.rng.integers(0, len(s), size=(self.resamples, len(s)))
        means = s[pick].sum(axis=1) / n[pick].sum(axis=1)
        tail = (1 - self.confidence) / 2 * 100
        low, high = np.percentile(means, [tail, 100 - tail])
        return float(sum(values) / len(values)), float(low), float(high)


def _states(cells: Iterable[ReportCell]) -> dict[str, int]:
    return dict(sorted(Counter(map(attrgetter("state"), cells)).items()))


def _grouped(cells: Sequence[ReportCell], *fields: str) -> dict[tuple[str, ...], list[ReportCell]]:
    groups: dict[tuple[str, ...], list[ReportCell]] = defaultdict(list)
    # attrgetter of several names gives their tuple; of one name, the value alone.
    key: Callable[[ReportCell], tuple[str, ...]] = (
        attrgetter(*fields) if len(fields) > 1 else lambda c: (getattr(c, fields[0]),))
    for c in cells:
        groups[key(c)].append(c)
    return dict(sorted(groups.items()))


def _paired(cells: Sequence[ReportCell], boot: _Bootstrapper) -> list[PairedDifference]:
    conditions = sorted({c.condition for c in cells})
    by_task = _grouped(cells, "task", "condition")
    out = []
    for i, a in enumerate(conditions):
        for b in conditions[i + 1:]:
            # raw and refined, and refined and each ablation; two ablations or raw and an
            # ablation are compared by the factorial analysis, not pair by pair.
            if {a, b} - {"raw", "refined"} and "refined" not in (a, b):
                continue
            diffs = []
            for task in sorted({c.task for c in cells}):
                ca, cb = by_task.get((task, a)), by_task.get((task, b))
                if not ca or not cb:
                    continue
                ra = sum(c.state == _SUCCESS for c in ca) / len(ca)
                rb = sum(c.state == _SUCCESS for c in cb) / len(cb)
                diffs.append(TaskDifference(task=task, paper=ca[0].paper, rate_a=ra, rate_b=rb, difference=rb - ra))
            mean, low, high = boot.mean([d.difference for d in diffs], [d.paper for d in diffs])
            out.append(PairedDifference(condition_a=a, condition_b=b, tasks=diffs, mean=mean, ci_low=low, ci_high=high))
    return out


def _spread(groups: list[GroupRate]) -> list[ReproducerSpread]:
    out = []
    for condition in sorted({g.condition for g in groups if g.condition is not None}):
        rated = [(g.rate.rate, g.reproducer or "") for g in groups if g.condition == condition and g.rate.rate is not None]
        if not rated:
            continue
        best = max(rated, key=lambda r: (r[0], r[1]))
        worst = min(rated, key=lambda r: (r[0], r[1]))
        out.append(ReproducerSpread(condition=condition, best=best[1], best_rate=best[0], worst=worst[1],
                                    worst_rate=worst[0], spread=best[0] - worst[0], reproducers=len(rated)))
    return out


def _cost_time(cells: Sequence[ReportCell]) -> list[CostTime]:
    out = []
    for (condition,), group in _grouped(cells, "condition").items():
        walls = [c.wall_s for c in group if c.wall_s is not None]
        costs = [c.cost_usd for c in group if c.cost_usd is not None]
        out.append(CostTime(
            condition=condition, cells=len(group), wall_s_cells=len(walls),
            wall_s_mean=sum(walls) / len(walls) if walls else None, wall_s_total=sum(walls),
            cost_cells=len(costs), cost_usd_total=sum(costs), cost_usd_mean=sum(costs) / len(costs) if costs else None,
            tokens_total=sum(c.tokens or 0 for c in group), gpu_hours_total=sum(c.gpu_hours or 0.0 for c in group)))
    return out


def _pareto(cells: Sequence[ReportCell], groups: list[GroupRate]) -> list[ParetoPoint]:
    """Each reproducer and condition's success rate against its mean cost per cell, cheapest first,
    with the Pareto frontier (no other point at most as costly and at least as successful, one of
    the two strictly) marked."""
    by_rc = _grouped(cells, "reproducer", "condition")
    rows: list[tuple[GroupRate, int, float | None]] = []
    for g in groups:
        costs = [c.cost_usd for c in by_rc.get((g.reproducer or "", g.condition or ""), []) if c.cost_usd is not None]
        rows.append((g, len(costs), sum(costs) / len(costs) if costs else None))
    placed = [(cost, g.rate.rate) for g, _, cost in rows if cost is not None and g.rate.rate is not None]

    def frontier(cost: float | None, rate: float | None) -> bool:
        return cost is not None and rate is not None and not any(
            c <= cost and r >= rate and (c < cost or r > rate) for c, r in placed)

    points = [ParetoPoint(reproducer=g.reproducer or "", condition=g.condition or "", cells=g.rate.cells,
                          rate=g.rate.rate, cost_cells=n, cost_usd_mean=cost, frontier=frontier(cost, g.rate.rate))
              for g, n, cost in rows]
    inf = float("inf")
    return sorted(points, key=lambda p: (inf if p.cost_usd_mean is None else p.cost_usd_mean, -(p.rate or 0.0),
                                         p.reproducer, p.condition))


def build_report(data: dict[str, Any], results: str, *, seed: int = 0, resamples: int = 2000,
                 confidence: float = 0.95, prices: CostPrices | None = None, review: ReviewTime | None = None,
                 review_source: str | None = None) -> BenchReport:
    """The report of the results ``data`` (read from ``results``); deterministic for a seed.
    ``prices`` and ``review`` (human review time, read from ``review_source``) go into its full
    cost (:mod:`.cost`)."""
    from .cost import DEFAULT_PRICES, full_cost

    cells = cells_of(data)
    cost = full_cost(data, cells, prices=prices or DEFAULT_PRICES, review=review, review_source=review_source)
    boot = _Bootstrapper(resamples, seed, confidence)

    def group(members: list[ReportCell], cluster: str = "paper", **names: str) -> GroupRate:
        return GroupRate(rate=boot.rate(members, cluster), states=_states(members), **names)

    by_rc = [group(g, reproducer=r, condition=c) for (r, c), g in _grouped(cells, "reproducer", "condition").items()]
    by_stability = [group(g, stability=s, condition=c) for (s, c), g in _grouped(cells, "stability", "condition").items()]
    by_paper = [group(g, "task", paper=p, condition=c) for (p, c), g in _grouped(cells, "paper", "condition").items()]
    infra = [InfrastructureFailure(cell=c.key, kind=c.infrastructure or "other", detail=c.detail)
             for c in cells if c.state == _INFRA]
    findings = [Finding(cell=c.key, task=c.task, kind=str(f.get("kind")), confirmed=bool(f.get("confirmed")),
                        detail=str(f.get("detail", "")), evidence=[str(e) for e in f.get("evidence") or []])
                for c in cells for f in c.findings]
    classes: dict[str, str] = {c.task: c.stability for c in cells}
    return BenchReport(
        report_version="1.0", taskset=str(data.get("taskset", "")), mode=str(data.get("mode", "")), results=results,
        bootstrap=Bootstrap(resamples=resamples, seed=seed, confidence=confidence, cluster="paper"),
        overall=group(cells), by_reproducer_condition=by_rc, by_stability=by_stability, by_paper=by_paper,
        paired=_paired(cells, boot), spread=_spread(by_rc), cost_time=_cost_time(cells),
        pareto=_pareto(cells, by_rc), infrastructure=infra,
        findings=findings, stable_tasks=sum(v == "stable" for v in classes.values()),
        variable_tasks=sum(v == "variable" for v in classes.values()), full_cost=cost,
        unisolated=[c.key for c in cells if c.sandbox == "none"],
        price_tables=sorted({c.price_table for c in cells if c.price_table}),
        # Last: the bootstrap's draws for the figures above stay what they were without ablations.
        factorial=factorial_analyses(cells, boot))


def write_report(results: Path, out: Path, *, seed: int = 0, resamples: int = 2000, prices: CostPrices | None = None,
                 review_time: Path | None = None) -> tuple[BenchReport, list[Path]]:
    """Read ``results`` (and the human ``review_time`` file), build its report and write
    ``report.json``, ``report.html`` and ``report.md`` into ``out`` (each atomically); the report
    and the files written."""
    from .cost import load_review_time

    from ...io.atomic import write_atomic
    from .plots import PLOTS, render_plots
    from .render import render_html, render_markdown

    review = load_review_time(review_time) if review_time is not None else None
    report = build_report(load_results(results), str(results), seed=seed, resamples=resamples, prices=prices,
                          review=review, review_source=None if review_time is None else str(review_time))
    plots = render_plots(report)
    out.mkdir(parents=True, exist_ok=True)
    files = {"report.json": report.model_dump_json(indent=2, exclude_none=True) + "\n",
             "report.html": render_html(report, plots, {ident: caption for ident, caption, _ in PLOTS}),
             "report.md": render_markdown(report)}
    written = []
    for name, text in files.items():
        write_atomic(out / name, text.encode(), durable=False)
        written.append(out / name)
    return report, written
