//! Integration tests of the public API; each test file is its own target.

/// The README's example, compiled and run as a doctest so it cannot drift (the tour's
/// fragments, marked `ignore`, are excerpts of the examples and tests that compile).
#[doc = include_str!("../README.md")]
mod readme {}
