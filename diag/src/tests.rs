use super::*;

fn sources() -> (SourceMap, Span) {
    let mut s = SourceMap::new();
    s.add_library("<prelude>/core.art", "fn id(x: i32) -> i32 { x }\n");
    let f = s.add("prog.art", "fn main() -> i32 {\n    1.5\n}\n");
    (s, Span::new(f, 23, 26))
}

fn check(d: &Diagnostic, expected: &str) {
    let (s, _) = sources();
    assert_eq!(render(&s, std::slice::from_ref(d)), expected);
}

#[test]
fn an_error_renders_with_its_place_and_notes() {
    let (_, span) = sources();
    let d = Diagnostic::error(span, "mismatched types")
        .with_label_message("this is an `f64`")
        .with_note("expected `i32`");
    check(
        &d,
        "error: mismatched types\n  ┌─ prog.art:2:5\n  │\n2 │     1.5\n  │     ^^^ this is an `f64`\n  │\n  = expected `i32`\n\n",
    );
}

#[test]
fn an_error_without_a_place_renders_as_its_message_and_notes() {
    let d = Diagnostic::error_at(None, "no `main`").with_note("declare `fn main() -> i32`");
    check(&d, "error: no `main`\n  note: declare `fn main() -> i32`\n");
}

#[test]
fn a_place_outside_the_files_still_says_everything() {
    let mut other = SourceMap::new();
    other.add("a.art", "x");
    let f = other.add("b.art", "y");
    let mut s = SourceMap::new();
    s.add("a.art", "x");
    let d = Diagnostic::warning(Span::new(f, 0, 1), "odd").with_note("n");
    assert_eq!(render(&s, &[d]), "warning: odd\n  note: n\n");
}

#[test]
fn at_keeps_a_known_primary_place() {
    let (_, span) = sources();
    let other = Span::new(span.file, 0, 2);
    let d = Diagnostic::error_at(None, "m")
        .at(Some(span))
        .at(Some(other));
    assert_eq!(d.primary(), Some(span));
    assert_eq!(d.labels.len(), 1);
}

#[test]
fn display_lists_notes_and_secondary_labels() {
    let (_, span) = sources();
    let d = Diagnostic::error(span, "ran out of fuel")
        .with_note_at(Some(span), "reached here")
        .with_note_at(None, "raise --pe-fuel");
    assert_eq!(
        d.to_string(),
        "ran out of fuel\n  note: raise --pe-fuel\n  note: reached here"
    );
}

#[test]
fn places_name_file_line_and_column_in_characters() {
    let mut s = SourceMap::new();
    let f = s.add("ü.art", "é\n  αβx");
    assert_eq!(s.place(Some(Span::new(f, 9, 10))), "ü.art:2:5");
    assert_eq!(s.place(None), "<unknown place>");
    assert!(!s.is_library(f));
    let (s, span) = sources();
    assert!(s.is_library(Span::NONE.file) && !s.is_library(span.file));
}
