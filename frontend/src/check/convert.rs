//! Subtype conversions that change a value's representation, made explicit as expressions:
//! a function used at a supertype (`fn(&[i32]) -> &mut i32` where `fn(&mut [i32 * 4]) ->
//! &i32` is expected) is wrapped in a closure that converts its argument and result, and a
//! tuple is rebuilt from its converted elements. Conversions under a pointer only ever
//! reinterpret the pointer (see `Checker::same_layout_subtype`).

use super::*;
use crate::hir::{Expr, ExprKind as K, Pat, PatKind, Stmt};

impl<'a> Checker<'a> {
    /// A fresh variable named `name` (a name no program can use) of type `ty`.
    pub(super) fn hidden_var(&mut self, name: &str, ty: Ty, span: Span) -> VarId {
        let ident = ast::Ident {
            name: format!("<{name}>").into(),
            span,
        };
        let v = self.new_var(&ident, ty, false);
        self.vars[v as usize].used = true;
        v
    }

    /// `e` evaluated once: the statement binding it (none for a variable or a function)
    /// and the expression reading it.
    fn evaluate_once(&mut self, e: Expr) -> (Option<Stmt>, Expr) {
        if matches!(e.kind, K::Var(_) | K::Fn(..)) {
            return (None, e);
        }
        let (ty, span) = (e.ty, e.span);
        let v = self.hidden_var("converted", ty, span);
        let pat = Pat {
            kind: PatKind::Bind(v, None),
            ty,
            span,
        };
        (
            Some(Stmt::Let(pat, Some(e))),
            Expr::new(K::Var(v), ty, span),
        )
    }

    /// `{ let x = e; value(x) }`.
    fn with_once(&mut self, e: Expr, ty: Ty, value: impl FnOnce(&mut Self, Expr) -> Expr) -> Expr {
        let span = e.span;
        let (stmt, x) = self.evaluate_once(e);
        let v = value(self, x);
        match stmt {
            Some(s) => Expr::new(K::Block(vec![s], Box::new(v)), ty, span),
            None => v,
        }
    }

    /// The function `e` (of type `fn(D) -> C`) as a value of the supertype `to`
    /// (`fn(D') -> C'` with `D' <: D` and `C <: C'`).
    pub(super) fn convert_fn(&mut self, e: Expr, to: Ty) -> Expr {
        let TyKind::Fn { dom: fd, codom: fc } = self.tys.kind(self.resolve(e.ty)).clone() else {
            return e;
        };
        let TyKind::Fn { dom: td, codom: tc } = self.tys.kind(self.resolve(to)).clone() else {
            return e;
        };
        let span = e.span;
        self.with_once(e, to, |c, f| {
            let x = c.hidden_var("argument", td, span);
            let arg = c.coerce(Expr::new(K::Var(x), td, span), fd);
            let call = Expr::new(
                K::Call {
                    callee: Box::new(f),
                    arg: Box::new(arg),
                    run: false,
                },
                fc,
                span,
            );
            let body = c.coerce(call, tc);
            c.next_return += 1;
            let lambda = hir::Lambda {
                param: Pat {
                    kind: PatKind::Bind(x, None),
                    ty: td,
                    span,
                },
                dom: td,
                codom: tc,
                body,
                filter: None,
                continue_of: None,
                returns_of: Some(c.next_return),
            };
            Expr::new(K::Lambda(Box::new(lambda)), to, span)
        })
    }

    /// The tuple `e` as a value of the tuple type `to`, element by element.
    pub(super) fn convert_tuple(&mut self, e: Expr, to: Ty) -> Expr {
        let TyKind::Tuple(ts) = self.tys.kind(self.resolve(to)).clone() else {
            return e;
        };
        let TyKind::Tuple(fs) = self.tys.kind(self.resolve(e.ty)).clone() else {
            return e;
        };
        let span = e.span;
        self.with_once(e, to, |c, t| {
            let elems = ts
                .iter()
                .zip(&fs)
                .enumerate()
                .map(|(i, (&to, &from))| {
                    let x = Expr::new(K::Field(Box::new(t.clone()), i as u32), from, span);
                    c.coerce(x, to)
                })
                .collect();
            Expr::new(K::Tuple(elems), to, span)
        })
    }
}
