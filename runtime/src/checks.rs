//! Bounds checks for compiled code (`--checks bounds`): the host allocations this runtime
//! made, so that an index into an array behind a pointer can be checked against the
//! allocation the pointer points into, and the errors the checks raise.
//!
//! Every host allocation is recorded (start and size) until it is released; memory the
//! runtime did not allocate (the stack, C's heap, globals) is not known, and indexing into
//! it is not checked. Where CUDA kernels run on the CPU (`--target cuda-cpu`), a device's
//! memory is host memory recorded as the device's: host code that indexes into it stops,
//! as it would on a machine with a GPU, where the host cannot address it.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::ffi::{c_char, CStr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Start address to size in bytes and the CUDA device whose memory it stands for (if
/// any), for every live host allocation.
static ALLOCATIONS: Mutex<BTreeMap<usize, (usize, Option<i32>)>> = Mutex::new(BTreeMap::new());

/// Changes with every change of the table, so that a thread's cached allocation is known
/// to be current without taking the lock.
static GENERATION: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The allocation this thread found last: generation, start, size, whether it is a
    /// device's.
    static LAST: Cell<(u64, usize, usize, bool)> = const { Cell::new((u64::MAX, 0, 0, false)) };
    /// The device of the device allocation this thread's host code indexed last (for the
    /// error).
    static DEVICE_HIT: Cell<i32> = const { Cell::new(0) };
}

fn table() -> std::sync::MutexGuard<'static, BTreeMap<usize, (usize, Option<i32>)>> {
    // A panic elsewhere while the lock was held leaves the table as consistent as ever.
    ALLOCATIONS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records a host allocation of `size` bytes at `p`.
pub(crate) fn allocated(p: *mut u8, size: usize) {
    let mut t = table();
    t.insert(p as usize, (size, None));
    GENERATION.fetch_add(1, Ordering::Release);
}

/// Records that the host allocation at `p` stands for the memory of CUDA device `dev`.
pub(crate) fn on_device(p: *mut u8, dev: i32) {
    let mut t = table();
    if let Some(a) = t.get_mut(&(p as usize)) {
        a.1 = Some(dev);
    }
    GENERATION.fetch_add(1, Ordering::Release);
}

/// Forgets the host allocation at `p` (if it is one).
pub(crate) fn released(p: *mut u8) {
    let mut t = table();
    t.remove(&(p as usize));
    GENERATION.fetch_add(1, Ordering::Release);
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
/// the runtime made it, and the CUDA device whose memory it stands for.
fn room(p: usize, elem: usize) -> Option<(usize, usize, Option<i32>)> {
    let generation = GENERATION.load(Ordering::Acquire);
    let (g, start, size, device) = LAST.get();
    let (start, size, device) = if g == generation && start <= p && p < start + size {
        (start, size, device.then(|| DEVICE_HIT.get()))
    } else {
        let t = table();
        let (&start, &(size, device)) = t.range(..=p).next_back()?;
        // A zero-byte allocation holds no element: its own (unique) address is in it, with
        // none before and none from it.
        if p >= start + size && !(size == 0 && p == start) {
            return None;
        }
        LAST.set((generation, start, size, device.is_some()));
        if let Some(d) = device {
            DEVICE_HIT.set(d);
        }
        (start, size, device)
    };
    Some(((p - start) / elem, (start + size - p) / elem, device))
}

/// The room [`durin_index_room`] gives host code for a device's memory: none, with
/// `from` this value, which [`durin_index_error`] recognizes.
const DEVICE_MEMORY: i64 = i64::MIN;

/// The elements of an array of `elem_size`-byte elements at `base` that an index may reach:
/// `before` elements before `base` and `from` elements from it, within the runtime's
/// allocation that holds `base`; `i64::MAX` both when the runtime did not make it. Reads
/// only the allocation table (so a compiler may hoist it out of a loop that allocates and
/// releases nothing).
#[repr(C)]
pub struct Room {
    /// Elements before `base`.
    pub before: i64,
    /// Elements from `base` on.
    pub from: i64,
}

/// The [`Room`] around `base` for elements of `elem_size` bytes.
#[no_mangle]
pub extern "C" fn durin_index_room(base: *const u8, elem_size: i64) -> Room {
    match room(base as usize, elem_size.max(1) as usize) {
        // Host code (not a kernel run on the CPU) indexing into a device's memory.
        Some((_, _, Some(_))) if !crate::blocks::in_kernel() => Room {
            before: 0,
            from: DEVICE_MEMORY,
        },
        Some((before, from, _)) => Room {
            before: before as i64,
            from: from as i64,
        },
        None => Room {
            before: i64::MAX,
            from: i64::MAX,
        },
    }
}

/// Stops the program: `index` is outside a fixed-size array of `len` elements.
///
/// # Safety
/// `place` is null or a zero-terminated string.
#[no_mangle]
pub unsafe extern "C" fn durin_index_error(index: i64, len: i64, place: *const c_char) -> ! {
    if len == DEVICE_MEMORY {
        crate::error::fail(&format!(
            "{}: host code's access to the memory of CUDA device {} (a GPU's memory, which the \
             host cannot address; here the kernels run on the CPU): copy it to host memory \
             first (`img_copy`, `copy`)",
            place_text(place),
            DEVICE_HIT.get()
        ))
    }
    crate::error::fail(&format!(
        "{}: out-of-bounds access: index {index} of {len} elements",
        place_text(place)
    ))
}

crate::symbol_table!(durin_index_room, durin_index_error);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_found_by_any_address_inside_them() {
        let a = crate::memory::anydsl_alloc(0, 40);
        let p = a as usize;
        assert_eq!(room(p, 4), Some((0, 10, None)));
        assert_eq!(room(p + 8, 4), Some((2, 8, None)));
        assert_eq!(room(p + 40, 4), None, "one past the end is no element");
        // SAFETY: `a` came from `anydsl_alloc`.
        unsafe { crate::memory::anydsl_release(0, a) };
        assert_eq!(room(p, 4), None, "released memory is forgotten");
    }

    #[test]
    fn host_code_has_no_room_in_a_devices_memory() {
        // CUDA device 0 (platform 1), its memory on the host as `--target cuda-cpu` has it.
        let a = crate::memory::durin_alloc_cpu_blocks(1, 40);
        let p = a as usize;
        assert_eq!(room(p + 8, 4), Some((2, 8, Some(0))));
        let r = durin_index_room(a, 4);
        assert_eq!(
            (r.before, r.from),
            (0, DEVICE_MEMORY),
            "host code may not index into it"
        );
        // SAFETY: `a` came from the runtime's allocation, on the host.
        unsafe { crate::memory::anydsl_release(0, a) };
        let host = crate::memory::anydsl_alloc(0, 40);
        let r = durin_index_room(host, 4);
        assert_eq!((r.before, r.from), (0, 10), "the host's own memory");
        // SAFETY: as above.
        unsafe { crate::memory::anydsl_release(0, host) };
    }
}
