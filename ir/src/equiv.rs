//! Alpha-equivalence of worlds: the same program up to the choice of keys and debug names;
//! and of code within one world: the functions that are the same code ([`same_code`]).

use crate::def::{Def, Node};
use crate::types::Type;
use crate::world::World;
use rustc_hash::FxHashMap;

/// One step of the canonical walk of the code a function reaches (see [`same_code`]).
#[derive(PartialEq, Eq, Hash)]
enum Step {
    /// A def taken as itself: a constant without operands, a global or a continuation
    /// without a body (an import).
    Leaf(Def),
    /// The next def reached: its node, its type and how many operands follow.
    Def(Node, Type, u32),
    /// An operand: the number of a def reached before, in the order of the walk.
    Op(u32),
}

/// The canonical form of the code `entry` reaches through operands: its defs numbered in
/// the order a breadth-first walk meets them, each written as its node, its type and the
/// numbers of its operands. Two functions with the same form are the same graph up to the
/// choice of defs (and their names and places): the same code.
fn canonical(w: &World, entry: Def) -> Vec<Step> {
    let leaf = |d: Def| {
        let node = w.node(d);
        w.ops(d).is_empty()
            || matches!(node, Node::Global { .. })
            || (node == Node::Cont && w.body(d).is_none())
    };
    let mut number: FxHashMap<Def, u32> = FxHashMap::default();
    let mut order = vec![entry];
    number.insert(entry, 0);
    let mut steps = Vec::new();
    let mut i = 0;
    while let Some(&d) = order.get(i) {
        i += 1;
        let ops = w.ops(d);
        steps.push(Step::Def(w.node(d), w.type_of(d), ops.len() as u32));
        for &o in ops {
            if leaf(o) {
                steps.push(Step::Leaf(o));
                continue;
            }
            let n = *number.entry(o).or_insert_with(|| {
                order.push(o);
                order.len() as u32 - 1
            });
            steps.push(Step::Op(n));
        }
    }
    steps
}

/// For each function of `entries` (continuations with bodies), the index of the first
/// entry that is the same code: the same graph of defs from it, up to the choice of defs,
/// with the same constants, globals and imports. Kernels that partial evaluation made
/// apart from the same library code for different images are the same code.
pub fn same_code(w: &World, entries: &[Def]) -> Vec<usize> {
    let mut first: FxHashMap<Vec<Step>, usize> = FxHashMap::default();
    (entries.iter().enumerate())
        .map(|(i, &e)| *first.entry(canonical(w, e)).or_insert(i))
        .collect()
}

