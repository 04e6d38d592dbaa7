//! The terminal loop: raw mode and the alternate screen in, snapshots and keys through, the
//! terminal always restored on the way out (normal exit, error, or panic).

use crate::app::{App, Screen};
use crate::keys::{self, Action};
use crate::snapshot::Snapshot;
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

/// Run the UI until the user quits. `rx` brings snapshots; `stop` tells the worker to end;
/// `clear` asks it to restart the analysis; `tree` decodes a frame for the packet view.
pub fn run(
    rx: Receiver<Snapshot>,
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
                Ok(s) => app.update(s),
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
                        match k.code {
                            KeyCode::Enter => app.filter_key(None, true, false, false),
                            KeyCode::Esc => app.filter_key(None, false, true, false),
                            KeyCode::Backspace => app.filter_key(None, false, false, true),
                            KeyCode::Char(c) => app.filter_key(Some(c), false, false, false),
                            _ => {}
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
    }
    terminal.show_cursor()?;
    Ok(())
}
