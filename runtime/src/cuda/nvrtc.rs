//! CUDA C to PTX or cubin with NVRTC, and the on-disk cache of cubins.
//!
//! NVRTC is loaded when first used: from the folders where it is usually installed (the
//! CUDA toolkit's, `CUDA_HOME` and `CUDA_PATH`, the pip package's in the project's `.deps`
//! and in Python's site-packages; see [`candidates`]), then from the library path. Without
//! it, compiling is an error that lists where it looked. A cubin is cached in `$DURIN_CACHE_DIR` (default
//! `$XDG_CACHE_HOME/durin` or `~/.cache/durin`), under `kernels/`, keyed by a hash of the
//! source, the architecture and NVRTC's version; the source is kept next to it and compared
//! on every hit, so a hash collision recompiles instead of loading the wrong code. The cache
//! keeps at most `$DURIN_CACHE_MAX_MB` megabytes (1,000 by default): storing an entry
//! removes the least recently used ones beyond that.

use cudarc::nvrtc::{result, sys};
use std::ffi::CString;
use std::path::{Path, PathBuf};

/// The file NVRTC 13 is.
const LIBRARY: &str = "libnvrtc.so.13";

/// The folders NVRTC is looked for in, before the library path: `CUDA_HOME` and
/// `CUDA_PATH` (their `lib64`), the CUDA toolkit's usual folders, and the pip package's
/// `nvidia/cu13/lib` in the project's `.deps/python` (found from the executable, which
/// lives in the project's `target/`) and in Python's site-packages.
fn candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(v) = std::env::var_os(var) {
            out.push(PathBuf::from(v).join("lib64"));
        }
    }
    out.push(PathBuf::from("/usr/local/cuda/lib64"));
    out.push(PathBuf::from("/usr/local/cuda/targets/x86_64-linux/lib"));
    let pip = ["nvidia", "cu13", "lib"].iter().collect::<PathBuf>();
    if let Ok(exe) = std::env::current_exe() {
        for dir in exe.ancestors().skip(1).take(4) {
            out.push(dir.join(".deps/python").join(&pip));
        }
    }
    let mut sites: Vec<PathBuf> = Vec::new();
    for lib in ["/usr/local/lib", "/usr/lib"] {
        if let Ok(entries) = std::fs::read_dir(lib) {
            for e in entries.flatten() {
                if e.file_name().to_string_lossy().starts_with("python3") {
                    sites.push(e.path().join("dist-packages"));
                    sites.push(e.path().join("site-packages"));
                }
            }
        }
    }
    if let Some(home) = std::env::var_os("HOME") {
        if let Ok(entries) = std::fs::read_dir(PathBuf::from(home).join(".local/lib")) {
            for e in entries.flatten() {
                sites.push(e.path().join("site-packages"));
            }
        }
    }
    sites.sort();
    out.extend(sites.into_iter().map(|s| s.join(&pip)));
    out
}

extern "C" {
    fn dlopen(filename: *const std::ffi::c_char, flags: i32) -> *mut std::ffi::c_void;
}

/// Loads NVRTC from the first candidate folder that has it (once per process), so that
/// loading it by name later finds it; the folders it looked in.
fn preload() -> &'static [PathBuf] {
    static LOOKED: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    LOOKED.get_or_init(|| {
        let load = |f: &std::path::Path| {
            let Ok(path) = CString::new(f.as_os_str().as_encoded_bytes()) else {
                return false;
            };
            const RTLD_NOW: i32 = 2;
            const RTLD_GLOBAL: i32 = 0x100;
            // SAFETY: a NUL-terminated path; a library that fails to load gives null.
            !unsafe { dlopen(path.as_ptr(), RTLD_NOW | RTLD_GLOBAL) }.is_null()
        };
        let dirs = candidates();
        for d in &dirs {
            if !d.join(LIBRARY).is_file() {
                continue;
            }
            // NVRTC opens its builtins by name when it compiles: loaded from the same
            // folder first, they are found however the library path is set.
            let mut builtins: Vec<PathBuf> = (std::fs::read_dir(d).into_iter().flatten().flatten())
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("libnvrtc-builtins.so"))
                })
                .collect();
            builtins.sort();
            builtins.iter().for_each(|b| {
                load(b);
            });
            if load(&d.join(LIBRARY)) {
                break;
            }
        }
        dirs
    })
}

