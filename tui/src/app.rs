//! UI state and what each action does to it. No terminal here: tests drive it directly.

use crate::congestion::{rank_qps, QpRanking, MAX_QP_ROWS};
use crate::filter::{Filter, FramePlace, PacketFilter, Row};
use crate::keys::Action;
use crate::snapshot::Snapshot;
use rocescope_analyzer::report::{health_rank, ConnFlows, Connection, Report, ReportTotals, Word};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

/// Columns one `Right` or `Left` scrolls the Packets lines by.
pub const HSCROLL_STEP: usize = 20;
/// The farthest right they scroll: past any line's end.
const HSCROLL_MAX: usize = 400;

/// The screens, in Tab order. Detail views hang off QPs and Packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Screen {
    /// One row per connection.
    Qps,
    /// The frames (of the selected QP, or all).
    Packets,
    /// PFC/PAUSE timelines.
    Pause,
    /// QoS violations.
    Audit,
    /// Findings, worst first.
    Findings,
    /// CE, CNP and pause rates per priority and per QP on one time axis.
    Congestion,
    /// The job's shape: the iteration rhythm, who finishes last, elephants and ECMP.
    Fabric,
}

impl Screen {
    /// Tab order.
    pub const ALL: [Screen; 7] = [
        Screen::Qps,
        Screen::Packets,
        Screen::Pause,
        Screen::Audit,
        Screen::Findings,
        Screen::Congestion,
        Screen::Fabric,
    ];

    /// Tab title.
    pub fn title(self) -> &'static str {
        match self {
            Screen::Qps => "1 QPs",
            Screen::Packets => "2 Packets",
            Screen::Pause => "3 Pause",
            Screen::Audit => "4 Audit",
            Screen::Findings => "5 Findings",
            Screen::Congestion => "6 Congestion",
            Screen::Fabric => "7 Fabric",
        }
    }

    fn index(self) -> usize {
        Screen::ALL.iter().position(|s| *s == self).unwrap_or(0)
    }
}

/// Sortable QP columns (`s` cycles through them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    /// Worst health first, then packets (the default).
    Health,
    /// Packets.
    Packets,
    /// Mean Gb/s.
    Gbps,
    /// PSN gaps.
    Gaps,
    /// Retransmissions.
    Retx,
    /// NAKs.
    Naks,
    /// RNR NAKs.
    Rnr,
    /// CE percent.
    Ce,
    /// CNPs.
    Cnps,
    /// Source address.
    Address,
}

impl Column {
    /// Cycle order.
    pub const ALL: [Column; 10] = [
        Column::Health,
        Column::Packets,
        Column::Gbps,
        Column::Gaps,
        Column::Retx,
        Column::Naks,
        Column::Rnr,
        Column::Ce,
        Column::Cnps,
        Column::Address,
    ];

    /// Header name.
    pub fn name(self) -> &'static str {
        match self {
            Column::Health => "health",
            Column::Packets => "packets",
            Column::Gbps => "Gb/s",
            Column::Gaps => "gaps",
            Column::Retx => "retx",
            Column::Naks => "NAKs",
            Column::Rnr => "RNR",
            Column::Ce => "CE%",
            Column::Cnps => "CNPs",
            Column::Address => "A",
        }
    }
}

/// One QPs row: a connection with its aggregated figures.
#[derive(Clone, Debug, PartialEq)]
pub struct QpRow {
    /// Index into `Report::connections` (the connection a flow row belongs to).
    pub conn: usize,
    /// Capture point, when several captures are merged (else empty).
    pub point: String,
    /// First column: `address (QP)`.
    pub a_label: String,
    /// Second column.
    pub b_label: String,
    /// Filterable figures.
    pub row: Row,
    /// Gb/s over the last bin, and the peak bin.
    pub gbps_now: f64,
    /// Peak.
    pub gbps_peak: f64,
    /// Mean over the connection's life.
    pub gbps_mean: f64,
    /// Messages.
    pub messages: u64,
    /// NAK-driven / timeout retransmissions.
    pub retx_nak: u64,
    /// Timeout retransmissions.
    pub retx_timeout: u64,
}

/// Build the QPs rows of `r`.
pub fn qp_rows(r: &Report) -> Vec<QpRow> {
    r.connections.iter().enumerate().map(|(i, c)| qp_row(r, i, c)).collect()
}

/// Build one row per flow (direction): source, then destination and its QP; health is the
/// worst finding on that flow alone.
pub fn flow_rows(r: &Report) -> Vec<QpRow> {
    let mut conn_of = vec![0usize; r.flows.len()];
    for (ci, c) in r.connections.iter().enumerate() {
        for f in &c.flows {
            if let Some(x) = conn_of.get_mut(*f) {
                *x = ci;
            }
        }
    }
    r.flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let one = Connection {
                point: f.point,
                // The entry's addresses are an analyzer key's, written out: they parse back.
                a: f.src.parse().unwrap_or(std::net::Ipv6Addr::UNSPECIFIED.into()),
                b: f.dst.parse().unwrap_or(std::net::Ipv6Addr::UNSPECIFIED.into()),
                a_qpn: None,
                b_qpn: f.dest_qp,
                flows: ConnFlows::one(i),
                pairing: Word::new(f.pairing.as_deref().unwrap_or("none")),
                packets: f.packets,
                bytes: f.bytes,
                // Its worst finding, also when the report folded it into a summary.
                health: Word::new(&f.health),
            };
            let mut row = qp_row(r, conn_of.get(i).copied().unwrap_or(0), &one);
            row.a_label = f.src.clone();
            row
        })
        .collect()
}

