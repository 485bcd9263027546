//! What the back end sees of a first-order program: the live top-level functions, the
//! imports (continuations without a body) and the globals, in a deterministic order, and
//! the shape of each function type.

use crate::analysis::free::FreeParams;
use crate::analysis::schedule::Schedule;
use crate::analysis::scope::Scope;
use crate::{ArithOp, Def, Node, Type, TypeKind, World};
use rustc_hash::{FxHashMap, FxHashSet};

/// The live parts of a program.
pub struct Program {
    /// Top-level continuations with a body, in definition order.
    pub functions: Vec<Def>,
    /// Top-level continuations without a body, in definition order.
    pub imports: Vec<Def>,
    /// Globals, in definition order.
    pub globals: Vec<Def>,
    /// Which continuations are closed (use no parameter of another).
    pub free: FreeParams,
    /// For a function, the closed continuations that are blocks of it: each takes no
    /// continuation, is only jumped to (or branched to) and only from that function, so
    /// jumps to it are branches (a loop that uses nothing of its function is a loop of
    /// that function, not a function calling itself).
    pub blocks: FxHashMap<Def, Vec<Def>>,
    /// The continuations used as values (whose address a back end takes); the others are
    /// only ever jumped to, so a back end may give them a calling convention of its own.
    pub address_taken: FxHashSet<Def>,
}

impl Program {
    /// The scope of function `f`, its blocks included.
    pub fn scope(&self, w: &World, f: Def) -> Scope {
        let blocks = self.blocks.get(&f).map(Vec::as_slice).unwrap_or(&[]);
        Scope::compute_rooted(w, f, blocks, &self.free)
    }
}

/// Collects what the externals of `w` reach.
pub fn collect(w: &World) -> Program {
    let mut seen: FxHashSet<Def> = FxHashSet::default();
    let mut stack: Vec<Def> = w.externals().collect();
    let (mut conts, mut globals) = (Vec::new(), Vec::new());
    while let Some(d) = stack.pop() {
        if !seen.insert(d) {
            continue;
        }
        match w.node(d) {
            Node::Cont => {
                conts.push(d);
                if let Some((callee, args)) = w.body(d) {
                    stack.push(callee);
                    stack.extend_from_slice(args);
                }
            }
            Node::Global { .. } => {
                globals.push(d);
                stack.extend_from_slice(w.ops(d));
            }
            Node::Param(_) => stack.push(w.ops(d)[0]),
            _ => stack.extend_from_slice(w.ops(d)),
        }
    }
    conts.sort();
    globals.sort();
    let free = FreeParams::compute_over(w, conts.clone());
    let (mut functions, mut imports) = (Vec::new(), Vec::new());
    for &k in &conts {
        if !free.is_closed(k) {
            continue;
        }
        if w.body(k).is_some() {
            functions.push(k);
        } else {
            imports.push(k);
        }
    }
    let (blocks, address_taken) = absorb_blocks(w, &conts, &mut functions, &free);
    Program {
        functions,
        imports,
        globals,
        free,
        blocks,
        address_taken,
    }
}