/// Whether NVRTC can be loaded.
pub fn available() -> bool {
    preload();
    // SAFETY: only tries to open the library.
    unsafe { sys::is_culib_present() }
}

fn require() -> Result<(), String> {
    if available() {
        return Ok(());
    }
    let looked: Vec<String> = preload().iter().map(|d| d.display().to_string()).collect();
    Err(format!(
        "NVRTC ({LIBRARY}) was not found: looked in {}, then on the library path; install the CUDA toolkit or `pip install nvidia-cuda-nvrtc==13.0.88`, or add the folder that holds it to LD_LIBRARY_PATH",
        looked.join(", ")
    ))
}

/// NVRTC's version, `(major, minor)`.
pub fn version() -> Result<(i32, i32), String> {
    require()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two valid out-pointers.
    let rc = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
    rc.result().map_err(|e| format!("NVRTC: {e:?}"))?;
    Ok((major, minor))
}

/// Checks an architecture name: `sm_` and a compute capability such as `90`.
pub fn check_arch(arch: &str) -> Result<u32, String> {
    arch.strip_prefix("sm_")
        .and_then(|n| n.trim_end_matches('a').parse::<u32>().ok())
        .filter(|&n| (30..=200).contains(&n))
        .ok_or_else(|| format!("`{arch}` is not a GPU architecture (expected `sm_` and a compute capability, such as `sm_90`)"))
}

/// Compiles CUDA C `source` for `arch` (`sm_90`): a cubin, or PTX text when `cubin` is
/// false. The error carries NVRTC's log.
pub fn compile(source: &str, arch: &str, cubin: bool) -> Result<Vec<u8>, String> {
    check_arch(arch)?;
    require()?;
    let src = CString::new(source).map_err(|_| "the CUDA source contains a NUL byte")?;
    let name = c"durin_module.cu";
    let prog = result::create_program(&src, Some(name)).map_err(|e| format!("NVRTC: {e:?}"))?;
    let target = if cubin {
        format!("--gpu-architecture={arch}")
    } else {
        format!("--gpu-architecture={}", arch.replace("sm_", "compute_"))
    };
    // No contraction of a multiplication and an addition into a fused multiply-add: floats
    // compute as the IR says, on the device as on the host (`fmaf` is there for the fused
    // operation).
    let options = [
        target.as_str(),
        "--std=c++17",
        "-default-device",
        "--fmad=false",
    ];
    // SAFETY: `prog` is live until destroyed below; `src` and `name` outlive it.
    let out = unsafe {
        let compiled = result::compile_program(prog, &options);
        let out = match compiled {
            Ok(()) if cubin => cubin_of(prog),
            Ok(()) => result::get_ptx(prog)
                .map(|p| p.iter().map(|&c| c as u8).take_while(|&c| c != 0).collect())
                .map_err(|e| format!("NVRTC: {e:?}")),
            Err(_) => {
                let log = result::get_program_log(prog)
                    .map(|l| {
                        let bytes: Vec<u8> =
                            l.iter().map(|&c| c as u8).take_while(|&c| c != 0).collect();
                        String::from_utf8_lossy(&bytes).into_owned()
                    })
                    .unwrap_or_default();
                Err(format!(
                    "NVRTC could not compile the generated CUDA code:\n{}",
                    log.trim_end()
                ))
            }
        };
        let _ = result::destroy_program(prog);
        out
    }?;
    Ok(out)
}

/// # Safety
/// `prog` is a live, compiled program.
unsafe fn cubin_of(prog: sys::nvrtcProgram) -> Result<Vec<u8>, String> {
    let mut size = 0usize;
    sys::nvrtcGetCUBINSize(prog, &mut size)
        .result()
        .map_err(|e| format!("NVRTC: {e:?}"))?;
    let mut buf = vec![0u8; size];
    sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr().cast())
        .result()
        .map_err(|e| format!("NVRTC: {e:?}"))?;
    Ok(buf)
}

