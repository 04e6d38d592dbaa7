//! The terminal loop: raw mode and the alternate screen in, snapshots and keys through, the
//! terminal always restored on the way out (normal exit, error, or panic).

use crate::app::{App, LineEdit, Screen};
use crate::keys::{self, Action};
use crate::snapshot::Update;
use crate::view::{self, TreeFn};
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{
    self, DisableMouseCapture, EnableMouseCapture, Event, KeyCode, KeyEventKind, KeyModifiers, MouseEventKind,
};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::Terminal;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::sync::Arc;
use std::time::Duration;

fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(io::stdout(), LeaveAlternateScreen, DisableMouseCapture);
}

/// Restores the terminal when dropped, whatever happened.
struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

/// What a key does in the filter line, as in a shell: Ctrl-U deletes to the start of the line,
/// Ctrl-W the word before the cursor, Ctrl-K to the end; Ctrl-A/E (Home/End) and Ctrl-B/F
/// (Left/Right) move; Ctrl-H is Backspace, Ctrl-D Delete. `None` for keys that do nothing
/// there: a Ctrl or Alt chord is never typed as its letter.
pub fn line_edit(code: KeyCode, mods: KeyModifiers) -> Option<LineEdit> {
    let ctrl = mods.contains(KeyModifiers::CONTROL);
    let alt = mods.contains(KeyModifiers::ALT);
    Some(match code {
        KeyCode::Enter => LineEdit::Apply,
        KeyCode::Esc => LineEdit::Cancel,
        // Ctrl- or Alt-Backspace deletes a word in most editors and shells.
        KeyCode::Backspace if ctrl || alt => LineEdit::DeleteWord,
        KeyCode::Backspace => LineEdit::Backspace,
        KeyCode::Delete => LineEdit::Delete,
        KeyCode::Left => LineEdit::Left,
        KeyCode::Right => LineEdit::Right,
        KeyCode::Home => LineEdit::Home,
        KeyCode::End => LineEdit::End,
        // AltGr arrives as Ctrl+Alt on some systems: the character it makes is typed.
        KeyCode::Char(c) if ctrl && alt => LineEdit::Insert(c),
        KeyCode::Char(c) if ctrl => match c.to_ascii_lowercase() {
            'u' => LineEdit::DeleteToStart,
            'w' => LineEdit::DeleteWord,
            'k' => LineEdit::DeleteToEnd,
            'a' => LineEdit::Home,
            'e' => LineEdit::End,
            'b' => LineEdit::Left,
            'f' => LineEdit::Right,
            'h' => LineEdit::Backspace,
            'd' => LineEdit::Delete,
            _ => return None,
        },
        KeyCode::Char(_) if alt => return None,
        KeyCode::Char(c) => LineEdit::Insert(c),
        _ => return None,
    })
}

