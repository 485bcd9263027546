//! The abstract syntax tree, with a span on every node.
//!
//! It records what was written, not what it means: names are unresolved paths, primitive
//! types are paths like any other, and calls and indexing share one node (Artic indexes
//! with call syntax, `a(i)`). [`dump`] prints a tree as S-expressions for tests.

use crate::source::Span;
use crate::token::Literal;
use std::fmt::Write;

/// A name as written.
#[derive(Clone, PartialEq, Debug)]
pub struct Ident {
    /// The name.
    pub name: Box<str>,
    /// Where.
    pub span: Span,
}

/// One segment of a path, with type arguments: `Vec[i32]`.
#[derive(Clone, PartialEq, Debug)]
pub struct PathSegment {
    /// The name.
    pub ident: Ident,
    /// Type arguments in `[...]`.
    pub type_args: Vec<Type>,
}

/// The length of an array type or of `[e; n]`: a literal or a static's name.
#[derive(Clone, PartialEq, Debug)]
pub enum ArrayLen {
    /// `4`.
    Lit(u64),
    /// `n`, an immutable static holding an integer.
    Path(Path),
}

/// `a::b[T]::c`, or `super::x`.
#[derive(Clone, PartialEq, Debug)]
pub struct Path {
    /// The segments (`super` is a segment named `super`).
    pub segments: Vec<PathSegment>,
    /// Where.
    pub span: Span,
}

/// A source file or a `mod` body.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct Module {
    /// The items, in order.
    pub items: Vec<Item>,
}

/// `#[name]`, `#[name(arg, key = value)]`.
#[derive(Clone, PartialEq, Debug)]
pub struct Attr {
    /// The attribute's name.
    pub name: Ident,
    /// Its arguments.
    pub args: Vec<AttrArg>,
    /// Where.
    pub span: Span,
}

/// One argument of an attribute.
#[derive(Clone, PartialEq, Debug)]
pub enum AttrArg {
    /// `name`.
    Flag(Ident),
    /// `name = literal`.
    Value(Ident, Literal),
    /// `name(args)`.
    List(Attr),
}

/// A declaration.
#[derive(Clone, PartialEq, Debug)]
pub struct Item {
    /// Attributes written before it.
    pub attrs: Vec<Attr>,
    /// What it declares.
    pub kind: ItemKind,
    /// Where.
    pub span: Span,
}

/// How a struct is written, which decides how its values are built.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum StructShape {
    /// `struct S { x: i32 }` (also `struct S {}`): built by `S { x = 1 }`.
    Record,
    /// `struct S(i32, i64);`: built by `S(1, 2)`; `S` alone is the constructor function.
    Tuple,
    /// `struct S;`: `S` is its only value.
    Unit,
}

/// What an item declares.
#[derive(Clone, PartialEq, Debug)]
pub enum ItemKind {
    /// `fn`.
    Fn(FnDecl),
    /// `struct S[T] { a: T }` or `struct S(T, U);` or `struct S;`.
    Struct {
        /// The name.
        name: Ident,
        /// Type parameters.
        type_params: Vec<Ident>,
        /// Fields (unnamed for tuple-like structs).
        fields: Vec<Field>,
        /// Record, tuple-like or unit.
        shape: StructShape,
    },
    /// `enum E[T] { A, B(T), C { x: i32 } }`.
    Enum {
        /// The name.
        name: Ident,
        /// Type parameters.
        type_params: Vec<Ident>,
        /// The variants.
        variants: Vec<Variant>,
    },
    /// `type T[U] = ...;`.
    TypeAlias {
        /// The name.
        name: Ident,
        /// Type parameters.
        type_params: Vec<Ident>,
        /// The aliased type.
        ty: Type,
    },
    /// `static [mut] x: T = e;`.
    Static {
        /// Whether it is `static mut`.
        mutable: bool,
        /// The name.
        name: Ident,
        /// The declared type.
        ty: Option<Type>,
        /// The initializer.
        init: Option<Expr>,
    },
    /// `mod m { ... }`.
    Mod {
        /// The name.
        name: Ident,
        /// The items inside.
        items: Vec<Item>,
    },
    /// `use a::b [as c];`.
    Use {
        /// What is used.
        path: Path,
        /// The local name.
        alias: Option<Ident>,
    },
    /// `implicit T = e;` (or `implicit = e;`): the value `summon[T]` and implicit parameters
    /// of type `T` get in this scope; held as a function without parameters returning `e`.
    Implicit(FnDecl),
    /// Something that did not parse (a diagnostic was reported).
    Error,
}

