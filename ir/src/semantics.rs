//! The meaning of primitive operations on raw bits.
//!
//! Literals and interpreter values of `bool`, integer and float types are carried as `u64`
//! bit patterns, zero-extended from the type's width. This module is the single definition
//! of what arithmetic, comparisons and conversions do on them; constant folding and the
//! interpreter both call it, and its tests check it against Rust's native typed operations.

use crate::def::{ArithOp, CmpOp};
use crate::types::TypeKind;
use half::f16;

/// A primitive type, as far as its bits are concerned.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Prim {
    /// `bool`: bit 0.
    Bool,
    /// An integer of `bits` bits.
    Int {
        /// Width.
        bits: u8,
        /// Signedness.
        signed: bool,
    },
    /// A float of `bits` bits.
    Float {
        /// Width: 16, 32 or 64.
        bits: u8,
    },
}

impl Prim {
    /// The primitive named `name` (`bool`, `i8`..`i64`, `u8`..`u64`, `f16`..`f64`).
    pub fn from_name(name: &str) -> Option<Prim> {
        let bits = |s: &str| s.parse::<u8>().ok();
        let p = match name.split_at_checked(1)? {
            (_, _) if name == "bool" => Prim::Bool,
            ("i", n) => Prim::Int {
                bits: bits(n)?,
                signed: true,
            },
            ("u", n) => Prim::Int {
                bits: bits(n)?,
                signed: false,
            },
            ("f", n) => Prim::Float { bits: bits(n)? },
            _ => return None,
        };
        let ok = match p {
            Prim::Bool => true,
            Prim::Int { bits, .. } => matches!(bits, 8 | 16 | 32 | 64),
            Prim::Float { bits } => matches!(bits, 16 | 32 | 64),
        };
        (ok && p.name() == name).then_some(p)
    }

    /// The primitive's name, as written in the IR text form and in the language.
    pub fn name(self) -> &'static str {
        match self {
            Prim::Bool => "bool",
            Prim::Int {
                bits: 8,
                signed: true,
            } => "i8",
            Prim::Int {
                bits: 16,
                signed: true,
            } => "i16",
            Prim::Int {
                bits: 32,
                signed: true,
            } => "i32",
            Prim::Int {
                bits: 64,
                signed: true,
            } => "i64",
            Prim::Int {
                bits: 8,
                signed: false,
            } => "u8",
            Prim::Int {
                bits: 16,
                signed: false,
            } => "u16",
            Prim::Int {
                bits: 32,
                signed: false,
            } => "u32",
            Prim::Int {
                bits: _,
                signed: false,
            } => "u64",
            Prim::Int { .. } => "i64",
            Prim::Float { bits: 16 } => "f16",
            Prim::Float { bits: 32 } => "f32",
            Prim::Float { .. } => "f64",
        }
    }

    /// The primitive behind a type kind, if it is one.
    pub fn of(kind: &TypeKind) -> Option<Prim> {
        match *kind {
            TypeKind::Bool => Some(Prim::Bool),
            TypeKind::Int { bits, signed } => Some(Prim::Int { bits, signed }),
            TypeKind::Float { bits } => Some(Prim::Float { bits }),
            _ => None,
        }
    }

    /// Width in bits.
    pub fn bits(self) -> u32 {
        match self {
            Prim::Bool => 1,
            Prim::Int { bits, .. } | Prim::Float { bits } => bits as u32,
        }
    }
}

/// A run-time error of a primitive operation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Trap {
    /// Integer division or remainder by zero.
    DivisionByZero,
}

/// `v` truncated to its low `bits` bits.
#[inline]
pub fn mask(bits: u32, v: u64) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

/// The low `bits` bits of `v`, sign-extended.
#[inline]
pub fn sext(bits: u32, v: u64) -> i64 {
    let shift = 64 - bits;
    ((v << shift) as i64) >> shift
}

/// A float's bits as an `f64` (exact for every width).
pub fn float_value(bits: u8, v: u64) -> f64 {
    match bits {
        16 => f16::from_bits(v as u16).to_f64(),
        32 => f32::from_bits(v as u32) as f64,
        _ => f64::from_bits(v),
    }
}

