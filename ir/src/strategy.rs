//! proptest strategies that generate random well-typed programs (feature `proptest`).
//!
//! A strategy does not produce a [`World`] directly: it produces a [`Recipe`], plain data
//! that shrinks well, and [`Recipe::build`] turns it into a world with one external entry
//!
//! ```text
//! extern cont @main(%mem: mem, %a: i32, %b: i32, %x: f64, %ret: cn(mem, i32, f64))
//! ```
//!
//! Programs mix integer and float arithmetic, comparisons and selects, conversions, tuples
//! with `extract`/`insert`, branches that join, counted loops, stack slots and heap arrays,
//! calls of functions, and higher-order calls that pass functions and closures. Every
//! generated program terminates, never divides by zero and never reads memory out of bounds
//! or uninitialized, so the interpreter runs it to completion; passes can be tested by
//! comparing the interpreter's results before and after. See [`Expr`] for single
//! expressions over every primitive type, used to test normalization.
//!
//! ```
//! use proptest::prelude::*;
//! use durin_ir::strategy::{recipe, Recipe};
//!
//! proptest!(|(r in recipe(), a in any::<i32>(), b in any::<i32>(), x in -1e3f64..1e3)| {
//!     let (world, entry) = r.build();
//!     prop_assert!(durin_ir::verify::verify(&world).is_ok());
//!     let _ = Recipe::run(&world, entry, a, b, x);
//! });
//! ```

use crate::def::{ArithOp, CmpOp, Def};
use crate::interp::{self, InterpError, Limits, Value};
use crate::semantics::Prim;
use crate::types::Type;
use crate::world::World;
use proptest::prelude::*;

/// The fewest cases a property may run without `DURIN_FEW_CASES=1`.
pub const MIN_CASES: u32 = 10;

/// The proptest configuration of durin's property tests: `PROPTEST_CASES` cases (1,000
/// when unset), so that a long local run is one environment variable away. A value that is
/// not a number, or fewer than [`MIN_CASES`] cases (which would test next to nothing while
/// passing), stops the test unless `DURIN_FEW_CASES=1` asks for so few.
pub fn test_config() -> ProptestConfig {
    let few = std::env::var("DURIN_FEW_CASES").is_ok_and(|v| v == "1");
    match cases(std::env::var("PROPTEST_CASES").ok().as_deref(), few) {
        Ok(cases) => ProptestConfig {
            cases,
            ..ProptestConfig::default()
        },
        Err(e) => panic!("{e}"),
    }
}

/// The number of cases `PROPTEST_CASES=var` asks for; `few`: fewer than [`MIN_CASES`] are
/// allowed.
fn cases(var: Option<&str>, few: bool) -> Result<u32, String> {
    let Some(s) = var else { return Ok(1000) };
    match s.trim().parse::<u32>() {
        Ok(n) if n >= MIN_CASES || few => Ok(n),
        Ok(n) => Err(format!(
            "PROPTEST_CASES={n} is fewer than {MIN_CASES} cases; set DURIN_FEW_CASES=1 to run so few"
        )),
        Err(_) => Err(format!("PROPTEST_CASES={s:?} is not a number of cases")),
    }
}

#[cfg(test)]
mod cases_tests {
    use super::cases;

    #[test]
    fn too_few_or_unreadable_case_counts_are_refused() {
        assert_eq!(cases(None, false), Ok(1000));
        assert_eq!(cases(Some("250"), false), Ok(250));
        assert!(cases(Some("0"), false).is_err());
        assert!(cases(Some("9"), false).is_err());
        assert_eq!(cases(Some("0"), true), Ok(0));
        assert!(cases(Some("many"), false).is_err());
        assert!(cases(Some(""), true).is_err());
    }
}

