"""Draws the table of benches/gpu/bandwidth.art (and cupy_stencils.py) as a PNG: the
percentage of the copy bandwidth measured in the same run, per variant.

    python3 benches/gpu/plot.py TABLE.txt OUT.png
"""
import sys

rows = []
for line in open(sys.argv[1]):
    w = line.split()
    if len(w) >= 4 and w[0] == "row" and w[1] not in ("copy", "cupy-copy"):
        rows.append((w[1], float(w[2]), float(w[3])))
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("plot: matplotlib is not installed, no plot", file=sys.stderr)
    sys.exit(0)
fig, ax = plt.subplots(figsize=(9, 0.38 * len(rows) + 1.2))
names = [r[0] for r in rows][::-1]
pct = [r[2] for r in rows][::-1]
colors = ["#999999" if n.startswith("cupy") else "#1f77b4" for n in names]
ax.barh(names, pct, color=colors)
for y, (p, r) in enumerate(zip(pct, [r[1] for r in rows][::-1])):
    ax.text(p + 1, y, f"{p:.0f}%  {r:.3f} ms", va="center", fontsize=8)
ax.axvline(100, color="black", linewidth=0.8)
ax.set_xlim(0, 130)
ax.set_xlabel("% of a device-to-device copy's bandwidth (same run)")
ax.set_title("f32 stencils, 8192 x 8192, clamp: durin (blue), CuPy (grey)")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
