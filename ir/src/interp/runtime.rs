//! The runtime functions the interpreter provides, as AnyDSL's runtime does natively.

use super::memory::{BlockState, Owner, Pointer, Shape};
use super::{Interp, Target, Value};
use crate::def::Def;
use crate::types::TypeKind;

impl Interp<'_, '_> {
    /// The runtime functions a program may import, as AnyDSL's runtime provides them.
    /// `import` is the import's continuation, `at` the continuation that calls it.
    pub(super) fn call_import(
        &mut self,
        name: &str,
        args: &[Value],
        import: Def,
        at: Def,
    ) -> Result<Vec<Value>, String> {
        let bits = |i: usize| number(name, args, i);
        let ptr = |i: usize| pointer(name, args, i);
        if let Some(r) = self.device_import(name, args, import) {
            return r;
        }
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
            // The program stops with its message (the runtime's `durin_runtime_error`; the
            // interpreter names the places itself).
            "durin_runtime_error" | "durin_runtime_error_at" => {
                let message = self.memory.c_string(&ptr(0)?)?;
                return Err(String::from_utf8_lossy(&message).into_owned());
            }
            "print_flush" | "durin_vectorize_hint" | "durin_store_fence" | "durin_prefetch"
            | "durin_shm_stage" | "durin_shm_keep" | "durin_launch_note" | "synchronize" => {}
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
                self.memory.store(&Shape::Bits(4), &p, &v)?;
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
            "durin_spawn_thread" => {
                // The thread runs to its end here, before `spawn` returns.
                let body = args.first().cloned().unwrap_or(Value::Undef);
                let (target, call) = self.body_call(&body, &[], "spawn")?;
                self.run_from(Target::Value(target), call, at)
                    .map_err(|(_, m)| format!("in a spawned thread: {m}"))?;
                self.threads_spawned += 1;
                let id = self.threads_spawned;
                self.threads_running.insert(id);
                return Ok(vec![Value::Bits(id as u32 as u64)]);
            }
            "sync_thread" => {
                let id = bits(0)? as u32 as i32;
                if !self.threads_running.remove(&id) {
                    return Err(format!(
                        "`sync({id})`: no running thread has that number (each number that `spawn` returns is synced once)"
                    ));
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
                    r = self.run_block(&body, &threads, None, at);
                    if r.is_err() {
                        break;
                    }
                }
                self.block = outer;
                r?;
            }
            "durin_cpu_barrier" => {}
            // Every device's timer is the host's clock here.
            "durin_timer_start" => {
                let dev = bits(0)? as u32;
                self.timers.retain(|&(d, _)| d != dev);
                self.timers.push((dev, std::time::Instant::now()));
            }
            "durin_timer_stop" => {
                let dev = bits(0)? as u32;
                let Some(&(_, at)) = self.timers.iter().find(|&&(d, _)| d == dev) else {
                    return Err(format!(
                        "`durin_timer_stop({0})` without a `durin_timer_start({0})` before it",
                        dev as i32
                    ));
                };
                let ms = at.elapsed().as_secs_f64() * 1e3;
                return Ok(vec![Value::Bits(ms.to_bits())]);
            }
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
                if short == "alloc" {
                    // The host's memory, or a GPU's (platform 1, CUDA): not the other's.
                    let dev = bits(0)? as u32 as i32;
                    let owner = if dev & 15 == 0 { Owner::Host } else { Owner::Device(dev) };
                    self.memory.set_owner(&p, owner, at, self.last_program);
                }
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

    /// Whether the code running may access the memory `p` points into: host code not a
    /// GPU's memory, a CUDA kernel not the host's (`write`: a store).
    pub(super) fn check_side(&mut self, p: &Pointer, write: bool) -> Result<(), String> {
        let (owner, at, program) = self.memory.owner(p);
        let access = if write { "store to" } else { "load from" };
        let message = match owner {
            Owner::Device(dev) if self.cuda.is_none() => format!(
                "host code's {access} the memory of {} (a GPU's memory, which the host cannot \
                 address): copy it to host memory first (`img_copy`, `copy`)",
                // AnyDSL's device numbers: the platform in the low four bits (1: CUDA).
                match dev & 15 {
                    1 => format!("CUDA device {}", dev >> 4),
                    _ => format!("device {dev}"),
                }
            ),
            Owner::Host if self.cuda.is_some() => format!(
                "a CUDA kernel's {access} host memory (which the GPU cannot address): copy it to \
                 the device first (`img_copy`, `copy`)"
            ),
            _ => return Ok(()),
        };
        if let Some(at) = at {
            let what = match owner {
                Owner::Device(_) => "the memory was allocated on the device here",
                _ => "the memory was allocated on the host here",
            };
            self.related = Some((at, program, what.into()));
        }
        Err(message)
    }

    /// Runs the threads `threads` of one block of a kernel `body`, in rounds: each round
    /// runs every thread that has not finished until it finishes or reaches the barrier.
    /// A CPU kernel takes each thread's global index; a CUDA kernel (`cuda`: its block and
    /// the values the launch passes) takes those values and reads its index from
    /// `threadIdx` (then `threads` are the threads' indices in the block).
    fn run_block(
        &mut self,
        body: &Value,
        threads: &[[i32; 3]],
        cuda: Option<(super::CudaThread, &[Value])>,
        at: Def,
    ) -> Result<(), String> {
        let n = threads.len();
        self.block = Some(super::KernelBlock {
            shared: Vec::new(),
            reserved: vec![0; n],
            current: 0,
            touched: Default::default(),
        });
        let mut waiting: Vec<Option<Value>> = vec![None; n];
        let mut done = vec![false; n];
        let mut left = n;
        while left > 0 {
            // Each round runs the threads from one barrier to the next.
            if let Some(b) = self.block.as_mut() {
                b.touched.clear();
            }
            for t in 0..n {
                if done[t] {
                    continue;
                }
                if let Some(b) = self.block.as_mut() {
                    b.current = t;
                }
                if let Some((ids, _)) = cuda {
                    self.cuda = Some(super::CudaThread {
                        tid: threads[t],
                        ..ids
                    });
                }
                let (target, call) = match (waiting[t].take(), cuda) {
                    (Some(ret), _) => (ret, vec![Value::Mem(self.mem)]),
                    (None, Some((_, captured))) => {
                        self.body_call(body, captured, "a kernel launch")?
                    }
                    (None, None) => {
                        let idx = threads[t].map(|v| Value::Bits(v as u32 as u64));
                        self.body_call(body, &idx, "durin_cpu_launch")?
                    }
                };
                self.run_from(Target::Value(target), call, at)
                    .map_err(|(_, m)| match cuda {
                        Some((ids, _)) => format!(
                            "in a CUDA kernel, block ({}, {}, {}), thread ({}, {}, {}): {m}",
                            ids.bid[0],
                            ids.bid[1],
                            ids.bid[2],
                            threads[t][0],
                            threads[t][1],
                            threads[t][2]
                        ),
                        None => format!("in a CPU kernel: {m}"),
                    })?;
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

    /// CUDA's built-in variables and device functions, in a CUDA kernel: `threadIdx.x` and
    /// the other indices, atomics (one thread at a time, so they are atomic), `__ldg`,
    /// `__threadfence`, `min`, `max`, `rsqrtf`. `None` for other names.
    fn device_import(
        &mut self,
        name: &str,
        args: &[Value],
        k: Def,
    ) -> Option<Result<Vec<Value>, String>> {
        let index = |v: [i32; 3], c: &str| -> Option<i32> {
            Some(
                v[match c {
                    "x" => 0,
                    "y" => 1,
                    "z" => 2,
                    _ => return None,
                }],
            )
        };
        if let Some((var, c)) = name.split_once('.') {
            if matches!(var, "threadIdx" | "blockIdx" | "blockDim" | "gridDim") {
                let Some(t) = self.cuda else {
                    return Some(Err(format!("`{name}` outside a CUDA kernel")));
                };
                let v = match var {
                    "threadIdx" => index(t.tid, c),
                    "blockIdx" => index(t.bid, c),
                    "blockDim" => index(t.block, c),
                    _ => index(t.grid, c),
                }?;
                return Some(Ok(vec![Value::Bits(v as u32 as u64)]));
            }
        }
        let device = matches!(
            name,
            "atomicAdd"
                | "atomicMin"
                | "atomicMax"
                | "atomicExch"
                | "atomicCAS"
                | "__ldg"
                | "ldg_f32x4"
                | "stg_f32x4"
                | "__threadfence"
                | "min"
                | "max"
                | "rsqrtf"
                | "vprintf"
        );
        if !device {
            return None;
        }
        if self.cuda.is_none() {
            return Some(Err(format!("`{name}` outside a CUDA kernel")));
        }
        Some(self.device_function(name, args, k))
    }

    fn device_function(
        &mut self,
        name: &str,
        args: &[Value],
        k: Def,
    ) -> Result<Vec<Value>, String> {
        let bits = |i: usize| number(name, args, i);
        // The element type: the pointee of the first parameter, else the result's.
        let w = self.w;
        let params = w
            .types()
            .cont_params(w.type_of(k))
            .map(|p| p.to_vec())
            .unwrap_or_default();
        let elem = params.get(1).and_then(|&t| match w.kind(t) {
            TypeKind::Ptr { pointee, .. } => Some(*pointee),
            _ => None,
        });
        match name {
            "__threadfence" => Ok(Vec::new()),
            "vprintf" => {
                let fmt = self.memory.c_string(&pointer(name, args, 0)?)?;
                let (text, n) =
                    super::printf::vprintf(&self.memory, &fmt, &pointer(name, args, 1)?)?;
                self.out.extend_from_slice(&text);
                Ok(vec![Value::Bits(n as u32 as u64)])
            }
            "min" | "max" => {
                let (a, b) = (bits(0)? as u32 as i32, bits(1)? as u32 as i32);
                let r = if name == "min" { a.min(b) } else { a.max(b) };
                Ok(vec![Value::Bits(r as u32 as u64)])
            }
            "rsqrtf" => {
                let x = f32::from_bits(bits(0)? as u32);
                Ok(vec![Value::Bits((1.0 / x.sqrt()).to_bits() as u64)])
            }
            "ldg_f32x4" | "stg_f32x4" => {
                // A `float4` access: the GPU faults on an address that is not a multiple of 16.
                let global = pointer(name, args, if name == "ldg_f32x4" { 1 } else { 0 })?;
                if global.offset.rem_euclid(16) != 0 {
                    return Err(format!(
                        "`{name}` of an address that is not a multiple of 16 bytes"
                    ));
                }
                let elem = elem.ok_or_else(|| format!("`{name}` without a pointer parameter"))?;
                let shape = Shape::of(w, elem);
                self.check_side(&global, name == "stg_f32x4")?;
                let (to, v) = if name == "ldg_f32x4" {
                    (pointer(name, args, 0)?, self.memory.load(&shape, &global)?)
                } else {
                    (global.clone(), args.get(1).cloned().unwrap_or(Value::Undef))
                };
                // A store into shared memory (or a load from it) is an access of the block's
                // threads like any other: checked for races.
                if let Some(b) = self.block.as_mut() {
                    if name == "ldg_f32x4" {
                        b.access(&global, shape.size(), false)?;
                    }
                    b.access(&to, shape.size(), true)?;
                }
                self.memory.store(&shape, &to, &v)?;
                Ok(Vec::new())
            }
            _ => {
                let p = pointer(name, args, 0)?;
                let elem = elem.ok_or_else(|| format!("`{name}` without a pointer parameter"))?;
                let shape = Shape::of(w, elem);
                self.check_side(&p, name != "__ldg")?;
                let old = self.memory.load(&shape, &p)?;
                if name == "__ldg" {
                    return Ok(vec![old]);
                }
                let Value::Bits(o) = old else {
                    return Err(format!("`{name}` on memory that holds no number"));
                };
                let v = bits(1)?;
                let kind = w.kind(elem).clone();
                let new = match (name, kind) {
                    ("atomicExch", _) => v,
                    ("atomicCAS", _) => {
                        let (cmp, val) = (v, bits(2)?);
                        if o == cmp {
                            val
                        } else {
                            o
                        }
                    }
                    ("atomicAdd", TypeKind::Float { bits: 32 }) => {
                        (f32::from_bits(o as u32) + f32::from_bits(v as u32)).to_bits() as u64
                    }
                    ("atomicAdd", TypeKind::Float { .. }) => {
                        (f64::from_bits(o) + f64::from_bits(v)).to_bits()
                    }
                    ("atomicAdd", _) => (o as u32).wrapping_add(v as u32) as u64,
                    ("atomicMin", TypeKind::Int { signed: true, .. }) => {
                        (o as u32 as i32).min(v as u32 as i32) as u32 as u64
                    }
                    ("atomicMax", TypeKind::Int { signed: true, .. }) => {
                        (o as u32 as i32).max(v as u32 as i32) as u32 as u64
                    }
                    ("atomicMin", _) => (o as u32).min(v as u32) as u64,
                    _ => (o as u32).max(v as u32) as u64,
                };
                self.memory.store(&shape, &p, &Value::Bits(new))?;
                Ok(vec![Value::Bits(o)])
            }
        }
    }

    /// Runs a CUDA kernel launch (`launch(mem, device, grid, block, kernel, values..,
    /// return)`) as a GPU would in the semantics that matter: the grid's blocks one after
    /// another, in each the block's threads interleaved so that `__syncthreads` separates
    /// phases, with shared memory of the block's own. The continuation to go on with, and
    /// its arguments.
    pub(super) fn cuda_launch(
        &mut self,
        args: &[Value],
        at: Def,
    ) -> Result<(Value, Vec<Value>), String> {
        let n = args.len();
        if n < 6 || !matches!(args[0], Value::Mem(_)) {
            return Err("a kernel launch with the wrong arguments".into());
        }
        let dims = |v: &Value| -> Result<[i32; 3], String> {
            match v {
                Value::Agg(parts) if parts.len() == 3 => {
                    let mut out = [0; 3];
                    for (o, p) in out.iter_mut().zip(parts.iter()) {
                        match p {
                            Value::Bits(b) => *o = *b as u32 as i32,
                            _ => return Err("a kernel launch whose sizes are undefined".into()),
                        }
                    }
                    Ok(out)
                }
                _ => Err("a kernel launch whose sizes are not three numbers".into()),
            }
        };
        let (grid, block) = (dims(&args[2])?, dims(&args[3])?);
        // A grid with no threads along an axis runs nothing (an empty index space, as a loop
        // over an empty range).
        if grid.iter().any(|&d| d < 0) || block.iter().any(|&d| d <= 0) {
            return Err(format!(
                "the grid ({}, {}, {}) and block ({}, {}, {}) sizes are refused: a grid size may not be negative, a block size must be positive",
                grid[0], grid[1], grid[2], block[0], block[1], block[2]
            ));
        }
        for i in 0..3 {
            if grid[i] % block[i] != 0 {
                return Err(format!(
                    "the grid size in {} ({} threads) is not a multiple of the block size ({})",
                    ["x", "y", "z"][i],
                    grid[i],
                    block[i]
                ));
            }
        }
        let threads = block[0] as i64 * block[1] as i64 * block[2] as i64;
        if threads > 1024 {
            return Err(format!("a block of {threads} threads (at most 1024)"));
        }
        let blocks = [grid[0] / block[0], grid[1] / block[1], grid[2] / block[2]];
        self.consume_mem(&args[0])?;
        let kernel = args[4].clone();
        let captured: Vec<Value> = args[5..n - 1].to_vec();
        let ret = args[n - 1].clone();
        let tids: Vec<[i32; 3]> = (0..threads as i32)
            .map(|t| {
                [
                    t % block[0],
                    t / block[0] % block[1],
                    t / (block[0] * block[1]),
                ]
            })
            .collect();
        let (outer_block, outer_cuda) = (self.block.take(), self.cuda.take());
        let mut r = Ok(());
        'grid: for bz in 0..blocks[2] {
            for by in 0..blocks[1] {
                for bx in 0..blocks[0] {
                    let ids = super::CudaThread {
                        tid: [0; 3],
                        bid: [bx, by, bz],
                        block,
                        grid: blocks,
                    };
                    r = self.run_block(&kernel, &tids, Some((ids, &captured)), at);
                    if r.is_err() {
                        break 'grid;
                    }
                }
            }
        }
        self.block = outer_block;
        self.cuda = outer_cuda;
        r?;
        Ok((ret, vec![Value::Mem(self.mem)]))
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
        let bits = |i: usize| number(name, args, i);
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
            "copysign" => x.copysign(arg(1)?),
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
    "copysign",
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

/// Argument `i` of the import `name`, a number (its bits).
fn number(name: &str, args: &[Value], i: usize) -> Result<u64, String> {
    match args.get(i) {
        Some(Value::Bits(b)) => Ok(*b),
        _ => Err(format!("`{name}` expects a number as argument {i}")),
    }
}

/// Argument `i` of the import `name`, a pointer.
fn pointer(name: &str, args: &[Value], i: usize) -> Result<Pointer, String> {
    match args.get(i) {
        Some(Value::Ptr(p)) => Ok(p.clone()),
        _ => Err(format!("`{name}` expects a pointer as argument {i}")),
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
