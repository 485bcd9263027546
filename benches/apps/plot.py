"""Draws the applications' GPU table as a PNG: for each application of benches/apps/, the
time of durin's graph against the best of Halide 21's schedules measured in the same
run (peers.py), as durin's speed-up. TABLE is the output of the benches and of
peers.py, each bench's after a line `== harris`, `== unsharp`, `== bgrid` or `== llap`
(local_laplacian at 2560x1536, then 8192x8192) and Halide's after `== halide`:

    python3 benches/apps/plot.py TABLE.txt OUT.png
"""
import math
import sys

section, blocks = None, {}
for line in open(sys.argv[1]):
    w = line.split()
    if not w:
        continue
    if w[0] == "==":
        section = w[1]
        continue
    if section == "halide" and w[0].startswith("halide-"):
        blocks.setdefault("halide", []).append((w[0], w[1], float(w[3])))
    elif w[0] == "row" and section is not None:
        if w[1].startswith("copy"):
            # A copy starts each table; local_laplacian prints two.
            blocks.setdefault(section, []).append({})
        else:
            blocks[section][-1][w[1]] = float(w[2])


def best(prefix, size=None):
    times = [t for name, n, t in blocks["halide"] if name.startswith(prefix) and (size is None or n == size)]
    return min(times)


apps = [
    ("Harris, 8192²", blocks["harris"][0]["graph"], best("halide-gpu-")),
    ("unsharp masking, 3 x 8192²", blocks["unsharp"][0]["graph"], best("halide-unsharp-gpu")),
    ("bilateral grid, 8192²", min(blocks["bgrid"][0].values()), best("halide-bilateral-grid-gpu")),
    ("local Laplacian, 2560x1536", min(blocks["llap"][0].values()), best("halide-local-laplacian-gpu", "2560x1536")),
    ("local Laplacian, 8192²", min(blocks["llap"][1].values()), best("halide-local-laplacian-gpu", "8192x8192")),
]
for name, ours, theirs in apps:
    print(f"{name}: durin {ours:.3f} ms, Halide {theirs:.3f} ms, {theirs / ours:.2f}x")
mean = math.exp(sum(math.log(t / o) for _, o, t in apps) / len(apps))
print(f"geometric mean {mean:.2f}x")
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("plot: matplotlib is not installed, no plot", file=sys.stderr)
    sys.exit(0)
fig, ax = plt.subplots(figsize=(9, 0.5 * len(apps) + 1.4))
names = [a[0] for a in apps][::-1]
speed = [a[2] / a[1] for a in apps][::-1]
ax.barh(names, speed, color="#1f77b4")
for y, (s, (_, o, t)) in enumerate(zip(speed, apps[::-1])):
    ax.text(s + 0.03, y, f"{s:.2f}x  ({o:.3f} ms against {t:.3f} ms)", va="center", fontsize=8)
ax.axvline(1, color="black", linewidth=0.8)
ax.set_xlim(0, max(speed) + 1.0)
ax.set_xlabel("speed-up of durin's graph over Halide 21's best GPU schedule (same run)")
ax.set_title(f"Applications on an H100, f32: geometric mean {mean:.2f}x")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
