//! Printing, as AnyDSL's runtime prints: C++ stream formatting (`%g` with six significant
//! digits for floats), no implicit newline. Output goes through C's buffered `stdout`;
//! [`anydsl_print_flush`] flushes it, and so does the C library at exit.

use std::ffi::{c_char, c_int};

extern "C" {
    fn printf(format: *const c_char, ...) -> c_int;
    fn putchar(c: c_int) -> c_int;
    fn fflush(stream: *mut std::ffi::c_void) -> c_int;
}

macro_rules! print_with {
    ($(#[$doc:meta] $name:ident($t:ty as $c:ty) => $fmt:literal;)*) => {$(
        #[$doc]
        #[no_mangle]
        pub extern "C" fn $name(x: $t) {
            unsafe { printf($fmt.as_ptr(), x as $c) };
        }
    )*};
}

print_with! {
    /// Prints an `i16`.
    anydsl_print_i16(i16 as c_int) => c"%d";
    /// Prints a `u16`.
    anydsl_print_u16(u16 as c_int) => c"%u";
    /// Prints an `i32`.
    anydsl_print_i32(i32 as c_int) => c"%d";
    /// Prints a `u32`.
    anydsl_print_u32(u32 as u32) => c"%u";
    /// Prints an `i64`.
    anydsl_print_i64(i64 as i64) => c"%lld";
    /// Prints a `u64`.
    anydsl_print_u64(u64 as u64) => c"%llu";
    /// Prints an `f32` (promoted to double, as C++ streams do).
    anydsl_print_f32(f32 as f64) => c"%g";
    /// Prints an `f64`.
    anydsl_print_f64(f64 as f64) => c"%g";
}

/// Prints one byte.
#[no_mangle]
pub extern "C" fn anydsl_print_char(c: u8) {
    unsafe { putchar(c as c_int) };
}

/// Prints a zero-terminated byte string (nothing for a null pointer).
///
/// # Safety
/// `s` is null or points to a zero-terminated string.
#[no_mangle]
pub unsafe extern "C" fn anydsl_print_string(s: *const c_char) {
    if !s.is_null() {
        printf(c"%s".as_ptr(), s);
    }
}

/// What one conversion of a device `printf` format reads from the argument buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Arg {
    Int,
    Long,
    Double,
    Pointer,
}

impl Arg {
    fn size(self) -> usize {
        if self == Arg::Int {
            4
        } else {
            8
        }
    }
}

/// A format split into literal text and conversions (each with the C format of its own,
/// and what it reads: `*` widths and precisions first); `None` for a conversion the device
/// `printf` does not have.
fn conversions(fmt: &[u8]) -> Option<Vec<(Vec<u8>, Vec<Arg>)>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < fmt.len() {
        let start = i;
        if fmt[i] != b'%' {
            while i < fmt.len() && fmt[i] != b'%' {
                i += 1;
            }
            out.push((fmt[start..i].to_vec(), Vec::new()));
            continue;
        }
        i += 1;
        if fmt.get(i) == Some(&b'%') {
            out.push((b"%%".to_vec(), Vec::new()));
            i += 1;
            continue;
        }
        let mut reads = Vec::new();
        while i < fmt.len() && b"-+ #0".contains(&fmt[i]) {
            i += 1;
        }
        for _ in 0..2 {
            if fmt.get(i) == Some(&b'*') {
                reads.push(Arg::Int);
                i += 1;
            }
            while i < fmt.len() && fmt[i].is_ascii_digit() {
                i += 1;
            }
            if fmt.get(i) != Some(&b'.') {
                break;
            }
            i += 1;
        }
        let mut long = false;
        while i < fmt.len() && b"hlLqjzt".contains(&fmt[i]) {
            long |= b"lLqjzt".contains(&fmt[i]);
            i += 1;
        }
        let arg = match *fmt.get(i)? {
            b'd' | b'i' | b'u' | b'x' | b'X' | b'o' if long => Arg::Long,
            b'd' | b'i' | b'u' | b'x' | b'X' | b'o' | b'c' => Arg::Int,
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => Arg::Double,
            b's' | b'p' => Arg::Pointer,
            _ => return None,
        };
        reads.push(arg);
        i += 1;
        // C's own format for the conversion: lengths as C's printf reads 64-bit values.
        let mut own: Vec<u8> = (fmt[start..i].iter())
            .copied()
            .filter(|c| !b"hlLqjzt".contains(c))
            .collect();
        if arg == Arg::Long {
            own.insert(own.len() - 1, b'l');
            own.insert(own.len() - 1, b'l');
        }
        out.push((own, reads));
    }
    Some(out)
}

