//! The crate's one escaper per markup: Markdown ([`markdown`]) and XML/HTML ([`xml`]). Every
//! Markdown and HTML report, the SVG charts, `ibench check`'s Markdown and its JUnit XML
//! escape their text here.

/// A markup's escapes: the characters it writes otherwise, each with what it writes, and the
/// control characters it keeps (every other control character becomes a space).
struct Markup {
    /// Each character to escape and its text.
    replace: &'static [(char, &'static str)],
    /// The control characters written as they are.
    keeps: &'static [char],
}

/// Markdown: HTML's three entities, and a backslash before each character that would break
/// a table row or start emphasis, a link or code.
const MARKDOWN: Markup = Markup {
    replace: &[
        ('&', "&amp;"),
        ('<', "&lt;"),
        ('>', "&gt;"),
        ('|', "\\|"),
        ('\\', "\\\\"),
        ('`', "\\`"),
        ('*', "\\*"),
        ('_', "\\_"),
        ('[', "\\["),
        (']', "\\]"),
    ],
    keeps: &[],
};

/// XML 1.0 (and HTML): four entities; a line break and a tab are allowed.
const XML: Markup = Markup {
    replace: &[
        ('&', "&amp;"),
        ('<', "&lt;"),
        ('>', "&gt;"),
        ('"', "&quot;"),
    ],
    keeps: &['\n', '\t'],
};

/// `s` written in `markup`.
fn escape(s: &str, markup: &Markup) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if let Some((_, text)) = markup.replace.iter().find(|(r, _)| *r == c) {
            out.push_str(text);
        } else if c.is_control() && !markup.keeps.contains(&c) {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

/// A label or figure as Markdown text: HTML in it is shown, not interpreted, and it cannot
/// break a table row or start emphasis, a link or code; a control character (a line break in
/// a table cell) becomes a space.
pub fn markdown(s: &str) -> String {
    escape(s, &MARKDOWN)
}

/// Text as XML (and HTML) character data or a double-quoted attribute's value: `&`, `<`, `>`
/// and `"` as entities; a control character XML 1.0 does not allow becomes a space (a line
/// break and a tab stay).
pub fn xml(s: &str) -> String {
    escape(s, &XML)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_markup_escapes_what_a_label_may_hold() {
        assert_eq!(xml("a<b & \"c\"\u{1b}'"), "a&lt;b &amp; &quot;c&quot; '");
        assert_eq!(xml("a\nb\tc"), "a\nb\tc");
        assert_eq!(markdown("a|b_c"), "a\\|b\\_c");
        assert_eq!(markdown("<b>&\u{7}"), "&lt;b&gt;&amp; ");
        assert_eq!(markdown("a\nb"), "a b");
        assert_eq!(markdown("\\`*[]"), "\\\\\\`\\*\\[\\]");
    }
}
