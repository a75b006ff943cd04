//! SplitRichTest split points (splitrichtest.txt III.B.2–3, Algorithm 1), adapted: a
//! statement-level control-flow graph per method (petgraph); for each edge the shared fields
//! accessed on *all* paths before it and on all paths after it (numSV), and whether it follows
//! a `while … wait` or precedes an `if … notify` (condSyn). Points are ranked by condSyn, then
//! numSV, then whether no lock is held there (the check-then-act gap between two critical
//! sections, where a schedule point changes what the other thread can see).
//!
//! Every point is the start of a statement inside a block, so the oracle can insert
//! `covcon_rt::schedule_point(N);` there as a statement.

use crate::access::MethodSummary;
use crate::discover::FoundType;
use crate::model::*;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::Direction;
use std::collections::{BTreeSet, HashMap, HashSet};
use syn::spanned::Spanned;

#[derive(Debug, Clone, Default)]
struct Node {
    /// Statement start (line, column); `None` for entry and exit.
    pos: Option<(u32, u32)>,
    /// A loop whose body waits on a condvar.
    wait_loop: bool,
    /// An `if` whose branches notify.
    notify_if: bool,
    /// The statement itself waits (`wait_while`) or notifies.
    waits: bool,
    notifies: bool,
    /// Loop headers: their body's nodes, to tell back edges and loop exits apart.
    body: Vec<NodeIndex>,
    label: String,
}

struct Cfg<'s> {
    g: DiGraph<Node, ()>,
    summary: &'s MethodSummary,
    exit: NodeIndex,
}

/// Ranked split points of every public method of the type, best first.
pub(crate) fn split_points(
    ty: &FoundType,
    summaries: &HashMap<String, MethodSummary>,
) -> Vec<SplitPoint> {
    let shared: HashSet<&str> = summaries
        .values()
        .flat_map(|s| s.accesses.iter())
        .filter(|a| a.kind.writes())
        .map(|a| a.field.as_str())
        .collect();
    let mut points: Vec<(SplitPoint, bool)> = Vec::new();
    for m in ty.model.methods.iter().filter(|m| m.supported()) {
        let Some(decl) = ty
            .fns
            .iter()
            .find(|f| f.name == m.name && f.ref_self && f.field.is_none())
        else {
            continue;
        };
        if decl.item.sig.constness.is_some() {
            continue; // no schedule point can go into a `const fn`
        }
        let Some(summary) = summaries.get(&m.name) else {
            continue;
        };
        points.extend(method_points(
            &m.name,
            decl.file,
            &decl.item.block,
            summary,
            &shared,
        ));
    }
    // Helpers the public methods call (private methods, methods of an `inner` field): the
    // check-then-act gap often sits there (SplitRichTest's "relevant methods").
    let supported: Vec<&MethodSummary> = ty
        .model
        .methods
        .iter()
        .filter(|m| m.supported())
        .filter_map(|m| summaries.get(&m.name))
        .collect();
    for f in ty
        .fns
        .iter()
        .filter(|f| f.ref_self && f.item.sig.constness.is_none())
    {
        let key = f.key();
        let public = f.field.is_none() && ty.model.methods.iter().any(|m| m.name == f.name);
        let Some(summary) = summaries.get(&key) else {
            continue;
        };
        let tag = format!("via {key}() at");
        let called = supported.iter().any(|s| {
            s.accesses
                .iter()
                .any(|a| a.via.as_ref().is_some_and(|v| v.starts_with(&tag)))
                || s.sections
                    .iter()
                    .any(|x| x.via.as_ref().is_some_and(|v| v.starts_with(&tag)))
        });
        if public || !called {
            continue;
        }
        points.extend(method_points(&key, f.file, &f.item.block, summary, &shared));
    }
    points.sort_by(|(a, gap_a), (b, gap_b)| {
        b.cond_syn
            .cmp(&a.cond_syn)
            .then(b.num_sv.cmp(&a.num_sv))
            .then(gap_b.cmp(gap_a))
            .then(a.method.cmp(&b.method))
            .then(a.at.line.cmp(&b.at.line))
            // Two points on one line (`a(); b();`): without the column their order was the
            // `HashMap`'s, another each run, and so were the points instrumented.
            .then(a.at.column.cmp(&b.at.column))
    });
    points.into_iter().map(|(p, _)| p).collect()
}

