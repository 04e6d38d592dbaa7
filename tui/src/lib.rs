//! # rocescope-tui
//!
//! A ratatui terminal UI over rocescope's analysis. The UI never touches packets: a worker
//! (capture or file reader plus analyzer, on its own thread) sends [`Snapshot`]s several
//! times a second and the UI renders the latest one. Layout, key bindings and screens are
//! plain data ([`keys::KEYS`], [`app::Screen`]; the Congestion screen's resampling onto one time
//! axis is [`congestion::resample`]); `Space` freezes the view while the worker
//! carries on.

pub mod app;
pub mod congestion;
pub mod fabric;
mod fabric_ecmp;
pub mod filter;
pub mod keys;
pub mod snapshot;
pub mod term;
pub mod view;

pub use app::{App, Screen};
pub use snapshot::{FrameLine, Pulse, Snapshot, Update};
