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
//!   bitcasts the original; a pointer converted from a 64-bit integer converted from a
//!   pointer of its type is that pointer, and an integer converted from a pointer made from
//!   a literal is the literal's address (truncated);
//! - `extract` of a tuple, struct or array built in place, or of an `insert` at a literal
//!   index, takes the component; `extract` of bottom is bottom; `insert` into a built
//!   aggregate at a literal index rebuilds it;
//! - an array of `u8` literals is a byte string (`bytes`); `extract` of a byte string at a
//!   literal index is that byte, and `insert` of a literal byte into one is a byte string;
//! - `known(x)` is `true` when `x` depends on no parameter;
//! - `store(m, p, bot)` is `m`: storing an undefined value leaves memory undefined enough
//!   (an uninitialized `let mut a: [T * N];` stores nothing, however large `N`).
//!
//! Floats get no identities beyond folding: `x + 0.0` is not `x` for `x = -0.0`, and NaN
//! payloads must survive.

use crate::def::{ArithOp, CmpOp, Def, Node};
use crate::semantics::{self, mask, Prim};
use crate::types::{Type, TypeKind};
use crate::world::World;

/// The target a `select` of `targets` (true, false) takes on condition `cond`, where the
/// condition is a constant.
pub fn taken_target(w: &World, cond: Def, targets: [Def; 2]) -> Option<Def> {
    match w.lit_bits(cond)? {
        1 => Some(targets[0]),
        _ => Some(targets[1]),
    }
}

