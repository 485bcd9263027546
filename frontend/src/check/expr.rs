//! Expressions: bidirectional checking with an expected type as a hint.

use super::items::plural;
use super::pat::int_or_float_lit;
use super::*;
use crate::ast::{BinOp, ExprKind as A, UnaryOp};
use crate::hir::{Expr, ExprKind as K, Lit};
use crate::token::Literal;

fn err_expr(span: Span) -> Expr {
    Expr::new(K::Error, TyTable::ERROR, span)
}

/// The type arguments of a variant path: on the variant (`V[T]`) or on the enum
/// (`E[T]::V`).
fn enum_type_args(p: &ast::Path) -> &[ast::Type] {
    let n = p.segments.len();
    match &p.segments[n - 1].type_args {
        a if !a.is_empty() || n < 2 => a,
        _ => &p.segments[n - 2].type_args,
    }
}

fn is_literal(e: &ast::Expr) -> bool {
    literal_within(e, 8)
}

/// Whether `e` is a literal, or arithmetic on literals (`(2 * 4) * x` and `{2} * x` take
/// their type from `x` too, as in Artic) nested at most `depth` deep: a bound, so that
/// checking a long chain of operators does not walk it again at each operator.
fn literal_within(e: &ast::Expr, depth: u32) -> bool {
    match &e.kind {
        A::Lit(Literal::Int(_) | Literal::Float(_)) => true,
        _ if depth == 0 => false,
        A::Unary(UnaryOp::Neg | UnaryOp::Plus, x) => literal_within(x, depth - 1),
        A::Binary(op, l, r) if op.precedence() <= 6 => {
            literal_within(l, depth - 1) && literal_within(r, depth - 1)
        }
        A::Block(stmts) => matches!(stmts.as_slice(),
            [ast::Stmt::Expr { expr, semi: false }] if literal_within(expr, depth - 1)),
        _ => false,
    }
}

/// When `e` is a number literal, possibly in a block (`{ 1 }`), whose type is whatever the
/// context wants: whether it is a float literal.
fn literal_valued(e: &ast::Expr) -> Option<bool> {
    match &e.kind {
        A::Block(stmts) => match stmts.as_slice() {
            [ast::Stmt::Expr { expr, semi: false }] => literal_valued(expr),
            _ => None,
        },
        A::Lit(Literal::Int(_)) => Some(false),
        A::Lit(Literal::Float(_)) => Some(true),
        A::Unary(UnaryOp::Neg | UnaryOp::Plus, x) => literal_valued(x),
        _ => None,
    }
}

/// How firmly `e` decides its own type: 0 for an integer literal (any number type),
/// 1 for a float literal (any float type), 2 otherwise.
fn literal_rank(e: &ast::Expr) -> u8 {
    match literal_valued(e) {
        Some(false) => 0,
        Some(true) => 1,
        None => 2,
    }
}

/// The most elements an array value (`[x; n]`) may have: each is a value of the program.
pub(super) const MAX_ARRAY_VALUE: u64 = 1 << 20;

/// The largest local variable, in bytes: it lives on the stack (8 MiB on most systems,
/// less for the threads of `parallel`).
const MAX_LOCAL_BYTES: u128 = 4 << 20;

impl<'a> Checker<'a> {
    /// About how many bytes a value of type `t` takes (structs count their fields, at
    /// least one byte each; a struct that contains itself, already reported, counts once);
    /// used to refuse locals no stack holds.
    fn value_bytes(&mut self, t: Ty) -> u128 {
        self.value_bytes_within(t, &mut Vec::new())
    }

    /// `value_bytes` of `t`, inside the structs `open`.
    fn value_bytes_within(&mut self, t: Ty, open: &mut Vec<DeclId>) -> u128 {
        let t = self.resolve(t);
        match self.tys.kind(t).clone() {
            TyKind::Prim(p) => match p {
                Prim::Bool => 1,
                Prim::Int { bits, .. } | Prim::Float { bits } => (bits as u128).div_ceil(8),
            },
            TyKind::Ptr { .. } | TyKind::Fn { .. } => 8,
            TyKind::Array { elem, len, .. } => {
                len.unwrap_or(0) as u128 * self.value_bytes_within(elem, open).max(1)
            }
            TyKind::Tuple(ts) => ts.iter().map(|&t| self.value_bytes_within(t, open)).sum(),
            TyKind::Struct(d, _) if open.contains(&d) => 1,
            TyKind::Struct(d, args) => {
                let fields: Vec<Ty> = self.struct_info(d).fields.iter().map(|f| f.1).collect();
                open.push(d);
                let bytes = fields
                    .into_iter()
                    .map(|f| {
                        let f = self.tys.subst(f, &args);
                        self.value_bytes_within(f, open).max(1)
                    })
                    .sum();
                open.pop();
                bytes
            }
            _ => 1,
        }
    }

    /// Checks the `else` branch `f` after the checked `then` branch `t` (whose type it is
    /// expected to have, unless `t` never returns); both converted to their joined type.
    fn else_branch(&mut self, t: Expr, f: &'a ast::Expr, hint: Option<Ty>) -> (Expr, Expr, Ty) {
        let fh = if self.resolve(t.ty) == TyTable::NORET {
            hint
        } else {
            hint.or(Some(t.ty))
        };
        let f = self.expr(f, fh);
        let ty = self.join(hint, &[t.ty, f.ty]);
        (self.coerce(t, ty), self.coerce(f, ty), ty)
    }

    /// Whether `hint` says something: it is given and not an unbound inference variable.
    fn known(&self, hint: Option<Ty>) -> bool {
        hint.is_some_and(|h| !matches!(self.tys.kind(self.resolve(h)), TyKind::Var(_)))
    }

    /// Checks `e` against the type `ty`.
    pub(super) fn check_expr(&mut self, e: &'a ast::Expr, ty: Ty) -> Expr {
        let h = self.expr(e, Some(ty));
        self.coerce(h, ty)
    }

