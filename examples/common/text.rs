//! Writing a tutorial's report: lines and underlined headings appended to a `String`
//! (shared by the examples, each of which returns its text so a test can check it).

/// Appends one formatted line (or an empty line) to a `String`.
macro_rules! say {
    ($out:expr) => {
        $out.push('\n')
    };
    ($out:expr, $($arg:tt)*) => {{
        $out.push_str(&format!($($arg)*));
        $out.push('\n');
    }};
}

/// A heading, underlined, after an empty line.
pub fn heading(out: &mut String, title: &str) {
    say!(out);
    say!(out, "{title}");
    say!(out, "{}", "=".repeat(title.chars().count()));
}
