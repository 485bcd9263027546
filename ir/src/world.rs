//! The [`World`]: the arena that owns every def and type of a program, and builds them.
//!
//! Structural defs are hash-consed: [`World::build`] returns the existing def when one with
//! the same node, type and operands exists, so common subexpressions are shared for free and
//! equality of values is equality of keys. Normalization (constant folding and algebraic
//! identities, see [`crate::normalize`]) runs inside the constructors unless switched off with
//! [`World::set_normalize`]. Continuations and globals are nominal: every constructor call
//! makes a new one, and a continuation's body and filters are set after creation.

use crate::def::{ArithOp, CmpOp, Def, Node};
use crate::types::{AddrSpace, Type, TypeKind, TypeTable};
use crate::{normalize, typing};
use durin_diag::Span;
use hashbrown::HashTable;
use indexmap::IndexSet;
use rustc_hash::{FxBuildHasher, FxHashMap, FxHashSet, FxHasher};
use std::hash::{Hash, Hasher};

/// The data behind a [`Def`].
#[derive(Clone, Debug)]
pub struct DefData {
    node: Node,
    ty: Type,
    /// Whether the def depends on a parameter, not looking through nominals.
    has_params: bool,
    ops: Ops,
}

/// Operands, stored inline when there are few (most defs have at most three), else in the
/// world's spill vector, so that building and comparing defs allocates nothing per def and
/// a def stays small (40 bytes) for the cache.
#[derive(Clone, Copy, Debug)]
enum Ops {
    Inline(u8, [Def; 3]),
    Spilled { start: u32, len: u32 },
}

