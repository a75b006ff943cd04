//! BC-ConTest grouping rendered for Rust: each test is a small type and the groups its method
//! pairs must land in (`a b: group`, one line per pair, declaration order).

use analysis::{analyze_source, Group, Model};

fn groups(model: &Model) -> String {
    let mut out = String::new();
    for ty in &model.types {
        for p in &ty.pairs {
            let g = match p.group {
                Group::High => "high",
                Group::Low => "low",
                Group::Removed => "removed",
            };
            out.push_str(&format!("{} {}: {g}\n", p.methods[0], p.methods[1]));
        }
    }
    out
}

fn check(source: &str, expect: &str) {
    let model = analyze_source("fixture", "2021", source);
    let got = groups(&model);
    let want: String = expect
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(got, want, "\nsummary:\n{}", analysis::summary(&model));
}

const SYNC: &str = "use std::sync::{Arc, Mutex, RwLock, Condvar};\nuse std::sync::atomic::{AtomicUsize, AtomicBool, Ordering};\n";

#[test]
fn check_then_act_across_two_acquisitions_is_high_and_one_acquisition_is_removed() {
    check(
        &format!(
            "{SYNC}pub struct Stock {{ items: Mutex<Vec<u32>> }}
            impl Stock {{
                pub fn new() -> Self {{ Stock {{ items: Mutex::new(Vec::new()) }} }}
                pub fn take_racy(&self) -> Option<u32> {{
                    let n = self.items.lock().unwrap().len();
                    if n > 0 {{ self.items.lock().unwrap().pop() }} else {{ None }}
                }}
                pub fn take(&self) -> Option<u32> {{
                    let mut g = self.items.lock().unwrap();
                    g.pop()
                }}
            }}"
        ),
        "take_racy take_racy: high
         take_racy take: high
         take take: removed",
    );
}

#[test]
fn two_read_sections_do_not_protect_against_each_other() {
    check(
        &format!(
            "{SYNC}pub struct Table {{ rows: RwLock<Vec<u32>>, seen: AtomicUsize }}
            impl Table {{
                pub fn new() -> Self {{ todo!() }}
                pub fn count(&self) -> usize {{ self.rows.read().unwrap().len() }}
                pub fn add(&self, x: u32) {{ self.rows.write().unwrap().push(x); }}
                pub fn first(&self) -> Option<u32> {{ self.rows.read().unwrap().first().copied() }}
            }}"
        ),
        "count count: low
         count add: low
         count first: low
         add add: removed
         add first: low
         first first: low",
    );
}

#[test]
fn a_load_then_store_is_high_against_any_writer_and_a_single_fetch_add_is_not() {
    check(
        &format!(
            "{SYNC}#[derive(Default)]
            pub struct Ids {{ next: AtomicUsize }}
            impl Ids {{
                pub fn racy_next(&self) -> usize {{
                    let id = self.next.load(Ordering::SeqCst);
                    self.next.store(id + 1, Ordering::SeqCst);
                    id
                }}
                pub fn next(&self) -> usize {{ self.next.fetch_add(1, Ordering::SeqCst) }}
                pub fn peek(&self) -> usize {{ self.next.load(Ordering::SeqCst) }}
            }}"
        ),
        "racy_next racy_next: high
         racy_next next: high
         racy_next peek: low
         next next: low
         next peek: low
         peek peek: low",
    );
}

#[test]
fn opposite_lock_orders_are_high_also_across_two_instances() {
    check(
        &format!(
            "{SYNC}pub struct Account {{ balance: Mutex<i64>, log: Mutex<Vec<i64>> }}
            impl Account {{
                pub fn new() -> Self {{ todo!() }}
                pub fn deposit(&self, x: i64) {{
                    let mut b = self.balance.lock().unwrap();
                    let mut l = self.log.lock().unwrap();
                    *b += x; l.push(x);
                }}
                pub fn audit(&self) -> i64 {{
                    let l = self.log.lock().unwrap();
                    let b = self.balance.lock().unwrap();
                    *b + l.len() as i64
                }}
                pub fn transfer(&self, other: &Account, x: i64) {{
                    let mut a = self.balance.lock().unwrap();
                    let mut b = other.balance.lock().unwrap();
                    *a -= x; *b += x;
                }}
            }}"
        ),
        "deposit deposit: removed
         deposit audit: high
         deposit transfer: low
         audit audit: removed
         audit transfer: low
         transfer transfer: high",
    );
}

#[test]
fn a_double_read_lock_is_high_with_a_writer() {
    check(
        &format!(
            "{SYNC}pub struct Conf {{ map: RwLock<Vec<u32>> }}
            impl Conf {{
                pub fn new() -> Self {{ todo!() }}
                pub fn get_or_first(&self, i: usize) -> u32 {{
                    if let Some(v) = self.map.read().unwrap().get(i) {{ return *v; }}
                    else {{ self.map.read().unwrap()[0] }}
                }}
                pub fn set(&self, v: u32) {{ self.map.write().unwrap().push(v); }}
            }}"
        ),
        "get_or_first get_or_first: high
         get_or_first set: high
         set set: removed",
    );
}

/// bc-contest.txt Fig. 2 in Rust: m1 takes l1, reads x, takes l2, writes x and reads y,
/// releases l2, reads x, releases l1. m2 (the paper's synchronized method: one lock held
/// throughout, here `this`) reads x, writes x under l1, reads x and writes y under l2, reads y.
/// Field x: MPL(m1) = {l1}, MPL(m2) = {this}: no common lock, so the pair is high. Each
/// method alone runs inside one exclusive acquisition, so its self-pair is removed.
#[test]
fn the_bc_contest_figure_2_example_is_high() {
    check(
        &format!(
            "{SYNC}pub struct Fig2 {{ this: Mutex<()>, l1: Mutex<()>, l2: Mutex<()>, x: AtomicUsize, y: AtomicUsize }}
            impl Fig2 {{
                pub fn new() -> Self {{ todo!() }}
                pub fn m1(&self) {{
                    let _g1 = self.l1.lock().unwrap();
                    let a = self.x.load(Ordering::SeqCst);
                    {{
                        let _g2 = self.l2.lock().unwrap();
                        self.x.store(a + 1, Ordering::SeqCst);
                        let _b = self.y.load(Ordering::SeqCst);
                    }}
                    let _c = self.x.load(Ordering::SeqCst);
                }}
                pub fn m2(&self) {{
                    let _this = self.this.lock().unwrap();
                    let a = self.x.load(Ordering::SeqCst);
                    {{
                        let _g1 = self.l1.lock().unwrap();
                        self.x.store(a, Ordering::SeqCst);
                    }}
                    {{
                        let _g2 = self.l2.lock().unwrap();
                        let _b = self.x.load(Ordering::SeqCst);
                        self.y.store(1, Ordering::SeqCst);
                    }}
                    let _c = self.y.load(Ordering::SeqCst);
                }}
            }}"
        ),
        "m1 m1: removed
         m1 m2: high
         m2 m2: removed",
    );
}

#[test]
fn methods_of_an_inner_type_behind_an_arc_are_followed() {
    check(
        &format!(
            "{SYNC}struct Inner {{ map: Mutex<Vec<u32>> }}
            impl Inner {{
                fn len(&self) -> usize {{ self.map.lock().unwrap().len() }}
                fn push(&self, x: u32) {{ self.map.lock().unwrap().push(x); }}
            }}
            pub struct Pool {{ inner: Arc<Inner> }}
            impl Pool {{
                pub fn new() -> Self {{ todo!() }}
                pub fn add_if_small(&self, x: u32) {{ if self.inner.len() < 10 {{ self.inner.push(x); }} }}
                pub fn add(&self, x: u32) {{ self.inner.push(x) }}
            }}"
        ),
        "add_if_small add_if_small: high
         add_if_small add: high
         add add: removed",
    );
}

