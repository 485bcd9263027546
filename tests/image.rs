//! The image library (`stdlib/image.art`) against references computed here, in `f64` (or
//! in `f32` where the library's result is exact): `tests/image/ops.art` exports the
//! operators as C functions; they are compiled once with LLVM's JIT and called on random
//! images, masks, sizes (1x1, sizes smaller than the mask, odd sizes), pitches and
//! boundary modes, with 1 thread and with one per core (which must give the same bits).
//!
//! The boundary modes are computed here by reflecting or shifting a coordinate step by
//! step until it lies inside the image, not by the library's modular formulas.

use durin_backend_llvm as llvm;
use durin_passes::{Config, PassContext, Pipeline, PrintAfter, RunOptions};
use inkwell::context::Context;
use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, TestCaseError, TestRunner};
use std::path::Path;

/// The library's boundary modes, numbered as `ops.art` numbers them.
#[derive(Clone, Copy, Debug)]
enum Mode {
    Clamp,
    Mirror,
    Mirror101,
    Repeat,
    Constant(f32),
}

impl Mode {
    fn number(self) -> (i32, f32) {
        match self {
            Mode::Clamp => (0, 0.0),
            Mode::Mirror => (1, 0.0),
            Mode::Mirror101 => (2, 0.0),
            Mode::Repeat => (3, 0.0),
            Mode::Constant(c) => (4, c),
        }
    }

    /// Coordinate `x` on an axis of `n` pixels, brought inside, or `None` for the constant.
    fn coord(self, mut x: i64, n: i64) -> Option<i64> {
        match self {
            Mode::Clamp => Some(x.clamp(0, n - 1)),
            Mode::Repeat => {
                while x < 0 {
                    x += n;
                }
                while x >= n {
                    x -= n;
                }
                Some(x)
            }
            Mode::Mirror => {
                // Reflect at -1/2 and n - 1/2 until inside.
                while x < 0 || x >= n {
                    x = if x < 0 { -x - 1 } else { 2 * n - 1 - x };
                }
                Some(x)
            }
            Mode::Mirror101 => {
                if n == 1 {
                    return Some(0);
                }
                // Reflect at 0 and n - 1 until inside.
                while x < 0 || x >= n {
                    x = if x < 0 { -x } else { 2 * (n - 1) - x };
                }
                Some(x)
            }
            Mode::Constant(_) => (0..n).contains(&x).then_some(x),
        }
    }

    /// The pixel at (x, y) of `img` under this mode.
    fn read(self, img: &Plane, x: i64, y: i64) -> f64 {
        match (self.coord(x, img.w as i64), self.coord(y, img.h as i64)) {
            (Some(x), Some(y)) => img.get(x as usize, y as usize) as f64,
            _ => match self {
                Mode::Constant(c) => c as f64,
                _ => unreachable!("only the constant mode leaves the image"),
            },
        }
    }
}

/// A plane of `f32` pixels with a pitch.
#[derive(Clone, Debug)]
struct Plane {
    w: usize,
    h: usize,
    pitch: usize,
    data: Vec<f32>,
}

impl Plane {
    fn get(&self, x: usize, y: usize) -> f32 {
        self.data[y * self.pitch + x]
    }

    fn zeros(w: usize, h: usize, pitch: usize) -> Plane {
        Plane {
            w,
            h,
            pitch,
            data: vec![0.0; pitch * h],
        }
    }

    /// The pixels, row by row, without the padding of the pitch.
    fn pixels(&self) -> Vec<f32> {
        (0..self.h)
            .flat_map(|y| (0..self.w).map(move |x| (x, y)))
            .map(|(x, y)| self.get(x, y))
            .collect()
    }
}

fn plane(w: usize, h: usize, pad: usize) -> impl Strategy<Value = Plane> {
    let pitch = w + pad;
    prop::collection::vec(-1.0f32..1.0, pitch * h).prop_map(move |data| Plane { w, h, pitch, data })
}

fn mode() -> impl Strategy<Value = Mode> {
    prop_oneof![
        Just(Mode::Clamp),
        Just(Mode::Mirror),
        Just(Mode::Mirror101),
        Just(Mode::Repeat),
        (-2.0f32..2.0).prop_map(Mode::Constant),
    ]
}

/// The mask shapes of `ops.art`: (rx, ry). The last two are wider than the library unrolls
/// (more than 33 taps across or down): their loops run at run time.
const SHAPES: [(usize, usize); 7] = [(1, 1), (2, 2), (3, 1), (0, 2), (4, 3), (18, 1), (2, 17)];

/// An image size for mask `shape`: for the wide masks, 30 more each way, so that some
/// images have an interior.
fn sized(shape: usize, (w, h): (usize, usize)) -> (usize, usize) {
    if SHAPES[shape].0.max(SHAPES[shape].1) > 16 {
        (w + 30, h + 30)
    } else {
        (w, h)
    }
}

/// A weight, zero one time in four (the library leaves out terms of weight zero).
fn weight() -> impl Strategy<Value = f32> {
    prop_oneof![1 => Just(0.0f32), 3 => -1.0f32..1.0]
}

/// The reference convolution: sum of w(dx, dy) * src(x + dx, y + dy) in `f64`, and the sum
/// of the magnitudes of its terms (for the tolerance).
fn convolve_ref(
    src: &Plane,
    rx: usize,
    ry: usize,
    weight: impl Fn(i64, i64) -> f64,
    mode: Mode,
) -> Vec<(f64, f64)> {
    let (rx, ry) = (rx as i64, ry as i64);
    let mut out = Vec::new();
    for y in 0..src.h as i64 {
        for x in 0..src.w as i64 {
            let (mut sum, mut mag) = (0.0, 0.0);
            for dy in -ry..=ry {
                for dx in -rx..=rx {
                    let term = weight(dx, dy) * mode.read(src, x + dx, y + dy);
                    sum += term;
                    mag += term.abs();
                }
            }
            out.push((sum, mag));
        }
    }
    out
}

fn close(got: &[f32], want: &[(f64, f64)], what: &str) -> Result<(), TestCaseError> {
    prop_assert_eq!(got.len(), want.len());
    for (i, (&g, &(w, mag))) in got.iter().zip(want).enumerate() {
        let tol = 1e-5 * (1.0 + mag);
        prop_assert!(
            (g as f64 - w).abs() <= tol,
            "{}: pixel {}: got {}, want {} (tolerance {})",
            what,
            i,
            g,
            w,
            tol
        );
    }
    Ok(())
}

fn same_bits(a: &[f32], b: &[f32], what: &str) -> Result<(), TestCaseError> {
    equal_bits(a, b, &format!("{what}: 1 thread and all threads"))
}

/// `a` and `b` have the same bits, or an error naming `what` differs.
fn equal_bits(a: &[f32], b: &[f32], what: &str) -> Result<(), TestCaseError> {
    prop_assert_eq!(a.len(), b.len(), "{} differ in their lengths", what);
    let differ = |i: &usize| a[*i].to_bits() != b[*i].to_bits();
    if let Some(i) = (0..a.len()).find(differ) {
        let n = (0..a.len()).filter(differ).count();
        prop_assert!(
            false,
            "{} differ in their bits at {} of {} values, the first at index {}: {:e} and {:e}",
            what,
            n,
            a.len(),
            i,
            a[i],
            b[i]
        );
    }
    Ok(())
}

type ConvolveSepFn = unsafe extern "C" fn(
    *mut f32,
    i32,
    *mut f32,
    i32,
    i32,
    i32,
    *const f32,
    i32,
    i32,
    f32,
    i32,
    i32,
);
type Filter = unsafe extern "C" fn(*mut f32, *mut f32, i32, i32, i32);
type LocalFn = unsafe extern "C" fn(*mut f32, *mut f32, i32, i32, i32, f32);
type PointsFn = unsafe extern "C" fn(*mut f32, *mut f32, *mut f32, *mut f32, i32, i32);
type ReduceFn = unsafe extern "C" fn(*mut f32, i32, i32, i32, *mut f64);
type U8Fn = unsafe extern "C" fn(*mut u8, i32, i32, *mut f32, *mut u8, *mut i32);
type ViewFn = unsafe extern "C" fn(*mut f32, i32, i32, i32, i32, i32, i32, *mut f32);
type WeightsFn = unsafe extern "C" fn(*mut f32);
type GpuRowsFn = unsafe extern "C" fn(*mut f32, *mut f32, i32, i32);
type SymmetryFn = unsafe extern "C" fn() -> i32;
type LiteralMasksFn = unsafe extern "C" fn(*mut f32, i32, i32, *mut f32, *mut f32, *mut f32);
type LocalThenFn = unsafe extern "C" fn(*mut f32, *mut f32, i32, i32, i32, f32, i32);
type ThreeInputsFn =
    unsafe extern "C" fn(*mut f32, *mut f32, *mut f32, *mut f32, i32, i32, i32, f32, i32);
type UnsharpFn = unsafe extern "C" fn(
    *mut f32,
    *mut f32,
    *mut f32,
    *mut f32,
    *mut f32,
    *mut f32,
    i32,
    i32,
    i32,
    f32,
    i32,
);
type PipelineNFn = unsafe extern "C" fn(*mut f32, *mut f32, i32, i32, i32, f32, i32, i32);
type PyrDownFn = unsafe extern "C" fn(*mut f32, i32, i32, *mut f32, i32, f32);
type PyrUpFn = unsafe extern "C" fn(*mut f32, i32, i32, *mut f32, i32, i32, i32, f32);
type ResizeFn = unsafe extern "C" fn(*mut f32, i32, i32, *mut f32, i32, i32, i32, i32, f32);

/// The exported functions of `ops.art`, compiled.
struct Ops {
    convolve: ConvolveSepFn,
    convolve_sep: ConvolveSepFn,
    convolve_sep_stream: ConvolveSepFn,
    gaussian: Filter,
    box10: Filter,
    gaussian_weights: WeightsFn,
    local: LocalFn,
    points: PointsFn,
    reductions: ReduceFn,
    u8: U8Fn,
    view: ViewFn,
    gpu_rows: GpuRowsFn,
}

/// The function `name` of a compiled program, as a function pointer of type `F`.
///
/// # Safety
/// `F` is the (C) signature of the exported function `name`.
unsafe fn function<F: Copy>(addr: &dyn Fn(&str) -> usize, name: &str) -> F {
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<usize>());
    let a = addr(name);
    // SAFETY: `F` is a function pointer type of the size of an address (checked above),
    // and `a` the address of a function of that signature (the caller's promise).
    unsafe { std::mem::transmute_copy::<usize, F>(&a) }
}

