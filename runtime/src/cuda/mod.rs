//! The CUDA platform: devices, memory, kernel compilation and launches, through the CUDA
//! driver API (loaded when first used, so that programs without kernels never need it).
//!
//! Device numbers are AnyDSL's: the platform in the low four bits (0 the host, 1 CUDA),
//! the device's ordinal above them (`1 | n << 4`). Each CUDA device has its primary
//! context. The platform's state is behind one lock, which no call holds while it waits for
//! a device (a synchronization, a copy, a timer's stop; only a launch timed for
//! `ANYDSL_PROFILE=full` waits under it): a thread that waits for one device leaves the
//! others to other threads. A launch compiles the program's CUDA module for the device's
//! compute capability the first time (NVRTC, through the on-disk cache of [`nvrtc`]),
//! loads it, and launches the kernel on the default stream; errors name the kernel and the
//! place of its launch.
//! With `ANYDSL_PROFILE=full`, each launch is timed with CUDA events (and waited for), and
//! [`anydsl_get_kernel_time`] reports the total.

pub mod cubin;
pub mod nvrtc;

use cudarc::driver::sys;
use std::collections::{HashMap, HashSet};
use std::ffi::{c_char, c_void, CStr};
use std::sync::{Mutex, MutexGuard};

/// The CUDA platform's number in a device number's low four bits.
pub const PLATFORM: i32 = 1;

/// The platform and the ordinal of AnyDSL device number `dev`.
pub fn split(dev: i32) -> (i32, i32) {
    (dev & 15, dev >> 4)
}

/// The message when there is no CUDA driver.
pub const NO_DRIVER: &str = "no CUDA driver found (libcuda.so could not be loaded): this machine has no NVIDIA GPU, or its driver is not installed";

/// Whether the CUDA driver library can be loaded.
pub fn driver_present() -> bool {
    // SAFETY: only tries to open the library.
    unsafe { sys::is_culib_present() }
}

struct Device {
    ctx: sys::CUcontext,
    arch: String,
    /// Loaded modules by the address of their source text.
    modules: HashMap<usize, sys::CUmodule>,
    /// Kernels by the addresses of module source and kernel name.
    functions: HashMap<(usize, usize), sys::CUfunction>,
    /// The last kernel launched on the device and its place (zero-terminated strings that
    /// live as long as the program), for errors found later.
    last: Option<(usize, usize)>,
    /// What getting and loading its modules took.
    loads: ModuleLoads,
    /// The device's memory pool, where it has one: device memory is taken from it and
    /// given back to it in the order of the default stream, and what is given back stays
    /// in the pool for the next allocation (no new mapping of pages, no wait for the
    /// device), until an allocation finds the device full.
    pool: Option<sys::CUmemoryPool>,
    /// The allocations taken from `pool`.
    pooled: HashSet<usize>,
}

/// What getting the program's CUDA modules took in this process (for `--time`): how many
/// NVRTC compiled and how many came from the kernel cache, the time of each (cache reads
/// and writes included), and the time the driver took to load them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ModuleLoads {
    pub compiled: u32,
    pub compile_us: f64,
    pub cached: u32,
    pub cached_us: f64,
    pub load_us: f64,
}

/// The modules got so far on every device (see [`ModuleLoads`]).
pub fn module_loads() -> ModuleLoads {
    let mut sum = ModuleLoads::default();
    if let Some(s) = state().as_ref() {
        for d in s.devices.values() {
            let l = &d.loads;
            sum.compiled += l.compiled;
            sum.compile_us += l.compile_us;
            sum.cached += l.cached;
            sum.cached_us += l.cached_us;
            sum.load_us += l.load_us;
        }
    }
    sum
}

#[derive(Default)]
struct State {
    initialized: bool,
    devices: HashMap<i32, Device>,
    /// Page-locked host allocations (released with `cuMemFreeHost`).
    pinned: HashSet<usize>,
    /// Microseconds in kernels, when profiling.
    kernel_us: f64,
    profile: Option<bool>,
    /// Per CUDA device, the events of its timer (`durin_timer_start`, `durin_timer_stop`).
    timers: HashMap<i32, [sys::CUevent; 2]>,
}

