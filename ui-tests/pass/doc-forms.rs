//! Doc comment forms.
use toolwright_core::{Tool, tool};

#[doc = include_str!("description.md")]
#[tool]
async fn included() {}

/** Block doc.

    Indented paragraph.
*/
#[tool]
async fn block() {}

/// Sections.
///
/// # Examples
///
/// ```
/// # use x;
/// ```
///
/// # Errors
///
/// Never.
#[tool]
async fn sections() {}

fn main() {
    assert_eq!(included {}.description(), "Described in a file.\n");
    assert_eq!(block {}.description(), "Block doc.\n\nIndented paragraph.");
    assert_eq!(sections {}.description(), "Sections.");
}
