#!/usr/bin/env python3
"""Draws gpusort's benchmark results as SVG charts, with matplotlib.

    test/bench/plot-results.py [RESULTS_DIR [PLOTS_DIR]]

RESULTS_DIR defaults to test/results and PLOTS_DIR to RESULTS_DIR/plots.
Reads the files the benchmark scripts write there:

  sql-bench-*.csv    test/bench/bench-sql.sh: ORDER BY on native Sort and on
                     GpuSort's engines, per table size and query;
  bench-*.txt        test/bench/bench-orders.sh: "ORDER BY / native ms /
                     gpusort ms / ratio" tables (several runs in one file
                     are told apart by their "## run" headings);
  arrays-*.csv       test/bench/bench-arrays.sh: the array functions against
                     intarray's sort() and unnest/array_agg(ORDER BY).

For each file it writes PLOTS_DIR/<file name>.svg: the median times side
by side (left) and each one's ratio to native, native / ours, above 1 where
gpusort is faster (right).  Files of other formats (A/B runs of two builds,
EXPLAIN outputs) are skipped.  The SVGs keep their text as text and carry no
date, so that drawing the same results again gives the same files.
"""

import csv
import os
import re
import sys

try:
    import matplotlib
except ImportError:
    sys.exit("plot-results: matplotlib is not installed (Debian: apt-get install python3-matplotlib); no plots drawn")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams.update({
    "svg.fonttype": "none",      # text stays text: small, searchable files
    "svg.hashsalt": "gpusort",   # stable element ids
    "font.size": 9,
})

COLORS = {"native": "#8c8c8c", "cpu": "#1f77b4", "gpu": "#2ca02c", "gpusort": "#1f77b4",
          "gpusort_permutation": "#17becf", "intarray": "#ff7f0e", "unnest": "#8c8c8c",
          "read": "#d9d9d9"}


def fmt_rows(n):
    n = int(n)
    for div, unit in ((1_000_000_000, "G"), (1_000_000, "M"), (1_000, "k")):
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    return str(n)


