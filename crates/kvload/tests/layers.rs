//! The structure of kvload's source as a test (issue 36): its modules' imports point down the
//! layers that docs/ARCHITECTURE.md declares in one table (the "kvload layers" table, read here
//! so the document and the check cannot drift), no modules import each other in a circle, and
//! no function in kvload or kvflame is over 60 lines (from its `fn` line to its closing brace).
//!
//! Imports are read from the source text: `use` trees and inline paths that start with
//! `crate::`, `super::`, `self::` or a module the file declares (`mod x;` then `x::…`); each
//! names the module file whose path is its longest prefix. Test modules count too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Longest function allowed, in lines (its `fn` line to its closing brace, inclusive).
const MAX_FN_LINES: usize = 60;
/// The line above the table in docs/ARCHITECTURE.md.
const TABLE_MARKER: &str = "<!-- kvload layers: crates/kvload/tests/layers.rs reads this table -->";

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

// ---------- tokens ----------

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    /// `::`
    Sep,
    Punct(char),
}

/// A token and the line (1-based) it starts on.
type Token = (Tok, usize);

/// Tokens of Rust source without comments, string, character or byte literals and lifetimes.
fn tokens(src: &str) -> Vec<Token> {
    let c: Vec<char> = src.chars().collect();
    let (mut out, mut i, mut line) = (Vec::new(), 0, 1);
    while i < c.len() {
        let start_line = line;
        let next = c.get(i + 1).copied();
        if c[i] == '\n' {
            line += 1;
            i += 1;
        } else if c[i].is_whitespace() {
            i += 1;
        } else if c[i] == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && next == Some('*') {
            i = skip_block_comment(&c, i, &mut line);
        } else if c[i] == '"' {
            i = skip_string(&c, i + 1, &mut line);
        } else if c[i] == '\'' {
            i = skip_quote(&c, i);
        } else if let Some(end) = raw_string_end(&c, i, &mut line) {
            i = end;
        } else if c[i].is_alphanumeric() || c[i] == '_' {
            let s = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push((Tok::Ident(c[s..i].iter().collect()), start_line));
        } else if c[i] == ':' && next == Some(':') {
            out.push((Tok::Sep, start_line));
            i += 2;
        } else {
            out.push((Tok::Punct(c[i]), start_line));
            i += 1;
        }
    }
    out
}

fn skip_block_comment(c: &[char], mut i: usize, line: &mut usize) -> usize {
    let mut depth = 0;
    while i < c.len() {
        if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            depth += 1;
            i += 2;
        } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            *line += usize::from(c[i] == '\n');
            i += 1;
        }
    }
    i
}

/// Past the closing quote of a string whose body starts at `i`.
fn skip_string(c: &[char], mut i: usize, line: &mut usize) -> usize {
    while i < c.len() && c[i] != '"' {
        *line += usize::from(c[i] == '\n');
        i += if c[i] == '\\' { 2 } else { 1 };
    }
    i + 1
}

/// Past a character literal (`'x'`, `'\n'`), or past the quote of a lifetime (`'a`).
fn skip_quote(c: &[char], i: usize) -> usize {
    if c.get(i + 1) == Some(&'\\') {
        let mut j = i + 3;
        while j < c.len() && c[j] != '\'' {
            j += 1;
        }
        return j + 1;
    }
    if c.get(i + 2) == Some(&'\'') {
        return i + 3;
    }
    i + 1
}

/// The end of a raw string (`r"…"`, `r#"…"#`, `br#"…"#`) starting at `i`, if one does.
fn raw_string_end(c: &[char], i: usize, line: &mut usize) -> Option<usize> {
    if i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_') {
        return None;
    }
    let r = if c[i] == 'b' { i + 1 } else { i };
    if c.get(r) != Some(&'r') {
        return None;
    }
    let hashes = c[r + 1..].iter().take_while(|&&x| x == '#').count();
    if c.get(r + 1 + hashes) != Some(&'"') {
        return None;
    }
    let close: Vec<char> = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
    let mut j = r + 2 + hashes;
    while j < c.len() && !c[j..].starts_with(&close) {
        *line += usize::from(c[j] == '\n');
        j += 1;
    }
    Some(j + close.len())
}

