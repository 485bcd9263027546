//! Random programs give the same results compiled by LLVM and by Cranelift (each through
//! its JIT) as in the interpreter.
//!
//! - Programs with control flow, loops, memory, closures and local functions (the IR
//!   crate's recipes), after each native pipeline, called as `main(a, b, x)` on a thread
//!   with a small stack: some recipes have a loop of 20,000 trips or more, so a back end
//!   that uses stack on each trip (a jump or tail call compiled as a plain call) overflows;
//! - expressions over every primitive type, with and without constant folding in the
//!   world (so LLVM's folding is checked too), called through a harness that reads the
//!   arguments from memory and returns the result's bits.
//!
//! Cases where the interpreter reports a run-time error (a division by zero, memory never
//! written) are skipped: native code would stop the test process there.

use durin_backend_cranelift as cranelift;
use durin_backend_llvm as llvm;
use durin_ir::interp;
use durin_ir::semantics::mask;
use durin_ir::strategy::{expr, recipe, ExprProgram, Recipe, EXPR_ARGS, EXPR_TYPES};
use durin_ir::{text, Def, TypeKind, World};
use durin_passes::{Config, PassContext, Pipeline, PrintAfter, RunOptions};
use inkwell::context::Context;
use proptest::prelude::*;

/// `w` after the native pipeline of `level`; with `split_all`, the `split` pass splits the
/// loops off every function, however small.
fn native(w: &World, level: u8, split_all: bool) -> Result<World, String> {
    let mut w = w.clone();
    let opts = RunOptions {
        verify_each: true,
        print_after: PrintAfter::None,
    };
    let mut cx = PassContext::new(Config {
        fuel: 10_000,
        split_min_blocks: if split_all {
            0
        } else {
            Config::default().split_min_blocks
        },
        ..Config::default()
    });
    Pipeline::for_native(level)
        .run_in(&mut w, &opts, &mut cx, |_, _| {})
        .map_err(|e| e.to_string())?;
    Ok(w)
}

#[derive(Clone, Copy, Debug)]
enum Backend {
    Llvm,
    Cranelift,
}

const BACKENDS: [Backend; 2] = [Backend::Llvm, Backend::Cranelift];

