//! Name resolution and type checking: from the AST of all files (and the prelude) to a
//! checked [`Program`].
//!
//! Items are order-independent: the checker first registers every item of every module,
//! then resolves signatures on demand (a function without a return type gets it from its
//! body, checked on first use), then checks every body. Checking is bidirectional as in
//! Artic: an expected type flows down into literals, closures and aggregates, and the found
//! type is coerced to it at the end (subtyping: `!` to anything, `&mut T` to `&T`,
//! `&[T * N]` to `&[T]`, pointees of the same layout through `&`, and functions and tuples
//! by conversion, see `convert`). Implicit values are resolved where they are summoned (see
//! `implicit`).
//!
//! Lookup order for a name: local variables and block items (innermost first), then the
//! items of the enclosing modules (innermost first), then the prelude. A program's own items
//! therefore shadow the prelude's.

mod convert;
mod exhaust;
mod expr;
mod implicit;
mod items;
mod pat;

use crate::ast;
use crate::diag::Diagnostic;
use crate::hir::{self, FnId, LoopId, StaticId, Var, VarId};
use crate::source::Span;
use crate::types::{DeclId, Prim, Ty, TyKind, TyTable};
use rustc_hash::FxHashMap;

/// A struct declaration.
#[derive(Clone, Debug)]
pub struct StructInfo {
    /// Its name.
    pub name: Box<str>,
    /// Names of its type parameters.
    pub type_params: Vec<Box<str>>,
    /// Fields: name (the index as text for tuple-like structs) and type (with `Param`s).
    pub fields: Vec<(Box<str>, Ty)>,
    /// The index of each field by name (set with `fields`).
    pub field_index: FxHashMap<Box<str>, u32>,
    /// Default values of fields.
    pub defaults: Vec<Option<hir::Expr>>,
    /// Record, tuple-like or unit.
    pub shape: ast::StructShape,
    /// For the fields of a record variant `E::C { x: T }`: the enum and the variant.
    pub variant_of: Option<(DeclId, u32)>,
    /// Where.
    pub span: Span,
}

/// Each name of `names` with its index (the first one of a name given twice).
pub(crate) fn index_by_name<'a>(
    names: impl Iterator<Item = &'a Box<str>>,
) -> FxHashMap<Box<str>, u32> {
    let mut m = FxHashMap::default();
    for (i, n) in names.enumerate() {
        m.entry(n.clone()).or_insert(i as u32);
    }
    m
}

impl StructInfo {
    /// The index of the field called `name`.
    pub fn field(&self, name: &str) -> Option<usize> {
        self.field_index.get(name).map(|&i| i as usize)
    }
}

/// An enum declaration.
#[derive(Clone, Debug)]
pub struct EnumInfo {
    /// Its name.
    pub name: Box<str>,
    /// Names of its type parameters.
    pub type_params: Vec<Box<str>>,
    /// Variants: name and payload type.
    pub variants: Vec<(Box<str>, Option<Ty>)>,
    /// The index of each variant by name.
    pub variant_index: FxHashMap<Box<str>, u32>,
    /// Where.
    pub span: Span,
}

/// How a function is linked.
#[derive(Clone, Debug, PartialEq)]
pub enum Linkage {
    /// Defined in the program.
    Internal,
    /// `#[export]`: an external symbol with this name.
    Export(Box<str>),
    /// `#[import]`: provided by the runtime, a C library or the compiler (`cc = "builtin"`).
    Import {
        /// The symbol name.
        name: Box<str>,
        /// The calling convention as written.
        cc: Box<str>,
    },
}

/// A function declaration.
#[derive(Clone, Debug)]
pub struct FnInfo {
    /// Its name.
    pub name: Box<str>,
    /// Names of its type parameters (those of enclosing functions first).
    pub type_params: Vec<Box<str>>,
    /// How many of the type parameters belong to enclosing functions.
    pub outer_params: u32,
    /// The domain (a tuple for several parameters).
    pub dom: Ty,
    /// The codomain.
    pub codom: Ty,
    /// The body with its parameters.
    pub body: Option<hir::Lambda>,
    /// How it is linked.
    pub linkage: Linkage,
    /// Whether it is declared inside another function.
    pub nested: bool,
    /// How many parameters it declares, and how many of the last ones are `implicit`.
    pub params: (u32, u32),
    /// Where.
    pub span: Span,
}

