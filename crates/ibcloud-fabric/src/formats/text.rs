//! Small helpers shared by the text parsers: numbered lines, hex numbers,
//! quoted strings. None of them panics on any input.

use crate::error::ParseError;

/// Lines with 1-based numbers, `\r` stripped.
pub(crate) fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
}

/// Parses `0x1a2b`, `1a2b` (hex without prefix when `bare_hex`), or decimal.
pub(crate) fn parse_u64(token: &str, bare_hex: bool) -> Option<u64> {
    let t = token.trim();
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).ok();
    }
    if bare_hex {
        u64::from_str_radix(t, 16).ok()
    } else {
        t.parse().ok()
    }
}

/// Splits `"name" rest` into (`name`, `rest`); the text must start with a quote.
pub(crate) fn take_quoted(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start();
    let body = s.strip_prefix('"')?;
    let end = body.find('"')?;
    Some((&body[..end], &body[end + 1..]))
}

/// Splits `[12] rest` into (12, rest).
pub(crate) fn take_bracketed_num(s: &str) -> Option<(u64, &str)> {
    let s = s.trim_start();
    let body = s.strip_prefix('[')?;
    let end = body.find(']')?;
    Some((body[..end].trim().parse().ok()?, &body[end + 1..]))
}

/// Shorthand for a parse error.
pub(crate) fn err(file: &str, line: usize, problem: impl Into<String>) -> ParseError {
    ParseError::new(file, line, problem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_accept_and_refuse() {
        assert_eq!(parse_u64("0x1F", false), Some(31));
        assert_eq!(parse_u64("1F", true), Some(31));
        assert_eq!(parse_u64("1F", false), None);
        assert_eq!(take_quoted(" \"a b\"[1]"), Some(("a b", "[1]")));
        assert_eq!(take_quoted("\"open"), None);
        assert_eq!(take_bracketed_num("[12]\"x\""), Some((12, "\"x\"")));
        assert_eq!(take_bracketed_num("[x]"), None);
        assert_eq!(numbered_lines("a\r\nb").collect::<Vec<_>>(), vec![(1, "a"), (2, "b")]);
    }
}
