//! Section patterns for a linker script that hold across builds of the same code: a function's
//! section name with every part that depends on the build (crate hashes, back-reference
//! offsets, ThinLTO's module suffix) a wildcard. Used by `startup_layout`.

/// The pattern that finds a function's section in any build of the same code: `.text.` and
/// its symbol with every part that depends on the build a wildcard. A v0 symbol (`_R...`, see
/// .cargo/config.toml) keeps its paths and type arguments; each crate's disambiguator (a hash
/// of the crate's version, features and dependencies) and each back-reference (an offset into
/// the symbol, which moves when a disambiguator's length does) become `*`. A legacy symbol's
/// hash (`17h<16 hex digits>E`, of all of those and the type arguments too) becomes `*`, and
/// ThinLTO's module suffix (`.llvm.<digits>`) does in both. Other names stay as they are.
pub(crate) fn pattern(section: &str) -> String {
    let Some(name) = section.strip_prefix(".text.") else {
        return section.to_owned();
    };
    let (symbol, suffix) = match name.find(['.', '$']) {
        Some(at) if name.starts_with("_R") => (&name[..at], &name[at..]),
        _ => match name.find(".llvm.") {
            Some(at) => (&name[..at], &name[at..]),
            None => (name, ""),
        },
    };
    let suffix = match suffix.strip_prefix(".llvm.") {
        Some(_) => ".llvm.*",
        None => suffix,
    };
    let symbol = if symbol.starts_with("_R") {
        V0::normalize(symbol).unwrap_or_else(|| symbol.to_owned())
    } else {
        legacy(symbol)
    };
    format!(".text.{symbol}{suffix}")
}

/// A legacy symbol with its hash a wildcard.
fn legacy(symbol: &str) -> String {
    let hashed = symbol.len() > 20 && symbol.is_char_boundary(symbol.len() - 20) && {
        let tail = &symbol[symbol.len() - 20..];
        tail.starts_with("17h")
            && tail.ends_with('E')
            && tail[3..19].bytes().all(|b| b.is_ascii_hexdigit())
    };
    match hashed {
        true => format!("{}17h*E", &symbol[..symbol.len() - 20]),
        false => symbol.to_owned(),
    }
}

/// A reader of v0 symbols (the grammar of RFC 2603) that copies what it reads, the crate
/// disambiguators and back-references made wildcards.
struct V0<'a> {
    bytes: &'a [u8],
    at: usize,
    out: String,
}