/// A static variable.
#[derive(Clone, Debug)]
pub struct StaticInfo {
    /// Its name.
    pub name: Box<str>,
    /// Its type.
    pub ty: Ty,
    /// Whether it is `static mut`.
    pub mutable: bool,
    /// The initializer.
    pub init: Option<hir::Expr>,
    /// Where.
    pub span: Span,
}

/// A checked program.
pub struct Program {
    /// The types.
    pub tys: TyTable,
    /// Struct declarations.
    pub structs: Vec<StructInfo>,
    /// Enum declarations.
    pub enums: Vec<EnumInfo>,
    /// Function declarations.
    pub fns: Vec<FnInfo>,
    /// Static variables.
    pub statics: Vec<StaticInfo>,
    /// Local variables.
    pub vars: Vec<Var>,
    /// The program's `main`: a function named so at the top level of its files.
    pub main: Option<FnId>,
}

impl Program {
    /// `t` as written in the language.
    pub fn ty_name(&self, t: Ty) -> String {
        ty_name(&self.tys, &self.structs, &self.enums, t, &[])
    }
}

/// Formats a type; `params` names the type parameters in scope.
pub(crate) fn ty_name(
    tys: &TyTable,
    structs: &[StructInfo],
    enums: &[EnumInfo],
    t: Ty,
    params: &[Box<str>],
) -> String {
    let f = |t| ty_name(tys, structs, enums, t, params);
    let args = |ts: &[Ty]| {
        if ts.is_empty() {
            String::new()
        } else {
            format!(
                "[{}]",
                ts.iter().map(|&t| f(t)).collect::<Vec<_>>().join(", ")
            )
        }
    };
    match tys.kind(t) {
        TyKind::Prim(p) => p.name().into(),
        TyKind::Tuple(ts) if ts.len() == 1 => format!("({},)", f(ts[0])),
        TyKind::Tuple(ts) => format!(
            "({})",
            ts.iter().map(|&t| f(t)).collect::<Vec<_>>().join(", ")
        ),
        TyKind::Array {
            elem,
            len: Some(n),
            simd,
        } => format!("{}[{} * {n}]", if *simd { "simd" } else { "" }, f(*elem)),
        TyKind::Array {
            elem, len: None, ..
        } => format!("[{}]", f(*elem)),
        TyKind::Ptr {
            pointee,
            mutable,
            space,
        } => format!(
            "&{}{}{}",
            if *mutable { "mut " } else { "" },
            if *space != 0 {
                format!("addrspace({space}) ")
            } else {
                String::new()
            },
            f(*pointee)
        ),
        TyKind::Fn { dom, codom } => {
            let d = f(*dom);
            let d = if d.starts_with('(') {
                d
            } else {
                format!("({d})")
            };
            format!("fn{d} -> {}", f(*codom))
        }
        TyKind::NoRet => "!".into(),
        TyKind::Struct(d, ts) => format!("{}{}", structs[*d as usize].name, args(ts)),
        TyKind::Enum(d, ts) => format!("{}{}", enums[*d as usize].name, args(ts)),
        TyKind::Param(i) => params
            .get(*i as usize)
            .map_or_else(|| format!("T{i}"), |n| n.to_string()),
        TyKind::Var(_) => "_".into(),
        TyKind::Error => "{error}".into(),
    }
}

type ModId = u32;

/// What a name refers to at module level or in a block.
#[derive(Clone, Copy, Debug, PartialEq)]
enum ItemRef {
    Fn(FnId),
    Struct(DeclId),
    Enum(DeclId),
    Alias(u32),
    Static(StaticId),
    Mod(ModId),
    Variant(DeclId, u32),
    Use(u32),
}

struct ModData {
    parent: Option<ModId>,
    items: FxHashMap<Box<str>, (ItemRef, Span)>,
    /// The module's `implicit` declarations.
    implicits: Vec<FnId>,
}

/// Where the signature or body of a declaration comes from.
struct FnSource<'a> {
    decl: &'a ast::FnDecl,
    attrs: &'a [ast::Attr],
    module: ModId,
    /// Resolution state of the signature and body.
    state: SigState,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum SigState {
    Pending,
    Resolving,
    Done,
    /// The body is being checked to find the return type.
    Inferring,
}