fn qp_row(r: &Report, i: usize, c: &Connection) -> QpRow {
    let t = r.connection_totals(c);
    // RNR retries and needless go-back-N are retransmissions but not loss, and gaps late
    // packets filled are not lost (`loss` in the filter leaves them out, as the report does).
    let flows = || c.flows.iter().filter_map(|f| r.flows.get(*f));
    let retx_not_loss: u64 = flows().map(|f| f.psn.retransmits_rnr + f.psn.retransmits_spurious).sum();
    let loss_gaps: u64 = flows().map(|f| f.psn.network_loss_gaps + f.psn.capture_loss_gaps).sum();
    let mut qps = vec![c.b_qpn];
    qps.extend(c.a_qpn);
    QpRow {
        conn: i,
        // Merged captures: where the connection was seen (its own column).
        point: match r.points.get(usize::from(c.point)) {
            Some(p) if r.points.len() > 1 => p.name.clone(),
            _ => String::new(),
        },
        // The QP first: it tells the rows of one host pair apart, and at 80 columns the
        // address's end is what gets cut (issue 41).
        a_label: format!("{} {}", c.a_qpn.map_or("?".into(), |q| format!("0x{q:x}")), c.a),
        b_label: format!("0x{:x} {}", c.b_qpn, c.b),
        row: Row {
            qps,
            ips: vec![c.a.to_string(), c.b.to_string()],
            pkts: t.packets as f64,
            gaps: t.gaps as f64,
            retx: t.retransmits as f64,
            retx_not_loss: retx_not_loss as f64,
            loss_gaps: loss_gaps as f64,
            naks: t.naks as f64,
            rnr: t.rnr as f64,
            ce: t.ce_percent(),
            cnps: t.cnps as f64,
            health: c.health.as_str(),
            dscp: t.dscp.clone(),
            pcp: t.pcp.clone(),
        },
        gbps_now: t.now_gbps,
        gbps_peak: t.peak_gbps,
        gbps_mean: t.mean_gbps(),
        messages: t.messages,
        retx_nak: t.retransmits_nak,
        retx_timeout: t.retransmits_timeout,
    }
}

/// An edit of the filter line (what the keys do while typing after `/`; the terminal loop maps
/// keys to these, shell-style: Ctrl-U, Ctrl-W, Ctrl-A/E, Ctrl-K, Ctrl-B/F, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineEdit {
    /// Insert a character at the cursor (control characters are ignored).
    Insert(char),
    /// Delete the character before the cursor (Backspace, Ctrl-H).
    Backspace,
    /// Delete the character at the cursor (Delete, Ctrl-D).
    Delete,
    /// Delete the word before the cursor, and the spaces after it (Ctrl-W).
    DeleteWord,
    /// Delete from the start of the line to the cursor (Ctrl-U): with the cursor at the end,
    /// clear the line.
    DeleteToStart,
    /// Delete from the cursor to the end of the line (Ctrl-K).
    DeleteToEnd,
    /// Cursor one character left (Left, Ctrl-B).
    Left,
    /// Cursor one character right (Right, Ctrl-F).
    Right,
    /// Cursor to the start (Home, Ctrl-A).
    Home,
    /// Cursor to the end (End, Ctrl-E).
    End,
    /// Apply the filter and stop editing (Enter); refused while it does not parse.
    Apply,
    /// Go back to the filter from before the edit (Esc).
    Cancel,
}

/// The per-flow tables of a snapshot given up by [`App::release`].
#[derive(Debug)]
pub struct Released {
    /// Its flows.
    pub flows: Vec<rocescope_analyzer::report::FlowReport>,
    /// Its connections.
    pub connections: Vec<rocescope_analyzer::report::Connection>,
    /// Its QPs rows.
    pub rows: Option<Arc<Vec<QpRow>>>,
}

/// [`App::release`] refused: the view is frozen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frozen;

