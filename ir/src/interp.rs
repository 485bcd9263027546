//! The reference interpreter: runs any verified world, higher-order code included.
//!
//! Values of continuations are closures: a continuation together with the parameters of
//! enclosing continuations that it uses ([`FreeParams`]). Effects are ordered by the `mem`
//! token, which the interpreter checks: every effect must consume the newest token, so a
//! program whose effects are not totally ordered by `mem` is an error, not a silent choice.
//! Memory is a set of blocks holding typed values; every access is bounds-checked, and
//! reading memory that was never written is an error. A fuel limit bounds the number of
//! jumps. Errors are values ([`InterpError`]) and never panics.

use crate::analysis::free::FreeParams;
use crate::def::{Def, Node};
use crate::semantics::{self, Prim, Trap};
use crate::text::Layout;
use crate::types::{Type, TypeKind};
use crate::world::World;
use rustc_hash::FxHashMap;
use std::fmt;
use std::rc::Rc;

/// A run-time value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A `bool`, integer or float, as raw bits.
    Bits(u64),
    /// A `mem` token; the number orders effects.
    Mem(u64),
    /// A pointer into a memory block.
    Ptr(Pointer),
    /// A tuple, struct or definite array.
    Agg(Rc<Vec<Value>>),
    /// A continuation with the parameters it captured.
    Closure(Rc<Closure>),
    /// The continuation that ends the run with its arguments.
    Exit,
    /// Undefined: bottom, or memory never written.
    Undef,
}

/// A pointer: a memory block and a path of indices into the block's value.
#[derive(Clone, Debug, PartialEq)]
pub struct Pointer {
    block: u32,
    path: Rc<[u64]>,
}

/// A continuation value.
#[derive(Debug)]
pub struct Closure {
    cont: Def,
    env: Env,
}

impl PartialEq for Closure {
    fn eq(&self, other: &Self) -> bool {
        self.cont == other.cont
            && self.env.len() == other.env.len()
            && self
                .env
                .iter()
                .zip(other.env.iter())
                .all(|(a, b)| Rc::ptr_eq(a, b))
    }
}

/// One run of a continuation: its arguments and the values computed from them.
///
/// A def's value belongs to the frame of the most recently started continuation whose
/// parameters it depends on, and is computed once per such frame: a load placed in a
/// continuation is not repeated when a continuation it jumps to uses its result.
#[derive(Debug)]
struct Frame {
    cont: Def,
    args: Rc<[Value]>,
    memo: std::cell::RefCell<FxHashMap<Def, Value>>,
}

/// Bound parameters: the frames of the enclosing continuations, outermost first.
type Env = Rc<Vec<Rc<Frame>>>;

/// Why a run failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterpError {
    /// The def being evaluated, named as in the text form.
    pub at: String,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for InterpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.message)
    }
}

impl std::error::Error for InterpError {}

/// Bounds on a run.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Maximum number of jumps.
    pub fuel: u64,
    /// Maximum number of scalar cells in one allocation (a slot or an `alloc`).
    pub max_alloc: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            fuel: 100_000_000,
            max_alloc: 1 << 26,
        }
    }
}

