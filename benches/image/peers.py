"""The image benchmark's peers: the same 5x5 separable Gaussian (sigma 1.0, clamp to the
edge, f32) of the same N x N image with Halide's JIT (a schedule fused per strip of 32 rows,
vectorized, parallel over strips) and OpenCV's sepFilter2D. Prints one line per
measurement: `name N threads median_ms checksum`.

    python peers.py N THREADS RUNS
"""
import math
import os
import sys
import time

import numpy as np


def weights():
    e = [math.exp(-(d * d) / 2.0) for d in range(-2, 3)]
    total = sum(e)
    return np.array([v / total for v in e], dtype=np.float32)


def image(n):
    y, x = np.mgrid[0:n, 0:n]
    return (((x * 7 + y * 13) % 256).astype(np.float32) * np.float32(1.0 / 255.0)).astype(np.float32)


def median_ms(f, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        f()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2]


def halide(src, w, threads, runs):
    import halide as hl

    n = src.shape[0]
    inp = hl.Buffer(src)
    x, y, yo, yi = hl.Var("x"), hl.Var("y"), hl.Var("yo"), hl.Var("yi")
    clamped = hl.BoundaryConditions.repeat_edge(inp)
    bx, by = hl.Func("bx"), hl.Func("by")
    bx[x, y] = sum(float(w[i]) * clamped[x + i - 2, y] for i in range(5))
    by[x, y] = sum(float(w[j]) * bx[x, y + j - 2] for j in range(5))
    by.split(y, yo, yi, 32).parallel(yo).vectorize(x, 8)
    bx.compute_at(by, yo).vectorize(x, 8)
    out = hl.Buffer(hl.Float(32), [n, n])
    by.compile_jit()
    by.realize(out)
    ms = median_ms(lambda: by.realize(out), runs)
    return ms, float(np.asarray(out, dtype=np.float64).sum())


def opencv(src, w, threads, runs):
    import cv2

    cv2.setNumThreads(threads)
    dst = np.empty_like(src)
    k = w.reshape(5, 1)
    f = lambda: cv2.sepFilter2D(src, cv2.CV_32F, k, k, dst=dst, borderType=cv2.BORDER_REPLICATE)
    f()
    return median_ms(f, runs), float(dst.astype(np.float64).sum())


def main():
    n, threads, runs = (int(a) for a in sys.argv[1:4])
    src = image(n)
    w = weights()
    for name, f in (("halide", halide), ("opencv", opencv)):
        ms, checksum = f(src, w, threads, runs)
        print(f"{name} {n} {threads} {ms:.3f} {checksum:.6g}", flush=True)


if __name__ == "__main__":
    main()
