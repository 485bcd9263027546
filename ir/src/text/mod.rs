//! The text form of a [`World`](crate::World): a stable, diff-friendly printer and a parser
//! that reads it back to an alpha-equivalent world.
//!
//! ```text
//! struct Pair { a: i32, b: f64 }
//!
//! extern cont @main(%mem: mem, %n: i32, %ret: cn(mem, i32)) {
//!     %0: bool = lt(%n, 10:i32)
//!     %1: cn(mem, i32) = select(%0, @small, %ret)
//!     jump %1(%mem, %n)
//! }
//! ```
//!
//! Nominals (continuations and globals) are `@name`, parameters and computed values `%name`;
//! literals are written inline as `value:type` (`true`/`false` for `bool`, hex digits for
//! raw bits, `bot:T` for bottom). Every computed value is one statement
//! `%name: type = op(operands)`, placed in the first continuation (in creation order) whose
//! filters or body use it; names are global, so a statement may be used anywhere.

mod lex;
mod names;
mod parse;
mod print;

pub use names::Layout;
pub(crate) use parse::literal_bits;
pub use parse::{parse, parse_placed, parse_with, ParseError, ParseOptions, Places};
pub(crate) use print::statement_text;
pub use print::{print, print_def};

/// Whether `name` is a builtin type name or keyword of the type syntax.
pub fn is_reserved_type_name(name: &str) -> bool {
    matches!(
        name,
        "bool"
            | "i8"
            | "i16"
            | "i32"
            | "i64"
            | "u8"
            | "u16"
            | "u32"
            | "u64"
            | "f16"
            | "f32"
            | "f64"
            | "mem"
            | "ptr"
            | "cn"
            | "true"
            | "false"
            | "bot"
            | "launch"
    )
}