// SAFETY: the raw CUDA handles are only used under the state's mutex; CUDA contexts and
// modules may be used from any thread once made current.
unsafe impl Send for State {}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn state() -> MutexGuard<'static, Option<State>> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

fn error_name(rc: sys::CUresult) -> String {
    let mut s: *const c_char = std::ptr::null();
    // SAFETY: a valid out-pointer; the driver returns a static string.
    unsafe {
        if sys::cuGetErrorString(rc, &mut s) == sys::CUresult::CUDA_SUCCESS && !s.is_null() {
            return format!("{} ({rc:?})", CStr::from_ptr(s).to_string_lossy());
        }
    }
    format!("{rc:?}")
}

fn check(rc: sys::CUresult, what: &str) -> Result<(), String> {
    if rc == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(format!("{what}: {}", error_name(rc)))
    }
}

impl State {
    fn init(&mut self) -> Result<(), String> {
        if self.initialized {
            return Ok(());
        }
        if !driver_present() {
            return Err(NO_DRIVER.into());
        }
        // SAFETY: plain driver call.
        check(unsafe { sys::cuInit(0) }, "cannot initialize CUDA")?;
        self.initialized = true;
        Ok(())
    }

    /// CUDA device `n`, with its context current on this thread.
    fn device(&mut self, n: i32) -> Result<&mut Device, String> {
        self.init()?;
        if let std::collections::hash_map::Entry::Vacant(e) = self.devices.entry(n) {
            let mut count = 0;
            // SAFETY: valid out-pointers throughout; the context is retained for the
            // process's lifetime.
            unsafe {
                check(
                    sys::cuDeviceGetCount(&mut count),
                    "cannot count CUDA devices",
                )?;
                if n < 0 || n >= count {
                    return Err(format!(
                        "CUDA device {n} does not exist (this machine has {count})"
                    ));
                }
                let mut dev = 0;
                check(sys::cuDeviceGet(&mut dev, n), "cannot open the CUDA device")?;
                let mut ctx = std::ptr::null_mut();
                check(
                    sys::cuDevicePrimaryCtxRetain(&mut ctx, dev),
                    "cannot create a CUDA context",
                )?;
                let attr = |a| {
                    let mut v = 0;
                    check(
                        sys::cuDeviceGetAttribute(&mut v, a, dev),
                        "cannot query the device",
                    )
                    .map(|()| v)
                };
                use sys::CUdevice_attribute::*;
                let major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
                let minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
                check(sys::cuCtxSetCurrent(ctx), "cannot use the CUDA context")?;
                let pool = if attr(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED)? == 1 {
                    let mut pool = std::ptr::null_mut();
                    check(
                        sys::cuDeviceGetDefaultMemPool(&mut pool, dev),
                        "cannot find the device's memory pool",
                    )?;
                    // Memory given back stays in the pool (the default gives it back to
                    // the system at each synchronization).
                    let mut keep = u64::MAX;
                    check(
                        sys::cuMemPoolSetAttribute(
                            pool,
                            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                            (&mut keep as *mut u64).cast(),
                        ),
                        "cannot set the device's memory pool",
                    )?;
                    Some(pool)
                } else {
                    None
                };
                e.insert(Device {
                    ctx,
                    arch: format!("sm_{major}{minor}"),
                    modules: HashMap::new(),
                    functions: HashMap::new(),
                    last: None,
                    loads: ModuleLoads::default(),
                    pool,
                    pooled: HashSet::new(),
                });
            }
        }
        let d = self.devices.get_mut(&n).expect("inserted above");
        // SAFETY: a live context.
        check(
            unsafe { sys::cuCtxSetCurrent(d.ctx) },
            "cannot use the CUDA context",
        )?;
        Ok(d)
    }

