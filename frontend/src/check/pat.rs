//! Patterns, and the final pass that replaces inference variables in a checked body.

use super::*;
use crate::ast::PatternKind;
use crate::hir::{Pat, PatKind};
use crate::token::Literal;

impl<'a> Checker<'a> {
    /// Checks pattern `p` against type `ty`, binding its variables in the innermost scope.
    /// `irrefutable` patterns (let, parameters) may not test anything.
    pub(super) fn pattern(&mut self, p: &ast::Pattern, ty: Ty, irrefutable: bool) -> Pat {
        let kind = self.pattern_kind(p, ty, irrefutable);
        let kind = match kind {
            Some(k) => k,
            None => PatKind::Error,
        };
        Pat {
            kind,
            ty,
            span: p.span,
        }
    }

    fn pattern_kind(&mut self, p: &ast::Pattern, ty: Ty, irrefutable: bool) -> Option<PatKind> {
        let rty = self.resolve(ty);
        Some(match &p.kind {
            PatternKind::Error => PatKind::Error,
            PatternKind::Implicit(q) => {
                let h = self.pattern(q, ty, irrefutable);
                // The parameter is the implicit value of its type in the function's body.
                if let PatKind::Bind(v, _) = &h.kind {
                    self.define_implicit(Local::Var(*v));
                }
                return Some(h.kind);
            }
            PatternKind::Typed { pat, ty: written } => {
                let t = self.resolve_type(written);
                if !self.unify(t, ty) {
                    let (a, b) = (self.ty_str(ty), self.ty_str(t));
                    let d = self
                        .error(written.span, "mismatched types")
                        .with_label_message(format!("expected `{a}`, found `{b}`"));
                    self.emit(d);
                }
                match pat {
                    Some(q) => return Some(self.pattern(q, t, irrefutable).kind),
                    None => PatKind::Wild,
                }
            }
            PatternKind::Ident { name, mutable, sub } => {
                if !*mutable && sub.is_none() {
                    if &*name.name == "_" {
                        return Some(PatKind::Wild);
                    }
                    // A nullary variant in scope (through `use`) is a variant pattern.
                    if let Some(Local::Item(r)) = self.lookup(&name.name) {
                        if let Some(ItemRef::Variant(e, i)) = self.deref_use(r, name.span) {
                            return self.variant_pattern(p, e, i, None, ty, irrefutable);
                        }
                    }
                }
                let sub = sub
                    .as_ref()
                    .map(|s| Box::new(self.pattern(s, ty, irrefutable)));
                let v = self.new_var(name, ty, *mutable);
                PatKind::Bind(v, sub)
            }
            PatternKind::Lit(l, negated) => {
                if irrefutable {
                    self.err(p.span, "refutable pattern: a literal may not match");
                }
                let (lit, lty) = match l {
                    Literal::Int(v) => {
                        let t = if self.tys.is_num(rty) {
                            rty
                        } else {
                            TyTable::I32
                        };
                        self.check_int_literal(t, *v, *negated, p.span);
                        let lit = match int_or_float_lit(&self.tys, t, *v) {
                            hir::Lit::Int(v) if *negated => hir::Lit::Int(v.wrapping_neg()),
                            hir::Lit::Float(f) if *negated => hir::Lit::Float(-f),
                            lit => lit,
                        };
                        (lit, t)
                    }
                    Literal::Float(f) => {
                        let t = if self.tys.is_float(rty) {
                            rty
                        } else {
                            TyTable::F64
                        };
                        (hir::Lit::Float(if *negated { -f } else { *f }), t)
                    }
                    Literal::Bool(b) => (hir::Lit::Bool(*b), TyTable::BOOL),
                    Literal::Char(c) => (hir::Lit::Int(*c as u64), TyTable::U8),
                    Literal::Str(s) => {
                        // A string matches an array of bytes of its length (with the
                        // terminating zero), byte by byte.
                        let fits = matches!(self.tys.kind(rty), TyKind::Array { elem, len: Some(n), simd: false }
                            if *elem == TyTable::U8 && *n == s.len() as u64 + 1);
                        if !fits {
                            let t = self.ty_str(ty);
                            self.err(p.span, format!("a string pattern of {} bytes (with the final zero) cannot match a value of type `{t}`", s.len() + 1));
                            return None;
                        }
                        if irrefutable {
                            self.err(p.span, "refutable pattern: a literal may not match");
                        }
                        let bytes = s.iter().copied().chain(std::iter::once(0));
                        return Some(PatKind::Array(
                            bytes
                                .map(|b| Pat {
                                    kind: PatKind::Lit(hir::Lit::Int(b as u64)),
                                    ty: TyTable::U8,
                                    span: p.span,
                                })
                                .collect(),
                        ));
                    }
                };
                if !self.unify(lty, ty) {
                    let (a, b) = (self.ty_str(ty), self.ty_str(lty));
                    let d = self
                        .error(p.span, "mismatched types")
                        .with_label_message(format!("expected `{a}`, found `{b}`"));
                    self.emit(d);
                } else if self.tys.is_float(self.resolve(lty)) {
                    let d = self
                        .error(
                            p.span,
                            "floating-point values cannot be matched by a literal",
                        )
                        .with_note("compare with `==` in an `if` instead");
                    self.emit(d);
                }
                PatKind::Lit(lit)
            }
            PatternKind::Tuple(ps) => {
                let elems: Vec<Ty> = match self.tys.kind(rty) {
                    TyKind::Tuple(ts) if ts.len() == ps.len() => ts.clone(),
                    TyKind::Var(_) => {
                        let ts: Vec<Ty> = ps.iter().map(|_| self.fresh_var()).collect();
                        let t = self.tys.tuple(ts.clone());
                        self.unify(rty, t);
                        ts
                    }
                    TyKind::Error => vec![TyTable::ERROR; ps.len()],
                    _ => {
                        let s = self.ty_str(ty);
                        let d = self
                            .error(p.span, "mismatched types")
                            .with_label_message(format!(
                                "expected `{s}`, found a tuple of {} elements",
                                ps.len()
                            ));
                        self.emit(d);
                        // Bind the names anyway, so that their uses are not errors too.
                        vec![TyTable::ERROR; ps.len()]
                    }
                };
                PatKind::Tuple(
                    ps.iter()
                        .zip(elems)
                        .map(|(q, t)| self.pattern(q, t, irrefutable))
                        .collect(),
                )
            }
            PatternKind::Array { elems, simd } => {
                let elem = match self.tys.kind(rty) {
                    TyKind::Array {
                        elem,
                        len: Some(n),
                        simd: s,
                    } if *n == elems.len() as u64 && s == simd => *elem,
                    TyKind::Error => TyTable::ERROR,
                    _ => {
                        let s = self.ty_str(ty);
                        let what = if *simd { "a `simd` vector" } else { "an array" };
                        self.err(
                            p.span,
                            format!("expected `{s}`, found {what} of {} elements", elems.len()),
                        );
                        return None;
                    }
                };
                PatKind::Array(
                    elems
                        .iter()
                        .map(|q| self.pattern(q, elem, irrefutable))
                        .collect(),
                )
            }
            PatternKind::Struct { path, fields, etc } => {
                let r = self.resolve_path_item(path)?;
                match r {
                    ItemRef::Struct(d) => {
                        let sty = self.type_of_item(r, Vec::new(), path.span, true);
                        if !self.pattern_type_is(sty, ty, path.span) {
                            return None;
                        }
                        let TyKind::Struct(_, args) = self.tys.kind(sty).clone() else {
                            return None;
                        };
                        self.field_patterns(p, d, &args, fields, *etc, irrefutable)
                    }
                    ItemRef::Variant(e, i) => {
                        let Some(sd) = self.record_variant(e, i) else {
                            let name = self.enum_info(e).variants[i as usize].0.clone();
                            self.err(path.span, format!("variant `{name}` has no named fields"));
                            return None;
                        };
                        let args = self.variant_pattern_args(p, e, ty, irrefutable)?;
                        let kind = self.field_patterns(p, sd, &args, fields, *etc, irrefutable);
                        let sub = Pat {
                            kind,
                            ty: self.tys.intern(TyKind::Struct(sd, args)),
                            span: p.span,
                        };
                        PatKind::Variant(i, Some(Box::new(sub)))
                    }
                    _ => {
                        self.err(path.span, "expected a struct or a record variant");
                        return None;
                    }
                }
            }
            PatternKind::Enum { path, arg } => {
                let r = self.resolve_path_item(path)?;
                match r {
                    ItemRef::Variant(e, i) => {
                        return self.variant_pattern(p, e, i, arg.as_deref(), ty, irrefutable)
                    }
                    ItemRef::Struct(d) if self.struct_info(d).shape != ast::StructShape::Record => {
                        let sty = self.type_of_item(r, Vec::new(), path.span, true);
                        if !self.pattern_type_is(sty, ty, path.span) {
                            return None;
                        }
                        let TyKind::Struct(_, args) = self.tys.kind(sty).clone() else {
                            return None;
                        };
                        let info = self.struct_info(d).clone();
                        let subs: Vec<&ast::Pattern> = match arg.as_deref() {
                            Some(ast::Pattern {
                                kind: PatternKind::Tuple(ps),
                                ..
                            }) => ps.iter().collect(),
                            Some(q) => vec![q],
                            None => Vec::new(),
                        };
                        if subs.len() != info.fields.len() {
                            self.err(
                                p.span,
                                format!(
                                    "`{}` has {} fields, the pattern has {}",
                                    info.name,
                                    info.fields.len(),
                                    subs.len()
                                ),
                            );
                            return None;
                        }
                        let mut out = Vec::new();
                        for (i, q) in subs.into_iter().enumerate() {
                            let ft = self.tys.subst(info.fields[i].1, &args);
                            out.push((i as u32, self.pattern(q, ft, irrefutable)));
                        }
                        PatKind::Struct(out)
                    }
                    _ => {
                        self.err(path.span, "expected an enum variant or a tuple-like struct");
                        return None;
                    }
                }
            }
        })
    }

