//! The runtime functions the interpreter provides, as AnyDSL's runtime does natively.

use super::memory::{BlockState, Pointer};
use super::{Interp, Target, Value};
use crate::def::Def;

impl Interp<'_, '_> {
    /// The runtime functions a program may import, as AnyDSL's runtime provides them.
    pub(super) fn call_import(
        &mut self,
        name: &str,
        args: &[Value],
        at: Def,
    ) -> Result<Vec<Value>, String> {
        let bits = |i: usize| match args.get(i) {
            Some(Value::Bits(b)) => Ok(*b),
            _ => Err(format!("`{name}` expects a number as argument {i}")),
        };
        let ptr = |i: usize| match args.get(i) {
            Some(Value::Ptr(p)) => Ok(p.clone()),
            _ => Err(format!("`{name}` expects a pointer as argument {i}")),
        };
        // AnyDSL's runtime names its C functions `anydsl_*`.
        let short = name.strip_prefix("anydsl_").unwrap_or(name);
        if let Some(r) = math(short, args) {
            return r.map(|v| vec![Value::Bits(v)]);
        }
        match short {
            "print_i16" => self.out.extend_from_slice((bits(0)? as u16 as i16).to_string().as_bytes()),
            "print_u16" => self.out.extend_from_slice((bits(0)? as u16).to_string().as_bytes()),
            "print_i32" => self.out.extend_from_slice((bits(0)? as u32 as i32).to_string().as_bytes()),
            "print_i64" => self.out.extend_from_slice((bits(0)? as i64).to_string().as_bytes()),
            "print_u32" => self.out.extend_from_slice((bits(0)? as u32).to_string().as_bytes()),
            "print_u64" => self.out.extend_from_slice(bits(0)?.to_string().as_bytes()),
            "print_f32" => {
                let x = f32::from_bits(bits(0)? as u32) as f64;
                self.out.extend_from_slice(format_general(x, 6).as_bytes())
            }
            "print_f64" => self.out.extend_from_slice(format_general(f64::from_bits(bits(0)?), 6).as_bytes()),
            "print_char" => self.out.push(bits(0)? as u8),
            "print_string" => {
                let bytes = self.memory.c_string(&ptr(0)?)?;
                self.out.extend_from_slice(&bytes);
            }
            "print_flush" | "durin_vectorize_hint" | "durin_store_fence" => {}
            // Allocations start at a multiple of 64 bytes, as the native runtime's do.
            "durin_aligned" | "durin_assume_aligned" => {
                let (p, n) = (ptr(0)?, bits(1)?);
                let ok = n.is_power_of_two() && n <= 64 && p.offset.rem_euclid(n as i64) == 0;
                if short == "durin_aligned" {
                    return Ok(vec![Value::Bits(ok as u64)]);
                }
                if !ok {
                    return Err(format!("`assume_aligned` of a pointer that is not aligned to {n} bytes"));
                }
            }
            "durin_store_stream_f32" => {
                let p = ptr(0)?;
                let v = args.get(1).cloned().unwrap_or(Value::Undef);
                self.memory.store(&super::memory::Shape::Bits(4), &p, &v)?;
            }
            "parallel_for" => {
                // Sequentially, in order: one of the orders a parallel loop may take.
                let (lo, hi) = (bits(1)? as u32 as i32, bits(2)? as u32 as i32);
                let body = args.get(3).cloned().unwrap_or(Value::Undef);
                for i in lo..hi {
                    let index = Value::Bits(i as u32 as u64);
                    let (target, call) = self.body_call(&body, &[index], "parallel_for")?;
                    self.run_from(Target::Value(target), call, at)
                        .map_err(|(_, m)| format!("in the body of a parallel loop: {m}"))?;
                }
            }
            "durin_cpu_launch" => {
                // A CPU kernel: blocks one after another; in each, the threads in order, a
                // thread that reaches the barrier waiting until every thread of the block
                // has reached it or finished (as the native runtime's fibers do).
                let dims: Vec<i32> = (0..6).map(|i| bits(i).map(|b| b as u32 as i32)).collect::<Result<_, _>>()?;
                let (g, b) = ((dims[0], dims[1], dims[2]), (dims[3], dims[4], dims[5]));
                if g.0 <= 0 || g.1 <= 0 || g.2 <= 0 {
                    return Ok(Vec::new());
                }
                if b.0 <= 0 || b.1 <= 0 || b.2 <= 0 {
                    return Err(format!("a CPU kernel launch with a block of {}x{}x{} threads", b.0, b.1, b.2));
                }
                let body = args.get(6).cloned().unwrap_or(Value::Undef);
                let blocks = ((g.0 + b.0 - 1) / b.0, (g.1 + b.1 - 1) / b.1, (g.2 + b.2 - 1) / b.2);
                let outer = self.block.take();
                let mut r = Ok(());
                for i in 0..blocks.0 as i64 * blocks.1 as i64 * blocks.2 as i64 {
                    let (n0, n1) = (blocks.0 as i64, blocks.1 as i64);
                    let corner = (i % n0, i / n0 % n1, i / (n0 * n1));
                    let corner = [corner.0 as i32 * b.0, corner.1 as i32 * b.1, corner.2 as i32 * b.2];
                    let threads: Vec<[i32; 3]> = (0..b.0 * b.1 * b.2)
                        .map(|t| [corner[0] + t % b.0, corner[1] + t / b.0 % b.1, corner[2] + t / (b.0 * b.1)])
                        .filter(|p| p[0] < g.0 && p[1] < g.1 && p[2] < g.2)
                        .collect();
                    r = self.run_block(&body, &threads, at);
                    if r.is_err() {
                        break;
                    }
                }
                self.block = outer;
                r?;
            }
            "durin_cpu_barrier" => {}
            "random_seed" => self.rng = bits(0)? & 0xffff_ffff,
            "random_val_u64" => return Ok(vec![Value::Bits(self.random())]),
            "random_val_f32" => {
                let x = (self.random() >> 40) as f32 * (1.0 / (1u64 << 24) as f32);
                return Ok(vec![Value::Bits(x.to_bits() as u64)]);
            }
            "get_micro_time" | "get_kernel_time" | "get_nano_time" => {
                let d = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default();
                let t = if short == "get_nano_time" { d.as_nanos() } else { d.as_micros() };
                return Ok(vec![Value::Bits(t as u64)]);
            }
            "alloc" | "alloc_host" | "alloc_unified" => {
                let size = bits(1)? as i64;
                if size < 0 {
                    return Err(format!("allocation of {size} bytes"));
                }
                let p = self.memory.alloc(size as u64, true, BlockState::Heap)?;
                return Ok(vec![Value::Ptr(p)]);
            }
            "release" | "release_host" => {
                match args.get(1) {
                    // Releasing nothing is allowed, as `free(NULL)` is.
                    Some(Value::Undef) => return Ok(Vec::new()),
                    _ => self.memory.release(&ptr(1)?)?,
                }
            }
            "copy" => {
                let (src, src_off, dst, dst_off, size) = (ptr(1)?, bits(2)?, ptr(4)?, bits(5)?, bits(6)?);
                let at = |p: &Pointer, off: u64| Pointer {
                    offset: p.offset.wrapping_add(off as i64),
                    elem: 0,
                    ..p.clone()
                };
                self.memory.copy(&at(&src, src_off), &at(&dst, dst_off), size)?;
            }
            _ => return Err(format!("unknown runtime function `{name}` (the interpreter provides AnyDSL's printing, time and memory functions and the C math library)")),
        }
        Ok(Vec::new())
    }

