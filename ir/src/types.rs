//! Types of the IR.
//!
//! Structural types (primitives, pointers, tuples, arrays, continuation types, `mem`) are
//! hash-consed: building the same type twice yields the same [`Type`] key, so type equality is
//! key equality. Struct types are nominal: each [`World::struct_type`](crate::World::struct_type)
//! call makes a new one, and its fields can be set after creation so that recursive structs
//! (through pointers) can be built.

use rustc_hash::FxHashMap;
use std::fmt;

/// A type, as a small copyable key into the [`TypeTable`] of a [`World`](crate::World).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Type(u32);

/// The address space a pointer points into; GPU back ends map these to memory kinds.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum AddrSpace {
    /// Any memory; the default for host code.
    Generic,
    /// GPU global (device) memory.
    Global,
    /// GPU shared (block-local) memory.
    Shared,
    /// GPU constant memory.
    Constant,
}

impl AddrSpace {
    /// All address spaces, in a fixed order.
    pub const ALL: [AddrSpace; 4] = [Self::Generic, Self::Global, Self::Shared, Self::Constant];

    /// The name of the address space in the text form.
    pub fn name(self) -> &'static str {
        match self {
            Self::Generic => "generic",
            Self::Global => "global",
            Self::Shared => "shared",
            Self::Constant => "constant",
        }
    }
}

/// What a type is.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum TypeKind {
    /// `bool`.
    Bool,
    /// `i8`..`i64` and `u8`..`u64`: wrapping two's-complement integers. Signedness chooses
    /// the meaning of division, remainder, right shift, comparisons and widening.
    Int {
        /// Width in bits: 8, 16, 32 or 64.
        bits: u8,
        /// Whether the integer is signed.
        signed: bool,
    },
    /// `f16`, `f32`, `f64`: IEEE 754 binary floats of this many bits.
    Float {
        /// Width in bits: 16, 32 or 64.
        bits: u8,
    },
    /// `ptr(T, space)`.
    Ptr {
        /// The type pointed to.
        pointee: Type,
        /// The address space.
        space: AddrSpace,
    },
    /// `(T, U, ...)`; the empty tuple is the unit type.
    Tuple(Box<[Type]>),
    /// A nominal struct; its name and fields live in the [`TypeTable`].
    Struct(u32),
    /// `[T * N]` (definite, `len` is `Some`) or `[T]` (indefinite, only behind pointers).
    Array {
        /// Element type.
        elem: Type,
        /// Number of elements, or `None` for an indefinite array.
        len: Option<u64>,
    },
    /// `cn(T, U, ...)`: the type of a continuation taking these parameters.
    Cont(Box<[Type]>),
    /// `mem`: the token that orders effects.
    Mem,
}

/// A nominal struct declaration.
#[derive(Clone, Debug)]
pub struct StructDecl {
    /// The struct's name (unique in the world; the printer uses it as written).
    pub name: String,
    /// Field names and types, in order.
    pub fields: Vec<(String, Type)>,
}

impl Type {
    /// `bool`, which every type table holds from the start.
    pub const BOOL: Type = Type(0);
    /// `mem`, which every type table holds from the start.
    pub const MEM: Type = Type(1);
}

/// Owns every type of a world; hands out [`Type`] keys.
#[derive(Clone, Debug)]
pub struct TypeTable {
    kinds: Vec<TypeKind>,
    interned: FxHashMap<TypeKind, Type>,
    structs: Vec<StructDecl>,
}

impl Default for TypeTable {
    fn default() -> Self {
        let mut t = TypeTable {
            kinds: Vec::new(),
            interned: FxHashMap::default(),
            structs: Vec::new(),
        };
        let b = t.intern(TypeKind::Bool);
        let m = t.intern(TypeKind::Mem);
        debug_assert_eq!((b, m), (Type::BOOL, Type::MEM));
        t
    }
}