/// The whole UI state.
#[derive(Debug)]
pub struct App {
    /// The screen shown.
    pub screen: Screen,
    /// The QP detail view is open (over QPs) for this connection.
    pub detail: Option<usize>,
    /// The packet tree is open for this frame number.
    pub packet_open: Option<u64>,
    /// Packets shown only for these flows (from a QP detail), else all.
    pub packet_flows: Option<Vec<usize>>,
    /// Selected row per screen (in [`Screen::ALL`] order).
    pub selected: [usize; 7],
    /// Congestion screen: the capture point shown (index into `Report::timeline.points`).
    pub point: usize,
    /// Sort column and whether reversed.
    pub sort: (Column, bool),
    /// The view is frozen: new snapshots are kept aside.
    pub frozen: bool,
    /// What is shown.
    pub shown: Option<Snapshot>,
    /// The newest snapshot while frozen.
    pub pending: Option<Snapshot>,
    /// A one-line notice in the key bar's place (a key that did nothing, and why), until
    /// the next key.
    pub notice: Option<String>,
    /// The tables of `shown` were given up for the next snapshot ([`App::release`]): the
    /// QPs and Congestion screens say so, and keys that act on their rows wait for it.
    pub updating: bool,
    /// The open QP detail's first flow, kept across [`App::release`] so the detail reopens
    /// on the same connection in the next snapshot.
    anchor: Option<usize>,
    /// Display filter text, parsed filter, and its error.
    pub filter_text: String,
    /// The parsed filter.
    pub filter: Option<Filter>,
    /// Why the filter text does not parse.
    pub filter_error: Option<String>,
    /// Typing a filter.
    pub editing_filter: bool,
    /// Where the cursor is in `filter_text`, in characters.
    pub filter_cursor: usize,
    /// The Packets screen's filter (decode's -Y language), its text while the line is not
    /// editing it, and whether the line is editing it.
    pub packet_filter: Option<PacketFilter>,
    /// The packet filter's text (in `filter_text` while the line edits it).
    pub packet_filter_text: String,
    /// The line edits the packet filter (opened on the Packets screen).
    pub editing_packets: bool,
    /// The packet filter before editing began, for Esc.
    packet_filter_before: Option<Option<PacketFilter>>,
    /// The filter (text and parsed) before editing began, for Esc.
    filter_before: Option<(String, Option<Filter>)>,
    /// Times the filter line was parsed ([`App::filter_parses`]).
    filter_parses: u64,
    /// Help overlay shown.
    pub help: bool,
    /// Packets: columns the lines are scrolled right by (`Right`, `Left`; as less -S).
    pub packet_hscroll: usize,
    /// Leave at the next turn.
    pub quit: bool,
    /// The user asked to clear counters (the worker restarts the analysis).
    pub clear_requested: bool,
    /// Rows per page (set by the renderer).
    pub page: usize,
    /// QPs rows are flows (one direction each) rather than connections.
    pub by_flow: bool,
    /// First QPs row on screen (set by the renderer; a mouse click adds it to the row).
    pub qps_offset: std::cell::Cell<usize>,
    /// Bumped whenever `shown` changes, so the QPs rows are rebuilt only when needed.
    generation: u64,
    /// The QPs rows for (generation, sort, filter text): sorting 10,000 connections on every
    /// frame and key would cost tens of milliseconds.
    row_cache: RefCell<Option<(RowsKey, Rc<Rows>)>>,
    /// Every row of the shown snapshot for (generation, by_flow), before sort and filter.
    all_rows_cache: RefCell<Option<AllRows>>,
    /// The Congestion screen's QPs for (generation, point).
    congestion_cache: RefCell<Option<Ranked>>,
}

/// The Congestion screen's QPs, for (generation, point).
type Ranked = ((u64, usize), Rc<QpRanking>);

/// Every row of a snapshot, for (generation, by_flow).
type AllRows = ((u64, bool), Arc<Vec<QpRow>>);

/// What the QPs rows depend on.
type RowsKey = (u64, (Column, bool), String, bool);

/// The QPs rows as shown: every row of the snapshot (shared, built once) taken in the order
/// the sort and the filter give.
#[derive(Clone, Debug, Default)]
pub struct Rows {
    all: Arc<Vec<QpRow>>,
    order: Vec<usize>,
}

impl Rows {
    /// Rows shown (those the filter keeps).
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// No row shown.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The `i`th row shown.
    pub fn get(&self, i: usize) -> Option<&QpRow> {
        self.order.get(i).and_then(|j| self.all.get(*j))
    }

    /// The rows shown, in order.
    pub fn iter(&self) -> impl Iterator<Item = &QpRow> + '_ {
        self.order.iter().filter_map(|j| self.all.get(*j))
    }

    /// Up to `n` rows shown from the `start`th on.
    pub fn window(&self, start: usize, n: usize) -> impl Iterator<Item = &QpRow> + '_ {
        self.order.iter().skip(start).take(n).filter_map(|j| self.all.get(*j))
    }
}

impl Default for App {
    fn default() -> Self {
        App {
            screen: Screen::Qps,
            detail: None,
            packet_open: None,
            packet_flows: None,
            selected: [0; 7],
            point: 0,
            sort: (Column::Health, false),
            frozen: false,
            shown: None,
            pending: None,
            updating: false,
            anchor: None,
            notice: None,
            filter_text: String::new(),
            filter: None,
            filter_error: None,
            editing_filter: false,
            filter_cursor: 0,
            filter_before: None,
            packet_filter: None,
            packet_filter_text: String::new(),
            editing_packets: false,
            packet_filter_before: None,
            filter_parses: 0,
            help: false,
            packet_hscroll: 0,
            quit: false,
            clear_requested: false,
            page: 20,
            by_flow: false,
            qps_offset: std::cell::Cell::new(0),
            generation: 0,
            row_cache: RefCell::new(None),
            all_rows_cache: RefCell::new(None),
            congestion_cache: RefCell::new(None),
        }
    }
}

