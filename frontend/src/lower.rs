//! Lowering: from the checked program to the continuation-passing IR.
//!
//! - A function of type `fn(D) -> R` becomes a continuation `cn(mem, D..., cn(mem, R...))`:
//!   a `mem` token, the components of the domain (a tuple is passed as its elements), and a
//!   return continuation taking the components of the result. A function returning `!` (a
//!   continuation, like `return` or `break`) has no return continuation.
//! - Calls are jumps that pass a fresh continuation for the rest of the caller; `if`,
//!   `match`, `&&`/`||` and loops are jumps to `select`s of continuations.
//! - Closures are continuations that use the parameters of the enclosing ones.
//! - Mutable variables live in stack slots (`slot`, `load`, `store`); a later pass may
//!   promote them. Immutable variables are plain values.
//! - Polymorphic functions are instantiated for each list of type arguments used.
//! - Imports become continuations without a body, named after the symbol; exports and
//!   `main` are external.

use crate::check::{Linkage, Program};
use crate::diag::Diagnostic;
use crate::hir::{self, Expr, ExprKind as K, FnId, Lit, LoopId, Pat, PatKind, StaticId, VarId};
use crate::source::Span;
use crate::types::{Prim, Ty, TyKind, TyTable};
use durin_ir::{AddrSpace, ArithOp, CmpOp, Def, Type, TypeKind, World};
use rustc_hash::FxHashMap;

#[derive(Clone, Copy)]
enum VarVal {
    Val(Def),
    Slot(Def),
}

