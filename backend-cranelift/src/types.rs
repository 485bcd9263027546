//! IR types as Cranelift values and memory.
//!
//! Cranelift has no aggregates: a value of a tuple, struct or sized array is its *leaves*,
//! the scalars it holds in memory order, each with its byte offset in the C layout (fields
//! aligned naturally, size rounded to the alignment: the layout LLVM gives the same types on
//! x86-64). `mem` has no leaves. `bool` is an `i8` holding 0 or 1, pointers and continuation
//! values are `i64`, and `f16` is kept as its 16 bits in an `i16` (arithmetic goes through
//! `f32`).

use crate::{internal, unsupported};
use cranelift_codegen::ir::types as cl;
use durin_diag::Diagnostic;
use durin_ir::{Type, TypeKind, World};
use rustc_hash::FxHashMap;
use std::rc::Rc;

/// How a type's values are held: scalars with their byte offsets, and the memory size.
#[derive(Debug)]
pub struct Shape {
    /// Cranelift type and byte offset of each leaf, in memory order.
    pub leaves: Vec<(cl::Type, u32)>,
    /// Size in memory, a multiple of `align`.
    pub size: u32,
    /// Alignment in memory.
    pub align: u32,
}

/// The shapes of a world's types, made on demand.
#[derive(Default)]
pub struct Types {
    cache: FxHashMap<Type, Rc<Shape>>,
}

fn round_up(x: u32, align: u32) -> u32 {
    x.div_ceil(align) * align
}

impl Types {
    /// The shape of `t`.
    pub fn shape(&mut self, w: &World, t: Type) -> Result<Rc<Shape>, Diagnostic> {
        if let Some(s) = self.cache.get(&t) {
            return Ok(s.clone());
        }
        let scalar = |ty: cl::Type| Shape {
            leaves: vec![(ty, 0)],
            size: ty.bytes(),
            align: ty.bytes(),
        };
        let s = match w.kind(t) {
            TypeKind::Mem => Shape {
                leaves: Vec::new(),
                size: 0,
                align: 1,
            },
            TypeKind::Bool => scalar(cl::I8),
            TypeKind::Int { bits, .. } => scalar(int_type(*bits as u32)),
            TypeKind::Float { bits: 16 } => scalar(cl::I16),
            TypeKind::Float { bits: 32 } => scalar(cl::F32),
            TypeKind::Float { .. } => scalar(cl::F64),
            TypeKind::Ptr { .. } | TypeKind::Cont(_) => scalar(cl::I64),
            TypeKind::Tuple(_) | TypeKind::Struct(_) => {
                let comps = w.types().components(t).unwrap_or_default().to_vec();
                let mut s = Shape {
                    leaves: Vec::new(),
                    size: 0,
                    align: 1,
                };
                for c in comps {
                    let cs = self.shape(w, c)?;
                    let at = round_up(s.size, cs.align);
                    s.leaves
                        .extend(cs.leaves.iter().map(|&(ty, off)| (ty, at + off)));
                    s.size = at + cs.size;
                    s.align = s.align.max(cs.align);
                }
                s.size = round_up(s.size, s.align);
                s
            }
            TypeKind::Array { elem, len: Some(n) } => {
                let es = self.shape(w, *elem)?;
                let n = u32::try_from(*n)
                    .ok()
                    .filter(|&n| n.checked_mul(es.size.max(1)).is_some())
                    .ok_or_else(|| unsupported(format!("an array of {n} elements")))?;
                let mut leaves = Vec::with_capacity(es.leaves.len() * n as usize);
                for i in 0..n {
                    leaves.extend(es.leaves.iter().map(|&(ty, off)| (ty, i * es.size + off)));
                }
                Shape {
                    leaves,
                    size: es.size * n,
                    align: es.align,
                }
            }
            TypeKind::Array { len: None, .. } => {
                return Err(unsupported(
                    "a value of an array type without a length (only pointers to it)",
                ))
            }
        };
        let s = Rc::new(s);
        self.cache.insert(t, s.clone());
        Ok(s)
    }

    /// The leaves (`start..start + count`) and byte offset of component `i` of a tuple,
    /// struct or sized array of type `t`.
    pub fn component(
        &mut self,
        w: &World,
        t: Type,
        i: u64,
    ) -> Result<(usize, usize, u32), Diagnostic> {
        if let TypeKind::Array { elem, .. } = w.kind(t) {
            let es = self.shape(w, *elem)?;
            let n = es.leaves.len();
            return Ok((i as usize * n, n, i as u32 * es.size));
        }
        let comps = w
            .types()
            .components(t)
            .ok_or_else(|| internal("a component of a scalar"))?
            .to_vec();
        let (mut start, mut at) = (0, 0);
        for (j, &c) in comps.iter().enumerate() {
            let cs = self.shape(w, c)?;
            at = round_up(at, cs.align);
            if j as u64 == i {
                return Ok((start, cs.leaves.len(), at));
            }
            start += cs.leaves.len();
            at += cs.size;
        }
        Err(internal("component index out of range"))
    }

    /// What a pointer to `t` indexes: the element's shape for arrays (of either kind).
    pub fn pointee(&mut self, w: &World, t: Type) -> Result<Rc<Shape>, Diagnostic> {
        match w.kind(t) {
            TypeKind::Array { elem, .. } => self.shape(w, *elem),
            _ => self.shape(w, t),
        }
    }
}

/// The Cranelift integer type of `bits` bits (`bool` is an `i8`).
pub fn int_type(bits: u32) -> cl::Type {
    match bits {
        1 | 8 => cl::I8,
        16 => cl::I16,
        32 => cl::I32,
        _ => cl::I64,
    }
}