/// What `c` says on a file instead of clearing it.
pub const CLEAR_ON_A_FILE: &str =
    "c clears live counters only: a file's analysis is kept (run again to re-read)";

/// The longest filter the filter line takes: far more than a filter a person writes, short
/// enough that editing and parsing it stays cheap.
pub const MAX_FILTER_CHARS: usize = 1024;

impl App {
    /// Take a new snapshot (kept aside while frozen).
    pub fn update(&mut self, s: Snapshot) {
        if self.frozen && self.shown.is_some() {
            self.pending = Some(s);
        } else {
            self.show(s);
        }
    }

    /// Fresh header figures: applied to what is shown (not while frozen: a frozen view
    /// holds still), and to a snapshot kept aside while frozen.
    pub fn pulse(&mut self, p: &crate::Pulse) {
        if self.frozen {
            if let Some(s) = self.pending.as_mut() {
                s.apply(p);
            }
        } else if let Some(s) = self.shown.as_mut() {
            s.apply(p);
        }
    }

    /// Put `s` on screen. Connection indices shift when flows pair up, so an open QP detail
    /// follows its first flow into the new report; selections are kept within the new rows.
    fn show(&mut self, s: Snapshot) {
        let anchor = self.anchor.take().or_else(|| {
            self.detail.and_then(|d| self.shown.as_ref()?.report.connections.get(d)?.flows.first().copied())
        });
        self.updating = false;
        self.detail = anchor.and_then(|f| s.report.connections.iter().position(|c| c.flows.contains(&f)));
        // The Congestion screen stays on its capture point when a new one starts charting.
        let point =
            self.shown.as_ref().and_then(|o| o.report.timeline.points.get(self.point)).map(|p| p.point);
        if let Some(i) = point.and_then(|id| s.report.timeline.points.iter().position(|p| p.point == id)) {
            self.point = i;
        }
        // The old picture can hold a million flows: freeing it takes long enough to be
        // felt, so it goes on a thread of its own.
        if let Some(old) = self.shown.replace(s) {
            if old.report.flows.len() > 10_000 {
                let _ = std::thread::Builder::new().name("rocescope-free".into()).spawn(move || drop(old));
            }
        }
        self.generation += 1;
        self.clamp_selection();
    }

    /// The worker is about to build a snapshot of many flows: give up the per-flow tables of
    /// the one shown (its flows, connections and rows, and the caches built on them), so the
    /// old and the new picture are never in memory together (at half a million flows each
    /// is about a gigabyte). The header, pauses, audit, findings and packet list stay on
    /// screen; the QPs and Congestion screens say they are updating until the next snapshot.
    /// What was given up is returned, to be freed off the UI thread.
    ///
    /// Refused (`Err`) while frozen: a frozen view holds its picture, and the worker builds
    /// no large one until the view resumes.
    pub fn release(&mut self) -> Result<Option<Released>, Frozen> {
        if self.frozen {
            return Err(Frozen);
        }
        let Some(s) = self.shown.as_mut() else { return Ok(None) };
        if self.anchor.is_none() {
            self.anchor = self.detail.and_then(|d| s.report.connections.get(d)?.flows.first().copied());
        }
        let big = Released {
            flows: std::mem::take(&mut s.report.flows),
            connections: std::mem::take(&mut s.report.connections),
            rows: s.rows.take(),
        };
        self.row_cache.replace(None);
        self.all_rows_cache.replace(None);
        self.congestion_cache.replace(None);
        self.generation += 1;
        self.updating = true;
        Ok(Some(big))
    }

    /// Select row `i` of the QPs list (a mouse click), kept within the rows.
    pub fn select_qp_row(&mut self, i: usize) {
        self.selected[0] = i.min(self.rows().len().saturating_sub(1));
    }

    /// Keep every screen's selection on an existing row (rows can shrink: a new snapshot,
    /// a cleared analysis, a filter).
    fn clamp_selection(&mut self) {
        let Some(s) = &self.shown else { return };
        self.point = self.point.min(s.report.timeline.points.len().saturating_sub(1));
        // The Congestion screen's QPs are ranked when that screen is shown (its draw keeps
        // the selection within them meanwhile).
        let congestion =
            if self.screen == Screen::Congestion { self.congestion_rows().len() } else { usize::MAX };
        let counts = [
            self.rows().len(),
            self.packet_rows(s).len(),
            s.report.pfc.len(),
            s.report.audit.violations.len(),
            s.report.findings.len(),
            congestion,
            crate::fabric::rows(&s.report, self.point).len(),
        ];
        for (sel, n) in self.selected.iter_mut().zip(counts) {
            *sel = (*sel).min(n.saturating_sub(1));
        }
    }