fn method_points(
    method: &str,
    file: &std::path::Path,
    body: &syn::Block,
    summary: &MethodSummary,
    shared: &HashSet<&str>,
) -> Vec<(SplitPoint, bool)> {
    let mut g = DiGraph::new();
    let entry = g.add_node(Node {
        label: "entry".into(),
        ..Default::default()
    });
    let exit = g.add_node(Node {
        label: "exit".into(),
        ..Default::default()
    });
    let mut cfg = Cfg { g, summary, exit };
    let exits = cfg.block(&body.stmts, vec![entry]);
    for e in exits {
        cfg.g.update_edge(e, exit, ());
    }
    let g = &cfg.g;
    // Shared fields each statement node accesses.
    let acc: HashMap<NodeIndex, BTreeSet<&str>> = g
        .node_indices()
        .map(|n| {
            let fields = match g[n].pos {
                Some(pos) => summary
                    .accesses
                    .iter()
                    .filter(|a| a.stmt == pos && shared.contains(a.field.as_str()))
                    .map(|a| a.field.as_str())
                    .collect(),
                None => BTreeSet::new(),
            };
            (n, fields)
        })
        .collect();
    let universe: BTreeSet<&str> = acc.values().flatten().copied().collect();
    let before = must_sets(g, &acc, &universe, entry, Direction::Incoming);
    let after = must_sets(g, &acc, &universe, exit, Direction::Outgoing);

    let mut best: HashMap<(u32, u32), (SplitPoint, bool)> = HashMap::new();
    for e in g.edge_indices() {
        let (n, m) = g.edge_endpoints(e).expect("edge has endpoints");
        let Some(pos) = g[m].pos else { continue };
        if g[m].body.contains(&n) {
            continue; // a back edge: no statement position runs once per iteration there
        }
        // A field whose lock is held at the point cannot change there: it does not count.
        let held_locks: Vec<&str> = summary
            .held_at
            .get(&pos)
            .map(|h| {
                h.iter()
                    .map(|id| &summary.sections[*id])
                    .filter(|s| !s.atomic)
                    .map(|s| s.lock.as_str())
                    .collect()
            })
            .unwrap_or_default();
        let shared_both: Vec<&str> = before[&n].intersection(&after[&m]).copied().collect();
        let common: Vec<&str> = shared_both
            .iter()
            .copied()
            .filter(|f| !held_locks.contains(f))
            .collect();
        let locked: Vec<&str> = shared_both
            .iter()
            .copied()
            .filter(|f| held_locks.contains(f))
            .collect();
        let leaves_wait_loop = g[n].wait_loop && !g[n].body.contains(&m);
        let cond_syn = leaves_wait_loop || g[n].waits || g[m].notify_if || g[m].notifies;
        let gap = held_locks.is_empty() && !common.is_empty();
        let mut description = match g[n].pos {
            Some((line, _)) => format!(
                "after line {line} ({}), before line {} ({})",
                g[n].label, pos.0, g[m].label
            ),
            None => format!(
                "at the start of the method, before line {} ({})",
                pos.0, g[m].label
            ),
        };
        if !common.is_empty() {
            description.push_str(&format!("; shared on both sides: {}", common.join(", ")));
        }
        if !locked.is_empty() {
            description.push_str(&format!("; {} locked here", locked.join(", ")));
        }
        if gap {
            description.push_str("; no lock held: between two critical sections");
        }
        if leaves_wait_loop || g[n].waits {
            description.push_str("; after a condvar wait");
        }
        if g[m].notify_if || g[m].notifies {
            description.push_str("; before a notify");
        }
        let point = SplitPoint {
            method: method.to_string(),
            at: Span {
                file: file.to_path_buf(),
                line: pos.0,
                column: pos.1,
            },
            cond_syn,
            num_sv: common.len() as u32,
            description,
        };
        let better = match best.get(&pos) {
            None => true,
            Some((old, _)) => (point.cond_syn, point.num_sv) > (old.cond_syn, old.num_sv),
        };
        if better {
            best.insert(pos, (point, gap));
        }
    }
    best.into_values().collect()
}

/// For each node, the fields accessed on every path from `start` up to and including it
/// (forward), or from it to `start` (backward): a must-analysis to a fixed point.
fn must_sets<'f>(
    g: &DiGraph<Node, ()>,
    acc: &HashMap<NodeIndex, BTreeSet<&'f str>>,
    universe: &BTreeSet<&'f str>,
    start: NodeIndex,
    dir: Direction,
) -> HashMap<NodeIndex, BTreeSet<&'f str>> {
    let mut out: HashMap<NodeIndex, BTreeSet<&str>> =
        g.node_indices().map(|n| (n, universe.clone())).collect();
    out.insert(start, acc[&start].clone());
    let mut changed = true;
    let mut rounds = 0;
    while changed && rounds < 100 {
        changed = false;
        rounds += 1;
        for n in g.node_indices() {
            if n == start {
                continue;
            }
            let mut preds = g.neighbors_directed(n, dir).peekable();
            let mut inter: Option<BTreeSet<&str>> = None;
            if preds.peek().is_none() {
                inter = Some(BTreeSet::new());
            }
            for p in preds {
                inter = Some(match inter {
                    None => out[&p].clone(),
                    Some(i) => i.intersection(&out[&p]).copied().collect(),
                });
            }
            let mut new = inter.unwrap_or_default();
            new.extend(acc[&n].iter().copied());
            if new != out[&n] {
                out.insert(n, new);
                changed = true;
            }
        }
    }
    out
}

