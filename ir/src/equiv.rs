//! Alpha-equivalence of worlds: the same program up to the choice of keys and debug names;
//! and of code within one world: the functions that are the same code ([`same_code`]), and
//! the functions that are the same code up to the values they take from the code around
//! them ([`open_code`]).

use crate::def::{Def, Node};
use crate::types::{Type, TypeKind};
use crate::world::World;
use rustc_hash::{FxHashMap, FxHashSet};

/// One step of the canonical walk of the code a function reaches (see [`same_code`]).
#[derive(Clone, PartialEq, Eq, Hash)]
enum Step {
    /// A def taken as itself: a constant without operands, a global or a continuation
    /// without a body (an import).
    Leaf(Def),
    /// The next def reached: its node, its type and how many operands follow.
    Def(Node, Type, u32),
    /// An operand: the number of a def reached before, in the order of the walk.
    Op(u32),
    /// The next def reached is a value of the code around (see [`open_code`]) of this type.
    Hole(Type),
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
    let mut walk = Walk::from(entry);
    let mut i = 0;
    while let Some(&d) = walk.order.get(i) {
        i += 1;
        walk.write(w, d, &leaf);
    }
    walk.steps
}

/// A canonical walk under way: the defs met, numbered in the order met, and the steps
/// written.
struct Walk {
    number: FxHashMap<Def, u32>,
    order: Vec<Def>,
    steps: Vec<Step>,
}

impl Walk {
    /// A walk from `entry` (number 0).
    fn from(entry: Def) -> Walk {
        let mut number = FxHashMap::default();
        number.insert(entry, 0);
        Walk {
            number,
            order: vec![entry],
            steps: Vec::new(),
        }
    }

    /// Writes `d` as its node, its type and its operands: a leaf (`leaf`) as itself, any
    /// other as its number (a def met for the first time joins `order`).
    fn write(&mut self, w: &World, d: Def, leaf: &impl Fn(Def) -> bool) {
        let ops = w.ops(d);
        (self.steps).push(Step::Def(w.node(d), w.type_of(d), ops.len() as u32));
        for &o in ops {
            if leaf(o) {
                self.steps.push(Step::Leaf(o));
                continue;
            }
            let order = &mut self.order;
            let n = *self.number.entry(o).or_insert_with(|| {
                order.push(o);
                order.len() as u32 - 1
            });
            self.steps.push(Step::Op(n));
        }
    }
}

/// The code a function runs, up to the values it takes from the code around it: the key
/// of [`open_code`].
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct OpenForm(Vec<Step>);

/// A function's code with the values it takes from the code around it set apart (see
/// [`open_code`]).
pub struct OpenCode {
    /// Equal for two functions exactly when each is the other's code with its own holes.
    pub form: OpenForm,
    /// The values of the code around, in the order the form numbers them.
    pub holes: Vec<Def>,
    /// The continuations the code is made of, the entry first: those to copy for a
    /// function that takes the holes as parameters.
    pub conts: Vec<Def>,
}

/// How a def reached from a function depends on parameters.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// On none: a constant.
    Static,
    /// Only on parameters of continuations the code does not contain: the code around's.
    Around,
    /// On the code's own parameters, or a continuation of the code.
    Inner,
}

/// The code `entry` (a continuation with a body) reaches, with the *holes* set apart: the
/// largest values of the code around that it uses, each computed from parameters of
/// continuations the code does not contain and from constants only. The code is made of
/// `entry` and the continuations with bodies it reaches through operands (imports,
/// constants and globals are taken as themselves); parameters of other continuations are
/// the code around's. (Closed functions are code too, not taken as themselves: partial
/// evaluation makes a copy of a library's lambda for each call it specializes.) Tuples,
/// structs, arrays and the compile-time markers of the code around are taken apart into
/// their components (a constant in them stays visible), never a hole.
///
/// Two functions with the same [`OpenCode::form`] are each other's code with their own
/// holes: a function taking the holes as parameters, made once, is both. `None` when a hole
/// could not be a parameter of a kernel: the memory token or a value holding a
/// continuation (a closure, a block of the code around).
pub fn open_code(w: &World, entry: Def) -> Option<OpenCode> {
    let leaf = |d: Def| {
        let node = w.node(d);
        d != entry
            && (w.ops(d).is_empty()
                || matches!(node, Node::Global { .. })
                || (node == Node::Cont && w.body(d).is_none()))
    };
    // The code's continuations, and every def reached, operands before their users (a
    // parameter's continuation is not followed: it is reached only where used itself).
    let mut conts = FxHashSet::default();
    let mut post = Vec::new();
    let mut seen = FxHashSet::default();
    let mut stack = vec![(entry, false)];
    while let Some((d, expanded)) = stack.pop() {
        if expanded {
            post.push(d);
            continue;
        }
        if !seen.insert(d) {
            continue;
        }
        stack.push((d, true));
        if leaf(d) || matches!(w.node(d), Node::Param(_)) {
            continue;
        }
        if w.node(d) == Node::Cont {
            conts.insert(d);
        }
        for &o in w.ops(d) {
            if !seen.contains(&o) {
                stack.push((o, false));
            }
        }
    }
    // Operands come first in `post`, but for a continuation the walk is still inside
    // (a cycle): continuations and parameters are classified by `conts` alone.
    let mut reach: FxHashMap<Def, Reach> = FxHashMap::default();
    let direct = |d: Def| match w.node(d) {
        Node::Cont if conts.contains(&d) => Some(Reach::Inner),
        Node::Param(_) if conts.contains(&w.ops(d)[0]) => Some(Reach::Inner),
        Node::Param(_) => Some(Reach::Around),
        _ if leaf(d) => Some(Reach::Static),
        _ => None,
    };
    for &d in &post {
        let r = direct(d).unwrap_or_else(|| {
            (w.ops(d).iter())
                .map(|o| {
                    reach
                        .get(o)
                        .copied()
                        .or_else(|| direct(*o))
                        .unwrap_or(Reach::Inner)
                })
                .max_by_key(|r| *r as u8)
                .unwrap_or(Reach::Static)
        });
        reach.insert(d, r);
    }
    let apart = |d: Def| {
        matches!(
            w.node(d),
            Node::Tuple
                | Node::Struct
                | Node::Array
                | Node::Insert
                | Node::Known
                | Node::Run
                | Node::Hlt
        )
    };
    let mut walk = Walk::from(entry);
    let mut holes = Vec::new();
    let mut code = Vec::new();
    let mut i = 0;
    while let Some(&d) = walk.order.get(i) {
        i += 1;
        if reach[&d] == Reach::Around && !apart(d) {
            if !passable(w, w.type_of(d)) {
                return None;
            }
            walk.steps.push(Step::Hole(w.type_of(d)));
            holes.push(d);
            continue;
        }
        if w.node(d) == Node::Cont {
            code.push(d);
        }
        walk.write(w, d, &leaf);
    }
    Some(OpenCode {
        form: OpenForm(walk.steps),
        holes,
        conts: code,
    })
}