/// One step of a random program. Operands are indices into the values available at that
/// point (taken modulo their number), so every recipe builds a valid program, and shrinking
/// keeps it valid.
#[derive(Clone, Debug)]
pub enum Stmt {
    /// An integer operation on two available integers (division and remainder divide by
    /// `b | 1`).
    Int(ArithOp, u8, u8),
    /// A float operation (`add`, `sub`, `mul`, `div`) on two available floats.
    Float(ArithOp, u8, u8),
    /// A comparison of two integers, making a bool.
    Cmp(CmpOp, u8, u8),
    /// A float comparison, making a bool.
    FCmp(CmpOp, u8, u8),
    /// `select(bool, int, int)`.
    Select(u8, u8, u8),
    /// An integer literal.
    IntLit(i32),
    /// A float literal.
    FloatLit(f64),
    /// Conversions: an int to float and a float to int (saturating).
    Conv(u8, u8),
    /// A tuple of an int and a float, an `insert` into it, and `extract`s.
    Tuple(u8, u8, u8),
    /// `if bool { .. } else { .. }`, joining with one int and one float.
    If(u8, Vec<Stmt>, Vec<Stmt>),
    /// A counted loop carrying an int and a float: at most 7 trips when nested; some
    /// recipes have one top-level loop of [`LONG_TRIPS`] trips, so that code that uses
    /// stack on every trip runs out of a small stack.
    Loop(u16, Vec<Stmt>),
    /// A stack slot: store an int, load it back. The slot stays available (a mutable
    /// variable) to the statements after it, nested regions included.
    Slot(u8),
    /// Store an int into an available slot (nothing if there is none).
    Assign(u8, u8),
    /// Load an int from an available slot (nothing if there is none).
    Read(u8),
    /// Pass a closure that reads an available slot to `apply` (nothing if there is none).
    SlotClosure(u8, u8),
    /// A heap array of 8 ints: fill it, overwrite at a computed index, read at another.
    Array(u8, u8, u8),
    /// Call a closed function (whose body is the statements) with an int, via a return
    /// continuation.
    Call(u8, Vec<Stmt>),
    /// Pass a function to a higher-order `apply` that calls it.
    Apply(u8, Vec<Stmt>),
    /// Pass a closure that captures two available ints to `apply`.
    Closure(u8, u8, u8),
    /// Call a local function that captures two available ints, a loop by tail recursion
    /// `f(k, acc) = if k > 0 { f(k - 1, acc + c - d) } else { acc }`, twice (so that it
    /// returns to two places): `f((a >> 2) & 3, f(a & 3, c))`.
    LocalCall(u8, u8, u8),
}

/// A random program: the statements of `main`'s body.
#[derive(Clone, Debug)]
pub struct Recipe {
    /// The statements, in order.
    pub stmts: Vec<Stmt>,
}

fn leaf_stmt() -> impl Strategy<Value = Stmt> {
    let int_op = prop::sample::select(ArithOp::ALL.to_vec());
    let float_op =
        prop::sample::select(vec![ArithOp::Add, ArithOp::Sub, ArithOp::Mul, ArithOp::Div]);
    let cmp_op = prop::sample::select(CmpOp::ALL.to_vec());
    let b = any::<u8>;
    prop_oneof![
        4 => (int_op, b(), b()).prop_map(|(o, x, y)| Stmt::Int(o, x, y)),
        2 => (float_op, b(), b()).prop_map(|(o, x, y)| Stmt::Float(o, x, y)),
        1 => (cmp_op.clone(), b(), b()).prop_map(|(o, x, y)| Stmt::Cmp(o, x, y)),
        1 => (cmp_op, b(), b()).prop_map(|(o, x, y)| Stmt::FCmp(o, x, y)),
        1 => (b(), b(), b()).prop_map(|(c, x, y)| Stmt::Select(c, x, y)),
        1 => prop_oneof![Just(0), Just(1), Just(-1), any::<i32>()].prop_map(Stmt::IntLit),
        1 => prop_oneof![Just(0.0), Just(-0.0), Just(1.0), -1e6f64..1e6].prop_map(Stmt::FloatLit),
        1 => (b(), b()).prop_map(|(x, y)| Stmt::Conv(x, y)),
        1 => (b(), b(), b()).prop_map(|(x, y, z)| Stmt::Tuple(x, y, z)),
        1 => b().prop_map(Stmt::Slot),
        2 => (b(), b()).prop_map(|(x, y)| Stmt::Assign(x, y)),
        2 => b().prop_map(Stmt::Read),
        1 => (b(), b()).prop_map(|(x, y)| Stmt::SlotClosure(x, y)),
        1 => (b(), b(), b()).prop_map(|(x, y, z)| Stmt::Array(x, y, z)),
        1 => (b(), b(), b()).prop_map(|(x, y, z)| Stmt::Closure(x, y, z)),
        1 => (b(), b(), b()).prop_map(|(x, y, z)| Stmt::LocalCall(x, y, z)),
    ]
}

/// Statements with nested regions (branches, loops, calls) up to a small depth.
pub fn stmt() -> impl Strategy<Value = Stmt> {
    leaf_stmt().prop_recursive(3, 48, 6, |inner| {
        let block = prop::collection::vec(inner, 0..6);
        prop_oneof![
            (any::<u8>(), block.clone(), block.clone()).prop_map(|(c, t, e)| Stmt::If(c, t, e)),
            (0u16..8, block.clone()).prop_map(|(n, b)| Stmt::Loop(n, b)),
            (any::<u8>(), block.clone()).prop_map(|(a, b)| Stmt::Call(a, b)),
            (any::<u8>(), block).prop_map(|(a, b)| Stmt::Apply(a, b)),
        ]
    })
}

/// The trip counts of a recipe's long loop.
pub const LONG_TRIPS: std::ops::RangeInclusive<u16> = 20_000..=30_000;

