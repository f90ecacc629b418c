//! Ways a model (or an MCP client) might write a tool name it should not reach: the
//! name in any casing, with invisible or separator characters around it, or with a
//! look-alike first letter. Shared by the core's security tests and the MCP server's.

use proptest::prelude::*;

/// Ways a model might write a name it should not reach.
pub fn name_variant(base: &'static str) -> impl Strategy<Value = String> {
    let flips = prop::collection::vec(any::<bool>(), base.len());
    let edits = prop::sample::select(vec![
        "", " ", "\t", "\n", "\u{200b}", "\u{feff}", "\0", "_", "-", ".", "/", "%20",
    ]);
    (flips, edits.clone(), edits, any::<bool>()).prop_map(move |(flips, pre, post, fullwidth)| {
        let mut name: String = base
            .chars()
            .zip(flips)
            .map(|(c, flip)| if flip { c.to_ascii_uppercase() } else { c })
            .collect();
        if fullwidth {
            // A look-alike: the first letter in its fullwidth form.
            let first = name.remove(0);
            let wide = char::from_u32(first as u32 - 0x21 + 0xFF01).unwrap_or(first);
            name.insert(0, wide);
        }
        format!("{pre}{name}{post}")
    })
}