fn is_ident(t: Option<&Token>, name: &str) -> bool {
    matches!(t, Some((Tok::Ident(s), _)) if s == name)
}

// ---------- functions ----------

/// A function: its file, its name (with its impl's type), first line and length in lines.
#[derive(Debug)]
struct Function {
    file: String,
    name: String,
    line: usize,
    lines: usize,
}

/// The index of the `}` that closes the `{` at `open`.
fn closing_brace(t: &[Token], open: usize) -> usize {
    let mut depth = 0;
    for (k, (tok, _)) in t.iter().enumerate().skip(open) {
        match tok {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                depth -= 1;
                if depth == 0 {
                    return k;
                }
            }
            _ => {}
        }
    }
    t.len() - 1
}

/// The `{` that opens the body of the item whose header starts at `from` (None: a `;` ends it).
fn body_start(t: &[Token], from: usize) -> Option<usize> {
    let mut parens = 0i32;
    for (k, (tok, _)) in t.iter().enumerate().skip(from) {
        match tok {
            Tok::Punct('(' | '[') => parens += 1,
            Tok::Punct(')' | ']') => parens -= 1,
            Tok::Punct('{') if parens == 0 => return Some(k),
            Tok::Punct(';') if parens == 0 => return None,
            _ => {}
        }
    }
    None
}

/// The type an `impl` header at `at` is for: after `for` if there is one, else the first name.
fn impl_type(t: &[Token], at: usize, open: usize) -> String {
    let header = &t[at + 1..open];
    let after_for = header.iter().position(|x| x.0 == Tok::Ident("for".into())).map_or(0, |p| p + 1);
    let mut angle = 0;
    for (tok, _) in &header[after_for..] {
        match tok {
            Tok::Punct('<') => angle += 1,
            Tok::Punct('>') => angle -= 1,
            Tok::Ident(s) if angle == 0 && s != "dyn" => return s.clone(),
            _ => {}
        }
    }
    String::new()
}

/// Every function with a body in `src` (nested ones and test functions too).
fn functions(file: &str, src: &str) -> Vec<Function> {
    let t = tokens(src);
    let mut impls: Vec<(usize, String)> = Vec::new();
    let mut out = Vec::new();
    for k in 0..t.len() {
        impls.retain(|(close, _)| *close > k);
        let item_start = k == 0 || matches!(&t[k - 1].0, Tok::Punct('}' | ';' | ']' | '{')) || is_ident(t.get(k - 1), "unsafe");
        if item_start && is_ident(t.get(k), "impl") {
            if let Some(open) = body_start(&t, k) {
                impls.push((closing_brace(&t, open), impl_type(&t, k, open)));
            }
        }
        let (true, Some((Tok::Ident(name), _))) = (is_ident(t.get(k), "fn"), t.get(k + 1)) else { continue };
        let Some(open) = body_start(&t, k + 2) else { continue };
        let close = closing_brace(&t, open);
        let owner = impls.last().map(|(_, ty)| format!("{ty}::")).unwrap_or_default();
        out.push(Function { file: file.into(), name: format!("{owner}{name}"), line: t[k].1, lines: t[close].1 - t[k].1 + 1 });
    }
    out
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).map(|r| r.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
    out
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()))
}

#[test]
fn no_function_is_over_60_lines() {
    let crates = crate_dir().join("..");
    let mut long = Vec::new();
    for dir in ["kvload/src", "kvflame/src"] {
        for p in rust_files(&crates.join(dir)) {
            let name = p.strip_prefix(&crates).unwrap_or(&p).display().to_string();
            long.extend(functions(&name, &read(&p)).into_iter().filter(|f| f.lines > MAX_FN_LINES));
        }
    }
    let lines: Vec<String> = long.iter().map(|f| format!("  {}:{} fn {} is {} lines", f.file, f.line, f.name, f.lines)).collect();
    assert!(long.is_empty(), "functions over {MAX_FN_LINES} lines (split them):\n{}", lines.join("\n"));
}

// ---------- modules and their imports ----------

/// A module path: `["engine", "worker"]`; the crate root (main.rs) is `[]`.
type ModPath = Vec<String>;

fn show(m: &[String]) -> String {
    if m.is_empty() { "main".into() } else { m.join("::") }
}

