//! Kernels on the CPU with a GPU's block semantics: `durin_cpu_launch(grid, block, body,
//! env)` runs `body(env, x, y, z)` once per thread of the grid (x, y, z: the thread's
//! global index), blocks in parallel on the thread pool, and the threads of one block as
//! fibers on one worker, so that `durin_cpu_barrier()` really separates a block's phases:
//! a thread that reaches the barrier waits until every thread of its block has reached it
//! (or finished). `durin_cpu_shared(bytes)` is the block's shared memory: the k-th call of
//! each thread of a block returns the same memory (as `reserve_shared` in a CUDA kernel,
//! where every thread reserves the same arrays in the same order), allocated as `alloc`
//! allocates (so `--checks bounds` knows it) and released when the block ends.
//!
//! A fiber is a stack and a saved stack pointer; switching saves the callee-saved
//! registers on the old stack and restores them from the new one (no system call). A
//! thread that never waits at a barrier runs to its end on a stack the next thread then
//! reuses (each worker keeps its stacks from block to block), so a kernel without
//! barriers costs two switches per thread. On machines other
//! than x86-64 the threads of a block run one after another and the barrier does nothing.

use crate::memory::{anydsl_alloc, anydsl_release};
use crate::parallel::anydsl_parallel_for;
use std::cell::RefCell;

/// The kernel's code: `(environment, x, y, z)`.
pub type Kernel = extern "C" fn(*mut u8, i32, i32, i32);

/// Bytes of each fiber's stack (with a guard page below it).
const STACK: usize = 256 * 1024;

/// The state of the block a worker is running.
struct Block {
    /// The threads' global indices.
    threads: Vec<(i32, i32, i32)>,
    /// Threads per block and blocks of the grid, per axis.
    shape: [(i32, i32); 3],
    kernel: Kernel,
    env: *mut u8,
    /// The block's shared memory, in the order the threads reserve it.
    shared: Vec<*mut u8>,
    /// Per thread: how many reservations it has made.
    reserved: Vec<usize>,
    /// The thread running now.
    current: usize,
    /// Per thread: its fiber (saved stack pointer and stack), while it waits.
    waiting: Vec<Option<(usize, Stack)>>,
    /// The scheduler's saved stack pointer.
    main_sp: usize,
    /// The stack pointer of the thread that last waited at the barrier.
    fiber_sp: usize,
    /// Whether the current thread has finished.
    finished: bool,
}

thread_local! {
    static BLOCK: RefCell<Option<Box<Block>>> = const { RefCell::new(None) };
    /// This worker's fiber stacks, free for the next thread (of this block or the next).
    static STACKS: RefCell<Vec<Stack>> = const { RefCell::new(Vec::new()) };
}

/// A fiber stack: memory from `mmap` with a guard page at its low end.
struct Stack {
    base: *mut u8,
    len: usize,
}

