//! Launch facts: what the host side of a kernel launch shows about the kernel it runs (its
//! place in the program, its constant block shape, which captured pointers come from the
//! program's own allocations and how far each reaches, which may alias), read by the
//! `stage` and `kernels` passes alike. Analyses only: nothing here changes a world, except
//! [`string_global`], which adds a constant.

use crate::rewrite::ScopeIndex;
use durin_diag::{SourceMap, Span};
use durin_ir::{AddrSpace, Def, Kernel, Launch, Node, TypeKind, World};

/// The place to name for launch `l`: the first of the launching continuation, the kernel
/// and the kernel's blocks that lies in the program rather than a library the compiler
/// brings (after inlining, the jump to the launch may come from a library function, and the
/// kernel from the library's closure around the program's loop body); failing those, the
/// first index or arithmetic the kernel's blocks compute in the program (the only other
/// defs with places after the passes).
pub(crate) fn launch_loc(
    w: &World,
    l: &Launch,
    sources: Option<&SourceMap>,
    index: &mut ScopeIndex,
) -> Option<Span> {
    let scope = index.reached_scope(w, l.kernel);
    let in_program = |s: &Span| sources.is_some_and(|m| !m.is_library(s.file));
    let candidates: Vec<Span> = [l.at, l.kernel]
        .into_iter()
        .chain(scope.iter().copied())
        .filter_map(|d| w.loc(d))
        .collect();
    if let Some(&s) = candidates.iter().find(|s| in_program(s)) {
        return Some(s);
    }
    // The operands of the blocks' bodies, breadth first, up to a bound.
    let mut seen = rustc_hash::FxHashSet::default();
    let mut queue: std::collections::VecDeque<Def> = (scope.iter())
        .filter_map(|&c| w.body(c))
        .flat_map(|(_, args)| args.iter().copied())
        .collect();
    while let Some(d) = queue.pop_front() {
        if seen.len() > 10_000 || !seen.insert(d) || w.node(d).is_nominal() {
            continue;
        }
        if let Some(s) = w.loc(d).filter(|s| in_program(s)) {
            return Some(s);
        }
        queue.extend(w.ops(d).iter().copied());
    }
    candidates.first().copied()
}

/// The block size of a launch when it is a constant `(x, y, z)`.
fn constant_block(w: &World, block: Def) -> Option<[u32; 3]> {
    if w.node(block) != Node::Tuple {
        return None;
    }
    let ops = w.ops(block);
    let mut out = [0u32; 3];
    for (o, &d) in out.iter_mut().zip(ops) {
        *o = u32::try_from(w.lit_bits(d)? as u32 as i32).ok()?;
    }
    (out.iter().all(|&x| x > 0) && out.iter().product::<u32>() <= 1024).then_some(out)
}

/// The parameters of return points that receive a fresh allocation (`anydsl_alloc` and
/// its kin): pointers that alias nothing allocated elsewhere, each with the size asked
/// for (bytes).
pub(crate) type Allocations = std::collections::HashMap<Def, Def>;

/// The [`Allocations`] of the code of `conts`.
pub(crate) fn allocation_results(w: &World, conts: &[Def]) -> Allocations {
    let mut out = Allocations::new();
    for &k in conts {
        let Some((callee, args)) = w.body(k) else {
            continue;
        };
        let allocates = w.node(callee) == Node::Cont
            && w.body(callee).is_none()
            && matches!(
                w.name(callee),
                Some("anydsl_alloc" | "anydsl_alloc_unified" | "anydsl_alloc_host")
            );
        // `(mem, device, size, return)`.
        if let (true, Some(&ret), Some(&size)) = (allocates, args.last(), args.get(2)) {
            if let Some(p) = w.param_if_built(ret, 1) {
                out.insert(p, size);
            }
        }
    }
    out
}

/// The value `d` is a cast of (through any number of casts), or `d`.
pub(crate) fn without_casts(w: &World, mut d: Def) -> Def {
    while w.node(d) == Node::Bitcast {
        d = w.ops(d)[0];
    }
    d
}