/// Moves the closed continuations among `functions` that can be blocks of another function
/// into that function's block list (see [`Program::blocks`]); returns those lists and the
/// continuations used as values.
fn absorb_blocks(
    w: &World,
    conts: &[Def],
    functions: &mut Vec<Def>,
    free: &FreeParams,
) -> (FxHashMap<Def, Vec<Def>>, FxHashSet<Def>) {
    // Who jumps to each continuation, and which are used as values.
    let mut jumpers: FxHashMap<Def, Vec<Def>> = FxHashMap::default();
    let mut valued: FxHashSet<Def> = FxHashSet::default();
    let mut seen: FxHashSet<Def> = FxHashSet::default();
    let mut value_uses = |root: Def, valued: &mut FxHashSet<Def>| {
        let mut stack = vec![root];
        while let Some(d) = stack.pop() {
            match w.node(d) {
                Node::Cont => {
                    valued.insert(d);
                }
                // A parameter's operand is its continuation: no use of it.
                Node::Param(_) => {}
                n if n.is_nominal() => {}
                _ if seen.insert(d) => stack.extend_from_slice(w.ops(d)),
                _ => {}
            }
        }
    };
    for &c in conts {
        let Some((callee, args)) = w.body(c) else {
            continue;
        };
        let targets: Vec<Def> = match w.node(callee) {
            Node::Cont => vec![callee],
            Node::Select if w.ops(callee)[1..].iter().all(|&t| w.node(t) == Node::Cont) => {
                value_uses(w.ops(callee)[0], &mut valued);
                w.ops(callee)[1..].to_vec()
            }
            _ => {
                value_uses(callee, &mut valued);
                Vec::new()
            }
        };
        for t in targets {
            jumpers.entry(t).or_default().push(c);
        }
        for &a in args {
            value_uses(a, &mut valued);
        }
    }
    let candidate = |k: Def| {
        !w.is_external(k)
            && !valued.contains(&k)
            && !param_types(w, k)
                .iter()
                .any(|&t| matches!(w.kind(t), TypeKind::Cont(_)))
    };
    // The function each continuation belongs to, growing as blocks are absorbed: a closed
    // continuation is its own; another belongs where the owner of a parameter it uses
    // does (one pass over the free parameters, not a scope per function).
    let mut owner: FxHashMap<Def, Def> = FxHashMap::default();
    for &k in conts {
        let mut chain = vec![k];
        let root = loop {
            let c = *chain.last().expect("not empty");
            if let Some(&o) = owner.get(&c) {
                break Some(o);
            }
            match free.owners(c).first() {
                None => break Some(c),
                Some(&up) => {
                    if chain.contains(&up) {
                        break None;
                    }
                    chain.push(up);
                }
            }
        };
        if let Some(o) = root {
            for c in chain {
                owner.insert(c, o);
            }
        }
    }
    let mut blocks: FxHashMap<Def, Vec<Def>> = FxHashMap::default();
    let mut absorbed: FxHashSet<Def> = FxHashSet::default();
    let mut changed = true;
    while changed {
        changed = false;
        for &b in functions.iter() {
            if absorbed.contains(&b) || !candidate(b) {
                continue;
            }
            // Every jumper's owner must be known, and one function other than `b`.
            let owners: Option<FxHashSet<Def>> = jumpers
                .get(&b)
                .into_iter()
                .flatten()
                .map(|c| owner.get(c).copied())
                .filter(|&o| o != Some(b))
                .collect();
            let f = match owners {
                Some(os) if os.len() == 1 => *os.iter().next().expect("one"),
                _ => continue,
            };
            // `b`, what it owns and the blocks it absorbed now belong to `f`.
            absorbed.insert(b);
            for o in owner.values_mut() {
                if *o == b {
                    *o = f;
                }
            }
            let mut moved = blocks.remove(&b).unwrap_or_default();
            moved.insert(0, b);
            blocks.entry(f).or_default().extend(moved);
            changed = true;
        }
    }
    functions.retain(|k| !absorbed.contains(k));
    (blocks, valued)
}

/// The shape of a continuation type called as a function: which parameters carry values,
/// and what the return point receives.
pub struct Signature {
    /// Indices of the parameters passed as values (not `mem`, not the return point).
    pub params: Vec<usize>,
    /// Types of those parameters.
    pub param_types: Vec<Type>,
    /// The return point's parameter types, if the last parameter is one.
    pub ret: Option<Vec<Type>>,
}

impl Signature {
    /// The signature of continuation type `t`; `None` if a parameter other than the last
    /// is a continuation (not a function a back end can call).
    pub fn of(w: &World, t: Type) -> Option<Signature> {
        let ps = w.types().cont_params(t)?;
        let ret = match ps.last().map(|&r| w.kind(r)) {
            Some(TypeKind::Cont(rs)) => Some(rs.to_vec()),
            _ => None,
        };
        let n = ps.len() - ret.is_some() as usize;
        let mut sig = Signature {
            params: Vec::new(),
            param_types: Vec::new(),
            ret,
        };
        for (i, &p) in ps[..n].iter().enumerate() {
            match w.kind(p) {
                TypeKind::Mem => {}
                TypeKind::Cont(_) => return None,
                _ => {
                    sig.params.push(i);
                    sig.param_types.push(p);
                }
            }
        }
        Some(sig)
    }

    /// The return point's value types (without `mem`).
    pub fn results(&self, w: &World) -> Vec<Type> {
        self.ret
            .iter()
            .flatten()
            .copied()
            .filter(|&t| !w.types().is_mem(t))
            .collect()
    }
}

/// The signature of a call's callee; the error says what no back end translates.
pub fn call_signature(w: &World, callee: Def) -> Result<Signature, &'static str> {
    Signature::of(w, w.type_of(callee))
        .ok_or("a call of a function that takes a continuation other than its return point")
}

/// Whether `d` is an integer division or remainder whose divisor may be zero.
pub fn divides_by_unknown(w: &World, d: Def) -> bool {
    if !matches!(w.node(d), Node::Arith(ArithOp::Div | ArithOp::Rem))
        || w.types().is_float(w.type_of(d))
    {
        return false;
    }
    let divisor = w.ops(d)[1];
    let mask = w.types().prim_bits(w.type_of(divisor)).unwrap_or(64);
    w.lit_bits(divisor)
        .is_none_or(|b| crate::semantics::mask(mask, b) == 0)
}