    /// QPs rows, filtered and sorted as the user asked. The rows themselves are built once
    /// per snapshot (by the worker, off the UI thread, when it sends them along); a sort or a
    /// filter only orders indices into them, so a key stays quick at a million connections
    /// (`shown` must change through [`App::update`] for the caches to hold).
    pub fn rows(&self) -> Rc<Rows> {
        let key: RowsKey = (self.generation, self.sort, self.filter_text.clone(), self.by_flow);
        if let Some((k, rows)) = &*self.row_cache.borrow() {
            if *k == key {
                return Rc::clone(rows);
            }
        }
        let rows = Rc::new(self.build_rows());
        *self.row_cache.borrow_mut() = Some((key, Rc::clone(&rows)));
        rows
    }

    /// Every row of the shown snapshot, unfiltered and unsorted.
    fn all_rows(&self) -> Arc<Vec<QpRow>> {
        let key = (self.generation, self.by_flow);
        if let Some((k, rows)) = &*self.all_rows_cache.borrow() {
            if *k == key {
                return Arc::clone(rows);
            }
        }
        let rows = match &self.shown {
            None => Arc::new(Vec::new()),
            Some(s) if self.by_flow => Arc::new(flow_rows(&s.report)),
            Some(s) => s.rows.clone().unwrap_or_else(|| Arc::new(qp_rows(&s.report))),
        };
        *self.all_rows_cache.borrow_mut() = Some((key, Arc::clone(&rows)));
        rows
    }

    fn build_rows(&self) -> Rows {
        let all = self.all_rows();
        let mut order: Vec<usize> = match &self.filter {
            Some(f) => all.iter().enumerate().filter(|(_, r)| f.matches(&r.row)).map(|(i, _)| i).collect(),
            None => (0..all.len()).collect(),
        };
        let row = |i: &usize| all.get(*i);
        let key = |r: Option<&QpRow>| -> f64 {
            let Some(r) = r else { return 0.0 };
            match self.sort.0 {
                Column::Health | Column::Address => 0.0,
                Column::Packets => r.row.pkts,
                Column::Gbps => r.gbps_mean,
                Column::Gaps => r.row.gaps,
                Column::Retx => r.row.retx,
                Column::Naks => r.row.naks,
                Column::Rnr => r.row.rnr,
                Column::Ce => r.row.ce,
                Column::Cnps => r.row.cnps,
            }
        };
        // Stable sorts: rows that tie keep the report's order (worst first).
        match self.sort.0 {
            Column::Health => order.sort_by(|a, b| match (row(a), row(b)) {
                (Some(a), Some(b)) => health_rank(a.row.health)
                    .cmp(&health_rank(b.row.health))
                    .then(b.row.pkts.total_cmp(&a.row.pkts)),
                _ => std::cmp::Ordering::Equal,
            }),
            Column::Address => order.sort_by(|a, b| match (row(a), row(b)) {
                (Some(a), Some(b)) => a.row.ips.cmp(&b.row.ips),
                _ => std::cmp::Ordering::Equal,
            }),
            _ => order.sort_by(|a, b| key(row(b)).total_cmp(&key(row(a)))),
        }
        if self.sort.1 {
            order.reverse();
        }
        Rows { all, order }
    }

    /// Rows on the current screen (for moving the selection).
    pub fn row_count(&self) -> usize {
        let Some(s) = &self.shown else { return 0 };
        match self.screen {
            Screen::Qps if self.detail.is_some() => 0,
            Screen::Qps => self.rows().len(),
            Screen::Packets => self.packet_rows(s).len(),
            Screen::Pause => s.report.pfc.len(),
            Screen::Audit => s.report.audit.violations.len(),
            Screen::Findings => s.report.findings.len(),
            Screen::Congestion => self.congestion_rows().len(),
            Screen::Fabric => crate::fabric::rows(&s.report, self.point).len(),
        }
    }

    /// The selected row of the screen shown.
    pub fn selected_row(&self) -> usize {
        self.selected.get(self.screen.index()).copied().unwrap_or(0)
    }

    /// The Congestion screen's QPs at the point shown: the most marked first (see
    /// [`rank_qps`]), ranked once per snapshot and point.
    pub fn congestion_rows(&self) -> Rc<QpRanking> {
        let key = (self.generation, self.point);
        if let Some((k, rows)) = &*self.congestion_cache.borrow() {
            if *k == key {
                return Rc::clone(rows);
            }
        }
        let rows = Rc::new(match &self.shown {
            Some(s) => {
                let point = s.report.timeline.points.get(self.point).map(|p| p.point);
                rank_qps(&s.report, point, MAX_QP_ROWS)
            }
            None => QpRanking::default(),
        });
        *self.congestion_cache.borrow_mut() = Some((key, Rc::clone(&rows)));
        rows
    }