    /// Runs the threads `threads` (global indices) of one block of a CPU kernel `body`,
    /// in rounds: each round runs every thread that has not finished until it finishes or
    /// reaches the barrier.
    fn run_block(&mut self, body: &Value, threads: &[[i32; 3]], at: Def) -> Result<(), String> {
        let n = threads.len();
        self.block = Some(super::KernelBlock {
            shared: Vec::new(),
            reserved: vec![0; n],
            current: 0,
        });
        let mut waiting: Vec<Option<Value>> = vec![None; n];
        let mut done = vec![false; n];
        let mut left = n;
        while left > 0 {
            for t in 0..n {
                if done[t] {
                    continue;
                }
                if let Some(b) = self.block.as_mut() {
                    b.current = t;
                }
                let (target, call) = match waiting[t].take() {
                    Some(ret) => (ret, vec![Value::Mem(self.mem)]),
                    None => {
                        let idx = threads[t].map(|v| Value::Bits(v as u32 as u64));
                        self.body_call(body, &idx, "durin_cpu_launch")?
                    }
                };
                self.run_from(Target::Value(target), call, at)
                    .map_err(|(_, m)| format!("in a CPU kernel: {m}"))?;
                match self.suspended.take() {
                    Some(ret) => waiting[t] = Some(ret),
                    None => {
                        done[t] = true;
                        left -= 1;
                    }
                }
            }
        }
        Ok(())
    }

    /// The target and arguments that call `body` (a closure, or after closure elimination
    /// a pair of code and environment) with `args`, the current `mem` first and the exit
    /// as its return point.
    fn body_call(
        &self,
        body: &Value,
        args: &[Value],
        what: &str,
    ) -> Result<(Value, Vec<Value>), String> {
        let mem = Value::Mem(self.mem);
        let (target, mut call) = match body {
            Value::Closure(_) => (body.clone(), vec![mem]),
            Value::Agg(pair) if pair.len() == 2 => (pair[0].clone(), vec![pair[1].clone(), mem]),
            _ => return Err(format!("`{what}` expects a function as its body")),
        };
        call.extend_from_slice(args);
        call.push(Value::Exit);
        Ok((target, call))
    }

