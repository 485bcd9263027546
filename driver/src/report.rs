//! The reports a session prints (`--report launch|shm|closures|fusion`, `--time-passes`), as
//! lines of text rendered from what the passes found: nothing here compiles.

use durin_diag::{SourceMap, Span};
use durin_ir::World;
use durin_passes::{KernelBuffers, PassTime};

/// `--report launch`: per kernel, its block shape, the resources of its code in NVRTC's
/// cubin for `--gpu-arch`, and the blocks an SM of that architecture runs at once.
pub(crate) fn launch(
    kernels: &[KernelBuffers],
    source: Option<&str>,
    arch: &str,
    sources: &SourceMap,
) -> Vec<String> {
    let mut out = Vec::new();
    use durin_runtime::cuda::{cubin, nvrtc};
    let Some(source) = source.filter(|_| !kernels.is_empty()) else {
        out.push("launch: no CUDA kernels".to_string());
        return out;
    };
    let found = nvrtc::check_arch(arch).and_then(|cc| {
        let (bin, _) = nvrtc::cached_cubin(source, arch)?;
        Ok((cc, cubin::resources(&bin)?))
    });
    let (cc, resources) = match found {
        Ok(r) => r,
        Err(e) => {
            out.push(format!("launch: no resources for {arch}: {e}"));
            (0, Vec::new())
        }
    };
    for k in kernels {
        let place = sources.place(k.loc);
        let block = match k.block {
            Some([x, y, z]) => format!("blocks of {x}x{y}x{z}"),
            None => "blocks of a size known at run time".to_string(),
        };
        let tile = match k.tile {
            Some(t) => format!(
                " of {}x{} pixels, {}x{} per thread",
                t.block[0], t.block[1], t.thread[0], t.thread[1]
            ),
            None => String::new(),
        };
        let Some(r) = resources.iter().find(|r| r.name == k.name) else {
            out.push(format!(
                "launch: kernel `{}` ({place}), {block}{tile}",
                k.name
            ));
            continue;
        };
        let sm = cubin::sm(cc);
        let shared = match sm {
            Some(sm) if r.reserved_included => r.shared.saturating_sub(sm.reserved),
            _ => r.shared,
        };
        let mut line = format!(
            "launch: kernel `{}` ({place}), {block}{tile}: {} registers, {shared} bytes of shared memory, {} bytes of local memory per thread",
            k.name, r.registers, r.local
        );
        match (sm, k.block) {
            (Some(sm), Some([x, y, z])) => {
                let threads = x * y * z;
                let (n, limit) = cubin::occupancy(sm, threads, r);
                let warps = n * threads.div_ceil(32);
                line += &format!(
                    "; {n} blocks ({warps} warps, {}% of {}) per SM of {arch}, limited by {}",
                    100 * warps / sm.warps,
                    sm.warps,
                    limit.describe()
                );
            }
            (None, _) => line += &format!("; no occupancy model for {arch}"),
            (_, None) => {}
        }
        out.push(line);
    }
    out
}

/// `--report shm`: per kernel, a line for each buffer: what the kernel does with it.
pub(crate) fn shm(kernels: &[KernelBuffers], sources: &SourceMap) -> Vec<String> {
    let mut out = Vec::new();
    use durin_passes::Access;
    if kernels.is_empty() {
        out.push("shm: no CUDA kernels".to_string());
    }
    for k in kernels {
        let block = match k.block {
            Some([x, y, z]) => format!("blocks of {x}x{y}x{z}"),
            None => "blocks of a size known at run time".to_string(),
        };
        let mut place = sources.place(k.loc);
        // A kernel of a library's code: the program's own call it was specialized for.
        if let Some(at) = sources.program_call(k.loc, &k.expanded_from) {
            let at = sources.place(Some(at));
            place += &format!(", specialized for the call at {at}");
        }
        out.push(format!("shm: kernel `{}` ({place}), {block}", k.name));
        for b in &k.buffers {
            let what = durin_passes::describe_root(&b.root);
            let loads = match b.loads {
                1 => "1 load".to_string(),
                n => format!("{n} loads"),
            };
            let line = match &b.access {
                Access::ReadOnly => {
                    let fp = b.footprint.as_ref().map(|f| footprint_text(f, k.block));
                    format!("read-only ({loads}); {}", fp.unwrap_or_default())
                }
                Access::Written => format!("written at {}", sources.place(b.at)),
                Access::Disqualified(why) => {
                    format!("disqualified: {why} (at {})", sources.place(b.at))
                }
                Access::Unused => "not accessed".to_string(),
            };
            out.push(format!("shm:   {what}: {line}"));
            // The `stage` pass, in every CUDA pipeline, decided for each read-only buffer.
            if let Some(s) = &b.staging {
                out.push(format!("shm:     {}", staging_text(s)));
            }
        }
        let staged: Vec<_> = (k.buffers.iter())
            .filter_map(|b| b.staging.as_ref().filter(|s| s.staged))
            .collect();
        if !staged.is_empty() {
            let bytes: i64 = staged.iter().map(|s| s.bytes).sum();
            out.push(format!(
                "shm:   staged {} buffer{}, {bytes} bytes of shared memory per block",
                staged.len(),
                if staged.len() == 1 { "" } else { "s" }
            ));
        }
    }
    out
}