/// Compiles `ops.art` and calls `f` with its functions.
fn with_ops(f: impl FnOnce(&Ops)) {
    with_program("tests/image/ops.art", "test_convolve", |addr| {
        // SAFETY: each type is the signature of the exported function of that name in
        // `ops.art` (`#[export]` functions use the C calling convention).
        let ops = unsafe {
            Ops {
                convolve: function(addr, "test_convolve"),
                convolve_sep: function(addr, "test_convolve_sep"),
                convolve_sep_stream: function(addr, "test_convolve_sep_stream"),
                gaussian: function(addr, "test_gaussian"),
                box10: function(addr, "test_box10"),
                gaussian_weights: function(addr, "test_gaussian_weights"),
                local: function(addr, "test_local"),
                points: function(addr, "test_points"),
                reductions: function(addr, "test_reductions"),
                u8: function(addr, "test_u8"),
                view: function(addr, "test_view"),
                gpu_rows: function(addr, "test_gpu_rows"),
            }
        };
        f(&ops)
    })
}

/// The exported functions of `resample.art`, compiled.
struct Resample {
    pyr_down: PyrDownFn,
    pyr_up: PyrUpFn,
    resize: ResizeFn,
    local_then: LocalThenFn,
    pipeline3: LocalThenFn,
    pipeline_n: PipelineNFn,
    harris: LocalThenFn,
    harris_kept: LocalThenFn,
    graph: LocalThenFn,
    three_inputs: ThreeInputsFn,
    unsharp: UnsharpFn,
    literal_masks: LiteralMasksFn,
    mask_symmetry: SymmetryFn,
    bilateral_grid: LocalThenFn,
    local_laplacian: LocalThenFn,
}

/// Compiles `resample.art` and calls `f` with its functions.
fn with_resample(f: impl FnOnce(&Resample)) {
    with_program("tests/image/resample.art", "test_resize", |addr| {
        // SAFETY: as in `with_ops`, for `resample.art`.
        f(&unsafe {
            Resample {
                pyr_down: function(addr, "test_pyr_down"),
                pyr_up: function(addr, "test_pyr_up"),
                resize: function(addr, "test_resize"),
                local_then: function(addr, "test_local_then"),
                pipeline3: function(addr, "test_pipeline3"),
                pipeline_n: function(addr, "test_pipeline_n"),
                harris: function(addr, "test_harris"),
                harris_kept: function(addr, "test_harris_kept"),
                graph: function(addr, "test_graph"),
                three_inputs: function(addr, "test_three_inputs"),
                unsharp: function(addr, "test_unsharp"),
                literal_masks: function(addr, "test_literal_masks"),
                mask_symmetry: function(addr, "test_mask_symmetry"),
                bilateral_grid: function(addr, "test_bilateral_grid"),
                local_laplacian: function(addr, "test_local_laplacian"),
            }
        })
    })
}

/// Compiles the program at `path` as `durin run` would (the native pipeline at -O2, LLVM
/// at -O2) and calls `f` with a lookup of its exported functions' addresses.
fn with_program(path: &str, first: &str, f: impl FnOnce(&dyn Fn(&str) -> usize)) {
    let text = std::fs::read_to_string(path).expect("the test program");
    let out = durin_frontend::compile::compile_for(&[(path.to_string(), text)], true, false);
    assert!(!out.has_errors(), "{}", out.render());
    let mut w = out.lowered.expect("lowered").world;
    let opts = RunOptions {
        verify_each: false,
        print_after: PrintAfter::None,
    };
    // `durin run`'s fuel, the default: `ops.art` specializes well over a hundred
    // operators, `resample.art` a dozen graphs in every boundary mode.
    let mut cx = PassContext::new(Config::default());
    Pipeline::for_native(2)
        .run_in(&mut w, &opts, &mut cx, |_, _| {})
        .expect("passes");
    let ctx = Context::create();
    let lopts = llvm::Options {
        opt_level: 2,
        ..llvm::Options::default()
    };
    let compiled = llvm::compile(&ctx, &w, &lopts).expect("LLVM");
    let symbols = durin_runtime::symbols();
    let jit = compiled.jit(first, &symbols).expect("the JIT");
    f(&|name: &str| jit.function(name).expect("exported"))
}

/// Runs `f` (`test_convolve` or `test_convolve_sep`) on a copy of `src` into a new plane of
/// pitch width + `dpad`, with 1 thread and with all; the two results, and whether the
/// source was left as it was.
fn filter_twice(
    f: ConvolveSepFn,
    src: &Plane,
    dpad: usize,
    weights: &[f32],
    (shape, mode, sched): (usize, Mode, i32),
) -> (Vec<f32>, Vec<f32>, bool) {
    let (m, c) = mode.number();
    let mut outs = Vec::new();
    let mut kept = true;
    for threads in [1, 0] {
        let mut s = src.clone();
        let mut d = Plane::zeros(src.w, src.h, src.w + dpad);
        // SAFETY: the buffers hold pitch x height elements each, the weights as many as
        // the shape asks for (the callers make them so).
        unsafe {
            f(
                s.data.as_mut_ptr(),
                s.pitch as i32,
                d.data.as_mut_ptr(),
                d.pitch as i32,
                s.w as i32,
                s.h as i32,
                weights.as_ptr(),
                shape as i32,
                m,
                c,
                sched,
                threads,
            )
        };
        kept &= s.data == src.data;
        outs.push(d.pixels());
    }
    let all = outs.pop().expect("two runs");
    (outs.pop().expect("two runs"), all, kept)
}

fn runner() -> TestRunner {
    TestRunner::new(RunnerConfig {
        failure_persistence: None,
        ..RunnerConfig::default()
    })
}

/// Image sizes: the corner cases (1x1, 2x3, sizes smaller than a mask) and odd ones.
fn size() -> impl Strategy<Value = (usize, usize)> {
    prop_oneof![
        Just((1, 1)),
        Just((2, 3)),
        Just((3, 2)),
        (1usize..6, 1usize..6),
        (7usize..24, 5usize..19),
    ]
}