/// Whether computing `d` (which depends on no parameter) may divide by zero.
pub fn may_trap(w: &World, d: Def) -> bool {
    let mut stack = vec![d];
    let mut seen = FxHashSet::default();
    while let Some(x) = stack.pop() {
        if !seen.insert(x) || w.node(x).is_nominal() {
            continue;
        }
        if divides_by_unknown(w, x) {
            return true;
        }
        stack.extend_from_slice(w.ops(x));
    }
    false
}

/// The defs `schedule` places in the blocks `rpo` (in reverse post-order) that a host back
/// end computes where they are used, in each block that uses them, rather than where
/// they are placed: the divisions that may divide by zero and what is computed from one.
/// Placed at the nearest common dominator of their uses they could run where the program
/// does not compute them: above the `if` that guards the division, when one division
/// (one def, by hash-consing) is used in both arms of another `if`.
pub fn computed_where_used(w: &World, schedule: &Schedule, rpo: &[Def]) -> FxHashSet<Def> {
    let mut out = FxHashSet::default();
    // Operands come first: in a dominating block, or before in the same block.
    for &k in rpo {
        for &d in schedule.block(k) {
            if divides_by_unknown(w, d) || w.ops(d).iter().any(|o| out.contains(o)) {
                out.insert(d);
            }
        }
    }
    out
}

/// The message of an integer division by zero (native code's and the interpreter's).
pub const DIVISION_BY_ZERO: &str = "integer division by zero";

/// [`error_text`] of an integer division by zero at division `at` in continuation `k`.
pub fn division_error_text(
    w: &World,
    sources: Option<&durin_diag::SourceMap>,
    at: Def,
    k: Def,
) -> String {
    error_text(w, sources, at, k, DIVISION_BY_ZERO)
}

/// The text of run-time error `message` at def `at`, computed in continuation `k`: with
/// `sources` and a place for `at` (for an operand of it, or for the code of `k`), `place: message` (in library code specialized for a
/// call of the program, the program's call first); else `message`.
pub fn error_text(
    w: &World,
    sources: Option<&durin_diag::SourceMap>,
    at: Def,
    k: Def,
    message: &str,
) -> String {
    // The def's place, or its operands' (the divisor of a division), as the interpreter's;
    // else the place of the code that computes it.
    let (jump, expansion) = w.jump_place(k);
    let loc = (w
        .loc(at)
        .or_else(|| w.ops(at).iter().find_map(|&o| w.loc(o))))
    .or(jump);
    match (sources, loc) {
        (Some(m), Some(loc)) => {
            let expanded = w.expansion_calls(expansion);
            format!("{}: {message}", m.place_in_program(Some(loc), &expanded))
        }
        _ => message.to_string(),
    }
}

/// The defs of a block's schedule that a back end computes there: not parameters,
/// continuations or globals (values of their own), and not a `select` between blocks (the
/// jump that uses it becomes a conditional branch). `is_block` tells a block of the function
/// from a function.
pub fn computed_defs(w: &World, scheduled: &[Def], is_block: impl Fn(Def) -> bool) -> Vec<Def> {
    scheduled
        .iter()
        .copied()
        .filter(|&d| match w.node(d) {
            Node::Param(_) | Node::Cont | Node::Global { .. } => false,
            Node::Select => !w.ops(d)[1..].iter().any(|&o| is_block(o)),
            _ => true,
        })
        .collect()
}

/// Whether the function of `scope` may end in tail calls: it allocates nothing on its
/// stack (`slot`), whose memory a callee reached through a pointer would find freed.
pub fn may_tail_call(w: &World, scope: &Scope) -> bool {
    !scope.defs().iter().any(|&d| w.node(d) == Node::Slot)
}

/// Whether a jump from function `caller` to `callee` with `args` is a tail call: the
/// callee returns where the caller returns (its return point is the caller's own), or
/// neither returns. A back end makes such calls guaranteed tail calls where the two agree
/// on a calling convention, so that recursion through them runs in constant stack space.
pub fn is_tail_call(w: &World, caller: Def, callee: Def, args: &[Def]) -> bool {
    let returns = |k: Def| {
        param_types(w, k)
            .last()
            .is_some_and(|&t| matches!(w.kind(t), TypeKind::Cont(_)))
    };
    let Some(sig) = Signature::of(w, w.type_of(callee)) else {
        return false;
    };
    match (sig.ret.is_some(), args.last()) {
        (true, Some(&r)) => {
            w.node(r) == Node::Param(param_types(w, caller).len() as u32 - 1)
                && w.ops(r)[0] == caller
                && returns(caller)
        }
        (false, _) => !returns(caller),
        _ => false,
    }
}

