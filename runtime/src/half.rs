//! Half-precision conversions for code generators without an `f16` type.
//!
//! A back end that keeps `f16` values as their 16 bits computes in `f32` and rounds back
//! through these (one rounding each, to nearest even, as the interpreter does).

use half::f16;

/// The `f32` value of the half float with bits `x` (exact).
#[no_mangle]
pub extern "C" fn durin_f16_to_f32(x: u16) -> f32 {
    f16::from_bits(x).to_f32()
}

/// The bits of `x` rounded to a half float.
#[no_mangle]
pub extern "C" fn durin_f32_to_f16(x: f32) -> u16 {
    f16::from_f32(x).to_bits()
}

/// The bits of `x` rounded once to a half float.
#[no_mangle]
pub extern "C" fn durin_f64_to_f16(x: f64) -> u16 {
    f16::from_f64(x).to_bits()
}

crate::symbol_table!(durin_f16_to_f32, durin_f32_to_f16, durin_f64_to_f16);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_round_to_nearest_even() {
        // 1 + 2^-11 lies halfway between 1 and the next half float 1 + 2^-10: ties to even.
        assert_eq!(durin_f32_to_f16(1.0 + 2f32.powi(-11)), 0x3c00);
        assert_eq!(durin_f64_to_f16(1.0 + 3.0 * 2f64.powi(-11)), 0x3c02);
        assert_eq!(durin_f16_to_f32(0xc000), -2.0);
        assert_eq!(durin_f32_to_f16(65520.0), 0x7c00); // rounds to infinity
    }
}
