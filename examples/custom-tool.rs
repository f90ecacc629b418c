//! Placeholder replaced by the calculator example.
fn main() {}