/// The normalized replacement of `node` of type `ty` over `ops`, if a rule applies.
pub(crate) fn normalize(w: &mut World, node: Node, ty: Type, ops: &[Def]) -> Option<Def> {
    match node {
        Node::Arith(op) => arith(w, op, ty, ops[0], ops[1]),
        Node::Cmp(op) => cmp(w, op, ops[0], ops[1]),
        Node::Select => taken_target(w, ops[0], [ops[1], ops[2]])
            .or_else(|| (ops[1] == ops[2]).then_some(ops[1])),
        Node::Conv => {
            let x = ops[0];
            let from = w.type_of(x);
            if from == ty {
                return Some(x);
            }
            // A pointer made from the 64-bit integer made from a pointer of its type.
            let inner = w.ops(x).first().copied();
            let wide = matches!(w.kind(from), TypeKind::Int { bits: 64, .. });
            if let (Node::Conv, true, Some(p)) = (w.node(x), wide, inner) {
                if w.type_of(p) == ty && matches!(w.kind(ty), TypeKind::Ptr { .. }) {
                    return Some(p);
                }
            }
            // The integer of a pointer made from a literal address.
            if let (Some(a), Some(Prim::Int { bits, .. })) = (w.lit_address(x), prim(w, ty)) {
                return Some(w.lit(ty, mask(bits as u32, a)));
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
        Node::Array => byte_string(w, ty, ops),
        Node::Insert => {
            let (agg, index, value) = (ops[0], ops[1], ops[2]);
            let i = w.lit_bits(index)? as usize;
            if let (Some(bytes), Some(v)) = (w.bytes_of(agg), w.lit_bits(value)) {
                // A byte string with one byte replaced by a literal is a byte string.
                if i >= bytes.len() {
                    return None;
                }
                let mut bytes = bytes.to_vec();
                bytes[i] = v as u8;
                return Some(w.bytes(&bytes));
            }
            let built = matches!(w.node(agg), Node::Tuple | Node::Struct | Node::Array);
            if !built || i >= w.ops(agg).len() {
                return None;
            }
            let mut elems = w.ops(agg).to_vec();
            elems[i] = value;
            Some(w.build(w.node(agg), ty, &elems))
        }
        Node::Known => (!w.has_params(ops[0])).then(|| w.lit_bool(true)),
        Node::Store => (w.node(ops[2]) == Node::Bottom).then_some(ops[0]),
        _ => None,
    }
}

/// An array of `u8` literals as the byte string it is (one representation of the value, and
/// one node instead of one operand per byte).
fn byte_string(w: &mut World, ty: Type, ops: &[Def]) -> Option<Def> {
    let TypeKind::Array { elem, .. } = *w.kind(ty) else {
        return None;
    };
    let is_u8 = matches!(
        w.kind(elem),
        TypeKind::Int {
            bits: 8,
            signed: false
        }
    );
    if !is_u8 || ops.is_empty() {
        return None;
    }
    let bytes: Vec<u8> = (ops.iter())
        .map(|&o| w.lit_bits(o).map(|b| b as u8))
        .collect::<Option<_>>()?;
    Some(w.bytes(&bytes))
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
        Node::Bytes(_) => {
            let i = usize::try_from(w.lit_bits(index)?).ok()?;
            let b = *w.bytes_of(agg)?.get(i)?;
            Some(w.lit(ty, u64::from(b)))
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

#[cfg(test)]
mod tests {
    use crate::text::{parse_with, print, ParseOptions};

    /// Parses `body` as the body of `@f(%m: mem, %x: i32, %y: i32, %b: bool, %g: f32,
    /// %r: cn(mem, T))` with normalization on and returns what the jump passes to `%r`.
    fn check(ty: &str, body: &str, expected: &str) {
        let src = format!(
            "extern cont @f(%m: mem, %x: i32, %y: i32, %b: bool, %g: f32, %r: cn(mem, {ty})) {{\n{body}\n}}"
        );
        let w = parse_with(&src, ParseOptions { normalize: true }).expect("test input parses");
        let out = print(&w);
        let jump = out.lines().find(|l| l.contains("jump")).expect("a jump");
        let result = jump
            .trim()
            .trim_start_matches("jump %r(%m, ")
            .trim_end_matches(')');
        let stmts: Vec<&str> = out
            .lines()
            .filter(|l| l.contains(" = "))
            .map(str::trim)
            .collect();
        let actual = if stmts.is_empty() {
            result.to_string()
        } else {
            format!("{}; {result}", stmts.join("; "))
        };
        assert_eq!(actual, expected, "\n{out}");
    }

    #[test]
    fn folds_literals() {
        check(
            "i32",
            "%a: i32 = add(2:i32, 3:i32)\njump %r(%m, %a)",
            "5:i32",
        );
        check(
            "i32",
            "%a: i32 = mul(65536:i32, 65536:i32)\njump %r(%m, %a)",
            "0:i32",
        );
        check(
            "bool",
            "%a: bool = lt(-1:i32, 0:i32)\njump %r(%m, %a)",
            "true",
        );
        check("u8", "%a: u8 = conv(300:i32)\njump %r(%m, %a)", "44:u8");
        check(
            "f32",
            "%a: f32 = div(1.0:f32, 0.0:f32)\njump %r(%m, %a)",
            "0x7f800000:f32",
        );
    }

    #[test]
    fn a_byte_of_a_byte_string_is_a_literal() {
        check(
            "u8",
            "%a: u8 = extract(b\"a\\xffc\", 1:i64)\njump %r(%m, %a)",
            "255:u8",
        );
        // Past the end, or at an index not known: kept.
        check(
            "u8",
            "%a: u8 = extract(b\"ab\", 2:i64)\njump %r(%m, %a)",
            "%a: u8 = extract(b\"ab\", 2:i64); %a",
        );
        check(
            "u8",
            "%i: i64 = conv(%x)\n%a: u8 = extract(b\"ab\", %i)\njump %r(%m, %a)",
            "%i: i64 = conv(%x); %a: u8 = extract(b\"ab\", %i); %a",
        );
    }

    #[test]
    fn an_array_of_byte_literals_is_a_byte_string() {
        check(
            "[u8 * 2]",
            "%a: [u8 * 2] = array(104:u8, 105:u8)\njump %r(%m, %a)",
            "b\"hi\"",
        );
        // Not all known, or not `u8`: an array.
        check(
            "[u8 * 2]",
            "%v: u8 = conv(%x)\n%a: [u8 * 2] = array(104:u8, %v)\njump %r(%m, %a)",
            "%v: u8 = conv(%x); %a: [u8 * 2] = array(104:u8, %v); %a",
        );
        check(
            "[i8 * 1]",
            "%a: [i8 * 1] = array(1:i8)\njump %r(%m, %a)",
            "%a: [i8 * 1] = array(1:i8); %a",
        );
    }

    #[test]
    fn a_byte_string_with_a_literal_byte_replaced_is_a_byte_string() {
        check(
            "[u8 * 3]",
            "%a: [u8 * 3] = insert(b\"abc\", 1:i64, 66:u8)\njump %r(%m, %a)",
            "b\"aBc\"",
        );
        // A byte not known, or past the end: kept.
        check(
            "[u8 * 2]",
            "%v: u8 = conv(%x)\n%a: [u8 * 2] = insert(b\"ab\", 0:i64, %v)\njump %r(%m, %a)",
            "%v: u8 = conv(%x); %a: [u8 * 2] = insert(b\"ab\", 0:i64, %v); %a",
        );
        check(
            "[u8 * 2]",
            "%a: [u8 * 2] = insert(b\"ab\", 2:i64, 66:u8)\njump %r(%m, %a)",
            "%a: [u8 * 2] = insert(b\"ab\", 2:i64, 66:u8); %a",
        );
    }

    #[test]
    fn a_store_of_bottom_is_no_store() {
        let src = "extern cont @f(%m: mem, %p: ptr([i32 * 100000000]), %q: ptr(i32), %r: cn(mem)) {
            %s: mem = store(%m, %p, bot:[i32 * 100000000])
            %t: mem = store(%s, %q, 1:i32)
            jump %r(%t)
        }";
        let w = parse_with(src, ParseOptions { normalize: true }).expect("test input parses");
        let out = print(&w);
        assert_eq!(out.matches("store(").count(), 1, "{out}");
        assert!(!out.contains("bot"), "{out}");
    }

    #[test]
    fn keeps_division_by_zero_to_trap() {
        check(
            "i32",
            "%a: i32 = div(1:i32, 0:i32)\njump %r(%m, %a)",
            "%a: i32 = div(1:i32, 0:i32); %a",
        );
    }

    #[test]
    fn integer_identities() {
        check("i32", "%a: i32 = add(0:i32, %x)\njump %r(%m, %a)", "%x");
        check("i32", "%a: i32 = mul(%x, 0:i32)\njump %r(%m, %a)", "0:i32");
        check("i32", "%a: i32 = sub(%x, %x)\njump %r(%m, %a)", "0:i32");
        check("i32", "%a: i32 = and(%x, -1:i32)\njump %r(%m, %a)", "%x");
        check("i32", "%a: i32 = shl(%x, 32:i32)\njump %r(%m, %a)", "%x");
        check("i32", "%a: i32 = rem(%x, 1:i32)\njump %r(%m, %a)", "0:i32");
    }

    #[test]
    fn commutative_operations_put_literals_right() {
        check(
            "i32",
            "%a: i32 = add(7:i32, %x)\njump %r(%m, %a)",
            "%a: i32 = add(%x, 7:i32); %a",
        );
        check(
            "i32",
            "%a: i32 = sub(7:i32, %x)\njump %r(%m, %a)",
            "%a: i32 = sub(7:i32, %x); %a",
        );
    }

    #[test]
    fn bool_identities() {
        check("bool", "%a: bool = and(%b, true)\njump %r(%m, %a)", "%b");
        check("bool", "%a: bool = or(%b, true)\njump %r(%m, %a)", "true");
        check("bool", "%a: bool = xor(%b, %b)\njump %r(%m, %a)", "false");
        check("bool", "%a: bool = le(%x, %x)\njump %r(%m, %a)", "true");
    }

    #[test]
    fn floats_only_fold() {
        check(
            "f32",
            "%a: f32 = add(%g, 0.0:f32)\njump %r(%m, %a)",
            "%a: f32 = add(%g, 0.0:f32); %a",
        );
        check(
            "bool",
            "%a: bool = eq(%g, %g)\njump %r(%m, %a)",
            "%a: bool = eq(%g, %g); %a",
        );
    }

    #[test]
    fn selects_and_aggregates() {
        check(
            "i32",
            "%a: i32 = select(true, %x, %y)\njump %r(%m, %a)",
            "%x",
        );
        check("i32", "%a: i32 = select(%b, %y, %y)\njump %r(%m, %a)", "%y");
        let tuple = "%t: (i32, i32) = tuple(%x, %y)";
        check(
            "i32",
            &format!("{tuple}\n%a: i32 = extract(%t, 1:i64)\njump %r(%m, %a)"),
            "%y",
        );
        check(
            "i32",
            &format!("{tuple}\n%u: (i32, i32) = insert(%t, 0:i64, 9:i32)\n%a: i32 = extract(%u, 0:i64)\njump %r(%m, %a)"),
            "9:i32",
        );
    }

    #[test]
    fn known_folds_for_constants_only() {
        check("bool", "%a: bool = known(3:i32)\njump %r(%m, %a)", "true");
        check(
            "bool",
            "%a: bool = known(%x)\njump %r(%m, %a)",
            "%a: bool = known(%x); %a",
        );
    }
}
