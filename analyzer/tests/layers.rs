//! The analyzer's top-level modules import one another without a circle (issue 39, "the
//! house"): data flows one way, from the per-frame engine through the capture-end analyses
//! to the report, and from the report to the analyses over reports. Read from the sources:
//! every `crate::` and `super::` path (and `use crate::{..}` group) of a module's files, with
//! comments, doc comments, strings and test-only items (`#[cfg(test)]`) left out. `lib.rs`,
//! which defines `Analyzer` and declares every module, is left out: its re-exports
//! (`crate::Report`) count as the module they come from.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The analyses over finished reports: nothing in the engine or the report builder may
/// import them (they sit beside the engine, not inside it).
const OVER_REPORTS: &[&str] = &["compare", "nccl", "nic_counters"];

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    PathSep,
    Open(char),
    Close(char),
    Punct(char),
}

/// `text` with comments, strings and character literals blanked (newlines kept, so line
/// numbers hold).
fn strip(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < c.len() {
        let at = |k: usize| c.get(k).copied().unwrap_or('\0');
        if at(i) == '/' && at(i + 1) == '/' {
            while i < c.len() && at(i) != '\n' {
                i += 1;
            }
        } else if at(i) == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if at(i) == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if at(i) == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, at(i));
                    i += 1;
                }
            }
        } else if at(i) == 'r'
            && (at(i + 1) == '"' || (at(i + 1) == '#' && matches!(at(i + 2), '"' | '#')))
            && !(i > 0 && (at(i - 1).is_alphanumeric() || at(i - 1) == '_'))
        {
            // A raw string: r"..", r#".."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            loop {
                if j >= c.len() {
                    break;
                }
                if at(j) == '"' && (1..=hashes).all(|h| at(j + h) == '#') {
                    j += 1 + hashes;
                    break;
                }
                blank(&mut out, at(j));
                j += 1;
            }
            i = j;
        } else if at(i) == '"' {
            i += 1;
            while i < c.len() && at(i) != '"' {
                if at(i) == '\\' {
                    i += 1;
                }
                blank(&mut out, at(i));
                i += 1;
            }
            i += 1;
        } else if at(i) == '\'' && (at(i + 1) == '\\' || at(i + 2) == '\'') {
            // A character literal ('x', '\n', '\u{..}'), not a lifetime.
            i += 1;
            while i < c.len() && at(i) != '\'' {
                if at(i) == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
        } else {
            out.push(at(i));
            i += 1;
        }
    }
    out
}

/// The tokens of stripped source, each with its line.
fn tokens(text: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch.is_alphabetic() || ch == '_' {
            let s = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push((Tok::Ident(c[s..i].iter().collect()), line));
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push((Tok::PathSep, line));
            i += 2;
        } else if matches!(ch, '{' | '(' | '[') {
            out.push((Tok::Open(ch), line));
            i += 1;
        } else if matches!(ch, '}' | ')' | ']') {
            out.push((Tok::Close(ch), line));
            i += 1;
        } else {
            out.push((Tok::Punct(ch), line));
            i += 1;
        }
    }
    out
}

fn ident(t: Option<&(Tok, usize)>) -> Option<&str> {
    match t {
        Some((Tok::Ident(s), _)) => Some(s),
        _ => None,
    }
}

/// What one file of a module refers to: `(the first segment of each path resolved from
/// the crate root, line)`, and the child modules it declares in files of their own.
#[derive(Debug, Default)]
struct FileRefs {
    refs: Vec<(String, usize)>,
    children: Vec<String>,
}

