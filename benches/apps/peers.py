"""Halide 21's Harris corners (apps/harris, on one channel), unsharp masking
(apps/unsharp, three planes), bilateral grid (apps/bilateral_grid) and local Laplacian
filter (apps/local_laplacian, on one channel), with the schedules Halide's apps/ generators publish, for
`benches/apps/harris.art`'s and `benches/apps/unsharp.art`'s comparisons. The images are
the benches': for Harris ((x * 7 + y * 13) % 256) / 256 + x % 3, for unsharp plane c
((x * (7 + c) + y * 13 + 31 c) % 256) * 0.0035 + 0.1; N x N, f32. Prints one line per
variant: `name N threads median_ms checksum`.

Harris has two variants of each schedule:
- `clamped`: the input through repeat_edge, every output pixel (durin's semantics);
- `interior`: as the app runs it, no boundary condition, the output (N - 4) x (N - 4)
  pixels at offset (2, 2) (every read inside the input).
Unsharp clamps its input itself (repeat_edge, as the app does).

    python peers.py harris|unsharp|bilateral_grid N RUNS cpu THREADS   (threads: HL_NUM_THREADS)
    python peers.py harris|unsharp|bilateral_grid N RUNS gpu TILE_X TILE_Y [CUDA_CAPABILITY]
    python peers.py local_laplacian W H RUNS cpu THREADS
    python peers.py local_laplacian W H RUNS gpu 0 0 [CUDA_CAPABILITY]

(bilateral_grid's GPU schedule has its own tiles: TILE_X and TILE_Y are not used.)
With PEERS_BEST=1 in the environment a time is the best run's instead of the median (as
`cpu.art` reports durin's, for a machine shared with other work).
"""
import math
import os
import sys
import time

import numpy as np
import halide as hl