    /// What waiting for device `n` needs, taken under the lock: see [`Waiter`].
    fn waiter(&mut self, n: i32) -> Result<Waiter, String> {
        let d = self.device(n)?;
        Ok(Waiter {
            ctx: d.ctx,
            last: d.last,
        })
    }
}

/// A CUDA device's context and the last kernel launched on it: what a thread needs to wait
/// for the device without holding the platform's lock.
#[derive(Clone, Copy)]
struct Waiter {
    ctx: sys::CUcontext,
    last: Option<(usize, usize)>,
}

impl Waiter {
    /// Makes the device's context current on this thread.
    fn enter(&self) -> Result<(), String> {
        // SAFETY: a live context (primary contexts are retained for the process's lifetime).
        check(
            unsafe { sys::cuCtxSetCurrent(self.ctx) },
            "cannot use the CUDA context",
        )
    }

    /// Waits for everything launched on the device; an error of a kernel names the last
    /// one launched there.
    fn wait(&self) -> Result<(), String> {
        self.enter()?;
        // SAFETY: plain driver call with a current context.
        let rc = unsafe { sys::cuCtxSynchronize() };
        check(rc, "a GPU kernel failed").map_err(|e| self.name_kernel(e))
    }

    fn name_kernel(&self, e: String) -> String {
        match self.last {
            // SAFETY: the launch's strings live as long as the program.
            Some((k, at)) => unsafe {
                let (k, at) = (c_text(k as *const u8), c_text(at as *const u8));
                format!("{e} (the last kernel launched on the device was `{k}`, at {at})")
            },
            None => e,
        }
    }
}

/// Runs `f` outside the platform's lock; its error ends the program.
fn unlocked<T>(f: impl FnOnce() -> Result<T, String>) -> T {
    f().unwrap_or_else(|e| crate::error::fail(&e))
}

fn with_state<T>(f: impl FnOnce(&mut State) -> Result<T, String>) -> T {
    let mut guard = state();
    let s = guard.get_or_insert_with(State::default);
    match f(s) {
        Ok(v) => v,
        Err(e) => {
            drop(guard);
            crate::error::fail(&e)
        }
    }
}

/// How many CUDA devices this machine has (none without a driver).
pub fn device_count() -> i32 {
    let mut guard = state();
    let s = guard.get_or_insert_with(State::default);
    if s.init().is_err() {
        return 0;
    }
    let mut count = 0;
    // SAFETY: a valid out-pointer after `cuInit`.
    match unsafe { sys::cuDeviceGetCount(&mut count) } {
        sys::CUresult::CUDA_SUCCESS => count,
        _ => 0,
    }
}

/// The name of CUDA device `n` and its compute capability (`sm_XY`).
pub fn device_name(n: i32) -> (String, String) {
    with_state(|s| {
        let arch = s.device(n)?.arch.clone();
        let mut dev = 0;
        let mut name = [0 as c_char; 256];
        // SAFETY: valid out-pointers; the buffer's length is passed.
        unsafe {
            check(sys::cuDeviceGet(&mut dev, n), "cannot open the CUDA device")?;
            check(
                sys::cuDeviceGetName(name.as_mut_ptr(), name.len() as i32, dev),
                "cannot read the CUDA device's name",
            )?;
            Ok((
                CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned(),
                arch,
            ))
        }
    })
}

/// The device's address of page-locked host memory `p` (the same address with unified
/// addressing, on every 64-bit platform CUDA supports).
pub fn device_pointer(n: i32, p: *mut u8) -> *mut u8 {
    with_state(|s| {
        s.device(n)?;
        let mut d: sys::CUdeviceptr = 0;
        // SAFETY: a valid out-pointer, a current context.
        check(
            unsafe { sys::cuMemHostGetDevicePointer_v2(&mut d, p.cast(), 0) },
            "cannot find the device's address of host memory (is it page-locked, from `anydsl_alloc_host`?)",
        )?;
        Ok(d as usize as *mut u8)
    })
}