    /// Infers the type of `e`; `hint` is the type the context expects, if known (the
    /// result may still differ: callers coerce).
    pub(super) fn expr(&mut self, e: &'a ast::Expr, hint: Option<Ty>) -> Expr {
        let span = e.span;
        let hint = hint.map(|h| self.resolve(h));
        match &e.kind {
            A::Error => err_expr(span),
            A::Lit(l) => self.literal(l, hint, span, false),
            A::Path(p) => self.path_expr(p, hint, span),
            A::Summon(t) => {
                let t = self.resolve_type(t);
                self.summon(t, span)
            }
            A::Tuple(es) => {
                let hints: Option<Vec<Ty>> = hint.and_then(|h| match self.tys.kind(h) {
                    TyKind::Tuple(ts) if ts.len() == es.len() => Some(ts.clone()),
                    _ => None,
                });
                let hs: Vec<Expr> = es
                    .iter()
                    .enumerate()
                    .map(|(i, x)| self.expr(x, hints.as_ref().map(|h| h[i])))
                    .collect();
                let ty = self.tys.tuple(hs.iter().map(|h| h.ty).collect());
                Expr::new(K::Tuple(hs), ty, span)
            }
            A::Array { elems, simd } => {
                let mut elem = hint.and_then(|h| self.elem_hint(h));
                if elems.is_empty() && elem.is_none() && !simd {
                    self.err(
                        span,
                        "cannot infer the element type of an empty array; annotate it",
                    );
                    return err_expr(span);
                }
                let mut hs = Vec::new();
                for x in elems {
                    let h = match elem {
                        Some(t) => self.check_expr(x, t),
                        None => {
                            let h = self.expr(x, None);
                            elem = Some(h.ty);
                            h
                        }
                    };
                    hs.push(h);
                }
                let (elem, n) = (elem.unwrap_or(TyTable::ERROR), elems.len() as u64);
                let ty = if *simd {
                    self.simd_type(elem, n, span)
                } else {
                    self.tys.array(elem, Some(n), false)
                };
                if ty == TyTable::ERROR {
                    return err_expr(span);
                }
                Expr::new(K::Array(hs), ty, span)
            }
            A::Repeat { elem, count, simd } => {
                let Some(count) = self.array_len(count, span) else {
                    return err_expr(span);
                };
                if count > MAX_ARRAY_VALUE {
                    let d = self
                        .error(span, format!("array too large: {count} elements (a value may hold at most {MAX_ARRAY_VALUE})"))
                        .with_note("allocate a buffer for large arrays: `alloc_cpu(n * size)`");
                    self.emit(d);
                    return err_expr(span);
                }
                let eh = hint.and_then(|h| self.elem_hint(h));
                let x = match eh {
                    Some(t) => self.check_expr(elem, t),
                    None => self.expr(elem, None),
                };
                let ty = if *simd {
                    self.simd_type(x.ty, count, span)
                } else {
                    self.tys.array(x.ty, Some(count), false)
                };
                if ty == TyTable::ERROR {
                    return err_expr(span);
                }
                Expr::new(K::Repeat(Box::new(x), count), ty, span)
            }
            A::Struct {
                base,
                update,
                fields,
            } => {
                if *update {
                    self.struct_update(base, fields, hint, span)
                } else {
                    self.struct_lit(base, fields, hint, span)
                }
            }
            A::Block(stmts) => self.block(stmts, hint, span),
            A::Closure {
                filter,
                param,
                ret,
                body,
            } => self.closure(filter.as_ref(), param, ret.as_ref(), body, hint, span, None),
            A::Call { callee, args } => self.call(callee, args, hint, span, false),
            A::Field(..) | A::Index(..) => self.place(e),
            A::Unary(op, x) => self.unary(*op, x, hint, span),
            A::Binary(op, l, r) => self.binary(*op, l, r, hint, span),
            A::Typed(x, t) => {
                let to = self.resolve_type(t);
                self.check_expr(x, to)
            }
            A::Cast(x, t) => {
                let to = self.resolve_type(t);
                // A literal is typed before `as` converts it (as `i32` by default): one that
                // only the target type holds is an error that says how to type it.
                if let (A::Lit(Literal::Int(v)), Some(Prim::Int { bits, signed })) =
                    (&x.kind, self.tys.as_prim(to))
                {
                    let max = if signed {
                        (1u128 << (bits - 1)) - 1
                    } else {
                        (1u128 << bits) - 1
                    };
                    if *v > i32::MAX as u64 && *v as u128 <= max {
                        let s = self.ty_str(to);
                        let d = self
                            .error(x.span, format!("the literal `{v}` does not fit in `i32`, the type a literal has before `as` converts it"))
                            .with_note(format!("write `{v}:{s}` to give the literal the type `{s}`"));
                        self.emit(d);
                        return err_expr(span);
                    }
                }
                let h = self.expr(x, None);
                self.cast(h, to, span)
            }
            A::If { cond, then, els } => {
                let c = self.check_expr(cond, TyTable::BOOL);
                match els {
                    None => {
                        let t = self.check_expr(then, TyTable::UNIT);
                        Expr::new(K::If(Box::new(c), Box::new(t), None), TyTable::UNIT, span)
                    }
                    // As in Artic, a literal branch takes the type of the other one:
                    // `if c { 1 } else { x }` with `x: u64` is a `u64`, and
                    // `if c { 1 } else { 1.0 }` an `f64`.
                    Some(f) if !self.known(hint) && literal_rank(then) < literal_rank(f) => {
                        let f = self.expr(f, None);
                        let th = Some(f.ty).filter(|&t| self.resolve(t) != TyTable::NORET);
                        let t = self.expr(then, th);
                        let ty = self.join(hint, &[t.ty, f.ty]);
                        let (t, f) = (self.coerce(t, ty), self.coerce(f, ty));
                        Expr::new(K::If(Box::new(c), Box::new(t), Some(Box::new(f))), ty, span)
                    }
                    Some(f) => {
                        let t = self.expr(then, hint);
                        let (t, f, ty) = self.else_branch(t, f, hint);
                        Expr::new(K::If(Box::new(c), Box::new(t), Some(Box::new(f))), ty, span)
                    }
                }
            }
            A::IfLet {
                pat,
                expr,
                then,
                els,
            } => {
                let scrut = self.expr(expr, None);
                self.cx.scopes.push(FxHashMap::default());
                let p = self.pattern(pat, scrut.ty, false);
                self.require_refutable(&p, scrut.ty, "if let");
                let t = match els {
                    None => self.check_expr(then, TyTable::UNIT),
                    Some(_) => self.expr(then, hint),
                };
                self.cx.scopes.pop();
                let (t, f, ty) = match els {
                    None => {
                        let unit = Expr::new(K::Tuple(Vec::new()), TyTable::UNIT, span);
                        (t, unit, TyTable::UNIT)
                    }
                    Some(f) => self.else_branch(t, f, hint),
                };
                let wild = hir::Pat {
                    kind: hir::PatKind::Wild,
                    ty: scrut.ty,
                    span,
                };
                Expr::new(K::Match(Box::new(scrut), vec![(p, t), (wild, f)]), ty, span)
            }
            A::While { cond, body } => {
                let c = self.check_expr(cond, TyTable::BOOL);
                let id = self.new_loop();
                self.cx.loops.push(id);
                let b = self.expr(body, Some(TyTable::UNIT));
                self.cx.loops.pop();
                Expr::new(K::While(id, Box::new(c), Box::new(b)), TyTable::UNIT, span)
            }
            A::WhileLet { pat, expr, body } => {
                let id = self.new_loop();
                self.cx.loops.push(id);
                let scrut = self.expr(expr, None);
                self.cx.scopes.push(FxHashMap::default());
                let p = self.pattern(pat, scrut.ty, false);
                self.require_refutable(&p, scrut.ty, "while let");
                let b = self.expr(body, Some(TyTable::UNIT));
                self.cx.scopes.pop();
                self.cx.loops.pop();
                let brk_ty = self.tys.func(TyTable::UNIT, TyTable::NORET);
                let brk = Expr::new(
                    K::Call {
                        callee: Box::new(Expr::new(K::Break(id), brk_ty, span)),
                        arg: Box::new(Expr::new(K::Tuple(Vec::new()), TyTable::UNIT, span)),
                        run: false,
                    },
                    TyTable::NORET,
                    span,
                );
                let brk = Expr::new(K::Cast(Box::new(brk)), b.ty, span);
                let wild = hir::Pat {
                    kind: hir::PatKind::Wild,
                    ty: scrut.ty,
                    span,
                };
                let bty = b.ty;
                let m = Expr::new(
                    K::Match(Box::new(scrut), vec![(p, b), (wild, brk)]),
                    bty,
                    span,
                );
                let t = Expr::new(K::Lit(Lit::Bool(true)), TyTable::BOOL, span);
                Expr::new(K::While(id, Box::new(t), Box::new(m)), TyTable::UNIT, span)
            }
            A::For { pats, call, body } => self.for_loop(pats, call, body, span),
            A::Match { expr, arms } => {
                let scrut = self.expr(expr, None);
                let mut hs = Vec::new();
                let mut tys = Vec::new();
                for (p, x) in arms {
                    self.cx.scopes.push(FxHashMap::default());
                    let hp = self.pattern(p, scrut.ty, false);
                    let ah = hint.or_else(|| {
                        tys.iter()
                            .copied()
                            .find(|t| self.resolve(*t) != TyTable::NORET)
                    });
                    let hx = self.expr(x, ah);
                    self.cx.scopes.pop();
                    tys.push(hx.ty);
                    hs.push((hp, hx));
                }
                let ty = self.join(hint, &tys);
                let hs: Vec<(hir::Pat, Expr)> = hs
                    .into_iter()
                    .map(|(p, x)| (p, self.coerce(x, ty)))
                    .collect();
                let pats: Vec<&hir::Pat> = hs.iter().map(|(p, _)| p).collect();
                let sty = self.resolve(scrut.ty);
                if let Some(w) = self.uncovered(&pats, sty) {
                    let s = self.ty_str(sty);
                    let d = self.error(
                        expr.span,
                        format!("`match` does not cover every value of type `{s}`"),
                    );
                    let d = if w == "_" {
                        d.with_note("add an arm `_ => ...` for the remaining values")
                    } else {
                        d.with_label_message(format!("`{w}` is not covered"))
                            .with_note(format!(
                                "add an arm for `{w}`, or `_ => ...` for all remaining values"
                            ))
                    };
                    self.emit(d);
                }
                Expr::new(K::Match(Box::new(scrut), hs), ty, span)
            }
            A::Break | A::Continue => {
                let Some(&id) = self.cx.loops.last() else {
                    let what = if matches!(e.kind, A::Break) {
                        "break"
                    } else {
                        "continue"
                    };
                    self.err(span, format!("`{what}` outside of a loop"));
                    return err_expr(span);
                };
                let ty = self.tys.func(TyTable::UNIT, TyTable::NORET);
                let kind = if matches!(e.kind, A::Break) {
                    K::Break(id)
                } else {
                    K::Continue(id)
                };
                Expr::new(kind, ty, span)
            }
            A::Return => {
                let Some(&(f, codom, inferred)) = self.cx.fns.last() else {
                    self.err(span, "`return` outside of a function");
                    return err_expr(span);
                };
                // As in Artic: `return` has the type of a continuation that takes the
                // return type, which must be known before the body is checked.
                if let Some((at, what)) = inferred {
                    let d = Diagnostic::error(span, "cannot infer the type of `return`")
                        .with_secondary(
                            at,
                            format!("the return type of this {what} is inferred from its body"),
                        )
                        .with_note(format!("write the {what}'s return type"));
                    self.diags.push(d);
                    return err_expr(span);
                }
                let ty = self.tys.func(codom, TyTable::NORET);
                Expr::new(K::Return(f), ty, span)
            }
            A::Filtered(flt, x) => {
                if let Some(c) = &flt.expr {
                    let _ = self.check_expr(c, TyTable::BOOL);
                }
                match &x.kind {
                    A::Call { callee, args } => self.call(callee, args, hint, span, true),
                    _ => {
                        self.err(
                            x.span,
                            "`@` before an expression must be followed by a call: `@f(x)`",
                        );
                        err_expr(span)
                    }
                }
            }
        }
    }