/// A type of the crate named like an atomic is a type of its own, followed like `Inner`
/// above (atomicring 0.5.0's `AtomicRingQueue` around its `AtomicRingBuffer`): `push`'s
/// load and store of the ring's counter conflict with `pop`'s, and with each other. Taken
/// for one atomic, every call on it was one indivisible read, and every pair low.
#[test]
fn a_type_of_the_crate_named_like_an_atomic_is_followed() {
    check(
        &format!(
            "{SYNC}pub struct AtomicRing {{ count: AtomicUsize }}
            impl AtomicRing {{
                pub fn new() -> Self {{ todo!() }}
                pub fn push(&self) {{ let n = self.count.load(Ordering::SeqCst); self.count.store(n + 1, Ordering::SeqCst); }}
                pub fn pop(&self) {{ self.count.fetch_sub(1, Ordering::SeqCst); }}
            }}
            pub struct Queue {{ ring: AtomicRing }}
            impl Queue {{
                pub fn new() -> Self {{ todo!() }}
                pub fn push(&self) {{ self.ring.push() }}
                pub fn pop(&self) {{ self.ring.pop() }}
            }}"
        ),
        "push push: high
         push pop: high
         pop pop: low
         push push: high
         push pop: high
         pop pop: low",
    );
}

/// A waiter that reads what the notifier writes outside the lock its wait releases can miss
/// the notify (atomicring 0.5.0's `pop`); reading it again under that lock, it cannot, and
/// only that pair's own fields decide its group.
#[test]
fn a_wait_after_a_read_outside_its_lock_is_high_with_the_notifier() {
    let ring = |pop_body: &str| {
        format!(
            "{SYNC}pub struct Ring {{ items: Mutex<Vec<u32>>, gate: parking_lot::Mutex<()>, ready: parking_lot::Condvar }}
            impl Ring {{
                pub fn new() -> Self {{ todo!() }}
                pub fn push(&self, x: u32) {{
                    self.items.lock().unwrap().push(x);
                    drop(self.gate.lock());
                    self.ready.notify_one();
                }}
                pub fn pop(&self) -> u32 {{ loop {{ {pop_body} }} }}
            }}"
        )
    };
    check(
        &ring(
            "if let Some(x) = self.items.lock().unwrap().pop() { return x; }
             let mut gate = self.gate.lock();
             self.ready.wait(&mut gate);",
        ),
        "push push: low
         push pop: high
         pop pop: low",
    );
    check(
        &ring(
            "let mut gate = self.gate.lock();
             if let Some(x) = self.items.lock().unwrap().pop() { return x; }
             self.ready.wait(&mut gate);",
        ),
        "push push: low
         push pop: low
         pop pop: low",
    );
}

#[test]
fn a_collection_of_locks_reached_through_a_helper_is_one_lock() {
    check(
        &format!(
            "{SYNC}pub struct Segments {{ segs: Vec<Mutex<Vec<u32>>> }}
            impl Segments {{
                pub fn new() -> Self {{ todo!() }}
                fn seg(&self, k: usize) -> &Mutex<Vec<u32>> {{ &self.segs[k % 4] }}
                pub fn take_if_any(&self, k: usize) -> u32 {{
                    if self.seg(k).lock().unwrap().is_empty() {{ return 0; }}
                    self.seg(k).lock().unwrap().pop().unwrap()
                }}
                pub fn clear(&self) {{ for s in &self.segs {{ s.lock().unwrap().clear(); }} }}
                pub fn total(&self) -> usize {{ self.segs.iter().map(|s| s.lock().unwrap().len()).sum() }}
            }}"
        ),
        "take_if_any take_if_any: high
         take_if_any clear: high
         take_if_any total: low
         clear clear: low
         clear total: low
         total total: low",
    );
}

#[test]
fn a_global_lock_in_a_static_is_a_lock_like_a_field() {
    check(
        &format!(
            "{SYNC}use std::sync::LazyLock;
            static REGISTRY: LazyLock<Mutex<Vec<u32>>> = LazyLock::new(|| Mutex::new(Vec::new()));
            pub struct Handle {{ id: AtomicUsize }}
            impl Handle {{
                pub fn new() -> Self {{ todo!() }}
                pub fn register(&self) {{
                    let n = REGISTRY.lock().unwrap().len();
                    REGISTRY.lock().unwrap().push(n as u32);
                }}
                pub fn count(&self) -> usize {{ REGISTRY.lock().unwrap().len() }}
            }}"
        ),
        "register register: high
         register count: low
         count count: low",
    );
}

/// A `Condvar` wait releases the lock: the emptiness check before it and the pop after it are
/// two sections, so `take` is not protected against `put` (or another `take`) by one
/// acquisition, whatever the lock around them says.
#[test]
fn a_condvar_wait_between_check_and_act_splits_the_protection() {
    check(
        &format!(
            "{SYNC}use std::collections::VecDeque;
            pub struct Channel {{ q: Mutex<VecDeque<u32>>, cv: Condvar }}
            impl Channel {{
                pub fn new() -> Self {{ todo!() }}
                pub fn put(&self, x: u32) {{
                    self.q.lock().unwrap().push_back(x);
                    self.cv.notify_one();
                }}
                pub fn take(&self) -> u32 {{
                    let mut g = self.q.lock().unwrap();
                    if g.is_empty() {{ g = self.cv.wait(g).unwrap(); }}
                    g.pop_front().unwrap()
                }}
                pub fn take_looping(&self) -> u32 {{
                    let mut g = self.q.lock().unwrap();
                    while g.is_empty() {{ g = self.cv.wait(g).unwrap(); }}
                    g.pop_front().unwrap()
                }}
            }}"
        ),
        "put put: removed
         put take: high
         put take_looping: high
         take take: high
         take take_looping: high
         take_looping take_looping: high",
    );
}

/// Accesses made inside a guard-mapping closure (`MutexGuard::map`, `RwLockReadGuard::map`,
/// `try_map`, parking_lot's mapped guards) belong to the guard's section: a read-lock lookup
/// then a write-lock insert is a check-then-act over two acquisitions (high against itself; a
/// single read section is low against it, as `count ‖ add` is above).
#[test]
fn accesses_through_a_guard_mapping_closure_are_attributed() {
    check(
        "use parking_lot::{RwLock, RwLockReadGuard, MappedRwLockReadGuard, Mutex, MutexGuard};
        use std::collections::HashMap;
        pub struct Cache { m: RwLock<HashMap<u32, u32>>, order: Mutex<Vec<u32>> }
        impl Cache {
            pub fn new() -> Self { todo!() }
            pub fn get_or_insert(&self, k: u32) -> u32 {
                if let Ok(v) = RwLockReadGuard::try_map(self.m.read(), |m| m.get(&k)) { return *v; }
                self.m.write().insert(k, 0);
                0
            }
            pub fn get(&self, k: u32) -> Option<MappedRwLockReadGuard<'_, u32>> {
                RwLockReadGuard::try_map(self.m.read(), |m| m.get(&k)).ok()
            }
            pub fn last(&self) -> u32 {
                *MutexGuard::map(self.order.lock(), |o| o.last_mut().unwrap())
            }
            pub fn push(&self, x: u32) { self.order.lock().push(x); }
        }",
        "get_or_insert get_or_insert: high
         get_or_insert get: low
         get_or_insert last: low
         get_or_insert push: low
         get get: low
         get last: low
         get push: low
         last last: removed
         last push: removed
         push push: removed",
    );
}