    /// The fields of a struct pattern `S { x = p, ... }` against struct `d` instantiated
    /// with `args`.
    fn field_patterns(
        &mut self,
        p: &ast::Pattern,
        d: DeclId,
        args: &[Ty],
        fields: &[(ast::Ident, ast::Pattern)],
        etc: bool,
        irrefutable: bool,
    ) -> PatKind {
        let info = self.struct_info(d).clone();
        let mut out = Vec::new();
        for (name, q) in fields {
            match info.field(&name.name) {
                Some(i) => {
                    let ft = self.tys.subst(info.fields[i].1, args);
                    out.push((i as u32, self.pattern(q, ft, irrefutable)));
                }
                None => self.unknown_field(name, &info),
            }
        }
        if !etc && out.len() < info.fields.len() {
            self.err(
                p.span,
                format!(
                    "pattern does not mention all fields of `{}`; add `...`",
                    info.name
                ),
            );
        }
        PatKind::Struct(out)
    }

    /// Checks that a pattern of a variant of `e` may match a value of type `ty`; the type
    /// arguments of the enum.
    fn variant_pattern_args(
        &mut self,
        p: &ast::Pattern,
        e: DeclId,
        ty: Ty,
        irrefutable: bool,
    ) -> Option<Vec<Ty>> {
        let ety = self.type_of_item(ItemRef::Enum(e), Vec::new(), p.span, true);
        if !self.pattern_type_is(ety, ty, p.span) {
            return None;
        }
        if irrefutable && self.enum_info(e).variants.len() > 1 {
            self.err(p.span, "refutable pattern: other variants would not match");
        }
        match self.tys.kind(ety) {
            TyKind::Enum(_, args) => Some(args.clone()),
            _ => None,
        }
    }

