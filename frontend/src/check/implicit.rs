//! Implicit values, as in Artic: `implicit T = e;` declares the value of type `T` for its
//! scope (a module or a block), an `implicit x: T` parameter is one for its function's
//! body, and `summon[T]` or a call that leaves implicit parameters out takes the value of
//! the innermost scope that has one of that type.
//!
//! A declaration is held as a function without parameters (so it is checked in its own
//! module and evaluated where it is summoned, as Artic does); local declarations and
//! implicit parameters live in the local scopes under keys no name can spell.

use super::*;
use crate::hir::{Expr, ExprKind as K};

/// Whether a local scope key is an implicit value's rather than a name's.
pub(super) fn is_key(key: &str) -> bool {
    key.starts_with('\0')
}

impl<'a> Checker<'a> {
    /// Makes `l` (a variable or a declaration) an implicit value of the innermost scope.
    pub(super) fn define_implicit(&mut self, l: Local) {
        let key = match l {
            Local::Var(v) => format!("\0v{v}"),
            Local::Item(ItemRef::Fn(f)) => format!("\0f{f}"),
            Local::Item(_) => return,
        };
        if let Some(s) = self.cx.scopes.last_mut() {
            s.insert(key.into(), l);
        }
    }

    /// The type of an implicit value.
    fn implicit_ty(&mut self, l: Local, span: Span) -> Ty {
        match l {
            Local::Var(v) => self.vars[v as usize].ty,
            Local::Item(ItemRef::Fn(f)) => self.fn_sig(f, span).1,
            Local::Item(_) => TyTable::ERROR,
        }
    }

    /// Whether `a` and `b` can be the same type (an inference variable matches anything):
    /// unification tried and undone.
    fn could_match(&mut self, a: Ty, b: Ty) -> bool {
        let saved = self.subst.clone();
        let same = self.unify(a, b);
        self.subst = saved;
        same
    }

    /// The scopes implicit values are looked up in, innermost first: the local scopes,
    /// then the enclosing modules.
    fn implicit_scopes(&self) -> Vec<Vec<Local>> {
        let mut out = Vec::new();
        for s in self.cx.scopes.iter().rev() {
            let mut here: Vec<(&str, Local)> = s
                .iter()
                .filter(|(k, _)| is_key(k))
                .map(|(k, l)| (&**k, *l))
                .collect();
            here.sort_by_key(|(k, _)| *k);
            if !here.is_empty() {
                out.push(here.into_iter().map(|(_, l)| l).collect());
            }
        }
        let mut m = Some(self.cur_mod);
        while let Some(id) = m {
            let here = &self.mods[id as usize].implicits;
            if !here.is_empty() {
                out.push(here.iter().map(|&f| Local::Item(ItemRef::Fn(f))).collect());
            }
            m = self.mods[id as usize].parent;
        }
        out
    }

    /// `summon[want]`: the implicit value of type `want` of the innermost scope that has
    /// one; an error at `span` when there is none, or two in one scope.
    pub(super) fn summon(&mut self, want: Ty, span: Span) -> Expr {
        let want = self.zonk(want);
        if want == TyTable::ERROR {
            return Expr::new(K::Error, TyTable::ERROR, span);
        }
        for scope in self.implicit_scopes() {
            let mut found = Vec::new();
            for l in scope {
                let t = self.implicit_ty(l, span);
                if self.could_match(t, want) {
                    found.push((l, t));
                }
            }
            match found.as_slice() {
                [] => continue,
                [(l, t)] => {
                    let (l, t) = (*l, *t);
                    self.unify(t, want);
                    return self.implicit_value(l, want, span);
                }
                _ => {
                    let s = self.ty_str(want);
                    let d = self
                        .error(span, format!("two implicit values of type `{s}` are in scope"))
                        .with_note("declare one `implicit` per type in a scope, or pass the value explicitly");
                    self.emit(d);
                    return Expr::new(K::Error, TyTable::ERROR, span);
                }
            }
        }
        let s = self.ty_str(want);
        let d = self
            .error(span, format!("no implicit value of type `{s}` is in scope"))
            .with_note(format!(
                "declare one with `implicit {s} = ...;`, or pass the value explicitly"
            ));
        self.emit(d);
        Expr::new(K::Error, TyTable::ERROR, span)
    }

    /// The expression an implicit value is summoned as.
    fn implicit_value(&mut self, l: Local, ty: Ty, span: Span) -> Expr {
        match l {
            Local::Var(v) => {
                self.vars[v as usize].used = true;
                Expr::new(K::Var(v), ty, span)
            }
            Local::Item(ItemRef::Fn(f)) => {
                let outer = self.fns[f as usize].outer_params;
                let args: Vec<Ty> = (0..outer)
                    .map(|i| self.tys.intern(TyKind::Param(i)))
                    .collect();
                let fty = self.tys.func(TyTable::UNIT, ty);
                let callee = Expr::new(K::Fn(f, args), fty, span);
                let unit = Expr::new(K::Tuple(Vec::new()), TyTable::UNIT, span);
                Expr::new(
                    K::Call {
                        callee: Box::new(callee),
                        arg: Box::new(unit),
                        run: false,
                    },
                    ty,
                    span,
                )
            }
            Local::Item(_) => Expr::new(K::Error, TyTable::ERROR, span),
        }
    }

    /// The arguments of a direct call of a function with implicit parameters that leaves
    /// some of them out: those given, then the summoned ones. `None` when nothing is left
    /// out (the call is checked as any other).
    pub(super) fn implicit_args(
        &mut self,
        callee: &Expr,
        args: &'a [ast::Expr],
        dom: Ty,
        span: Span,
    ) -> Option<Expr> {
        let K::Fn(f, _) = callee.kind else {
            return None;
        };
        let (n, implicits) = self.fns[f as usize].params;
        let given = args.len() as u32;
        if implicits == 0 || given >= n || given + implicits < n {
            return None;
        }
        let elems: Vec<Ty> = if n == 1 {
            vec![dom]
        } else {
            match self.tys.kind(self.resolve(dom)) {
                TyKind::Tuple(ts) if ts.len() == n as usize => ts.clone(),
                _ => return None,
            }
        };
        let mut hs: Vec<Expr> = args
            .iter()
            .zip(&elems)
            .map(|(a, &t)| self.check_expr(a, t))
            .collect();
        for &t in &elems[args.len()..] {
            let h = self.summon(t, span);
            hs.push(h);
        }
        if n == 1 {
            return hs.pop();
        }
        Some(Expr::new(K::Tuple(hs), dom, span))
    }
}