/// A function declaration.
#[derive(Clone, PartialEq, Debug)]
pub struct FnDecl {
    /// The name.
    pub name: Ident,
    /// `@` or `@(filter)`.
    pub filter: Option<Filter>,
    /// Type parameters.
    pub type_params: Vec<Ident>,
    /// The parameters, as one tuple pattern.
    pub param: Pattern,
    /// The return type, if written.
    pub ret: Option<Type>,
    /// The body; `None` for a prototype.
    pub body: Option<Expr>,
}

/// A partial-evaluation filter: `@` (always) or `@(expr)`.
#[derive(Clone, PartialEq, Debug)]
pub struct Filter {
    /// The condition; `None` for a bare `@`.
    pub expr: Option<Box<Expr>>,
    /// Where.
    pub span: Span,
}

/// A struct field or variant field.
#[derive(Clone, PartialEq, Debug)]
pub struct Field {
    /// The name (none in tuple-like structs).
    pub name: Option<Ident>,
    /// The type.
    pub ty: Type,
    /// A default value.
    pub init: Option<Expr>,
    /// Where.
    pub span: Span,
}

/// An enum variant.
#[derive(Clone, PartialEq, Debug)]
pub struct Variant {
    /// The name.
    pub name: Ident,
    /// What it carries.
    pub payload: VariantPayload,
    /// Where.
    pub span: Span,
}

/// What an enum variant carries.
#[derive(Clone, PartialEq, Debug)]
pub enum VariantPayload {
    /// Nothing.
    None,
    /// A value of a (tuple) type.
    Tuple(Type),
    /// Named fields.
    Record(Vec<Field>),
}

/// A type as written.
#[derive(Clone, PartialEq, Debug)]
pub struct Type {
    /// What it is.
    pub kind: TypeKind,
    /// Where.
    pub span: Span,
}

/// What a written type is.
#[derive(Clone, PartialEq, Debug)]
pub enum TypeKind {
    /// A named type, primitive or declared: `i32`, `Vec[T]`, `m::T`.
    Path(Path),
    /// `(T, U)`, `()`.
    Tuple(Vec<Type>),
    /// `[T * N]`, `[T]`, `simd[T * N]`.
    Array {
        /// Element type.
        elem: Box<Type>,
        /// Length, for definite arrays.
        len: Option<ArrayLen>,
        /// Whether it is a `simd` vector.
        simd: bool,
    },
    /// `fn(T) -> U`; without `-> U` a continuation type.
    Fn {
        /// Parameter type (a tuple for several).
        param: Box<Type>,
        /// Return type.
        ret: Option<Box<Type>>,
    },
    /// `&T`, `&mut T`, `&addrspace(N) T`.
    Ptr {
        /// Whether it is `&mut`.
        mutable: bool,
        /// The address space number.
        addr_space: Option<u64>,
        /// The pointee.
        pointee: Box<Type>,
    },
    /// `!`: the type of expressions that do not return.
    NoRet,
    /// Did not parse.
    Error,
}

/// A pattern.
#[derive(Clone, PartialEq, Debug)]
pub struct Pattern {
    /// What it is.
    pub kind: PatternKind,
    /// Where.
    pub span: Span,
}

/// What a pattern is.
#[derive(Clone, PartialEq, Debug)]
pub enum PatternKind {
    /// `x`, `mut x`, `x as p`.
    Ident {
        /// The bound name.
        name: Ident,
        /// Whether it is `mut`.
        mutable: bool,
        /// A sub-pattern after `as`.
        sub: Option<Box<Pattern>>,
    },
    /// `implicit p`: a function parameter the caller may leave out, which is then summoned.
    Implicit(Box<Pattern>),
    /// `p: T`; in function prototypes the pattern may be omitted (`fn f(i32) -> i32;`).
    Typed {
        /// The pattern.
        pat: Option<Box<Pattern>>,
        /// The type.
        ty: Type,
    },
    /// A literal; `true` when written with a leading `-` (the literal holds the magnitude).
    Lit(Literal, bool),
    /// `(p, q)`.
    Tuple(Vec<Pattern>),
    /// `[p, q]`, `simd[p, q]`.
    Array {
        /// The elements.
        elems: Vec<Pattern>,
        /// Whether it is `simd`.
        simd: bool,
    },
    /// `S { a = p, ... }`.
    Struct {
        /// The struct or variant.
        path: Path,
        /// Field patterns.
        fields: Vec<(Ident, Pattern)>,
        /// Whether it ends with `...`.
        etc: bool,
    },
    /// `E::V` or `E::V(p)`.
    Enum {
        /// The variant.
        path: Path,
        /// The payload pattern.
        arg: Option<Box<Pattern>>,
    },
    /// Did not parse.
    Error,
}