/// A pair one lock serialises is removed only when the analysis saw every call both methods
/// make holding it: another type's method (through a generic parameter), a callback, a `Fn`
/// field may take locks of their own (and call back in). Each kind keeps the pair, low. A
/// plain trait method on a generic key (`clone`) does not.
#[test]
fn a_call_the_analysis_does_not_follow_under_the_lock_keeps_the_pair() {
    check(
        &format!(
            "{SYNC}pub trait Listener {{ fn on_event(&self, x: u32); }}
            pub struct Child {{ n: Mutex<u32> }}
            impl Child {{ pub fn new() -> Self {{ todo!() }} }}
            impl Listener for Child {{ fn on_event(&self, x: u32) {{ *self.n.lock().unwrap() += x; }} }}
            pub struct Hub<K: Clone> {{
                items: Mutex<Vec<u32>>,
                keys: Mutex<Vec<K>>,
                handler: Box<dyn Fn(u32) + Send + Sync>,
            }}
            impl<K: Clone> Hub<K> {{
                pub fn new() -> Self {{ todo!() }}
                pub fn plain(&self, x: u32) {{ self.items.lock().unwrap().push(x); }}
                pub fn with_listener<L: Listener>(&self, l: &L) {{
                    let g = self.items.lock().unwrap();
                    l.on_event(g.len() as u32);
                }}
                pub fn with_callback(&self, f: impl Fn(u32)) {{
                    let g = self.items.lock().unwrap();
                    f(g.len() as u32);
                }}
                pub fn with_handler(&self) {{
                    let g = self.items.lock().unwrap();
                    (self.handler)(g.len() as u32);
                }}
                pub fn keep(&self, k: &K) {{ self.keys.lock().unwrap().push(k.clone()); }}
            }}"
        ),
        "on_event on_event: removed
         plain plain: removed
         plain with_listener: low
         plain with_callback: low
         plain with_handler: low
         plain keep: low
         with_listener with_listener: low
         with_listener with_callback: low
         with_listener with_handler: low
         with_listener keep: low
         with_callback with_callback: low
         with_callback with_handler: low
         with_callback keep: low
         with_handler with_handler: low
         with_handler keep: low
         keep keep: removed",
    );
}

/// A parent that locks its state and then, inside, a child's own lock, while a child can
/// lock itself and then call back into the parent: the second lock is another object's, taken
/// holding the first, so every pair with a method taking the parent's lock is high.
#[test]
fn another_objects_lock_taken_holding_ours_is_a_lock_order_risk() {
    check(
        &format!(
            "{SYNC}pub struct ChildState {{ ticks: u32 }}
            pub struct State {{ children: Vec<Arc<Mutex<ChildState>>>, lines: Vec<String> }}
            pub struct Display {{ state: Mutex<State> }}
            impl Display {{
                pub fn new() -> Self {{ todo!() }}
                pub fn render(&self) {{
                    let g = self.state.lock().unwrap();
                    for c in g.children.iter() {{
                        let _t = c.lock().unwrap().ticks;
                    }}
                }}
                pub fn println(&self, s: String) {{ self.state.lock().unwrap().lines.push(s); }}
            }}"
        ),
        "render render: high
         render println: high
         println println: removed",
    );
}

/// A display and the bars it hands out (`add` returns a `Bar` sharing its state). `Display`'s
/// tests get the bar's methods as `Bar::…`, paired with its own. `render` holds the display's
/// `Mutex<Shared>` while it locks each bar (another object's lock); `inc` holds its bar's
/// `Mutex<BarState>` while it takes a `Mutex<Shared>`: a lock order across types, high. The
/// fixed `inc` takes them in `render`'s order: low. No pair across types is removed, and a
/// pair the bar's own lock would remove is low on handles.
const DISPLAY: &str = "
    #[derive(Default)] struct BarState { pos: u64 }
    #[derive(Default)] struct Shared { bars: Vec<Arc<Mutex<BarState>>>, redraws: u64 }
    #[derive(Default)] pub struct Display { shared: Arc<Mutex<Shared>> }
    pub struct Bar { state: Arc<Mutex<BarState>>, shared: Arc<Mutex<Shared>> }
    impl Display {
        pub fn new() -> Self { Self::default() }
        pub fn add(&self) -> Bar {
            let state = Arc::new(Mutex::new(BarState::default()));
            self.shared.lock().unwrap().bars.push(state.clone());
            Bar { state, shared: self.shared.clone() }
        }
        pub fn render(&self) -> u64 {
            let shared = self.shared.lock().unwrap();
            shared.bars.iter().map(|b| b.lock().unwrap().pos).sum()
        }
    }";

#[test]
fn a_handle_a_method_returns_joins_the_owners_pairs_and_a_lock_order_across_types_is_high() {
    let buggy = format!(
        "{SYNC}{DISPLAY}
        impl Bar {{
            pub fn inc(&self) {{
                let mut state = self.state.lock().unwrap();
                state.pos += 1;
                self.shared.lock().unwrap().redraws += 1;
            }}
        }}"
    );
    check(
        &buggy,
        "inc inc: removed
         add add: removed
         add render: high
         render render: high
         add Bar::inc: low
         render Bar::inc: high
         Bar::inc Bar::inc: low",
    );
    let model = analyze_source("fixture", "2021", &buggy);
    let display = model.types.iter().find(|t| t.name == "Display").unwrap();
    let inc = display
        .methods
        .iter()
        .find(|m| m.name == "Bar::inc")
        .unwrap();
    let via = inc
        .via
        .as_ref()
        .expect("a handle method says where its handle comes from");
    assert_eq!(
        (via.ty.as_str(), via.from.as_str()),
        ("fixture::Bar", "add")
    );
    let pair = display
        .pairs
        .iter()
        .find(|p| p.methods == ["render", "Bar::inc"])
        .unwrap();
    assert!(
        pair.reasons[0]
            .starts_with("lock order across types: `render` takes another object's lock"),
        "{:?}",
        pair.reasons
    );
    let bar = model.types.iter().find(|t| t.name == "Bar").unwrap();
    assert_eq!(
        bar.reason.as_ref().map(ToString::to_string).as_deref(),
        Some(
            "handed out by `Display::add`, whose tests call its methods on the handles they return"
        )
    );
    let fixed = format!(
        "{SYNC}{DISPLAY}
        impl Bar {{
            pub fn inc(&self) {{
                let mut shared = self.shared.lock().unwrap();
                self.state.lock().unwrap().pos += 1;
                shared.redraws += 1;
            }}
        }}"
    );
    check(
        &fixed,
        "inc inc: removed
         add add: removed
         add render: high
         render render: high
         add Bar::inc: low
         render Bar::inc: low
         Bar::inc Bar::inc: low",
    );
}