/// What a back end does to get the value of a def it has not computed yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// A global: its address.
    Global,
    /// A continuation: the address of a top-level function, or (for a block) nothing the
    /// back end can give; see [`block_as_value`].
    Cont,
    /// Anything else: computed from operands that depend on no parameter.
    Computed,
}

/// Classifies `d` for a back end that has not computed it yet. The errors are broken
/// invariants of the back end's input (a parameter seen outside its function, or a value
/// that depends on a parameter used before it was computed); back ends report them as
/// internal errors.
pub fn operand(w: &World, d: Def) -> Result<Operand, String> {
    match w.node(d) {
        Node::Param(_) => Err(format!(
            "a parameter of `{}` used outside its function",
            w.name(w.ops(d)[0]).unwrap_or("?")
        )),
        Node::Global { .. } => Ok(Operand::Global),
        Node::Cont => Ok(Operand::Cont),
        _ if w.has_params(d) => Err(format!(
            "`{}` is used before it is computed",
            w.node(d).name()
        )),
        _ => Ok(Operand::Computed),
    }
}

/// What a host back end says of the block `k` used as a value.
pub fn block_as_value(w: &World, k: Def) -> String {
    format!(
        "the block `{}` used as a value (closure elimination leaves none)",
        w.name(k).unwrap_or("?")
    )
}

/// Whether the jump argument `a` passes control rather than a value: a block of the
/// function (`is_function`: whether `a` is a top-level function instead, whose address is a
/// value) or a parameter that is a return point. The jump decides what such arguments mean.
pub fn passes_control(w: &World, a: Def, is_function: bool) -> bool {
    match w.node(a) {
        Node::Cont => !is_function,
        Node::Param(_) => matches!(w.kind(w.type_of(a)), TypeKind::Cont(_)),
        _ => false,
    }
}

/// The pointee of the pointer in an effect's `(mem, ptr(T))` result type (`slot`, `alloc`);
/// `None` if `ty` is not of that form.
pub fn effect_pointee(w: &World, ty: Type) -> Option<Type> {
    let comps = w.types().components(ty)?;
    match comps.get(1).map(|&p| w.kind(p)) {
        Some(TypeKind::Ptr { pointee, .. }) => Some(*pointee),
        _ => None,
    }
}

/// The prelude's memory hints (`stdlib/core.art`): imports every back end and the
/// interpreter implement themselves, as instructions, not as calls of a runtime function.
/// The staging hints (`durin_shm_stage`, `durin_shm_keep`) are for the `stage` pass and do
/// nothing where they are left; `durin_launch_note` is for `--report launch` and does
/// nothing.
pub const MEMORY_HINTS: &[&str] = &[
    "durin_aligned",
    "durin_assume_aligned",
    "durin_store_stream_f32",
    "durin_store_fence",
    "durin_prefetch",
    "durin_shm_stage",
    "durin_shm_keep",
    "durin_launch_note",
];

/// Whether an `alloc` of result type `ty` reserves GPU shared memory (address space
/// `shared`): host back ends take it from the CPU kernel's block (`durin_cpu_shared`).
pub fn allocates_shared(w: &World, ty: Type) -> bool {
    let Some(comps) = w.types().components(ty) else {
        return false;
    };
    matches!(
        comps.get(1).map(|&p| w.kind(p)),
        Some(TypeKind::Ptr {
            space: crate::AddrSpace::Shared,
            ..
        })
    )
}

/// The parameter types of continuation `k`.
pub fn param_types(w: &World, k: Def) -> Vec<Type> {
    w.types()
        .cont_params(w.type_of(k))
        .map(|p| p.to_vec())
        .unwrap_or_default()
}

/// An index into an array on the way from an accessed pointer to its base: `lea(base,
/// index)` where `base` points to an array of `elem` (`len` elements, if fixed).
#[derive(Clone, Copy, Debug)]
pub struct ArrayIndex {
    /// The `lea`.
    pub lea: Def,
    /// The pointer to the array.
    pub base: Def,
    /// The index.
    pub index: Def,
    /// The element type.
    pub elem: Type,
    /// The length of a fixed-size array.
    pub len: Option<u64>,
}

/// The array indices a load or store through `ptr` goes through (a chain of `lea`s, from
/// the access outwards), for bounds checks.
pub fn array_indices(w: &World, ptr: Def) -> Vec<ArrayIndex> {
    let mut out = Vec::new();
    let mut p = ptr;
    while w.node(p) == Node::Lea {
        let (base, index) = (w.ops(p)[0], w.ops(p)[1]);
        let TypeKind::Ptr { pointee, .. } = *w.kind(w.type_of(base)) else {
            break;
        };
        if let TypeKind::Array { elem, len } = *w.kind(pointee) {
            out.push(ArrayIndex {
                lea: p,
                base,
                index,
                elem,
                len,
            });
        }
        p = base;
    }
    out
}
