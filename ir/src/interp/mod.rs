//! The reference interpreter: runs any verified world, higher-order code included.
//!
//! Values of continuations are closures: a continuation together with the runs (frames)
//! of the enclosing continuations whose parameters it uses ([`FreeParams`]). Each body is
//! compiled once into a list of steps ([`code`]), so a jump costs a few array operations,
//! not a walk of the graph. Effects are ordered by the `mem` token, which the interpreter
//! checks: every effect must consume the newest token, so a program whose effects are not
//! totally ordered by `mem` is an error, not a silent choice.
//!
//! Memory is blocks of bytes laid out as the native back ends lay them out
//! ([`crate::layout`]); every access is bounds-checked (in elements, where it went through
//! an array), and reading memory that was never written is an error ([`memory`]). Limits
//! bound the jumps (fuel), the frames alive at once (the depth of non-tail recursion) and
//! the bytes allocated. Errors are values ([`InterpError`]) and never panics; dropping a
//! long chain of frames does not recurse.

mod code;
mod memory;
mod printf;
mod runtime;

pub use memory::Pointer;
pub use runtime::format_general;

use crate::analysis::free::FreeParams;
use crate::def::{CmpOp, Def, Node};
use crate::semantics::{self, Trap};
use crate::text::Layout;
use crate::types::{Type, TypeKind};
use crate::world::World;
use code::{Code, Jump, Memo, Op, Program, Src};
use memory::{BlockState, Memory, Shape};
use std::cell::{Cell, RefCell};
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
    /// A continuation with the frames it captured.
    Closure(Rc<Closure>),
    /// The continuation that ends the run with its arguments.
    Exit,
    /// Undefined: bottom, or memory never written.
    Undef,
}

/// A continuation value.
pub struct Closure {
    cont: Def,
    env: Env,
}

/// The frames a closure holds (most hold one or two: kept inline).
#[derive(Default)]
pub(super) enum Env {
    #[default]
    Zero,
    One([Rc<Frame>; 1]),
    Two([Rc<Frame>; 2]),
    Many(Box<[Rc<Frame>]>),
}

impl std::ops::Deref for Env {
    type Target = [Rc<Frame>];
    fn deref(&self) -> &[Rc<Frame>] {
        match self {
            Env::Zero => &[],
            Env::One(f) => f,
            Env::Two(f) => f,
            Env::Many(f) => f,
        }
    }
}

impl Env {
    /// The frames at `capture` of a running environment.
    fn capture(capture: &[u16], frame: impl Fn(u16) -> Rc<Frame>) -> Env {
        match capture {
            [] => Env::Zero,
            [a] => Env::One([frame(*a)]),
            [a, b] => Env::Two([frame(*a), frame(*b)]),
            _ => Env::Many(capture.iter().map(|&i| frame(i)).collect()),
        }
    }

    fn into_frames(self, out: &mut Vec<Rc<Frame>>) {
        match self {
            Env::Zero => {}
            Env::One(f) => out.extend(f),
            Env::Two(f) => out.extend(f),
            Env::Many(f) => out.extend(f.into_vec()),
        }
    }
}

impl fmt::Debug for Closure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Closure({:?})", self.cont)
    }
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

thread_local! {
    /// Frames alive on this thread.
    static FRAMES: Cell<u64> = const { Cell::new(0) };
}

/// One run of a continuation: its arguments, and the values remembered for the bodies of
/// continuations nested in it.
pub struct Frame {
    /// When it started (frames of one run of the program are numbered in order).
    seq: u64,
    args: Vec<Value>,
    memo: RefCell<Vec<Option<Value>>>,
}

impl Frame {
    fn new(seq: u64, args: Vec<Value>, memo_len: u32) -> Frame {
        FRAMES.with(|c| c.set(c.get() + 1));
        Frame {
            seq,
            args,
            memo: RefCell::new(vec![None; memo_len as usize]),
        }
    }
}

impl Drop for Frame {
    /// Takes apart, in a loop, the frames and closures only this frame holds: a chain of
    /// return continuations a million deep must not overflow the native stack.
    fn drop(&mut self) {
        FRAMES.with(|c| c.set(c.get() - 1));
        let mut values: Vec<Value> = std::mem::take(&mut self.args);
        values.extend(self.memo.get_mut().drain(..).flatten());
        if !values
            .iter()
            .any(|v| matches!(v, Value::Closure(_) | Value::Agg(_)))
        {
            return;
        }
        let mut frames: Vec<Rc<Frame>> = Vec::new();
        loop {
            while let Some(v) = values.pop() {
                match v {
                    Value::Closure(c) => {
                        if let Ok(mut c) = Rc::try_unwrap(c) {
                            std::mem::take(&mut c.env).into_frames(&mut frames);
                        }
                    }
                    Value::Agg(a) => {
                        if let Ok(a) = Rc::try_unwrap(a) {
                            values.extend(a);
                        }
                    }
                    _ => {}
                }
            }
            let Some(f) = frames.pop() else { break };
            if let Ok(mut f) = Rc::try_unwrap(f) {
                values.extend(std::mem::take(&mut f.args));
                values.extend(f.memo.get_mut().drain(..).flatten());
            }
        }
    }
}