struct Block {
    value: Value,
    writable: bool,
    /// How the block was made, and whether `release` freed it.
    state: BlockState,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum BlockState {
    /// A slot, a global or the program's arguments: never released.
    Fixed,
    /// Memory from the runtime's `alloc`, not yet released.
    Heap,
    /// Memory from `alloc` after its `release`.
    Released,
}

/// An error before it is named: the def and the message.
type Fail = (Def, String);

struct Interp<'w, 'o> {
    w: &'w World,
    free: FreeParams,
    blocks: Vec<Block>,
    globals: FxHashMap<Def, Pointer>,
    /// Values of defs that depend on no parameter.
    constants: FxHashMap<Def, Value>,
    mem: u64,
    limits: Limits,
    /// The random generator's state (SplitMix64, as the runtime's).
    rng: u64,
    /// What the program printed.
    out: &'o mut Vec<u8>,
}

/// Runs `entry` with `args` (one value per parameter, `Value::Exit` for the continuation
/// that receives the results) and returns the arguments passed to `Value::Exit`. What the
/// program prints through the runtime's imports (see [`call_import`]) is appended to `out`.
pub fn run(
    w: &World,
    entry: Def,
    args: Vec<Value>,
    limits: Limits,
    out: &mut Vec<u8>,
) -> Result<Vec<Value>, InterpError> {
    let mut it = Interp::new(w, limits, out);
    it.run(entry, args).map_err(|f| named(w, f))
}

/// An error with its def named as in the text form.
fn named(w: &World, (d, message): Fail) -> InterpError {
    let layout = Layout::compute(w);
    let at = match w.node(d) {
        Node::Lit(_) | Node::Bottom | Node::Launch => crate::text::print_def(w, &layout, d),
        _ => layout.name(d).unwrap_or("?").to_string(),
    };
    InterpError { at, message }
}

impl<'w, 'o> Interp<'w, 'o> {
    fn new(w: &'w World, limits: Limits, out: &'o mut Vec<u8>) -> Self {
        Interp {
            out,
            w,
            free: FreeParams::compute(w),
            blocks: Vec::new(),
            globals: FxHashMap::default(),
            constants: FxHashMap::default(),
            mem: 0,
            limits,
            rng: 0x853c_49e6_748f_ea9b,
        }
    }
}

/// Runs a program's entry the way a C `main` is called: `entry` takes `mem`, then either
/// nothing or `argc` (an `i32`) and `argv` (a pointer to an array of pointers to
/// zero-terminated byte strings), then the return continuation. `args` become `argv`
/// (the program name first). Returns the results passed to the return continuation,
/// without the `mem` token.
pub fn run_with_argv(
    w: &World,
    entry: Def,
    args: &[Vec<u8>],
    limits: Limits,
    out: &mut Vec<u8>,
) -> Result<Vec<Value>, InterpError> {
    let mut it = Interp::new(w, limits, out);
    let nparams = w
        .types()
        .cont_params(w.type_of(entry))
        .map_or(0, |p| p.len());
    let mut vals = vec![Value::Mem(0)];
    if nparams == 4 {
        let mut ptrs = Vec::new();
        for a in args {
            let mut cells: Vec<Value> = a.iter().map(|&b| Value::Bits(b as u64)).collect();
            cells.push(Value::Bits(0));
            ptrs.push(Value::Ptr(it.new_block(Value::Agg(Rc::new(cells)), true)));
        }
        let argv = it.new_block(Value::Agg(Rc::new(ptrs)), true);
        vals.push(Value::Bits(args.len() as u64));
        vals.push(Value::Ptr(argv));
    }
    vals.push(Value::Exit);
    let results = it.run(entry, vals).map_err(|f| named(w, f))?;
    Ok(results
        .into_iter()
        .filter(|v| !matches!(v, Value::Mem(_)))
        .collect())
}

/// Runs `entry` the way `durin ir --run` does: `mem` parameters get a fresh token, a final
/// continuation parameter receives the results, and `args` fill the other parameters in
/// order. Returns the results without their `mem` tokens, each with its type.
pub fn run_main(
    w: &World,
    entry: Def,
    args: &[Value],
    limits: Limits,
    out: &mut Vec<u8>,
) -> Result<Vec<(Type, Value)>, InterpError> {
    let err = |m: String| InterpError {
        at: Layout::compute(w).name(entry).unwrap_or("?").into(),
        message: m,
    };
    let ptys = w
        .types()
        .cont_params(w.type_of(entry))
        .ok_or_else(|| err("not a continuation".into()))?;
    let ret_tys: &[Type] = match ptys.last().and_then(|&t| w.types().cont_params(t)) {
        Some(r) => r,
        None => {
            return Err(err(
                "the entry's last parameter must be a return continuation".into(),
            ))
        }
    };
    let mut user = args.iter();
    let mut vals = Vec::new();
    for &t in &ptys[..ptys.len() - 1] {
        if w.types().is_mem(t) {
            vals.push(Value::Mem(0));
        } else {
            vals.push(user.next().cloned().ok_or_else(|| {
                err(format!(
                    "expected {} argument(s), found {}",
                    value_params(w, ptys),
                    args.len()
                ))
            })?);
        }
    }
    if user.next().is_some() {
        return Err(err(format!(
            "expected {} argument(s), found {}",
            value_params(w, ptys),
            args.len()
        )));
    }
    vals.push(Value::Exit);
    let results = run(w, entry, vals, limits, out)?;
    Ok(ret_tys
        .iter()
        .copied()
        .zip(results)
        .filter(|(t, _)| !w.types().is_mem(*t))
        .collect())
}

fn value_params(w: &World, ptys: &[Type]) -> usize {
    ptys[..ptys.len() - 1]
        .iter()
        .filter(|&&t| !w.types().is_mem(t))
        .count()
}

/// How many scalar cells a value of `ty` takes (saturating), to bound allocations.
fn cells(w: &World, ty: Type, depth: u32) -> u64 {
    if depth > 64 {
        return u64::MAX;
    }
    match w.kind(ty) {
        TypeKind::Array { elem, len: Some(n) } => n.saturating_mul(cells(w, *elem, depth + 1)),
        TypeKind::Tuple(_) | TypeKind::Struct(_) => w
            .types()
            .components(ty)
            .unwrap_or_default()
            .iter()
            .fold(0u64, |acc, &c| acc.saturating_add(cells(w, c, depth + 1))),
        _ => 1,
    }
}

/// The value of `count` undefined `ty`s, with aggregates expanded so that parts can be
/// written; an error if that exceeds the allocation limit.
fn undef_values(w: &World, ty: Type, count: u64, limits: &Limits) -> Result<Vec<Value>, String> {
    let total = cells(w, ty, 0).saturating_mul(count);
    if total > limits.max_alloc {
        return Err(format!(
            "allocation of {total} cells exceeds the interpreter's limit of {}",
            limits.max_alloc
        ));
    }
    let one = undef_of(w, ty);
    Ok(vec![one; count as usize])
}

fn undef_of(w: &World, ty: Type) -> Value {
    match w.kind(ty) {
        TypeKind::Tuple(_) | TypeKind::Struct(_) | TypeKind::Array { len: Some(_), .. } => {
            let comps = w.types().components(ty).unwrap_or_default();
            Value::Agg(Rc::new(comps.iter().map(|&c| undef_of(w, c)).collect()))
        }
        _ => Value::Undef,
    }
}

impl Interp<'_, '_> {
    fn run(&mut self, entry: Def, args: Vec<Value>) -> Result<Vec<Value>, Fail> {
        let target = Value::Closure(Rc::new(Closure {
            cont: entry,
            env: Rc::new(Vec::new()),
        }));
        self.run_from(target, args, entry)
    }

