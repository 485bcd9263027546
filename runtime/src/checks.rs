//! Bounds checks for compiled code (`--checks bounds`): the host allocations this runtime
//! made, so that an index into an array behind a pointer can be checked against the
//! allocation the pointer points into, and the errors the checks raise.
//!
//! Every host allocation is recorded (start and size) until it is released; memory the
//! runtime did not allocate (the stack, C's heap, globals) is not known, and indexing into
//! it is not checked.

use std::collections::BTreeMap;
use std::ffi::{c_char, CStr};
use std::sync::Mutex;

/// Start address to size in bytes, for every live host allocation.
static ALLOCATIONS: Mutex<BTreeMap<usize, usize>> = Mutex::new(BTreeMap::new());

fn table() -> std::sync::MutexGuard<'static, BTreeMap<usize, usize>> {
    // A panic elsewhere while the lock was held leaves the table as consistent as ever.
    ALLOCATIONS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records a host allocation of `size` bytes at `p`.
pub(crate) fn allocated(p: *mut u8, size: usize) {
    table().insert(p as usize, size);
}

/// Forgets the host allocation at `p` (if it is one).
pub(crate) fn released(p: *mut u8) {
    table().remove(&(p as usize));
}

fn place_text(place: *const c_char) -> String {
    if place.is_null() {
        "<unknown place>".into()
    } else {
        // SAFETY: the compiled code passes a zero-terminated string constant.
        unsafe { CStr::from_ptr(place) }
            .to_string_lossy()
            .into_owned()
    }
}

/// The elements of `elem` bytes before and from `p` within the allocation holding `p`, if
/// the runtime made it.
fn room(p: usize, elem: usize) -> Option<(usize, usize)> {
    let t = table();
    let (&start, &size) = t.range(..=p).next_back()?;
    (p < start + size).then(|| ((p - start) / elem, (start + size - p) / elem))
}

/// Checks `base[index]` for an array of `elem_size`-byte elements at `base`: when `base`
/// points into an allocation of this runtime, the element must lie within it; otherwise
/// nothing is known and nothing is checked. Stops the program with a run-time error naming
/// `place` when the check fails.
///
/// # Safety
/// `place` is null or a zero-terminated string.
#[no_mangle]
pub unsafe extern "C" fn durin_check_index(
    base: *const u8,
    index: i64,
    elem_size: i64,
    place: *const c_char,
) {
    let elem = elem_size.max(1) as usize;
    let Some((before, from)) = room(base as usize, elem) else {
        return;
    };
    let fits = if index >= 0 {
        (index as u64) < from as u64
    } else {
        index.unsigned_abs() <= before as u64
    };
    if !fits {
        // As the interpreter says it: the elements from `base` to the end of the allocation.
        crate::error::fail(&format!(
            "{}: out-of-bounds access: index {index} of {from} elements",
            place_text(place)
        ));
    }
}

/// Stops the program: `index` is outside a fixed-size array of `len` elements.
///
/// # Safety
/// `place` is null or a zero-terminated string.
#[no_mangle]
pub unsafe extern "C" fn durin_index_error(index: i64, len: i64, place: *const c_char) -> ! {
    crate::error::fail(&format!(
        "{}: out-of-bounds access: index {index} of {len} elements",
        place_text(place)
    ))
}

crate::symbol_table!(durin_check_index, durin_index_error);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_found_by_any_address_inside_them() {
        let a = crate::memory::anydsl_alloc(0, 40);
        let p = a as usize;
        assert_eq!(room(p, 4), Some((0, 10)));
        assert_eq!(room(p + 8, 4), Some((2, 8)));
        assert_eq!(room(p + 40, 4), None, "one past the end is no element");
        // SAFETY: `a` came from `anydsl_alloc`.
        unsafe { crate::memory::anydsl_release(0, a) };
        assert_eq!(room(p, 4), None, "released memory is forgotten");
    }
}