/// Run the UI until the user quits or `stop` is set from outside. `rx` brings snapshots; `stop`
/// tells the worker to end;
/// `clear` asks it to restart the analysis; `tree` decodes a frame for the packet view.
pub fn run(
    rx: Receiver<Update>,
    stop: Arc<AtomicBool>,
    clear: Arc<AtomicBool>,
    tree: TreeFn<'_>,
) -> io::Result<()> {
    enable_raw_mode()?;
    let _guard = Guard;
    execute!(io::stdout(), EnterAlternateScreen, EnableMouseCapture)?;
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        prev(info);
    }));
    let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    terminal.clear()?;
    let mut app = App::default();
    loop {
        loop {
            match rx.try_recv() {
                Ok(Update::Full(s)) => app.update(*s),
                Ok(Update::Pulse(p)) => app.pulse(&p),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    // The worker is gone without saying why (it panicked): say so rather
                    // than show a picture that silently stopped moving.
                    if let Some(s) = app.shown.as_mut().filter(|s| !s.done && s.error.is_none()) {
                        s.error = Some("the capture thread stopped unexpectedly".into());
                    }
                    break;
                }
            }
        }
        terminal.draw(|f| view::draw(f, &mut app, tree))?;
        if event::poll(Duration::from_millis(200))? {
            match event::read()? {
                Event::Key(k) if k.kind != KeyEventKind::Release => {
                    let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
                    if ctrl && matches!(k.code, KeyCode::Char('c')) {
                        app.quit = true;
                    } else if app.editing_filter {
                        if let Some(e) = line_edit(k.code, k.modifiers) {
                            app.filter_edit(e);
                        }
                    } else {
                        let action = match k.code {
                            KeyCode::Char('f') if ctrl => Some(Action::PageDown),
                            KeyCode::Char('b') if ctrl => Some(Action::PageUp),
                            KeyCode::Char(c) => keys::for_char(c),
                            KeyCode::Up => keys::for_name("up"),
                            KeyCode::Down => keys::for_name("down"),
                            KeyCode::Enter => keys::for_name("enter"),
                            KeyCode::Esc => keys::for_name("esc"),
                            KeyCode::Tab => keys::for_name("tab"),
                            KeyCode::BackTab => keys::for_name("backtab"),
                            KeyCode::PageUp => keys::for_name("pgup"),
                            KeyCode::PageDown => keys::for_name("pgdn"),
                            KeyCode::Home => keys::for_name("home"),
                            KeyCode::End => keys::for_name("end"),
                            _ => None,
                        };
                        if let Some(a) = action {
                            app.act(a);
                        } else if app.help {
                            app.help = false;
                        }
                    }
                }
                Event::Mouse(m) => match m.kind {
                    MouseEventKind::ScrollDown => app.act(Action::Down),
                    MouseEventKind::ScrollUp => app.act(Action::Up),
                    // A click selects a row of the QPs list, the one table whose scroll
                    // offset the renderer records. Rows start below the header (3), tabs
                    // (1), border (1) and column titles (1).
                    MouseEventKind::Down(_)
                        if app.screen == Screen::Qps && app.detail.is_none() && !app.help && m.row >= 6 =>
                    {
                        app.select_qp_row(app.qps_offset.get() + usize::from(m.row - 6));
                    }
                    _ => {}
                },
                _ => {}
            }
        }
        if app.clear_requested {
            clear.store(true, Ordering::Relaxed);
            app.clear_requested = false;
        }
        if app.quit {
            stop.store(true, Ordering::Relaxed);
            break;
        }
        // Stopped from outside (the binary sets it on SIGTERM or SIGHUP): leave as on a
        // quit, so the terminal is given back as it was found.
        if stop.load(Ordering::Relaxed) {
            break;
        }
    }
    terminal.show_cursor()?;
    // A picture of a million flows takes a second or more to free: the process is about
    // to end, so that happens on the side rather than between the key and the exit.
    for s in [app.shown.take(), app.pending.take()].into_iter().flatten() {
        let _ = std::thread::Builder::new().name("rocescope-free".into()).spawn(move || drop(s));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::Action;

    fn ctrl(c: char) -> Option<LineEdit> {
        line_edit(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    /// Type `keys` into a fresh filter line as the terminal loop does.
    fn typed(keys: &[(KeyCode, KeyModifiers)]) -> App {
        let mut app = App::default();
        app.act(Action::Filter);
        for (code, mods) in keys {
            if let Some(e) = line_edit(*code, *mods) {
                app.filter_edit(e);
            }
        }
        app
    }

    fn text(s: &str) -> Vec<(KeyCode, KeyModifiers)> {
        s.chars().map(|c| (KeyCode::Char(c), KeyModifiers::NONE)).collect()
    }

    #[test]
    fn shell_keys_edit_the_line() {
        assert_eq!(ctrl('u'), Some(LineEdit::DeleteToStart));
        assert_eq!(ctrl('w'), Some(LineEdit::DeleteWord));
        assert_eq!(ctrl('a'), Some(LineEdit::Home));
        assert_eq!(ctrl('e'), Some(LineEdit::End));
        assert_eq!(ctrl('k'), Some(LineEdit::DeleteToEnd));
        assert_eq!(ctrl('h'), Some(LineEdit::Backspace));
        assert_eq!(ctrl('x'), None, "an unbound Ctrl chord types nothing");
        assert_eq!(line_edit(KeyCode::Char('u'), KeyModifiers::ALT), None);
        assert_eq!(line_edit(KeyCode::Char('U'), KeyModifiers::SHIFT), Some(LineEdit::Insert('U')));
        assert_eq!(line_edit(KeyCode::Backspace, KeyModifiers::NONE), Some(LineEdit::Backspace));
        assert_eq!(line_edit(KeyCode::Backspace, KeyModifiers::ALT), Some(LineEdit::DeleteWord));
        let ctrl_alt = KeyModifiers::CONTROL | KeyModifiers::ALT;
        assert_eq!(line_edit(KeyCode::Char('|'), ctrl_alt), Some(LineEdit::Insert('|')), "AltGr");

        // Ctrl-U clears the line (it once typed a `u`), and the filter with it.
        let mut keys = text("qp=0x12 and nak");
        keys.push((KeyCode::Char('u'), KeyModifiers::CONTROL));
        let app = typed(&keys);
        assert_eq!(app.filter_text, "");
        assert_eq!(app.filter_cursor, 0);
        assert!(app.filter.is_none() && app.filter_error.is_none());

        // Ctrl-W deletes the word before the cursor, then the one before that with its space.
        let mut keys = text("qp=0x12 and nak ");
        keys.push((KeyCode::Char('w'), KeyModifiers::CONTROL));
        let app = typed(&keys);
        assert_eq!(app.filter_text, "qp=0x12 and ");
        assert!(app.filter_error.is_some(), "a dangling and is explained");
        keys.push((KeyCode::Char('w'), KeyModifiers::CONTROL));
        let app = typed(&keys);
        assert_eq!(app.filter_text, "qp=0x12 ");
        assert!(app.filter_error.is_none() && app.filter.is_some());

        // Ctrl-A, type, Ctrl-E, type: both ends; Ctrl-K after Ctrl-A clears from the start.
        let mut keys = text("nak");
        keys.push((KeyCode::Char('a'), KeyModifiers::CONTROL));
        keys.extend(text("not "));
        keys.push((KeyCode::Char('e'), KeyModifiers::CONTROL));
        keys.extend(text(" and ce"));
        let app = typed(&keys);
        assert_eq!(app.filter_text, "not nak and ce");
        assert!(app.filter.is_some());
        keys.push((KeyCode::Left, KeyModifiers::NONE));
        keys.push((KeyCode::Left, KeyModifiers::NONE));
        keys.push((KeyCode::Backspace, KeyModifiers::NONE));
        keys.push((KeyCode::Delete, KeyModifiers::NONE));
        let app = typed(&keys);
        assert_eq!(app.filter_text, "not nak ande", "Backspace before the cursor, Delete at it");
        keys.push((KeyCode::Home, KeyModifiers::NONE));
        keys.push((KeyCode::Right, KeyModifiers::NONE));
        keys.push((KeyCode::Char('k'), KeyModifiers::CONTROL));
        assert_eq!(typed(&keys).filter_text, "n");
        // Ctrl-U in the middle deletes only what is before the cursor, as in a shell.
        let mut keys = text("nak or rnr");
        keys.extend([(KeyCode::Left, KeyModifiers::NONE); 3]);
        keys.push((KeyCode::Char('u'), KeyModifiers::CONTROL));
        let app = typed(&keys);
        assert_eq!(app.filter_text, "rnr");
        assert_eq!(app.filter_cursor, 0);
    }

    #[test]
    fn editing_is_by_character_not_byte() {
        let mut keys = text("ip=fe80::1 µ");
        keys.push((KeyCode::Left, KeyModifiers::NONE));
        keys.push((KeyCode::Backspace, KeyModifiers::NONE));
        keys.push((KeyCode::Right, KeyModifiers::NONE));
        keys.push((KeyCode::Backspace, KeyModifiers::NONE));
        let app = typed(&keys);
        assert_eq!(app.filter_text, "ip=fe80::1");
        assert!(app.filter.is_some());
    }
}
