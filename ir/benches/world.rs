//! Benchmarks of the IR's core: building hash-consed defs, printing and parsing.
//!
//! `cargo bench -p durin-ir --bench world` prints a table. Each time is the median of
//! several runs after a warm-up; memory is measured by a counting allocator as the heap
//! bytes still held after building, divided by the number of distinct defs. The anchor,
//! measured in the same run, is inserting the same number of `(u64, u64, u64)` keys into an
//! `FxHashMap`, the least a hash-consing table must do.

use durin_ir::{text, ArithOp, CmpOp, Def, World};
use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::{Duration, Instant};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new as isize - l.size() as isize, Ordering::Relaxed);
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const N: usize = 1_000_000;

/// How far back operands reach.
#[derive(Clone, Copy)]
enum Operands {
    /// Like code a frontend or a pass builds: the first operand among the 64 newest values,
    /// the second among the 4096 newest, and one in eight anywhere.
    Local,
    /// The first operand among the 65536 newest values, the second anywhere: nearly every
    /// operand read misses the cache.
    Uniform,
}

/// A deterministic stream of requests `(op, a, b)`: indices of earlier values, one in four
/// repeating an earlier request exactly.
fn requests(pattern: Operands) -> Vec<(u8, u32, u32)> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut reqs: Vec<(u8, u32, u32)> = Vec::with_capacity(N);
    for i in 0..N {
        let r = next();
        if i > 0 && r % 4 == 0 {
            let j = (next() % i as u64) as usize;
            reqs.push(reqs[j]);
        } else {
            // Operands among the values made so far (params first).
            let avail = (i + 4) as u64;
            let (a, b) = match pattern {
                Operands::Local => {
                    let far = next() % 8 == 0;
                    let a = avail - 1 - (next() % avail.min(64));
                    let b = if far {
                        next() % avail
                    } else {
                        avail - 1 - (next() % avail.min(4096))
                    };
                    (a, b)
                }
                Operands::Uniform => (avail - 1 - (next() % avail.min(1 << 16)), next() % avail),
            };
            reqs.push(((r >> 32) as u8 % 4, a as u32, b as u32));
        }
    }
    reqs
}

fn build(reqs: &[(u8, u32, u32)]) -> World {
    let mut w = World::new();
    let i64t = w.ty_int(64, true);
    let k = w.cont(&[i64t, i64t, i64t, i64t], "f");
    let mut vals: Vec<Def> = w.params(k);
    vals.reserve(reqs.len());
    const OPS: [ArithOp; 4] = [ArithOp::Add, ArithOp::Mul, ArithOp::Xor, ArithOp::Sub];
    for &(op, a, b) in reqs {
        let d = w.arith(OPS[op as usize], vals[a as usize], vals[b as usize]);
        vals.push(d);
    }
    w
}

fn anchor(reqs: &[(u8, u32, u32)]) -> usize {
    let mut m: rustc_hash::FxHashMap<(u64, u64, u64), u32> = Default::default();
    for (i, &(op, a, b)) in reqs.iter().enumerate() {
        m.entry((op as u64, a as u64, b as u64)).or_insert(i as u32);
    }
    m.len()
}

/// A program of about `n` defs: continuations of 100 statements each, chained.
fn big_program(n: usize) -> World {
    let mut w = World::new();
    let (i32t, mem) = (w.ty_int(32, true), w.ty_mem());
    let ret = w.ty_cont(&[mem, i32t]);
    let main = w.cont(&[mem, i32t, i32t, ret], "main");
    w.make_external(main);
    let ps = w.params(main);
    let (mut cur, mut m, mut x, y, r) = (main, ps[0], ps[1], ps[2], ps[3]);
    let mut i = 0;
    while w.num_defs() < n {
        for _ in 0..33 {
            let c = w.lit_i32(i);
            i += 1;
            let a = w.arith(ArithOp::Add, x, c);
            let b = w.arith(ArithOp::Mul, a, y);
            x = w.arith(ArithOp::Xor, b, a);
        }
        let next = w.cont(&[mem, i32t], "block");
        let q = w.params(next);
        let cmp = w.cmp(CmpOp::Lt, x, y);
        let z = w.select(cmp, x, y);
        w.set_body(cur, next, &[m, z]);
        (cur, m, x) = (next, q[0], q[1]);
    }
    w.set_body(cur, r, &[m, x]);
    w
}

fn median(mut f: impl FnMut() -> Duration, runs: usize) -> Duration {
    f(); // warm-up
    let mut ts: Vec<Duration> = (0..runs).map(|_| f()).collect();
    ts.sort();
    ts[runs / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e3)
}

fn main() {
    let reqs = requests(Operands::Local);
    let uniform = requests(Operands::Uniform);
    let before = LIVE.load(Ordering::Relaxed);
    let w = build(&reqs);
    let held = LIVE.load(Ordering::Relaxed) - before;
    let distinct = w.num_defs();
    drop(w);
    let t_build = median(
        || {
            let t = Instant::now();
            black_box(build(black_box(&reqs)));
            t.elapsed()
        },
        7,
    );
    let t_uniform = median(
        || {
            let t = Instant::now();
            black_box(build(black_box(&uniform)));
            t.elapsed()
        },
        7,
    );
    let t_anchor = median(
        || {
            let t = Instant::now();
            black_box(anchor(black_box(&reqs)));
            t.elapsed()
        },
        7,
    );

    let prog = big_program(100_000);
    let defs = prog.num_defs();
    let src = text::print(&prog);
    let t_print = median(
        || {
            let t = Instant::now();
            black_box(text::print(black_box(&prog)));
            t.elapsed()
        },
        5,
    );
    let t_parse = median(
        || {
            let t = Instant::now();
            black_box(text::parse(black_box(&src)).expect("printed text parses"));
            t.elapsed()
        },
        5,
    );

    let t_verify = median(
        || {
            let t = Instant::now();
            durin_ir::verify::verify(black_box(&prog)).expect("verifies");
            t.elapsed()
        },
        5,
    );

    println!("| benchmark | measured | target |");
    println!("|---|---|---|");
    println!(
        "| build {N} structural defs ({distinct} distinct), local operands | {} ms | <= 500 ms |",
        ms(t_build)
    );
    println!(
        "| build {N} structural defs, uniformly random operands (worst case) | {} ms | |",
        ms(t_uniform)
    );
    println!(
        "| anchor: {N} inserts into FxHashMap<(u64, u64, u64), u32> | {} ms (build / anchor = {:.2}) | |",
        ms(t_anchor),
        t_build.as_secs_f64() / t_anchor.as_secs_f64()
    );
    println!(
        "| heap held per distinct def | {:.1} bytes | <= 200 bytes |",
        held as f64 / distinct as f64
    );
    println!(
        "| print {defs} defs ({} KiB of text) | {} ms | |",
        src.len() / 1024,
        ms(t_print)
    );
    println!("| parse {defs} defs | {} ms | |", ms(t_parse));
    println!(
        "| print + parse | {} ms | <= 1000 ms |",
        ms(t_print + t_parse)
    );
    println!("| verify {defs} defs | {} ms | |", ms(t_verify));
}
