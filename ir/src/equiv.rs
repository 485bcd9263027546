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
        if a.node(x) != b.node(y) || ty(a, x) != ty(b, y) || ox.len() != oy.len() {
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