/// Device memory of `size` bytes on CUDA device `n`: from the device's memory pool where
/// it has one (when the device is full, after waiting for it and giving the pool's unused
/// memory back), else from `cuMemAlloc`.
pub fn alloc_device(n: i32, size: usize) -> *mut u8 {
    with_state(|s| {
        let d = s.device(n)?;
        let what = format!("cannot allocate {size} bytes on CUDA device {n}");
        let mut p: sys::CUdeviceptr = 0;
        let Some(pool) = d.pool else {
            // SAFETY: a valid out-pointer, a current context.
            check(unsafe { sys::cuMemAlloc_v2(&mut p, size.max(1)) }, &what)?;
            return Ok(p as usize as *mut u8);
        };
        // SAFETY: a valid out-pointer, a current context, the default stream (null).
        let mut rc = unsafe { sys::cuMemAllocAsync(&mut p, size.max(1), std::ptr::null_mut()) };
        if rc == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            // SAFETY: plain driver calls with a current context; the pool is the device's.
            unsafe {
                check(sys::cuCtxSynchronize(), "a GPU kernel failed")?;
                check(
                    sys::cuMemPoolTrimTo(pool, 0),
                    "cannot trim the device's memory pool",
                )?;
                rc = sys::cuMemAllocAsync(&mut p, size.max(1), std::ptr::null_mut());
            }
        }
        check(rc, &what)?;
        d.pooled.insert(p as usize);
        Ok(p as usize as *mut u8)
    })
}

/// Page-locked host memory, fast to copy to and from CUDA device `n`.
pub fn alloc_pinned(n: i32, size: usize) -> *mut u8 {
    with_state(|s| {
        s.device(n)?;
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: a valid out-pointer, a current context.
        check(
            unsafe { sys::cuMemHostAlloc(&mut p, size.max(1), 0) },
            &format!("cannot allocate {size} bytes of page-locked host memory"),
        )?;
        s.pinned.insert(p as usize);
        Ok(p.cast())
    })
}

/// Managed memory that the host and CUDA device `n` both address.
pub fn alloc_unified(n: i32, size: usize) -> *mut u8 {
    with_state(|s| {
        s.device(n)?;
        let mut p: sys::CUdeviceptr = 0;
        // SAFETY: a valid out-pointer, a current context; 1 is CU_MEM_ATTACH_GLOBAL.
        check(
            unsafe { sys::cuMemAllocManaged(&mut p, size.max(1), 1) },
            &format!("cannot allocate {size} bytes of unified memory"),
        )?;
        Ok(p as usize as *mut u8)
    })
}

/// Frees device or unified memory of CUDA device `n`.
pub fn release_device(n: i32, p: *mut u8) {
    if p.is_null() {
        return;
    }
    with_state(|s| {
        let d = s.device(n)?;
        let at = p as usize as sys::CUdeviceptr;
        if d.pooled.remove(&(p as usize)) {
            // SAFETY: `p` came from `cuMemAllocAsync`; it goes back to the pool after what
            // the default stream runs before (the kernels that use it).
            check(
                unsafe { sys::cuMemFreeAsync(at, std::ptr::null_mut()) },
                "cannot free device memory",
            )
        } else {
            // SAFETY: `p` came from `cuMemAlloc` or `cuMemAllocManaged`.
            check(
                unsafe { sys::cuMemFree_v2(at) },
                "cannot free device memory",
            )
        }
    })
}

/// Frees `p` if it is page-locked host memory; false if it is not.
pub fn release_pinned(p: *mut u8) -> bool {
    let mut guard = state();
    let Some(s) = guard.as_mut() else {
        return false;
    };
    if !s.pinned.remove(&(p as usize)) {
        return false;
    }
    // SAFETY: `p` came from `cuMemHostAlloc`.
    let rc = unsafe { sys::cuMemFreeHost(p.cast()) };
    drop(guard);
    if let Err(e) = check(rc, "cannot free page-locked memory") {
        crate::error::fail(&e);
    }
    true
}

