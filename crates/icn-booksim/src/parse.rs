//! BookSim2's configuration syntax (its `config.l` / `config.y`): `key = value;` statements,
//! `//` comments to the end of the line, values a number, a bare or quoted string, or a
//! `{a, b}` list (kept as text: icnlab models no multi-class keys, so lists are refused by the
//! translation). Command-line overrides are `key=value` words, parsed the same way and applied
//! after the file (the later assignment of a key wins, as in BookSim2).

use crate::ImportError;

/// A value as written.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Number(f64),
    Text(String),
    /// `{…}`, its text between the braces.
    List(String),
}

impl Value {
    /// The value as BookSim2 prints it.
    pub fn text(&self) -> String {
        match self {
            Value::Number(x) => format!("{x}"),
            Value::Text(s) => s.clone(),
            Value::List(s) => format!("{{{s}}}"),
        }
    }
}

/// One assignment and where it was made.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    pub value: Value,
    /// `FILE:LINE` or `command line`.
    pub at: String,
}

/// The assignments of `text` (named `file` in errors) followed by the `overrides`
/// (`key=value` each), in order.
pub fn parse(file: &str, text: &str, overrides: &[String]) -> Result<Vec<Entry>, ImportError> {
    let mut out = Vec::new();
    // Statements may span lines; track the line each starts on.
    let mut stmt = String::new();
    let mut start = 0;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split("//").next().unwrap_or("");
        for ch in line.chars() {
            if stmt.trim().is_empty() {
                start = i + 1;
            }
            if ch == ';' {
                out.push(statement(&stmt, &format!("{file}:{start}"))?);
                stmt.clear();
            } else {
                stmt.push(ch);
            }
        }
        stmt.push(' ');
    }
    if !stmt.trim().is_empty() {
        return Err(ImportError::Syntax {
            at: format!("{file}:{start}"),
            message: format!("`{}` has no closing `;`", stmt.trim()),
        });
    }
    for o in overrides {
        out.push(statement(o, "command line")?);
    }
    Ok(out)
}

fn statement(s: &str, at: &str) -> Result<Entry, ImportError> {
    let bad = |message: String| ImportError::Syntax {
        at: at.to_owned(),
        message,
    };
    let (key, value) = s
        .split_once('=')
        .ok_or_else(|| bad(format!("expected `key = value`, got `{}`", s.trim())))?;
    let key = key.trim();
    let ok_key = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !ok_key {
        return Err(bad(format!("`{key}` is not a key name")));
    }
    let v = value.trim();
    let value = if v.is_empty() {
        return Err(bad(format!("key `{key}` has no value")));
    } else if let Some(inner) = v.strip_prefix('{') {
        let inner = inner
            .strip_suffix('}')
            .ok_or_else(|| bad(format!("key `{key}`: `{v}` has no closing `}}`")))?;
        Value::List(inner.trim().to_owned())
    } else if let Ok(x) = v.parse::<f64>() {
        if !x.is_finite() {
            return Err(bad(format!("key `{key}`: `{v}` is not a finite number")));
        }
        Value::Number(x)
    } else {
        let unquoted = v
            .strip_prefix('"')
            .and_then(|x| x.strip_suffix('"'))
            .unwrap_or(v);
        if unquoted.chars().any(char::is_whitespace) {
            return Err(bad(format!("key `{key}`: `{v}` is not one value")));
        }
        Value::Text(unquoted.to_owned())
    };
    Ok(Entry {
        key: key.to_owned(),
        value,
        at: at.to_owned(),
    })
}
