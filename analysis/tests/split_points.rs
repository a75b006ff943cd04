//! SplitRichTest split points: their ranking on small methods, and that every point (and every
//! `body_start`) is a place where the oracle can insert a statement and still have valid Rust.

use analysis::{analyze_source, Model};

/// Renders the best `n` split points as `method line: numSV N [condSyn] [gap]`.
fn top(model: &Model, n: usize) -> String {
    let mut out = String::new();
    for ty in &model.types {
        for p in ty.split_points.iter().take(n) {
            let cond = if p.cond_syn { " condSyn" } else { "" };
            let gap = if p.description.contains("no lock held") {
                " gap"
            } else {
                ""
            };
            out.push_str(&format!(
                "{} {}: numSV {}{cond}{gap}\n",
                p.method, p.at.line, p.num_sv
            ));
        }
    }
    out
}

fn check(source: &str, n: usize, expect: &str) {
    let model = analyze_source("points", "2021", source);
    let want: String = expect
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(top(&model, n), want, "\n{}", analysis::summary(&model));
    assert_insertable(source, &model);
}

/// Inserts a statement at each split point and a `let` at each body start, one at a time, and
/// checks that the result still parses.
fn assert_insertable(source: &str, model: &Model) {
    let mut spots = Vec::new();
    for ty in &model.types {
        spots.extend(
            ty.split_points
                .iter()
                .map(|p| (p.at.line, p.at.column, "::covcon_rt::schedule_point(7); ")),
        );
        spots.extend(
            ty.methods
                .iter()
                .filter_map(|m| m.body_start.as_ref())
                .map(|s| (s.line, s.column, "let __covcon_guard = 1; ")),
        );
    }
    for (line, column, text) in spots {
        let mut lines: Vec<String> = source.lines().map(String::from).collect();
        let l = &mut lines[line as usize - 1];
        let byte = l
            .char_indices()
            .nth(column as usize)
            .map(|(b, _)| b)
            .unwrap_or(l.len());
        l.insert_str(byte, text);
        let edited = lines.join("\n");
        assert!(
            syn::parse_file(&edited).is_ok(),
            "inserting at {line}:{column} breaks the source:\n{edited}"
        );
    }
}

const SYNC: &str =
    "use std::sync::{Mutex, Condvar};\nuse std::sync::atomic::{AtomicUsize, Ordering};\n";

#[test]
fn the_gap_between_two_critical_sections_ranks_first_without_conditional_synchronisation() {
    // Line 7 reads `items` under one lock, line 10 pushes under another.
    check(
        &format!(
            "{SYNC}pub struct Stock {{ items: Mutex<Vec<u32>> }}
impl Stock {{
    pub fn new() -> Self {{ todo!() }}
    pub fn restock(&self, x: u32) {{
        let empty = self.items.lock().unwrap().is_empty();
        let log = format!(\"restock {{x}}\");
        if empty {{
            self.items.lock().unwrap().push(x);
        }}
        drop(log);
    }}
}}"
        ),
        2,
        // Only the edge into the push has `items` on every path before and after it: on the
        // `else` path nothing follows, so the points before line 9 have numSV 0.
        "restock 10: numSV 1 gap
         restock 7: numSV 0",
    );
}

#[test]
fn after_a_while_wait_and_before_an_if_notify_rank_first() {
    check(
        &format!(
            "{SYNC}pub struct Gate {{ open: Mutex<bool>, cv: Condvar, passed: AtomicUsize }}
impl Gate {{
    pub fn new() -> Self {{ todo!() }}
    pub fn pass(&self) {{
        let mut open = self.open.lock().unwrap();
        while !*open {{
            open = self.cv.wait(open).unwrap();
        }}
        self.passed.fetch_add(1, Ordering::SeqCst);
    }}
    pub fn set(&self, v: bool) {{
        *self.open.lock().unwrap() = v;
        if v {{
            self.cv.notify_all();
        }}
    }}
}}"
        ),
        3,
        "pass 11: numSV 0 condSyn
         set 15: numSV 0 condSyn
         set 16: numSV 0 condSyn",
    );
}

#[test]
fn control_flow_through_match_loops_and_early_returns_gives_insertable_points() {
    check(
        &format!(
            "{SYNC}pub struct Tally {{ n: AtomicUsize, log: Mutex<Vec<usize>> }}
impl Tally {{
    pub fn new() -> Self {{ todo!() }}
    pub fn bump(&self, k: u8) -> usize {{
        let before = self.n.load(Ordering::SeqCst);
        match k {{
            0 => return before,
            1 => {{ self.n.store(before + 1, Ordering::SeqCst); }}
            _ => {{
                for _ in 0..k {{
                    self.log.lock().unwrap().push(before);
                }}
            }}
        }}
        loop {{
            if self.n.load(Ordering::SeqCst) > 0 {{ break; }}
        }}
        unsafe {{ std::ptr::read(&before) }}
    }}
}}"
        ),
        1,
        "bump 10: numSV 1 gap",
    );
}

/// Every split point and body start of every fixture crate can take an inserted statement.
#[test]
fn every_point_in_the_fixture_crates_is_insertable() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
    let mut files = Vec::new();
    collect_rs(&root, &mut files);
    for f in files {
        let text = std::fs::read_to_string(&f).expect("readable fixture");
        let model = analyze_source("fixture", "2021", &text);
        assert_insertable(&text, &model);
    }
}