/// Random programs of up to 24 top-level statements; one in six also has a long loop (of
/// [`LONG_TRIPS`] trips, over statements without nested regions) at a random place.
pub fn recipe() -> impl Strategy<Value = Recipe> {
    let long_loop = (LONG_TRIPS, prop::collection::vec(leaf_stmt(), 1..6))
        .prop_map(|(n, body)| Stmt::Loop(n, body));
    let long = prop::option::weighted(1.0 / 6.0, (long_loop, any::<prop::sample::Index>()));
    (prop::collection::vec(stmt(), 0..24), long).prop_map(|(mut stmts, long)| {
        if let Some((l, at)) = long {
            stmts.insert(at.index(stmts.len() + 1), l);
        }
        Recipe { stmts }
    })
}

/// The values available at a point of the program being built.
#[derive(Clone)]
struct Pools {
    ints: Vec<Def>,
    floats: Vec<Def>,
    bools: Vec<Def>,
    /// Addresses of initialized `i32` slots.
    slots: Vec<Def>,
}

impl Pools {
    /// The newest int and float: what a region passes on.
    fn last(&self) -> (Def, Def) {
        // Never empty: every region starts with at least one of each.
        (
            self.ints[self.ints.len() - 1],
            self.floats[self.floats.len() - 1],
        )
    }
}

fn pick(v: &[Def], i: u8) -> Def {
    v[i as usize % v.len()]
}

struct Builder {
    w: World,
    i32: Type,
    f64: Type,
    mem: Type,
    /// `cn(mem, i32, f64)`: what functions return to.
    ret: Type,
    /// `cn(mem, i32, ret)`: a function.
    fun: Type,
    apply: Option<Def>,
}

/// Where code is being added: the continuation without a body yet, and the current mem.
struct Cursor {
    cont: Def,
    mem: Def,
}

