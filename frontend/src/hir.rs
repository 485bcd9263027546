//! The checked program: names resolved, every expression typed, sugar removed.
//!
//! The checker builds it from the AST; lowering turns it into IR. Automatic dereferences and
//! subtype coercions are explicit nodes, `for` loops and `while let` are rewritten into calls
//! and matches, and compound assignments keep their place expression once.

use crate::ast::UnaryOp;
use crate::source::Span;
use crate::types::Ty;

/// A local variable.
pub type VarId = u32;
/// A function declaration.
pub type FnId = u32;
/// A static declaration.
pub type StaticId = u32;
/// A loop (`while` or `for`), the target of `break` and `continue`.
pub type LoopId = u32;

/// What a local variable is.
#[derive(Clone, Debug)]
pub struct Var {
    /// Its name.
    pub name: Box<str>,
    /// Its type.
    pub ty: Ty,
    /// Whether it was declared `mut`.
    pub mutable: bool,
    /// Where it was declared.
    pub span: Span,
    /// Whether it is read.
    pub used: bool,
    /// Whether it is assigned or borrowed mutably after its declaration.
    pub mutated: bool,
}

/// A pattern with resolved names.
#[derive(Clone, Debug)]
pub struct Pat {
    /// What it is.
    pub kind: PatKind,
    /// The type it matches.
    pub ty: Ty,
    /// Where.
    pub span: Span,
}

/// What a pattern is.
#[derive(Clone, Debug)]
pub enum PatKind {
    /// `_`: matches anything, binds nothing.
    Wild,
    /// A variable, with an optional sub-pattern (`x as p`).
    Bind(VarId, Option<Box<Pat>>),
    /// A literal.
    Lit(Lit),
    /// A tuple (also a tuple-like struct, by field index).
    Tuple(Vec<Pat>),
    /// A struct: field patterns by field index.
    Struct(Vec<(u32, Pat)>),
    /// An enum variant with its payload pattern.
    Variant(u32, Option<Box<Pat>>),
    /// A definite array.
    Array(Vec<Pat>),
    /// Had an error.
    Error,
}

/// A literal value; its type is the expression's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Lit {
    /// An integer, as bits (two's complement).
    Int(u64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
}

/// A checked expression.
#[derive(Clone, Debug)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Its type.
    pub ty: Ty,
    /// Where.
    pub span: Span,
}

/// A statement of a block.
#[derive(Clone, Debug)]
pub enum Stmt {
    /// `let pat = init;` (the initializer may be missing for mutable variables).
    Let(Pat, Option<Expr>),
    /// An expression whose value is dropped.
    Expr(Expr),
}

/// A closure (or a function body).
#[derive(Clone, Debug)]
pub struct Lambda {
    /// The parameters, as one pattern of the domain type.
    pub param: Pat,
    /// The domain.
    pub dom: Ty,
    /// The codomain.
    pub codom: Ty,
    /// The body.
    pub body: Expr,
    /// The partial-evaluation filter: `None` for none, `Some(None)` for `@`.
    pub filter: Option<Option<Box<Expr>>>,
    /// When the closure is the body of a `for` loop: that loop (its return is `continue`).
    pub continue_of: Option<LoopId>,
    /// The target of `return` inside: the function's id for a function body, a fresh id
    /// for a closure; `None` for the body of a `for` loop (whose `return` is the
    /// enclosing function's).
    pub returns_of: Option<FnId>,
}

/// What a checked expression is.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// A literal.
    Lit(Lit),
    /// A string literal: the bytes with a terminating zero; its type is `&[u8]`.
    Str(Box<[u8]>),
    /// A local variable.
    Var(VarId),
    /// A function, with its type arguments.
    Fn(FnId, Vec<Ty>),
    /// A static variable (a place).
    Static(StaticId),
    /// An enum value: variant index and payload.
    Variant(u32, Option<Box<Expr>>),
    /// A tuple.
    Tuple(Vec<Expr>),
    /// A definite array.
    Array(Vec<Expr>),
    /// `[e; n]`.
    Repeat(Box<Expr>, u64),
    /// A struct value, every field in declaration order.
    Struct(Vec<Expr>),
    /// `base .{ fields }`: the struct with some fields replaced.
    Update(Box<Expr>, Vec<(u32, Expr)>),
    /// A block: statements and the value of the last expression.
    Block(Vec<Stmt>, Box<Expr>),
    /// A closure.
    Lambda(Box<Lambda>),
    /// A call: callee and argument (a tuple for several); `run` when written `@f(x)`.
    Call {
        /// The function.
        callee: Box<Expr>,
        /// The argument.
        arg: Box<Expr>,
        /// Whether the call was marked for compile-time evaluation.
        run: bool,
    },
    /// `a(i)` on an array (or a place of one).
    Index(Box<Expr>, Box<Expr>),
    /// A field of a struct or tuple, by index.
    Field(Box<Expr>, u32),
    /// `*p` (a place).
    Deref(Box<Expr>),
    /// `&e` / `&mut e`.
    AddrOf(Box<Expr>),
    /// `-e`, `!e` (`+e` is removed).
    Unary(UnaryOp, Box<Expr>),
    /// Arithmetic and comparisons on two operands of one type.
    Binary(crate::ast::BinOp, Box<Expr>, Box<Expr>),
    /// `a && b`.
    And(Box<Expr>, Box<Expr>),
    /// `a || b`.
    Or(Box<Expr>, Box<Expr>),
    /// `place = value`.
    Assign(Box<Expr>, Box<Expr>),
    /// `place op= value`, with the arithmetic operation.
    AssignOp(crate::ast::BinOp, Box<Expr>, Box<Expr>),
    /// `++x`, `x--`, ...: the place, whether it increments, whether the old value is the
    /// result.
    IncDec(Box<Expr>, bool, bool),
    /// A numeric conversion or pointer cast to the expression's type.
    Cast(Box<Expr>),
    /// `if`.
    If(Box<Expr>, Box<Expr>, Option<Box<Expr>>),
    /// `match` (and `if let`): arms are tried in order.
    Match(Box<Expr>, Vec<(Pat, Expr)>),
    /// `while cond { body }` (`while let` becomes a `while true` around a match).
    While(LoopId, Box<Expr>, Box<Expr>),
    /// `for`: `inner` is the generator applied to the body closure, `args` what the result
    /// is called with; the call's return is the loop's `break`.
    For {
        /// The loop.
        id: LoopId,
        /// `gen(body)`.
        inner: Box<Expr>,
        /// The arguments of the second call.
        args: Box<Expr>,
    },
    /// `break` as a value.
    Break(LoopId),
    /// `continue` as a value.
    Continue(LoopId),
    /// `return` as a value: the return of this function or closure (see
    /// [`Lambda::returns_of`]).
    Return(FnId),
    /// `?e`.
    Known(Box<Expr>),
    /// `$e`.
    Halt(Box<Expr>),
    /// Had an error (already reported).
    Error,
}

impl Expr {
    /// An expression of kind `kind`.
    pub fn new(kind: ExprKind, ty: Ty, span: Span) -> Expr {
        Expr { kind, ty, span }
    }
}