    fn variant_pattern(
        &mut self,
        p: &ast::Pattern,
        e: DeclId,
        i: u32,
        arg: Option<&ast::Pattern>,
        ty: Ty,
        irrefutable: bool,
    ) -> Option<PatKind> {
        let args = self.variant_pattern_args(p, e, ty, irrefutable)?;
        let (name, payload) = self.enum_info(e).variants[i as usize].clone();
        if arg.is_some() && self.record_variant(e, i).is_some() {
            self.err(
                p.span,
                format!("variant `{name}` has named fields; match it with `{name} {{ ... }}`"),
            );
            return None;
        }
        let payload = payload.map(|t| self.tys.subst(t, &args));
        let sub = match (payload, arg) {
            (Some(t), Some(q)) => Some(Box::new(self.pattern(q, t, irrefutable))),
            (None, None) => None,
            (Some(_), None) => {
                self.err(
                    p.span,
                    format!("variant `{name}` carries a value; match it with `{name}(..)`"),
                );
                return None;
            }
            (None, Some(q)) => {
                self.err(q.span, format!("variant `{name}` carries no value"));
                return None;
            }
        };
        Some(PatKind::Variant(i, sub))
    }

    /// Whether a pattern of type `found` may match a value of type `ty`; reports it if not.
    fn pattern_type_is(&mut self, found: Ty, ty: Ty, span: Span) -> bool {
        if self.unify(found, ty) {
            return true;
        }
        let (a, b) = (self.ty_str(ty), self.ty_str(found));
        self.err(
            span,
            format!("mismatched types: expected `{a}`, found `{b}`"),
        );
        false
    }