/// Where a pointer comes from, through casts and address arithmetic.
fn pointer_base(w: &World, mut d: Def) -> Def {
    while matches!(w.node(d), Node::Bitcast | Node::Lea)
        && matches!(w.kind(w.type_of(w.ops(d)[0])), TypeKind::Ptr { .. })
    {
        d = w.ops(d)[0];
    }
    d
}

/// What the launch shows of the values a kernel gets: for each, the allocation it points
/// into ([`allocation_ids`]) and the bytes from it to the allocation's end, where known.
pub(crate) struct Captured {
    pub(crate) ids: Vec<Option<usize>>,
    pub(crate) extents: Vec<Option<i64>>,
}

/// The kernel of launch `l` as a device code generator gets it, and what the launch shows
/// of its values.
pub(crate) fn launched_kernel(
    w: &World,
    l: &Launch,
    allocated: &Allocations,
) -> (Kernel, Captured) {
    let ids = allocation_ids(w, l, allocated);
    let kernel = Kernel {
        def: l.kernel,
        restrict: restrict_flags(w, l, &ids),
        block: constant_block(w, l.block),
    };
    // A pointer to the start of an allocation (through casts only) of a constant size.
    let extents = (l.captured.iter())
        .map(|&c| {
            let size = allocated.get(&without_casts(w, c))?;
            w.lit_bits(*size).map(|n| n as i64).filter(|&n| n > 0)
        })
        .collect();
    (kernel, Captured { ids, extents })
}

/// For each captured value: whether it is a pointer shown unaliased by every other pointer
/// the kernel gets. That holds only when every captured pointer points into an allocation
/// of the program's own (`ids`), each into a different one: a pointer of unknown origin (a
/// parameter, a loaded value) or one inside a captured aggregate could point anywhere, and
/// then no pointer is unaliased.
fn restrict_flags(w: &World, l: &Launch, ids: &[Option<usize>]) -> Vec<bool> {
    let is_ptr = |d: Def| matches!(w.kind(w.type_of(d)), TypeKind::Ptr { .. });
    let mut seen = std::collections::HashSet::new();
    let all_apart = l.captured.iter().zip(ids).all(|(&c, id)| match id {
        Some(id) => seen.insert(*id),
        None => !holds_pointer(w, w.type_of(c)),
    });
    l.captured.iter().map(|&c| all_apart && is_ptr(c)).collect()
}

/// For each captured value: the allocation it points into, numbered in the order met, when
/// it is a pointer into an allocation of the program's own (two pointers with different
/// numbers cannot alias).
fn allocation_ids(w: &World, l: &Launch, allocated: &Allocations) -> Vec<Option<usize>> {
    let mut bases: Vec<Def> = Vec::new();
    l.captured
        .iter()
        .map(|&c| {
            if !matches!(w.kind(w.type_of(c)), TypeKind::Ptr { .. }) {
                return None;
            }
            let b = pointer_base(w, c);
            if !allocated.contains_key(&b) {
                return None;
            }
            Some(bases.iter().position(|&x| x == b).unwrap_or_else(|| {
                bases.push(b);
                bases.len() - 1
            }))
        })
        .collect()
}

/// A constant NUL-terminated string, as a `ptr([u8])`.
pub(crate) fn string_global(w: &mut World, text: &str, name: &str) -> Def {
    let u8t = w.ty_int(8, false);
    let mut bytes = Vec::with_capacity(text.len() + 1);
    bytes.extend_from_slice(text.as_bytes());
    bytes.push(0);
    let arr = w.bytes(&bytes);
    let g = w.global(arr, false, name);
    let unsized_bytes = w.ty_array(u8t, None);
    let p = w.ty_ptr(unsized_bytes, AddrSpace::Generic);
    w.bitcast(p, g)
}

/// Whether values of type `t` are or hold a pointer.
pub(crate) fn holds_pointer(w: &World, t: durin_ir::Type) -> bool {
    match w.kind(t) {
        TypeKind::Ptr { .. } => true,
        TypeKind::Array { elem, .. } => holds_pointer(w, *elem),
        _ => w
            .types()
            .components(t)
            .is_some_and(|cs| cs.iter().any(|&c| holds_pointer(w, c))),
    }
}
