//! The tool model's public behaviour.
