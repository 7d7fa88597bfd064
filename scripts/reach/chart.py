"""The HTML report of scripts/bench-reach.sh: one stacked bar per strategy and platform (the
(notification, device) pairs shown with content at once, later, as text only, never) and the
summary figures, from each strategy's summary.json (scripts/reach/report.py).

Usage: chart.py OUT.html WORK... (one WORK directory per strategy, in order).
"""
import html
import json
import sys

out, works = sys.argv[1], sys.argv[2:]
summaries = [json.load(open(f"{work}/summary.json")) for work in works]
parts = [("content at once", "#2e7d32"), ("content later", "#81c784"), ("text only", "#9e9e9e"), ("never", "#c62828")]
bar, label, row = 560, 150, 34
bars = [(s["strategy"], name, counts) for s in summaries for name, counts in s["platforms"].items()]
height = 40 + row * len(bars) + 40
svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{label + bar + 20}" height="{height}" role="img" '
       f'aria-label="Pairs shown with their content, per strategy and platform">']
for index, (strategy, name, counts) in enumerate(bars):
    y = 30 + row * index
    svg.append(f'<text x="{label - 8}" y="{y + 17}" text-anchor="end" font-size="13">{html.escape(strategy)} · {name}</text>')
    x = label
    for part, colour in parts:
        share = counts[part] / counts["pairs"] if counts["pairs"] else 0
        width = bar * share
        if width > 0:
            svg.append(f'<rect x="{x:.1f}" y="{y}" width="{width:.1f}" height="24" fill="{colour}">'
                       f'<title>{part}: {100 * share:.1f} %</title></rect>')
            if width > 38:
                svg.append(f'<text x="{x + width / 2:.1f}" y="{y + 17}" text-anchor="middle" font-size="11" fill="#fff">{100 * share:.0f} %</text>')
        x += width
legend_y = 30 + row * len(bars) + 14
for index, (part, colour) in enumerate(parts):
    svg.append(f'<rect x="{label + 140 * index}" y="{legend_y}" width="12" height="12" fill="{colour}"/>'
               f'<text x="{label + 140 * index + 16}" y="{legend_y + 11}" font-size="12">{part}</text>')
svg.append("</svg>")
lines = "".join(
    f"<li><strong>{html.escape(s['strategy'])}</strong>: "
    f"{100 * s['reach']['content'] / max(1, s['reach']['pairs']):.1f} % shown with content within the day "
    f"(of {s['reach']['pairs']} pairs a push can reach), "
    f"{100 * s['online']['content at once'] / max(1, s['online']['pairs']):.1f} % at once (of {s['online']['pairs']} online at the send); "
    f"{s['pushes']} pushes spent, {s['pastBudget']} silent pushes past iOS's budget</li>"
    for s in summaries)
with open(out, "w") as page:
    page.write(f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>RichPush reach</title>
<style>body{{font-family:system-ui,sans-serif;margin:2rem;max-width:60rem}}</style></head>
<body><h1>Rich pushes shown, per delivery strategy</h1>
<p>Each bar: the (notification, device) pairs of one platform under one strategy (docs/devices.md).</p>
{"".join(svg)}
<ul>{lines}</ul></body></html>
""")
print(f"==> chart: {out}")
