//! The checker's types: interned, so equality is key equality.
//!
//! Polymorphic declarations use [`TyKind::Param`] for their type parameters; inference
//! uses [`TyKind::Var`], bound in the checker's substitution and removed before lowering.

use rustc_hash::FxHashMap;

/// A type key.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Ty(u32);

/// Primitive types: the IR's, which the language shares.
pub use durin_ir::semantics::Prim;

/// Index of a struct or enum declaration in the checked program.
pub type DeclId = u32;

/// What a type is.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum TyKind {
    /// A primitive.
    Prim(Prim),
    /// `(T, U)`; `()` is the unit type.
    Tuple(Vec<Ty>),
    /// `[T * N]`, `[T]` or `simd[T * N]`.
    Array {
        /// Element type.
        elem: Ty,
        /// Length of definite arrays (always given for `simd`).
        len: Option<u64>,
        /// Whether it is a `simd` vector: a definite array of numbers, `bool`s or pointers
        /// on which arithmetic and comparisons apply element by element.
        simd: bool,
    },
    /// `&T`, `&mut T`, `&addrspace(n) T`.
    Ptr {
        /// The pointee.
        pointee: Ty,
        /// Whether writes through it are allowed.
        mutable: bool,
        /// The address space number.
        space: u32,
    },
    /// `fn(D) -> C`; a continuation when `C` is `!`.
    Fn {
        /// The domain (a tuple for several parameters).
        dom: Ty,
        /// The codomain.
        codom: Ty,
    },
    /// `!`: no value; a subtype of every type.
    NoRet,
    /// A struct declaration applied to type arguments.
    Struct(DeclId, Vec<Ty>),
    /// An enum declaration applied to type arguments.
    Enum(DeclId, Vec<Ty>),
    /// Type parameter number `.0` of the enclosing polymorphic declaration.
    Param(u32),
    /// An inference variable.
    Var(u32),
    /// The type of an expression that had an error (compatible with everything).
    Error,
}

/// The table of interned types.
#[derive(Default)]
pub struct TyTable {
    kinds: Vec<TyKind>,
    map: FxHashMap<TyKind, Ty>,
}

impl TyTable {
    /// A table holding the common types.
    pub fn new() -> TyTable {
        let mut t = TyTable::default();
        // Fixed keys for the types used everywhere.
        t.intern(TyKind::Error);
        t.intern(TyKind::Tuple(Vec::new()));
        t.intern(TyKind::NoRet);
        t.intern(TyKind::Prim(Prim::Bool));
        t.intern(TyKind::Prim(Prim::Int {
            bits: 32,
            signed: true,
        }));
        t.intern(TyKind::Prim(Prim::Float { bits: 64 }));
        t.intern(TyKind::Prim(Prim::Int {
            bits: 8,
            signed: false,
        }));
        t.intern(TyKind::Prim(Prim::Int {
            bits: 64,
            signed: true,
        }));
        t
    }

    /// The error type.
    pub const ERROR: Ty = Ty(0);
    /// `()`.
    pub const UNIT: Ty = Ty(1);
    /// `!`.
    pub const NORET: Ty = Ty(2);
    /// `bool`.
    pub const BOOL: Ty = Ty(3);
    /// `i32`.
    pub const I32: Ty = Ty(4);
    /// `f64`.
    pub const F64: Ty = Ty(5);
    /// `u8`.
    pub const U8: Ty = Ty(6);
    /// `i64`.
    pub const I64: Ty = Ty(7);

    /// The key of `kind`.
    pub fn intern(&mut self, kind: TyKind) -> Ty {
        if let Some(&t) = self.map.get(&kind) {
            return t;
        }
        let t = Ty(self.kinds.len() as u32);
        self.kinds.push(kind.clone());
        self.map.insert(kind, t);
        t
    }

    /// What `t` is.
    pub fn kind(&self, t: Ty) -> &TyKind {
        &self.kinds[t.0 as usize]
    }

    /// A primitive type.
    pub fn prim(&mut self, p: Prim) -> Ty {
        self.intern(TyKind::Prim(p))
    }

    /// A tuple type.
    pub fn tuple(&mut self, elems: Vec<Ty>) -> Ty {
        self.intern(TyKind::Tuple(elems))
    }

    /// A pointer type in the generic address space.
    pub fn ptr(&mut self, pointee: Ty, mutable: bool) -> Ty {
        self.intern(TyKind::Ptr {
            pointee,
            mutable,
            space: 0,
        })
    }

    /// A function type.
    pub fn func(&mut self, dom: Ty, codom: Ty) -> Ty {
        self.intern(TyKind::Fn { dom, codom })
    }

    /// The primitive `t` is, if it is one.
    pub fn as_prim(&self, t: Ty) -> Option<Prim> {
        match self.kind(t) {
            TyKind::Prim(p) => Some(*p),
            _ => None,
        }
    }

    /// Whether `t` is an integer type.
    pub fn is_int(&self, t: Ty) -> bool {
        matches!(self.as_prim(t), Some(Prim::Int { .. }))
    }

    /// Whether `t` is a float type.
    pub fn is_float(&self, t: Ty) -> bool {
        matches!(self.as_prim(t), Some(Prim::Float { .. }))
    }

    /// Whether `t` is an integer or a float type.
    pub fn is_num(&self, t: Ty) -> bool {
        self.is_int(t) || self.is_float(t)
    }

