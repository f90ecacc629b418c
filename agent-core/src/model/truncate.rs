//! The output budget: long results keep their head and tail around a notice of what
//! was cut. Lengths are counted in characters (Unicode scalar values), and cuts fall on
//! character boundaries, so no budget can produce invalid UTF-8.

use crate::model::content::Content;
use crate::model::error::ToolError;
use std::borrow::Cow;

/// `text` cut to at most `max_chars` characters: the head and the tail, with a notice
/// between them saying how many characters were left out. Text within the budget is
/// returned unchanged. When the budget is smaller than the notice, only the head is
/// kept (followed by `…`), so the result never exceeds `max_chars`.
pub fn truncate_text(text: &str, max_chars: usize) -> Cow<'_, str> {
    let total = text.chars().count();
    if total <= max_chars {
        return Cow::Borrowed(text);
    }
    // The notice's length depends on the number it reports, which depends on how much
    // room the notice takes. Start from the widest count and shrink: the count only
    // falls, so this settles within a few rounds on a notice that reports the exact cut.
    let widest = notice_for(total);
    if widest.chars().count() + 2 > max_chars {
        let head: String = text.chars().take(max_chars.saturating_sub(1)).collect();
        return Cow::Owned(if max_chars == 0 { head } else { head + "…" });
    }
    let mut cut = total;
    let (notice, kept) = loop {
        let notice = notice_for(cut);
        let kept = max_chars - notice.chars().count();
        if total - kept == cut {
            break (notice, kept);
        }
        cut = total - kept;
    };
    // The head gets the odd character: the start of an output usually says what it is.
    let head_chars = kept.div_ceil(2);
    let tail_chars = kept - head_chars;
    let head_end = byte_offset(text, head_chars);
    let tail_start = byte_offset(text, total - tail_chars);
    let mut out = String::with_capacity(head_end + notice.len() + (text.len() - tail_start));
    out.push_str(&text[..head_end]);
    out.push_str(&notice);
    out.push_str(&text[tail_start..]);
    Cow::Owned(out)
}

fn notice_for(cut: usize) -> String {
    format!("\n[... {cut} characters cut ...]\n")
}

/// The byte offset of the character numbered `chars`, or the end of `text`.
fn byte_offset(text: &str, chars: usize) -> usize {
    text.char_indices()
        .nth(chars)
        .map_or(text.len(), |(i, _)| i)
}

/// A tool's result cut to `max_chars` characters of text.
///
/// The text blocks are what the model reads, so they share one budget: when together
/// they exceed it, they are joined (by newlines) and cut as one, keeping the head and
/// tail of the whole result. Structured JSON blocks repeat a text block's content, so
/// they are dropped when the text was cut (a half value would mislead). A result of JSON
/// blocks alone is read as their JSON text, so that text is what is counted, and cut
/// into a text block when over. Images, audio and resources pass through: they are not
/// text the budget is about.
pub fn truncate_output(content: Vec<Content>, max_chars: usize) -> Vec<Content> {
    let has_text = content.iter().any(|block| block.as_text().is_some());
    // Walked twice rather than collected: most results fit, and then cost no allocation.
    let read = || {
        content.iter().filter_map(move |block| match block {
            Content::Text { text } => Some(Cow::Borrowed(text.as_str())),
            Content::Json { value } if !has_text => Some(Cow::Owned(value.to_string())),
            _ => None,
        })
    };
    let (blocks, chars) = read().fold((0_usize, 0), |(blocks, chars), text| {
        (blocks + 1, chars + text.chars().count())
    });
    if chars + blocks.saturating_sub(1) <= max_chars {
        return content;
    }
    let joined = read().collect::<Vec<_>>().join("\n");
    let cut = truncate_text(&joined, max_chars).into_owned();
    let mut out = Vec::with_capacity(content.len());
    let mut cut = Some(cut);
    for block in content {
        match block {
            // The cut text takes the place of the first block it was made from.
            Content::Text { .. } | Content::Json { .. } => {
                let made_from = has_text == matches!(block, Content::Text { .. });
                if made_from && let Some(cut) = cut.take() {
                    out.push(Content::text(cut));
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// `error` with its message cut to `max_chars` characters, as a result's text is: a
/// failed command's output can be as long as a successful one's, and the model reads
/// either.
pub fn truncate_error(error: ToolError, max_chars: usize) -> ToolError {
    match truncate_text(error.message(), max_chars) {
        Cow::Owned(cut) => ToolError::new(error.kind(), cut),
        Cow::Borrowed(_) => error,
    }
}