struct AliasSource<'a> {
    name: &'a ast::Ident,
    type_params: &'a [ast::Ident],
    ty: &'a ast::Type,
    module: ModId,
    resolved: Option<Ty>,
    resolving: bool,
}

struct UseSource<'a> {
    path: &'a ast::Path,
    module: ModId,
    resolved: Option<ItemRef>,
    resolving: bool,
}

/// One entry of a local scope.
#[derive(Clone, Copy, Debug)]
enum Local {
    Var(VarId),
    Item(ItemRef),
}

/// The context of the body being checked.
#[derive(Default)]
struct BodyCx {
    scopes: Vec<FxHashMap<Box<str>, Local>>,
    /// Type parameters in scope: name and type.
    type_params: Vec<(Box<str>, Ty)>,
    /// The functions whose bodies enclose this point (innermost last), with their return
    /// types and, where that type is inferred from the body, the function's place and what
    /// it is (`function`, `closure`).
    fns: Vec<(FnId, Ty, Option<(Span, &'static str)>)>,
    /// Enclosing loops (innermost last).
    loops: Vec<LoopId>,
    /// Whether a partial-evaluation filter is being checked.
    in_filter: bool,
}

/// The checker's state.
struct Checker<'a> {
    tys: TyTable,
    diags: &'a mut Vec<Diagnostic>,
    mods: Vec<ModData>,
    fns: Vec<FnInfo>,
    fn_src: Vec<FnSource<'a>>,
    structs: Vec<StructInfo>,
    struct_src: Vec<(&'a ast::Item, ModId, bool)>,
    enums: Vec<EnumInfo>,
    enum_src: Vec<(&'a ast::Item, ModId, bool)>,
    /// The symbol names exported so far, with the place of the `#[export]`.
    exported: FxHashMap<Box<str>, Span>,
    aliases: Vec<AliasSource<'a>>,
    statics: Vec<StaticInfo>,
    static_src: Vec<(&'a ast::Item, ModId, SigState)>,
    uses: Vec<UseSource<'a>>,
    vars: Vec<Var>,
    /// Bindings of inference variables.
    subst: Vec<Option<Ty>>,
    next_loop: LoopId,
    /// Return targets of closures, numbered after the functions' (which use their id).
    next_return: FnId,
    cur_mod: ModId,
    cx: BodyCx,
    prelude: ModId,
}

/// Checks a program: the prelude's modules first, then the program's files, which form
/// one root module. Returns the checked program; errors and warnings go to `diags` (the
/// program must not be lowered if there is an error).
pub fn check(
    prelude: &[ast::Module],
    files: &[ast::Module],
    diags: &mut Vec<Diagnostic>,
) -> Program {
    let mut c = Checker {
        tys: TyTable::new(),
        diags,
        mods: Vec::new(),
        fns: Vec::new(),
        fn_src: Vec::new(),
        structs: Vec::new(),
        struct_src: Vec::new(),
        enums: Vec::new(),
        enum_src: Vec::new(),
        exported: FxHashMap::default(),
        aliases: Vec::new(),
        statics: Vec::new(),
        static_src: Vec::new(),
        uses: Vec::new(),
        vars: Vec::new(),
        subst: Vec::new(),
        next_loop: 0,
        next_return: u32::MAX / 2,
        cur_mod: 0,
        cx: BodyCx::default(),
        prelude: 0,
    };
    let prelude_mod = c.new_mod(None);
    for m in prelude {
        c.register_items(prelude_mod, &m.items);
    }
    let root = c.new_mod(None);
    for m in files {
        c.register_items(root, &m.items);
    }
    c.prelude = prelude_mod;
    c.check_all();
    c.warn_unused_vars();
    let main = match c.mods[root as usize].items.get("main") {
        Some((ItemRef::Fn(f), _)) => Some(*f),
        _ => None,
    };
    if let Some(f) = main {
        let info = &c.fns[f as usize];
        let (span, polymorphic) = (info.span, !info.type_params.is_empty());
        let entry_exported = matches!(info.linkage, Linkage::Export(_));
        if polymorphic {
            c.err(span, "`main` cannot be polymorphic");
        }
        // The entry point is the symbol `main` whether it is exported or not: a function
        // exported under that name elsewhere would be a second one.
        let other = c.exported.get("main").copied();
        if let (false, Some(other)) = (entry_exported, other) {
            let d = c
                .error(other, "a function named `main` is already the program's entry point")
                .with_label_message("exported as `main` here")
                .with_secondary(span, "the entry point")
                .with_note("exported functions share one namespace with the entry point `main`: rename one, or export it with `#[export(name = \"...\")]`");
            c.emit(d);
        }
    }
    Program {
        tys: c.tys,
        structs: c.structs,
        enums: c.enums,
        fns: c.fns,
        statics: c.statics,
        vars: c.vars,
        main,
    }
}

/// The edit distance between two names, counting a swap of neighbours as one edit (for
/// "did you mean" suggestions).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for j in 0..=b.len() {
        d[0][j] = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// The candidate closest to `name`, if it is close enough to be a likely typo.
fn closest<'n>(name: &str, candidates: impl Iterator<Item = &'n str>) -> Option<&'n str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .filter(|c| *c != name)
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, c)| c)
}

