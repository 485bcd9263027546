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

/// A generated program on one long line: the line is shown around the place only, the
/// place's column is still the original one, and every shown line is short.
#[test]
fn a_long_line_is_shown_around_its_places() {
    let mut s = SourceMap::new();
    let mut line = String::from("fn main() -> i32 { ");
    for i in 0..2000 {
        line.push_str(&format!("let x{i} = {i}; "));
    }
    let at = line.find("let x1000 ").unwrap() + 4;
    line.push_str("0 }\nfn f() {}\n");
    let f = s.add("long.art", &line);
    let d = Diagnostic::warning(Span::new(f, at, at + 5), "unused variable `x1000`")
        .with_label_message("never read");
    let out = render(&s, &[d]);
    let column = line[..at].chars().count() + 1;
    assert!(out.contains(&format!("┌─ long.art:1:{column}\n")), "{out}");
    assert!(out.lines().all(|l| l.len() < 200), "{out}");
    let shown = out.lines().find(|l| l.starts_with("1 │")).unwrap();
    assert!(shown.starts_with("1 │ …") && shown.ends_with('…'), "{out}");
    assert!(
        shown.contains("let x999 = 999; let x1000 = 1000; let x1001"),
        "{out}"
    );
    // The carets stand under the place.
    let carets = out.lines().find(|l| l.contains("^^^^^")).unwrap();
    let col = |l: &str, p: usize| l[..p].chars().count();
    assert_eq!(
        col(carets, carets.find('^').unwrap()),
        col(shown, shown.find("x1000").unwrap())
    );
}

/// Places on two long lines, one of them with a character of several bytes near the cut,
/// and a short line between them shown whole.
#[test]
fn long_lines_are_cut_on_character_boundaries() {
    let mut s = SourceMap::new();
    let long_a = "é".repeat(150) + "bad" + &"é".repeat(150);
    let text = format!("{long_a}\nshort line\n{}\n", "ü".repeat(300));
    let f = s.add("u.art", &text);
    let a = long_a.find("bad").unwrap();
    let b = text.rfind('ü').unwrap();
    let d = Diagnostic::error(Span::new(f, a, a + 3), "here")
        .with_secondary(Span::new(f, b, b + 2), "and there");
    let out = render(&s, &[d]);
    assert!(out.contains("┌─ u.art:1:151\n"), "{out}");
    assert!(
        out.contains("…éé") && out.contains("bad") && out.contains("and there"),
        "{out}"
    );
    assert!(out.lines().all(|l| l.chars().count() < 120), "{out}");
}

/// Lines up to the limit are shown whole.
#[test]
fn a_line_below_the_limit_is_shown_whole() {
    let mut s = SourceMap::new();
    let line = "x".repeat(190) + " y";
    let f = s.add("a.art", &line);
    let d = Diagnostic::error(Span::new(f, 191, 192), "y");
    let out = render(&s, &[d]);
    assert!(out.contains(&line) && !out.contains('…'), "{out}");
}