/// Copies `size` bytes where at least one side is on a CUDA device (unified addressing
/// tells the driver which way). Waits for earlier kernels, as AnyDSL's copies do.
pub fn copy(devs: [i32; 2], src: *const u8, dst: *mut u8, size: usize) {
    let waits = with_state(|s| {
        let mut cuda: Vec<i32> = (devs.iter())
            .filter(|&&d| split(d).0 == PLATFORM)
            .map(|&d| split(d).1)
            .collect();
        cuda.dedup();
        // Some CUDA context does the copy (the caller copies between host buffers itself;
        // device 0's all the same).
        if cuda.is_empty() {
            cuda.push(0);
        }
        cuda.into_iter()
            .map(|n| s.waiter(n))
            .collect::<Result<Vec<_>, _>>()
    });
    unlocked(|| {
        for w in &waits {
            w.wait()?;
        }
        waits[0].enter()?;
        // SAFETY: the caller passes live ranges; the context is current.
        check(
            unsafe {
                sys::cuMemcpy(
                    dst as usize as sys::CUdeviceptr,
                    src as usize as sys::CUdeviceptr,
                    size,
                )
            },
            "a copy to or from a CUDA device failed",
        )
    })
}

/// Waits until everything launched on CUDA device `n` is done (without holding the
/// platform's lock: other threads may use other devices meanwhile).
pub fn synchronize(n: i32) {
    let w = with_state(|s| s.waiter(n));
    unlocked(|| w.wait())
}

/// Waits for device `dev` (AnyDSL's number; nothing to wait for on the host).
#[no_mangle]
pub extern "C" fn anydsl_synchronize(dev: i32) {
    let (platform, n) = split(dev);
    if platform == PLATFORM {
        synchronize(n);
    }
}

impl State {
    /// The timer events of CUDA device `n`, made on first use.
    fn timer(&mut self, n: i32) -> Result<[sys::CUevent; 2], String> {
        self.device(n)?;
        if let Some(&t) = self.timers.get(&n) {
            return Ok(t);
        }
        let mut events = [std::ptr::null_mut(); 2];
        for e in &mut events {
            // SAFETY: a valid out-pointer, a current context.
            check(
                unsafe { sys::cuEventCreate(e, 0) },
                "cannot create an event",
            )?;
        }
        self.timers.insert(n, events);
        Ok(events)
    }
}

/// The host's timer starts (device numbers of the host platform).
static HOST_TIMERS: Mutex<Vec<(i32, std::time::Instant)>> = Mutex::new(Vec::new());

/// Starts the timer of device `dev` (AnyDSL's number): on a CUDA device, records an event
/// on its stream, after everything launched before; on the host, reads the clock.
#[no_mangle]
pub extern "C" fn durin_timer_start(dev: i32) {
    let (platform, n) = split(dev);
    if platform != PLATFORM {
        let mut t = HOST_TIMERS.lock().unwrap_or_else(|e| e.into_inner());
        t.retain(|&(d, _)| d != dev);
        t.push((dev, std::time::Instant::now()));
        return;
    }
    with_state(|s| {
        let [start, _] = s.timer(n)?;
        // SAFETY: an event of the current context, the default stream.
        check(
            unsafe { sys::cuEventRecord(start, std::ptr::null_mut()) },
            "cannot record an event",
        )
    })
}