#[test]
fn image_operators_match_references() {
    with_ops(|ops| {
        // 2D convolution, every mode, random masks, 1 thread and all.
        let case = (size(), 0usize..3, 0usize..SHAPES.len(), mode()).prop_flat_map(
            |(size, pad, shape, mode)| {
                let (rx, ry) = SHAPES[shape];
                let (w, h) = sized(shape, size);
                let n = (2 * rx + 1) * (2 * ry + 1);
                (
                    plane(w, h, pad),
                    prop::collection::vec(weight(), n),
                    Just(shape),
                    Just(mode),
                    0usize..3,
                )
            },
        );
        runner()
            .run(&case, |(src, weights, shape, mode, dpad)| {
                let (rx, ry) = SHAPES[shape];
                let want = convolve_ref(
                    &src,
                    rx,
                    ry,
                    |dx, dy| {
                        let i =
                            (dy + ry as i64) as usize * (2 * rx + 1) + (dx + rx as i64) as usize;
                        weights[i] as f64
                    },
                    mode,
                );
                let (one, all, kept) =
                    filter_twice(ops.convolve, &src, dpad, &weights, (shape, mode, 0));
                prop_assert!(kept, "the source was changed");
                let outs = [one, all];
                close(&outs[0], &want, &format!("convolve {mode:?} {rx}x{ry}"))?;
                same_bits(&outs[0], &outs[1], "convolve")
            })
            .unwrap();

        // Separable convolution = 2D convolution with the outer product, fused per strip
        // and in two passes.
        let case = (size(), 0usize..3, 0usize..SHAPES.len(), mode(), 0i32..2).prop_flat_map(
            |(size, pad, shape, mode, sched)| {
                let (rx, ry) = SHAPES[shape];
                let (w, h) = sized(shape, size);
                (
                    plane(w, h, pad),
                    prop::collection::vec(weight(), 2 * rx + 1 + 2 * ry + 1),
                    Just(shape),
                    Just(mode),
                    Just(sched),
                )
            },
        );
        runner()
            .run(&case, |(src, weights, shape, mode, sched)| {
                let (rx, ry) = SHAPES[shape];
                let hw = |dx: i64| weights[(dx + rx as i64) as usize] as f64;
                let vw = |dy: i64| weights[2 * rx + 1 + (dy + ry as i64) as usize] as f64;
                let want = convolve_ref(&src, rx, ry, |dx, dy| hw(dx) * vw(dy), mode);
                let (one, all, _) =
                    filter_twice(ops.convolve_sep, &src, 0, &weights, (shape, mode, sched));
                let outs = [one, all];
                let what = format!("convolve_sep {mode:?} {rx}x{ry} schedule {sched}");
                close(&outs[0], &want, &what)?;
                same_bits(&outs[0], &outs[1], &what)
            })
            .unwrap();

        // The same written with streaming stores (clamp): the reference's values, and the
        // bits of plain stores.
        let case = (size(), 0usize..3, 0usize..SHAPES.len()).prop_flat_map(|(size, pad, shape)| {
            let (rx, ry) = SHAPES[shape];
            let (w, h) = sized(shape, size);
            (
                plane(w, h, pad),
                prop::collection::vec(weight(), 2 * rx + 1 + 2 * ry + 1),
                Just(shape),
            )
        });
        runner()
            .run(&case, |(src, weights, shape)| {
                let (rx, ry) = SHAPES[shape];
                let hw = |dx: i64| weights[(dx + rx as i64) as usize] as f64;
                let vw = |dy: i64| weights[2 * rx + 1 + (dy + ry as i64) as usize] as f64;
                let want = convolve_ref(&src, rx, ry, |dx, dy| hw(dx) * vw(dy), Mode::Clamp);
                let how = (shape, Mode::Clamp, 0);
                let (one, all, _) = filter_twice(ops.convolve_sep_stream, &src, 0, &weights, how);
                let (plain, _, _) = filter_twice(ops.convolve_sep, &src, 0, &weights, how);
                let what = format!("convolve_sep streaming {rx}x{ry}");
                close(&one, &want, &what)?;
                same_bits(&one, &all, &what)?;
                same_bits(&one, &plain, &what)
            })
            .unwrap();

        // The general local operator, every mode.
        let case = (size(), mode()).prop_flat_map(|((w, h), mode)| (plane(w, h, 0), Just(mode)));
        runner()
            .run(&case, |(src, mode)| {
                let mut s = src.clone();
                let mut d = Plane::zeros(src.w, src.h, src.w);
                let (m, c) = mode.number();
                // SAFETY: both buffers hold w x h elements.
                unsafe {
                    (ops.local)(
                        s.data.as_mut_ptr(),
                        d.data.as_mut_ptr(),
                        s.w as i32,
                        s.h as i32,
                        m,
                        c,
                    )
                };
                for y in 0..src.h {
                    for x in 0..src.w {
                        let at =
                            |dx: i64, dy: i64| mode.read(&src, x as i64 + dx, y as i64 + dy) as f32;
                        let mut mx = at(-1, -1);
                        for dy in -1..=1 {
                            for dx in -1..=1 {
                                mx = mx.max(at(dx, dy));
                            }
                        }
                        let want = mx - at(0, 0) + x as f32 / 1000.0;
                        prop_assert_eq!(
                            d.get(x, y).to_bits(),
                            want.to_bits(),
                            "local at ({}, {})",
                            x,
                            y
                        );
                    }
                }
                Ok(())
            })
            .unwrap();

        // Point operators and reductions.
        let case = size().prop_flat_map(|(w, h)| (plane(w, h, 0), plane(w, h, 0), plane(w, h, 0)));
        runner()
            .run(&case, |(a, b, c)| {
                let (mut a2, mut b2, mut c2) = (a.clone(), b.clone(), c.clone());
                let mut d = Plane::zeros(a.w, a.h, a.w);
                // SAFETY: all four buffers hold w x h elements.
                unsafe {
                    (ops.points)(
                        a2.data.as_mut_ptr(),
                        b2.data.as_mut_ptr(),
                        c2.data.as_mut_ptr(),
                        d.data.as_mut_ptr(),
                        a.w as i32,
                        a.h as i32,
                    )
                };
                let want: Vec<(f64, f64)> = (0..a.data.len())
                    .map(|i| {
                        let (x, y, z) = (a.data[i] as f64, b.data[i] as f64, c.data[i] as f64);
                        ((x * y + z - x) * 2.0, 4.0)
                    })
                    .collect();
                close(&d.data, &want, "map3, map2, map1")?;

                let mut out = [0.0f64; 7];
                let mut s = a.clone();
                // SAFETY: the image holds w x h elements; `out` 7.
                unsafe {
                    (ops.reductions)(
                        s.data.as_mut_ptr(),
                        a.w as i32,
                        a.h as i32,
                        a.pitch as i32,
                        out.as_mut_ptr(),
                    )
                };
                let sum: f64 = a.data.iter().map(|&v| v as f64).sum();
                let (mut lo, mut hi) = ((0usize, 0usize), (0usize, 0usize));
                for y in 0..a.h {
                    for x in 0..a.w {
                        if a.get(x, y) < a.get(lo.0, lo.1) {
                            lo = (x, y);
                        }
                        if a.get(x, y) > a.get(hi.0, hi.1) {
                            hi = (x, y);
                        }
                    }
                }
                prop_assert!(
                    (out[0] - sum).abs() <= 1e-12 * (1.0 + sum.abs()),
                    "sum {} vs {}",
                    out[0],
                    sum
                );
                prop_assert_eq!(out[1], a.get(lo.0, lo.1) as f64, "min");
                prop_assert_eq!(out[2], a.get(hi.0, hi.1) as f64, "max");
                prop_assert_eq!((out[3], out[4]), (lo.0 as f64, lo.1 as f64), "argmin");
                prop_assert_eq!((out[5], out[6]), (hi.0 as f64, hi.1 as f64), "argmax");
                Ok(())
            })
            .unwrap();

        // u8 <-> f32 and the histogram.
        let case = size()
            .prop_flat_map(|(w, h)| (Just((w, h)), prop::collection::vec(any::<u8>(), w * h)));
        runner()
            .run(&case, |((w, h), src)| {
                let mut s = src.clone();
                let mut f = vec![0.0f32; w * h];
                let mut back = vec![0u8; w * h];
                let mut bins = vec![-1i32; 256];
                // SAFETY: the images hold w x h elements, the bins 256.
                unsafe {
                    (ops.u8)(
                        s.as_mut_ptr(),
                        w as i32,
                        h as i32,
                        f.as_mut_ptr(),
                        back.as_mut_ptr(),
                        bins.as_mut_ptr(),
                    )
                };
                for (i, &v) in src.iter().enumerate() {
                    prop_assert!(
                        (f[i] as f64 - v as f64 / 255.0).abs() <= 1e-7,
                        "from_u8({}) = {}",
                        v,
                        f[i]
                    );
                }
                prop_assert_eq!(&back, &src, "u8 -> f32 -> u8");
                let mut want = vec![0i32; 256];
                for &v in &src {
                    want[v as usize] += 1;
                }
                prop_assert_eq!(bins, want, "histogram");
                Ok(())
            })
            .unwrap();

        // A view with the undefined mode: every read stays inside the parent image.
        let case = (3usize..20, 3usize..20)
            .prop_flat_map(|(w, h)| (plane(w, h, 0), 1..w - 1, 1..h - 1))
            .prop_flat_map(|(src, x0, y0)| {
                let (w, h) = (src.w, src.h);
                (Just(src), Just(x0), Just(y0), 1..w - x0, 1..h - y0)
            });
        runner()
            .run(&case, |(src, x0, y0, vw, vh)| {
                let mut s = src.clone();
                let mut d = vec![0.0f32; vw * vh];
                // SAFETY: `s` holds w x h elements, `d` vw x vh; the view and its reads
                // (one pixel around it) lie inside `s`.
                unsafe {
                    (ops.view)(
                        s.data.as_mut_ptr(),
                        src.w as i32,
                        src.h as i32,
                        x0 as i32,
                        y0 as i32,
                        vw as i32,
                        vh as i32,
                        d.as_mut_ptr(),
                    )
                };
                let mut want = Vec::new();
                for y in 0..vh {
                    for x in 0..vw {
                        let mut sum = 0.0;
                        for dy in -1i64..=1 {
                            for dx in -1i64..=1 {
                                let wt = ((dy + 1) * 3 + dx + 1 + 1) as f64;
                                let (sx, sy) = ((x0 + x) as i64 + dx, (y0 + y) as i64 + dy);
                                sum += wt * src.get(sx as usize, sy as usize) as f64;
                            }
                        }
                        want.push((sum, 45.0));
                    }
                }
                close(&d, &want, "view")
            })
            .unwrap();
    });
}

/// The constant masks: the Gaussian's weights as partial evaluation folds them, and the
/// Gaussian and the box of radius 10 on images smaller and larger than the mask.
#[test]
fn constant_masks_match_references() {
    with_ops(|ops| {
        let gauss = |r: i64, sigma: f64| -> Vec<f32> {
            let e: Vec<f64> = (-r..=r)
                .map(|d| (-((d * d) as f64) / (2.0 * sigma * sigma)).exp())
                .collect();
            let total: f64 = e.iter().sum();
            e.iter().map(|v| (v / total) as f32).collect()
        };
        let mut got = vec![0.0f32; 15];
        // SAFETY: 5 + 7 weights are written.
        unsafe { (ops.gaussian_weights)(got.as_mut_ptr()) };
        let want: Vec<f32> = gauss(2, 1.5).into_iter().chain(gauss(3, 0.8)).collect();
        for (g, w) in got[..5].iter().chain(&got[5..12]).zip(&want) {
            assert!(
                (g - w).abs() <= f32::EPSILON * w,
                "Gaussian weight {g} vs {w}"
            );
        }
        let g5 = gauss(2, 1.5);
        let boxw = 1.0f32 / 21.0;
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        for (w, h) in [(1, 1), (5, 4), (23, 17), (40, 3)] {
            let data: Vec<f32> = (0..w * h)
                .map(|_| {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    (rng >> 40) as f32 / (1u64 << 24) as f32
                })
                .collect();
            let src = Plane {
                w,
                h,
                pitch: w,
                data,
            };
            let g = convolve_ref(
                &src,
                2,
                2,
                |dx, dy| g5[(dx + 2) as usize] as f64 * g5[(dy + 2) as usize] as f64,
                Mode::Clamp,
            );
            let b = convolve_ref(&src, 10, 10, |_, _| boxw as f64 * boxw as f64, Mode::Mirror);
            for (f, want, name) in [
                (ops.gaussian, &g, "gaussian 5x5"),
                (ops.box10, &b, "box 21x21"),
            ] {
                let mut outs = Vec::new();
                for threads in [1, 0] {
                    let mut s = src.clone();
                    let mut d = vec![0.0f32; w * h];
                    // SAFETY: both buffers hold w x h elements.
                    unsafe {
                        f(
                            s.data.as_mut_ptr(),
                            d.as_mut_ptr(),
                            w as i32,
                            h as i32,
                            threads,
                        )
                    };
                    outs.push(d);
                }
                for (i, (&gv, &(wv, mag))) in outs[0].iter().zip(want.iter()).enumerate() {
                    assert!(
                        (gv as f64 - wv).abs() <= 1e-5 * (1.0 + mag),
                        "{name} {w}x{h} pixel {i}: {gv} vs {wv}"
                    );
                }
                assert_eq!(outs[0], outs[1], "{name}: 1 thread and all threads differ");
            }
            // The GPU schedule's iteration (4 rows per thread), run by the CPU accelerator.
            let m = [[1.0, 2.0, 0.5], [0.0, -1.0, 3.0], [0.25, 1.0, 2.0]];
            let want = convolve_ref(
                &src,
                1,
                1,
                |dx, dy| m[(dy + 1) as usize][(dx + 1) as usize],
                Mode::Mirror,
            );
            let mut s = src.clone();
            let mut d = vec![f32::NAN; w * h];
            // SAFETY: both buffers hold w x h elements.
            unsafe { (ops.gpu_rows)(s.data.as_mut_ptr(), d.as_mut_ptr(), w as i32, h as i32) };
            for (i, (&gv, &(wv, mag))) in d.iter().zip(&want).enumerate() {
                assert!(
                    (gv as f64 - wv).abs() <= 1e-5 * (1.0 + mag),
                    "GPU rows {w}x{h} pixel {i}: {gv} vs {wv}"
                );
            }
        }
    });
}