impl TypeTable {
    /// Interns a structural type (a struct kind is only valid if made by [`Self::new_struct`]).
    pub fn intern(&mut self, kind: TypeKind) -> Type {
        if let Some(&t) = self.interned.get(&kind) {
            return t;
        }
        let t = Type(self.kinds.len() as u32);
        self.kinds.push(kind.clone());
        self.interned.insert(kind, t);
        t
    }

    /// The key of a structural type if it has been interned already.
    pub fn intern_lookup(&self, kind: &TypeKind) -> Option<Type> {
        self.interned.get(kind).copied()
    }

    /// Makes a new nominal struct type with no fields yet. The name is made a valid, unique
    /// identifier that no builtin type uses (by replacing characters other than letters,
    /// digits, `_` and `.` with `_`, and appending `.N` where needed).
    pub fn new_struct(&mut self, name: &str) -> Type {
        let id = self.structs.len() as u32;
        let mut base: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
            base.insert(0, 'S');
        }
        let taken = |n: &str| {
            crate::text::is_reserved_type_name(n) || self.structs.iter().any(|s| s.name == n)
        };
        let mut unique = base.clone();
        let mut k = 1;
        while taken(&unique) {
            unique = format!("{base}.{k}");
            k += 1;
        }
        self.structs.push(StructDecl {
            name: unique,
            fields: Vec::new(),
        });
        self.intern(TypeKind::Struct(id))
    }

    /// What `t` is.
    pub fn kind(&self, t: Type) -> &TypeKind {
        &self.kinds[t.0 as usize]
    }

    /// The declaration of struct type `t`, if it is one.
    pub fn struct_decl(&self, t: Type) -> Option<&StructDecl> {
        match self.kind(t) {
            TypeKind::Struct(id) => Some(&self.structs[*id as usize]),
            _ => None,
        }
    }

    /// Sets the fields of struct type `t`.
    ///
    /// # Panics
    /// If `t` is not a struct type.
    pub fn set_struct_fields(&mut self, t: Type, fields: Vec<(String, Type)>) {
        match *self.kind(t) {
            TypeKind::Struct(id) => self.structs[id as usize].fields = fields,
            _ => panic!("set_struct_fields on a type that is not a struct"),
        }
    }

    /// All struct types, in creation order.
    pub fn structs(&self) -> impl Iterator<Item = Type> + '_ {
        (0..self.structs.len() as u32).map(|id| self.interned[&TypeKind::Struct(id)])
    }

    /// The type of component `i` of the tuple, struct or definite array type `t`, without
    /// copying the others (see [`Self::components`]).
    pub fn component(&self, t: Type, i: usize) -> Option<Type> {
        match self.kind(t) {
            TypeKind::Tuple(ts) => ts.get(i).copied(),
            TypeKind::Struct(_) => self.struct_decl(t)?.fields.get(i).map(|f| f.1),
            TypeKind::Array { elem, len: Some(n) } => (i < *n as usize).then_some(*elem),
            _ => None,
        }
    }

    /// The number of components of the tuple, struct or definite array type `t`.
    pub fn arity(&self, t: Type) -> Option<usize> {
        match self.kind(t) {
            TypeKind::Tuple(ts) => Some(ts.len()),
            TypeKind::Struct(_) => Some(self.struct_decl(t)?.fields.len()),
            TypeKind::Array { len: Some(n), .. } => Some(*n as usize),
            _ => None,
        }
    }

    /// The types of the components of an aggregate type (tuple or struct fields, or the
    /// element type repeated for a definite array of at most `max_array` elements).
    pub fn components(&self, t: Type) -> Option<Vec<Type>> {
        match self.kind(t) {
            TypeKind::Tuple(ts) => Some(ts.to_vec()),
            TypeKind::Struct(_) => Some(self.struct_decl(t)?.fields.iter().map(|f| f.1).collect()),
            TypeKind::Array { elem, len: Some(n) } => Some(vec![*elem; *n as usize]),
            _ => None,
        }
    }

    /// Width in bits of a bool, integer or float type.
    pub fn prim_bits(&self, t: Type) -> Option<u32> {
        match self.kind(t) {
            TypeKind::Bool => Some(1),
            TypeKind::Int { bits, .. } | TypeKind::Float { bits } => Some(*bits as u32),
            _ => None,
        }
    }

    /// Whether `t` is an integer type.
    pub fn is_int(&self, t: Type) -> bool {
        matches!(self.kind(t), TypeKind::Int { .. })
    }

    /// Whether `t` is a float type.
    pub fn is_float(&self, t: Type) -> bool {
        matches!(self.kind(t), TypeKind::Float { .. })
    }

    /// Whether `t` is `bool`.
    pub fn is_bool(&self, t: Type) -> bool {
        matches!(self.kind(t), TypeKind::Bool)
    }

    /// Whether `t` is `mem`.
    pub fn is_mem(&self, t: Type) -> bool {
        matches!(self.kind(t), TypeKind::Mem)
    }

    /// The parameter types of a continuation type.
    pub fn cont_params(&self, t: Type) -> Option<&[Type]> {
        match self.kind(t) {
            TypeKind::Cont(ps) => Some(ps),
            _ => None,
        }
    }

    /// Displays `t` in the text form.
    pub fn display(&self, t: Type) -> TypeDisplay<'_> {
        TypeDisplay { table: self, ty: t }
    }

    /// Number of distinct types.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Whether no type has been made yet.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }
}

