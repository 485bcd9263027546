//! Typing rules of the nodes: the one place that says which operands a node accepts and
//! what type it has. Constructors, the text parser and the verifier all use it.

use crate::def::{CmpOp, Def, Node};
use crate::types::{Type, TypeKind};
use crate::world::World;

fn show(w: &World, t: Type) -> String {
    w.types().display(t).to_string()
}

/// The value of a literal integer operand used as an index.
fn lit_index(w: &World, d: Def) -> Option<u64> {
    if w.types().is_int(w.type_of(d)) {
        w.lit_bits(d)
    } else {
        None
    }
}

/// The type of component `index` of an aggregate of type `agg`.
fn component(w: &World, agg: Type, index: Def) -> Result<Type, String> {
    let ity = w.type_of(index);
    if !w.types().is_int(ity) {
        return Err(format!("index must be an integer, not {}", show(w, ity)));
    }
    match w.kind(agg) {
        TypeKind::Array { elem, len: Some(_) } => Ok(*elem),
        TypeKind::Tuple(_) | TypeKind::Struct(_) => {
            let i = lit_index(w, index)
                .ok_or("index into a tuple or struct must be an integer literal")?;
            let tys = w.types();
            (usize::try_from(i).ok())
                .and_then(|i| tys.component(agg, i))
                .ok_or_else(|| {
                    format!(
                        "index {i} out of range for {} (has {})",
                        show(w, agg),
                        tys.arity(agg).unwrap_or(0)
                    )
                })
        }
        _ => Err(format!(
            "{} is not a tuple, struct or definite array",
            show(w, agg)
        )),
    }
}

fn expect_mem(w: &World, d: Def, what: &str) -> Result<(), String> {
    if w.types().is_mem(w.type_of(d)) {
        Ok(())
    } else {
        Err(format!("{what} must be mem, not {}", show(w, w.type_of(d))))
    }
}

fn pointee(w: &World, d: Def) -> Result<Type, String> {
    match w.kind(w.type_of(d)) {
        TypeKind::Ptr { pointee, .. } => Ok(*pointee),
        _ => Err(format!(
            "expected a pointer, found {}",
            show(w, w.type_of(d))
        )),
    }
}

/// The common type of the two operands of a binary node.
fn same_operands(w: &World, node: Node, ops: &[Def]) -> Result<Type, String> {
    arity(node, ops, 2)?;
    let (a, b) = (w.type_of(ops[0]), w.type_of(ops[1]));
    if a != b {
        return Err(format!(
            "operands differ: {} and {}",
            show(w, a),
            show(w, b)
        ));
    }
    Ok(a)
}

fn arity(node: Node, ops: &[Def], n: usize) -> Result<(), String> {
    if ops.len() == n {
        Ok(())
    } else {
        Err(format!(
            "`{}` takes {n} operand(s), found {}",
            node.name(),
            ops.len()
        ))
    }
}