struct Lowerer<'p> {
    p: &'p Program,
    tys: TyTable,
    w: World,
    diags: Vec<Diagnostic>,
    /// Whether an instance nested too deeply was reported.
    too_deep: bool,
    fn_insts: FxHashMap<(FnId, Vec<Ty>), Def>,
    imports: FxHashMap<(Box<str>, Type), Def>,
    /// The imports of the intrinsics that pass their call's place (`pe_info`, `pe_error`),
    /// one per name and types of the values.
    placed: FxHashMap<(&'static str, Vec<Type>), Def>,
    statics: FxHashMap<StaticId, Def>,
    /// Values of immutable statics (constants, computed once).
    static_vals: FxHashMap<StaticId, Def>,
    strings: FxHashMap<Box<[u8]>, Def>,
    ir_tys: FxHashMap<Ty, Type>,
    todo: Vec<(FnId, Vec<Ty>, Def)>,
    vars: FxHashMap<VarId, VarVal>,
    loops: FxHashMap<LoopId, (Option<Def>, Option<Def>)>,
    rets: FxHashMap<FnId, Def>,
    /// Type arguments of the function instance being lowered.
    subst: Vec<Ty>,
    bb: Option<Def>,
    mem: Option<Def>,
    /// Set while lowering a filter or a static initializer, which may not jump or touch
    /// memory: where, and what.
    pure: Option<(Span, &'static str)>,
    pure_failed: bool,
}

/// The result of lowering: the world and its entry points.
pub struct Lowered {
    /// The IR.
    pub world: World,
    /// The continuation of `main`, if the program has one.
    pub main: Option<Def>,
}

/// Lowers a checked program (which must have no errors). `main` and exported functions are
/// the roots; functions they do not reach are not lowered.
/// The largest type argument of a function instance, as a tree of types.
const MAX_TYPE_SIZE: u64 = 1 << 12;

/// Type arguments nested deeper than this are refused too: a recursion that wraps its type
/// argument once per call (`f[S[T]]`) grows by one part a call, and compiling thousands of
/// instances before the size limit took seconds.
const MAX_TYPE_DEPTH: u32 = 128;

pub fn lower(prog: &mut Program, diags: &mut Vec<Diagnostic>) -> Lowered {
    let tys = std::mem::take(&mut prog.tys);
    let mut l = Lowerer {
        p: prog,
        tys,
        w: World::new(),
        diags: Vec::new(),
        too_deep: false,
        fn_insts: FxHashMap::default(),
        imports: FxHashMap::default(),
        placed: FxHashMap::default(),
        statics: FxHashMap::default(),
        static_vals: FxHashMap::default(),
        strings: FxHashMap::default(),
        ir_tys: FxHashMap::default(),
        todo: Vec::new(),
        vars: FxHashMap::default(),
        loops: FxHashMap::default(),
        rets: FxHashMap::default(),
        subst: Vec::new(),
        bb: None,
        mem: None,
        pure: None,
        pure_failed: false,
    };
    let mut main = None;
    let main_fn = l.p.main;
    for (i, f) in l.p.fns.iter().enumerate() {
        let is_main = main_fn == Some(i as FnId);
        if is_main || matches!(f.linkage, Linkage::Export(_)) {
            let k = l.fn_def(i as FnId, Vec::new(), f.span);
            l.w.make_external(k);
            if is_main {
                main = Some(k);
            }
        }
    }
    while let Some((f, args, k)) = l.todo.pop() {
        l.fn_body(f, args, k);
    }
    let Lowerer {
        w, diags: ds, tys, ..
    } = l;
    prog.tys = tys;
    diags.extend(ds);
    Lowered { world: w, main }
}

pub use durin_ir::layout::size_align;

fn space(n: u32) -> AddrSpace {
    match n {
        1 => AddrSpace::Global,
        3 => AddrSpace::Shared,
        4 => AddrSpace::Constant,
        _ => AddrSpace::Generic,
    }
}

impl<'p> Lowerer<'p> {
    // ----- types -------------------------------------------------------------------------

    /// `t` with the current instance's type arguments.
    fn conc(&mut self, t: Ty) -> Ty {
        if self.subst.is_empty() {
            return t;
        }
        let args = std::mem::take(&mut self.subst);
        let r = self.tys.subst(t, &args);
        self.subst = args;
        r
    }

    fn ir_ty(&mut self, t: Ty) -> Type {
        let t = self.conc(t);
        if let Some(&r) = self.ir_tys.get(&t) {
            return r;
        }
        let r = match self.tys.kind(t).clone() {
            TyKind::Prim(Prim::Bool) => self.w.ty_bool(),
            TyKind::Prim(Prim::Int { bits, signed }) => self.w.ty_int(bits, signed),
            TyKind::Prim(Prim::Float { bits }) => self.w.ty_float(bits),
            TyKind::Tuple(ts) => {
                let ts: Vec<Type> = ts.iter().map(|&t| self.ir_ty(t)).collect();
                self.w.ty_tuple(&ts)
            }
            TyKind::Array { elem, len, .. } => {
                let e = self.ir_ty(elem);
                self.w.ty_array(e, len)
            }
            TyKind::Ptr {
                pointee, space: s, ..
            } => {
                let p = self.ir_ty(pointee);
                self.w.ty_ptr(p, space(s))
            }
            TyKind::Fn { dom, codom } => {
                let mut ps = vec![self.w.ty_mem()];
                for c in self.tys.flatten(dom) {
                    ps.push(self.ir_ty(c));
                }
                if codom != TyTable::NORET {
                    let mut rs = vec![self.w.ty_mem()];
                    for c in self.tys.flatten(codom) {
                        rs.push(self.ir_ty(c));
                    }
                    ps.push(self.w.ty_cont(&rs));
                }
                self.w.ty_cont(&ps)
            }
            TyKind::Struct(d, args) => {
                let name = self.instance_name(&self.p.structs[d as usize].name, &args);
                let s = self.w.struct_type(&name);
                // Register before the fields, for recursion through pointers.
                self.ir_tys.insert(t, s);
                let fields: Vec<(Box<str>, Ty)> = self.p.structs[d as usize].fields.clone();
                let fs = fields
                    .iter()
                    .map(|(n, ft)| {
                        let ft = self.tys.subst(*ft, &args);
                        (n.to_string(), self.ir_ty(ft))
                    })
                    .collect();
                self.w.set_struct_fields(s, fs);
                return s;
            }
            // An enum is a struct of a tag and one field per payload, nominal so that it
            // may hold pointers to itself.
            TyKind::Enum(d, args) => {
                let name = self.instance_name(&self.p.enums[d as usize].name, &args);
                let s = self.w.struct_type(&name);
                self.ir_tys.insert(t, s);
                let variants = self.p.enums[d as usize].variants.clone();
                let mut fs = vec![("tag".to_string(), self.w.ty_int(32, false))];
                for (n, payload) in variants {
                    if let Some(pt) = payload {
                        let pt = self.tys.subst(pt, &args);
                        fs.push((n.to_string(), self.ir_ty(pt)));
                    }
                }
                self.w.set_struct_fields(s, fs);
                return s;
            }
            TyKind::NoRet | TyKind::Error | TyKind::Param(_) | TyKind::Var(_) => {
                self.w.ty_tuple(&[])
            }
        };
        self.ir_tys.insert(t, r);
        r
    }

    /// The IR name of an instance of a struct or enum: `S`, or `S[i32, f32]`.
    fn instance_name(&self, name: &str, args: &[Ty]) -> String {
        if args.is_empty() {
            return name.to_string();
        }
        let names: Vec<String> = args
            .iter()
            .map(|&a| crate::check::ty_name(&self.tys, &self.p.structs, &self.p.enums, a, &[]))
            .collect();
        format!("{name}[{}]", names.join(", "))
    }

    fn flat_tys(&mut self, t: Ty) -> Vec<Type> {
        let t = self.conc(t);
        self.tys
            .flatten(t)
            .into_iter()
            .map(|c| self.ir_ty(c))
            .collect()
    }

    /// Packs the components of a value of type `t`.
    fn pack(&mut self, t: Ty, parts: &[Def]) -> Def {
        let t = self.conc(t);
        match self.tys.kind(t) {
            TyKind::Tuple(_) => self.w.tuple(parts),
            _ => parts[0],
        }
    }

    /// The components a value of type `t` is passed as.
    fn unpack(&mut self, t: Ty, v: Def) -> Vec<Def> {
        let t = self.conc(t);
        match self.tys.kind(t) {
            TyKind::Tuple(ts) => {
                let n = ts.len();
                (0..n).map(|i| self.w.extract_at(v, i as u32)).collect()
            }
            _ => vec![v],
        }
    }

    fn unit(&mut self) -> Def {
        self.w.tuple(&[])
    }

    // ----- blocks and jumps --------------------------------------------------------------

    fn internal(&mut self, span: Span, message: String) {
        self.diags.push(
            Diagnostic::error(
                span,
                format!("internal compiler error while lowering: {message}"),
            )
            .with_note("this is a bug in durin; please report it with this program"),
        );
    }

    fn impure(&mut self) {
        if let Some((span, what)) = self.pure {
            if !self.pure_failed {
                self.pure_failed = true;
                self.diags.push(
                    Diagnostic::error(span, format!("{what} must be a simple expression"))
                        .with_note("it may not call functions, branch, or read or write memory"),
                );
            }
        }
    }

    /// A new continuation taking `mem` and `tys`.
    fn block(&mut self, name: &str, tys: &[Type]) -> Def {
        let mut ps = vec![self.w.ty_mem()];
        ps.extend_from_slice(tys);
        self.w.cont(&ps, name)
    }

    fn enter(&mut self, k: Def) {
        self.bb = Some(k);
        self.mem = Some(self.w.param(k, 0));
    }

    /// The current memory token (starting an unreachable block after a jump).
    fn mem(&mut self) -> Def {
        self.impure();
        if self.bb.is_none() {
            let k = self.block("unreachable", &[]);
            self.enter(k);
        }
        self.mem.expect("a block has a memory token")
    }

    fn jump(&mut self, callee: Def, args: &[Def], span: Span) {
        self.impure();
        let mem = self.mem();
        let bb = self.bb.take().expect("mem() starts a block");
        let mut all = vec![mem];
        all.extend_from_slice(args);
        if let Err(e) = self.w.try_set_body(bb, callee, &all) {
            self.internal(span, e);
        }
        // The block's location is that of the jump that ends it: the call site of a call.
        self.w.set_loc(bb, span);
        self.mem = None;
    }

    /// Ends the current block with a jump to bottom: an error if it is ever reached.
    fn jump_unreachable(&mut self, span: Span) {
        let mt = self.w.ty_mem();
        let cn = self.w.ty_cont(&[mt]);
        let bot = self.w.bottom(cn);
        self.jump(bot, &[], span);
    }

    fn branch(&mut self, cond: Def, yes: Def, no: Def, span: Span) {
        let target = self.w.select(cond, yes, no);
        self.jump(target, &[], span);
    }

    /// Calls `f` (of type `fty`) with argument `arg`; returns the result.
    fn call(&mut self, f: Def, fty: Ty, arg: Def, span: Span) -> Def {
        let fty = self.conc(fty);
        let TyKind::Fn { dom, codom } = self.tys.kind(fty).clone() else {
            self.internal(span, "call of a non-function".into());
            return self.unit();
        };
        let mut args = self.unpack(dom, arg);
        if codom == TyTable::NORET {
            self.jump(f, &args, span);
            return self.unit();
        }
        let rtys = self.flat_tys(codom);
        let k = self.block("ret", &rtys);
        args.push(k);
        self.jump(f, &args, span);
        self.enter(k);
        let ps: Vec<Def> = (1..=rtys.len()).map(|i| self.w.param(k, i)).collect();
        self.pack(codom, &ps)
    }

    // ----- functions ---------------------------------------------------------------------

    /// The continuation of function `f` instantiated with `args`.
    fn fn_def(&mut self, f: FnId, args: Vec<Ty>, span: Span) -> Def {
        let key = (f, args);
        if let Some(&k) = self.fn_insts.get(&key) {
            return k;
        }
        let info = &self.p.fns[f as usize];
        if let Some(&deep) = key.1.iter().find(|&&t| {
            self.tys.size_within(t, MAX_TYPE_SIZE) > MAX_TYPE_SIZE
                || self.tys.depth_within(t, MAX_TYPE_DEPTH) > MAX_TYPE_DEPTH
        }) {
            // Polymorphic recursion (`f[T]` calling `f[(T, T)]`) asks for ever larger
            // instances; stop at the first absurdly deep one, once.
            if !self.too_deep {
                self.too_deep = true;
                let name = info.name.to_string();
                let shown =
                    crate::check::ty_name(&self.tys, &self.p.structs, &self.p.enums, deep, &[]);
                let shown: String = if shown.len() > 80 {
                    format!("{}...", &shown[..shown.floor_char_boundary(80)])
                } else {
                    shown
                };
                self.diags.push(
                    Diagnostic::error(span, format!("`{name}` is instantiated with ever larger types (here `{shown}`): polymorphic recursion has no end"))
                        .with_note(format!("each instance of a polymorphic function is compiled separately; type arguments of more than {MAX_TYPE_SIZE} parts, or nested more than {MAX_TYPE_DEPTH} deep, are refused")),
                );
            }
            let fty = self.tys.func(info.dom, info.codom);
            let fty = self.tys.subst(fty, &key.1);
            let saved = std::mem::take(&mut self.subst);
            let t = self.ir_ty(fty);
            self.subst = saved;
            return self.w.bottom(t);
        }
        let fty = self.tys.func(info.dom, info.codom);
        let fty = self.tys.subst(fty, &key.1);
        let saved = std::mem::take(&mut self.subst);
        let t = self.ir_ty(fty);
        self.subst = saved;
        let ps = self.w.types().cont_params(t).unwrap_or(&[]).to_vec();
        if let Linkage::Import { name, cc } = &info.linkage {
            if &**cc == "thorin" {
                let k = self.intrinsic(name, t, span);
                self.fn_insts.insert(key, k);
                return k;
            }
            // A math builtin is the C library's function for its type: `sqrt[f32]` is
            // `sqrtf`, `sqrt[f64]` is `sqrt` (as the GPU's libraries name them too).
            let name: Box<str> = if &**cc == "builtin" {
                // Its type: the first parameter's, instantiated (`sqrt[T](T)` at `f32`) or
                // as declared (`fn sqrt(f64) -> f64`).
                let dom = match *self.tys.kind(fty) {
                    TyKind::Fn { dom, .. } => Some(self.conc(dom)),
                    _ => None,
                };
                let at = dom.and_then(|d| match self.tys.kind(d) {
                    TyKind::Tuple(ts) => ts.first().copied(),
                    _ => Some(d),
                });
                match self.math_builtin(name, at, span) {
                    Some(n) => n.into(),
                    None => return self.w.bottom(t),
                }
            } else {
                name.clone()
            };
            let name = &name;
            // One continuation per symbol and type, however many declarations import it.
            let k = match self.imports.get(&(name.clone(), t)) {
                Some(&k) => k,
                None => {
                    let k = self.w.cont(&ps, name);
                    self.w.make_external(k);
                    self.imports.insert((name.clone(), t), k);
                    k
                }
            };
            self.fn_insts.insert(key, k);
            return k;
        }
        let name = match &info.linkage {
            Linkage::Export(n) => n.to_string(),
            _ => info.name.to_string(),
        };
        let k = self.w.cont(&ps, &name);
        let args = key.1.clone();
        self.fn_insts.insert(key, k);
        if info.body.is_none() {
            self.internal(span, format!("function `{}` has no body", info.name));
            return k;
        }
        if info.nested {
            // Nested functions use the variables of the enclosing body: lower now.
            self.fn_body(f, args, k);
        } else {
            self.todo.push((f, args, k));
        }
        k
    }

    /// The IR of compiler intrinsic `name` (a `cc = "thorin"` import) at type `t`: `cuda` is
    /// the kernel-launch node; `reserve_shared` a function that reserves GPU shared memory.
    fn intrinsic(&mut self, name: &str, t: Type, span: Span) -> Def {
        match name {
            "cuda" => {
                if durin_ir::launch::check_type(&mut self.w, t).is_err() {
                    self.diags.push(Diagnostic::error(
                        span,
                        "the intrinsic `cuda` has the type `fn(i32, (i32, i32, i32), (i32, i32, i32), fn() -> ()) -> ()`".to_string(),
                    ));
                    return self.w.bottom(t);
                }
                self.w.launch(t)
            }
            "reserve_shared" => {
                let ps = self.w.types().cont_params(t).unwrap_or(&[]).to_vec();
                let Some(elem) = shared_elem(&self.w, t) else {
                    self.diags.push(Diagnostic::error(
                        span,
                        "the intrinsic `reserve_shared` has the type `fn[T](i32) -> &mut addrspace(3) [T]`".to_string(),
                    ));
                    return self.w.bottom(t);
                };
                let k = self.w.cont(&ps, "reserve_shared");
                let (mem, n, ret) = (self.w.param(k, 0), self.w.param(k, 1), self.w.param(k, 2));
                let i64t = self.w.ty_int(64, true);
                let count = self.w.conv(i64t, n);
                let a = self.w.alloc_in(mem, elem, count, AddrSpace::Shared);
                let (m, p) = (self.w.extract_at(a, 0), self.w.extract_at(a, 1));
                self.w.set_body(k, ret, &[m, p]);
                // Always inlined (as a `@` function), so that each call's size stays the
                // constant it is there, however many kernels reserve memory of other sizes.
                let yes = self.w.lit_bool(true);
                for i in 0..ps.len() {
                    self.w.set_filter(k, i, yes);
                }
                k
            }
            "pe_info" | "pe_report" | "pe_error" => {
                self.diags.push(Diagnostic::error(
                    span,
                    format!("the intrinsic `{name}` can only be called, not used as a value"),
                ));
                self.w.bottom(t)
            }
            _ => {
                self.diags.push(Diagnostic::error(
                    span,
                    format!("unknown intrinsic `{name}` (durin's `cc = \"thorin\"` intrinsics are `cuda`, `reserve_shared`, `pe_info`, `pe_report` and `pe_error`)"),
                ));
                self.w.bottom(t)
            }
        }
    }

    fn fn_body(&mut self, f: FnId, args: Vec<Ty>, k: Def) {
        let p = self.p;
        let Some(body) = &p.fns[f as usize].body else {
            return;
        };
        let saved = std::mem::replace(&mut self.subst, args);
        self.lambda_into(body, k);
        self.subst = saved;
    }

    /// Lowers a lambda into the continuation `k` (of its type).
    fn lambda_into(&mut self, l: &hir::Lambda, k: Def) {
        let saved = (self.bb.take(), self.mem.take());
        // A closure in a static initializer is a constant; its body may do anything.
        let saved_pure = self.pure.take();
        self.enter(k);
        let n = self.w.num_params(k);
        let has_ret = self.conc(l.codom) != TyTable::NORET;
        let nargs = n - 1 - usize::from(has_ret);
        let ps: Vec<Def> = (1..=nargs).map(|i| self.w.param(k, i)).collect();
        let arg = self.pack(l.dom, &ps);
        let ret = has_ret.then(|| self.w.param(k, n - 1));
        if let (Some(id), Some(r)) = (l.continue_of, ret) {
            self.loops.entry(id).or_insert((None, None)).1 = Some(r);
        }
        if let (Some(f), Some(r)) = (l.returns_of, ret) {
            self.rets.insert(f, r);
        }
        self.bind(&l.param, arg);
        if let Some(filter) = &l.filter {
            // The language's filter is one condition; the IR has one per parameter.
            let c = match filter {
                None => self.w.lit_bool(true),
                Some(e) => {
                    let saved_pure = self.pure.replace((e.span, "a filter"));
                    self.pure_failed = false;
                    let c = self.emit(e);
                    self.pure = saved_pure;
                    c
                }
            };
            for i in 0..n {
                self.w.set_filter(k, i, c);
            }
        }
        match ret {
            Some(ret) => self.emit_tail(&l.body, l.codom, ret),
            None => {
                self.emit(&l.body);
                if self.bb.is_some() {
                    self.jump_unreachable(l.body.span);
                }
            }
        }
        (self.bb, self.mem) = saved;
        self.pure = saved_pure;
    }

    fn lambda(&mut self, l: &hir::Lambda, ty: Ty, name: &str) -> Def {
        let t = self.ir_ty(ty);
        let ps = self.w.types().cont_params(t).unwrap_or(&[]).to_vec();
        let k = self.w.cont(&ps, name);
        self.lambda_into(l, k);
        k
    }

    fn static_def(&mut self, s: StaticId) -> Def {
        if let Some(&g) = self.statics.get(&s) {
            return g;
        }
        let info = &self.p.statics[s as usize];
        let saved = (self.bb.take(), self.mem.take());
        let saved_pure = self.pure.replace((info.span, "a static initializer"));
        self.pure_failed = false;
        let init = match &info.init {
            Some(e) => self.emit(e),
            // No initializer: numbers start at zero, as in C (pointers stay undefined).
            None => {
                let t = self.ir_ty(info.ty);
                self.filler(t)
            }
        };
        self.pure = saved_pure;
        (self.bb, self.mem) = saved;
        let g = self.w.global(init, info.mutable, &info.name);
        self.statics.insert(s, g);
        g
    }

    // ----- patterns ----------------------------------------------------------------------

    fn bind(&mut self, p: &Pat, v: Def) {
        match &p.kind {
            PatKind::Wild | PatKind::Lit(_) | PatKind::Error => {}
            PatKind::Bind(var, sub) => {
                let info = &self.p.vars[*var as usize];
                if info.mutable {
                    let t = self.ir_ty(info.ty);
                    let ptr = self.new_slot(t);
                    self.store(ptr, v);
                    self.vars.insert(*var, VarVal::Slot(ptr));
                } else {
                    self.vars.insert(*var, VarVal::Val(v));
                }
                if let Some(s) = sub {
                    self.bind(s, v);
                }
            }
            PatKind::Tuple(ps) | PatKind::Array(ps) => {
                for (i, q) in ps.iter().enumerate() {
                    let x = self.w.extract_at(v, i as u32);
                    self.bind(q, x);
                }
            }
            PatKind::Struct(fs) => {
                for (i, q) in fs {
                    let x = self.w.extract_at(v, *i);
                    self.bind(q, x);
                }
            }
            PatKind::Variant(i, Some(q)) => {
                let x = self.payload(p.ty, *i, v);
                self.bind(q, x);
            }
            PatKind::Variant(_, None) => {}
        }
    }

    /// The position of variant `i`'s payload in the enum's tuple.
    fn payload_index(&mut self, ety: Ty, i: u32) -> u32 {
        let ety = self.conc(ety);
        let TyKind::Enum(d, _) = self.tys.kind(ety) else {
            return 1;
        };
        1 + self.p.enums[*d as usize].variants[..i as usize]
            .iter()
            .filter(|(_, p)| p.is_some())
            .count() as u32
    }

    fn payload(&mut self, ety: Ty, i: u32, v: Def) -> Def {
        let at = self.payload_index(ety, i);
        self.w.extract_at(v, at)
    }

    /// The condition under which `p` matches `v` (`None`: always).
    fn test(&mut self, p: &Pat, v: Def) -> Option<Def> {
        match &p.kind {
            PatKind::Wild | PatKind::Error => None,
            PatKind::Bind(_, sub) => sub.as_ref().and_then(|s| self.test(s, v)),
            PatKind::Lit(l) => {
                let c = self.lit(*l, p.ty);
                Some(self.w.cmp(CmpOp::Eq, v, c))
            }
            PatKind::Tuple(ps) | PatKind::Array(ps) => {
                let mut conds = Vec::new();
                for (i, q) in ps.iter().enumerate() {
                    let x = self.w.extract_at(v, i as u32);
                    conds.extend(self.test(q, x));
                }
                self.all(conds)
            }
            PatKind::Struct(fs) => {
                let mut conds = Vec::new();
                for (i, q) in fs {
                    let x = self.w.extract_at(v, *i);
                    conds.extend(self.test(q, x));
                }
                self.all(conds)
            }
            PatKind::Variant(i, sub) => {
                let tag = self.w.extract_at(v, 0);
                let u32t = self.w.ty_int(32, false);
                let want = self.w.lit(u32t, *i as u64);
                let mut conds = vec![self.w.cmp(CmpOp::Eq, tag, want)];
                if let Some(s) = sub {
                    let x = self.payload(p.ty, *i, v);
                    conds.extend(self.test(s, x));
                }
                self.all(conds)
            }
        }
    }

    /// Zero numbers in the shape of `t`: the value of an enum's payloads that its variant
    /// does not use (so that tests of another variant's patterns, computed before the tag
    /// decides, are defined), and of a static without an initializer. Leaves that patterns
    /// never compare (pointers, functions) stay undefined.
    fn filler(&mut self, t: Type) -> Def {
        match self.w.kind(t).clone() {
            TypeKind::Bool | TypeKind::Int { .. } | TypeKind::Float { .. } => self.w.lit(t, 0),
            TypeKind::Tuple(ts) => {
                let parts: Vec<Def> = ts.iter().map(|&c| self.filler(c)).collect();
                self.w.tuple(&parts)
            }
            TypeKind::Struct(_) => {
                let comps = self.w.types().components(t).unwrap_or_default();
                let parts: Vec<Def> = comps.iter().map(|&c| self.filler(c)).collect();
                self.w.struct_value(t, &parts)
            }
            TypeKind::Array { elem, len: Some(n) } => {
                let e = self.filler(elem);
                self.w.array(elem, &vec![e; n as usize])
            }
            _ => self.w.bottom(t),
        }
    }

    /// Whether the values `x` and `y` of type `t` are equal, component by component
    /// (`None`: always, for types without data); an error at `span` for functions.
    fn equal(&mut self, t: Ty, x: Def, y: Def, span: Span) -> Option<Def> {
        let t = self.conc(t);
        let kind = self.tys.kind(t).clone();
        let parts = |l: &mut Self, ts: &[Ty]| {
            let conds = ts
                .iter()
                .enumerate()
                .filter_map(|(i, &c)| {
                    let (a, b) = (l.w.extract_at(x, i as u32), l.w.extract_at(y, i as u32));
                    l.equal(c, a, b, span)
                })
                .collect();
            l.all(conds)
        };
        match kind {
            TyKind::Prim(_) | TyKind::Ptr { .. } => Some(self.w.cmp(CmpOp::Eq, x, y)),
            TyKind::Tuple(ts) => parts(self, &ts),
            TyKind::Struct(d, args) => {
                let fields = &self.p.structs[d as usize].fields;
                let fs: Vec<Ty> = fields
                    .iter()
                    .map(|&(_, f)| self.tys.subst(f, &args))
                    .collect();
                parts(self, &fs)
            }
            TyKind::Array {
                elem, len: Some(n), ..
            } => parts(self, &vec![elem; n as usize]),
            TyKind::Enum(d, args) => {
                let (tx, ty) = (self.w.extract_at(x, 0), self.w.extract_at(y, 0));
                let mut conds = vec![self.w.cmp(CmpOp::Eq, tx, ty)];
                let variants = self.p.enums[d as usize].variants.clone();
                for (i, (_, payload)) in variants.iter().enumerate() {
                    let Some(pt) = payload else { continue };
                    let pt = self.tys.subst(*pt, &args);
                    let (a, b) = (self.payload(t, i as u32, x), self.payload(t, i as u32, y));
                    if let Some(same) = self.equal(pt, a, b, span) {
                        // Only the payload of the variant both have counts.
                        let u32t = self.w.ty_int(32, false);
                        let here = self.w.lit(u32t, i as u64);
                        let is_here = self.w.cmp(CmpOp::Eq, tx, here);
                        let yes = self.w.lit_bool(true);
                        conds.push(self.w.select(is_here, same, yes));
                    }
                }
                self.all(conds)
            }
            TyKind::Fn { .. } => {
                let shown =
                    crate::check::ty_name(&self.tys, &self.p.structs, &self.p.enums, t, &[]);
                self.diags.push(Diagnostic::error(
                    span,
                    format!("`compare` cannot compare values of type `{shown}`: functions have no equality"),
                ));
                None
            }
            _ => None,
        }
    }

    fn all(&mut self, conds: Vec<Def>) -> Option<Def> {
        conds
            .into_iter()
            .reduce(|a, b| self.w.arith(ArithOp::And, a, b))
    }

    // ----- values ------------------------------------------------------------------------

    fn lit(&mut self, l: Lit, ty: Ty) -> Def {
        let t = self.ir_ty(ty);
        let bits = match (l, self.w.kind(t).clone()) {
            (Lit::Bool(b), _) => u64::from(b),
            (Lit::Int(v), TypeKind::Int { bits, .. }) => {
                if bits == 64 {
                    v
                } else {
                    v & ((1u64 << bits) - 1)
                }
            }
            (Lit::Int(v), TypeKind::Float { bits }) => float_bits(v as i64 as f64, bits),
            (Lit::Float(f), TypeKind::Float { bits }) => float_bits(f, bits),
            (Lit::Int(v), TypeKind::Bool) => u64::from(v != 0),
            _ => 0,
        };
        self.w.lit(t, bits)
    }

    fn new_slot(&mut self, t: Type) -> Def {
        let m = self.mem();
        let s = self.w.slot(m, t);
        let m = self.w.extract_at(s, 0);
        self.mem = Some(m);
        self.w.extract_at(s, 1)
    }

    fn load(&mut self, ptr: Def) -> Def {
        let m = self.mem();
        let l = self.w.load(m, ptr);
        let m = self.w.extract_at(l, 0);
        self.mem = Some(m);
        self.w.extract_at(l, 1)
    }

    fn store(&mut self, ptr: Def, v: Def) {
        let m = self.mem();
        let m = self.w.store(m, ptr, v);
        self.mem = Some(m);
    }

    /// Whether `e` is a place that lives in memory (read by a load).
    fn in_memory(&self, e: &Expr) -> bool {
        match &e.kind {
            K::Var(v) => matches!(self.vars.get(v), Some(VarVal::Slot(_))),
            K::Static(_) | K::Deref(_) => true,
            K::Field(b, _) | K::Index(b, _) => self.in_memory(b),
            _ => false,
        }
    }

    /// A pointer to the place `e` (a temporary slot for values that are not in memory).
    fn place(&mut self, e: &Expr) -> Def {
        match &e.kind {
            K::Var(v) if matches!(self.vars.get(v), Some(VarVal::Slot(_))) => match self.vars[v] {
                VarVal::Slot(p) => p,
                VarVal::Val(_) => unreachable!("checked by the guard"),
            },
            K::Static(s) => self.static_def(*s),
            K::Deref(p) => self.emit(p),
            K::Field(b, i) if self.in_memory(b) => {
                let base = self.place(b);
                let idx = self.w.lit_i64(*i as i64);
                let at = self.w.lea(base, idx);
                // The place the interpreter names for an access through a null pointer.
                self.w.set_loc(at, e.span);
                at
            }
            K::Index(b, i) if self.in_memory(b) => {
                let base = self.place(b);
                let idx = self.emit(i);
                let at = self.w.lea(base, idx);
                // Where an index is checked (the interpreter, `--checks bounds`), this is
                // the place its errors name.
                self.w.set_loc(at, e.span);
                at
            }
            _ => {
                let v = self.emit(e);
                let t = self.ir_ty(e.ty);
                let p = self.new_slot(t);
                self.store(p, v);
                p
            }
        }
    }

    fn var(&mut self, v: VarId, span: Span) -> Def {
        match self.vars.get(&v).copied() {
            Some(VarVal::Val(d)) => d,
            Some(VarVal::Slot(p)) => self.load(p),
            None => {
                let name = self.p.vars[v as usize].name.clone();
                self.diags.push(
                    Diagnostic::error(
                        span,
                        format!(
                            "`{name}` is used by a function called before `{name}` is declared"
                        ),
                    )
                    .with_note("declare the variable before the call"),
                );
                let t = self.ir_ty(self.p.vars[v as usize].ty);
                self.w.bottom(t)
            }
        }
    }

    /// Lowers `e` and returns its value.
    fn emit(&mut self, e: &Expr) -> Def {
        match &e.kind {
            K::Lit(l) => self.lit(*l, e.ty),
            K::Str(bytes) => {
                if let Some(&g) = self.strings.get(bytes) {
                    return g;
                }
                let arr = self.w.bytes(bytes);
                let g = self.w.global(arr, false, "str");
                let t = self.ir_ty(e.ty);
                let g = self.w.bitcast(t, g);
                self.strings.insert(bytes.clone(), g);
                g
            }
            K::Var(v) => self.var(*v, e.span),
            K::Fn(f, args) => {
                let args: Vec<Ty> = args.iter().map(|&a| self.conc(a)).collect();
                if let Linkage::Import { cc, name } = &self.p.fns[*f as usize].linkage {
                    if &**cc == "builtin" && is_builtin_op(name) {
                        self.diags.push(Diagnostic::error(
                            e.span,
                            format!("the builtin `{name}` can only be called, not used as a value"),
                        ));
                        let t = self.ir_ty(e.ty);
                        return self.w.bottom(t);
                    }
                }
                self.fn_def(*f, args, e.span)
            }
            K::Static(s)
                if !self.p.statics[*s as usize].mutable
                    && self.p.statics[*s as usize].init.is_some() =>
            {
                // An immutable static is its initializer, a constant.
                if let Some(&v) = self.static_vals.get(s) {
                    return v;
                }
                let p = self.p;
                let init = p.statics[*s as usize]
                    .init
                    .as_ref()
                    .expect("checked by the guard");
                let v = self.emit(init);
                self.static_vals.insert(*s, v);
                v
            }
            K::Static(_) | K::Deref(_) => {
                let p = self.place(e);
                self.load(p)
            }
            K::Variant(i, payload) => {
                let t = self.ir_ty(e.ty);
                let comps = self.w.types().components(t).unwrap_or_default();
                let mut parts: Vec<Def> = comps.iter().map(|&c| self.filler(c)).collect();
                parts[0] = self.w.lit(comps[0], *i as u64);
                if let Some(x) = payload {
                    let v = self.emit(x);
                    let at = self.payload_index(e.ty, *i) as usize;
                    parts[at] = v;
                }
                self.w.struct_value(t, &parts)
            }
            K::Tuple(xs) => {
                let vs: Vec<Def> = xs.iter().map(|x| self.emit(x)).collect();
                self.w.tuple(&vs)
            }
            K::Array(xs) => {
                let vs: Vec<Def> = xs.iter().map(|x| self.emit(x)).collect();
                let et = self.conc(e.ty);
                let TyKind::Array { elem, .. } = self.tys.kind(et).clone() else {
                    return self.unit();
                };
                let et = self.ir_ty(elem);
                self.w.array(et, &vs)
            }
            K::Repeat(x, n) => {
                let v = self.emit(x);
                let et = self.ir_ty(x.ty);
                self.w.array(et, &vec![v; *n as usize])
            }
            K::Struct(xs) => {
                let vs: Vec<Def> = xs.iter().map(|x| self.emit(x)).collect();
                let t = self.ir_ty(e.ty);
                self.w.struct_value(t, &vs)
            }
            K::Update(b, fs) => {
                let mut v = self.emit(b);
                for (i, x) in fs {
                    let x = self.emit(x);
                    let idx = self.w.lit_i64(*i as i64);
                    v = self.w.insert(v, idx, x);
                }
                v
            }
            K::Block(stmts, value) => {
                self.stmts(stmts);
                self.emit(value)
            }
            K::Lambda(l) => self.lambda(l, e.ty, "lambda"),
            K::Call { callee, arg, run } => {
                if let K::Fn(f, targs) = &callee.kind {
                    if let Linkage::Import { cc, name } = &self.p.fns[*f as usize].linkage {
                        if &**cc == "builtin" && is_builtin_op(name) {
                            return self.builtin(name, targs, arg, e);
                        }
                        if &**cc == "thorin" && matches!(&**name, "pe_info" | "pe_report") {
                            let a = self.emit(arg);
                            let (msg, val) = (self.w.extract_at(a, 0), self.w.extract_at(a, 1));
                            let name = if &**name == "pe_info" {
                                "pe_info"
                            } else {
                                "pe_report"
                            };
                            return self.placed_call(name, &[msg, val], e.span);
                        }
                        if &**cc == "thorin" && &**name == "pe_error" {
                            let msg = self.emit(arg);
                            return self.placed_call("pe_error", &[msg], e.span);
                        }
                    }
                }
                let mut c = self.emit(callee);
                let a = self.emit(arg);
                if *run {
                    c = self.w.run(c);
                }
                self.call(c, callee.ty, a, e.span)
            }
            K::Field(b, i) => {
                if self.in_memory(b) {
                    let p = self.place(e);
                    self.load(p)
                } else {
                    let v = self.emit(b);
                    self.w.extract_at(v, *i)
                }
            }
            K::Index(b, i) => {
                if self.in_memory(b) {
                    let p = self.place(e);
                    self.load(p)
                } else {
                    let v = self.emit(b);
                    let idx = self.emit(i);
                    self.w.extract(v, idx)
                }
            }
            K::AddrOf(x) => self.place(x),
            K::Unary(op, x) => {
                let v = self.emit(x);
                self.lanewise(&[v], &mut |l, v| l.unop(*op, v[0]))
            }
            K::Binary(op, l, r) => {
                let a = self.emit(l);
                let b = self.emit(r);
                self.lanewise(&[a, b], &mut |l, v| l.binop(*op, v[0], v[1], e.span))
            }
            K::And(l, r) | K::Or(l, r) => {
                let is_and = matches!(e.kind, K::And(..));
                let a = self.emit(l);
                if simple(r) {
                    let b = self.emit(r);
                    return self
                        .w
                        .arith(if is_and { ArithOp::And } else { ArithOp::Or }, a, b);
                }
                let bt = self.w.ty_bool();
                let (rhs, short) = (self.block("rhs", &[]), self.block("short", &[]));
                let join = self.block("join", &[bt]);
                if is_and {
                    self.branch(a, rhs, short, e.span);
                } else {
                    self.branch(a, short, rhs, e.span);
                }
                self.enter(rhs);
                let b = self.emit(r);
                self.jump(join, &[b], e.span);
                self.enter(short);
                let c = self.w.lit_bool(!is_and);
                self.jump(join, &[c], e.span);
                self.enter(join);
                self.w.param(join, 1)
            }
            K::Assign(p, v) => {
                let ptr = self.place(p);
                let x = self.emit(v);
                self.store(ptr, x);
                self.unit()
            }
            K::AssignOp(op, p, v) => {
                let ptr = self.place(p);
                let old = self.load(ptr);
                let x = self.emit(v);
                let new = self.lanewise(&[old, x], &mut |l, v| l.binop(*op, v[0], v[1], e.span));
                self.store(ptr, new);
                self.unit()
            }
            K::IncDec(p, inc, post) => {
                let ptr = self.place(p);
                let old = self.load(ptr);
                let new = self.lanewise(&[old], &mut |l, v| {
                    let t = l.w.type_of(v[0]);
                    let one = match l.w.kind(t).clone() {
                        TypeKind::Float { bits } => l.w.lit(t, float_bits(1.0, bits)),
                        _ => l.w.lit(t, 1),
                    };
                    let op = if *inc { ArithOp::Add } else { ArithOp::Sub };
                    l.w.arith(op, v[0], one)
                });
                self.store(ptr, new);
                if *post {
                    old
                } else {
                    new
                }
            }
            K::Cast(x) => {
                let v = self.emit(x);
                let from = self.conc(x.ty);
                if from == TyTable::NORET {
                    let t = self.ir_ty(e.ty);
                    return self.w.bottom(t);
                }
                let to = self.ir_ty(e.ty);
                if self.w.type_of(v) == to {
                    return v;
                }
                // A `simd` vector converts element by element.
                let to = match *self.w.kind(to) {
                    TypeKind::Array { elem, .. } => elem,
                    _ => to,
                };
                self.lanewise(&[v], &mut |l, v| {
                    let ft = l.w.type_of(v[0]);
                    match (l.w.kind(ft), l.w.kind(to)) {
                        _ if ft == to => v[0],
                        (TypeKind::Ptr { .. }, TypeKind::Ptr { .. }) => l.w.bitcast(to, v[0]),
                        _ => l.w.conv(to, v[0]),
                    }
                })
            }
            K::If(c, t, f) => {
                let cv = self.emit(c);
                let rt = self.flat_tys(e.ty);
                let (yes, no) = (self.block("then", &[]), self.block("else", &[]));
                let join = self.block("join", &rt);
                self.branch(cv, yes, no, e.span);
                self.enter(yes);
                let tv = self.emit(t);
                let parts = self.unpack(e.ty, tv);
                self.jump(join, &parts, t.span);
                self.enter(no);
                let fv = match f {
                    Some(f) => self.emit(f),
                    None => self.unit(),
                };
                let parts = self.unpack(e.ty, fv);
                self.jump(join, &parts, e.span);
                self.enter(join);
                let ps: Vec<Def> = (1..=rt.len()).map(|i| self.w.param(join, i)).collect();
                self.pack(e.ty, &ps)
            }
            K::Match(x, arms) => self.emit_match(x, arms, e),
            K::While(id, c, body) => {
                let head = self.block("while_head", &[]);
                let (bodyk, exit) = (self.block("while_body", &[]), self.block("while_exit", &[]));
                self.loops.insert(*id, (Some(exit), Some(head)));
                self.jump(head, &[], e.span);
                self.enter(head);
                let cv = self.emit(c);
                self.branch(cv, bodyk, exit, c.span);
                self.enter(bodyk);
                self.emit(body);
                self.jump(head, &[], e.span);
                self.enter(exit);
                self.unit()
            }
            K::For { id, inner, args } => {
                let rt = self.flat_tys(e.ty);
                let after = self.block("for_exit", &rt);
                let brk = if rt.is_empty() {
                    after
                } else {
                    let b = self.block("for_break", &[]);
                    let m = self.w.param(b, 0);
                    let bots: Vec<Def> = rt.iter().map(|&t| self.w.bottom(t)).collect();
                    let mut all = vec![m];
                    all.extend(bots);
                    if let Err(err) = self.w.try_set_body(b, after, &all) {
                        self.internal(e.span, err);
                    }
                    b
                };
                self.loops.entry(*id).or_insert((None, None)).0 = Some(brk);
                let g = self.emit(inner);
                let a = self.emit(args);
                let it = self.conc(inner.ty);
                let TyKind::Fn { dom, .. } = self.tys.kind(it).clone() else {
                    self.internal(e.span, "`for` over a non-function".into());
                    return self.unit();
                };
                let mut parts = self.unpack(dom, a);
                parts.push(after);
                self.jump(g, &parts, e.span);
                self.enter(after);
                let ps: Vec<Def> = (1..=rt.len()).map(|i| self.w.param(after, i)).collect();
                self.pack(e.ty, &ps)
            }
            K::Break(id) | K::Continue(id) => {
                let brk = matches!(e.kind, K::Break(_));
                let entry = self.loops.get(id).copied().unwrap_or((None, None));
                match if brk { entry.0 } else { entry.1 } {
                    Some(k) => k,
                    None => {
                        self.internal(e.span, "loop target not lowered".into());
                        let t = self.ir_ty(e.ty);
                        self.w.bottom(t)
                    }
                }
            }
            K::Return(f) => match self.rets.get(f) {
                Some(&r) => r,
                None => {
                    self.internal(e.span, "return target not lowered".into());
                    let t = self.ir_ty(e.ty);
                    self.w.bottom(t)
                }
            },
            K::Known(x) => {
                let v = self.emit(x);
                self.w.known(v)
            }
            K::Halt(x) => {
                let v = self.emit(x);
                self.w.hlt(v)
            }
            K::Error => {
                self.internal(
                    e.span,
                    "an expression with an error reached lowering".into(),
                );
                let t = self.ir_ty(e.ty);
                self.w.bottom(t)
            }
        }
    }

    fn stmts(&mut self, stmts: &[hir::Stmt]) {
        for s in stmts {
            match s {
                hir::Stmt::Let(p, init) => {
                    let v = match init {
                        Some(x) => self.emit(x),
                        None => {
                            let t = self.ir_ty(p.ty);
                            self.w.bottom(t)
                        }
                    };
                    self.bind(p, v);
                }
                hir::Stmt::Expr(x) => {
                    self.emit(x);
                }
            }
        }
    }

    /// Lowers `e`, whose value is passed to the return continuation `ret` (of a function
    /// returning `codom`): calls in tail position pass `ret` on instead of returning
    /// through a new continuation, so tail recursion runs in constant space.
    fn emit_tail(&mut self, e: &Expr, codom: Ty, ret: Def) {
        match &e.kind {
            K::Block(stmts, value) => {
                self.stmts(stmts);
                self.emit_tail(value, codom, ret);
            }
            K::If(c, t, Some(f)) => {
                let cv = self.emit(c);
                let (yes, no) = (self.block("then", &[]), self.block("else", &[]));
                self.branch(cv, yes, no, e.span);
                self.enter(yes);
                self.emit_tail(t, codom, ret);
                self.enter(no);
                self.emit_tail(f, codom, ret);
            }
            K::If(c, t, None) if self.conc(codom) == TyTable::UNIT => {
                let cv = self.emit(c);
                let (yes, no) = (self.block("then", &[]), self.block("else", &[]));
                self.branch(cv, yes, no, e.span);
                self.enter(yes);
                self.emit_tail(t, codom, ret);
                self.enter(no);
                self.jump(ret, &[], e.span);
            }
            K::Call { callee, arg, run }
                if self.is_plain_call(callee) && {
                    let (ct, want) = (self.conc(callee.ty), self.conc(codom));
                    matches!(self.tys.kind(ct), TyKind::Fn { codom: c, .. } if *c == want)
                } =>
            {
                let mut c = self.emit(callee);
                let a = self.emit(arg);
                if *run {
                    c = self.w.run(c);
                }
                let ct = self.conc(callee.ty);
                let TyKind::Fn { dom, .. } = self.tys.kind(ct).clone() else {
                    return;
                };
                let mut parts = self.unpack(dom, a);
                parts.push(ret);
                self.jump(c, &parts, e.span);
            }
            _ => {
                let r = self.emit(e);
                let parts = self.unpack(codom, r);
                self.jump(ret, &parts, e.span);
            }
        }
    }

    /// Whether a call to `callee` is a jump (not a builtin the compiler expands).
    fn is_plain_call(&self, callee: &Expr) -> bool {
        match &callee.kind {
            // Builtin operators and the intrinsics that pass their call's place are lowered
            // where they are called, not as calls.
            K::Fn(f, _) => !matches!(
                &self.p.fns[*f as usize].linkage,
                Linkage::Import { cc, name } if (&**cc == "builtin" && is_builtin_op(name))
                    || (&**cc == "thorin" && matches!(&**name, "pe_info" | "pe_report" | "pe_error"))
            ),
            _ => true,
        }
    }

    /// `f` applied to `args`, or, when they are `simd` vectors (arrays in the IR: the
    /// checker applies operators to no other arrays), to their elements one index at a
    /// time, giving the vector of the results.
    fn lanewise(&mut self, args: &[Def], f: &mut dyn FnMut(&mut Self, &[Def]) -> Def) -> Def {
        let t = self.w.type_of(args[0]);
        let TypeKind::Array { len: Some(n), .. } = *self.w.kind(t) else {
            return f(self, args);
        };
        let mut lanes = Vec::with_capacity(n as usize);
        for i in 0..n as u32 {
            let xs: Vec<Def> = args.iter().map(|&a| self.w.extract_at(a, i)).collect();
            lanes.push(f(self, &xs));
        }
        let et = self.w.type_of(lanes[0]);
        self.w.array(et, &lanes)
    }

    /// `-v` or `!v` on a primitive value.
    fn unop(&mut self, op: crate::ast::UnaryOp, v: Def) -> Def {
        let t = self.w.type_of(v);
        match op {
            crate::ast::UnaryOp::Neg => {
                let zero = match self.w.kind(t).clone() {
                    TypeKind::Float { bits } => self.w.lit(t, float_bits(-0.0, bits)),
                    _ => self.w.lit(t, 0),
                };
                self.w.arith(ArithOp::Sub, zero, v)
            }
            _ => {
                // `!x`: exclusive or with all ones of the type.
                let ones = match *self.w.kind(t) {
                    TypeKind::Int { bits, .. } if bits < 64 => self.w.lit(t, (1u64 << bits) - 1),
                    TypeKind::Bool => self.w.lit_bool(true),
                    _ => self.w.lit(t, u64::MAX),
                };
                self.w.arith(ArithOp::Xor, v, ones)
            }
        }
    }

    /// `a op b`; a division or remainder, which can stop the program, has `span` as its
    /// place.
    fn binop(&mut self, op: crate::ast::BinOp, a: Def, b: Def, span: Span) -> Def {
        use crate::ast::BinOp as B;
        let arith = match op {
            B::Add => ArithOp::Add,
            B::Sub => ArithOp::Sub,
            B::Mul => ArithOp::Mul,
            B::Div => ArithOp::Div,
            B::Rem => ArithOp::Rem,
            B::And => ArithOp::And,
            B::Or => ArithOp::Or,
            B::Xor => ArithOp::Xor,
            B::Shl => ArithOp::Shl,
            B::Shr => ArithOp::Shr,
            _ => {
                let cmp = match op {
                    B::Eq => CmpOp::Eq,
                    B::Ne => CmpOp::Ne,
                    B::Lt => CmpOp::Lt,
                    B::Le => CmpOp::Le,
                    B::Gt => CmpOp::Gt,
                    // The checker gives `Binary` only arithmetic and comparisons.
                    _ => CmpOp::Ge,
                };
                return self.w.cmp(cmp, a, b);
            }
        };
        let d = self.w.arith(arith, a, b);
        if matches!(arith, ArithOp::Div | ArithOp::Rem) {
            self.w.set_loc(d, span);
        }
        d
    }

    fn emit_match(&mut self, x: &Expr, arms: &[(Pat, Expr)], e: &Expr) -> Def {
        let v = self.emit(x);
        let rt = self.flat_tys(e.ty);
        let join = self.block("match_join", &rt);
        let mut reached_end = true;
        for (p, body) in arms {
            match self.test(p, v) {
                None => {
                    self.bind(p, v);
                    let r = self.emit(body);
                    let parts = self.unpack(e.ty, r);
                    self.jump(join, &parts, body.span);
                    reached_end = false;
                    break;
                }
                Some(c) => {
                    let (yes, no) = (self.block("arm", &[]), self.block("next", &[]));
                    self.branch(c, yes, no, p.span);
                    self.enter(yes);
                    self.bind(p, v);
                    let r = self.emit(body);
                    let parts = self.unpack(e.ty, r);
                    self.jump(join, &parts, body.span);
                    self.enter(no);
                }
            }
        }
        if reached_end {
            // The checker proved the arms exhaustive: this is unreachable.
            self.jump_unreachable(e.span);
        }
        self.enter(join);
        let ps: Vec<Def> = (1..=rt.len()).map(|i| self.w.param(join, i)).collect();
        self.pack(e.ty, &ps)
    }

    /// `pe_info(message, value)`, `pe_report(message, value)` and `pe_error(message)`: a
    /// call of the import `name` that also passes the call's place (file number and byte,
    /// as an `i64`), which the passes read after partial evaluation
    /// (`durin_passes::pe_info`), when the code around the call has moved. A `pe_error`
    /// left then is a compile-time error there.
    fn placed_call(&mut self, name: &'static str, values: &[Def], span: Span) -> Def {
        let i64t = self.w.ty_int(64, true);
        let place = ((span.file.index() as u64) << 32) | span.start as u64;
        let place = self.w.lit(i64t, place);
        let types: Vec<Type> = values.iter().map(|&v| self.w.type_of(v)).collect();
        let f = match self.placed.get(&(name, types.clone())) {
            Some(&f) => f,
            None => {
                let mem_t = self.w.ty_mem();
                let ret_t = self.w.ty_cont(&[mem_t]);
                let mut ps = vec![mem_t];
                ps.extend_from_slice(&types);
                ps.extend([i64t, ret_t]);
                let f = self.w.cont(&ps, name);
                self.w.make_external(f);
                self.placed.insert((name, types), f);
                f
            }
        };
        let k = self.block("ret", &[]);
        let mut args = values.to_vec();
        args.extend([place, k]);
        self.jump(f, &args, span);
        self.enter(k);
        self.unit()
    }

    fn builtin(&mut self, name: &str, targs: &[Ty], arg: &Expr, e: &Expr) -> Def {
        let a = self.emit(arg);
        let to = self.ir_ty(e.ty);
        match name {
            "bitcast" => self.w.bitcast(to, a),
            "undef" => self.w.bottom(to),
            // `compare(&a, &b)`: whether the values pointed to are equal, component by
            // component (pointers by address; an enum by its tag, then its payload).
            "compare" => {
                let t = targs
                    .first()
                    .map(|&t| self.conc(t))
                    .unwrap_or(TyTable::UNIT);
                let (p, q) = (self.w.extract_at(a, 0), self.w.extract_at(a, 1));
                let (x, y) = (self.load(p), self.load(q));
                match self.equal(t, x, y, e.span) {
                    Some(c) => c,
                    None => self.w.lit_bool(true),
                }
            }
            "select" => {
                let c = self.w.extract_at(a, 0);
                let x = self.w.extract_at(a, 1);
                let y = self.w.extract_at(a, 2);
                self.w.select(c, x, y)
            }
            "sizeof" | "alignof" => {
                let t = targs
                    .first()
                    .map(|&t| self.conc(t))
                    .unwrap_or(TyTable::UNIT);
                let it = self.ir_ty(t);
                let (s, al) = size_align(&self.w, it);
                let v = if name == "sizeof" { s } else { al };
                self.w.lit(to, v)
            }
            // The float predicates: `x != x` (unordered), `x - x == 0` (false for the
            // infinities and NaN), and the sign bit of the bits as a signed integer.
            "isnan" | "isfinite" | "signbit" => {
                let x = a;
                let xt = self.w.type_of(x);
                let bits = match self.w.kind(xt) {
                    TypeKind::Float { bits } => Some(*bits),
                    _ => None,
                };
                let Some(bits) = bits else {
                    let shown = self.w.types().display(xt).to_string();
                    self.not_float(name, &shown, e.span);
                    return self.w.bottom(to);
                };
                match name {
                    "isnan" => self.w.cmp(CmpOp::Ne, x, x),
                    "isfinite" => {
                        let d = self.w.arith(ArithOp::Sub, x, x);
                        let zero = self.w.lit(xt, 0);
                        self.w.cmp(CmpOp::Eq, d, zero)
                    }
                    _ => {
                        let it = self.w.ty_int(bits, true);
                        let b = self.w.bitcast(it, x);
                        let zero = self.w.lit(it, 0);
                        self.w.cmp(CmpOp::Lt, b, zero)
                    }
                }
            }
            _ => {
                self.internal(e.span, format!("unknown builtin `{name}`"));
                self.w.bottom(to)
            }
        }
    }
}

/// `T` if `t` is the IR type of `fn(int) -> &mut addrspace(3) [T]` (`reserve_shared`).
fn shared_elem(w: &World, t: Type) -> Option<Type> {
    let tys = w.types();
    let [_, n, ret] = tys.cont_params(t)? else {
        return None;
    };
    let [_, p] = tys.cont_params(*ret)? else {
        return None;
    };
    let TypeKind::Ptr {
        pointee,
        space: AddrSpace::Shared,
    } = *tys.kind(*p)
    else {
        return None;
    };
    match *tys.kind(pointee) {
        TypeKind::Array { elem, len: None } if tys.is_int(*n) => Some(elem),
        _ => None,
    }
}

/// The math builtins (`cc = "builtin"`, generic over `f32` and `f64`), as AnyDSL's
/// `math_builtins` declares them: each is the C math library's function of that name
/// (`sqrtf` for `f32`).
const MATH_BUILTINS: &[&str] = &[
    "fabs", "round", "ceil", "floor", "fmin", "fmax", "cos", "sin", "tan", "acos", "asin", "atan",
    "atan2", "sqrt", "cbrt", "pow", "exp", "exp2", "log", "log2", "log10", "fma", "copysign",
];

impl Lowerer<'_> {
    /// The error for builtin `name` used at `shown`, a type other than `f32` and `f64`.
    fn not_float(&mut self, name: &str, shown: &str, span: Span) {
        self.diags.push(Diagnostic::error(
            span,
            format!("the builtin `{name}` is for `f32` and `f64`, not `{shown}`"),
        ));
    }

    /// The symbol of math builtin `name` at the concrete type `at`, or `None` after an error
    /// at `span`.
    fn math_builtin(&mut self, name: &str, at: Option<Ty>, span: Span) -> Option<String> {
        if !MATH_BUILTINS.contains(&name) {
            self.diags.push(
                Diagnostic::error(span, format!("`{name}` is not a builtin durin provides"))
                    .with_note(format!(
                        "the builtins are {} and the math functions {}",
                        BUILTIN_OPS.join(", "),
                        MATH_BUILTINS.join(", ")
                    )),
            );
            return None;
        }
        match at.map(|t| self.tys.kind(t).clone()) {
            Some(TyKind::Prim(Prim::Float { bits: 32 })) => Some(format!("{name}f")),
            Some(TyKind::Prim(Prim::Float { bits: 64 })) => Some(name.to_string()),
            _ => {
                let shown = at.map_or("?".to_string(), |t| {
                    crate::check::ty_name(&self.tys, &self.p.structs, &self.p.enums, t, &[])
                });
                self.not_float(name, &shown, span);
                None
            }
        }
    }
}

/// Builtins the compiler implements itself (the math builtins are calls).
const BUILTIN_OPS: &[&str] = &[
    "bitcast", "undef", "select", "sizeof", "alignof", "isnan", "isfinite", "signbit", "compare",
];

fn is_builtin_op(name: &str) -> bool {
    BUILTIN_OPS.contains(&name)
}

/// Whether evaluating `e` has no effect and cannot fail (so `&&` need not branch).
fn simple(e: &Expr) -> bool {
    match &e.kind {
        K::Lit(_) | K::Known(_) => true,
        K::Var(_) => true,
        K::Unary(_, x) => simple(x),
        K::Binary(op, a, b) => {
            !matches!(op, crate::ast::BinOp::Div | crate::ast::BinOp::Rem) && simple(a) && simple(b)
        }
        K::And(a, b) | K::Or(a, b) => simple(a) && simple(b),
        _ => false,
    }
}

fn float_bits(f: f64, bits: u8) -> u64 {
    match bits {
        16 => half::f16::from_f64(f).to_bits() as u64,
        32 => (f as f32).to_bits() as u64,
        _ => f.to_bits(),
    }
}