/// Checks that `a` and `b` hold the same program: nominals pair up in creation order, and
/// paired defs have the same node, the same type (structurally) and paired operands, with
/// the pairing a bijection. Returns a description of the first difference found.
pub fn alpha_equivalent(a: &World, b: &World) -> Result<(), String> {
    let (na, nb): (Vec<Def>, Vec<Def>) = (a.nominals().collect(), b.nominals().collect());
    if na.len() != nb.len() {
        return Err(format!("{} nominals against {}", na.len(), nb.len()));
    }
    let ty = |w: &World, d: Def| w.types().display(w.type_of(d)).to_string();
    let mut fwd: FxHashMap<Def, Def> = FxHashMap::default();
    let mut back: FxHashMap<Def, Def> = FxHashMap::default();
    let mut stack: Vec<(Def, Def)> = na.iter().copied().zip(nb.iter().copied()).collect();
    for (&x, &y) in na.iter().zip(&nb) {
        if a.is_external(x) != b.is_external(y) {
            return Err(format!("nominal {:?} differs in being external", a.name(x)));
        }
    }
    while let Some((x, y)) = stack.pop() {
        match (fwd.get(&x), back.get(&y)) {
            (Some(&y2), _) if y2 == y => continue,
            (None, None) => {}
            _ => return Err(format!("def {:?} pairs with two different defs", a.name(x))),
        }
        fwd.insert(x, y);
        back.insert(y, x);
        let (ox, oy) = (a.ops(x), b.ops(y));
        // Blobs are numbered per world: bytes compare by their contents.
        let same_node = match (a.node(x), b.node(y)) {
            (Node::Bytes(_), Node::Bytes(_)) => a.bytes_of(x) == b.bytes_of(y),
            (m, n) => m == n,
        };
        if !same_node || ty(a, x) != ty(b, y) || ox.len() != oy.len() {
            return Err(format!(
                "`{}: {}` against `{}: {}`",
                a.node(x).name(),
                ty(a, x),
                b.node(y).name(),
                ty(b, y)
            ));
        }
        if a.node(x) == Node::Cont && a.body(x).is_some() != b.body(y).is_some() {
            return Err("a continuation has a body in one world only".into());
        }
        stack.extend(ox.iter().copied().zip(oy.iter().copied()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{alpha_equivalent, same_code};
    use crate::{ArithOp, Def, World};

    /// A function `cn(i32, cn(i32))` that counts from its argument by `step` in a loop and
    /// calls `callee` (an import `cn(i32, cn(i32))`) at each turn: `f(x, ret)` jumps to
    /// `head(x)`, `head(i)` to `callee(i, next)`, `next(r)` to `head(r - step)`.
    fn counter(w: &mut World, step: i32, callee: Def) -> Def {
        let i32t = w.ty_int(32, true);
        let ret_t = w.ty_cont(&[i32t]);
        let f = w.cont(&[i32t, ret_t], "f");
        let head = w.cont(&[i32t], "head");
        let next = w.cont(&[i32t], "next");
        let x = w.param(f, 0);
        w.set_body(f, head, &[x]);
        let i = w.param(head, 0);
        w.set_body(head, callee, &[i, next]);
        let r = w.param(next, 0);
        let s = w.lit_i32(step);
        let r2 = w.arith(ArithOp::Sub, r, s);
        w.set_body(next, head, &[r2]);
        f
    }

    #[test]
    fn functions_built_apart_from_the_same_code_are_the_same_code() {
        let mut w = World::new();
        let i32t = w.ty_int(32, true);
        let ret_t = w.ty_cont(&[i32t]);
        let g = w.cont(&[i32t, ret_t], "g");
        let h = w.cont(&[i32t, ret_t], "h");
        let fs = [
            counter(&mut w, 1, g),
            counter(&mut w, 2, g),
            counter(&mut w, 1, g),
            counter(&mut w, 1, h),
            counter(&mut w, 2, g),
        ];
        assert_ne!(fs[0], fs[2]);
        assert_eq!(same_code(&w, &fs), [0, 1, 0, 3, 1]);
        // An operand in another place is other code: `next(r)` jumping to `head(step - r)`.
        let f = counter(&mut w, 1, g);
        let head = w.body(f).unwrap().0;
        let next = w.body(head).unwrap().1[1];
        let step = w.lit_i32(1);
        let r = w.param(next, 0);
        let swapped = w.arith(ArithOp::Sub, step, r);
        w.set_body(next, head, &[swapped]);
        assert_eq!(same_code(&w, &[fs[0], f]), [0, 1]);
    }

    /// A world with one global holding `text`, after making the byte strings `before`.
    fn holding(before: &[&[u8]], text: &[u8]) -> World {
        let mut w = World::new();
        for b in before {
            let _ = w.bytes(b);
        }
        let b = w.bytes(text);
        let _ = w.global(b, false, "g");
        w
    }

    /// Byte strings are numbered per world; equivalence compares their bytes.
    #[test]
    fn byte_strings_compare_by_their_bytes() {
        let a = holding(&[], b"x");
        assert_eq!(
            alpha_equivalent(&a, &holding(&[b"y".as_slice()], b"x")),
            Ok(())
        );
        assert!(alpha_equivalent(&a, &holding(&[b"x".as_slice()], b"y")).is_err());
    }
}