impl Builder {
    fn block(&mut self, cur: &mut Cursor, pools: &mut Pools, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(cur, pools, s);
        }
    }

    fn stmt(&mut self, cur: &mut Cursor, p: &mut Pools, s: &Stmt) {
        let w = &mut self.w;
        match s {
            Stmt::Int(op, a, b) => {
                let (x, mut y) = (pick(&p.ints, *a), pick(&p.ints, *b));
                if matches!(op, ArithOp::Div | ArithOp::Rem) {
                    let one = w.lit_i32(1);
                    y = w.arith(ArithOp::Or, y, one);
                }
                let r = w.arith(*op, x, y);
                p.ints.push(r);
            }
            Stmt::Float(op, a, b) => {
                let r = w.arith(*op, pick(&p.floats, *a), pick(&p.floats, *b));
                p.floats.push(r);
            }
            Stmt::Cmp(op, a, b) => {
                let r = w.cmp(*op, pick(&p.ints, *a), pick(&p.ints, *b));
                p.bools.push(r);
            }
            Stmt::FCmp(op, a, b) => {
                let r = w.cmp(*op, pick(&p.floats, *a), pick(&p.floats, *b));
                p.bools.push(r);
            }
            Stmt::Select(c, a, b) => {
                let r = w.select(pick(&p.bools, *c), pick(&p.ints, *a), pick(&p.ints, *b));
                p.ints.push(r);
            }
            Stmt::IntLit(v) => {
                let r = w.lit_i32(*v);
                p.ints.push(r);
            }
            Stmt::FloatLit(v) => {
                let r = w.lit_f64(*v);
                p.floats.push(r);
            }
            Stmt::Conv(a, b) => {
                let f = w.conv(self.f64, pick(&p.ints, *a));
                let i = w.conv(self.i32, pick(&p.floats, *b));
                p.floats.push(f);
                p.ints.push(i);
            }
            Stmt::Tuple(a, b, c) => {
                let t = w.tuple(&[pick(&p.ints, *a), pick(&p.floats, *b)]);
                let zero = w.lit_i64(0);
                let t2 = w.insert(t, zero, pick(&p.ints, *c));
                let (i0, i1, f) = (w.extract_at(t, 0), w.extract_at(t2, 0), w.extract_at(t2, 1));
                p.ints.extend([i0, i1]);
                p.floats.push(f);
            }
            Stmt::Slot(a) => {
                let s = w.slot(cur.mem, self.i32);
                let (m, ptr) = (w.extract_at(s, 0), w.extract_at(s, 1));
                let m = w.store(m, ptr, pick(&p.ints, *a));
                let l = w.load(m, ptr);
                cur.mem = w.extract_at(l, 0);
                let v = w.extract_at(l, 1);
                p.ints.push(v);
                p.slots.push(ptr);
            }
            Stmt::Assign(s, a) => {
                if !p.slots.is_empty() {
                    cur.mem = w.store(cur.mem, pick(&p.slots, *s), pick(&p.ints, *a));
                }
            }
            Stmt::Read(s) => {
                if !p.slots.is_empty() {
                    let l = w.load(cur.mem, pick(&p.slots, *s));
                    cur.mem = w.extract_at(l, 0);
                    let v = w.extract_at(l, 1);
                    p.ints.push(v);
                }
            }
            Stmt::SlotClosure(s, a) => {
                if !p.slots.is_empty() {
                    // A closure whose result depends on the slot's value when it runs.
                    let (mem, i32, ret) = (self.mem, self.i32, self.ret);
                    let lam = self.w.cont(&[mem, i32, ret], "lambda");
                    let lp = self.w.params(lam);
                    let l = self.w.load(lp[0], pick(&p.slots, *s));
                    let (m, v) = (self.w.extract_at(l, 0), self.w.extract_at(l, 1));
                    let sum = self.w.arith(ArithOp::Add, lp[1], v);
                    let fl = self.w.conv(self.f64, sum);
                    self.w.set_body(lam, lp[2], &[m, sum, fl]);
                    let r = self.w.cont(&[self.mem, self.i32, self.f64], "ret");
                    let apply = self.apply();
                    self.w
                        .set_body(cur.cont, apply, &[cur.mem, lam, pick(&p.ints, *a), r]);
                    self.continue_at(cur, p, r);
                }
            }
            Stmt::Array(v, i, j) => {
                let n = w.lit_i64(8);
                let a = w.alloc(cur.mem, self.i32, n);
                let (mut m, ptr) = (w.extract_at(a, 0), w.extract_at(a, 1));
                for k in 0..8 {
                    let idx = w.lit_i64(k);
                    let at = w.lea(ptr, idx);
                    let val = w.lit_i32(k as i32 * 3);
                    m = w.store(m, at, val);
                }
                let seven = w.lit_i32(7);
                let wi = w.arith(ArithOp::And, pick(&p.ints, *i), seven);
                let at = w.lea(ptr, wi);
                m = w.store(m, at, pick(&p.ints, *v));
                let ri = w.arith(ArithOp::And, pick(&p.ints, *j), seven);
                let at = w.lea(ptr, ri);
                let l = w.load(m, at);
                cur.mem = w.extract_at(l, 0);
                let r = w.extract_at(l, 1);
                p.ints.push(r);
            }
            Stmt::If(c, then, els) => {
                let cond = pick(&p.bools, *c);
                let (mem, i32, f64) = (self.mem, self.i32, self.f64);
                let t = self.w.cont(&[mem], "then");
                let e = self.w.cont(&[mem], "else");
                let j = self.w.cont(&[mem, i32, f64], "join");
                let target = self.w.select(cond, t, e);
                self.w.set_body(cur.cont, target, &[cur.mem]);
                for (k, stmts) in [(t, then), (e, els)] {
                    let mut inner = p.clone();
                    let m = self.w.param(k, 0);
                    let mut c = Cursor { cont: k, mem: m };
                    self.block(&mut c, &mut inner, stmts);
                    let (ri, rf) = inner.last();
                    self.w.set_body(c.cont, j, &[c.mem, ri, rf]);
                }
                self.continue_at(cur, p, j);
            }
            Stmt::Loop(trips, body) => {
                let (mem, i32, f64) = (self.mem, self.i32, self.f64);
                let h = self.w.cont(&[mem, i32, i32, f64], "loop");
                let b = self.w.cont(&[mem], "body");
                let x = self.w.cont(&[mem], "exit");
                let zero = self.w.lit_i32(0);
                let (ai, af) = p.last();
                self.w.set_body(cur.cont, h, &[cur.mem, zero, ai, af]);
                let hp = self.w.params(h);
                let n = self.w.lit_i32(*trips as i32);
                let more = self.w.cmp(CmpOp::Lt, hp[1], n);
                let target = self.w.select(more, b, x);
                self.w.set_body(h, target, &[hp[0]]);
                let mut inner = p.clone();
                inner.ints.extend([hp[1], hp[2]]);
                inner.floats.push(hp[3]);
                let bm = self.w.param(b, 0);
                let mut c = Cursor { cont: b, mem: bm };
                self.block(&mut c, &mut inner, body);
                let one = self.w.lit_i32(1);
                let next = self.w.arith(ArithOp::Add, hp[1], one);
                let (ri, rf) = inner.last();
                self.w.set_body(c.cont, h, &[c.mem, next, ri, rf]);
                let xm = self.w.param(x, 0);
                *cur = Cursor { cont: x, mem: xm };
                p.ints.push(hp[2]);
                p.floats.push(hp[3]);
            }
            Stmt::Call(a, body) | Stmt::Apply(a, body) => {
                let f = self.function(body);
                let arg = pick(&p.ints, *a);
                let r = self.w.cont(&[self.mem, self.i32, self.f64], "ret");
                if matches!(s, Stmt::Call(..)) {
                    self.w.set_body(cur.cont, f, &[cur.mem, arg, r]);
                } else {
                    let apply = self.apply();
                    self.w.set_body(cur.cont, apply, &[cur.mem, f, arg, r]);
                }
                self.continue_at(cur, p, r);
            }
            Stmt::Closure(a, c, d) => {
                // A continuation that uses values of the enclosing code: a closure.
                let (mem, i32, ret) = (self.mem, self.i32, self.ret);
                let lam = self.w.cont(&[mem, i32, ret], "lambda");
                let lp = self.w.params(lam);
                // `(x + c) - 3d`: the closure captures `c` and `3d`, two values.
                let three = self.w.lit_i32(3);
                let d3 = self.w.arith(ArithOp::Mul, pick(&p.ints, *d), three);
                let xc = self.w.arith(ArithOp::Add, lp[1], pick(&p.ints, *c));
                let sum = self.w.arith(ArithOp::Sub, xc, d3);
                let fl = self.w.conv(self.f64, sum);
                self.w.set_body(lam, lp[2], &[lp[0], sum, fl]);
                let r = self.w.cont(&[self.mem, self.i32, self.f64], "ret");
                let apply = self.apply();
                self.w
                    .set_body(cur.cont, apply, &[cur.mem, lam, pick(&p.ints, *a), r]);
                self.continue_at(cur, p, r);
            }
            Stmt::LocalCall(a, c, d) => {
                let (a, c, d) = (pick(&p.ints, *a), pick(&p.ints, *c), pick(&p.ints, *d));
                self.local_call(cur, p, a, c, d);
            }
        }
    }

    /// `f((a >> 2) & 3, f(a & 3, c))` for a local `f(k, acc) = if k > 0 { f(k - 1, acc +
    /// c - d) } else { acc }`.
    fn local_call(&mut self, cur: &mut Cursor, p: &mut Pools, a: Def, c: Def, d: Def) {
        let (mem, i32, ret) = (self.mem, self.i32, self.ret);
        let f = self.w.cont(&[mem, i32, i32, ret], "local");
        let fp = self.w.params(f);
        let rec = self.w.cont(&[], "rec");
        let done = self.w.cont(&[], "done");
        let zero = self.w.lit_i32(0);
        let more = self.w.cmp(CmpOp::Gt, fp[1], zero);
        let target = self.w.select(more, rec, done);
        self.w.set_body(f, target, &[]);
        let one = self.w.lit_i32(1);
        let k1 = self.w.arith(ArithOp::Sub, fp[1], one);
        // `(acc + c) - d`: the function captures `c` and `d`, two values.
        let acc_c = self.w.arith(ArithOp::Add, fp[2], c);
        let acc = self.w.arith(ArithOp::Sub, acc_c, d);
        self.w.set_body(rec, f, &[fp[0], k1, acc, fp[3]]);
        let fl = self.w.conv(self.f64, fp[2]);
        self.w.set_body(done, fp[3], &[fp[0], fp[2], fl]);
        let three = self.w.lit_i32(3);
        let two = self.w.lit_i32(2);
        let r1 = self.w.cont(&[self.mem, self.i32, self.f64], "ret");
        let k = self.w.arith(ArithOp::And, a, three);
        self.w.set_body(cur.cont, f, &[cur.mem, k, c, r1]);
        let r1p = self.w.params(r1);
        let r2 = self.w.cont(&[self.mem, self.i32, self.f64], "ret");
        let a2 = self.w.arith(ArithOp::Shr, a, two);
        let k2 = self.w.arith(ArithOp::And, a2, three);
        self.w.set_body(r1, f, &[r1p[0], k2, r1p[1], r2]);
        self.continue_at(cur, p, r2);
    }

    /// Goes on in `k(mem, i32, f64)`, whose int and float become available.
    fn continue_at(&mut self, cur: &mut Cursor, p: &mut Pools, k: Def) {
        let ps = self.w.params(k);
        *cur = Cursor {
            cont: k,
            mem: ps[0],
        };
        p.ints.push(ps[1]);
        p.floats.push(ps[2]);
    }

    /// A closed function `fn(mem, i32, ret)` whose body runs `stmts`.
    fn function(&mut self, stmts: &[Stmt]) -> Def {
        let f = self.w.cont(&[self.mem, self.i32, self.ret], "fun");
        let ps = self.w.params(f);
        let fl = self.w.conv(self.f64, ps[1]);
        let t = self.w.lit_bool(true);
        let mut pools = Pools {
            ints: vec![ps[1]],
            floats: vec![fl],
            bools: vec![t],
            slots: Vec::new(),
        };
        let mut cur = Cursor {
            cont: f,
            mem: ps[0],
        };
        self.block(&mut cur, &mut pools, stmts);
        let (ri, rf) = pools.last();
        self.w.set_body(cur.cont, ps[2], &[cur.mem, ri, rf]);
        f
    }

    /// `apply(mem, f, x, ret)`: calls `f(mem, x, ret)`.
    fn apply(&mut self) -> Def {
        if let Some(a) = self.apply {
            return a;
        }
        let a = self
            .w
            .cont(&[self.mem, self.fun, self.i32, self.ret], "apply");
        let ps = self.w.params(a);
        self.w.set_body(a, ps[1], &[ps[0], ps[2], ps[3]]);
        self.apply = Some(a);
        a
    }
}