/// A parameter `&Bar` of the owner's method, where `Bar` is a handle the owner hands out,
/// takes a kept handle: the method is callable and paired like any other.
#[test]
fn a_parameter_of_a_handle_type_takes_a_kept_handle() {
    let source = format!(
        "{SYNC}{DISPLAY}
        impl Display {{
            pub fn remove(&self, bar: &Bar) -> bool {{
                let mut shared = self.shared.lock().unwrap();
                let before = shared.bars.len();
                shared.bars.retain(|b| !Arc::ptr_eq(b, &bar.state));
                shared.bars.len() < before
            }}
        }}
        impl Bar {{ pub fn get(&self) -> u64 {{ self.state.lock().unwrap().pos }} }}"
    );
    let model = analyze_source("fixture", "2021", &source);
    let display = model.types.iter().find(|t| t.name == "Display").unwrap();
    let remove = display.methods.iter().find(|m| m.name == "remove").unwrap();
    assert!(remove.supported(), "{:?}", remove.reason);
    assert_eq!(
        remove.params[0].kind,
        analysis::ParamKind::Handle {
            ty: "fixture::Bar".into(),
            shape: analysis::ReturnShape::SelfValue,
        }
    );
    assert!(display
        .pairs
        .iter()
        .any(|p| p.methods == ["remove", "Bar::get"]));
}

/// A lock-order inversion across two types through a call: `render` holds the display's state
/// and calls `draw` on each bar, which locks the bar; `Bar::tick` locks the bar, then the
/// display's state. The call is followed into the handle type, so the pair is high with the
/// callee in its reason; `count`, which calls no bar method holding the state, stays low.
#[test]
fn a_lock_order_inversion_through_a_call_into_the_handle_type_is_high() {
    let source = format!(
        "{SYNC}
        #[derive(Default)] struct Shared {{ bars: Vec<Arc<Bar>>, redraws: u64 }}
        pub struct Bar {{ state: Mutex<u64>, shared: Arc<Mutex<Shared>> }}
        impl Bar {{
            pub fn tick(&self) {{
                let mut s = self.state.lock().unwrap();
                *s += 1;
                self.shared.lock().unwrap().redraws += 1;
            }}
            pub fn draw(&self) -> u64 {{ *self.state.lock().unwrap() }}
        }}
        #[derive(Default)] pub struct Display {{ shared: Arc<Mutex<Shared>> }}
        impl Display {{
            pub fn new() -> Self {{ Self::default() }}
            pub fn add(&self) -> Arc<Bar> {{
                let bar = Arc::new(Bar {{ state: Mutex::new(0), shared: Arc::clone(&self.shared) }});
                self.shared.lock().unwrap().bars.push(Arc::clone(&bar));
                bar
            }}
            pub fn render(&self) -> u64 {{
                let shared = self.shared.lock().unwrap();
                let mut total = 0;
                for bar in &shared.bars {{ total += bar.draw(); }}
                total
            }}
            pub fn count(&self) -> usize {{ self.shared.lock().unwrap().bars.len() }}
        }}"
    );
    let model = analyze_source("fixture", "2021", &source);
    let display = model.types.iter().find(|t| t.name == "Display").unwrap();
    let pair = |a: &str, b: &str| {
        display
            .pairs
            .iter()
            .find(|p| p.methods == [a, b])
            .unwrap_or_else(|| panic!("no pair {a} {b}: {:#?}", display.pairs))
    };
    let render = pair("render", "Bar::tick");
    assert_eq!(render.group, Group::High, "{:?}", render.reasons);
    assert!(
        render
            .reasons
            .iter()
            .any(|r| r.contains("through `Bar::draw`")),
        "{:?}",
        render.reasons
    );
    assert_eq!(pair("count", "Bar::tick").group, Group::Low);
}

/// A handle returned by reference (`fn unparker(&self) -> &Unparker`, crossbeam's `Parker`)
/// is kept as a clone.
#[test]
fn a_handle_returned_by_reference_is_kept_as_a_clone() {
    let source = format!(
        "{SYNC}
        #[derive(Clone, Default)] pub struct Unparker {{ state: Arc<AtomicUsize> }}
        impl Unparker {{ pub fn unpark(&self) {{ self.state.store(1, Ordering::SeqCst); }} }}
        #[derive(Default)] pub struct Parker {{ unparker: Unparker, lock: Mutex<u32> }}
        impl Parker {{
            pub fn new() -> Self {{ Self::default() }}
            pub fn park(&self) {{ *self.lock.lock().unwrap() += 1; }}
            pub fn unparker(&self) -> &Unparker {{ &self.unparker }}
        }}"
    );
    let model = analyze_source("fixture", "2021", &source);
    let parker = model.types.iter().find(|t| t.name == "Parker").unwrap();
    let unpark = parker
        .methods
        .iter()
        .find(|m| m.name == "Unparker::unpark")
        .expect("the handle's method joins the owner's");
    let via = unpark.via.as_ref().unwrap();
    assert_eq!(
        (via.from.as_str(), via.shape),
        ("unparker", analysis::ReturnShape::RefClone)
    );
}

/// A handle's method that hands out a thread-safe type in turn (sled's `Config::open` hands
/// out a `Db`, whose `open_tree` answers a `Tree`) says so (`Method::hands_out`), and the
/// owner's `hands_out` answers it as it answers its own (`Config::open`).
#[test]
fn a_handles_method_handing_out_a_type_in_turn_says_so() {
    let source = format!(
        "{SYNC}
        pub struct Tree {{ items: Arc<Mutex<Vec<u32>>> }}
        impl Tree {{ pub fn insert(&self, v: u32) {{ self.items.lock().unwrap().push(v); }} }}
        pub struct Db {{ trees: Mutex<Vec<Tree>> }}
        impl Db {{
            pub fn open_tree(&self, name: u32) -> Result<Tree, String> {{ todo!() }}
            pub fn len(&self) -> usize {{ self.trees.lock().unwrap().len() }}
        }}
        pub struct Config {{ path: Mutex<String> }}
        impl Config {{
            pub fn new() -> Self {{ todo!() }}
            pub fn open(&self) -> Result<Db, String> {{ todo!() }}
            pub fn set(&self, p: String) {{ *self.path.lock().unwrap() = p; }}
        }}"
    );
    let model = analyze_source("fixture", "2021", &source);
    let config = model.types.iter().find(|t| t.name == "Config").unwrap();
    let open_tree = config
        .methods
        .iter()
        .find(|m| m.name == "Db::open_tree")
        .expect("the handle's method joins the owner's");
    let tree = analysis::HandedOut {
        ty: "fixture::Tree".into(),
        shape: analysis::ReturnShape::ResultSelf,
    };
    assert_eq!(open_tree.hands_out.as_ref(), Some(&tree));
    assert_eq!(config.hands_out("Db::open_tree"), Some(tree));
    assert_eq!(
        config.hands_out("open").map(|h| h.ty),
        Some("fixture::Db".to_string())
    );
    assert_eq!(config.hands_out("Db::len"), None);
    assert_eq!(config.hands_out("set"), None);
}