    /// Frames on the Packets screen (oldest first), narrowed to a QP when asked.
    pub fn packet_rows<'a>(&self, s: &'a Snapshot) -> Vec<&'a crate::FrameLine> {
        let start = s.report.summary.start_ns.unwrap_or(0);
        // The packet filter (`/` on this screen) reads each kept frame's bytes, decoded again
        // as the worker decoded them.
        let kept = |f: &crate::FrameLine| {
            self.packet_filter.as_ref().is_none_or(|pf| {
                let p =
                    rocescope_decoder::decode(rocescope_decoder::LinkType(f.link_type), &f.bytes, &s.decode);
                pf.matches_at(
                    &p,
                    u64::from(f.wire_len),
                    FramePlace { number: f.number, rel_ns: f.ts_ns - start },
                )
            })
        };
        match &self.packet_flows {
            Some(flows) => {
                s.frames.iter().filter(|f| f.flow.is_some_and(|x| flows.contains(&x)) && kept(f)).collect()
            }
            None => s.frames.iter().filter(|f| kept(f)).collect(),
        }
    }

    fn sel(&mut self) -> &mut usize {
        let i = self.screen.index();
        let n = self.selected.len();
        &mut self.selected[i.min(n - 1)]
    }

    /// Apply an action.
    pub fn act(&mut self, a: Action) {
        self.notice = None;
        if self.help {
            // Any key closes the key list; `q`, `?` and `Esc` only close it (`q` does not
            // quit from it: issue 41). Ctrl-C still quits (term.rs).
            self.help = false;
            if matches!(a, Action::Help | Action::Back | Action::Quit) {
                return;
            }
        }
        if self.updating
            && !matches!(a, Action::Quit | Action::Help | Action::Back | Action::Clear)
            && !matches!(a, Action::NextScreen | Action::PrevScreen | Action::Screen(_))
        {
            // The rows are being rebuilt: a move or a sort now would act on an empty table
            // and lose the selection.
            return;
        }
        if !self.updating {
            self.clamp_selection();
        }
        let count = self.row_count();
        match a {
            Action::Quit => self.quit = true,
            Action::Help => self.help = true,
            Action::ScrollRight | Action::ScrollLeft if self.screen != Screen::Packets => {
                self.notice = Some("Right and Left scroll the Packets screen's lines".into());
            }
            Action::ScrollRight => {
                self.packet_hscroll = (self.packet_hscroll + HSCROLL_STEP).min(HSCROLL_MAX)
            }
            Action::ScrollLeft => self.packet_hscroll = self.packet_hscroll.saturating_sub(HSCROLL_STEP),
            Action::NextScreen | Action::PrevScreen => {
                let i = self.screen.index();
                let n = Screen::ALL.len();
                let j = if a == Action::NextScreen { (i + 1) % n } else { (i + n - 1) % n };
                self.go(Screen::ALL[j]);
            }
            Action::Screen(n) => {
                if let Some(s) = Screen::ALL.get(usize::from(n).saturating_sub(1)) {
                    self.go(*s);
                }
            }
            Action::Up => *self.sel() = self.sel().saturating_sub(1),
            Action::Down => {
                let s = self.sel();
                *s = (*s + 1).min(count.saturating_sub(1));
            }
            Action::PageUp => {
                let p = self.page.max(1);
                let s = self.sel();
                *s = s.saturating_sub(p);
            }
            Action::PageDown => {
                let p = self.page.max(1);
                let s = self.sel();
                *s = (*s + p).min(count.saturating_sub(1));
            }
            Action::Top => *self.sel() = 0,
            Action::Bottom => *self.sel() = count.saturating_sub(1),
            Action::Enter => self.enter(),
            Action::Back => {
                if self.packet_open.is_some() {
                    self.packet_open = None;
                } else if self.detail.is_some() {
                    self.detail = None;
                    // Closed while updating: not reopened by the next picture either.
                    self.anchor = None;
                } else if self.screen == Screen::Packets && self.packet_flows.is_some() {
                    self.packet_flows = None;
                    self.selected[Screen::Packets.index()] = 0;
                }
            }
            Action::SortNext => {
                let i = Column::ALL.iter().position(|c| *c == self.sort.0).unwrap_or(0);
                self.sort = (Column::ALL[(i + 1) % Column::ALL.len()], false);
                self.selected[0] = 0;
            }
            Action::SortReverse => self.sort.1 = !self.sort.1,
            Action::Freeze => {
                self.frozen = !self.frozen;
                if !self.frozen {
                    if let Some(p) = self.pending.take() {
                        self.show(p);
                    }
                }
            }
            Action::Filter => {
                self.editing_filter = true;
                // On the Packets screen the line edits the packet filter (decode's -Y): its
                // text is in `filter_text` while the line is open.
                self.editing_packets = self.screen == Screen::Packets;
                if self.editing_packets {
                    std::mem::swap(&mut self.filter_text, &mut self.packet_filter_text);
                    self.packet_filter_before = Some(self.packet_filter.clone());
                }
                self.filter_cursor = self.filter_text.chars().count();
                self.filter_before = Some((self.filter_text.clone(), self.filter.clone()));
            }
            Action::Clear if !self.shown.as_ref().is_some_and(|s| s.live) => {
                // A file's analysis is not thrown away: there is no getting it back but
                // reading the file again.
                self.notice = Some(CLEAR_ON_A_FILE.into());
            }
            Action::Clear => {
                // The analysis restarts: flow and frame indices will mean other things.
                self.clear_requested = true;
                self.detail = None;
                self.packet_flows = None;
                self.packet_open = None;
                self.selected = [0; 7];
                self.point = 0;
            }
            Action::PrevPoint | Action::NextPoint
                if matches!(self.screen, Screen::Congestion | Screen::Fabric) =>
            {
                let n = self.shown.as_ref().map_or(0, |s| s.report.timeline.points.len()).max(1);
                self.point =
                    if a == Action::NextPoint { (self.point + 1) % n } else { (self.point + n - 1) % n };
                self.selected[Screen::Congestion.index()] = 0;
                self.selected[Screen::Fabric.index()] = 0;
            }
            Action::PrevPoint | Action::NextPoint => {}
            Action::ToggleFlows => {
                self.by_flow = !self.by_flow;
                self.selected[0] = 0;
            }
        }
    }

    fn go(&mut self, s: Screen) {
        self.screen = s;
        self.detail = None;
        self.anchor = None;
        self.packet_open = None;
    }

    fn enter(&mut self) {
        let Some(s) = &self.shown else { return };
        match self.screen {
            Screen::Qps if self.detail.is_none() => {
                let rows = self.rows();
                if let Some(r) = rows.get(self.selected[0]) {
                    self.detail = Some(r.conn);
                }
            }
            Screen::Qps => {
                // From a QP detail: its packets.
                let flows = self.detail.and_then(|c| s.report.connections.get(c)).map(|c| c.flows.to_vec());
                self.packet_flows = flows;
                self.selected[Screen::Packets.index()] = usize::MAX;
                self.screen = Screen::Packets;
                self.detail = None;
                let n = self.row_count();
                self.selected[Screen::Packets.index()] = n.saturating_sub(1);
            }
            Screen::Packets => {
                let rows = self.packet_rows(s);
                self.packet_open = rows.get(self.selected[1]).map(|f| f.number);
            }
            Screen::Findings => {
                let Some(f) = s.report.findings.get(self.selected[4]) else { return };
                if let Some(flow) = f.flow {
                    let conn = s.report.connections.iter().position(|c| c.flows.contains(&flow));
                    self.screen = Screen::Qps;
                    self.detail = conn;
                } else if f.src_mac.is_some() {
                    let mac = f.src_mac.clone();
                    let prio = f.priority;
                    let idx = s.report.pfc.iter().position(|p| {
                        Some(&p.src_mac) == mac.as_ref() && prio.is_none_or(|q| q == p.priority)
                    });
                    self.screen = Screen::Pause;
                    self.selected[2] = idx.unwrap_or(0);
                } else if let Some(e) = f.evidence.first() {
                    self.screen = Screen::Packets;
                    self.packet_flows = None;
                    let idx = s.frames.iter().position(|x| x.number == e.frame);
                    if let Some(i) = idx {
                        self.selected[1] = i;
                        self.packet_open = Some(e.frame);
                    }
                }
            }
            Screen::Congestion => {
                // A QP row: its connection's detail, on the QPs screen.
                let rows = self.congestion_rows();
                let Some(flow) = rows.flows.get(self.selected[Screen::Congestion.index()]).copied() else {
                    return;
                };
                let conn = s.report.connections.iter().position(|c| c.flows.contains(&flow));
                if conn.is_some() {
                    self.screen = Screen::Qps;
                    self.detail = conn;
                }
            }
            Screen::Fabric => {
                // A host's row: the connection of its QP that ended last most often.
                let rows = crate::fabric::rows(&s.report, self.point);
                let Some(flow) = rows.get(self.selected[Screen::Fabric.index()]).copied().flatten() else {
                    return;
                };
                let conn = s.report.connections.iter().position(|c| c.flows.contains(&flow));
                if conn.is_some() {
                    self.screen = Screen::Qps;
                    self.detail = conn;
                }
            }
            Screen::Pause | Screen::Audit => {}
        }
    }

    /// A key while editing the filter line: typing and shell-style line editing at the
    /// cursor, Enter to apply (refused while the text does not parse), Esc to cancel.
    pub fn filter_edit(&mut self, e: LineEdit) {
        self.filter_edits([e]);
    }

    /// Keys typed into the filter line together (what arrived while the screen was drawn: a
    /// paste comes as thousands of keys at once), the line parsed once after them rather than
    /// after each (a parse per key of a 12,000-character paste froze the screen). Enter parses
    /// what came before it first, to refuse a filter that does not parse. Keys after an Enter
    /// or Esc that ended the editing are not filter keys: they are left alone.
    pub fn filter_edits(&mut self, edits: impl IntoIterator<Item = LineEdit>) {
        let (mut changed, mut full) = (false, false);
        for e in edits {
            if !self.editing_filter {
                break;
            }
            match e {
                LineEdit::Cancel => {
                    // The filter shown while typing goes back to the one before.
                    if let Some((text, filter)) = self.filter_before.take() {
                        self.filter_text = text;
                        self.filter = filter;
                    }
                    if let Some(p) = self.packet_filter_before.take() {
                        self.packet_filter = p;
                    }
                    self.filter_error = None;
                    self.end_filter_edit();
                    return;
                }
                LineEdit::Apply => {
                    if changed {
                        self.parse_filter();
                        changed = false;
                    }
                    // An invalid filter is not applied: keep editing, its error stays on screen.
                    if self.filter_error.is_none() {
                        self.filter_before = None;
                        self.packet_filter_before = None;
                        if self.editing_packets {
                            // The newest matching frame, as the list opens.
                            self.selected[Screen::Packets.index()] = usize::MAX;
                        } else {
                            self.selected[0] = 0;
                        }
                        self.end_filter_edit();
                    }
                }
                LineEdit::Insert(c)
                    if !c.is_control() && self.filter_text.chars().count() >= MAX_FILTER_CHARS =>
                {
                    full = true;
                }
                e => changed |= self.edit_filter_text(e),
            }
        }
        if changed {
            self.parse_filter();
        }
        if full {
            // A longer paste stops at the limit, and says so.
            self.filter_error = Some(format!("a filter holds at most {MAX_FILTER_CHARS} characters"));
        }
    }

    /// Times the filter line has been parsed: once per batch of keys that changed it
    /// ([`App::filter_edits`]), each parse linear in its length.
    pub fn filter_parses(&self) -> u64 {
        self.filter_parses
    }

    /// The filter line closes: a packet filter's text goes back to its place.
    fn end_filter_edit(&mut self) {
        self.editing_filter = false;
        if self.editing_packets {
            std::mem::swap(&mut self.filter_text, &mut self.packet_filter_text);
            self.editing_packets = false;
            let n = self.row_count();
            let sel = self.sel();
            *sel = (*sel).min(n.saturating_sub(1));
        }
    }

    fn parse_filter(&mut self) {
        self.filter_parses += 1;
        if self.editing_packets {
            match PacketFilter::parse(&self.filter_text) {
                Ok(f) => {
                    // Opcode names read as the worker reads opcodes (`--no-dc`).
                    let opcode = self.shown.as_ref().map(|s| s.decode.opcode).unwrap_or_default();
                    self.packet_filter = f.map(|f| f.with_opcode_options(opcode));
                    self.filter_error = None;
                }
                Err(e) => self.filter_error = Some(e),
            }
            return;
        }
        match Filter::parse(&self.filter_text) {
            Ok(f) => {
                self.filter = f;
                self.filter_error = None;
            }
            Err(e) => self.filter_error = Some(e),
        }
    }

    /// One key's change to the filter text and cursor; whether the text changed.
    fn edit_filter_text(&mut self, e: LineEdit) -> bool {
        let len = self.filter_text.chars().count();
        let cur = self.filter_cursor.min(len);
        // Byte offset of the `i`th character.
        let at = |s: &str, i: usize| s.char_indices().nth(i).map_or(s.len(), |(b, _)| b);
        match e {
            LineEdit::Left => self.filter_cursor = cur.saturating_sub(1),
            LineEdit::Right => self.filter_cursor = (cur + 1).min(len),
            LineEdit::Home => self.filter_cursor = 0,
            LineEdit::End => self.filter_cursor = len,
            LineEdit::Insert(c) if !c.is_control() => {
                let b = at(&self.filter_text, cur);
                self.filter_text.insert(b, c);
                self.filter_cursor = cur + 1;
                return true;
            }
            LineEdit::Backspace if cur > 0 => {
                let b = at(&self.filter_text, cur - 1);
                self.filter_text.remove(b);
                self.filter_cursor = cur - 1;
                return true;
            }
            LineEdit::Delete if cur < len => {
                let b = at(&self.filter_text, cur);
                self.filter_text.remove(b);
                return true;
            }
            LineEdit::DeleteWord => {
                // As a shell's Ctrl-W: the spaces before the cursor, then the word before them.
                let chars: Vec<char> = self.filter_text.chars().take(cur).collect();
                let mut start = cur;
                while start > 0 && chars[start - 1].is_whitespace() {
                    start -= 1;
                }
                while start > 0 && !chars[start - 1].is_whitespace() {
                    start -= 1;
                }
                let (a, b) = (at(&self.filter_text, start), at(&self.filter_text, cur));
                self.filter_text.replace_range(a..b, "");
                self.filter_cursor = start;
                return a != b;
            }
            LineEdit::DeleteToStart => {
                let b = at(&self.filter_text, cur);
                self.filter_text.replace_range(..b, "");
                self.filter_cursor = 0;
                return b > 0;
            }
            LineEdit::DeleteToEnd => {
                let b = at(&self.filter_text, cur);
                self.filter_text.truncate(b);
                return cur < len;
            }
            LineEdit::Insert(_)
            | LineEdit::Backspace
            | LineEdit::Delete
            | LineEdit::Apply
            | LineEdit::Cancel => {}
        }
        false
    }
}
