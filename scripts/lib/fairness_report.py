#!/usr/bin/env python3
"""The summary and HTML report of scripts/bench-fairness.sh (issue 28).

Reads DIR/<configuration>/<phase>.json (written by `richpush-bench fairness`), prints each bar of
the issue with PASS/FAIL per configuration (FIFO beside fair) into DIR/summary.txt and standard
output, and writes DIR/report.html: self-contained, inline SVG, no external assets.
Usage: fairness_report.py DIR [--command CMD] [--elapsed S] [--binary PATH] [--commit SHA]
"""
import argparse
import html
import json
import math
import os

PANEL_TITLES = {"B p99 while A floods": "B's p99 while A floods (ms)", "B p99 during A's fan-out": "B's p99 during A's fan-out (ms)",
                "A keeps": "A's contested / solo throughput (%)", "equal weights": "Jain's index, both flooding",
                "3:1 weights": "A:B throughput, both flooding", "slow provider": "B's throughput drop, A slow (%)"}
CONFIGS = [("fifo", "FIFO"), ("fair-equal", "fair 1:1"), ("fair-3to1", "fair 3:1")]
COLOURS = {"fifo": "#c0392b", "fair-equal": "#2471a3", "fair-3to1": "#229954"}


def load(directory, config, phase):
    path = os.path.join(directory, config, phase + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as handle:
        return json.load(handle)


def app(result, name):
    if not result:
        return None
    return next((a for a in result["apps"] if a["app"] == name), None)


def jain(values):
    total = sum(values)
    squares = sum(v * v for v in values)
    return total * total / (len(values) * squares) if squares > 0 else None


class Figures:
    """One configuration's measured figures (None where a phase is missing)."""

    def __init__(self, directory, config):
        solo_config = "fair-equal" if config == "fair-3to1" else config
        self.config = config
        self.solo_from = solo_config
        self.solo_b = app(load(directory, solo_config, "solo-b"), "app-b")
        self.solo_a = app(load(directory, solo_config, "solo-a"), "app-a")
        flood = load(directory, config, "flood")
        self.flood_a, self.flood_b = app(flood, "app-a"), app(flood, "app-b")
        self.fanout = load(directory, config, "fanout")
        self.fanout_b = app(self.fanout, "app-b")
        both = load(directory, config, "both")
        self.both_a, self.both_b = app(both, "app-a"), app(both, "app-b")
        # With --hold-load: the throughputs while both had a backlog (the contested window).
        self.both_contested = (both or {}).get("contested")
        self.slow_base_b = app(load(directory, config, "slow-base"), "app-b")
        self.slow_b = app(load(directory, config, "slow"), "app-b")
        self.slow_a = app(load(directory, config, "slow"), "app-a")
        self.slow_base_a = app(load(directory, config, "slow-base"), "app-a")

    def p(self, result, key="latencyMs"):
        return (result or {}).get(key) or None


def fmt_ms(value):
    return "-" if value is None else ("%.0f ms" % value if value >= 100 else "%.1f ms" % value)


def latency_bar(fig, contested, key):
    """B's p99 against min(2 x solo p99, 250 ms); undelivered pushes fail it."""
    solo = fig.p(fig.solo_b)
    measured = fig.p(contested, key) or fig.p(contested)
    if not solo or not measured:
        return None, "no data"
    limit = min(2 * solo["p99"], 250.0)
    missing = contested.get("undelivered", 0)
    ok = measured["p99"] <= limit and missing == 0
    text = "p99 %s (p50 %s; limit %s)" % (fmt_ms(measured["p99"]), fmt_ms(measured["p50"]), fmt_ms(limit))
    if missing:
        text += ", %d undelivered" % missing
    call = contested.get("createCallMs")
    if call:
        text += "; of which the create call p50 %s, p99 %s" % (fmt_ms(call["p50"]), fmt_ms(call["p99"]))
    after = contested.get("afterAnswerMs")
    if after:
        text += "; after its answer (queue, scheduler, workers) p50 %s, p99 %s" % (fmt_ms(after["p50"]), fmt_ms(after["p99"]))
    return ok, text


def bars(fig):
    """[(bar name, ok or None for n/a, text, value for the chart, threshold for the chart)]."""
    rows = []
    ok, text = latency_bar(fig, fig.flood_b, "latencyMs")
    rows.append(("B p99 while A floods ≤ 2× solo p99 and ≤ 250 ms", ok, text,
                 (fig.p(fig.flood_b) or {}).get("p99"), min(2 * fig.p(fig.solo_b)["p99"], 250) if fig.p(fig.solo_b) else None))
    ok, text = latency_bar(fig, fig.fanout_b, "latencyDuringFanOutMs")
    value = (fig.p(fig.fanout_b, "latencyDuringFanOutMs") or fig.p(fig.fanout_b) or {}).get("p99")
    rows.append(("B p99 during A's fan-out ≤ 2× solo p99 and ≤ 250 ms", ok, text + fanout_note(fig), value,
                 min(2 * fig.p(fig.solo_b)["p99"], 250) if fig.p(fig.solo_b) else None))
    if fig.solo_a and fig.flood_a and fig.solo_a["throughput"] > 0:
        # Over the same leading seconds as the solo phase: a longer flood builds a longer backlog,
        # and the API creating it takes CPU from the workers on the same cores.
        window = int(round(fig.solo_a["window"]))
        contested = sum(fig.flood_a["perSecond"][:window]) / window
        share = contested / fig.solo_a["throughput"]
        rows.append(("A keeps ≥ 90 % of its solo throughput", share >= 0.9,
                     "%.1f %% (%.0f/s over the first %d s contested, %.0f/s solo; %.0f/s over the whole %.0f s flood)" % (
                         share * 100, contested, window, fig.solo_a["throughput"], fig.flood_a["throughput"], fig.flood_a["window"]),
                     share * 100, 90))
    else:
        rows.append(("A keeps ≥ 90 % of its solo throughput", None, "no data", None, 90))
    if fig.both_a and fig.both_b:
        a, b = fig.both_a["throughput"], fig.both_b["throughput"]
        if fig.both_contested:
            a, b = fig.both_contested["throughput"].get("app-a", 0), fig.both_contested["throughput"].get("app-b", 0)
        index = jain([a, b])
        ratio = a / b if b > 0 else math.inf
        if fig.config == "fair-3to1":
            rows.append(("equal weights: Jain's index ≥ 0.95", None, "n/a (weights 3:1; Jain %.3f)" % index, index, 0.95))
            ok = 2.7 <= ratio <= 3.3
            rows.append(("3:1 weights: A:B within ±10 % of 3:1", ok, "%.2f : 1 (A %.0f/s, B %.0f/s)" % (ratio, a, b), ratio, 3))
        else:
            rows.append(("equal weights: Jain's index ≥ 0.95", index >= 0.95, "%.3f (A %.0f/s, B %.0f/s)" % (index, a, b), index, 0.95))
            rows.append(("3:1 weights: A:B within ±10 % of 3:1", None, "n/a (weights 1:1; A:B %.2f : 1)" % ratio, ratio, 3))
    else:
        rows.append(("equal weights: Jain's index ≥ 0.95", None, "no data", None, 0.95))
        rows.append(("3:1 weights: A:B within ±10 % of 3:1", None, "no data", None, 3))
    if fig.slow_base_b and fig.slow_b and fig.slow_base_b["throughput"] > 0:
        drop = 1 - fig.slow_b["throughput"] / fig.slow_base_b["throughput"]
        rows.append(("slow provider: B's throughput drops ≤ 10 %", drop <= 0.10,
                     "%.1f %% (B %.0f/s → %.0f/s; A %.0f/s → %.0f/s)" % (drop * 100, fig.slow_base_b["throughput"], fig.slow_b["throughput"],
                                                                        (fig.slow_base_a or {}).get("throughput", 0), (fig.slow_a or {}).get("throughput", 0)),
                     drop * 100, 10))
    else:
        rows.append(("slow provider: B's throughput drops ≤ 10 %", None, "no data", None, 10))
    return rows


def fanout_note(fig):
    if not fig.fanout or not fig.fanout.get("fanOut"):
        return ""
    f = fig.fanout["fanOut"]
    n = (fig.fanout_b or {}).get("latencyDuringFanOutMs") or {}
    return "; fan-out %d devices in %.1f s, %d B samples during it" % (f["devices"], f["seconds"], n.get("count", 0))


def verdict(ok):
    return "n/a " if ok is None else ("PASS" if ok else "FAIL")


def summary(directory, figures, args):
    lines = ["Fair scheduling benchmark (issue 28): %s" % (args.command or "scripts/bench-fairness.sh"),
             "binary %s, commit %s, phases took %s s" % (args.binary or "?", args.commit or "?", args.elapsed or "?"),
             "sent = arrival at the simulated device (hub Pub/Sub; apns-sim forwarding in slow-*), timed from the start of the create call", ""]
    present = [(c, label) for c, label in CONFIGS if c in figures]
    table = {c: bars(figures[c]) for c, _ in present}
    names = [row[0] for row in table[present[0][0]]] if present else []
    for index, name in enumerate(names):
        lines.append(name)
        for config, label in present:
            row = table[config][index]
            lines.append("  %-9s %s  %s" % (label, verdict(row[1]), row[2]))
    lines.append("")
    lines.append("Baselines (solo phases; fair 3:1 uses fair 1:1's):")
    for config, label in present:
        fig = figures[config]
        if fig.config == "fair-3to1":
            continue
        b, a = fig.p(fig.solo_b), fig.solo_a
        lines.append("  %-9s B alone p50 %s p99 %s (%d samples); A alone %s/s" % (
            label, fmt_ms(b and b["p50"]), fmt_ms(b and b["p99"]), (b or {}).get("count", 0), "%.0f" % a["throughput"] if a else "-"))
    lines.append("Drains (seconds after the load until all it created had arrived):")
    for config, label in present:
        drains = []
        for phase in ("solo-a", "flood", "fanout", "both", "slow-base", "slow"):
            result = load(directory, config, phase)
            if result:
                drains.append("%s %.1f" % (phase, result["drainSeconds"]))
        lines.append("  %-9s %s" % (label, ", ".join(drains)))
    return "\n".join(lines) + "\n", table, present


def svg_bars(table, present):
    """Small multiples: one panel per bar, a bar per configuration, the threshold dashed."""
    names = [row[0] for row in table[present[0][0]]]
    width, panel_h, panel_w = 960, 170, 300
    columns = 3
    rows = (len(names) + columns - 1) // columns
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">' % (width, rows * panel_h + 30)]
    for i, name in enumerate(names):
        x0, y0 = 20 + (i % columns) * (panel_w + 15), 10 + (i // columns) * panel_h
        title = next((t for k, t in PANEL_TITLES.items() if name.startswith(k)), name)
        out.append('<text x="%d" y="%d" font-weight="bold">%s</text>' % (x0, y0 + 12, html.escape(title)))
        values = [(c, label, table[c][i]) for c, label in present]
        top = max([v[2][3] for v in values if v[2][3] is not None] + [v[2][4] or 0 for v in values] + [1e-9]) * 1.15
        chart_y, chart_h = y0 + 24, panel_h - 60
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>' % (x0, chart_y + chart_h, x0 + panel_w - 20, chart_y + chart_h))
        # The bar, over each configuration's column (B's limit follows its own solo p99).
        for j, (config, label, row) in enumerate(values):
            if row[4] is None:
                continue
            ty = chart_y + chart_h - chart_h * row[4] / top
            bx = x0 + 20 + j * 90
            out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#333" stroke-dasharray="4 3"/>' % (bx - 12, ty, bx + 62, ty))
            if j == len(values) - 1 or row[4] != values[j + 1][2][4]:
                out.append('<text x="%d" y="%.1f" fill="#333">%g</text>' % (bx + 64, ty + 4, round(row[4], 1)))
        for j, (config, label, row) in enumerate(values):
            bx = x0 + 20 + j * 90
            if row[3] is not None:
                h = chart_h * row[3] / top
                colour = "#bbb" if row[1] is None else COLOURS[config]
                out.append('<rect x="%d" y="%.1f" width="50" height="%.1f" fill="%s" opacity="%s"/>' % (bx, chart_y + chart_h - h, h, colour, "0.45" if row[1] is False else "1"))
                out.append('<text x="%d" y="%.1f" text-anchor="middle">%s</text>' % (bx + 25, chart_y + chart_h - h - 3, ("%.0f" if row[3] >= 100 else "%.3g") % row[3]))
            else:
                out.append('<text x="%d" y="%d" text-anchor="middle" fill="#999">n/a</text>' % (bx + 25, chart_y + chart_h - 4))
            out.append('<text x="%d" y="%d" text-anchor="middle">%s</text>' % (bx + 25, chart_y + chart_h + 14, label))
            out.append('<text x="%d" y="%d" text-anchor="middle" font-weight="bold" fill="%s">%s</text>' % (
                bx + 25, chart_y + chart_h + 28, "#1e8449" if row[1] else ("#999" if row[1] is None else "#c0392b"), verdict(row[1]).strip()))
    out.append("</svg>")
    return "\n".join(out)


def svg_series(title, series, y_label, log=False, dots=False):
    """Lines over seconds: series = [(label, colour, dash, [(x, y)])]."""
    width, height, left, bottom = 960, 280, 60, 40
    points = [p for _, _, _, s in series for p in s]
    if not points:
        return ""
    xmax = max(p[0] for p in points) or 1
    ys = [p[1] for p in points]
    if log:
        lo, hi = math.floor(math.log10(max(min(ys), 0.1))), math.ceil(math.log10(max(max(ys), 1)))
        hi = max(hi, lo + 1)
        scale = lambda y: (math.log10(max(y, 0.1)) - lo) / (hi - lo)
    else:
        top = max(ys) * 1.1 or 1
        scale = lambda y: y / top
    plot_w, plot_h = width - left - 20, height - bottom - 30
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">' % (width, height),
           '<text x="%d" y="16" font-weight="bold">%s</text>' % (left, html.escape(title)),
           '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>' % (left, 30 + plot_h, left + plot_w, 30 + plot_h),
           '<line x1="%d" y1="30" x2="%d" y2="%d" stroke="#999"/>' % (left, left, 30 + plot_h),
           '<text x="%d" y="%d" text-anchor="middle">seconds from the phase start</text>' % (left + plot_w / 2, height - 5),
           '<text x="12" y="%d" transform="rotate(-90 12 %d)" text-anchor="middle">%s</text>' % (30 + plot_h / 2, 30 + plot_h / 2, html.escape(y_label))]
    ticks = [10 ** k for k in range(int(math.floor(lo)), int(math.ceil(hi)) + 1)] if log else [top * k / 4 for k in range(5)]
    for t in ticks:
        ty = 30 + plot_h - plot_h * scale(t)
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>' % (left, ty, left + plot_w, ty))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (left - 4, ty + 4, "%g" % round(t, 1)))
    for k, (label, colour, dash, s) in enumerate(series):
        xy = [(left + plot_w * x / xmax, 30 + plot_h - plot_h * scale(y)) for x, y in sorted(s)]
        out.append('<polyline fill="none" stroke="%s" stroke-width="1.5" stroke-dasharray="%s" points="%s"/>' % (
            colour, dash, " ".join("%.1f,%.1f" % p for p in xy)))
        if dots:
            out.extend('<circle cx="%.1f" cy="%.1f" r="2" fill="%s"/>' % (x, y, colour) for x, y in xy)
        out.append('<text x="%d" y="%d" fill="%s">%s</text>' % (left + 10 + k * 130, 46, colour, html.escape(label)))
    out.append("</svg>")
    return "\n".join(out)


def report_html(text, table, present, figures, args):
    charts = [svg_bars(table, present)]
    charts.append(svg_series("B's create→sent latency while A floods (each of B's notifications, by when it was created)",
                             [(label, COLOURS[c], "", [tuple(s) for s in (figures[c].flood_b or {}).get("samples", [])]) for c, label in present],
                             "ms (log scale)", log=True, dots=True))
    charts.append(svg_series("B's create→sent latency during and after A's fan-out (B sends 10 a second)",
                             [(label, COLOURS[c], "", [tuple(s) for s in (figures[c].fanout_b or {}).get("samples", [])]) for c, label in present],
                             "ms (log scale)", log=True, dots=True))
    both = []
    for c, label in present:
        for name, result, dash in (("A", figures[c].both_a, ""), ("B", figures[c].both_b, "5 3")):
            if result:
                both.append(("%s %s" % (label, name), COLOURS[c], dash, [(i + 0.5, v) for i, v in enumerate(result["perSecond"])]))
    charts.append(svg_series("Both flood: pushes received per second, A solid, B dashed (the last second is partial)", both, "pushes/s"))
    return """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>RichPush fair scheduling benchmark</title>
<style>body{font-family:sans-serif;margin:24px;max-width:1000px}pre{background:#f6f6f6;padding:12px;overflow-x:auto;font-size:12px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}</style></head><body>
<h1>Fair scheduling across apps (issue 28): FIFO, fair 1:1, fair 3:1</h1>
<p>Same machine, same run, one Redis. Bars drawn faded failed their bar; the dashed line is the bar.
"Sent" is the push's arrival at the simulated device (hub Pub/Sub, or apns-sim's forwarding in the slow-provider phases),
timed from the start of the create call.</p>
%s
<h2>Summary</h2>
<pre>%s</pre>
</body></html>
""" % ("\n".join("<div>%s</div>" % c for c in charts if c), html.escape(text))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("directory")
    parser.add_argument("--command")
    parser.add_argument("--elapsed")
    parser.add_argument("--binary")
    parser.add_argument("--commit")
    args = parser.parse_args()
    figures = {c: Figures(args.directory, c) for c, _ in CONFIGS if os.path.isdir(os.path.join(args.directory, c))}
    if not figures:
        raise SystemExit("no results under %s" % args.directory)
    text, table, present = summary(args.directory, figures, args)
    print(text, end="")
    with open(os.path.join(args.directory, "summary.txt"), "w") as handle:
        handle.write(text)
    with open(os.path.join(args.directory, "report.html"), "w") as handle:
        handle.write(report_html(text, table, present, figures, args))


if __name__ == "__main__":
    main()