/// `--report fusion`: the image library's account of its choices (`pe_report` calls), one
/// line each, grouped by the place of the program's call and otherwise in the program's
/// order, without repeats (a call specialized twice alike reports once).
pub(crate) fn fusion(mut records: Vec<(Option<Span>, String)>, sources: &SourceMap) -> Vec<String> {
    records.sort_by_key(|(at, _)| at.map(|s| (s.file, s.start)));
    let mut seen = std::collections::HashSet::new();
    let mut lines: Vec<String> = (records.iter())
        .filter(|r| seen.insert(*r))
        .map(|(at, text)| format!("fusion: {}: {text}", sources.place(*at)))
        .collect();
    if lines.is_empty() {
        lines.push(
            "fusion: no graph of operators realized (`realize`, `realize_n`, `realize_many`)"
                .into(),
        );
    }
    lines
}

/// `--report closures`: one line per closure left, with its place, then a summary.
pub(crate) fn closures(w: &World, sources: &SourceMap) -> Vec<String> {
    let mut out = Vec::new();
    let report = durin_passes::closure_report(w);
    for c in &report.closures {
        let place = sources.place(c.loc);
        let name = c.name.as_deref().unwrap_or("(unnamed)");
        out.push(format!("closure: {place}: `{name}`: {}", c.why));
    }
    out.push(format!(
        "closures: {} left ({} top-level functions, {} blocks)",
        report.closures.len(),
        report.functions,
        report.blocks
    ));
    out
}

/// A buffer's footprint for `--report shm`, with the tile a block of `block` threads reads.
fn footprint_text(f: &durin_passes::Footprint, block: Option<[u32; 3]>) -> String {
    use durin_passes::Footprint;
    match f {
        Footprint::Box {
            dx,
            dy,
            rows,
            edge,
            bounded,
        } => {
            let down = if *rows {
                " (rows a run-time pitch apart)"
            } else {
                ""
            };
            let mut s = format!(
                "footprint: columns {:+} to {:+}, rows {:+} to {:+}{down} of each thread's pixel",
                dx.0, dx.1, dy.0, dy.1
            );
            if let Some([bx, by, _]) = block {
                let (tw, th) = (bx as i64 + dx.1 - dx.0, by as i64 + dy.1 - dy.0);
                s.push_str(&format!("; tile {tw}x{th} elements per block"));
            }
            if *edge {
                s.push_str("; outside the image, the boundary handler's reads");
            }
            if *edge && !bounded {
                s.push_str(" (not along every axis)");
            }
            s
        }
        Footprint::ThreadIndependent { elements: None } => {
            "footprint: the same elements for every thread (a mask)".to_string()
        }
        Footprint::ThreadIndependent {
            elements: Some((lo, hi)),
        } => format!("footprint: elements {lo} to {hi} for every thread (a mask)"),
        Footprint::NotAffine(why) => format!("footprint: not affine ({why})"),
    }
}

/// What staging decided for a buffer, with the cost model's estimate, for `--report shm`.
fn staging_text(s: &durin_passes::Staging) -> String {
    let Some(e) = &s.estimate else {
        return s.why.clone();
    };
    let l1 = if e.fits_l1 {
        "the L1 holds what the resident blocks read"
    } else {
        "the resident blocks' tiles overflow the L1"
    };
    format!(
        "{}; estimated gain {:+.0}% of the block's memory instructions for it ({:.0} without staging, {:.0} with: {} bytes of shared memory, {} blocks per SM, {l1})",
        s.why,
        e.gain() * 100.0,
        e.unstaged,
        e.staged,
        s.bytes,
        e.resident.1,
    )
}

/// `--time-passes`: each pass's time and the defs after it, and the total.
pub(crate) fn pass_times(times: &[PassTime]) -> Vec<String> {
    let mut out = vec![format!("{:<12} {:>10} {:>10}", "pass", "ms", "defs")];
    let mut total = 0.0;
    for t in times {
        let ms = t.time.as_secs_f64() * 1e3;
        total += ms;
        out.push(format!("{:<12} {:>10.3} {:>10}", t.name, ms, t.defs));
    }
    out.push(format!("{:<12} {:>10.3}", "total", total));
    out
}