/// A handle behind a guard (`MappedRwLockReadGuard<'_, Gauge>`, lock_api's with the raw lock
/// first, a map's `Ref`) is called through the guard: its methods join the owner's with the
/// `Guard` shape, and no parameter takes one as a kept handle (a guard borrows its owner).
#[test]
fn a_handle_behind_a_guard_is_called_through_it_and_never_kept() {
    for returned in [
        "parking_lot::MappedRwLockReadGuard<'_, Gauge>",
        "lock_api::MappedRwLockReadGuard<'_, parking_lot::RawRwLock, Gauge>",
        "std::sync::MutexGuard<'_, Gauge>",
        "dashmap::mapref::one::Ref<'_, String, Gauge>",
    ] {
        let source = format!(
            "{SYNC}
            pub struct Gauge {{ value: AtomicUsize }}
            impl Gauge {{ pub fn add(&self, n: usize) {{ self.value.fetch_add(n, Ordering::SeqCst); }} }}
            pub struct Family {{ gauges: Mutex<Vec<Gauge>> }}
            impl Family {{
                pub fn new() -> Self {{ Family {{ gauges: Mutex::new(Vec::new()) }} }}
                pub fn get_or_create(&self, label: &str) -> {returned} {{ todo!() }}
                pub fn drop_gauge(&self, gauge: &Gauge) {{ self.gauges.lock().unwrap().clear(); }}
            }}"
        );
        let model = analyze_source("fixture", "2021", &source);
        let family = model.types.iter().find(|t| t.name == "Family").unwrap();
        let add = family
            .methods
            .iter()
            .find(|m| m.name == "Gauge::add")
            .unwrap_or_else(|| panic!("{returned}: the gauge's method joins the family's"));
        let via = add.via.as_ref().unwrap();
        assert_eq!(
            (via.from.as_str(), via.shape),
            ("get_or_create", analysis::ReturnShape::Guard),
            "{returned}"
        );
        let drop_gauge = family
            .methods
            .iter()
            .find(|m| m.name == "drop_gauge")
            .unwrap();
        assert!(
            !matches!(
                drop_gauge.params[0].kind,
                analysis::ParamKind::Handle { .. }
            ),
            "{returned}: {:?}",
            drop_gauge.params[0].kind
        );
    }
}

/// A guard over one of the owner's type parameters (prometheus-client's `Family<S, M>`
/// handing out `MappedRwLockReadGuard<'_, M>`) is a handle once `M` is instantiated: by its
/// default, else by its first candidate (a type of the crate implementing its bound), as the
/// harness instantiates it, else by what the crate's doc examples write for it. With none of
/// them (an unbounded `M`) there is no handle.
#[test]
fn a_guard_over_a_type_parameter_is_a_handle_of_the_type_it_is_instantiated_with() {
    // A doc example the crate's own docs run, instantiating the family (issue 29, item 1).
    let doc = "/// ```\n/// let family = fixture::Family::<fixture::Gauge>::new();\n/// ```\n";
    for (decl, docs, gauge, handle) in [
        ("M: Metric", "", "", true),
        ("M: Metric = Gauge", "", "", true),
        ("M", "", "", false),
        // Only the docs say what `M` is (prometheus-client's `Family<S, M>`).
        ("M", doc, "", true),
        // A handle generic with a default for each parameter is its bare name's instantiation
        // (`Counter<N = u64, A = AtomicU64>`); one without a default is not a handle.
        ("M: Metric = Gauge", "", "<N = u64>", true),
        ("M", doc, "<N = u64>", true),
        ("M = Gauge", "", "<N>", false),
    ] {
        // `Gauge`'s own parameter, when it has one, as its impls write it.
        let (params, unit) = if gauge.is_empty() {
            ("", "")
        } else {
            ("<N>", ", unit: std::marker::PhantomData<N>")
        };
        let source = format!(
            "{SYNC}
            pub trait Metric {{ fn value(&self) -> usize; }}
            pub struct Gauge{gauge} {{ value: AtomicUsize{unit} }}
            impl{params} Gauge{params} {{ pub fn add(&self, n: usize) {{ self.value.fetch_add(n, Ordering::SeqCst); }} }}
            impl{params} Metric for Gauge{params} {{ fn value(&self) -> usize {{ 0 }} }}
            {docs}pub struct Family<{decl}> {{ gauges: parking_lot::RwLock<Vec<M>> }}
            impl<M: Default> Family<M> {{
                pub fn new() -> Self {{ todo!() }}
                pub fn get_or_create(&self, label: &str) -> parking_lot::MappedRwLockReadGuard<'_, M> {{ todo!() }}
            }}"
        );
        let model = analyze_source("fixture", "2021", &source);
        let family = model.types.iter().find(|t| t.name == "Family").unwrap();
        let add = family.methods.iter().find(|m| m.name == "Gauge::add");
        assert_eq!(
            add.is_some(),
            handle,
            "Family<{decl}>, Gauge{gauge}, docs {docs:?}: {:?}",
            family.methods
        );
        if let Some(add) = add {
            let via = add.via.as_ref().unwrap();
            assert_eq!(
                (via.from.as_str(), via.shape),
                ("get_or_create", analysis::ReturnShape::Guard)
            );
        }
    }
}

/// A parameter of a type only the type's own methods make (an opaque key from `insert`)
/// takes a value kept from that method, by reference or by value (a clone); a plain value
/// type the generator can build is left alone.
#[test]
fn an_opaque_key_parameter_takes_a_value_kept_from_the_method_that_returns_it() {
    let source = format!(
        "{SYNC}
        #[derive(Clone, Copy, Debug)] pub struct Key {{ index: usize }}
        #[derive(Default)] pub struct Map {{ slots: Mutex<Vec<Option<u32>>> }}
        impl Map {{
            pub fn new() -> Self {{ Self::default() }}
            pub fn insert(&self, v: u32) -> Option<Key> {{
                let mut s = self.slots.lock().unwrap();
                s.push(Some(v));
                Some(Key {{ index: s.len() - 1 }})
            }}
            pub fn get(&self, key: &Key) -> Option<u32> {{ self.slots.lock().unwrap()[key.index] }}
            pub fn take(&self, key: Key) -> Option<u32> {{ self.slots.lock().unwrap()[key.index].take() }}
            pub fn len(&self) -> usize {{ self.slots.lock().unwrap().len() }}
            pub fn at(&self, index: usize) -> Option<u32> {{ self.slots.lock().unwrap()[index] }}
        }}"
    );
    let model = analyze_source("fixture", "2021", &source);
    let map = model.types.iter().find(|t| t.name == "Map").unwrap();
    let kind = |method: &str| {
        let m = map.methods.iter().find(|m| m.name == method).unwrap();
        assert!(m.supported(), "{method}: {:?}", m.reason);
        m.params[0].kind.clone()
    };
    let returned = |by_ref| analysis::ParamKind::Returned {
        or: None,
        from: "insert".into(),
        ty: "Key".into(),
        shape: analysis::ReturnShape::OptionSelf,
        by_ref,
    };
    assert_eq!(kind("get"), returned(true));
    assert_eq!(kind("take"), returned(false));
    assert!(matches!(kind("at"), analysis::ParamKind::Int { .. }));
}