    /// The type a constructor path builds: the struct or enum `r` with the type arguments
    /// written on the path (or inferred), matched with the expected type.
    fn constructor_type(&mut self, r: ItemRef, p: &ast::Path, hint: Option<Ty>, span: Span) -> Ty {
        let written = match r {
            ItemRef::Enum(_) => enum_type_args(p),
            _ => &p.segments[p.segments.len() - 1].type_args,
        };
        let args: Vec<Ty> = written.iter().map(|t| self.resolve_type(t)).collect();
        let t = self.type_of_item(r, args, span, true);
        if let Some(h) = hint {
            self.unify(t, h);
        }
        t
    }

    fn new_loop(&mut self) -> LoopId {
        self.next_loop += 1;
        self.next_loop - 1
    }

    /// The type of a conditional with branches of types `tys`.
    fn join(&mut self, hint: Option<Ty>, tys: &[Ty]) -> Ty {
        if let Some(h) = hint {
            if !self.tys.has_vars(h) || tys.is_empty() {
                return h;
            }
        }
        tys.iter()
            .copied()
            .find(|t| self.resolve(*t) != TyTable::NORET)
            .unwrap_or(TyTable::NORET)
    }

    /// A literal; `negated`: the operand of a unary `-`, whose value is `-l` (so `-128`
    /// fits in `i8`).
    fn literal(&mut self, l: &Literal, hint: Option<Ty>, span: Span, negated: bool) -> Expr {
        match l {
            Literal::Int(v) => {
                let ty = match hint {
                    Some(h) if self.tys.is_num(h) => h,
                    Some(h) if matches!(self.tys.kind(h), TyKind::Var(_)) => {
                        self.unify(h, TyTable::I32);
                        TyTable::I32
                    }
                    _ => TyTable::I32,
                };
                self.check_int_literal(ty, *v, negated, span);
                Expr::new(K::Lit(int_or_float_lit(&self.tys, ty, *v)), ty, span)
            }
            Literal::Float(f) => {
                let ty = match hint {
                    Some(h) if self.tys.is_float(h) => h,
                    _ => TyTable::F64,
                };
                Expr::new(K::Lit(Lit::Float(*f)), ty, span)
            }
            Literal::Bool(b) => Expr::new(K::Lit(Lit::Bool(*b)), TyTable::BOOL, span),
            Literal::Char(c) => Expr::new(K::Lit(Lit::Int(*c as u64)), TyTable::U8, span),
            Literal::Str(s) => {
                let mut bytes = s.clone();
                bytes.push(0);
                // Where an array of bytes is expected, the string is that array's value.
                if let Some(h) = hint {
                    let h = self.resolve(h);
                    if let TyKind::Array {
                        elem: TyTable::U8,
                        len: Some(n),
                        simd: false,
                    } = *self.tys.kind(h)
                    {
                        if n == bytes.len() as u64 {
                            let elems = bytes
                                .iter()
                                .map(|&b| Expr::new(K::Lit(Lit::Int(b as u64)), TyTable::U8, span))
                                .collect();
                            return Expr::new(K::Array(elems), h, span);
                        }
                    }
                }
                let arr = self.tys.array(TyTable::U8, None, false);
                let ty = self.tys.ptr(arr, false);
                Expr::new(K::Str(bytes.into()), ty, span)
            }
        }
    }

    /// A path in expression position.
    fn path_expr(&mut self, p: &ast::Path, hint: Option<Ty>, span: Span) -> Expr {
        let Some(r) = self.path_target(p) else {
            return err_expr(span);
        };
        match r {
            Local::Var(v) => self.var_expr(v, span),
            Local::Item(r) => self.item_expr(r, p, hint, span),
        }
    }

    fn var_expr(&mut self, v: VarId, span: Span) -> Expr {
        let var = &mut self.vars[v as usize];
        var.used = true;
        let (mutable, ty, name, decl) = (var.mutable, var.ty, var.name.clone(), var.span);
        if self.cx.in_filter && mutable {
            let d = self
                .error(span, format!("filters may not read the mutable variable `{name}`"))
                .with_secondary(decl, "declared `mut` here")
                .with_note("a filter decides at compile time; it can only look at values that do not change");
            self.emit(d);
        }
        Expr::new(K::Var(v), ty, span)
    }

    /// What a path names: a local variable or an item.
    fn path_target(&mut self, p: &ast::Path) -> Option<Local> {
        if p.segments.len() == 1 {
            let seg = &p.segments[0];
            match self.lookup(&seg.ident.name) {
                Some(Local::Var(v)) => {
                    if !seg.type_args.is_empty() {
                        self.err(p.span, "a variable takes no type arguments");
                    }
                    Some(Local::Var(v))
                }
                Some(Local::Item(r)) => Some(Local::Item(self.deref_use(r, seg.ident.span)?)),
                None => {
                    self.unknown_name(&seg.ident, "value");
                    None
                }
            }
        } else {
            self.resolve_path_item(p).map(Local::Item)
        }
    }

    fn item_expr(&mut self, r: ItemRef, p: &ast::Path, hint: Option<Ty>, span: Span) -> Expr {
        let last = p.segments.last().expect("paths have a segment");
        match r {
            ItemRef::Fn(f) => {
                let (dom, codom) = self.fn_sig(f, span);
                let info = &self.fns[f as usize];
                let outer = info.outer_params as usize;
                let own = info.type_params.len() - outer;
                let mut args: Vec<Ty> = (0..outer as u32)
                    .map(|i| self.tys.intern(TyKind::Param(i)))
                    .collect();
                if last.type_args.is_empty() {
                    for _ in 0..own {
                        let v = self.fresh_var();
                        args.push(v);
                    }
                } else {
                    if last.type_args.len() > own {
                        self.err(
                            p.span,
                            format!(
                                "`{}` takes {own} type argument{}, but {} were given",
                                last.ident.name,
                                plural(own),
                                last.type_args.len()
                            ),
                        );
                        return err_expr(span);
                    }
                    for t in &last.type_args {
                        let t = self.resolve_type(t);
                        args.push(t);
                    }
                    // Type arguments not given are inferred.
                    for _ in last.type_args.len()..own {
                        let v = self.fresh_var();
                        args.push(v);
                    }
                }
                let fty = self.tys.func(dom, codom);
                let ty = self.tys.subst(fty, &args);
                Expr::new(K::Fn(f, args), ty, span)
            }
            ItemRef::Static(s) => {
                let ty = self.static_info(s, span);
                if self.cx.in_filter && self.statics[s as usize].mutable {
                    self.err(
                        span,
                        format!(
                            "filters may not read the mutable static `{}`",
                            self.statics[s as usize].name
                        ),
                    );
                }
                Expr::new(K::Static(s), ty, span)
            }
            ItemRef::Variant(e, i) => {
                let info = self.enum_info(e);
                if info.variants[i as usize].1.is_some() {
                    let name = info.variants[i as usize].0.clone();
                    if self.record_variant(e, i).is_some() {
                        let how = format!("{name} {{ field = value, ... }}");
                        self.err(
                            span,
                            format!("variant `{name}` carries a value: write `{how}`"),
                        );
                        return err_expr(span);
                    }
                    // A variant with a payload is its constructor function, as in Artic.
                    return self.constructor_fn(r, p, hint, span);
                }
                let ety = self.constructor_type(ItemRef::Enum(e), p, hint, span);
                Expr::new(K::Variant(i, None), ety, span)
            }
            ItemRef::Struct(d) => {
                let info = self.struct_info(d).clone();
                match info.shape {
                    ast::StructShape::Unit => {
                        let ty = self.constructor_type(r, p, hint, span);
                        Expr::new(K::Struct(Vec::new()), ty, span)
                    }
                    ast::StructShape::Tuple => self.constructor_fn(r, p, hint, span),
                    ast::StructShape::Record => {
                        let d = self
                            .error(span, format!("struct `{}` is not a value", info.name))
                            .with_note(format!(
                                "build one with `{} {{ field = value, ... }}`",
                                info.name
                            ));
                        self.emit(d);
                        err_expr(span)
                    }
                }
            }
            ItemRef::Mod(_) => {
                self.err(span, format!("module `{}` is not a value", last.ident.name));
                err_expr(span)
            }
            ItemRef::Enum(_) | ItemRef::Alias(_) => {
                self.err(span, format!("type `{}` is not a value", last.ident.name));
                err_expr(span)
            }
            ItemRef::Use(_) => err_expr(span),
        }
    }