/// Why a run failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterpError {
    /// The def being evaluated, named as in the text form.
    pub at: String,
    /// What went wrong.
    pub message: String,
    /// The source place of the def, or of the operand that has one (the index of an
    /// out-of-bounds access), when the front end gave one.
    pub loc: Option<durin_diag::Span>,
    /// The calls the code that failed was specialized for, innermost first
    /// ([`World::expanded_from`]): from library code to the program's call.
    pub expanded_from: Vec<durin_diag::Span>,
    /// The place of the program's own code that ran last before the error (the call into
    /// the library function that failed, when that function was not specialized).
    pub program_place: Option<durin_diag::Span>,
    /// Another place the error is about (the allocation of the memory accessed).
    pub related: Option<Related>,
}

impl fmt::Display for InterpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.message)
    }
}

impl std::error::Error for InterpError {}

/// A place an [`InterpError`] is about besides its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Related {
    /// The place.
    pub at: durin_diag::Span,
    /// The calls its code was specialized for, innermost first.
    pub expanded_from: Vec<durin_diag::Span>,
    /// The place of the program's own code that had run last then.
    pub program_place: Option<durin_diag::Span>,
    /// What it is.
    pub what: String,
}

/// Bounds on a run.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Maximum number of jumps.
    pub fuel: u64,
    /// Maximum number of bytes allocated and not released (slots, globals, `alloc`).
    pub max_memory: u64,
    /// Maximum number of frames alive at once: continuation runs that a closure still
    /// refers to, which is the depth of non-tail recursion.
    pub max_frames: u64,
    /// The source files (by [`durin_diag::FileId::index`], below 64) that belong to a
    /// library rather than to the program, a bit each: an error in library code also names
    /// the place in the program that ran last ([`InterpError::program_place`]).
    pub library_files: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            fuel: 100_000_000,
            max_memory: 1 << 30,
            max_frames: 1_000_000,
            library_files: 0,
        }
    }
}

/// An error before it is named: the def and the message.
type Fail = (Def, String);

struct Interp<'w, 'o> {
    w: &'w World,
    prog: Rc<Program>,
    memory: Memory,
    globals: crate::def::DefMap<Pointer>,
    /// Values of defs that depend on no parameter.
    consts: Vec<Option<Value>>,
    mem: u64,
    limits: Limits,
    /// Jumps made so far.
    jumps: u64,
    /// Frames started so far.
    seq: u64,
    /// Frames alive on this thread before the run.
    frames_before: u64,
    /// The random generator's state (SplitMix64, as the runtime's).
    rng: u64,
    /// The devices' timers (`durin_timer_start`): device number and start.
    timers: Vec<(u32, std::time::Instant)>,
    /// Threads `spawn` started (numbered from 1), and those not synced yet.
    threads_spawned: i32,
    threads_running: std::collections::BTreeSet<i32>,
    /// What the program printed.
    out: &'o mut Vec<u8>,
    /// The block of a CPU kernel being run (`durin_cpu_launch`), if any.
    block: Option<KernelBlock>,
    /// Where a kernel thread that reached the barrier goes on: set by the barrier, taken by
    /// the launch, which runs the block's other threads first.
    suspended: Option<Value>,
    /// The CUDA thread being run (`threadIdx` and the rest), in a CUDA kernel.
    cuda: Option<CudaThread>,
    /// The continuation that was running when the run failed (the innermost one, for an
    /// error inside a kernel or a parallel loop).
    failed_in: Option<Def>,
    /// The last continuation of the program's own code that ran.
    last_program: Option<Def>,
    /// The def another place of the error is at (the call that allocated the memory an
    /// access is about), the program's code that had run last then, and what it is.
    related: Option<(Def, Option<Def>, String)>,
}

/// The indices a CUDA kernel's thread reads: its thread and block index, the block and
/// grid sizes (in threads and in blocks).
#[derive(Clone, Copy, Debug)]
pub(super) struct CudaThread {
    pub(super) tid: [i32; 3],
    pub(super) bid: [i32; 3],
    pub(super) block: [i32; 3],
    pub(super) grid: [i32; 3],
}

/// The block of a CPU kernel the interpreter runs: its shared memory, in the order the
/// threads reserve it, and how many reservations each thread has made.
pub(super) struct KernelBlock {
    pub(super) shared: Vec<Pointer>,
    pub(super) reserved: Vec<usize>,
    pub(super) current: usize,
    /// For each byte of shared memory accessed since the last barrier (memory block,
    /// offset): the thread that wrote it, and the thread that read it (`usize::MAX`:
    /// several did). The launch clears it when the block's threads meet at the barrier.
    pub(super) touched: std::collections::HashMap<(u32, i64), (Option<usize>, Option<usize>)>,
}