/// The folder of the kernel cache.
pub fn cache_dir() -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let root = env("DURIN_CACHE_DIR")
        .or_else(|| env("XDG_CACHE_HOME").map(|p| p.join("durin")))
        .or_else(|| env("HOME").map(|p| p.join(".cache").join("durin")))?;
    Some(root.join("kernels"))
}

/// 64-bit FNV-1a: a stable hash for cache keys.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// How a cubin was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Compiled now (and stored, when the cache is writable).
    Compiled,
    /// Read from the cache.
    Cached,
}

/// The cubin of `source` for `arch`, from the cache when it holds it.
pub fn cached_cubin(source: &str, arch: &str) -> Result<(Vec<u8>, Origin), String> {
    cached_cubin_in(cache_dir().as_deref(), source, arch)
}

/// [`cached_cubin`] with the cache in `dir` (none: compile every time).
pub fn cached_cubin_in(
    dir: Option<&Path>,
    source: &str,
    arch: &str,
) -> Result<(Vec<u8>, Origin), String> {
    let (major, minor) = version()?;
    let Some(dir) = dir else {
        return Ok((compile(source, arch, true)?, Origin::Compiled));
    };
    let key = format!(
        "{:016x}-{}-{arch}-nvrtc{major}.{minor}",
        fnv1a(source.as_bytes()),
        source.len()
    );
    let (bin, src) = (
        dir.join(format!("{key}.cubin")),
        dir.join(format!("{key}.cu")),
    );
    if let (Ok(b), Ok(s)) = (std::fs::read(&bin), std::fs::read(&src)) {
        if s == source.as_bytes() && !b.is_empty() {
            // Used now: the last to go when the cache is trimmed.
            let _ = std::fs::File::options()
                .append(true)
                .open(&bin)
                .and_then(|f| f.set_modified(std::time::SystemTime::now()));
            return Ok((b, Origin::Cached));
        }
    }
    let cubin = compile(source, arch, true)?;
    // A cache that cannot be written is no error: the next run compiles again.
    if std::fs::create_dir_all(dir).is_ok() {
        let tmp = dir.join(format!("{key}.{}.tmp", std::process::id()));
        if std::fs::write(&tmp, source).is_ok() {
            let _ = std::fs::rename(&tmp, &src);
        }
        if std::fs::write(&tmp, &cubin).is_ok() {
            let _ = std::fs::rename(&tmp, &bin);
        }
        trim(dir, cache_limit(), &bin);
    }
    Ok((cubin, Origin::Compiled))
}

/// The most bytes the kernel cache keeps: `$DURIN_CACHE_MAX_MB` megabytes (10^6 bytes), 1,000
/// by default (a module of the largest programs, its source and its cubin, is a few MB).
pub fn cache_limit() -> u64 {
    std::env::var("DURIN_CACHE_MAX_MB")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(1000)
        .saturating_mul(1_000_000)
}

