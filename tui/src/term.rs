//! The terminal loop: raw mode and the alternate screen in, snapshots and keys through, the
//! terminal always restored on the way out (normal exit, error, or panic).

use crate::app::{App, LineEdit, Screen};
use crate::keys::{self, Action};
use crate::snapshot::Update;
use crate::view::{self, TreeFn};
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{
    self, DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture, Event,
    KeyCode, KeyEventKind, KeyModifiers, MouseEventKind,
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
    let _ = execute!(io::stdout(), LeaveAlternateScreen, DisableMouseCapture, DisableBracketedPaste);
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

/// Most events handled between two draws: a long burst still shows progress.
const MAX_BURST: usize = 4096;

/// Act on events read together. The keys typed into the filter line are applied as one
/// batch (up to an Enter or Esc that ends the editing, or another kind of event), so the line
/// is parsed once per batch ([`App::filter_edits`]), not once per key. A bracketed paste goes
/// into the filter line while it is edited (line breaks and tabs as spaces) and is ignored
/// otherwise: pasted text is not commands.
fn handle_events(app: &mut App, events: impl IntoIterator<Item = Event>) {
    let mut typed: Vec<LineEdit> = Vec::new();
    for ev in events {
        if app.quit {
            break;
        }
        if app.editing_filter {
            let edits = match &ev {
                Event::Key(k)
                    if k.kind != KeyEventKind::Release
                        && !(k.modifiers.contains(KeyModifiers::CONTROL) && k.code == KeyCode::Char('c')) =>
                {
                    Some(line_edit(k.code, k.modifiers).into_iter().collect::<Vec<_>>())
                }
                Event::Paste(text) => Some(pasted(text).collect()),
                _ => None,
            };
            if let Some(edits) = edits {
                let ends = edits.iter().any(|e| matches!(e, LineEdit::Apply | LineEdit::Cancel));
                typed.extend(edits);
                if ends {
                    app.filter_edits(typed.drain(..));
                }
                continue;
            }
        }
        if !typed.is_empty() {
            app.filter_edits(typed.drain(..));
        }
        handle_event(app, ev);
    }
    if !typed.is_empty() {
        app.filter_edits(typed);
    }
}

/// A pasted text as filter-line keys: a line break or tab is a space.
fn pasted(text: &str) -> impl Iterator<Item = LineEdit> + '_ {
    text.chars().map(|c| LineEdit::Insert(if matches!(c, '\n' | '\r' | '\t') { ' ' } else { c }))
}