    pub(super) fn unknown_field(&mut self, name: &ast::Ident, info: &StructInfo) {
        let mut d = self
            .error(
                name.span,
                format!("struct `{}` has no field `{}`", info.name, name.name),
            )
            .with_label_message("unknown field");
        if let Some(s) = closest(&name.name, info.fields.iter().map(|(n, _)| &**n)) {
            d = d.with_note(format!("did you mean `{s}`?"));
        }
        self.emit(d);
    }

    // ----- zonking -----------------------------------------------------------------------

    /// Replaces the inference variables of a checked body by their bindings; reports each
    /// expression whose type stays unknown.
    pub(super) fn zonk_lambda(&mut self, l: &mut hir::Lambda) {
        l.dom = self.zonk(l.dom);
        l.codom = self.zonk(l.codom);
        self.zonk_pat(&mut l.param);
        if let Some(Some(f)) = &mut l.filter {
            self.zonk_expr(f);
        }
        self.zonk_expr(&mut l.body);
    }

    fn zonk_ty(&mut self, t: &mut Ty, span: Span) {
        *t = self.zonk(*t);
        if self.tys.has_vars(*t) {
            let d = self
                .error(span, "cannot infer the type of this expression")
                .with_note("add a type annotation");
            self.emit(d);
            *t = TyTable::ERROR;
        }
    }

    fn zonk_pat(&mut self, p: &mut Pat) {
        self.zonk_ty(&mut p.ty, p.span);
        match &mut p.kind {
            PatKind::Bind(v, sub) => {
                let span = self.vars[*v as usize].span;
                let mut t = self.vars[*v as usize].ty;
                self.zonk_ty(&mut t, span);
                self.vars[*v as usize].ty = t;
                if let Some(s) = sub {
                    self.zonk_pat(s);
                }
            }
            PatKind::Tuple(ps) | PatKind::Array(ps) => ps.iter_mut().for_each(|q| self.zonk_pat(q)),
            PatKind::Struct(fs) => fs.iter_mut().for_each(|(_, q)| self.zonk_pat(q)),
            PatKind::Variant(_, Some(q)) => self.zonk_pat(q),
            _ => {}
        }
    }