/// A parameter of a value type the crate builds (`Grant::new(slot, epoch)`) that a method of
/// the type also returns (`grant(slot) -> Option<Grant>`) takes, half of the time, the value a
/// call returned, by value or by reference; a value type no method returns (`Slot`) is built.
#[test]
fn a_built_value_parameter_takes_what_a_method_returned_or_a_built_one() {
    let source = format!(
        "{SYNC}
        #[derive(Clone, Copy, Debug)] pub struct Grant {{ slot: u8, epoch: u32 }}
        impl Grant {{ pub fn new(slot: u8, epoch: u32) -> Self {{ Grant {{ slot, epoch }} }} }}
        #[derive(Clone, Copy, Debug)] pub struct Slot(u8);
        impl Slot {{ pub fn new(n: u8) -> Self {{ Slot(n) }} }}
        #[derive(Default)] pub struct Table {{ current: Mutex<Vec<(u8, u32)>> }}
        impl Table {{
            pub fn new() -> Self {{ Self::default() }}
            pub fn grant(&self, slot: u8) -> Option<Grant> {{ self.current.lock().unwrap().push((slot, 1)); Some(Grant::new(slot, 1)) }}
            pub fn is_current(&self, grant: &Grant) -> bool {{ self.current.lock().unwrap().contains(&(grant.slot, grant.epoch)) }}
            pub fn revoke(&self, grant: Grant) -> bool {{ self.current.lock().unwrap().pop().is_some() && grant.epoch > 0 }}
            pub fn clear(&self, slot: Slot) {{ self.current.lock().unwrap().retain(|s| s.0 != slot.0) }}
        }}"
    );
    let model = analyze_source("fixture", "2021", &source);
    let table = model.types.iter().find(|t| t.name == "Table").unwrap();
    let kind = |method: &str| {
        let m = table.methods.iter().find(|m| m.name == method).unwrap();
        assert!(m.supported(), "{method}: {:?}", m.reason);
        m.params[0].kind.clone()
    };
    let built = |name: &str| analysis::ParamKind::Value {
        path: format!("fixture::{name}"),
    };
    let returned = |by_ref| analysis::ParamKind::Returned {
        from: "grant".into(),
        ty: "Grant".into(),
        shape: analysis::ReturnShape::OptionSelf,
        by_ref,
        or: Some(Box::new(built("Grant"))),
    };
    assert_eq!(kind("revoke"), returned(false));
    assert_eq!(kind("is_current"), returned(true));
    assert_eq!(kind("clear"), built("Slot"));
}

#[test]
fn a_method_returning_an_iterator_is_high_against_every_writer_even_inside_one_lock() {
    // `snapshot` and `push` each run inside one acquisition of `items`, which would remove
    // the pair; but the iterator `iter` returns reads `items` again in its `next`, after the
    // call, where the analysis does not follow.
    check(
        &format!(
            "{SYNC}pub struct Log {{ items: Mutex<Vec<u32>> }}
            pub struct Iter<'a> {{ log: &'a Log, at: usize }}
            impl Iterator for Iter<'_> {{
                type Item = u32;
                fn next(&mut self) -> Option<u32> {{
                    let v = self.log.items.lock().unwrap().get(self.at).copied();
                    self.at += 1;
                    v
                }}
            }}
            impl Log {{
                pub fn new() -> Self {{ Log {{ items: Mutex::new(Vec::new()) }} }}
                pub fn push(&self, v: u32) {{ self.items.lock().unwrap().push(v); }}
                pub fn len(&self) -> usize {{ self.items.lock().unwrap().len() }}
                pub fn iter(&self) -> Iter<'_> {{ Iter {{ log: self, at: 0 }} }}
            }}"
        ),
        "push push: removed
         push len: removed
         push iter: high
         len len: removed
         len iter: low
         iter iter: low",
    );
}

/// A key of a standard integer type (`usize`) named as a key takes, half of the time, what a
/// maker method of the type returned (`insert(v) -> Option<usize>`); a parameter not named
/// as a key, a getter's answer (`len()`) and a `&mut` are left alone.
#[test]
fn an_integer_key_parameter_takes_what_the_maker_returned_or_a_generated_one() {
    let source = format!(
        "{SYNC}
        #[derive(Default)] pub struct Slab {{ slots: Mutex<Vec<Option<u32>>> }}
        impl Slab {{
            pub fn new() -> Self {{ Self::default() }}
            pub fn replace(&self, key: usize, v: u32) -> Option<usize> {{ self.get(key).map(|_| v as usize) }}
            pub fn insert(&self, v: u32) -> Option<usize> {{
                let mut s = self.slots.lock().unwrap();
                s.push(Some(v));
                Some(s.len() - 1)
            }}
            pub fn get(&self, key: usize) -> Option<u32> {{ self.slots.lock().unwrap().get(key).copied().flatten() }}
            pub fn remove(&self, idx: &usize) -> bool {{ self.slots.lock().unwrap().get_mut(*idx).and_then(Option::take).is_some() }}
            pub fn len(&self) -> usize {{ self.slots.lock().unwrap().len() }}
            pub fn reserve(&self, count: usize) {{ self.slots.lock().unwrap().reserve(count) }}
        }}"
    );
    let model = analyze_source("fixture", "2021", &source);
    let slab = model.types.iter().find(|t| t.name == "Slab").unwrap();
    let kind = |method: &str| {
        let m = slab.methods.iter().find(|m| m.name == method).unwrap();
        assert!(m.supported(), "{method}: {:?}", m.reason);
        m.params[0].kind.clone()
    };
    let usize_kind = analysis::ParamKind::Int {
        signed: false,
        bits: 64,
    };
    let key = |by_ref| analysis::ParamKind::Returned {
        from: "insert".into(),
        ty: "usize".into(),
        shape: analysis::ReturnShape::OptionSelf,
        by_ref,
        or: Some(Box::new(usize_kind.clone())),
    };
    assert_eq!(kind("get"), key(false));
    assert_eq!(kind("remove"), key(true));
    assert_eq!(kind("reserve"), usize_kind);
    // `replace` takes a key: it is no maker, though it answers an `Option<usize>`; its own
    // key comes from `insert`.
    assert_eq!(kind("replace"), key(false));
}

/// A parameter of the type's own type parameter (`resolve(key: &K)`) takes what a maker
/// returned of it (`intern(s: &str) -> K`), never a made-up one: lasso 0.7.1's
/// `ThreadedRodeo<K>`. A method that takes what it returns (`swap(v: V) -> V`) holds values
/// and makes none; so does one that only waits for a value (`take_for(timeout) -> Option<V>`,
/// `take_until(deadline)`: atomicring 0.5.0's `pop_until`).
#[test]
fn a_parameter_of_a_type_parameter_takes_what_a_maker_returned() {
    let source = format!(
        "{SYNC}
        pub trait Key: Copy {{ fn index(self) -> usize; }}
        #[derive(Clone, Copy, Debug)] pub struct Spur(u32);
        impl Key for Spur {{ fn index(self) -> usize {{ self.0 as usize }} }}
        pub struct Rodeo<K = Spur, V = u32> {{ strings: Mutex<Vec<String>>, keys: Mutex<Vec<K>>, last: Mutex<Option<V>> }}
        impl<K: Key + Default, V: Copy + Default> Rodeo<K, V> {{
            pub fn new() -> Self {{ todo!() }}
            pub fn intern(&self, s: &str) -> K {{ todo!() }}
            pub fn resolve(&self, key: &K) -> String {{ self.strings.lock().unwrap()[key.index()].clone() }}
            pub fn swap(&self, v: V) -> V {{ self.last.lock().unwrap().replace(v).unwrap_or_default() }}
            pub fn store(&self, v: V) {{ *self.last.lock().unwrap() = Some(v) }}
            pub fn take_for(&self, timeout: std::time::Duration) -> Option<V> {{ self.last.lock().unwrap().take() }}
            pub fn take_until(&self, deadline: std::time::Instant) -> Option<V> {{ self.last.lock().unwrap().take() }}
        }}"
    );
    let model = analyze_source("fixture", "2021", &source);
    let rodeo = model.types.iter().find(|t| t.name == "Rodeo").unwrap();
    let kind = |method: &str| {
        let m = rodeo.methods.iter().find(|m| m.name == method).unwrap();
        assert!(m.supported(), "{method}: {:?}", m.reason);
        m.params[0].kind.clone()
    };
    assert_eq!(
        kind("resolve"),
        analysis::ParamKind::Returned {
            from: "intern".into(),
            ty: "K".into(),
            shape: analysis::ReturnShape::SelfValue,
            by_ref: true,
            or: None,
        }
    );
    assert_eq!(
        kind("store"),
        analysis::ParamKind::Generic { name: "V".into() }
    );
    // `K` is only ever handed back, so what `intern` answers is an opaque key, which the
    // results oracle compares up to renaming; `V` is data a caller puts in (`store`), so
    // `swap`'s answer is no key.
    assert_eq!(
        rodeo.key_answers(),
        std::collections::BTreeSet::from(["intern".to_string()])
    );
}