/// The bits of `x` rounded to a float of `bits` bits (round to nearest even).
pub fn float_bits(bits: u8, x: f64) -> u64 {
    match bits {
        16 => f16::from_f64(x).to_bits() as u64,
        32 => (x as f32).to_bits() as u64,
        _ => x.to_bits(),
    }
}

/// `a op b` for operands of primitive type `prim`.
#[inline]
pub fn arith(op: ArithOp, prim: Prim, a: u64, b: u64) -> Result<u64, Trap> {
    match prim {
        Prim::Bool => Ok(match op {
            ArithOp::And => a & b,
            ArithOp::Or => a | b,
            ArithOp::Xor => a ^ b,
            _ => a, // not well-typed; the verifier rejects it
        } & 1),
        Prim::Int { bits, signed } => int_arith(op, bits as u32, signed, a, b),
        Prim::Float { bits } => Ok(float_arith(op, bits, a, b)),
    }
}

fn int_arith(op: ArithOp, bits: u32, signed: bool, a: u64, b: u64) -> Result<u64, Trap> {
    let (sa, sb) = (sext(bits, a), sext(bits, b));
    let r = match op {
        ArithOp::Add => a.wrapping_add(b),
        ArithOp::Sub => a.wrapping_sub(b),
        ArithOp::Mul => a.wrapping_mul(b),
        ArithOp::Div | ArithOp::Rem if mask(bits, b) == 0 => return Err(Trap::DivisionByZero),
        ArithOp::Div if signed => sa.wrapping_div(sb) as u64,
        ArithOp::Div => mask(bits, a) / mask(bits, b),
        ArithOp::Rem if signed => sa.wrapping_rem(sb) as u64,
        ArithOp::Rem => mask(bits, a) % mask(bits, b),
        ArithOp::And => a & b,
        ArithOp::Or => a | b,
        ArithOp::Xor => a ^ b,
        ArithOp::Shl => a << (b % bits as u64),
        ArithOp::Shr if signed => (sa >> (b % bits as u64)) as u64,
        ArithOp::Shr => mask(bits, a) >> (b % bits as u64),
    };
    Ok(mask(bits, r))
}

fn float_arith(op: ArithOp, bits: u8, a: u64, b: u64) -> u64 {
    // f16 is computed in f32: every f16 sum, product, quotient and remainder rounded once to
    // f32 and again to f16 equals the correctly rounded f16 result (f32 has more than
    // 2 * 11 + 2 significand bits).
    macro_rules! go {
        ($x:expr, $y:expr) => {
            match op {
                ArithOp::Add => $x + $y,
                ArithOp::Sub => $x - $y,
                ArithOp::Mul => $x * $y,
                ArithOp::Div => $x / $y,
                ArithOp::Rem => $x % $y,
                _ => $x, // not well-typed; the verifier rejects it
            }
        };
    }
    match bits {
        16 => {
            let (x, y) = (
                f16::from_bits(a as u16).to_f32(),
                f16::from_bits(b as u16).to_f32(),
            );
            f16::from_f32(go!(x, y)).to_bits() as u64
        }
        32 => {
            let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
            go!(x, y).to_bits() as u64
        }
        _ => go!(f64::from_bits(a), f64::from_bits(b)).to_bits(),
    }
}

/// `a op b` for operands of primitive type `prim`.
#[inline]
pub fn cmp(op: CmpOp, prim: Prim, a: u64, b: u64) -> bool {
    use std::cmp::Ordering;
    let ord = match prim {
        Prim::Bool => Some((a & 1).cmp(&(b & 1))),
        Prim::Int { bits, signed: true } => Some(sext(bits as u32, a).cmp(&sext(bits as u32, b))),
        Prim::Int {
            bits,
            signed: false,
        } => Some(mask(bits as u32, a).cmp(&mask(bits as u32, b))),
        Prim::Float { bits } => float_value(bits, a).partial_cmp(&float_value(bits, b)),
    };
    match (op, ord) {
        (CmpOp::Ne, None) => true,
        (_, None) => false,
        (CmpOp::Eq, Some(o)) => o == Ordering::Equal,
        (CmpOp::Ne, Some(o)) => o != Ordering::Equal,
        (CmpOp::Lt, Some(o)) => o == Ordering::Less,
        (CmpOp::Le, Some(o)) => o != Ordering::Greater,
        (CmpOp::Gt, Some(o)) => o == Ordering::Greater,
        (CmpOp::Ge, Some(o)) => o != Ordering::Less,
    }
}