/// Whether a value of type `t` can be passed to a kernel: no memory token, no continuation
/// in it.
fn passable(w: &World, t: Type) -> bool {
    match w.kind(t) {
        TypeKind::Mem | TypeKind::Cont(_) => false,
        TypeKind::Array { elem, .. } => passable(w, *elem),
        TypeKind::Tuple(_) | TypeKind::Struct(_) => (w.types())
            .components(t)
            .unwrap_or_default()
            .into_iter()
            .all(|c| passable(w, c)),
        _ => true,
    }
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
    use super::{alpha_equivalent, open_code, same_code};
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

    /// A kernel `cn(mem, cn(mem))` that passes `value` and `(value, 7)` to `sink` (an import
    /// `cn(mem, i32, (i32, i32), cn(mem))`) through a local function of its own.
    fn kernel(w: &mut World, value: Def, sink: Def) -> Def {
        let mem = w.ty_mem();
        let i32t = w.ty_int(32, true);
        let ret_t = w.ty_cont(&[mem]);
        let k = w.cont(&[mem, ret_t], "kernel");
        let inner = w.cont(&[mem, i32t, ret_t], "inner");
        let (m, r) = (w.param(k, 0), w.param(k, 1));
        let three = w.lit_i32(3);
        let v = w.arith(ArithOp::Add, value, three);
        w.set_body(k, inner, &[m, v, r]);
        let (m2, x, r2) = (w.param(inner, 0), w.param(inner, 1), w.param(inner, 2));
        let seven = w.lit_i32(7);
        let pair = w.tuple(&[value, seven]);
        let y = w.arith(ArithOp::Mul, x, value);
        w.set_body(inner, sink, &[m2, y, pair, r2]);
        k
    }

    #[test]
    fn kernels_that_differ_in_the_hosts_values_are_the_same_open_code() {
        let mut w = World::new();
        let mem = w.ty_mem();
        let i32t = w.ty_int(32, true);
        let pair_t = w.ty_tuple(&[i32t, i32t]);
        let ret_t = w.ty_cont(&[mem]);
        let sink = w.cont(&[mem, i32t, pair_t, ret_t], "sink");
        let host = w.cont(&[mem, i32t, i32t], "host");
        let (a, b) = (w.param(host, 1), w.param(host, 2));
        let sum = w.arith(ArithOp::Add, a, b);
        let five = w.lit_i32(5);
        let three = w.lit_i32(3);
        let ks = [
            kernel(&mut w, a, sink),
            kernel(&mut w, b, sink),
            kernel(&mut w, sum, sink),
            kernel(&mut w, five, sink),
        ];
        let codes: Vec<_> = ks.iter().map(|&k| open_code(&w, k).unwrap()).collect();
        // A parameter of the host and a value computed from the host's parameters are
        // holes alike, each the largest the kernel uses (`value + 3`, and `value` in the
        // pair, taken apart, and in the product); the kernel's own local function is code,
        // copied with it.
        for (code, v) in codes.iter().zip([a, b, sum]) {
            let plus = w.arith(ArithOp::Add, v, three);
            assert_eq!(code.holes, [plus, v]);
        }
        assert!(codes[0].form == codes[1].form && codes[1].form == codes[2].form);
        assert_eq!(codes[0].conts.len(), 2);
        assert_eq!(codes[0].conts[0], ks[0]);
        // A constant is code: no hole, another form.
        assert!(codes[3].holes.is_empty());
        assert!(codes[3].form != codes[0].form);
        // The host's memory cannot be a kernel's parameter.
        let m = w.param(host, 0);
        let k = w.cont(&[mem, ret_t], "kernel");
        let r = w.param(k, 1);
        w.set_body(k, r, &[m]);
        assert!(open_code(&w, k).is_none());
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
