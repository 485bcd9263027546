//! Definitions: the nodes of the graph.
//!
//! Every value, continuation and global is a *def*, addressed by a [`Def`] key. A def is a
//! [`Node`] (what it computes), a result [`Type`](crate::Type) and a list of operand defs.
//! Structural defs are hash-consed by `(node, type, operands)`; continuations and globals are
//! nominal (each one is distinct, and a continuation's operands can change after creation).

use slotmap::new_key_type;

new_key_type! {
    /// A def: a small copyable key into the arena of a [`World`](crate::World).
    pub struct Def;
}

/// Binary arithmetic and bit operations. Integer operations wrap; the operand type's
/// signedness decides the meaning of `div`, `rem` and `shr`. Shift amounts are taken modulo
/// the bit width. Integer division or remainder by zero is an error at run time.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum ArithOp {
    /// `a + b`.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b`.
    Mul,
    /// `a / b` (truncating for integers).
    Div,
    /// `a % b` (sign of the dividend; `fmod` for floats).
    Rem,
    /// Bitwise and (logical for `bool`).
    And,
    /// Bitwise or.
    Or,
    /// Bitwise exclusive or.
    Xor,
    /// Left shift.
    Shl,
    /// Right shift: arithmetic for signed, logical for unsigned integers.
    Shr,
}

impl ArithOp {
    /// All arithmetic operations.
    pub const ALL: [ArithOp; 10] = [
        Self::Add,
        Self::Sub,
        Self::Mul,
        Self::Div,
        Self::Rem,
        Self::And,
        Self::Or,
        Self::Xor,
        Self::Shl,
        Self::Shr,
    ];

    /// The operation's name in the text form.
    pub fn name(self) -> &'static str {
        match self {
            Self::Add => "add",
            Self::Sub => "sub",
            Self::Mul => "mul",
            Self::Div => "div",
            Self::Rem => "rem",
            Self::And => "and",
            Self::Or => "or",
            Self::Xor => "xor",
            Self::Shl => "shl",
            Self::Shr => "shr",
        }
    }

    /// Whether the operation applies to floats.
    pub fn is_float_op(self) -> bool {
        matches!(
            self,
            Self::Add | Self::Sub | Self::Mul | Self::Div | Self::Rem
        )
    }

    /// Whether the operation applies to `bool`.
    pub fn is_bool_op(self) -> bool {
        matches!(self, Self::And | Self::Or | Self::Xor)
    }

    /// Whether `a op b == b op a` for all integers.
    pub fn is_commutative(self) -> bool {
        matches!(
            self,
            Self::Add | Self::Mul | Self::And | Self::Or | Self::Xor
        )
    }
}

/// Comparisons; the result is `bool`. Integer comparisons follow the operand's signedness.
/// Float comparisons are ordered (false if either operand is NaN) except `ne`, which is true
/// if either operand is NaN.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum CmpOp {
    /// `a == b`.
    Eq,
    /// `a != b`.
    Ne,
    /// `a < b`.
    Lt,
    /// `a <= b`.
    Le,
    /// `a > b`.
    Gt,
    /// `a >= b`.
    Ge,
}

impl CmpOp {
    /// All comparisons.
    pub const ALL: [CmpOp; 6] = [Self::Eq, Self::Ne, Self::Lt, Self::Le, Self::Gt, Self::Ge];

    /// The comparison's name in the text form.
    pub fn name(self) -> &'static str {
        match self {
            Self::Eq => "eq",
            Self::Ne => "ne",
            Self::Lt => "lt",
            Self::Le => "le",
            Self::Gt => "gt",
            Self::Ge => "ge",
        }
    }
}

