//! One relocatable object from the objects of a module's parts.
//!
//! A module optimized in parts ([`crate::parallel`]) also has its machine code generated in
//! parts, each on its own thread, and `--emit obj` writes one file: the first part's
//! object with the sections, symbols and relocations of the others added. ELF lets a
//! relocatable object hold several sections of one name (the linker concatenates them as
//! it does those of different files), so no section moves and no offset or addend changes:
//! only the indices of sections and symbols are renumbered. A symbol that one part defines
//! and another uses (a call across parts) becomes one symbol, and the functions and globals
//! that were internal before the split (made hidden and external so that the parts could
//! refer to each other) are local again, as in an object made from the whole module.

use object::build::elf::{Builder, SectionData, SectionId, SymbolId};
use object::build::Id;
use object::elf;
use rustc_hash::{FxHashMap, FxHashSet};

/// What LLVM's objects for x86-64 hold that the merge copies; anything else (section
/// groups, say) makes it refuse, and the module is compiled whole instead.
fn copyable(data: &SectionData) -> bool {
    matches!(
        data,
        SectionData::Data(_)
            | SectionData::UninitializedData(_)
            | SectionData::Relocation(_)
            | SectionData::Note(_)
    )
}

/// The length of a table indexed by `indices` (one past the largest).
fn slots(indices: impl Iterator<Item = usize>) -> usize {
    indices.map(|i| i + 1).max().unwrap_or(0)
}

/// Whether a symbol is defined in its object (in a section, absolute or common).
fn defined(section: Option<SectionId>, shndx: elf::SymbolSection) -> bool {
    section.is_some() || shndx != elf::SHN_UNDEF
}