/// The 64-bit address an integer of type `from` converts to (widened by its sign).
pub fn address(from: Prim, v: u64) -> u64 {
    let u64 = Prim::Int {
        bits: 64,
        signed: false,
    };
    conv(from, u64, v)
}

/// Numeric conversion of `v` from `from` to `to`. Integers are sign- or zero-extended by the
/// source's signedness; float-to-int truncates toward zero and saturates, NaN gives 0;
/// anything to `bool` is `v != 0`.
#[inline]
pub fn conv(from: Prim, to: Prim, v: u64) -> u64 {
    match (from, to) {
        (_, Prim::Bool) => match from {
            Prim::Float { bits } => (float_value(bits, v) != 0.0) as u64,
            _ => (mask(from.bits(), v) != 0) as u64,
        },
        (Prim::Bool, Prim::Int { bits, .. }) => mask(bits as u32, v & 1),
        (Prim::Bool, Prim::Float { bits }) => float_bits(bits, (v & 1) as f64),
        (Prim::Int { bits: fb, signed }, Prim::Int { bits, .. }) => {
            let wide = if signed {
                sext(fb as u32, v) as u64
            } else {
                mask(fb as u32, v)
            };
            mask(bits as u32, wide)
        }
        (Prim::Int { bits: fb, signed }, Prim::Float { bits }) => {
            // i64/u64 to f64 rounds once; to f32 Rust's `as` rounds once from the integer;
            // to f16, every integer that does not overflow f16 is exact in f64.
            match bits {
                32 if signed => (sext(fb as u32, v) as f32).to_bits() as u64,
                32 => (mask(fb as u32, v) as f32).to_bits() as u64,
                _ if signed => float_bits(bits, sext(fb as u32, v) as f64),
                _ => float_bits(bits, mask(fb as u32, v) as f64),
            }
        }
        (Prim::Float { bits: fb }, Prim::Int { bits, signed }) => {
            let x = float_value(fb, v);
            let bits = bits as u32;
            if signed {
                let (lo, hi) = (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1);
                mask(bits, ((x as i128).clamp(lo, hi)) as u64)
            } else {
                let hi = (1u128 << bits) - 1;
                mask(bits, (x as u128).min(hi) as u64)
            }
        }
        (Prim::Float { bits: fb }, Prim::Float { bits }) => float_bits(bits, float_value(fb, v)),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn primitive_names_round_trip() {
        let names = [
            "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64",
        ];
        for n in names {
            assert_eq!(Prim::from_name(n).map(Prim::name), Some(n));
        }
        for bad in ["", "i", "i1", "u128", "f8", "b", "i032", "bool8", "é"] {
            assert_eq!(Prim::from_name(bad), None, "{bad}");
        }
    }

    use super::*;

    const I32: Prim = Prim::Int {
        bits: 32,
        signed: true,
    };
    const U8: Prim = Prim::Int {
        bits: 8,
        signed: false,
    };
    const I8: Prim = Prim::Int {
        bits: 8,
        signed: true,
    };
    const F32: Prim = Prim::Float { bits: 32 };

    fn samples_i8() -> impl Iterator<Item = i8> {
        (i8::MIN..=i8::MAX)
            .step_by(7)
            .chain([i8::MIN, -1, 0, 1, i8::MAX])
    }

    #[test]
    fn i8_arithmetic_matches_native_wrapping_ops() {
        for a in samples_i8() {
            for b in samples_i8() {
                let (ua, ub) = (a as u8 as u64, b as u8 as u64);
                let run = |op| arith(op, I8, ua, ub).map(|r| r as u8 as i8);
                assert_eq!(run(ArithOp::Add), Ok(a.wrapping_add(b)));
                assert_eq!(run(ArithOp::Sub), Ok(a.wrapping_sub(b)));
                assert_eq!(run(ArithOp::Mul), Ok(a.wrapping_mul(b)));
                assert_eq!(run(ArithOp::Shl), Ok(a.wrapping_shl(b as u32 % 8)));
                assert_eq!(run(ArithOp::Shr), Ok(a.wrapping_shr(b as u32 % 8)));
                if b == 0 {
                    assert_eq!(run(ArithOp::Div), Err(Trap::DivisionByZero));
                } else {
                    assert_eq!(run(ArithOp::Div), Ok(a.wrapping_div(b)));
                    assert_eq!(run(ArithOp::Rem), Ok(a.wrapping_rem(b)));
                }
                let (x, y) = (a as u8, b as u8);
                let urun = |op| arith(op, U8, ua, ub).map(|r| r as u8);
                assert_eq!(urun(ArithOp::Shr), Ok(x >> (y % 8)));
                if let (Some(q), Some(r)) = (x.checked_div(y), x.checked_rem(y)) {
                    assert_eq!(urun(ArithOp::Div), Ok(q));
                    assert_eq!(urun(ArithOp::Rem), Ok(r));
                }
                assert_eq!(cmp(CmpOp::Lt, I8, ua, ub), a < b);
                assert_eq!(cmp(CmpOp::Lt, U8, ua, ub), x < y);
                assert_eq!(cmp(CmpOp::Ge, I8, ua, ub), a >= b);
            }
        }
    }

    #[test]
    fn float_ops_match_native_f32() {
        let xs = [
            0.0f32,
            -0.0,
            1.5,
            -3.25,
            f32::INFINITY,
            f32::NAN,
            1e-40,
            3.0e38,
        ];
        for &a in &xs {
            for &b in &xs {
                let (ua, ub) = (a.to_bits() as u64, b.to_bits() as u64);
                let f = |op| f32::from_bits(arith(op, F32, ua, ub).unwrap() as u32);
                assert_eq!(f(ArithOp::Add).to_bits(), (a + b).to_bits());
                assert_eq!(f(ArithOp::Div).to_bits(), (a / b).to_bits());
                assert_eq!(f(ArithOp::Rem).to_bits(), (a % b).to_bits());
                assert_eq!(cmp(CmpOp::Lt, F32, ua, ub), a < b);
                assert_eq!(cmp(CmpOp::Ne, F32, ua, ub), a != b);
                assert_eq!(cmp(CmpOp::Eq, F32, ua, ub), a == b);
            }
        }
    }

    #[test]
    fn conversions_match_native_casts() {
        for x in [-1e10f64, -129.7, -1.5, -0.0, 0.7, 200.9, 1e10, f64::NAN] {
            let bits = x.to_bits();
            let to_i8 = conv(Prim::Float { bits: 64 }, I8, bits) as u8 as i8;
            assert_eq!(to_i8, x as i8, "{x} as i8");
            let to_u8 = conv(Prim::Float { bits: 64 }, U8, bits) as u8;
            assert_eq!(to_u8, x as u8, "{x} as u8");
            let to_f32 = conv(Prim::Float { bits: 64 }, F32, bits) as u32;
            assert_eq!(to_f32, (x as f32).to_bits());
        }
        assert_eq!(conv(I8, I32, 0xff) as u32 as i32, -1);
        assert_eq!(conv(U8, I32, 0xff), 255);
        assert_eq!(conv(I32, I8, 0x1_23), 0x23);
        assert_eq!(
            conv(I32, F32, (-7i32) as u32 as u64) as u32,
            (-7.0f32).to_bits()
        );
        assert_eq!(conv(I32, Prim::Bool, 4), 1);
        // 1 + 2^-11 lies halfway between the f16 values 1.0 (0x3c00) and 1 + 2^-10
        // (0x3c01): ties go to the even one. 1 + 3 * 2^-11 rounds up to 0x3c02.
        let f16_of = |bits: u32| conv(F32, Prim::Float { bits: 16 }, bits as u64);
        assert_eq!(f16_of(0x3f80_1000), 0x3c00);
        assert_eq!(f16_of(0x3f80_3000), 0x3c02);
    }
}