/// An expression.
#[derive(Clone, PartialEq, Debug)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where.
    pub span: Span,
}

/// Prefix and postfix operators.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum UnaryOp {
    /// `!e`.
    Not,
    /// `-e`.
    Neg,
    /// `+e`.
    Plus,
    /// `*e`.
    Deref,
    /// `&e`.
    AddrOf,
    /// `&mut e`.
    AddrOfMut,
    /// `++e`.
    PreInc,
    /// `--e`.
    PreDec,
    /// `e++`.
    PostInc,
    /// `e--`.
    PostDec,
    /// `?e`: whether `e` is known at compile time.
    Known,
    /// `$e`: stop partial evaluation.
    Halt,
}

/// Binary operators, assignments included.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BinOp {
    /// `*`.
    Mul,
    /// `/`.
    Div,
    /// `%`.
    Rem,
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `<<`.
    Shl,
    /// `>>`.
    Shr,
    /// `&`.
    And,
    /// `^`.
    Xor,
    /// `|`.
    Or,
    /// `<`.
    Lt,
    /// `>`.
    Gt,
    /// `<=`.
    Le,
    /// `>=`.
    Ge,
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `&&`.
    AndAnd,
    /// `||`.
    OrOr,
    /// `=`.
    Assign,
    /// `op=` (the operation is the field).
    AssignOp(AssignOp),
}

/// The operation of a compound assignment.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AssignOp {
    /// `+=`.
    Add,
    /// `-=`.
    Sub,
    /// `*=`.
    Mul,
    /// `/=`.
    Div,
    /// `%=`.
    Rem,
    /// `<<=`.
    Shl,
    /// `>>=`.
    Shr,
    /// `&=`.
    And,
    /// `|=`.
    Or,
    /// `^=`.
    Xor,
}

impl BinOp {
    /// Binding strength as in Artic: 1 binds tightest (`*`), 10 loosest (assignments).
    pub fn precedence(self) -> u8 {
        match self {
            BinOp::Mul | BinOp::Div | BinOp::Rem => 1,
            BinOp::Add | BinOp::Sub => 2,
            BinOp::Shl | BinOp::Shr => 3,
            BinOp::And => 4,
            BinOp::Xor => 5,
            BinOp::Or => 6,
            BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge | BinOp::Eq | BinOp::Ne => 7,
            BinOp::AndAnd => 8,
            BinOp::OrOr => 9,
            BinOp::Assign | BinOp::AssignOp(_) => 10,
        }
    }

    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::And => "&",
            BinOp::Xor => "^",
            BinOp::Or => "|",
            BinOp::Lt => "<",
            BinOp::Gt => ">",
            BinOp::Le => "<=",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::AndAnd => "&&",
            BinOp::OrOr => "||",
            BinOp::Assign => "=",
            BinOp::AssignOp(op) => match op {
                AssignOp::Add => "+=",
                AssignOp::Sub => "-=",
                AssignOp::Mul => "*=",
                AssignOp::Div => "/=",
                AssignOp::Rem => "%=",
                AssignOp::Shl => "<<=",
                AssignOp::Shr => ">>=",
                AssignOp::And => "&=",
                AssignOp::Or => "|=",
                AssignOp::Xor => "^=",
            },
        }
    }
}

/// A statement of a block.
#[derive(Clone, PartialEq, Debug)]
pub enum Stmt {
    /// `let p = e;`.
    Let {
        /// The pattern.
        pat: Pattern,
        /// The initializer.
        init: Option<Expr>,
        /// Where.
        span: Span,
    },
    /// A nested declaration (`fn`, `struct`, ...).
    Item(Item),
    /// An expression; `semi` if a `;` followed it.
    Expr {
        /// The expression.
        expr: Expr,
        /// Whether it ended with `;`.
        semi: bool,
    },
}