/// Milliseconds from the last `durin_timer_start(dev)` to now: on a CUDA device, between
/// two events on its stream (the GPU's time for what was launched in between, without the
/// host's), after waiting for the second; on the host, the clock's. A stop without a start
/// is an error.
#[no_mangle]
pub extern "C" fn durin_timer_stop(dev: i32) -> f64 {
    let (platform, n) = split(dev);
    if platform != PLATFORM {
        let t = HOST_TIMERS.lock().unwrap_or_else(|e| e.into_inner());
        return match t.iter().find(|&&(d, _)| d == dev) {
            Some((_, at)) => at.elapsed().as_secs_f64() * 1e3,
            None => {
                drop(t);
                crate::error::fail(&stop_without_start(dev))
            }
        };
    }
    let (w, [start, stop]) = with_state(|s| {
        if !s.timers.contains_key(&n) {
            return Err(stop_without_start(dev));
        }
        Ok((s.waiter(n)?, s.timer(n)?))
    });
    unlocked(|| {
        w.enter()?;
        let mut ms = 0f32;
        // SAFETY: events of the current context; the first was recorded by the start.
        unsafe {
            check(
                sys::cuEventRecord(stop, std::ptr::null_mut()),
                "cannot record an event",
            )?;
            check(sys::cuEventSynchronize(stop), "a GPU kernel failed")
                .map_err(|e| w.name_kernel(e))?;
            check(
                sys::cuEventElapsedTime_v2(&mut ms, start, stop),
                "cannot read the timer's events",
            )?;
        }
        Ok(ms as f64)
    })
}

fn stop_without_start(dev: i32) -> String {
    format!("`durin_timer_stop({dev})` without a `durin_timer_start({dev})` before it")
}

/// Microseconds spent in kernels so far when `ANYDSL_PROFILE=full` (0 otherwise).
#[no_mangle]
pub extern "C" fn anydsl_get_kernel_time() -> i64 {
    state().as_ref().map_or(0, |s| s.kernel_us as i64)
}

unsafe fn c_text(p: *const u8) -> String {
    if p.is_null() {
        String::new()
    } else {
        CStr::from_ptr(p.cast()).to_string_lossy().into_owned()
    }
}

/// Launches kernel `kernel` of CUDA module `module` (zero-terminated CUDA C) on CUDA
/// device `dev` (the device's ordinal, as `cuda(dev, ..)` takes it) with `grid` threads in blocks of `block`, passing `args[..nargs]` (each the address
/// of one argument). `place` is the launch's source place, for errors.
///
/// # Safety
/// `module`, `kernel` and `place` are zero-terminated strings that live as long as the
/// program (the module is cached by its address); `args` holds `nargs` valid addresses of
/// values of the kernel's parameter types.
#[no_mangle]
pub unsafe extern "C" fn durin_cuda_launch(
    dev: i32,
    gx: i32,
    gy: i32,
    gz: i32,
    bx: i32,
    by: i32,
    bz: i32,
    module: *const u8,
    kernel: *const u8,
    args: *mut *mut c_void,
    nargs: i32,
    place: *const u8,
) {
    let _ = nargs;
    with_state(|s| {
        // The names are read only for a message: a launch copies no strings.
        let fail = |e: String| {
            let (name, at) = (c_text(kernel), c_text(place));
            format!("cannot launch kernel `{name}` (at {at}): {e}")
        };
        let n = dev;
        let blocks = grid_blocks([gx, gy, gz], [bx, by, bz]).map_err(fail)?;
        if blocks.contains(&0) {
            return Ok(());
        }
        let profile = *s
            .profile
            .get_or_insert_with(|| std::env::var("ANYDSL_PROFILE").is_ok_and(|v| v == "full"));
        let f = function(s, n, module, kernel).map_err(fail)?;
        let mut events = [std::ptr::null_mut(); 2];
        if profile {
            for e in &mut events {
                check(sys::cuEventCreate(e, 0), "cannot create an event").map_err(fail)?;
            }
            check(sys::cuEventRecord(events[0], std::ptr::null_mut()), "event").map_err(fail)?;
        }
        let rc = sys::cuLaunchKernel(
            f,
            blocks[0],
            blocks[1],
            blocks[2],
            bx as u32,
            by as u32,
            bz as u32,
            0,
            std::ptr::null_mut(),
            args,
            std::ptr::null_mut(),
        );
        check(rc, "the launch failed").map_err(fail)?;
        if let Some(d) = s.devices.get_mut(&n) {
            d.last = Some((kernel as usize, place as usize));
        }
        if profile {
            check(sys::cuEventRecord(events[1], std::ptr::null_mut()), "event").map_err(fail)?;
            check(sys::cuEventSynchronize(events[1]), "the kernel failed").map_err(fail)?;
            let mut ms = 0f32;
            check(
                sys::cuEventElapsedTime_v2(&mut ms, events[0], events[1]),
                "event",
            )
            .map_err(fail)?;
            s.kernel_us += ms as f64 * 1e3;
            for e in events {
                sys::cuEventDestroy_v2(e);
            }
        }
        Ok(())
    })
}

