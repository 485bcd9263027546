//! Continuations compiled for the interpreter: each body becomes a list of steps, one per
//! def its jump needs, operands first, with where each result is remembered decided once.
//!
//! An effect (`slot`, `alloc`, `load`, `store`) belongs to the run (frame) of the most
//! recently started continuation whose parameters it depends on, and happens once per such
//! frame: a load placed in a continuation is not repeated when a continuation it jumps to
//! uses its result. One that only its owner's body uses lives in a register of that run;
//! one that bodies of other continuations use too gets a slot in its owner's frame, which
//! they look at first. Pure defs are computed where they are needed (again in each body
//! that needs them: the same value, for at most that body's length in work), and those
//! that depend on no parameter once per run of the program (a closed continuation's
//! closure among them). Closures over frames are rebuilt where they are needed: frames
//! remember only effects, so no frame holds a closure over itself (unless one was stored
//! in memory and loaded), which would never be freed.

use super::memory::Shape;
use crate::analysis::free::FreeParams;
use crate::def::{ArithOp, CmpOp, Def, DefMap, Node};
use crate::layout::{field_offsets, size_align};
use crate::semantics::Prim;
use crate::types::{Type, TypeKind};
use crate::world::World;
use rustc_hash::FxHashMap;
use std::rc::Rc;

/// What a step computes.
pub(super) enum Op {
    Undef,
    /// The kernel-launch intrinsic (this def): a continuation value the interpreter runs.
    Launch(Def),
    /// A closure of `cont` over these frames of the running environment.
    Closure {
        cont: Def,
        capture: Box<[u16]>,
    },
    Global(Def),
    Arith(ArithOp, Option<Prim>),
    Cmp(CmpOp, Option<Prim>),
    Select,
    Conv(Option<Prim>, Option<Prim>),
    /// An integer of this type to a pointer.
    IntToPtr(Prim),
    /// A pointer to an integer of this type.
    PtrToInt(Prim),
    Bitcast,
    Agg,
    Extract,
    /// Insert into an aggregate of this shape (to expand an undefined one).
    Insert(Type),
    /// An element of an array of elements this large, indexed by an integer of `bits`.
    LeaElem {
        elem: u64,
        bits: u32,
        signed: bool,
    },
    /// A field of a tuple or struct at these offsets.
    LeaField(Rc<[u64]>),
    /// A stack slot of this many bytes.
    Slot(u64),
    /// An array of elements this large, counted by an integer of `bits`.
    Alloc {
        elem: u64,
        bits: u32,
        signed: bool,
        /// GPU shared memory (in a CPU kernel: the block's).
        shared: bool,
    },
    Load(Rc<Shape>),
    Store(Rc<Shape>),
    Known(bool),
    /// `run` and `hlt`: the operand.
    Pass,
}

/// Where a step's result is remembered beyond the run of the code that computes it.
pub(super) enum Memo {
    /// Nowhere: a register of this run.
    None,
    /// Slot `slot` of the frame at `frame`.
    Frame { frame: u16, slot: u32 },
    /// In the newest of these frames (by start), at its slot.
    Newest(Box<[(u16, u32)]>),
    /// In the program's table of values that depend on no parameter.
    Const(u32),
}

pub(super) struct Step {
    pub def: Def,
    pub op: Op,
    pub ops: Box<[Src]>,
    pub memo: Memo,
}

/// Where an operand's value is.
#[derive(Clone, Copy)]
pub(super) enum Src {
    /// The result of an earlier step.
    Reg(u32),
    /// Argument `.1` of the frame at `.0` in the running environment.
    Param(u16, u32),
    /// A literal of the code.
    Lit(u32),
}

/// Where a body jumps.
pub(super) enum Jump {
    /// To a value.
    Value(Src),
    /// To a continuation, whose closure is these frames of the running environment.
    Direct(Def, Box<[u16]>),
    /// To one of two continuations on a condition.
    Branch(Src, [(Def, Box<[u16]>); 2]),
}

/// A compiled body.
pub(super) struct Code {
    /// The frames the continuation's closure holds; the running frame comes after them.
    pub env_len: u16,
    pub steps: Vec<Step>,
    pub jump: Jump,
    /// The jump's arguments.
    pub args: Box<[Src]>,
    /// The literals (and `bot`s) the code uses.
    pub lits: Box<[super::Value]>,
    /// Slots in this continuation's frames.
    pub memo_len: u32,
    /// Whether its jump is in the program's own code rather than a library's
    /// ([`super::Limits::library_files`]).
    pub program: bool,
}

