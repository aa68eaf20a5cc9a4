//! [`Checker`]: the checking of one settings file in progress: the file's name, its parsed
//! document (for lines and columns) and the problems found so far. `layer` checks the root
//! and `permissions` with it, `hooks` the `hooks` object.

use super::error::{Location, SettingsError};
use super::jsonc::{Document, Member, Spanned};

pub(super) struct Checker<'a> {
    file: &'a str,
    doc: &'a Document,
    pub(super) errors: &'a mut Vec<SettingsError>,
}

impl<'a> Checker<'a> {
    pub(super) fn new(
        file: &'a str,
        doc: &'a Document,
        errors: &'a mut Vec<SettingsError>,
    ) -> Self {
        Checker { file, doc, errors }
    }

    /// Where the byte at `offset` is: the file, line and column.
    pub(super) fn at(&self, offset: usize) -> Location {
        Location::at(self.file, self.doc.position(offset))
    }

    /// `key` holds a value of the wrong type (fatal when `restrictive`).
    pub(super) fn wrong_type(
        &mut self,
        key: String,
        value: &Spanned,
        expected: &'static str,
        restrictive: bool,
    ) {
        self.errors.push(SettingsError::WrongType {
            at: self.at(value.offset),
            key,
            expected,
            found: value.type_name(),
            restrictive,
        });
    }

    /// `member`'s key was already written in the same object.
    pub(super) fn duplicate(&mut self, member: &Member, key: String, outcome: &'static str) {
        self.errors.push(SettingsError::DuplicateKey {
            at: self.at(member.key_offset),
            key,
            outcome,
        });
    }
}
