//! The parser: tokens to an [`ast::Module`](crate::ast::Module), reporting every syntax
//! error as a diagnostic and recovering at the next statement or item.
//!
//! Grammar and operator precedence follow Artic. Nesting deeper than [`MAX_DEPTH`] levels
//! is reported once and ends parsing of the file, so that no input overflows the stack.

use crate::ast::*;
use crate::diag::Diagnostic;
use crate::source::Span;
use crate::token::{Literal, Token, TokenKind as T};

/// The deepest nesting of expressions, types, patterns and blocks the parser accepts.
pub const MAX_DEPTH: u32 = 128;

/// The longest chain of binary operators, casts or postfix operations (calls, fields,
/// indices) in one expression the parser accepts: each makes the syntax tree one level
/// deeper, and later stages recurse over it.
pub const MAX_CHAIN: u32 = 10_000;

/// Parses the tokens of one file (as made by [`crate::lexer::lex`], ending with `Eof`).
pub fn parse(tokens: &[Token], diags: &mut Vec<Diagnostic>) -> Module {
    let mut p = Parser {
        toks: tokens,
        pos: 0,
        diags,
        depth: 0,
        chain: 0,
        too_deep: false,
    };
    let mut items = Vec::new();
    while !p.at_end() {
        let before = p.pos;
        items.push(p.item());
        if p.pos == before {
            p.bump();
        }
    }
    Module { items }
}

struct Parser<'t, 'd> {
    toks: &'t [Token],
    pos: usize,
    diags: &'d mut Vec<Diagnostic>,
    depth: u32,
    /// Operators in the chains being parsed (the syntax tree's depth from them).
    chain: u32,
    /// Set once nesting went too deep: everything after is skipped.
    too_deep: bool,
}

impl Parser<'_, '_> {
    // ----- tokens ----------------------------------------------------------------------------

    fn peek(&self) -> &T {
        self.peek_at(0)
    }

    fn peek_at(&self, k: usize) -> &T {
        let i = (self.pos + k).min(self.toks.len().saturating_sub(1));
        self.toks.get(i).map_or(&T::Eof, |t| &t.kind)
    }

    fn span(&self) -> Span {
        let i = self.pos.min(self.toks.len().saturating_sub(1));
        self.toks[i].span
    }

    fn prev_span(&self) -> Span {
        if self.pos == 0 {
            self.span()
        } else {
            self.toks[(self.pos - 1).min(self.toks.len() - 1)].span
        }
    }

    fn since(&self, start: Span) -> Span {
        let end = self.prev_span();
        if end.end < start.start {
            start
        } else {
            start.to(end)
        }
    }