    /// Jumps to `target` with `args` and runs until the exit continuation is called.
    fn run_from(&mut self, target: Value, args: Vec<Value>, at: Def) -> Result<Vec<Value>, Fail> {
        let mut target = target;
        let mut args = args;
        let mut fuel = self.limits.fuel;
        let mut at = at;
        loop {
            let clo = match target {
                Value::Exit => return Ok(args),
                Value::Closure(c) => c,
                Value::Undef => {
                    return Err((at, "jump to an undefined continuation (bottom)".into()))
                }
                _ => return Err((at, "jump to a value that is not a continuation".into())),
            };
            if fuel == 0 {
                return Err((
                    at,
                    format!("fuel exhausted after {} jumps", self.limits.fuel),
                ));
            }
            fuel -= 1;
            let k = clo.cont;
            at = k;
            let Some((callee, cargs)) = self.w.body(k) else {
                // An import: `cn(mem, args.., cn(mem, results..))`.
                let (ret, inner) = match args.split_last() {
                    Some((r, rest)) if rest.first().is_some_and(|m| matches!(m, Value::Mem(_))) => {
                        (r.clone(), rest[1..].to_vec())
                    }
                    _ => {
                        return Err((
                            k,
                            "continuation has no body and is not a runtime import".into(),
                        ))
                    }
                };
                self.consume_mem(&args[0]).map_err(|m| (k, m))?;
                let name = self.w.name(k).unwrap_or("");
                let results = self.call_import(name, &inner, k).map_err(|m| (k, m))?;
                // The newest token: the import may have run code with effects.
                let mem = Value::Mem(self.mem);
                target = ret;
                args = std::iter::once(mem).chain(results).collect();
                continue;
            };
            let mut env: Vec<Rc<Frame>> = (*clo.env).clone();
            env.push(Rc::new(Frame {
                cont: k,
                args: args.into(),
                memo: Default::default(),
            }));
            let env = Rc::new(env);
            target = self.eval(callee, &env)?;
            args = cargs
                .iter()
                .map(|&a| self.eval(a, &env))
                .collect::<Result<_, _>>()?;
        }
    }

    /// Evaluates `root` (and what it needs, operands first) without recursion.
    fn eval(&mut self, root: Def, env: &Env) -> Result<Value, Fail> {
        let w = self.w;
        // This call's values, each with the index of the frame it belongs to (`None`:
        // depends on no frame).
        let mut local: FxHashMap<Def, (Value, Option<usize>)> = FxHashMap::default();
        let mut stack = vec![(root, false)];
        while let Some((d, expanded)) = stack.pop() {
            if local.contains_key(&d) {
                continue;
            }
            if let Some(found) = self.lookup(d, env) {
                local.insert(d, found);
                continue;
            }
            let node = w.node(d);
            let leaf = matches!(
                node,
                Node::Lit(_) | Node::Bottom | Node::Launch | Node::Param(_)
            ) || node.is_nominal();
            if !leaf && !expanded {
                stack.push((d, true));
                stack.extend(
                    w.ops(d)
                        .iter()
                        .filter(|o| !local.contains_key(*o))
                        .map(|&o| (o, false)),
                );
                continue;
            }
            let level = match node {
                Node::Param(_) => env.iter().rposition(|f| f.cont == w.ops(d)[0]),
                // A closure belongs with the newest frame it captures.
                Node::Cont => {
                    let owners = self.free.owners(d);
                    env.iter().rposition(|f| owners.contains(&f.cont))
                }
                _ if leaf => None,
                _ => w.ops(d).iter().filter_map(|o| local[o].1).max(),
            };
            let v = self.compute(d, env, &local).map_err(|m| (d, m))?;
            match level {
                // A closure captures frames; keeping it in a frame's memo would make a
                // reference cycle that is never freed, so closures are rebuilt instead.
                // Effects are the exception: a load must not run twice, so a loaded
                // closure is kept (and its frame may then outlive the run's need of it).
                Some(_) if holds_closure(&v) && !node.is_effect() => {}
                Some(i) => {
                    env[i].memo.borrow_mut().insert(d, v.clone());
                }
                None if !leaf && !node.is_effect() => {
                    self.constants.insert(d, v.clone());
                }
                None => {}
            }
            local.insert(d, (v, level));
        }
        Ok(local.remove(&root).map(|(v, _)| v).unwrap_or(Value::Undef))
    }