BEST = os.environ.get("PEERS_BEST") == "1"


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
    return times[0] if BEST else times[len(times) // 2]


def gpu_target(args):
    """The host target with CUDA (capability args[2], 86 by default), and the tile size."""
    cap = args[2] if len(args) > 2 else "86"
    target = hl.get_host_target().with_feature(hl.TargetFeature.CUDA).with_feature(
        getattr(hl.TargetFeature, "CUDACapability" + cap))
    return target, int(args[0]), int(args[1])


def timed(out, result, mode, runs):
    """Compiles `out` (already for its target), realizes it into `result` once, then the
    median time of a run: on the GPU per run of nine between device synchronizations."""
    out.realize(result)
    if mode == "gpu":
        result.device_sync()

        def nine():
            for _ in range(9):
                out.realize(result)
            result.device_sync()
        ms = median_ms(nine, runs, 1) / 9
        result.copy_to_host()
    else:
        ms = median_ms(lambda: out.realize(result), runs, 1)
    return ms, float(np.asarray(result, dtype=np.float64).sum())


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
            target, tx, ty = gpu_target(args)
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
        ms, checksum = timed(out, result, mode, runs)
        print(f"{label} {n} {threads} {ms:.4f} {checksum:.6g}", flush=True)


def planes(n):
    y, x = np.mgrid[0:n, 0:n]
    return np.stack([(((x * (7 + c) + y * 13 + 31 * c) % 256).astype(np.float32) * np.float32(0.0035)
                      + np.float32(0.1)).astype(np.float32) for c in range(3)])


def unsharp(n, runs, mode, args):
    """apps/unsharp's algorithm (sigma 1.5) and schedules."""
    src = planes(n)
    inp = hl.Buffer(src)
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    sigma = 1.5
    kernel = hl.Func("kernel")
    kernel[x] = hl.exp(-x * x / hl.f32(2 * sigma * sigma)) / hl.f32(math.sqrt(2 * math.pi) * sigma)
    bounded = hl.BoundaryConditions.repeat_edge(inp)
    gray, blur_y, blur_x = hl.Func("gray"), hl.Func("blur_y"), hl.Func("blur_x")
    gray[x, y] = (hl.f32(0.299) * bounded[x, y, 0] + hl.f32(0.587) * bounded[x, y, 1]
                  + hl.f32(0.114) * bounded[x, y, 2])
    blur_y[x, y] = (kernel[0] * gray[x, y] + kernel[1] * (gray[x, y - 1] + gray[x, y + 1])
                    + kernel[2] * (gray[x, y - 2] + gray[x, y + 2])
                    + kernel[3] * (gray[x, y - 3] + gray[x, y + 3]))
    blur_x[x, y] = (kernel[0] * blur_y[x, y] + kernel[1] * (blur_y[x - 1, y] + blur_y[x + 1, y])
                    + kernel[2] * (blur_y[x - 2, y] + blur_y[x + 2, y])
                    + kernel[3] * (blur_y[x - 3, y] + blur_y[x + 3, y]))
    sharpen, ratio, out = hl.Func("sharpen"), hl.Func("ratio"), hl.Func("output")
    sharpen[x, y] = 2 * gray[x, y] - blur_x[x, y]
    ratio[x, y] = sharpen[x, y] / gray[x, y]
    out[x, y, c] = ratio[x, y] * inp[x, y, c]
    target = hl.get_host_target()
    if mode == "gpu":
        target, tx, ty = gpu_target(args)
        xi, yi = hl.Var("xi"), hl.Var("yi")
        out.compute_root().reorder(c, x, y).gpu_tile(x, y, xi, yi, tx, ty).bound(c, 0, 3).unroll(c)
        ratio.compute_at(out, xi)
        gray.compute_at(out, x).tile(x, y, xi, yi, 2, 2).unroll(xi).unroll(yi).gpu_threads(x, y)
        blur_y.compute_at(out, x).unroll(x, 2).gpu_threads(x, y)
        label, threads = f"halide-unsharp-gpu-{tx}x{ty}", "gpu"
    else:
        vec = target.natural_vector_size(hl.Float(32))
        yo, yi = hl.Var("yo"), hl.Var("yi")
        out.split(y, yo, yi, 32).vectorize(x, vec).parallel(yo).reorder(x, c, yi, yo)
        gray.compute_at(out, yi).store_at(out, yo).vectorize(x, vec)
        blur_y.compute_at(out, yi).store_at(out, yo).vectorize(x, vec)
        ratio.compute_at(out, yi).store_at(out, yo).vectorize(x, vec)
        label, threads = "halide-unsharp-cpu", args[0]
    result = hl.Buffer(hl.Float(32), [n, n, 3])
    out.compile_jit(target)
    ms, checksum = timed(out, result, mode, runs)
    print(f"{label} {n} {threads} {ms:.4f} {checksum:.6g}", flush=True)


def bilateral_grid(n, runs, mode, args):
    """apps/bilateral_grid's algorithm (s_sigma 8, r_sigma 0.1) and schedules, on the
    image ((x * 7 + y * 13) % 256) / 256."""
    y_, x_ = np.mgrid[0:n, 0:n]
    src = (((x_ * 7 + y_ * 13) % 256).astype(np.float32) * np.float32(0.00390625)).astype(np.float32)
    inp = hl.Buffer(src)
    s_sigma, r_sigma = 8, hl.f32(0.1)
    x, y, z, c = hl.Var("x"), hl.Var("y"), hl.Var("z"), hl.Var("c")
    clamped = hl.BoundaryConditions.repeat_edge(inp)
    r = hl.RDom([(0, s_sigma), (0, s_sigma)])
    val = hl.clamp(clamped[x * s_sigma + r.x - s_sigma // 2, y * s_sigma + r.y - s_sigma // 2], 0.0, 1.0)
    zi = hl.i32(val * (1.0 / r_sigma) + 0.5)
    histogram = hl.Func("histogram")
    histogram[x, y, z, c] = hl.f32(0.0)
    histogram[x, y, zi, c] += hl.mux(c, [val, hl.f32(1.0)])
    blurz, blurx, blury = hl.Func("blurz"), hl.Func("blurx"), hl.Func("blury")
    blurz[x, y, z, c] = (histogram[x, y, z - 2, c] + histogram[x, y, z - 1, c] * 4 + histogram[x, y, z, c] * 6
                         + histogram[x, y, z + 1, c] * 4 + histogram[x, y, z + 2, c])
    blurx[x, y, z, c] = (blurz[x - 2, y, z, c] + blurz[x - 1, y, z, c] * 4 + blurz[x, y, z, c] * 6
                         + blurz[x + 1, y, z, c] * 4 + blurz[x + 2, y, z, c])
    blury[x, y, z, c] = (blurx[x, y - 2, z, c] + blurx[x, y - 1, z, c] * 4 + blurx[x, y, z, c] * 6
                         + blurx[x, y + 1, z, c] * 4 + blurx[x, y + 2, z, c])
    val = hl.clamp(inp[x, y], 0.0, 1.0)
    zv = val * (1.0 / r_sigma)
    zi = hl.i32(zv)
    zf = zv - zi
    xf = hl.f32(x % s_sigma) / s_sigma
    yf = hl.f32(y % s_sigma) / s_sigma
    xi, yi = x / s_sigma, y / s_sigma
    interpolated = hl.Func("interpolated")
    interpolated[x, y, c] = hl.lerp(
        hl.lerp(hl.lerp(blury[xi, yi, zi, c], blury[xi + 1, yi, zi, c], xf),
                hl.lerp(blury[xi, yi + 1, zi, c], blury[xi + 1, yi + 1, zi, c], xf), yf),
        hl.lerp(hl.lerp(blury[xi, yi, zi + 1, c], blury[xi + 1, yi, zi + 1, c], xf),
                hl.lerp(blury[xi, yi + 1, zi + 1, c], blury[xi + 1, yi + 1, zi + 1, c], xf), yf), zf)
    out = hl.Func("bilateral_grid")
    out[x, y] = interpolated[x, y, 0] / interpolated[x, y, 1]
    target = hl.get_host_target()
    if mode == "gpu":
        target, _tx, _ty = gpu_target(args)
        xi_, yi_, zi_ = hl.Var("xi"), hl.Var("yi"), hl.Var("zi")
        blurz.compute_root().reorder(c, z, x, y).gpu_tile(x, y, xi_, yi_, 8, 8)
        histogram.reorder(c, z, x, y).compute_at(blurz, x).gpu_threads(x, y)
        histogram.update().reorder(c, r.x, r.y, x, y).gpu_threads(x, y).unroll(c)
        for f in (blurx, blury):
            (f.compute_root().reorder(c, x, y, z).reorder_storage(c, x, y, z).vectorize(c)
             .unroll(y, 2, hl.TailStrategy.RoundUp)
             .gpu_tile(x, y, z, xi_, yi_, zi_, 32, 8, 1, hl.TailStrategy.RoundUp))
        out.compute_root().gpu_tile(x, y, xi_, yi_, 32, 8)
        interpolated.compute_at(out, xi_).vectorize(c)
        label, threads = "halide-bilateral-grid-gpu", "gpu"
    else:
        blurz.compute_at(blurx, y).reorder(c, z, x, y).vectorize(x, 8).unroll(c)
        histogram.compute_at(blurz, y)
        histogram.update().reorder(c, r.x, r.y, x, y).unroll(c)
        blurx.compute_root().reorder(c, x, z, y).parallel(y).vectorize(x, 8).unroll(c)
        (blury.compute_at(out, y).store_in(hl.MemoryType.Stack).reorder(c, x, y, z)
         .reorder_storage(c, z, x, y).vectorize(x, 8).unroll(c))
        out.compute_root().parallel(y, 8).vectorize(x, 8)
        label, threads = "halide-bilateral-grid-cpu", args[0]
    result = hl.Buffer(hl.Float(32), [n, n])
    out.compile_jit(target)
    ms, checksum = timed(out, result, mode, runs)
    print(f"{label} {n} {threads} {ms:.4f} {checksum:.6g}", flush=True)


def local_laplacian(w, h, runs, mode, args):
    """apps/local_laplacian's algorithm (8 pyramid levels, 8 intensities, alpha 1 / 7,
    beta 1, as its process runs it) on one channel: the input is the gray image, the
    output the collapsed pyramid clamped to [0, 1]; with the GPU and CPU schedules of
    Halide 21's generator. The image is ((x * 7 + y * 13) % 256) / 256, W x H."""
    y_, x_ = np.mgrid[0:h, 0:w]
    src = (((x_ * 7 + y_ * 13) % 256).astype(np.float32) * np.float32(0.00390625)).astype(np.float32)
    inp = hl.Buffer(src)
    J, levels, alpha, beta = 8, 8, hl.f32(1.0 / 7), hl.f32(1.0)
    x, y, k = hl.Var("x"), hl.Var("y"), hl.Var("k")

    def downsample(f):
        dx, dy = hl.Func("downx"), hl.Func("downy")
        dy[x, y, hl._] = (f[x, 2 * y - 1, hl._] + 3.0 * (f[x, 2 * y, hl._] + f[x, 2 * y + 1, hl._])
                          + f[x, 2 * y + 2, hl._]) / 8.0
        dx[x, y, hl._] = (dy[2 * x - 1, y, hl._] + 3.0 * (dy[2 * x, y, hl._] + dy[2 * x + 1, y, hl._])
                          + dy[2 * x + 2, y, hl._]) / 8.0
        return dx

    def upsample(f):
        ux, uy = hl.Func("upx"), hl.Func("upy")
        ux[x, y, hl._] = hl.lerp(f[(x + 1) // 2, y, hl._], f[(x - 1) // 2, y, hl._], ((x % 2) * 2 + 1) / 4.0)
        uy[x, y, hl._] = hl.lerp(ux[x, (y + 1) // 2, hl._], ux[x, (y - 1) // 2, hl._], ((y % 2) * 2 + 1) / 4.0)
        return uy

    remap = hl.Func("remap")
    fx = hl.f32(x) / 256.0
    remap[x] = alpha * fx * hl.exp(-fx * fx / 2.0)
    gray = hl.Func("gray")
    gray[x, y] = hl.BoundaryConditions.repeat_edge(inp)[x, y]
    g_pyr = [hl.Func(f"gPyramid{j}") for j in range(J)]
    level = k * hl.f32(1.0 / (levels - 1))
    idx = hl.clamp(hl.i32(gray[x, y] * float(levels - 1) * 256.0), 0, (levels - 1) * 256)
    g_pyr[0][x, y, k] = beta * (gray[x, y] - level) + level + remap[idx - 256 * k]
    for j in range(1, J):
        g_pyr[j][x, y, k] = downsample(g_pyr[j - 1])[x, y, k]
    l_pyr = [hl.Func(f"lPyramid{j}") for j in range(J)]
    l_pyr[J - 1][x, y, k] = g_pyr[J - 1][x, y, k]
    for j in range(J - 2, -1, -1):
        l_pyr[j][x, y, k] = g_pyr[j][x, y, k] - upsample(g_pyr[j + 1])[x, y, k]
    in_g = [hl.Func(f"inGPyramid{j}") for j in range(J)]
    in_g[0][x, y] = gray[x, y]
    for j in range(1, J):
        in_g[j][x, y] = downsample(in_g[j - 1])[x, y]
    out_l = [hl.Func(f"outLPyramid{j}") for j in range(J)]
    for j in range(J):
        lv = in_g[j][x, y] * float(levels - 1)
        li = hl.clamp(hl.i32(lv), 0, levels - 2)
        lf = lv - hl.f32(li)
        out_l[j][x, y] = (1.0 - lf) * l_pyr[j][x, y, li] + lf * l_pyr[j][x, y, li + 1]
    out_g = [hl.Func(f"outGPyramid{j}") for j in range(J)]
    out_g[J - 1][x, y] = out_l[J - 1][x, y]
    for j in range(J - 2, -1, -1):
        out_g[j][x, y] = upsample(out_g[j + 1])[x, y] + out_l[j][x, y]
    out = hl.Func("output")
    out[x, y] = hl.clamp(out_g[0][x, y], 0.0, 1.0)
    target = hl.get_host_target()
    xi, yi, yo = hl.Var("xi"), hl.Var("yi"), hl.Var("yo")
    remap.compute_root()
    if mode == "gpu":
        target, _tx, _ty = gpu_target(args)
        out.compute_root().never_partition_all().gpu_tile(x, y, xi, yi, 16, 8)
        for j in range(J):
            bw, bh = (16, 8) if j <= 3 else (2, 2)
            if j > 0:
                in_g[j].compute_root().never_partition_all().gpu_tile(x, y, xi, yi, bw, bh)
                g_pyr[j].compute_root().reorder(k, x, y).never_partition_all().gpu_tile(x, y, xi, yi, bw, bh)
            out_g[j].compute_root().never_partition_all().gpu_tile(x, y, xi, yi, bw, bh)
        label, threads = "halide-local-laplacian-gpu", "gpu"
    else:
        out.split(y, yo, y, 64).parallel(yo).vectorize(x, 8)
        gray.compute_root().never_partition([y]).parallel(y, 32).vectorize(x, 8)
        for j in range(1, 5):
            in_g[j].compute_root().parallel(y, 32).vectorize(x, 8)
            g_pyr[j].compute_root().reorder_storage(x, k, y).reorder(k, y).parallel(y, 8).vectorize(x, 8)
            (out_g[j].store_at(out, yo).compute_at(out, y).fold_storage(y, 4)
             .vectorize(x, 8, hl.TailStrategy.RoundUp))
            if j > 1:
                in_g[j].never_partition_all()
                g_pyr[j].never_partition_all()
        out_g[0].compute_at(out, y).hoist_storage(out, yo).vectorize(x, 8, hl.TailStrategy.RoundUp)
        for j in range(5, J):
            in_g[j].compute_root()
            g_pyr[j].compute_root().parallel(k)
            out_g[j].compute_root()
        label, threads = "halide-local-laplacian-cpu", args[0]
    result = hl.Buffer(hl.Float(32), [w, h])
    out.compile_jit(target)
    ms, checksum = timed(out, result, mode, runs)
    print(f"{label} {w}x{h} {threads} {ms:.4f} {checksum:.6g}", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "local_laplacian":
        local_laplacian(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6:])
    else:
        app = {"harris": run, "unsharp": unsharp, "bilateral_grid": bilateral_grid}[sys.argv[1]]
        app(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5:])
