//! Definitions: the nodes of the graph.
//!
//! Every value, continuation and global is a *def*, addressed by a [`Def`] key. A def is a
//! [`Node`] (what it computes), a result [`Type`](crate::Type) and a list of operand defs.
//! Structural defs are hash-consed by `(node, type, operands)`; continuations and globals are
//! nominal (each one is distinct, and a continuation's operands can change after creation).

use std::fmt;

/// A def: a small copyable key into the arena of a [`World`](crate::World).
///
/// Keys are dense indices in creation order: a world never removes a def (passes that
/// drop dead code build a new world), so keys need no generation counter, stay four bytes,
/// and per-def side tables ([`DefMap`]) are plain vectors.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Def(u32);

impl Def {
    /// The key's index in its world's arena.
    pub fn index(self) -> usize {
        self.0 as usize
    }

    pub(crate) fn from_index(i: usize) -> Def {
        Def(u32::try_from(i).expect("more than 2^32 defs"))
    }
}

impl fmt::Debug for Def {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "d{}", self.0)
    }
}

/// A side table from defs to values, for per-pass facts (dense: one slot per def index up
/// to the largest key inserted).
#[derive(Clone, Debug)]
pub struct DefMap<V> {
    slots: Vec<Option<V>>,
}

impl<V> Default for DefMap<V> {
    fn default() -> Self {
        DefMap { slots: Vec::new() }
    }
}

impl<V> DefMap<V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the value of `d`, returning the old one.
    pub fn insert(&mut self, d: Def, v: V) -> Option<V> {
        let i = d.index();
        if i >= self.slots.len() {
            self.slots.resize_with(i + 1, || None);
        }
        self.slots[i].replace(v)
    }

    /// The value of `d`.
    pub fn get(&self, d: Def) -> Option<&V> {
        self.slots.get(d.index()).and_then(|s| s.as_ref())
    }

    /// The value of `d`, mutably.
    pub fn get_mut(&mut self, d: Def) -> Option<&mut V> {
        self.slots.get_mut(d.index()).and_then(|s| s.as_mut())
    }

    /// Whether `d` has a value.
    pub fn contains_key(&self, d: Def) -> bool {
        self.get(d).is_some()
    }

    /// Every `(def, value)`, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (Def, &V)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|v| (Def::from_index(i), v)))
    }

    /// Every `(def, value)`, in key order, the values mutable.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (Def, &mut V)> {
        self.slots
            .iter_mut()
            .enumerate()
            .filter_map(|(i, s)| s.as_mut().map(|v| (Def::from_index(i), v)))
    }
}

impl<V> std::ops::Index<Def> for DefMap<V> {
    type Output = V;
    fn index(&self, d: Def) -> &V {
        self.get(d).expect("def has no value in this map")
    }
}

impl<V> std::ops::IndexMut<Def> for DefMap<V> {
    fn index_mut(&mut self, d: Def) -> &mut V {
        self.get_mut(d).expect("def has no value in this map")
    }
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
    /// A constant array of bytes, `[u8 * n]`: blob number `.0` of the world
    /// ([`crate::World::bytes`]). One node stands for what would be an array of `n` byte
    /// literals (a kernel module's text, a string), so that passes see one operand-free
    /// constant instead of a list of `n` operands.
    Bytes(u32),
    /// An undefined value of any type. Jumping to bottom is an error at run time.
    Bottom,
    /// The kernel-launch intrinsic, a continuation of type
    /// `cn(mem, i32, (i32, i32, i32), (i32, i32, i32), cn(mem, T.., cn(mem)), T.., cn(mem))`:
    /// a jump to it runs the kernel (argument 4) on device (argument 1) for a grid of
    /// argument 2 threads in blocks of argument 3, passing the captured values `T..`, then
    /// continues at the last argument. [`crate::Launch`] names the arguments.
    Launch,
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

    /// Whether defs of this node are constants without operands that the text form writes
    /// in place: literals, byte strings, bottom and the launch intrinsic.
    pub fn is_constant_leaf(self) -> bool {
        matches!(
            self,
            Node::Lit(_) | Node::Bytes(_) | Node::Bottom | Node::Launch
        )
    }

    /// Whether the node reads or writes memory (takes a `mem` operand first).
    pub fn is_effect(self) -> bool {
        matches!(self, Node::Slot | Node::Alloc | Node::Load | Node::Store)
    }

    /// The node's name in the text form (nominals and literals have none).
    pub fn name(self) -> &'static str {
        match self {
            Node::Lit(_) => "lit",
            Node::Bytes(_) => "bytes",
            Node::Bottom => "bot",
            Node::Launch => "launch",
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