def chart(title, labels, series, ratio_series, path, note=None,
          ratio_label="native / gpusort (above 1: gpusort faster)"):
    """labels: one per group (a query); series: [(name, [ms or None])];
    ratio_series: [(name, [ratio or None])], ratios native / engine."""
    n = len(labels)
    height = max(2.4, 0.32 * n * max(1, len(series)) ** 0.5 + 1.4)
    fig, (ax, rx) = plt.subplots(1, 2, figsize=(11, height), sharey=True,
                                 gridspec_kw={"width_ratios": [3, 2]})
    ys = range(n)
    bar = 0.8 / max(1, len(series))
    for i, (name, vals) in enumerate(series):
        pos = [y - 0.4 + bar * (i + 0.5) for y in ys]
        ax.barh(pos, [v if v is not None else 0 for v in vals], height=bar,
                color=COLORS.get(name, None), label=name)
    ax.set_yticks(list(ys))
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    ax.set_xlabel("median ms (lower is better)")
    positive = [v for _, vals in series for v in vals if v]
    if positive and max(positive) / min(positive) > 50:
        ax.set_xscale("log")
        ax.set_xlabel("median ms, log scale (lower is better)")
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncol=len(series), fontsize=8, frameon=False)
    ax.grid(axis="x", alpha=0.3)

    rbar = 0.8 / max(1, len(ratio_series))
    for i, (name, vals) in enumerate(ratio_series):
        pos = [y - 0.4 + rbar * (i + 0.5) for y in ys]
        rx.barh(pos, [v if v is not None else 0 for v in vals], height=rbar,
                color=COLORS.get(name, None), label=name)
        for p, v in zip(pos, vals):
            if v is not None:
                rx.text(v, p, f" {v:.2f}x", va="center", fontsize=7)
    rx.axvline(1.0, color="black", linewidth=0.8)
    rx.set_xlabel(ratio_label)
    rx.grid(axis="x", alpha=0.3)
    right = max([v for _, vals in ratio_series for v in vals if v is not None] + [1.0])
    rx.set_xlim(0, right * 1.25)
    if len(ratio_series) > 1:
        rx.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncol=len(ratio_series), fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=10)
    if note:
        fig.text(0.01, 0.005, note, fontsize=7, color="#555555", va="bottom")
    fig.tight_layout(rect=(0, 0.03 if note else 0, 1, 1))
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def plot_sql_bench(path, out):
    """bench-sql.sh CSV: one group per (size, case), bars per engine."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or "engine" not in rows[0] or "case" not in rows[0] or "build" in rows[0]:
        return False  # not bench-sql.sh's, or an A/B run of builds (ab-builds.sh)
    groups, cells, engines = [], {}, []
    for r in rows:
        ms = num(r.get("median_ms"))
        if ms is None or r["case"] == "all":
            continue
        key = (int(r["size"]), r["case"])
        if key not in cells:
            groups.append(key)
            cells[key] = {}
        cells[key][r["engine"]] = ms
        if r["engine"] not in engines:
            engines.append(r["engine"])
    if not groups or "native" not in engines or len(engines) < 2:
        return False
    engines.sort(key=lambda e: ["native", "cpu", "gpu"].index(e) if e in ("native", "cpu", "gpu") else 9)
    labels = [f"{fmt_rows(s)}: {c}" for s, c in groups]
    series = [(e, [cells[g].get(e) for g in groups]) for e in engines]
    ratios = []
    for e in engines:
        if e == "native":
            continue
        ratios.append((e, [cells[g]["native"] / cells[g][e]
                           if cells[g].get("native") and cells[g].get(e) else None for g in groups]))
    device = rows[0].get("device", "")
    server = rows[0].get("server", "").split(" ")[0]
    chart(f"ORDER BY, native Sort against GpuSort's engines ({device}, PostgreSQL {server})",
          labels, series, ratios, out, note=f"test/bench/bench-sql.sh; {os.path.basename(path)}")
    return True


ORDERS_ROW = re.compile(r"^(.*\S)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)x\s*$")


def plot_orders(path, out):
    """bench-orders.sh text: every table row; rows of later runs marked."""
    labels, native, ours, header = [], [], [], None
    run = None
    seen = set()
    with open(path) as f:
        for line in f:
            m = re.match(r"^## (run \d+)", line)
            if m:
                run = m.group(1)
                continue
            if line.startswith("# bench-") and header is None:
                header = line[2:].strip()
            m = ORDERS_ROW.match(line.rstrip("\n"))
            if not m or line.startswith("#"):
                continue
            order = m.group(1)
            label = order if order not in seen else f"{order} ({run or 'again'})"
            seen.add(order)
            labels.append(label)
            native.append(float(m.group(2)))
            ours.append(float(m.group(3)))
    if not labels:
        return False
    series = [("native", native), ("gpusort", ours)]
    ratios = [("gpusort", [n / g if g else None for n, g in zip(native, ours)])]
    chart(f"ORDER BY, native Sort against GpuSort: {header or os.path.basename(path)}",
          labels, series, ratios, out, note=f"test/bench/bench-orders.sh; {os.path.basename(path)}")
    return True


def plot_arrays(path, out):
    """bench-arrays.sh CSV: one group per element type, bars per method."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or "method" not in rows[0]:
        return False
    types, cells, methods = [], {}, []
    for r in rows:
        ms = num(r.get("median_ms"))
        if ms is None:
            continue
        if r["type"] not in cells:
            types.append(r["type"])
            cells[r["type"]] = {}
        cells[r["type"]][r["method"]] = ms
        if r["method"] not in methods:
            methods.append(r["method"])
    if not types or "gpusort" not in methods:
        return False
    series = [(m, [cells[t].get(m) for t in types]) for m in methods]
    others = [m for m in methods if m not in ("gpusort", "gpusort_permutation", "read")]
    # the ratio of each other way of sorting to gpusort(): how many times faster gpusort() is
    ratios = [(m, [cells[t][m] / cells[t]["gpusort"] if cells[t].get(m) and cells[t].get("gpusort") else None
                   for t in types]) for m in others]
    r0 = rows[0]
    title = (f"Array sorting, {fmt_rows(r0['elements'])} elements: gpusort() against PostgreSQL's ways "
             f"(engine {r0['engine']}, {r0.get('host', '')})")
    chart(title, types, series, ratios, out, note=f"test/bench/bench-arrays.sh; {os.path.basename(path)}",
          ratio_label="the method's time / gpusort()'s (above 1: gpusort() faster)")
    return True


def main():
    results = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "results")
    plots = sys.argv[2] if len(sys.argv) > 2 else os.path.join(results, "plots")
    os.makedirs(plots, exist_ok=True)
    drawn = 0
    for name in sorted(os.listdir(results)):
        path = os.path.join(results, name)
        if not os.path.isfile(path):
            continue
        base, ext = os.path.splitext(name)
        out = os.path.join(plots, base + ".svg")
        if name.startswith("sql-bench-") and ext == ".csv":
            ok = plot_sql_bench(path, out)
        elif name.startswith("bench-") and ext == ".txt" and "-explain" not in base:
            ok = plot_orders(path, out)
        elif name.startswith("arrays-") and ext == ".csv":
            ok = plot_arrays(path, out)
        else:
            continue
        if ok:
            drawn += 1
            print(f"plot-results: {out}")
    print(f"plot-results: {drawn} charts in {plots}")


if __name__ == "__main__":
    main()
