//! What a cubin says of its kernels' resources, and how many of a kernel's blocks an SM
//! runs at once with them (the occupancy, as CUDA's occupancy calculator computes it).
//!
//! A cubin is an ELF file. Its `.nv.info` section lists attributes per kernel symbol:
//! `EIATTR_REGCOUNT` (registers per thread) and `EIATTR_FRAME_SIZE` (bytes of local memory
//! per thread for the stack frame: arrays the compiler could not keep in registers, and
//! spills); a kernel's static shared memory is the size of its `.nv.shared.NAME` section.

/// One kernel's resources.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resources {
    /// The kernel's symbol.
    pub name: String,
    /// Registers per thread.
    pub registers: u32,
    /// Bytes of static shared memory per block: the kernel's own, and the system's
    /// reservation where `reserved_included`.
    pub shared: u64,
    /// Whether `shared` includes the shared memory the system reserves per block (cubins
    /// with a `.nv.shared.reserved.0` section: sm_90's).
    pub reserved_included: bool,
    /// Bytes of local memory per thread (its stack frame).
    pub local: u32,
}

/// `EIATTR_FRAME_SIZE`, `EIATTR_REGCOUNT`: attributes of `.nv.info` whose value is a
/// symbol index and a number.
const FRAME_SIZE: u8 = 0x11;
const REGCOUNT: u8 = 0x2f;
/// The format of an attribute with a 16-bit size and that many bytes of value.
const SIZED: u8 = 0x04;

struct Section<'a> {
    name: &'a str,
    data: &'a [u8],
    size: u64,
}

fn bytes(b: &[u8], at: usize, n: usize) -> Result<&[u8], String> {
    b.get(at..at.checked_add(n).ok_or("a cubin offset overflows")?)
        .ok_or_else(|| "a cubin shorter than its headers say".to_string())
}
fn u16_at(b: &[u8], at: usize) -> Result<u16, String> {
    Ok(u16::from_le_bytes(bytes(b, at, 2)?.try_into().unwrap()))
}
fn u32_at(b: &[u8], at: usize) -> Result<u32, String> {
    Ok(u32::from_le_bytes(bytes(b, at, 4)?.try_into().unwrap()))
}
fn u64_at(b: &[u8], at: usize) -> Result<u64, String> {
    Ok(u64::from_le_bytes(bytes(b, at, 8)?.try_into().unwrap()))
}
fn usize_at(b: &[u8], at: usize) -> Result<usize, String> {
    usize::try_from(u64_at(b, at)?).map_err(|_| "a cubin offset overflows".to_string())
}
/// The NUL-terminated string at `at` of a string table.
fn str_at(table: &[u8], at: usize) -> Result<&str, String> {
    let rest = table
        .get(at..)
        .ok_or("a cubin name outside its string table")?;
    let end = rest.iter().position(|&c| c == 0).unwrap_or(rest.len());
    std::str::from_utf8(&rest[..end]).map_err(|_| "a cubin name that is not UTF-8".to_string())
}

fn sections(b: &[u8]) -> Result<Vec<Section<'_>>, String> {
    if bytes(b, 0, 6)? != b"\x7fELF\x02\x01" {
        return Err("not a cubin (a 64-bit little-endian ELF file)".into());
    }
    let (shoff, entsize) = (usize_at(b, 0x28)?, u16_at(b, 0x3a)? as usize);
    let (count, names) = (u16_at(b, 0x3c)? as usize, u16_at(b, 0x3e)? as usize);
    if entsize < 64 {
        return Err("a cubin with section headers of an unknown size".into());
    }
    let mut raw = Vec::with_capacity(count);
    for i in 0..count {
        let h = shoff + i * entsize;
        let (kind, off, size) = (u32_at(b, h + 4)?, usize_at(b, h + 24)?, u64_at(b, h + 32)?);
        // NOBITS sections (shared memory) have a size but no bytes in the file.
        let data = if kind == 8 {
            &[][..]
        } else {
            bytes(b, off, size as usize)?
        };
        raw.push((u32_at(b, h)? as usize, data, size));
    }
    let table = raw.get(names).ok_or("a cubin without section names")?.1;
    raw.into_iter()
        .map(|(n, data, size)| {
            Ok(Section {
                name: str_at(table, n)?,
                data,
                size,
            })
        })
        .collect()
}

/// The resources of each kernel of `cubin` (its functions with registers), by name.
pub fn resources(cubin: &[u8]) -> Result<Vec<Resources>, String> {
    let secs = sections(cubin)?;
    let find = |n: &str| secs.iter().find(|s| s.name == n);
    let (symtab, strtab) = match (find(".symtab"), find(".strtab")) {
        (Some(s), Some(t)) => (s.data, t.data),
        _ => return Err("a cubin without a symbol table".into()),
    };
    let symbol = |i: u32| -> Result<&str, String> {
        str_at(strtab, u32_at(symtab, i as usize * 24)? as usize)
    };
    let reserved_included = find(".nv.shared.reserved.0").is_some();
    let mut out: Vec<(u32, Resources)> = Vec::new();
    let entry = |sym: u32, out: &mut Vec<(u32, Resources)>| -> Result<usize, String> {
        if let Some(i) = out.iter().position(|(s, _)| *s == sym) {
            return Ok(i);
        }
        let name = symbol(sym)?.to_string();
        let shared = find(&format!(".nv.shared.{name}")).map_or(0, |s| s.size);
        out.push((
            sym,
            Resources {
                name,
                registers: 0,
                shared,
                reserved_included,
                local: 0,
            },
        ));
        Ok(out.len() - 1)
    };
    let info = find(".nv.info").ok_or("a cubin without `.nv.info`")?.data;
    let mut at = 0;
    while at + 4 <= info.len() {
        let (format, attr) = (info[at], info[at + 1]);
        let size = if format == SIZED {
            u16_at(info, at + 2)? as usize
        } else {
            0
        };
        if format == SIZED && (attr == REGCOUNT || attr == FRAME_SIZE) && size == 8 {
            let (sym, value) = (u32_at(info, at + 4)?, u32_at(info, at + 8)?);
            let i = entry(sym, &mut out)?;
            if attr == REGCOUNT {
                out[i].1.registers = value;
            } else {
                out[i].1.local = value;
            }
        }
        at += 4 + size;
    }
    Ok(out.into_iter().map(|(_, r)| r).collect())
}