    /// A value computed before, in a frame of `env` or as a constant.
    fn lookup(&self, d: Def, env: &Env) -> Option<(Value, Option<usize>)> {
        if !self.w.has_params(d) {
            return self.constants.get(&d).map(|v| (v.clone(), None));
        }
        env.iter()
            .enumerate()
            .rev()
            .find_map(|(i, f)| f.memo.borrow().get(&d).map(|v| (v.clone(), Some(i))))
    }

    fn bits(&self, v: &Value) -> Result<u64, String> {
        match v {
            Value::Bits(b) => Ok(*b),
            Value::Undef => Err("operation on an undefined value".into()),
            _ => Err("operation on a value that is not a number".into()),
        }
    }

    fn prim(&self, t: Type) -> Result<Prim, String> {
        Prim::of(self.w.kind(t)).ok_or_else(|| "operation on a value that is not a number".into())
    }

    fn consume_mem(&mut self, v: &Value) -> Result<Value, String> {
        match v {
            Value::Mem(m) if *m == self.mem => {
                self.mem += 1;
                Ok(Value::Mem(self.mem))
            }
            Value::Mem(_) => {
                Err("effect on a stale mem token (effects must be ordered by mem)".into())
            }
            _ => Err("mem operand is not a mem token".into()),
        }
    }

    fn index(&self, v: &Value) -> Result<u64, String> {
        self.bits(v)
    }