/// The examples of `examples/` on the photograph `tests/data/camera.png`, through `durin
/// run` (the CPU here), each output PNG against the operator computed here in `f64` from
/// the input's 8-bit values (within one level of 255, for rounding).
#[test]
fn examples_match_references() {
    let input = "tests/data/camera.png";
    let src = image::open(input).expect("the photograph").to_luma8();
    let (w, h) = (src.width() as usize, src.height() as usize);
    let photo = Plane {
        w,
        h,
        pitch: w,
        data: src.pixels().map(|p| p.0[0] as f32 / 255.0).collect(),
    };
    let gauss = |r: i64, sigma: f64| -> Vec<f64> {
        let e: Vec<f64> = (-r..=r)
            .map(|d| (-((d * d) as f64) / (2.0 * sigma * sigma)).exp())
            .collect();
        let total: f64 = e.iter().sum();
        e.iter().map(|v| v / total).collect()
    };
    let blur = |r: i64, sigma: f64, mode: Mode| -> Vec<f64> {
        let g = gauss(r, sigma);
        let at = |d: i64| g[(d + r) as usize];
        convolve_ref(
            &photo,
            r as usize,
            r as usize,
            |dx, dy| at(dx) * at(dy),
            mode,
        )
        .into_iter()
        .map(|(v, _)| v)
        .collect()
    };
    let dir = std::env::temp_dir().join(format!("durin-examples-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let run = |example: &str, out: &Path| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_durin"))
            .args([
                "run",
                "--target",
                "cpu",
                &format!("examples/{example}.art"),
                "--",
                input,
            ])
            .arg(out)
            .output()
            .expect("durin runs");
        assert!(
            o.status.success(),
            "{example}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    let check = |path: &Path, want: &[f64], what: &str| {
        let got = image::open(path).expect("the output loads").to_luma8();
        assert_eq!(
            (got.width() as usize, got.height() as usize),
            (w, h),
            "{what}: size"
        );
        for (i, (p, &v)) in got.pixels().zip(want).enumerate() {
            let expect = v.clamp(0.0, 1.0) * 255.0;
            assert!(
                (p.0[0] as f64 - expect).abs() <= 1.0,
                "{what}: pixel {i}: {} vs {expect}",
                p.0[0]
            );
        }
    };

    run("gaussian", &dir.join("g"));
    for (size, r, sigma) in [(3, 1, 0.8), (5, 2, 1.0), (7, 3, 1.5)] {
        check(
            &dir.join(format!("g_{size}.png")),
            &blur(r, sigma, Mode::Clamp),
            &format!("gaussian {size}x{size}"),
        );
    }

    run("box", &dir.join("box.png"));
    let boxw = 1.0 / 21.0;
    let want: Vec<f64> = convolve_ref(&photo, 10, 10, |_, _| boxw * boxw, Mode::Mirror)
        .into_iter()
        .map(|(v, _)| v)
        .collect();
    check(&dir.join("box.png"), &want, "box 21x21");

    run("sobel", &dir.join("sobel.png"));
    let sx = [[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]];
    let gx = convolve_ref(
        &photo,
        1,
        1,
        |dx, dy| sx[(dy + 1) as usize][(dx + 1) as usize],
        Mode::Mirror,
    );
    let gy = convolve_ref(
        &photo,
        1,
        1,
        |dx, dy| sx[(dx + 1) as usize][(dy + 1) as usize],
        Mode::Mirror,
    );
    let want: Vec<f64> = gx
        .iter()
        .zip(&gy)
        .map(|(a, b)| (a.0 * a.0 + b.0 * b.0).sqrt())
        .collect();
    check(&dir.join("sobel.png"), &want, "sobel");

    run("unsharp", &dir.join("unsharp.png"));
    let g = blur(2, 1.5, Mode::Clamp);
    let want: Vec<f64> = photo
        .data
        .iter()
        .zip(&g)
        .map(|(&a, &b)| a as f64 + 1.5 * (a as f64 - b))
        .collect();
    check(&dir.join("unsharp.png"), &want, "unsharp");

    run("histeq", &dir.join("histeq.png"));
    let mut bins = [0usize; 256];
    for p in src.pixels() {
        bins[p.0[0] as usize] += 1;
    }
    let lowest = bins[bins.iter().position(|&b| b > 0).expect("a pixel")];
    let mut cdf = [0.0f64; 256];
    let mut total = 0;
    for i in 0..256 {
        total += bins[i];
        cdf[i] = total.saturating_sub(lowest) as f64 / (w * h - lowest).max(1) as f64;
    }
    let want: Vec<f64> = src.pixels().map(|p| cdf[p.0[0] as usize]).collect();
    check(&dir.join("histeq.png"), &want, "histogram equalization");

    run("bilateral", &dir.join("bilateral.png"));
    let g5: Vec<f32> = {
        let e: Vec<f64> = (-2i64..=2)
            .map(|d| (-((d * d) as f64) / 8.0).exp())
            .collect();
        let total: f64 = e.iter().sum();
        e.iter().map(|v| (v / total) as f32).collect()
    };
    let mut want = Vec::new();
    for y in 0..h as i64 {
        for x in 0..w as i64 {
            let c = Mode::Mirror.read(&photo, x, y);
            let (mut num, mut den) = (0.0, 0.0);
            for dy in -2..=2 {
                for dx in -2..=2 {
                    let v = Mode::Mirror.read(&photo, x + dx, y + dy);
                    let k = (g5[(dx + 2) as usize] * g5[(dy + 2) as usize]) as f64
                        * (-(v - c) * (v - c) / 0.02).exp();
                    num += k * v;
                    den += k;
                }
            }
            want.push(num / den);
        }
    }
    check(&dir.join("bilateral.png"), &want, "bilateral");

    run("harris", &dir.join("harris.png"));
    // Halide's Harris: gradients scaled by 1/12 from the photograph clamped at its border
    // (defined outside it too), their products summed over 3 x 3; R scaled by 1000.
    let rd = |x: i64, y: i64| Mode::Clamp.read(&photo, x, y);
    let grad = |x: i64, y: i64, m: &[[f64; 3]; 3]| -> f64 {
        let mut s = 0.0;
        for dy in -1..=1i64 {
            for dx in -1..=1i64 {
                s += m[(dy + 1) as usize][(dx + 1) as usize] / 12.0 * rd(x + dx, y + dy);
            }
        }
        s
    };
    let sy = [[-1.0, -2.0, -1.0], [0.0, 0.0, 0.0], [1.0, 2.0, 1.0]];
    let mut want = Vec::new();
    for y in 0..h as i64 {
        for x in 0..w as i64 {
            let (mut sxx, mut syy, mut sxy) = (0.0, 0.0, 0.0);
            for dy in -1..=1 {
                for dx in -1..=1 {
                    let (a, b) = (grad(x + dx, y + dy, &sx), grad(x + dx, y + dy, &sy));
                    sxx += a * a;
                    syy += b * b;
                    sxy += a * b;
                }
            }
            want.push((sxx * syy - sxy * sxy - 0.04 * (sxx + syy).powi(2)) * 1000.0);
        }
    }
    check(&dir.join("harris.png"), &want, "harris");

    let second = "tests/data/astronaut.png";
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_durin"))
        .args([
            "run",
            "--target",
            "cpu",
            "examples/blend.art",
            "--",
            input,
            second,
        ])
        .arg(dir.join("blend.png"))
        .output()
        .expect("durin runs");
    assert!(
        o.status.success(),
        "blend: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let b = image::open(second)
        .expect("the second photograph")
        .to_luma32f();
    assert_eq!(
        (b.width() as usize, b.height() as usize),
        (w, h),
        "both photographs are 512x512"
    );
    let other = Plane {
        w,
        h,
        pitch: w,
        data: b.into_raw(),
    };
    let mask = Plane {
        w,
        h,
        pitch: w,
        data: (0..w * h)
            .map(|i| if i % w < w / 2 { 1.0 } else { 0.0 })
            .collect(),
    };
    let want = blend_ref(&photo, &other, &mask, 5);
    check(
        &dir.join("blend.png"),
        &want.data.iter().map(|&v| v as f64).collect::<Vec<_>>(),
        "blend",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// One level down a Gaussian pyramid, by its definition: the 5x5 binomial at every second
/// pixel, in `f64`.
fn pyr_down_f64(p: &Plane, mode: Mode) -> Vec<f64> {
    let (w, h) = (p.w.div_ceil(2), p.h.div_ceil(2));
    let mut out = Vec::new();
    for y in 0..h as i64 {
        for x in 0..w as i64 {
            let mut sum = 0.0;
            for dy in -2..=2 {
                for dx in -2..=2 {
                    sum += binomial(dx) * binomial(dy) * mode.read(p, 2 * x + dx, 2 * y + dy);
                }
            }
            out.push(sum);
        }
    }
    out
}

/// One level up to w x h, by its definition: the image with zeros between its pixels,
/// filtered with 4 times the binomial, in `f64`.
fn pyr_up_f64(p: &Plane, w: usize, h: usize, mode: Mode) -> Vec<f64> {
    let mut out = Vec::new();
    for y in 0..h as i64 {
        for x in 0..w as i64 {
            let mut sum = 0.0;
            for j in (y / 2 - 2)..=(y / 2 + 2) {
                for i in (x / 2 - 2)..=(x / 2 + 2) {
                    let wt = 4.0 * binomial(x - 2 * i) * binomial(y - 2 * j);
                    if wt != 0.0 {
                        sum += wt * mode.read(p, i, j);
                    }
                }
            }
            out.push(sum);
        }
    }
    out
}

/// A plane of `w` x `h` `f32` pixels from `f64` values.
fn plane_of(w: usize, h: usize, v: Vec<f64>) -> Plane {
    Plane {
        w,
        h,
        pitch: w,
        data: v.into_iter().map(|x| x as f32).collect(),
    }
}

/// One level down, mirrored at the border, as `f32`.
fn pyr_down_ref(p: &Plane) -> Plane {
    plane_of(
        p.w.div_ceil(2),
        p.h.div_ceil(2),
        pyr_down_f64(p, Mode::Mirror),
    )
}

/// One level up to w x h, mirrored at the border, as `f32`.
fn pyr_up_ref(p: &Plane, w: usize, h: usize) -> Plane {
    plane_of(w, h, pyr_up_f64(p, w, h, Mode::Mirror))
}

/// Laplacian-pyramid blending of `a` and `b` under `m` over `levels` levels.
fn blend_ref(a: &Plane, b: &Plane, m: &Plane, levels: usize) -> Plane {
    let (w, h) = (a.w, a.h);
    let mix = |x: f32, y: f32, k: f32| k as f64 * x as f64 + (1.0 - k as f64) * y as f64;
    if levels == 1 || w < 4 || h < 4 {
        let data = (0..w * h)
            .map(|i| mix(a.data[i], b.data[i], m.data[i]) as f32)
            .collect();
        return Plane {
            w,
            h,
            pitch: w,
            data,
        };
    }
    let (a2, b2, m2) = (pyr_down_ref(a), pyr_down_ref(b), pyr_down_ref(m));
    let below = blend_ref(&a2, &b2, &m2, levels - 1);
    let (ua, ub, ur) = (
        pyr_up_ref(&a2, w, h),
        pyr_up_ref(&b2, w, h),
        pyr_up_ref(&below, w, h),
    );
    let data = (0..w * h)
        .map(|i| {
            let k = m.data[i] as f64;
            (k * (a.data[i] - ua.data[i]) as f64
                + (1.0 - k) * (b.data[i] - ub.data[i]) as f64
                + ur.data[i] as f64) as f32
        })
        .collect();
    Plane {
        w,
        h,
        pitch: w,
        data,
    }
}

/// The binomial filter [1 4 6 4 1] / 16 at offset `d`, 0 outside [-2, 2].
fn binomial(d: i64) -> f64 {
    [1.0, 4.0, 6.0, 4.0, 1.0]
        .get((d + 2) as usize)
        .filter(|_| d.abs() <= 2)
        .copied()
        .unwrap_or(0.0)
        / 16.0
}

/// Keys' cubic kernel with a = -1/2, in its textbook piecewise form.
fn keys(t: f64) -> f64 {
    let (a, t) = (-0.5, t.abs());
    if t < 1.0 {
        (a + 2.0) * t.powi(3) - (a + 3.0) * t * t + 1.0
    } else if t < 2.0 {
        a * t.powi(3) - 5.0 * a * t * t + 8.0 * a * t - 4.0 * a
    } else {
        0.0
    }
}

/// Pyramids against their definitions (down: the 5x5 binomial at every second pixel; up:
/// the image with zeros between its pixels, filtered with 4 times the binomial) and
/// resizing against the textbook interpolation formulas, every boundary mode.
#[test]
fn pyramids_and_interpolation_match_references() {
    with_resample(|ops| {
        let case = (size(), mode(), 0i32..3, 1usize..30, 1usize..30).prop_flat_map(
            |((w, h), mode, kind, dw, dh)| {
                (plane(w, h, 0), Just(mode), Just(kind), Just(dw), Just(dh))
            },
        );
        runner()
            .run(&case, |(src, mode, kind, dw, dh)| {
                let (m, c) = mode.number();
                let (w, h) = (src.w, src.h);
                let mut s = src.clone();
                let read = |x: i64, y: i64| mode.read(&src, x, y);

                let (hw, hh) = (w.div_ceil(2), h.div_ceil(2));
                let mut down = vec![0.0f32; hw * hh];
                // SAFETY: `s` holds w x h elements, `down` the half size.
                unsafe {
                    (ops.pyr_down)(
                        s.data.as_mut_ptr(),
                        w as i32,
                        h as i32,
                        down.as_mut_ptr(),
                        m,
                        c,
                    )
                };
                let want: Vec<(f64, f64)> = pyr_down_f64(&src, mode)
                    .into_iter()
                    .map(|v| (v, 4.0))
                    .collect();
                close(&down, &want, &format!("pyr_down {mode:?} {w}x{h}"))?;

                let (uw, uh) = (dw.min(2 * w), dh.min(2 * h));
                let mut up = vec![0.0f32; uw * uh];
                // SAFETY: `s` holds w x h elements, `up` uw x uh.
                unsafe {
                    (ops.pyr_up)(
                        s.data.as_mut_ptr(),
                        w as i32,
                        h as i32,
                        up.as_mut_ptr(),
                        uw as i32,
                        uh as i32,
                        m,
                        c,
                    )
                };
                let want: Vec<(f64, f64)> = pyr_up_f64(&src, uw, uh, mode)
                    .into_iter()
                    .map(|v| (v, 4.0))
                    .collect();
                close(&up, &want, &format!("pyr_up {mode:?} {w}x{h} to {uw}x{uh}"))?;

                let mut out = vec![0.0f32; dw * dh];
                // SAFETY: `s` holds w x h elements, `out` dw x dh.
                unsafe {
                    (ops.resize)(
                        s.data.as_mut_ptr(),
                        w as i32,
                        h as i32,
                        out.as_mut_ptr(),
                        dw as i32,
                        dh as i32,
                        kind,
                        m,
                        c,
                    )
                };
                let (sx, sy) = (w as f32 / dw as f32, h as f32 / dh as f32);
                let mut want = Vec::new();
                for y in 0..dh {
                    for x in 0..dw {
                        // The position as the library computes it (in f32), then f64.
                        let fx = ((x as f32 + 0.5) * sx - 0.5) as f64;
                        let fy = ((y as f32 + 0.5) * sy - 0.5) as f64;
                        let (x0, y0) = (fx.floor(), fy.floor());
                        let (ix, iy) = (x0 as i64, y0 as i64);
                        let v = match kind {
                            0 => read((fx + 0.5).floor() as i64, (fy + 0.5).floor() as i64),
                            1 => {
                                let (tx, ty) = (fx - x0, fy - y0);
                                (1.0 - tx) * (1.0 - ty) * read(ix, iy)
                                    + tx * (1.0 - ty) * read(ix + 1, iy)
                                    + (1.0 - tx) * ty * read(ix, iy + 1)
                                    + tx * ty * read(ix + 1, iy + 1)
                            }
                            _ => {
                                let mut sum = 0.0;
                                for j in -1..=2 {
                                    for i in -1..=2 {
                                        sum += keys(fx - (ix + i) as f64)
                                            * keys(fy - (iy + j) as f64)
                                            * read(ix + i, iy + j);
                                    }
                                }
                                sum
                            }
                        };
                        want.push((v, 8.0));
                    }
                }
                close(
                    &out,
                    &want,
                    &format!("resize {kind} {mode:?} {w}x{h} to {dw}x{dh}"),
                )
            })
            .unwrap();
    });
}

/// The first stage of `test_local_then` and `test_pipeline3` (a 3x3 weighted sum through
/// `mode`), rounded to `f32` as the library keeps it.
fn first_stage_ref(src: &Plane, mode: Mode) -> Plane {
    let m = [[1.0, 2.0, 0.5], [0.0, -1.0, 3.0], [0.25, 1.0, 2.0]];
    let mid = convolve_ref(
        src,
        1,
        1,
        |dx, dy| m[(dy + 1) as usize][(dx + 1) as usize],
        mode,
    );
    plane_of(src.w, src.h, mid.into_iter().map(|v| v.0).collect())
}

/// Runs `f` (`test_local_then` or `test_pipeline3`) on a copy of `src` into a new plane.
fn run_stages(f: LocalThenFn, src: &Plane, mode: Mode, sched: i32) -> Vec<f32> {
    let (m, c) = mode.number();
    let mut s = src.clone();
    let mut d = vec![f32::NAN; src.w * src.h];
    // SAFETY: both buffers hold w x h elements (`src` is packed: pitch w).
    unsafe {
        f(
            s.data.as_mut_ptr(),
            d.as_mut_ptr(),
            src.w as i32,
            src.h as i32,
            m,
            c,
            sched,
        )
    };
    d
}

/// Normalized Gaussian weights of radius `r` (as `gaussian1`), in f64.
fn gaussian_f64(r: i64, sigma: f64) -> Vec<f64> {
    let e: Vec<f64> = (-r..=r)
        .map(|d| (-((d * d) as f64) / (2.0 * sigma * sigma)).exp())
        .collect();
    let total: f64 = e.iter().sum();
    e.into_iter().map(|v| v / total).collect()
}

/// The bilateral grid of `src` with cells of `s` x `s` pixels and `bins` intensity bins,
/// from its definition (Halide's apps/bilateral_grid): the grid's sums and counts, blurred
/// along the levels, across and down, in `f64`, each cell's pixels read clamped; each
/// pixel the ratio of trilinear samples. A pixel's bin and level come from the same `f32`
/// arithmetic as the operator's (v * bins + 1/2 and v * bins, truncated), so that a value
/// on a bin's edge falls in the same bin.
fn bilateral_grid_ref(src: &Plane, s: i64, bins: i64) -> Vec<(f64, f64)> {
    let (w, h) = (src.w as i64, src.h as i64);
    let unit = |v: f32| v.clamp(0.0, 1.0);
    let rd = |x: i64, y: i64| {
        unit(src.data[(y.clamp(0, h - 1) as usize) * src.pitch + x.clamp(0, w - 1) as usize])
    };
    let levels = bins as f32;
    let taps = [1.0, 4.0, 6.0, 4.0, 1.0];
    // Cells from -4 (the blur's reach around the cells the sampling reads) on.
    let (cw, ch) = ((w - 1) / s + 10, (h - 1) / s + 10);
    let nz = (bins + 1) as usize;
    let mut hist = vec![(0.0f64, 0.0f64); (cw * ch) as usize * nz];
    let cell = |cx: i64, cy: i64| ((cy + 4) * cw + cx + 4) as usize;
    for cy in -4..ch - 4 {
        for cx in -4..cw - 4 {
            for ry in 0..s {
                for rx in 0..s {
                    let v = rd(cx * s + rx - s / 2, cy * s + ry - s / 2);
                    let z = (v * levels + 0.5) as usize;
                    let e = &mut hist[cell(cx, cy) * nz + z];
                    e.0 += v as f64;
                    e.1 += 1.0;
                }
            }
        }
    }
    let blurz = |cx: i64, cy: i64, z: i64| {
        let mut t = (0.0, 0.0);
        for (i, k) in taps.iter().enumerate() {
            let zz = z + i as i64 - 2;
            if (0..=bins).contains(&zz) {
                let e = hist[cell(cx, cy) * nz + zz as usize];
                t.0 += k * e.0;
                t.1 += k * e.1;
            }
        }
        t
    };
    let blurred = |cx: i64, cy: i64, z: i64| {
        let mut t = (0.0, 0.0);
        for (j, kv) in taps.iter().enumerate() {
            for (i, kh) in taps.iter().enumerate() {
                let e = blurz(cx + i as i64 - 2, cy + j as i64 - 2, z);
                t.0 += kv * kh * e.0;
                t.1 += kv * kh * e.1;
            }
        }
        t
    };
    let lerp = |a: f64, b: f64, t: f64| a * (1.0 - t) + b * t;
    let mut out = Vec::new();
    for y in 0..h {
        for x in 0..w {
            let zv = rd(x, y) * levels;
            let z = zv as i64;
            let zf = (zv - z as f32) as f64;
            let (cx, cy) = (x / s, y / s);
            let (xf, yf) = ((x % s) as f64 / s as f64, (y % s) as f64 / s as f64);
            let sample = |c: usize| {
                let at = |dz: i64, dx: i64, dy: i64| {
                    let e = blurred(cx + dx, cy + dy, z + dz);
                    if c == 0 {
                        e.0
                    } else {
                        e.1
                    }
                };
                let level = |dz: i64| {
                    lerp(
                        lerp(at(dz, 0, 0), at(dz, 1, 0), xf),
                        lerp(at(dz, 0, 1), at(dz, 1, 1), xf),
                        yf,
                    )
                };
                lerp(level(0), level(1), zf)
            };
            out.push((sample(0) / sample(1), 9.0));
        }
    }
    out
}

/// The bilateral grid on the CPU, 1 thread and all, with cells of 8 x 8 pixels and 10
/// bins and with cells of 3 x 3 and 4 bins, against its `f64` definition, on images of
/// values from -1 to 1 (clamped to [0, 1] by the operator) and of 1 x 1 to 70 x 50 pixels.
#[test]
fn the_bilateral_grid_matches_its_definition() {
    with_resample(|ops| {
        let case =
            prop_oneof![size(), (30usize..70, 20usize..50)].prop_flat_map(|(w, h)| plane(w, h, 0));
        runner()
            .run(&case, |src| {
                for (mode, s, bins) in [(Mode::Clamp, 8, 10), (Mode::Mirror, 3, 4)] {
                    let want = bilateral_grid_ref(&src, s, bins);
                    let one = run_stages(ops.bilateral_grid, &src, mode, 0);
                    let all = run_stages(ops.bilateral_grid, &src, mode, 1);
                    close(
                        &one,
                        &want,
                        &format!("bilateral grid {s}x{s}, {bins} bins, {}x{}", src.w, src.h),
                    )?;
                    same_bits(&one, &all, "bilateral grid")?;
                }
                Ok(())
            })
            .unwrap();
    });
}

/// A level of a pyramid in `f64`: `w` x `h` values, read beyond the sides at the edge.
#[derive(Clone)]
struct Level {
    w: i64,
    h: i64,
    v: Vec<f64>,
}

impl Level {
    fn at(&self, x: i64, y: i64) -> f64 {
        self.v[(y.clamp(0, self.h - 1) * self.w + x.clamp(0, self.w - 1)) as usize]
    }

    fn from_fn(w: i64, h: i64, f: impl Fn(i64, i64) -> f64) -> Level {
        let v = (0..h)
            .flat_map(|y| (0..w).map(move |x| (x, y)))
            .map(|(x, y)| f(x, y))
            .collect();
        Level { w, h, v }
    }

    /// One level down: the [1 3 3 1] / 8 filter around (2x, 2y), (w + 1) / 2 x (h + 1) / 2.
    fn down(&self) -> Level {
        let t = [1.0, 3.0, 3.0, 1.0];
        Level::from_fn((self.w + 1) / 2, (self.h + 1) / 2, |x, y| {
            let mut s = 0.0;
            for (j, wy) in t.iter().enumerate() {
                for (i, wx) in t.iter().enumerate() {
                    s += wx * wy * self.at(2 * x + i as i64 - 1, 2 * y + j as i64 - 1);
                }
            }
            s / 64.0
        })
    }

    /// One level up to `w` x `h`: linear interpolation, 3/4 of pixel x / 2 and 1/4 of its
    /// neighbour on the side of x, per axis.
    fn up(&self, w: i64, h: i64) -> Level {
        let side = |x: i64| x / 2 + if x % 2 == 1 { 1 } else { -1 };
        Level::from_fn(w, h, |x, y| {
            let row = |r: i64| 0.25 * self.at(side(x), r) + 0.75 * self.at(x / 2, r);
            0.25 * row(side(y)) + 0.75 * row(y / 2)
        })
    }
}

/// The local Laplacian filter of `src` from its definition (Halide's
/// apps/local_laplacian on one channel, every level read at its edge beyond its sides), in
/// `f64`: the remapped copies' Gaussian and Laplacian pyramids, the input's Gaussian
/// pyramid, the result's Laplacian pyramid interpolated between the two copies around the
/// input's intensity, collapsed, clamped to [0, 1]. A pixel's place in the remapping table
/// comes from the same `f32` arithmetic as the operator's (the table is a step function of
/// it).
fn local_laplacian_ref(
    src: &Plane,
    pyramid: usize,
    levels: i64,
    alpha: f64,
    beta: f64,
) -> Vec<(f64, f64)> {
    let (w, h) = (src.w as i64, src.h as i64);
    let km1 = (levels - 1) as f64;
    let span = (levels - 1) * 256;
    let remap = |i: i64| {
        let f = i as f64 / 256.0;
        alpha / km1 * f * (-f * f / 2.0).exp()
    };
    let g0 = Level::from_fn(w, h, |x, y| src.get(x as usize, y as usize) as f64);
    let index = |g: f64| {
        let f = (g as f32) * ((levels - 1) as f32) * 256.0;
        if f >= span as f32 {
            span
        } else if f > 0.0 {
            f as i64
        } else {
            0
        }
    };
    let copies: Vec<Vec<Level>> = (0..levels)
        .map(|k| {
            let lv = k as f64 / km1;
            let c0 = Level::from_fn(w, h, |x, y| {
                let g = g0.at(x, y);
                beta * (g - lv) + lv + remap(index(g) - 256 * k)
            });
            let mut p = vec![c0];
            for _ in 1..pyramid {
                let next = p.last().expect("a level").down();
                p.push(next);
            }
            p
        })
        .collect();
    let mut input = vec![g0];
    for _ in 1..pyramid {
        let next = input.last().expect("a level").down();
        input.push(next);
    }
    let mut out: Option<Level> = None;
    for j in (0..pyramid).rev() {
        let (wj, hj) = (input[j].w, input[j].h);
        let lap = |k: usize| {
            let c = &copies[k];
            if j + 1 < pyramid {
                let u = c[j + 1].up(wj, hj);
                Level::from_fn(wj, hj, |x, y| c[j].at(x, y) - u.at(x, y))
            } else {
                c[j].clone()
            }
        };
        let laps: Vec<Level> = (0..levels as usize).map(lap).collect();
        let above = out.as_ref().map(|o| o.up(wj, hj));
        out = Some(Level::from_fn(wj, hj, |x, y| {
            let lvl = input[j].at(x, y) * km1;
            let li = if lvl >= km1 - 1.0 {
                levels - 2
            } else if lvl > 0.0 {
                lvl as i64
            } else {
                0
            };
            let lf = lvl - li as f64;
            let (a, b) = (laps[li as usize].at(x, y), laps[li as usize + 1].at(x, y));
            (1.0 - lf) * a + lf * b + above.as_ref().map_or(0.0, |u| u.at(x, y))
        }));
    }
    let o = out.expect("level 0");
    o.v.iter().map(|&v| (v.clamp(0.0, 1.0), v.abs())).collect()
}

/// The local Laplacian filter on the CPU, 1 thread and all, against its definition in
/// `f64`, for four settings (`test_local_laplacian`'s modes), among them alpha 0 and beta 1,
/// which must give the image back (clamped to [0, 1]).
#[test]
fn the_local_laplacian_filter_matches_its_definition() {
    with_resample(|ops| {
        let case =
            prop_oneof![size(), (30usize..90, 20usize..60)].prop_flat_map(|(w, h)| plane(w, h, 0));
        runner()
            .run(&case, |src| {
                let settings = [(8, 8, 1.0, 1.0), (3, 2, -0.5, 0.6), (1, 4, 2.0, 1.25), (8, 8, 0.0, 1.0)];
                for (mode, &(pyramid, levels, alpha, beta)) in settings.iter().enumerate() {
                    let run = |sched: i32| {
                        let mut s = src.clone();
                        let mut d = vec![f32::NAN; src.w * src.h];
                        // SAFETY: both buffers hold w x h elements (`src` is packed).
                        unsafe {
                            (ops.local_laplacian)(
                                s.data.as_mut_ptr(),
                                d.as_mut_ptr(),
                                src.w as i32,
                                src.h as i32,
                                mode as i32,
                                0.0,
                                sched,
                            )
                        };
                        d
                    };
                    let (one, all) = (run(0), run(1));
                    let what = format!(
                        "local Laplacian, {pyramid} levels, {levels} intensities, alpha {alpha}, beta {beta}, {}x{}",
                        src.w, src.h
                    );
                    close(&one, &local_laplacian_ref(&src, pyramid, levels, alpha, beta), &what)?;
                    same_bits(&one, &all, &what)?;
                    if alpha == 0.0 {
                        let unit: Vec<(f64, f64)> =
                            src.data.iter().map(|&v| ((v as f64).clamp(0.0, 1.0), 1.0)).collect();
                        close(&one, &unit, &what)?;
                    }
                }
                Ok(())
            })
            .unwrap();
    });
}

/// Lazy images realized on the CPU (`test_harris`, `test_graph`), 1 thread and all, every
/// boundary mode, against float64 references that read only the source through the
/// boundary mode (intermediate results are defined outside the image too, as in Halide).
#[test]
fn graphs_of_operators_match_references() {
    with_resample(|ops| {
        let case = (size(), mode()).prop_flat_map(|((w, h), mode)| (plane(w, h, 0), Just(mode)));
        runner()
            .run(&case, |(src, mode)| {
                let (w, h) = (src.w as i64, src.h as i64);
                let rd = |x: i64, y: i64| mode.read(&src, x, y);
                let t = 1.0 / 12.0;
                let ix = |x: i64, y: i64| {
                    t * (rd(x + 1, y - 1) - rd(x - 1, y - 1))
                        + 2.0 * t * (rd(x + 1, y) - rd(x - 1, y))
                        + t * (rd(x + 1, y + 1) - rd(x - 1, y + 1))
                };
                let iy = |x: i64, y: i64| {
                    t * (rd(x - 1, y + 1) - rd(x - 1, y - 1))
                        + 2.0 * t * (rd(x, y + 1) - rd(x, y - 1))
                        + t * (rd(x + 1, y + 1) - rd(x + 1, y - 1))
                };
                let mut harris = Vec::new();
                let mut graph = Vec::new();
                let m = [[0.5, 1.0, 0.0], [-1.0, 2.0, 0.25], [0.0, 1.5, -0.5]];
                let (gh, gv) = (gaussian_f64(2, 1.0), gaussian_f64(1, 0.8));
                for y in 0..h {
                    for x in 0..w {
                        let (mut sxx, mut syy, mut sxy) = (0.0, 0.0, 0.0);
                        for dy in -1..=1 {
                            for dx in -1..=1 {
                                let (a, b) = (ix(x + dx, y + dy), iy(x + dx, y + dy));
                                sxx += a * a;
                                syy += b * b;
                                sxy += a * b;
                            }
                        }
                        let trace = sxx + syy;
                        let r = sxx * syy - sxy * sxy - 0.04 * trace * trace;
                        harris.push((r, (sxx + syy + sxy.abs()).powi(2)));
                        let (mut a, mut mag) = (0.0, 0.0);
                        for dy in -1..=1i64 {
                            for dx in -1..=1i64 {
                                let v = rd(x + dx, y + dy);
                                let term = m[(dy + 1) as usize][(dx + 1) as usize] * v * v;
                                a += term;
                                mag += term.abs();
                            }
                        }
                        let mut b = 0.0;
                        for (j, wv) in gv.iter().enumerate() {
                            for (i, wh) in gh.iter().enumerate() {
                                let term = wv * wh * rd(x + i as i64 - 2, y + j as i64 - 1);
                                b += term;
                                mag += 0.5 * term.abs();
                            }
                        }
                        graph.push((a - 0.5 * b, mag));
                    }
                }
                for (name, f, want) in [
                    ("harris", ops.harris, &harris),
                    ("graph", ops.graph, &graph),
                ] {
                    let one = run_stages(f, &src, mode, 0);
                    let all = run_stages(f, &src, mode, 1);
                    close(&one, want, &format!("{name} {mode:?} {w}x{h}"))?;
                    same_bits(&one, &all, name)?;
                }
                // Where Harris's results are stored changes no bit: the same expressions,
                // in the same order (the schedule's `keep`: every result, none, the
                // gradients and a sum, results in memory, against the cost model's
                // choice), nor does writing the result with streaming stores (7).
                if matches!(mode, Mode::Clamp) {
                    let auto = run_stages(ops.harris, &src, mode, 0);
                    for keep in 1..=7 {
                        let kept = run_stages(ops.harris_kept, &src, mode, keep);
                        equal_bits(
                            &auto,
                            &kept,
                            &format!("harris with the cost model's results and with choice {keep}"),
                        )?;
                    }
                }
                // Three inputs (the source and two others made from it): a 2D mask of the
                // first, the second's separable filter (stored), times the third, plus.
                let b_in = plane_of(
                    src.w,
                    src.h,
                    src.data.iter().map(|&v| (v * v) as f64 - 0.5).collect(),
                );
                let c_in = plane_of(
                    src.w,
                    src.h,
                    src.data.iter().map(|&v| 1.0 - v as f64).collect(),
                );
                let mut three = Vec::new();
                for y in 0..h {
                    for x in 0..w {
                        let (mut p, mut mag) = (0.0, 0.0);
                        for dy in -1..=1i64 {
                            for dx in -1..=1i64 {
                                let term =
                                    m[(dy + 1) as usize][(dx + 1) as usize] * rd(x + dx, y + dy);
                                p += term;
                                mag += term.abs();
                            }
                        }
                        let r = mode.read(&c_in, x, y);
                        let mut q = 0.0;
                        for (j, wv) in gv.iter().enumerate() {
                            for (i, wh) in gh.iter().enumerate() {
                                let term =
                                    wv * wh * mode.read(&b_in, x + i as i64 - 2, y + j as i64 - 1);
                                q += term;
                                mag += term.abs();
                            }
                        }
                        three.push((p * r + q, mag * (1.0 + r.abs())));
                    }
                }
                let (mn, cn) = mode.number();
                let run3 = |sched: i32| {
                    let (mut a, mut b, mut c) = (src.clone(), b_in.clone(), c_in.clone());
                    let mut d = vec![f32::NAN; src.w * src.h];
                    // SAFETY: every buffer holds w x h elements (the planes are packed).
                    unsafe {
                        (ops.three_inputs)(
                            a.data.as_mut_ptr(),
                            b.data.as_mut_ptr(),
                            c.data.as_mut_ptr(),
                            d.as_mut_ptr(),
                            src.w as i32,
                            src.h as i32,
                            mn,
                            cn,
                            sched,
                        )
                    };
                    d
                };
                let (one, all) = (run3(0), run3(1));
                close(&one, &three, &format!("three inputs {mode:?} {w}x{h}"))?;
                same_bits(&one, &all, "three inputs")?;
                // Three results of one graph (`realize_many`): unsharp masking of three
                // planes made from the source (gray levels of at least 0.5).
                let rgb = [
                    plane_of(
                        src.w,
                        src.h,
                        src.data.iter().map(|&v| 1.5 + v as f64).collect(),
                    ),
                    plane_of(
                        src.w,
                        src.h,
                        src.data.iter().map(|&v| 1.5 - 0.5 * v as f64).collect(),
                    ),
                    plane_of(
                        src.w,
                        src.h,
                        src.data.iter().map(|&v| 1.2 + (v * v) as f64).collect(),
                    ),
                ];
                let k: Vec<f64> = (-3..=3i64)
                    .map(|d| {
                        (-((d * d) as f64) / 4.5).exp() / (2.0 * std::f64::consts::PI).sqrt() / 1.5
                    })
                    .collect();
                let gray = |x: i64, y: i64| {
                    0.299 * mode.read(&rgb[0], x, y)
                        + 0.587 * mode.read(&rgb[1], x, y)
                        + 0.114 * mode.read(&rgb[2], x, y)
                };
                let mut sharp: [Vec<(f64, f64)>; 3] = Default::default();
                for y in 0..h {
                    for x in 0..w {
                        let (mut blur, mut mag) = (0.0, 0.0);
                        for (i, ki) in k.iter().enumerate() {
                            for (j, kj) in k.iter().enumerate() {
                                let term = ki * kj * gray(x + i as i64 - 3, y + j as i64 - 3);
                                blur += term;
                                mag += term.abs();
                            }
                        }
                        let g = gray(x, y);
                        let ratio = (2.0 * g - blur) / g;
                        for (c, plane) in rgb.iter().enumerate() {
                            let v = mode.read(plane, x, y);
                            sharp[c]
                                .push((ratio * v, (2.0 * g.abs() + mag) / g.abs() * v.abs() * 4.0));
                        }
                    }
                }
                let run_unsharp = |sched: i32| run_unsharp(ops.unsharp, &rgb, mode, sched);
                let (one, all) = (run_unsharp(0), run_unsharp(1));
                let streamed = run_unsharp(2);
                for c in 0..3 {
                    close(
                        &one[c],
                        &sharp[c],
                        &format!("unsharp plane {c} {mode:?} {w}x{h}"),
                    )?;
                    same_bits(&one[c], &all[c], "unsharp")?;
                    same_bits(&one[c], &streamed[c], "unsharp, streaming stores")?;
                }
                Ok(())
            })
            .unwrap();
        // A graph's results written with streaming stores (from the first 64-byte line
        // inside the border to the last whole one): a plane wide enough to have such lines
        // (the cases above are narrower), against the same graph written plainly.
        let (w, h) = (83, 11);
        let wave = |k: usize| {
            plane_of(
                w,
                h,
                (0..w * h)
                    .map(|i| ((i * k % 101) as f64) / 50.0 + 0.5)
                    .collect(),
            )
        };
        let src = wave(37);
        let plain = run_stages(ops.harris, &src, Mode::Clamp, 0);
        let streamed = run_stages(ops.harris_kept, &src, Mode::Clamp, 7);
        equal_bits(&plain, &streamed, "harris written with streaming stores").unwrap();
        let rgb = [wave(37), wave(53), wave(71)];
        let (plain, streamed) = (
            run_unsharp(ops.unsharp, &rgb, Mode::Clamp, 1),
            run_unsharp(ops.unsharp, &rgb, Mode::Clamp, 2),
        );
        for c in 0..3 {
            equal_bits(
                &plain[c],
                &streamed[c],
                "unsharp written with streaming stores",
            )
            .unwrap();
        }
    });
}

/// `test_unsharp` of three planes of one size (`sched` as it says), its three results.
fn run_unsharp(f: UnsharpFn, rgb: &[Plane; 3], mode: Mode, sched: i32) -> [Vec<f32>; 3] {
    let (m, c) = mode.number();
    let (w, h) = (rgb[0].w, rgb[0].h);
    let mut ins = rgb.clone();
    let mut outs = [0, 1, 2].map(|_| vec![f32::NAN; w * h]);
    let [o0, o1, o2] = &mut outs;
    let [i0, i1, i2] = &mut ins;
    // SAFETY: every buffer holds w x h elements (the planes are packed).
    unsafe {
        f(
            i0.data.as_mut_ptr(),
            i1.data.as_mut_ptr(),
            i2.data.as_mut_ptr(),
            o0.as_mut_ptr(),
            o1.as_mut_ptr(),
            o2.as_mut_ptr(),
            w as i32,
            h as i32,
            m,
            c,
            sched,
        )
    };
    outs
}

/// Two local operators in a row (`local_then`) and three (`pipeline`), fused per band and
/// one pass per stage, against the stages computed here one after the other (the
/// intermediate images in `f32`, as the library keeps them), every boundary mode.
#[test]
fn fused_local_operators_match_references() {
    with_resample(|ops| {
        let case = (size(), mode(), 0i32..2)
            .prop_flat_map(|((w, h), mode, sched)| (plane(w, h, 0), Just(mode), Just(sched)));
        runner()
            .run(&case, |(src, mode, sched)| {
                let (w, h) = (src.w, src.h);
                let mid = first_stage_ref(&src, mode);
                let mut want = Vec::new();
                for y in 0..h as i64 {
                    for x in 0..w as i64 {
                        let at = |dx: i64, dy: i64| mode.read(&mid, x + dx, y + dy);
                        let mut best = at(-1, -2);
                        for dy in -2..=2 {
                            for dx in -1..=1 {
                                best = best.max(at(dx, dy));
                            }
                        }
                        want.push((best - at(0, 0), 20.0));
                    }
                }
                let d = run_stages(ops.local_then, &src, mode, sched);
                close(
                    &d,
                    &want,
                    &format!("local_then {mode:?} {w}x{h} schedule {sched}"),
                )
            })
            .unwrap();

        // Three stages (`pipeline`): each intermediate image in `f32`.
        runner()
            .run(&case, |(src, mode, sched)| {
                let (w, h) = (src.w, src.h);
                let mid1 = first_stage_ref(&src, mode);
                let each = |f: &dyn Fn(i64, i64) -> f64| {
                    let mut v = Vec::new();
                    for y in 0..h as i64 {
                        for x in 0..w as i64 {
                            v.push(f(x, y));
                        }
                    }
                    v
                };
                let mid2 = each(&|x, y| {
                    let at = |dx: i64| mode.read(&mid1, x + dx, y);
                    0.5 * at(-2) + at(1) - at(2)
                });
                let mid2 = plane_of(w, h, mid2);
                let want: Vec<(f64, f64)> = each(&|x, y| {
                    let at = |dy: i64| mode.read(&mid2, x, y + dy);
                    let best = (-2..=2).map(at).fold(f64::NEG_INFINITY, f64::max);
                    best - at(0) + (x + 2 * y) as f64 * 0.01
                })
                .into_iter()
                .map(|v| (v, 40.0))
                .collect();
                let d = run_stages(ops.pipeline3, &src, mode, sched);
                close(
                    &d,
                    &want,
                    &format!("pipeline of 3 {mode:?} {w}x{h} schedule {sched}"),
                )
            })
            .unwrap();
    });
}

/// Pipelines of one stage and of twelve (`test_pipeline_n`), fused per band and one pass
/// per stage, against the stages computed here one after the other (each intermediate image
/// rounded to `f32`), every boundary mode, on images tall enough for several bands (a
/// `repeat` at a band's top reads rows of another band).
#[test]
fn pipelines_of_one_and_of_many_stages_match_references() {
    with_resample(|ops| {
        let sizes = prop_oneof![
            Just((1, 1)),
            (1usize..6, 1usize..6),
            (2usize..9, 130usize..200)
        ];
        let case = (sizes, mode(), 0i32..2, prop_oneof![Just(1), Just(12)]).prop_flat_map(
            |((w, h), mode, sched, n)| (plane(w, h, 0), Just(mode), Just(sched), Just(n)),
        );
        runner()
            .run(&case, |(src, mode, sched, n)| {
                let (w, h) = (src.w, src.h);
                let mut cur = src.clone();
                let mut want = Vec::new();
                for k in 0..n {
                    let weight = |dx: i64, dy: i64| match (k % 2, dx, dy) {
                        (0, -1, 0) => 0.5 * (k + 1) as f64 / (k + 2) as f64,
                        (0, 0, -1) | (0, 1, 1) => 0.25,
                        (1, 1, 0) | (1, 0, 1) => 0.5,
                        _ => 0.0,
                    };
                    want = convolve_ref(&cur, 1, 1, weight, mode);
                    cur = plane_of(w, h, want.iter().map(|v| v.0).collect());
                }
                let (m, c) = mode.number();
                let mut s = src.clone();
                let mut d = vec![f32::NAN; w * h];
                // SAFETY: both buffers hold w x h elements (`src` is packed: pitch w).
                unsafe {
                    (ops.pipeline_n)(
                        s.data.as_mut_ptr(),
                        d.as_mut_ptr(),
                        w as i32,
                        h as i32,
                        m,
                        c,
                        sched,
                        n,
                    )
                };
                let want: Vec<(f64, f64)> = want.into_iter().map(|(v, _)| (v, 4.0)).collect();
                close(
                    &d,
                    &want,
                    &format!("pipeline of {n} {mode:?} {w}x{h} schedule {sched}"),
                )
            })
            .unwrap();
    });
}

/// Masks from literal arrays (`mask1_3`, a symmetric one; `mask1_5`, not symmetric;
/// `mask5`) and `local2`, against the same filters computed here.
#[test]
fn literal_masks_and_two_source_operators_match_references() {
    with_resample(|ops| {
        // SAFETY: a function of no arguments.
        let symmetric = unsafe { (ops.mask_symmetry)() };
        assert_eq!(symmetric, 1 | 4, "which literal masks are symmetric");
        let case = size().prop_flat_map(|(w, h)| plane(w, h, 0));
        runner()
            .run(&case, |src| {
                let (w, h) = (src.w, src.h);
                let (hm, vm) = ([0.25, 0.5, 0.25], [1.0, 0.0, 2.0, 0.0, -1.0]);
                let sep = convolve_ref(
                    &src,
                    1,
                    2,
                    |dx, dy| hm[(dx + 1) as usize] * vm[(dy + 2) as usize],
                    Mode::Clamp,
                );
                let m5 = convolve_ref(&src, 2, 2, |dx, dy| (dx + 5 * dy) as f64, Mode::Clamp);
                let (mut s, mut o1, mut o2, mut o3) = (
                    src.clone(),
                    vec![0.0f32; w * h],
                    vec![0.0f32; w * h],
                    vec![0.0f32; w * h],
                );
                // SAFETY: all four buffers hold w x h elements.
                unsafe {
                    (ops.literal_masks)(
                        s.data.as_mut_ptr(),
                        w as i32,
                        h as i32,
                        o1.as_mut_ptr(),
                        o2.as_mut_ptr(),
                        o3.as_mut_ptr(),
                    )
                };
                close(&o1, &sep, "convolve_sep with mask1_3 and mask1_5")?;
                close(&o2, &m5, "convolve with mask5")?;
                let first = plane_of(w, h, o1.iter().map(|&v| v as f64).collect());
                for y in 0..h as i64 {
                    for x in 0..w as i64 {
                        let mut best = Mode::Clamp.read(&src, x - 1, y - 1);
                        for dy in -1..=1 {
                            for dx in -1..=1 {
                                best = best.max(Mode::Clamp.read(&src, x + dx, y + dy));
                            }
                        }
                        let want = best as f32 - first.get(x as usize, y as usize);
                        let got = o3[y as usize * w + x as usize];
                        prop_assert_eq!(got.to_bits(), want.to_bits(), "local2 at ({}, {})", x, y);
                    }
                }
                Ok(())
            })
            .unwrap();
    });
}

/// What `durin check -O2 --target TARGET --report fusion PROGRAM` prints (which must succeed).
fn fusion_report(target: &str, program: &str) -> String {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_durin"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "check", "-O2", "--target", target, "--report", "fusion", program,
        ])
        .output()
        .expect("durin runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

/// `--report fusion` on a graph that reads far (three 5x5 box filters, every pass stored):
/// the GPU's default walks strips of rows, each horizontal pass (read only straight above
/// and below by the vertical pass) in registers, its 5 rows computed from 6, 4 and 2 rows
/// below the outputs' row, each vertical pass (read 2 columns across by the next stage's
/// horizontal pass, on its own row) in a ring of shared memory.
#[test]
fn the_fusion_report_says_where_gpu_strips_keep_each_result() {
    let text = fusion_report("cuda", "tests/image/fusion_strips.art");
    let prefix = "fusion: tests/image/fusion_strips.art:9:5: GPU strips: ";
    let lines: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .collect();
    // 256 columns per block, 8 on each side read around: 240 outputs across.
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("the graph is one kernel") && l.ends_with(": (240, 128)")),
        "{text}"
    );
    let registers: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("stored result in each thread's registers"))
        .collect();
    let shared: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("stored result in a ring of rows"))
        .collect();
    assert_eq!(registers.len(), 3, "{text}");
    assert_eq!(shared.len(), 2, "{text}");
    for (l, want) in registers
        .iter()
        .zip([": (0, 5, 6)", ": (2, 5, 4)", ": (4, 5, 2)"])
    {
        assert!(l.ends_with(want), "{l}");
    }
    for (l, want) in shared.iter().zip([": (1, 1, 4, 2)", ": (3, 1, 2, 2)"]) {
        assert!(l.ends_with(want), "{l}");
    }
}