impl Recipe {
    /// Builds the program: a new world and its entry `@main`.
    pub fn build(&self) -> (World, Def) {
        let mut w = World::new();
        let (i32, f64, mem) = (w.ty_int(32, true), w.ty_float(64), w.ty_mem());
        let ret = w.ty_cont(&[mem, i32, f64]);
        let fun = w.ty_cont(&[mem, i32, ret]);
        let mut b = Builder {
            w,
            i32,
            f64,
            mem,
            ret,
            fun,
            apply: None,
        };
        let main = b.w.cont(&[mem, i32, i32, f64, ret], "main");
        b.w.make_external(main);
        let ps = b.w.params(main);
        let t = b.w.lit_bool(true);
        let c = b.w.cmp(CmpOp::Lt, ps[1], ps[2]);
        let mut pools = Pools {
            ints: vec![ps[1], ps[2]],
            floats: vec![ps[3]],
            bools: vec![t, c],
            slots: Vec::new(),
        };
        let mut cur = Cursor {
            cont: main,
            mem: ps[0],
        };
        b.block(&mut cur, &mut pools, &self.stmts);
        // Results depend on every int and every float still available.
        let mut ri = pools.ints[0];
        for &i in &pools.ints[1..] {
            ri = b.w.arith(ArithOp::Xor, ri, i);
        }
        let mut rf = pools.floats[0];
        for &f in &pools.floats[1..] {
            rf = b.w.arith(ArithOp::Add, rf, f);
        }
        b.w.set_body(cur.cont, ps[4], &[cur.mem, ri, rf]);
        (b.w, main)
    }

