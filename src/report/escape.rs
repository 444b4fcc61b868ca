//! The crate's one escaper per markup: Markdown ([`markdown`]) and XML/HTML ([`xml`]). Every
//! Markdown and HTML report, the SVG charts, `ibench check`'s Markdown and its JUnit XML
//! escape their text here.

/// A label or figure as Markdown text: HTML in it is shown, not interpreted, and it cannot
/// break a table row or start emphasis, a link or code; a control character (a line break in
/// a table cell) becomes a space.
pub fn markdown(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' | '\\' | '`' | '*' | '_' | '[' | ']' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Text as XML (and HTML) character data or a double-quoted attribute's value: `&`, `<`, `>`
/// and `"` as entities; a control character XML 1.0 does not allow becomes a space (a line
/// break and a tab stay).
pub fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c if c.is_control() && !matches!(c, '\n' | '\t') => out.push(' '),
            c => out.push(c),
        }
    }
    out
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
    }
}