    /// Checks the arguments of a call against the domain `dom`.
    fn args(&mut self, args: &'a [ast::Expr], dom: Ty, span: Span) -> Expr {
        if args.len() == 1 {
            return self.check_expr(&args[0], dom);
        }
        let rdom = self.resolve(dom);
        let elems: Vec<Ty> = match self.tys.kind(rdom) {
            TyKind::Tuple(ts) if ts.len() == args.len() => ts.clone(),
            TyKind::Var(_) => {
                let ts: Vec<Ty> = args.iter().map(|_| self.fresh_var()).collect();
                let t = self.tys.tuple(ts.clone());
                self.unify(rdom, t);
                ts
            }
            TyKind::Error => vec![TyTable::ERROR; args.len()],
            kind => {
                let n = match kind {
                    TyKind::Tuple(ts) => ts.len(),
                    _ => 1,
                };
                let s = self.ty_str(dom);
                let d = self
                    .error(
                        span,
                        format!(
                            "this function takes {n} argument{}, but {} were given",
                            plural(n),
                            args.len()
                        ),
                    )
                    .with_note(format!("the parameter type is `{s}`"));
                self.emit(d);
                for a in args {
                    self.expr(a, None);
                }
                return err_expr(span);
            }
        };
        let hs: Vec<Expr> = args
            .iter()
            .zip(elems)
            .map(|(a, t)| self.check_expr(a, t))
            .collect();
        Expr::new(K::Tuple(hs), dom, span)
    }

    fn call(
        &mut self,
        callee: &'a ast::Expr,
        args: &'a [ast::Expr],
        hint: Option<Ty>,
        span: Span,
        run: bool,
    ) -> Expr {
        // Constructors: enum variants with a payload and tuple-like structs.
        if let A::Path(p) = &callee.kind {
            if let Some(Local::Item(r)) = self.peek_path(p) {
                match r {
                    ItemRef::Variant(e, i) => {
                        if self.record_variant(e, i).is_some() {
                            let name = self.enum_info(e).variants[i as usize].0.clone();
                            self.err(
                                span,
                                format!("variant `{name}` has named fields; build it with `{name} {{ field = value, ... }}`"),
                            );
                            return err_expr(span);
                        }
                        let ety = self.constructor_type(ItemRef::Enum(e), p, hint, span);
                        let (vname, vpayload) = self.enum_info(e).variants[i as usize].clone();
                        let TyKind::Enum(_, targs) = self.tys.kind(ety).clone() else {
                            return err_expr(span);
                        };
                        let Some(payload) = vpayload else {
                            self.err(span, format!("variant `{vname}` carries no value"));
                            return err_expr(span);
                        };
                        let pty = self.tys.subst(payload, &targs);
                        let a = self.args(args, pty, span);
                        return Expr::new(K::Variant(i, Some(Box::new(a))), ety, span);
                    }
                    ItemRef::Struct(d) if self.struct_info(d).shape == ast::StructShape::Unit => {
                        let name = self.struct_info(d).name.clone();
                        self.err(
                            span,
                            format!("`{name}` is a unit struct: its value is written `{name}`"),
                        );
                        return err_expr(span);
                    }
                    ItemRef::Struct(d) if self.struct_info(d).shape == ast::StructShape::Tuple => {
                        let sty = self.constructor_type(r, p, hint, span);
                        let TyKind::Struct(_, targs) = self.tys.kind(sty).clone() else {
                            return err_expr(span);
                        };
                        let info = self.struct_info(d).clone();
                        if args.len() != info.fields.len() {
                            self.err(
                                span,
                                format!(
                                    "`{}` has {} field{}, but {} values were given",
                                    info.name,
                                    info.fields.len(),
                                    plural(info.fields.len()),
                                    args.len()
                                ),
                            );
                            return err_expr(span);
                        }
                        let hs = args
                            .iter()
                            .zip(&info.fields)
                            .map(|(a, (_, t))| {
                                let t = self.tys.subst(*t, &targs);
                                self.check_expr(a, t)
                            })
                            .collect();
                        return Expr::new(K::Struct(hs), sty, span);
                    }
                    _ => {}
                }
            }
        }
        // `(*p)(i)` indexes the array `p` points to, which is not read as a whole.
        let f = match &callee.kind {
            A::Unary(UnaryOp::Deref, _) => self.place(callee),
            _ => self.expr(callee, None),
        };
        let f = self.auto_deref_callee(f);
        let fty = self.resolve(f.ty);
        match self.tys.kind(fty).clone() {
            TyKind::Fn { dom, codom } => {
                let a = match self.implicit_args(&f, args, dom, span) {
                    Some(a) => a,
                    None => self.args(args, dom, span),
                };
                Expr::new(
                    K::Call {
                        callee: Box::new(f),
                        arg: Box::new(a),
                        run,
                    },
                    codom,
                    span,
                )
            }
            TyKind::Array { elem, len, .. } => {
                if args.len() != 1 {
                    self.err(span, "an array is indexed with one index: `a(i)`");
                    return err_expr(span);
                }
                let i = self.index(&args[0]);
                // A literal index past the end of an array of known length is an error here,
                // the same for every back end (it reached them as an extraction out of range).
                if let (K::Lit(Lit::Int(v)), Some(n)) = (&i.kind, len) {
                    let t = self.resolve(i.ty);
                    // The literal's bits, sign-extended for a signed type.
                    let value = match self.tys.as_prim(t) {
                        Some(Prim::Int { bits, signed: true }) if bits < 64 => {
                            let s = 64 - bits as u32;
                            ((*v << s) as i64 >> s) as i128
                        }
                        Some(Prim::Int { signed: true, .. }) => *v as i64 as i128,
                        _ => *v as i128,
                    };
                    if value < 0 || value >= n as i128 {
                        let shown = value;
                        self.err(
                            args[0].span,
                            format!("index {shown} is out of bounds of an array of {n} elements"),
                        );
                        return err_expr(span);
                    }
                }
                Expr::new(K::Index(Box::new(f), Box::new(i)), elem, span)
            }
            TyKind::Error => {
                for a in args {
                    self.expr(a, None);
                }
                err_expr(span)
            }
            _ => {
                let s = self.ty_str(fty);
                let d = self
                    .error(
                        callee.span,
                        format!("expected a function or an array, found `{s}`"),
                    )
                    .with_label_message("cannot be called");
                self.emit(d);
                err_expr(span)
            }
        }
    }

    /// Resolves a path without reporting errors (to look for constructors).
    fn peek_path(&mut self, p: &ast::Path) -> Option<Local> {
        let n = self.diags.len();
        let r = self.path_target(p);
        self.diags.truncate(n);
        r
    }

    /// `p(i)` where `p` points to an array indexes the array.
    fn auto_deref_callee(&mut self, f: Expr) -> Expr {
        let t = self.resolve(f.ty);
        if let TyKind::Ptr { pointee, .. } = self.tys.kind(t) {
            let pointee = *pointee;
            if matches!(self.tys.kind(self.resolve(pointee)), TyKind::Array { .. }) {
                let span = f.span;
                return Expr::new(K::Deref(Box::new(f)), pointee, span);
            }
        }
        f
    }

    fn index(&mut self, i: &'a ast::Expr) -> Expr {
        let h = self.expr(i, None);
        let t = self.resolve(h.ty);
        if !self.tys.is_int(t) && t != TyTable::ERROR {
            let s = self.ty_str(t);
            self.err(i.span, format!("array indices are integers, found `{s}`"));
            return err_expr(i.span);
        }
        h
    }

    /// A place: a variable, `*p`, a field or an element of a place (pointers to structs and
    /// arrays are dereferenced automatically). Other expressions are values.
    pub(super) fn place(&mut self, e: &'a ast::Expr) -> Expr {
        let span = e.span;
        match &e.kind {
            A::Unary(UnaryOp::Deref, p) => self.deref_place(p, span),
            // `$x = v` writes `x`: stopping evaluation does not change the place.
            A::Unary(UnaryOp::Halt, p) => self.place(p),
            A::Field(b, name) => {
                let base = self.place_base(b);
                let t = self.resolve(base.ty);
                match self.tys.kind(t).clone() {
                    TyKind::Struct(d, args) => {
                        let info = self.struct_info(d);
                        match info.field(&name.name).map(|i| (i, info.fields[i].1)) {
                            Some((i, ft)) => {
                                let ft = self.tys.subst(ft, &args);
                                Expr::new(K::Field(Box::new(base), i as u32), ft, span)
                            }
                            None => {
                                let info = info.clone();
                                self.unknown_field(name, &info);
                                err_expr(span)
                            }
                        }
                    }
                    TyKind::Error => err_expr(span),
                    _ => {
                        let s = self.ty_str(t);
                        self.err(
                            name.span,
                            format!("no field `{}` on a value of type `{s}`", name.name),
                        );
                        err_expr(span)
                    }
                }
            }
            A::Index(b, i) => {
                let base = self.place_base(b);
                let t = self.resolve(base.ty);
                let ft = match self.tys.kind(t).clone() {
                    TyKind::Tuple(ts) => ts.get(*i as usize).copied(),
                    TyKind::Struct(d, args) => {
                        let info = self.struct_info(d).clone();
                        info.fields
                            .get(*i as usize)
                            .map(|(_, ft)| *ft)
                            .map(|ft| self.tys.subst(ft, &args))
                    }
                    TyKind::Error => return err_expr(span),
                    _ => None,
                };
                match ft {
                    Some(ft) => Expr::new(K::Field(Box::new(base), *i as u32), ft, span),
                    None => {
                        let s = self.ty_str(t);
                        self.err(span, format!("no element {i} in a value of type `{s}`"));
                        err_expr(span)
                    }
                }
            }
            // Elements `a(i)` are built by `call`, on the place `a`.
            _ => self.expr(e, None),
        }
    }

