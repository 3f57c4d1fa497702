//! The server's API key (SPEC 2.1, 2.2): compared in constant time for a given length, as UTF-8 or,
//! for a key inside Latin-1, as Latin-1; never printed. A leaf, so the configuration can hold one
//! without knowing the auth rules.

use subtle::ConstantTimeEq;

/// The server's API key. Never printed: its `Debug` hides it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey {
    utf8: Vec<u8>,
    latin1: Option<Vec<u8>>,
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(hidden)")
    }
}

impl ApiKey {
    /// A key; the caller has already trimmed it and refused an empty one.
    pub fn new(key: String) -> Self {
        let latin1 = key
            .chars()
            .map(|c| u8::try_from(u32::from(c)).ok())
            .collect::<Option<Vec<u8>>>()
            .filter(|bytes| bytes.as_slice() != key.as_bytes());
        Self { utf8: key.into_bytes(), latin1 }
    }

    /// Whether `presented` is the key, compared in constant time (for a given length), accepting the
    /// key's UTF-8 bytes or, for a key inside Latin-1, its Latin-1 bytes (SPEC 2.2).
    pub fn matches(&self, presented: &[u8]) -> bool {
        let utf8 = ct_equal(&self.utf8, presented);
        let latin1 = self.latin1.as_deref().is_some_and(|l| ct_equal(l, presented));
        utf8 | latin1
    }
}

fn ct_equal(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && bool::from(a.ct_eq(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_matches_its_utf8_and_latin1_bytes_only() {
        let key = ApiKey::new("clé-secrète".to_string());
        assert!(key.matches("clé-secrète".as_bytes()));
        let latin1: Vec<u8> = "clé-secrète".chars().map(|c| c as u32 as u8).collect();
        assert!(key.matches(&latin1));
        assert!(!key.matches(b"cle-secrete"));
        assert!(!key.matches(b""));
    }

    #[test]
    fn the_key_is_never_printed() {
        assert_eq!(format!("{:?}", ApiKey::new("s3cret".into())), "ApiKey(hidden)");
    }
}