/// What an expression is.
#[derive(Clone, PartialEq, Debug)]
pub enum ExprKind {
    /// A literal.
    Lit(Literal),
    /// A name: `x`, `f[i32]`, `E::A`.
    Path(Path),
    /// `summon[T]`: the implicit value of type `T` in scope.
    Summon(Type),
    /// `(a, b)`, `()`.
    Tuple(Vec<Expr>),
    /// `[a, b]`, `simd[a, b]`.
    Array {
        /// The elements.
        elems: Vec<Expr>,
        /// Whether it is `simd`.
        simd: bool,
    },
    /// `[e; N]`.
    Repeat {
        /// The element.
        elem: Box<Expr>,
        /// How many times.
        count: ArrayLen,
        /// Whether it is `simd`.
        simd: bool,
    },
    /// `S { a = e }` (a path) or `e .{ a = e }` (an update).
    Struct {
        /// The struct path, or the value updated.
        base: Box<Expr>,
        /// Whether it is an update.
        update: bool,
        /// Field values.
        fields: Vec<(Ident, Expr)>,
    },
    /// `{ stmts }`.
    Block(Vec<Stmt>),
    /// `|p| e`, `@|p| e`, `|p| -> T e`.
    Closure {
        /// `@` before it.
        filter: Option<Filter>,
        /// Parameters, as one tuple pattern.
        param: Pattern,
        /// Return type.
        ret: Option<Type>,
        /// Body.
        body: Box<Expr>,
    },
    /// `f(args)`, also indexing `a(i)`.
    Call {
        /// What is called.
        callee: Box<Expr>,
        /// The arguments.
        args: Vec<Expr>,
    },
    /// `e.name`.
    Field(Box<Expr>, Ident),
    /// `e.0`.
    Index(Box<Expr>, u64),
    /// Prefix or postfix operator.
    Unary(UnaryOp, Box<Expr>),
    /// Binary operator or assignment.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `e as T`.
    Cast(Box<Expr>, Type),
    /// `e : T`: `e` checked against `T`.
    Typed(Box<Expr>, Type),
    /// `if c { } else ...`.
    If {
        /// Condition.
        cond: Box<Expr>,
        /// Then block.
        then: Box<Expr>,
        /// Else branch (a block or another `if`).
        els: Option<Box<Expr>>,
    },
    /// `if let p = e { } else ...`.
    IfLet {
        /// Pattern.
        pat: Pattern,
        /// Scrutinee.
        expr: Box<Expr>,
        /// Then block.
        then: Box<Expr>,
        /// Else branch.
        els: Option<Box<Expr>>,
    },
    /// `while c { }`.
    While {
        /// Condition.
        cond: Box<Expr>,
        /// Body.
        body: Box<Expr>,
    },
    /// `while let p = e { }`.
    WhileLet {
        /// Pattern.
        pat: Pattern,
        /// Scrutinee.
        expr: Box<Expr>,
        /// Body.
        body: Box<Expr>,
    },
    /// `for p in gen(args) { }`, or `for p, q in gen(args) { }` for a body of several
    /// parameters.
    For {
        /// The loop variables' patterns, one per parameter of the body.
        pats: Vec<Pattern>,
        /// The generator call.
        call: Box<Expr>,
        /// Body.
        body: Box<Expr>,
    },
    /// `match e { p => e, ... }`.
    Match {
        /// Scrutinee.
        expr: Box<Expr>,
        /// Arms.
        arms: Vec<(Pattern, Expr)>,
    },
    /// `break`.
    Break,
    /// `continue`.
    Continue,
    /// `return`.
    Return,
    /// `@f(x)`, `@(c) f(x)`: a call to evaluate at compile time.
    Filtered(Filter, Box<Expr>),
    /// Did not parse.
    Error,
}

/// Prints a module as S-expressions, one item per line.
pub fn dump(module: &Module) -> String {
    let mut out = String::new();
    for item in &module.items {
        dump_item(&mut out, item);
        out.push('\n');
    }
    out
}

fn list<T>(out: &mut String, xs: &[T], f: impl Fn(&mut String, &T)) {
    for (i, x) in xs.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        f(out, x);
    }
}

