//! An independent reference for [`Expr`]: evaluates an expression on Rust's own typed values
//! (`i8`, `u16`, `f32`, `half::f16`, ...) with Rust's operators and `as` casts, without
//! building IR or calling `durin_ir::semantics`.

use durin_ir::strategy::{bitcast_source, canonical_nan, Expr, EXPR_TYPES};
use durin_ir::{ArithOp, CmpOp};
use half::f16;

/// Integer division or remainder by zero.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Trap;

#[derive(Clone, Copy, Debug)]
enum V {
    Bool(bool),
    I8(i8),
    U8(u8),
    I16(i16),
    U16(u16),
    F16(f16),
    I32(i32),
    U32(u32),
    F32(f32),
    I64(i64),
    U64(u64),
    F64(f64),
}

/// Applies `$body` to the typed value inside `$v`, bound as `$x`.
macro_rules! each {
    ($v:expr, $x:ident => $body:expr) => {
        match $v {
            V::Bool($x) => $body,
            V::I8($x) => $body,
            V::U8($x) => $body,
            V::I16($x) => $body,
            V::U16($x) => $body,
            V::F16($x) => $body,
            V::I32($x) => $body,
            V::U32($x) => $body,
            V::F32($x) => $body,
            V::I64($x) => $body,
            V::U64($x) => $body,
            V::F64($x) => $body,
        }
    };
}

impl V {
    /// The value of type number `t` whose bits are the low bits of `b`.
    fn from_bits(t: usize, b: u64) -> V {
        match EXPR_TYPES[t] {
            "bool" => V::Bool(b & 1 == 1),
            "i8" => V::I8(b as u8 as i8),
            "u8" => V::U8(b as u8),
            "i16" => V::I16(b as u16 as i16),
            "u16" => V::U16(b as u16),
            "f16" => V::F16(f16::from_bits(b as u16)),
            "i32" => V::I32(b as u32 as i32),
            "u32" => V::U32(b as u32),
            "f32" => V::F32(f32::from_bits(b as u32)),
            "i64" => V::I64(b as i64),
            "u64" => V::U64(b),
            "f64" => V::F64(f64::from_bits(b)),
            other => unreachable!("type {other}"),
        }
    }

    /// The value's bits, zero-extended.
    fn bits(self) -> u64 {
        match self {
            V::Bool(x) => x as u64,
            V::I8(x) => x as u8 as u64,
            V::U8(x) => x as u64,
            V::I16(x) => x as u16 as u64,
            V::U16(x) => x as u64,
            V::F16(x) => x.to_bits() as u64,
            V::I32(x) => x as u32 as u64,
            V::U32(x) => x as u64,
            V::F32(x) => x.to_bits() as u64,
            V::I64(x) => x as u64,
            V::U64(x) => x,
            V::F64(x) => x.to_bits(),
        }
    }

    /// The value converted to type number `t` as Rust's `as` converts (floats to integers
    /// saturate, NaN to 0); anything to `bool` is "not zero".
    fn convert(self, t: usize) -> V {
        if t == 0 {
            return V::Bool(!each!(self, x => is_zero(x)));
        }
        // Every source goes through a typed intermediate that holds it exactly: i128 for
        // integers and bool, f64 for floats (f16 and f32 are exact in f64).
        enum Wide {
            Int(i128),
            Float(f64),
        }
        let w = match self {
            V::Bool(x) => Wide::Int(x as i128),
            V::I8(x) => Wide::Int(x as i128),
            V::U8(x) => Wide::Int(x as i128),
            V::I16(x) => Wide::Int(x as i128),
            V::U16(x) => Wide::Int(x as i128),
            V::I32(x) => Wide::Int(x as i128),
            V::U32(x) => Wide::Int(x as i128),
            V::I64(x) => Wide::Int(x as i128),
            V::U64(x) => Wide::Int(x as i128),
            V::F16(x) => Wide::Float(x.to_f64()),
            V::F32(x) => Wide::Float(x as f64),
            V::F64(x) => Wide::Float(x),
        };
        macro_rules! to {
            ($ty:ty) => {
                match w {
                    Wide::Int(i) => i as $ty,
                    Wide::Float(f) => f as $ty,
                }
            };
        }
        match EXPR_TYPES[t] {
            "i8" => V::I8(to!(i8)),
            "u8" => V::U8(to!(u8)),
            "i16" => V::I16(to!(i16)),
            "u16" => V::U16(to!(u16)),
            "i32" => V::I32(to!(i32)),
            "u32" => V::U32(to!(u32)),
            "i64" => V::I64(to!(i64)),
            "u64" => V::U64(to!(u64)),
            // An i128 to f32 rounds once, as an i64 or u64 to f32 does.
            "f32" => V::F32(to!(f32)),
            "f64" => V::F64(to!(f64)),
            // Integers that fit f16's range are exact in f64; larger ones overflow either way.
            "f16" => V::F16(f16::from_f64(to!(f64))),
            other => unreachable!("type {other}"),
        }
    }
}

