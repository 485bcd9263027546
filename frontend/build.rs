//! Writes the names the image library (`stdlib/image.art`) declares at its top level,
//! sorted, as `IMAGE_ITEMS` (see `src/compile.rs`): the list follows the library, so that
//! adding an operator to it needs no second edit. A line-based scan is enough for the
//! library's shape (each top-level item starts at column 0 with its keyword); a unit test
//! parses the library and compares.

use std::path::Path;

fn main() {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("../stdlib/image.art");
    println!("cargo:rerun-if-changed={}", lib.display());
    let text = std::fs::read_to_string(&lib).expect("stdlib/image.art is readable");
    let mut names: Vec<String> = text.lines().filter_map(top_level_name).collect();
    names.sort();
    names.dedup();
    let list: String = names.iter().map(|n| format!("    {n:?},\n")).collect();
    let out =
        Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("image_items.rs");
    let code = format!(
        "/// The names the image library declares at its top level, sorted (from `stdlib/image.art`).\npub const IMAGE_ITEMS: &[&str] = &[\n{list}];\n"
    );
    std::fs::write(out, code).expect("OUT_DIR is writable");
}

/// The name a top-level declaration on `line` introduces, if the line starts one.
fn top_level_name(line: &str) -> Option<String> {
    let mut rest = ["fn ", "struct ", "enum ", "static ", "type ", "mod "]
        .iter()
        .find_map(|k| line.strip_prefix(k))?
        .trim_start();
    rest = rest.strip_prefix("mut ").unwrap_or(rest);
    // A partial-evaluation filter: `fn @(?a & ?b) name` or `fn @name`.
    if let Some(r) = rest.strip_prefix('@') {
        rest = r;
        if rest.starts_with('(') {
            let mut depth = 0;
            let end = rest.char_indices().find_map(|(i, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(i)
            })?;
            rest = rest[end + 1..].trim_start();
        }
    }
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}