/// The module of a file under src/: `engine/mod.rs` → engine, `engine/stats.rs` → engine::stats.
fn module_of(rel: &Path) -> ModPath {
    let mut parts: ModPath = rel.with_extension("").iter().map(|s| s.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "main")) {
        parts.pop();
    }
    parts
}

/// The paths of a `use` tree starting at `t[*i]` (after `use`), with `prefix` before them.
fn use_tree(t: &[Token], i: &mut usize, prefix: ModPath, out: &mut Vec<ModPath>) {
    let mut path = prefix;
    while let Some((tok, _)) = t.get(*i) {
        *i += 1;
        match tok {
            Tok::Ident(s) if s == "as" => *i += 1,
            Tok::Ident(s) if s == "self" && !path.is_empty() => {}
            Tok::Ident(s) => path.push(s.clone()),
            Tok::Sep | Tok::Punct('*') => {}
            Tok::Punct('{') => {
                while !matches!(t.get(*i), None | Some((Tok::Punct('}'), _))) {
                    use_tree(t, i, path.clone(), out);
                    if matches!(t.get(*i), Some((Tok::Punct(','), _))) {
                        *i += 1;
                    }
                }
                *i += 1;
                return;
            }
            _ => {
                *i -= 1;
                break;
            }
        }
    }
    out.push(path);
}

/// Where a path written in `file` (module `here`, inside `inline` nested `mod x { … }` blocks)
/// points, as an absolute path; None for paths outside the crate (std, extern crates).
fn absolute(path: &[String], here: &[String], inline: usize, children: &BTreeSet<String>) -> Option<ModPath> {
    let first = path.first()?;
    let (mut base, rest) = match first.as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "self" => (here.to_vec(), &path[1..]),
        "super" => {
            let supers = path.iter().take_while(|s| *s == "super").count();
            let up = supers.saturating_sub(inline);
            (here[..here.len().saturating_sub(up)].to_vec(), &path[supers..])
        }
        s if children.contains(s) => (here.to_vec(), path),
        _ => return None,
    };
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The module names a file declares (`mod x;`, not inline ones).
fn declared_children(t: &[Token]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for k in 0..t.len().saturating_sub(2) {
        if let (true, Some((Tok::Ident(name), _)), Some((Tok::Punct(';'), _))) = (is_ident(t.get(k), "mod"), t.get(k + 1), t.get(k + 2)) {
            out.insert(name.clone());
        }
    }
    out
}

/// The paths a file names (use trees and inline paths), made absolute, with their lines.
fn imports(src: &str, here: &[String]) -> Vec<(ModPath, usize)> {
    let t = tokens(src);
    let children = declared_children(&t);
    let mut inline: Vec<usize> = Vec::new();
    let mut out = Vec::new();
    let mut k = 0;
    while k < t.len() {
        inline.retain(|close| *close > k);
        let after_sep = k > 0 && t[k - 1].0 == Tok::Sep;
        match &t[k].0 {
            Tok::Ident(s) if s == "mod" && matches!(t.get(k + 2), Some((Tok::Punct('{'), _))) => {
                inline.push(closing_brace(&t, k + 2));
            }
            Tok::Ident(s) if s == "use" => {
                let (mut i, mut paths) = (k + 1, Vec::new());
                use_tree(&t, &mut i, Vec::new(), &mut paths);
                out.extend(paths.into_iter().filter_map(|p| absolute(&p, here, inline.len(), &children)).map(|p| (p, t[k].1)));
                k = i;
                continue;
            }
            Tok::Ident(s) if !after_sep && t.get(k + 1).is_some_and(|n| n.0 == Tok::Sep) => {
                let mut path = vec![s.clone()];
                let mut j = k + 1;
                while let (Some((Tok::Sep, _)), Some((Tok::Ident(n), _))) = (t.get(j), t.get(j + 1)) {
                    path.push(n.clone());
                    j += 2;
                }
                if let Some(p) = absolute(&path, here, inline.len(), &children) {
                    out.push((p, t[k].1));
                }
                k = j;
                continue;
            }
            _ => {}
        }
        k += 1;
    }
    out
}