impl KernelBlock {
    /// Records an access of `size` bytes at `p` by the current thread; an error if `p` is
    /// shared memory that another thread of the block wrote in this phase, or (for a
    /// write) read in it: a data race (no barrier orders the two).
    pub(super) fn access(&mut self, p: &Pointer, size: u64, write: bool) -> Result<(), String> {
        if !self.shared.iter().any(|s| s.block == p.block) {
            return Ok(());
        }
        let t = self.current;
        for i in 0..size as i64 {
            let (wrote, read) = self.touched.entry((p.block, p.offset + i)).or_default();
            let other = |u: &Option<usize>| u.is_some_and(|u| u != t);
            if other(wrote) || (write && other(read)) {
                let (u, what) = match *wrote {
                    Some(u) if u != t => (u, "wrote"),
                    _ => (read.unwrap_or(t), "read"),
                };
                let who = if u == usize::MAX {
                    "other threads".to_string()
                } else {
                    format!("thread {u}")
                };
                return Err(format!(
                    "a data race on shared memory: thread {t} of the block {} byte {} of a shared array that {who} {what} since the last barrier",
                    if write { "writes" } else { "reads" },
                    p.offset + i
                ));
            }
            if write {
                *wrote = Some(t);
            } else {
                *read = match *read {
                    Some(u) if u != t => Some(usize::MAX),
                    _ => Some(t),
                };
            }
        }
        Ok(())
    }
}

/// Runs `entry` with `args` (one value per parameter, `Value::Exit` for the continuation
/// that receives the results) and returns the arguments passed to `Value::Exit`. What the
/// program prints through the runtime's imports is appended to `out`.
pub fn run(
    w: &World,
    entry: Def,
    args: Vec<Value>,
    limits: Limits,
    out: &mut Vec<u8>,
) -> Result<Vec<Value>, InterpError> {
    let mut it = Interp::new(w, limits, out);
    let r = it.run(entry, args);
    r.map_err(|f| it.named(f))
}

/// An error with its def named as in the text form.
fn named(w: &World, (d, message): Fail) -> InterpError {
    let layout = Layout::compute(w);
    let at = match w.node(d).is_constant_leaf() {
        true => crate::text::print_def(w, &layout, d),
        false => layout.name(d).unwrap_or("?").to_string(),
    };
    let loc = w.loc(d).or_else(|| w.ops(d).iter().find_map(|&o| w.loc(o)));
    InterpError {
        at,
        message,
        loc,
        expanded_from: w.expanded_from(d),
        program_place: None,
        related: None,
    }
}

impl Interp<'_, '_> {
    /// The error of this run: [`named`], with the calls the continuation that failed was
    /// specialized for and the place of the memory it is about.
    fn named(&self, f: Fail) -> InterpError {
        let w = self.w;
        let mut e = named(w, f);
        // A continuation's body may be another's it took over (inlining): its jump's
        // place and expansion are those of the code it runs.
        if let Some(k) = self.failed_in {
            e.expanded_from = w.expansion_calls(w.jump_place(k).1);
        }
        e.program_place = self.last_program.and_then(|k| w.jump_place(k).0);
        e.related = (self.related.as_ref()).and_then(|(d, program, what)| {
            let (at, expansion) = w.jump_place(*d);
            Some(Related {
                at: at?,
                expanded_from: w.expansion_calls(expansion),
                program_place: program.and_then(|k| w.jump_place(k).0),
                what: what.clone(),
            })
        });
        e
    }
}