/// The object of `parts` (ELF relocatable objects, the first holding the module's globals)
/// as one, with the symbols named in `local` made local. An error says what the merge does
/// not handle; the objects are LLVM's, so it is not the user's.
pub(crate) fn merge(parts: &[Vec<u8>], local: &FxHashSet<&[u8]>) -> Result<Vec<u8>, String> {
    let (first, rest) = parts.split_first().ok_or("no objects to merge")?;
    let mut out = Builder::read(first.as_slice()).map_err(|e| e.to_string())?;
    let symtab = (out.sections.iter())
        .find(|s| matches!(s.data, SectionData::Symbol))
        .map(|s| s.id())
        .ok_or("the first object has no symbol table")?;
    // LLVM keeps the sections' names in the symbols' string table; the output has a table
    // of its own for them.
    if !(out.sections.iter()).any(|s| matches!(s.data, SectionData::SectionString)) {
        let n = out.sections.add();
        n.name = (&b".shstrtab"[..]).into();
        n.sh_type = elf::SHT_STRTAB;
        n.sh_addralign = 1;
        n.data = SectionData::SectionString;
    }
    let gnu_stack = (out.sections.iter())
        .find(|s| &*s.name == b".note.GNU-stack")
        .map(|s| s.id());
    let mut global: FxHashMap<Vec<u8>, SymbolId> = (out.symbols.iter())
        .filter(|s| s.st_bind() != elf::STB_LOCAL)
        .map(|s| (s.name.to_vec(), s.id()))
        .collect();
    for bytes in rest {
        let part = Builder::read(bytes.as_slice()).map_err(|e| e.to_string())?;
        if part.header.e_machine != out.header.e_machine || part.header.e_type != out.header.e_type
        {
            return Err("the objects are for different machines or of different kinds".into());
        }
        // Sections: each copied as a new one (the tables are the output's own).
        let mut sections: Vec<Option<SectionId>> =
            vec![None; slots(part.sections.iter().map(|s| s.id().index()))];
        for s in part.sections.iter() {
            let index = s.id().index();
            match &s.data {
                // The symbol table maps to the output's (a relocation section's link);
                // the string tables are made anew.
                SectionData::Symbol => {
                    sections[index] = Some(symtab);
                    continue;
                }
                SectionData::String | SectionData::SectionString => continue,
                d if !copyable(d) => {
                    return Err(format!(
                        "section `{}` of a part is of a kind the merge does not copy",
                        s.name
                    ))
                }
                _ => {}
            }
            if &*s.name == b".note.GNU-stack" {
                if let Some(g) = gnu_stack {
                    sections[index] = Some(g);
                    continue;
                }
            }
            let n = out.sections.add();
            n.name = s.name.clone();
            n.sh_type = s.sh_type;
            n.sh_flags = s.sh_flags;
            n.sh_addr = s.sh_addr;
            n.sh_size = s.sh_size;
            n.sh_info = s.sh_info;
            n.sh_addralign = s.sh_addralign;
            n.sh_entsize = s.sh_entsize;
            n.data = s.data.clone();
            sections[index] = Some(n.id());
        }
        let section_of = |id: Option<SectionId>| -> Result<Option<SectionId>, String> {
            id.map(|s| {
                sections[s.index()].ok_or_else(|| "a section refers to one not copied".to_string())
            })
            .transpose()
        };
        // Symbols: locals copied; a global joins the output's of its name.
        let mut symbols: Vec<Option<SymbolId>> =
            vec![None; slots(part.symbols.iter().map(|s| s.id().index()))];
        for s in part.symbols.iter() {
            if s.st_type() == elf::STT_FILE {
                continue;
            }
            let section = section_of(s.section)?;
            let here = defined(s.section, s.st_shndx);
            let joined = if s.st_bind() == elf::STB_LOCAL {
                None
            } else {
                global.get(&*s.name).copied()
            };
            // Where the symbol goes: a new one, or the output's of its name (taking this
            // definition where the output's is undefined).
            let (target, take) = match joined {
                Some(id) => {
                    let o = out.symbols.get(id);
                    if here && defined(o.section, o.st_shndx) {
                        return Err(format!("two parts define the symbol `{}`", s.name));
                    }
                    (id, here)
                }
                None => {
                    let n = out.symbols.add();
                    n.name = s.name.clone();
                    if s.st_bind() != elf::STB_LOCAL {
                        global.insert(s.name.to_vec(), n.id());
                    }
                    (n.id(), true)
                }
            };
            if take {
                let o = out.symbols.get_mut(target);
                o.section = section;
                o.st_shndx = s.st_shndx;
                o.st_value = s.st_value;
                o.st_size = s.st_size;
                o.st_info = s.st_info;
                o.st_other = s.st_other;
            }
            symbols[s.id().index()] = Some(target);
        }
        // The copied sections' links and relocations, renumbered.
        for s in part.sections.iter() {
            let Some(to) = sections[s.id().index()] else {
                continue;
            };
            if to == symtab || Some(to) == gnu_stack {
                continue;
            }
            let link = section_of(s.sh_link_section)?;
            let info = section_of(s.sh_info_section)?;
            let relocations = match &s.data {
                SectionData::Relocation(rs) => Some(
                    rs.iter()
                        .map(|r| {
                            let symbol = (r.symbol)
                                .map(|sym| {
                                    symbols[sym.index()]
                                        .ok_or("a relocation refers to a symbol not copied")
                                })
                                .transpose()?;
                            Ok(object::build::elf::Relocation { symbol, ..*r })
                        })
                        .collect::<Result<Vec<_>, String>>()?,
                ),
                _ => None,
            };
            let n = out.sections.get_mut(to);
            n.sh_link_section = link;
            n.sh_info_section = info;
            if let Some(rs) = relocations {
                n.data = SectionData::Relocation(rs);
            }
        }
    }
    for s in out.symbols.iter_mut() {
        if s.st_bind() != elf::STB_LOCAL
            && defined(s.section, s.st_shndx)
            && local.contains(&*s.name)
        {
            s.set_st_info(elf::STB_LOCAL, s.st_type());
            s.st_other = s.st_other.with_visibility(elf::STV_DEFAULT);
        }
    }
    let mut bytes = Vec::new();
    out.write(&mut bytes).map_err(|e| e.to_string())?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use inkwell::context::Context;
    use inkwell::module::Linkage;
    use inkwell::GlobalVisibility;
    use object::{Object, ObjectSection, ObjectSymbol, RelocationTarget, SymbolKind};

    /// The object code of a module defining `name` (returning `value`, or calling
    /// `callee` and adding 1 to what it returns), hidden and external as a part's are.
    fn part(name: &str, value: u64, callee: Option<&str>) -> Vec<u8> {
        let (machine, _, _) = crate::machine(&crate::Options::default()).expect("a machine");
        let ctx = Context::create();
        let m = ctx.create_module(name);
        let i32t = ctx.i32_type();
        let fty = i32t.fn_type(&[], false);
        let f = m.add_function(name, fty, Some(Linkage::External));
        f.as_global_value().set_visibility(GlobalVisibility::Hidden);
        let b = ctx.create_builder();
        b.position_at_end(ctx.append_basic_block(f, "entry"));
        let result = match callee {
            Some(c) => {
                let g = m.add_function(c, fty, Some(Linkage::External));
                g.as_global_value().set_visibility(GlobalVisibility::Hidden);
                let r = b.build_call(g, &[], "r").expect("a call");
                let r = r
                    .try_as_basic_value()
                    .basic()
                    .expect("a value")
                    .into_int_value();
                b.build_int_add(r, i32t.const_int(1, false), "s")
                    .expect("an add")
            }
            None => i32t.const_int(value, false),
        };
        b.build_return(Some(&result)).expect("a return");
        crate::parallel::object(&m, &machine).expect("object code")
    }

    /// A call from one part to a function of another resolves, in the merged object, to
    /// the other's definition, made local as the function was before the split.
    #[test]
    fn a_call_across_parts_refers_to_the_other_parts_definition() {
        let objects = [part("caller", 0, Some("callee")), part("callee", 41, None)];
        let local: FxHashSet<&[u8]> = [&b"callee"[..]].into_iter().collect();
        let merged = merge(&objects, &local).expect("the objects merge");
        let file = object::File::parse(&*merged).expect("an object file");
        // (Not the file symbols, named after each module.)
        let named = |n: &'static str| {
            (file.symbols()).filter(move |s| s.name() == Ok(n) && s.kind() != SymbolKind::File)
        };
        let symbol = |n: &'static str| named(n).next().unwrap_or_else(|| panic!("no symbol {n}"));
        let (caller, callee) = (symbol("caller"), symbol("callee"));
        assert!(!callee.is_undefined() && callee.is_local(), "{callee:?}");
        assert!(!caller.is_undefined() && !caller.is_local(), "{caller:?}");
        assert_eq!(
            file.symbols().filter(|s| s.name() == Ok("callee")).count(),
            1
        );
        assert_ne!(caller.section_index(), callee.section_index());
        let text = file
            .section_by_index(caller.section_index().expect("a section"))
            .expect("text");
        let targets: Vec<_> = (text.relocations()).map(|(_, r)| r.target()).collect();
        assert_eq!(targets, [RelocationTarget::Symbol(callee.index())]);
    }

    /// Two parts defining one symbol, or bytes that are no object, are refused (the module
    /// is then compiled whole), not merged into a wrong object.
    #[test]
    fn what_the_merge_cannot_join_is_an_error() {
        let twice = [part("f", 1, None), part("f", 2, None)];
        let err = merge(&twice, &FxHashSet::default()).expect_err("a symbol defined twice");
        assert!(err.contains("two parts define the symbol `f`"), "{err}");
        assert!(merge(&[b"not an object".to_vec()], &FxHashSet::default()).is_err());
        assert!(merge(&[], &FxHashSet::default()).is_err());
    }
}