/// Displays a type in the text form; made by [`TypeTable::display`].
pub struct TypeDisplay<'a> {
    table: &'a TypeTable,
    ty: Type,
}

impl fmt::Display for TypeDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |f: &mut fmt::Formatter<'_>, ts: &[Type]| -> fmt::Result {
            for (i, t) in ts.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{}", self.table.display(*t))?;
            }
            Ok(())
        };
        match self.table.kind(self.ty) {
            TypeKind::Bool => f.write_str("bool"),
            TypeKind::Int { bits, signed } => {
                write!(f, "{}{}", if *signed { 'i' } else { 'u' }, bits)
            }
            TypeKind::Float { bits } => write!(f, "f{bits}"),
            TypeKind::Ptr { pointee, space } => {
                write!(f, "ptr({}", self.table.display(*pointee))?;
                if *space != AddrSpace::Generic {
                    write!(f, ", {}", space.name())?;
                }
                f.write_str(")")
            }
            TypeKind::Tuple(ts) => {
                f.write_str("(")?;
                list(f, ts)?;
                f.write_str(")")
            }
            TypeKind::Struct(id) => f.write_str(&self.table.structs[*id as usize].name),
            TypeKind::Array { elem, len: Some(n) } => {
                write!(f, "[{} * {}]", self.table.display(*elem), n)
            }
            TypeKind::Array { elem, len: None } => write!(f, "[{}]", self.table.display(*elem)),
            TypeKind::Cont(ts) => {
                f.write_str("cn(")?;
                list(f, ts)?;
                f.write_str(")")
            }
            TypeKind::Mem => f.write_str("mem"),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::text::{parse, print};
    use crate::World;

    #[test]
    fn structs_with_the_same_name_round_trip() {
        let mut w = World::new();
        let i32t = w.ty_int(32, true);
        for _ in 0..3 {
            let s = w.struct_type("Pair");
            w.set_struct_fields(s, vec![("a".into(), i32t)]);
        }
        w.struct_type("bool");
        let printed = print(&w);
        assert_eq!(
            printed,
            "struct Pair { a: i32 }\nstruct Pair.1 { a: i32 }\nstruct Pair.2 { a: i32 }\nstruct bool.1 {}\n"
        );
        let again = parse(&printed).expect("printed structs parse");
        assert_eq!(print(&again), printed);
    }
}
