//! The error collector every stage reports to: errors are gathered, not returned at the
//! first, so one build shows every mistake the user made.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;

/// Collects errors; `finish` turns them into one token stream of `compile_error!`s.
#[derive(Default)]
pub struct Errors {
    errors: Vec<TokenStream>,
}

impl Errors {
    /// An error over the whole of `tokens`.
    pub fn error(&mut self, tokens: impl ToTokens, message: impl std::fmt::Display) {
        self.errors
            .push(syn::Error::new_spanned(tokens, message).to_compile_error());
    }

    /// An error at `span`.
    pub fn error_at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.errors
            .push(syn::Error::new(span, message).to_compile_error());
    }

    /// A darling error (kept as darling renders it, with its did-you-mean).
    pub fn darling(&mut self, error: darling::Error) {
        self.errors.push(error.write_errors());
    }

    /// Errors already rendered.
    pub fn tokens(&mut self, errors: TokenStream) {
        self.errors.push(errors);
    }

    /// `Err` with every error, if there were any.
    pub fn finish(self) -> Result<(), TokenStream> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(self.errors.into_iter().collect())
        }
    }
}