trait Zero {
    const ZERO: Self;
}
macro_rules! zero {
    ($($t:ty = $z:expr),*) => { $(impl Zero for $t { const ZERO: Self = $z; })* };
}
zero!(
    bool = false,
    i8 = 0,
    u8 = 0,
    i16 = 0,
    u16 = 0,
    i32 = 0,
    u32 = 0,
    i64 = 0,
    u64 = 0,
    f16 = f16::ZERO,
    f32 = 0.0,
    f64 = 0.0
);

fn is_zero<T: Zero + PartialEq>(x: T) -> bool {
    x == T::ZERO
}

/// `x op y` with Rust's comparison operators.
pub fn compare<T: PartialOrd>(op: CmpOp, x: T, y: T) -> bool {
    match op {
        CmpOp::Eq => x == y,
        CmpOp::Ne => x != y,
        CmpOp::Lt => x < y,
        CmpOp::Le => x <= y,
        CmpOp::Gt => x > y,
        CmpOp::Ge => x >= y,
    }
}

fn arith(op: ArithOp, x: V, y: V) -> Result<V, Trap> {
    macro_rules! int {
        ($c:path, $a:expr, $b:expr) => {{
            let (a, b) = ($a, $b);
            $c(match op {
                ArithOp::Add => a.wrapping_add(b),
                ArithOp::Sub => a.wrapping_sub(b),
                ArithOp::Mul => a.wrapping_mul(b),
                ArithOp::Div | ArithOp::Rem if b == 0 => return Err(Trap),
                ArithOp::Div => a.wrapping_div(b),
                ArithOp::Rem => a.wrapping_rem(b),
                ArithOp::And => a & b,
                ArithOp::Or => a | b,
                ArithOp::Xor => a ^ b,
                // Shift amounts are taken modulo the width, as `wrapping_shl` does.
                ArithOp::Shl => a.wrapping_shl(b as u32),
                ArithOp::Shr => a.wrapping_shr(b as u32),
            })
        }};
    }
    macro_rules! float {
        ($c:path, $a:expr, $b:expr) => {{
            let (a, b) = ($a, $b);
            $c(match op {
                ArithOp::Add => a + b,
                ArithOp::Sub => a - b,
                ArithOp::Mul => a * b,
                ArithOp::Div => a / b,
                ArithOp::Rem => a % b,
                other => unreachable!("{other:?} on a float"),
            })
        }};
    }
    Ok(match (x, y) {
        (V::Bool(a), V::Bool(b)) => V::Bool(match op {
            ArithOp::And => a & b,
            ArithOp::Or => a | b,
            ArithOp::Xor => a ^ b,
            other => unreachable!("{other:?} on bool"),
        }),
        (V::I8(a), V::I8(b)) => int!(V::I8, a, b),
        (V::U8(a), V::U8(b)) => int!(V::U8, a, b),
        (V::I16(a), V::I16(b)) => int!(V::I16, a, b),
        (V::U16(a), V::U16(b)) => int!(V::U16, a, b),
        (V::I32(a), V::I32(b)) => int!(V::I32, a, b),
        (V::U32(a), V::U32(b)) => int!(V::U32, a, b),
        (V::I64(a), V::I64(b)) => int!(V::I64, a, b),
        (V::U64(a), V::U64(b)) => int!(V::U64, a, b),
        (V::F16(a), V::F16(b)) => float!(V::F16, a, b),
        (V::F32(a), V::F32(b)) => float!(V::F32, a, b),
        (V::F64(a), V::F64(b)) => float!(V::F64, a, b),
        (a, b) => unreachable!("{a:?} {op:?} {b:?}"),
    })
}