/// `--report fusion` says, for each graph realized, the path and where each numbered result
/// lives, and why: for Harris as the library writes it, the cost model stores the two
/// gradients (costly, read at nine offsets) and inlines their products (one multiplication)
/// and the sums (read once); a schedule's `keep` (which may also put results in memory)
/// and a program's `lazy_store` override it.
/// On the CPU (bands) and for CUDA (thread tiles), which need no GPU to compile.
#[test]
fn the_fusion_report_explains_what_is_stored() {
    for (target, path) in [("cpu", "CPU bands"), ("cuda", "GPU thread tiles")] {
        let text = fusion_report(target, "tests/image/fusion.art");
        // The decisions for the call on `line`, in the order of the results' numbers.
        let decisions = |line: u32| -> Vec<String> {
            let prefix = format!("fusion: tests/image/fusion.art:{line}:5: {path}: ");
            (text.lines())
                .filter_map(|l| l.strip_prefix(&prefix))
                .map(str::to_string)
                .collect()
        };
        let harris = decisions(8);
        assert_eq!(harris.len(), 6, "{target}:\n{text}");
        assert!(
            harris[0].starts_with("the graph is one"),
            "{target}:\n{text}"
        );
        let stored = |d: &str| d.starts_with("result stored");
        for (k, d) in harris[1..].iter().enumerate() {
            assert_eq!(stored(d), k < 2, "{target}, result {k}: {d}");
            assert!(
                d.rsplit(": (")
                    .next()
                    .unwrap_or("")
                    .starts_with(&format!("{k}, ")),
                "{d}"
            );
        }
        assert!(
            harris[1].contains("computed more than once per pixel"),
            "{}",
            harris[1]
        );
        // Each gradient read at nine offsets by three sums of products, the first twice
        // per term by the sum of its squares.
        assert!(harris[1].ends_with(": (0, 27, 1, 1, 17)"), "{}", harris[1]);
        assert!(
            harris[3].contains("computed once per pixel anyway"),
            "{}",
            harris[3]
        );
        let inlined = decisions(9);
        assert_eq!(inlined.len(), 6, "{target}:\n{text}");
        assert!(
            inlined[1..]
                .iter()
                .all(|d| d.starts_with("result inlined: the schedule's `keep`")),
            "{text}"
        );
        let program = decisions(11);
        assert_eq!(program.len(), 3, "{target}:\n{text}");
        assert!(
            program[1].starts_with("result stored")
                && program[1].contains("the program's `lazy_store`"),
            "{text}"
        );
        // One addition to a stored result: cheaper computed at each of its nine reads.
        assert!(
            program[2].starts_with("result inlined")
                && program[2].contains("costing under 2")
                && program[2].ends_with(": (1, 9, 1, 1, 1)"),
            "{text}"
        );
        // The gradients in memory, computed before the graph, which no longer has them.
        let memory: Vec<&str> = (text.lines())
            .filter(|l| l.starts_with("fusion: tests/image/fusion.art:12:5: result in memory"))
            .collect();
        assert_eq!(memory.len(), 2, "{target}:\n{text}");
        assert!(memory[0].ends_with(": (0, 27, 1, 1, 17)"), "{text}");
        assert!(memory[1].ends_with(": (1, 27, 1, 1, 17)"), "{text}");
        let rest = decisions(12);
        assert_eq!(rest.len(), 4, "{target}:\n{text}");
        assert!(rest[1].contains(": (2, 1, 0, 0, 26)"), "{text}");
    }
}
