//! Key bindings as data: the help overlay and the dispatcher read the same table.

/// What a key does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Leave.
    Quit,
    /// Next screen.
    NextScreen,
    /// Previous screen.
    PrevScreen,
    /// Go to screen n (1-based).
    Screen(u8),
    /// Move the selection.
    Up,
    /// Move the selection.
    Down,
    /// A page up.
    PageUp,
    /// A page down.
    PageDown,
    /// First row.
    Top,
    /// Last row.
    Bottom,
    /// Open the selection (QP detail, packet tree, a finding's target).
    Enter,
    /// Back out of a detail view.
    Back,
    /// Sort by the next column.
    SortNext,
    /// Reverse the sort.
    SortReverse,
    /// Freeze or thaw the view.
    Freeze,
    /// Start typing a display filter.
    Filter,
    /// Clear counters (restart the analysis).
    Clear,
    /// QPs screen: one row per connection, or per flow (one direction).
    ToggleFlows,
    /// Congestion screen: the previous capture point.
    PrevPoint,
    /// Congestion screen: the next capture point.
    NextPoint,
    /// Packets: scroll the lines right (their ends: PSN, flags).
    ScrollRight,
    /// Packets: scroll the lines back left.
    ScrollLeft,
    /// Show or hide the key list.
    Help,
}

/// A binding: key label, its characters or names, the action, and what the help says.
pub struct Binding {
    /// How the help shows it; empty: the help line of a binding before it covers it too
    /// (`1-6`, `[, ]`, `Tab, Shift-Tab`).
    pub label: &'static str,
    /// Characters that trigger it.
    pub chars: &'static [char],
    /// Named keys that trigger it (`up`, `down`, `enter`, `esc`, `tab`, `backtab`, `pgup`,
    /// `pgdn`, `home`, `end`).
    pub names: &'static [&'static str],
    /// The action.
    pub action: Action,
    /// Help text.
    pub help: &'static str,
}

/// Every binding.
pub const KEYS: &[Binding] = &[
    Binding {
        label: "q, Ctrl-C",
        chars: &['q'],
        names: &[],
        action: Action::Quit,
        help: "quit (the terminal is restored)",
    },
    Binding {
        label: "Tab, Shift-Tab",
        chars: &[],
        names: &["tab"],
        action: Action::NextScreen,
        help: "next / previous screen",
    },
    Binding {
        label: "",
        chars: &[],
        names: &["backtab"],
        action: Action::PrevScreen,
        help: "previous screen",
    },
    // The screens: one help line for the seven (the others' labels are empty).
    Binding {
        label: "1-7",
        chars: &['1'],
        names: &[],
        action: Action::Screen(1),
        help: "the screens, as the tab bar numbers them",
    },
    Binding { label: "", chars: &['2'], names: &[], action: Action::Screen(2), help: "Packets" },
    Binding {
        label: "",
        chars: &['3'],
        names: &[],
        action: Action::Screen(3),
        help: "Pause (PFC timelines)",
    },
    Binding { label: "", chars: &['4'], names: &[], action: Action::Screen(4), help: "Audit" },
    Binding { label: "", chars: &['5'], names: &[], action: Action::Screen(5), help: "Findings" },
    Binding {
        label: "",
        chars: &['6'],
        names: &[],
        action: Action::Screen(6),
        help: "Congestion (CE, CNP, pause per priority and QP)",
    },
    Binding {
        label: "",
        chars: &['7'],
        names: &[],
        action: Action::Screen(7),
        help: "Fabric (iterations, stragglers, elephants, ECMP)",
    },
    // Pairs share a help line (the second's label is empty): the list fits 80x24.
    Binding {
        label: "j k, Down Up",
        chars: &['j'],
        names: &["down"],
        action: Action::Down,
        help: "move down / up",
    },
    Binding { label: "", chars: &['k'], names: &["up"], action: Action::Up, help: "move up" },
    Binding {
        label: "PgDn PgUp",
        chars: &[],
        names: &["pgdn"],
        action: Action::PageDown,
        help: "page down / up (also Ctrl-F, Ctrl-B)",
    },
    Binding { label: "", chars: &[], names: &["pgup"], action: Action::PageUp, help: "page up" },
    Binding {
        label: "g G, Home End",
        chars: &['g'],
        names: &["home"],
        action: Action::Top,
        help: "first / last row",
    },
    Binding { label: "", chars: &['G'], names: &["end"], action: Action::Bottom, help: "last row" },
    Binding {
        label: "Enter, l",
        chars: &['l'],
        names: &["enter"],
        action: Action::Enter,
        help: "open: QP detail, packet tree, a finding's target, a QP (6)",
    },
    Binding { label: "Esc, h", chars: &['h'], names: &["esc"], action: Action::Back, help: "back" },
    Binding {
        label: "s, S",
        chars: &['s'],
        names: &[],
        action: Action::SortNext,
        help: "QPs: sort by the next column / reverse the sort",
    },
    Binding { label: "", chars: &['S'], names: &[], action: Action::SortReverse, help: "reverse the sort" },
    Binding {
        label: "Right, Left",
        chars: &['>'],
        names: &["right"],
        action: Action::ScrollRight,
        help: "Packets: scroll the lines sideways (as less -S)",
    },
    Binding { label: "", chars: &['<'], names: &["left"], action: Action::ScrollLeft, help: "scroll left" },
    Binding {
        label: "Space",
        chars: &[' '],
        names: &[],
        action: Action::Freeze,
        help: "freeze the view (capture continues)",
    },
    Binding {
        label: "/",
        chars: &['/'],
        names: &[],
        action: Action::Filter,
        help: "filter QPs (qp=0x12 and ce>0); on Packets, frames (nak)",
    },
    Binding {
        label: "c",
        chars: &['c'],
        names: &[],
        action: Action::Clear,
        help: "clear counters (a live capture; a file is kept)",
    },
    Binding {
        label: "v",
        chars: &['v'],
        names: &[],
        action: Action::ToggleFlows,
        help: "QPs: a row per connection or per direction (flow)",
    },
    Binding {
        label: "[, ]",
        chars: &['['],
        names: &[],
        action: Action::PrevPoint,
        help: "Congestion, Fabric: previous / next capture point",
    },
    Binding { label: "", chars: &[']'], names: &[], action: Action::NextPoint, help: "next capture point" },
    Binding { label: "?", chars: &['?'], names: &[], action: Action::Help, help: "this help" },
];

/// The action for a character key.
pub fn for_char(c: char) -> Option<Action> {
    KEYS.iter().find(|b| b.chars.contains(&c)).map(|b| b.action)
}

/// The action for a named key.
pub fn for_name(name: &str) -> Option<Action> {
    KEYS.iter().find(|b| b.names.contains(&name)).map(|b| b.action)
}