/// Removes the least recently used entries of the cache in `dir` (a cubin and its source;
/// a hit marks its cubin used) until what is left holds at most `limit` bytes, never `keep`
/// (the entry just stored). Whatever cannot be read or removed is left: another run may be
/// using the cache at the same time.
pub fn trim(dir: &Path, limit: u64, keep: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    let mut cubins: Vec<(std::time::SystemTime, PathBuf, u64)> = Vec::new();
    let mut total = 0;
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().is_none_or(|x| x != "cubin") {
            continue;
        }
        let Ok(meta) = e.metadata() else {
            continue;
        };
        let bytes = meta.len() + size(&path.with_extension("cu"));
        total += bytes;
        let used = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
        cubins.push((used, path, bytes));
    }
    if total <= limit {
        return;
    }
    // Oldest first; equal times by name, so that the order does not depend on the folder's.
    cubins.sort();
    for (_, path, bytes) in cubins {
        if total <= limit {
            break;
        }
        if path == keep {
            continue;
        }
        // The cubin first: an entry without it is no hit, whatever became of its source.
        if std::fs::remove_file(&path).is_ok() {
            let _ = std::fs::remove_file(path.with_extension("cu"));
            total = total.saturating_sub(bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Trimming removes the entries used longest ago (cubin and source) until the rest fits,
    /// keeps the one just stored whatever its age, and leaves other files alone.
    #[test]
    fn trimming_removes_the_least_recently_used_entries() {
        let dir = std::env::temp_dir().join(format!("durin-cache-trim-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let t0 = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        // Entries a (oldest) to e, each a 100-byte cubin and a 50-byte source.
        for (i, name) in ["a", "b", "c", "d", "e"].iter().enumerate() {
            let bin = dir.join(format!("{name}.cubin"));
            std::fs::write(&bin, [0u8; 100]).unwrap();
            std::fs::write(dir.join(format!("{name}.cu")), [b'x'; 50]).unwrap();
            let f = std::fs::File::options().append(true).open(&bin).unwrap();
            f.set_modified(t0 + std::time::Duration::from_secs(60 * i as u64))
                .unwrap();
        }
        std::fs::write(dir.join("other.txt"), [0u8; 1000]).unwrap();
        let names = || {
            let mut v: Vec<String> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        };
        // 750 bytes of entries: under the limit, nothing goes.
        trim(&dir, 750, &dir.join("e.cubin"));
        assert_eq!(names().len(), 11);
        // At most 450 bytes: three entries stay; `a` is the oldest but kept as the new one.
        trim(&dir, 450, &dir.join("a.cubin"));
        assert_eq!(
            names(),
            [
                "a.cu",
                "a.cubin",
                "d.cu",
                "d.cubin",
                "e.cu",
                "e.cubin",
                "other.txt"
            ]
        );
        trim(&dir, 0, &dir.join("e.cubin"));
        assert_eq!(names(), ["e.cu", "e.cubin", "other.txt"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn architectures_are_checked() {
        assert_eq!(check_arch("sm_90"), Ok(90));
        assert_eq!(check_arch("sm_90a"), Ok(90));
        assert!(check_arch("compute_90").is_err());
        assert!(check_arch("sm_x").is_err());
    }

    /// A second compile of the same source for the same architecture reads the cache; a
    /// new architecture, or a cached source that differs from the one asked for (as after
    /// a collision of hashes), compiles again.
    #[test]
    fn the_cache_serves_the_same_source_and_architecture_only() {
        assert!(
            available(),
            "NVRTC is not found (run the tests through ./scripts/test, which installs it)"
        );
        let dir = std::env::temp_dir().join(format!("durin-cache-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let source = "extern \"C\" __global__ void twice(float* p) { p[threadIdx.x] *= 2.0f; }";
        let get = |arch| cached_cubin_in(Some(&dir), source, arch).expect("compiles");
        let (first, how) = get("sm_90");
        assert_eq!(how, Origin::Compiled);
        assert!(!first.is_empty());
        let (again, how) = get("sm_90");
        assert_eq!(how, Origin::Cached);
        assert_eq!(again, first);
        assert_eq!(get("sm_80").1, Origin::Compiled);
        assert_eq!(get("sm_80").1, Origin::Cached);
        // Another text under the same key: the cached source no longer matches.
        for e in std::fs::read_dir(&dir)
            .expect("the cache was written")
            .flatten()
        {
            if e.path().extension().is_some_and(|x| x == "cu") {
                std::fs::write(e.path(), "// another program").unwrap();
            }
        }
        assert_eq!(get("sm_90").1, Origin::Compiled);
        assert_eq!(get("sm_90").1, Origin::Cached);
        // Without a cache, every request compiles.
        let none = cached_cubin_in(None, source, "sm_90").expect("compiles");
        assert_eq!(none.1, Origin::Compiled);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_hash_is_fnv1a() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(fnv1a(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x85944171f73967e8);
    }
}