/// The blocks of a launch of `grid` threads in blocks of `block` threads, per axis, or
/// why it is refused (a negative grid size, a block size that is not positive, a grid that
/// is not a multiple of the block). A grid with no threads along an axis has no blocks:
/// such a launch runs nothing (an empty index space, as a loop over an empty range).
pub fn grid_blocks(grid: [i32; 3], block: [i32; 3]) -> Result<[u32; 3], String> {
    let mut blocks = [0u32; 3];
    for i in 0..3 {
        let (g, b) = (grid[i], block[i]);
        if g < 0 || b <= 0 {
            let ([gx, gy, gz], [bx, by, bz]) = (grid, block);
            return Err(format!(
                "the grid ({gx}, {gy}, {gz}) and block ({bx}, {by}, {bz}) sizes are refused: a grid size may not be negative, a block size must be positive"
            ));
        }
        if g % b != 0 {
            let axis = ["x", "y", "z"][i];
            return Err(format!(
                "the grid size in {axis} ({g} threads) is not a multiple of the block size ({b})"
            ));
        }
        blocks[i] = (g / b) as u32;
    }
    Ok(blocks)
}

/// The kernel `kernel` of `module` on CUDA device `n`, compiled and loaded on first use.
unsafe fn function(
    s: &mut State,
    n: i32,
    module: *const u8,
    kernel: *const u8,
) -> Result<sys::CUfunction, String> {
    let d = s.device(n)?;
    if let Some(&f) = d.functions.get(&(module as usize, kernel as usize)) {
        return Ok(f);
    }
    let m = match d.modules.get(&(module as usize)) {
        Some(&m) => m,
        None => {
            let source = c_text(module);
            let t = std::time::Instant::now();
            let (cubin, origin) = nvrtc::cached_cubin(&source, &d.arch)?;
            let us = t.elapsed().as_secs_f64() * 1e6;
            if origin == nvrtc::Origin::Compiled {
                d.loads.compiled += 1;
                d.loads.compile_us += us;
            } else {
                d.loads.cached += 1;
                d.loads.cached_us += us;
            }
            let t = std::time::Instant::now();
            let mut m = std::ptr::null_mut();
            check(
                sys::cuModuleLoadData(&mut m, cubin.as_ptr().cast()),
                "cannot load the compiled kernels",
            )?;
            d.loads.load_us += t.elapsed().as_secs_f64() * 1e6;
            d.modules.insert(module as usize, m);
            m
        }
    };
    let mut f = std::ptr::null_mut();
    check(
        sys::cuModuleGetFunction(&mut f, m, kernel.cast()),
        "the kernel is not in its module",
    )?;
    d.functions.insert((module as usize, kernel as usize), f);
    Ok(f)
}

crate::symbol_table!(
    anydsl_synchronize,
    anydsl_get_kernel_time,
    durin_timer_start,
    durin_timer_stop,
    durin_cuda_launch
);

#[cfg(test)]
mod launch_tests {
    use super::grid_blocks;

    #[test]
    fn grids_divide_into_blocks_and_empty_grids_have_none() {
        assert_eq!(grid_blocks([256, 6, 1], [64, 2, 1]), Ok([4, 3, 1]));
        assert_eq!(grid_blocks([0, 8, 1], [128, 1, 1]), Ok([0, 8, 1]));
        assert!(grid_blocks([-64, 1, 1], [64, 1, 1]).is_err());
        assert!(grid_blocks([64, 1, 1], [0, 1, 1]).is_err());
        let e = grid_blocks([100, 1, 1], [64, 1, 1]).unwrap_err();
        assert!(e.contains("not a multiple"), "{e}");
    }
}