    /// Whether `t` contains inference variables.
    pub fn has_vars(&self, t: Ty) -> bool {
        match self.kind(t) {
            TyKind::Var(_) => true,
            TyKind::Prim(_) | TyKind::NoRet | TyKind::Param(_) | TyKind::Error => false,
            TyKind::Tuple(ts) | TyKind::Struct(_, ts) | TyKind::Enum(_, ts) => {
                ts.iter().any(|&t| self.has_vars(t))
            }
            TyKind::Array { elem, .. } => self.has_vars(*elem),
            TyKind::Ptr { pointee, .. } => self.has_vars(*pointee),
            TyKind::Fn { dom, codom } => self.has_vars(*dom) || self.has_vars(*codom),
        }
    }

    /// `t` with each `Param(i)` replaced by `args[i]` (and `Var`s by `vars`' bindings).
    pub fn subst(&mut self, t: Ty, args: &[Ty]) -> Ty {
        self.map_ty(t, &mut |table, t| match table.kind(t) {
            TyKind::Param(i) => args.get(*i as usize).copied(),
            _ => None,
        })
    }

    /// The size of `t` as a tree of types (a primitive is 1, `(i32, i32)` is 3), or
    /// `limit + 1` when it is larger; takes at most about `limit` steps.
    pub fn size_within(&self, t: Ty, limit: u64) -> u64 {
        let mut seen = 0;
        let mut stack = vec![t];
        while let Some(t) = stack.pop() {
            seen += 1;
            if seen > limit {
                return limit + 1;
            }
            match self.kind(t) {
                TyKind::Tuple(ts) | TyKind::Struct(_, ts) | TyKind::Enum(_, ts) => {
                    stack.extend_from_slice(ts)
                }
                TyKind::Array { elem, .. } => stack.push(*elem),
                TyKind::Ptr { pointee, .. } => stack.push(*pointee),
                TyKind::Fn { dom, codom } => stack.extend([*dom, *codom]),
                _ => {}
            }
        }
        seen
    }

    /// How deeply `t`'s components nest (a primitive type: 1), counted up to `limit + 1`.
    pub fn depth_within(&self, t: Ty, limit: u32) -> u32 {
        let mut deepest = 0;
        let mut stack = vec![(t, 1)];
        while let Some((t, d)) = stack.pop() {
            deepest = deepest.max(d);
            if deepest > limit {
                return limit + 1;
            }
            let parts: &[Ty] = match self.kind(t) {
                TyKind::Tuple(ts) | TyKind::Struct(_, ts) | TyKind::Enum(_, ts) => ts,
                TyKind::Array { elem, .. } => std::slice::from_ref(elem),
                TyKind::Ptr { pointee, .. } => std::slice::from_ref(pointee),
                TyKind::Fn { dom, codom } => {
                    stack.extend([(*dom, d + 1), (*codom, d + 1)]);
                    continue;
                }
                _ => continue,
            };
            stack.extend(parts.iter().map(|&p| (p, d + 1)));
        }
        deepest
    }

    /// Rebuilds `t` bottom-up, replacing each component for which `f` gives a type.
    pub fn map_ty(&mut self, t: Ty, f: &mut dyn FnMut(&mut TyTable, Ty) -> Option<Ty>) -> Ty {
        if let Some(r) = f(self, t) {
            return r;
        }
        let kind = self.kind(t).clone();
        let new = match kind {
            TyKind::Prim(_) | TyKind::NoRet | TyKind::Param(_) | TyKind::Var(_) | TyKind::Error => {
                return t
            }
            TyKind::Tuple(ts) => TyKind::Tuple(ts.iter().map(|&x| self.map_ty(x, f)).collect()),
            TyKind::Struct(d, ts) => {
                TyKind::Struct(d, ts.iter().map(|&x| self.map_ty(x, f)).collect())
            }
            TyKind::Enum(d, ts) => TyKind::Enum(d, ts.iter().map(|&x| self.map_ty(x, f)).collect()),
            TyKind::Array { elem, len, simd } => TyKind::Array {
                elem: self.map_ty(elem, f),
                len,
                simd,
            },
            TyKind::Ptr {
                pointee,
                mutable,
                space,
            } => TyKind::Ptr {
                pointee: self.map_ty(pointee, f),
                mutable,
                space,
            },
            TyKind::Fn { dom, codom } => TyKind::Fn {
                dom: self.map_ty(dom, f),
                codom: self.map_ty(codom, f),
            },
        };
        self.intern(new)
    }

    /// `[elem * len]`, or `simd[elem * len]` when `simd`.
    pub fn array(&mut self, elem: Ty, len: Option<u64>, simd: bool) -> Ty {
        self.intern(TyKind::Array { elem, len, simd })
    }

    /// The element type and length of `t` if it is a `simd` vector.
    pub fn as_simd(&self, t: Ty) -> Option<(Ty, u64)> {
        match *self.kind(t) {
            TyKind::Array {
                elem,
                len: Some(n),
                simd: true,
            } => Some((elem, n)),
            _ => None,
        }
    }

    /// The components a value of `t` is passed as: the elements of a tuple, else `t`.
    pub fn flatten(&self, t: Ty) -> Vec<Ty> {
        match self.kind(t) {
            TyKind::Tuple(ts) => ts.clone(),
            _ => vec![t],
        }
    }
}