impl Cfg<'_> {
    fn node(&mut self, stmt: &syn::Stmt, label: &str) -> NodeIndex {
        let s = stmt.span().start();
        let pos = (s.line as u32, s.column as u32);
        let node = Node {
            pos: Some(pos),
            waits: self.summary.wait_stmts.contains(&pos),
            notifies: self.summary.notify_stmts.contains(&pos),
            label: label.to_string(),
            ..Default::default()
        };
        self.g.add_node(node)
    }

    /// Adds a block's statements after `preds`; returns the nodes control leaves from.
    fn block(&mut self, stmts: &[syn::Stmt], mut preds: Vec<NodeIndex>) -> Vec<NodeIndex> {
        for stmt in stmts {
            if matches!(stmt, syn::Stmt::Item(_)) {
                continue;
            }
            let label = stmt_label(stmt);
            let n = self.node(stmt, &label);
            for p in &preds {
                self.g.update_edge(*p, n, ());
            }
            preds = match stmt {
                syn::Stmt::Expr(syn::Expr::Return(_), _) => {
                    self.g.update_edge(n, self.exit, ());
                    vec![]
                }
                // `break` and `continue` leave through the loop header, which has its own exit.
                syn::Stmt::Expr(syn::Expr::Break(_) | syn::Expr::Continue(_), _) => vec![],
                syn::Stmt::Macro(m) if diverging_macro(&m.mac) => {
                    self.g.update_edge(n, self.exit, ());
                    vec![]
                }
                syn::Stmt::Expr(e, _) => self.control(e, n),
                _ => vec![n],
            };
        }
        preds
    }

    fn control(&mut self, e: &syn::Expr, n: NodeIndex) -> Vec<NodeIndex> {
        match e {
            syn::Expr::If(i) => {
                let first = self.g.node_count();
                let mut exits = self.block(&i.then_branch.stmts, vec![n]);
                match &i.else_branch {
                    Some((_, els)) => match &**els {
                        syn::Expr::Block(b) => exits.extend(self.block(&b.block.stmts, vec![n])),
                        syn::Expr::If(_) => exits.extend(self.control(els, n)),
                        _ => exits.push(n),
                    },
                    None => exits.push(n),
                }
                let inner: Vec<NodeIndex> =
                    (first..self.g.node_count()).map(NodeIndex::new).collect();
                if inner.iter().any(|x| self.g[*x].notifies) {
                    self.g[n].notify_if = true;
                }
                exits
            }
            syn::Expr::While(w) => self.loop_(&w.body, n),
            syn::Expr::ForLoop(f) => self.loop_(&f.body, n),
            syn::Expr::Loop(l) => self.loop_(&l.body, n),
            syn::Expr::Match(m) => {
                let mut exits = Vec::new();
                for arm in &m.arms {
                    match &*arm.body {
                        syn::Expr::Block(b) => exits.extend(self.block(&b.block.stmts, vec![n])),
                        _ => exits.push(n),
                    }
                }
                if exits.is_empty() {
                    exits.push(n);
                }
                exits
            }
            syn::Expr::Block(b) => self.block(&b.block.stmts, vec![n]),
            syn::Expr::Unsafe(u) => self.block(&u.block.stmts, vec![n]),
            _ => vec![n],
        }
    }

    fn loop_(&mut self, body: &syn::Block, n: NodeIndex) -> Vec<NodeIndex> {
        let first = self.g.node_count();
        let exits = self.block(&body.stmts, vec![n]);
        for e in exits {
            self.g.update_edge(e, n, ());
        }
        let inner: Vec<NodeIndex> = (first..self.g.node_count()).map(NodeIndex::new).collect();
        let waits = self.g[n].waits || inner.iter().any(|x| self.g[*x].waits);
        self.g[n].wait_loop = waits;
        self.g[n].waits = false;
        self.g[n].body = inner;
        vec![n]
    }
}

fn diverging_macro(mac: &syn::Macro) -> bool {
    mac.path.segments.last().is_some_and(|s| {
        matches!(
            s.ident.to_string().as_str(),
            "panic" | "unreachable" | "todo" | "unimplemented"
        )
    })
}

fn stmt_label(stmt: &syn::Stmt) -> String {
    match stmt {
        syn::Stmt::Local(_) => "let".into(),
        syn::Stmt::Macro(m) => format!(
            "{}!",
            m.mac
                .path
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default()
        ),
        syn::Stmt::Expr(e, _) => match e {
            syn::Expr::If(_) => "if".into(),
            syn::Expr::While(_) => "while".into(),
            syn::Expr::ForLoop(_) => "for".into(),
            syn::Expr::Loop(_) => "loop".into(),
            syn::Expr::Match(_) => "match".into(),
            syn::Expr::Return(_) => "return".into(),
            syn::Expr::MethodCall(m) => format!(".{}()", m.method),
            syn::Expr::Call(_) => "call".into(),
            syn::Expr::Assign(_) => "assignment".into(),
            _ => "expression".into(),
        },
        syn::Stmt::Item(_) => "item".into(),
    }
}