/// The index past the item starting at `i` (after its attributes): up to a `;` outside
/// brackets, or through its `{..}` block.
fn skip_item(t: &[(Tok, usize)], mut i: usize) -> usize {
    let mut depth = 0usize;
    while let Some((tok, _)) = t.get(i) {
        match tok {
            Tok::Open('{') if depth == 0 => {
                let mut braces = 0usize;
                while let Some((tok, _)) = t.get(i) {
                    match tok {
                        Tok::Open('{') => braces += 1,
                        Tok::Close('}') => {
                            braces -= 1;
                            if braces == 0 {
                                return i + 1;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                return i;
            }
            Tok::Open(_) => depth += 1,
            Tok::Close(_) => depth = depth.saturating_sub(1),
            Tok::Punct(';') if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    i
}

/// The references of a file that is module `path` (segments from the crate root).
fn file_refs(source: &str, path: &[String]) -> FileRefs {
    let t = tokens(&strip(source));
    let mut out = FileRefs::default();
    // The module path at each open brace: an inline `mod name {` adds a segment.
    let mut scope: Vec<Vec<String>> = vec![path.to_vec()];
    let mut pending_mod: Option<String> = None;
    let mut i = 0;
    while i < t.len() {
        let here = scope.last().cloned().unwrap_or_default();
        match &t[i].0 {
            Tok::Punct('#') if t.get(i + 1).map(|x| &x.0) == Some(&Tok::Open('[')) => {
                let end = (i + 2..t.len()).find(|&k| t[k].0 == Tok::Close(']')).unwrap_or(t.len());
                let attr: Vec<&str> = (i + 2..end).filter_map(|k| ident(t.get(k))).collect();
                i = end + 1;
                if attr == ["cfg", "test"] {
                    // Further attributes of the same item, then the item itself.
                    while t.get(i).map(|x| &x.0) == Some(&Tok::Punct('#')) {
                        i = (i..t.len()).find(|&k| t[k].0 == Tok::Close(']')).unwrap_or(t.len()) + 1;
                    }
                    i = skip_item(&t, i);
                }
                continue;
            }
            Tok::Ident(k) if k == "mod" => {
                if let Some(name) = ident(t.get(i + 1)) {
                    match t.get(i + 2).map(|x| &x.0) {
                        Some(Tok::Punct(';')) => out.children.push(name.to_string()),
                        Some(Tok::Open('{')) => pending_mod = Some(name.to_string()),
                        _ => {}
                    }
                }
            }
            Tok::Open('{') => {
                let mut inner = here.clone();
                if let Some(m) = pending_mod.take() {
                    inner.push(m);
                }
                scope.push(inner);
            }
            Tok::Close('}') => {
                scope.pop();
            }
            Tok::Ident(k)
                if (k == "crate" || k == "super") && t.get(i + 1).map(|x| &x.0) == Some(&Tok::PathSep) =>
            {
                let line = t[i].1;
                // The module the path starts from, resolved from the crate root.
                let mut base: Vec<String> = if k == "crate" { Vec::new() } else { here.clone() };
                if k == "super" {
                    base.pop();
                }
                let mut j = i + 2;
                while ident(t.get(j)) == Some("super") && t.get(j + 1).map(|x| &x.0) == Some(&Tok::PathSep) {
                    base.pop();
                    j += 2;
                }
                if let Some(first) = base.first() {
                    out.refs.push((first.clone(), line));
                } else if t.get(j).map(|x| &x.0) == Some(&Tok::Open('{')) {
                    // `use crate::{a::X, b, c::{..}}`: each item's first segment.
                    let mut depth = 0usize;
                    let mut at_item = true;
                    while let Some((tok, _)) = t.get(j) {
                        match tok {
                            Tok::Open(_) => {
                                depth += 1;
                                at_item = depth == 1;
                            }
                            Tok::Close(_) => {
                                depth -= 1;
                                if depth == 0 {
                                    j += 1; // past the group's `}`
                                    break;
                                }
                            }
                            Tok::Punct(',') if depth == 1 => at_item = true,
                            Tok::Ident(name) if at_item && depth == 1 => {
                                out.refs.push((name.clone(), line));
                                at_item = false;
                            }
                            _ => {}
                        }
                        j += 1;
                    }
                } else if let Some(name) = ident(t.get(j)) {
                    out.refs.push((name.to_string(), line));
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The file of module `path` (segments from the crate root) under `src`.
fn module_file(src: &Path, path: &[String]) -> Option<PathBuf> {
    let dir: PathBuf = path.iter().collect();
    [src.join(&dir).with_extension("rs"), src.join(&dir).join("mod.rs")].into_iter().find(|p| p.is_file())
}

/// The analyzer's top-level modules (those lib.rs declares, test-only ones left out) with
/// the files of each, and what lib.rs re-exports from each (`pub use report::Report`: a
/// path to `crate::Report` is one to `report`).
struct Crate {
    modules: BTreeMap<String, Vec<(PathBuf, Vec<String>)>>,
    reexports: BTreeMap<String, String>,
}

fn read_crate(src: &Path) -> Crate {
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let top = file_refs(&lib, &[]);
    let mut modules = BTreeMap::new();
    for m in &top.children {
        let mut files = Vec::new();
        let mut todo = vec![vec![m.clone()]];
        while let Some(path) = todo.pop() {
            let Some(f) = module_file(src, &path) else { panic!("no file for module {}", path.join("::")) };
            let text = std::fs::read_to_string(&f).expect("a module's file");
            for c in file_refs(&text, &path).children {
                let mut child = path.clone();
                child.push(c);
                todo.push(child);
            }
            files.push((f, path));
        }
        modules.insert(m.clone(), files);
    }
    // `pub use module::{A, B as C}` and `pub use module::Item;` at lib.rs's top.
    let t = tokens(&strip(&lib));
    let mut reexports = BTreeMap::new();
    for i in 0..t.len() {
        if ident(t.get(i)) != Some("use") || i > 0 && t[i - 1].0 == Tok::PathSep {
            continue;
        }
        let Some(m) = ident(t.get(i + 1)).filter(|m| modules.contains_key(*m)) else { continue };
        let end = (i..t.len()).find(|&k| t[k].0 == Tok::Punct(';')).unwrap_or(t.len());
        // The names it brings in: the last identifier before each `,`, `}` or `;`.
        let mut last = None;
        for (tok, _) in &t[i + 2..=end.min(t.len() - 1)] {
            match tok {
                Tok::Ident(s) => last = Some(s.clone()),
                Tok::Punct(',') | Tok::Punct(';') | Tok::Close('}') => {
                    if let Some(name) = last.take() {
                        reexports.insert(name, m.to_string());
                    }
                }
                _ => {}
            }
        }
    }
    Crate { modules, reexports }
}

/// Edges between top-level modules: `from -> to -> [(file, line)]`.
type Graph = BTreeMap<String, BTreeMap<String, Vec<String>>>;

fn graph(src: &Path) -> Graph {
    let c = read_crate(src);
    let mut g = Graph::new();
    for (m, files) in &c.modules {
        let edges = g.entry(m.clone()).or_default();
        for (f, path) in files {
            let text = std::fs::read_to_string(f).expect("a module's file");
            for (name, line) in file_refs(&text, path).refs {
                let to =
                    if c.modules.contains_key(&name) { Some(name) } else { c.reexports.get(&name).cloned() };
                if let Some(to) = to.filter(|to| to != m) {
                    let at = format!("{}:{line}", f.strip_prefix(src).unwrap_or(f).display());
                    edges.entry(to).or_default().push(at);
                }
            }
        }
    }
    g
}

/// The circles of `g`: its strongly connected components of more than one module (Tarjan).
fn circles(g: &Graph) -> Vec<BTreeSet<String>> {
    struct S<'g> {
        g: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on: BTreeSet<&'g str>,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'g>(s: &mut S<'g>, v: &'g str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.g.get(v).into_iter().flat_map(|e| e.keys()) {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                comp.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                s.out.push(comp);
            }
        }
    }
    let mut s = S {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

fn analyzer_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_module_circle() {
    let g = graph(&analyzer_src());
    // The reading works: the modules are there, and edges everyone knows of are seen.
    assert!(g.len() >= 30, "top-level modules found: {:?}", g.keys());
    for (from, to) in [("report", "flow"), ("fold", "incast"), ("compare", "report"), ("nccl", "report")] {
        assert!(
            g.get(from).is_some_and(|e| e.contains_key(to)),
            "{from} -> {to} not seen: {:?}",
            g.get(from)
        );
    }
    let found = circles(&g);
    let mut msg = String::new();
    for comp in &found {
        msg.push_str(&format!("circle: {comp:?}\n"));
        for a in comp {
            for (b, at) in g.get(a).into_iter().flat_map(|e| e.iter()).filter(|(b, _)| comp.contains(*b)) {
                msg.push_str(&format!(
                    "  {a} -> {b} ({})\n",
                    at.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    assert!(found.is_empty(), "the analyzer's modules import one another in a circle:\n{msg}");
}

#[test]
fn analyses_over_reports_sit_beside_the_engine() {
    let g = graph(&analyzer_src());
    let mut wrong = Vec::new();
    for (from, edges) in g.iter().filter(|(m, _)| !OVER_REPORTS.contains(&m.as_str())) {
        for (to, at) in edges.iter().filter(|(to, _)| OVER_REPORTS.contains(&to.as_str())) {
            wrong.push(format!("{from} -> {to} ({})", at.join(", ")));
        }
    }
    assert!(
        wrong.is_empty(),
        "the engine or the report builder imports an analysis over reports: {wrong:#?}"
    );
}

/// The reading itself: comments, doc comments, strings and test items are not imports; a
/// circle made on purpose is found.
#[test]
fn the_reading_skips_what_is_no_import() {
    let text = r##"
//! crate::docs
/// crate::doc_comment
use crate::{alpha::X, beta, gamma::{Y, Z}};
use super::delta; // crate::line_comment
/* crate::block /* nested crate::inner */ */
fn f<'a>(x: &'a str) -> char {
    let _ = "crate::in_a_string \" crate::after_escape";
    let _ = r#"crate::raw"#;
    let _ = crate::epsilon::g();
    '"'
}
#[cfg(test)]
mod tests {
    use crate::zeta;
}
#[cfg(test)]
use crate::eta;
mod inline {
    use super::super::theta;
    use super::iota;
}
mod child;
"##;
    let r = file_refs(text, &["me".to_string()]);
    let names: BTreeSet<&str> = r.refs.iter().map(|(n, _)| n.as_str()).collect();
    // `super::delta` and `super::iota` stay inside `me` (the file's parent is the root:
    // `delta` is the root's; `iota` is `me`'s own).
    let want: BTreeSet<&str> =
        ["alpha", "beta", "gamma", "delta", "epsilon", "theta", "me"].into_iter().collect();
    assert_eq!(names, want, "{r:?}");
    assert_eq!(r.children, ["child"]);

    let mut g = Graph::new();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        g.entry(a.into()).or_default().entry(b.into()).or_default().push(String::new());
        g.entry(b.into()).or_default();
    }
    let found = circles(&g);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0], ["a", "b", "c"].into_iter().map(String::from).collect());
}