/// The table hash of a def: 32 bits of its key's hash, spread again for the table.
fn table_hash(h32: u32) -> u64 {
    (h32 as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Owns the defs and types of one program.
#[derive(Clone, Debug, Default)]
pub struct World {
    types: TypeTable,
    defs: Vec<DefData>,
    /// Operand lists longer than three.
    spill: Vec<Def>,
    /// Structural defs with 32 bits of their hash (kept so that growing the table reads no
    /// def). Parameters are not among them: see `param_runs`.
    interned: HashTable<(u32, Def)>,
    /// For each continuation (by number) with a parameter built: where its run of
    /// `params` starts (`NO_PARAM` for the others), so that finding a parameter hashes
    /// nothing (partial evaluation asks for the parameters of every continuation it copies).
    param_runs: Vec<u32>,
    /// Runs of parameters, one slot for each of a continuation's (`NO_PARAM` until built).
    params: Vec<u32>,
    nominals: IndexSet<Def, FxBuildHasher>,
    externals: IndexSet<Def, FxBuildHasher>,
    /// Functions a back end must not inline (see [`World::set_no_inline`]).
    no_inline: FxHashSet<Def>,
    /// The debug name of each def that has one, as its number in `name_list`.
    names: FxHashMap<Def, u32>,
    /// The distinct debug names, each once (a continuation copied from another shares its
    /// name: no string per copy).
    name_list: IndexSet<Box<str>, FxBuildHasher>,
    locs: FxHashMap<Def, Span>,
    /// For continuations made by specializing a call: their expansion (see
    /// [`World::expansion`]).
    expansions: FxHashMap<Def, Expansion>,
    /// The call sites of expansions, each with the expansion it lies in.
    expansion_sites: Vec<(Span, Option<Expansion>)>,
    /// For continuations that took over another's jump: that jump's place and expansion.
    jump_places: FxHashMap<Def, (Span, Option<Expansion>)>,
    blobs: Blobs,
    no_normalize: bool,
}

/// The byte strings of [`Node::Bytes`] defs, each once; shared by the worlds that
/// [`World::with_types_of`] makes, so that a def copied into one keeps its number.
#[derive(Clone, Debug, Default)]
struct Blobs {
    list: Vec<std::sync::Arc<[u8]>>,
    index: FxHashMap<std::sync::Arc<[u8]>, u32>,
}

/// A specialization of a call by partial evaluation, in a chain of them: see
/// [`World::expansion`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Expansion(u32);

/// What a continuation made from another inherits besides its code: [`World::places`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Places {
    loc: Option<Span>,
    expansion: Option<Expansion>,
    jump: Option<(Span, Option<Expansion>)>,
}

/// No parameter (built) here, in `World::param_runs` and `World::params`.
const NO_PARAM: u32 = u32::MAX;

fn hash_key(node: Node, ty: Type, ops: &[Def]) -> u32 {
    let mut h = FxHasher::default();
    node.hash(&mut h);
    ty.hash(&mut h);
    ops.hash(&mut h);
    (h.finish() >> 32) as u32
}

impl World {
    /// An empty world.
    pub fn new() -> World {
        World::default()
    }

    /// Switches normalization in the constructors on (the default) or off. With it off, the
    /// world still hash-conses but keeps every node as built; the text parser and tests of
    /// normalization use this.
    pub fn set_normalize(&mut self, on: bool) {
        self.no_normalize = !on;
    }

    /// Whether constructors normalize.
    pub fn normalizes(&self) -> bool {
        !self.no_normalize
    }

    // ----- types ---------------------------------------------------------------------------

    /// The type table.
    pub fn types(&self) -> &TypeTable {
        &self.types
    }

    /// Interns a structural type.
    pub fn ty(&mut self, kind: TypeKind) -> Type {
        self.types.intern(kind)
    }

    /// `bool`.
    pub fn ty_bool(&mut self) -> Type {
        Type::BOOL
    }

    /// A signed (`iN`) or unsigned (`uN`) integer type.
    pub fn ty_int(&mut self, bits: u8, signed: bool) -> Type {
        self.ty(TypeKind::Int { bits, signed })
    }

    /// A float type of 16, 32 or 64 bits.
    pub fn ty_float(&mut self, bits: u8) -> Type {
        self.ty(TypeKind::Float { bits })
    }

    /// `mem`.
    pub fn ty_mem(&mut self) -> Type {
        Type::MEM
    }

    /// `ptr(pointee, space)`.
    pub fn ty_ptr(&mut self, pointee: Type, space: AddrSpace) -> Type {
        self.ty(TypeKind::Ptr { pointee, space })
    }

    /// A tuple type.
    pub fn ty_tuple(&mut self, elems: &[Type]) -> Type {
        self.ty(TypeKind::Tuple(elems.into()))
    }

    /// `[elem * n]`, or `[elem]` when `len` is `None`.
    pub fn ty_array(&mut self, elem: Type, len: Option<u64>) -> Type {
        self.ty(TypeKind::Array { elem, len })
    }

    /// `cn(params..)`.
    pub fn ty_cont(&mut self, params: &[Type]) -> Type {
        self.ty(TypeKind::Cont(params.into()))
    }

    /// A new nominal struct type without fields; set them with [`Self::set_struct_fields`].
    pub fn struct_type(&mut self, name: &str) -> Type {
        self.types.new_struct(name)
    }

    /// Sets the fields of a struct type.
    ///
    /// # Panics
    /// If `t` is not a struct type.
    pub fn set_struct_fields(&mut self, t: Type, fields: Vec<(String, Type)>) {
        self.types.set_struct_fields(t, fields)
    }

    /// What type `t` is.
    pub fn kind(&self, t: Type) -> &TypeKind {
        self.types.kind(t)
    }

    // ----- reading defs ----------------------------------------------------------------------

    /// Whether `d` is a def of this world.
    pub fn contains(&self, d: Def) -> bool {
        d.index() < self.defs.len()
    }

    #[inline]
    fn data(&self, d: Def) -> &DefData {
        &self.defs[d.index()]
    }

    fn data_mut(&mut self, d: Def) -> &mut DefData {
        &mut self.defs[d.index()]
    }

    fn push(&mut self, data: DefData) -> Def {
        self.defs.push(data);
        Def::from_index(self.defs.len() - 1)
    }

    /// The node of `d`.
    #[inline]
    pub fn node(&self, d: Def) -> Node {
        self.data(d).node
    }

    /// The type of `d`.
    #[inline]
    pub fn type_of(&self, d: Def) -> Type {
        self.data(d).ty
    }

    /// The operands of `d`.
    #[inline]
    pub fn ops(&self, d: Def) -> &[Def] {
        self.slice(&self.data(d).ops)
    }

    #[inline]
    fn slice<'a>(&'a self, ops: &'a Ops) -> &'a [Def] {
        match ops {
            Ops::Inline(n, a) => &a[..*n as usize],
            Ops::Spilled { start, len } => &self.spill[*start as usize..(*start + *len) as usize],
        }
    }

    /// Replaces the operands of nominal `d`, reusing its spilled storage when it is large
    /// enough (a continuation's body may be set many times).
    fn set_ops(&mut self, d: Def, ops: &[Def]) {
        if let Ops::Spilled { start, len } = self.data(d).ops {
            if ops.len() > 3 && ops.len() <= len as usize {
                let at = start as usize;
                self.spill[at..at + ops.len()].copy_from_slice(ops);
                self.data_mut(d).ops = Ops::Spilled {
                    start,
                    len: ops.len() as u32,
                };
                return;
            }
        }
        let new = self.make_ops(ops);
        self.data_mut(d).ops = new;
    }

    fn make_ops(&mut self, ops: &[Def]) -> Ops {
        if ops.len() <= 3 {
            let mut a = [Def::default(); 3];
            a[..ops.len()].copy_from_slice(ops);
            Ops::Inline(ops.len() as u8, a)
        } else {
            let start = u32::try_from(self.spill.len()).expect("more than 2^32 operands");
            self.spill.extend_from_slice(ops);
            Ops::Spilled {
                start,
                len: ops.len() as u32,
            }
        }
    }

    /// Whether `d` depends on a continuation parameter (not looking into nominals).
    pub fn has_params(&self, d: Def) -> bool {
        self.data(d).has_params
    }

    /// The raw bits of `d` if it is a literal.
    pub fn lit_bits(&self, d: Def) -> Option<u64> {
        match self.node(d) {
            Node::Lit(v) => Some(v),
            _ => None,
        }
    }

    /// The address of `d` if it is a pointer converted from an integer literal.
    pub fn lit_address(&self, d: Def) -> Option<u64> {
        let is_ptr = matches!(self.kind(self.type_of(d)), TypeKind::Ptr { .. });
        if self.node(d) != Node::Conv || !is_ptr {
            return None;
        }
        let x = self.ops(d)[0];
        let from = crate::semantics::Prim::of(self.kind(self.type_of(x)))?;
        Some(crate::semantics::address(from, self.lit_bits(x)?))
    }

    /// Number of defs (structural and nominal).
    #[inline]
    pub fn num_defs(&self) -> usize {
        self.defs.len()
    }

    /// Every def, in creation order.
    pub fn defs(&self) -> impl Iterator<Item = Def> + '_ {
        (0..self.defs.len()).map(Def::from_index)
    }

    /// The defs made after the first `start` ones, in creation order (what a step added).
    pub fn defs_from(&self, start: usize) -> impl Iterator<Item = Def> + '_ {
        (start.min(self.defs.len())..self.defs.len()).map(Def::from_index)
    }

    /// Every continuation and global, in creation order.
    pub fn nominals(&self) -> impl Iterator<Item = Def> + '_ {
        self.nominals.iter().copied()
    }

    /// Every continuation, in creation order.
    pub fn continuations(&self) -> impl Iterator<Item = Def> + '_ {
        self.nominals().filter(|&d| self.node(d) == Node::Cont)
    }

    /// Where nominal `d` comes in [`World::nominals`] (and so among
    /// [`World::continuations`]), if it is one.
    pub fn nominal_position(&self, d: Def) -> Option<usize> {
        self.nominals.get_index_of(&d)
    }

    /// An empty world with the types of `other` (same [`Type`] keys), for passes that build
    /// a program anew from an old one.
    pub fn with_types_of(other: &World) -> World {
        World {
            types: other.types.clone(),
            no_normalize: other.no_normalize,
            expansion_sites: other.expansion_sites.clone(),
            blobs: other.blobs.clone(),
            ..World::default()
        }
    }

    /// The source place of `d`, if the front end gave one (the IR does not interpret it;
    /// diagnostics name it).
    pub fn loc(&self, d: Def) -> Option<Span> {
        self.locs.get(&d).copied()
    }

    /// Attaches a source location to `d` (not part of its identity).
    pub fn set_loc(&mut self, d: Def, loc: Span) {
        self.locs.insert(d, loc);
    }

    /// For a continuation that partial evaluation made by specializing a call: that
    /// expansion, whose chain of call sites ([`World::expanded_from`]) leads from the call
    /// to the code that was not itself specialized (from a library's function to the call in
    /// the program that used it). Diagnostics and reports name it beside [`World::loc`].
    pub fn expansion(&self, d: Def) -> Option<Expansion> {
        self.expansions.get(&d).copied()
    }

    /// Records that continuation `d` belongs to expansion `e`.
    pub fn set_expansion(&mut self, d: Def, e: Expansion) {
        self.expansions.insert(d, e);
    }

    /// A new expansion: a call at `at`, itself in expansion `parent` (if any).
    pub fn new_expansion(&mut self, at: Span, parent: Option<Expansion>) -> Expansion {
        let e = Expansion(u32::try_from(self.expansion_sites.len()).expect("expansions fit u32"));
        self.expansion_sites.push((at, parent));
        e
    }

    /// The calls continuation `d` was specialized for, innermost first (none for code that
    /// was not specialized). Worlds built anew from this one ([`World::with_types_of`]) keep
    /// the same expansions.
    pub fn expanded_from(&self, d: Def) -> Vec<Span> {
        self.expansion_calls(self.expansion(d))
    }

    /// The calls of expansion `e` and of those it is in, innermost first.
    pub fn expansion_calls(&self, e: Option<Expansion>) -> Vec<Span> {
        let sites = |e: &Expansion| self.expansion_sites[e.0 as usize];
        std::iter::successors(e, |e| sites(e).1)
            .map(|e| sites(&e).0)
            .collect()
    }

    /// The place, the expansion and the jump's place of continuation `d` (see
    /// [`World::jump_place`]): what a continuation made from it inherits.
    pub fn places(&self, d: Def) -> Places {
        Places {
            loc: self.loc(d),
            expansion: self.expansion(d),
            jump: self.jump_places.get(&d).copied(),
        }
    }

    /// Gives `d` the places `p` has (a continuation made from another, in this world or
    /// another one built from it).
    pub fn set_places(&mut self, d: Def, p: Places) {
        if let Some(l) = p.loc {
            self.set_loc(d, l);
        }
        if let Some(e) = p.expansion {
            self.expansions.insert(d, e);
        }
        if let Some(j) = p.jump {
            self.jump_places.insert(d, j);
        }
    }

    /// Gives `to`, a continuation made from `from`, the places of `from`.
    pub fn copy_places(&mut self, from: Def, to: Def) {
        let p = self.places(from);
        self.set_places(to, p);
    }

    /// The place of continuation `d`'s jump and the expansion that code lies in: its own
    /// place and expansion, or those of the continuation whose jump it took over
    /// ([`World::take_jump_place`]). Where partial evaluation specializes a call.
    pub fn jump_place(&self, d: Def) -> (Option<Span>, Option<Expansion>) {
        match self.jump_places.get(&d) {
            Some(&(at, e)) => (Some(at), e),
            None => (self.loc(d), self.expansion(d)),
        }
    }

    /// Records that `to` took over the jump of `from` (inlining `from` into it): `to` keeps
    /// its own place for diagnostics, and calls in it are at `from`'s.
    pub fn take_jump_place(&mut self, from: Def, to: Def) {
        match self.jump_place(from) {
            (Some(at), e) => self.jump_places.insert(to, (at, e)),
            (None, _) => self.jump_places.remove(&to),
        };
    }

    /// The place of the jump that `d` took over from another continuation and the
    /// expansion that code lies in ([`World::take_jump_place`]), if it took one over.
    pub fn taken_jump_place(&self, d: Def) -> Option<(Span, Option<Expansion>)> {
        self.jump_places.get(&d).copied()
    }

    /// Sets the place of `d`'s jump and the expansion its code lies in (`None`: its own,
    /// as [`World::jump_place`] gives it without one).
    pub fn set_jump_place(&mut self, d: Def, place: Option<(Span, Option<Expansion>)>) {
        match place {
            Some(p) => self.jump_places.insert(d, p),
            None => self.jump_places.remove(&d),
        };
    }

    /// The debug name of `d`, if it has one.
    pub fn name(&self, d: Def) -> Option<&str> {
        self.names.get(&d).map(|&i| &*self.name_list[i as usize])
    }

    /// Sets the debug name of `d` (not part of its identity).
    pub fn set_name(&mut self, d: Def, name: &str) {
        if name.is_empty() {
            self.names.remove(&d);
        } else {
            let i = match self.name_list.get_index_of(name) {
                Some(i) => i,
                None => self.name_list.insert_full(name.into()).0,
            };
            let i = u32::try_from(i).expect("fewer than 2^32 names");
            self.names.insert(d, i);
        }
    }

    /// Marks a continuation as external: an entry point if it has a body, an import if not.
    pub fn make_external(&mut self, cont: Def) {
        self.externals.insert(cont);
    }

    /// Makes `cont` no longer external (an import no code calls any more).
    pub fn remove_external(&mut self, cont: Def) {
        self.externals.shift_remove(&cont);
    }

    /// Makes no continuation external (to choose the entries of a copy of the world).
    pub fn clear_externals(&mut self) {
        self.externals.clear();
    }

    /// Whether `d` is external.
    pub fn is_external(&self, d: Def) -> bool {
        self.externals.contains(&d)
    }

    /// External continuations, in the order they were marked.
    pub fn externals(&self) -> impl Iterator<Item = Def> + '_ {
        self.externals.iter().copied()
    }

    /// Marks function `cont` as one a back end must not inline into its callers: it was
    /// split off a large function to bound the size of what the back end optimizes at once.
    pub fn set_no_inline(&mut self, cont: Def) {
        self.no_inline.insert(cont);
    }

    /// Whether `d` is marked by [`Self::set_no_inline`].
    pub fn is_no_inline(&self, d: Def) -> bool {
        self.no_inline.contains(&d)
    }

    // ----- building structural defs ------------------------------------------------------------

    /// Builds (or finds) the structural def `node` of type `ty` over `ops`, normalizing it.
    /// The caller guarantees that it is well-typed; [`Self::try_build`] checks that first.
    pub fn build(&mut self, node: Node, ty: Type, ops: &[Def]) -> Def {
        debug_assert!(
            !node.is_nominal() && !matches!(node, Node::Param(_)),
            "nominal defs and parameters have their own constructors"
        );
        if !self.no_normalize {
            if let Some(d) = normalize::normalize(self, node, ty, ops) {
                return d;
            }
        }
        self.intern(node, ty, ops)
    }

    /// Checks that `node` over `ops` is well-typed, deriving its type (or, for nodes whose
    /// type the operands do not determine, checking `ty`), then builds it.
    pub fn try_build(&mut self, node: Node, ty: Option<Type>, ops: &[Def]) -> Result<Def, String> {
        self.intern_result_types(node, ops);
        let ty = typing::infer(self, node, ops, ty)?;
        Ok(self.build(node, ty, ops))
    }

    /// Interns the types that [`typing::infer`] derives for `node`, which only looks them up.
    fn intern_result_types(&mut self, node: Node, ops: &[Def]) {
        match node {
            Node::Tuple => {
                let ts: Vec<Type> = ops.iter().map(|&d| self.type_of(d)).collect();
                self.ty_tuple(&ts);
            }
            Node::Load | Node::Store | Node::Slot | Node::Alloc => {
                let m = self.ty_mem();
                if let Some(&p) = ops.get(1) {
                    if let TypeKind::Ptr { pointee, .. } = *self.kind(self.type_of(p)) {
                        self.ty_tuple(&[m, pointee]);
                    }
                }
            }
            Node::Lea => {
                let Some(&p) = ops.first() else { return };
                if let TypeKind::Ptr { pointee, space } = *self.kind(self.type_of(p)) {
                    let elem = match *self.kind(pointee) {
                        TypeKind::Array { elem, .. } => Some(elem),
                        // Only a literal index into a tuple or struct is well-typed.
                        TypeKind::Tuple(_) | TypeKind::Struct(_) => (ops.get(1))
                            .filter(|&&i| self.types.is_int(self.type_of(i)))
                            .and_then(|&i| self.lit_bits(i))
                            .and_then(|i| usize::try_from(i).ok())
                            .and_then(|i| self.types.component(pointee, i)),
                        _ => None,
                    };
                    if let Some(e) = elem {
                        self.ty_ptr(e, space);
                    }
                }
            }
            _ => {}
        }
    }

    fn build_checked(&mut self, node: Node, ty: Option<Type>, ops: &[Def]) -> Def {
        match self.try_build(node, ty, ops) {
            Ok(d) => d,
            Err(e) => panic!("ill-typed `{}`: {e}", node.name()),
        }
    }

    fn lookup(&self, hash: u32, node: Node, ty: Type, ops: &[Def]) -> Option<Def> {
        let same = |&(h, d): &(u32, Def)| {
            let x = &self.defs[d.index()];
            h == hash && x.node == node && x.ty == ty && self.slice(&x.ops) == ops
        };
        self.interned.find(table_hash(hash), same).map(|e| e.1)
    }

    /// Parameter `i` of `cont` if it has been built (without building it).
    pub fn param_if_built(&self, cont: Def, i: usize) -> Option<Def> {
        if i >= self.types.cont_params(self.type_of(cont))?.len() {
            return None;
        }
        let start = *self.param_runs.get(cont.index())?;
        if start == NO_PARAM {
            return None;
        }
        let p = self.params[start as usize + i];
        (p != NO_PARAM).then(|| Def::from_index(p as usize))
    }

    /// Hash-conses without normalizing.
    pub(crate) fn intern(&mut self, node: Node, ty: Type, ops: &[Def]) -> Def {
        let hash = hash_key(node, ty, ops);
        if let Some(d) = self.lookup(hash, node, ty, ops) {
            return d;
        }
        let has_params = ops.iter().any(|&o| self.data(o).has_params);
        let ops = self.make_ops(ops);
        let d = self.push(DefData {
            node,
            ty,
            has_params,
            ops,
        });
        self.interned
            .insert_unique(table_hash(hash), (hash, d), |e| table_hash(e.0));
        d
    }

    /// A literal of a bool, integer or float type from its raw bits (masked to the width).
    pub fn lit(&mut self, ty: Type, bits: u64) -> Def {
        let width = self
            .types
            .prim_bits(ty)
            .expect("literal of a non-primitive type");
        self.intern(Node::Lit(crate::semantics::mask(width, bits)), ty, &[])
    }

    /// The constant array `[u8 * n]` of `bytes` (a [`Node::Bytes`]).
    pub fn bytes(&mut self, bytes: &[u8]) -> Def {
        let n = match self.blobs.index.get(bytes) {
            Some(&n) => n,
            None => {
                let n = u32::try_from(self.blobs.list.len()).expect("fewer than 2^32 blobs");
                let blob: std::sync::Arc<[u8]> = bytes.into();
                self.blobs.list.push(blob.clone());
                self.blobs.index.insert(blob, n);
                n
            }
        };
        let u8t = self.ty_int(8, false);
        let ty = self.ty_array(u8t, Some(bytes.len() as u64));
        self.intern(Node::Bytes(n), ty, &[])
    }

    /// The bytes of `d` if it is a [`Node::Bytes`].
    pub fn bytes_of(&self, d: Def) -> Option<&[u8]> {
        match self.node(d) {
            Node::Bytes(n) => self.blob(n),
            _ => None,
        }
    }

    /// Blob number `n` of this world (see [`Node::Bytes`]), if there is one.
    pub fn blob(&self, n: u32) -> Option<&[u8]> {
        self.blobs.list.get(n as usize).map(|b| &b[..])
    }

    /// `true` or `false`.
    pub fn lit_bool(&mut self, b: bool) -> Def {
        let t = self.ty_bool();
        self.lit(t, b as u64)
    }

    /// An `i32` literal.
    pub fn lit_i32(&mut self, v: i32) -> Def {
        let t = self.ty_int(32, true);
        self.lit(t, v as u32 as u64)
    }

    /// An `i64` literal.
    pub fn lit_i64(&mut self, v: i64) -> Def {
        let t = self.ty_int(64, true);
        self.lit(t, v as u64)
    }

    /// An `f32` literal.
    pub fn lit_f32(&mut self, v: f32) -> Def {
        let t = self.ty_float(32);
        self.lit(t, v.to_bits() as u64)
    }

    /// An `f64` literal.
    pub fn lit_f64(&mut self, v: f64) -> Def {
        let t = self.ty_float(64);
        self.lit(t, v.to_bits())
    }

    /// The undefined value of type `ty`.
    pub fn bottom(&mut self, ty: Type) -> Def {
        self.intern(Node::Bottom, ty, &[])
    }

    /// The kernel-launch intrinsic of type `ty` (see [`Node::Launch`]).
    pub fn launch(&mut self, ty: Type) -> Def {
        self.intern(Node::Launch, ty, &[])
    }

    /// `a op b`.
    pub fn arith(&mut self, op: ArithOp, a: Def, b: Def) -> Def {
        self.build_checked(Node::Arith(op), None, &[a, b])
    }

    /// `a op b`, a `bool`.
    pub fn cmp(&mut self, op: CmpOp, a: Def, b: Def) -> Def {
        self.build_checked(Node::Cmp(op), None, &[a, b])
    }

    /// `cond ? a : b`.
    pub fn select(&mut self, cond: Def, a: Def, b: Def) -> Def {
        self.build_checked(Node::Select, None, &[cond, a, b])
    }

    /// Numeric conversion of `x` to `ty`.
    pub fn conv(&mut self, ty: Type, x: Def) -> Def {
        self.build_checked(Node::Conv, Some(ty), &[x])
    }

    /// The bits of `x` as `ty`.
    pub fn bitcast(&mut self, ty: Type, x: Def) -> Def {
        self.build_checked(Node::Bitcast, Some(ty), &[x])
    }

    /// A tuple of `elems`.
    pub fn tuple(&mut self, elems: &[Def]) -> Def {
        self.build_checked(Node::Tuple, None, elems)
    }

    /// A value of struct type `ty`.
    pub fn struct_value(&mut self, ty: Type, fields: &[Def]) -> Def {
        self.build_checked(Node::Struct, Some(ty), fields)
    }

    /// A definite array of `elems`, each of type `elem`.
    pub fn array(&mut self, elem: Type, elems: &[Def]) -> Def {
        let ty = self.ty_array(elem, Some(elems.len() as u64));
        self.build_checked(Node::Array, Some(ty), elems)
    }

    /// Component `index` of `agg`.
    pub fn extract(&mut self, agg: Def, index: Def) -> Def {
        self.build_checked(Node::Extract, None, &[agg, index])
    }

    /// Component `i` of a tuple or struct (the index is an `i64` literal).
    pub fn extract_at(&mut self, agg: Def, i: u32) -> Def {
        let index = self.lit_i64(i as i64);
        self.extract(agg, index)
    }

    /// `agg` with component `index` replaced by `value`.
    pub fn insert(&mut self, agg: Def, index: Def, value: Def) -> Def {
        self.build_checked(Node::Insert, None, &[agg, index, value])
    }

    /// The address of element/field `index` of what `ptr` points to.
    pub fn lea(&mut self, ptr: Def, index: Def) -> Def {
        self.build_checked(Node::Lea, None, &[ptr, index])
    }

    /// A fresh stack slot for a `ty`: `(mem, ptr(ty))`.
    pub fn slot(&mut self, mem: Def, ty: Type) -> Def {
        let p = self.ty_ptr(ty, AddrSpace::Generic);
        let m = self.ty_mem();
        let t = self.ty_tuple(&[m, p]);
        self.build_checked(Node::Slot, Some(t), &[mem])
    }

    /// Fresh heap memory for `count` (`i64`) elements of type `elem`: `(mem, ptr([elem]))`.
    pub fn alloc(&mut self, mem: Def, elem: Type, count: Def) -> Def {
        self.alloc_in(mem, elem, count, AddrSpace::Generic)
    }

    /// [`Self::alloc`] in address space `space`: in [`AddrSpace::Shared`], memory that the
    /// threads of one GPU block share, reserved for the run of a kernel.
    pub fn alloc_in(&mut self, mem: Def, elem: Type, count: Def, space: AddrSpace) -> Def {
        let a = self.ty_array(elem, None);
        let p = self.ty_ptr(a, space);
        let m = self.ty_mem();
        let t = self.ty_tuple(&[m, p]);
        self.build_checked(Node::Alloc, Some(t), &[mem, count])
    }

    /// Reads `*ptr`: `(mem, value)`.
    pub fn load(&mut self, mem: Def, ptr: Def) -> Def {
        self.build_checked(Node::Load, None, &[mem, ptr])
    }

    /// Writes `*ptr = value`: `mem`.
    pub fn store(&mut self, mem: Def, ptr: Def, value: Def) -> Def {
        self.build_checked(Node::Store, None, &[mem, ptr, value])
    }

    /// Whether `x` is known at compile time.
    pub fn known(&mut self, x: Def) -> Def {
        self.build_checked(Node::Known, None, &[x])
    }

    /// `x`, to be evaluated at compile time.
    pub fn run(&mut self, x: Def) -> Def {
        self.build_checked(Node::Run, None, &[x])
    }

    /// `x`, not to be evaluated further at compile time.
    pub fn hlt(&mut self, x: Def) -> Def {
        self.build_checked(Node::Hlt, None, &[x])
    }

    // ----- nominals ----------------------------------------------------------------------------

    /// A new continuation with parameters of types `params`, no body, and all filters
    /// `false` (never specialize).
    pub fn cont(&mut self, params: &[Type], name: &str) -> Def {
        let d = self.unnamed_cont(params);
        self.set_name(d, name);
        d
    }

    /// [`World::cont`] named as `like` is, or `or` where `like` has no name.
    pub fn cont_named_like(&mut self, params: &[Type], like: Def, or: &str) -> Def {
        let d = self.unnamed_cont(params);
        match self.names.get(&like) {
            Some(&i) => {
                self.names.insert(d, i);
            }
            None => self.set_name(d, or),
        }
        d
    }

    fn unnamed_cont(&mut self, params: &[Type]) -> Def {
        let ty = self.ty_cont(params);
        let no = self.lit_bool(false);
        // (Most continuations have few parameters: their filters need no allocation.)
        let ops = match params.len() {
            n @ 0..=8 => self.make_ops(&[no; 8][..n]),
            n => self.make_ops(&vec![no; n]),
        };
        let d = self.push(DefData {
            node: Node::Cont,
            ty,
            has_params: false,
            ops,
        });
        self.nominals.insert(d);
        d
    }

    /// Number of parameters of continuation `cont`.
    pub fn num_params(&self, cont: Def) -> usize {
        self.types
            .cont_params(self.type_of(cont))
            .map_or(0, |p| p.len())
    }

    /// Parameter `i` of continuation `cont`.
    ///
    /// # Panics
    /// If `cont` is not a continuation or has no parameter `i`.
    pub fn param(&mut self, cont: Def, i: usize) -> Def {
        let tys =
            (self.types.cont_params(self.type_of(cont))).expect("param of a non-continuation");
        let (ty, n) = (tys[i], tys.len());
        let c = cont.index();
        if self.param_runs.len() <= c {
            self.param_runs.resize(c + 1, NO_PARAM);
        }
        if self.param_runs[c] == NO_PARAM {
            let start = u32::try_from(self.params.len()).expect("fewer than 2^32 parameters");
            self.param_runs[c] = start;
            self.params.resize(self.params.len() + n, NO_PARAM);
        }
        let slot = self.param_runs[c] as usize + i;
        if self.params[slot] != NO_PARAM {
            return Def::from_index(self.params[slot] as usize);
        }
        let ops = self.make_ops(&[cont]);
        let p = self.push(DefData {
            node: Node::Param(i as u32),
            ty,
            has_params: true,
            ops,
        });
        self.params[slot] = p.index() as u32;
        p
    }

    /// All parameters of continuation `cont`.
    pub fn params(&mut self, cont: Def) -> Vec<Def> {
        (0..self.num_params(cont))
            .map(|i| self.param(cont, i))
            .collect()
    }

    /// The filters of continuation `cont`, one per parameter.
    pub fn filters(&self, cont: Def) -> &[Def] {
        &self.ops(cont)[..self.num_params(cont)]
    }

    /// The body of continuation `cont` as `(callee, args)`, if it has one.
    pub fn body(&self, cont: Def) -> Option<(Def, &[Def])> {
        let ops = &self.ops(cont)[self.num_params(cont)..];
        ops.split_first().map(|(c, a)| (*c, a))
    }

    /// Sets the filter of parameter `i` of `cont` (a `bool` def).
    pub fn set_filter(&mut self, cont: Def, i: usize, filter: Def) {
        assert!(
            self.types.is_bool(self.type_of(filter)),
            "a filter must be a bool"
        );
        let mut ops = self.ops(cont).to_vec();
        ops[i] = filter;
        self.set_ops(cont, &ops);
    }

    /// Makes the body of `cont` the jump `callee(args)`, after checking its types.
    pub fn try_set_body(&mut self, cont: Def, callee: Def, args: &[Def]) -> Result<(), String> {
        typing::check_jump(self, callee, args)?;
        let n = self.num_params(cont);
        let mut ops = self.ops(cont)[..n].to_vec();
        ops.push(callee);
        ops.extend_from_slice(args);
        self.set_ops(cont, &ops);
        Ok(())
    }

    /// Makes the body of `cont` the jump `callee(args)`.
    ///
    /// # Panics
    /// If the jump is ill-typed.
    pub fn set_body(&mut self, cont: Def, callee: Def, args: &[Def]) {
        if let Err(e) = self.try_set_body(cont, callee, args) {
            panic!("ill-typed jump: {e}")
        }
    }

    /// Removes the body of `cont`.
    pub fn clear_body(&mut self, cont: Def) {
        let n = self.num_params(cont);
        let ops = self.ops(cont)[..n].to_vec();
        self.set_ops(cont, &ops);
    }

    /// A new global variable initialized with `init`; its value is a pointer to it.
    pub fn global(&mut self, init: Def, mutable: bool, name: &str) -> Def {
        let t = self.type_of(init);
        let ty = self.ty_ptr(t, AddrSpace::Generic);
        let d = self.push(DefData {
            node: Node::Global { mutable },
            ty,
            has_params: false,
            ops: Ops::Inline(1, [init, Def::default(), Def::default()]), // one operand fits inline
        });
        self.nominals.insert(d);
        self.set_name(d, name);
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_def_takes_forty_bytes() {
        assert_eq!(std::mem::size_of::<DefData>(), 40);
        assert_eq!(std::mem::size_of::<Def>(), 4);
    }

    #[test]
    fn setting_a_body_again_reuses_spilled_operands() {
        let mut w = World::new();
        let i32t = w.ty_int(32, true);
        let k = w.cont(&[i32t; 5], "k");
        let ps = w.params(k);
        w.set_body(k, k, &ps);
        let spilled = w.spill.len();
        let rev: Vec<Def> = ps.iter().rev().copied().collect();
        w.set_body(k, k, &rev);
        assert_eq!(
            w.spill.len(),
            spilled,
            "the second body reuses the first one's storage"
        );
        assert_eq!(w.body(k).map(|(c, a)| (c, a.to_vec())), Some((k, rev)));
    }

    /// A component of a tuple or struct, by value and by address, has that component's
    /// type; an index past the end is an error that gives the number of components.
    #[test]
    fn components_are_typed_by_their_index() {
        let mut w = World::new();
        let (i8t, i32t, f64t) = (w.ty_int(8, true), w.ty_int(32, true), w.ty_float(64));
        let s = w.struct_type("S");
        let fields = [("a", i8t), ("b", f64t), ("c", i32t)];
        w.set_struct_fields(s, fields.iter().map(|&(n, t)| (n.into(), t)).collect());
        let k = w.cont(&[s, i32t, f64t], "k");
        let ps = w.params(k);
        let t = w.tuple(&ps[1..]);
        for (i, &(_, ft)) in fields.iter().enumerate() {
            let x = w.extract_at(ps[0], i as u32);
            assert_eq!(w.type_of(x), ft);
        }
        let x = w.extract_at(t, 1);
        assert_eq!(w.type_of(x), f64t);
        let two = w.lit_i64(2);
        let e = w.try_build(Node::Extract, None, &[t, two]).unwrap_err();
        assert!(
            e.contains("index 2 out of range") && e.contains("(has 2)"),
            "{e}"
        );
        let three = w.lit_i64(3);
        let e = w
            .try_build(Node::Extract, None, &[ps[0], three])
            .unwrap_err();
        assert!(
            e.contains("index 3 out of range") && e.contains("(has 3)"),
            "{e}"
        );
        let mt = w.ty_mem();
        let j = w.cont(&[mt], "j");
        let m = w.params(j)[0];
        let slot = w.slot(m, s);
        let p = w.extract_at(slot, 1);
        let one = w.lit_i64(1);
        let field = w.lea(p, one);
        let want = w.ty_ptr(f64t, AddrSpace::Generic);
        assert_eq!(w.type_of(field), want);
    }
}
