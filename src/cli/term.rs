//! The terminal, and nothing else knows about it: whether to colour (stdout a terminal and
//! `NO_COLOR` unset or empty), ANSI styles, a progress line on stderr (terminal only), and a
//! writer that notices when the reader of stdout went away (`git ledger report | head -1`).
//!
//! For command authors:
//! - colour: `let color = term::stdout_color();` then `term::paint(text, Style::Red, color)`;
//!   never colour JSON, Markdown or HTML.
//! - progress: `let mut p = term::Progress::new("hashing", total);` then `p.set(done)` (or
//!   `p.inc(1)`) as work proceeds and `p.finish()` at the end. It draws on stderr only when
//!   stderr is a terminal, at most ten times a second, and erases its line when finished or
//!   dropped, so the output of a piped or scripted run never contains it.

use std::io::{self, IsTerminal, Write};
use std::time::{Duration, Instant};

/// Whether `NO_COLOR` asks for no colour (set to anything but the empty string; no-color.org).
pub fn no_color_env() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Whether output on stdout may be coloured: stdout is a terminal and `NO_COLOR` is not set.
pub fn stdout_color() -> bool {
    !no_color_env() && io::stdout().is_terminal()
}

/// Whether stderr is a terminal (progress is drawn only then).
pub fn stderr_is_terminal() -> bool {
    io::stderr().is_terminal()
}

/// A text style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Bold,
    Dim,
    Red,
    BoldRed,
    Green,
    Yellow,
    Blue,
    Magenta,
}

impl Style {
    fn sgr(self) -> &'static str {
        match self {
            Style::Bold => "1",
            Style::Dim => "2",
            Style::Red => "31",
            Style::BoldRed => "1;31",
            Style::Green => "32",
            Style::Yellow => "33",
            Style::Blue => "34",
            Style::Magenta => "35",
        }
    }
}

/// `text` in `style` when `on`, else `text` unchanged.
pub fn paint(text: &str, style: Style, on: bool) -> String {
    if on {
        format!("\x1b[{}m{text}\x1b[0m", style.sgr())
    } else {
        text.to_owned()
    }
}

/// A one-line progress indicator on stderr (`label  done/total`), drawn only on a terminal.
pub struct Progress {
    label: String,
    total: u64,
    done: u64,
    enabled: bool,
    last: Option<Instant>,
    drawn: bool,
}

impl Progress {
    /// A progress line for `total` units of work (0 if unknown), drawn if stderr is a terminal.
    pub fn new(label: impl Into<String>, total: u64) -> Self {
        Self::with_enabled(label, total, stderr_is_terminal())
    }

    /// As [`Progress::new`], with drawing forced on or off (tests, `--quiet`).
    pub fn with_enabled(label: impl Into<String>, total: u64, enabled: bool) -> Self {
        Progress {
            label: label.into(),
            total,
            done: 0,
            enabled,
            last: None,
            drawn: false,
        }
    }

    /// Add `n` units of work done.
    pub fn inc(&mut self, n: u64) {
        self.set(self.done.saturating_add(n));
    }

    /// Set the units of work done.
    pub fn set(&mut self, done: u64) {
        self.done = done;
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        let due = self
            .last
            .is_none_or(|t| now.duration_since(t) >= Duration::from_millis(100));
        if due || (self.total > 0 && done >= self.total) {
            self.last = Some(now);
            let _ = self.draw(&mut io::stderr().lock());
        }
    }

    /// The line as drawn (without the carriage return and erase).
    pub fn line(&self) -> String {
        match (self.done.min(self.total) * 100).checked_div(self.total) {
            Some(pct) => format!("{}  {}/{} ({pct}%)", self.label, self.done, self.total),
            None => format!("{}  {}", self.label, self.done),
        }
    }

    fn draw(&mut self, w: &mut dyn Write) -> io::Result<()> {
        self.drawn = true;
        write!(w, "\r\x1b[2K{}", self.line())?;
        w.flush()
    }

    /// Erase the line (also done on drop).
    pub fn finish(mut self) {
        self.clear();
    }

    fn clear(&mut self) {
        if self.enabled && self.drawn {
            let mut e = io::stderr().lock();
            let _ = write!(e, "\r\x1b[2K");
            let _ = e.flush();
            self.drawn = false;
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.clear();
    }
}

/// A writer that remembers whether a write failed because the reader closed the pipe, so that
/// `main` can exit quietly with status 0 instead of printing "Broken pipe".
pub struct PipeWatch<W: Write> {
    inner: W,
    broken: bool,
}

impl<W: Write> PipeWatch<W> {
    pub fn new(inner: W) -> Self {
        PipeWatch {
            inner,
            broken: false,
        }
    }

    /// Whether a write or flush met a closed pipe.
    pub fn broken(&self) -> bool {
        self.broken
    }

    fn note<T>(&mut self, r: io::Result<T>) -> io::Result<T> {
        if let Err(e) = &r {
            if e.kind() == io::ErrorKind::BrokenPipe {
                self.broken = true;
            }
        }
        r
    }
}

impl<W: Write> Write for PipeWatch<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let r = self.inner.write(buf);
        self.note(r)
    }
    fn flush(&mut self) -> io::Result<()> {
        let r = self.inner.flush();
        self.note(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paint_only_when_on() {
        assert_eq!(paint("x", Style::Red, false), "x");
        assert_eq!(paint("x", Style::Red, true), "\x1b[31mx\x1b[0m");
    }

    #[test]
    fn progress_line_and_disabled_draws_nothing() {
        let mut p = Progress::with_enabled("hashing", 4, false);
        p.inc(1);
        p.inc(2);
        assert_eq!(p.line(), "hashing  3/4 (75%)");
        assert!(!p.drawn);
        let mut q = Progress::with_enabled("rows", 0, false);
        q.set(7);
        assert_eq!(q.line(), "rows  7");
    }

    struct Closed;
    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::from(io::ErrorKind::BrokenPipe))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn pipe_watch_notices_a_closed_pipe() {
        let mut w = PipeWatch::new(Closed);
        assert!(!w.broken());
        assert!(writeln!(w, "row").is_err());
        assert!(w.broken());
        let mut ok = PipeWatch::new(Vec::new());
        writeln!(ok, "row").unwrap();
        assert!(!ok.broken());
    }
}