    /// Runs a built program in the interpreter: `(int result, float result bits)`.
    pub fn run(w: &World, entry: Def, a: i32, b: i32, x: f64) -> Result<(i32, u64), InterpError> {
        let args = [
            Value::Bits(a as u32 as u64),
            Value::Bits(b as u32 as u64),
            Value::Bits(x.to_bits()),
        ];
        let out = interp::run_main(w, entry, &args, Limits::default(), &mut Vec::new())?;
        match out.as_slice() {
            [(_, Value::Bits(i)), (_, Value::Bits(f))] => Ok((*i as u32 as i32, *f)),
            _ => Err(InterpError {
                at: "@main".into(),
                message: "unexpected results".into(),
                loc: None,
                expanded_from: Vec::new(),
                program_place: None,
                related: None,
            }),
        }
    }
}

/// A random expression over every primitive type, for testing normalization. It is built
/// at a requested type; operations that do not apply to that type are replaced by ones that
/// do, so every expression builds.
#[derive(Clone, Debug)]
pub enum Expr {
    /// A literal (bits, masked to the type).
    Lit(u64),
    /// One of the two parameters of the type.
    Var(bool),
    /// An arithmetic operation.
    Arith(ArithOp, Box<Expr>, Box<Expr>),
    /// A comparison at primitive type number `.1` (a `bool` result).
    Cmp(CmpOp, u8, Box<Expr>, Box<Expr>),
    /// `select(cond, a, b)`.
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
    /// A conversion from primitive type number `.0`.
    Conv(u8, Box<Expr>),
    /// A bitcast from another type of the same width (see [`bitcast_source`]; a float NaN
    /// is made [`canonical_nan`] first); none for `bool`.
    Bitcast(Box<Expr>),
    /// `extract(insert(tuple(a, b), i, v), j)`.
    Tuple(Box<Expr>, Box<Expr>, Box<Expr>, bool, bool),
    /// `known(e)` of an expression at primitive type number `.0` (a `bool` result); only
    /// built when `e` is a literal or a parameter.
    Known(u8, Box<Expr>),
    /// A byte of a byte string (of at least one byte) at an index: `conv(extract(b"..",
    /// rem(e, n)))`, `e` an expression of type `u64` and `n` the string's length.
    Byte(Vec<u8>, Box<Expr>),
}

/// The primitive types expressions range over, by number: every primitive type of the IR,
/// grouped by width so that [`bitcast_source`] can pick a partner of the same width.
pub const EXPR_TYPES: [&str; 12] = [
    "bool", "i8", "u8", "i16", "u16", "f16", "i32", "u32", "f32", "i64", "u64", "f64",
];

/// The number of arguments an [`ExprProgram`] takes: two of each type.
pub const EXPR_ARGS: usize = 2 * EXPR_TYPES.len();

const NUM_TYPES: u8 = EXPR_TYPES.len() as u8;

/// The numbers of `u8` and `u64` in [`EXPR_TYPES`].
const U8: usize = 2;
const U64: usize = 10;

/// The bits of the positive quiet NaN of type number `t`, if it is a float type.
pub fn canonical_nan(t: usize) -> Option<u64> {
    match EXPR_TYPES[t] {
        "f16" => Some(0x7e00),
        "f32" => Some(0x7fc0_0000),
        "f64" => Some(0x7ff8_0000_0000_0000),
        _ => None,
    }
}

