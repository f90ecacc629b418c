//! trybuild cases for the macros live in `fail/` and `pass/`; `ui.rs` runs them.