    /// The address space of place `h`: that of the pointer it is reached through, or the
    /// generic space for a variable.
    fn place_space(&mut self, h: &Expr) -> u32 {
        match &h.kind {
            K::Deref(p) => {
                let t = self.resolve(p.ty);
                match self.tys.kind(t) {
                    TyKind::Ptr { space, .. } => *space,
                    _ => 0,
                }
            }
            K::Field(b, _) | K::Index(b, _) => self.place_space(b),
            _ => 0,
        }
    }

    /// `*p` as a place.
    fn deref_place(&mut self, p: &'a ast::Expr, span: Span) -> Expr {
        let h = self.expr(p, None);
        let t = self.resolve(h.ty);
        match self.tys.kind(t) {
            TyKind::Ptr { pointee, .. } => {
                let pointee = *pointee;
                Expr::new(K::Deref(Box::new(h)), pointee, span)
            }
            TyKind::Error => err_expr(span),
            _ => {
                let s = self.ty_str(t);
                self.err(span, format!("cannot dereference a value of type `{s}`"));
                err_expr(span)
            }
        }
    }

    /// The base of a field or element access: a place, dereferenced if it is a pointer.
    fn place_base(&mut self, b: &'a ast::Expr) -> Expr {
        let mut h = self.place(b);
        loop {
            let t = self.resolve(h.ty);
            let TyKind::Ptr { pointee, .. } = self.tys.kind(t) else {
                return h;
            };
            let pointee = *pointee;
            let span = h.span;
            h = Expr::new(K::Deref(Box::new(h)), pointee, span);
        }
    }

    /// Reports an error unless `h` is a place that may be written; marks variables mutated.
    pub(super) fn require_mutable(&mut self, h: &Expr, what: &str) {
        match &h.kind {
            K::Var(v) => {
                let var = &mut self.vars[*v as usize];
                if var.mutable {
                    var.mutated = true;
                } else {
                    let (name, decl) = (var.name.clone(), var.span);
                    let d = self
                        .error(h.span, format!("cannot {what} the immutable variable `{name}`"))
                        .with_secondary(decl, format!("declared here; make it mutable: `mut {name}`"));
                    self.emit(d);
                }
            }
            K::Static(s) => {
                if !self.statics[*s as usize].mutable {
                    let name = self.statics[*s as usize].name.clone();
                    self.err(h.span, format!("cannot {what} the immutable static `{name}`; declare it `static mut`"));
                }
            }
            K::Deref(p) => {
                let t = self.resolve(p.ty);
                if let TyKind::Ptr { mutable: false, .. } = self.tys.kind(t) {
                    let s = self.ty_str(t);
                    let d = self
                        .error(h.span, format!("cannot write through a pointer of type `{s}`"))
                        .with_note("only `&mut` pointers allow writes");
                    self.emit(d);
                }
            }
            K::Field(b, _) | K::Index(b, _) => self.require_mutable(b, what),
            K::Error => {}
            _ => self.err(h.span, format!("cannot {what} this expression: it is not a variable, a field, an element or `*p`")),
        }
    }

    fn unary(&mut self, op: UnaryOp, x: &'a ast::Expr, hint: Option<Ty>, span: Span) -> Expr {
        match op {
            UnaryOp::Not | UnaryOp::Neg | UnaryOp::Plus => {
                let h = match &x.kind {
                    A::Lit(l) if op == UnaryOp::Neg => {
                        let hint = hint.map(|h| self.resolve(h));
                        self.literal(l, hint, span, true)
                    }
                    _ => self.expr(x, hint),
                };
                let t = self.resolve(h.ty);
                let et = self.lane(t);
                let ok = match op {
                    UnaryOp::Not => self.tys.is_int(et) || et == TyTable::BOOL,
                    _ => self.tys.is_num(et),
                };
                if !ok && t != TyTable::ERROR {
                    let s = self.ty_str(t);
                    let sym = match op {
                        UnaryOp::Not => "!",
                        UnaryOp::Neg => "-",
                        _ => "+",
                    };
                    self.err(
                        span,
                        format!("cannot apply `{sym}` to a value of type `{s}`"),
                    );
                    return err_expr(span);
                }
                if op == UnaryOp::Plus {
                    return h;
                }
                // Fold `-literal` so that `-128` fits in `i8`.
                if let (UnaryOp::Neg, K::Lit(l)) = (op, &h.kind) {
                    let l = match *l {
                        Lit::Int(v) => Lit::Int(v.wrapping_neg()),
                        Lit::Float(f) => Lit::Float(-f),
                        b => b,
                    };
                    return Expr::new(K::Lit(l), t, span);
                }
                Expr::new(K::Unary(op, Box::new(h)), t, span)
            }
            UnaryOp::Deref => {
                let h = self.deref_place(x, span);
                let t = self.resolve(h.ty);
                if let TyKind::Array {
                    elem, len: None, ..
                } = *self.tys.kind(t)
                {
                    let s = self.ty_str(elem);
                    let d = self
                        .error(span, format!("cannot read a whole array of unknown length `[{s}]`: it has no size"))
                        .with_note("index it, `(*p)(i)`, or take its address, `&(*p)`");
                    self.emit(d);
                    return err_expr(span);
                }
                h
            }
            UnaryOp::AddrOf | UnaryOp::AddrOfMut => {
                let h = self.place(x);
                let mutable = op == UnaryOp::AddrOfMut;
                if mutable {
                    self.require_mutable(&h, "borrow mutably");
                }
                // The address of a place reached through a pointer is in that pointer's
                // address space (`&mut p(i)` with `p: &mut addrspace(1) [i32]`).
                let space = self.place_space(&h);
                let ty = self.tys.intern(TyKind::Ptr {
                    pointee: h.ty,
                    mutable,
                    space,
                });
                Expr::new(K::AddrOf(Box::new(h)), ty, span)
            }
            UnaryOp::PreInc | UnaryOp::PreDec | UnaryOp::PostInc | UnaryOp::PostDec => {
                let h = self.place(x);
                self.require_mutable(&h, "change");
                self.mark_used(&h);
                let t = self.resolve(h.ty);
                let et = self.lane(t);
                if !self.tys.is_num(et) && t != TyTable::ERROR {
                    let s = self.ty_str(t);
                    self.err(
                        span,
                        format!("`++` and `--` apply to numbers, not to `{s}`"),
                    );
                }
                let inc = matches!(op, UnaryOp::PreInc | UnaryOp::PostInc);
                let post = matches!(op, UnaryOp::PostInc | UnaryOp::PostDec);
                Expr::new(K::IncDec(Box::new(h), inc, post), t, span)
            }
            UnaryOp::Known => {
                let h = self.expr(x, None);
                Expr::new(K::Known(Box::new(h)), TyTable::BOOL, span)
            }
            UnaryOp::Halt => {
                let h = self.expr(x, hint);
                let t = h.ty;
                Expr::new(K::Halt(Box::new(h)), t, span)
            }
        }
    }

    fn mark_used(&mut self, h: &Expr) {
        match &h.kind {
            K::Var(v) => self.vars[*v as usize].used = true,
            K::Field(b, _) | K::Index(b, _) => self.mark_used(b),
            _ => {}
        }
    }

    /// The element type an array literal expected as `hint` should have: that of an array,
    /// or of the array a pointer points to (the literal's address is taken, as in Artic).
    fn elem_hint(&self, hint: Ty) -> Option<Ty> {
        match self.tys.kind(self.resolve(hint)) {
            TyKind::Array { elem, .. } => Some(*elem),
            TyKind::Ptr {
                pointee, space: 0, ..
            } => match self.tys.kind(self.resolve(*pointee)) {
                TyKind::Array { elem, .. } => Some(*elem),
                _ => None,
            },
            _ => None,
        }
    }