impl<'w, 'o> Interp<'w, 'o> {
    fn new(w: &'w World, limits: Limits, out: &'o mut Vec<u8>) -> Self {
        let free = FreeParams::compute(w);
        let mut prog = Program::compile(w, &free);
        let library =
            |f: durin_diag::FileId| f.index() < 64 && limits.library_files >> f.index() & 1 == 1;
        for (k, code) in prog.codes.iter_mut() {
            code.program = w.jump_place(k).0.is_some_and(|s| !library(s.file));
        }
        Interp {
            out,
            w,
            consts: vec![None; prog.consts as usize],
            prog: Rc::new(prog),
            memory: Memory::new(limits.max_memory),
            globals: Default::default(),
            mem: 0,
            limits,
            jumps: 0,
            seq: 0,
            frames_before: FRAMES.with(|c| c.get()),
            rng: 0x853c_49e6_748f_ea9b,
            timers: Vec::new(),
            threads_spawned: 0,
            threads_running: Default::default(),
            block: None,
            suspended: None,
            cuda: None,
            failed_in: None,
            last_program: None,
            related: None,
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
    run_with_argv_counted(w, entry, args, limits, out).0
}

/// [`run_with_argv`], and the number of jumps the run made.
pub fn run_with_argv_counted(
    w: &World,
    entry: Def,
    args: &[Vec<u8>],
    limits: Limits,
    out: &mut Vec<u8>,
) -> (Result<Vec<Value>, InterpError>, u64) {
    let mut it = Interp::new(w, limits, out);
    let r = it.argv(entry, args).and_then(|vals| it.run(entry, vals));
    let jumps = it.jumps;
    let r = r.map_err(|f| it.named(f)).map(|results| {
        results
            .into_iter()
            .filter(|v| !matches!(v, Value::Mem(_)))
            .collect()
    });
    (r, jumps)
}

impl Interp<'_, '_> {
    /// The entry's arguments for a C `main` called with `args`.
    fn argv(&mut self, entry: Def, args: &[Vec<u8>]) -> Result<Vec<Value>, Fail> {
        let w = self.w;
        let nparams = w
            .types()
            .cont_params(w.type_of(entry))
            .map_or(0, |p| p.len());
        let mut vals = vec![Value::Mem(0)];
        if nparams == 4 {
            let byte = Shape::Bits(1);
            let mut ptrs = Vec::new();
            for a in args {
                let p = self
                    .memory
                    .alloc(a.len() as u64 + 1, true, BlockState::Fixed)
                    .map_err(|m| (entry, m))?;
                for (i, &b) in a.iter().chain(&[0]).enumerate() {
                    let at = Pointer {
                        offset: i as i64,
                        ..p.clone()
                    };
                    self.memory
                        .store(&byte, &at, &Value::Bits(b as u64))
                        .map_err(|m| (entry, m))?;
                }
                ptrs.push(Value::Ptr(p));
            }
            let n = ptrs.len() as u64;
            let argv = self
                .memory
                .alloc(8 * n, true, BlockState::Fixed)
                .map_err(|m| (entry, m))?;
            let shape = Shape::Array {
                n,
                stride: 8,
                elem: Rc::new(Shape::Ref),
            };
            self.memory
                .store(&shape, &argv, &Value::Agg(Rc::new(ptrs)))
                .map_err(|m| (entry, m))?;
            vals.push(Value::Bits(n));
            vals.push(Value::Ptr(argv));
        }
        vals.push(Value::Exit);
        Ok(vals)
    }
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
        loc: w.loc(entry),
        expanded_from: Vec::new(),
        program_place: None,
        related: None,
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

/// Frame `i` of a running environment: the closure's frames, then the running one.
fn frame_at<'a>(env: &'a [Rc<Frame>], own: &'a Rc<Frame>, i: u16) -> &'a Rc<Frame> {
    env.get(i as usize).unwrap_or(own)
}

/// The value at `s` while `code` runs with `regs`, in `env` and frame `own`.
fn value_at<'a>(
    code: &'a Code,
    regs: &'a [Value],
    env: &'a [Rc<Frame>],
    own: &'a Rc<Frame>,
    s: Src,
) -> &'a Value {
    match s {
        Src::Reg(r) => &regs[r as usize],
        Src::Param(f, p) => &frame_at(env, own, f).args[p as usize],
        Src::Lit(l) => &code.lits[l as usize],
    }
}

/// Where the next jump goes.
pub(super) enum Target {
    /// A continuation value (or the exit).
    Value(Value),
    /// A continuation with the frames of its closure.
    Direct(Def, Env),
}

impl Interp<'_, '_> {
    fn run(&mut self, entry: Def, args: Vec<Value>) -> Result<Vec<Value>, Fail> {
        self.run_from(Target::Direct(entry, Env::Zero), args, entry)
    }