/// A type parameter a method takes as data (`insert(k: K)`, `Vec<K>`), not only a key a call
/// returned, is no opaque key: its answers are compared as written.
#[test]
fn a_type_parameter_taken_as_data_answers_no_opaque_key() {
    let source = format!(
        "{SYNC}
        pub struct Ids<K> {{ ids: Mutex<Vec<K>> }}
        impl<K: Copy + Default + std::fmt::Debug> Ids<K> {{
            pub fn new() -> Self {{ todo!() }}
            pub fn next(&self, s: &str) -> Option<K> {{ todo!() }}
            pub fn forget(&self, key: K) {{ todo!() }}
            pub fn extend(&self, more: Vec<K>) {{ todo!() }}
        }}
        pub struct Names<K> {{ names: Mutex<Vec<K>> }}
        impl<K: Copy + Default + std::fmt::Debug> Names<K> {{
            pub fn new() -> Self {{ todo!() }}
            pub fn name(&self, s: &str) -> Option<K> {{ todo!() }}
            pub fn forget(&self, key: K) {{ todo!() }}
        }}"
    );
    let model = analyze_source("fixture", "2021", &source);
    let answers = |name: &str| {
        model
            .types
            .iter()
            .find(|t| t.name == name)
            .unwrap()
            .key_answers()
    };
    assert!(answers("Ids").is_empty(), "{:?}", answers("Ids"));
    assert_eq!(
        answers("Names"),
        std::collections::BTreeSet::from(["name".to_string()])
    );
}

/// How `model` says type `ty`'s method `method` answers approximately, if it does.
fn approximation_of(
    model: &analysis::Model,
    ty: &str,
    method: &str,
) -> Option<analysis::Approximation> {
    let t = model.types.iter().find(|t| t.name == ty).unwrap();
    let m = t.methods.iter().find(|m| m.name == method).unwrap();
    m.approximate.clone()
}

/// papaya's crate doc says, under "# Consistency", that `clear` and its kin "may not produce
/// "perfect" results if the map is being concurrently modified", and `clear`'s and `retain`'s
/// docs point there for details: they are not atomic, and the results oracle judges no test
/// that calls them (it had reported `insert ∥ retain` and `clear ∥ try_insert` on papaya
/// 0.2.5). `insert`, whose doc points to another section, is compared as before.
#[test]
fn a_method_pointing_to_a_crate_doc_section_that_says_not_atomic_is_not_atomic() {
    let source = format!(
        "//! # Usage
        //!
        //! Pin the map.
        //!
        //! # Consistency
        //!
        //! Operations such as `clear` rely on iteration and may not produce \"perfect\"
        //! results if the map is being concurrently modified.
        {SYNC}
        #[derive(Default)] pub struct Map {{ n: Mutex<Vec<u8>> }}
        impl Map {{
            pub fn new() -> Self {{ Self::default() }}
            /// Inserts. See the [crate-level documentation](crate#usage) for details.
            pub fn insert(&self, k: u8) {{ self.n.lock().unwrap().push(k) }}
            /// Clears the map. See the [consistency](crate#consistency) section for details.
            pub fn clear(&self) {{ self.n.lock().unwrap().clear() }}
            /// Retains. See the [consistency](crate#consistency) section for details.
            pub fn retain(&self, f: impl Fn(&u8) -> bool) {{ self.n.lock().unwrap().retain(f) }}
        }}"
    );
    let model = analyze_source("fixture", "2021", &source);
    let approximate = |name: &str| approximation_of(&model, "Map", name);
    for name in ["clear", "retain"] {
        assert!(
            matches!(
                approximate(name),
                Some(analysis::Approximation::NotAtomic { ref line })
                    if line.contains("# Consistency") && line.contains("concurrently modified")
            ),
            "{name}: {:?}",
            approximate(name)
        );
    }
    assert_eq!(approximate("insert"), None);
}

/// papaya's `pin_owned` answers a `HashSetRef<'_, ..>` whose `Debug` lists `self.iter()`: a
/// view, printed after the call returns, of the set as it is then (the other thread's later
/// insert included), not an answer of the call; its text is not compared. A borrowed entry
/// that prints its own fields, and an owned answer, are answers like any other.
#[test]
fn a_method_answering_a_view_that_lists_the_borrowed_collection_is_not_compared() {
    let source = format!(
        "{SYNC}
        use std::fmt;
        #[derive(Default)] pub struct Map {{ n: Mutex<Vec<u8>> }}
        pub struct MapRef<'a> {{ map: &'a Map }}
        impl MapRef<'_> {{
            pub fn iter(&self) -> std::vec::IntoIter<u8> {{ self.map.n.lock().unwrap().clone().into_iter() }}
        }}
        impl fmt::Debug for MapRef<'_> {{
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {{
                f.debug_set().entries(self.iter()).finish()
            }}
        }}
        pub struct Entry<'a> {{ map: &'a Map, key: u8 }}
        impl fmt::Debug for Entry<'_> {{
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {{
                f.debug_struct(\"Entry\").field(\"key\", &self.key).finish()
            }}
        }}
        impl Map {{
            pub fn new() -> Self {{ Self::default() }}
            pub fn insert(&self, k: u8) {{ self.n.lock().unwrap().push(k) }}
            pub fn pin(&self) -> MapRef<'_> {{ MapRef {{ map: self }} }}
            pub fn entry(&self, key: u8) -> Entry<'_> {{ Entry {{ map: self, key }} }}
            pub fn snapshot(&self) -> Vec<u8> {{ self.n.lock().unwrap().clone() }}
        }}"
    );
    let model = analyze_source("fixture", "2021", &source);
    let approximate = |name: &str| approximation_of(&model, "Map", name);
    assert_eq!(approximate("pin"), Some(analysis::Approximation::View));
    assert_eq!(approximate("entry"), None);
    assert_eq!(approximate("snapshot"), None);
}

/// flurry's crate doc: "Operations that inspect the map as a whole, rather than a single key,
/// operate on a snapshot of the underlying table." The methods that take no key or value of
/// their own read the whole map, and are approximate; one that takes a key is not. papaya's
/// says the same in other words ("Aggregate operations, such as iterators, rely on a weak
/// snapshot of the table"): its `len` sums per-thread counters that a `remove` lowers after the
/// entry is gone, and answered 1 after both threads' removals of the one key (papaya 0.2.5,
/// the latest, under the results oracle; replayed 20/20).
#[test]
fn a_crate_doc_that_makes_whole_structure_reads_snapshots_makes_them_approximate() {
    for line in [
        "Operations that inspect the map as a whole, rather than a single key, operate on a \
                snapshot of the underlying table.",
        "Aggregate operations, such as iterators, rely on a weak snapshot of the table and \
                return results reflecting the state of the table at or some point after the \
                creation of the iterator.",
    ] {
        whole_structure_reads_are_approximate(line);
    }
}