/// Every body of a world, and the initializer of every global.
pub(super) struct Program {
    pub codes: DefMap<Code>,
    /// An initializer's steps, the last computing the value.
    pub globals: DefMap<Code>,
    pub consts: u32,
}

impl Program {
    pub(super) fn compile(w: &World, free: &FreeParams) -> Program {
        Compiler {
            w,
            free,
            owners: DefMap::new(),
            consts: DefMap::new(),
            nconsts: 0,
            slots: DefMap::new(),
            shapes: FxHashMap::default(),
        }
        .program()
    }
}

struct Compiler<'a> {
    w: &'a World,
    free: &'a FreeParams,
    /// The continuations whose parameters a def depends on (not through nominals).
    owners: DefMap<Rc<[Def]>>,
    consts: DefMap<u32>,
    nconsts: u32,
    /// For defs remembered in frames: their slot in each owner's frame.
    slots: DefMap<Vec<(Def, u32)>>,
    shapes: FxHashMap<Type, Rc<Shape>>,
}

/// A body's steps before compilation: the defs in order, and how the jump is made.
struct Plan {
    cont: Def,
    order: Vec<Def>,
    callee: Callee,
    args: Vec<Def>,
}

enum Callee {
    Value(Def),
    Direct(Def),
    Branch(Def, Def, Def),
}