/// The type of structural `node` over `ops`. For nodes whose type the operands do not
/// determine (literals, bottom, conversions, slots, allocations, structs, arrays), `hint` is
/// required and checked; otherwise `hint`, if given, must equal the derived type.
pub fn infer(w: &World, node: Node, ops: &[Def], hint: Option<Type>) -> Result<Type, String> {
    let t = |d: Def| w.type_of(d);
    let tys = w.types();
    let need_hint = || hint.ok_or_else(|| format!("`{}` needs its type written", node.name()));
    let derived = match node {
        Node::Lit(_) => {
            arity(node, ops, 0)?;
            let ty = need_hint()?;
            tys.prim_bits(ty)
                .ok_or_else(|| format!("literal of non-primitive type {}", show(w, ty)))?;
            ty
        }
        Node::Bottom => {
            arity(node, ops, 0)?;
            need_hint()?
        }
        Node::Bytes(n) => {
            arity(node, ops, 0)?;
            let len = w
                .blob(n)
                .ok_or_else(|| format!("no blob number {n}"))?
                .len() as u64;
            let ty = need_hint()?;
            let ok = matches!(*tys.kind(ty), TypeKind::Array { elem, len: Some(l) }
                if l == len && matches!(*tys.kind(elem), TypeKind::Int { bits: 8, .. }));
            if !ok {
                return Err(format!("{} is not an array of {len} bytes", show(w, ty)));
            }
            ty
        }
        Node::Launch => {
            arity(node, ops, 0)?;
            need_hint()?
        }
        Node::Param(i) => {
            arity(node, ops, 1)?;
            let ps = tys
                .cont_params(t(ops[0]))
                .ok_or("param of a non-continuation")?;
            *ps.get(i as usize)
                .ok_or_else(|| format!("no parameter {i}"))?
        }
        Node::Cont | Node::Global { .. } => return Err("nominal defs are not built".into()),
        Node::Arith(op) => {
            let a = same_operands(w, node, ops)?;
            let ok = match tys.kind(a) {
                TypeKind::Int { .. } => true,
                TypeKind::Float { .. } => op.is_float_op(),
                TypeKind::Bool => op.is_bool_op(),
                _ => false,
            };
            if !ok {
                return Err(format!("`{}` does not apply to {}", op.name(), show(w, a)));
            }
            a
        }
        Node::Cmp(op) => {
            let a = same_operands(w, node, ops)?;
            let ptr_eq =
                matches!(tys.kind(a), TypeKind::Ptr { .. }) && matches!(op, CmpOp::Eq | CmpOp::Ne);
            if tys.prim_bits(a).is_none() && !ptr_eq {
                return Err(format!("cannot compare values of type {}", show(w, a)));
            }
            Type::BOOL
        }
        Node::Select => {
            arity(node, ops, 3)?;
            if !tys.is_bool(t(ops[0])) {
                return Err(format!(
                    "condition must be bool, not {}",
                    show(w, t(ops[0]))
                ));
            }
            if t(ops[1]) != t(ops[2]) {
                let (a, b) = (show(w, t(ops[1])), show(w, t(ops[2])));
                return Err(format!("alternatives differ: {a} and {b}"));
            }
            t(ops[1])
        }
        Node::Conv => {
            arity(node, ops, 1)?;
            let to = need_hint()?;
            let from = t(ops[0]);
            // Numbers and bool into each other; a pointer into an integer and back.
            let ptr = |x: Type| matches!(tys.kind(x), TypeKind::Ptr { .. });
            let int = |x: Type| matches!(tys.kind(x), TypeKind::Int { .. });
            let prims = tys.prim_bits(to).is_some() && tys.prim_bits(from).is_some();
            if !prims && !(ptr(from) && int(to)) && !(int(from) && ptr(to)) {
                let (a, b) = (show(w, from), show(w, to));
                return Err(format!("cannot convert {a} to {b}"));
            }
            to
        }
        Node::Bitcast => {
            arity(node, ops, 1)?;
            let to = need_hint()?;
            let from = t(ops[0]);
            let both_ptr = matches!(tys.kind(from), TypeKind::Ptr { .. })
                && matches!(tys.kind(to), TypeKind::Ptr { .. });
            let same_width = !tys.is_bool(from)
                && !tys.is_bool(to)
                && tys.prim_bits(from).is_some()
                && tys.prim_bits(from) == tys.prim_bits(to);
            if !both_ptr && !same_width {
                let (a, b) = (show(w, from), show(w, to));
                return Err(format!("cannot bitcast {a} to {b}"));
            }
            to
        }
        Node::Tuple => {
            let elems: Vec<Type> = ops.iter().map(|&d| t(d)).collect();
            w.types()
                .intern_lookup(&TypeKind::Tuple(elems.into()))
                .ok_or("tuple type missing")?
        }
        Node::Struct => {
            let ty = need_hint()?;
            let decl = tys
                .struct_decl(ty)
                .ok_or_else(|| format!("{} is not a struct", show(w, ty)))?;
            if decl.fields.len() != ops.len() {
                return Err(format!(
                    "{} has {} fields, found {}",
                    decl.name,
                    decl.fields.len(),
                    ops.len()
                ));
            }
            for ((name, fty), &d) in decl.fields.iter().zip(ops) {
                if *fty != t(d) {
                    let (a, b) = (show(w, *fty), show(w, t(d)));
                    return Err(format!("field `{name}` is {a}, found {b}"));
                }
            }
            ty
        }
        Node::Array => {
            let ty = need_hint()?;
            match *tys.kind(ty) {
                TypeKind::Array { elem, len: Some(n) } if n == ops.len() as u64 => {
                    if let Some(&d) = ops.iter().find(|&&d| t(d) != elem) {
                        let (a, b) = (show(w, elem), show(w, t(d)));
                        return Err(format!("array element must be {a}, found {b}"));
                    }
                    ty
                }
                _ => {
                    return Err(format!(
                        "{} is not an array of {} elements",
                        show(w, ty),
                        ops.len()
                    ))
                }
            }
        }
        Node::Extract => {
            arity(node, ops, 2)?;
            component(w, t(ops[0]), ops[1])?
        }
        Node::Insert => {
            arity(node, ops, 3)?;
            let c = component(w, t(ops[0]), ops[1])?;
            if c != t(ops[2]) {
                let (a, b) = (show(w, c), show(w, t(ops[2])));
                return Err(format!("inserted value must be {a}, found {b}"));
            }
            t(ops[0])
        }
        Node::Lea => {
            arity(node, ops, 2)?;
            let TypeKind::Ptr { pointee, space } = *tys.kind(t(ops[0])) else {
                return Err(format!("expected a pointer, found {}", show(w, t(ops[0]))));
            };
            let elem = match *tys.kind(pointee) {
                TypeKind::Array { elem, .. } => {
                    if !tys.is_int(t(ops[1])) {
                        return Err("array index must be an integer".into());
                    }
                    elem
                }
                _ => component(w, pointee, ops[1])?,
            };
            w.types()
                .intern_lookup(&TypeKind::Ptr {
                    pointee: elem,
                    space,
                })
                .ok_or_else(|| "pointer type missing: build it with ty_ptr first".to_string())?
        }
        Node::Slot | Node::Alloc => {
            arity(node, ops, if node == Node::Slot { 1 } else { 2 })?;
            expect_mem(w, ops[0], "operand 0")?;
            if node == Node::Alloc && !tys.is_int(t(ops[1])) {
                return Err("allocation count must be an integer".into());
            }
            let ty = need_hint()?;
            let ok = match tys.kind(ty) {
                TypeKind::Tuple(ts) if ts.len() == 2 && tys.is_mem(ts[0]) => {
                    match tys.kind(ts[1]) {
                        TypeKind::Ptr { pointee, .. } => {
                            let indef =
                                matches!(tys.kind(*pointee), TypeKind::Array { len: None, .. });
                            indef == (node == Node::Alloc)
                        }
                        _ => false,
                    }
                }
                _ => false,
            };
            if !ok {
                let want = if node == Node::Slot {
                    "(mem, ptr(T))"
                } else {
                    "(mem, ptr([T]))"
                };
                return Err(format!(
                    "`{}` has type {want}, not {}",
                    node.name(),
                    show(w, ty)
                ));
            }
            ty
        }
        Node::Load => {
            arity(node, ops, 2)?;
            expect_mem(w, ops[0], "operand 0")?;
            let v = pointee(w, ops[1])?;
            if matches!(tys.kind(v), TypeKind::Array { len: None, .. }) {
                return Err("cannot load an indefinite array".into());
            }
            let m = Type::MEM;
            tys.intern_lookup(&TypeKind::Tuple(Box::new([m, v])))
                .ok_or_else(|| format!("type (mem, {}) missing: build it first", show(w, v)))?
        }
        Node::Store => {
            arity(node, ops, 3)?;
            expect_mem(w, ops[0], "operand 0")?;
            let v = pointee(w, ops[1])?;
            if v != t(ops[2]) {
                let (a, b) = (show(w, v), show(w, t(ops[2])));
                return Err(format!("stored value must be {a}, found {b}"));
            }
            t(ops[0])
        }
        Node::Known => {
            arity(node, ops, 1)?;
            Type::BOOL
        }
        Node::Run | Node::Hlt => {
            arity(node, ops, 1)?;
            t(ops[0])
        }
    };
    match hint {
        Some(h) if h != derived => Err(format!(
            "`{}` has type {}, not {}",
            node.name(),
            show(w, derived),
            show(w, h)
        )),
        _ => Ok(derived),
    }
}

/// Checks that `callee(args)` is a well-typed jump.
pub fn check_jump(w: &World, callee: Def, args: &[Def]) -> Result<(), String> {
    let ct = w.type_of(callee);
    let Some(params) = w.types().cont_params(ct) else {
        return Err(format!(
            "callee of type {} is not a continuation",
            show(w, ct)
        ));
    };
    if params.len() != args.len() {
        return Err(format!(
            "callee takes {} argument(s), found {}",
            params.len(),
            args.len()
        ));
    }
    for (i, (&p, &a)) in params.iter().zip(args).enumerate() {
        if p != w.type_of(a) {
            let (pt, at) = (show(w, p), show(w, w.type_of(a)));
            return Err(format!("argument {i} must be {pt}, found {at}"));
        }
    }
    Ok(())
}