/// The type number a bitcast to type number `t` starts from: the next type of the same
/// width (`i8 <- u8 <- i8`, `i16 <- u16 <- f16 <- i16`, ...); `bool` has none.
pub fn bitcast_source(t: usize) -> usize {
    match t {
        0 => 0,
        1 => 2,
        2 => 1,
        _ => {
            let group = (t - 3) / 3;
            3 + group * 3 + (t - 3 + 1) % 3
        }
    }
}

/// Random expressions.
pub fn expr() -> impl Strategy<Value = Expr> {
    let lit = prop_oneof![
        Just(0u64),
        Just(1),
        Just(u64::MAX),
        Just(2),
        any::<u64>(),
        // Float bit patterns of 1.0, -0.0, NaN and infinities in f32 and f64.
        Just(0x3f80_0000),
        Just(0x3ff0_0000_0000_0000),
        Just(0x8000_0000_0000_0000),
        Just(0x7fc0_0000),
        Just(0x7ff0_0000_0000_0000),
    ];
    let leaf = prop_oneof![lit.prop_map(Expr::Lit), any::<bool>().prop_map(Expr::Var)];
    leaf.prop_recursive(5, 64, 5, |e| {
        let b = move || e.clone().prop_map(Box::new);
        prop_oneof![
            3 => (prop::sample::select(ArithOp::ALL.to_vec()), b(), b()).prop_map(|(o, x, y)| Expr::Arith(o, x, y)),
            1 => (prop::sample::select(CmpOp::ALL.to_vec()), 0u8..NUM_TYPES, b(), b()).prop_map(|(o, t, x, y)| Expr::Cmp(o, t, x, y)),
            1 => (b(), b(), b()).prop_map(|(c, x, y)| Expr::Select(c, x, y)),
            1 => (0u8..NUM_TYPES, b()).prop_map(|(t, x)| Expr::Conv(t, x)),
            1 => b().prop_map(Expr::Bitcast),
            1 => (b(), b(), b(), any::<bool>(), any::<bool>()).prop_map(|(x, y, v, i, j)| Expr::Tuple(x, y, v, i, j)),
            1 => (0u8..NUM_TYPES, b()).prop_map(|(t, x)| Expr::Known(t, x)),
            1 => (prop::collection::vec(any::<u8>(), 1..8), b()).prop_map(|(s, x)| Expr::Byte(s, x)),
        ]
    })
}

/// A world with `@main(mem, <two parameters of each primitive type>, ret: cn(mem, T))`
/// whose body returns an expression of type `T`; made by [`ExprProgram::new`].
pub struct ExprProgram {
    /// The world.
    pub world: World,
    /// `@main`.
    pub entry: Def,
    /// The expression's def.
    pub root: Def,
    types: Vec<Type>,
    params: Vec<[Def; 2]>,
}

impl ExprProgram {
    /// A program for expressions of primitive type number `ty` (see [`EXPR_TYPES`]).
    pub fn new(ty: u8, normalize: bool) -> ExprProgram {
        let mut w = World::new();
        w.set_normalize(normalize);
        let types: Vec<Type> = EXPR_TYPES
            .iter()
            .map(
                |n| match Prim::from_name(n).expect("a primitive type name") {
                    Prim::Bool => w.ty_bool(),
                    Prim::Int { bits, signed } => w.ty_int(bits, signed),
                    Prim::Float { bits } => w.ty_float(bits),
                },
            )
            .collect();
        let mem = w.ty_mem();
        let ret = w.ty_cont(&[mem, types[ty as usize % EXPR_TYPES.len()]]);
        let mut ptys = vec![mem];
        for &t in &types {
            ptys.extend([t, t]);
        }
        ptys.push(ret);
        let entry = w.cont(&ptys, "main");
        w.make_external(entry);
        let ps = w.params(entry);
        let params = (0..types.len())
            .map(|i| [ps[1 + 2 * i], ps[2 + 2 * i]])
            .collect();
        let root = w.lit_bool(false);
        ExprProgram {
            world: w,
            entry,
            root,
            types,
            params,
        }
    }

    /// Builds `e` at primitive type number `ty` and makes it the program's result if `ty` is
    /// the program's type.
    pub fn build(&mut self, e: &Expr, ty: u8) -> Def {
        let d = self.expr(e, ty as usize % EXPR_TYPES.len());
        let ret_ty = self
            .world
            .types()
            .cont_params(self.world.type_of(self.entry))
            .map(|p| p[p.len() - 1]);
        let last = self.world.num_params(self.entry) - 1;
        if ret_ty.and_then(|r| self.world.types().cont_params(r).map(|p| p[1]))
            == Some(self.world.type_of(d))
        {
            let (m, r) = (
                self.world.param(self.entry, 0),
                self.world.param(self.entry, last),
            );
            self.world.set_body(self.entry, r, &[m, d]);
            self.root = d;
        }
        d
    }