impl<'a> Checker<'a> {
    fn error(&mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::error(span, message)
    }

    fn emit(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    fn err(&mut self, span: Span, message: impl Into<String>) {
        let d = Diagnostic::error(span, message);
        self.diags.push(d);
    }

    fn new_mod(&mut self, parent: Option<ModId>) -> ModId {
        self.mods.push(ModData {
            parent,
            items: FxHashMap::default(),
            implicits: Vec::new(),
        });
        (self.mods.len() - 1) as ModId
    }

    /// `t` with bound inference variables replaced, shallowly.
    fn resolve(&self, mut t: Ty) -> Ty {
        while let TyKind::Var(v) = self.tys.kind(t) {
            match self.subst[*v as usize] {
                Some(b) => t = b,
                None => break,
            }
        }
        t
    }

    /// `t` with all bound inference variables replaced.
    fn zonk(&mut self, t: Ty) -> Ty {
        if !self.tys.has_vars(t) {
            return t;
        }
        let subst = std::mem::take(&mut self.subst);
        let r = self.tys.map_ty(t, &mut |table, x| match table.kind(x) {
            TyKind::Var(v) => subst[*v as usize],
            _ => None,
        });
        self.subst = subst;
        // Bindings may themselves hold bound variables: repeat until nothing changes.
        if self.tys.has_vars(r) && r != t {
            self.zonk(r)
        } else {
            r
        }
    }

    fn fresh_var(&mut self) -> Ty {
        self.subst.push(None);
        self.tys.intern(TyKind::Var((self.subst.len() - 1) as u32))
    }

    fn ty_str(&mut self, t: Ty) -> String {
        let t = self.zonk(t);
        let names: Vec<Box<str>> = {
            let mut v: Vec<(Box<str>, u32)> = self
                .cx
                .type_params
                .iter()
                .filter_map(|(n, t)| match self.tys.kind(*t) {
                    TyKind::Param(i) => Some((n.clone(), *i)),
                    _ => None,
                })
                .collect();
            v.sort_by_key(|(_, i)| *i);
            let mut names = Vec::new();
            for (n, i) in v {
                while names.len() < i as usize {
                    names.push(format!("T{}", names.len()).into());
                }
                names.push(n);
            }
            names
        };
        ty_name(&self.tys, &self.structs, &self.enums, t, &names)
    }

    /// Unifies `a` and `b` (binding inference variables); false if they differ.
    fn unify(&mut self, a: Ty, b: Ty) -> bool {
        let a = self.resolve(a);
        let b = self.resolve(b);
        if a == b {
            return true;
        }
        match (self.tys.kind(a).clone(), self.tys.kind(b).clone()) {
            (TyKind::Var(v), _) => {
                if self.occurs(v, b) {
                    return false;
                }
                self.subst[v as usize] = Some(b);
                true
            }
            (_, TyKind::Var(v)) => {
                if self.occurs(v, a) {
                    return false;
                }
                self.subst[v as usize] = Some(a);
                true
            }
            (TyKind::Error, _) | (_, TyKind::Error) => true,
            (TyKind::Tuple(x), TyKind::Tuple(y)) => {
                x.len() == y.len() && x.iter().zip(&y).all(|(&p, &q)| self.unify(p, q))
            }
            (TyKind::Struct(d, x), TyKind::Struct(e, y))
            | (TyKind::Enum(d, x), TyKind::Enum(e, y)) => {
                d == e && x.iter().zip(&y).all(|(&p, &q)| self.unify(p, q))
            }
            (
                TyKind::Array {
                    elem: p,
                    len: m,
                    simd: s,
                },
                TyKind::Array {
                    elem: q,
                    len: n,
                    simd: t,
                },
            ) => m == n && s == t && self.unify(p, q),
            (
                TyKind::Ptr {
                    pointee: p,
                    mutable: m,
                    space: s,
                },
                TyKind::Ptr {
                    pointee: q,
                    mutable: n,
                    space: t,
                },
            ) => m == n && s == t && self.unify(p, q),
            (TyKind::Fn { dom: d1, codom: c1 }, TyKind::Fn { dom: d2, codom: c2 }) => {
                self.unify(d1, d2) && self.unify(c1, c2)
            }
            _ => false,
        }
    }

    fn occurs(&mut self, v: u32, t: Ty) -> bool {
        let t = self.zonk(t);
        let var = self.tys.intern(TyKind::Var(v));
        let mut found = false;
        self.tys.map_ty(t, &mut |_, x| {
            if x == var {
                found = true;
            }
            None
        });
        found
    }

    /// Whether a value of type `from` may be used where `to` is expected without a cast,
    /// and whether that needs a conversion node (pointer subtyping).
    fn subtype(&mut self, from: Ty, to: Ty) -> Option<bool> {
        let from = self.resolve(from);
        let to = self.resolve(to);
        if from == to {
            return Some(false);
        }
        match (self.tys.kind(from).clone(), self.tys.kind(to).clone()) {
            (TyKind::NoRet, _) => Some(true),
            (TyKind::Error, _) | (_, TyKind::Error) => Some(false),
            (
                TyKind::Ptr {
                    pointee: p,
                    mutable: m,
                    space: s,
                },
                TyKind::Ptr {
                    pointee: q,
                    mutable: n,
                    space: t,
                },
            ) if s == t && (m || !n) => {
                if self.unify(p, q) {
                    return Some(m != n);
                }
                // `&[T * N]` to `&[T]`, `&[&mut T]` to `&[&T]`: only the pointer's type changes.
                self.same_layout_subtype(p, q, n).then_some(true)
            }
            (TyKind::Fn { dom: d1, codom: c1 }, TyKind::Fn { dom: d2, codom: c2 }) => {
                if self.unify(from, to) {
                    return Some(false);
                }
                // Contravariant in the domain, covariant in the codomain.
                (self.subtype(d2, d1).is_some() && self.subtype(c1, c2).is_some()).then_some(true)
            }
            (TyKind::Tuple(x), TyKind::Tuple(y)) if x.len() == y.len() => {
                if self.unify(from, to) {
                    return Some(false);
                }
                let all = x
                    .iter()
                    .zip(&y)
                    .all(|(&a, &b)| self.subtype(a, b).is_some());
                all.then_some(true)
            }
            _ => {
                if self.unify(from, to) {
                    Some(false)
                } else {
                    None
                }
            }
        }
    }

    /// Whether a value of type `p` may be read as one of type `q` through a pointer, with
    /// the same bits: the types differ only in pointers (to a subtype, or `&mut` for `&`)
    /// and in sized arrays read as unsized ones. Through a `writable` pointer, which could
    /// store a value of the wider type, only the outer array's length may be dropped.
    fn same_layout_subtype(&mut self, p: Ty, q: Ty, writable: bool) -> bool {
        if self.unify(p, q) {
            return true;
        }
        let (p, q) = (self.resolve(p), self.resolve(q));
        match (self.tys.kind(p).clone(), self.tys.kind(q).clone()) {
            (
                TyKind::Array {
                    elem: a,
                    len: m,
                    simd: false,
                },
                TyKind::Array {
                    elem: b,
                    len: n,
                    simd: false,
                },
            ) if m == n || n.is_none() => {
                if writable {
                    self.unify(a, b)
                } else {
                    self.same_layout_subtype(a, b, false)
                }
            }
            (
                TyKind::Ptr {
                    pointee: a,
                    space: s,
                    ..
                },
                TyKind::Ptr {
                    pointee: b,
                    mutable: false,
                    space: t,
                },
            ) if !writable && s == t => self.same_layout_subtype(a, b, false),
            (TyKind::Tuple(x), TyKind::Tuple(y)) if !writable && x.len() == y.len() => x
                .iter()
                .zip(&y)
                .all(|(&a, &b)| self.same_layout_subtype(a, b, false)),
            _ => false,
        }
    }

    /// Uses `e` where a value of type `to` is expected: converts by subtyping or reports a
    /// mismatch.
    fn coerce(&mut self, e: hir::Expr, to: Ty) -> hir::Expr {
        match self.subtype(e.ty, to) {
            Some(false) => e,
            Some(true) => {
                let kinds = (
                    self.tys.kind(self.resolve(e.ty)),
                    self.tys.kind(self.resolve(to)),
                );
                match kinds {
                    (TyKind::Fn { .. }, TyKind::Fn { .. }) => self.convert_fn(e, to),
                    (TyKind::Tuple(_), TyKind::Tuple(_)) => self.convert_tuple(e, to),
                    _ => {
                        let span = e.span;
                        hir::Expr::new(hir::ExprKind::Cast(Box::new(e)), to, span)
                    }
                }
            }
            None => match self.auto_ref(&e, to) {
                // Artic passes a value where a `&T` is expected by its address (and a
                // mutable place where a `&mut T` is expected).
                Some(addr_ty) => {
                    let span = e.span;
                    let addr = hir::Expr::new(hir::ExprKind::AddrOf(Box::new(e)), addr_ty, span);
                    if addr_ty == to {
                        addr
                    } else {
                        hir::Expr::new(hir::ExprKind::Cast(Box::new(addr)), to, span)
                    }
                }
                None => self.mismatch(e, to),
            },
        }
    }

    fn mismatch(&mut self, e: hir::Expr, to: Ty) -> hir::Expr {
        let (want, found) = (self.ty_str(to), self.ty_str(e.ty));
        let mut d = self
            .error(e.span, "mismatched types")
            .with_label_message(format!("expected `{want}`, found `{found}`"));
        if self.tys.is_num(self.resolve(to)) && self.tys.is_num(self.resolve(e.ty)) {
            d = d.with_note(format!("convert explicitly with `as {want}`"));
        }
        self.emit(d);
        hir::Expr::new(hir::ExprKind::Error, TyTable::ERROR, e.span)
    }

    /// When the value `e` may stand for its address where `to` (a pointer) is expected: the
    /// type of that address (`&[T * N]` where `to` is `&[T]`).
    fn auto_ref(&mut self, e: &hir::Expr, to: Ty) -> Option<Ty> {
        let (from, to) = (self.resolve(e.ty), self.resolve(to));
        let TyKind::Ptr {
            pointee,
            mutable,
            space: 0,
        } = self.tys.kind(to).clone()
        else {
            return None;
        };
        if matches!(
            self.tys.kind(from),
            TyKind::Ptr { .. } | TyKind::Var(_) | TyKind::NoRet
        ) {
            return None;
        }
        if mutable && !self.mutable_place(e) {
            return None;
        }
        let fits = match (self.tys.kind(from).clone(), self.tys.kind(pointee).clone()) {
            (
                TyKind::Array {
                    elem: a,
                    len: Some(_),
                    simd: false,
                },
                TyKind::Array {
                    elem: b, len: None, ..
                },
            ) => self.unify(a, b),
            _ => self.unify(from, pointee),
        };
        if !fits {
            return None;
        }
        if mutable {
            self.mark_mutated(e);
        }
        Some(self.tys.ptr(from, mutable))
    }

    /// Whether `e` is a place that may be written (a mutable variable, or a part of one, or
    /// reached through a `&mut`).
    fn mutable_place(&mut self, e: &hir::Expr) -> bool {
        match &e.kind {
            hir::ExprKind::Var(v) => self.vars[*v as usize].mutable,
            hir::ExprKind::Field(b, _) | hir::ExprKind::Index(b, _) => self.mutable_place(b),
            hir::ExprKind::Deref(p) => {
                let t = self.resolve(p.ty);
                matches!(self.tys.kind(t), TyKind::Ptr { mutable: true, .. })
            }
            _ => false,
        }
    }

    fn mark_mutated(&mut self, e: &hir::Expr) {
        match &e.kind {
            hir::ExprKind::Var(v) => self.vars[*v as usize].mutated = true,
            hir::ExprKind::Field(b, _) | hir::ExprKind::Index(b, _) => self.mark_mutated(b),
            _ => {}
        }
    }

    fn new_var(&mut self, name: &ast::Ident, ty: Ty, mutable: bool) -> VarId {
        self.vars.push(Var {
            name: name.name.clone(),
            ty,
            mutable,
            span: name.span,
            used: false,
            mutated: false,
        });
        let id = (self.vars.len() - 1) as VarId;
        if let Some(s) = self.cx.scopes.last_mut() {
            s.insert(name.name.clone(), Local::Var(id));
        }
        id
    }

    fn warn_unused_vars(&mut self) {
        let mut ws = Vec::new();
        for v in &self.vars {
            if v.name.starts_with('_') {
                continue;
            }
            if !v.used {
                ws.push(
                    Diagnostic::warning(v.span, format!("unused variable `{}`", v.name))
                        .with_note(format!("if this is intentional, name it `_{}`", v.name)),
                );
            } else if v.mutable && !v.mutated {
                ws.push(
                    Diagnostic::warning(
                        v.span,
                        format!("variable `{}` is declared `mut` but never changed", v.name),
                    )
                    .with_label_message("remove this `mut`"),
                );
            }
        }
        self.diags.extend(ws);
    }

    // ----- name lookup -------------------------------------------------------------------

    /// Looks `name` up in local scopes, then enclosing modules, then the prelude.
    fn lookup(&mut self, name: &str) -> Option<Local> {
        for s in self.cx.scopes.iter().rev() {
            if let Some(l) = s.get(name) {
                return Some(*l);
            }
        }
        let mut m = Some(self.cur_mod);
        while let Some(id) = m {
            if let Some((r, _)) = self.mods[id as usize].items.get(name) {
                return Some(Local::Item(*r));
            }
            m = self.mods[id as usize].parent;
        }
        self.mods[self.prelude as usize]
            .items
            .get(name)
            .map(|(r, _)| Local::Item(*r))
    }

    /// Every name visible here, for suggestions.
    fn visible_names(&self) -> Vec<Box<str>> {
        let mut names: Vec<Box<str>> = Vec::new();
        for s in &self.cx.scopes {
            names.extend(s.keys().filter(|k| !implicit::is_key(k)).cloned());
        }
        let mut m = Some(self.cur_mod);
        while let Some(id) = m {
            names.extend(self.mods[id as usize].items.keys().cloned());
            m = self.mods[id as usize].parent;
        }
        names.extend(self.mods[self.prelude as usize].items.keys().cloned());
        names.extend(self.cx.type_params.iter().map(|(n, _)| n.clone()));
        names
    }

    fn unknown_name(&mut self, ident: &ast::Ident, what: &str) {
        let names = self.visible_names();
        let mut d = self
            .error(
                ident.span,
                format!("cannot find {what} `{}` in this scope", ident.name),
            )
            .with_label_message("not found");
        if let Some(s) = closest(&ident.name, names.iter().map(|n| &**n)) {
            // C's math functions come in pairs, `fmin` for `f64` and `fminf` for `f32`:
            // name both where both are there.
            let f32_twin = format!("{s}f");
            d = match names.iter().any(|n| **n == *f32_twin) {
                true => d.with_note(format!(
                    "did you mean `{s}` (for `f64`) or `{f32_twin}` (for `f32`)?"
                )),
                false => d.with_note(format!("did you mean `{s}`?")),
            };
        }
        self.emit(d);
    }

    /// Follows `use` declarations.
    fn deref_use(&mut self, r: ItemRef, span: Span) -> Option<ItemRef> {
        let ItemRef::Use(u) = r else { return Some(r) };
        if let Some(r) = self.uses[u as usize].resolved {
            return Some(r);
        }
        if self.uses[u as usize].resolving {
            self.err(span, "`use` declarations refer to each other in a cycle");
            return None;
        }
        self.uses[u as usize].resolving = true;
        let (path, module) = (self.uses[u as usize].path, self.uses[u as usize].module);
        let saved = std::mem::replace(&mut self.cur_mod, module);
        let saved_cx = std::mem::take(&mut self.cx);
        let r = self.resolve_path_item(path);
        self.cx = saved_cx;
        self.cur_mod = saved;
        self.uses[u as usize].resolving = false;
        self.uses[u as usize].resolved = r;
        r
    }

    /// Resolves a path to an item (ignoring type arguments), or reports why not.
    fn resolve_path_item(&mut self, path: &ast::Path) -> Option<ItemRef> {
        let segs = &path.segments;
        let first = segs.first()?;
        let mut cur: ItemRef = if &*first.ident.name == "super" {
            match self.mods[self.cur_mod as usize].parent {
                Some(p) => ItemRef::Mod(p),
                None => {
                    self.err(first.ident.span, "`super` used in the top-level module");
                    return None;
                }
            }
        } else {
            match self.lookup(&first.ident.name) {
                Some(Local::Item(r)) => self.deref_use(r, first.ident.span)?,
                Some(Local::Var(_)) => {
                    self.err(
                        first.ident.span,
                        format!("`{}` is a variable, not a module or type", first.ident.name),
                    );
                    return None;
                }
                None => {
                    self.unknown_name(&first.ident, "name");
                    return None;
                }
            }
        };
        for seg in &segs[1..] {
            cur = match cur {
                ItemRef::Mod(m) => {
                    let name = &seg.ident.name;
                    let found = if &**name == "super" {
                        self.mods[m as usize].parent.map(ItemRef::Mod)
                    } else {
                        self.mods[m as usize].items.get(name).map(|(r, _)| *r)
                    };
                    match found {
                        Some(r) => self.deref_use(r, seg.ident.span)?,
                        None => {
                            let names: Vec<Box<str>> =
                                self.mods[m as usize].items.keys().cloned().collect();
                            let mut d = self
                                .error(
                                    seg.ident.span,
                                    format!("cannot find `{name}` in this module"),
                                )
                                .with_label_message("not found");
                            if let Some(s) = closest(name, names.iter().map(|n| &**n)) {
                                d = d.with_note(format!("did you mean `{s}`?"));
                            }
                            self.emit(d);
                            return None;
                        }
                    }
                }
                ItemRef::Enum(e) => {
                    self.enum_info(e);
                    let name = &seg.ident.name;
                    match self.enums[e as usize].variant_index.get(name) {
                        Some(&i) => ItemRef::Variant(e, i),
                        None => {
                            let names: Vec<Box<str>> = self.enums[e as usize]
                                .variants
                                .iter()
                                .map(|(n, _)| n.clone())
                                .collect();
                            let mut d = self.error(
                                seg.ident.span,
                                format!(
                                    "enum `{}` has no variant `{name}`",
                                    self.enums[e as usize].name
                                ),
                            );
                            if let Some(s) = closest(name, names.iter().map(|n| &**n)) {
                                d = d.with_note(format!("did you mean `{s}`?"));
                            }
                            self.emit(d);
                            return None;
                        }
                    }
                }
                _ => {
                    self.err(
                        seg.ident.span,
                        format!(
                            "`{}` is not a module or an enum",
                            path_prefix(path, &seg.ident)
                        ),
                    );
                    return None;
                }
            };
        }
        Some(cur)
    }
}

/// The path up to (excluding) `seg`, as written.
fn path_prefix(path: &ast::Path, seg: &ast::Ident) -> String {
    let mut parts = Vec::new();
    for s in &path.segments {
        if std::ptr::eq(&s.ident, seg) {
            break;
        }
        parts.push(s.ident.name.to_string());
    }
    parts.join("::")
}

/// The primitive type named `name`.
fn prim_type(tys: &mut TyTable, name: &str) -> Option<Ty> {
    Prim::from_name(name).map(|p| tys.prim(p))
}
