//! Text a user typed, echoed in an error without its control bytes: a file name or a value
//! holding `ESC [2J` or a carriage return would otherwise clear or rewrite the user's
//! terminal, or forge a line of output. Newlines and tabs are kept (messages span lines on
//! purpose); every other control character is written as its Rust escape (`\u{1b}`).

use std::borrow::Cow;

/// `text` with every control character but `\n` and `\t` escaped.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_hidden(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// C0 and C1 controls and DEL, except the two that lay out a message.
fn is_hidden(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

#[cfg(test)]
mod tests {
    use super::escape_controls;

    #[test]
    fn control_bytes_are_escaped_and_layout_is_kept() {
        assert_eq!(
            escape_controls("bad `\u{1b}[2J` at\rline\n\tnext\u{7f}\u{9b}"),
            "bad `\\u{1b}[2J` at\\rline\n\tnext\\u{7f}\\u{9b}"
        );
        assert!(matches!(
            escape_controls("plain: é ≤ 1"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
