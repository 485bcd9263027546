"""Halide 21's Harris corners (apps/harris, on one channel), with the schedules Halide's
apps/harris generator publishes, for `benches/apps/harris.art`'s comparison. The image is
the bench's: ((x * 7 + y * 13) % 256) / 256 + x % 3, N x N, f32. Prints one line per
variant: `name N threads median_ms checksum`.

Two variants of each schedule:
- `clamped`: the input through repeat_edge, every output pixel (durin's semantics);
- `interior`: as the app runs it, no boundary condition, the output (N - 4) x (N - 4)
  pixels at offset (2, 2) (every read inside the input).

    python peers.py N RUNS cpu THREADS      (threads through HL_NUM_THREADS)
    python peers.py N RUNS gpu TILE_X TILE_Y [CUDA_CAPABILITY]
"""
import sys
import time

import numpy as np
import halide as hl


def image(n):
    y, x = np.mgrid[0:n, 0:n]
    v = ((x * 7 + y * 13) % 256).astype(np.float32) * np.float32(0.00390625)
    return (v + (x % 3).astype(np.float32)).astype(np.float32)


def harris(inp):
    """The algorithm of apps/harris without its gray conversion: (output, Ix, Iy)."""
    x, y = hl.Var("x"), hl.Var("y")
    ix, iy = hl.Func("Ix"), hl.Func("Iy")
    t = hl.f32(1.0 / 12)
    iy[x, y] = (inp[x - 1, y - 1] * (-t) + inp[x - 1, y + 1] * t + inp[x, y - 1] * (-2 * t)
                + inp[x, y + 1] * (2 * t) + inp[x + 1, y - 1] * (-t) + inp[x + 1, y + 1] * t)
    ix[x, y] = (inp[x - 1, y - 1] * (-t) + inp[x + 1, y - 1] * t + inp[x - 1, y] * (-2 * t)
                + inp[x + 1, y] * (2 * t) + inp[x - 1, y + 1] * (-t) + inp[x + 1, y + 1] * t)
    ixx, iyy, ixy = hl.Func("Ixx"), hl.Func("Iyy"), hl.Func("Ixy")
    ixx[x, y] = ix[x, y] * ix[x, y]
    iyy[x, y] = iy[x, y] * iy[x, y]
    ixy[x, y] = ix[x, y] * iy[x, y]

    def sum3x3(f):
        return sum(f[x + i, y + j] for i in (-1, 0, 1) for j in (-1, 0, 1))

    sxx, syy, sxy = hl.Func("Sxx"), hl.Func("Syy"), hl.Func("Sxy")
    sxx[x, y] = sum3x3(ixx)
    syy[x, y] = sum3x3(iyy)
    sxy[x, y] = sum3x3(ixy)
    out = hl.Func("output")
    det = sxx[x, y] * syy[x, y] - sxy[x, y] * sxy[x, y]
    trace = sxx[x, y] + syy[x, y]
    out[x, y] = det - hl.f32(0.04) * trace * trace
    return out, ix, iy, x, y


def median_ms(f, runs, batch):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(batch):
            f()
        times.append((time.perf_counter() - t0) * 1e3 / batch)
    times.sort()
    return times[len(times) // 2]


def variants(src):
    n = src.shape[0]
    buf = hl.Buffer(src)
    yield "clamped", hl.BoundaryConditions.repeat_edge(buf), (n, n), (0, 0)
    yield "interior", buf, (n - 4, n - 4), (2, 2)


def run(n, runs, mode, args):
    src = image(n)
    for name, inp, (w, h), (x0, y0) in variants(src):
        out, ix, iy, x, y = harris(inp)
        target = hl.get_host_target()
        if mode == "gpu":
            tx, ty = int(args[0]), int(args[1])
            cap = args[2] if len(args) > 2 else "86"
            target = target.with_feature(hl.TargetFeature.CUDA).with_feature(
                getattr(hl.TargetFeature, "CUDACapability" + cap))
            xi, yi = hl.Var("xi"), hl.Var("yi")
            out.gpu_tile(x, y, xi, yi, tx, ty)
            ix.compute_at(out, x).gpu_threads(x, y)
            iy.compute_at(out, x).gpu_threads(x, y)
            label = f"halide-gpu-{tx}x{ty}-{name}"
            threads = "gpu"
        else:
            vec = target.natural_vector_size(hl.Float(32))
            yi = hl.Var("yi")
            out.split(y, y, yi, 32).parallel(y).vectorize(x, vec)
            ix.store_at(out, y).compute_at(out, yi).vectorize(x, vec)
            iy.store_at(out, y).compute_at(out, yi).vectorize(x, vec)
            ix.compute_with(iy, x)
            label = f"halide-cpu-{name}"
            threads = args[0]
        result = hl.Buffer(hl.Float(32), [w, h])
        result.set_min([x0, y0])
        out.compile_jit(target)
        out.realize(result)
        if mode == "gpu":
            def step():
                out.realize(result)
            def once():
                step()
                result.device_sync()
            once()
            ms = median_ms(lambda: (step(), step(), step(), step(), step(), step(), step(), step(),
                                    step(), result.device_sync()), runs, 1) / 9
            result.copy_to_host()
        else:
            ms = median_ms(lambda: out.realize(result), runs, 1)
        checksum = float(np.asarray(result, dtype=np.float64).sum())
        print(f"{label} {n} {threads} {ms:.4f} {checksum:.6g}", flush=True)


if __name__ == "__main__":
    run(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4:])