/// CUDA's device `vprintf` for kernels run on the CPU: prints `fmt` with the values in
/// `args` (each at a multiple of its size, as CUDA lays them out: integers as 4 bytes or,
/// with `l`/`ll`, 8; floating point as 8-byte doubles; strings and pointers as 8-byte
/// addresses). Returns the number of values read, or -1 for a conversion CUDA's printf does
/// not have (and prints nothing).
///
/// # Safety
/// `fmt` points to a zero-terminated string; `args` to the values it names.
#[no_mangle]
pub unsafe extern "C" fn durin_cpu_vprintf(fmt: *const c_char, args: *const u8) -> i32 {
    if fmt.is_null() {
        return -1;
    }
    let Some(parts) = conversions(std::ffi::CStr::from_ptr(fmt).to_bytes()) else {
        return -1;
    };
    let mut offset = 0usize;
    let mut count = 0;
    let mut read = |a: Arg| {
        offset = offset.next_multiple_of(a.size());
        let p = args.add(offset);
        offset += a.size();
        count += 1;
        match a {
            Arg::Int => (p as *const i32).read_unaligned() as i64 as u64,
            _ => (p as *const u64).read_unaligned(),
        }
    };
    for (text, reads) in parts {
        let Ok(cfmt) = std::ffi::CString::new(text) else {
            continue;
        };
        let mut vals: Vec<(Arg, u64)> = reads.iter().map(|&a| (a, read(a))).collect();
        let f = cfmt.as_ptr();
        let Some((arg, v)) = vals.pop() else {
            printf(f);
            continue;
        };
        let stars: Vec<c_int> = vals.iter().map(|&(_, w)| w as u32 as c_int).collect();
        macro_rules! with_stars {
            ($x:expr) => {
                match stars.as_slice() {
                    [] => printf(f, $x),
                    [w] => printf(f, *w, $x),
                    [w, p, ..] => printf(f, *w, *p, $x),
                }
            };
        }
        match arg {
            Arg::Int => with_stars!(v as u32 as c_int),
            Arg::Double => with_stars!(f64::from_bits(v)),
            Arg::Long | Arg::Pointer => with_stars!(v),
        };
    }
    count
}

/// Flushes standard output.
#[no_mangle]
pub extern "C" fn anydsl_print_flush() {
    flush_all();
}

/// Flushes every C output stream (what `durin run` does after `main` returns).
pub fn flush_all() {
    unsafe { fflush(std::ptr::null_mut()) };
}

crate::symbol_table!(
    durin_cpu_vprintf,
    anydsl_print_i16,
    anydsl_print_u16,
    anydsl_print_i32,
    anydsl_print_u32,
    anydsl_print_i64,
    anydsl_print_u64,
    anydsl_print_f32,
    anydsl_print_f64,
    anydsl_print_char,
    anydsl_print_string,
    anydsl_print_flush,
);

#[cfg(test)]
mod tests {
    use super::{conversions, Arg};

    #[test]
    fn device_formats_split_into_cs_own_conversions() {
        let parts = conversions(b"a %-*.*ld %lc %hd %% %s%e").expect("valid");
        let own: Vec<(String, Vec<Arg>)> = (parts.into_iter())
            .map(|(t, r)| (String::from_utf8(t).unwrap(), r))
            .collect();
        let want = [
            ("a ", vec![]),
            ("%-*.*lld", vec![Arg::Int, Arg::Int, Arg::Long]),
            (" ", vec![]),
            ("%c", vec![Arg::Int]),
            (" ", vec![]),
            ("%d", vec![Arg::Int]),
            (" ", vec![]),
            ("%%", vec![]),
            (" ", vec![]),
            ("%s", vec![Arg::Pointer]),
            ("%e", vec![Arg::Double]),
        ];
        let want: Vec<(String, Vec<Arg>)> =
            want.into_iter().map(|(t, r)| (t.to_string(), r)).collect();
        assert_eq!(own, want);
        assert!(conversions(b"%k").is_none(), "no such conversion");
        assert!(
            conversions(b"%").is_none(),
            "a format ending inside a conversion"
        );
    }
}