    pub(super) fn zonk_expr(&mut self, e: &mut hir::Expr) {
        use hir::ExprKind as K;
        if matches!(e.kind, K::Error) {
            e.ty = TyTable::ERROR;
            return;
        }
        self.zonk_ty(&mut e.ty, e.span);
        match &mut e.kind {
            K::Fn(_, args) => {
                for a in args.iter_mut() {
                    self.zonk_ty(a, e.span);
                }
            }
            K::Lit(_)
            | K::Str(_)
            | K::Var(_)
            | K::Static(_)
            | K::Break(_)
            | K::Continue(_)
            | K::Return(_)
            | K::Error => {}
            K::Variant(_, x) => {
                if let Some(x) = x {
                    self.zonk_expr(x)
                }
            }
            K::Tuple(xs) | K::Array(xs) | K::Struct(xs) => {
                xs.iter_mut().for_each(|x| self.zonk_expr(x))
            }
            K::Repeat(x, _)
            | K::Field(x, _)
            | K::Deref(x)
            | K::AddrOf(x)
            | K::Unary(_, x)
            | K::Cast(x)
            | K::Known(x)
            | K::Halt(x)
            | K::IncDec(x, _, _) => self.zonk_expr(x),
            K::Update(b, fs) => {
                self.zonk_expr(b);
                fs.iter_mut().for_each(|(_, x)| self.zonk_expr(x));
            }
            K::Block(ss, x) => {
                for s in ss.iter_mut() {
                    match s {
                        hir::Stmt::Let(p, i) => {
                            self.zonk_pat(p);
                            if let Some(i) = i {
                                self.zonk_expr(i);
                            }
                        }
                        hir::Stmt::Expr(x) => self.zonk_expr(x),
                    }
                }
                self.zonk_expr(x);
            }
            K::Lambda(l) => self.zonk_lambda(l),
            K::Call { callee, arg, .. } => {
                self.zonk_expr(callee);
                self.zonk_expr(arg);
            }
            K::Index(a, b)
            | K::Binary(_, a, b)
            | K::And(a, b)
            | K::Or(a, b)
            | K::Assign(a, b)
            | K::AssignOp(_, a, b)
            | K::While(_, a, b) => {
                self.zonk_expr(a);
                self.zonk_expr(b);
            }
            K::For { inner, args, .. } => {
                self.zonk_expr(inner);
                self.zonk_expr(args);
            }
            K::If(c, t, f) => {
                self.zonk_expr(c);
                self.zonk_expr(t);
                if let Some(f) = f {
                    self.zonk_expr(f);
                }
            }
            K::Match(x, arms) => {
                self.zonk_expr(x);
                for (p, a) in arms.iter_mut() {
                    self.zonk_pat(p);
                    self.zonk_expr(a);
                }
            }
        }
    }
}

/// An integer literal's value as a literal of type `t` (integers or floats).
impl Checker<'_> {
    /// Reports an integer literal `v` (negated: `-v`) that type `t` cannot hold.
    pub(super) fn check_int_literal(&mut self, t: Ty, v: u64, negated: bool, span: Span) {
        let Some(Prim::Int { bits, signed }) = self.tys.as_prim(t) else {
            return;
        };
        let (min, max): (i128, i128) = if signed {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        };
        let value = if negated { -(v as i128) } else { v as i128 };
        if !signed && negated && v != 0 && (v as i128) <= max {
            // Artic accepts the negation of an unsigned literal: it wraps around.
            let s = self.ty_str(t);
            let wrapped = (1i128 << bits) - v as i128;
            let d = Diagnostic::warning(
                span,
                format!("the literal `{value}` of type `{s}` wraps around to {wrapped}"),
            )
            .with_note(format!(
                "`{s}` holds {min} to {max}; write `{wrapped}` if that is what you mean"
            ));
            self.emit(d);
            return;
        }
        if value < min || value > max {
            let s = self.ty_str(t);
            let d = self
                .error(span, format!("the literal `{value}` does not fit in `{s}`"))
                .with_note(format!("`{s}` holds {min} to {max}"));
            self.emit(d);
        }
    }
}

pub(super) fn int_or_float_lit(tys: &TyTable, t: Ty, v: u64) -> hir::Lit {
    if tys.is_float(t) {
        hir::Lit::Float(v as f64)
    } else {
        hir::Lit::Int(v)
    }
}