fn dump_len(out: &mut String, n: &ArrayLen) {
    match n {
        ArrayLen::Lit(n) => {
            let _ = write!(out, "{n}");
        }
        ArrayLen::Path(p) => dump_path(out, p),
    }
}

fn dump_path(out: &mut String, p: &Path) {
    for (i, s) in p.segments.iter().enumerate() {
        if i > 0 {
            out.push_str("::");
        }
        out.push_str(&s.ident.name);
        if !s.type_args.is_empty() {
            out.push('[');
            list(out, &s.type_args, dump_type);
            out.push(']');
        }
    }
}

fn dump_item(out: &mut String, item: &Item) {
    for a in &item.attrs {
        let _ = write!(out, "#{} ", a.name.name);
    }
    match &item.kind {
        ItemKind::Fn(f) => {
            let filter = match &f.filter {
                None => String::new(),
                Some(Filter { expr: None, .. }) => "@ ".into(),
                Some(Filter { expr: Some(e), .. }) => {
                    let mut s = String::from("@");
                    dump_expr(&mut s, e);
                    s.push(' ');
                    s
                }
            };
            let _ = write!(out, "(fn {filter}{}", f.name.name);
            if !f.type_params.is_empty() {
                out.push_str(" [");
                list(out, &f.type_params, |o, t| o.push_str(&t.name));
                out.push(']');
            }
            out.push(' ');
            dump_pat(out, &f.param);
            if let Some(r) = &f.ret {
                out.push_str(" -> ");
                dump_type(out, r);
            }
            if let Some(b) = &f.body {
                out.push(' ');
                dump_expr(out, b);
            }
            out.push(')');
        }
        ItemKind::Struct {
            name,
            fields,
            shape,
            ..
        } => {
            let _ = write!(
                out,
                "(struct {}{}",
                name.name,
                match shape {
                    StructShape::Record => "",
                    StructShape::Tuple => " tuple",
                    StructShape::Unit => " unit",
                }
            );
            for f in fields {
                out.push(' ');
                if let Some(n) = &f.name {
                    let _ = write!(out, "{}:", n.name);
                }
                dump_type(out, &f.ty);
            }
            out.push(')');
        }
        ItemKind::Enum { name, variants, .. } => {
            let _ = write!(out, "(enum {}", name.name);
            for v in variants {
                let _ = write!(out, " {}", v.name.name);
                match &v.payload {
                    VariantPayload::None => {}
                    VariantPayload::Tuple(t) => {
                        out.push('(');
                        dump_type(out, t);
                        out.push(')');
                    }
                    VariantPayload::Record(fs) => {
                        out.push('{');
                        list(out, fs, |o, f| {
                            let _ = write!(o, "{}:", f.name.as_ref().map_or("", |n| &n.name));
                            dump_type(o, &f.ty);
                        });
                        out.push('}');
                    }
                }
            }
            out.push(')');
        }
        ItemKind::TypeAlias { name, ty, .. } => {
            let _ = write!(out, "(type {} ", name.name);
            dump_type(out, ty);
            out.push(')');
        }
        ItemKind::Static {
            mutable,
            name,
            ty,
            init,
        } => {
            let _ = write!(
                out,
                "(static {}{}",
                if *mutable { "mut " } else { "" },
                name.name
            );
            if let Some(t) = ty {
                out.push(' ');
                dump_type(out, t);
            }
            if let Some(e) = init {
                out.push(' ');
                dump_expr(out, e);
            }
            out.push(')');
        }
        ItemKind::Mod { name, items } => {
            let _ = write!(out, "(mod {}", name.name);
            for i in items {
                out.push(' ');
                dump_item(out, i);
            }
            out.push(')');
        }
        ItemKind::Use { path, alias } => {
            out.push_str("(use ");
            dump_path(out, path);
            if let Some(a) = alias {
                let _ = write!(out, " as {}", a.name);
            }
            out.push(')');
        }
        ItemKind::Implicit(f) => {
            out.push_str("(implicit");
            if let Some(r) = &f.ret {
                out.push(' ');
                dump_type(out, r);
            }
            if let Some(b) = &f.body {
                out.push(' ');
                dump_expr(out, b);
            }
            out.push(')');
        }
        ItemKind::Error => out.push_str("(error)"),
    }
}