    /// Jumps to `target` with `args` and runs until the exit continuation is called.
    pub(super) fn run_from(
        &mut self,
        target: Target,
        args: Vec<Value>,
        at: Def,
    ) -> Result<Vec<Value>, Fail> {
        let prog = self.prog.clone();
        let mut target = target;
        let mut args = args;
        let mut at = at;
        let mut regs: Vec<Value> = Vec::new();
        // A frame to use again, and argument vectors to fill again.
        let mut spare: Vec<Rc<Frame>> = Vec::new();
        let mut pool: Vec<Vec<Value>> = Vec::new();
        let mut vec_pool: Vec<Vec<Rc<Frame>>> = Vec::new();
        loop {
            let (k, env): (Def, &[Rc<Frame>]) = match &target {
                Target::Direct(k, env) => (*k, env),
                Target::Value(Value::Closure(c)) => (c.cont, &c.env),
                Target::Value(Value::Exit) => return Ok(args),
                Target::Value(Value::Undef) => {
                    return Err((at, "jump to an undefined continuation (bottom)".into()))
                }
                Target::Value(_) => {
                    return Err((at, "jump to a value that is not a continuation".into()))
                }
            };
            if self.jumps == self.limits.fuel {
                return Err((
                    at,
                    format!(
                        "fuel exhausted after {} jumps (`--fuel` raises the limit)",
                        self.limits.fuel
                    ),
                ));
            }
            self.jumps += 1;
            let caller = std::mem::replace(&mut at, k);
            let Some(code) = prog.codes.get(k) else {
                // A kernel thread at the barrier: the launch goes on with the block's other
                // threads and resumes this one at the barrier's return point.
                if self.block.is_some()
                    && matches!(self.w.name(k), Some("durin_cpu_barrier" | "__syncthreads"))
                {
                    self.suspended = Some(args.last().cloned().unwrap_or(Value::Undef));
                    return Ok(Vec::new());
                }
                // An import's error is placed at the call (the calling block's place), when
                // the program has places.
                let w = self.w;
                let r = if w.node(k) == Node::Launch {
                    self.cuda_launch(&args, caller)
                        .map_err(|m| (if w.loc(caller).is_some() { caller } else { k }, m))
                } else {
                    self.import(k, caller, &args)
                        .map_err(|(d, m)| (if w.loc(caller).is_some() { caller } else { d }, m))
                };
                let (ret, results) = r.inspect_err(|_| {
                    self.failed_in.get_or_insert(caller);
                })?;
                target = Target::Value(ret);
                args = results;
                continue;
            };
            if env.len() != code.env_len as usize {
                return Err((
                    k,
                    "a closure whose captured frames do not fit its continuation".into(),
                ));
            }
            let alive = FRAMES.with(|c| c.get()) - self.frames_before;
            if alive >= self.limits.max_frames {
                return Err((
                    k,
                    format!(
                        "more than {} frames alive: non-tail recursion too deep \
                         (`--interp-frames` raises the limit)",
                        self.limits.max_frames
                    ),
                ));
            }
            if code.program {
                self.last_program = Some(k);
            }
            self.seq += 1;
            let own = match spare.pop() {
                Some(mut f) => {
                    let fm = Rc::get_mut(&mut f).expect("a spare frame has no other owner");
                    fm.seq = self.seq;
                    fm.args = args;
                    let memo = fm.memo.get_mut();
                    if !memo.is_empty() || code.memo_len > 0 {
                        memo.clear();
                        memo.resize(code.memo_len as usize, None);
                    }
                    f
                }
                None => Rc::new(Frame::new(self.seq, args, code.memo_len)),
            };
            regs.clear();
            self.steps(code, env, &own, &mut regs).inspect_err(|_| {
                self.failed_in.get_or_insert(k);
            })?;
            let frame = |i: u16| frame_at(env, &own, i).clone();
            let src = |s: &Src| value_at(code, &regs, env, &own, *s).clone();
            let next = match &code.jump {
                Jump::Value(r) => Target::Value(src(r)),
                Jump::Direct(k, capture) => Target::Direct(*k, Env::capture(capture, frame)),
                Jump::Branch(c, arms) => {
                    let (k, capture) = match value_at(code, &regs, env, &own, *c) {
                        Value::Bits(b) if b & 1 == 1 => &arms[0],
                        Value::Bits(_) => &arms[1],
                        _ => return Err((k, "branch on an undefined condition".into())),
                    };
                    Target::Direct(*k, Env::capture(capture, frame))
                }
            };
            args = pool.pop().unwrap_or_default();
            args.extend(code.args.iter().map(src));
            // Frames nothing refers to any more are used again for the next jumps.
            let mut done = vec_pool.pop().unwrap_or_default();
            done.push(own);
            match std::mem::replace(&mut target, next) {
                Target::Direct(_, env) => env.into_frames(&mut done),
                Target::Value(Value::Closure(c)) => {
                    if let Ok(mut c) = Rc::try_unwrap(c) {
                        std::mem::take(&mut c.env).into_frames(&mut done);
                    }
                }
                _ => {}
            }
            for mut f in done.drain(..) {
                if let Some(fm) = Rc::get_mut(&mut f) {
                    if spare.len() < 8 {
                        let mut old = std::mem::take(&mut fm.args);
                        old.clear();
                        pool.push(old);
                        spare.push(f);
                    }
                }
            }
            vec_pool.push(done);
        }
    }

