//! Synchronising types of other crates that a field can hold: a table, easy to extend. A
//! type whose field holds one of these (through `Arc`, `Box`, `Vec` …) synchronises
//! internally, and the lock analysis treats each call on such a field as one indivisible
//! access, as it does for the standard ones it recognises by name (`Mutex`, `AtomicU64`).

use crate::facts::FieldKind;

/// (crate, a module the path must go through or `""`, type name, what it is).
const KNOWN: &[(&str, &str, &str, FieldKind)] = &[
    ("dashmap", "", "DashMap", FieldKind::Concurrent),
    ("dashmap", "", "DashSet", FieldKind::Concurrent),
    ("crossbeam_queue", "", "SegQueue", FieldKind::Concurrent),
    ("crossbeam_queue", "", "ArrayQueue", FieldKind::Concurrent),
    ("crossbeam", "", "SegQueue", FieldKind::Concurrent),
    ("crossbeam", "", "ArrayQueue", FieldKind::Concurrent),
    ("crossbeam", "", "AtomicCell", FieldKind::Atomic),
    ("crossbeam_channel", "", "Sender", FieldKind::Concurrent),
    ("crossbeam_channel", "", "Receiver", FieldKind::Concurrent),
    ("crossbeam_skiplist", "", "SkipMap", FieldKind::Concurrent),
    ("crossbeam_skiplist", "", "SkipSet", FieldKind::Concurrent),
    ("crossbeam_deque", "", "Injector", FieldKind::Concurrent),
    ("crossbeam_deque", "", "Stealer", FieldKind::Concurrent),
    ("crossbeam_utils", "", "AtomicCell", FieldKind::Atomic),
    ("crossbeam_utils", "", "ShardedLock", FieldKind::RwLock),
    (
        "concurrent_queue",
        "",
        "ConcurrentQueue",
        FieldKind::Concurrent,
    ),
    ("flume", "", "Sender", FieldKind::Concurrent),
    ("flume", "", "Receiver", FieldKind::Concurrent),
    ("scc", "", "HashMap", FieldKind::Concurrent),
    ("scc", "", "HashSet", FieldKind::Concurrent),
    ("scc", "", "HashIndex", FieldKind::Concurrent),
    ("scc", "", "HashCache", FieldKind::Concurrent),
    ("scc", "", "TreeIndex", FieldKind::Concurrent),
    ("scc", "", "Queue", FieldKind::Concurrent),
    ("scc", "", "Stack", FieldKind::Concurrent),
    ("scc", "", "Bag", FieldKind::Concurrent),
    ("flurry", "", "HashMap", FieldKind::Concurrent),
    ("flurry", "", "HashSet", FieldKind::Concurrent),
    ("papaya", "", "HashMap", FieldKind::Concurrent),
    ("papaya", "", "HashSet", FieldKind::Concurrent),
    ("moka", "", "Cache", FieldKind::Concurrent),
    ("moka", "", "SegmentedCache", FieldKind::Concurrent),
    ("mini_moka", "", "Cache", FieldKind::Concurrent),
    ("quick_cache", "sync", "Cache", FieldKind::Concurrent),
    ("sharded_slab", "", "Slab", FieldKind::Concurrent),
    ("sharded_slab", "", "Pool", FieldKind::Concurrent),
    ("thread_local", "", "ThreadLocal", FieldKind::Concurrent),
    ("arc_swap", "", "ArcSwap", FieldKind::Atomic),
    ("arc_swap", "", "ArcSwapOption", FieldKind::Atomic),
    ("arc_swap", "", "ArcSwapAny", FieldKind::Atomic),
    ("once_cell", "sync", "OnceCell", FieldKind::Once),
    ("once_cell", "sync", "Lazy", FieldKind::Once),
    ("once_cell", "race", "OnceBox", FieldKind::Once),
    ("once_cell", "race", "OnceNonZeroUsize", FieldKind::Once),
    ("once_cell", "race", "OnceBool", FieldKind::Once),
    ("lasso", "", "ThreadedRodeo", FieldKind::Concurrent),
    ("governor", "", "RateLimiter", FieldKind::Concurrent),
    ("spin", "", "Mutex", FieldKind::Mutex),
    ("spin", "", "RwLock", FieldKind::RwLock),
    ("spin", "", "Once", FieldKind::Once),
    ("spin", "", "Lazy", FieldKind::Once),
    ("std", "mpsc", "SyncSender", FieldKind::Concurrent),
    ("std", "mpsc", "Sender", FieldKind::Concurrent),
];

/// What a path into another crate (`["dashmap", "DashMap"]`, as resolved) holds, if it is a
/// known synchronising type.
pub(crate) fn known_sync(path: &[String]) -> Option<FieldKind> {
    let (krate, rest) = path.split_first()?;
    let name = rest.last()?;
    KNOWN.iter().find_map(|(k, module, n, kind)| {
        (k == krate && n == name && (module.is_empty() || rest.iter().any(|s| s == module)))
            .then_some(*kind)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &str) -> Vec<String> {
        p.split("::").map(String::from).collect()
    }

    #[test]
    fn known_types_are_matched_by_crate_module_and_name() {
        assert_eq!(
            known_sync(&path("dashmap::DashMap")),
            Some(FieldKind::Concurrent)
        );
        assert_eq!(
            known_sync(&path("once_cell::sync::OnceCell")),
            Some(FieldKind::Once)
        );
        assert_eq!(known_sync(&path("once_cell::unsync::OnceCell")), None);
        assert_eq!(known_sync(&path("std::collections::HashMap")), None);
        assert_eq!(
            known_sync(&path("scc::hash_map::HashMap")),
            Some(FieldKind::Concurrent)
        );
    }
}