    fn at_end(&self) -> bool {
        self.too_deep || matches!(self.peek(), T::Eof)
    }

    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos.min(self.toks.len() - 1)].clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn is(&self, k: &T) -> bool {
        self.peek() == k
    }

    /// `for p, q in gen(args) { body }`, or `for gen(args) { body }` (a body without
    /// parameters), after `for`: the patterns are tried first, and where the body's brace
    /// (or the call's parenthesis) follows them instead of `in`, the loop has none. Its own
    /// function, so that the frame of the expression parser (one per nesting level) stays
    /// small.
    #[inline(never)]
    fn for_loop(&mut self) -> ExprKind {
        self.bump();
        let (at, diags, chain, depth) = (self.pos, self.diags.len(), self.chain, self.depth);
        let mut pats = vec![self.pattern(false)];
        while self.eat(&T::Comma) {
            pats.push(self.pattern(false));
        }
        // `for gen(args) {`: the "pattern" `gen(args)` ends at the body's brace (a missing
        // `in` in `for x gen(..)` stays the error it is).
        let no_variable = matches!(self.peek(), T::LBrace | T::LParen | T::Dot);
        if no_variable && !self.too_deep {
            (self.pos, self.chain, self.depth) = (at, chain, depth);
            self.diags.truncate(diags);
            pats.clear();
        } else {
            self.expect(&T::In);
        }
        let call = Box::new(self.expr_no_struct());
        let body = Box::new(self.block());
        ExprKind::For { pats, call, body }
    }

    fn eat(&mut self, k: &T) -> bool {
        if self.is(k) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn error_here(&mut self, expected: &str) {
        if self.too_deep {
            return;
        }
        let found = self.peek().describe();
        let d = Diagnostic::error(self.span(), format!("expected {expected}, found {found}"))
            .with_label_message(format!("expected {expected}"));
        self.diags.push(d);
    }

    fn expect(&mut self, k: &T) -> bool {
        if self.eat(k) {
            true
        } else {
            self.error_here(&k.describe());
            false
        }
    }

    /// Enters one level of nesting; false (after one diagnostic) when too deep.
    fn enter(&mut self) -> bool {
        if self.too_deep {
            return false;
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let d = Diagnostic::error(
                self.span(),
                format!("nesting deeper than {MAX_DEPTH} levels"),
            )
            .with_note("the rest of the file is not parsed");
            return self.give_up(d);
        }
        true
    }

    /// Reports `d` and skips the rest of the file (the input is too deep to parse safely).
    fn give_up(&mut self, d: Diagnostic) -> bool {
        self.diags.push(d);
        self.too_deep = true;
        self.pos = self.toks.len() - 1;
        false
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Adds one operator to the chain being parsed; false (after one diagnostic) when the
    /// chains are too long.
    fn link(&mut self) -> bool {
        if self.too_deep {
            return false;
        }
        self.chain += 1;
        if self.chain > MAX_CHAIN {
            let d = Diagnostic::error(
                self.span(),
                format!("expression too long: more than {MAX_CHAIN} operators, casts or calls in a chain"),
            )
            .with_note("split it into parts with `let`; the rest of the file is not parsed");
            return self.give_up(d);
        }
        true
    }

    /// Reports an Artic feature that durin parses but does not implement; `what` names it
    /// with its verb ("traits are").
    fn unsupported(&mut self, span: Span, what: &str) {
        if self.too_deep {
            return;
        }
        self.diags.push(
            Diagnostic::error(span, format!("{what} not supported yet"))
                .with_label_message("not supported yet")
                .with_note("the language chapter of the documentation lists what durin implements"),
        );
    }

    /// Reports and skips Artic's `pure` qualifier (`pure fn`, `pure |x| ...`).
    #[inline(never)]
    fn pure_qualifier(&mut self) {
        while matches!(self.peek(), T::Ident(n) if n.as_ref() == "pure")
            && matches!(
                self.peek_at(1),
                T::Fn | T::Or | T::OrOr | T::At | T::Ident(_)
            )
        {
            let span = self.bump().span;
            self.unsupported(span, "`pure` functions are");
        }
    }

    /// Skips tokens with brackets balanced until `stop` holds outside all brackets (the token
    /// is not eaten) or a closing bracket of the enclosing level is reached. When
    /// `through_block` is set, a balanced `{ ... }` at the outer level ends the skip after it.
    fn skip_balanced(&mut self, stop: impl Fn(&T) -> bool, through_block: bool) {
        let mut depth = 0u32;
        while !self.at_end() {
            let k = self.peek();
            if depth == 0 && stop(k) {
                return;
            }
            match k {
                T::LParen | T::LBracket | T::LBrace => depth += 1,
                T::RParen | T::RBracket | T::RBrace => {
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                    if depth == 0 && through_block && matches!(k, T::RBrace) {
                        self.bump();
                        return;
                    }
                }
                _ => {}
            }
            self.bump();
        }
    }

    /// Skips a whole unsupported item: up to its `;` or through its `{ ... }` body.
    fn skip_item(&mut self) {
        self.skip_balanced(|k| matches!(k, T::Semi), true);
        self.eat(&T::Semi);
    }

    fn ident(&mut self) -> Option<Ident> {
        match self.peek().clone() {
            T::Ident(name) => {
                let span = self.bump().span;
                Some(Ident { name, span })
            }
            _ => {
                self.error_here("an identifier");
                None
            }
        }
    }

    fn error_ident(&self) -> Ident {
        Ident {
            name: "<error>".into(),
            span: self.span(),
        }
    }

    /// An identifier, or (after a diagnostic) a placeholder so that parsing goes on.
    fn name(&mut self) -> Ident {
        self.ident().unwrap_or_else(|| self.error_ident())
    }

    /// `item (sep item)* [sep] close`, the opening token already eaten.
    fn list<X>(&mut self, close: &T, mut item: impl FnMut(&mut Self) -> X) -> Vec<X> {
        let mut out = Vec::new();
        while !self.is(close) && !self.at_end() {
            let before = self.pos;
            out.push(item(self));
            if !self.eat(&T::Comma) {
                break;
            }
            if self.pos == before {
                break;
            }
        }
        self.expect(close);
        out
    }

    // ----- items -------------------------------------------------------------------------------

    fn starts_item(&self) -> bool {
        match self.peek() {
            T::Fn => matches!(self.peek_at(1), T::Ident(_) | T::At),
            T::Struct | T::Enum | T::Type | T::Static | T::Mod | T::Use | T::Hash => true,
            T::Implicit => true,
            T::Ident(n) if n.as_ref() == "pure" => matches!(self.peek_at(1), T::Fn | T::Ident(_)),
            T::Ident(n) => (&**n == "trait" || &**n == "impl") && self.trait_like(),
            _ => false,
        }
    }

    fn item(&mut self) -> Item {
        let start = self.span();
        let mut attrs = Vec::new();
        while self.is(&T::Hash) {
            self.bump();
            if self.expect(&T::LBracket) {
                if let Some(a) = self.attr() {
                    attrs.push(a);
                }
                self.expect(&T::RBracket);
            }
        }
        if matches!(self.peek(), T::Ident(n) if n.as_ref() == "pure")
            && matches!(self.peek_at(1), T::Fn | T::Ident(_))
        {
            self.pure_qualifier();
        }
        let kind = match self.peek() {
            T::Fn => self.fn_decl(),
            T::Struct => self.struct_decl(),
            T::Enum => self.enum_decl(),
            T::Type => self.type_alias(),
            T::Static => self.static_decl(),
            T::Mod => self.mod_decl(),
            T::Use => self.use_decl(),
            T::Implicit => self.implicit_decl(),
            T::Ident(name) if (&**name == "trait" || &**name == "impl") && self.trait_like() => {
                let what = if name.as_ref() == "trait" {
                    "traits are"
                } else {
                    "`impl` blocks (traits) are"
                };
                let span = self.bump().span;
                self.unsupported(span, what);
                self.skip_item();
                ItemKind::Error
            }
            _ => {
                self.error_here(
                    "an item (`fn`, `struct`, `enum`, `type`, `static`, `mod` or `use`)",
                );
                self.bump();
                while !self.at_end() && !self.starts_item() {
                    self.bump();
                }
                ItemKind::Error
            }
        };
        Item {
            attrs,
            kind,
            span: self.since(start),
        }
    }

    /// Whether `trait`/`impl` at the cursor starts a trait item rather than being a name.
    fn trait_like(&self) -> bool {
        matches!(self.peek_at(1), T::Ident(_) | T::LBracket | T::LBrace)
    }

    fn attr(&mut self) -> Option<Attr> {
        let start = self.span();
        let name = self.ident()?;
        let mut args = Vec::new();
        if self.eat(&T::LParen) {
            args = self.list(&T::RParen, |p| {
                let arg_start = p.span();
                let n = p.name();
                if p.eat(&T::Eq) {
                    match p.peek().clone() {
                        T::Lit(l) => {
                            p.bump();
                            AttrArg::Value(n, l)
                        }
                        _ => {
                            p.error_here("a literal");
                            AttrArg::Flag(n)
                        }
                    }
                } else if p.eat(&T::LParen) {
                    let inner = p.list(&T::RParen, |q| {
                        let n = q.name();
                        AttrArg::Flag(n)
                    });
                    AttrArg::List(Attr {
                        name: n,
                        args: inner,
                        span: p.since(arg_start),
                    })
                } else {
                    AttrArg::Flag(n)
                }
            });
        }
        Some(Attr {
            name,
            args,
            span: self.since(start),
        })
    }

    fn type_params(&mut self) -> Vec<Ident> {
        if !self.eat(&T::LBracket) {
            return Vec::new();
        }
        self.list(&T::RBracket, |p| p.name()).into_iter().collect()
    }

    fn filter(&mut self) -> Option<Filter> {
        let start = self.span();
        if !self.eat(&T::At) {
            return None;
        }
        let expr = if self.is(&T::LParen) {
            self.bump();
            let e = self.expr();
            self.expect(&T::RParen);
            Some(Box::new(e))
        } else {
            None
        };
        Some(Filter {
            expr,
            span: self.since(start),
        })
    }

    fn fn_decl(&mut self) -> ItemKind {
        self.bump();
        let filter = self.filter();
        let name = self.name();
        let type_params = self.type_params();
        let param = if self.is(&T::LParen) {
            self.tuple_pattern(true)
        } else {
            self.error_here("a parameter list `(...)`");
            Pattern {
                kind: PatternKind::Error,
                span: self.span(),
            }
        };
        let ret = if self.eat(&T::Arrow) {
            Some(self.ty())
        } else {
            None
        };
        if matches!(self.peek(), T::Ident(n) if &**n == "where") {
            let start = self.bump().span;
            self.skip_balanced(|k| matches!(k, T::LBrace | T::Eq | T::Semi), false);
            self.unsupported(self.since(start), "`where` clauses (traits) are");
        }
        let body = if self.is(&T::LBrace) {
            Some(self.block())
        } else if self.eat(&T::Eq) {
            let e = self.expr();
            // As in Artic, the `;` may be left out before the next item.
            if !self.eat(&T::Semi) && !self.starts_item() && !self.at_end() && !self.is(&T::RBrace)
            {
                self.expect(&T::Semi);
            }
            Some(e)
        } else {
            if ret.is_none() {
                self.diags.push(Diagnostic::error(
                    self.span(),
                    "a function prototype needs a return type",
                ));
            }
            self.expect(&T::Semi);
            None
        };
        ItemKind::Fn(FnDecl {
            name,
            filter,
            type_params,
            param,
            ret,
            body,
        })
    }

    fn field(&mut self, named: bool) -> Field {
        let start = self.span();
        let name = if named {
            let n = self.ident();
            self.expect(&T::Colon);
            n
        } else {
            None
        };
        let ty = self.ty();
        let init = if self.eat(&T::Eq) {
            Some(self.expr())
        } else {
            None
        };
        Field {
            name,
            ty,
            init,
            span: self.since(start),
        }
    }

    fn struct_decl(&mut self) -> ItemKind {
        self.bump();
        let name = self.name();
        let type_params = self.type_params();
        let (fields, shape) = if self.eat(&T::LBrace) {
            (
                self.list(&T::RBrace, |p| p.field(true)),
                StructShape::Record,
            )
        } else if self.eat(&T::LParen) {
            let fs = self.list(&T::RParen, |p| p.field(false));
            self.expect(&T::Semi);
            (fs, StructShape::Tuple)
        } else {
            self.expect(&T::Semi);
            (Vec::new(), StructShape::Unit)
        };
        ItemKind::Struct {
            name,
            type_params,
            fields,
            shape,
        }
    }

    fn enum_decl(&mut self) -> ItemKind {
        self.bump();
        let name = self.name();
        let type_params = self.type_params();
        let variants = if self.expect(&T::LBrace) {
            self.list(&T::RBrace, |p| {
                let start = p.span();
                let name = p.name();
                let payload = if p.is(&T::LParen) {
                    VariantPayload::Tuple(p.ty())
                } else if p.eat(&T::LBrace) {
                    VariantPayload::Record(p.list(&T::RBrace, |q| q.field(true)))
                } else {
                    VariantPayload::None
                };
                Variant {
                    name,
                    payload,
                    span: p.since(start),
                }
            })
        } else {
            Vec::new()
        };
        ItemKind::Enum {
            name,
            type_params,
            variants,
        }
    }

    fn type_alias(&mut self) -> ItemKind {
        self.bump();
        let name = self.name();
        let type_params = self.type_params();
        self.expect(&T::Eq);
        let ty = self.ty();
        self.expect(&T::Semi);
        ItemKind::TypeAlias {
            name,
            type_params,
            ty,
        }
    }

    fn static_decl(&mut self) -> ItemKind {
        self.bump();
        let mutable = self.eat(&T::Mut);
        let name = self.name();
        let ty = if self.eat(&T::Colon) {
            Some(self.ty())
        } else {
            None
        };
        let init = if self.eat(&T::Eq) {
            Some(self.expr())
        } else {
            None
        };
        self.expect(&T::Semi);
        ItemKind::Static {
            mutable,
            name,
            ty,
            init,
        }
    }

    /// `implicit T = e;` or `implicit = e;`.
    fn implicit_decl(&mut self) -> ItemKind {
        let span = self.bump().span;
        let ret = if self.is(&T::Eq) {
            None
        } else {
            Some(self.ty())
        };
        self.expect(&T::Eq);
        let body = self.expr();
        self.expect(&T::Semi);
        ItemKind::Implicit(FnDecl {
            name: Ident {
                name: "implicit".into(),
                span,
            },
            filter: None,
            type_params: Vec::new(),
            param: Pattern {
                kind: PatternKind::Tuple(Vec::new()),
                span,
            },
            ret,
            body: Some(body),
        })
    }

    fn mod_decl(&mut self) -> ItemKind {
        self.bump();
        let name = self.name();
        let mut items = Vec::new();
        if self.expect(&T::LBrace) && self.enter() {
            while !self.is(&T::RBrace) && !self.at_end() {
                let before = self.pos;
                items.push(self.item());
                if self.pos == before {
                    self.bump();
                }
            }
            self.expect(&T::RBrace);
            self.leave();
        }
        ItemKind::Mod { name, items }
    }

    fn use_decl(&mut self) -> ItemKind {
        self.bump();
        let path = self.path(false);
        let alias = if self.eat(&T::As) { self.ident() } else { None };
        self.expect(&T::Semi);
        ItemKind::Use { path, alias }
    }

    // ----- paths and types ---------------------------------------------------------------------

    /// `a::b[T]::c`; type arguments only where `type_args` allows them.
    fn path(&mut self, type_args: bool) -> Path {
        let start = self.span();
        let mut segments = Vec::new();
        loop {
            let ident = match self.peek().clone() {
                T::Super => {
                    let span = self.bump().span;
                    Ident {
                        name: "super".into(),
                        span,
                    }
                }
                _ => self.name(),
            };
            let args = if type_args && self.is(&T::LBracket) {
                self.bump();
                self.list(&T::RBracket, Self::ty)
            } else {
                Vec::new()
            };
            segments.push(PathSegment {
                ident,
                type_args: args,
            });
            if !self.eat(&T::DblColon) {
                break;
            }
        }
        Path {
            segments,
            span: self.since(start),
        }
    }

    fn ty(&mut self) -> Type {
        let start = self.span();
        if !self.enter() {
            return Type {
                kind: TypeKind::Error,
                span: start,
            };
        }
        self.pure_qualifier();
        let kind = self.ty_kind();
        self.leave();
        Type {
            kind,
            span: self.since(start),
        }
    }

    fn ty_kind(&mut self) -> TypeKind {
        match self.peek().clone() {
            T::LParen => {
                self.bump();
                let mut ts = self.list(&T::RParen, Self::ty);
                if ts.len() == 1
                    && !matches!(
                        self.toks.get(self.pos.saturating_sub(2)).map(|t| &t.kind),
                        Some(T::Comma)
                    )
                {
                    return ts.remove(0).kind;
                }
                TypeKind::Tuple(ts)
            }
            T::Simd | T::LBracket => {
                let simd = self.eat(&T::Simd);
                self.expect(&T::LBracket);
                let elem = Box::new(self.ty());
                let len = if self.eat(&T::Mul) {
                    self.array_len()
                } else {
                    None
                };
                self.expect(&T::RBracket);
                TypeKind::Array { elem, len, simd }
            }
            T::And | T::AndAnd => {
                let double = self.bump().kind == T::AndAnd;
                let mutable = self.eat(&T::Mut);
                let addr_space = if self.eat(&T::AddrSpace) {
                    self.expect(&T::LParen);
                    let n = self.int_literal();
                    self.expect(&T::RParen);
                    n
                } else {
                    None
                };
                let pointee = Box::new(self.ty());
                let inner = TypeKind::Ptr {
                    mutable,
                    addr_space,
                    pointee,
                };
                if double {
                    let span = self.prev_span();
                    TypeKind::Ptr {
                        mutable: false,
                        addr_space: None,
                        pointee: Box::new(Type { kind: inner, span }),
                    }
                } else {
                    inner
                }
            }
            T::Fn => {
                self.bump();
                let start = self.span();
                self.expect(&T::LParen);
                let ts = self.list(&T::RParen, Self::ty);
                let param = if ts.len() == 1 {
                    ts.into_iter().next().map(Box::new).unwrap_or_else(|| {
                        Box::new(Type {
                            kind: TypeKind::Error,
                            span: start,
                        })
                    })
                } else {
                    Box::new(Type {
                        kind: TypeKind::Tuple(ts),
                        span: self.since(start),
                    })
                };
                let ret = if self.eat(&T::Arrow) {
                    Some(Box::new(self.ty()))
                } else {
                    None
                };
                TypeKind::Fn { param, ret }
            }
            T::Not => {
                self.bump();
                TypeKind::NoRet
            }
            T::Ident(_) | T::Super => TypeKind::Path(self.path(true)),
            _ => {
                self.error_here("a type");
                TypeKind::Error
            }
        }
    }

    /// An array length: an integer literal or the path of a static.
    fn array_len(&mut self) -> Option<ArrayLen> {
        match self.peek() {
            T::Ident(_) | T::Super => Some(ArrayLen::Path(self.path(false))),
            _ => self.int_literal().map(ArrayLen::Lit),
        }
    }

    fn int_literal(&mut self) -> Option<u64> {
        match self.peek().clone() {
            T::Lit(Literal::Int(n)) => {
                self.bump();
                Some(n)
            }
            _ => {
                self.error_here("an integer");
                None
            }
        }
    }

    // ----- patterns ----------------------------------------------------------------------------

    /// `(p, q)`; in function parameters bare types are allowed.
    fn tuple_pattern(&mut self, fn_param: bool) -> Pattern {
        let start = self.span();
        self.bump();
        let mut ps = self.list(&T::RParen, |p| p.pattern(fn_param));
        let span = self.since(start);
        if ps.len() == 1 && !fn_param {
            let mut only = ps.remove(0);
            only.span = span;
            return only;
        }
        Pattern {
            kind: PatternKind::Tuple(ps),
            span,
        }
    }

    fn pattern(&mut self, fn_param: bool) -> Pattern {
        let start = self.span();
        if !self.enter() {
            return Pattern {
                kind: PatternKind::Error,
                span: start,
            };
        }
        if self.is(&T::Implicit) {
            let span = self.bump().span;
            if !fn_param {
                self.diags.push(Diagnostic::error(
                    span,
                    "`implicit` marks function parameters only: a `let` or a `match` binds no implicit value",
                ));
            }
            let inner = self.pattern(fn_param);
            self.leave();
            return Pattern {
                kind: PatternKind::Implicit(Box::new(inner)),
                span: self.since(start),
            };
        }
        let p = self.pattern_inner(fn_param, start);
        self.leave();
        if self.eat(&T::Colon) {
            let ty = self.ty();
            return Pattern {
                kind: PatternKind::Typed {
                    pat: Some(Box::new(p)),
                    ty,
                },
                span: self.since(start),
            };
        }
        p
    }

    /// Whether the tokens at the cursor are a path (`a::b[T, U]`) followed by `{`: a struct
    /// pattern, not a type, in a parameter list.
    fn path_then_brace(&self) -> bool {
        let mut k = 0;
        loop {
            match self.peek_at(k) {
                T::Ident(_) | T::Super | T::DblColon => k += 1,
                T::LBracket => {
                    let mut depth = 0usize;
                    loop {
                        match self.peek_at(k) {
                            T::LBracket => depth += 1,
                            T::RBracket => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            T::Eof => return false,
                            _ => {}
                        }
                        k += 1;
                    }
                    k += 1;
                }
                T::LBrace => return true,
                _ => return false,
            }
        }
    }

    fn type_pattern(&mut self, start: Span) -> Pattern {
        let ty = self.ty();
        Pattern {
            kind: PatternKind::Typed { pat: None, ty },
            span: self.since(start),
        }
    }

    fn pattern_inner(&mut self, fn_param: bool, start: Span) -> Pattern {
        let kind = match self.peek().clone() {
            T::Ident(name)
                if fn_param
                    && crate::types::Prim::from_name(&name).is_some()
                    && !matches!(self.peek_at(1), T::Colon) =>
            {
                return self.type_pattern(start);
            }
            T::Ident(_) | T::Super => {
                let path_like = matches!(self.peek_at(1), T::DblColon | T::LBracket | T::LBrace);
                let type_like = fn_param
                    && !matches!(self.peek_at(1), T::Colon | T::As)
                    && !self.path_then_brace();
                if type_like {
                    return self.type_pattern(start);
                }
                if path_like || matches!(self.peek(), T::Super) {
                    let path = self.path(true);
                    if self.eat(&T::LBrace) {
                        self.struct_pattern(path)
                    } else {
                        let arg = if self.is(&T::LParen) {
                            Some(Box::new(self.tuple_pattern(false)))
                        } else {
                            None
                        };
                        PatternKind::Enum { path, arg }
                    }
                } else {
                    let name = self.name();
                    if self.is(&T::LParen) {
                        // `Some(x)`: a variant with a payload.
                        let path = Path {
                            segments: vec![PathSegment {
                                ident: name,
                                type_args: Vec::new(),
                            }],
                            span: start,
                        };
                        let arg = Some(Box::new(self.tuple_pattern(false)));
                        PatternKind::Enum { path, arg }
                    } else {
                        let sub = if self.eat(&T::As) {
                            Some(Box::new(self.pattern(false)))
                        } else {
                            None
                        };
                        PatternKind::Ident {
                            name,
                            mutable: false,
                            sub,
                        }
                    }
                }
            }
            T::Mut => {
                self.bump();
                let name = self.name();
                let sub = if self.eat(&T::As) {
                    Some(Box::new(self.pattern(false)))
                } else {
                    None
                };
                PatternKind::Ident {
                    name,
                    mutable: true,
                    sub,
                }
            }
            T::Lit(l) => {
                self.bump();
                PatternKind::Lit(l, false)
            }
            T::Sub if matches!(self.peek_at(1), T::Lit(Literal::Int(_) | Literal::Float(_))) => {
                self.bump();
                match self.bump().kind {
                    T::Lit(l) => PatternKind::Lit(l, true),
                    _ => PatternKind::Error,
                }
            }
            T::LParen => return self.tuple_pattern(fn_param),
            T::Simd | T::LBracket if !fn_param || matches!(self.peek_at(2), T::Colon) => {
                let simd = self.eat(&T::Simd);
                self.expect(&T::LBracket);
                let elems = self.list(&T::RBracket, |p| p.pattern(false));
                PatternKind::Array { elems, simd }
            }
            T::And | T::AndAnd | T::Fn | T::Not | T::LBracket | T::Simd if fn_param => {
                return self.type_pattern(start);
            }
            _ => {
                self.error_here("a pattern");
                self.bump();
                PatternKind::Error
            }
        };
        Pattern {
            kind,
            span: self.since(start),
        }
    }

    fn struct_pattern(&mut self, path: Path) -> PatternKind {
        let mut fields = Vec::new();
        let mut etc = false;
        while !self.is(&T::RBrace) && !self.at_end() {
            if self.eat(&T::Dots) {
                etc = true;
                if !self.is(&T::RBrace) {
                    self.diags.push(Diagnostic::error(
                        self.prev_span(),
                        "`...` can only come last in a struct pattern",
                    ));
                }
            } else {
                let n = self.name();
                self.expect(&T::Eq);
                let p = self.pattern(false);
                fields.push((n, p));
            }
            if !self.eat(&T::Comma) {
                break;
            }
        }
        self.expect(&T::RBrace);
        PatternKind::Struct { path, fields, etc }
    }

    // ----- statements and blocks ---------------------------------------------------------------

    fn block(&mut self) -> Expr {
        let start = self.span();
        if !self.expect(&T::LBrace) || !self.enter() {
            return Expr {
                kind: ExprKind::Error,
                span: start,
            };
        }
        let mut stmts = Vec::new();
        while !self.is(&T::RBrace) && !self.at_end() {
            let before = self.pos;
            if self.eat(&T::Semi) {
                continue;
            }
            if self.is(&T::Let) {
                let s = self.span();
                self.bump();
                let pat = self.pattern(false);
                let init = if self.eat(&T::Eq) {
                    Some(self.expr())
                } else {
                    None
                };
                self.expect(&T::Semi);
                stmts.push(Stmt::Let {
                    pat,
                    init,
                    span: self.since(s),
                });
            } else if self.starts_item() {
                stmts.push(Stmt::Item(self.item()));
            } else {
                // As in Rust, a statement that starts with a block-like expression ends
                // with it: `for x in g() { } -1` is two statements.
                let expr = if matches!(
                    self.peek(),
                    T::If | T::While | T::For | T::Match | T::LBrace
                ) {
                    self.primary(false)
                } else {
                    self.expr()
                };
                let block_like = matches!(
                    expr.kind,
                    ExprKind::If { .. }
                        | ExprKind::IfLet { .. }
                        | ExprKind::While { .. }
                        | ExprKind::WhileLet { .. }
                        | ExprKind::For { .. }
                        | ExprKind::Match { .. }
                        | ExprKind::Block(_)
                );
                if self.eat(&T::Semi) {
                    stmts.push(Stmt::Expr { expr, semi: true });
                } else if block_like || self.is(&T::RBrace) {
                    stmts.push(Stmt::Expr { expr, semi: false });
                } else {
                    self.error_here("`;` or `}`");
                    stmts.push(Stmt::Expr { expr, semi: true });
                    while !self.at_end() && !self.is(&T::Semi) && !self.is(&T::RBrace) {
                        self.bump();
                    }
                    self.eat(&T::Semi);
                }
            }
            if self.pos == before {
                self.bump();
            }
        }
        self.expect(&T::RBrace);
        self.leave();
        Expr {
            kind: ExprKind::Block(stmts),
            span: self.since(start),
        }
    }

    // ----- expressions -------------------------------------------------------------------------

    fn expr(&mut self) -> Expr {
        self.binary(10, false)
    }

    /// An expression where `S { .. }` is not a struct literal (conditions, scrutinees).
    fn expr_no_struct(&mut self) -> Expr {
        self.binary(10, true)
    }

    fn binop(&self) -> Option<BinOp> {
        Some(match self.peek() {
            T::Mul => BinOp::Mul,
            T::Div => BinOp::Div,
            T::Rem => BinOp::Rem,
            T::Add => BinOp::Add,
            T::Sub => BinOp::Sub,
            T::Shl => BinOp::Shl,
            T::Shr => BinOp::Shr,
            T::And => BinOp::And,
            T::Xor => BinOp::Xor,
            T::Or => BinOp::Or,
            T::Lt => BinOp::Lt,
            T::Gt => BinOp::Gt,
            T::Le => BinOp::Le,
            T::Ge => BinOp::Ge,
            T::EqEq => BinOp::Eq,
            T::Ne => BinOp::Ne,
            T::AndAnd => BinOp::AndAnd,
            T::OrOr => BinOp::OrOr,
            T::Eq => BinOp::Assign,
            T::AddEq => BinOp::AssignOp(AssignOp::Add),
            T::SubEq => BinOp::AssignOp(AssignOp::Sub),
            T::MulEq => BinOp::AssignOp(AssignOp::Mul),
            T::DivEq => BinOp::AssignOp(AssignOp::Div),
            T::RemEq => BinOp::AssignOp(AssignOp::Rem),
            T::ShlEq => BinOp::AssignOp(AssignOp::Shl),
            T::ShrEq => BinOp::AssignOp(AssignOp::Shr),
            T::AndEq => BinOp::AssignOp(AssignOp::And),
            T::OrEq => BinOp::AssignOp(AssignOp::Or),
            T::XorEq => BinOp::AssignOp(AssignOp::Xor),
            _ => return None,
        })
    }

    /// Precedence climbing: operators binding at most as loosely as `max`.
    fn binary(&mut self, max: u8, no_struct: bool) -> Expr {
        let start = self.span();
        if !self.enter() {
            return Expr {
                kind: ExprKind::Error,
                span: start,
            };
        }
        let chain = self.chain;
        let mut lhs = self.unary(no_struct);
        while let Some(op) = self.binop() {
            let prec = op.precedence();
            if prec > max || !self.link() {
                break;
            }
            self.bump();
            // Assignments associate to the right, everything else to the left.
            let rhs_max = if prec == 10 { 10 } else { prec - 1 };
            let rhs = self.binary(rhs_max, no_struct);
            lhs = Expr {
                kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                span: self.since(start),
            };
        }
        self.chain = chain;
        self.leave();
        lhs
    }

    /// A prefixed operand with its casts: prefix operators bind tighter than `as`, so
    /// `-1 as u32` is `(-1) as u32`.
    fn unary(&mut self, no_struct: bool) -> Expr {
        let start = self.span();
        let e = self.prefixed(no_struct);
        self.casts(e, start)
    }

    fn prefixed(&mut self, no_struct: bool) -> Expr {
        let start = self.span();
        let op = match self.peek() {
            T::Not => Some(UnaryOp::Not),
            T::Sub => Some(UnaryOp::Neg),
            T::Add => Some(UnaryOp::Plus),
            T::Mul => Some(UnaryOp::Deref),
            T::Inc => Some(UnaryOp::PreInc),
            T::Dec => Some(UnaryOp::PreDec),
            T::Question => Some(UnaryOp::Known),
            T::Dollar => Some(UnaryOp::Halt),
            T::And | T::AndAnd => Some(if matches!(self.peek_at(1), T::Mut) {
                UnaryOp::AddrOfMut
            } else {
                UnaryOp::AddrOf
            }),
            _ => None,
        };
        let Some(op) = op else {
            return self.postfix(no_struct);
        };
        let double_and = self.bump().kind == T::AndAnd;
        if op == UnaryOp::AddrOfMut {
            self.bump();
        }
        if !self.enter() {
            return Expr {
                kind: ExprKind::Error,
                span: start,
            };
        }
        let inner = self.prefixed(no_struct);
        self.leave();
        let mut e = Expr {
            kind: ExprKind::Unary(op, Box::new(inner)),
            span: self.since(start),
        };
        if double_and {
            e = Expr {
                kind: ExprKind::Unary(UnaryOp::AddrOf, Box::new(e)),
                span: self.since(start),
            };
        }
        e
    }

    /// `e as T` and `e : T` (a type ascription, at the precedence of a cast as in Artic:
    /// `1:f32 / x` is `(1:f32) / x`).
    fn casts(&mut self, mut e: Expr, start: Span) -> Expr {
        let chain = self.chain;
        while matches!(self.peek(), T::As | T::Colon) && self.link() {
            let ascribe = self.is(&T::Colon);
            self.bump();
            let ty = self.ty();
            let (x, span) = (Box::new(e), self.since(start));
            e = Expr {
                kind: if ascribe {
                    ExprKind::Typed(x, ty)
                } else {
                    ExprKind::Cast(x, ty)
                },
                span,
            };
        }
        self.chain = chain;
        e
    }

    fn postfix(&mut self, no_struct: bool) -> Expr {
        let start = self.span();
        let mut e = self.primary(no_struct);
        let chain = self.chain;
        loop {
            let more = matches!(self.peek(), T::LParen | T::Dot | T::Inc | T::Dec);
            if more && !self.link() {
                self.chain = chain;
                return e;
            }
            match self.peek() {
                T::LParen => {
                    self.bump();
                    let args = self.list(&T::RParen, Self::expr);
                    e = Expr {
                        kind: ExprKind::Call {
                            callee: Box::new(e),
                            args,
                        },
                        span: self.since(start),
                    };
                }
                T::Dot => {
                    self.bump();
                    match self.peek().clone() {
                        T::Lit(Literal::Int(i)) => {
                            self.bump();
                            e = Expr {
                                kind: ExprKind::Index(Box::new(e), i),
                                span: self.since(start),
                            };
                        }
                        T::LBrace => {
                            self.bump();
                            let fields = self.field_inits();
                            e = Expr {
                                kind: ExprKind::Struct {
                                    base: Box::new(e),
                                    update: true,
                                    fields,
                                },
                                span: self.since(start),
                            };
                        }
                        _ => {
                            let n = self.name();
                            e = Expr {
                                kind: ExprKind::Field(Box::new(e), n),
                                span: self.since(start),
                            };
                        }
                    }
                }
                T::Inc | T::Dec => {
                    let op = if self.bump().kind == T::Inc {
                        UnaryOp::PostInc
                    } else {
                        UnaryOp::PostDec
                    };
                    e = Expr {
                        kind: ExprKind::Unary(op, Box::new(e)),
                        span: self.since(start),
                    };
                }
                _ => {
                    self.chain = chain;
                    return e;
                }
            }
        }
    }

    fn field_inits(&mut self) -> Vec<(Ident, Expr)> {
        self.list(&T::RBrace, |p| {
            let n = p.name();
            p.expect(&T::Eq);
            (n, p.expr())
        })
    }

    fn closure(&mut self, filter: Option<Filter>, start: Span) -> Expr {
        let param = if self.eat(&T::OrOr) {
            Pattern {
                kind: PatternKind::Tuple(Vec::new()),
                span: self.prev_span(),
            }
        } else {
            let s = self.span();
            self.expect(&T::Or);
            let ps = self.list(&T::Or, |p| p.pattern(false));
            Pattern {
                kind: PatternKind::Tuple(ps),
                span: self.since(s),
            }
        };
        let ret = if self.eat(&T::Arrow) {
            Some(self.ty())
        } else {
            None
        };
        let body = Box::new(self.expr());
        Expr {
            kind: ExprKind::Closure {
                filter,
                param,
                ret,
                body,
            },
            span: self.since(start),
        }
    }

    /// `summon[T]`.
    fn summon_expr(&mut self) -> ExprKind {
        self.bump();
        self.expect(&T::LBracket);
        let t = self.ty();
        self.expect(&T::RBracket);
        ExprKind::Summon(t)
    }

    /// `asm(...)`: reported and skipped.
    #[inline(never)]
    fn asm_expr(&mut self, start: Span) -> ExprKind {
        self.bump();
        if self.expect(&T::LParen) {
            self.skip_balanced(|_| false, false);
            self.bump();
        }
        self.unsupported(self.since(start), "inline assembly (`asm`) is");
        ExprKind::Error
    }

    fn primary(&mut self, no_struct: bool) -> Expr {
        self.pure_qualifier();
        let start = self.span();
        let kind = match self.peek().clone() {
            T::Lit(l) => {
                self.bump();
                ExprKind::Lit(l)
            }
            T::Ident(_) | T::Super => {
                let path = self.path(true);
                if self.is(&T::LBrace) && !no_struct {
                    self.bump();
                    let base = Box::new(Expr {
                        span: path.span,
                        kind: ExprKind::Path(path),
                    });
                    let fields = self.field_inits();
                    ExprKind::Struct {
                        base,
                        update: false,
                        fields,
                    }
                } else {
                    ExprKind::Path(path)
                }
            }
            T::LParen => {
                self.bump();
                let mut es = self.list(&T::RParen, Self::expr);
                let trailing_comma = matches!(
                    self.toks.get(self.pos.saturating_sub(2)).map(|t| &t.kind),
                    Some(T::Comma)
                );
                if es.len() == 1 && !trailing_comma {
                    let mut e = es.remove(0);
                    e.span = self.since(start);
                    return e;
                }
                ExprKind::Tuple(es)
            }
            T::Simd | T::LBracket => {
                let simd = self.eat(&T::Simd);
                self.expect(&T::LBracket);
                if self.eat(&T::RBracket) {
                    ExprKind::Array {
                        elems: Vec::new(),
                        simd,
                    }
                } else {
                    let first = self.expr();
                    if self.eat(&T::Semi) {
                        let count = self.array_len().unwrap_or(ArrayLen::Lit(0));
                        self.expect(&T::RBracket);
                        ExprKind::Repeat {
                            elem: Box::new(first),
                            count,
                            simd,
                        }
                    } else {
                        let mut elems = vec![first];
                        if self.eat(&T::Comma) {
                            elems.extend(self.list(&T::RBracket, Self::expr));
                        } else {
                            self.expect(&T::RBracket);
                        }
                        ExprKind::Array { elems, simd }
                    }
                }
            }
            T::LBrace => return self.block(),
            T::Or | T::OrOr => return self.closure(None, start),
            T::At => {
                let filter = self.filter();
                if matches!(self.peek(), T::Or | T::OrOr) {
                    return self.closure(filter, start);
                }
                let f = filter.unwrap_or(Filter {
                    expr: None,
                    span: start,
                });
                if !self.enter() {
                    return Expr {
                        kind: ExprKind::Error,
                        span: start,
                    };
                }
                let call = self.postfix(no_struct);
                self.leave();
                ExprKind::Filtered(f, Box::new(call))
            }
            T::If => return self.if_expr(),
            T::While => {
                self.bump();
                if self.eat(&T::Let) {
                    let pat = self.pattern(false);
                    self.expect(&T::Eq);
                    let expr = Box::new(self.expr_no_struct());
                    let body = Box::new(self.block());
                    ExprKind::WhileLet { pat, expr, body }
                } else {
                    let cond = Box::new(self.expr_no_struct());
                    let body = Box::new(self.block());
                    ExprKind::While { cond, body }
                }
            }
            T::For => self.for_loop(),
            T::Match => {
                self.bump();
                let expr = Box::new(self.expr_no_struct());
                let mut arms = Vec::new();
                if self.expect(&T::LBrace) {
                    while !self.is(&T::RBrace) && !self.at_end() {
                        let before = self.pos;
                        let p = self.pattern(false);
                        self.expect(&T::FatArrow);
                        let e = self.expr();
                        arms.push((p, e));
                        if !self.eat(&T::Comma) && !self.is(&T::RBrace) && self.pos == before {
                            self.bump();
                        }
                    }
                    self.expect(&T::RBrace);
                }
                ExprKind::Match { expr, arms }
            }
            T::Break => {
                self.bump();
                ExprKind::Break
            }
            T::Continue => {
                self.bump();
                ExprKind::Continue
            }
            T::Return => {
                self.bump();
                ExprKind::Return
            }
            T::Summon => self.summon_expr(),
            T::Asm => self.asm_expr(start),
            _ => {
                self.error_here("an expression");
                if !matches!(
                    self.peek(),
                    T::RBrace | T::RParen | T::RBracket | T::Semi | T::Comma
                ) {
                    self.bump();
                }
                ExprKind::Error
            }
        };
        Expr {
            kind,
            span: self.since(start),
        }
    }

    fn if_expr(&mut self) -> Expr {
        let start = self.span();
        self.bump();
        let kind = if self.eat(&T::Let) {
            let pat = self.pattern(false);
            self.expect(&T::Eq);
            let expr = Box::new(self.expr_no_struct());
            let then = Box::new(self.block());
            let els = self.else_branch();
            ExprKind::IfLet {
                pat,
                expr,
                then,
                els,
            }
        } else {
            let cond = Box::new(self.expr_no_struct());
            let then = Box::new(self.block());
            let els = self.else_branch();
            ExprKind::If { cond, then, els }
        };
        Expr {
            kind,
            span: self.since(start),
        }
    }

    fn else_branch(&mut self) -> Option<Box<Expr>> {
        if !self.eat(&T::Else) {
            return None;
        }
        if !self.enter() {
            return None;
        }
        let e = if self.is(&T::If) {
            self.if_expr()
        } else {
            self.block()
        };
        self.leave();
        Some(Box::new(e))
    }
}

#[cfg(test)]
mod tests {
    use crate::source::SourceMap;
    use crate::{ast, diag, lexer};

    /// Parses `src`; returns the S-expression dump and the rendered diagnostics.
    fn parsed(src: &str) -> (String, String) {
        let mut sources = SourceMap::new();
        let file = sources.add("t.art", src);
        let mut diags = Vec::new();
        let toks = lexer::lex(file, src, &mut diags);
        let module = super::parse(&toks, &mut diags);
        (
            ast::dump(&module).trim_end().to_string(),
            diag::render(&sources, &diags),
        )
    }

    /// The dump of `fn f() { <body> }`'s body statements.
    fn body(stmts: &str) -> String {
        let (dump, diags) = parsed(&format!("fn f() {{ {stmts} }}"));
        assert_eq!(diags, "", "unexpected diagnostics for {stmts}");
        let inner = dump
            .strip_prefix("(fn f () { ")
            .and_then(|d| d.strip_suffix(" })"));
        inner.unwrap_or(&dump).to_string()
    }

    fn check_expr(src: &str, expected: &str) {
        assert_eq!(body(src), expected, "\n--- input\n{src}");
    }

    #[test]
    fn binary_precedence_follows_artic() {
        check_expr("a + b * c", "(+ a (* b c))");
        check_expr("a - b - c", "(- (- a b) c)");
        check_expr("a << 1 + 2", "(<< a (+ 1 2))");
        check_expr("a & b ^ c | d", "(| (^ (& a b) c) d)");
        check_expr("a | b == c", "(== (| a b) c)");
        check_expr("a < b && c || d", "(|| (&& (< a b) c) d)");
        check_expr("a = b += c", "(= a (+= b c))");
        check_expr("-a * !b", "(* (Neg a) (Not b))");
        check_expr("x as i64 + 1", "(+ (as x i64) 1)");
        check_expr("-1 as u32", "(as (Neg 1) u32)");
        check_expr("*p as i64 * 2", "(* (as (Deref p) i64) 2)");
        // A type ascription binds as a cast does (Artic's postfix form).
        check_expr("1:f32 / x", "(/ (: 1 f32) x)");
        check_expr(
            "2:f32 * a(i) + 1:f32",
            "(+ (* (: 2 f32) (call a i)) (: 1 f32))",
        );
        check_expr("x : i64 as f32", "(as (: x i64) f32)");
    }

    #[test]
    fn postfix_forms() {
        check_expr("f(1, 2)(3)", "(call (call f 1 2) 3)");
        check_expr("p.x.0", "(. (. p x) 0)");
        check_expr("a(i)++", "(PostInc (call a i))");
        check_expr("++a", "(PreInc a)");
        check_expr("&mut x", "(AddrOfMut x)");
        check_expr("**p", "(Deref (Deref p))");
        check_expr("f[i32, T](x)", "(call f[i32 T] x)");
        check_expr("E::A", "E::A");
    }

    #[test]
    fn aggregates() {
        check_expr("(1, 2.5)", "(tuple 1 2.5)");
        check_expr("(1,)", "(tuple 1)");
        check_expr("(1)", "1");
        check_expr("()", "(tuple)");
        check_expr("[1, 2]", "(array 1 2)");
        check_expr("[0; 8]", "(repeat 0 8)");
        check_expr("simd[1, 2]", "(simd 1 2)");
        check_expr("S { a = 1, b = x }", "(struct S a=1 b=x)");
        check_expr("s .{ a = 2 }", "(update s a=2)");
    }

    #[test]
    fn control_flow() {
        check_expr("if c { 1 } else { 2 }", "(if c { 1 } { 2 })");
        check_expr(
            "if a { } else if b { } else { }",
            "(if a { } (if b { } { }))",
        );
        // In a condition, `x { .. }` is a variable and a block, not a struct literal.
        check_expr("if x { y }", "(if x { y })");
        check_expr("while i < n { i++; }", "(while (< i n) { (PostInc i); })");
        check_expr(
            "for i in range(0, n) { f(i) }",
            "(for i (call range 0 n) { (call f i) })",
        );
        check_expr(
            "match v { 0 => a, E::B(x) => x, _ => c }",
            "(match v (0 => a) (E::B(x) => x) (_ => c))",
        );
        check_expr("if let Some(x) = o { x }", "(if-let Some(x) o { x })");
        check_expr(
            "while let (a, b) = g() { }",
            "(while-let (a b) (call g) { })",
        );
        check_expr("return(1)", "(call return 1)");
        check_expr("break()", "(call break)");
    }

    #[test]
    fn statements() {
        check_expr(
            "let x = 1; let mut y: i32; x",
            "(let x 1) (let mut y:i32) x",
        );
        check_expr("f(); g()", "(call f); (call g)");
        check_expr("if a { } f()", "(if a { }) (call f)");
    }

    #[test]
    fn closures_and_partial_evaluation() {
        check_expr("|x| x + 1", "(closure (x) (+ x 1))");
        check_expr("|| 0", "(closure () 0)");
        check_expr("|a: i32, b| -> i32 a", "(closure (a:i32 b) -> i32 a)");
        check_expr("@|x| x", "(@closure (x) x)");
        check_expr("@f(x)", "(@ (call f x))");
        check_expr("@(?n) f(n)", "(@(Known n) (call f n))");
        check_expr("?x && $y", "(&& (Known x) (Halt y))");
    }

    #[test]
    fn items() {
        let src = "#[export] fn @ f[T](x: T, mut y: &mut [i32 * 4]) -> fn(T) -> T = g;\n\
                   fn h(i32, &[u8]) -> !;\n\
                   struct S[T] { a: T, b: i32 = 0 }\n\
                   struct P(i32, f64);\n\
                   struct U;\n\
                   enum E { A, B(i32, i32), C { x: f32 } }\n\
                   type Buf = &mut addrspace(1) [f32];\n\
                   static mut n: u64 = 0;\n\
                   mod m { use super::S as T; }";
        let (dump, diags) = parsed(src);
        assert_eq!(diags, "");
        assert_eq!(
            dump,
            "#export (fn @ f [T] (x:T mut y:&mut [i32 * 4]) -> fnT->T g)\n\
             (fn h (:i32 :&[u8]) -> !)\n\
             (struct S a:T b:i32)\n\
             (struct P tuple i32 f64)\n\
             (struct U unit)\n\
             (enum E A B((i32 i32)) C{x:f32})\n\
             (type Buf &mut addrspace(1) [f32])\n\
             (static mut n u64 0)\n\
             (mod m (use super::S as T))"
        );
    }

    #[test]
    fn errors_recover_at_the_next_statement_and_item() {
        let (dump, diags) = parsed("fn f() { let x = 1 let y = 2; y }\nwhat\nfn g() -> i32 { 3 }");
        assert_eq!(
            dump,
            "(fn f () { (let x 1) (let y 2) y })\n(error)\n(fn g () -> i32 { 3 })"
        );
        assert_eq!(
            diags,
            "error: expected `;`, found `let`\n  ┌─ t.art:1:20\n  │\n1 │ fn f() { let x = 1 let y = 2; y }\n  │                    ^^^ expected `;`\n\n\
             error: expected an item (`fn`, `struct`, `enum`, `type`, `static`, `mod` or `use`), found identifier `what`\n  ┌─ t.art:2:1\n  │\n2 │ what\n  │ ^^^^ expected an item (`fn`, `struct`, `enum`, `type`, `static`, `mod` or `use`)\n\n"
        );
    }

    #[test]
    fn deep_nesting_is_one_diagnostic_not_a_stack_overflow() {
        for open in ["(", "[", "{", "-", "&"] {
            let src = format!("fn f() {{ {} }}", open.repeat(10_000));
            let (_, diags) = parsed(&src);
            let count = diags.matches("error:").count();
            assert_eq!(count, 1, "{open}: {diags}");
            assert!(diags.contains("nesting deeper than 128 levels"));
        }
    }
}
