//! How values are laid out in memory: C layout, as the native back ends lay them out.
//!
//! `bool` takes a byte, integers and floats their width, pointers and continuations 8
//! bytes; a tuple or struct places each component at the next multiple of its alignment
//! and is padded to a multiple of its largest alignment; a definite array is its elements
//! one after another. `sizeof` in the language, the interpreter's memory and the back ends
//! all use these numbers.

use crate::types::{Type, TypeKind};
use crate::world::World;

/// The size and alignment in bytes of a value of type `t` (`mem`, indefinite arrays and
/// other unsized types: size 0, alignment 1).
pub fn size_align(w: &World, t: Type) -> (u64, u64) {
    match w.kind(t) {
        TypeKind::Bool => (1, 1),
        TypeKind::Int { bits, .. } | TypeKind::Float { bits } => {
            let b = (*bits / 8) as u64;
            (b, b)
        }
        TypeKind::Ptr { .. } | TypeKind::Cont(_) => (8, 8),
        TypeKind::Array { elem, len } => {
            let (s, a) = size_align(w, *elem);
            (s.saturating_mul(len.unwrap_or(0)), a)
        }
        TypeKind::Tuple(_) | TypeKind::Struct(_) => {
            let parts = w.types().components(t).unwrap_or_default();
            let (size, align) = fields(w, &parts, |_, _| {});
            (size, align)
        }
        _ => (0, 1),
    }
}

/// The byte offset of each component of the tuple or struct type `t`.
pub fn field_offsets(w: &World, t: Type) -> Vec<u64> {
    let parts = w.types().components(t).unwrap_or_default();
    let mut offsets = Vec::with_capacity(parts.len());
    fields(w, &parts, |_, off| offsets.push(off));
    offsets
}

/// Lays out `parts` one after another; calls `at(i, offset)` for each; returns the padded
/// size and the alignment.
fn fields(w: &World, parts: &[Type], mut at: impl FnMut(usize, u64)) -> (u64, u64) {
    let (mut size, mut align) = (0u64, 1u64);
    for (i, &t) in parts.iter().enumerate() {
        let (s, a) = size_align(w, t);
        size = size.div_ceil(a).saturating_mul(a);
        at(i, size);
        size = size.saturating_add(s);
        align = align.max(a);
    }
    (size.div_ceil(align).saturating_mul(align), align)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_layout_of_structs_and_arrays() {
        let mut w = World::new();
        let (i8t, i32t, i64t, f64t) = (
            w.ty_int(8, true),
            w.ty_int(32, true),
            w.ty_int(64, true),
            w.ty_float(64),
        );
        let b = w.ty_bool();
        // struct { i8, i64, bool }: 1 + 7 padding + 8 + 1 + 7 padding.
        let t = w.ty_tuple(&[i8t, i64t, b]);
        assert_eq!(size_align(&w, t), (24, 8));
        assert_eq!(field_offsets(&w, t), vec![0, 8, 16]);
        // (i32, i8) * 3: each element 8 bytes.
        let pair = w.ty_tuple(&[i32t, i8t]);
        let arr = w.ty_array(pair, Some(3));
        assert_eq!(size_align(&w, arr), (24, 4));
        let nested = w.ty_tuple(&[i8t, arr, f64t]);
        assert_eq!(field_offsets(&w, nested), vec![0, 4, 32]);
        assert_eq!(size_align(&w, nested), (40, 8));
        let unit = w.ty_tuple(&[]);
        assert_eq!(size_align(&w, unit), (0, 1));
    }
}