/// An SM's limits, per compute capability.
#[derive(Clone, Copy, Debug)]
pub struct Sm {
    pub registers: u32,
    pub warps: u32,
    pub blocks: u32,
    /// Bytes of shared memory for blocks.
    pub shared: u64,
    /// Bytes of shared memory the system reserves per block.
    pub reserved: u64,
}

/// The limits of compute capability `cc` (90 for `sm_90`), where known.
pub fn sm(cc: u32) -> Option<Sm> {
    let (warps, blocks, shared_kb, reserved) = match cc {
        70 | 72 => (64, 32, 96, 0),
        75 => (32, 16, 64, 0),
        80 => (64, 32, 164, 1024),
        86 | 87 => (48, 16, 100, 1024),
        89 => (48, 24, 100, 1024),
        90 => (64, 32, 228, 1024),
        _ => return None,
    };
    Some(Sm {
        registers: 65536,
        warps,
        blocks,
        shared: shared_kb * 1024,
        reserved,
    })
}

/// What limits the blocks an SM runs at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Registers,
    SharedMemory,
    Threads,
    Blocks,
}

impl Limit {
    pub fn describe(self) -> &'static str {
        match self {
            Limit::Registers => "registers",
            Limit::SharedMemory => "shared memory",
            Limit::Threads => "threads per SM",
            Limit::Blocks => "blocks per SM",
        }
    }
}

/// Blocks of `threads` threads of a kernel with `res` that one SM runs at once, and what
/// limits them (the first of the tightest limits: registers, shared memory, threads,
/// blocks).
pub fn occupancy(sm: Sm, threads: u32, res: &Resources) -> (u32, Limit) {
    let (registers, shared) = (res.registers, res.shared);
    let warps = threads.div_ceil(32).max(1);
    // Registers are allocated per warp, 256 at a time.
    let per_warp = (registers.max(1) * 32).div_ceil(256) * 256;
    let by_registers = if registers > 255 {
        0
    } else {
        (sm.registers / per_warp) / warps
    };
    let by_shared = if shared == 0 {
        u32::MAX
    } else {
        let reserved = if res.reserved_included {
            0
        } else {
            sm.reserved
        };
        let per_block = (shared + reserved).div_ceil(128) * 128;
        (sm.shared / per_block) as u32
    };
    let limits = [
        (by_registers, Limit::Registers),
        (by_shared, Limit::SharedMemory),
        (sm.warps / warps, Limit::Threads),
        (sm.blocks, Limit::Blocks),
    ];
    let (n, why) = limits.iter().copied().min_by_key(|(n, _)| *n).unwrap();
    (n, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(registers: u32, shared: u64) -> Resources {
        Resources {
            name: "k".into(),
            registers,
            shared,
            reserved_included: false,
            local: 0,
        }
    }

    #[test]
    fn occupancy_follows_the_calculator() {
        let h100 = sm(90).unwrap();
        // 128 threads and 32 registers: 16 blocks would fit the registers, 16 the
        // threads (64 warps / 4).
        assert_eq!(occupancy(h100, 128, &kernel(32, 0)), (16, Limit::Registers));
        // 128 threads, 56 registers: 56 * 32 = 1792 per warp, 36 warps, 9 blocks.
        assert_eq!(occupancy(h100, 128, &kernel(56, 0)), (9, Limit::Registers));
        // 43008 bytes of shared memory plus 1 KB reserved: 5 blocks of 44032 in 228 KB.
        assert_eq!(
            occupancy(h100, 128, &kernel(40, 43008)),
            (5, Limit::SharedMemory)
        );
        // The same where the cubin's size includes the reservation: 44032 bytes.
        let with = Resources {
            reserved_included: true,
            ..kernel(40, 44032)
        };
        assert_eq!(occupancy(h100, 128, &with), (5, Limit::SharedMemory));
        // 45 KB and the reservation: 4 blocks.
        assert_eq!(
            occupancy(h100, 128, &kernel(40, 46080)),
            (4, Limit::SharedMemory)
        );
        // 1024 threads of 16 registers: 2 blocks by threads.
        assert_eq!(occupancy(h100, 1024, &kernel(16, 0)), (2, Limit::Threads));
        // 32 threads of 8 registers: the 32 blocks per SM.
        assert_eq!(occupancy(h100, 32, &kernel(8, 0)), (32, Limit::Blocks));
        assert!(sm(61).is_none());
    }

    #[test]
    fn what_is_not_a_cubin_is_an_error() {
        assert!(resources(b"").is_err());
        assert!(resources(b"\x7fELF").is_err());
        assert!(resources(b"\x7fELF\x02\x01").is_err());
        let mut elf = vec![0u8; 64];
        elf[..6].copy_from_slice(b"\x7fELF\x02\x01");
        // Section headers of 64 bytes, one of them, past the end.
        elf[0x28] = 200;
        elf[0x3a] = 64;
        elf[0x3c] = 1;
        assert!(resources(&elf).is_err());
    }
}