impl Stack {
    fn new() -> Stack {
        let page = 4096;
        let len = STACK + page;
        // SAFETY: an anonymous private mapping; the result is checked.
        let base = unsafe {
            libc_mmap(
                std::ptr::null_mut(),
                len,
                PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base as isize == -1 {
            crate::error::fail("a CPU kernel: out of memory for a thread's stack");
        }
        // SAFETY: the first page of the mapping just made.
        unsafe { libc_mprotect(base, page, PROT_NONE) };
        Stack {
            base: base.cast(),
            len,
        }
    }

    fn top(&self) -> usize {
        // SAFETY: one past the end of the mapping, 16-byte aligned (pages are).
        unsafe { self.base.add(self.len) as usize }
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, no longer used.
        unsafe { libc_munmap(self.base.cast(), self.len) };
    }
}

const PROT_NONE: i32 = 0;
const PROT_READ: i32 = 1;
const PROT_WRITE: i32 = 2;
const MAP_PRIVATE: i32 = 2;
const MAP_ANONYMOUS: i32 = 0x20;

extern "C" {
    #[link_name = "mmap"]
    fn libc_mmap(
        addr: *mut std::ffi::c_void,
        len: usize,
        prot: i32,
        flags: i32,
        fd: i32,
        off: i64,
    ) -> *mut std::ffi::c_void;
    #[link_name = "mprotect"]
    fn libc_mprotect(addr: *mut std::ffi::c_void, len: usize, prot: i32) -> i32;
    #[link_name = "munmap"]
    fn libc_munmap(addr: *mut std::ffi::c_void, len: usize) -> i32;
}

#[cfg(target_arch = "x86_64")]
mod fiber {
    /// Saves the callee-saved registers, the SSE control word and the x87 control word on
    /// the current stack, stores the stack pointer to `*from`, switches to the stack `to`
    /// and restores what is saved there.
    ///
    /// # Safety
    /// `to` is a stack pointer saved by `switch` or made by `prepare`.
    #[unsafe(naked)]
    pub unsafe extern "C" fn switch(from: *mut usize, to: usize) {
        core::arch::naked_asm!(
            "push rbp",
            "push rbx",
            "push r12",
            "push r13",
            "push r14",
            "push r15",
            "sub rsp, 8",
            "stmxcsr [rsp]",
            "fnstcw [rsp + 4]",
            "mov [rdi], rsp",
            "mov rsp, rsi",
            "ldmxcsr [rsp]",
            "fldcw [rsp + 4]",
            "add rsp, 8",
            "pop r15",
            "pop r14",
            "pop r13",
            "pop r12",
            "pop rbx",
            "pop rbp",
            "ret",
        )
    }

    /// A stack pointer for a new fiber on the stack whose top is `top`, which `switch`
    /// enters at `entry` (a function that never returns).
    ///
    /// # Safety
    /// `top` is the 16-byte aligned end of a writable stack of at least a page.
    pub unsafe fn prepare(top: usize, entry: extern "C" fn() -> !) -> usize {
        let mut sp = top as *mut u64;
        // At `entry`'s first instruction the stack pointer is 8 below a multiple of 16, as
        // after a call: a dummy return address below an aligned top.
        sp = sp.sub(1);
        sp.write(0);
        sp = sp.sub(1);
        sp.write(entry as usize as u64);
        // rbp, rbx, r12..r15.
        for _ in 0..6 {
            sp = sp.sub(1);
            sp.write(0);
        }
        // MXCSR (the default: all exceptions masked, round to nearest) and the x87
        // control word (the default 0x37f).
        sp = sp.sub(1);
        sp.write(0x1f80 | (0x37f << 32));
        sp as usize
    }
}

/// Where a fiber starts: runs the block's current thread, then returns to the scheduler.
#[cfg(target_arch = "x86_64")]
extern "C" fn fiber_entry() -> ! {
    let (kernel, env, (x, y, z)) = with_block(|b| (b.kernel, b.env, b.threads[b.current]));
    kernel(env, x, y, z);
    let main = with_block(|b| {
        b.finished = true;
        b.main_sp
    });
    let mut dead = 0usize;
    // SAFETY: `main` is the scheduler's stack pointer saved by its `switch`. A finished
    // fiber is never resumed: its stack is entered again only at `prepare`'s entry.
    unsafe { fiber::switch(&mut dead, main) };
    unreachable!("a finished fiber was resumed")
}

/// Whether this thread is running a kernel's block.
pub(crate) fn in_kernel() -> bool {
    BLOCK.with(|b| b.try_borrow().map_or(true, |b| b.is_some()))
}

fn with_block<T>(f: impl FnOnce(&mut Block) -> T) -> T {
    BLOCK.with(|b| {
        let mut b = b.borrow_mut();
        f(b.as_mut().expect("a CPU kernel's block"))
    })
}

/// Runs the threads of one block as fibers until all have finished.
#[cfg(target_arch = "x86_64")]
fn run_block(block: Box<Block>) {
    let n = block.threads.len();
    BLOCK.with(|b| *b.borrow_mut() = Some(block));
    // Rounds: each runs every thread not yet finished (new, or waiting at the barrier)
    // until it waits at the barrier or finishes.
    let mut done = vec![false; n];
    let mut left = n;
    while left > 0 {
        for t in 0..n {
            if done[t] {
                continue;
            }
            let (sp_ptr, to, stack) = with_block(|b| {
                b.current = t;
                b.finished = false;
                let (to, stack) = b.waiting[t].take().unwrap_or_else(|| {
                    let stack = STACKS
                        .with(|s| s.borrow_mut().pop())
                        .unwrap_or_else(Stack::new);
                    // SAFETY: the stack is fresh or free (its thread finished).
                    (unsafe { fiber::prepare(stack.top(), fiber_entry) }, stack)
                });
                (&mut b.main_sp as *mut usize, to, stack)
            });
            // SAFETY: `sp_ptr` points into the boxed block, which stays where it is while
            // the fiber runs; `to` was made by `prepare` or saved by the fiber's switch.
            unsafe { fiber::switch(sp_ptr, to) };
            let finished = with_block(|b| {
                if !b.finished {
                    b.waiting[t] = Some((b.fiber_sp, stack));
                    return None;
                }
                Some(stack)
            });
            if let Some(stack) = finished {
                done[t] = true;
                left -= 1;
                STACKS.with(|s| s.borrow_mut().push(stack));
            }
        }
    }
    end_block();
}

/// Releases the block's shared memory and forgets the block.
fn end_block() {
    if let Some(b) = BLOCK.with(|b| b.borrow_mut().take()) {
        for p in b.shared {
            // SAFETY: allocated by `anydsl_alloc` on the host, released once.
            unsafe { anydsl_release(0, p) };
        }
    }
}

/// The threads of a block one after another (no barrier semantics).
#[cfg(not(target_arch = "x86_64"))]
fn run_block(block: Box<Block>) {
    let (kernel, env, threads) = (block.kernel, block.env, block.threads.clone());
    BLOCK.with(|b| *b.borrow_mut() = Some(block));
    for (t, &(x, y, z)) in threads.iter().enumerate() {
        with_block(|b| b.current = t);
        kernel(env, x, y, z);
    }
    end_block();
}

/// Waits until every thread of the block has reached the barrier or finished (nothing
/// outside a CPU kernel).
#[no_mangle]
pub extern "C" fn durin_cpu_barrier() {
    #[cfg(target_arch = "x86_64")]
    {
        let inside = BLOCK.with(|b| b.borrow().is_some());
        if !inside {
            return;
        }
        let (save, main) = with_block(|b| (&mut b.fiber_sp as *mut usize, b.main_sp));
        // SAFETY: `main` is the scheduler's stack pointer; `save` lives in the boxed
        // block, which stays put; the scheduler resumes this fiber from the saved pointer.
        unsafe { fiber::switch(save, main) };
    }
}

/// The block's shared memory: the k-th call of each thread of a block returns the same
/// `bytes` bytes. Outside a CPU kernel, fresh memory each time (as `alloc`).
#[no_mangle]
pub extern "C" fn durin_cpu_shared(bytes: i64) -> *mut u8 {
    let inside = BLOCK.with(|b| b.borrow().is_some());
    if !inside {
        return anydsl_alloc(0, bytes);
    }
    with_block(|b| {
        let t = b.current;
        let k = b.reserved[t];
        b.reserved[t] += 1;
        if k == b.shared.len() {
            b.shared.push(anydsl_alloc(0, bytes));
        }
        b.shared[k]
    })
}

/// A CUDA index of the thread running now: `which / 3` picks `threadIdx`, `blockIdx`,
/// `blockDim` or `gridDim`, `which % 3` the axis. Outside a CPU kernel, an error.
#[no_mangle]
pub extern "C" fn durin_cpu_index(which: i32) -> i32 {
    let inside = BLOCK.with(|b| b.borrow().is_some());
    if !inside || !(0..12).contains(&which) {
        crate::error::fail("a CUDA index (`threadIdx` ...) read outside a kernel");
    }
    with_block(|b| {
        let g = b.threads[b.current];
        let axis = (which % 3) as usize;
        let at = [g.0, g.1, g.2][axis];
        let (dim, blocks) = b.shape[axis];
        match which / 3 {
            0 => at % dim,
            1 => at / dim,
            2 => dim,
            _ => blocks,
        }
    })
}

#[derive(Clone, Copy)]
struct Launch {
    grid: (i32, i32, i32),
    block: (i32, i32, i32),
    blocks: (i32, i32, i32),
    kernel: Kernel,
    env: *mut u8,
}

// SAFETY: the environment is read by the kernel's code; blocks running at the same time is
// what a kernel launch promises.
unsafe impl Send for Launch {}
unsafe impl Sync for Launch {}

extern "C" fn one_block(launch: *mut u8, i: i32) {
    // SAFETY: `launch` is the `Launch` that `durin_cpu_launch` passes, alive until the
    // parallel loop returns.
    let l = unsafe { *(launch as *const Launch) };
    let (nx, ny, _) = l.blocks;
    let (bx, by, bz) = (i % nx, (i / nx) % ny, i / (nx * ny));
    let mut threads = Vec::with_capacity((l.block.0 * l.block.1 * l.block.2) as usize);
    for tz in 0..l.block.2 {
        for ty in 0..l.block.1 {
            for tx in 0..l.block.0 {
                let g = (
                    bx * l.block.0 + tx,
                    by * l.block.1 + ty,
                    bz * l.block.2 + tz,
                );
                if g.0 < l.grid.0 && g.1 < l.grid.1 && g.2 < l.grid.2 {
                    threads.push(g);
                }
            }
        }
    }
    let n = threads.len();
    run_block(Box::new(Block {
        threads,
        shape: [
            (l.block.0, l.blocks.0),
            (l.block.1, l.blocks.1),
            (l.block.2, l.blocks.2),
        ],
        kernel: l.kernel,
        env: l.env,
        shared: Vec::new(),
        reserved: vec![0; n],
        current: 0,
        waiting: (0..n).map(|_| None).collect(),
        main_sp: 0,
        fiber_sp: 0,
        finished: false,
    }));
}

/// Runs `kernel(env, x, y, z)` for every thread of a grid of `grid` threads in blocks of
/// `block` threads (the last blocks of each dimension may be partial), blocks in parallel
/// on all cores.
#[no_mangle]
pub extern "C" fn durin_cpu_launch(
    gx: i32,
    gy: i32,
    gz: i32,
    bx: i32,
    by: i32,
    bz: i32,
    kernel: Kernel,
    env: *mut u8,
) {
    if gx <= 0 || gy <= 0 || gz <= 0 {
        return;
    }
    if bx <= 0 || by <= 0 || bz <= 0 {
        crate::error::fail(&format!(
            "a CPU kernel launch with a block of {bx}x{by}x{bz} threads"
        ));
    }
    let blocks = ((gx + bx - 1) / bx, (gy + by - 1) / by, (gz + bz - 1) / bz);
    let count = blocks.0 as i64 * blocks.1 as i64 * blocks.2 as i64;
    if count > i32::MAX as i64 {
        crate::error::fail(&format!(
            "a CPU kernel launch of {count} blocks (at most {})",
            i32::MAX
        ));
    }
    let mut launch = Launch {
        grid: (gx, gy, gz),
        block: (bx, by, bz),
        blocks,
        kernel,
        env,
    };
    anydsl_parallel_for(
        0,
        0,
        count as i32,
        one_block,
        (&mut launch as *mut Launch).cast(),
    );
}

/// [`durin_cpu_launch`] for a CUDA kernel (`--target cuda-cpu`): the sizes are checked as a
/// CUDA launch checks them (positive, the grid a multiple of the block in each axis), and
/// an error names the launch's place (`place`, a zero-terminated string).
///
/// # Safety
/// `place` is a zero-terminated string; `kernel` and `env` as for [`durin_cpu_launch`].
#[no_mangle]
pub unsafe extern "C" fn durin_cpu_launch_cuda(
    gx: i32,
    gy: i32,
    gz: i32,
    bx: i32,
    by: i32,
    bz: i32,
    kernel: Kernel,
    env: *mut u8,
    place: *const u8,
) {
    match crate::cuda::grid_blocks([gx, gy, gz], [bx, by, bz]) {
        Ok(blocks) if blocks.contains(&0) => {}
        Ok(_) => durin_cpu_launch(gx, gy, gz, bx, by, bz, kernel, env),
        Err(why) => {
            let at = if place.is_null() {
                String::new()
            } else {
                std::ffi::CStr::from_ptr(place.cast())
                    .to_string_lossy()
                    .into_owned()
            };
            crate::error::fail(&format!("{at}: cannot launch the kernel: {why}"))
        }
    }
}

crate::symbol_table!(
    durin_cpu_launch,
    durin_cpu_launch_cuda,
    durin_cpu_barrier,
    durin_cpu_shared,
    durin_cpu_index
);