    fn expr(&mut self, e: &Expr, t: usize) -> Def {
        let ty = self.types[t];
        let is_float = EXPR_TYPES[t].starts_with('f');
        let w = &mut self.world;
        match e {
            Expr::Lit(v) => w.lit(ty, *v),
            Expr::Var(second) => self.params[t][*second as usize],
            Expr::Arith(op, a, b) => {
                let op = match (t, is_float) {
                    (0, _) if !op.is_bool_op() => ArithOp::Xor,
                    (_, true) if !op.is_float_op() => ArithOp::Sub,
                    _ => *op,
                };
                let (x, y) = (self.expr(a, t), self.expr(b, t));
                self.world.build(crate::Node::Arith(op), ty, &[x, y])
            }
            Expr::Cmp(op, u, a, b) if t == 0 => {
                let u = *u as usize % EXPR_TYPES.len();
                let (x, y) = (self.expr(a, u), self.expr(b, u));
                let bt = self.types[0];
                self.world.build(crate::Node::Cmp(*op), bt, &[x, y])
            }
            // `known` may turn from false to true as the program is simplified, so only
            // leaves, whose answer cannot change, are asked.
            Expr::Known(u, a) if t == 0 && matches!(**a, Expr::Lit(_) | Expr::Var(_)) => {
                let x = self.expr(a, *u as usize % EXPR_TYPES.len());
                let bt = self.types[0];
                self.world.build(crate::Node::Known, bt, &[x])
            }
            Expr::Cmp(_, _, a, _) | Expr::Known(_, a) => self.expr(a, t),
            Expr::Select(c, a, b) => {
                let (c, x, y) = (self.expr(c, 0), self.expr(a, t), self.expr(b, t));
                self.world.build(crate::Node::Select, ty, &[c, x, y])
            }
            Expr::Conv(u, a) => {
                let x = self.expr(a, *u as usize % EXPR_TYPES.len());
                self.world.build(crate::Node::Conv, ty, &[x])
            }
            Expr::Bitcast(a) => {
                if t == 0 {
                    return self.expr(a, 0);
                }
                let from = bitcast_source(t);
                let mut x = self.expr(a, from);
                if let Some(nan) = canonical_nan(from) {
                    // The sign and payload of a NaN an operation makes are not specified
                    // (the hardware and LLVM's folding differ): a NaN is made canonical
                    // before its bits are seen as an integer.
                    let (bt, ft) = (self.types[0], self.types[from]);
                    let is_nan = self.world.build(crate::Node::Cmp(CmpOp::Ne), bt, &[x, x]);
                    let canon = self.world.lit(ft, nan);
                    x = self
                        .world
                        .build(crate::Node::Select, ft, &[is_nan, canon, x]);
                }
                self.world.build(crate::Node::Bitcast, ty, &[x])
            }
            Expr::Tuple(a, b, v, i, j) => {
                let (x, y, v) = (self.expr(a, t), self.expr(b, t), self.expr(v, t));
                let tt = self.world.ty_tuple(&[ty, ty]);
                let i64 = self.world.ty_int(64, true);
                let (li, lj) = (
                    self.world.lit(i64, *i as u64),
                    self.world.lit(i64, *j as u64),
                );
                let tup = self.world.build(crate::Node::Tuple, tt, &[x, y]);
                let ins = self.world.build(crate::Node::Insert, tt, &[tup, li, v]);
                self.world.build(crate::Node::Extract, ty, &[ins, lj])
            }
            Expr::Byte(bytes, a) => {
                let (u8t, u64t) = (self.types[U8], self.types[U64]);
                let i = self.expr(a, U64);
                let n = self.world.lit(u64t, bytes.len() as u64);
                let at = (self.world).build(crate::Node::Arith(ArithOp::Rem), u64t, &[i, n]);
                let s = self.world.bytes(bytes);
                let b = self.world.build(crate::Node::Extract, u8t, &[s, at]);
                if t == U8 {
                    b
                } else {
                    self.world.build(crate::Node::Conv, ty, &[b])
                }
            }
        }
    }

    /// Runs the program with parameter values `args` (two per primitive type, as bits).
    pub fn run(&self, args: &[u64]) -> Result<u64, InterpError> {
        let vals: Vec<Value> = self
            .types
            .iter()
            .enumerate()
            .flat_map(|(i, &t)| {
                let bits = self.world.types().prim_bits(t).unwrap_or(64);
                [0, 1].map(|k| {
                    Value::Bits(crate::semantics::mask(
                        bits,
                        args[(2 * i + k) % args.len().max(1)],
                    ))
                })
            })
            .collect();
        let out = interp::run_main(
            &self.world,
            self.entry,
            &vals,
            Limits::default(),
            &mut Vec::new(),
        )?;
        match out.as_slice() {
            [(_, Value::Bits(v))] => Ok(*v),
            _ => Err(InterpError {
                at: "@main".into(),
                message: "unexpected result".into(),
                loc: None,
                expanded_from: Vec::new(),
                program_place: None,
                related: None,
            }),
        }
    }
}