/// The longest module of `modules` that `path` starts with.
fn module_named(path: &[String], modules: &BTreeSet<ModPath>) -> ModPath {
    (0..=path.len()).rev().map(|n| path[..n].to_vec()).find(|p| modules.contains(p)).unwrap_or_default()
}

/// A module file: its path under src/, its source and its module path.
struct Module {
    file: String,
    src: String,
    path: ModPath,
}

fn modules() -> Vec<Module> {
    let src = crate_dir().join("src");
    rust_files(&src)
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(&src).unwrap_or(&p).to_path_buf();
            Module { file: format!("src/{}", rel.display()), src: read(&p), path: module_of(&rel) }
        })
        .collect()
}

/// An import of one module by another: (from, to, the file, its line, the path as written).
struct Edge {
    from: ModPath,
    to: ModPath,
    file: String,
    line: usize,
}

fn edges(mods: &[Module]) -> Vec<Edge> {
    let known: BTreeSet<ModPath> = mods.iter().map(|m| m.path.clone()).collect();
    let mut out = Vec::new();
    for m in mods {
        for (path, line) in imports(&m.src, &m.path) {
            let to = module_named(&path, &known);
            if to != m.path {
                out.push(Edge { from: m.path.clone(), to, file: m.file.clone(), line });
            }
        }
    }
    out
}

// ---------- the table ----------

/// The table's parts, bottom first: (layer number, layer name, module path of the part).
fn layer_table() -> Vec<(u32, String, ModPath)> {
    let doc_path = crate_dir().join("../../docs/ARCHITECTURE.md");
    let doc = read(&doc_path);
    let at = doc.find(TABLE_MARKER).unwrap_or_else(|| panic!("{} has no line {TABLE_MARKER:?}", doc_path.display()));
    let mut parts = Vec::new();
    for row in doc[at + TABLE_MARKER.len()..].lines().skip(1).take_while(|l| l.starts_with('|')) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (Some(Ok(n)), Some(name), Some(mods)) = (cells.get(1).map(|c| c.parse::<u32>()), cells.get(2), cells.get(3)) else { continue };
        for m in mods.split('`').skip(1).step_by(2) {
            let path = if m == "main" { Vec::new() } else { m.split("::").map(String::from).collect() };
            parts.push((n, name.to_string(), path));
        }
    }
    assert!(!parts.is_empty(), "the kvload layers table in {} has no rows", doc_path.display());
    parts
}

/// The part (the longest listed module path that is a prefix) of a module.
fn part_of<'a>(m: &[String], table: &'a [(u32, String, ModPath)]) -> Option<&'a (u32, String, ModPath)> {
    table.iter().filter(|(_, _, p)| m.starts_with(p) && (!p.is_empty() || m.is_empty())).max_by_key(|(_, _, p)| p.len())
}

#[test]
fn every_module_is_in_one_layer_of_the_table() {
    let table = layer_table();
    let mods = modules();
    let mut bad: Vec<String> = mods
        .iter()
        .filter(|m| part_of(&m.path, &table).is_none())
        .map(|m| format!("  {} (module {}) is in no layer of the table: add it to docs/ARCHITECTURE.md", m.file, show(&m.path)))
        .collect();
    for (_, name, p) in &table {
        if !mods.iter().any(|m| part_of(&m.path, &table).is_some_and(|(_, _, q)| q == p)) {
            bad.push(format!("  the table lists `{}` ({name}) but src/ has no such module", show(p)));
        }
    }
    assert!(bad.is_empty(), "docs/ARCHITECTURE.md's kvload layers and src/ differ:\n{}", bad.join("\n"));
}

#[test]
fn imports_point_down_the_layers() {
    let table = layer_table();
    let mut bad = Vec::new();
    for e in edges(&modules()) {
        let (Some(a), Some(b)) = (part_of(&e.from, &table), part_of(&e.to, &table)) else { continue };
        let what = if a.0 < b.0 {
            "imports a higher layer"
        } else if a.0 == b.0 && a.2 != b.2 {
            "imports another part of its layer"
        } else {
            continue;
        };
        bad.push(format!("  {}:{}: {} ({} {}) {what}: {} ({} {})", e.file, e.line, show(&e.from), a.0, a.1, show(&e.to), b.0, b.1));
    }
    assert!(bad.is_empty(), "imports against the layers of docs/ARCHITECTURE.md:\n{}", bad.join("\n"));
}

