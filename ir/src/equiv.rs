//! Alpha-equivalence of worlds: the same program up to the choice of keys and debug names.

use crate::def::{Def, Node};
use crate::world::World;
use rustc_hash::FxHashMap;

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
    use super::alpha_equivalent;
    use crate::World;

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