fn cmp(op: CmpOp, x: V, y: V) -> bool {
    match (x, y) {
        (V::Bool(a), V::Bool(b)) => compare(op, a, b),
        (V::I8(a), V::I8(b)) => compare(op, a, b),
        (V::U8(a), V::U8(b)) => compare(op, a, b),
        (V::I16(a), V::I16(b)) => compare(op, a, b),
        (V::U16(a), V::U16(b)) => compare(op, a, b),
        (V::I32(a), V::I32(b)) => compare(op, a, b),
        (V::U32(a), V::U32(b)) => compare(op, a, b),
        (V::I64(a), V::I64(b)) => compare(op, a, b),
        (V::U64(a), V::U64(b)) => compare(op, a, b),
        (V::F16(a), V::F16(b)) => compare(op, a, b),
        (V::F32(a), V::F32(b)) => compare(op, a, b),
        (V::F64(a), V::F64(b)) => compare(op, a, b),
        (a, b) => unreachable!("{a:?} {op:?} {b:?}"),
    }
}

struct Eval<'a> {
    args: &'a [u64],
}

impl Eval<'_> {
    /// `e` at type number `t`, replacing operations that do not apply to the type exactly as
    /// `ExprProgram::build` does.
    fn eval(&self, e: &Expr, t: usize) -> Result<V, Trap> {
        let n = EXPR_TYPES.len();
        let is_float = EXPR_TYPES[t].starts_with('f');
        match e {
            Expr::Lit(b) => Ok(V::from_bits(t, *b)),
            Expr::Var(second) => Ok(V::from_bits(
                t,
                self.args[(2 * t + *second as usize) % self.args.len()],
            )),
            Expr::Arith(op, a, b) => {
                let op = match (t, is_float) {
                    (0, _) if !op.is_bool_op() => ArithOp::Xor,
                    (_, true) if !op.is_float_op() => ArithOp::Sub,
                    _ => *op,
                };
                let (x, y) = (self.eval(a, t), self.eval(b, t));
                arith(op, x?, y?)
            }
            Expr::Cmp(op, u, a, b) if t == 0 => {
                let u = *u as usize % n;
                let (x, y) = (self.eval(a, u), self.eval(b, u));
                Ok(V::Bool(cmp(*op, x?, y?)))
            }
            Expr::Known(_, a) if t == 0 && matches!(**a, Expr::Lit(_) | Expr::Var(_)) => {
                Ok(V::Bool(matches!(**a, Expr::Lit(_))))
            }
            Expr::Cmp(_, _, a, _) | Expr::Known(_, a) => self.eval(a, t),
            Expr::Select(c, a, b) => {
                let (c, x, y) = (self.eval(c, 0)?, self.eval(a, t)?, self.eval(b, t)?);
                Ok(if matches!(c, V::Bool(true)) { x } else { y })
            }
            Expr::Conv(u, a) => Ok(self.eval(a, *u as usize % n)?.convert(t)),
            Expr::Bitcast(a) if t == 0 => self.eval(a, 0),
            Expr::Bitcast(a) => {
                // As `ExprProgram` builds it: a NaN is made canonical first.
                let from = bitcast_source(t);
                let x = self.eval(a, from)?;
                // For every type of value: only a float NaN differs from itself.
                #[allow(clippy::eq_op)]
                let nan = each!(x, v => v != v);
                let bits = match canonical_nan(from) {
                    Some(c) if nan => c,
                    _ => x.bits(),
                };
                Ok(V::from_bits(t, bits))
            }
            Expr::Tuple(a, b, v, i, j) => {
                let (x, y, v) = (self.eval(a, t)?, self.eval(b, t)?, self.eval(v, t)?);
                Ok(if i == j {
                    v
                } else if *j {
                    y
                } else {
                    x
                })
            }
            Expr::Byte(bytes, a) => {
                let V::U64(i) = self.eval(a, 10)? else {
                    unreachable!("type number 10 is u64")
                };
                Ok(V::U8(bytes[(i % bytes.len() as u64) as usize]).convert(t))
            }
        }
    }
}

/// The bits of `e` evaluated at type number `ty` with the arguments `args` (two per type, as
/// `ExprProgram::run` takes them), or the trap it raises. Every operand is evaluated, as in
/// a data-flow graph: a trap anywhere in the expression is the expression's trap.
pub fn eval(e: &Expr, ty: u8, args: &[u64]) -> Result<u64, Trap> {
    let t = ty as usize % EXPR_TYPES.len();
    Eval { args }.eval(e, t).map(V::bits)
}
