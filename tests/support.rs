//! Integration tests of the public API; each test file is its own target.