    /// Checks both operands of a binary operator so that they have one type.
    fn operands(&mut self, l: &'a ast::Expr, r: &'a ast::Expr, hint: Option<Ty>) -> (Expr, Expr) {
        if is_literal(l) && !is_literal(r) {
            let hr = self.expr(r, hint);
            let hl = self.check_expr(l, hr.ty);
            (hl, hr)
        } else {
            let hl = self.expr(l, hint);
            let hr = self.check_expr(r, hl.ty);
            (hl, hr)
        }
    }

    fn binary(
        &mut self,
        op: BinOp,
        l: &'a ast::Expr,
        r: &'a ast::Expr,
        hint: Option<Ty>,
        span: Span,
    ) -> Expr {
        match op {
            BinOp::AndAnd | BinOp::OrOr => {
                let hl = self.check_expr(l, TyTable::BOOL);
                let hr = self.check_expr(r, TyTable::BOOL);
                let k = if op == BinOp::AndAnd {
                    K::And(Box::new(hl), Box::new(hr))
                } else {
                    K::Or(Box::new(hl), Box::new(hr))
                };
                Expr::new(k, TyTable::BOOL, span)
            }
            BinOp::Assign => {
                let p = self.place(l);
                self.require_mutable(&p, "assign to");
                let v = self.check_expr(r, p.ty);
                Expr::new(K::Assign(Box::new(p), Box::new(v)), TyTable::UNIT, span)
            }
            BinOp::AssignOp(a) => {
                let p = self.place(l);
                self.require_mutable(&p, "assign to");
                self.mark_used(&p);
                let v = self.check_expr(r, p.ty);
                let arith = match a {
                    ast::AssignOp::Add => BinOp::Add,
                    ast::AssignOp::Sub => BinOp::Sub,
                    ast::AssignOp::Mul => BinOp::Mul,
                    ast::AssignOp::Div => BinOp::Div,
                    ast::AssignOp::Rem => BinOp::Rem,
                    ast::AssignOp::Shl => BinOp::Shl,
                    ast::AssignOp::Shr => BinOp::Shr,
                    ast::AssignOp::And => BinOp::And,
                    ast::AssignOp::Or => BinOp::Or,
                    ast::AssignOp::Xor => BinOp::Xor,
                };
                let t = self.resolve(p.ty);
                if !self.op_applies(arith, t) {
                    self.bad_operands(op, t, span);
                }
                Expr::new(
                    K::AssignOp(arith, Box::new(p), Box::new(v)),
                    TyTable::UNIT,
                    span,
                )
            }
            _ => {
                let cmp = op.precedence() == 7;
                let (hl, hr) = self.operands(l, r, if cmp { None } else { hint });
                let t = self.resolve(hl.ty);
                if t == TyTable::ERROR || self.resolve(hr.ty) == TyTable::ERROR {
                    return err_expr(span);
                }
                if !self.op_applies(op, t) {
                    self.bad_operands(op, t, span);
                    return err_expr(span);
                }
                // Comparing `simd` vectors compares their elements pairwise.
                let ty = match (cmp, self.tys.as_simd(t)) {
                    (false, _) => t,
                    (true, None) => TyTable::BOOL,
                    (true, Some((_, n))) => self.tys.array(TyTable::BOOL, Some(n), true),
                };
                Expr::new(K::Binary(op, Box::new(hl), Box::new(hr)), ty, span)
            }
        }
    }

    /// The type of one element of `t` if it is a `simd` vector, else `t`: the type an
    /// operator applies to.
    fn lane(&self, t: Ty) -> Ty {
        match self.tys.as_simd(t) {
            Some((elem, _)) => self.resolve(elem),
            None => t,
        }
    }

