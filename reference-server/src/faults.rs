//! Deliberate faults, for `fixtures/broken` only: each one breaks exactly one behaviour of SPEC.md so
//! that the harness can prove every conformance case fails when its behaviour is missing.
//!
//! Nothing in the reference server's own command line or configuration can switch a fault on: a
//! [`Faults`] set is empty unless a program built with the `faults` feature builds one in code
//! (`fixtures/src/bin/broken_server.rs`). Without that feature [`Faults::has`] is always false and every
//! gate compiles to nothing.

macro_rules! faults {
    ($($variant:ident = $name:literal : $what:literal,)*) => {
        /// One deliberate fault.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Fault {
            $(#[doc = $what] $variant,)*
        }

        impl Fault {
            /// Every fault.
            pub const ALL: &'static [Fault] = &[$(Fault::$variant,)*];

            /// Its name on the command line of `broken-server`.
            pub fn name(self) -> &'static str {
                match self { $(Fault::$variant => $name,)* }
            }

            /// What it breaks.
            pub fn describe(self) -> &'static str {
                match self { $(Fault::$variant => $what,)* }
            }

            /// The fault of this name.
            pub fn parse(name: &str) -> Option<Fault> {
                Fault::ALL.iter().copied().find(|f| f.name() == name)
            }
        }
    };
}

faults! {
    UsageOff = "usage-off": "usage.completion_tokens counts only the last pass",
    NamesUnclean = "names-unclean": "tool names are not cleaned",
    MimeDecides = "mime-decides": "the declared mime decides the format",
    NoVisionPads = "no-vision-pads": "every picture takes one image token",
}

/// A set of faults; empty in every server a user runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults(u64);

impl Faults {
    /// No faults.
    pub const fn none() -> Self {
        Faults(0)
    }

    /// A set holding `faults` (only effective in a build with the `faults` feature).
    pub fn of(faults: &[Fault]) -> Self {
        Faults(faults.iter().fold(0, |bits, f| bits | (1 << *f as u64)))
    }

    /// Whether `fault` is on.
    #[inline]
    pub fn has(self, fault: Fault) -> bool {
        cfg!(feature = "faults") && self.0 & (1 << fault as u64) != 0
    }
}