/// The strongly connected components of more than one module (Tarjan's algorithm).
fn circles(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<Vec<ModPath>> {
    struct T<'g> {
        g: &'g BTreeMap<ModPath, BTreeSet<ModPath>>,
        index: BTreeMap<&'g ModPath, (usize, usize)>,
        stack: Vec<&'g ModPath>,
        out: Vec<Vec<ModPath>>,
    }
    fn visit<'g>(t: &mut T<'g>, v: &'g ModPath) {
        let n = t.index.len();
        t.index.insert(v, (n, n));
        t.stack.push(v);
        for w in t.g.get(v).into_iter().flatten() {
            match t.index.get(w).copied() {
                None => {
                    visit(t, w);
                    let low = t.index[w].1.min(t.index[v].1);
                    t.index.entry(v).and_modify(|e| e.1 = low);
                }
                Some((wi, _)) if t.stack.contains(&w) => {
                    let low = wi.min(t.index[v].1);
                    t.index.entry(v).and_modify(|e| e.1 = low);
                }
                _ => {}
            }
        }
        if t.index[v].0 == t.index[v].1 {
            let at = t.stack.iter().rposition(|x| *x == v).unwrap_or(0);
            let scc: Vec<ModPath> = t.stack.drain(at..).cloned().collect();
            if scc.len() > 1 {
                t.out.push(scc);
            }
        }
    }
    let mut t = T { g: graph, index: BTreeMap::new(), stack: Vec::new(), out: Vec::new() };
    for v in graph.keys() {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// One way round a circle: from its first module along imports inside it back to the start.
fn one_loop(scc: &[ModPath], graph: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<ModPath> {
    let inside: BTreeSet<&ModPath> = scc.iter().collect();
    let mut path = vec![scc[0].clone()];
    while path.len() <= scc.len() {
        let last = path.last().cloned().unwrap_or_default();
        let nexts: Vec<&ModPath> = graph.get(&last).into_iter().flatten().filter(|n| inside.contains(n)).collect();
        let Some(next) = nexts.iter().find(|n| !path.contains(n)).or(nexts.first()) else { break };
        path.push((*next).clone());
        if **next == scc[0] {
            break;
        }
    }
    path
}

#[test]
fn no_modules_import_each_other_in_a_circle() {
    let mut graph: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
    let mut seen: BTreeMap<(ModPath, ModPath), String> = BTreeMap::new();
    for e in edges(&modules()) {
        seen.entry((e.from.clone(), e.to.clone())).or_insert(format!("{}:{}", e.file, e.line));
        graph.entry(e.from).or_default().insert(e.to);
    }
    let found: Vec<String> = circles(&graph)
        .iter()
        .map(|scc| {
            let lp = one_loop(scc, &graph);
            let hops: Vec<String> = lp.windows(2).map(|w| format!("{} -> {} ({})", show(&w[0]), show(&w[1]), seen[&(w[0].clone(), w[1].clone())])).collect();
            format!("  {} modules import each other; one way round: {}", scc.len(), hops.join(", "))
        })
        .collect();
    assert!(found.is_empty(), "modules importing each other in a circle:\n{}", found.join("\n"));
}

#[test]
fn the_reader_sees_what_the_compiler_sees() {
    let src = "use crate::a::{b::{self, C}, d as e};\nmod x;\nfn f() { let s = \"crate::z::q\"; // crate::y\n super::g::h(); x::k(); }\nmod tests { use super::*; }";
    let here: ModPath = vec!["p".into(), "q".into()];
    let got: Vec<String> = imports(src, &here).into_iter().map(|(p, _)| p.join("::")).collect();
    assert_eq!(got, ["a::b", "a::b::C", "a::d", "p::g::h", "p::q::x::k", "p::q"]);
    let f = functions("t.rs", "impl<T> Tr for S<T> {\n fn a(&self) -> fn(u8) {\n  '{';\n  r#\"}\"#;\n }\n}\nfn b();\n");
    assert_eq!(f.iter().map(|f| (f.name.as_str(), f.line, f.lines)).collect::<Vec<_>>(), [("S::a", 2, 4)]);
}