    /// Calls the import `k` (`cn(mem, args.., cn(mem, results..))`): the continuation to
    /// go on with, and its arguments.
    fn import(&mut self, k: Def, caller: Def, args: &[Value]) -> Result<(Value, Vec<Value>), Fail> {
        let (ret, inner) = match args.split_last() {
            Some((r, rest)) if rest.first().is_some_and(|m| matches!(m, Value::Mem(_))) => {
                (r.clone(), &rest[1..])
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
        let results = self
            .call_import(name, inner, k, caller)
            .map_err(|m| (k, m))?;
        // The newest token: the import may have run code with effects.
        let mem = Value::Mem(self.mem);
        Ok((ret, std::iter::once(mem).chain(results).collect()))
    }

    /// Runs the steps of `code` in the environment `env` and frame `own`; `regs` receives
    /// one value per step.
    fn steps(
        &mut self,
        code: &Code,
        env: &[Rc<Frame>],
        own: &Rc<Frame>,
        regs: &mut Vec<Value>,
    ) -> Result<(), Fail> {
        for st in &code.steps {
            if let Memo::None = st.memo {
                // Scalar operations write their bits straight into the register; every
                // other step is computed apart (sharing one move into the registers made
                // each step wait for a store-forwarding stall).
                if let Some(r) = scalar(code, st, regs, env, own) {
                    regs.push(Value::Bits(r.map_err(|m| (st.def, m))?));
                    continue;
                }
            }
            self.step(code, st, env, own, regs)?;
        }
        Ok(())
    }

    /// Computes (or finds remembered) the value of step `st` and pushes it to `regs`.
    #[inline(never)]
    fn step(
        &mut self,
        code: &Code,
        st: &code::Step,
        env: &[Rc<Frame>],
        own: &Rc<Frame>,
        regs: &mut Vec<Value>,
    ) -> Result<(), Fail> {
        let frame = |i: u16| frame_at(env, own, i);
        let v = match &st.memo {
            Memo::None => self
                .compute(code, st, regs, env, own)
                .map_err(|m| (st.def, m))?,
            memo => match self.remembered(memo, &frame) {
                Ok(v) => v,
                Err(slot) => {
                    let v = self
                        .compute(code, st, regs, env, own)
                        .map_err(|m| (st.def, m))?;
                    self.remember(memo, slot, &v);
                    v
                }
            },
        };
        regs.push(v);
        Ok(())
    }

    /// The value remembered at `memo`, or the frame slot to remember it in.
    fn remembered<'f>(
        &self,
        memo: &Memo,
        frame: &dyn Fn(u16) -> &'f Rc<Frame>,
    ) -> Result<Value, Option<(&'f Rc<Frame>, u32)>> {
        let slot = match memo {
            Memo::None => None,
            Memo::Const(i) => {
                return self.consts[*i as usize].clone().ok_or(None);
            }
            Memo::Frame { frame: f, slot } => Some((frame(*f), *slot)),
            Memo::Newest(at) => at
                .iter()
                .map(|&(f, s)| (frame(f), s))
                .max_by_key(|(f, _)| f.seq),
        };
        if let Some((f, s)) = slot {
            if let Some(v) = &f.memo.borrow()[s as usize] {
                return Ok(v.clone());
            }
        }
        Err(slot)
    }

    /// Remembers `v` at `memo`. Frames remember only effects, and constants capture no
    /// frame, so nothing remembered makes a cycle of frames (a loaded closure aside).
    fn remember(&mut self, memo: &Memo, slot: Option<(&Rc<Frame>, u32)>, v: &Value) {
        match (memo, slot) {
            (Memo::Const(i), _) => self.consts[*i as usize] = Some(v.clone()),
            (_, Some((f, s))) => f.memo.borrow_mut()[s as usize] = Some(v.clone()),
            _ => {}
        }
    }

    #[inline(always)]
    fn compute(
        &mut self,
        code: &Code,
        st: &code::Step,
        regs: &[Value],
        env: &[Rc<Frame>],
        own: &Rc<Frame>,
    ) -> Result<Value, String> {
        let op = |i: usize| value_at(code, regs, env, own, st.ops[i]);
        Ok(match &st.op {
            Op::Undef => Value::Undef,
            Op::Launch(d) => Value::Closure(Rc::new(Closure {
                cont: *d,
                env: Env::default(),
            })),
            Op::Closure { cont, capture } => Value::Closure(Rc::new(Closure {
                cont: *cont,
                env: Env::capture(capture, |i| frame_at(env, own, i).clone()),
            })),
            Op::Global(g) => self.global(*g)?,
            Op::Arith(o, p) => {
                let p = p.ok_or(NOT_A_NUMBER)?;
                match semantics::arith(*o, p, bits(op(0))?, bits(op(1))?) {
                    Ok(v) => Value::Bits(v),
                    Err(Trap::DivisionByZero) => {
                        return Err(crate::analysis::program::DIVISION_BY_ZERO.into())
                    }
                }
            }
            Op::Cmp(o, None) if matches!(o, CmpOp::Eq | CmpOp::Ne) => {
                // Pointers: equal when they address the same byte of the same block. An
                // undefined pointer gives an undefined result (an error where it decides).
                match (op(0), op(1)) {
                    (Value::Ptr(a), Value::Ptr(b)) => {
                        let same = a.block == b.block && a.offset == b.offset;
                        Value::Bits((same == (*o == CmpOp::Eq)) as u64)
                    }
                    (Value::Undef, _) | (_, Value::Undef) => Value::Undef,
                    (a, _) => {
                        pointer(a)?;
                        Value::Undef
                    }
                }
            }
            Op::Cmp(o, p) => {
                let p = p.ok_or(NOT_A_NUMBER)?;
                Value::Bits(semantics::cmp(*o, p, bits(op(0))?, bits(op(1))?) as u64)
            }
            Op::Select => {
                if bits(op(0))? & 1 == 1 {
                    op(1).clone()
                } else {
                    op(2).clone()
                }
            }
            Op::Conv(from, to) => {
                let (from, to) = (from.ok_or(NOT_A_NUMBER)?, to.ok_or(NOT_A_NUMBER)?);
                Value::Bits(semantics::conv(from, to, bits(op(0))?))
            }
            Op::IntToPtr(from) => {
                let a = semantics::address(*from, bits(op(0))?);
                Value::Ptr(self.memory.at_address(a))
            }
            Op::PtrToInt(to) => {
                let a = match op(0) {
                    Value::Ptr(p) => self.memory.address(p),
                    // An undefined pointer: the error of every conversion of one.
                    v => bits(v)?,
                };
                Value::Bits(semantics::mask(to.bits(), a))
            }
            Op::Bitcast => op(0).clone(),
            Op::Agg => Value::Agg(Rc::new((0..st.ops.len()).map(|i| op(i).clone()).collect())),
            Op::Extract => {
                let i = bits(op(1))?;
                match op(0) {
                    Value::Agg(elems) => elems.get(i as usize).cloned().ok_or_else(|| {
                        format!("index {i} out of bounds for {} components", elems.len())
                    })?,
                    Value::Undef => Value::Undef,
                    _ => return Err("extract from a value that is not an aggregate".into()),
                }
            }
            Op::Insert(ty) => {
                let i = bits(op(1))?;
                let mut agg = match op(0) {
                    Value::Agg(e) => e.clone(),
                    Value::Undef => undef_agg(self.w, *ty)?,
                    _ => return Err("insert into a value that is not an aggregate".into()),
                };
                let n = agg.len();
                let slot = Rc::make_mut(&mut agg)
                    .get_mut(i as usize)
                    .ok_or_else(|| format!("index {i} out of bounds for {n} components"))?;
                *slot = op(2).clone();
                Value::Agg(agg)
            }
            Op::LeaElem {
                elem,
                bits: b,
                signed,
            } => {
                let p = pointer(op(0))?;
                let raw = bits(op(1))?;
                let i = if *signed {
                    semantics::sext(*b, raw)
                } else {
                    raw as i64
                };
                Value::Ptr(Pointer {
                    block: p.block,
                    offset: p.offset.wrapping_add(i.wrapping_mul(*elem as i64)),
                    elem: *elem as u32,
                    index: i,
                })
            }
            Op::LeaField(offsets) => {
                let p = pointer(op(0))?;
                let i = bits(op(1))? as usize;
                let off = *offsets
                    .get(i)
                    .ok_or_else(|| format!("field {i} of {} fields", offsets.len()))?;
                Value::Ptr(Pointer {
                    offset: p.offset.wrapping_add(off as i64),
                    ..p.clone()
                })
            }
            Op::Slot(size) => {
                let m = self.consume_mem(op(0))?;
                let p = self.memory.alloc(*size, true, BlockState::Fixed)?;
                Value::Agg(Rc::new(vec![m, Value::Ptr(p)]))
            }
            Op::Alloc {
                elem,
                bits: b,
                signed,
                shared,
            } => {
                let m = self.consume_mem(op(0))?;
                // Shared memory in a CPU kernel: the block's k-th reservation.
                if let (true, Some(block)) = (*shared, self.block.as_mut()) {
                    let t = block.current;
                    let k = block.reserved[t];
                    block.reserved[t] += 1;
                    if let Some(p) = block.shared.get(k) {
                        return Ok(Value::Agg(Rc::new(vec![m, Value::Ptr(p.clone())])));
                    }
                }
                let raw = bits(op(1))?;
                let n = if *signed {
                    semantics::sext(*b, raw)
                } else {
                    raw as i64
                };
                if n < 0 {
                    return Err(format!("allocation of {n} elements"));
                }
                let size = (n as u64).checked_mul(*elem).ok_or_else(|| {
                    format!("allocation of {n} elements of {elem} bytes overflows")
                })?;
                let p = self.memory.alloc(size, true, BlockState::Fixed)?;
                if let (true, Some(block)) = (*shared, self.block.as_mut()) {
                    block.shared.push(p.clone());
                }
                Value::Agg(Rc::new(vec![m, Value::Ptr(p)]))
            }
            Op::Load(shape) => {
                let m = self.consume_mem(op(0))?;
                let p = pointer(op(1))?;
                if let Some(b) = self.block.as_mut() {
                    b.access(p, shape.size(), false)?;
                }
                self.check_side(p, false)?;
                let v = self.memory.load(shape, p)?;
                if v == Value::Undef {
                    return Err("load of uninitialized memory".into());
                }
                Value::Agg(Rc::new(vec![m, v]))
            }
            Op::Store(shape) => {
                let m = self.consume_mem(op(0))?;
                let p = pointer(op(1))?;
                if let Some(b) = self.block.as_mut() {
                    b.access(p, shape.size(), true)?;
                }
                self.check_side(p, true)?;
                self.memory.store(shape, p, op(2))?;
                m
            }
            Op::Known(k) => Value::Bits(*k as u64),
            Op::Pass => op(0).clone(),
        })
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

    fn global(&mut self, g: Def) -> Result<Value, String> {
        if let Some(p) = self.globals.get(g) {
            return Ok(Value::Ptr(p.clone()));
        }
        let prog = self.prog.clone();
        let Some(code) = prog.globals.get(g) else {
            return Err("not a global of this world".into());
        };
        let mut regs = Vec::new();
        let own = Rc::new(Frame::new(0, Vec::new(), 0));
        self.steps(code, &[], &own, &mut regs).map_err(|(_, m)| m)?;
        let v = match code.jump {
            Jump::Value(Src::Reg(r)) => regs.get(r as usize).cloned().unwrap_or(Value::Undef),
            Jump::Value(Src::Lit(l)) => code.lits[l as usize].clone(),
            _ => Value::Undef,
        };
        let w = self.w;
        let init = w.type_of(w.ops(g)[0]);
        let mutable = matches!(w.node(g), Node::Global { mutable: true });
        let (size, _) = crate::layout::size_align(w, init);
        let p = self.memory.alloc(size, true, BlockState::Fixed)?;
        self.memory.store(&Shape::of(w, init), &p, &v)?;
        if !mutable {
            self.memory.freeze(&p);
        }
        self.globals.insert(g, p.clone());
        Ok(Value::Ptr(p))
    }
}

const NOT_A_NUMBER: &str = "operation on a value that is not a number";

/// The bits of step `st` when it is an arithmetic operation, a comparison or a conversion
/// of numbers (`None` for any other step); as [`Interp::compute`] computes them.
#[inline(always)]
fn scalar(
    code: &Code,
    st: &code::Step,
    regs: &[Value],
    env: &[Rc<Frame>],
    own: &Rc<Frame>,
) -> Option<Result<u64, String>> {
    let op = |i: usize| value_at(code, regs, env, own, st.ops[i]);
    let num = |i: usize| match op(i) {
        Value::Bits(b) => Some(*b),
        _ => None,
    };
    Some(match st.op {
        Op::Arith(o, Some(p)) => match semantics::arith(o, p, num(0)?, num(1)?) {
            Ok(v) => Ok(v),
            Err(Trap::DivisionByZero) => Err(crate::analysis::program::DIVISION_BY_ZERO.into()),
        },
        Op::Cmp(o, Some(p)) => Ok(semantics::cmp(o, p, num(0)?, num(1)?) as u64),
        Op::Conv(Some(from), Some(to)) => Ok(semantics::conv(from, to, num(0)?)),
        _ => return None,
    })
}

fn bits(v: &Value) -> Result<u64, String> {
    match v {
        Value::Bits(b) => Ok(*b),
        Value::Undef => Err("operation on an undefined value".into()),
        _ => Err(NOT_A_NUMBER.into()),
    }
}

fn pointer(v: &Value) -> Result<&Pointer, String> {
    match v {
        Value::Ptr(p) => Ok(p),
        Value::Undef => Err("access through an undefined pointer".into()),
        _ => Err("access through a value that is not a pointer".into()),
    }
}

/// An undefined aggregate of type `ty`, its parts undefined (for an insert into `bot`).
fn undef_agg(w: &World, ty: Type) -> Result<Rc<Vec<Value>>, String> {
    let n = match w.kind(ty) {
        TypeKind::Array { len: Some(n), .. } => *n,
        TypeKind::Tuple(_) | TypeKind::Struct(_) => {
            w.types().components(ty).map_or(0, |c| c.len() as u64)
        }
        _ => return Err("insert into a value that is not an aggregate".into()),
    };
    if n > 1 << 24 {
        return Err(format!("an aggregate value of {n} elements"));
    }
    Ok(Rc::new(vec![Value::Undef; n as usize]))
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
        (_, Value::Ptr(p)) if p.is_from_integer() => format!("<pointer {:#x}>", p.offset),
        (_, Value::Ptr(p)) => format!("<pointer to block {}>", p.block()),
        (_, Value::Closure(c)) => format!("<continuation {}>", w.name(c.cont).unwrap_or("?")),
        (_, Value::Exit) => "<exit>".into(),
        (_, Value::Mem(_)) => "<mem>".into(),
        (_, Value::Bits(b)) => format!("{b:#x}"),
    }
}