fn dump_type(out: &mut String, t: &Type) {
    match &t.kind {
        TypeKind::Path(p) => dump_path(out, p),
        TypeKind::Tuple(ts) => {
            out.push('(');
            list(out, ts, dump_type);
            out.push(')');
        }
        TypeKind::Array { elem, len, simd } => {
            out.push_str(if *simd { "simd[" } else { "[" });
            dump_type(out, elem);
            if let Some(n) = len {
                out.push_str(" * ");
                dump_len(out, n);
            }
            out.push(']');
        }
        TypeKind::Fn { param, ret } => {
            out.push_str("fn");
            dump_type(out, param);
            if let Some(r) = ret {
                out.push_str("->");
                dump_type(out, r);
            }
        }
        TypeKind::Ptr {
            mutable,
            addr_space,
            pointee,
        } => {
            out.push('&');
            if *mutable {
                out.push_str("mut ");
            }
            if let Some(a) = addr_space {
                let _ = write!(out, "addrspace({a}) ");
            }
            dump_type(out, pointee);
        }
        TypeKind::NoRet => out.push('!'),
        TypeKind::Error => out.push_str("<error>"),
    }
}

fn dump_pat(out: &mut String, p: &Pattern) {
    match &p.kind {
        PatternKind::Ident { name, mutable, sub } => {
            if *mutable {
                out.push_str("mut ");
            }
            out.push_str(&name.name);
            if let Some(s) = sub {
                out.push_str(" as ");
                dump_pat(out, s);
            }
        }
        PatternKind::Implicit(p) => {
            out.push_str("implicit ");
            dump_pat(out, p);
        }
        PatternKind::Typed { pat, ty } => {
            if let Some(p) = pat {
                dump_pat(out, p);
            }
            out.push(':');
            dump_type(out, ty);
        }
        PatternKind::Lit(l, negated) => {
            let _ = write!(out, "{}{l}", if *negated { "-" } else { "" });
        }
        PatternKind::Tuple(ps) => {
            out.push('(');
            list(out, ps, dump_pat);
            out.push(')');
        }
        PatternKind::Array { elems, simd } => {
            out.push_str(if *simd { "simd[" } else { "[" });
            list(out, elems, dump_pat);
            out.push(']');
        }
        PatternKind::Struct { path, fields, etc } => {
            dump_path(out, path);
            out.push('{');
            list(out, fields, |o, (n, p)| {
                let _ = write!(o, "{}=", n.name);
                dump_pat(o, p);
            });
            if *etc {
                out.push_str(" ...");
            }
            out.push('}');
        }
        PatternKind::Enum { path, arg } => {
            dump_path(out, path);
            if let Some(a) = arg {
                out.push('(');
                dump_pat(out, a);
                out.push(')');
            }
        }
        PatternKind::Error => out.push_str("<error>"),
    }
}

