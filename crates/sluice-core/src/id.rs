//! Identifiers: `proj_…` for projects and `tok_…` for tokens. Both are random, so an id says
//! nothing about the folder or the client it names.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Fills a fixed-size array from the operating system's CSPRNG.
///
/// # Panics
/// Only if the OS has no randomness source at all, in which case nothing secure can proceed.
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut buf = [0u8; N];
    getrandom::fill(&mut buf).expect("the operating system's random source is unavailable");
    buf
}

const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";

/// Lower-case Crockford base32 without padding: short, unambiguous, safe in every config format.
pub fn base32(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 8 / 5 + 1);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &b in bytes {
        acc = (acc << 8) | u32::from(b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(ALPHABET[((acc >> bits) & 31) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(ALPHABET[((acc << (5 - bits)) & 31) as usize] as char);
    }
    out
}

macro_rules! prefixed_id {
    ($name:ident, $prefix:literal, $doc:literal) => {
        #[doc = $doc]
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub const PREFIX: &'static str = $prefix;

            /// A fresh random id (80 bits).
            pub fn generate() -> $name {
                $name(format!("{}{}", $prefix, base32(&random_bytes::<10>())))
            }

            /// Accepts only well-formed ids: the prefix, then 1..=32 base32 characters.
            pub fn parse(s: &str) -> Option<$name> {
                let rest = s.strip_prefix($prefix)?;
                let ok = !rest.is_empty()
                    && rest.len() <= 32
                    && rest.bytes().all(|b| ALPHABET.contains(&b));
                ok.then(|| $name(s.to_owned()))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

prefixed_id!(ProjectId, "proj_", "A project's stable id, e.g. `proj_8k2m…`.");
prefixed_id!(TokenId, "tok_", "A client token's public id (not the secret), e.g. `tok_3f9x…`.");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_reject_garbage() {
        let id = ProjectId::generate();
        assert_eq!(ProjectId::parse(id.as_str()), Some(id.clone()));
        assert_eq!(id.as_str().len(), "proj_".len() + 16);
        for bad in ["", "proj_", "tok_abc", "proj_ABC", "proj_../x", "proj_abc def"] {
            assert_eq!(ProjectId::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn base32_is_crockford_lowercase() {
        assert_eq!(base32(&[0xff, 0xff]), "zzzg");
        assert_eq!(base32(&[]), "");
    }
}