fn whole_structure_reads_are_approximate(line: &str) {
    let source = format!(
        "//! # Consistency
        //!
        //! {line}
        {SYNC}
        #[derive(Default)] pub struct Map {{ n: Mutex<Vec<u8>> }}
        impl Map {{
            pub fn new() -> Self {{ Self::default() }}
            pub fn insert(&self, k: u8) {{ self.n.lock().unwrap().push(k) }}
            pub fn len(&self) -> usize {{ self.n.lock().unwrap().len() }}
            pub fn is_subset(&self, other: &Map) -> bool {{ self.len() <= other.len() }}
        }}"
    );
    let model = analyze_source("fixture", "2021", &source);
    let approximate = |name: &str| approximation_of(&model, "Map", name);
    let why = Some(analysis::Approximation::CrateDoc { line: line.into() });
    assert_eq!(approximate("len"), why);
    assert_eq!(approximate("is_subset"), why);
    assert_eq!(approximate("insert"), None);
}

/// crossbeam-skiplist's `len` says it is "just an approximation"; `is_empty` (`self.len() ==
/// 0`) says nothing, and the set's `is_empty` only delegates to its map's, its map's to the
/// base list's. Each answers from `len`, so none is compared (the results oracle had reported
/// `clear(); is_empty() ∥ clear()` → `false` on crossbeam-skiplist 0.1.3). A method that only
/// reads `len` on the way to its own answer (`push`, checking room), and a delegation to an
/// exact method, are compared as before.
#[test]
fn a_method_that_answers_from_an_approximate_one_is_approximate_through_wrappers() {
    let source = format!(
        "{SYNC}
        #[derive(Default)] pub struct List {{ n: AtomicUsize, items: Mutex<Vec<u8>> }}
        impl List {{
            pub fn new() -> Self {{ Self::default() }}
            /// The number of items. This is just an approximation under concurrent changes.
            pub fn len(&self) -> usize {{ self.n.load(Ordering::SeqCst) }}
            pub fn is_empty(&self) -> bool {{ self.len() == 0 }}
            fn exact(&self) -> usize {{ self.items.lock().unwrap().len() }}
            pub fn count(&self) -> usize {{ self.exact() }}
            pub fn push(&self, v: u8) -> bool {{
                if self.len() > 3 {{ return false; }}
                self.items.lock().unwrap().push(v);
                self.n.fetch_add(1, Ordering::SeqCst);
                true
            }}
        }}
        #[derive(Default)] pub struct Map {{ inner: List }}
        impl Map {{
            pub fn new() -> Self {{ Self::default() }}
            pub fn is_empty(&self) -> bool {{ self.inner.is_empty() }}
            pub fn count(&self) -> usize {{ self.inner.count() }}
        }}
        #[derive(Default)] pub struct Set {{ inner: std::sync::Arc<Map> }}
        impl Set {{
            pub fn new() -> Self {{ Self::default() }}
            pub fn is_empty(&self) -> bool {{ !(self.inner.is_empty()) }}
        }}"
    );
    let model = analyze_source("fixture", "2021", &source);
    let line = "This is just an approximation under concurrent changes.";
    let from_len = Some(analysis::Approximation::AnswersFrom {
        method: "List::len".into(),
        line: line.into(),
    });
    assert_eq!(approximation_of(&model, "List", "is_empty"), from_len);
    assert_eq!(approximation_of(&model, "Map", "is_empty"), from_len);
    assert_eq!(approximation_of(&model, "Set", "is_empty"), from_len);
    for (ty, method) in [("List", "push"), ("List", "count"), ("Map", "count")] {
        assert_eq!(approximation_of(&model, ty, method), None, "{ty}::{method}");
    }
    assert!(matches!(
        approximation_of(&model, "List", "len"),
        Some(analysis::Approximation::Doc { .. })
    ));
}

/// A type that dispatches to the variant its enum field holds (`match &self.0 { Inner::One(q)
/// => q.push(v), .. }`, concurrent-queue's flavours): each method's accesses are its
/// variants', so the pairs are grouped by them, and two variants' fields never change
/// together (an instance holds one).
#[test]
fn a_method_that_dispatches_on_an_enum_field_has_its_variants_accesses() {
    check(
        &format!(
            "{SYNC}pub struct Queue(Inner);
            enum Inner {{ One(One), Many(Box<Many>) }}
            struct One {{ state: AtomicUsize }}
            impl One {{
                fn push(&self, v: usize) {{ let s = self.state.load(Ordering::SeqCst); self.state.store(s + v, Ordering::SeqCst); }}
                fn len(&self) -> usize {{ self.state.load(Ordering::SeqCst) }}
            }}
            struct Many {{ head: AtomicUsize }}
            impl Many {{
                fn push(&self, v: usize) {{ self.head.fetch_add(v, Ordering::SeqCst); }}
                fn len(&self) -> usize {{ self.head.load(Ordering::SeqCst) }}
            }}
            unsafe impl Sync for Queue {{}}
            impl Queue {{
                pub fn new() -> Self {{ Queue(Inner::One(One {{ state: AtomicUsize::new(0) }})) }}
                pub fn push(&self, v: usize) {{
                    match &self.0 {{ Inner::One(q) => q.push(v), Inner::Many(q) => q.push(v) }}
                }}
                pub fn len(&self) -> usize {{
                    match &self.0 {{ Inner::One(q) => q.len(), Inner::Many(q) => q.len() }}
                }}
            }}"
        ),
        "push push: high
         push len: low
         len len: low",
    );
}

/// The variant's type is found by its path (two `Channel`s in two modules are two types),
/// and through a wrapper that derefs to its type parameter (crossbeam-channel's
/// `counter::Sender<C>`): the array channel's split update makes `send ∥ send` high, where the
/// first `Channel` by name (the never channel, declared first) has nothing to conflict on
/// (and its impl, found by name alone, would stand for the array channel's).
#[test]
fn a_variants_type_is_found_by_its_path_and_through_a_deref_wrapper() {
    check(
        &format!(
            "{SYNC}mod never {{
                pub struct Channel {{ pub closed: super::AtomicBool }}
                impl Channel {{
                    pub fn send(&self) {{}}
                    pub fn len(&self) -> usize {{ 0 }}
                }}
            }}
            mod array {{
                pub struct Channel {{ pub tail: super::AtomicUsize }}
                impl Channel {{
                    pub fn send(&self) {{ let t = self.tail.load(super::Ordering::SeqCst); self.tail.store(t + 1, super::Ordering::SeqCst); }}
                    pub fn len(&self) -> usize {{ self.tail.load(super::Ordering::SeqCst) }}
                }}
            }}
            mod counter {{
                pub struct Shared<C> {{ chan: Box<C> }}
                impl<C> std::ops::Deref for Shared<C> {{
                    type Target = C;
                    fn deref(&self) -> &C {{ &self.chan }}
                }}
            }}
            pub struct Sender {{ flavor: Flavor }}
            enum Flavor {{ Array(counter::Shared<array::Channel>), Never(never::Channel) }}
            unsafe impl Sync for Sender {{}}
            impl Sender {{
                pub fn new() -> Self {{ Sender {{ flavor: Flavor::Never(never::Channel {{ closed: AtomicBool::new(false) }}) }} }}
                pub fn send(&self) {{
                    match &self.flavor {{ Flavor::Array(c) => c.send(), Flavor::Never(c) => c.send() }}
                }}
                pub fn len(&self) -> usize {{
                    match &self.flavor {{ Flavor::Array(c) => c.len(), Flavor::Never(c) => c.len() }}
                }}
            }}"
        ),
        // `Sender`, then the two channels (private types, grouped alone).
        "send send: high
         send len: low
         len len: low
         send send: high
         send len: low
         len len: low
         send send: low
         send len: low
         len len: low",
    );
}