    /// Whether `op` applies to values of type `t`: primitives, or `simd` vectors of them
    /// element by element.
    fn op_applies(&self, op: BinOp, t: Ty) -> bool {
        let t = self.lane(t);
        let (int, float, b) = (self.tys.is_int(t), self.tys.is_float(t), t == TyTable::BOOL);
        let ptr = matches!(self.tys.kind(t), TyKind::Ptr { .. });
        match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => int || float,
            BinOp::And | BinOp::Or | BinOp::Xor => int || b,
            BinOp::Shl | BinOp::Shr => int,
            // Pointers are equal when they address the same place.
            BinOp::Eq | BinOp::Ne => int || float || b || ptr,
            BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge => int || float,
            _ => false,
        }
    }

    fn bad_operands(&mut self, op: BinOp, t: Ty, span: Span) {
        let s = self.ty_str(t);
        let d = self.error(
            span,
            format!("cannot apply `{}` to operands of type `{s}`", op.symbol()),
        );
        let orders = matches!(op, BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge);
        let d = if orders && matches!(self.tys.kind(t), TyKind::Ptr { .. }) {
            d.with_note(
                "pointers compare only with `==` and `!=`: order the indices they were made from",
            )
        } else {
            d
        };
        self.emit(d);
    }

    fn cast(&mut self, h: Expr, to: Ty, span: Span) -> Expr {
        let from = self.resolve(h.ty);
        // Numbers and `bool` convert into each other, pointers into pointers and integers.
        let scalar = |c: &Self, a: Ty, b: Ty| {
            let ptr = |t: Ty| matches!(c.tys.kind(t), TyKind::Ptr { .. });
            let ptr_or_int = |t: Ty| ptr(t) || c.tys.is_int(t);
            (c.tys.as_prim(a).is_some() && c.tys.as_prim(b).is_some())
                || (ptr_or_int(a) && ptr_or_int(b) && (ptr(a) || ptr(b)))
        };
        if from == to && !self.tys.has_vars(to) {
            let s = self.ty_str(to);
            let d = Diagnostic::warning(span, "useless cast")
                .with_label_message(format!("this is already of type `{s}`"));
            self.emit(d);
        }
        if from == to || from == TyTable::ERROR || to == TyTable::ERROR {
            return Expr { ty: to, ..h };
        }
        if scalar(self, from, to) {
            return Expr::new(K::Cast(Box::new(h)), to, span);
        }
        // `simd` vectors of one length convert element by element.
        if let (Some((a, m)), Some((b, n))) = (self.tys.as_simd(from), self.tys.as_simd(to)) {
            if m == n && scalar(self, self.resolve(a), self.resolve(b)) {
                return Expr::new(K::Cast(Box::new(h)), to, span);
            }
        }
        if self.subtype(from, to).is_some() {
            return self.coerce(h, to);
        }
        let (a, b) = (self.ty_str(from), self.ty_str(to));
        let d = self
            .error(span, format!("invalid cast from `{a}` to `{b}`"))
            .with_note("`as` converts between numbers and `bool`, between pointers and integers, and between `simd` vectors of one length");
        self.emit(d);
        err_expr(span)
    }

    /// A tuple-like struct or a variant with a payload used as a value: the function that
    /// builds it, `|a, b| S(a, b)`.
    fn constructor_fn(&mut self, r: ItemRef, p: &ast::Path, hint: Option<Ty>, span: Span) -> Expr {
        let hint = hint.and_then(|h| match self.tys.kind(self.resolve(h)) {
            TyKind::Fn { codom, .. } => Some(*codom),
            _ => None,
        });
        let (built, variant) = match r {
            ItemRef::Variant(e, i) => (ItemRef::Enum(e), Some(i)),
            _ => (r, None),
        };
        let ty = self.constructor_type(built, p, hint, span);
        let fts: Vec<Ty> = match (built, variant, self.tys.kind(ty).clone()) {
            (ItemRef::Struct(d), None, TyKind::Struct(_, targs)) => {
                let fields = self.struct_info(d).fields.clone();
                fields
                    .iter()
                    .map(|(_, t)| self.tys.subst(*t, &targs))
                    .collect()
            }
            (ItemRef::Enum(e), Some(i), TyKind::Enum(_, targs)) => {
                let payload = self.enum_info(e).variants[i as usize].1;
                let payload = payload.expect("called for variants with a payload");
                vec![self.tys.subst(payload, &targs)]
            }
            _ => return err_expr(span),
        };
        let mut binds = Vec::new();
        let mut uses = Vec::new();
        for (i, &t) in fts.iter().enumerate() {
            let v = self.hidden_var(&format!("field {i}"), t, span);
            binds.push(hir::Pat {
                kind: hir::PatKind::Bind(v, None),
                ty: t,
                span,
            });
            uses.push(Expr::new(K::Var(v), t, span));
        }
        let (param, dom) = if binds.len() == 1 {
            (binds.remove(0), fts[0])
        } else {
            let dom = self.tys.tuple(fts);
            let param = hir::Pat {
                kind: hir::PatKind::Tuple(binds),
                ty: dom,
                span,
            };
            (param, dom)
        };
        let body = match variant {
            Some(i) => K::Variant(i, Some(Box::new(uses.remove(0)))),
            None => K::Struct(uses),
        };
        self.next_return += 1;
        let lambda = hir::Lambda {
            param,
            dom,
            codom: ty,
            body: Expr::new(body, ty, span),
            filter: None,
            continue_of: None,
            returns_of: Some(self.next_return),
        };
        let fty = self.tys.func(dom, ty);
        Expr::new(K::Lambda(Box::new(lambda)), fty, span)
    }

    fn struct_lit(
        &mut self,
        base: &'a ast::Expr,
        fields: &'a [(ast::Ident, ast::Expr)],
        hint: Option<Ty>,
        span: Span,
    ) -> Expr {
        let A::Path(p) = &base.kind else {
            self.err(base.span, "expected a struct name");
            return err_expr(span);
        };
        // `s { x = 1 }` on a variable `s` is an update.
        if let [seg] = p.segments.as_slice() {
            if seg.type_args.is_empty()
                && matches!(self.lookup(&seg.ident.name), Some(Local::Var(_)))
            {
                return self.struct_update(base, fields, hint, span);
            }
        }
        let Some(r) = self.resolve_path_item(p) else {
            return err_expr(span);
        };
        let d = match r {
            ItemRef::Struct(d) => d,
            ItemRef::Variant(e, i) => match self.record_variant(e, i) {
                Some(sd) => {
                    let ety = self.constructor_type(ItemRef::Enum(e), p, hint, p.span);
                    let TyKind::Enum(_, targs) = self.tys.kind(ety).clone() else {
                        return err_expr(span);
                    };
                    let pty = self.tys.intern(TyKind::Struct(sd, targs.clone()));
                    let values = self.record_values(sd, &targs, fields, span);
                    let payload = Expr::new(K::Struct(values), pty, span);
                    return Expr::new(K::Variant(i, Some(Box::new(payload))), ety, span);
                }
                None => {
                    let name = self.enum_info(e).variants[i as usize].0.clone();
                    self.err(p.span, format!("variant `{name}` has no named fields"));
                    return err_expr(span);
                }
            },
            _ => {
                let d = self.error(p.span, "expected a struct").with_note(
                    "only structs and record variants are built with `Name { field = value }`",
                );
                self.emit(d);
                return err_expr(span);
            }
        };
        let info = self.struct_info(d);
        if info.shape != ast::StructShape::Record {
            let name = info.name.clone();
            let how = if info.shape == ast::StructShape::Unit {
                format!("its value is written `{name}`")
            } else {
                format!("build one with `{name}(...)`")
            };
            let d = self
                .error(p.span, format!("`{name}` has no named fields"))
                .with_note(how);
            self.emit(d);
            return err_expr(span);
        }
        let sty = self.constructor_type(r, p, hint, p.span);
        let TyKind::Struct(_, targs) = self.tys.kind(sty).clone() else {
            return err_expr(span);
        };
        let out = self.record_values(d, &targs, fields, span);
        Expr::new(K::Struct(out), sty, span)
    }

    /// The struct a record variant's fields form, when variant `i` of `e` is one.
    pub(super) fn record_variant(&mut self, e: DeclId, i: u32) -> Option<DeclId> {
        let t = self.enum_info(e).variants[i as usize].1?;
        match *self.tys.kind(t) {
            TyKind::Struct(sd, _) if self.structs[sd as usize].variant_of == Some((e, i)) => {
                Some(sd)
            }
            _ => None,
        }
    }

    /// The field values of `d { name = value, ... }` (defaults where left out), in order.
    fn record_values(
        &mut self,
        d: DeclId,
        targs: &[Ty],
        fields: &'a [(ast::Ident, ast::Expr)],
        span: Span,
    ) -> Vec<Expr> {
        let info = self.struct_info(d).clone();
        let mut values: Vec<Option<Expr>> = vec![None; info.fields.len()];
        for (name, x) in fields {
            match info.field(&name.name) {
                Some(i) => {
                    let ft = self.tys.subst(info.fields[i].1, targs);
                    let h = self.check_expr(x, ft);
                    if values[i].is_some() {
                        self.err(name.span, format!("field `{}` is given twice", name.name));
                    }
                    values[i] = Some(h);
                }
                None => {
                    self.unknown_field(name, &info);
                    self.expr(x, None);
                }
            }
        }
        let mut missing = Vec::new();
        let mut out = Vec::new();
        for (i, v) in values.into_iter().enumerate() {
            match v.or_else(|| info.defaults[i].clone()) {
                Some(h) => out.push(h),
                None => {
                    missing.push(format!("`{}`", info.fields[i].0));
                    out.push(err_expr(span));
                }
            }
        }
        if !missing.is_empty() {
            self.err(
                span,
                format!(
                    "missing field{} {} in `{}`",
                    plural(missing.len()),
                    missing.join(", "),
                    info.name
                ),
            );
        }
        out
    }

    fn struct_update(
        &mut self,
        base: &'a ast::Expr,
        fields: &'a [(ast::Ident, ast::Expr)],
        hint: Option<Ty>,
        span: Span,
    ) -> Expr {
        let b = self.expr(base, hint);
        let t = self.resolve(b.ty);
        let TyKind::Struct(d, targs) = self.tys.kind(t).clone() else {
            if t != TyTable::ERROR {
                let s = self.ty_str(t);
                self.err(base.span, format!("`.{{ }}` updates a struct, found `{s}`"));
            }
            return err_expr(span);
        };
        let info = self.struct_info(d).clone();
        let mut out = Vec::new();
        for (name, x) in fields {
            match info.field(&name.name) {
                Some(i) => {
                    let ft = self.tys.subst(info.fields[i].1, &targs);
                    out.push((i as u32, self.check_expr(x, ft)));
                }
                None => self.unknown_field(name, &info),
            }
        }
        Expr::new(K::Update(Box::new(b), out), t, span)
    }

    #[allow(clippy::too_many_arguments)]
    fn closure(
        &mut self,
        filter: Option<&'a ast::Filter>,
        param: &ast::Pattern,
        ret: Option<&ast::Type>,
        body: &'a ast::Expr,
        hint: Option<Ty>,
        span: Span,
        continue_of: Option<LoopId>,
    ) -> Expr {
        let (hdom, hcodom) = match hint.map(|h| self.tys.kind(h).clone()) {
            Some(TyKind::Fn { dom, codom }) => (Some(dom), Some(codom)),
            _ => (None, None),
        };
        let params = match &param.kind {
            ast::PatternKind::Tuple(ps) => ps.as_slice(),
            _ => std::slice::from_ref(param),
        };
        let dom = match hdom {
            Some(d) => d,
            None => {
                let ts: Vec<Ty> = params.iter().map(|_| self.fresh_var()).collect();
                if ts.len() == 1 {
                    ts[0]
                } else {
                    self.tys.tuple(ts)
                }
            }
        };
        let codom = match ret {
            Some(t) => self.resolve_type(t),
            None => match hcodom {
                Some(c) => c,
                None => self.fresh_var(),
            },
        };
        self.cx.scopes.push(FxHashMap::default());
        let hp = self.fn_params(param, dom);
        let filter = filter.map(|f| self.check_filter(f));
        // As in Artic, `return` in a closure returns from the closure; in the body of a
        // `for` loop it returns from the enclosing function.
        let returns_of = continue_of.is_none().then(|| {
            self.next_return += 1;
            self.next_return
        });
        if let Some(r) = returns_of {
            let inferred = (ret.is_none() && hcodom.is_none()).then_some((span, "closure"));
            self.cx.fns.push((r, codom, inferred));
        }
        let b = self.expr(body, Some(codom));
        if returns_of.is_some() {
            self.cx.fns.pop();
        }
        let b = if matches!(self.tys.kind(self.resolve(codom)), TyKind::Var(_))
            && self.unify(codom, b.ty)
        {
            b
        } else {
            self.coerce(b, codom)
        };
        self.cx.scopes.pop();
        let ty = self.tys.func(dom, codom);
        let lambda = hir::Lambda {
            param: hp,
            dom,
            codom,
            body: b,
            filter,
            continue_of,
            returns_of,
        };
        Expr::new(K::Lambda(Box::new(lambda)), ty, span)
    }

    fn for_loop(
        &mut self,
        pats: &[ast::Pattern],
        call: &'a ast::Expr,
        body: &'a ast::Expr,
        span: Span,
    ) -> Expr {
        let A::Call { callee, args } = &call.kind else {
            let d = self
                .error(
                    call.span,
                    "`for` loops iterate over a call: `for x in gen(args) { ... }`",
                )
                .with_note("the loop is `gen(|x| { ... })(args)`");
            self.emit(d);
            return err_expr(span);
        };
        let gen = self.expr(callee, None);
        let gty = self.resolve(gen.ty);
        let TyKind::Fn {
            dom: body_ty,
            codom: after,
        } = self.tys.kind(gty).clone()
        else {
            if gty != TyTable::ERROR {
                let s = self.ty_str(gty);
                self.err(
                    callee.span,
                    format!("`for` needs a function that takes the loop body, found `{s}`"),
                );
            }
            return err_expr(span);
        };
        // `for gen(args) { }`: the body takes nothing, so the generator must pass nothing.
        if pats.is_empty() {
            let takes = match self.tys.kind(self.resolve(body_ty)).clone() {
                TyKind::Fn { dom, .. } => self.resolve(dom),
                _ => TyTable::UNIT,
            };
            if takes != TyTable::UNIT && takes != TyTable::ERROR {
                let s = self.ty_str(takes);
                let d = self
                    .error(
                        callee.span,
                        format!(
                            "this generator passes `{s}` to the loop body, which names nothing"
                        ),
                    )
                    .with_note("name what it passes: `for x in gen(args) { ... }`");
                self.emit(d);
                return err_expr(span);
            }
        }
        let id = self.new_loop();
        self.cx.loops.push(id);
        // The body's parameters (none: `for gen(args) { }`).
        let closure_param = ast::Pattern {
            kind: ast::PatternKind::Tuple(pats.to_vec()),
            span: match (pats.first(), pats.last()) {
                (Some(a), Some(b)) => a.span.to(b.span),
                _ => call.span,
            },
        };
        let lambda = self.closure(
            None,
            &closure_param,
            None,
            body,
            Some(body_ty),
            body.span,
            Some(id),
        );
        self.cx.loops.pop();
        let lambda = self.coerce(lambda, body_ty);
        let after = self.resolve(after);
        let inner = Expr::new(
            K::Call {
                callee: Box::new(gen),
                arg: Box::new(lambda),
                run: false,
            },
            after,
            call.span,
        );
        let TyKind::Fn {
            dom: adom,
            codom: result,
        } = self.tys.kind(after).clone()
        else {
            if after != TyTable::ERROR {
                let s = self.ty_str(after);
                self.err(callee.span, format!("`for` needs a generator that returns a function of the bounds, found one returning `{s}`"));
            }
            return err_expr(span);
        };
        let a = self.args(args, adom, call.span);
        Expr::new(
            K::For {
                id,
                inner: Box::new(inner),
                args: Box::new(a),
            },
            result,
            span,
        )
    }

    fn block(&mut self, stmts: &'a [ast::Stmt], hint: Option<Ty>, span: Span) -> Expr {
        self.cx.scopes.push(FxHashMap::default());
        let items = stmts.iter().filter_map(|s| match s {
            ast::Stmt::Item(i) => Some(i),
            _ => None,
        });
        let first_fn = self.fns.len();
        self.register_block_items(items);
        // Nested functions: signatures now (they may be called before their declaration).
        for f in first_fn..self.fns.len() {
            if self.fns[f].nested && self.fn_src[f].state == SigState::Pending {
                self.with_own_type_params(f as FnId, |c| c.resolve_fn_sig(f as FnId));
            }
        }
        let mut out = Vec::new();
        let mut value = None;
        let mut diverges = false;
        let mut warned_unreachable = false;
        for (i, s) in stmts.iter().enumerate() {
            let last = i + 1 == stmts.len();
            let stmt_span = match s {
                ast::Stmt::Let { span, .. } => Some(*span),
                ast::Stmt::Expr { expr, .. } => Some(expr.span),
                ast::Stmt::Item(_) => None,
            };
            if let (true, false, Some(at)) = (diverges, warned_unreachable, stmt_span) {
                // An error, as in Artic.
                warned_unreachable = true;
                let d = Diagnostic::error_at(Some(at), "unreachable code")
                    .with_label_message("never runs")
                    .with_note("the statement before it never finishes (it jumps or stops): remove what follows it");
                self.emit(d);
            }
            match s {
                ast::Stmt::Let { pat, init, span } => {
                    let declared = match &pat.kind {
                        ast::PatternKind::Typed { ty, .. } => Some(self.resolve_type(ty)),
                        _ => None,
                    };
                    // A mutable variable initialized with a string holds its own copy of the
                    // bytes, a `[u8 * N]` as in Artic (whose strings are arrays), which it may
                    // change; `&x` is then a `&[u8]` again.
                    let string_copy = match (&pat.kind, init.as_ref().map(|e| &e.kind)) {
                        (
                            ast::PatternKind::Ident { mutable: true, .. },
                            Some(A::Lit(Literal::Str(s))),
                        ) => Some(self.tys.array(TyTable::U8, Some(s.len() as u64 + 1), false)),
                        _ => None,
                    };
                    let h = init.as_ref().map(|e| match declared.or(string_copy) {
                        Some(t) => self.check_expr(e, t),
                        None => self.expr(e, None),
                    });
                    let ty = declared.or(h.as_ref().map(|h| h.ty)).unwrap_or_else(|| {
                        self.err(
                            *span,
                            "a `let` without initializer needs a type: `let mut x: T;`",
                        );
                        TyTable::ERROR
                    });
                    if h.is_none()
                        && !matches!(&pat.kind, ast::PatternKind::Typed { pat: Some(p), .. } if matches!(p.kind, ast::PatternKind::Ident { mutable: true, .. }))
                        && declared.is_some()
                    {
                        self.err(*span, "a `let` without initializer must declare one mutable variable: `let mut x: T;`");
                    }
                    if h.as_ref().is_some_and(|h| self.never_returns(h)) {
                        diverges = true;
                    }
                    let bytes = self.value_bytes(ty);
                    if bytes > MAX_LOCAL_BYTES {
                        let s = self.ty_str(ty);
                        let d = self
                            .error(pat.span, format!("this variable of type `{s}` takes {bytes} bytes, more than a thread's stack holds (at most {MAX_LOCAL_BYTES} bytes in one variable)"))
                            .with_note("allocate large arrays as buffers: `alloc_cpu(n * size)`");
                        self.emit(d);
                    }
                    let p = self.pattern(pat, ty, true);
                    out.push(hir::Stmt::Let(p, h));
                }
                ast::Stmt::Item(item) => {
                    if let ast::ItemKind::Fn(decl) | ast::ItemKind::Implicit(decl) = &item.kind {
                        // Check the body here, where the variables declared so far are visible.
                        let f = (first_fn..self.fns.len())
                            .find(|&f| std::ptr::eq(self.fn_src[f].decl, decl));
                        if let Some(f) = f {
                            self.with_own_type_params(f as FnId, |c| {
                                let saved = std::mem::take(&mut c.cx.loops);
                                c.check_fn_body(f as FnId);
                                c.cx.loops = saved;
                            });
                        }
                    }
                }
                ast::Stmt::Expr { expr, semi } => {
                    if last && !semi {
                        value = Some(self.expr(expr, hint));
                    } else {
                        let h = self.expr(expr, None);
                        if matches!(h.kind, K::Break(_) | K::Continue(_) | K::Return(_)) {
                            let d = Diagnostic::warning(
                                h.span,
                                "this does nothing: `break`, `continue` and `return` are functions",
                            )
                            .with_note("call it to jump: `break()`, `continue()`, `return(value)`");
                            self.emit(d);
                        }
                        if self.never_returns(&h) {
                            diverges = true;
                        }
                        out.push(hir::Stmt::Expr(h));
                    }
                }
            }
        }
        self.cx.scopes.pop();
        let value = value.unwrap_or_else(|| {
            let ty = if diverges {
                TyTable::NORET
            } else {
                TyTable::UNIT
            };
            Expr::new(K::Tuple(Vec::new()), ty, span)
        });
        let ty = value.ty;
        if out.is_empty() {
            // A block of one expression is that expression, at its own place (a call in it
            // that names its place, `pe_error`, names the call, not the block's `{`).
            return value;
        }
        Expr::new(K::Block(out, Box::new(value)), ty, span)
    }

    /// Whether `h` never finishes: its type is `!`, also where a coercion made it another
    /// (`return() : ()`, as Artic sees it).
    fn never_returns(&mut self, h: &Expr) -> bool {
        let mut h = h;
        while let K::Cast(inner) = &h.kind {
            h = inner;
        }
        self.resolve(h.ty) == TyTable::NORET
    }

    /// Runs `f` with the type parameters of nested function `f` in scope.
    fn with_own_type_params<R>(&mut self, f: FnId, g: impl FnOnce(&mut Self) -> R) -> R {
        let info = &self.fns[f as usize];
        let outer = info.outer_params as usize;
        let own: Vec<(Box<str>, Ty)> = info.type_params[outer..]
            .iter()
            .enumerate()
            .map(|(i, n)| {
                (
                    n.clone(),
                    self.tys.intern(TyKind::Param((outer + i) as u32)),
                )
            })
            .collect();
        let n = own.len();
        self.cx.type_params.extend(own);
        let r = g(self);
        let len = self.cx.type_params.len();
        self.cx.type_params.truncate(len - n);
        r
    }
}