fn collect_rs(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() && p.file_name().is_some_and(|n| n != "target") {
            collect_rs(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn a_gap_inside_a_private_helper_is_a_split_point_of_the_helper() {
    check(
        &format!(
            "{SYNC}pub struct Cache {{ slots: Mutex<Vec<u32>>, loads: AtomicUsize }}
impl Cache {{
    pub fn new() -> Self {{ todo!() }}
    pub fn refresh(&self, v: u32) {{
        self.load(v);
    }}
    fn load(&self, v: u32) {{
        self.slots.lock().unwrap().retain(|x| *x != v);
        self.loads.fetch_add(1, Ordering::SeqCst);
        self.slots.lock().unwrap().push(v);
    }}
}}"
        ),
        2,
        "load 11: numSV 1 gap
         load 12: numSV 1 gap",
    );
}

#[test]
fn a_const_fn_gets_neither_a_body_start_nor_split_points() {
    let model = analyze_source(
        "points",
        "2021",
        "use std::sync::atomic::{AtomicUsize, Ordering};
pub struct Ids { next: AtomicUsize, step: usize }
impl Ids {
    pub const fn new() -> Self { Ids { next: AtomicUsize::new(0), step: 1 } }
    pub const fn step(&self) -> usize {
        let s = self.step;
        s
    }
    pub fn next(&self) -> usize { self.next.fetch_add(1, Ordering::SeqCst) }
}",
    );
    let ty = &model.types[0];
    let step = ty
        .methods
        .iter()
        .find(|m| m.name == "step")
        .expect("step is a method");
    assert!(step.body_start.is_none());
    assert!(ty.split_points.iter().all(|p| p.method != "step"));
    assert!(ty
        .methods
        .iter()
        .find(|m| m.name == "next")
        .is_some_and(|m| m.body_start.is_some()));
}

/// Points that tie on everything but their column (two statements on one line) come in
/// column order, the same in every run: which of them are instrumented must not change
/// between runs.
#[test]
fn points_on_one_line_come_in_the_same_order_every_time() {
    let source = "use std::sync::atomic::{AtomicU64, Ordering};
        pub struct Two { a: AtomicU64, b: AtomicU64 }
        impl Two {
            pub fn new() -> Self { todo!() }
            pub fn both(&self) { self.a.store(1, Ordering::SeqCst); self.b.store(1, Ordering::SeqCst); self.a.store(2, Ordering::SeqCst); }
        }";
    let points = || -> Vec<(u32, u32, u32)> {
        analyze_source("points", "2021", source).types[0]
            .split_points
            .iter()
            .map(|p| (p.num_sv, p.at.line, p.at.column))
            .collect()
    };
    let first = points();
    let ties: Vec<&(u32, u32, u32)> = first.iter().filter(|p| p.1 == 5).collect();
    assert!(ties.len() >= 2, "{first:?}");
    for pair in ties.windows(2) {
        if pair[0].0 == pair[1].0 {
            assert!(pair[0].2 < pair[1].2, "{first:?}");
        }
    }
    for _ in 0..20 {
        assert_eq!(points(), first);
    }
}
