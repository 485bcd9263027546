//! Normalization: constant folding and algebraic identities, applied by the
//! [`World`](crate::World)'s constructors.
//!
//! Every rule preserves the value of the expression whenever evaluating the original does not
//! trap (a property test checks this against the interpreter). The rules:
//!
//! - literals: arithmetic, comparisons, conversions and bitcasts of literals fold (integer
//!   division by zero does not fold: it stays to trap at run time);
//! - commutative operations put a literal operand on the right;
//! - integers: `x + 0`, `x - 0`, `x * 1`, `x / 1`, `x | 0`, `x ^ 0`, `x << 0`, `x >> 0`,
//!   `x & -1` give `x`; `x * 0`, `x & 0`, `x % 1` give `0`; `x | -1` gives `-1`;
//!   `x - x` and `x ^ x` give `0`; `x & x` and `x | x` give `x`;
//! - `bool`: `x & true`, `x | false`, `x ^ false` give `x`; `x & false` gives `false`,
//!   `x | true` gives `true`; `x ^ x` gives `false`;
//! - comparisons of a non-float value with itself fold;
//! - `select(true, a, b)` is `a`, `select(false, a, b)` is `b`, `select(c, a, a)` is `a`;
//! - conversions and bitcasts to the operand's own type vanish; a bitcast of a bitcast
//!   bitcasts the original;
//! - `extract` of a tuple, struct or array built in place, or of an `insert` at a literal
//!   index, takes the component; `extract` of bottom is bottom; `insert` into a built
//!   aggregate at a literal index rebuilds it;
//! - `known(x)` is `true` when `x` depends on no parameter.
//!
//! Floats get no identities beyond folding: `x + 0.0` is not `x` for `x = -0.0`, and NaN
//! payloads must survive.

use crate::def::{ArithOp, CmpOp, Def, Node};
use crate::semantics::{self, mask, Prim};
use crate::types::Type;
use crate::world::World;

/// The normalized replacement of `node` of type `ty` over `ops`, if a rule applies.
pub(crate) fn normalize(w: &mut World, node: Node, ty: Type, ops: &[Def]) -> Option<Def> {
    match node {
        Node::Arith(op) => arith(w, op, ty, ops[0], ops[1]),
        Node::Cmp(op) => cmp(w, op, ops[0], ops[1]),
        Node::Select => match w.lit_bits(ops[0]) {
            Some(1) => Some(ops[1]),
            Some(_) => Some(ops[2]),
            None if ops[1] == ops[2] => Some(ops[1]),
            None => None,
        },
        Node::Conv => {
            let x = ops[0];
            let from = w.type_of(x);
            if from == ty {
                return Some(x);
            }
            let v = w.lit_bits(x)?;
            let (f, t) = (prim(w, from)?, prim(w, ty)?);
            Some(w.lit(ty, semantics::conv(f, t, v)))
        }
        Node::Bitcast => {
            let x = ops[0];
            if w.type_of(x) == ty {
                return Some(x);
            }
            if let Some(v) = w.lit_bits(x) {
                return Some(w.lit(ty, v));
            }
            if w.node(x) == Node::Bitcast {
                let inner = w.ops(x)[0];
                return Some(w.build(Node::Bitcast, ty, &[inner]));
            }
            None
        }
        Node::Extract => extract(w, ty, ops[0], ops[1]),
        Node::Insert => {
            let (agg, index, value) = (ops[0], ops[1], ops[2]);
            let i = w.lit_bits(index)? as usize;
            let built = matches!(w.node(agg), Node::Tuple | Node::Struct | Node::Array);
            if !built || i >= w.ops(agg).len() {
                return None;
            }
            let mut elems = w.ops(agg).to_vec();
            elems[i] = value;
            Some(w.build(w.node(agg), ty, &elems))
        }
        Node::Known => (!w.has_params(ops[0])).then(|| w.lit_bool(true)),
        _ => None,
    }
}

fn prim(w: &World, t: Type) -> Option<Prim> {
    Prim::of(w.kind(t))
}

fn arith(w: &mut World, op: ArithOp, ty: Type, a: Def, b: Def) -> Option<Def> {
    let p = prim(w, ty)?;
    if let (Some(x), Some(y)) = (w.lit_bits(a), w.lit_bits(b)) {
        return semantics::arith(op, p, x, y).ok().map(|v| w.lit(ty, v));
    }
    if op.is_commutative() && w.lit_bits(a).is_some() {
        return Some(w.build(Node::Arith(op), ty, &[b, a]));
    }
    match p {
        Prim::Float { .. } => None,
        Prim::Bool => {
            if a == b {
                return match op {
                    ArithOp::Xor => Some(w.lit_bool(false)),
                    _ => Some(a),
                };
            }
            let y = w.lit_bits(b)?;
            match (op, y) {
                (ArithOp::And, 1) | (ArithOp::Or, 0) | (ArithOp::Xor, 0) => Some(a),
                (ArithOp::And, 0) | (ArithOp::Or, 1) => Some(b),
                _ => None,
            }
        }
        Prim::Int { bits, .. } => {
            let bits = bits as u32;
            if a == b {
                return match op {
                    ArithOp::Sub | ArithOp::Xor => Some(w.lit(ty, 0)),
                    ArithOp::And | ArithOp::Or => Some(a),
                    _ => None,
                };
            }
            let y = w.lit_bits(b)?;
            let ones = mask(bits, u64::MAX);
            let zero_shift = matches!(op, ArithOp::Shl | ArithOp::Shr) && y % bits as u64 == 0;
            match (op, y) {
                (ArithOp::Add | ArithOp::Sub | ArithOp::Or | ArithOp::Xor, 0)
                | (ArithOp::Mul | ArithOp::Div, 1) => Some(a),
                _ if zero_shift => Some(a),
                (ArithOp::And, y) if y == ones => Some(a),
                (ArithOp::Mul | ArithOp::And, 0) | (ArithOp::Rem, 1) => Some(w.lit(ty, 0)),
                (ArithOp::Or, y) if y == ones => Some(b),
                _ => None,
            }
        }
    }
}

fn cmp(w: &mut World, op: CmpOp, a: Def, b: Def) -> Option<Def> {
    let p = prim(w, w.type_of(a))?;
    if let (Some(x), Some(y)) = (w.lit_bits(a), w.lit_bits(b)) {
        let r = semantics::cmp(op, p, x, y);
        return Some(w.lit_bool(r));
    }
    if a == b && !matches!(p, Prim::Float { .. }) {
        let r = matches!(op, CmpOp::Eq | CmpOp::Le | CmpOp::Ge);
        return Some(w.lit_bool(r));
    }
    None
}

fn extract(w: &mut World, ty: Type, agg: Def, index: Def) -> Option<Def> {
    match w.node(agg) {
        Node::Bottom => Some(w.bottom(ty)),
        Node::Tuple | Node::Struct | Node::Array => {
            let i = w.lit_bits(index)?;
            w.ops(agg).get(i as usize).copied()
        }
        Node::Insert => {
            let (inner, at, value) = (w.ops(agg)[0], w.ops(agg)[1], w.ops(agg)[2]);
            if at == index {
                return Some(value);
            }
            let (i, j) = (w.lit_bits(index)?, w.lit_bits(at)?);
            (i != j).then(|| w.build(Node::Extract, ty, &[inner, index]))
        }
        _ => None,
    }
}