/// One event outside the filter line's keys.
fn handle_event(app: &mut App, ev: Event) {
    match ev {
        Event::Key(k) if k.kind != KeyEventKind::Release => {
            let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
            if ctrl && matches!(k.code, KeyCode::Char('c')) {
                app.quit = true;
                return;
            }
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
                KeyCode::Right => keys::for_name("right"),
                KeyCode::Left => keys::for_name("left"),
                _ => None,
            };
            if let Some(a) = action {
                app.act(a);
            } else if app.help {
                app.help = false;
            }
        }
        Event::Mouse(m) => match m.kind {
            MouseEventKind::ScrollDown => app.act(Action::Down),
            MouseEventKind::ScrollUp => app.act(Action::Up),
            // A click selects a row of the QPs list, the one table whose scroll offset the
            // renderer records. Rows start below the header (3), tabs (1), border (1) and
            // column titles (1).
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

/// Answer the worker's [`Update::Release`]: the tables given up are freed on a thread of
/// their own (a second or so at a million flows), which answers once they are gone, so the
/// worker builds the next picture only then.
fn release(app: &mut App, reply: std::sync::mpsc::SyncSender<bool>) {
    match app.release() {
        Ok(Some(big)) => {
            let spawned = std::thread::Builder::new().name("rocescope-free".into()).spawn({
                let reply = reply.clone();
                move || {
                    drop(big);
                    let _ = reply.send(true);
                }
            });
            if spawned.is_err() {
                let _ = reply.send(true);
            }
        }
        Ok(None) => {
            let _ = reply.send(true);
        }
        Err(crate::app::Frozen) => {
            let _ = reply.send(false);
        }
    }
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
    // Bracketed paste: a paste arrives as one event, not one key per character.
    execute!(io::stdout(), EnterAlternateScreen, EnableMouseCapture, EnableBracketedPaste)?;
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
                Ok(Update::Release(reply)) => release(&mut app, reply),
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
            // Whatever else has arrived is handled before the next draw: a paste where the
            // terminal does not bracket it comes as thousands of keys, and a draw after each
            // (with the filter parsed each time) froze the screen while the terminal's input
            // queue filled.
            // (A zero timeout would not see the events crossterm has read but not yet handed
            // out: 1 ms, which costs nothing when they are there.)
            let mut events = vec![event::read()?];
            while events.len() < MAX_BURST && event::poll(Duration::from_millis(1))? {
                events.push(event::read()?);
            }
            handle_events(&mut app, events);
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

    #[test]
    fn a_release_is_answered_once_the_tables_are_freed_and_refused_while_frozen() {
        let report = rocescope_analyzer::Analyzer::new(rocescope_analyzer::Config::default()).report();
        let mut app = App::default();
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        // Nothing shown yet: nothing to give up.
        release(&mut app, tx.clone());
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok(true));
        app.update(crate::Snapshot::empty(report, "x.pcap", false));
        release(&mut app, tx.clone());
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok(true));
        assert!(app.updating);
        app.update(crate::Snapshot::empty(
            rocescope_analyzer::Analyzer::new(rocescope_analyzer::Config::default()).report(),
            "x.pcap",
            false,
        ));
        app.act(Action::Freeze);
        release(&mut app, tx);
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)), Ok(false));
        assert!(!app.updating);
    }

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

    fn key(code: KeyCode) -> Event {
        Event::Key(ratatui::crossterm::event::KeyEvent::new(code, KeyModifiers::NONE))
    }

    /// A 12,000-character paste that arrives as keys (no bracketed paste) is read in bursts
    /// and the filter line parsed once per burst, not once per key (1,024 parses before the
    /// batching, up to 12,000 before the length limit: an 18 s freeze).
    #[test]
    fn a_pasted_burst_of_keys_parses_the_filter_once() {
        let text: String = "nak or ".repeat(2_000).chars().take(12_000).collect();
        let mut app = App::default();
        app.act(Action::Filter);
        handle_events(&mut app, text.chars().map(|c| key(KeyCode::Char(c))));
        assert_eq!(app.filter_text.chars().count(), crate::app::MAX_FILTER_CHARS);
        assert_eq!(app.filter_parses(), 1);
        assert!(
            app.filter_error.as_deref().is_some_and(|e| e.contains("at most 1024")),
            "{:?}",
            app.filter_error
        );
        // The same keys one at a time: the same line, a parse per key that changed it.
        let mut one_by_one = App::default();
        one_by_one.act(Action::Filter);
        for c in text.chars() {
            one_by_one.filter_edit(LineEdit::Insert(c));
        }
        assert_eq!(
            (&one_by_one.filter_text, &one_by_one.filter_error),
            (&app.filter_text, &app.filter_error)
        );
        assert_eq!(one_by_one.filter_parses(), crate::app::MAX_FILTER_CHARS as u64);
    }

    /// In one burst: `/`, a filter, Enter, then a key that is a command again. Enter parses
    /// what came before it (an invalid filter is still refused); the keys after it act.
    #[test]
    fn keys_after_enter_in_a_burst_are_commands() {
        let mut app = App::default();
        let burst = "/nak>".chars().map(|c| key(KeyCode::Char(c))).chain([
            key(KeyCode::Enter),
            key(KeyCode::Backspace),
            key(KeyCode::Enter),
            key(KeyCode::Char('q')),
        ]);
        handle_events(&mut app, burst);
        assert_eq!(app.filter_text, "nak");
        assert!(app.filter.is_some() && app.filter_error.is_none() && !app.editing_filter);
        assert!(app.quit, "q after the filter was applied quits");
        assert_eq!(app.filter_parses(), 2, "once at each Enter");
    }

    /// A bracketed paste goes into the filter line whole (line breaks as spaces), parsed once;
    /// outside the filter line it is not taken for commands.
    #[test]
    fn a_bracketed_paste_is_filter_text_or_nothing() {
        let mut app = App::default();
        handle_events(&mut app, [Event::Paste("q".into())]);
        assert!(!app.quit && app.filter_text.is_empty());
        app.act(Action::Filter);
        handle_events(&mut app, [Event::Paste("nak\nor\tce>0".into()), key(KeyCode::Enter)]);
        assert_eq!(app.filter_text, "nak or ce>0");
        assert!(app.filter.is_some() && !app.editing_filter);
        assert_eq!(app.filter_parses(), 1);
        app.act(Action::Filter);
        handle_events(&mut app, [Event::Paste("(".repeat(100_000))]);
        assert_eq!(app.filter_text.chars().count(), crate::app::MAX_FILTER_CHARS);
        assert_eq!(app.filter_parses(), 2);
    }
}