impl V0<'_> {
    /// `None` for what this reader does not know (then the symbol is used as it is).
    fn normalize(symbol: &str) -> Option<String> {
        let mut reader = V0 {
            bytes: symbol.strip_prefix("_R")?.as_bytes(),
            at: 0,
            out: String::from("_R"),
        };
        if reader.peek()?.is_ascii_digit() {
            reader.decimal()?;
        }
        reader.path()?;
        // The instantiating crate.
        if reader.peek().is_some() {
            reader.path()?;
        }
        (reader.at == reader.bytes.len()).then_some(reader.out)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// Copies the next byte.
    fn take(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        self.out.push(char::from(byte));
        Some(byte)
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.take()? == byte).then_some(())
    }

    /// `{0-9a-zA-Z} _`, copied, or (`wild`) skipped and written as `*_`.
    fn base62(&mut self, wild: bool) -> Option<()> {
        let start = self.at;
        while self.peek()?.is_ascii_alphanumeric() {
            self.at += 1;
        }
        if self.peek()? != b'_' {
            return None;
        }
        self.at += 1;
        match wild {
            true => self.out.push_str("*_"),
            false => self
                .out
                .push_str(std::str::from_utf8(&self.bytes[start..self.at]).ok()?),
        }
        Some(())
    }

    /// `0 | [1-9][0-9]*`: a `0` is a number alone (`00` is two empty identifiers).
    fn decimal(&mut self) -> Option<usize> {
        let start = self.at;
        if self.take()? != b'0' {
            while self.peek().is_some_and(|b| b.is_ascii_digit()) {
                self.take()?;
            }
        }
        std::str::from_utf8(&self.bytes[start..self.at])
            .ok()?
            .parse()
            .ok()
    }

    fn backref(&mut self) -> Option<()> {
        self.expect(b'B')?;
        self.base62(true)
    }

    /// `[u] <decimal> [_] <bytes>`.
    fn identifier(&mut self) -> Option<()> {
        if self.peek()? == b'u' {
            self.take()?;
        }
        let length = self.decimal()?;
        if self.peek() == Some(b'_') {
            self.take()?;
        }
        for _ in 0..length {
            self.take()?;
        }
        Some(())
    }

    /// `[s <base62>] <identifier>`; a crate root's disambiguator is its hash (`wild`).
    fn disambiguated(&mut self, wild: bool) -> Option<()> {
        if self.peek()? == b's' {
            self.take()?;
            self.base62(wild)?;
        }
        self.identifier()
    }

    fn path(&mut self) -> Option<()> {
        match self.peek()? {
            b'C' => {
                self.take()?;
                self.disambiguated(true)
            }
            b'N' => {
                self.take()?;
                // The namespace.
                if !self.take()?.is_ascii_alphabetic() {
                    return None;
                }
                self.path()?;
                self.disambiguated(false)
            }
            b'M' => {
                self.take()?;
                self.impl_path()?;
                self.r#type()
            }
            b'X' => {
                self.take()?;
                self.impl_path()?;
                self.r#type()?;
                self.path()
            }
            b'Y' => {
                self.take()?;
                self.r#type()?;
                self.path()
            }
            b'I' => {
                self.take()?;
                self.path()?;
                while self.peek()? != b'E' {
                    self.generic_arg()?;
                }
                self.take().map(drop)
            }
            b'B' => self.backref(),
            _ => None,
        }
    }

    fn impl_path(&mut self) -> Option<()> {
        if self.peek()? == b's' {
            self.take()?;
            self.base62(false)?;
        }
        self.path()
    }

    fn generic_arg(&mut self) -> Option<()> {
        match self.peek()? {
            b'L' => {
                self.take()?;
                self.base62(false)
            }
            b'K' => {
                self.take()?;
                self.r#const()
            }
            _ => self.r#type(),
        }
    }

    fn r#type(&mut self) -> Option<()> {
        match self.peek()? {
            b'a' | b'b' | b'c' | b'd' | b'e' | b'f' | b'h' | b'i' | b'j' | b'l' | b'm' | b'n'
            | b'o' | b's' | b't' | b'u' | b'v' | b'x' | b'y' | b'z' | b'p' => self.take().map(drop),
            b'A' => {
                self.take()?;
                self.r#type()?;
                self.r#const()
            }
            b'S' | b'P' | b'O' => {
                self.take()?;
                self.r#type()
            }
            b'T' => {
                self.take()?;
                while self.peek()? != b'E' {
                    self.r#type()?;
                }
                self.take().map(drop)
            }
            b'R' | b'Q' => {
                self.take()?;
                if self.peek()? == b'L' {
                    self.take()?;
                    self.base62(false)?;
                }
                self.r#type()
            }
            b'F' => {
                self.take()?;
                self.binder()?;
                if self.peek()? == b'U' {
                    self.take()?;
                }
                if self.peek()? == b'K' {
                    self.take()?;
                    match self.peek()? {
                        b'C' => self.take().map(drop)?,
                        _ => self.identifier()?,
                    }
                }
                while self.peek()? != b'E' {
                    self.r#type()?;
                }
                self.take()?;
                self.r#type()
            }
            b'D' => {
                self.take()?;
                self.binder()?;
                while self.peek()? != b'E' {
                    self.path()?;
                    while self.peek()? == b'p' {
                        self.take()?;
                        self.identifier()?;
                        self.r#type()?;
                    }
                }
                self.take()?;
                // The lifetime.
                self.expect(b'L')?;
                self.base62(false)
            }
            b'B' => self.backref(),
            _ => self.path(),
        }
    }

    fn binder(&mut self) -> Option<()> {
        if self.peek()? == b'G' {
            self.take()?;
            self.base62(false)?;
        }
        Some(())
    }

    /// A const generic argument: a placeholder, a back-reference, or an integer, `bool` or
    /// `char` (its type, then `[n] <hex digits> _`).
    fn r#const(&mut self) -> Option<()> {
        match self.peek()? {
            b'p' => self.take().map(drop),
            b'B' => self.backref(),
            b'a' | b'b' | b'c' | b'h' | b'i' | b'j' | b'l' | b'm' | b'n' | b'o' | b's' | b't'
            | b'x' | b'y' => {
                self.take()?;
                if self.peek()? == b'n' {
                    self.take()?;
                }
                while self.peek()?.is_ascii_hexdigit() {
                    self.take()?;
                }
                self.expect(b'_')
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_depends_on_the_build_becomes_a_wildcard() {
        // v0: crate disambiguators and back-references; the paths and type arguments stay.
        assert_eq!(
            pattern(".text._RNvNtCsjrHSEGnQ3l9_3std2rt19lang_start_internal"),
            ".text._RNvNtCs*_3std2rt19lang_start_internal"
        );
        assert_eq!(
            pattern(
                ".text._RINvNtCs1a2b3c_10serde_json2de10from_traitNtCs4d5e6f_4tine4ArgsEB4_.llvm.123"
            ),
            ".text._RINvNtCs*_10serde_json2de10from_traitNtCs*_4tine4ArgsEB*_.llvm.*"
        );
        // A closure's disambiguator is not the build's: it stays.
        assert_eq!(
            pattern(".text._RNCNvCs9x_4tine4mains0_0"),
            ".text._RNCNvCs*_4tine4mains0_0"
        );
        // A reference, a slice, a tuple, a fn pointer, a dyn trait, a const argument.
        assert_eq!(
            pattern(".text._RINvCsAb_1a1fRShTlmEFEuDNvCsCd_1b1TEL_Kj8_E"),
            ".text._RINvCs*_1a1fRShTlmEFEuDNvCs*_1b1TEL_Kj8_E"
        );
        // Legacy: the hash, and the module suffix.
        assert_eq!(
            pattern(".text._ZN4tine4main17h0123456789abcdefE"),
            ".text._ZN4tine4main17h*E"
        );
        assert_eq!(
            pattern(".text._ZN5bytes5bytes12shared_clone17h4ae989b622b51a36E.llvm.164745"),
            ".text._ZN5bytes5bytes12shared_clone17h*E.llvm.*"
        );
        // `00` is two empty identifiers (closures' names), not one number.
        assert_eq!(
            pattern(
                ".text._RNvYNCNKNvNtNtCsly_5tokio7runtime7context7CONTEXT00INtNtNtCsgE_4core3ops8function6FnOnceTINtNtB13_6option6OptionQIB1I_NtB8_7ContextEEEE9call_onceBc_.llvm.77"
            ),
            ".text._RNvYNCNKNvNtNtCs*_5tokio7runtime7context7CONTEXT00INtNtNtCs*_4core3ops8function6FnOnceTINtNtB*_6option6OptionQIB*_NtB*_7ContextEEEE9call_onceB*_.llvm.*"
        );
        // C functions, and what the reader does not know, stay as they are.
        assert_eq!(pattern(".text.main"), ".text.main");
        assert_eq!(pattern(".text._RZZ"), ".text._RZZ");
    }
}