    fn compute(
        &mut self,
        d: Def,
        env: &Env,
        local: &FxHashMap<Def, (Value, Option<usize>)>,
    ) -> Result<Value, String> {
        let w = self.w;
        let ops = w.ops(d);
        let op = |i: usize| &local[&ops[i]].0;
        let ty = w.type_of(d);
        Ok(match w.node(d) {
            Node::Lit(v) => Value::Bits(v),
            Node::Bottom => Value::Undef,
            Node::Launch => {
                return Err("a GPU kernel launch: the interpreter runs no kernels (run the program natively, or use a CPU mapping)".into())
            }
            Node::Param(i) => {
                let owner = ops[0];
                let frame = env.iter().rev().find(|f| f.cont == owner).ok_or_else(|| {
                    "parameter used outside the run of its continuation".to_string()
                })?;
                frame.args[i as usize].clone()
            }
            Node::Cont => {
                let owners = self.free.owners(d);
                let captured = env
                    .iter()
                    .filter(|f| owners.contains(&f.cont))
                    .cloned()
                    .collect();
                Value::Closure(Rc::new(Closure {
                    cont: d,
                    env: Rc::new(captured),
                }))
            }
            Node::Global { mutable } => self.global(d, mutable)?,
            Node::Arith(o) => {
                let p = self.prim(ty)?;
                let (a, b) = (self.bits(op(0))?, self.bits(op(1))?);
                match semantics::arith(o, p, a, b) {
                    Ok(v) => Value::Bits(v),
                    Err(Trap::DivisionByZero) => return Err("integer division by zero".into()),
                }
            }
            Node::Cmp(o) => {
                let p = self.prim(w.type_of(ops[0]))?;
                let (a, b) = (self.bits(op(0))?, self.bits(op(1))?);
                Value::Bits(semantics::cmp(o, p, a, b) as u64)
            }
            Node::Select => {
                if self.bits(op(0))? & 1 == 1 {
                    op(1).clone()
                } else {
                    op(2).clone()
                }
            }
            Node::Conv => {
                let (from, to) = (self.prim(w.type_of(ops[0]))?, self.prim(ty)?);
                Value::Bits(semantics::conv(from, to, self.bits(op(0))?))
            }
            Node::Bitcast => match op(0) {
                Value::Undef => Value::Undef,
                v => v.clone(),
            },
            Node::Tuple | Node::Struct | Node::Array => {
                Value::Agg(Rc::new((0..ops.len()).map(|i| op(i).clone()).collect()))
            }
            Node::Extract => {
                let i = self.index(op(1))?;
                match op(0) {
                    Value::Agg(elems) => elems.get(i as usize).cloned().ok_or_else(|| {
                        format!("index {i} out of bounds for {} components", elems.len())
                    })?,
                    Value::Undef => Value::Undef,
                    _ => return Err("extract from a value that is not an aggregate".into()),
                }
            }
            Node::Insert => {
                let i = self.index(op(1))?;
                let mut agg = match op(0) {
                    Value::Agg(e) => e.clone(),
                    Value::Undef => match undef_values(w, ty, 1, &self.limits)?.swap_remove(0) {
                        Value::Agg(e) => e,
                        _ => return Err("insert into a value that is not an aggregate".into()),
                    },
                    _ => return Err("insert into a value that is not an aggregate".into()),
                };
                let n = agg.len();
                let slot = Rc::make_mut(&mut agg)
                    .get_mut(i as usize)
                    .ok_or_else(|| format!("index {i} out of bounds for {n} components"))?;
                *slot = op(2).clone();
                Value::Agg(agg)
            }
            Node::Lea => {
                let Value::Ptr(p) = op(0) else {
                    return Err("address computation on a value that is not a pointer".into());
                };
                let i = self.index(op(1))?;
                let mut path = p.path.to_vec();
                path.push(i);
                Value::Ptr(Pointer {
                    block: p.block,
                    path: path.into(),
                })
            }
            Node::Slot | Node::Alloc => {
                let m = self.consume_mem(op(0))?;
                let TypeKind::Tuple(ts) = w.kind(ty) else {
                    return Err("ill-typed allocation".into());
                };
                let TypeKind::Ptr { pointee, .. } = *w.kind(ts[1]) else {
                    return Err("ill-typed allocation".into());
                };
                let value = if w.node(d) == Node::Slot {
                    undef_values(w, pointee, 1, &self.limits)?.swap_remove(0)
                } else {
                    let TypeKind::Array { elem, .. } = *w.kind(pointee) else {
                        return Err("ill-typed allocation".into());
                    };
                    let n = self.index(op(1))?;
                    let n =
                        semantics::sext(w.types().prim_bits(w.type_of(ops[1])).unwrap_or(64), n);
                    if n < 0 {
                        return Err(format!("allocation of {n} elements"));
                    }
                    Value::Agg(Rc::new(undef_values(w, elem, n as u64, &self.limits)?))
                };
                let p = self.new_block(value, true);
                Value::Agg(Rc::new(vec![m, Value::Ptr(p)]))
            }
            Node::Load => {
                let m = self.consume_mem(op(0))?;
                let p = self.pointer(op(1))?;
                let v = self.read(&p)?;
                if v == Value::Undef {
                    return Err("load of uninitialized memory".into());
                }
                Value::Agg(Rc::new(vec![m, v]))
            }
            Node::Store => {
                let m = self.consume_mem(op(0))?;
                let p = self.pointer(op(1))?;
                self.write(&p, op(2).clone())?;
                m
            }
            Node::Known => Value::Bits(!w.has_params(ops[0]) as u64),
            Node::Run | Node::Hlt => op(0).clone(),
        })
    }

    fn pointer(&self, v: &Value) -> Result<Pointer, String> {
        match v {
            Value::Ptr(p) => Ok(p.clone()),
            Value::Undef => Err("access through an undefined pointer".into()),
            _ => Err("access through a value that is not a pointer".into()),
        }
    }

    fn new_block(&mut self, value: Value, writable: bool) -> Pointer {
        self.blocks.push(Block {
            value,
            writable,
            state: BlockState::Fixed,
        });
        Pointer {
            block: self.blocks.len() as u32 - 1,
            path: Rc::new([]),
        }
    }

    fn global(&mut self, g: Def, mutable: bool) -> Result<Value, String> {
        if let Some(p) = self.globals.get(&g) {
            return Ok(Value::Ptr(p.clone()));
        }
        let init = self.w.ops(g)[0];
        let v = self.eval(init, &Rc::new(Vec::new())).map_err(|(_, m)| m)?;
        let p = self.new_block(v, mutable);
        self.globals.insert(g, p.clone());
        Ok(Value::Ptr(p))
    }

    fn read(&self, p: &Pointer) -> Result<Value, String> {
        let block = &self.blocks[p.block as usize];
        if block.state == BlockState::Released {
            return Err(USE_AFTER_RELEASE.into());
        }
        let mut v = &block.value;
        for &i in p.path.iter() {
            v = match v {
                Value::Agg(e) => e.get(i as usize).ok_or_else(|| out_of_bounds(i, e.len()))?,
                _ => return Err("pointer does not point into an aggregate".into()),
            };
        }
        Ok(v.clone())
    }