/// What a def computes. The operand layout of each node is given in its doc.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Node {
    /// A literal of a bool, integer or float type: the raw bits, zero-extended.
    Lit(u64),
    /// An undefined value of any type. Jumping to bottom is an error at run time.
    Bottom,
    /// Parameter number `.0` of the continuation in operand 0.
    Param(u32),
    /// Nominal continuation. Operands: one filter per parameter, then, once it has a body,
    /// the callee and the arguments of its jump.
    Cont,
    /// Nominal global variable. Operand 0: the initial value. Its type is a pointer to the
    /// initial value's type.
    Global {
        /// Whether stores to the global are allowed.
        mutable: bool,
    },
    /// `[a, b]`: arithmetic on two operands of one type.
    Arith(ArithOp),
    /// `[a, b]`: comparison of two operands of one type.
    Cmp(CmpOp),
    /// `[cond, a, b]`: `a` if `cond` else `b`; selecting between continuations is a branch.
    Select,
    /// `[x]`: numeric conversion to the def's type (int/float/bool to int/float/bool).
    /// Float-to-int saturates, NaN gives 0.
    Conv,
    /// `[x]`: reinterpretation of the bits of `x` as a type of the same width (or pointer to
    /// pointer).
    Bitcast,
    /// `[elems..]`: a tuple.
    Tuple,
    /// `[fields..]`: a value of a nominal struct type.
    Struct,
    /// `[elems..]`: a definite array value.
    Array,
    /// `[agg, index]`: a component of a tuple, struct (index must be a literal) or definite
    /// array.
    Extract,
    /// `[agg, index, value]`: `agg` with one component replaced.
    Insert,
    /// `[ptr, index]`: pointer to an array element or a tuple/struct field (load effective
    /// address).
    Lea,
    /// `[mem]`: a fresh stack slot; the type is `(mem, ptr(T))`.
    Slot,
    /// `[mem, count]`: fresh heap memory for `count` elements; type `(mem, ptr([T]))`.
    Alloc,
    /// `[mem, ptr]`: type `(mem, T)`.
    Load,
    /// `[mem, ptr, value]`: type `mem`.
    Store,
    /// `[x]`: whether `x` is known at compile time (folds to `true` for constants; the
    /// partial evaluator decides the rest).
    Known,
    /// `[x]`: `x`, marked to be evaluated at compile time.
    Run,
    /// `[x]`: `x`, marked to stop partial evaluation.
    Hlt,
}

impl Node {
    /// Whether defs of this node are nominal (never hash-consed).
    pub fn is_nominal(self) -> bool {
        matches!(self, Node::Cont | Node::Global { .. })
    }

    /// Whether the node reads or writes memory (takes a `mem` operand first).
    pub fn is_effect(self) -> bool {
        matches!(self, Node::Slot | Node::Alloc | Node::Load | Node::Store)
    }

    /// The node's name in the text form (nominals and literals have none).
    pub fn name(self) -> &'static str {
        match self {
            Node::Lit(_) => "lit",
            Node::Bottom => "bot",
            Node::Param(_) => "param",
            Node::Cont => "cont",
            Node::Global { .. } => "global",
            Node::Arith(op) => op.name(),
            Node::Cmp(op) => op.name(),
            Node::Select => "select",
            Node::Conv => "conv",
            Node::Bitcast => "bitcast",
            Node::Tuple => "tuple",
            Node::Struct => "struct",
            Node::Array => "array",
            Node::Extract => "extract",
            Node::Insert => "insert",
            Node::Lea => "lea",
            Node::Slot => "slot",
            Node::Alloc => "alloc",
            Node::Load => "load",
            Node::Store => "store",
            Node::Known => "known",
            Node::Run => "run",
            Node::Hlt => "hlt",
        }
    }

    /// The operation with text-form name `name`, for nodes written as `name(operands)`.
    pub fn from_name(name: &str) -> Option<Node> {
        if let Some(op) = ArithOp::ALL.into_iter().find(|o| o.name() == name) {
            return Some(Node::Arith(op));
        }
        if let Some(op) = CmpOp::ALL.into_iter().find(|o| o.name() == name) {
            return Some(Node::Cmp(op));
        }
        Some(match name {
            "select" => Node::Select,
            "conv" => Node::Conv,
            "bitcast" => Node::Bitcast,
            "tuple" => Node::Tuple,
            "struct" => Node::Struct,
            "array" => Node::Array,
            "extract" => Node::Extract,
            "insert" => Node::Insert,
            "lea" => Node::Lea,
            "slot" => Node::Slot,
            "alloc" => Node::Alloc,
            "load" => Node::Load,
            "store" => Node::Store,
            "known" => Node::Known,
            "run" => Node::Run,
            "hlt" => Node::Hlt,
            _ => return None,
        })
    }
}
