//! Tokens of the language.

use crate::source::Span;
use std::fmt;

/// The value of a literal token.
#[derive(Clone, PartialEq, Debug)]
pub enum Literal {
    /// An integer (decimal, `0x` hex, `0o` octal or `0b` binary).
    Int(u64),
    /// A number with a fraction or an exponent.
    Float(f64),
    /// A character: one byte.
    Char(u8),
    /// A string: its bytes, escapes resolved; adjacent strings are joined.
    Str(Vec<u8>),
    /// `true` or `false`.
    Bool(bool),
}

macro_rules! token_kinds {
    ($( $kw:ident = $kws:literal, )* ; $( $p:ident = $ps:literal, )*) => {
        /// What a token is.
        #[derive(Clone, PartialEq, Debug)]
        pub enum TokenKind {
            /// An identifier.
            Ident(Box<str>),
            /// A literal.
            Lit(Literal),
            $( #[doc = concat!("`", $kws, "`")] $kw, )*
            $( #[doc = concat!("`", $ps, "`")] $p, )*
            /// The end of the file.
            Eof,
        }

        impl TokenKind {
            /// The keyword spelled `s`, if it is one.
            pub fn keyword(s: &str) -> Option<TokenKind> {
                match s {
                    $( $kws => Some(TokenKind::$kw), )*
                    _ => None,
                }
            }

            /// How the token is written, for messages (`<identifier>` etc. for classes).
            pub fn describe(&self) -> String {
                match self {
                    TokenKind::Ident(s) => format!("identifier `{s}`"),
                    TokenKind::Lit(_) => "literal".to_string(),
                    $( TokenKind::$kw => concat!("`", $kws, "`").to_string(), )*
                    $( TokenKind::$p => concat!("`", $ps, "`").to_string(), )*
                    TokenKind::Eof => "end of file".to_string(),
                }
            }
        }

        /// Every punctuation token with its spelling, by first byte, and the longest first
        /// among those with the same first byte, so that the lexer matches greedily.
        pub(crate) const PUNCTUATION: &[(&str, fn() -> TokenKind)] = &{
            let mut all = [$( ($ps, (|| TokenKind::$p) as fn() -> TokenKind), )*];
            let mut i = 0;
            while i < all.len() {
                let mut j = i + 1;
                while j < all.len() {
                    let (a, b) = (all[i].0.as_bytes(), all[j].0.as_bytes());
                    if b[0] < a[0] || (b[0] == a[0] && b.len() > a.len()) {
                        let t = all[i];
                        all[i] = all[j];
                        all[j] = t;
                    }
                    j += 1;
                }
                i += 1;
            }
            all
        };

        /// The punctuation tokens that begin with byte `c` are
        /// `PUNCTUATION[PUNCTUATION_FROM[c]..PUNCTUATION_FROM[c + 1]]`.
        pub(crate) const PUNCTUATION_FROM: [u8; 257] = {
            let mut from = [0u8; 257];
            let mut c = 0;
            while c < 256 {
                let mut k = from[c] as usize;
                while k < PUNCTUATION.len() && (PUNCTUATION[k].0.as_bytes()[0] as usize) == c {
                    k += 1;
                }
                from[c + 1] = k as u8;
                c += 1;
            }
            from
        };
    };
}

token_kinds! {
    Let = "let", Mut = "mut", As = "as", Fn = "fn", If = "if", Else = "else",
    Match = "match", While = "while", For = "for", In = "in", Break = "break",
    Continue = "continue", Return = "return", Struct = "struct", Enum = "enum",
    Type = "type", Static = "static", Implicit = "implicit", Summon = "summon", Mod = "mod",
    Use = "use", Super = "super", Asm = "asm", AddrSpace = "addrspace", Simd = "simd",
    ;
    LParen = "(", RParen = ")", LBrace = "{", RBrace = "}", LBracket = "[", RBracket = "]",
    Dot = ".", Dots = "...", Comma = ",", Semi = ";", DblColon = "::", Colon = ":",
    Eq = "=", Arrow = "->", FatArrow = "=>", Inc = "++", Dec = "--",
    AddEq = "+=", SubEq = "-=", MulEq = "*=", DivEq = "/=", RemEq = "%=",
    ShlEq = "<<=", ShrEq = ">>=", AndEq = "&=", OrEq = "|=", XorEq = "^=",
    Add = "+", Sub = "-", Mul = "*", Div = "/", Rem = "%", Shl = "<<", Shr = ">>",
    And = "&", AndAnd = "&&", Or = "|", OrOr = "||", Xor = "^", Not = "!",
    Le = "<=", Ge = ">=", Lt = "<", Gt = ">", EqEq = "==", Ne = "!=",
    Hash = "#", At = "@", Question = "?", Dollar = "$",
}

/// A token and where it is.
#[derive(Clone, PartialEq, Debug)]
pub struct Token {
    /// What it is.
    pub kind: TokenKind,
    /// Where it is.
    pub span: Span,
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Int(v) => write!(f, "{v}"),
            Literal::Float(v) => write!(f, "{v:?}"),
            Literal::Char(c) => write!(f, "'{}'", (*c as char).escape_default()),
            Literal::Str(s) => write!(f, "{:?}", String::from_utf8_lossy(s)),
            Literal::Bool(b) => write!(f, "{b}"),
        }
    }
}
