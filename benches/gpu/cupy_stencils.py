"""CuPy's filters for the jobs of benches/gpu/bandwidth.art, timed the same way.

f32 N x N image, clamped border (`mode="nearest"`), median over RUNS of CUDA events around
one run, against a device-to-device copy of the image in the same run. Prints, per filter,
`row cupy-NAME MS PERCENT_OF_COPY -` as bandwidth.art prints its rows.

    python3 benches/gpu/cupy_stencils.py N RUNS
"""
import math
import sys

try:
    import cupy as cp
    import cupyx.scipy.ndimage as ndi
except ImportError:
    print("cupy: not installed, skipped", file=sys.stderr)
    sys.exit(0)


def gaussian(r, sigma=1.0):
    w = [math.exp(-(d * d) / (2 * sigma * sigma)) for d in range(-r, r + 1)]
    s = sum(w)
    return cp.asarray([x / s for x in w], dtype=cp.float32)


def median_ms(f, runs):
    f()
    cp.cuda.Device().synchronize()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(runs):
        start.record()
        f()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    times.sort()
    return times[len(times) // 2]


def main():
    n, runs = int(sys.argv[1]), int(sys.argv[2])
    x = (cp.arange(n * n, dtype=cp.int64).reshape(n, n))
    src = (((x % n) * 7 + (x // n) * 13) % 256).astype(cp.float32) / 256
    dst = cp.empty_like(src)
    tmp = cp.empty_like(src)
    floor = median_ms(lambda: dst.__setitem__(Ellipsis, src), runs)
    print(f"row cupy-copy {floor:.6f} 100 -")

    def sep(r):
        g = gaussian(r)
        def f():
            ndi.correlate1d(src, g, axis=1, output=tmp, mode="nearest")
            ndi.correlate1d(tmp, g, axis=0, output=dst, mode="nearest")
        return f

    g5 = gaussian(2)
    k2 = cp.outer(g5, g5)
    sx = cp.asarray([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]], dtype=cp.float32)

    def sobel():
        a = ndi.correlate(src, sx, mode="nearest")
        b = ndi.correlate(src, sx.T, mode="nearest")
        cp.sqrt(a * a + b * b, out=dst)

    jobs = [
        ("gauss5x5-sep", sep(2)),
        ("gauss3x3-sep", sep(1)),
        ("gauss7x7-sep", sep(3)),
        ("gauss5x5-2d", lambda: ndi.correlate(src, k2, output=dst, mode="nearest")),
        ("box21x21-sep", lambda: ndi.uniform_filter(src, 21, output=dst, mode="nearest")),
        ("sobel", sobel),
    ]
    for name, f in jobs:
        ms = median_ms(f, runs)
        print(f"row cupy-{name} {ms:.6f} {100 * floor / ms:.1f} -")


main()
