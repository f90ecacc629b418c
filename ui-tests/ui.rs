//! trybuild runner.
