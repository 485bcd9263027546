//! Threads, as AnyDSL's runtime has them: `spawn` starts a thread that runs a closure and
//! returns its number, `sync` waits for the thread with that number to finish.
//!
//! `durin_spawn_thread(code, env)` takes the closure as durin compiles it (code taking its
//! environment); `anydsl_spawn_thread(args, fun)` is AnyDSL's C entry point with the
//! arguments the other way round. Numbers start at 1 and are not reused; a thread's number
//! is forgotten once it is synced, so syncing it again (or syncing a number no spawn
//! returned) is a run-time error. A spawned thread that panics or fails ends the program
//! the same way as the main thread would.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::thread::JoinHandle;

/// A spawned thread's code: it takes its environment.
pub type Code = extern "C" fn(*mut u8);

struct Env(*mut u8);
// SAFETY: the environment belongs to the closure the thread runs; sharing it with the
// spawning thread is what `spawn` promises its caller.
unsafe impl Send for Env {}

struct Threads {
    next: i32,
    running: HashMap<i32, JoinHandle<()>>,
}

fn threads() -> &'static Mutex<Threads> {
    static T: OnceLock<Mutex<Threads>> = OnceLock::new();
    T.get_or_init(|| {
        Mutex::new(Threads {
            next: 1,
            running: HashMap::new(),
        })
    })
}

/// Starts a thread that calls `code(env)`; returns its number for [`anydsl_sync_thread`].
#[no_mangle]
pub extern "C" fn durin_spawn_thread(code: Code, env: *mut u8) -> i32 {
    let env = Env(env);
    let handle = std::thread::Builder::new()
        .name("durin-spawn".into())
        .spawn(move || {
            // The whole `Env` moves in (a closure would capture only its field, which is
            // not `Send`).
            let env = env;
            code(env.0)
        });
    let handle = match handle {
        Ok(h) => h,
        Err(e) => crate::error::fail(&format!("`spawn` could not start a thread: {e}")),
    };
    let mut t = threads().lock().unwrap_or_else(|e| e.into_inner());
    let id = t.next;
    t.next = t.next.checked_add(1).unwrap_or(1);
    t.running.insert(id, handle);
    id
}

/// AnyDSL's C form of [`durin_spawn_thread`]: `fun(args)` on a new thread.
///
/// # Safety
/// `fun` is the address of a C function taking one pointer.
#[no_mangle]
pub unsafe extern "C" fn anydsl_spawn_thread(args: *mut u8, fun: *mut u8) -> i32 {
    if fun.is_null() {
        crate::error::fail("`anydsl_spawn_thread` with a null function");
    }
    // SAFETY: the caller passes a function of this type.
    let code: Code = std::mem::transmute::<*mut u8, Code>(fun);
    durin_spawn_thread(code, args)
}

/// Waits until the thread numbered `id` has finished.
#[no_mangle]
pub extern "C" fn anydsl_sync_thread(id: i32) {
    let handle = threads()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .running
        .remove(&id);
    match handle {
        Some(h) => {
            if h.join().is_err() {
                crate::error::fail(&format!("the thread numbered {id} panicked"));
            }
        }
        None => crate::error::fail(&format!(
            "`sync({id})`: no running thread has that number (each number that `spawn` returns is synced once)"
        )),
    }
}

crate::symbol_table!(durin_spawn_thread, anydsl_spawn_thread, anydsl_sync_thread);

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicI32, Ordering};

    extern "C" fn add_seven(env: *mut u8) {
        // SAFETY: the tests pass a pointer to an `AtomicI32`.
        let cell = unsafe { &*(env as *const AtomicI32) };
        std::thread::sleep(std::time::Duration::from_millis(5));
        cell.fetch_add(7, Ordering::SeqCst);
    }

    #[test]
    fn sync_waits_for_every_spawned_thread() {
        let cells: Vec<AtomicI32> = (0..8).map(|_| AtomicI32::new(0)).collect();
        let ids: Vec<i32> = (cells.iter())
            .map(|c| durin_spawn_thread(add_seven, c as *const _ as *mut u8))
            .collect();
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len(), "numbers are distinct: {ids:?}");
        for id in ids {
            anydsl_sync_thread(id);
        }
        assert!(cells.iter().all(|c| c.load(Ordering::SeqCst) == 7));
    }

    #[test]
    fn anydsls_entry_point_takes_the_arguments_first() {
        let cell = AtomicI32::new(1);
        let f = add_seven as Code as *mut u8;
        // SAFETY: `f` is a `Code`.
        let id = unsafe { anydsl_spawn_thread(&cell as *const _ as *mut u8, f) };
        anydsl_sync_thread(id);
        assert_eq!(cell.load(Ordering::SeqCst), 8);
    }
}