    /// The next 64 bits of the random generator (the runtime's SplitMix64).
    fn random(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The C math function `name` (`sqrt` on doubles, `sqrtf` on floats) applied to `args`,
/// if `name` is one.
fn math(name: &str, args: &[Value]) -> Option<Result<u64, String>> {
    let (base, single) = match name.strip_suffix('f') {
        Some(b) if !matches!(name, "erf" | "modf") && MATH.contains(&b) => (b, true),
        _ if MATH.contains(&name) => (name, false),
        _ => return None,
    };
    let arg = |i: usize| match args.get(i) {
        Some(Value::Bits(b)) => Ok(if single {
            f32::from_bits(*b as u32) as f64
        } else {
            f64::from_bits(*b)
        }),
        _ => Err(format!("`{name}` expects a number as argument {i}")),
    };
    // Rounded once, in the precision asked for (not through f64, which would round twice).
    if base == "fma" {
        let bits = |i: usize| match args.get(i) {
            Some(Value::Bits(b)) => Ok(*b),
            _ => Err(format!("`{name}` expects a number as argument {i}")),
        };
        return Some((|| {
            let (a, b, c) = (bits(0)?, bits(1)?, bits(2)?);
            Ok(if single {
                let f = |x: u64| f32::from_bits(x as u32);
                f(a).mul_add(f(b), f(c)).to_bits() as u64
            } else {
                let f = f64::from_bits;
                f(a).mul_add(f(b), f(c)).to_bits()
            })
        })());
    }
    let r = (|| {
        let x = arg(0)?;
        Ok(match base {
            "sqrt" => x.sqrt(),
            "cbrt" => x.cbrt(),
            "sin" => x.sin(),
            "cos" => x.cos(),
            "tan" => x.tan(),
            "asin" => x.asin(),
            "acos" => x.acos(),
            "atan" => x.atan(),
            "atan2" => x.atan2(arg(1)?),
            "exp" => x.exp(),
            "exp2" => x.exp2(),
            "log" => x.ln(),
            "log2" => x.log2(),
            "log10" => x.log10(),
            "pow" => x.powf(arg(1)?),
            "fabs" => x.abs(),
            "floor" => x.floor(),
            "ceil" => x.ceil(),
            "round" => x.round(),
            "fmin" => x.min(arg(1)?),
            "fmax" => x.max(arg(1)?),
            _ => x % arg(1)?, // fmod
        })
    })();
    Some(r.map(|v: f64| {
        if single {
            (v as f32).to_bits() as u64
        } else {
            v.to_bits()
        }
    }))
}

const MATH: &[&str] = &[
    "sqrt", "cbrt", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "exp", "exp2", "log",
    "log2", "log10", "pow", "fabs", "floor", "ceil", "round", "fmin", "fmax", "fmod", "fma",
];

/// `x` as C++ streams print a double by default (`%g` with `precision` significant digits:
/// shortest of fixed and scientific, trailing zeros removed).
pub fn format_general(x: f64, precision: usize) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() {
            "-nan".into()
        } else {
            "nan".into()
        };
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf".into() } else { "inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let p = precision.max(1);
    // The decimal exponent after rounding to `p` significant digits.
    let sci = format!("{:.*e}", p - 1, x);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if exp < -4 || exp >= p as i32 {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exp.abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        trim(&format!("{x:.decimals$}"))
    }
}

#[cfg(test)]
mod tests {
    use super::format_general;
    use std::ffi::{c_char, c_int, CStr};

    extern "C" {
        fn snprintf(buf: *mut c_char, n: usize, fmt: *const c_char, ...) -> c_int;
    }

    /// C's `printf("%g")`, which C++ streams use by default: the independent reference.
    fn c_general(x: f64) -> String {
        let mut buf = [0 as c_char; 64];
        // SAFETY: the buffer is large enough for any %g output and is NUL-terminated by
        // snprintf; the format takes exactly one double.
        unsafe {
            snprintf(buf.as_mut_ptr(), buf.len(), c"%g".as_ptr(), x);
            CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned()
        }
    }

    #[test]
    fn general_format_matches_c() {
        let mut xs = vec![
            0.0,
            -0.0,
            1.0,
            -1.5,
            0.1,
            1.0 / 3.0,
            2.0 / 3.0,
            100000.0,
            999999.0,
            999999.5,
            1000000.0,
            1234567.0,
            0.0001,
            0.00012345,
            0.00001,
            1e-5,
            1.5e-7,
            123.456,
            1e21,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            9.9999995,
            0.5,
            2.5,
            1e100,
            314159.26535,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        let mut x = 1.234_567_891e-12;
        for _ in 0..60 {
            xs.push(x);
            xs.push(-x * 7.77);
            x *= 13.37;
        }
        for x in xs {
            assert_eq!(format_general(x, 6), c_general(x), "{x:e}");
        }
    }
}
