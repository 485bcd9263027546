//! Every IR example in the book (code blocks fenced as ```dir) parses and verifies, so the
//! documentation cannot drift from the text form.

use std::path::PathBuf;

#[test]
fn ir_examples_in_the_book_parse_and_verify() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/src");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("docs/src exists") {
        let path = entry.expect("readable entry").path();
        if path.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("readable chapter");
        let mut blocks = text.split("```dir\n").skip(1);
        for block in blocks.by_ref() {
            let src = block.split("```").next().unwrap_or_default();
            let world = durin_ir::text::parse(src).unwrap_or_else(|e| {
                panic!("{}: example does not parse:\n{e}\n{src}", path.display())
            });
            if let Err(errors) = durin_ir::verify::verify(&world) {
                panic!(
                    "{}: example does not verify: {errors:?}\n{src}",
                    path.display()
                );
            }
            checked += 1;
        }
    }
    assert!(
        checked >= 3,
        "expected the IR chapter's examples, found {checked}"
    );
}