    fn write(&mut self, p: &Pointer, new: Value) -> Result<(), String> {
        let block = &mut self.blocks[p.block as usize];
        if block.state == BlockState::Released {
            return Err(USE_AFTER_RELEASE.into());
        }
        if !block.writable {
            return Err("store to an immutable global".into());
        }
        let mut v = &mut block.value;
        for &i in p.path.iter() {
            v = match v {
                Value::Agg(e) => {
                    let n = e.len();
                    Rc::make_mut(e)
                        .get_mut(i as usize)
                        .ok_or_else(|| out_of_bounds(i, n))?
                }
                _ => return Err("pointer does not point into an aggregate".into()),
            };
        }
        *v = new;
        Ok(())
    }
}

impl Interp<'_, '_> {
    /// The runtime functions a program may import, as AnyDSL's runtime provides them.
    fn call_import(&mut self, name: &str, args: &[Value], at: Def) -> Result<Vec<Value>, String> {
        let bits = |i: usize| match args.get(i) {
            Some(Value::Bits(b)) => Ok(*b),
            _ => Err(format!("`{name}` expects a number as argument {i}")),
        };
        let ptr = |i: usize| match args.get(i) {
            Some(Value::Ptr(p)) => Ok(p.clone()),
            _ => Err(format!("`{name}` expects a pointer as argument {i}")),
        };
        // AnyDSL's runtime names its C functions `anydsl_*`.
        let short = name.strip_prefix("anydsl_").unwrap_or(name);
        if let Some(r) = math(short, args) {
            return r.map(|v| vec![Value::Bits(v)]);
        }
        match short {
            "print_i16" => self.out.extend_from_slice((bits(0)? as u16 as i16).to_string().as_bytes()),
            "print_u16" => self.out.extend_from_slice((bits(0)? as u16).to_string().as_bytes()),
            "print_i32" => self.out.extend_from_slice((bits(0)? as u32 as i32).to_string().as_bytes()),
            "print_i64" => self.out.extend_from_slice((bits(0)? as i64).to_string().as_bytes()),
            "print_u32" => self.out.extend_from_slice((bits(0)? as u32).to_string().as_bytes()),
            "print_u64" => self.out.extend_from_slice(bits(0)?.to_string().as_bytes()),
            "print_f32" => {
                let x = f32::from_bits(bits(0)? as u32) as f64;
                self.out.extend_from_slice(format_general(x, 6).as_bytes())
            }
            "print_f64" => self.out.extend_from_slice(format_general(f64::from_bits(bits(0)?), 6).as_bytes()),
            "print_char" => self.out.push(bits(0)? as u8),
            "print_string" => {
                let p = ptr(0)?;
                let bytes = self.c_string(&p)?;
                self.out.extend_from_slice(&bytes);
            }
            "print_flush" | "durin_vectorize_hint" => {}
            "parallel_for" => {
                // Sequentially, in order: one of the orders a parallel loop may take.
                let (lo, hi) = (bits(1)? as u32 as i32, bits(2)? as u32 as i32);
                let body = args.get(3).cloned().unwrap_or(Value::Undef);
                for i in lo..hi {
                    let index = Value::Bits(i as u32 as u64);
                    let mem = Value::Mem(self.mem);
                    let (target, call) = match &body {
                        Value::Closure(_) => (body.clone(), vec![mem, index, Value::Exit]),
                        // After closure elimination: (code, environment).
                        Value::Agg(pair) if pair.len() == 2 => {
                            (pair[0].clone(), vec![pair[1].clone(), mem, index, Value::Exit])
                        }
                        _ => return Err("`parallel_for` expects a function as its body".into()),
                    };
                    self.run_from(target, call, at)
                        .map_err(|(_, m)| format!("in the body of a parallel loop: {m}"))?;
                }
            }
            "random_seed" => self.rng = bits(0)? & 0xffff_ffff,
            "random_val_u64" => return Ok(vec![Value::Bits(self.random())]),
            "random_val_f32" => {
                let x = (self.random() >> 40) as f32 * (1.0 / (1u64 << 24) as f32);
                return Ok(vec![Value::Bits(x.to_bits() as u64)]);
            }
            "get_micro_time" | "get_kernel_time" | "get_nano_time" => {
                let d = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default();
                let t = if short == "get_nano_time" { d.as_nanos() } else { d.as_micros() };
                return Ok(vec![Value::Bits(t as u64)]);
            }
            "alloc" | "alloc_host" | "alloc_unified" => {
                // Memory of `size` bytes; the interpreter keeps one cell per byte, so any
                // element type with at most byte-sized index arithmetic fits.
                let size = bits(1)? as i64;
                if size < 0 || size as u64 > self.limits.max_alloc {
                    return Err(format!(
                        "allocation of {size} bytes exceeds the interpreter's limit of {}",
                        self.limits.max_alloc
                    ));
                }
                let value = Value::Agg(Rc::new(vec![Value::Undef; size as usize]));
                let p = self.new_block(value, true);
                self.blocks[p.block as usize].state = BlockState::Heap;
                return Ok(vec![Value::Ptr(p)]);
            }
            "release" | "release_host" => {
                let p = match args.get(1) {
                    // Releasing nothing is allowed, as `free(NULL)` is.
                    Some(Value::Undef) => return Ok(Vec::new()),
                    _ => ptr(1)?,
                };
                let block = &mut self.blocks[p.block as usize];
                match block.state {
                    BlockState::Heap if p.path.iter().all(|&i| i == 0) => {
                        block.state = BlockState::Released;
                        // The cells are gone: the memory holds nothing any more.
                        block.value = Value::Undef;
                    }
                    BlockState::Released => return Err("memory released twice".into()),
                    _ => return Err("release of memory that `alloc` did not return".into()),
                }
            }
            "copy" => {
                let (src, src_off, dst, dst_off, size) = (ptr(1)?, bits(2)?, ptr(4)?, bits(5)?, bits(6)?);
                for i in 0..size {
                    let from = self.offset(&src, src_off + i)?;
                    let to = self.offset(&dst, dst_off + i)?;
                    let v = self.read(&from)?;
                    self.write(&to, v)?;
                }
            }
            _ => return Err(format!("unknown runtime function `{name}` (the interpreter provides AnyDSL's printing, time and memory functions and the C math library)")),
        }
        Ok(Vec::new())
    }