fn dump_expr(out: &mut String, e: &Expr) {
    match &e.kind {
        ExprKind::Lit(l) => {
            let _ = write!(out, "{l}");
        }
        ExprKind::Path(p) => dump_path(out, p),
        ExprKind::Summon(t) => {
            out.push_str("(summon ");
            dump_type(out, t);
            out.push(')');
        }
        ExprKind::Tuple(es) => {
            out.push_str("(tuple");
            for x in es {
                out.push(' ');
                dump_expr(out, x);
            }
            out.push(')');
        }
        ExprKind::Array { elems, simd } => {
            out.push_str(if *simd { "(simd" } else { "(array" });
            for x in elems {
                out.push(' ');
                dump_expr(out, x);
            }
            out.push(')');
        }
        ExprKind::Repeat { elem, count, simd } => {
            out.push_str(if *simd { "(simd-repeat " } else { "(repeat " });
            dump_expr(out, elem);
            out.push(' ');
            dump_len(out, count);
            out.push(')');
        }
        ExprKind::Struct {
            base,
            update,
            fields,
        } => {
            out.push_str(if *update { "(update " } else { "(struct " });
            dump_expr(out, base);
            for (n, x) in fields {
                let _ = write!(out, " {}=", n.name);
                dump_expr(out, x);
            }
            out.push(')');
        }
        ExprKind::Block(stmts) => {
            out.push('{');
            for s in stmts {
                out.push(' ');
                match s {
                    Stmt::Let { pat, init, .. } => {
                        out.push_str("(let ");
                        dump_pat(out, pat);
                        if let Some(i) = init {
                            out.push(' ');
                            dump_expr(out, i);
                        }
                        out.push(')');
                    }
                    Stmt::Item(i) => dump_item(out, i),
                    Stmt::Expr { expr, semi } => {
                        dump_expr(out, expr);
                        if *semi {
                            out.push(';');
                        }
                    }
                }
            }
            out.push_str(" }");
        }
        ExprKind::Closure {
            filter,
            param,
            ret,
            body,
        } => {
            out.push_str(if filter.is_some() {
                "(@closure "
            } else {
                "(closure "
            });
            dump_pat(out, param);
            if let Some(r) = ret {
                out.push_str(" -> ");
                dump_type(out, r);
            }
            out.push(' ');
            dump_expr(out, body);
            out.push(')');
        }
        ExprKind::Call { callee, args } => {
            out.push_str("(call ");
            dump_expr(out, callee);
            for a in args {
                out.push(' ');
                dump_expr(out, a);
            }
            out.push(')');
        }
        ExprKind::Field(x, n) => {
            out.push_str("(. ");
            dump_expr(out, x);
            let _ = write!(out, " {})", n.name);
        }
        ExprKind::Index(x, i) => {
            out.push_str("(. ");
            dump_expr(out, x);
            let _ = write!(out, " {i})");
        }
        ExprKind::Unary(op, x) => {
            let _ = write!(out, "({op:?} ");
            dump_expr(out, x);
            out.push(')');
        }
        ExprKind::Binary(op, l, r) => {
            let _ = write!(out, "({} ", op.symbol());
            dump_expr(out, l);
            out.push(' ');
            dump_expr(out, r);
            out.push(')');
        }
        ExprKind::Typed(x, t) => {
            out.push_str("(: ");
            dump_expr(out, x);
            out.push(' ');
            dump_type(out, t);
            out.push(')');
        }
        ExprKind::Cast(x, t) => {
            out.push_str("(as ");
            dump_expr(out, x);
            out.push(' ');
            dump_type(out, t);
            out.push(')');
        }
        ExprKind::If { cond, then, els } => {
            out.push_str("(if ");
            dump_expr(out, cond);
            out.push(' ');
            dump_expr(out, then);
            if let Some(e) = els {
                out.push(' ');
                dump_expr(out, e);
            }
            out.push(')');
        }
        ExprKind::IfLet {
            pat,
            expr,
            then,
            els,
        } => {
            out.push_str("(if-let ");
            dump_pat(out, pat);
            out.push(' ');
            dump_expr(out, expr);
            out.push(' ');
            dump_expr(out, then);
            if let Some(e) = els {
                out.push(' ');
                dump_expr(out, e);
            }
            out.push(')');
        }
        ExprKind::While { cond, body } => {
            out.push_str("(while ");
            dump_expr(out, cond);
            out.push(' ');
            dump_expr(out, body);
            out.push(')');
        }
        ExprKind::WhileLet { pat, expr, body } => {
            out.push_str("(while-let ");
            dump_pat(out, pat);
            out.push(' ');
            dump_expr(out, expr);
            out.push(' ');
            dump_expr(out, body);
            out.push(')');
        }
        ExprKind::For { pats, call, body } => {
            out.push_str("(for ");
            for pat in pats {
                dump_pat(out, pat);
                out.push(' ');
            }
            dump_expr(out, call);
            out.push(' ');
            dump_expr(out, body);
            out.push(')');
        }
        ExprKind::Match { expr, arms } => {
            out.push_str("(match ");
            dump_expr(out, expr);
            for (p, x) in arms {
                out.push_str(" (");
                dump_pat(out, p);
                out.push_str(" => ");
                dump_expr(out, x);
                out.push(')');
            }
            out.push(')');
        }
        ExprKind::Break => out.push_str("break"),
        ExprKind::Continue => out.push_str("continue"),
        ExprKind::Return => out.push_str("return"),
        ExprKind::Filtered(f, x) => {
            out.push_str("(@");
            if let Some(c) = &f.expr {
                dump_expr(out, c);
            }
            out.push(' ');
            dump_expr(out, x);
            out.push(')');
        }
        ExprKind::Error => out.push_str("<error>"),
    }
}