impl Compiler<'_> {
    fn program(mut self) -> Program {
        let w = self.w;
        let mut plans = Vec::new();
        for k in w.continuations() {
            let Some((callee, args)) = w.body(k) else {
                continue;
            };
            let is_cont = |d: Def| w.node(d) == Node::Cont;
            let c = if is_cont(callee) {
                Callee::Direct(callee)
            } else if w.node(callee) == Node::Select
                && is_cont(w.ops(callee)[1])
                && is_cont(w.ops(callee)[2])
            {
                let o = w.ops(callee);
                Callee::Branch(o[0], o[1], o[2])
            } else {
                Callee::Value(callee)
            };
            let mut roots = match c {
                Callee::Value(d) | Callee::Branch(d, _, _) => vec![d],
                Callee::Direct(_) => Vec::new(),
            };
            roots.extend_from_slice(args);
            let order = self.order(&roots);
            plans.push(Plan {
                cont: k,
                order,
                callee: c,
                args: args.to_vec(),
            });
        }
        // Which bodies compute each def; a def computed by a body other than its only
        // owner's is remembered in its owners' frames.
        let mut users: DefMap<Vec<Def>> = DefMap::new();
        for p in &plans {
            for &d in &p.order {
                if self.remembered_kind(d) && !self.owners[d].is_empty() {
                    match users.get_mut(d) {
                        Some(u) => u.push(p.cont),
                        None => {
                            users.insert(d, vec![p.cont]);
                        }
                    }
                }
            }
        }
        let mut memo_len: DefMap<u32> = DefMap::new();
        for d in plans.iter().flat_map(|p| p.order.iter().copied()) {
            let Some(us) = users.get(d) else { continue };
            if self.slots.contains_key(d) {
                continue;
            }
            let owners = self.owners[d].clone();
            if us.len() == 1 && owners.contains(&us[0]) {
                continue;
            }
            let mut at = Vec::new();
            for &o in owners.iter() {
                let n = memo_len.get(o).copied().unwrap_or(0);
                memo_len.insert(o, n + 1);
                at.push((o, n));
            }
            self.slots.insert(d, at);
        }
        let mut codes = DefMap::new();
        for p in plans {
            let code = self.code(&p, memo_len.get(p.cont).copied().unwrap_or(0));
            codes.insert(p.cont, code);
        }
        let mut globals = DefMap::new();
        for g in w.nominals() {
            if let Node::Global { .. } = w.node(g) {
                let init = w.ops(g)[0];
                let order = self.order(&[init]);
                let plan = Plan {
                    cont: g,
                    order,
                    callee: Callee::Value(init),
                    args: Vec::new(),
                };
                globals.insert(g, self.code(&plan, 0));
            }
        }
        Program {
            codes,
            globals,
            consts: self.nconsts,
        }
    }

    /// Whether a def of this node is remembered in a frame: effects, which must happen
    /// once per run of their owner. Pure defs are computed again where another body needs
    /// them (the same value, and at most the length of that body in work).
    fn remembered_kind(&self, d: Def) -> bool {
        self.w.node(d).is_effect()
    }

    /// Whether a def that depends on no parameter is computed once per run of the program.
    fn constant_kind(&self, d: Def) -> bool {
        let n = self.w.node(d);
        !n.is_constant_leaf() && !matches!(n, Node::Param(_)) && !n.is_nominal()
    }

    /// The defs `roots` need, operands first (not entering nominals), each once; computes
    /// their owners on the way.
    fn order(&mut self, roots: &[Def]) -> Vec<Def> {
        let w = self.w;
        let mut order = Vec::new();
        let mut seen: FxHashMap<Def, ()> = FxHashMap::default();
        let mut stack: Vec<(Def, bool)> = roots.iter().rev().map(|&r| (r, false)).collect();
        while let Some((d, expanded)) = stack.pop() {
            if expanded {
                self.owners_of(d);
                order.push(d);
                continue;
            }
            if seen.insert(d, ()).is_some() {
                continue;
            }
            stack.push((d, true));
            let n = w.node(d);
            if !n.is_nominal() && !matches!(n, Node::Param(_)) {
                for &o in w.ops(d).iter().rev() {
                    if !seen.contains_key(&o) {
                        stack.push((o, false));
                    }
                }
            }
        }
        order
    }

    /// The continuations whose parameters `d` depends on (operands done first).
    fn owners_of(&mut self, d: Def) {
        if self.owners.contains_key(d) {
            return;
        }
        let w = self.w;
        let owners: Rc<[Def]> = match w.node(d) {
            Node::Param(_) => Rc::from([w.ops(d)[0]]),
            Node::Cont => Rc::from(self.free.owners(d)),
            n if n.is_nominal() => Rc::from([]),
            _ => {
                let mut all: Vec<Def> = Vec::new();
                for &o in w.ops(d) {
                    for &k in self.owners.get(o).map_or(&[][..], |v| &v[..]) {
                        if !all.contains(&k) {
                            all.push(k);
                        }
                    }
                }
                Rc::from(all)
            }
        };
        self.owners.insert(d, owners);
    }

    fn shape(&mut self, t: Type) -> Rc<Shape> {
        let w = self.w;
        self.shapes
            .entry(t)
            .or_insert_with(|| Rc::new(Shape::of(w, t)))
            .clone()
    }

    fn code(&mut self, p: &Plan, memo_len: u32) -> Code {
        let w = self.w;
        let env: &[Def] = if w.node(p.cont) == Node::Cont {
            self.free.owners(p.cont)
        } else {
            &[]
        };
        let env_len = env.len() as u16;
        let frame_of = |k: Def| -> u16 {
            if k == p.cont {
                env_len
            } else {
                env.iter()
                    .position(|&e| e == k)
                    .map_or(u16::MAX, |i| i as u16)
            }
        };
        let capture =
            |k: Def| -> Box<[u16]> { self.free.owners(k).iter().map(|&o| frame_of(o)).collect() };
        let mut index: FxHashMap<Def, Src> = FxHashMap::default();
        let mut lits: Vec<super::Value> = Vec::new();
        let mut steps = Vec::with_capacity(p.order.len());
        for &d in &p.order {
            match w.node(d) {
                Node::Param(i) => {
                    index.insert(d, Src::Param(frame_of(w.ops(d)[0]), i));
                    continue;
                }
                Node::Lit(v) => {
                    index.insert(d, Src::Lit(lits.len() as u32));
                    lits.push(super::Value::Bits(v));
                    continue;
                }
                Node::Bottom => {
                    index.insert(d, Src::Lit(lits.len() as u32));
                    lits.push(super::Value::Undef);
                    continue;
                }
                Node::Bytes(_) => {
                    let bytes = w.bytes_of(d).unwrap_or_default();
                    let elems = bytes.iter().map(|&b| super::Value::Bits(u64::from(b)));
                    index.insert(d, Src::Lit(lits.len() as u32));
                    lits.push(super::Value::Agg(std::rc::Rc::new(elems.collect())));
                    continue;
                }
                _ => {}
            }
            let ops: Box<[Src]> = if w.node(d).is_nominal() {
                Box::new([])
            } else {
                w.ops(d).iter().map(|o| index[o]).collect()
            };
            let op = self.op(d, &capture);
            let memo = if self.owners[d].is_empty() && self.constant_kind(d)
                || w.node(d) == Node::Cont && self.owners[d].is_empty()
            {
                let n = *self.consts.get(d).unwrap_or(&self.nconsts);
                if n == self.nconsts {
                    self.consts.insert(d, n);
                    self.nconsts += 1;
                }
                Memo::Const(n)
            } else if let Some(at) = self.slots.get(d) {
                if let Some(&(_, s)) = at.iter().find(|(o, _)| *o == p.cont) {
                    Memo::Frame {
                        frame: env_len,
                        slot: s,
                    }
                } else if at.len() == 1 {
                    Memo::Frame {
                        frame: frame_of(at[0].0),
                        slot: at[0].1,
                    }
                } else {
                    Memo::Newest(at.iter().map(|&(o, s)| (frame_of(o), s)).collect())
                }
            } else {
                Memo::None
            };
            index.insert(d, Src::Reg(steps.len() as u32));
            steps.push(Step {
                def: d,
                op,
                ops,
                memo,
            });
        }
        let jump = match p.callee {
            Callee::Value(d) => Jump::Value(index[&d]),
            Callee::Direct(k) => Jump::Direct(k, capture(k)),
            Callee::Branch(c, t, e) => Jump::Branch(index[&c], [(t, capture(t)), (e, capture(e))]),
        };
        Code {
            env_len,
            steps,
            jump,
            args: p.args.iter().map(|a| index[a]).collect(),
            lits: lits.into(),
            memo_len,
            program: false,
        }
    }

    fn op(&mut self, d: Def, capture: &dyn Fn(Def) -> Box<[u16]>) -> Op {
        let w = self.w;
        let ty = w.type_of(d);
        let prim = |t: Type| Prim::of(w.kind(t));
        let ops = w.ops(d);
        match w.node(d) {
            Node::Lit(_) | Node::Bytes(_) | Node::Bottom | Node::Param(_) => Op::Undef,
            Node::Launch => Op::Launch(d),
            Node::Cont => Op::Closure {
                cont: d,
                capture: capture(d),
            },
            Node::Global { .. } => Op::Global(d),
            Node::Arith(o) => Op::Arith(o, prim(ty)),
            Node::Cmp(o) => Op::Cmp(o, prim(w.type_of(ops[0]))),
            Node::Select => Op::Select,
            Node::Conv => match (prim(w.type_of(ops[0])), prim(ty)) {
                (Some(from), None) => Op::IntToPtr(from),
                (None, Some(to)) => Op::PtrToInt(to),
                (from, to) => Op::Conv(from, to),
            },
            Node::Bitcast => Op::Bitcast,
            Node::Tuple | Node::Struct | Node::Array => Op::Agg,
            Node::Extract => Op::Extract,
            Node::Insert => Op::Insert(ty),
            Node::Lea => {
                let pointee = match w.kind(w.type_of(ops[0])) {
                    TypeKind::Ptr { pointee, .. } => *pointee,
                    _ => return Op::Undef,
                };
                match w.kind(pointee) {
                    TypeKind::Array { elem, .. } => {
                        let (bits, signed) = int_of(w, w.type_of(ops[1]));
                        Op::LeaElem {
                            elem: size_align(w, *elem).0,
                            bits,
                            signed,
                        }
                    }
                    _ => Op::LeaField(field_offsets(w, pointee).into()),
                }
            }
            Node::Slot => Op::Slot(size_align(w, alloc_pointee(w, ty)).0),
            Node::Alloc => {
                let elem = match w.kind(alloc_pointee(w, ty)) {
                    TypeKind::Array { elem, .. } => size_align(w, *elem).0,
                    _ => 0,
                };
                let (bits, signed) = int_of(w, w.type_of(ops[1]));
                let shared = crate::analysis::program::allocates_shared(w, ty);
                Op::Alloc {
                    elem,
                    bits,
                    signed,
                    shared,
                }
            }
            Node::Load => {
                let t = w.types().components(ty).and_then(|c| c.get(1).copied());
                match t {
                    Some(t) => Op::Load(self.shape(t)),
                    None => Op::Undef,
                }
            }
            Node::Store => Op::Store(self.shape(w.type_of(ops[2]))),
            Node::Known => Op::Known(!w.has_params(ops[0])),
            Node::Run | Node::Hlt => Op::Pass,
        }
    }
}

/// The type a `slot` or `alloc` (type `(mem, ptr(T))`) points to.
fn alloc_pointee(w: &World, ty: Type) -> Type {
    let p = w.types().components(ty).and_then(|c| c.get(1).copied());
    match p.map(|p| w.kind(p)) {
        Some(TypeKind::Ptr { pointee, .. }) => *pointee,
        _ => ty,
    }
}

/// The width and signedness of an index type.
fn int_of(w: &World, t: Type) -> (u32, bool) {
    match w.kind(t) {
        TypeKind::Int { bits, signed } => (*bits as u32, *signed),
        TypeKind::Bool => (1, false),
        _ => (64, false),
    }
}