    /// The next 64 bits of the random generator (the runtime's SplitMix64).
    fn random(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// The pointer `i` elements after `p` in the array `p` points into.
    fn offset(&self, p: &Pointer, i: u64) -> Result<Pointer, String> {
        let mut path = p.path.to_vec();
        match path.last_mut() {
            Some(last) => *last += i,
            None => path.push(i),
        }
        Ok(Pointer {
            block: p.block,
            path: path.into(),
        })
    }

    /// The bytes from `p` up to the first zero byte (or the end of the array).
    fn c_string(&self, p: &Pointer) -> Result<Vec<u8>, String> {
        let (parent, start) = match p.path.split_last() {
            Some((&last, rest)) => (
                Pointer {
                    block: p.block,
                    path: rest.into(),
                },
                last as usize,
            ),
            None => (p.clone(), 0),
        };
        let Value::Agg(elems) = self.read(&parent)? else {
            return Err("`print_string` expects a pointer into a byte array".into());
        };
        let mut out = Vec::new();
        for e in elems.iter().skip(start) {
            match e {
                Value::Bits(0) => break,
                Value::Bits(b) => out.push(*b as u8),
                _ => return Err("string holds uninitialized bytes".into()),
            }
        }
        Ok(out)
    }
}

/// The C math function `name` (`sqrt` on doubles, `sqrtf` on floats) applied to `args`,
/// if `name` is one.
fn math(name: &str, args: &[Value]) -> Option<Result<u64, String>> {
    let (base, single) = match name.strip_suffix('f') {
        Some(b) if !matches!(name, "erf" | "modf") && MATH.contains(&b) => (b, true),
        _ if MATH.contains(&name) => (name, false),
        _ => return None,
    };
    let arg = |i: usize| match args.get(i) {
        Some(Value::Bits(b)) => Ok(if single {
            f32::from_bits(*b as u32) as f64
        } else {
            f64::from_bits(*b)
        }),
        _ => Err(format!("`{name}` expects a number as argument {i}")),
    };
    let r = (|| {
        let x = arg(0)?;
        Ok(match base {
            "sqrt" => x.sqrt(),
            "cbrt" => x.cbrt(),
            "sin" => x.sin(),
            "cos" => x.cos(),
            "tan" => x.tan(),
            "asin" => x.asin(),
            "acos" => x.acos(),
            "atan" => x.atan(),
            "atan2" => x.atan2(arg(1)?),
            "exp" => x.exp(),
            "exp2" => x.exp2(),
            "log" => x.ln(),
            "log2" => x.log2(),
            "log10" => x.log10(),
            "pow" => x.powf(arg(1)?),
            "fabs" => x.abs(),
            "floor" => x.floor(),
            "ceil" => x.ceil(),
            "round" => x.round(),
            "fmin" => x.min(arg(1)?),
            "fmax" => x.max(arg(1)?),
            _ => x % arg(1)?, // fmod
        })
    })();
    Some(r.map(|v: f64| {
        if single {
            (v as f32).to_bits() as u64
        } else {
            v.to_bits()
        }
    }))
}

const MATH: &[&str] = &[
    "sqrt", "cbrt", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "exp", "exp2", "log",
    "log2", "log10", "pow", "fabs", "floor", "ceil", "round", "fmin", "fmax", "fmod",
];

/// `x` as C++ streams print a double by default (`%g` with `precision` significant digits:
/// shortest of fixed and scientific, trailing zeros removed).
pub fn format_general(x: f64, precision: usize) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() {
            "-nan".into()
        } else {
            "nan".into()
        };
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf".into() } else { "inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let p = precision.max(1);
    // The decimal exponent after rounding to `p` significant digits.
    let sci = format!("{:.*e}", p - 1, x);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if exp < -4 || exp >= p as i32 {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exp.abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        trim(&format!("{x:.decimals$}"))
    }
}

fn holds_closure(v: &Value) -> bool {
    match v {
        Value::Closure(_) => true,
        Value::Agg(elems) => elems.iter().any(holds_closure),
        _ => false,
    }
}

/// The message of an access to released memory.
const USE_AFTER_RELEASE: &str = "use of memory after its `release`";

fn out_of_bounds(i: u64, n: usize) -> String {
    format!("out-of-bounds access: index {i} of {n} elements")
}

/// Reads a value of primitive type `ty` from text (as `durin ir --run` arguments).
pub fn parse_value(w: &World, ty: Type, text: &str) -> Result<Value, String> {
    match w.kind(ty) {
        TypeKind::Bool => match text {
            "true" | "1" => Ok(Value::Bits(1)),
            "false" | "0" => Ok(Value::Bits(0)),
            _ => Err(format!("expected `true` or `false`, found `{text}`")),
        },
        TypeKind::Int { .. } | TypeKind::Float { .. } => {
            crate::text::literal_bits(w, ty, text).map(Value::Bits)
        }
        _ => Err(format!(
            "parameters of type {} cannot be given on the command line",
            w.types().display(ty)
        )),
    }
}

/// Formats a value of type `ty` for people.
pub fn format_value(w: &World, ty: Type, v: &Value) -> String {
    match (w.kind(ty), v) {
        (_, Value::Undef) => "undef".into(),
        (TypeKind::Bool, Value::Bits(b)) => (b & 1 == 1).to_string(),
        (TypeKind::Int { bits, signed: true }, Value::Bits(b)) => {
            semantics::sext(*bits as u32, *b).to_string()
        }
        (TypeKind::Int { .. }, Value::Bits(b)) => b.to_string(),
        (TypeKind::Float { bits }, Value::Bits(b)) => {
            let x = semantics::float_value(*bits, *b);
            if *bits == 64 {
                format!("{x:?}")
            } else {
                format!("{:?}", x as f32)
            }
        }
        (_, Value::Agg(elems)) => {
            let comps = w.types().components(ty).unwrap_or_default();
            let parts: Vec<String> = elems
                .iter()
                .zip(comps)
                .map(|(e, t)| format_value(w, t, e))
                .collect();
            format!("({})", parts.join(", "))
        }
        (_, Value::Ptr(p)) => format!("<pointer to block {}>", p.block),
        (_, Value::Closure(c)) => format!("<continuation {}>", w.name(c.cont).unwrap_or("?")),
        (_, Value::Exit) => "<exit>".into(),
        (_, Value::Mem(_)) => "<mem>".into(),
        (_, Value::Bits(b)) => format!("{b:#x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::format_general;
    use std::ffi::{c_char, c_int, CStr};

    extern "C" {
        fn snprintf(buf: *mut c_char, n: usize, fmt: *const c_char, ...) -> c_int;
    }

    /// C's `printf("%g")`, which C++ streams use by default: the independent reference.
    fn c_general(x: f64) -> String {
        let mut buf = [0 as c_char; 64];
        // SAFETY: the buffer is large enough for any %g output and is NUL-terminated by
        // snprintf; the format takes exactly one double.
        unsafe {
            snprintf(buf.as_mut_ptr(), buf.len(), c"%g".as_ptr(), x);
            CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned()
        }
    }

    #[test]
    fn general_format_matches_c() {
        let mut xs = vec![
            0.0,
            -0.0,
            1.0,
            -1.5,
            0.1,
            1.0 / 3.0,
            2.0 / 3.0,
            100000.0,
            999999.0,
            999999.5,
            1000000.0,
            1234567.0,
            0.0001,
            0.00012345,
            0.00001,
            1e-5,
            1.5e-7,
            123.456,
            1e21,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            9.9999995,
            0.5,
            2.5,
            1e100,
            314159.26535,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        let mut x = 1.234_567_891e-12;
        for _ in 0..60 {
            xs.push(x);
            xs.push(-x * 7.77);
            x *= 13.37;
        }
        for x in xs {
            assert_eq!(format_general(x, 6), c_general(x), "{x:e}");
        }
    }
}