/// Compiles `w` with `backend` at level `level` and calls `f` with the address of `name`;
/// with `in_parts`, LLVM optimizes every module of two functions or more in parts on two
/// threads.
fn with_jit<T>(
    backend: Backend,
    w: &World,
    name: &str,
    level: u8,
    in_parts: bool,
    f: impl FnOnce(usize) -> T,
) -> Result<T, String> {
    let symbols = durin_runtime::symbols();
    let fail = |e: &dyn std::fmt::Display| format!("{backend:?}: {e}\n{}", text::print(w));
    match backend {
        Backend::Llvm => {
            let ctx = Context::create();
            let opts = llvm::Options {
                opt_level: level,
                parallel_min_instructions: if in_parts {
                    0
                } else {
                    llvm::PARALLEL_MIN_INSTRUCTIONS
                },
                ..llvm::Options::default()
            };
            let compiled = llvm::compile(&ctx, w, &opts).map_err(|e| fail(&e))?;
            let jit = compiled.jit(name, &symbols).map_err(|e| fail(&e))?;
            Ok(f(jit.address))
        }
        Backend::Cranelift => {
            let opts = cranelift::Options {
                places: None,
                opt_level: level,
                verify: true,
                bounds_checks: None,
            };
            let jit = cranelift::jit(w, name, &symbols, &opts).map_err(|e| fail(&e))?;
            Ok(f(jit.address))
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct MainResult {
    i: i32,
    f: f64,
}

/// Reads the expression program's arguments (one `u64` of bits each) from memory,
/// converts them to the parameter types, calls the program and returns the result's bits
/// zero-extended to 64: the external `harness(ptr([u64])) -> u64`.
fn add_harness(w: &mut World, entry: Def) -> Def {
    let u64t = w.ty_int(64, false);
    let mem = w.ty_mem();
    let arr = w.ty_array(u64t, None);
    let ptr = w.ty_ptr(arr, durin_ir::AddrSpace::Generic);
    let ret = w.ty_cont(&[mem, u64t]);
    let h = w.cont(&[mem, ptr, ret], "harness");
    w.make_external(h);
    let hp = w.params(h);
    let ptys: Vec<_> = w.types().cont_params(w.type_of(entry)).unwrap().to_vec();
    let (mut m, mut args) = (hp[0], vec![hp[0]]);
    for (i, &t) in ptys[1..ptys.len() - 1].iter().enumerate() {
        let idx = w.lit_i64(i as i64);
        let p = w.lea(hp[1], idx);
        let l = w.load(m, p);
        m = w.extract_at(l, 0);
        let bits = w.extract_at(l, 1);
        let v = match w.kind(t).clone() {
            TypeKind::Float { bits: 64 } => w.bitcast(t, bits),
            TypeKind::Float { bits: b } => {
                let it = w.ty_int(b, false);
                let narrow = w.conv(it, bits);
                w.bitcast(t, narrow)
            }
            TypeKind::Bool => {
                // The interpreter's argument is the low bit.
                let one = w.lit(u64t, 1);
                let low = w.arith(durin_ir::ArithOp::And, bits, one);
                w.conv(t, low)
            }
            _ => w.conv(t, bits),
        };
        args.push(v);
    }
    args[0] = m;
    let rt = *w
        .types()
        .cont_params(ptys[ptys.len() - 1])
        .unwrap()
        .last()
        .unwrap();
    let k = w.cont(&[mem, rt], "result");
    let kp = w.params(k);
    let out = match w.kind(rt).clone() {
        TypeKind::Float { bits: 64 } => w.bitcast(u64t, kp[1]),
        TypeKind::Float { bits: b } => {
            let it = w.ty_int(b, false);
            let raw = w.bitcast(it, kp[1]);
            w.conv(u64t, raw)
        }
        TypeKind::Int { bits: b, .. } => {
            // Zero-extend: through the unsigned type of the same width.
            let it = w.ty_int(b, false);
            let raw = if w.type_of(kp[1]) == it {
                kp[1]
            } else {
                w.bitcast(it, kp[1])
            };
            w.conv(u64t, raw)
        }
        _ => w.conv(u64t, kp[1]),
    };
    w.set_body(k, hp[2], &[kp[0], out]);
    args.push(k);
    w.set_body(h, entry, &args);
    h
}

/// The stack the compiled programs run on: far more than any generated program needs at
/// once, far less than a long loop (`strategy::LONG_TRIPS`, 20,000 trips or more) needs if
/// a back end takes even 16 bytes of stack per trip; then the test process stops with
/// "has overflowed its stack".
const SMALL_STACK: usize = 256 * 1024;

fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(f)
        .expect("a thread starts")
        .join()
        .expect("the compiled program returns")
}

fn interp_ok<T>(r: Result<T, interp::InterpError>) -> Result<T, TestCaseError> {
    r.map_err(|e| TestCaseError::reject(format!("the interpreter stops: {e:?}")))
}

proptest! {
    #![proptest_config(durin_ir::strategy::test_config())]

    #[test]
    fn random_programs_agree_with_the_interpreter(
        r in recipe(), level in 0u8..=3, split_all in any::<bool>(),
        a in any::<i32>(), b in any::<i32>(), x in -1e4f64..1e4,
    ) {
        let (w, main) = r.build();
        let (want_i, want_f) = interp_ok(Recipe::run(&w, main, a, b, x))?;
        let first_order = native(&w, level, split_all).map_err(TestCaseError::fail)?;
        for backend in BACKENDS {
            let got = with_jit(backend, &first_order, "main", level, split_all, |addr| {
                // SAFETY: `main(mem, i32, i32, f64, cn(mem, i32, f64))` compiles to this C
                // type (with Cranelift: two results, returned in the same registers).
                let f: extern "C" fn(i32, i32, f64) -> MainResult = unsafe { std::mem::transmute(addr) };
                on_small_stack(move || f(a, b, x))
            }).map_err(TestCaseError::fail)?;
            prop_assert_eq!(got.i, want_i, "{:?}: int result at -O{}\n{}", backend, level, text::print(&first_order));
            prop_assert!(
                got.f.to_bits() == want_f || (got.f.is_nan() && f64::from_bits(want_f).is_nan()),
                "{:?}: float result at -O{}: {} vs {}\n{}", backend, level, got.f, f64::from_bits(want_f), text::print(&first_order)
            );
        }
    }

    #[test]
    fn expressions_agree_with_the_interpreter(
        e in expr(), ty in 0u8..EXPR_TYPES.len() as u8, normalize in any::<bool>(), level in 0u8..=3,
        args in proptest::collection::vec(any::<u64>(), EXPR_ARGS),
    ) {
        let mut p = ExprProgram::new(ty, normalize);
        p.build(&e, ty);
        let want = interp_ok(p.run(&args))?;
        let mut w = p.world.clone();
        add_harness(&mut w, p.entry);
        let rt = EXPR_TYPES[ty as usize];
        let bits = w.types().prim_bits(w.type_of(p.root)).unwrap_or(64);
        let is_float = rt.starts_with('f');
        let want = mask(bits, want);
        for backend in BACKENDS {
            // The harness passes each argument masked to its type, as `run` does.
            let got = with_jit(backend, &w, "harness", level, false, |addr| {
                // SAFETY: `harness(mem, ptr([u64]), cn(mem, u64))` compiles to this C type.
                let f: extern "C" fn(*const u64) -> u64 = unsafe { std::mem::transmute(addr) };
                f(args.as_ptr())
            }).map_err(TestCaseError::fail)?;
            let g = mask(bits, got);
            let same = g == want || (is_float && {
                let nan = |v: u64| match bits {
                    16 => half::f16::from_bits(v as u16).is_nan(),
                    32 => f32::from_bits(v as u32).is_nan(),
                    _ => f64::from_bits(v).is_nan(),
                };
                nan(g) && nan(want)
            });
            prop_assert!(same, "{rt}: {backend:?} {g:#x}, interpreter {want:#x}\n{}", text::print(&w));
        }
    }
}

/// Two functions that differ only in their names, as splitting makes of one loop wherever
/// the same library code was specialized: written as `@sum` and `@sum.1`. Each divides,
/// so each has its own message for a division by zero, equal to the other's.
const TWIN_FUNCTIONS: &str = "
extern cont @main(%m: mem, %a: i32, %b: i32, %x: f64, %r: cn(mem, i32, f64)) {
    jump @sum(%m, %a, @after)
}
cont @after(%m1: mem, %s: i32) {
    jump @sum.1(%m1, %b, @done)
}
cont @done(%m2: mem, %t: i32) {
    %u: i32 = sub(%s, %t)
    jump %r(%m2, %u, %x)
}
noinline cont @sum(%sm: mem, %n: i32, %k: cn(mem, i32)) {
    jump @head(%sm, 0:i32, 1:i32)
}
cont @head(%hm: mem, %i: i32, %acc: i32) {
    %c: bool = lt(%i, %n)
    %next: cn(mem, i32) = select(%c, @body, %k)
    jump %next(%hm, %acc)
}
cont @body(%bm: mem, %acc1: i32) {
    %sq: i32 = mul(%acc1, 31:i32)
    %q: i32 = div(%sq, %n)
    %acc2: i32 = add(%q, %i)
    %i2: i32 = add(%i, 1:i32)
    jump @head(%bm, %i2, %acc2)
}
noinline cont @sum.1(%sm1: mem, %n1: i32, %k1: cn(mem, i32)) {
    jump @head.1(%sm1, 0:i32, 1:i32)
}
cont @head.1(%hm1: mem, %i1: i32, %accb: i32) {
    %c1: bool = lt(%i1, %n1)
    %next1: cn(mem, i32) = select(%c1, @body.1, %k1)
    jump %next1(%hm1, %accb)
}
cont @body.1(%bm1: mem, %accc: i32) {
    %sq1: i32 = mul(%accc, 31:i32)
    %q1: i32 = div(%sq1, %n1)
    %accd: i32 = add(%q1, %i1)
    %i3: i32 = add(%i1, 1:i32)
    jump @head.1(%bm1, %i3, %accd)
}
";

/// Functions that came out identical are merged before LLVM optimizes (above `-O0`), so
/// the optimizer works on one of them; the program still computes what the interpreter
/// does.
#[test]
fn identical_functions_are_optimized_once() {
    let w = text::parse(TWIN_FUNCTIONS).expect("the program parses");
    let main = w.externals().next().expect("main is external");
    let (a, b, x) = (1000, 7, 2.5);
    let (want_i, want_f) = Recipe::run(&w, main, a, b, x).expect("the interpreter runs it");
    for level in 0..=3 {
        let ctx = Context::create();
        let opts = llvm::Options {
            opt_level: level,
            ..llvm::Options::default()
        };
        let mut compiled = llvm::compile(&ctx, &w, &opts).expect("the program compiles");
        let module = compiled.module().expect("the parts link");
        let defined = (module.get_functions())
            .filter(|f| f.count_basic_blocks() > 0)
            .count();
        let want = if level == 0 { 3 } else { 2 };
        assert_eq!(defined, want, "functions with a body at -O{level}");
        let got = with_jit(Backend::Llvm, &w, "main", level, false, |addr| {
            // SAFETY: `main(mem, i32, i32, f64, cn(mem, i32, f64))` compiles to this C type.
            let f: extern "C" fn(i32, i32, f64) -> MainResult =
                unsafe { std::mem::transmute(addr) };
            f(a, b, x)
        })
        .expect("the program compiles");
        assert_eq!((got.i, got.f.to_bits()), (want_i, want_f), "at -O{level}");
    }
}

/// A byte string (`b"..."`), read through memory from a global and as a value at an index
/// not known at compile time, with the bytes that need escapes in the text form.
const BYTE_STRING: &str = r#"
global @text = b"A\"\\\x00\xff\n~"
extern cont @main(%m: mem, %a: i32, %b: i32, %x: f64, %ret: cn(mem, i32, f64)) {
    jump @head(%m, %a, 0:i32)
}
cont @head(%hm: mem, %i: i32, %acc: i32) {
    %c: bool = lt(%i, %b)
    %next: cn(mem, i32) = select(%c, @body, @done)
    jump %next(%hm, %acc)
}
cont @body(%bm: mem, %acc1: i32) {
    %p: ptr(u8) = lea(@text, %i)
    %l: (mem, u8) = load(%bm, %p)
    %lm: mem = extract(%l, 0:i64)
    %v: u8 = extract(%l, 1:i64)
    %vi: i32 = conv(%v)
    %acc2: i32 = add(%acc1, %vi)
    %i2: i32 = add(%i, 1:i32)
    jump @head(%lm, %i2, %acc2)
}
cont @done(%dm: mem, %sum: i32) {
    %at: i64 = conv(%a)
    %d: u8 = extract(b"A\"\\\x00\xff\n~", %at)
    %di: i32 = conv(%d)
    %r: i32 = mul(%sum, 1000:i32)
    %ri: i32 = add(%r, %di)
    %e: u8 = extract(b"A\"\\\x00\xff\n~", 4:i64)
    %ef: f64 = conv(%e)
    %rf: f64 = add(%x, %ef)
    jump %ret(%dm, %ri, %rf)
}
"#;

/// The bytes of `BYTE_STRING`'s text, as Rust reads the same escapes.
const BYTES: &[u8] = b"A\"\\\x00\xff\n~";

#[test]
fn byte_strings_agree_with_the_interpreter_and_their_bytes() {
    let w = text::parse(BYTE_STRING).expect("the program parses");
    let main = w.externals().next().expect("main is external");
    let text_global = (w.nominals())
        .find(|&g| w.name(g) == Some("text"))
        .expect("@text");
    assert_eq!(w.bytes_of(w.ops(text_global)[0]), Some(BYTES));
    // The bytes `a..b` summed, times 1000, plus byte `a`; and 0.5 plus byte 4.
    let ranges = [(0, 7), (2, 5), (4, 5), (6, 7)];
    let want = |(a, b): (i32, i32)| {
        let sum: i32 = (BYTES[a as usize..b as usize].iter())
            .map(|&x| i32::from(x))
            .sum();
        (sum * 1000 + i32::from(BYTES[a as usize]), 0.5 + 255.0)
    };
    for r in ranges {
        let (got_i, got_f) = Recipe::run(&w, main, r.0, r.1, 0.5).expect("the interpreter runs it");
        assert_eq!(
            (got_i, f64::from_bits(got_f)),
            want(r),
            "interpreter, bytes {r:?}"
        );
    }
    for level in 0..=3 {
        let first_order = native(&w, level, false).expect("the passes run");
        for backend in BACKENDS {
            let got: Vec<(i32, f64)> =
                with_jit(backend, &first_order, "main", level, false, |addr| {
                    // SAFETY: `main(mem, i32, i32, f64, cn(mem, i32, f64))` compiles to this C
                    // type.
                    let f: extern "C" fn(i32, i32, f64) -> MainResult =
                        unsafe { std::mem::transmute(addr) };
                    ranges
                        .map(|(a, b)| f(a, b, 0.5))
                        .map(|r| (r.i, r.f))
                        .to_vec()
                })
                .expect("the program compiles");
            let expected: Vec<(i32, f64)> = ranges.map(want).to_vec();
            assert_eq!(got, expected, "{backend:?} at -O{level}");
        }
    }
}
