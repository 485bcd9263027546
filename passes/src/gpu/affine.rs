//! The one affine algebra of the GPU passes: polynomials with integer coefficients over
//! *atoms* (thread and block indices, values the same for every thread, values of the
//! host), in wrapping arithmetic. Footprints write each load's index as such a polynomial
//! (`threadIdx`, `blockIdx`, uniform atoms); staging compares two address computations as
//! polynomials of degree one over the values they add ([`same_value`]).

use durin_ir::{ArithOp, Def, Node, TypeKind, World};
use std::collections::BTreeMap;

/// A factor of a monomial.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Atom {
    /// `threadIdx` x, y, z.
    Tid(u8),
    /// `blockIdx` x, y, z.
    Bid(u8),
    /// A value that is the same for every thread.
    Uniform(Def),
    /// A value of the host's world that the launch computes the kernel's parameters from.
    Host(Def),
}

impl Atom {
    pub(crate) fn of_thread(self) -> bool {
        !matches!(self, Atom::Uniform(_) | Atom::Host(_))
    }
}

/// A polynomial: monomials (sorted atoms) with integer coefficients.
pub(crate) type Poly = BTreeMap<Vec<Atom>, i64>;

pub(crate) fn constant(c: i64) -> Poly {
    let mut p = Poly::new();
    if c != 0 {
        p.insert(Vec::new(), c);
    }
    p
}

pub(crate) fn atom(a: Atom) -> Poly {
    let mut p = Poly::new();
    p.insert(vec![a], 1);
    p
}

pub(crate) fn add(a: &Poly, b: &Poly, sign: i64) -> Poly {
    let mut out = a.clone();
    for (m, &c) in b {
        let e = out.entry(m.clone()).or_insert(0);
        *e = e.wrapping_add(sign.wrapping_mul(c));
        if *e == 0 {
            out.remove(m);
        }
    }
    out
}

pub(crate) fn mul(a: &Poly, b: &Poly) -> Result<Poly, String> {
    let mut out = Poly::new();
    for (ma, &ca) in a {
        for (mb, &cb) in b {
            let mut m: Vec<Atom> = ma.iter().chain(mb).copied().collect();
            if m.iter().filter(|a| a.of_thread()).count() > 1 {
                return Err("a product of two thread indices".into());
            }
            m.sort();
            let e = out.entry(m.clone()).or_insert(0);
            *e = e.wrapping_add(ca.wrapping_mul(cb));
            if *e == 0 {
                out.remove(&m);
            }
        }
    }
    Ok(out)
}

/// The literal `v` of `d`'s type as a signed number.
pub(crate) fn sign_extend(w: &World, d: Def, v: u64) -> i64 {
    match w.kind(w.type_of(d)) {
        TypeKind::Int { bits, signed: true } if *bits < 64 => {
            let s = 64 - *bits as u32;
            ((v << s) as i64) >> s
        }
        _ => v as i64,
    }
}

/// `d` as a polynomial of degree one over the values it adds, subtracts and multiplies by
/// literals (each such value is an atom [`Atom::Uniform`], whatever it depends on) plus a
/// constant.
pub(crate) fn linear(w: &World, d: Def) -> Poly {
    let mut p = Poly::new();
    linear_into(w, d, 1, &mut p);
    p
}

fn linear_into(w: &World, d: Def, scale: i64, p: &mut Poly) {
    let ops = w.ops(d);
    let lit = |x: Def| match w.node(x) {
        Node::Lit(v) => Some(sign_extend(w, x, v)),
        _ => None,
    };
    let mut term = |m: Vec<Atom>, c: i64| {
        let e = p.entry(m).or_insert(0);
        *e = e.wrapping_add(c);
    };
    match w.node(d) {
        Node::Lit(v) => term(Vec::new(), scale.wrapping_mul(sign_extend(w, d, v))),
        Node::Arith(ArithOp::Add) => {
            linear_into(w, ops[0], scale, p);
            linear_into(w, ops[1], scale, p);
        }
        Node::Arith(ArithOp::Sub) => {
            linear_into(w, ops[0], scale, p);
            linear_into(w, ops[1], scale.wrapping_neg(), p);
        }
        Node::Arith(ArithOp::Mul) if lit(ops[1]).is_some() => {
            let k = lit(ops[1]).unwrap_or(0);
            linear_into(w, ops[0], scale.wrapping_mul(k), p);
        }
        Node::Arith(ArithOp::Mul) if lit(ops[0]).is_some() => {
            let k = lit(ops[0]).unwrap_or(0);
            linear_into(w, ops[1], scale.wrapping_mul(k), p);
        }
        _ => term(vec![Atom::Uniform(d)], scale),
    }
}

/// Whether `a` and `b` (computations without memory or control) compute the same value:
/// the same def; integers whose [`linear`] forms have the same constant and terms of the
/// same coefficients over values that compute the same (compared the same way), modulo
/// the integers' width, as wrapping arithmetic does not care how a sum is grouped; or the
/// same operation of operands that compute the same values. `false` says nothing
/// (different, or not shown the same).
pub(crate) fn same_value(w: &World, a: Def, b: Def, depth: u32) -> bool {
    if a == b {
        return true;
    }
    if depth > 64 || w.type_of(a) != w.type_of(b) {
        return false;
    }
    let bits = match w.kind(w.type_of(a)) {
        TypeKind::Int { bits, .. } => Some(*bits as u32),
        _ => None,
    };
    // A sum or a multiple by a literal (what `linear` looks through).
    let affine = |d: Def| match w.node(d) {
        Node::Arith(ArithOp::Add | ArithOp::Sub) => true,
        Node::Arith(ArithOp::Mul) => w.ops(d).iter().any(|&o| matches!(w.node(o), Node::Lit(_))),
        _ => false,
    };
    if let Some(bits) = bits.filter(|_| affine(a) || affine(b)) {
        let mask = |v: i64| {
            if bits >= 64 {
                v
            } else {
                v & ((1i64 << bits) - 1)
            }
        };
        // The constant and the terms whose coefficient is not zero in `bits` bits.
        let split = |p: Poly| {
            let mut constant = 0;
            let mut terms: Vec<(Def, i64)> = Vec::new();
            for (m, c) in p {
                match m.as_slice() {
                    [] => constant = mask(c),
                    [Atom::Uniform(d)] if mask(c) != 0 => terms.push((*d, mask(c))),
                    _ => {}
                }
            }
            (constant, terms)
        };
        let ((ca, ta), (cb, mut tb)) = (split(linear(w, a)), split(linear(w, b)));
        if ca != cb || ta.len() != tb.len() {
            return false;
        }
        // Each term of one matches a term of the other with the same coefficient.
        for (d, c) in ta {
            let Some(i) = tb
                .iter()
                .position(|&(e, k)| k == c && same_value(w, d, e, depth + 1))
            else {
                return false;
            };
            tb.swap_remove(i);
        }
        return true;
    }
    let node = w.node(a);
    if node != w.node(b) || node.is_nominal() || matches!(node, Node::Param(_)) {
        return false;
    }
    let (oa, ob) = (w.ops(a), w.ops(b));
    oa.len() == ob.len()
        && oa
            .iter()
            .zip(ob)
            .all(|(&x, &y)| same_value(w, x, y, depth + 1))
}
